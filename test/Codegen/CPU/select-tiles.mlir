// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" | FileCheck %s --check-prefix=AVX512
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2" | FileCheck %s --check-prefix=AVX2
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=generic l2-bytes=524288" | FileCheck %s --check-prefix=GENERIC
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles | FileCheck %s --check-prefix=HOST

// The heuristic alone: each transformer.linear gets a blockc.cpu_tiles
// dictionary. A 4096 x 4096 projection: block_k = 2048 (the cap); the
// weight block stays within l2 / 8 = 256 KiB: 256 KiB / (2048 * 4 B) = 32
// weight rows. A 11008 x 40 projection: block_k = 40 rounded up to the
// vector width (48 with 16 lanes, 40 with 8 or 4), block_n as many rows as
// fit, a multiple of cols. The packed kernel (T >= pack_min_rows = 32):
// 8 x 2 vectors of accumulators with AVX-512 (6 x 2 with AVX2 and SSE),
// panels of one micro-kernel width (2 vectors) by panel_k = 256 (or the
// padded reduction length, 48 / 40, when shorter).
// AVX512-LABEL: func.func @two_projections
// AVX512:       transformer.linear {{.*}} {blockc.cpu_tiles = {block_k = 2048 : i64, block_n = 32 : i64, cols = 4 : i64, pack_cols = 2 : i64, pack_min_rows = 32 : i64, pack_rows = 8 : i64, panel_k = 256 : i64, panel_n = 32 : i64, rows = 4 : i64, vector_width = 16 : i64}}
// AVX512:       transformer.linear {{.*}} {blockc.cpu_tiles = {block_k = 48 : i64, block_n = 1364 : i64, cols = 4 : i64, pack_cols = 2 : i64, pack_min_rows = 32 : i64, pack_rows = 8 : i64, panel_k = 48 : i64, panel_n = 32 : i64, rows = 4 : i64, vector_width = 16 : i64}}
// AVX2-LABEL:   func.func @two_projections
// AVX2:         transformer.linear {{.*}} {blockc.cpu_tiles = {block_k = 2048 : i64, block_n = 32 : i64, cols = 4 : i64, pack_cols = 2 : i64, pack_min_rows = 32 : i64, pack_rows = 6 : i64, panel_k = 256 : i64, panel_n = 16 : i64, rows = 2 : i64, vector_width = 8 : i64}}
// AVX2:         transformer.linear {{.*}} {blockc.cpu_tiles = {block_k = 40 : i64, block_n = 1636 : i64, cols = 4 : i64, pack_cols = 2 : i64, pack_min_rows = 32 : i64, pack_rows = 6 : i64, panel_k = 40 : i64, panel_n = 16 : i64, rows = 2 : i64, vector_width = 8 : i64}}
// 512 KiB of L2: 64 KiB weight blocks, 8 rows of 2048.
// GENERIC-LABEL: func.func @two_projections
// GENERIC:       transformer.linear {{.*}} {blockc.cpu_tiles = {block_k = 2048 : i64, block_n = 8 : i64, cols = 4 : i64, pack_cols = 2 : i64, pack_min_rows = 32 : i64, pack_rows = 6 : i64, panel_k = 256 : i64, panel_n = 8 : i64, rows = 2 : i64, vector_width = 4 : i64}}
// The host (isa=auto): some ISA's tiles, whichever this machine has.
// HOST-LABEL:   func.func @two_projections
// HOST-COUNT-2: transformer.linear {{.*}} {blockc.cpu_tiles = {block_k = {{[0-9]+}} : i64, block_n = {{[0-9]+}} : i64, cols = 4 : i64, pack_cols = 2 : i64, pack_min_rows = 32 : i64, pack_rows = {{[68]}} : i64, panel_k = {{[0-9]+}} : i64, panel_n = {{8|16|32}} : i64, rows = {{[24]}} : i64, vector_width = {{4|8|16}} : i64}}
func.func @two_projections(%x: tensor<?x?x4096xf32>, %w: tensor<4096x4096xf32>,
                           %y: tensor<?x?x40xf32>, %v: tensor<11008x40xf32>)
    -> (tensor<?x?x4096xf32>, tensor<?x?x11008xf32>) {
  %a = transformer.linear %x, %w : tensor<?x?x4096xf32>, tensor<4096x4096xf32> -> tensor<?x?x4096xf32>
  %b = transformer.linear %y, %v : tensor<?x?x40xf32>, tensor<11008x40xf32> -> tensor<?x?x11008xf32>
  return %a, %b : tensor<?x?x4096xf32>, tensor<?x?x11008xf32>
}

// -----

// A tile attribute already on the op (a user's override) is kept as is.
// AVX512-LABEL: func.func @pinned
// AVX512:       transformer.linear {{.*}} {blockc.cpu_tiles = {block_k = 64 : i64, block_n = 8 : i64, cols = 1 : i64, rows = 1 : i64, vector_width = 4 : i64}}
func.func @pinned(%x: tensor<?x?x64xf32>, %w: tensor<8x64xf32>) -> tensor<?x?x8xf32> {
  %a = transformer.linear %x, %w {blockc.cpu_tiles = {block_k = 64 : i64, block_n = 8 : i64, cols = 1 : i64, rows = 1 : i64, vector_width = 4 : i64}} : tensor<?x?x64xf32>, tensor<8x64xf32> -> tensor<?x?x8xf32>
  return %a : tensor<?x?x8xf32>
}
