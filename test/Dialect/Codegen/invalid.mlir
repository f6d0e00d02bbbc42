// RUN: blockc-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of CodegenDialect.cpp: the attribute
// verifiers (CPUTargetAttr, LinearTilesAttr, AttentionTilesAttr,
// HorizontalGroupAttr) and the
// dialect's check of the discardable names.

//===----------------------------------------------------------------------===//
// cpu_target
//===----------------------------------------------------------------------===//

// expected-error @+1 {{vector_width must be a power of two >= 1, got 12}}
func.func @vector_width_not_power_of_two() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 12, registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  return
}

// -----

// expected-error @+1 {{vector_width must be a power of two >= 1, got 0}}
func.func @vector_width_zero() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 0, registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  return
}

// -----

// expected-error @+1 {{avx512_bf16 needs isa = avx512, got isa = avx2}}
func.func @bf16_without_avx512() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true>} {
  return
}

// -----

// expected-error @+1 {{avx512_vnni needs isa = avx512, got isa = avx2}}
func.func @vnni512_without_avx512() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576, avx512_vnni = true>} {
  return
}

// -----

// expected-error @+1 {{amx_bf16 needs isa = avx512, got isa = avx2}}
func.func @amx_without_avx512() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576, amx_bf16 = true>} {
  return
}

// -----

// expected-error @+1 {{avx_vnni needs isa = avx512 or avx2, got isa = sse}}
func.func @avx_vnni_on_sse() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = sse, vector_width = 4, registers = 16, l1_bytes = 32768, l2_bytes = 1048576, avx_vnni = true>} {
  return
}

// -----

// expected-error @+1 {{registers must be >= 8, got 4}}
func.func @too_few_registers() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 4, l1_bytes = 32768, l2_bytes = 1048576>} {
  return
}

// -----

// expected-error @+1 {{l1_bytes must be positive, got 0}}
func.func @l1_zero() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 0, l2_bytes = 1048576>} {
  return
}

// -----

// expected-error @+1 {{l2_bytes must be positive, got -1}}
func.func @l2_negative() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = -1>} {
  return
}

// -----

// An ISA outside the enum.
// expected-error @+2 {{expected ::blockc::codegen::ISA to be one of: avx512, avx2, sse}}
// expected-error @+1 {{failed to parse Codegen_CPUTargetAttr parameter 'isa' which is to be a `::blockc::codegen::ISA`}}
func.func @unknown_isa() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = neon, vector_width = 4, registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  return
}

// -----

//===----------------------------------------------------------------------===//
// linear_tiles
//===----------------------------------------------------------------------===//

func.func @tiles_zero(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{panel_k must be >= 1, got 0}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 0, panel_n = 32, pack_min_rows = 32>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

func.func @tiles_group_zero(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{panel_group must be >= 1, got 0}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, panel_group = 0>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

func.func @tiles_block_align_zero(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{block_align must be >= 1, got 0}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, block_align = 0>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

func.func @tiles_row_block_negative(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{row_block must be >= 0, got -1}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, row_block = -1>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

func.func @tiles_amx_without_bf16_dot(%x: tensor<1x2x8xf32>, %w: tensor<4x8xbf16>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{amx needs bf16_dot}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, amx = true>} : tensor<1x2x8xf32>, tensor<4x8xbf16> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

func.func @tiles_prefetch_negative(%x: tensor<1x1x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x1x4xf32> {
  // expected-error @+1 {{prefetch_bytes must be 0 (no prefetch) or a multiple of 64 (a cache line) up to 65536, got -64}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, prefetch_bytes = -64>} : tensor<1x1x8xf32>, tensor<4x8xf32> -> tensor<1x1x4xf32>
  return %y : tensor<1x1x4xf32>
}

// -----

func.func @tiles_prefetch_partial_line(%x: tensor<1x1x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x1x4xf32> {
  // expected-error @+1 {{prefetch_bytes must be 0 (no prefetch) or a multiple of 64 (a cache line) up to 65536, got 100}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, prefetch_bytes = 100>} : tensor<1x1x8xf32>, tensor<4x8xf32> -> tensor<1x1x4xf32>
  return %y : tensor<1x1x4xf32>
}

// -----

func.func @tiles_prefetch_too_far(%x: tensor<1x1x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x1x4xf32> {
  // expected-error @+1 {{prefetch_bytes must be 0 (no prefetch) or a multiple of 64 (a cache line) up to 65536, got 131072}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, prefetch_bytes = 131072>} : tensor<1x1x8xf32>, tensor<4x8xf32> -> tensor<1x1x4xf32>
  return %y : tensor<1x1x4xf32>
}

// -----

// A vendor outside the enum.
// expected-error @+2 {{expected ::blockc::codegen::CPUVendor to be one of: generic, intel, amd}}
// expected-error @+1 {{failed to parse Codegen_CPUTargetAttr parameter 'vendor' which is to be a `::blockc::codegen::CPUVendor`}}
func.func @target_unknown_vendor() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576, vendor = arm>} {
  return
}

// -----

func.func @tiles_negative(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{rows must be >= 1, got -2}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = -2, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

// Every parameter but panel_group, row_block and block_align is required (the vector
// width comes from the cpu_target).
func.func @tiles_missing(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{struct is missing required parameter: pack_min_rows}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// horizontal_group
//===----------------------------------------------------------------------===//

func.func @group_negative(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{horizontal group id must be non-negative, got -1}}
  %y = transformer.linear %x, %w {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<-1>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// elementwise_tiles
//===----------------------------------------------------------------------===//

func.func @elementwise_rows(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c = arith.constant 0.0 : f32
  // expected-error @+1 {{rows must be >= 1, got 0}}
  %y = linalg.fill {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 0, width = 8>} ins(%c : f32) outs(%x : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @elementwise_width(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c = arith.constant 0.0 : f32
  // expected-error @+1 {{width must be 0 or a power of two up to 64, got 12}}
  %y = linalg.fill {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 1, width = 12>} ins(%c : f32) outs(%x : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @elementwise_tiles_kind(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c = arith.constant 0.0 : f32
  // expected-error @+1 {{'blockc_codegen.elementwise_tiles' must be a #blockc_codegen.elementwise_tiles attribute}}
  %y = linalg.fill {blockc_codegen.elementwise_tiles = 4 : i64} ins(%c : f32) outs(%x : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Discardable attribute names
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'blockc_codegen.cpu_target' must be a #blockc_codegen.cpu_target attribute}}
func.func @cpu_target_kind() attributes {blockc_codegen.cpu_target = #blockc_codegen.isa<avx512>} {
  return
}

// -----

func.func @linear_tiles_kind(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{'blockc_codegen.linear_tiles' must be a #blockc_codegen.linear_tiles attribute}}
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = {rows = 4 : i64}} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

func.func @horizontal_group_kind(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{'blockc_codegen.horizontal_group' must be a #blockc_codegen.horizontal_group attribute}}
  %y = transformer.linear %x, %w {blockc_codegen.horizontal_group = 0 : i64} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

func.func @kernel_kind() {
  // expected-error @+1 {{'blockc_codegen.kernel' must be a #blockc_codegen.kernel attribute}}
  scf.execute_region {
    scf.yield
  } {blockc_codegen.kernel = "tiled_matmul"}
  return
}

// -----

// expected-error @+1 {{unknown blockc_codegen attribute 'blockc_codegen.tiles'}}
func.func @unknown_name() attributes {blockc_codegen.tiles = #blockc_codegen.isa<avx2>} {
  return
}

// -----

//===----------------------------------------------------------------------===//
// packed_weight, weight_layout, prepare_for, prepare_part_of
//===----------------------------------------------------------------------===//

// expected-error @+1 {{panel_k must be >= 1, got 0}}
func.func @packed_weight_panel_zero() attributes {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 16, cols = 8, panel_k = 0, panel_n = 8>} {
  return
}

// -----

// expected-error @+1 {{rows must be >= 1, got -2}}
func.func @packed_weight_negative_rows() attributes {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = -2, cols = 8, panel_k = 8, panel_n = 8>} {
  return
}

// -----

// expected-error @+1 {{pairs = true needs an even panel_k and cols, got panel_k = 8 and cols = 9}}
func.func @packed_weight_pairs_odd_cols() attributes {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 16, cols = 9, panel_k = 8, panel_n = 8, pairs = true>} {
  return
}

// -----

// expected-error @+1 {{pairs = true needs an even panel_k and cols, got panel_k = 7 and cols = 8}}
func.func @packed_weight_pairs_odd_panel() attributes {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 16, cols = 8, panel_k = 7, panel_n = 8, pairs = true>} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.prepared' must be a #blockc_codegen.packed_weight or #blockc_codegen.quantized_weight attribute}}
func.func @prepared_wrong_kind() attributes {blockc_codegen.prepared = 3 : i64} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.weight_layout' must be a #blockc_codegen.weight_layout attribute}}
func.func @weight_layout_wrong_kind() attributes {blockc_codegen.weight_layout = "packed"} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.prepare_for' must be a string (the entry's name)}}
func.func @prepare_for_symbol() attributes {blockc_codegen.prepare_for = @forward} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.prepare_part_of' must be a string (the prepare function's name)}}
func.func @prepare_part_of_symbol() attributes {blockc_codegen.prepare_part_of = @forward_prepare} {
  return
}

// -----

// expected-error @+1 {{bits = 8 has one scale per row: group_size must be cols (64), got 32}}
func.func @quantized_int8_group() attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 8, cols = 64, bits = 8, group_size = 32>} {
  return
}

// -----

// expected-error @+1 {{bits must be 8 or 4, got 2}}
func.func @quantized_bits() attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 8, cols = 64, bits = 2, group_size = 32>} {
  return
}

// -----

// expected-error @+1 {{bits = 4 needs group_size 32, 64 or 128, got 16}}
func.func @quantized_int4_group() attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 8, cols = 64, bits = 4, group_size = 16>} {
  return
}

// -----

// expected-error @+1 {{group_size 64 does not divide cols 96}}
func.func @quantized_int4_cols() attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 8, cols = 96, bits = 4, group_size = 64>} {
  return
}

// -----

// expected-error @+1 {{rows and cols must be >= 1, got 0 and 64}}
func.func @quantized_rows() attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 0, cols = 64, bits = 8, group_size = 64>} {
  return
}

// -----

// expected-error @+1 {{interleave must be 1, 2, 4, 8 or 16, got 3}}
func.func @quantized_interleave() attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 8, cols = 64, bits = 4, group_size = 32, interleave = 3>} {
  return
}

// -----

// expected-error @+1 {{interleave 8 needs bits = 4 or row_lanes (int8 rows are interleaved only in lanes)}}
func.func @quantized_interleave_int8() attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 8, cols = 64, bits = 8, group_size = 64, interleave = 8>} {
  return
}

// -----

func.func @quantized_tiles_interleave(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{interleave must be 1, 2, 4, 8 or 16, got 32}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 4, block_n = 64, panel_k = 512, panel_rows = 6, panel_min_rows = 8, prefetch_tiles = 0, interleave = 32>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

// expected-error @+1 {{row_lanes needs bits = 4 and interleave = 8 or 16, or bits = 8 and interleave = 8, got bits = 4 and interleave = 4}}
func.func @quantized_row_lanes() attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 8, cols = 64, bits = 4, group_size = 32, interleave = 4, row_lanes = true>} {
  return
}

// -----

// expected-error @+1 {{row_lanes needs bits = 4 and interleave = 8 or 16, or bits = 8 and interleave = 8, got bits = 8 and interleave = 16}}
func.func @quantized_row_lanes_int8() attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 8, cols = 64, bits = 8, group_size = 64, interleave = 16, row_lanes = true>} {
  return
}

// -----

func.func @quantized_tiles_row_lanes(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{row_lanes needs interleave = 8 or 16, got 1}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 4, block_n = 64, panel_k = 512, panel_rows = 6, panel_min_rows = 8, prefetch_tiles = 0, row_lanes = true>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// attention_tiles
//===----------------------------------------------------------------------===//

func.func @attn_width(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  // expected-error @+1 {{width must be 4, 8 or 16, got 12}}
  %o = transformer.sdpa %q, %q, %q {causal, blockc_codegen.attention_tiles = #blockc_codegen.attention_tiles<width = 12, multi_row = true, row_vectors = 4, key_group = 4, value_group = 4, key_tile = 32, qk_unroll = 1, prefetch_distance = 1, prefetch_locality = 2>} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

func.func @attn_rows(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  // expected-error @+1 {{row_vectors must be >= 1, got 0}}
  %o = transformer.sdpa %q, %q, %q {causal, blockc_codegen.attention_tiles = #blockc_codegen.attention_tiles<width = 16, multi_row = true, row_vectors = 0, key_group = 4, value_group = 4, key_tile = 32, qk_unroll = 1, prefetch_distance = 1, prefetch_locality = 2>} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

func.func @attn_unroll(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  // expected-error @+1 {{qk_unroll must be >= 1, got 0}}
  %o = transformer.sdpa %q, %q, %q {causal, blockc_codegen.attention_tiles = #blockc_codegen.attention_tiles<width = 16, multi_row = true, row_vectors = 4, key_group = 4, value_group = 4, key_tile = 32, qk_unroll = 0, prefetch_distance = 1, prefetch_locality = 2>} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

func.func @attn_key_tile(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  // expected-error @+1 {{key_tile (30) must be a multiple of key_group (4)}}
  %o = transformer.sdpa %q, %q, %q {causal, blockc_codegen.attention_tiles = #blockc_codegen.attention_tiles<width = 16, multi_row = true, row_vectors = 4, key_group = 4, value_group = 4, key_tile = 30, qk_unroll = 1, prefetch_distance = 1, prefetch_locality = 2>} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

func.func @attn_prefetch(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  // expected-error @+1 {{prefetch_distance must be >= 0, got -1}}
  %o = transformer.sdpa %q, %q, %q {causal, blockc_codegen.attention_tiles = #blockc_codegen.attention_tiles<width = 16, multi_row = true, row_vectors = 4, key_group = 4, value_group = 4, key_tile = 32, qk_unroll = 1, prefetch_distance = -1, prefetch_locality = 2>} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

func.func @attn_locality(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  // expected-error @+1 {{prefetch_locality must be in [0, 3], got 4}}
  %o = transformer.sdpa %q, %q, %q {causal, blockc_codegen.attention_tiles = #blockc_codegen.attention_tiles<width = 16, multi_row = true, row_vectors = 4, key_group = 4, value_group = 4, key_tile = 32, qk_unroll = 1, prefetch_distance = 1, prefetch_locality = 4>} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

func.func @attn_not_tiles(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  // expected-error @+1 {{'blockc_codegen.attention_tiles' must be a #blockc_codegen.attention_tiles attribute}}
  %o = transformer.sdpa %q, %q, %q {causal, blockc_codegen.attention_tiles = 1 : i64} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// quantized_tiles
//===----------------------------------------------------------------------===//

func.func @qtiles_rows(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{rows must be in [1, 8], got 0}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 0, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 4>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

func.func @qtiles_cols(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{cols must be in [1, 8], got 9}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 9, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 4>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

func.func @qtiles_panel_rows(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{panel_rows must be in [1, 8], got 0}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 0, panel_min_rows = 16, prefetch_tiles = 4>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

func.func @qtiles_block_n(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{block_n must be a positive multiple of 32, got 48}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 48, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 4>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

func.func @qtiles_panel_k(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{panel_k must be a positive multiple of 32, got 100}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 100, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 4>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

func.func @qtiles_panel_size(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{the f32 panel of panel_k x block_n (4096 x 128) must fit 1 MiB}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 128, panel_k = 4096, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 4>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

func.func @qtiles_min_rows(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{panel_min_rows must be >= 1, got 0}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 0, prefetch_tiles = 4>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

func.func @qtiles_prefetch(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{prefetch_tiles must be >= 0, got -1}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = -1>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

func.func @qtiles_act_panel_min_rows(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{act_panel_min_rows must be >= 0 (0: never), got -1}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 4, act_panel_min_rows = -1>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

func.func @qtiles_kind(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{'blockc_codegen.quantized_tiles' must be a #blockc_codegen.quantized_tiles attribute}}
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = 4 : i64} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}
