// RUN: blockc-opt %s -split-input-file --blockc-cpu-lower-linear | FileCheck %s

// linear_tiles amx: the packed kernel's blocks of 32 rows, then of 16,
// multiply each 32-column bf16-pair panel on AMX tiles; the rest of the
// rows (70 = 2 x 32 + 6) take the vdpbf16ps micro-kernel. The function
// first asks Linux for the tile state (arch_prctl); each kernel block has
// a 32 x 32 f32 stack scratch through which the accumulator tiles reach
// the output. A whole panel (kLen = panel_k = 64: two 32-k steps) is one
// straight run of tile instructions; a shorter one (K = 96: the last
// panel has 32) keeps the accumulators in the scratch between steps.
// CHECK-LABEL: func.func @amx
// CHECK-SAME: (%[[X:.*]]: tensor<1x70x96xbf16>, %[[W:.*]]: tensor<40x96xbf16>)
// CHECK: llvm.inline_asm has_side_effects "syscall", "={rax},{rax},{rdi},{rsi},~{rcx},~{r11},~{memory}" %c158_i64, %c4131_i64, %c18_i64
// CHECK: scf.forall
// CHECK: %[[S:.*]] = memref.alloca() : memref<32x32xf32>
// CHECK: tensor<32x64xbf16>
// 32-row blocks: two input tiles, two panel tiles, four products.
// CHECK: %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<1x70x96xbf16> to memref<1x70x96xbf16, strided<[?, ?, 1], offset: ?>>
// CHECK: %[[PB:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<32x64xbf16> to memref<32x64xbf16, strided<[?, 1], offset: ?>>
// CHECK: scf.if
// CHECK: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK-COUNT-2: amx.tile_load %[[XB]]
// CHECK-COUNT-2: amx.tile_load %[[PB]]
// CHECK-COUNT-4: amx.tile_mulf {{.*}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK-COUNT-2: amx.tile_load %[[XB]]
// CHECK-COUNT-2: amx.tile_load %[[PB]]
// CHECK-COUNT-4: amx.tile_mulf
// CHECK-COUNT-4: amx.tile_store %[[S]]
// CHECK: } else {
// CHECK: scf.for
// CHECK-COUNT-4: amx.tile_load %[[S]]
// CHECK-COUNT-4: amx.tile_mulf
// CHECK-COUNT-4: amx.tile_store %[[S]]
// CHECK: vector.transfer_read %[[S]]
// 16-row blocks: one input tile, two products, two accumulators.
// CHECK: scf.if
// CHECK-COUNT-2: amx.tile_store %[[S]]
// CHECK-NOT: amx.tile_store
// CHECK: } else {
// The rows left: vdpbf16ps.
// CHECK: x86vector.avx512.dot
// CHECK: linear_tiles<{{.*}}bf16_dot = true, amx = true>
func.func @amx(%x: tensor<1x70x96xbf16>, %w: tensor<40x96xbf16>) -> tensor<1x70x40xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true, amx_bf16 = true>} {
  %xf = arith.extf %x : tensor<1x70x96xbf16> to tensor<1x70x96xf32>
  %y = transformer.linear %xf, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 96, pack_rows = 8, pack_cols = 2, panel_k = 64, panel_n = 32, pack_min_rows = 32, bf16_dot = true, amx = true>} : tensor<1x70x96xf32>, tensor<40x96xbf16> -> tensor<1x70x40xf32>
  return %y : tensor<1x70x40xf32>
}

// -----

// A prepared weight (weight_layout packed_panels) with bf16 pairs: the
// weight, seen as [N, K / 2, 2], packed whole into panels of k pairs
// (blockc-cpu-prepare-weights moves the pack into the entry's prepare
// function); the kernel takes panel [n-block, k-block] as it is, a
// [panel_k / 2, 2 panel_n] operand of the same tile products, packing
// nothing per call.
// CHECK-LABEL: func.func @amx_prepared
// CHECK-SAME: (%[[X:.*]]: tensor<1x70x96xbf16>, %[[W:.*]]: tensor<40x96xbf16>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1, 2]] output_shape [40, 48, 2] : tensor<40x96xbf16> into tensor<40x48x2xbf16>
// CHECK: %[[P:.*]] = linalg.pack %[[E]] padding_value(%{{.*}} : bf16) inner_dims_pos = [1, 0, 2] inner_tiles = [32, 32, 2] into %{{.*}} {blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 40, cols = 96, panel_k = 64, panel_n = 32, pairs = true>} : tensor<40x48x2xbf16> -> tensor<2x2x1x32x32x2xbf16>
// CHECK: scf.forall
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1, 2, 3, 4, 5]] : tensor<2x2x1x32x32x2xbf16> into tensor<8192xbf16>
// CHECK: %[[PF:.*]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<8192xbf16> to memref<8192xbf16>
// CHECK-NOT: vector.transpose
// CHECK: %[[S:.*]] = tensor.extract_slice %[[P]][%{{.*}}, %{{.*}}, 0, 0, 0, 0] [1, 1, 1, 32, 32, 2] [1, 1, 1, 1, 1, 1] : tensor<2x2x1x32x32x2xbf16> to tensor<32x32x2xbf16>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[S]] {{\[\[}}0], [1, 2]] : tensor<32x32x2xbf16> into tensor<32x64xbf16>
// CHECK: bufferization.to_buffer %[[C]] read_only
// CHECK: amx.tile_mulf
// The rows left (6 = 4 + 2) on vdpbf16ps prefetch their panel 8 pair rows
// (1024 bytes) ahead, both 64-byte lines of a row (2 x 32 bf16), in the
// prepared weight as one flat buffer, clamped to its last element.
// CHECK: %[[AT:.*]] = arith.minui %{{.*}}, %c8191{{.*}} : index
// CHECK: memref.prefetch %[[PF]][%[[AT]]], read, locality<3>, data : memref<8192xbf16>
// CHECK: memref.prefetch %[[PF]]
// CHECK: x86vector.avx512.dot
// CHECK-NOT: vector.transpose
// CHECK: linear_tiles<{{.*}}bf16_dot = true, amx = true>
func.func @amx_prepared(%x: tensor<1x70x96xbf16>, %w: tensor<40x96xbf16>) -> tensor<1x70x40xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true, amx_bf16 = true>} {
  %xf = arith.extf %x : tensor<1x70x96xbf16> to tensor<1x70x96xf32>
  %y = transformer.linear %xf, %w {blockc_codegen.weight_layout = #blockc_codegen.weight_layout<packed_panels>, blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 96, pack_rows = 8, pack_cols = 2, panel_k = 64, panel_n = 32, pack_min_rows = 32, bf16_dot = true, amx = true>} : tensor<1x70x96xf32>, tensor<40x96xbf16> -> tensor<1x70x40xf32>
  return %y : tensor<1x70x40xf32>
}
