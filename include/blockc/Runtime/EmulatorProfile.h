//===- EmulatorProfile.h - the GPU emulator's profile counters --*- C++ -*-===//
//
// What the emulator counts for `blockc-run --emulate --profile`
// (docs/GPUEmulator.md#profile): the hardware's counting rules as pure
// functions, and the per-launch collector the runtime feeds. Internal to
// libblockc_emulator_runtime and its unit tests; the C ABI is in
// EmulatorRuntime.h.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_RUNTIME_EMULATORPROFILE_H
#define BLOCKC_RUNTIME_EMULATORPROFILE_H

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace blockc::emu {

/// One lane's part of a warp-level memory instruction.
struct LaneAccess {
  int32_t lane;
  uint64_t address;
  int32_t bytes;
};

/// The distinct 32-byte sectors that a warp's global-memory request touches
/// (a coalesced f32 access of 32 lanes: 4; a stride-32 f32 pattern: 32).
int64_t countSectors(const std::vector<LaneAccess> &request);

/// The shared-memory wavefronts a warp's request needs: 32 banks of 4
/// bytes; per phase, the largest number of distinct 4-byte words addressed
/// in one bank (one word read by several lanes is a broadcast). Accesses of
/// 8 bytes are served in 2 phases of 16 lanes, of 16 bytes in 4 phases of 8
/// lanes (N bytes: N / 4 phases), each counted on its own.
int64_t countWavefronts(const std::vector<LaneAccess> &request);

/// The counters of one launch (scaled to the whole grid when only a sample
/// of its blocks ran).
struct LaunchCounters {
  double flops = 0, tensorFlops16 = 0, tensorFlopsTF32 = 0;
  double globalRequests = 0, globalSectors = 0, globalBytes = 0;
  double uniqueBytes = 0;
  double sharedRequests = 0, sharedWavefronts = 0;
  double barriers = 0;
};

/// Collects one launch: memory accesses grouped into warp instructions by
/// (warp, site, the lane's how-many-th execution of the site in its block),
/// which is exact for warps whose lanes run the same path, and the distinct
/// bytes of global memory touched by the launch.
class LaunchProfiler {
public:
  /// A memory access of `lane` in `warp` at `site` (an instrumented op's id
  /// or a runtime function's site string), its `occurrence` in the thread.
  void access(int32_t warp, int32_t lane, uint64_t site, uint32_t occurrence,
              uint64_t address, int32_t bytes, bool shared);
  /// Global bytes moved outside warp instructions (TMA boxes): counted as
  /// bytes and unique bytes, not as requests.
  void bulkGlobal(uint64_t address, int64_t bytes);
  void flops(double n) { counters.flops += n; }
  /// Tensor-core FLOPs count in `flops` too.
  void tensorFlops(double n, bool tf32) {
    (tf32 ? counters.tensorFlopsTF32 : counters.tensorFlops16) += n;
    counters.flops += n;
  }
  void barrier() { counters.barriers += 1; }
  /// Folds the block's warp instructions into the counters.
  void endBlock();
  /// The launch's counters, `scale` times what the blocks that ran counted.
  /// The distinct bytes are exact when every block ran (`scale` 1); for a
  /// sample, the bytes touched in each of `allocations` ([begin, end),
  /// sorted) are scaled and capped at the allocation's size (the blocks of
  /// a launch share their operands: a GEMM's blocks all read the same
  /// weight), and the rest is scaled.
  LaunchCounters
  finish(double scale,
         const std::vector<std::pair<uint64_t, uint64_t>> &allocations = {});

private:
  struct Key {
    uint64_t site;
    uint32_t warp, occurrence;
    bool operator==(const Key &o) const {
      return site == o.site && warp == o.warp && occurrence == o.occurrence;
    }
  };
  struct KeyHash {
    std::size_t operator()(const Key &k) const {
      uint64_t h = k.site * 0x9E3779B97F4A7C15ull;
      h ^= (static_cast<uint64_t>(k.warp) << 32 | k.occurrence) +
           0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2);
      return static_cast<std::size_t>(h);
    }
  };
  struct Request {
    bool shared = false;
    std::vector<LaneAccess> lanes;
  };
  void touch(uint64_t address, int64_t bytes);

  std::unordered_map<Key, Request, KeyHash> requests;
  /// 32-byte sectors of global memory touched, with a bit per byte.
  std::unordered_map<uint64_t, uint32_t> touched;
  LaunchCounters counters;
};

} // namespace blockc::emu

#endif // BLOCKC_RUNTIME_EMULATORPROFILE_H
