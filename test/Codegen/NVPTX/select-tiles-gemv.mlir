// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_80 | FileCheck %s --check-prefixes=CHECK,GEMV
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,GEMV
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_75 | FileCheck %s --check-prefixes=CHECK,NONE

// The weight-streaming kernel (docs/GPU.md#decoding) on sm_80 and newer,
// for bf16 / f16 projections on buffers ([M..., K] x [N, K]): a static M
// <= 64 gets it with max_m = 64; a dynamic M (the B * T of an entry that
// also decodes: T is dynamic there) gets it with max_m = 16 beside the
// tensor-core tiles, and blockc-gpu-tile-matmul chooses at run time; a
// static M > 64, a batched contraction, f32 and tensors get none.

// CHECK-LABEL: func.func @decode_entry
// GEMV:          linalg.generic
// GEMV-SAME:       blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2, max_m = 16>
// GEMV-SAME:       blockc_codegen.gpu_mma_tiles =
// NONE-NOT:      gpu_gemv
#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
func.func @decode_entry(%x: memref<?x?x256xbf16>, %w: memref<688x256xbf16>, %y: memref<?x?x688xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x256xbf16>, memref<688x256xbf16>) outs(%y : memref<?x?x688xf32>) {
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

// Static M = 4 x 1 (f16, K = 688): max_m = 64; M = 80 x 1: none.
// CHECK-LABEL: func.func @static_rows
// GEMV:          linalg.generic {{.+}} ins(%arg0, %arg1 : memref<4x1x688xf16>, memref<256x688xf16>)
// GEMV-SAME:       blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2, max_m = 64>
// CHECK:         linalg.generic {{.+}} ins(%arg3, %arg1 : memref<80x1x688xf16>, memref<256x688xf16>)
// CHECK-NOT:       gpu_gemv
// CHECK:         return
// NONE-NOT:      gpu_gemv
#a = affine_map<(b, t, n, k) -> (b, t, k)>
#w = affine_map<(b, t, n, k) -> (n, k)>
#o = affine_map<(b, t, n, k) -> (b, t, n)>
func.func @static_rows(%x: memref<4x1x688xf16>, %w: memref<256x688xf16>, %y: memref<4x1x256xf32>,
                       %x80: memref<80x1x688xf16>, %y80: memref<80x1x256xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x1x688xf16>, memref<256x688xf16>) outs(%y : memref<4x1x256xf32>) {
  ^bb0(%in: f16, %wv: f16, %acc: f32):
    %xf = arith.extf %in : f16 to f32
    %wf = arith.extf %wv : f16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x80, %w : memref<80x1x688xf16>, memref<256x688xf16>) outs(%y80 : memref<80x1x256xf32>) {
  ^bb0(%in: f16, %wv: f16, %acc: f32):
    %xf = arith.extf %in : f16 to f32
    %wf = arith.extf %wv : f16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not candidates: a batched contraction (attention's Q K^T shape), an f32
// projection, a projection on tensors.
// CHECK-LABEL: func.func @not_candidates
// CHECK-NOT:     gpu_gemv
// CHECK:         return
#qa = affine_map<(b, m, n, k) -> (b, m, k)>
#qb = affine_map<(b, m, n, k) -> (b, n, k)>
#qo = affine_map<(b, m, n, k) -> (b, m, n)>
#a2 = affine_map<(m, n, k) -> (m, k)>
#w2 = affine_map<(m, n, k) -> (n, k)>
#o2 = affine_map<(m, n, k) -> (m, n)>
func.func @not_candidates(%q: memref<4x1x64xbf16>, %k: memref<4x32x64xbf16>, %s: memref<4x1x32xf32>,
                          %x: memref<1x64xf32>, %w: memref<32x64xf32>, %y: memref<1x32xf32>,
                          %xt: tensor<1x64xbf16>, %wt: tensor<32x64xbf16>, %yt: tensor<1x32xf32>) -> tensor<1x32xf32> {
  linalg.generic {indexing_maps = [#qa, #qb, #qo], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x1x64xbf16>, memref<4x32x64xbf16>) outs(%s : memref<4x1x32xf32>) {
  ^bb0(%in: bf16, %kv: bf16, %acc: f32):
    %qf = arith.extf %in : bf16 to f32
    %kf = arith.extf %kv : bf16 to f32
    %p = arith.mulf %qf, %kf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a2, #w2, #o2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1x64xf32>, memref<32x64xf32>) outs(%y : memref<1x32xf32>) {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %in, %wv : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  %t = linalg.generic {indexing_maps = [#a2, #w2, #o2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xt, %wt : tensor<1x64xbf16>, tensor<32x64xbf16>) outs(%yt : tensor<1x32xf32>) {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x32xf32>
  return %t : tensor<1x32xf32>
}
