//===- EmulatorProfile.cpp - the GPU emulator's profile counters ----------===//
//
// The counting rules of docs/GPUEmulator.md#profile.
//
//===----------------------------------------------------------------------===//

#include "blockc/Runtime/EmulatorProfile.h"

#include <algorithm>
#include <bitset>
#include <limits>

using namespace blockc::emu;

namespace {
constexpr int kSectorBytes = 32;
constexpr int kBanks = 32;
constexpr int kBankBytes = 4;
constexpr int kWarpSize = 32;
} // namespace

int64_t blockc::emu::countSectors(const std::vector<LaneAccess> &request) {
  // At most 32 lanes of at most a few sectors each: a sorted vector.
  std::vector<uint64_t> sectors;
  for (const LaneAccess &a : request) {
    if (a.bytes <= 0)
      continue;
    for (uint64_t s = a.address / kSectorBytes;
         s <= (a.address + a.bytes - 1) / kSectorBytes; ++s)
      sectors.push_back(s);
  }
  std::sort(sectors.begin(), sectors.end());
  return std::unique(sectors.begin(), sectors.end()) - sectors.begin();
}

int64_t blockc::emu::countWavefronts(const std::vector<LaneAccess> &request) {
  int32_t widest = 0;
  for (const LaneAccess &a : request)
    widest = std::max(widest, a.bytes);
  if (widest <= 0)
    return 0;
  // Lanes per phase: 32 for accesses of up to 4 bytes, 16 for 8, 8 for 16;
  // other sizes take the next power of two of their words.
  int32_t words = (widest + kBankBytes - 1) / kBankBytes;
  int32_t phases = 1;
  while (phases < words && phases < kWarpSize)
    phases *= 2;
  int32_t lanesPerPhase = kWarpSize / phases;
  int64_t wavefronts = 0;
  std::vector<std::pair<uint32_t, uint64_t>> bankWords;
  for (int32_t p = 0; p < phases; ++p) {
    bankWords.clear();
    for (const LaneAccess &a : request) {
      if (a.lane / lanesPerPhase != p || a.bytes <= 0)
        continue;
      for (uint64_t w = a.address / kBankBytes;
           w <= (a.address + a.bytes - 1) / kBankBytes; ++w)
        bankWords.emplace_back(static_cast<uint32_t>(w % kBanks), w);
    }
    if (bankWords.empty())
      continue;
    // Distinct words per bank; the most in one bank is the phase's cost.
    std::sort(bankWords.begin(), bankWords.end());
    bankWords.erase(std::unique(bankWords.begin(), bankWords.end()),
                    bankWords.end());
    int64_t most = 0, run = 0;
    for (size_t i = 0; i < bankWords.size(); ++i) {
      run = i > 0 && bankWords[i].first == bankWords[i - 1].first ? run + 1 : 1;
      most = std::max(most, run);
    }
    wavefronts += most;
  }
  return wavefronts;
}

void LaunchProfiler::touch(uint64_t address, int64_t bytes) {
  for (uint64_t b = address; b < address + bytes;) {
    uint64_t sector = b / kSectorBytes;
    uint64_t end =
        std::min<uint64_t>(address + bytes, (sector + 1) * kSectorBytes);
    // Bits [b % 32, end - sector * 32) of the sector's byte mask.
    uint32_t first = static_cast<uint32_t>(b - sector * kSectorBytes);
    uint32_t count = static_cast<uint32_t>(end - b);
    uint32_t mask = count >= 32 ? ~0u : ((1u << count) - 1) << first;
    touched[sector] |= mask;
    b = end;
  }
}

void LaunchProfiler::access(int32_t warp, int32_t lane, uint64_t site,
                            uint32_t occurrence, uint64_t address,
                            int32_t bytes, bool shared) {
  Request &r = requests[Key{site, static_cast<uint32_t>(warp), occurrence}];
  r.shared = shared;
  r.lanes.push_back({lane, address, bytes});
  if (!shared) {
    counters.globalBytes += bytes;
    touch(address, bytes);
  }
}

void LaunchProfiler::bulkGlobal(uint64_t address, int64_t bytes) {
  counters.globalBytes += static_cast<double>(bytes);
  touch(address, bytes);
}

void LaunchProfiler::endBlock() {
  for (auto &[key, request] : requests) {
    if (request.shared) {
      counters.sharedRequests += 1;
      counters.sharedWavefronts += countWavefronts(request.lanes);
    } else {
      counters.globalRequests += 1;
      counters.globalSectors += countSectors(request.lanes);
    }
  }
  requests.clear();
}

LaunchCounters LaunchProfiler::finish(
    double scale,
    const std::vector<std::pair<uint64_t, uint64_t>> &allocations) {
  endBlock();
  // Distinct bytes per allocation (index allocations.size(): none).
  std::vector<double> bytes(allocations.size() + 1, 0.0);
  for (const auto &[sector, mask] : touched) {
    uint64_t address = sector * kSectorBytes;
    auto it = std::upper_bound(
        allocations.begin(), allocations.end(),
        std::make_pair(address, std::numeric_limits<uint64_t>::max()));
    size_t index = allocations.size();
    if (it != allocations.begin() && address < std::prev(it)->second)
      index = static_cast<size_t>(std::prev(it) - allocations.begin());
    bytes[index] += std::bitset<32>(mask).count();
  }
  touched.clear();
  double unique = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (scale == 1.0 || i == allocations.size()) {
      unique += bytes[i] * scale;
      continue;
    }
    double size =
        static_cast<double>(allocations[i].second - allocations[i].first);
    unique += std::min(size, bytes[i] * scale);
  }
  LaunchCounters c = counters;
  for (double *v : {&c.flops, &c.tensorFlops16, &c.tensorFlopsTF32,
                    &c.globalRequests, &c.globalSectors, &c.globalBytes,
                    &c.sharedRequests, &c.sharedWavefronts, &c.barriers})
    *v *= scale;
  c.uniqueBytes = unique;
  counters = LaunchCounters();
  return c;
}
