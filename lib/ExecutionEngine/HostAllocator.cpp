//===- HostAllocator.cpp - host memory policy for compiled blocks ---------===//

#include "blockc/ExecutionEngine/HostAllocator.h"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

bool blockc::keepFreedHostMemory() {
  static bool inForce = [] {
    const char *value = std::getenv("BLOCKC_HOST_KEEP_FREED");
    if (value && std::strcmp(value, "0") == 0)
      return false;
#if defined(__GLIBC__)
    // 32 MiB is the largest mmap threshold glibc accepts on 64-bit hosts;
    // setting it also stops glibc's own adjustment of both thresholds.
    return mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 &&
           mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
#else
    return false;
#endif
  }();
  return inForce;
}
