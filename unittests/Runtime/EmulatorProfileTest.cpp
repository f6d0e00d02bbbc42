//===- EmulatorProfileTest.cpp - the emulator's counting rules -----------===//

#include "blockc/Runtime/EmulatorProfile.h"

#include <gtest/gtest.h>

using namespace blockc::emu;

namespace {

/// A warp request of 32 lanes: lane i at base + stride * i, `bytes` each.
std::vector<LaneAccess> request(uint64_t base, uint64_t stride, int32_t bytes) {
  std::vector<LaneAccess> r;
  for (int32_t lane = 0; lane < 32; ++lane)
    r.push_back({lane, base + stride * lane, bytes});
  return r;
}

TEST(EmulatorProfile, Sectors) {
  // Coalesced f32: 128 bytes, 4 sectors; misaligned by 4 bytes: 5.
  EXPECT_EQ(countSectors(request(4096, 4, 4)), 4);
  EXPECT_EQ(countSectors(request(4100, 4, 4)), 5);
  // 16-byte vectors: 512 bytes, 16 sectors.
  EXPECT_EQ(countSectors(request(4096, 16, 16)), 16);
  // Stride 32 f32: a sector per lane.
  EXPECT_EQ(countSectors(request(4096, 128, 4)), 32);
  // Every lane the same word: one sector.
  EXPECT_EQ(countSectors(request(4096, 0, 4)), 1);
}

TEST(EmulatorProfile, Wavefronts) {
  // Consecutive words: conflict-free.
  EXPECT_EQ(countWavefronts(request(0, 4, 4)), 1);
  // A column of a 32 x 32 f32 tile: 32-way conflict; padded to 33: none.
  EXPECT_EQ(countWavefronts(request(0, 128, 4)), 32);
  EXPECT_EQ(countWavefronts(request(0, 132, 4)), 1);
  // Stride 2 words: 2-way.
  EXPECT_EQ(countWavefronts(request(0, 8, 4)), 2);
  // One word read by all lanes: a broadcast.
  EXPECT_EQ(countWavefronts(request(64, 0, 4)), 1);
  // 16-byte accesses of consecutive lanes: 4 phases of 8 lanes, each
  // conflict-free.
  EXPECT_EQ(countWavefronts(request(0, 16, 16)), 4);
  // 8-byte accesses: 2 phases of 16 lanes.
  EXPECT_EQ(countWavefronts(request(0, 8, 8)), 2);
  // ldmatrix-like rows of 16 bytes 32 bytes apart: rows r and r + 4 share
  // banks, 2 wavefronts per phase.
  EXPECT_EQ(countWavefronts(request(0, 32, 16)), 8);
  // 12-byte accesses take 4 phases of 8 lanes (the next power of two of 3
  // words): the last lanes count too.
  EXPECT_EQ(countWavefronts({{30, 0, 12}, {31, 12, 12}}), 1);
  EXPECT_EQ(countWavefronts({{31, 0, 12}}), 1);
}

TEST(EmulatorProfile, LaunchCounters) {
  LaunchProfiler p;
  // Two warps, each lane loading its f32 and storing it to shared memory.
  for (int32_t warp = 0; warp < 2; ++warp)
    for (int32_t lane = 0; lane < 32; ++lane) {
      uint64_t i = 32 * warp + lane;
      p.access(warp, lane, /*site=*/1, 0, 1 << 20 | 4 * i, 4, false);
      p.access(warp, lane, /*site=*/2, 0, 4 * i, 4, true);
    }
  // The same warp at the same site a second time: its second request.
  for (int32_t lane = 0; lane < 32; ++lane)
    p.access(0, lane, 1, 1, 1 << 20 | 4 * lane, 4, false);
  p.tensorFlops(4096, false);
  p.flops(10);
  p.barrier();
  LaunchCounters c = p.finish(/*scale=*/2.0);
  EXPECT_EQ(c.globalRequests, 6);
  EXPECT_EQ(c.globalSectors, 24);
  EXPECT_EQ(c.globalBytes, 2 * 384);
  // 256 distinct bytes (the second pass re-reads 128 of them).
  EXPECT_EQ(c.uniqueBytes, 512);
  EXPECT_EQ(c.sharedRequests, 4);
  EXPECT_EQ(c.sharedWavefronts, 4);
  EXPECT_EQ(c.tensorFlops16, 8192);
  EXPECT_EQ(c.flops, 2 * 4106);
  EXPECT_EQ(c.barriers, 2);
  // finish() starts over.
  EXPECT_EQ(p.finish(1.0).globalRequests, 0);
}

TEST(EmulatorProfile, SampledUniqueBytes) {
  LaunchProfiler p;
  // A sampled block of 4 reads 1 KiB of a 2 KiB weight that every block
  // reads, writes its 256 bytes of a 1 KiB output, and reads 64 bytes
  // outside any allocation.
  p.bulkGlobal(0x10000, 1024);
  p.bulkGlobal(0x20000, 256);
  p.bulkGlobal(0x90000, 64);
  LaunchCounters c =
      p.finish(4.0, {{0x10000, 0x10000 + 2048}, {0x20000, 0x20000 + 1024}});
  // Capped at the weight's 2 KiB; the output's 1 KiB; 4 x 64 elsewhere.
  EXPECT_EQ(c.uniqueBytes, 2048 + 1024 + 256);
  EXPECT_EQ(c.globalBytes, 4 * (1024 + 256 + 64));
  // When every block ran, the bytes are exact.
  p.bulkGlobal(0x10000, 1024);
  p.bulkGlobal(0x10000, 1024);
  EXPECT_EQ(p.finish(1.0, {{0x10000, 0x10000 + 2048}}).uniqueBytes, 1024);
}

} // namespace
