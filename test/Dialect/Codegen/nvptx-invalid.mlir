// RUN: blockc-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the NVPTX attributes (NVPTXAttrs.cpp)
// and the dialect's check of their discardable names.

//===----------------------------------------------------------------------===//
// gpu_matmul_tiles
//===----------------------------------------------------------------------===//

// expected-error @+1 {{tile_k must be >= 1, got 0}}
func.func @matmul_tile_zero() attributes {t = #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 0, threads_x = 16, threads_y = 16>} {
  return
}

// -----

// expected-error @+1 {{threads_y must be >= 1, got -2}}
func.func @matmul_threads_negative() attributes {t = #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 16, threads_x = 16, threads_y = -2>} {
  return
}

// -----

// expected-error @+1 {{threads_y (12) must divide tile_m (64)}}
func.func @matmul_rows_not_divisible() attributes {t = #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 16, threads_x = 16, threads_y = 12>} {
  return
}

// -----

// expected-error @+1 {{threads_x (24) must divide tile_n (64)}}
func.func @matmul_cols_not_divisible() attributes {t = #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 16, threads_x = 24, threads_y = 16>} {
  return
}

// -----

// expected-error @+1 {{a block of threads_x * threads_y = 2048 threads exceeds 1024}}
func.func @matmul_block_too_large() attributes {t = #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 16, threads_x = 64, threads_y = 32>} {
  return
}

// -----

// 64 threads cannot share the copy of a 8 x 4 tile evenly.
// expected-error @+1 {{threads_x * threads_y (64) must divide tile_m * tile_k (32) and tile_n * tile_k (256)}}
func.func @matmul_copy_not_divisible() attributes {t = #blockc_codegen.gpu_matmul_tiles<tile_m = 8, tile_n = 64, tile_k = 4, threads_x = 8, threads_y = 8>} {
  return
}

// -----

// (256 + 1 + 256 + 1) * 32 * 4 bytes: more than a block's static shared memory.
// expected-error @+1 {{the shared tiles take 65792 bytes, more than the 49152 bytes of static shared memory of a block}}
func.func @matmul_shared_too_large() attributes {t = #blockc_codegen.gpu_matmul_tiles<tile_m = 256, tile_n = 256, tile_k = 32, threads_x = 16, threads_y = 16>} {
  return
}


//===----------------------------------------------------------------------===//
// gpu_map
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{threads_x must be >= 1, got 0}}
func.func @map_zero() attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 0, threads_y = 8>} {
  return
}

// -----

// expected-error @+1 {{a block of threads_x * threads_y = 2048 threads exceeds 1024}}
func.func @map_block_too_large() attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_map<threads_x = 64, threads_y = 32>} {
  return
}

//===----------------------------------------------------------------------===//
// gpu_attention
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{rows_per_warp must be >= 1, got 0}}
func.func @attention_no_rows() attributes {a = #blockc_codegen.gpu_attention<rows_per_warp = 0, warps = 4>} {
  return
}

// -----

// expected-error @+1 {{a block of 32 * warps = 1056 threads exceeds 1024}}
func.func @attention_too_many_warps() attributes {a = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 33>} {
  return
}

// -----

// expected-error @+1 {{keys_per_split must be >= 1, got 0}}
func.func @attention_no_keys() attributes {a = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4, keys_per_split = 0>} {
  return
}

// -----

// expected-error @+1 {{max_splits must be >= 1, got 0}}
func.func @attention_no_splits() attributes {a = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4, max_splits = 0>} {
  return
}

// -----

// expected-error @+1 {{split_mma_warps must be >= 0, got -1}}
func.func @attention_negative_split_mma_warps() attributes {a = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4, split_mma_warps = -1>} {
  return
}

// -----

// expected-error @+1 {{a block of 32 * split_mma_warps = 1056 threads exceeds 1024}}
func.func @attention_too_many_split_mma_warps() attributes {a = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4, split_mma_warps = 33>} {
  return
}

//===----------------------------------------------------------------------===//
// gpu_mma_tiles
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{stages must be >= 1, got 0}}
func.func @mma_no_stages() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 0>} {
  return
}

// -----

// expected-error @+1 {{stages must be >= 2, got 1}}
func.func @mma_one_stage() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 1>} {
  return
}

// -----

// expected-error @+1 {{16 * warps_m (32) must divide tile_m (48)}}
func.func @mma_rows() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 48, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2>} {
  return
}

// -----

// expected-error @+1 {{16 * warps_n (32) must divide tile_n (40)}}
func.func @mma_cols() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 40, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2>} {
  return
}

// -----

// expected-error @+1 {{tile_k (24) must be a multiple of 16}}
func.func @mma_k() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 24, warps_m = 2, warps_n = 2, stages = 2>} {
  return
}

// -----

// expected-error @+1 {{a block of 32 * warps_m * warps_n = 2048 threads exceeds 1024}}
func.func @mma_block() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 8, warps_n = 8, stages = 2>} {
  return
}

// -----

// expected-error @+1 {{32 * warps_m * warps_n (512) must divide the 16-byte chunks of the tiles, tile_m * tile_k / 8 (256) and tile_n * tile_k / 8 (256)}}
func.func @mma_chunks() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 4, warps_n = 4, stages = 2>} {
  return
}

// -----

// expected-error @+1 {{the 12 stages of shared tiles take 245760 bytes, more than the 232448 bytes of shared memory a block may have on any chip}}
func.func @mma_shared() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 12>} {
  return
}

// -----

// expected-error @+1 {{rope_head_dim must be 0 or an even divisor of tile_n (128), got 96}}
func.func @mma_rope_partial_heads() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, rope_head_dim = 96>} {
  return
}

// -----

// expected-error @+1 {{rope_head_dim must be 0 or an even divisor of tile_n (128), got 63}}
func.func @mma_rope_odd() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, rope_head_dim = 63>} {
  return
}

// -----

// The staging tile (512 x 264 bf16) fits nowhere, although the ring does.
// expected-error @+1 {{the RoPE staging tile takes 270336 bytes, more than the 232448 bytes of shared memory a block may have on any chip}}
func.func @mma_rope_staging() attributes {t = #blockc_codegen.gpu_mma_tiles<tile_m = 512, tile_n = 256, tile_k = 16, warps_m = 2, warps_n = 2, stages = 2, rope_head_dim = 128>} {
  return
}

// -----

func.func @mma_tiles_kind(%a: memref<8x16xbf16>, %b: memref<16x8xbf16>, %c: memref<8x8xf32>) {
  // expected-error @+1 {{'blockc_codegen.gpu_mma_tiles' must be a #blockc_codegen.gpu_mma_tiles attribute}}
  linalg.matmul {blockc_codegen.gpu_mma_tiles = #blockc_codegen.gpu_matmul_tiles<tile_m = 64, tile_n = 64, tile_k = 16, threads_x = 16, threads_y = 16>}
      ins(%a, %b : memref<8x16xbf16>, memref<16x8xbf16>) outs(%c : memref<8x8xf32>)
  return
}

//===----------------------------------------------------------------------===//
// gpu_mma_attention
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{kv_tile (40) must be a multiple of 16}}
func.func @mma_attention_tile() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 40>} {
  return
}

// -----

// expected-error @+1 {{warps must be >= 1, got 0}}
func.func @mma_attention_warps() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 0, kv_tile = 64>} {
  return
}

// -----

// expected-error @+1 {{a block of 32 * warps = 1056 threads exceeds 1024}}
func.func @mma_attention_block() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 33, kv_tile = 64>} {
  return
}

// -----

// expected-error @+1 {{warpgroup = true needs warps = 4 (one warpgroup), got 8}}
func.func @mma_attention_warpgroup_warps() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 8, kv_tile = 64, warpgroup = true>} {
  return
}

// -----

// expected-error @+1 {{warpgroup = true needs kv_tile = 64 (one 128-byte swizzle row of keys), got 128}}
func.func @mma_attention_warpgroup_tile() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 128, warpgroup = true>} {
  return
}

// -----

// expected-error @+1 {{consumers must be 1 or 2, got 3}}
func.func @mma_attention_consumers() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 3>} {
  return
}

// -----

// expected-error @+1 {{consumers = 2 needs warpgroup = true}}
func.func @mma_attention_consumers_warpgroup() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, consumers = 2>} {
  return
}

// -----

// expected-error @+1 {{stages must be 2 or 3, got 4}}
func.func @mma_attention_stages() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, consumers = 2, stages = 4>} {
  return
}

// -----

// expected-error @+1 {{stages = 3 needs consumers = 2 (the warp-specialised kernel)}}
func.func @mma_attention_stages_consumers() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, stages = 3>} {
  return
}

// -----

// expected-error @+1 {{overlap = true needs consumers = 2 (the warp-specialised kernel)}}
func.func @mma_attention_overlap_consumers() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, overlap = true>} {
  return
}

// -----

// expected-error @+1 {{fallback_kv_tile (40) must be 0 or a positive multiple of 16}}
func.func @mma_attention_fallback_tile() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, fallback_kv_tile = 40>} {
  return
}

// -----

// expected-error @+1 {{fallback_kv_tile (-16) must be 0 or a positive multiple of 16}}
func.func @mma_attention_fallback_negative() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, warpgroup = true, fallback_kv_tile = -16>} {
  return
}

// -----

// expected-error @+1 {{fallback_kv_tile needs warpgroup = true (the mma.sync kernel alone takes kv_tile)}}
func.func @mma_attention_fallback_warpgroup() attributes {t = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64, fallback_kv_tile = 32>} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.gpu_mma_attention' must be a #blockc_codegen.gpu_mma_attention attribute}}
func.func @mma_attention_kind() attributes {blockc_codegen.gpu_mma_attention = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 4>} {
  return
}

//===----------------------------------------------------------------------===//
// gpu_paged_attention
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{warps must be >= 1, got 0}}
func.func @paged_attention_warps() attributes {t = #blockc_codegen.gpu_paged_attention<warps = 0>} {
  return
}

// -----

// expected-error @+1 {{a block of 32 * warps = 1056 threads exceeds 1024}}
func.func @paged_attention_block() attributes {t = #blockc_codegen.gpu_paged_attention<warps = 33>} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.gpu_paged_attention' must be a #blockc_codegen.gpu_paged_attention attribute}}
func.func @paged_attention_kind() attributes {blockc_codegen.gpu_paged_attention = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 4>} {
  return
}

//===----------------------------------------------------------------------===//
// Discardable attribute names
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'blockc_codegen.gpu_map' must be a #blockc_codegen.gpu_map attribute}}
func.func @map_kind() attributes {blockc_codegen.gpu_map = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4>} {
  return
}

// -----

func.func @matmul_tiles_kind(%a: memref<8x16xf32>, %b: memref<16x8xf32>, %c: memref<8x8xf32>) {
  // expected-error @+1 {{'blockc_codegen.gpu_matmul_tiles' must be a #blockc_codegen.gpu_matmul_tiles attribute}}
  linalg.matmul {blockc_codegen.gpu_matmul_tiles = {tile_m = 64 : i64}}
      ins(%a, %b : memref<8x16xf32>, memref<16x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

func.func @attention_kind(%q: tensor<1x4x2x32xf32>, %k: tensor<1x4x2x32xf32>, %v: tensor<1x4x2x32xf32>) -> tensor<1x4x2x32xf32> {
  // expected-error @+1 {{'blockc_codegen.gpu_attention' must be a #blockc_codegen.gpu_attention attribute}}
  %o = transformer.sdpa %q, %k, %v {causal, blockc_codegen.gpu_attention = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 4>}
      : tensor<1x4x2x32xf32>, tensor<1x4x2x32xf32>, tensor<1x4x2x32xf32> -> tensor<1x4x2x32xf32>
  return %o : tensor<1x4x2x32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// emulated_kernel
//===----------------------------------------------------------------------===//

// expected-error @+1 {{module and kernel must not be empty}}
func.func @emulated_no_kernel() attributes {t = #blockc_codegen.emulated_kernel<module = "m", kernel = "", static_shared = 0, max_shared = 0, synchronizes = false, block_x = 0, block_y = 0, block_z = 0>} {
  return
}

// -----

// expected-error @+1 {{static_shared must be >= 0, got -4}}
func.func @emulated_negative_shared() attributes {t = #blockc_codegen.emulated_kernel<module = "m", kernel = "k", static_shared = -4, max_shared = 0, synchronizes = false, block_x = 0, block_y = 0, block_z = 0>} {
  return
}

// -----

// expected-error @+1 {{block_z must be >= 0, got -1}}
func.func @emulated_negative_block() attributes {t = #blockc_codegen.emulated_kernel<module = "m", kernel = "k", static_shared = 0, max_shared = 0, synchronizes = true, block_x = 32, block_y = 1, block_z = -1>} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.emulated_kernel' must be a #blockc_codegen.emulated_kernel attribute}}
func.func @emulated_wrong_kind() attributes {blockc_codegen.emulated_kernel = 1 : i64} {
  return
}

//===----------------------------------------------------------------------===//
// gpu_warpgroup_tiles
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{stages must be >= 1, got 0}}
func.func @warpgroup_no_stages() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 0>} {
  return
}

// -----

// expected-error @+1 {{tile_m must be a multiple of 64 up to 256, got 96}}
func.func @warpgroup_rows() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 96, tile_n = 128, stages = 4>} {
  return
}

// -----

// expected-error @+1 {{tile_m must be a multiple of 64 up to 256, got 320}}
func.func @warpgroup_too_many_rows() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 320, tile_n = 128, stages = 2>} {
  return
}

// -----

// expected-error @+1 {{tile_n must be a multiple of 8 up to 256, got 260}}
func.func @warpgroup_columns() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 260, stages = 2>} {
  return
}

// -----

// expected-error @+1 {{stages must be >= 2, got 1}}
func.func @warpgroup_one_stage() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 1>} {
  return
}

// -----

// expected-error @+1 {{the 4 stages take 263168 bytes of shared memory (with 1024 of alignment), more than the 232448 bytes of shared memory a block may have on any chip}}
func.func @warpgroup_ring_too_large() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 256, tile_n = 256, stages = 4>} {
  return
}

// -----

// expected-error @+1 {{a persistent kernel needs a producer warpgroup (producer = true)}}
func.func @warpgroup_persistent_without_producer() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, persistent = true>} {
  return
}

// -----

// The persistent kernel's output tile lies beside the ring: 3 stages of
// 128 + 256 rows (147456 bytes) and 128 x 260 floats (133120) do not fit.
// expected-error @+1 {{the 3 stages and the f32 output tile take 281600 bytes of shared memory (with 1024 of alignment), more than the 232448 bytes of shared memory a block may have on any chip}}
func.func @warpgroup_persistent_too_large() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 3, producer = true, persistent = true>} {
  return
}

// -----

// expected-error @+1 {{the f32 output tile (133120 bytes, its rows padded by 16) does not fit in the 98304 bytes of the ring}}
func.func @warpgroup_output_tile() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 256, stages = 2>} {
  return
}

// -----

// A TMA-store epilogue beside the persistent ring: 131072 bytes of ring,
// 67584 of f32 tile, 32768 of staging tile, 1024 of alignment and 64 of
// mbarriers.
// expected-error @+1 {{with tma_store, the ring, the f32 output tile, the 16-bit staging tile and the mbarriers take 232512 bytes of shared memory (with 1024 of alignment), more than the 232448 bytes of shared memory a block may have on any chip}}
func.func @warpgroup_tma_store_persistent() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true, persistent = true, tma_store = true>} {
  return
}

// -----

// In the ring: the f32 tile (156672 bytes) and the staging tile (76800)
// after it pass the 200704 bytes of the ring and the 227 KiB.
// expected-error @+1 {{with tma_store, the ring, the f32 output tile, the 16-bit staging tile and the mbarriers take 234560 bytes of shared memory (with 1024 of alignment), more than the 232448 bytes of shared memory a block may have on any chip}}
func.func @warpgroup_tma_store_staging() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 192, tile_n = 200, stages = 4, producer = true, tma_store = true>} {
  return
}

// -----

// The RoPE is applied on the staging tile of the TMA store (or from the
// f32 tile of the per-element epilogue). Each tile holds whole heads (and
// a head's two halves).
// expected-error @+1 {{rope_head_dim must be 0 or an even divisor of tile_n (128), got 96}}
func.func @warpgroup_rope_partial_heads() attributes {t = #blockc_codegen.gpu_warpgroup_tiles<tile_m = 128, tile_n = 128, stages = 4, producer = true, tma_store = true, rope_head_dim = 96>} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.gpu_warpgroup_tiles' must be a #blockc_codegen.gpu_warpgroup_tiles attribute}}
func.func @warpgroup_wrong_kind() attributes {blockc_codegen.gpu_warpgroup_tiles = #blockc_codegen.gpu_mma_attention<warps = 4, kv_tile = 64>} {
  return
}

// -----

//===----------------------------------------------------------------------===//
// gpu_target
//===----------------------------------------------------------------------===//

// expected-error @+1 {{name must not be empty}}
func.func @gpu_target_no_name() attributes {t = #blockc_codegen.gpu_target<name = "", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
  return
}

// -----

// expected-error @+1 {{sm = 80 and arch_specific = true do not describe arch 'sm_90a'}}
func.func @gpu_target_sm_mismatch() attributes {t = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 80, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
  return
}

// -----

// expected-error @+1 {{arch must be sm_<N>, got 'gfx90a'}}
func.func @gpu_target_arch() attributes {t = #blockc_codegen.gpu_target<name = "h100", arch = "gfx90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
  return
}

// -----

// expected-error @+1 {{sms must be >= 1, got 0}}
func.func @gpu_target_sms() attributes {t = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 0, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
  return
}

// -----

// expected-error @+1 {{memory_gbps must be >= 1, got -5}}
func.func @gpu_target_bandwidth() attributes {t = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = -5, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
  return
}

// -----

// expected-error @+1 {{tf32_gflops must be >= 0 (0: no TF32), got -1}}
func.func @gpu_target_tf32() attributes {t = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = -1, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
  return
}

// -----

// expected-error @+1 {{shared_per_block (300000) exceeds shared_per_sm (233472)}}
func.func @gpu_target_block_shared() attributes {t = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 300000, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
  return
}

// -----

// expected-error @+1 {{static_shared_per_block (240000) exceeds shared_per_block (232448)}}
func.func @gpu_target_static_shared() attributes {t = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 240000, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.gpu_target' belongs on a builtin.module}}
func.func @gpu_target_on_func() attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.gpu_target' must be a #blockc_codegen.gpu_target attribute}}
module attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 8>} {
}

// -----

//===----------------------------------------------------------------------===//
// gpu_gemv
//===----------------------------------------------------------------------===//

// expected-error @+1 {{max_m must be >= 1, got 0}}
func.func @gemv_max_m() attributes {t = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 2, unroll = 4, max_m = 0>} {
  return
}

// -----

// expected-error @+1 {{unroll must be >= 1, got -1}}
func.func @gemv_unroll_negative() attributes {t = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 2, unroll = -1, max_m = 16>} {
  return
}

// -----

// expected-error @+1 {{a block of 32 * warps = 1056 threads exceeds 1024}}
func.func @gemv_block() attributes {t = #blockc_codegen.gpu_gemv<warps = 33, columns = 1, rows = 2, unroll = 4, max_m = 16>} {
  return
}

// -----

// expected-error @+1 {{columns * rows = 9 vector sums per lane exceed 8}}
func.func @gemv_sums() attributes {t = #blockc_codegen.gpu_gemv<warps = 4, columns = 3, rows = 3, unroll = 4, max_m = 16>} {
  return
}

// -----

// expected-error @+1 {{unroll * columns = 18 weight vectors per lane exceed 16}}
func.func @gemv_loads() attributes {t = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 2, unroll = 9, max_m = 16>} {
  return
}

// -----

// expected-error @+1 {{rope_head_dim must be 0 or a positive even number, got 63}}
func.func @gemv_rope_odd() attributes {t = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 1, unroll = 2, max_m = 16, rope_head_dim = 63>} {
  return
}

// -----

// expected-error @+1 {{rope_head_dim must be 0 or a positive even number, got -128}}
func.func @gemv_rope_negative() attributes {t = #blockc_codegen.gpu_gemv<warps = 4, columns = 2, rows = 1, unroll = 2, max_m = 16, rope_head_dim = -128>} {
  return
}

// -----

// expected-error @+1 {{rope_head_dim = 128 needs an even number of columns (pairs of a column and its partner), got columns = 1}}
func.func @gemv_rope_columns() attributes {t = #blockc_codegen.gpu_gemv<warps = 4, columns = 1, rows = 1, unroll = 2, max_m = 16, rope_head_dim = 128, kv_append = true>} {
  return
}

// -----

// expected-error @+1 {{'blockc_codegen.gpu_gemv' must be a #blockc_codegen.gpu_gemv attribute}}
func.func @gemv_kind() attributes {blockc_codegen.gpu_gemv = #blockc_codegen.gpu_map<threads_x = 32, threads_y = 4>} {
  return
}
