//===- BufferPool.h - bounded reuse of freed device buffers -----*- C++ -*-===//
//
// The bookkeeping of libblockc_cuda_runtime's pool of managed buffers,
// independent of CUDA: buffers are opaque 64-bit handles (CUdeviceptr in the
// runtime) and the pool releases them through a callback (cuMemFree), so
// that unit tests (unittests/Runtime/CudaRuntimeTest.cpp) can drive it.
//
// A block allocates and frees the same buffer sizes on every call, and
// cuMemAllocManaged + cuMemFree (with the migration of fresh pages) cost more
// than small kernels, so freed buffers are kept idle and handed out again to
// an allocation of exactly the same size. The idle bytes are bounded by a
// high-water mark: when a free takes them above it, the oldest idle buffers
// (the least recently freed) are released until the idle bytes are at most
// the mark again. Oldest first because a program that keeps calling a block
// frees its working set on every call, so the buffers it still needs are
// the recently freed ones; a buffer larger than the mark on its own is
// released at once, without evicting the others. A mark of 0 disables reuse:
// nothing is tracked, and every free is the caller's.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_RUNTIME_CUDA_BUFFERPOOL_H
#define BLOCKC_LIB_RUNTIME_CUDA_BUFFERPOOL_H

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace blockc::cuda {

/// The high-water mark of idle bytes when the environment does not set one.
constexpr uint64_t kDefaultMaxIdleBytes = uint64_t(1) << 30;

/// Parses a byte count: a decimal integer with an optional binary suffix K,
/// M or G (KiB, MiB, GiB; "512M" is 512 * 2^20). Nothing for anything else
/// (empty, a sign, other characters, overflow).
std::optional<uint64_t> parseByteCount(std::string_view text);

class BufferPool {
public:
  using Handle = uint64_t;
  /// Releases a buffer for good (cuMemFree in the runtime). Called without
  /// the pool's lock held.
  using ReleaseFn = std::function<void(Handle handle, uint64_t bytes)>;

  BufferPool(uint64_t maxIdleBytes, ReleaseFn release);
  BufferPool(const BufferPool &) = delete;
  BufferPool &operator=(const BufferPool &) = delete;

  /// Whether freed buffers are kept for reuse (a nonzero mark).
  bool enabled() const { return maxIdleBytes != 0; }
  uint64_t maxIdle() const { return maxIdleBytes; }

  /// An idle buffer of exactly `bytes`, now in use (the most recently
  /// freed of that size), or nothing.
  std::optional<Handle> acquire(uint64_t bytes);

  /// Records a newly allocated buffer, in use, as the pool's: its free
  /// comes back to the pool. Does nothing when reuse is disabled.
  void track(Handle handle, uint64_t bytes);

  enum class FreeResult {
    /// Not a buffer of the pool: the caller frees it itself.
    NotPooled,
    /// Kept idle for reuse (older idle buffers may have been released).
    Kept,
    /// Released at once: larger than the high-water mark on its own.
    Released,
    /// The buffer is already idle: a double free, nothing was done.
    AlreadyFree,
  };
  /// Returns a buffer to the pool, releasing idle buffers (oldest first)
  /// while the idle bytes exceed the high-water mark.
  FreeResult free(Handle handle);

  /// Releases every idle buffer (buffers in use stay tracked).
  void releaseIdle();

  uint64_t idleBytes() const;
  size_t idleCount() const;
  /// Buffers of the pool, idle or in use.
  size_t trackedCount() const;

private:
  struct Entry {
    uint64_t bytes = 0;
    bool idle = false;
    /// Position in `idleOrder` while idle.
    std::list<Handle>::iterator order;
  };

  /// Moves the oldest idle buffers out of the pool into `evicted` while
  /// the idle bytes exceed `limit`. Called with the lock held.
  void evictLocked(uint64_t limit,
                   std::vector<std::pair<Handle, uint64_t>> &evicted);
  void removeIdleLocked(Handle handle, Entry &entry);
  void releaseAll(const std::vector<std::pair<Handle, uint64_t>> &evicted);

  const uint64_t maxIdleBytes;
  const ReleaseFn release;
  mutable std::mutex mutex;
  std::unordered_map<Handle, Entry> entries;
  /// Idle buffers, the least recently freed first.
  std::list<Handle> idleOrder;
  /// Idle buffers by size (equal sizes in the order they were freed).
  std::multimap<uint64_t, Handle> idleBySize;
  uint64_t idleTotal = 0;
};

} // namespace blockc::cuda

#endif // BLOCKC_LIB_RUNTIME_CUDA_BUFFERPOOL_H
