// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.residual_add becomes one all-parallel generic with identity
// maps adding residual and update elementwise.

// CHECK-LABEL: func.func @residual_add
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[U:.+]]: tensor<2x4x16xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x4x16xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[X]], %[[U]] : tensor<2x4x16xf32>, tensor<2x4x16xf32>) outs(%[[INIT]] : tensor<2x4x16xf32>)
// CHECK: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[S:.+]] = arith.addf %[[A]], %[[B]] : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
func.func @residual_add(%x: tensor<2x4x16xf32>, %u: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.residual_add %x, %u : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// Dynamic B and T: the init is sized from tensor.dim of the residual.
// CHECK-LABEL: func.func @residual_add_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[U:.+]]: tensor<?x?x16xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[X]], %[[C0]] : tensor<?x?x16xf32>
// CHECK-DAG: %[[T:.+]] = tensor.dim %[[X]], %[[C1]] : tensor<?x?x16xf32>
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?x16xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[U]] : tensor<?x?x16xf32>, tensor<?x?x16xf32>) outs(%[[INIT]] : tensor<?x?x16xf32>)
// CHECK: arith.addf
// CHECK: return %[[R]]
func.func @residual_add_dynamic(%x: tensor<?x?x16xf32>, %u: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.residual_add %x, %u : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}
