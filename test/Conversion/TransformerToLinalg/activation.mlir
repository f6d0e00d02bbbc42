// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.activation becomes one all-parallel identity-map generic whose
// body computes the activation; each kind has its own math.

// silu: x / (1 + exp(-x)).
// CHECK-LABEL: func.func @activation_silu
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x4x16xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[X]] : tensor<2x4x16xf32>) outs(%[[INIT]] : tensor<2x4x16xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[NEG:.+]] = arith.negf %[[IN]] : f32
// CHECK: %[[E:.+]] = math.exp %[[NEG]] : f32
// CHECK: %[[DEN:.+]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK: %[[Y:.+]] = arith.divf %[[IN]], %[[DEN]] : f32
// CHECK: linalg.yield %[[Y]] : f32
// CHECK: return %[[R]]
func.func @activation_silu(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.activation <silu> %x : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// Exact gelu: 0.5 x (1 + erf(x / sqrt(2))); dynamic B and T.
// CHECK-LABEL: func.func @activation_gelu
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty(%{{[^ ]+}}, %{{[^ ]+}}) : tensor<?x?x16xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<?x?x16xf32>) outs(%[[INIT]] : tensor<?x?x16xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[RSQRT2:.+]] = arith.constant 0.707106769 : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %[[IN]], %[[RSQRT2]] : f32
// CHECK: %[[ERF:.+]] = math.erf %[[SCALED]] : f32
// CHECK: %[[HX:.+]] = arith.mulf %[[IN]], %[[HALF]] : f32
// CHECK: %[[ONE_ERF:.+]] = arith.addf %[[ONE]], %[[ERF]] : f32
// CHECK: %[[Y:.+]] = arith.mulf %[[HX]], %[[ONE_ERF]] : f32
// CHECK: linalg.yield %[[Y]] : f32
// CHECK: return %[[R]]
func.func @activation_gelu(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.activation <gelu> %x : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

// gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// CHECK-LABEL: func.func @activation_gelu_tanh
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>)
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<2x4x16xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[X2:.+]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK: %[[X3:.+]] = arith.mulf %[[IN]], %[[X2]] : f32
// CHECK: %[[C:.+]] = arith.constant 4.471500e-02 : f32
// CHECK: %[[CX3:.+]] = arith.mulf %[[X3]], %[[C]] : f32
// CHECK: %[[INNER:.+]] = arith.addf %[[IN]], %[[CX3]] : f32
// CHECK: %[[K:.+]] = arith.constant 0.797884583 : f32
// CHECK: %[[ARG:.+]] = arith.mulf %[[INNER]], %[[K]] : f32
// CHECK: %[[TH:.+]] = math.tanh %[[ARG]] : f32
// CHECK: %[[HX:.+]] = arith.mulf %[[IN]], %[[HALF]] : f32
// CHECK: %[[ONE_TH:.+]] = arith.addf %[[ONE]], %[[TH]] : f32
// CHECK: %[[Y:.+]] = arith.mulf %[[HX]], %[[ONE_TH]] : f32
// CHECK: linalg.yield %[[Y]] : f32
// CHECK: return %[[R]]
func.func @activation_gelu_tanh(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.activation <gelu_tanh> %x : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// relu: max(x, 0) with arith.maximumf (NaN-propagating, like torch.relu).
// CHECK-LABEL: func.func @activation_relu
// CHECK-SAME: (%[[X:.+]]: tensor<8xf32>)
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>]
// CHECK-SAME: iterator_types = ["parallel"]
// CHECK-SAME: ins(%[[X]] : tensor<8xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NOT: math.
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[Y:.+]] = arith.maximumf %[[IN]], %[[ZERO]] : f32
// CHECK: linalg.yield %[[Y]] : f32
// CHECK: return %[[R]]
func.func @activation_relu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = transformer.activation <relu> %x : tensor<8xf32>
  return %0 : tensor<8xf32>
}
