//===- EmulatorProfile.cpp - the GPU emulator's profile counters ----------===//
//
// The counting rules of docs/GPUEmulator.md#profile.
//
//===----------------------------------------------------------------------===//

#include "blockc/Runtime/EmulatorProfile.h"

#include <algorithm>
#include <bitset>
#include <limits>
#include <set>

using namespace blockc::emu;

namespace {
constexpr int kSectorBytes = 32;
constexpr int kBanks = 32;
constexpr int kBankBytes = 4;
constexpr int kWarpSize = 32;
} // namespace

int64_t blockc::emu::countSectors(const std::vector<LaneAccess> &request) {
  std::set<uint64_t> sectors;
  for (const LaneAccess &a : request) {
    if (a.bytes <= 0)
      continue;
    for (uint64_t s = a.address / kSectorBytes;
         s <= (a.address + a.bytes - 1) / kSectorBytes; ++s)
      sectors.insert(s);
  }
  return static_cast<int64_t>(sectors.size());
}

int64_t blockc::emu::countWavefronts(const std::vector<LaneAccess> &request) {
  int32_t widest = 0;
  for (const LaneAccess &a : request)
    widest = std::max(widest, a.bytes);
  if (widest <= 0)
    return 0;
  // Lanes per phase: 32 for accesses of up to 4 bytes, 16 for 8, 8 for 16.
  int32_t phases = std::max(1, (widest + kBankBytes - 1) / kBankBytes);
  phases = std::min(phases, kWarpSize);
  int32_t lanesPerPhase = kWarpSize / phases;
  int64_t wavefronts = 0;
  for (int32_t p = 0; p < phases; ++p) {
    std::set<uint64_t> words[kBanks];
    bool any = false;
    for (const LaneAccess &a : request) {
      if (a.lane / lanesPerPhase != p || a.bytes <= 0)
        continue;
      any = true;
      for (uint64_t w = a.address / kBankBytes;
           w <= (a.address + a.bytes - 1) / kBankBytes; ++w)
        words[w % kBanks].insert(w);
    }
    if (!any)
      continue;
    size_t most = 1;
    for (const std::set<uint64_t> &bank : words)
      most = std::max(most, bank.size());
    wavefronts += static_cast<int64_t>(most);
  }
  return wavefronts;
}

void LaunchProfiler::touch(uint64_t address, int64_t bytes) {
  for (uint64_t b = address; b < address + bytes;) {
    uint64_t sector = b / kSectorBytes;
    uint64_t end = std::min<uint64_t>(address + bytes, (sector + 1) * 32);
    uint32_t mask = 0;
    for (uint64_t i = b; i < end; ++i)
      mask |= 1u << (i % kSectorBytes);
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
