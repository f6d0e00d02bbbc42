// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_80 allow-tf32=true" | FileCheck %s --check-prefixes=CHECK,TF32
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_90a allow-tf32=true" | FileCheck %s --check-prefixes=CHECK,TF32,HOPPER
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_80" | FileCheck %s --check-prefixes=CHECK,OFF
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_75 allow-tf32=true" | FileCheck %s --check-prefixes=CHECK,OFF

// TF32 tiles (docs/GPU.md#tf32): with allow-tf32 on sm_80 and newer, a
// contraction of two f32 inputs with K innermost (on buffers or tensors)
// gets 128 x 128 tiles on 2 x 2 warps with k steps of 16 f32 in 4 stages.
// Without the option, or on sm_75, it gets none (the FMA kernel's tiles
// only, on buffers). On sm_90a a TF32 contraction on buffers also gets
// warpgroup tiles (the wgmma kernel with tf32 operands), except one whose
// A input a norm writes (@prologue: the mma.sync kernel applies the norm
// in its prologue).

#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @buffers
// CHECK:         linalg.generic
// TF32-SAME:       blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 2, stages = 4>
// OFF-NOT:         gpu_mma_tiles
// HOPPER-SAME:     blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true>
// OFF-NOT:         gpu_warpgroup_tiles
// CHECK:         return
func.func @buffers(%x: memref<?x64xf32>, %w: memref<32x64xf32>, %y: memref<?x32xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xf32>, memref<32x64xf32>) outs(%y : memref<?x32xf32>) {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @tensors
// TF32:          linalg.generic {{.+}}blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 2, stages = 4>
// OFF-NOT:       gpu_mma_tiles
// CHECK:         return
func.func @tensors(%x: tensor<4x32xf32>, %w: tensor<16x32xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x32xf32>, tensor<16x32xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Not TF32 contractions: K not a multiple of 16, a [k, n] weight, a body
// that computes more than out + a * b, and a batched contraction
// (attention's Q K^T per head, which keeps f32).
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#wt = affine_map<(m, n, k) -> (k, n)>
#o = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @declined
// CHECK-NOT:     gpu_mma_tiles
// CHECK:         return
#q = affine_map<(h, t, s, d) -> (h, t, d)>
#k = affine_map<(h, t, s, d) -> (h, s, d)>
#sc = affine_map<(h, t, s, d) -> (h, t, s)>
func.func @declined(%x: memref<?x40xf32>, %w: memref<32x40xf32>, %y: memref<?x32xf32>,
                    %x2: memref<?x64xf32>, %wt: memref<64x32xf32>, %w2: memref<32x64xf32>,
                    %qh: memref<4x8x16xf32>, %kh: memref<4x8x16xf32>, %sh: memref<4x8x8xf32>) {
  linalg.generic {indexing_maps = [#q, #k, #sc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%qh, %kh : memref<4x8x16xf32>, memref<4x8x16xf32>) outs(%sh : memref<4x8x8xf32>) {
  ^bb0(%in: f32, %kv: f32, %acc: f32):
    %p = arith.mulf %in, %kv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x40xf32>, memref<32x40xf32>) outs(%y : memref<?x32xf32>) {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #wt, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x2, %wt : memref<?x64xf32>, memref<64x32xf32>) outs(%y : memref<?x32xf32>) {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x2, %w2 : memref<?x64xf32>, memref<32x64xf32>) outs(%y : memref<?x32xf32>) {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %p = arith.mulf %sq, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The A input is written by a pointwise generic (an RMSNorm's apply:
// x * r[row] * gain[k]): mma.sync tiles only, also on sm_90a.
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, k) -> (m, k)>
#row = affine_map<(m, k) -> (m)>
#col = affine_map<(m, k) -> (k)>
// CHECK-LABEL: func.func @prologue
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// TF32-SAME:       blockc_codegen.gpu_mma_tiles
// CHECK-NOT:       gpu_warpgroup_tiles
// CHECK:         return
func.func @prologue(%x: memref<8x64xf32>, %r: memref<8xf32>, %g: memref<64xf32>, %w: memref<32x64xf32>, %y: memref<8x32xf32>) {
  %n = memref.alloc() : memref<8x64xf32>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r, %g : memref<8x64xf32>, memref<8xf32>, memref<64xf32>) outs(%n : memref<8x64xf32>) {
  ^bb0(%xv: f32, %rv: f32, %gv: f32, %out: f32):
    %s = arith.mulf %xv, %rv : f32
    %t = arith.mulf %s, %gv : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%n, %w : memref<8x64xf32>, memref<32x64xf32>) outs(%y : memref<8x32xf32>) {
  ^bb0(%in: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %n : memref<8x64xf32>
  return
}
