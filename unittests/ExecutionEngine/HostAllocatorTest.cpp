//===- HostAllocatorTest.cpp - the host memory policy ---------------------===//
//
// keepFreedHostMemory sets glibc's thresholds once (unless
// BLOCKC_HOST_KEEP_FREED=0, which this test binary does not set): a block
// of a few MiB freed and allocated again then reuses the heap's pages
// instead of a fresh mapping.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/HostAllocator.h"

#include "gtest/gtest.h"

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

TEST(HostAllocator, KeepsFreedMemoryOnGlibc) {
#if defined(__GLIBC__)
  if (const char *v = std::getenv("BLOCKC_HOST_KEEP_FREED"))
    GTEST_SKIP() << "BLOCKC_HOST_KEEP_FREED=" << v << " in the environment";
  EXPECT_TRUE(blockc::keepFreedHostMemory());
  // Idempotent.
  EXPECT_TRUE(blockc::keepFreedHostMemory());
  // 8 MiB (above glibc's default 128 KiB mmap threshold) now comes from the
  // heap: mallinfo2 counts it in the arena, not in mmap'ed blocks.
  size_t mmappedBefore = mallinfo2().hblkhd;
  void *p = std::malloc(8 << 20);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(mallinfo2().hblkhd, mmappedBefore);
  std::free(p);
  // Freed, it stays in the process (below the 1 GiB trim threshold).
  EXPECT_GE(mallinfo2().fordblks, size_t(8) << 20);
#else
  EXPECT_FALSE(blockc::keepFreedHostMemory());
#endif
}
