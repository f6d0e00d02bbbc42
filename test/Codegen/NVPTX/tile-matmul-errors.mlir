// RUN: blockc-opt %s -split-input-file --blockc-gpu-tile-matmul -verify-diagnostics

// The tiles come from blockc-gpu-select-tiles (their limits are verified on
// the attribute, see test/Dialect/Codegen/nvptx-invalid.mlir): a
// contraction the pass would tile without them is an error.
func.func @unconfigured(%a: memref<8x16xf32>, %b: memref<16x8xf32>, %c: memref<8x8xf32>) {
  // expected-error @+1 {{'linalg.matmul' op has no 'blockc_codegen.gpu_matmul_tiles' (run blockc-gpu-select-tiles first)}}
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// Ops the pass leaves alone need no tiles: a contraction on tensors.
func.func @not_a_candidate(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// Tensor-core tiles on a contraction that is not two 16-bit (or two f32)
// buffers into f32 with K innermost: the f32 B here is [k, n].
func.func @mma_on_f32(%a: memref<8x16xf32>, %b: memref<16x8xf32>, %c: memref<8x8xf32>) {
  // expected-error @+1 {{'linalg.matmul' op has 'blockc_codegen.gpu_mma_tiles' but is not a contraction of two bf16, f16 or f32 (TF32) buffers into f32 with K innermost}}
  linalg.matmul {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2>}
      ins(%a, %b : memref<8x16xf32>, memref<16x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// tile_k must divide the (static) reduction size.
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @mma_tile_k(%x: memref<?x48xbf16>, %w: memref<32x48xbf16>, %y: memref<?x32xf32>) {
  // expected-error @+1 {{'linalg.generic' op tile_k (32) must divide the reduction size (48)}}
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x48xbf16>, memref<32x48xbf16>) outs(%y : memref<?x32xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2>} {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The warpgroup kernel needs a 2-D [N, K] weight and the M dimensions
// leading the other input: a batched contraction is an error.
#q = affine_map<(b, m, n, k) -> (b, m, k)>
#k = affine_map<(b, m, n, k) -> (b, n, k)>
#s = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @warpgroup_batched(%q: memref<4x?x64xbf16>, %kk: memref<4x?x64xbf16>, %y: memref<4x?x?xf32>) {
  // expected-error @+1 {{'linalg.generic' op has 'blockc_codegen.gpu_warpgroup_tiles' but is not a contraction of a bf16, f16 or f32 (TF32) [M..., K] buffer and an [N, K] buffer of that type into f32}}
  linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kk : memref<4x?x64xbf16>, memref<4x?x64xbf16>) outs(%y : memref<4x?x?xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4>} {
  ^bb0(%in: bf16, %kv: bf16, %acc: f32):
    %qf = arith.extf %in : bf16 to f32
    %kf = arith.extf %kv : bf16 to f32
    %p = arith.mulf %qf, %kf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// TF32 tiles are twice the bytes of 16-bit ones: 4 stages of 256 x 256
// tiles with k steps of 32 f32 (verified as 16-bit tiles: 160 KiB) take
// 294912 bytes.
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @tf32_ring_too_large(%x: memref<?x64xf32>, %w: memref<32x64xf32>, %y: memref<?x32xf32>) {
  // expected-error @+1 {{'linalg.generic' op has TF32 tiles whose 4 stages take 294912 bytes, more than the 232448 bytes of shared memory a block may have on any chip}}
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xf32>, memref<32x64xf32>) outs(%y : memref<?x32xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 256, tile_n = 256, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>} {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// rope_head_dim says the kernel applies a RoPE to its rounded result, but
// the result goes straight to an argument: no RoPE reads it.
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @rope_without_rope(%x: memref<?x64xbf16>, %w: memref<64x64xbf16>, %y: memref<?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %acc = memref.alloc(%m) : memref<?x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x64xf32>)
  // expected-error @+1 {{'linalg.generic' op has rope_head_dim = 32 but its rounded result is not read by a rotate-half RoPE of that head dim alone}}
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<64x64xbf16>) outs(%acc : memref<?x64xf32>)
      attrs = {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 64, tile_n = 64, stages = 2, producer = true, tma_store = true, rope_head_dim = 32>} {
  ^bb0(%in: bf16, %wv: bf16, %o: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<?x64xf32>) outs(%y : memref<?x64xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %acc : memref<?x64xf32>
  return
}

// -----

// The same on mma.sync tiles (sm_80): no RoPE reads the rounded result.
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @mma_rope_without_rope(%x: memref<?x64xbf16>, %w: memref<64x64xbf16>, %y: memref<?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %acc = memref.alloc(%m) : memref<?x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x64xf32>)
  // expected-error @+1 {{'linalg.generic' op has rope_head_dim = 32 but its rounded result is not read by a rotate-half RoPE of that head dim alone}}
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<64x64xbf16>) outs(%acc : memref<?x64xf32>)
      attrs = {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 32, tile_n = 64, tile_k = 32, warps_m = 1, warps_n = 2, stages = 2, rope_head_dim = 32>} {
  ^bb0(%in: bf16, %wv: bf16, %o: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<?x64xf32>) outs(%y : memref<?x64xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %acc : memref<?x64xf32>
  return
}
