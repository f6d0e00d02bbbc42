//===- NVPTXAttrs.cpp - blockc_codegen NVPTX attribute verifiers ----------===//
//
// Verifies the NVPTX kernel configurations (GPUMatmulTilesAttr,
// GPUMmaTilesAttr, GPUWarpgroupTilesAttr, GPUMapAttr, GPUAttentionAttr) against
// what the kernels need and what every CUDA chip allows: 1024 threads and 48
// KiB of static shared memory per block (GPUChips.h).
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace blockc::codegen;

namespace {

/// The largest opt-in shared memory of a block on any known chip (the
/// table of GPUChips.cpp): what a configuration verified without a chip may
/// use.
int64_t maxOptInSharedBytes() {
  return GPUTargetAttr::maxKnownSharedPerBlock();
}

/// Every size in `sizes` is at least 1.
LogicalResult verifyPositive(function_ref<InFlightDiagnostic()> emitError,
                             ArrayRef<std::pair<StringRef, int64_t>> sizes) {
  for (auto [name, value] : sizes)
    if (value < 1)
      return emitError() << name << " must be >= 1, got " << value;
  return success();
}

/// A block of `threads` threads fits every chip.
LogicalResult verifyBlock(function_ref<InFlightDiagnostic()> emitError,
                          StringRef what, int64_t threads) {
  if (threads > kMaxThreadsPerBlock)
    return emitError() << "a block of " << what << " = " << threads
                       << " threads exceeds " << kMaxThreadsPerBlock;
  return success();
}

} // namespace

LogicalResult
GPUMatmulTilesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           int64_t tileM, int64_t tileN, int64_t tileK,
                           int64_t threadsX, int64_t threadsY) {
  if (failed(verifyPositive(emitError, {{"tile_m", tileM},
                                        {"tile_n", tileN},
                                        {"tile_k", tileK},
                                        {"threads_x", threadsX},
                                        {"threads_y", threadsY}})))
    return failure();
  // Register tiles: each thread owns tile_m / threads_y rows and
  // tile_n / threads_x columns.
  if (tileM % threadsY != 0)
    return emitError() << "threads_y (" << threadsY << ") must divide tile_m ("
                       << tileM << ")";
  if (tileN % threadsX != 0)
    return emitError() << "threads_x (" << threadsX << ") must divide tile_n ("
                       << tileN << ")";
  int64_t threads = threadsX * threadsY;
  if (failed(verifyBlock(emitError, "threads_x * threads_y", threads)))
    return failure();
  // Tile copies: every thread copies the same number of elements.
  if ((tileM * tileK) % threads != 0 || (tileN * tileK) % threads != 0)
    return emitError() << "threads_x * threads_y (" << threads
                       << ") must divide tile_m * tile_k (" << tileM * tileK
                       << ") and tile_n * tile_k (" << tileN * tileK << ")";
  int64_t shared = (tileM + 1 + tileN + 1) * tileK * 4;
  if (shared > kMaxStaticSharedBytes)
    return emitError() << "the shared tiles take " << shared
                       << " bytes, more than the " << kMaxStaticSharedBytes
                       << " bytes of static shared memory of a block";
  return success();
}

LogicalResult
GPUMmaTilesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t tileM, int64_t tileN, int64_t tileK,
                        int64_t warpsM, int64_t warpsN, int64_t stages,
                        int64_t ropeHeadDim) {
  if (failed(verifyPositive(emitError, {{"tile_m", tileM},
                                        {"tile_n", tileN},
                                        {"tile_k", tileK},
                                        {"warps_m", warpsM},
                                        {"warps_n", warpsN},
                                        {"stages", stages}})))
    return failure();
  // Warp tiles are whole m16 A fragments and pairs of n8 B fragments (one
  // ldmatrix.x4 each); the reduction steps are k16.
  if (tileM % (16 * warpsM) != 0)
    return emitError() << "16 * warps_m (" << 16 * warpsM
                       << ") must divide tile_m (" << tileM << ")";
  if (tileN % (16 * warpsN) != 0)
    return emitError() << "16 * warps_n (" << 16 * warpsN
                       << ") must divide tile_n (" << tileN << ")";
  if (tileK % 16 != 0)
    return emitError() << "tile_k (" << tileK << ") must be a multiple of 16";
  // One stage is consumed while the next is copied.
  if (stages < 2)
    return emitError() << "stages must be >= 2, got " << stages;
  int64_t threads = kWarpSize * warpsM * warpsN;
  if (failed(verifyBlock(emitError, "32 * warps_m * warps_n", threads)))
    return failure();
  // Tile copies: every thread issues the same number of 16-byte cp.async.
  if ((tileM * tileK / 8) % threads != 0 || (tileN * tileK / 8) % threads != 0)
    return emitError() << "32 * warps_m * warps_n (" << threads
                       << ") must divide the 16-byte chunks of the tiles, "
                          "tile_m * tile_k / 8 ("
                       << tileM * tileK / 8 << ") and tile_n * tile_k / 8 ("
                       << tileN * tileK / 8 << ")";
  // Dynamic shared memory: the largest opt-in of any chip (sm_90, sm_100);
  // the chip's own limit is checked at launch (the emulator checks it too).
  int64_t shared = stages * (tileM + tileN) * (tileK + 8) * 2;
  if (shared > maxOptInSharedBytes())
    return emitError() << "the " << stages << " stages of shared tiles take "
                       << shared << " bytes, more than the "
                       << maxOptInSharedBytes()
                       << " bytes of shared memory a block may have on any "
                          "chip";
  // The rotation pairs columns d and d + D / 2 of the block's staging tile,
  // which covers whole heads and lies over the ring.
  if (ropeHeadDim < 0 || ropeHeadDim % 2 != 0 ||
      (ropeHeadDim != 0 && tileN % ropeHeadDim != 0))
    return emitError() << "rope_head_dim must be 0 or an even divisor of "
                          "tile_n ("
                       << tileN << "), got " << ropeHeadDim;
  int64_t staging = tileM * (tileN + 8) * 2;
  if (ropeHeadDim != 0 && staging > maxOptInSharedBytes())
    return emitError() << "the RoPE staging tile takes " << staging
                       << " bytes, more than the " << maxOptInSharedBytes()
                       << " bytes of shared memory a block may have on any "
                          "chip";
  return success();
}

LogicalResult
GPUWarpgroupTilesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t tileM, int64_t tileN, int64_t stages,
                              bool producer, bool persistent, bool tmaStore,
                              int64_t ropeHeadDim) {
  if (failed(verifyPositive(
          emitError,
          {{"tile_m", tileM}, {"tile_n", tileN}, {"stages", stages}})))
    return failure();
  // One warpgroup per m64 accumulator, at most 4 (512 threads).
  if (tileM % 64 != 0 || tileM > 256)
    return emitError() << "tile_m must be a multiple of 64 up to 256, got "
                       << tileM;
  // wgmma's n and a TMA box dimension.
  if (tileN % 8 != 0 || tileN > 256)
    return emitError() << "tile_n must be a multiple of 8 up to 256, got "
                       << tileN;
  if (stages < 2)
    return emitError() << "stages must be >= 2, got " << stages;
  // The persistent kernel's producer fills the ring for the next tile
  // while the consumers finish this one.
  if (persistent && !producer)
    return emitError() << "a persistent kernel needs a producer warpgroup "
                          "(producer = true)";
  int64_t ring = stages * (tileM + tileN) * 128;
  if (ring + 1024 > maxOptInSharedBytes())
    return emitError() << "the " << stages << " stages take " << ring + 1024
                       << " bytes of shared memory (with 1024 of alignment), "
                          "more than the "
                       << maxOptInSharedBytes()
                       << " bytes of shared memory a block may have on any "
                          "chip";
  int64_t outputBytes =
      tileM * GPUWarpgroupTilesAttr::getOutputRowFloats(tileN) * 4;
  if (persistent && ring + outputBytes + 1024 > maxOptInSharedBytes())
    return emitError() << "the " << stages << " stages and the f32 output "
                       << "tile take " << ring + outputBytes + 1024
                       << " bytes of shared memory (with 1024 of alignment), "
                          "more than the "
                       << maxOptInSharedBytes()
                       << " bytes of shared memory a block may have on any "
                          "chip";
  if (!persistent && outputBytes > ring)
    return emitError() << "the f32 output tile (" << outputBytes
                       << " bytes, its rows padded by 16) does not fit in the "
                       << ring << " bytes of the ring";
  int64_t withStaging = GPUWarpgroupTilesAttr::getTmaStoreSharedBytes(
      tileM, tileN, stages, producer, persistent);
  if (tmaStore && withStaging > maxOptInSharedBytes())
    return emitError() << "with tma_store, the ring, the f32 output tile, the "
                          "16-bit staging tile and the mbarriers take "
                       << withStaging
                       << " bytes of shared memory (with 1024 of alignment), "
                          "more than the "
                       << maxOptInSharedBytes()
                       << " bytes of shared memory a block may have on any "
                          "chip";
  // The rotation runs on the staging tile (or the f32 tile of the
  // per-element epilogue), in which every head of a tile has its
  // rotate-half partner columns.
  if (ropeHeadDim < 0 || ropeHeadDim % 2 != 0 ||
      (ropeHeadDim != 0 && tileN % ropeHeadDim != 0))
    return emitError() << "rope_head_dim must be 0 or an even divisor of "
                          "tile_n ("
                       << tileN << "), got " << ropeHeadDim;
  return success();
}

LogicalResult GPUMapAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t threadsX, int64_t threadsY) {
  if (failed(verifyPositive(
          emitError, {{"threads_x", threadsX}, {"threads_y", threadsY}})))
    return failure();
  return verifyBlock(emitError, "threads_x * threads_y", threadsX * threadsY);
}

LogicalResult
GPUAttentionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t rowsPerWarp, int64_t warps,
                         int64_t keysPerSplit, int64_t maxSplits,
                         int64_t splitMmaWarps) {
  if (failed(verifyPositive(emitError, {{"rows_per_warp", rowsPerWarp},
                                        {"warps", warps},
                                        {"keys_per_split", keysPerSplit},
                                        {"max_splits", maxSplits}})))
    return failure();
  if (splitMmaWarps < 0)
    return emitError() << "split_mma_warps must be >= 0, got " << splitMmaWarps;
  if (failed(verifyBlock(emitError, "32 * split_mma_warps",
                         kWarpSize * splitMmaWarps)))
    return failure();
  return verifyBlock(emitError, "32 * warps", kWarpSize * warps);
}

LogicalResult
GPUMmaAttentionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            int64_t warps, int64_t kvTile, bool warpgroup,
                            int64_t consumers, int64_t stages, bool overlap,
                            int64_t fallbackKvTile) {
  if (failed(
          verifyPositive(emitError, {{"warps", warps}, {"kv_tile", kvTile}})))
    return failure();
  if (kvTile % 16 != 0)
    return emitError() << "kv_tile (" << kvTile << ") must be a multiple of 16";
  // The warpgroup kernel: one warpgroup of 64 query rows, and key tiles of
  // one 128-byte swizzle row of 16-bit elements (P's K-major rows).
  if (warpgroup && warps != 4)
    return emitError() << "warpgroup = true needs warps = 4 (one warpgroup), "
                          "got "
                       << warps;
  if (warpgroup && kvTile != 64)
    return emitError() << "warpgroup = true needs kv_tile = 64 (one "
                          "128-byte swizzle row of keys), got "
                       << kvTile;
  // Two consumers: the warp-specialised form of the warpgroup kernel.
  if (consumers != 1 && consumers != 2)
    return emitError() << "consumers must be 1 or 2, got " << consumers;
  if (consumers == 2 && !warpgroup)
    return emitError() << "consumers = 2 needs warpgroup = true";
  // The K/V ring: 2 stages, or 3 in the warp-specialised kernel.
  if (stages != 2 && stages != 3)
    return emitError() << "stages must be 2 or 3, got " << stages;
  if (stages == 3 && consumers != 2)
    return emitError() << "stages = 3 needs consumers = 2 (the "
                          "warp-specialised kernel)";
  // The intra-warpgroup overlap of the warp-specialised consumers.
  if (overlap && consumers != 2)
    return emitError() << "overlap = true needs consumers = 2 (the "
                          "warp-specialised kernel)";
  // The key tile of the mma.sync kernel that runs where TMA cannot read the
  // operands (0: kv_tile).
  if (fallbackKvTile < 0 || fallbackKvTile % 16 != 0)
    return emitError() << "fallback_kv_tile (" << fallbackKvTile
                       << ") must be 0 or a positive multiple of 16";
  if (fallbackKvTile != 0 && !warpgroup)
    return emitError() << "fallback_kv_tile needs warpgroup = true (the "
                          "mma.sync kernel alone takes kv_tile)";
  return verifyBlock(emitError, "32 * warps", kWarpSize * warps);
}

LogicalResult
GPUPagedAttentionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t warps) {
  if (failed(verifyPositive(emitError, {{"warps", warps}})))
    return failure();
  return verifyBlock(emitError, "32 * warps", kWarpSize * warps);
}

LogicalResult GPUGemvAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t warps, int64_t columns, int64_t rows,
                                  int64_t unroll, int64_t maxM,
                                  int64_t ropeHeadDim, bool kvAppend) {
  (void)kvAppend; // valid with any other parameters
  if (failed(verifyPositive(emitError, {{"warps", warps},
                                        {"columns", columns},
                                        {"rows", rows},
                                        {"unroll", unroll},
                                        {"max_m", maxM}})))
    return failure();
  if (failed(verifyBlock(emitError, "32 * warps", kWarpSize * warps)))
    return failure();
  // vector<8xf32> sums per lane (twice as many for a gate/up pair).
  if (columns * rows > 8)
    return emitError() << "columns * rows = " << columns * rows
                       << " vector sums per lane exceed 8";
  // 16-byte weight vectors in flight per lane (4 registers each).
  if (unroll * columns > 16)
    return emitError() << "unroll * columns = " << unroll * columns
                       << " weight vectors per lane exceed 16";
  if (ropeHeadDim < 0 || ropeHeadDim % 2 != 0)
    return emitError() << "rope_head_dim must be 0 or a positive even "
                          "number, got "
                       << ropeHeadDim;
  // A column and its rotate-half partner go to the same warp.
  if (ropeHeadDim != 0 && columns % 2 != 0)
    return emitError() << "rope_head_dim = " << ropeHeadDim
                       << " needs an even number of columns (pairs of a "
                          "column and its partner), got columns = "
                       << columns;
  return success();
}

LogicalResult EmulatedKernelAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef module,
    StringRef kernel, int64_t staticShared, int64_t maxShared,
    bool synchronizes, int64_t blockX, int64_t blockY, int64_t blockZ) {
  if (module.empty() || kernel.empty())
    return emitError() << "module and kernel must not be empty";
  for (auto [name, value] :
       {std::pair<StringRef, int64_t>{"static_shared", staticShared},
        {"max_shared", maxShared},
        {"block_x", blockX},
        {"block_y", blockY},
        {"block_z", blockZ}})
    if (value < 0)
      return emitError() << name << " must be >= 0, got " << value;
  return success();
}

LogicalResult GPUTargetAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef name,
    StringRef arch, int64_t sm, bool archSpecific, int64_t ptx, int64_t sms,
    int64_t clockMHz, int64_t bf16GFlops, int64_t tf32GFlops,
    int64_t fp32GFlops, int64_t memoryGBps, int64_t sharedPerSM,
    int64_t sharedPerBlock, int64_t staticSharedPerBlock,
    int64_t registersPerSM, int64_t maxRegistersPerThread,
    int64_t maxThreadsPerSM, int64_t maxBlocksPerSM) {
  if (name.empty())
    return emitError() << "name must not be empty";
  if (!arch.starts_with("sm_"))
    return emitError() << "arch must be sm_<N>, got '" << arch << "'";
  auto [archSM, archIsSpecific] = parseGPUArch(arch);
  if (archSM != sm || archIsSpecific != archSpecific)
    return emitError() << "sm = " << sm << " and arch_specific = "
                       << (archSpecific ? "true" : "false")
                       << " do not describe arch '" << arch << "'";
  if (failed(verifyPositive(
          emitError, {{"sm", sm},
                      {"ptx", ptx},
                      {"sms", sms},
                      {"clock_mhz", clockMHz},
                      {"bf16_gflops", bf16GFlops},
                      {"fp32_gflops", fp32GFlops},
                      {"memory_gbps", memoryGBps},
                      {"shared_per_sm", sharedPerSM},
                      {"shared_per_block", sharedPerBlock},
                      {"static_shared_per_block", staticSharedPerBlock},
                      {"registers_per_sm", registersPerSM},
                      {"max_registers_per_thread", maxRegistersPerThread},
                      {"max_threads_per_sm", maxThreadsPerSM},
                      {"max_blocks_per_sm", maxBlocksPerSM}})))
    return failure();
  if (tf32GFlops < 0)
    return emitError() << "tf32_gflops must be >= 0 (0: no TF32), got "
                       << tf32GFlops;
  if (sharedPerBlock > sharedPerSM)
    return emitError() << "shared_per_block (" << sharedPerBlock
                       << ") exceeds shared_per_sm (" << sharedPerSM << ")";
  if (staticSharedPerBlock > sharedPerBlock)
    return emitError() << "static_shared_per_block (" << staticSharedPerBlock
                       << ") exceeds shared_per_block (" << sharedPerBlock
                       << ")";
  return success();
}
