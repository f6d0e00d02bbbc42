// RUN: blockc-opt %s -split-input-file | blockc-opt -split-input-file | FileCheck %s

// Round trip of every blockc_codegen attribute, under its discardable name
// and (for the enums) as a plain attribute value.

// CHECK-LABEL: func.func @cpu_target
// CHECK-SAME: blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576>
func.func @cpu_target() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 1048576>} {
  return
}

// -----

// The parameters may be written in any order; they print in declaration order.
// CHECK-LABEL: func.func @cpu_target_order
// CHECK-SAME: #blockc_codegen.cpu_target<isa = sse, vector_width = 4, registers = 16, l1_bytes = 49152, l2_bytes = 2097152>
func.func @cpu_target_order() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<l2_bytes = 2097152, l1_bytes = 49152, registers = 16, vector_width = 4, isa = sse>} {
  return
}

// -----

// ISA extensions print when set.
// CHECK-LABEL: func.func @cpu_target_extensions
// CHECK-SAME: #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 49152, l2_bytes = 2097152, avx512_bf16 = true, avx_vnni = true>
func.func @cpu_target_extensions() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 49152, l2_bytes = 2097152, avx_vnni = true, avx512_bf16 = true, avx512_vnni = false>} {
  return
}

// -----

// The vendor prints when not generic.
// CHECK-LABEL: func.func @cpu_target_vendor
// CHECK-SAME: #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 524288, vendor = amd>
// CHECK-LABEL: func.func @cpu_target_generic
// CHECK-SAME: #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 49152, l2_bytes = 2097152>
func.func @cpu_target_vendor() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 524288, vendor = amd>} {
  return
}
func.func @cpu_target_generic() attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<vendor = generic, isa = avx512, vector_width = 16, registers = 32, l1_bytes = 49152, l2_bytes = 2097152>} {
  return
}

// -----

// prefetch_bytes prints when not 1024.
// CHECK-LABEL: func.func @linear_prefetch
// CHECK: linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, prefetch_bytes = 0>
// CHECK: linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32>}
func.func @linear_prefetch(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, prefetch_bytes = 0>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  %z = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, prefetch_bytes = 1024>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @linear_bf16_dot
// CHECK: linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, bf16_dot = true>
func.func @linear_bf16_dot(%x: tensor<1x2x8xf32>, %w: tensor<4x8xbf16>) -> tensor<1x2x4xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, bf16_dot = true>} : tensor<1x2x8xf32>, tensor<4x8xbf16> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @isa
// CHECK-SAME: a = #blockc_codegen.isa<avx512>, b = #blockc_codegen.isa<avx2>, c = #blockc_codegen.isa<sse>
func.func @isa() attributes {a = #blockc_codegen.isa<avx512>, b = #blockc_codegen.isa<avx2>, c = #blockc_codegen.isa<sse>} {
  return
}

// -----

// CHECK-LABEL: func.func @linear
// CHECK: transformer.linear
// CHECK-SAME: blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<3>
// CHECK-SAME: blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 2, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32>
func.func @linear(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x2x4xf32> {
  %y = transformer.linear %x, %w {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<3>, blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 2, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// The blocking of prepared weights, printed when not the defaults
// (panel_group = 1, row_block = 0, block_align = 1 are elided).
// CHECK-LABEL: func.func @linear_blocked
// CHECK: linear_tiles<rows = 4, cols = 2, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, panel_group = 8, row_block = 128, block_align = 64>
// CHECK: linear_tiles<rows = 4, cols = 2, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32>}
func.func @linear_blocked(%x: tensor<1x2x8xf32>, %w: tensor<4x8xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %y = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 2, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, panel_group = 8, row_block = 128, block_align = 64>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  %z = transformer.linear %x, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 2, block_n = 32, block_k = 2048, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, panel_group = 1, row_block = 0, block_align = 1>} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
  return %y, %z : tensor<1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @kernels
// CHECK: blockc_codegen.kernel = #blockc_codegen.kernel<linear>
// CHECK: blockc_codegen.kernel = #blockc_codegen.kernel<attention>
// CHECK: blockc_codegen.kernel = #blockc_codegen.kernel<tiled_matmul>
// CHECK: blockc_codegen.kernel = #blockc_codegen.kernel<fused_attention>
// CHECK: blockc_codegen.kernel = #blockc_codegen.kernel<norm>
func.func @kernels() {
  scf.execute_region {
    scf.yield
  } {blockc_codegen.kernel = #blockc_codegen.kernel<linear>}
  scf.execute_region {
    scf.yield
  } {blockc_codegen.kernel = #blockc_codegen.kernel<attention>}
  scf.execute_region {
    scf.yield
  } {blockc_codegen.kernel = #blockc_codegen.kernel<tiled_matmul>}
  scf.execute_region {
    scf.yield
  } {blockc_codegen.kernel = #blockc_codegen.kernel<fused_attention>}
  scf.execute_region {
    scf.yield
  } {blockc_codegen.kernel = #blockc_codegen.kernel<norm>}
  return
}

// -----

// CHECK-LABEL: func.func @prepared
// CHECK-SAME: blockc_codegen.prepare_for = "forward"
// CHECK-SAME: blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 688, cols = 256, panel_k = 256, panel_n = 32>
// CHECK-SAME: blockc_codegen.weight_layout = #blockc_codegen.weight_layout<packed_panels>
func.func @prepared() attributes {blockc_codegen.prepare_for = "forward", blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 688, cols = 256, panel_k = 256, panel_n = 32>, blockc_codegen.weight_layout = #blockc_codegen.weight_layout<packed_panels>} {
  return
}

// CHECK-LABEL: func.func @prepare_part
// CHECK-SAME: blockc_codegen.prepare_part_of = "forward_prepare"
func.func @prepare_part() attributes {blockc_codegen.prepare_part_of = "forward_prepare"} {
  return
}

// CHECK-LABEL: func.func @prepared_pairs
// CHECK-SAME: blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 40, cols = 1024, panel_k = 256, panel_n = 32, pairs = true>
func.func @prepared_pairs() attributes {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 40, cols = 1024, panel_k = 256, panel_n = 32, pairs = true>} {
  return
}

// CHECK-LABEL: func.func @quantized
// CHECK-SAME: blockc_codegen.kernel = #blockc_codegen.kernel<quantized_linear>
// CHECK-SAME: blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 512, cols = 1408, bits = 4, group_size = 32>
func.func @quantized() attributes {blockc_codegen.kernel = #blockc_codegen.kernel<quantized_linear>, blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 512, cols = 1408, bits = 4, group_size = 32>} {
  return
}

// -----

// CHECK-LABEL: func.func @attention_tiles
// CHECK: blockc_codegen.attention_tiles = #blockc_codegen.attention_tiles<width = 8, multi_row = false, row_vectors = 2, key_group = 6, value_group = 6, key_tile = 30, qk_unroll = 2, prefetch_distance = 0, prefetch_locality = 3>
func.func @attention_tiles(%q: tensor<1x4x2x16xf32>) -> tensor<1x4x2x16xf32> {
  %o = transformer.sdpa %q, %q, %q {blockc_codegen.attention_tiles = #blockc_codegen.attention_tiles<width = 8, multi_row = false, row_vectors = 2, key_group = 6, value_group = 6, key_tile = 30, qk_unroll = 2, prefetch_distance = 0, prefetch_locality = 3>} : tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x2x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}

// -----

// CHECK-LABEL: func.func @quantized_tiles
// CHECK: blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 4, block_n = 64, panel_k = 512, panel_rows = 6, panel_min_rows = 8, prefetch_tiles = 0>
func.func @quantized_tiles(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 4, block_n = 64, panel_k = 512, panel_rows = 6, panel_min_rows = 8, prefetch_tiles = 0>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

// An int4 weight with 8 rows interleaved, and the tiles that ask for it.
// CHECK-LABEL: func.func @quantized_interleaved
// CHECK-SAME: #blockc_codegen.quantized_weight<rows = 44, cols = 64, bits = 4, group_size = 32, interleave = 8>
// CHECK: #blockc_codegen.quantized_tiles<rows = 1, cols = 4, block_n = 32, panel_k = 64, panel_rows = 1, panel_min_rows = 16, prefetch_tiles = 2, interleave = 8>
func.func @quantized_interleaved(%x: tensor<1x1x64xf32>, %w: tensor<44x64xf32>) -> tensor<1x1x44xf32> attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 44, cols = 64, bits = 4, group_size = 32, interleave = 8>} {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 1, cols = 4, block_n = 32, panel_k = 64, panel_rows = 1, panel_min_rows = 16, prefetch_tiles = 2, interleave = 8>} : tensor<1x1x64xf32>, tensor<44x64xf32> -> tensor<1x1x44xf32>
  return %0 : tensor<1x1x44xf32>
}

// -----

// An int4 weight with 16 rows in vector lanes, and the tiles that ask for it.
// CHECK-LABEL: func.func @quantized_row_lanes
// CHECK-SAME: #blockc_codegen.quantized_weight<rows = 44, cols = 64, bits = 4, group_size = 32, interleave = 16, row_lanes = true>
// CHECK: #blockc_codegen.quantized_tiles<rows = 1, cols = 4, block_n = 64, panel_k = 64, panel_rows = 1, panel_min_rows = 16, prefetch_tiles = 2, interleave = 16, row_lanes = true>
func.func @quantized_row_lanes(%x: tensor<1x1x64xf32>, %w: tensor<44x64xf32>) -> tensor<1x1x44xf32> attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 44, cols = 64, bits = 4, group_size = 32, interleave = 16, row_lanes = true>} {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 1, cols = 4, block_n = 64, panel_k = 64, panel_rows = 1, panel_min_rows = 16, prefetch_tiles = 2, interleave = 16, row_lanes = true>} : tensor<1x1x64xf32>, tensor<44x64xf32> -> tensor<1x1x44xf32>
  return %0 : tensor<1x1x44xf32>
}

// -----

// An int8 weight with 8 rows in vector lanes (activations = int8 on AVX2).
// CHECK-LABEL: func.func @quantized_row_lanes_int8
// CHECK-SAME: #blockc_codegen.quantized_weight<rows = 44, cols = 64, bits = 8, group_size = 64, interleave = 8, row_lanes = true>
func.func @quantized_row_lanes_int8() attributes {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 44, cols = 64, bits = 8, group_size = 64, interleave = 8, row_lanes = true>} {
  return
}

// -----

// activations = int8 with the f32 panels from 32 rows on.
// CHECK-LABEL: func.func @quantized_act_panels
// CHECK: #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 4, interleave = 8, act_panel_min_rows = 32>
func.func @quantized_act_panels(%x: tensor<1x2x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x2x8xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32, activations = int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 4, interleave = 8, act_panel_min_rows = 32>} : tensor<1x2x64xf32>, tensor<8x64xf32> -> tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

// -----

// CHECK-LABEL: func.func @elementwise_tiles
// CHECK: blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 4, width = 16>
func.func @elementwise_tiles(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c = arith.constant 0.0 : f32
  %y = linalg.fill {blockc_codegen.elementwise_tiles = #blockc_codegen.elementwise_tiles<rows = 4, width = 16>} ins(%c : f32) outs(%x : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
