// RUN: blockc-opt %s -split-input-file --blockc-gpu-narrow-mma-operands -verify-diagnostics

// A configuration on a projection whose f32 input is not known to hold
// bf16 values (a function argument): narrowing would round it.
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @f32_input(%x: tensor<4x32xf32>, %w: tensor<16x32xbf16>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'linalg.generic' op has 'blockc_codegen.gpu_mma_tiles' but is not a contraction of a 16-bit weight with an f32 input known to hold values of the weight's type}}
  %y = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x32xf32>, tensor<16x32xbf16>) outs(%init : tensor<4x16xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2>} {
  ^bb0(%in: f32, %wv: bf16, %acc: f32):
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %in, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// The producer widens f16, the weight is bf16: not exact.
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @other_type(%x: tensor<4x32xf16>, %w: tensor<16x32xbf16>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x32xf32>
  %xf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x32xf16>) outs(%e : tensor<4x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %f = arith.extf %in : f16 to f32
    linalg.yield %f : f32
  } -> tensor<4x32xf32>
  // expected-error @+1 {{has 'blockc_codegen.gpu_mma_tiles' but is not a contraction}}
  %y = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %w : tensor<4x32xf32>, tensor<16x32xbf16>) outs(%init : tensor<4x16xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2>} {
  ^bb0(%in: f32, %wv: bf16, %acc: f32):
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %in, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
