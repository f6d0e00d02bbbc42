// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-gemv -verify-diagnostics

// The configurations blockc-gpu-tile-gemv rejects (the attribute's own
// limits are verified on it: test/Dialect/Codegen/nvptx-invalid.mlir).

// An f32 contraction is not a weight-streaming candidate (16-bit operands
// only).
func.func @f32(%a: memref<1x64xf32>, %w: memref<32x64xf32>, %c: memref<1x32xf32>) {
  // expected-error @+1 {{'linalg.matmul' op has 'blockc_codegen.gpu_gemv' but is not a contraction of a bf16 or f16 [M..., K] buffer and an [N, K] buffer of that type into f32}}
  linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %w : memref<1x64xf32>, memref<32x64xf32>) outs(%c : memref<1x32xf32>)
      {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 2, unroll = 4, max_m = 16>}
  return
}

// -----

// A static M larger than max_m.
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @too_many_rows(%x: memref<32x64xbf16>, %w: memref<32x64xbf16>, %y: memref<32x32xf32>) {
  // expected-error @+1 {{'linalg.generic' op has 'blockc_codegen.gpu_gemv' but its M (32) exceeds max_m (16)}}
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<32x64xbf16>, memref<32x64xbf16>)
      outs(%y : memref<32x32xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 2, unroll = 4, max_m = 16>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// rope_head_dim on a projection whose result no RoPE reads, and kv_append
// on one whose result no copy writes into a function argument.
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @no_rope(%x: memref<1x64xbf16>, %w: memref<32x64xbf16>, %y: memref<1x32xf32>) {
  // expected-error @+1 {{'linalg.generic' op has 'blockc_codegen.gpu_gemv' with rope_head_dim = 16 but its rounded result is not read by a rotate-half RoPE of that head dim alone}}
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1x64xbf16>, memref<32x64xbf16>)
      outs(%y : memref<1x32xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 1, unroll = 2, max_m = 16, rope_head_dim = 16>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @no_append(%x: memref<1x64xbf16>, %w: memref<32x64xbf16>, %y: memref<1x32xf32>) {
  // expected-error @+1 {{'linalg.generic' op has 'blockc_codegen.gpu_gemv' with kv_append but its result is not copied alone into rows of a function argument}}
  linalg.generic {indexing_maps = [#a, #w, #o],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1x64xbf16>, memref<32x64xbf16>)
      outs(%y : memref<1x32xf32>)
      attrs = {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2, max_m = 16, kv_append = true>} {
  ^bb0(%in: bf16, %wn: bf16, %out: f32):
    %e0 = arith.extf %in : bf16 to f32
    %e1 = arith.extf %wn : bf16 to f32
    %p = arith.mulf %e0, %e1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  return
}
