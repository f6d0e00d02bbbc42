//===- HostAllocator.h - host memory policy for compiled blocks -*- C++ -*-===//
//
// A compiled CPU entry allocates its intermediate buffers with malloc and
// frees them before it returns. With glibc's defaults the large ones are
// fresh mmap'ed pages, or heap memory trimmed back to the kernel, on every
// call, so each call page-faults and zeroes them again (about 12% of a 7B
// bf16 prefill at T = 128: docs/RuntimeABI.md).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_HOSTALLOCATOR_H
#define BLOCKC_EXECUTIONENGINE_HOSTALLOCATOR_H

namespace blockc {

/// Once per process, where the C library is glibc: serve allocations up to
/// 32 MiB from the heap (M_MMAP_THRESHOLD) and keep up to 1 GiB of freed
/// memory at its top (M_TRIM_THRESHOLD), so that a block's next call reuses
/// the pages of the last. BLOCKC_HOST_KEEP_FREED=0 in the environment
/// leaves the C library's defaults. Returns whether the policy is in force.
bool keepFreedHostMemory();

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_HOSTALLOCATOR_H
