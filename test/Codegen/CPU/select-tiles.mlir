// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" | FileCheck %s --check-prefix=AVX512
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2" | FileCheck %s --check-prefix=AVX2
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 avx-vnni=true" | FileCheck %s --check-prefix=AVX2VNNI
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=sse l2-bytes=524288" | FileCheck %s --check-prefix=SSE
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 vector-width=8 registers=16 l1-bytes=8192" | FileCheck %s --check-prefix=OVR
// The default options are AVX-512's (the pass never reads the host).
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles | FileCheck %s --check-prefix=AVX512
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 l2-bytes=524288 prepare-weights=true" | FileCheck %s --check-prefix=PREP

// The heuristic alone: the function gets its cpu_target and each
// transformer.linear its linear_tiles. A 4096 x 4096 projection: block_k =
// 2048 (the cap); the weight block stays within l2 / 4 = 256 KiB: 256 KiB /
// (2048 * 4 B) = 32 weight rows. A 11008 x 40 projection: block_k = 40
// rounded up to the vector width (48 with 16 lanes, 40 with 8 or 4),
// block_n as many rows as fit, a multiple of cols. Dot-product tiles: 4 x 4
// with 32 registers, 2 x 4 with 16. The packed kernel (T >= pack_min_rows
// = 32): 8 x 2 vectors of accumulators with 32 registers (6 x 2 with 16),
// panels of one micro-kernel width (2 vectors) by panel_k = 256 (or the
// padded reduction length, 48 / 40, when shorter).
// With prepared weights, the blocking of the packed kernel too: panels of
// 256 x 16 floats (16 KiB), l2 / 2 = 256 KiB holds panel_group = 16 of
// them (256 panels: far more than 4 blocks); row blocks whose slice of x
// fills l2 / 4: 128 KiB / (256 x 4 bytes) = 128 rows, whole 6-row
// micro-kernels: 126. Panels of 40 x 16 (2.5 KiB): 102 of them; rows of
// 160 bytes: 819 -> 816.
// PREP-LABEL: func.func @two_projections
// PREP:       transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 16, block_k = 2048, pack_rows = 6, pack_cols = 2, panel_k = 256, panel_n = 16, pack_min_rows = 32, panel_group = 16, row_block = 132>, blockc_codegen.weight_layout = #blockc_codegen.weight_layout<packed_panels>}
// PREP:       transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 816, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32, panel_group = 102, row_block = 822>, blockc_codegen.weight_layout = #blockc_codegen.weight_layout<packed_panels>}
// AVX512-LABEL: func.func @two_projections
// AVX512-SAME:  attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576>}
// AVX512:       transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32>}
// AVX512:       transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 1364, block_k = 48, pack_rows = 8, pack_cols = 2, panel_k = 48, panel_n = 32, pack_min_rows = 32>}
// AVX2-LABEL:   func.func @two_projections
// AVX2-SAME:    attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576>}
// AVX2:         transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 2048, pack_rows = 6, pack_cols = 2, panel_k = 256, panel_n = 16, pack_min_rows = 32>}
// AVX2:         transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 1636, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32>}
// 512 KiB of L2: 128 KiB weight blocks, 16 rows of 2048.
// SSE-LABEL:    func.func @two_projections
// SSE-SAME:     attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = sse, vector_width = 4, registers = 16, l1_bytes = 32768, l2_bytes = 524288>}
// SSE:          transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 16, block_k = 2048, pack_rows = 6, pack_cols = 2, panel_k = 256, panel_n = 8, pack_min_rows = 32>}
// Explicit width, registers and L1 override the ISA's: 8 lanes and 16
// registers give AVX2's tiles; an 8 KiB L1 holds panels of 8192 / (16 * 4)
// = 128 k-steps.
// OVR-LABEL:    func.func @two_projections
// OVR-SAME:     attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 8, registers = 16, l1_bytes = 8192, l2_bytes = 1048576>}
// OVR:          transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 32, block_k = 2048, pack_rows = 6, pack_cols = 2, panel_k = 128, panel_n = 16, pack_min_rows = 32>}
// OVR:          transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 1636, block_k = 40, pack_rows = 6, pack_cols = 2, panel_k = 40, panel_n = 16, pack_min_rows = 32>}
func.func @two_projections(%x: tensor<?x?x4096xf32>, %w: tensor<4096x4096xf32>,
                           %y: tensor<?x?x40xf32>, %v: tensor<11008x40xf32>)
    -> (tensor<?x?x4096xf32>, tensor<?x?x11008xf32>) {
  %a = transformer.linear %x, %w : tensor<?x?x4096xf32>, tensor<4096x4096xf32> -> tensor<?x?x4096xf32>
  %b = transformer.linear %y, %v : tensor<?x?x40xf32>, tensor<11008x40xf32> -> tensor<?x?x11008xf32>
  return %a, %b : tensor<?x?x4096xf32>, tensor<?x?x11008xf32>
}

// -----

// Tiles already on the op (a user's override) are kept as they are; the
// function still gets its target.
// AVX512-LABEL: func.func @pinned_tiles
// AVX512-SAME:  attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512,
// AVX512:       transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 1, cols = 1, block_n = 8, block_k = 64, pack_rows = 1, pack_cols = 1, panel_k = 4, panel_n = 4, pack_min_rows = 1>}
func.func @pinned_tiles(%x: tensor<?x?x64xf32>, %w: tensor<8x64xf32>) -> tensor<?x?x8xf32> {
  %a = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 1, cols = 1, block_n = 8, block_k = 64, pack_rows = 1, pack_cols = 1, panel_k = 4, panel_n = 4, pack_min_rows = 1>} : tensor<?x?x64xf32>, tensor<8x64xf32> -> tensor<?x?x8xf32>
  return %a : tensor<?x?x8xf32>
}

// -----

// A target already on the function is kept, whatever the options say, and
// the tiles follow it (here AVX2's, under isa=avx512).
// AVX512-LABEL: func.func @pinned_target
// AVX512-SAME:  attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 49152, l2_bytes = 1048576>}
// AVX512:       transformer.linear {{.*}} {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 2, cols = 4, block_n = 4096, block_k = 16, pack_rows = 6, pack_cols = 2, panel_k = 16, panel_n = 16, pack_min_rows = 32>}
func.func @pinned_target(%x: tensor<?x?x16xf32>, %w: tensor<8x16xf32>) -> tensor<?x?x8xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 49152, l2_bytes = 1048576>} {
  %a = transformer.linear %x, %w : tensor<?x?x16xf32>, tensor<8x16xf32> -> tensor<?x?x8xf32>
  return %a : tensor<?x?x8xf32>
}

// -----

// A function without projections still gets its target (the attention and
// epilogue kernels read it too).
// AVX2-LABEL:   func.func @no_projection
// AVX2-SAME:    attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576>}
func.func @no_projection() {
  return
}

// -----

// With prepared weights, a projection whose output is split into heads of
// D = 64 for a RoPE (its other uses only read its shape) asks for blocks of
// whole heads: block_align = 64. V, not rotated, keeps the default (1,
// elided); without prepared weights nothing is asked.
// PREP-LABEL: func.func @rope_heads
// PREP:       transformer.linear {{.*}}row_block = 132, block_align = 64>
// PREP:       transformer.linear {{.*}}row_block = 132>
// AVX2-LABEL: func.func @rope_heads
// AVX2-NOT:   block_align
func.func @rope_heads(%x: tensor<1x?x256xf32>, %wq: tensor<256x256xf32>, %wv: tensor<256x256xf32>) -> (tensor<1x?x4x64xf32>, tensor<1x?x4x64xf32>) {
  %c1 = arith.constant 1 : index
  %q = transformer.linear %x, %wq : tensor<1x?x256xf32>, tensor<256x256xf32> -> tensor<1x?x256xf32>
  %v = transformer.linear %x, %wv : tensor<1x?x256xf32>, tensor<256x256xf32> -> tensor<1x?x256xf32>
  %t = tensor.dim %q, %c1 : tensor<1x?x256xf32>
  %qh = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, %t, 4, 64] : tensor<1x?x256xf32> into tensor<1x?x4x64xf32>
  %vh = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [1, %t, 4, 64] : tensor<1x?x256xf32> into tensor<1x?x4x64xf32>
  %qr = transformer.rope %qh : tensor<1x?x4x64xf32>
  return %qr, %vh : tensor<1x?x4x64xf32>, tensor<1x?x4x64xf32>
}

// -----

// Attention schedules: the widest width up to the target's that divides
// the head dim rounded up to 4 (D = 24: 8 lanes on AVX-512); 4 row
// vectors and 4 x 4 tiles in 32 registers, 2 and 6 x 6 (30 keys per tile)
// in 16; none for a bf16 sdpa (left to the generic lowering).
// AVX512-LABEL: func.func @attention
// AVX512: attention_tiles = #blockc_codegen.attention_tiles<width = 16, multi_row = true, row_vectors = 4, key_group = 4, value_group = 4, key_tile = 32, qk_unroll = 1, prefetch_distance = 1, prefetch_locality = 2>
// AVX512: attention_tiles = #blockc_codegen.attention_tiles<width = 8, multi_row = true, row_vectors = 4, key_group = 4, value_group = 4, key_tile = 32, qk_unroll = 1, prefetch_distance = 1, prefetch_locality = 2>
// AVX512-NOT: attention_tiles
// AVX2-LABEL: func.func @attention
// AVX2-COUNT-2: attention_tiles = #blockc_codegen.attention_tiles<width = 8, multi_row = true, row_vectors = 2, key_group = 6, value_group = 6, key_tile = 30, qk_unroll = 1, prefetch_distance = 1, prefetch_locality = 2>
// AVX2-NOT: attention_tiles
func.func @attention(%q: tensor<?x?x32x128xf32>, %k: tensor<?x?x8x128xf32>, %q24: tensor<?x?x4x24xf32>, %h: tensor<?x?x4x64xbf16>) -> (tensor<?x?x32x128xf32>, tensor<?x?x4x24xf32>, tensor<?x?x4x64xbf16>) {
  %o = transformer.sdpa %q, %k, %k {causal} : tensor<?x?x32x128xf32>, tensor<?x?x8x128xf32>, tensor<?x?x8x128xf32> -> tensor<?x?x32x128xf32>
  %o24 = transformer.sdpa %q24, %q24, %q24 {causal} : tensor<?x?x4x24xf32>, tensor<?x?x4x24xf32>, tensor<?x?x4x24xf32> -> tensor<?x?x4x24xf32>
  %oh = transformer.sdpa %h, %h, %h {causal} : tensor<?x?x4x64xbf16>, tensor<?x?x4x64xbf16>, tensor<?x?x4x64xbf16> -> tensor<?x?x4x64xbf16>
  return %o, %o24, %oh : tensor<?x?x32x128xf32>, tensor<?x?x4x24xf32>, tensor<?x?x4x64xbf16>
}

// -----

// Quantised projections get the quantised kernel's schedule: 4 x 4 register
// tiles with 32 registers, 2 x 4 with 16; 32 weight rows per work item;
// panels of 1024 k in tiles of 8 (32 registers) or 6 (16) rows from 16
// input rows on; rows prefetched 2 tiles ahead, 4 with int8 activations;
// int4 weights with 8 rows interleaved (int8 keeps the default, 1), or
// for weight-only int4 the tile's rows in the vector lanes (row_lanes,
// 16 rows with 16 lanes, 8 with 8, 64 weight rows per work item), and so
// does int4 with int8 activations on 8 lanes without VNNI (vpmaddubsw on
// the rows in lanes, at every row count; with VNNI the interleaved rows of
// vpdpbusd), and so does int8 with int8 activations there (vpsignb +
// vpmaddubsw on 8 rows in lanes, interleave 8; elsewhere interleave 1),
// and so does weight-only int8 on 8 lanes with K a multiple of 32 (masks
// and conversions of the bytes in place; @int8_k_not_32 below keeps
// interleave 1); int4 with int8 activations otherwise takes the f32 panels
// on q_x s_x from 16 rows on (else the default, 0: never). A schedule
// given by hand is kept.
// AVX512-LABEL: func.func @quantized
// AVX512: blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 2>, weight_quant = #transformer.weight_quant<int8>}
// AVX512: blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 4, interleave = 8, act_panel_min_rows = 16>
// AVX512: blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 1, cols = 2, block_n = 64, panel_k = 64, panel_rows = 1, panel_min_rows = 1, prefetch_tiles = 0>
// AVX512: blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 64, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 2, interleave = 16, row_lanes = true>
// AVX512: blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 4>, weight_quant = #transformer.weight_quant<int8, activations = int8>}
// AVX512-NOT: quantized_tiles
// AVX2-LABEL: func.func @quantized
// AVX2: quantized_tiles<rows = 2, cols = 4, block_n = 64, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 2, interleave = 8, row_lanes = true>, weight_quant = #transformer.weight_quant<int8>}
// AVX2: quantized_tiles<rows = 2, cols = 4, block_n = 64, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 4, interleave = 8, row_lanes = true>
// AVX2: quantized_tiles<rows = 2, cols = 4, block_n = 64, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 2, interleave = 8, row_lanes = true>
// AVX2: quantized_tiles<rows = 2, cols = 4, block_n = 64, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 4, interleave = 8, row_lanes = true>, weight_quant = #transformer.weight_quant<int8, activations = int8>}
// AVX2VNNI-LABEL: func.func @quantized
// AVX2VNNI: quantized_tiles<rows = 2, cols = 4, block_n = 64, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 2, interleave = 8, row_lanes = true>, weight_quant = #transformer.weight_quant<int8>}
// AVX2VNNI: quantized_tiles<rows = 2, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 4, interleave = 8, act_panel_min_rows = 16>
// AVX2VNNI: quantized_tiles<rows = 2, cols = 4, block_n = 64, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 2, interleave = 8, row_lanes = true>
// AVX2VNNI: quantized_tiles<rows = 2, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 4>, weight_quant = #transformer.weight_quant<int8, activations = int8>}
func.func @quantized(%x: tensor<1x?x64xf32>, %w: tensor<40x64xf32>) -> (tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>) {
  %a = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>} : tensor<1x?x64xf32>, tensor<40x64xf32> -> tensor<1x?x40xf32>
  %b = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32, activations = int8>} : tensor<1x?x64xf32>, tensor<40x64xf32> -> tensor<1x?x40xf32>
  %c = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 1, cols = 2, block_n = 64, panel_k = 64, panel_rows = 1, panel_min_rows = 1, prefetch_tiles = 0>} : tensor<1x?x64xf32>, tensor<40x64xf32> -> tensor<1x?x40xf32>
  %d = transformer.linear %x, %w : tensor<1x?x64xf32>, tensor<40x64xf32> -> tensor<1x?x40xf32>
  %e = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<1x?x64xf32>, tensor<40x64xf32> -> tensor<1x?x40xf32>
  %f = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = int8>} : tensor<1x?x64xf32>, tensor<40x64xf32> -> tensor<1x?x40xf32>
  return %a, %b, %c, %d, %e, %f : tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>, tensor<1x?x40xf32>
}

// -----

// Weight-only int8 with K = 44, no multiple of 32: the k-in-lanes tiles
// (interleave 1) on AVX2 as on AVX-512.
// AVX2-LABEL: func.func @int8_k_not_32
// AVX2: quantized_tiles<rows = 2, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 2>, weight_quant = #transformer.weight_quant<int8>}
// AVX512-LABEL: func.func @int8_k_not_32
// AVX512: quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 2>, weight_quant = #transformer.weight_quant<int8>}
func.func @int8_k_not_32(%x: tensor<1x?x44xf32>, %w: tensor<40x44xf32>) -> tensor<1x?x40xf32> {
  %a = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>} : tensor<1x?x44xf32>, tensor<40x44xf32> -> tensor<1x?x40xf32>
  return %a : tensor<1x?x40xf32>
}
