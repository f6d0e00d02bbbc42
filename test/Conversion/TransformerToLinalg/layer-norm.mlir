// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.layer_norm becomes two row reductions (sum, then the sum of
// squared deviations from the mean: a two-pass, biased variance) and one
// elementwise generic computing (x - mean) * rsqrt(var + eps) * weight + bias.

// Static shape: 1/d = 1/16 and the default epsilon 1e-5.
// CHECK-LABEL: func.func @layer_norm_static
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[G:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK-DAG: %[[INV_D:.+]] = arith.constant 6.250000e-02 : f32
// CHECK-DAG: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// First pass: the row sum.
// max|x| per row, then the row sums of the scaled row x * inv (inv = 1 /
// max|x| above 2^50 and finite, else 1: see rms-norm.mlir).
// CHECK: %[[MAX:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<2x4x16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<2x4x16xf32>, tensor<2x4xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32, %[[OUT:.+]]: f32):
// CHECK: %[[XS0:.+]] = arith.mulf %[[IN]], %{{.+}} : f32
// CHECK: %[[ACC:.+]] = arith.addf %[[OUT]], %[[XS0]] : f32
// CHECK: linalg.yield %[[ACC]] : f32
// Second pass: sum of (x - sum/d)^2, reading the row sum through the row map.
// CHECK: %[[SSD:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[SUM]], %[[MAX]] : tensor<2x4x16xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: ^bb0(%[[XI:.+]]: f32, %[[S:.+]]: f32, %{{.+}}: f32, %[[OUT2:.+]]: f32):
// CHECK: %[[MEAN:.+]] = arith.mulf %[[S]], %[[INV_D]] : f32
// CHECK: %[[XS1:.+]] = arith.mulf %[[XI]], %{{.+}} : f32
// CHECK: %[[DEV:.+]] = arith.subf %[[XS1]], %[[MEAN]] : f32
// CHECK: %[[DEV2:.+]] = arith.mulf %[[DEV]], %[[DEV]] : f32
// CHECK: %[[ACC2:.+]] = arith.addf %[[OUT2]], %[[DEV2]] : f32
// CHECK: linalg.yield %[[ACC2]] : f32
// Normalisation, with weight and bias broadcast along the rows.
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x4x16xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[X]], %[[SUM]], %[[SSD]], %[[G]], %[[B]], %[[MAX]] : tensor<2x4x16xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x4xf32>) outs(%[[INIT]] : tensor<2x4x16xf32>)
// CHECK: ^bb0(%[[X3:.+]]: f32, %[[S3:.+]]: f32, %[[V3:.+]]: f32, %[[G3:.+]]: f32, %[[B3:.+]]: f32, %{{.+}}: f32, %{{.+}}: f32):
// CHECK: %[[INV3:.+]] = arith.divf
// CHECK-DAG: %[[MEAN3:.+]] = arith.mulf %[[S3]], %[[INV_D]] : f32
// CHECK-DAG: %[[VAR:.+]] = arith.mulf %[[V3]], %[[INV_D]] : f32
// CHECK: %[[II:.+]] = arith.mulf %[[INV3]], %[[INV3]] : f32
// CHECK: %[[EPS_S:.+]] = arith.mulf %[[EPS]], %[[II]] : f32
// CHECK: %[[VAR_EPS:.+]] = arith.addf %[[VAR]], %[[EPS_S]] : f32
// CHECK: %[[RSQRT:.+]] = math.rsqrt %[[VAR_EPS]] : f32
// CHECK: %[[XS3:.+]] = arith.mulf %[[X3]], %[[INV3]] : f32
// CHECK: %[[CENTRED:.+]] = arith.subf %[[XS3]], %[[MEAN3]] : f32
// CHECK: %[[NORMED:.+]] = arith.mulf %[[CENTRED]], %[[RSQRT]] : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %[[NORMED]], %[[G3]] : f32
// CHECK: %[[Y:.+]] = arith.addf %[[SCALED]], %[[B3]] : f32
// CHECK: linalg.yield %[[Y]] : f32
// CHECK: return %[[R]]
func.func @layer_norm_static(%x: tensor<2x4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.layer_norm %x, %g, %b : tensor<2x4x16xf32>, tensor<16xf32>, tensor<16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// Dynamic B and T with a non-default epsilon: the reductions write into
// dynamically sized zero-filled accumulators.
// CHECK-LABEL: func.func @layer_norm_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[G:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK-DAG: %[[EPS:.+]] = arith.constant 9.99999996E-13 : f32
// CHECK: %[[ACC1:.+]] = tensor.empty(%{{[^ ]+}}, %{{[^ ]+}}) : tensor<?x?xf32>
// CHECK: %[[FILL1:.+]] = linalg.fill ins(%{{[^ ]+}} : f32) outs(%[[ACC1]] : tensor<?x?xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<?x?x16xf32>) outs(%[[FILL1]] : tensor<?x?xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<?x?x16xf32>, tensor<?x?xf32>)
// CHECK: %[[ACC2:.+]] = tensor.empty(%{{[^ ]+}}, %{{[^ ]+}}) : tensor<?x?xf32>
// CHECK: %[[FILL2:.+]] = linalg.fill ins(%{{[^ ]+}} : f32) outs(%[[ACC2]] : tensor<?x?xf32>)
// CHECK: %[[SSD:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[SUM]], %[[MAX]] : tensor<?x?x16xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty(%{{[^ ]+}}, %{{[^ ]+}}) : tensor<?x?x16xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[SUM]], %[[SSD]], %[[G]], %[[B]], %[[MAX]] :
// CHECK-SAME: outs(%[[INIT]] : tensor<?x?x16xf32>)
// CHECK: arith.mulf %[[EPS]], %{{[^ ]+}} : f32
// CHECK: return %[[R]]
func.func @layer_norm_dynamic(%x: tensor<?x?x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.layer_norm %x, %g, %b {epsilon = 1.0e-12 : f64} : tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>
  return %0 : tensor<?x?x16xf32>
}
