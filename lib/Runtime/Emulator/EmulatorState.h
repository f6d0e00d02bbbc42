//===- EmulatorState.h - the GPU emulator runtime's shared state -*- C++
//-*-===//
//
// What the parts of libblockc_emulator_runtime share: the limits, errors,
// the registry of modules and kernels, fiber stacks and the state of a
// launch (threads, warps, mbarriers, TMA copies), and the scheduler's
// functions that the entry points call. The parts:
//   EmulatorScheduler.cpp  fibers, the block scheduler, collectives and
//                          launches;
//   EmulatorHopper.cpp     mbarriers, TMA and wgmma (blockcEmu* entry points
//                          and mgpuTensorMapEncodeTiledMemref);
//   EmulatorRuntime.cpp    the other blockcEmu* entry points and the mgpu*
//                          ABI of MLIR's gpu-to-llvm (modules, launches,
//                          memory, streams), the access hooks and profile.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_RUNTIME_EMULATOR_EMULATORSTATE_H
#define BLOCKC_LIB_RUNTIME_EMULATOR_EMULATORSTATE_H

#include "blockc/Runtime/EmulatorMatrix.h"
#include "blockc/Runtime/EmulatorProfile.h"
#include "blockc/Runtime/EmulatorRuntime.h"

#include <boost/context/detail/fcontext.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#define BLOCKC_EXPORT extern "C" __attribute__((visibility("default")))

namespace blockc::emu::detail {

namespace ctx = boost::context::detail;

//===----------------------------------------------------------------------===//
// Limits
//===----------------------------------------------------------------------===//

constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxBlockXY = 1024;
constexpr int64_t kMaxBlockZ = 64;
constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxStaticShared = 48 * 1024;
constexpr int64_t kMaxPortableCluster = 8;
constexpr int64_t kWarpSize = 32;
constexpr size_t kAlignment = 256;
// Shared memory is aligned to the 1024-byte repeat of the 128-byte swizzle,
// so that swizzling offsets from its base is swizzling addresses.
constexpr size_t kSharedAlignment = 1024;
constexpr int64_t kWarpgroupSize = 128;
constexpr int64_t kMaxMbarrierCount = (1 << 20) - 1;
constexpr int64_t kMaxTxCount = (1 << 20) - 1;
constexpr int kMaxTensorRank = 5;
constexpr size_t kStackSize = 256 * 1024;
constexpr const char kModulePrefix[] = "blockc-emulator:";

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

inline std::string format(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
inline std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string result(length > 0 ? length : 0, '\0');
  if (length > 0)
    std::vsnprintf(&result[0], length + 1, fmt, args);
  va_end(args);
  return result;
}

inline const char *siteName(const char *site) {
  return site ? site : "<unknown site>";
}

inline std::string dims(const int64_t d[3]) {
  return format("(%lld,%lld,%lld)", static_cast<long long>(d[0]),
                static_cast<long long>(d[1]), static_cast<long long>(d[2]));
}

inline std::string dims(const int32_t d[3]) {
  return format("(%d,%d,%d)", d[0], d[1], d[2]);
}

/// The first error since the last blockcEmuClearError(). Never destroyed:
/// compiled modules unregister their kernels from static destructors that
/// may run after this library's.
struct ErrorState {
  std::mutex mutex;
  std::string message;
  std::atomic<bool> set{false};
};

inline ErrorState &errorState() {
  static ErrorState *state = new ErrorState;
  return *state;
}

inline bool hasError() {
  return errorState().set.load(std::memory_order_acquire);
}

/// Records `message` unless an error is recorded already; the first one is
/// printed on stderr.
inline void recordError(const std::string &message) {
  ErrorState &state = errorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.set.load(std::memory_order_relaxed))
    return;
  state.message = message;
  state.set.store(true, std::memory_order_release);
  std::fprintf(stderr, "blockc GPU emulator: %s\n", message.c_str());
}

//===----------------------------------------------------------------------===//
// Registry of modules, kernels and allocations
//===----------------------------------------------------------------------===//

struct Module {
  std::string name;
};

/// One registration of a kernel. The handle mgpuModuleGetFunction returns
/// points to it; it stays allocated after it is unregistered so that a stale
/// handle is reported instead of dereferenced.
struct Kernel {
  std::string module;
  std::string name;
  BlockcEmuKernelFn fn = nullptr;
  int64_t staticShared = 0;
  int64_t maxShared = 0;
  int32_t flags = 0;
  int32_t known[3] = {0, 0, 0};
  bool registered = true;
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<Module>> modules;
  std::map<std::pair<std::string, std::string>, std::vector<Kernel *>> kernels;
  std::vector<std::unique_ptr<Kernel>> registrations;
  /// Live mgpuMemAlloc allocations by address (ordered: accesses are
  /// checked against them).
  std::map<void *, size_t> allocations;
  /// The profile: active between blockcEmuProfileBegin and End.
  bool profiling = false;
  int64_t sampleBlocks = 0;
  std::vector<std::pair<std::string, BlockcEmuLaunchProfile>> profile;
  BlockcEmuStats stats = {};
};

inline Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}

//===----------------------------------------------------------------------===//
// Fiber stacks
//===----------------------------------------------------------------------===//

struct Stack {
  char *base = nullptr; // lowest usable address, above the guard page
  bool dirty = false;   // an abandoned fiber ran on it (ASan shadow)
  // ASan's fake stack of the fibers that run on this stack, kept from one
  // fiber to the next: creating one per fiber costs an mmap.
  void *fakeStack = nullptr;
};

/// Stacks for up to 1024 fibers, mapped on first use and kept for the
/// process (only the pages a kernel touches become resident).
class StackPool {
public:
  /// Makes `count` stacks available; false (with an error) if mmap fails.
  bool reserve(size_t count, const std::string &kernel) {
    size_t guard = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    while (stacks.size() < count) {
      void *mem =
          mmap(nullptr, guard + kStackSize, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
      if (mem == MAP_FAILED) {
        recordError(format("kernel '%s': cannot map a fiber stack: %s",
                           kernel.c_str(), std::strerror(errno)));
        return false;
      }
      // The stack grows down: the lowest page is the guard.
      mprotect(mem, guard, PROT_NONE);
      stacks.push_back({static_cast<char *>(mem) + guard, false});
    }
    return true;
  }

  Stack &operator[](size_t i) { return stacks[i]; }

  /// Marks the first `count` stacks as holding frames of abandoned fibers.
  /// Their fake stacks are dropped (leaked: ASan cannot free a fake stack
  /// that is not current, and this happens only after an error).
  void markDirty(size_t count) {
    for (size_t i = 0; i < count && i < stacks.size(); ++i) {
      stacks[i].dirty = true;
      stacks[i].fakeStack = nullptr;
    }
  }

private:
  std::vector<Stack> stacks;
};

//===----------------------------------------------------------------------===//
// Launch state
//===----------------------------------------------------------------------===//

enum class Status : uint8_t {
  Ready,
  AtBarrier,
  AtNamedBarrier,
  AtShuffle,
  AtMbarrier,
  Exited
};

/// One of the block's 16 named barriers (bar.sync id, count): the threads
/// that arrived in its current round and the count they expect.
struct NamedBarrier {
  int32_t count = 0;
  int32_t arrived = 0;
};
constexpr int32_t kNamedBarriers = 16;

struct Launch;

/// One pending cp.async: `srcBytes` from `src`, then zeros up to
/// `dstBytes`.
struct AsyncCopy {
  char *dst;
  const char *src;
  int32_t dstBytes, srcBytes;
};

/// A TMA tensor map (mgpuTensorMapEncodeTiledMemref): dimensions, byte
/// strides and box sizes innermost first.
struct TensorMap {
  const char *base = nullptr;
  int32_t rank = 0;
  int32_t dataType = 0;
  int32_t elementBytes = 0;
  int32_t swizzle = 0; // CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B
  int32_t oobFill = 0; // 0 zeros, 1 NaN
  int64_t dims[kMaxTensorRank] = {};
  int64_t strides[kMaxTensorRank] = {};
  int32_t box[kMaxTensorRank] = {};

  /// The swizzle pattern's width in bytes (0 without swizzle).
  int swizzleWidth() const { return swizzle ? 16 << swizzle : 0; }

  int64_t boxBytes() const {
    int64_t bytes = elementBytes;
    for (int d = 0; d < rank; ++d)
      bytes *= box[d];
    return bytes;
  }

  std::vector<int64_t> key() const {
    std::vector<int64_t> k = {reinterpret_cast<intptr_t>(base), rank, dataType,
                              swizzle, oobFill};
    for (int d = 0; d < rank; ++d) {
      k.push_back(dims[d]);
      k.push_back(strides[d]);
      k.push_back(box[d]);
    }
    return k;
  }
  bool operator<(const TensorMap &other) const { return key() < other.key(); }
};

/// A TMA load queued on an mbarrier until a thread waits on it.
struct PendingTma {
  const TensorMap *map;
  char *dst;
  int32_t coords[kMaxTensorRank];
};

/// A TMA store (shared to global) queued in its thread's bulk groups until
/// a cp.async.bulk.wait_group performs it.
struct PendingTmaStore {
  const TensorMap *map;
  const char *src;
  int32_t coords[kMaxTensorRank];
  const char *site;
};

/// The state of one mbarrier of the block (kept aside from its 8 bytes of
/// shared memory).
struct Mbarrier {
  int32_t expected = 0; // arrivals per phase
  int32_t pending = 0;  // arrivals still missing in the current phase
  int64_t tx = 0;       // transaction bytes pending (may go negative)
  int64_t phase = 0;    // completed phases; parity = phase & 1
  std::vector<PendingTma> copies;

  /// Completes the current phase if nothing is pending.
  void advance() {
    if (pending == 0 && tx == 0) {
      ++phase;
      pending = expected;
    }
  }
};

/// Bytes [begin, end) of the block's shared memory.
struct SharedRange {
  int64_t begin = 0, end = 0;
};

/// A committed wgmma group of one thread, in flight: its number and the
/// shared memory its MMAs read.
struct WgmmaReadGroup {
  int64_t group = 0;
  const char *site = nullptr;
  std::vector<SharedRange> ranges;
};

/// Shared memory that wgmma groups in flight read, over the block's
/// threads: a range, the site of the MMA (the last of its group) that
/// read it, and how many (thread, group) pairs at that site read it. A write
/// into it is a race (the MMAs may read the new bytes on a GPU; the emulator
/// computed them when issued).
struct PendingSharedRead {
  SharedRange range;
  int64_t readers = 0;
  const char *site = nullptr;
};

/// Shuffle modes 0-3 are gpu::ShuffleMode; the matrix collectives use the
/// same machinery (every lane of the warp at one site) with these modes.
constexpr int32_t kLdMatrixMode = 16; // + 2 * tiles + transpose (18 - 25)
constexpr int32_t kMmaMode = 32;      // + blockc::emu::MmaType (32 - 34)

/// One emulated thread; `thread.runtime` points back to it.
struct ThreadState {
  BlockcEmuThread thread;
  Launch *launch = nullptr;
  ctx::fcontext_t context = nullptr;
  char *stack = nullptr;     // the fiber's stack (lowest address)
  void *fakeStack = nullptr; // ASan's fake stack of the fiber
  const char *site = nullptr;
  Status status = Status::Ready;
  int32_t warp = 0;
  // The operands of a pending shuffle, and its result.
  int32_t value = 0, offset = 0, width = 0, mode = 0;
  int64_t result = 0;
  // The operands of a pending matrix collective (ldmatrix: the row address;
  // mma: A, B and C fragments) and where its result goes.
  const void *operands[3] = {nullptr, nullptr, nullptr};
  void *resultAddress = nullptr;
  // cp.async: copies not yet committed, then the committed groups, oldest
  // first.
  std::vector<AsyncCopy> openCopies;
  std::deque<std::vector<AsyncCopy>> copyGroups;
  // mbarrier.try_wait.parity: the barrier's shared offset and the parity.
  int64_t mbarrier = 0;
  int32_t parity = 0;
  // bar.sync with an id: the named barrier.
  int32_t namedBarrier = 0;
  // wgmma: MMAs issued since the last commit; the groups committed and
  // retired (wgmma.wait_group) since the block began, numbered from 1 in
  // commit order (groups in flight: committed - retired); per accumulator
  // (the emulation's number, EmulatorRuntime.h) the group of the last MMA
  // that wrote it (0: none; committed + 1 while uncommitted); the shared
  // memory that the uncommitted MMAs read, and per committed group in
  // flight its number and what it reads (Launch::sharedReads counts them).
  bool wgmmaUncommitted = false;
  int64_t wgmmaCommitted = 0;
  int64_t wgmmaRetired = 0;
  std::vector<int64_t> accumulatorGroups;
  std::vector<SharedRange> openReads;
  const char *openReadSite = nullptr;
  std::deque<WgmmaReadGroup> readGroups;

  int64_t wgmmaGroupsInFlight() const { return wgmmaCommitted - wgmmaRetired; }
  // Bulk (TMA) stores: those not yet committed, then the committed
  // cp.async.bulk groups, oldest first; whether the thread executed
  // fence.proxy.async since it last committed a group.
  std::vector<PendingTmaStore> openStores;
  std::deque<std::vector<PendingTmaStore>> storeGroups;
  bool asyncFenced = false;
  // The profile: how often this thread reached each access site in the
  // current block (its warp's n-th instruction there).
  std::unordered_map<uint64_t, uint32_t> occurrences;

  void resetAsyncCopies() {
    openCopies.clear();
    copyGroups.clear();
    openStores.clear();
    storeGroups.clear();
    asyncFenced = false;
  }
};

struct WarpState {
  int32_t lanes = 0;   // existing lanes (fewer in a partial last warp)
  int32_t waiting = 0; // lanes waiting at a shuffle
  const char *site = nullptr;
  bool mixed = false; // waiting lanes are at more than one site
};

struct Launch {
  std::string kernel;
  BlockcEmuKernelFn fn = nullptr;
  void **params = nullptr;
  char *shared = nullptr;
  int64_t sharedBytes = 0;
  int64_t threadCount = 0;
  bool fibers = false;
  std::vector<ThreadState> threads;
  std::vector<WarpState> warps;

  // The block being run and its collective state.
  int32_t blockId[3] = {0, 0, 0};
  int64_t exited = 0;
  int64_t atBarrier = 0;
  const char *barrierSite = nullptr;
  bool barrierMixed = false;
  int64_t warpsAtShuffle = 0;
  // The block's named barriers (bar.sync with an id and a thread count).
  NamedBarrier named[kNamedBarriers];
  // The block's mbarriers by shared offset.
  std::unordered_map<int64_t, Mbarrier> mbarriers;
  // Shared memory that wgmma groups in flight read (few ranges: a kernel's
  // operand tiles), checked on every shared write of a wgmma kernel.
  std::vector<PendingSharedRead> sharedReads;

  // The scheduler's context while a fiber runs, and its stack for ASan.
  ctx::fcontext_t scheduler = nullptr;
  void *schedulerFakeStack = nullptr;
  const void *schedulerStackBottom = nullptr;
  size_t schedulerStackSize = 0;

  bool failed = false; // abandon the launch
  int64_t outOfBounds = 0;
  // The profile's collector (null when not profiling), and the live
  // allocations when the launch began ([begin, end), sorted), against which
  // instrumented global accesses are checked.
  blockc::emu::LaunchProfiler *profiler = nullptr;
  std::vector<std::pair<uintptr_t, uintptr_t>> allocations;
  bool allocationsRead = false;
  int64_t switches = 0;

  /// Records a launch error (unless one is recorded already) and makes the
  /// scheduler abandon the launch.
  void fail(const std::string &message) {
    failed = true;
    recordError("kernel '" + kernel + "': " + message);
  }

  std::string block() const { return dims(blockId); }
};

/// What launches reuse: fiber stacks and the shared memory buffer. Used by
/// one launch at a time (under `mutex`); never destroyed, like the registry.
struct LaunchResources {
  std::mutex mutex;
  StackPool stacks;
  char *shared = nullptr;
  size_t sharedCapacity = 0;
};

inline LaunchResources &launchResources() {
  static LaunchResources *resources = new LaunchResources;
  return *resources;
}

inline thread_local Launch *currentLaunch = nullptr;

/// blockcEmuSetLaunchObserver's observer and its argument.
inline std::atomic<BlockcEmuLaunchObserver> launchObserver{nullptr};
inline std::atomic<void *> launchObserverUser{nullptr};

/// "thread (x,y,z) of block (x,y,z)": how the Hopper errors start.
inline std::string threadInBlock(const ThreadState &t) {
  return format("thread %s of block %s", dims(t.thread.threadId).c_str(),
                t.launch->block().c_str());
}

//===----------------------------------------------------------------------===//
// The scheduler's functions (EmulatorScheduler.cpp) that the entry points
// call
//===----------------------------------------------------------------------===//

/// Suspends the fiber of `t` until the scheduler resumes it.
void yieldToScheduler(ThreadState &t);
/// Lands the TMA copies queued on `barrier`.
void landCopies(Launch &l, Mbarrier &barrier);
/// Performs the TMA store `store`: its box from shared memory into the
/// tensor, elements outside the tensor's extents skipped.
void performTmaStore(Launch &l, const PendingTmaStore &store);
/// Retires the wgmma groups of `t` except the newest `pending` ones
/// (wgmma.wait_group), releasing the shared memory they read.
void retireWgmmaGroups(ThreadState &t, int64_t pending);
/// Fails the launch if the shared bytes [begin, end) that `t` writes (`what`
/// at `site`, or `site` alone when `what` is empty) are read by a wgmma
/// group in flight.
void checkSharedWrite(ThreadState &t, int64_t begin, int64_t end,
                      const char *what, const char *site);
/// Fails the launch if the exiting thread `t` left TMA stores that no
/// cp.async.bulk.wait_group performed.
void checkStoresWaited(ThreadState &t);
/// The state of the calling thread in the current launch (an error naming
/// `function` and `site` when there is none).
ThreadState *threadState(BlockcEmuThread *thread, const char *function,
                         const char *site);
/// Ends the launch with `message`, naming the thread of `t`.
void failInKernel(ThreadState &t, const std::string &message);
/// Runs the kernel `function` over `grid` x `block` (mgpuLaunchKernel and
/// mgpuLaunchClusterKernel; `cluster` null without clusters).
void launchKernel(void *function, const int64_t grid[3], const int64_t block[3],
                  int32_t dynamicShared, void **params, void **extra,
                  size_t paramCount, const int64_t *cluster);
/// The module that mgpuModuleLoad returns for the emulated module `data`.
void *loadModule(const char *function, const char *data, size_t size);
/// A fresh non-null token (streams and events).
void *newToken();

} // namespace blockc::emu::detail

#endif // BLOCKC_LIB_RUNTIME_EMULATOR_EMULATORSTATE_H
