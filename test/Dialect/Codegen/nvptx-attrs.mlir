// RUN: blockc-opt %s -split-input-file | blockc-opt -split-input-file | FileCheck %s

// Round trip of the NVPTX kernel configurations under their discardable
// names, at the values blockc-gpu-select-tiles writes and at the limits the
// verifiers allow.

// CHECK-LABEL: func.func @gpu_map
// CHECK-SAME: blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>
func.func @gpu_map() attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
  return
}

// -----

// 1024 threads is the largest block.
// CHECK-LABEL: func.func @gpu_map_largest
// CHECK-SAME: #blockc_codegen.gpu_map<threads_x = 1024, threads_y = 1>
func.func @gpu_map_largest() attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_y = 1, threads_x = 1024>} {
  return
}

// -----

// CHECK-LABEL: func.func @gpu_matmul_tiles
// CHECK: linalg.matmul {blockc_codegen.gpu_matmul_tiles = #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 16, threads_x = 16, threads_y = 16>}
func.func @gpu_matmul_tiles(%a: memref<8x16xf32>, %b: memref<16x8xf32>, %c: memref<8x8xf32>) {
  linalg.matmul {blockc_codegen.gpu_matmul_tiles = #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 16, threads_x = 16, threads_y = 16>}
      ins(%a, %b : memref<8x16xf32>, memref<16x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// The largest shared tiles: (255 + 1 + 255 + 1) * 24 * 4 = 49152 bytes.
// CHECK-LABEL: func.func @gpu_matmul_tiles_largest
// CHECK-SAME: #blockc_codegen.gpu_matmul_tiles<tile_m = 255, tile_n = 255, tile_k = 24, threads_x = 5, threads_y = 3>
func.func @gpu_matmul_tiles_largest() attributes {t = #blockc_codegen.gpu_matmul_tiles<tile_m = 255, tile_n = 255, tile_k = 24, threads_x = 5, threads_y = 3>} {
  return
}

// -----

// CHECK-LABEL: func.func @gpu_attention
// CHECK: transformer.sdpa {{.*}} {blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4>, causal}
func.func @gpu_attention(%q: tensor<1x4x2x32xf32>, %k: tensor<1x4x2x32xf32>, %v: tensor<1x4x2x32xf32>) -> tensor<1x4x2x32xf32> {
  %o = transformer.sdpa %q, %k, %v {causal, blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4>}
      : tensor<1x4x2x32xf32>, tensor<1x4x2x32xf32>, tensor<1x4x2x32xf32> -> tensor<1x4x2x32xf32>
  return %o : tensor<1x4x2x32xf32>
}

// -----

// 32 warps (1024 threads) is the largest attention block.
// CHECK-LABEL: func.func @gpu_attention_largest
// CHECK-SAME: #blockc_codegen.gpu_attention<rows_per_warp = 1, warps = 32, keys_per_split = 128, max_splits = 8, split_mma_warps = 32>
func.func @gpu_attention_largest() attributes {a = #blockc_codegen.gpu_attention<rows_per_warp = 1, warps = 32, keys_per_split = 128, max_splits = 8, split_mma_warps = 32>} {
  return
}

// -----

// The NVPTX kernel kinds.
// CHECK-LABEL: func.func @kernel_kinds
// CHECK-SAME: a = #blockc_codegen.kernel<tiled_matmul>, b = #blockc_codegen.kernel<fused_attention>
func.func @kernel_kinds() attributes {a = #blockc_codegen.kernel<tiled_matmul>, b = #blockc_codegen.kernel<fused_attention>} {
  return
}

// -----

// CHECK-LABEL: func.func @emulated_kernel
// CHECK-SAME: blockc_codegen.emulated_kernel = #blockc_codegen.emulated_kernel<module = "blockc_kernels#0123", kernel = "k", static_shared = 8320, max_shared = 166912, synchronizes = true, block_x = 16, block_y = 16, block_z = 1>
func.func @emulated_kernel() attributes {blockc_codegen.emulated_kernel = #blockc_codegen.emulated_kernel<module = "blockc_kernels#0123", kernel = "k", static_shared = 8320, max_shared = 166912, synchronizes = true, block_x = 16, block_y = 16, block_z = 1>} {
  return
}

// -----

// The tensor-core tiles blockc-gpu-select-tiles writes for sm_80 and sm_90.
// CHECK-LABEL: func.func @gpu_mma_tiles
// CHECK: linalg.matmul {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>}
func.func @gpu_mma_tiles(%a: memref<8x32xbf16>, %b: memref<32x8xbf16>, %c: memref<8x8xf32>) {
  linalg.matmul {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>}
      ins(%a, %b : memref<8x32xbf16>, memref<32x8xbf16>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// The smallest tiles (one warp, one m16 x n16 x k16 step, two stages) and a
// large ring: 11 * (128 + 128) * (32 + 8) * 2 = 225280 bytes, within the
// 227 KiB of sm_90.
// CHECK-LABEL: func.func @gpu_mma_tiles_limits
// CHECK-SAME: #blockc_codegen.gpu_mma_tiles<tile_m = 16, tile_n = 16, tile_k = 16, warps_m = 1, warps_n = 1, stages = 2>
// CHECK-SAME: #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 1, warps_n = 1, stages = 11>
func.func @gpu_mma_tiles_limits() attributes {a = #blockc_codegen.gpu_mma_tiles<tile_m = 16, tile_n = 16, tile_k = 16, warps_m = 1, warps_n = 1, stages = 2>, b = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 1, warps_n = 1, stages = 11>} {
  return
}

// -----

// CHECK-LABEL: func.func @gpu_mma_attention
// CHECK-SAME: #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64>
func.func @gpu_mma_attention() attributes {blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64>} {
  return
}

// -----

// CHECK-LABEL: func.func @gpu_mma_attention_warpgroup
// CHECK-SAME: #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true>
func.func @gpu_mma_attention_warpgroup() attributes {blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true>} {
  return
}

// -----

// CHECK-LABEL: func.func @gpu_mma_attention_specialized
// CHECK-SAME: #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2>
func.func @gpu_mma_attention_specialized() attributes {blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2>} {
  return
}

// -----

// A 3-stage K/V ring (the warp-specialised kernel only).
// CHECK-LABEL: func.func @gpu_mma_attention_stages
// CHECK-SAME: #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 3>
func.func @gpu_mma_attention_stages() attributes {blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 3>} {
  return
}

// -----

// The warp-specialised consumers' intra-warpgroup overlap.
// CHECK-LABEL: func.func @gpu_mma_attention_overlap
// CHECK-SAME: #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 3, overlap = true>
func.func @gpu_mma_attention_overlap() attributes {blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 3, overlap = true>} {
  return
}

// -----

// The key tile of the warpgroup kernel's mma.sync fallback; 0 (the
// default, kv_tile) is not printed.
// CHECK-LABEL: func.func @gpu_mma_attention_fallback
// CHECK-SAME: #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 3, overlap = true, fallback_kv_tile = 32>
// CHECK-LABEL: func.func @gpu_mma_attention_fallback_default
// CHECK-SAME: #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true>}
func.func @gpu_mma_attention_fallback() attributes {blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 3, overlap = true, fallback_kv_tile = 32>} {
  return
}
func.func @gpu_mma_attention_fallback_default() attributes {blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, fallback_kv_tile = 0>} {
  return
}

// -----

// The weight-streaming kernel of small-M contractions (the heuristic's).
// CHECK-LABEL: func.func @gpu_gemv
// CHECK-SAME: #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 2, unroll = 4, max_m = 16>
func.func @gpu_gemv() attributes {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 2, unroll = 4, max_m = 16>} {
  return
}

// -----

// With the RoPE (pairs of partner columns) and the KV-cache append.
// CHECK-LABEL: func.func @gpu_gemv_rope_append
// CHECK-SAME: #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 1, unroll = 2, max_m = 16, rope_head_dim = 128, kv_append = true>
// CHECK-SAME: #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2, max_m = 16, kv_append = true>
func.func @gpu_gemv_rope_append() attributes {
    k = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 1, unroll = 2, max_m = 16, rope_head_dim = 128, kv_append = true>,
    v = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2, max_m = 16, kv_append = true>} {
  return
}

// -----

// The warpgroup-MMA tiles: the heuristic's (2 warpgroups, 4 stages) and the
// limits (one warpgroup and n8 in 2 stages; 2 warpgroups and n256 in 4
// stages: 4 * 384 * 128 + 1024 = 197632 bytes, and the 128 KiB f32 output
// tile fits in the ring).
// CHECK-LABEL: func.func @gpu_warpgroup_tiles
// CHECK-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 64, tile_n = 8, stages = 2>
// CHECK-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4>
// CHECK-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 4>
// With a producer warpgroup (the default values false are not printed),
// and persistent at the limit: 2 stages of 128 + 256 rows, the 128 x 260
// f32 output tile and 1024 bytes of alignment are 232448 bytes.
// CHECK-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 4, producer = true>
// CHECK-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 2, producer = true, persistent = true>
// CHECK-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 64, tile_n = 8, stages = 2>
func.func @gpu_warpgroup_tiles() attributes {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4>, b = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 64, tile_n = 8, stages = 2>, c = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 4>, d = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 4, producer = true>, e = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 2, producer = true, persistent = true>, f = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 64, tile_n = 8, stages = 2, producer = false, persistent = false>} {
  return
}

// With a TMA-store epilogue: the 128 x 256 f32 tile (133120 bytes) and the
// bf16 staging tile (65536) after it pass the ring's end: 198656 + 1024
// bytes of dynamic shared memory and 64 of mbarriers.
// CHECK-LABEL: func.func @gpu_warpgroup_tiles_tma_store
// CHECK-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 4, producer = true, tma_store = true>
// CHECK-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, tma_store = true>
func.func @gpu_warpgroup_tiles_tma_store() attributes {a = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 4, producer = true, tma_store = true>, b = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, tma_store = true>} {
  return
}

// -----

// mma.sync tiles with a RoPE applied on the staging tile (heads of 64
// columns).
// CHECK-LABEL: func.func @gpu_mma_tiles_rope
// CHECK-SAME: #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, rope_head_dim = 64>
func.func @gpu_mma_tiles_rope() attributes {a = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, rope_head_dim = 64>} {
  return
}

// -----

// With a RoPE applied on the staging tile (heads of 128 columns), and
// from the f32 tile of the per-element epilogue (heads of 64).
// CHECK-LABEL: func.func @gpu_warpgroup_tiles_rope
// CHECK-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 4, producer = true, tma_store = true, rope_head_dim = 128>
// CHECK-SAME: #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true, rope_head_dim = 64>
func.func @gpu_warpgroup_tiles_rope() attributes {a = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 4, producer = true, tma_store = true, rope_head_dim = 128>, b = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true, rope_head_dim = 64>} {
  return
}

// -----

// The target GPU of a module (blockc-gpu-set-target writes it).
// CHECK: module attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>}
module attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
}
