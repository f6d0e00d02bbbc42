// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_80 | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_90a | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles=chip=sm_75 | FileCheck %s
// RUN: not blockc-opt %s --blockc-gpu-select-tiles=chip=gfx90a 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not blockc-opt %s --blockc-gpu-select-tiles=chip=sm_ 2>&1 | FileCheck %s --check-prefix=NOCC

// sm_80 and sm_90 (and, by the documented rule, every other sm_<N>) get the
// same configuration: 32 x 8 threads for the function's loops, 4 warps x 4
// rows per attention block, 64 x 64 x 16 contraction tiles on 16 x 16
// threads.
// CHIP: error: blockc-gpu-select-tiles: unknown GPU architecture 'gfx90a' (known: sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a)
// NOCC: error: blockc-gpu-select-tiles: unknown GPU architecture 'sm_' (known: sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a)

// The function gets the loop mapping; the attention with head dim 64 (a
// multiple of 32) gets the kernel's block, the one with head dim 16 keeps
// the generic lowering and gets nothing.
// CHECK-LABEL: func.func @attention
// CHECK-SAME:    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>}
// CHECK:         transformer.sdpa %{{.+}} {blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4>, causal}
// CHECK-SAME:      -> tensor<1x?x4x64xf32>
// CHECK:         transformer.sdpa %{{.+}} {causal}
// CHECK-SAME:      -> tensor<1x?x4x16xf32>
func.func @attention(%q: tensor<1x?x4x64xf32>, %k: tensor<1x?x2x64xf32>, %v: tensor<1x?x2x64xf32>,
                     %q2: tensor<1x?x4x16xf32>, %k2: tensor<1x?x4x16xf32>, %v2: tensor<1x?x4x16xf32>)
    -> (tensor<1x?x4x64xf32>, tensor<1x?x4x16xf32>) {
  %o = transformer.sdpa %q, %k, %v {causal}
      : tensor<1x?x4x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32> -> tensor<1x?x4x64xf32>
  %o2 = transformer.sdpa %q2, %k2, %v2 {causal}
      : tensor<1x?x4x16xf32>, tensor<1x?x4x16xf32>, tensor<1x?x4x16xf32> -> tensor<1x?x4x16xf32>
  return %o, %o2 : tensor<1x?x4x64xf32>, tensor<1x?x4x16xf32>
}

// -----

// Contractions on buffers get tiles; a contraction on tensors (before
// bufferization) and a max-reduction do not.
// CHECK-LABEL: func.func @contractions
// CHECK:         linalg.matmul {blockc_codegen.gpu_matmul_tiles = #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 16, threads_x = 16, threads_y = 16>}
// CHECK-SAME:      memref<8x16xf32>
// CHECK-NOT:     gpu_matmul_tiles
// CHECK:         linalg.generic
// CHECK-NOT:     gpu_matmul_tiles
// CHECK:         linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x16xf32>
// CHECK-NOT:     gpu_matmul_tiles
// CHECK:         return
func.func @contractions(%a: memref<8x16xf32>, %b: memref<16x8xf32>, %c: memref<8x8xf32>,
                        %ta: tensor<8x16xf32>, %tb: tensor<16x8xf32>, %tc: tensor<8x8xf32>) -> tensor<8x8xf32> {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x8xf32>) outs(%c : memref<8x8xf32>)
  linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %m = arith.maximumf %acc, %p : f32
    linalg.yield %m : f32
  }
  %r = linalg.matmul ins(%ta, %tb : tensor<8x16xf32>, tensor<16x8xf32>) outs(%tc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// Attributes already present are kept (a test or a user pins a choice by
// writing it): none of the defaults appears.
// CHECK-LABEL: func.func @pinned
// CHECK-SAME:    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 64, threads_y = 4>}
// CHECK:         linalg.matmul {blockc_codegen.gpu_matmul_tiles = #blockc_codegen.gpu_matmul_tiles<tile_m = 32, tile_n = 128, tile_k = 8, threads_x = 32, threads_y = 8>}
// CHECK:         transformer.sdpa %{{.+}} {blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 2, warps = 8>}
func.func @pinned(%a: memref<8x16xf32>, %b: memref<16x8xf32>, %c: memref<8x8xf32>,
                  %q: tensor<1x?x4x64xf32>, %k: tensor<1x?x4x64xf32>, %v: tensor<1x?x4x64xf32>) -> tensor<1x?x4x64xf32>
    attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 64, threads_y = 4>} {
  linalg.matmul {blockc_codegen.gpu_matmul_tiles = #blockc_codegen.gpu_matmul_tiles<tile_m = 32, tile_n = 128, tile_k = 8, threads_x = 32, threads_y = 8>}
      ins(%a, %b : memref<8x16xf32>, memref<16x8xf32>) outs(%c : memref<8x8xf32>)
  %o = transformer.sdpa %q, %k, %v {blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 2, warps = 8>}
      : tensor<1x?x4x64xf32>, tensor<1x?x4x64xf32>, tensor<1x?x4x64xf32> -> tensor<1x?x4x64xf32>
  return %o : tensor<1x?x4x64xf32>
}

// -----

// A declaration has nothing to configure.
// CHECK-LABEL: func.func private @external
// CHECK-NOT:     blockc_codegen
func.func private @external(memref<8x8xf32>)
