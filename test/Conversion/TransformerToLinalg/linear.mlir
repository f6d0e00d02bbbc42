// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.linear becomes one contraction
// result[..., n] += x[..., k] * W[n, k] (map (n, k): W is read in its stored
// [out, in] layout, never transposed or copied), whose accumulator is the
// bias broadcast along the leading dims, or zero. (The CPU pipeline lowers
// linear before this pass: blockc-cpu-lower-linear.)

// With bias: the init is a broadcasting generic (bias map (d0, d1, d2) ->
// (d2)), not a linalg.fill.
// CHECK-LABEL: func.func @linear_bias
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[W:.+]]: tensor<8x16xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.fill
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<2x4x8xf32>
// CHECK: %[[INIT:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[B]] : tensor<8xf32>) outs(%[[EMPTY]] : tensor<2x4x8xf32>)
// CHECK: ^bb0(%[[BI:.+]]: f32, %{{.+}}: f32):
// CHECK: linalg.yield %[[BI]] : f32
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[W]] : tensor<2x4x16xf32>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<2x4x8xf32>)
// CHECK: ^bb0(%[[XI:.+]]: f32, %[[WI:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK: %[[P:.+]] = arith.mulf %[[XI]], %[[WI]] : f32
// CHECK: %[[S:.+]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
func.func @linear_bias(%x: tensor<2x4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %0 = transformer.linear %x, %w bias %b : tensor<2x4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// Without bias and with dynamic B and T: the accumulator is a zero-filled
// tensor.empty sized from the input's leading dims and `out` (8).
// CHECK-LABEL: func.func @linear_no_bias_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>, %[[W:.+]]: tensor<8x16xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[X]], %[[C0]] : tensor<?x?x16xf32>
// CHECK-DAG: %[[T:.+]] = tensor.dim %[[X]], %[[C1]] : tensor<?x?x16xf32>
// CHECK: %[[EMPTY:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?x8xf32>
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[W]] : tensor<?x?x16xf32>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<?x?x8xf32>)
// CHECK: return %[[R]]
func.func @linear_no_bias_dynamic(%x: tensor<?x?x16xf32>, %w: tensor<8x16xf32>) -> tensor<?x?x8xf32> {
  %0 = transformer.linear %x, %w : tensor<?x?x16xf32>, tensor<8x16xf32> -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// A rank-2 input ([tokens, in]) gives a 3-loop contraction.
// CHECK-LABEL: func.func @linear_rank2
// CHECK-SAME: (%[[X:.+]]: tensor<4x16xf32>, %[[W:.+]]: tensor<32x16xf32>)
// CHECK: %[[INIT:.+]] = linalg.fill ins(%{{[^ ]+}} : f32) outs(%{{[^ ]+}} : tensor<4x32xf32>)
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[W]] : tensor<4x16xf32>, tensor<32x16xf32>) outs(%[[INIT]] : tensor<4x32xf32>)
func.func @linear_rank2(%x: tensor<4x16xf32>, %w: tensor<32x16xf32>) -> tensor<4x32xf32> {
  %0 = transformer.linear %x, %w : tensor<4x16xf32>, tensor<32x16xf32> -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}
