// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.activation becomes one all-parallel identity-map generic whose
// body computes the activation with the formulas of
// Codegen/Common/Approximations.h on math.exp / math.erfc (left to the
// target: libm on the CPU, blockc's polynomials in GPU kernels). Each maps
// x = -inf to -0 (the limit; the formulas alone give -inf * 0 = NaN).

// silu: x sigmoid(x) = (x < 0 ? x s : x) / (1 + s), s = exp(-|x|) (never
// overflows, so the tail x << 0 keeps its accuracy).
// CHECK-LABEL: func.func @activation_silu
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x4x16xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[X]] : tensor<2x4x16xf32>) outs(%[[INIT]] : tensor<2x4x16xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[ABS:.+]] = math.absf %[[IN]] : f32
// CHECK: %[[NABS:.+]] = arith.negf %[[ABS]] : f32
// CHECK: %[[S:.+]] = math.exp %[[NABS]] : f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[NEG:.+]] = arith.cmpf olt, %[[IN]], %[[ZERO]] : f32
// CHECK: %[[XS:.+]] = arith.mulf %[[IN]], %[[S]] : f32
// CHECK: %[[NUM:.+]] = arith.select %[[NEG]], %[[XS]], %[[IN]] : f32
// CHECK: %[[DEN:.+]] = arith.addf %[[ONE]], %[[S]] : f32
// CHECK: %[[Y:.+]] = arith.divf %[[NUM]], %[[DEN]] : f32
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[ISNINF:.+]] = arith.cmpf oeq, %[[IN]], %[[NINF]] : f32
// CHECK: %[[NZERO:.+]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[OUT:.+]] = arith.select %[[ISNINF]], %[[NZERO]], %[[Y]] : f32
// CHECK: linalg.yield %[[OUT]] : f32
// CHECK: return %[[R]]
func.func @activation_silu(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = transformer.activation <silu> %x : tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// Exact gelu: 0.5 x (1 + erf(x / sqrt(2))) = 0.5 x erfc(-x / sqrt(2)) (no
// cancellation for x << 0); dynamic B and T.
// CHECK-LABEL: func.func @activation_gelu
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty(%{{[^ ]+}}, %{{[^ ]+}}) : tensor<?x?x16xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<?x?x16xf32>) outs(%[[INIT]] : tensor<?x?x16xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[NRSQRT2:.+]] = arith.constant -0.707106769 : f32
// CHECK: %[[Z:.+]] = arith.mulf %[[IN]], %[[NRSQRT2]] : f32
// CHECK: %[[C:.+]] = math.erfc %[[Z]] : f32
// CHECK: %[[HX:.+]] = arith.mulf %[[IN]], %[[HALF]] : f32
// CHECK: %[[Y:.+]] = arith.mulf %[[HX]], %[[C]] : f32
// CHECK: %[[ISNINF:.+]] = arith.cmpf oeq, %[[IN]], %{{.+}} : f32
// CHECK: %[[OUT:.+]] = arith.select %[[ISNINF]], %{{.+}}, %[[Y]] : f32
// CHECK: linalg.yield %[[OUT]] : f32
// CHECK: return %[[R]]
func.func @activation_gelu(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %0 = transformer.activation <gelu> %x : tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

// gelu_tanh: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), as the
// same function x sigmoid(2u) (no cancellation of 1 + tanh(u) for x << 0).
// CHECK-LABEL: func.func @activation_gelu_tanh
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>)
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<2x4x16xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[X2:.+]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK: %[[C:.+]] = arith.constant 4.471500e-02 : f32
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[INNER:.+]] = math.fma %[[X2]], %[[C]], %[[ONE]] : f32
// CHECK: %[[K:.+]] = arith.constant 1.59576917 : f32
// CHECK: %[[KX:.+]] = arith.mulf %[[IN]], %[[K]] : f32
// CHECK: %[[TWOU:.+]] = arith.mulf %[[KX]], %[[INNER]] : f32
// CHECK: %[[ABS:.+]] = math.absf %[[TWOU]] : f32
// CHECK: %[[NABS:.+]] = arith.negf %[[ABS]] : f32
// CHECK: %[[S:.+]] = math.exp %[[NABS]] : f32
// CHECK: %[[NEG:.+]] = arith.cmpf olt, %[[TWOU]], %{{.+}} : f32
// CHECK: %[[XS:.+]] = arith.mulf %[[IN]], %[[S]] : f32
// CHECK: %[[NUM:.+]] = arith.select %[[NEG]], %[[XS]], %[[IN]] : f32
// CHECK: %[[DEN:.+]] = arith.addf %{{.+}}, %[[S]] : f32
// CHECK: %[[Y:.+]] = arith.divf %[[NUM]], %[[DEN]] : f32
// CHECK: %[[ISNINF:.+]] = arith.cmpf oeq, %[[IN]], %{{.+}} : f32
// CHECK: %[[OUT:.+]] = arith.select %[[ISNINF]], %{{.+}}, %[[Y]] : f32
// CHECK: linalg.yield %[[OUT]] : f32
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
