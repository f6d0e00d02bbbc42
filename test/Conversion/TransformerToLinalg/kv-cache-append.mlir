// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --cse --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.kv_cache_append becomes a run-time bound check and one
// tensor.insert_slice of the new rows at [0, pos, 0, 0].

// CHECK-LABEL: func.func @append_dynamic
// CHECK-SAME: (%[[K:.+]]: tensor<?x?x2x8xf32>, %[[C:.+]]: tensor<?x?x2x8xf32>, %[[P:.+]]: index)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[K]], %[[C0]]
// CHECK-DAG: %[[T:.+]] = tensor.dim %[[K]], %[[C1]]
// CHECK: %[[END:.+]] = arith.addi %[[P]], %[[T]] : index
// CHECK: %[[L:.+]] = tensor.dim %[[C]], %[[C1]]
// CHECK: %[[GE:.+]] = arith.cmpi sge, %[[P]], %[[C0]] : index
// CHECK: %[[LE:.+]] = arith.cmpi sle, %[[END]], %[[L]] : index
// CHECK: %[[OK:.+]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK: cf.assert %[[OK]], "blockc: KV cache overflow (position + new tokens > cache capacity L_max)"
// CHECK: %[[R:.+]] = tensor.insert_slice %[[K]] into %[[C]][0, %[[P]], 0, 0] [%[[B]], %[[T]], 2, 8] [1, 1, 1, 1] : tensor<?x?x2x8xf32> into tensor<?x?x2x8xf32>
// CHECK: return %[[R]]
func.func @append_dynamic(%k: tensor<?x?x2x8xf32>, %c: tensor<?x?x2x8xf32>, %p: index) -> tensor<?x?x2x8xf32> {
  %0 = transformer.kv_cache_append %k into %c at %p : tensor<?x?x2x8xf32> into tensor<?x?x2x8xf32>
  return %0 : tensor<?x?x2x8xf32>
}

// -----

// Static shapes: the sizes of the slice are constants.
// CHECK-LABEL: func.func @append_static
// CHECK: cf.assert
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, %{{.+}}, 0, 0] [2, 1, 1, 16] [1, 1, 1, 1] : tensor<2x1x1x16xf32> into tensor<2x32x1x16xf32>
func.func @append_static(%k: tensor<2x1x1x16xf32>, %c: tensor<2x32x1x16xf32>, %p: index) -> tensor<2x32x1x16xf32> {
  %0 = transformer.kv_cache_append %k into %c at %p : tensor<2x1x1x16xf32> into tensor<2x32x1x16xf32>
  return %0 : tensor<2x32x1x16xf32>
}
