// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,WG
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_90a warpgroup-schedule=persistent" | FileCheck %s --check-prefixes=CHECK,PERSISTENT
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_90a warpgroup-schedule=cooperative" | FileCheck %s --check-prefixes=CHECK,COOP
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_90a warpgroup-epilogue=elements" | FileCheck %s --check-prefixes=CHECK,ELEMENTS
// RUN: not blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_90a warpgroup-schedule=pingpong" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not blockc-opt %s -split-input-file --blockc-gpu-select-tiles="chip=sm_90a warpgroup-epilogue=vector" 2>&1 | FileCheck %s --check-prefix=BADEPILOGUE
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_90 | FileCheck %s --check-prefixes=CHECK,NOWG
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_100a | FileCheck %s --check-prefixes=CHECK,NOWG

// Warpgroup-MMA tiles (wgmma and TMA are sm_90a's arch-specific features;
// sm_90 without them and sm_100a get only the mma.sync tiles): tensor-core
// contractions of an [M..., K] buffer (M may be several leading
// dimensions, collapsed for TMA) and an [N, K] weight get, beside the
// mma.sync tiles, two consumer warpgroups in a 4-stage ring fed by a
// producer warpgroup (the default schedule): 128 x 256 tiles when N >= 256,
// 128 x 128 below; the persistent schedule 128 x 128 tiles; the
// cooperative one no producer. The epilogue ends in a TMA store
// (tma_store) where the ring, the f32 output tile, the staging tile and the
// mbarriers fit in the chip's 227 KiB: not beside the persistent ring
// (131072 + 67584 + 32768 + 1024 + 64 bytes); warpgroup-epilogue=elements
// keeps the per-element stores everywhere.

// BAD: error: blockc-gpu-select-tiles: unknown warpgroup schedule 'pingpong' (cooperative, specialized or persistent)
// BADEPILOGUE: error: blockc-gpu-select-tiles: unknown warpgroup epilogue 'vector' (tma or elements)

// CHECK-LABEL: func.func @projections
// CHECK:         linalg.generic {{.+}} ins(%arg0, %arg1 : memref<?x?x64xbf16>, memref<32x64xbf16>)
// CHECK-SAME:      blockc_codegen.gpu_mma_tiles
// WG-SAME:         blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true, tma_store = true>
// ELEMENTS-SAME:   blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true>
// PERSISTENT-SAME: blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true, persistent = true>
// COOP-SAME:       blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, tma_store = true>
// NOWG-NOT:        gpu_warpgroup_tiles
// CHECK:         linalg.generic {{.+}} ins(%arg3, %arg4 : memref<?x48xf16>, memref<32x48xf16>)
// CHECK-SAME:      blockc_codegen.gpu_mma_tiles
// WG-SAME:         blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true, tma_store = true>
// ELEMENTS-SAME:   blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true>
// PERSISTENT-SAME: blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true, persistent = true>
// COOP-SAME:       blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, tma_store = true>
// NOWG-NOT:        gpu_warpgroup_tiles
#a3 = affine_map<(b, t, n, k) -> (b, t, k)>
#w3 = affine_map<(b, t, n, k) -> (n, k)>
#o3 = affine_map<(b, t, n, k) -> (b, t, n)>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @projections(%x: memref<?x?x64xbf16>, %w: memref<32x64xbf16>, %y: memref<?x?x32xf32>,
                       %xh: memref<?x48xf16>, %wh: memref<32x48xf16>, %yh: memref<?x32xf32>) {
  linalg.generic {indexing_maps = [#a3, #w3, #o3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xbf16>, memref<32x64xbf16>) outs(%y : memref<?x?x32xf32>) {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xh, %wh : memref<?x48xf16>, memref<32x48xf16>) outs(%yh : memref<?x32xf32>) {
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

// N >= 256: 128 x 256 tiles with a producer (192 KiB of ring); the
// persistent schedule keeps 128 x 128 (its output tile lies beside the
// ring).
// CHECK-LABEL: func.func @wide
// CHECK:         linalg.generic
// WG-SAME:         #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 4, producer = true, tma_store = true>
// ELEMENTS-SAME:   #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 4, producer = true>
// PERSISTENT-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true, persistent = true>
// COOP-SAME:       #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, tma_store = true>
#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @wide(%x: memref<?x64xbf16>, %w: memref<256x64xbf16>, %y: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<256x64xbf16>) outs(%y : memref<?x256xf32>) {
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

// A batched contraction (scores of attention: a batch dimension in both
// inputs) and an M input whose dimensions are not in loop order keep the
// mma.sync tiles only.
// CHECK-LABEL: func.func @declined
// CHECK-NOT:     gpu_warpgroup_tiles
// CHECK:         return
#qb = affine_map<(b, m, n, k) -> (b, m, k)>
#kb = affine_map<(b, m, n, k) -> (b, n, k)>
#ob = affine_map<(b, m, n, k) -> (b, m, n)>
#at = affine_map<(t, s, n, k) -> (s, t, k)>
#wt = affine_map<(t, s, n, k) -> (n, k)>
#ot = affine_map<(t, s, n, k) -> (t, s, n)>
func.func @declined(%q: memref<4x?x64xbf16>, %k: memref<4x?x64xbf16>, %s: memref<4x?x?xf32>,
                    %x: memref<?x?x64xbf16>, %w: memref<32x64xbf16>, %y: memref<?x?x32xf32>) {
  linalg.generic {indexing_maps = [#qb, #kb, #ob], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x?x64xbf16>, memref<4x?x64xbf16>) outs(%s : memref<4x?x?xf32>) {
  ^bb0(%in: bf16, %kv: bf16, %acc: f32):
    %qf = arith.extf %in : bf16 to f32
    %kf = arith.extf %kv : bf16 to f32
    %p = arith.mulf %qf, %kf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#at, #wt, #ot], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xbf16>, memref<32x64xbf16>) outs(%y : memref<?x?x32xf32>) {
  ^bb0(%in: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
