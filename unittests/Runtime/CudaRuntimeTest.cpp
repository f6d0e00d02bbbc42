//===- CudaRuntimeTest.cpp - the CUDA runtime's host-side logic -----------===//
//
// The parts of libblockc_cuda_runtime that need no GPU, through their pure
// functions and classes (lib/Runtime/CUDA): the range checks of a launch
// before its dimensions are narrowed to unsigned (LaunchLimits.h), the
// bounded pool of managed buffers (BufferPool.h) and the per-kernel profile
// table and its JSON (KernelProfile.h). They run on every machine; the
// driver calls around them are exercised on a GPU (test/Integration/CUDA).
//
//===----------------------------------------------------------------------===//

#include "BufferPool.h"
#include "KernelProfile.h"
#include "LaunchLimits.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using namespace blockc::cuda;

namespace {

//===----------------------------------------------------------------------===//
// Launch limits
//===----------------------------------------------------------------------===//

TEST(LaunchLimitsTest, ValidLaunches) {
  EXPECT_EQ(checkLaunch("k", {1, 1, 1}, {1, 1, 1}, 0), "");
  // Every maximum at once (block 1024 x 1 x 1: the thread limit exactly).
  EXPECT_EQ(checkLaunch("k", {kMaxGridX, 65535, 65535}, {1024, 1, 1}, 0), "");
  EXPECT_EQ(checkLaunch("k", {64, 32, 1}, {1, 1024, 1}, 232448), "");
  EXPECT_EQ(checkLaunch("k", {8, 1, 1}, {16, 1, 64}, 0), "");
  EXPECT_EQ(checkLaunch("k", {8, 1, 1}, {32, 32, 1}, 0), "");
}

TEST(LaunchLimitsTest, NamesKernelDimensionAndValue) {
  EXPECT_EQ(checkLaunch("forward_kernel", {64, 70000, 1}, {128, 1, 1}, 0),
            "launch of kernel 'forward_kernel': grid y = 70000 is outside "
            "[1, 65535]; nothing was launched");
  EXPECT_EQ(checkLaunch("k", {1, 1, 1}, {32, 2, 65}, 0),
            "launch of kernel 'k': block z = 65 is outside [1, 64]; nothing "
            "was launched");
}

TEST(LaunchLimitsTest, ZeroAndNegativeDimensions) {
  struct Case {
    Dim3 grid, block;
    const char *what;
    int64_t value;
  };
  const Case cases[] = {
      {{0, 1, 1}, {1, 1, 1}, "grid x", 0},
      {{-1, 1, 1}, {1, 1, 1}, "grid x", -1},
      {{1, 0, 1}, {1, 1, 1}, "grid y", 0},
      {{1, 1, -5}, {1, 1, 1}, "grid z", -5},
      {{1, 1, 1}, {0, 1, 1}, "block x", 0},
      {{1, 1, 1}, {1, -32, 1}, "block y", -32},
      {{1, 1, 1}, {1, 1, 0}, "block z", 0},
      // Would wrap to 4294967295 threads when narrowed to unsigned.
      {{1, 1, 1}, {-1, 1, 1}, "block x", -1},
  };
  for (const Case &c : cases) {
    std::string error = checkLaunch("k", c.grid, c.block, 0);
    EXPECT_NE(error.find(std::string(c.what) + " = " + std::to_string(c.value) +
                         " is outside [1, "),
              std::string::npos)
        << error;
  }
}

TEST(LaunchLimitsTest, TooLargeDimensions) {
  // 2^31 would become a negative int in a launch API that takes int; 2^32
  // would narrow to 0.
  EXPECT_EQ(checkLaunch("k", {kMaxGridX + 1, 1, 1}, {1, 1, 1}, 0),
            "launch of kernel 'k': grid x = 2147483648 is outside [1, "
            "2147483647]; nothing was launched");
  EXPECT_NE(checkLaunch("k", {int64_t(1) << 32, 1, 1}, {1, 1, 1}, 0), "");
  EXPECT_NE(checkLaunch("k", {1, 65536, 1}, {1, 1, 1}, 0)
                .find("grid y = 65536 is outside [1, 65535]"),
            std::string::npos);
  EXPECT_NE(checkLaunch("k", {1, 1, 65536}, {1, 1, 1}, 0)
                .find("grid z = 65536 is outside [1, 65535]"),
            std::string::npos);
  EXPECT_NE(checkLaunch("k", {1, 1, 1}, {1025, 1, 1}, 0)
                .find("block x = 1025 is outside [1, 1024]"),
            std::string::npos);
  EXPECT_NE(checkLaunch("k", {1, 1, 1}, {1, 2048, 1}, 0)
                .find("block y = 2048 is outside [1, 1024]"),
            std::string::npos);
  // The first bad dimension is named (grid before block, x before y).
  EXPECT_NE(checkLaunch("k", {0, 0, 1}, {0, 1, 1}, 0).find("grid x = 0"),
            std::string::npos);
}

TEST(LaunchLimitsTest, TooManyThreads) {
  EXPECT_EQ(checkLaunch("k", {1, 1, 1}, {64, 32, 1}, 0),
            "launch of kernel 'k': block 64x32x1 has 2048 threads, more "
            "than 1024; nothing was launched");
  EXPECT_NE(checkLaunch("k", {1, 1, 1}, {1024, 1024, 64}, 0), "");
  EXPECT_NE(checkLaunch("k", {1, 1, 1}, {33, 32, 1}, 0), ""); // 1056
  EXPECT_EQ(checkLaunch("k", {1, 1, 1}, {31, 33, 1}, 0), ""); // 1023
  EXPECT_EQ(checkLaunch("k", {1, 1, 1}, {8, 8, 16}, 0), "");
  EXPECT_NE(checkLaunch("k", {1, 1, 1}, {8, 8, 17}, 0), "");
}

TEST(LaunchLimitsTest, NegativeSharedMemory) {
  EXPECT_EQ(checkLaunch("k", {1, 1, 1}, {32, 1, 1}, -1),
            "launch of kernel 'k': dynamic shared memory of -1 bytes is "
            "negative; nothing was launched");
  EXPECT_EQ(checkLaunch("k", {1, 1, 1}, {32, 1, 1}, 0), "");
}

TEST(LaunchLimitsTest, ClusterDimensions) {
  EXPECT_EQ(checkClusterLaunch("k", {2, 1, 1}, {8, 4, 1}, {128, 1, 1}, 0), "");
  EXPECT_EQ(checkClusterLaunch("k", {2, 2, 1}, {8, 4, 1}, {128, 1, 1}, 0), "");
  EXPECT_EQ(checkClusterLaunch("k", {0, 1, 1}, {8, 1, 1}, {128, 1, 1}, 0),
            "launch of kernel 'k': cluster x = 0 is outside [1, 8]; nothing "
            "was launched");
  EXPECT_NE(checkClusterLaunch("k", {1, -2, 1}, {8, 4, 1}, {128, 1, 1}, 0)
                .find("cluster y = -2 is outside [1, 4]"),
            std::string::npos);
  EXPECT_NE(checkClusterLaunch("k", {1, 1, 2}, {8, 4, 1}, {128, 1, 1}, 0)
                .find("cluster z = 2 is outside [1, 1]"),
            std::string::npos);
  EXPECT_EQ(checkClusterLaunch("k", {4, 1, 1}, {6, 1, 1}, {128, 1, 1}, 0),
            "launch of kernel 'k': cluster x = 4 does not divide the grid's "
            "6 (grid 6x1x1); nothing was launched");
  // The grid and block are checked first.
  EXPECT_NE(checkClusterLaunch("k", {1, 1, 1}, {1, 1, 1}, {2048, 1, 1}, 0)
                .find("block x = 2048"),
            std::string::npos);
  EXPECT_NE(checkClusterLaunch("k", {1, 1, 1}, {1, 1, 1}, {32, 1, 1}, -4)
                .find("shared memory of -4 bytes"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Buffer pool
//===----------------------------------------------------------------------===//

/// A pool whose releases are recorded in order.
struct RecordingPool {
  explicit RecordingPool(uint64_t maxIdle)
      : pool(maxIdle, [this](BufferPool::Handle handle, uint64_t bytes) {
          released.emplace_back(handle, bytes);
        }) {}
  std::vector<std::pair<BufferPool::Handle, uint64_t>> released;
  BufferPool pool;
};

using Released = std::vector<std::pair<BufferPool::Handle, uint64_t>>;

TEST(BufferPoolTest, ReusesByExactSize) {
  RecordingPool p(1000);
  p.pool.track(0x100, 64);
  p.pool.track(0x200, 128);
  EXPECT_FALSE(p.pool.acquire(64)); // in use, not idle
  EXPECT_EQ(p.pool.free(0x100), BufferPool::FreeResult::Kept);
  EXPECT_EQ(p.pool.idleBytes(), 64u);
  EXPECT_FALSE(p.pool.acquire(63));
  EXPECT_FALSE(p.pool.acquire(65));
  EXPECT_EQ(p.pool.acquire(64), BufferPool::Handle(0x100));
  EXPECT_EQ(p.pool.idleBytes(), 0u);
  EXPECT_FALSE(p.pool.acquire(64)); // handed out once
  EXPECT_EQ(p.pool.trackedCount(), 2u);
  EXPECT_TRUE(p.released.empty());
}

TEST(BufferPoolTest, AcquireTakesTheMostRecentlyFreedOfASize) {
  RecordingPool p(1000);
  for (BufferPool::Handle h : {1, 2, 3})
    p.pool.track(h, 100);
  p.pool.free(2);
  p.pool.free(1);
  p.pool.free(3);
  EXPECT_EQ(p.pool.acquire(100), BufferPool::Handle(3));
  EXPECT_EQ(p.pool.acquire(100), BufferPool::Handle(1));
  EXPECT_EQ(p.pool.acquire(100), BufferPool::Handle(2));
}

TEST(BufferPoolTest, EvictsOldestIdleAboveHighWaterMark) {
  RecordingPool p(250);
  for (BufferPool::Handle h : {1, 2, 3, 4})
    p.pool.track(h, 100);
  EXPECT_EQ(p.pool.free(3), BufferPool::FreeResult::Kept);
  EXPECT_EQ(p.pool.free(1), BufferPool::FreeResult::Kept);
  EXPECT_TRUE(p.released.empty()); // 200 <= 250
  // 300 > 250: the least recently freed (3) goes, not the lowest handle.
  EXPECT_EQ(p.pool.free(4), BufferPool::FreeResult::Kept);
  EXPECT_EQ(p.released, (Released{{3, 100}}));
  EXPECT_EQ(p.pool.idleBytes(), 200u);
  EXPECT_EQ(p.pool.idleCount(), 2u);
  EXPECT_EQ(p.pool.trackedCount(), 3u); // 3 is no longer the pool's
  // A reused buffer is no longer idle; freeing it again makes it the newest.
  EXPECT_EQ(p.pool.acquire(100), BufferPool::Handle(4));
  EXPECT_EQ(p.pool.free(2), BufferPool::FreeResult::Kept);
  EXPECT_EQ(p.pool.free(4), BufferPool::FreeResult::Kept);
  EXPECT_EQ(p.released, (Released{{3, 100}, {1, 100}}));
  EXPECT_EQ(p.pool.idleBytes(), 200u);
  // The released buffers are the caller's again (cuMemFree'd: unknown).
  EXPECT_EQ(p.pool.free(3), BufferPool::FreeResult::NotPooled);
}

TEST(BufferPoolTest, EvictsSeveralToMakeRoomForALargeBuffer) {
  RecordingPool p(1000);
  p.pool.track(1, 300);
  p.pool.track(2, 300);
  p.pool.track(3, 300);
  p.pool.track(4, 900);
  p.pool.free(1);
  p.pool.free(2);
  p.pool.free(3);
  EXPECT_EQ(p.pool.free(4), BufferPool::FreeResult::Kept);
  // 1800 idle: all three older buffers go (1500, 1200, then 900 <= 1000).
  EXPECT_EQ(p.released, (Released{{1, 300}, {2, 300}, {3, 300}}));
  EXPECT_EQ(p.pool.idleBytes(), 900u);
}

TEST(BufferPoolTest, MarkIsInclusive) {
  RecordingPool p(200);
  p.pool.track(1, 100);
  p.pool.track(2, 100);
  p.pool.free(1);
  p.pool.free(2);
  EXPECT_EQ(p.pool.idleBytes(), 200u);
  EXPECT_TRUE(p.released.empty());
}

TEST(BufferPoolTest, BufferLargerThanMarkIsReleasedAtOnce) {
  RecordingPool p(100);
  p.pool.track(1, 60);
  p.pool.track(2, 101);
  p.pool.free(1);
  EXPECT_EQ(p.pool.free(2), BufferPool::FreeResult::Released);
  // Released itself, without evicting the idle buffer that fits.
  EXPECT_EQ(p.released, (Released{{2, 101}}));
  EXPECT_EQ(p.pool.idleBytes(), 60u);
  EXPECT_EQ(p.pool.free(2), BufferPool::FreeResult::NotPooled);
}

TEST(BufferPoolTest, ZeroDisablesReuse) {
  RecordingPool p(0);
  EXPECT_FALSE(p.pool.enabled());
  p.pool.track(1, 64);
  EXPECT_EQ(p.pool.trackedCount(), 0u);
  EXPECT_EQ(p.pool.free(1), BufferPool::FreeResult::NotPooled);
  EXPECT_FALSE(p.pool.acquire(64));
  EXPECT_TRUE(p.released.empty()); // the caller frees it itself
}

TEST(BufferPoolTest, DoubleFreeAndUnknownPointers) {
  RecordingPool p(1000);
  EXPECT_EQ(p.pool.free(0x42), BufferPool::FreeResult::NotPooled);
  p.pool.track(1, 64);
  EXPECT_EQ(p.pool.free(1), BufferPool::FreeResult::Kept);
  EXPECT_EQ(p.pool.free(1), BufferPool::FreeResult::AlreadyFree);
  // The double free changed nothing: one idle buffer, handed out once.
  EXPECT_EQ(p.pool.idleBytes(), 64u);
  EXPECT_EQ(p.pool.idleCount(), 1u);
  EXPECT_EQ(p.pool.acquire(64), BufferPool::Handle(1));
  EXPECT_FALSE(p.pool.acquire(64));
  EXPECT_TRUE(p.released.empty());
}

TEST(BufferPoolTest, ReleaseIdleKeepsBuffersInUse) {
  RecordingPool p(1000);
  p.pool.track(1, 10);
  p.pool.track(2, 20);
  p.pool.track(3, 30);
  p.pool.free(2);
  p.pool.free(1);
  p.pool.releaseIdle();
  EXPECT_EQ(p.released, (Released{{2, 20}, {1, 10}}));
  EXPECT_EQ(p.pool.idleBytes(), 0u);
  EXPECT_EQ(p.pool.trackedCount(), 1u);
  EXPECT_EQ(p.pool.free(3), BufferPool::FreeResult::Kept);
}

TEST(BufferPoolTest, ParseByteCount) {
  EXPECT_EQ(parseByteCount("0"), uint64_t(0));
  EXPECT_EQ(parseByteCount("1073741824"), uint64_t(1) << 30);
  EXPECT_EQ(parseByteCount("512K"), uint64_t(512) << 10);
  EXPECT_EQ(parseByteCount("256M"), uint64_t(256) << 20);
  EXPECT_EQ(parseByteCount("2G"), uint64_t(2) << 30);
  EXPECT_EQ(parseByteCount("18446744073709551615"), UINT64_MAX);
  for (const char *bad : {"", "G", "-1", "+5", "1.5G", "1g", "1 G", " 1", "12x",
                          "18446744073709551616", "17179869184G"})
    EXPECT_FALSE(parseByteCount(bad)) << "'" << bad << "'";
}

//===----------------------------------------------------------------------===//
// Kernel profile
//===----------------------------------------------------------------------===//

TEST(KernelProfileTest, JSONSortedByNameWithSums) {
  KernelProfile profile;
  profile.record("forward_kernel_2", 10.5);
  profile.record("forward_kernel_0", 100.25);
  profile.record("forward_kernel_2", 1.0004);
  profile.record("forward_kernel_10", 0.5);
  EXPECT_EQ(profile.toJSON(),
            "{\"kernels\": [\n"
            "  {\"name\": \"forward_kernel_0\", \"launches\": 1, "
            "\"measured_us\": 100.250},\n"
            "  {\"name\": \"forward_kernel_10\", \"launches\": 1, "
            "\"measured_us\": 0.500},\n"
            "  {\"name\": \"forward_kernel_2\", \"launches\": 2, "
            "\"measured_us\": 11.500}\n"
            "], \"total_us\": 112.250}\n");
}

TEST(KernelProfileTest, EmptyAndCleared) {
  KernelProfile profile;
  EXPECT_EQ(profile.toJSON(), "{\"kernels\": [], \"total_us\": 0.000}\n");
  profile.record("k", 3);
  profile.clear();
  EXPECT_TRUE(profile.empty());
  EXPECT_EQ(profile.toJSON(), "{\"kernels\": [], \"total_us\": 0.000}\n");
  EXPECT_EQ(profile.toText(), "blockc CUDA profile: total 0.0000 ms\n");
}

TEST(KernelProfileTest, Text) {
  KernelProfile profile;
  profile.record("a", 1500);
  profile.record("b", 500);
  profile.record("b", 2000);
  // Names padded to 40 columns, as the table printed before.
  std::string pad(39, ' ');
  EXPECT_EQ(profile.toText(), "blockc CUDA profile: a" + pad +
                                  "      1 launches     1.5000 ms ( 37.5%)\n"
                                  "blockc CUDA profile: b" +
                                  pad +
                                  "      2 launches     2.5000 ms ( 62.5%)\n"
                                  "blockc CUDA profile: total 4.0000 ms\n");
}

TEST(KernelProfileTest, JSONStrings) {
  EXPECT_EQ(jsonString("plain_name"), "\"plain_name\"");
  EXPECT_EQ(jsonString("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
}

} // namespace
