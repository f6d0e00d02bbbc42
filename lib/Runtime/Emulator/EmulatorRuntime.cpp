//===- EmulatorRuntime.cpp - the GPU emulator's runtime -------------------===//
//
// libblockc_emulator_runtime: the mgpu* host functions of MLIR 22's
// gpu-to-llvm over host memory, and the blockcEmu* functions that emulated
// kernels call (include/blockc/Runtime/EmulatorRuntime.h).
//
// A launch runs its thread blocks one after another on the calling thread.
// Kernels registered without BLOCKC_EMU_SYNCHRONIZES run as a loop over the
// threads of a block. The others run one fiber per thread: a fiber is a
// Boost.Context fcontext on a cached mmap'ed stack with a guard page, and the
// block's scheduler resumes every ready fiber in turn (round robin) until it
// waits at a barrier, a shuffle or an mbarrier, or returns. When no fiber is
// ready, the scheduler completes the collectives whose participants have all
// arrived, releases the mbarrier waiters whose phase completed (landing the
// TMA loads queued on their barriers) and starts the next round; when none can
// complete, the block is stuck and the error describes where its threads wait.
// After an error the launch is abandoned: the scheduler returns without
// resuming the fibers, whose stacks are simply reused (nothing unwinds through
// the kernel frames, which have no unwind information when they come from the
// JIT).
//
// Under AddressSanitizer (the process has the ASan runtime), fiber switches
// are announced with __sanitizer_{start,finish}_switch_fiber, and stacks of
// abandoned fibers are unpoisoned before reuse; the hooks are weak, so the
// library needs no sanitizer runtime.
//
//===----------------------------------------------------------------------===//

#include "blockc/Runtime/EmulatorRuntime.h"
#include "blockc/Runtime/EmulatorMatrix.h"
#include "blockc/Runtime/EmulatorProfile.h"

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

// AddressSanitizer's fiber interface (sanitizer/common_interface_defs.h and
// sanitizer/asan_interface.h), weak: null unless the process has ASan.
extern "C" {
__attribute__((weak)) void __sanitizer_start_switch_fiber(void **fakeStackSave,
                                                          const void *bottom,
                                                          size_t size);
__attribute__((weak)) void
__sanitizer_finish_switch_fiber(void *fakeStackSave, const void **bottomOld,
                                size_t *sizeOld);
__attribute__((weak)) void
__asan_unpoison_memory_region(const volatile void *addr, size_t size);
}

namespace {

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

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
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

const char *siteName(const char *site) {
  return site ? site : "<unknown site>";
}

std::string dims(const int64_t d[3]) {
  return format("(%lld,%lld,%lld)", static_cast<long long>(d[0]),
                static_cast<long long>(d[1]), static_cast<long long>(d[2]));
}

std::string dims(const int32_t d[3]) {
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

ErrorState &errorState() {
  static ErrorState *state = new ErrorState;
  return *state;
}

bool hasError() { return errorState().set.load(std::memory_order_acquire); }

/// Records `message` unless an error is recorded already; the first one is
/// printed on stderr.
void recordError(const std::string &message) {
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

Registry &registry() {
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
  // wgmma: MMAs issued since the last commit, and committed groups not yet
  // waited for (wgmma.wait_group).
  bool wgmmaUncommitted = false;
  int32_t wgmmaGroups = 0;
  // The profile: how often this thread reached each access site in the
  // current block (its warp's n-th instruction there).
  std::unordered_map<uint64_t, uint32_t> occurrences;

  void resetAsyncCopies() {
    openCopies.clear();
    copyGroups.clear();
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

LaunchResources &launchResources() {
  static LaunchResources *resources = new LaunchResources;
  return *resources;
}

thread_local Launch *currentLaunch = nullptr;

//===----------------------------------------------------------------------===//
// Fibers
//===----------------------------------------------------------------------===//

inline void startSwitch(void **fakeStackSave, const void *bottom, size_t size) {
  if (__sanitizer_start_switch_fiber)
    __sanitizer_start_switch_fiber(fakeStackSave, bottom, size);
}

inline void finishSwitch(void *fakeStackSave, const void **bottomOld,
                         size_t *sizeOld) {
  if (__sanitizer_finish_switch_fiber)
    __sanitizer_finish_switch_fiber(fakeStackSave, bottomOld, sizeOld);
}

/// Switches from a fiber back to its block's scheduler; returns when the
/// scheduler resumes the fiber (never, if it abandons the launch).
void yieldToScheduler(ThreadState &t) {
  Launch &l = *t.launch;
  startSwitch(&t.fakeStack, l.schedulerStackBottom, l.schedulerStackSize);
  ctx::transfer_t from = ctx::jump_fcontext(l.scheduler, nullptr);
  finishSwitch(t.fakeStack, &l.schedulerStackBottom, &l.schedulerStackSize);
  l.scheduler = from.fctx;
}

/// The entry of every fiber: runs the kernel for one thread. It never
/// returns (make_fcontext's contract): the last switch goes back to the
/// scheduler, which does not resume an exited fiber.
void fiberMain(ctx::transfer_t from) {
  ThreadState &t = *static_cast<ThreadState *>(from.data);
  Launch &l = *t.launch;
  finishSwitch(t.fakeStack, &l.schedulerStackBottom, &l.schedulerStackSize);
  l.scheduler = from.fctx;
  l.fn(l.params, &t.thread, l.shared, l.sharedBytes);
  t.status = Status::Exited;
  ++l.exited;
  // Keep the fake stack (all its frames are free now) for the next fiber on
  // this stack.
  startSwitch(&t.fakeStack, l.schedulerStackBottom, l.schedulerStackSize);
  ctx::jump_fcontext(l.scheduler, nullptr);
  std::abort(); // not reached
}

inline void resume(Launch &l, ThreadState &t) {
  ++l.switches;
  startSwitch(&l.schedulerFakeStack, t.stack, kStackSize);
  ctx::transfer_t back = ctx::jump_fcontext(t.context, &t);
  finishSwitch(l.schedulerFakeStack, nullptr, nullptr);
  t.context = back.fctx;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// "N threads wait at <site>, ..., M threads exited" for the threads
/// [begin, end) of the block, grouped by site in order of first appearance.
std::string describeWaits(const Launch &l, int64_t begin, int64_t end) {
  std::vector<std::pair<const char *, int64_t>> sites;
  int64_t exited = 0;
  for (int64_t i = begin; i < end; ++i) {
    const ThreadState &t = l.threads[i];
    if (t.status == Status::Exited) {
      ++exited;
      continue;
    }
    if (t.status == Status::Ready)
      continue;
    auto it = std::find_if(sites.begin(), sites.end(),
                           [&](const auto &s) { return s.first == t.site; });
    if (it == sites.end())
      sites.push_back({t.site, 1});
    else
      ++it->second;
  }
  std::string text;
  auto count = [](int64_t n, const char *one, const char *many) {
    return format("%lld %s", static_cast<long long>(n), n == 1 ? one : many);
  };
  for (const auto &[site, n] : sites) {
    if (!text.empty())
      text += ", ";
    text += count(n, "thread waits at ", "threads wait at ");
    text += siteName(site);
  }
  if (exited) {
    if (!text.empty())
      text += ", ";
    text += count(exited, "thread exited", "threads exited");
  }
  return text;
}

/// Recounts the shuffle waiters of warp `w` after some of them were
/// released.
void recountWarp(Launch &l, int64_t w) {
  WarpState &warp = l.warps[w];
  bool hadWaiters = warp.waiting > 0;
  warp.waiting = 0;
  warp.site = nullptr;
  warp.mixed = false;
  int64_t first = w * kWarpSize;
  for (int32_t lane = 0; lane < warp.lanes; ++lane) {
    const ThreadState &t = l.threads[first + lane];
    if (t.status != Status::AtShuffle)
      continue;
    if (warp.waiting++ == 0)
      warp.site = t.site;
    else if (t.site != warp.site)
      warp.mixed = true;
  }
  if (hadWaiters && warp.waiting == 0)
    --l.warpsAtShuffle;
}

const char *modeName(int32_t mode) {
  static const char *names[] = {"xor", "down", "up", "idx"};
  if (mode >= kMmaMode) {
    static const char *mma[] = {"mma.m16n8k16 bf16", "mma.m16n8k16 f16",
                                "mma.m16n8k8 tf32"};
    return mode - kMmaMode < 3 ? mma[mode - kMmaMode] : "mma.?";
  }
  if (mode >= kLdMatrixMode) {
    static const char *ld[] = {
        "ldmatrix.x1", "ldmatrix.x1.trans", "ldmatrix.x2", "ldmatrix.x2.trans",
        "ldmatrix.x3", "ldmatrix.x3.trans", "ldmatrix.x4", "ldmatrix.x4.trans"};
    int32_t i = mode - kLdMatrixMode - 2;
    return i >= 0 && i < 8 ? ld[i] : "ldmatrix.?";
  }
  return mode >= 0 && mode < 4 ? names[mode] : "?";
}

/// Completes the matrix collective (ldmatrix or mma.sync) that every lane
/// of the full warp `w` waits at: gathers the lanes' operands, computes
/// (blockc::emu), scatters the results. Returns false if it failed the
/// launch.
bool completeMatrix(Launch &l, int64_t w, const char *site, int32_t mode) {
  ThreadState *lanes = &l.threads[w * kWarpSize];
  if (mode >= kMmaMode) {
    uint32_t a[kWarpSize][4], b[kWarpSize][2];
    float c[kWarpSize][4], d[kWarpSize][4];
    for (int32_t lane = 0; lane < kWarpSize; ++lane) {
      std::memcpy(a[lane], lanes[lane].operands[0], sizeof(a[lane]));
      std::memcpy(b[lane], lanes[lane].operands[1], sizeof(b[lane]));
      std::memcpy(c[lane], lanes[lane].operands[2], sizeof(c[lane]));
    }
    auto type = static_cast<blockc::emu::MmaType>(mode - kMmaMode);
    bool tf32 = type == blockc::emu::MmaType::TF32;
    if (tf32)
      blockc::emu::mmaM16N8K8TF32(a, b, c, d);
    else
      blockc::emu::mmaM16N8K16(type, a, b, c, d);
    // m16n8k16: 2 x 16 x 8 x 16 FLOPs per warp instruction; m16n8k8 half.
    if (l.profiler)
      l.profiler->tensorFlops(tf32 ? 2048 : 4096, tf32);
    for (int32_t lane = 0; lane < kWarpSize; ++lane)
      std::memcpy(lanes[lane].resultAddress, d[lane], sizeof(d[lane]));
    return true;
  }
  int32_t tiles = (mode - kLdMatrixMode) / 2;
  bool transpose = (mode - kLdMatrixMode) % 2;
  const uint16_t *rows[kWarpSize] = {};
  for (int32_t lane = 0; lane < 8 * tiles; ++lane) {
    const char *row = static_cast<const char *>(lanes[lane].operands[0]);
    if (row < l.shared || row + 16 > l.shared + l.sharedBytes ||
        (row - l.shared) % 16 != 0) {
      l.fail(format("lane %d of warp %lld in block %s gives %s at %s a row "
                    "address that is not a 16-byte aligned row of the "
                    "block's shared memory (offset %lld of %lld bytes)",
                    lane, static_cast<long long>(w), l.block().c_str(),
                    modeName(mode), siteName(site),
                    static_cast<long long>(row - l.shared),
                    static_cast<long long>(l.sharedBytes)));
      return false;
    }
    rows[lane] = reinterpret_cast<const uint16_t *>(row);
    if (l.profiler)
      l.profiler->access(
          static_cast<int32_t>(w), lane, reinterpret_cast<uintptr_t>(site),
          lanes[lane].occurrences[reinterpret_cast<uintptr_t>(site)]++,
          reinterpret_cast<uintptr_t>(row), 16,
          /*shared=*/true);
  }
  uint32_t out[kWarpSize][4];
  blockc::emu::ldMatrix(tiles, transpose, rows, out);
  for (int32_t lane = 0; lane < kWarpSize; ++lane)
    std::memcpy(lanes[lane].resultAddress, out[lane], sizeof(uint32_t) * tiles);
  return true;
}

/// Completes the shuffle at `site` of warp `w` if every existing lane of its
/// member mask waits there. Returns true if it completed; false if it must
/// wait (or failed the launch).
bool completeShuffle(Launch &l, int64_t w, const char *site) {
  WarpState &warp = l.warps[w];
  int64_t first = w * kWarpSize;
  uint32_t participants = 0;
  int32_t width = 0, mode = 0, firstLane = -1;
  for (int32_t lane = 0; lane < warp.lanes; ++lane) {
    const ThreadState &t = l.threads[first + lane];
    if (t.status != Status::AtShuffle || t.site != site)
      continue;
    participants |= 1u << lane;
    if (firstLane < 0) {
      firstLane = lane;
      width = t.width;
      mode = t.mode;
    } else if (t.width != width || t.mode != mode) {
      l.fail(format("the lanes of warp %lld in block %s disagree at the "
                    "shuffle at %s: lane %d has mode %s and width %d, lane %d "
                    "mode %s and width %d",
                    static_cast<long long>(w), l.block().c_str(),
                    siteName(site), firstLane, modeName(mode), width, lane,
                    modeName(t.mode), t.width));
      return false;
    }
  }
  // convert-gpu-to-nvvm: member mask = (-1u) >> (32 - width).
  uint32_t members = ~0u >> (32 - width);
  if (uint32_t outside = participants & ~members) {
    int lane = __builtin_ctz(outside);
    l.fail(format("lane %d of warp %lld in block %s executes the shuffle at "
                  "%s with width %d, outside its member mask (lanes 0-%d)",
                  lane, static_cast<long long>(w), l.block().c_str(),
                  siteName(site), width, width - 1));
    return false;
  }
  uint32_t existing = ~0u >> (32 - warp.lanes);
  if (members & existing & ~participants)
    return false; // a member lane has not arrived
  if (mode >= kLdMatrixMode) {
    if (warp.lanes < kWarpSize) {
      l.fail(format("%s at %s needs a full warp; warp %lld of block %s has "
                    "%d threads",
                    modeName(mode), siteName(site), static_cast<long long>(w),
                    l.block().c_str(), warp.lanes));
      return false;
    }
    if (!completeMatrix(l, w, site, mode))
      return false;
    for (int32_t lane = 0; lane < warp.lanes; ++lane)
      l.threads[first + lane].status = Status::Ready;
    return true;
  }
  // shfl.sync with c = (up ? 32 - width : width - 1) and segmask 0:
  // maxLane = c, minLane = 0; b is taken modulo 32.
  int32_t maxLane = mode == 2 ? 32 - width : width - 1;
  for (int32_t lane = 0; lane < warp.lanes; ++lane) {
    if (!(participants >> lane & 1))
      continue;
    ThreadState &t = l.threads[first + lane];
    int32_t b = t.offset & 31;
    int32_t j;
    bool valid;
    switch (mode) {
    case 0: // xor (bfly)
      j = lane ^ b;
      valid = j <= maxLane;
      break;
    case 1: // down
      j = lane + b;
      valid = j <= maxLane;
      break;
    case 2: // up
      j = lane - b;
      valid = j >= maxLane;
      break;
    default: // idx
      j = b;
      valid = j <= maxLane;
      break;
    }
    if (!valid)
      j = lane;
    if (!(participants >> j & 1)) {
      l.fail(format("lane %d of warp %lld in block %s reads lane %d in the "
                    "shuffle at %s (%s %d, width %d), but lane %d %s",
                    lane, static_cast<long long>(w), l.block().c_str(), j,
                    siteName(site), modeName(mode), t.offset, width, j,
                    j < warp.lanes ? "does not take part"
                                   : "does not exist in this partial warp"));
      return false;
    }
    uint32_t bits = static_cast<uint32_t>(l.threads[first + j].value);
    t.result = static_cast<int64_t>(bits) | (static_cast<int64_t>(valid) << 32);
  }
  for (int32_t lane = 0; lane < warp.lanes; ++lane)
    if (participants >> lane & 1)
      l.threads[first + lane].status = Status::Ready;
  return true;
}

/// Completes the shuffles of warp `w` that can complete.
bool completeWarp(Launch &l, int64_t w) {
  WarpState &warp = l.warps[w];
  bool progress = false;
  if (!warp.mixed) {
    progress = completeShuffle(l, w, warp.site);
  } else {
    const char *done[kWarpSize];
    int32_t doneCount = 0;
    int64_t first = w * kWarpSize;
    for (int32_t lane = 0; lane < warp.lanes && !l.failed; ++lane) {
      const ThreadState &t = l.threads[first + lane];
      if (t.status != Status::AtShuffle ||
          std::find(done, done + doneCount, t.site) != done + doneCount)
        continue;
      done[doneCount++] = t.site;
      progress |= completeShuffle(l, w, t.site);
    }
  }
  if (progress)
    recountWarp(l, w);
  return progress;
}

/// Copies the box of a queued TMA load into shared memory: row-major from
/// its destination, each element at its swizzled offset, elements outside
/// the tensor filled with zeros or NaN.
void landTma(Launch &l, const PendingTma &copy) {
  const TensorMap &m = *copy.map;
  int64_t e = m.elementBytes;
  int width = m.swizzleWidth();
  // NVIDIA's canonical NaN of every floating-point width: 0x7F, then ones.
  unsigned char fill[8] = {};
  if (m.oobFill) {
    std::memset(fill, 0xFF, sizeof(fill));
    fill[e - 1] = 0x7F;
  }
  int64_t dstOffset = copy.dst - l.shared;
  int64_t rows = 1;
  for (int d = 1; d < m.rank; ++d)
    rows *= m.box[d];
  for (int64_t row = 0; row < rows; ++row) {
    bool inside = true;
    int64_t source = 0;
    int64_t rest = row;
    for (int d = 1; d < m.rank; ++d) {
      int64_t coord = copy.coords[d] + rest % m.box[d];
      rest /= m.box[d];
      inside &= coord >= 0 && coord < m.dims[d];
      source += coord * m.strides[d];
    }
    for (int64_t x = 0; x < m.box[0]; ++x) {
      int64_t coord = copy.coords[0] + x;
      int64_t offset = blockc::emu::swizzleOffset(
          dstOffset + (row * m.box[0] + x) * e, width);
      if (inside && coord >= 0 && coord < m.dims[0]) {
        std::memcpy(l.shared + offset, m.base + source + coord * e, e);
        if (l.profiler)
          l.profiler->bulkGlobal(
              reinterpret_cast<uintptr_t>(m.base + source + coord * e), e);
      } else
        std::memcpy(l.shared + offset, fill, e);
    }
  }
}

/// Lands the TMA loads queued on `barrier` in order, each completing its
/// box's bytes of transactions.
void landCopies(Launch &l, Mbarrier &barrier) {
  std::vector<PendingTma> copies = std::move(barrier.copies);
  barrier.copies.clear();
  for (const PendingTma &copy : copies) {
    landTma(l, copy);
    barrier.tx -= copy.map->boxBytes();
    barrier.advance();
  }
}

/// Releases the threads waiting on an mbarrier whose phase of their parity
/// completed (after landing the TMA loads queued on it). Returns true if it
/// released any.
bool completeMbarrierWaits(Launch &l) {
  bool progress = false;
  for (ThreadState &t : l.threads) {
    if (t.status != Status::AtMbarrier)
      continue;
    Mbarrier &barrier = l.mbarriers[t.mbarrier];
    if (!barrier.copies.empty())
      landCopies(l, barrier);
    if ((barrier.phase & 1) != t.parity) {
      t.status = Status::Ready;
      progress = true;
    }
  }
  return progress;
}

/// Releases the threads of every named barrier that all its threads reached.
/// Returns true if it released any.
bool completeNamedBarriers(Launch &l) {
  bool progress = false;
  for (int32_t id = 0; id < kNamedBarriers; ++id) {
    NamedBarrier &b = l.named[id];
    if (b.arrived == 0 || b.arrived != b.count)
      continue;
    if (l.profiler)
      l.profiler->barrier();
    for (ThreadState &t : l.threads)
      if (t.status == Status::AtNamedBarrier && t.namedBarrier == id)
        t.status = Status::Ready;
    b.arrived = 0;
    progress = true;
  }
  return progress;
}

/// After a round in which every fiber ran until it blocked: completes what
/// can complete. Returns false when nothing could (or the launch failed).
bool completeCollectives(Launch &l) {
  if (l.atBarrier == l.threadCount && !l.barrierMixed) {
    if (l.profiler)
      l.profiler->barrier();
    for (ThreadState &t : l.threads)
      t.status = Status::Ready;
    l.atBarrier = 0;
    l.barrierSite = nullptr;
    return true;
  }
  bool progress = false;
  if (l.warpsAtShuffle > 0)
    for (size_t w = 0; w < l.warps.size() && !l.failed; ++w)
      if (l.warps[w].waiting > 0)
        progress |= completeWarp(l, w);
  progress |= completeMbarrierWaits(l);
  progress |= completeNamedBarriers(l);
  if (progress) {
    // Released threads no longer count at the barrier.
    l.atBarrier = 0;
    l.barrierSite = nullptr;
    l.barrierMixed = false;
    for (const ThreadState &t : l.threads) {
      if (t.status != Status::AtBarrier)
        continue;
      if (l.atBarrier++ == 0)
        l.barrierSite = t.site;
      else if (t.site != l.barrierSite)
        l.barrierMixed = true;
    }
  }
  return progress && !l.failed;
}

/// Fails a launch whose block cannot make progress.
void reportStuck(Launch &l) {
  // A warp whose shuffle cannot complete is the most precise description.
  for (size_t w = 0; w < l.warps.size(); ++w) {
    if (l.warps[w].waiting == 0)
      continue;
    int64_t begin = w * kWarpSize, end = begin + l.warps[w].lanes;
    bool exited = false;
    for (int64_t i = begin; i < end; ++i)
      exited |= l.threads[i].status == Status::Exited;
    l.fail(format("%s in block %s, warp %lld: %s",
                  exited ? "divergent shuffle" : "deadlock", l.block().c_str(),
                  static_cast<long long>(w),
                  describeWaits(l, begin, end).c_str()));
    return;
  }
  // Threads waiting on an mbarrier phase that cannot complete: a deadlock,
  // with the state of each barrier they wait on.
  std::vector<int64_t> barriers;
  for (const ThreadState &t : l.threads)
    if (t.status == Status::AtMbarrier &&
        std::find(barriers.begin(), barriers.end(), t.mbarrier) ==
            barriers.end())
      barriers.push_back(t.mbarrier);
  if (!barriers.empty()) {
    std::string states;
    for (int64_t offset : barriers) {
      const Mbarrier &b = l.mbarriers[offset];
      states += format("; the mbarrier at shared offset %lld is in phase %lld "
                       "with %d of %d arrivals and %lld transaction bytes "
                       "pending",
                       static_cast<long long>(offset),
                       static_cast<long long>(b.phase), b.pending, b.expected,
                       static_cast<long long>(b.tx));
    }
    l.fail(format("deadlock in block %s: %s%s", l.block().c_str(),
                  describeWaits(l, 0, l.threadCount).c_str(), states.c_str()));
    return;
  }
  l.fail(format("%s in block %s: %s",
                l.exited ? "divergent barrier" : "deadlock", l.block().c_str(),
                describeWaits(l, 0, l.threadCount).c_str()));
}

/// Runs the current block with one fiber per thread.
void runBlockOnFibers(Launch &l, StackPool &stacks) {
  for (size_t i = 0; i < l.threads.size(); ++i) {
    ThreadState &t = l.threads[i];
    Stack &stack = stacks[i];
    if (stack.dirty) {
      if (__asan_unpoison_memory_region)
        __asan_unpoison_memory_region(stack.base, kStackSize);
      stack.dirty = false;
    }
    t.status = Status::Ready;
    t.site = nullptr;
    t.resetAsyncCopies();
    t.stack = stack.base;
    t.fakeStack = stack.fakeStack;
    t.context =
        ctx::make_fcontext(stack.base + kStackSize, kStackSize, fiberMain);
  }
  for (WarpState &warp : l.warps) {
    warp.waiting = 0;
    warp.site = nullptr;
    warp.mixed = false;
  }
  l.exited = 0;
  l.atBarrier = 0;
  l.barrierSite = nullptr;
  l.barrierMixed = false;
  l.warpsAtShuffle = 0;
  for (NamedBarrier &b : l.named)
    b = NamedBarrier();
  l.mbarriers.clear();

  for (;;) {
    for (size_t i = 0; i < l.threads.size(); ++i) {
      if (l.threads[i].status != Status::Ready)
        continue;
      resume(l, l.threads[i]);
      if (l.failed)
        break;
    }
    if (l.failed || l.exited == l.threadCount)
      break;
    if (!completeCollectives(l)) {
      if (!l.failed)
        reportStuck(l);
      break;
    }
  }
  if (l.failed) {
    stacks.markDirty(l.threads.size());
    return;
  }
  for (size_t i = 0; i < l.threads.size(); ++i)
    stacks[i].fakeStack = l.threads[i].fakeStack;
}

/// The thread state behind `thread`, if it belongs to the launch running on
/// this thread; otherwise records an error.
ThreadState *threadState(BlockcEmuThread *thread, const char *function,
                         const char *site) {
  ThreadState *t =
      thread ? static_cast<ThreadState *>(thread->runtime) : nullptr;
  if (!t || !currentLaunch || t->launch != currentLaunch) {
    recordError(format("%s (at %s) called outside an emulated kernel launch",
                       function, siteName(site)));
    return nullptr;
  }
  return t;
}

/// Fails the launch from inside a kernel; a fiber is abandoned here.
void failInKernel(ThreadState &t, const std::string &message) {
  Launch &l = *t.launch;
  l.fail(message);
  if (l.fibers)
    yieldToScheduler(t); // never resumed
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// Checks a launch against CUDA's limits and the kernel's registration;
/// returns the error, or an empty string.
std::string checkLaunch(const Kernel &k, const int64_t grid[3],
                        const int64_t block[3], int64_t dynamicShared,
                        const int64_t *cluster) {
  static const char *axis[] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i)
    if (grid[i] < 1)
      return format("grid %s = %lld is not positive", axis[i],
                    static_cast<long long>(grid[i]));
  for (int i = 0; i < 3; ++i)
    if (block[i] < 1)
      return format("block %s = %lld is not positive", axis[i],
                    static_cast<long long>(block[i]));
  for (int i = 0; i < 3; ++i) {
    int64_t limit = i == 2 ? kMaxBlockZ : kMaxBlockXY;
    if (block[i] > limit)
      return format("block %s = %lld exceeds %lld", axis[i],
                    static_cast<long long>(block[i]),
                    static_cast<long long>(limit));
  }
  int64_t threads = block[0] * block[1] * block[2];
  if (threads > kMaxThreadsPerBlock)
    return format("block %s has %lld threads, more than %lld",
                  dims(block).c_str(), static_cast<long long>(threads),
                  static_cast<long long>(kMaxThreadsPerBlock));
  for (int i = 0; i < 3; ++i) {
    int64_t limit = i == 0 ? kMaxGridX : kMaxGridYZ;
    if (grid[i] > limit)
      return format("grid %s = %lld exceeds %lld", axis[i],
                    static_cast<long long>(grid[i]),
                    static_cast<long long>(limit));
  }
  if (k.staticShared < 0 || k.staticShared > kMaxStaticShared)
    return format("static shared memory of %lld bytes exceeds %lld",
                  static_cast<long long>(k.staticShared),
                  static_cast<long long>(kMaxStaticShared));
  if (dynamicShared < 0)
    return format("dynamic shared memory of %lld bytes is negative",
                  static_cast<long long>(dynamicShared));
  int64_t maxShared = k.maxShared > 0 ? k.maxShared : kMaxStaticShared;
  if (k.staticShared + dynamicShared > maxShared)
    return format("static (%lld) plus dynamic (%lld) shared memory is %lld "
                  "bytes, more than the target's %lld",
                  static_cast<long long>(k.staticShared),
                  static_cast<long long>(dynamicShared),
                  static_cast<long long>(k.staticShared + dynamicShared),
                  static_cast<long long>(maxShared));
  if ((k.known[0] || k.known[1] || k.known[2]) &&
      (block[0] != k.known[0] || block[1] != k.known[1] ||
       block[2] != k.known[2]))
    return format("block size %s differs from the kernel's known block size "
                  "%s",
                  dims(block).c_str(), dims(k.known).c_str());
  if (cluster) {
    for (int i = 0; i < 3; ++i)
      if (cluster[i] < 1)
        return format("cluster %s = %lld is not positive", axis[i],
                      static_cast<long long>(cluster[i]));
    for (int i = 0; i < 3; ++i)
      if (grid[i] % cluster[i])
        return format("cluster %s = %lld does not divide grid %s = %lld",
                      axis[i], static_cast<long long>(cluster[i]), axis[i],
                      static_cast<long long>(grid[i]));
    int64_t blocks = cluster[0] * cluster[1] * cluster[2];
    if (blocks > kMaxPortableCluster)
      return format("cluster %s has %lld blocks, more than the portable "
                    "%lld",
                    dims(cluster).c_str(), static_cast<long long>(blocks),
                    static_cast<long long>(kMaxPortableCluster));
  }
  return {};
}

/// blockcEmuSetLaunchObserver's observer and its argument.
std::atomic<BlockcEmuLaunchObserver> launchObserver{nullptr};
std::atomic<void *> launchObserverUser{nullptr};

void launchKernel(void *function, const int64_t grid[3], const int64_t block[3],
                  int32_t dynamicShared, void **params, void **extra,
                  size_t paramCount, const int64_t *cluster) {
  if (hasError())
    return;
  if (!function) {
    recordError("launch of a null kernel function (mgpuModuleGetFunction "
                "found no kernel)");
    return;
  }
  if (currentLaunch) {
    recordError(format("kernel '%s' launches a kernel (dynamic parallelism "
                       "is not emulated)",
                       currentLaunch->kernel.c_str()));
    return;
  }
  Kernel k;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    k = *static_cast<Kernel *>(function);
  }
  if (!k.registered) {
    recordError(format("kernel '%s' of emulator module '%s' was unregistered "
                       "before its launch",
                       k.name.c_str(), k.module.c_str()));
    return;
  }
  std::string problem = checkLaunch(k, grid, block, dynamicShared, cluster);
  if (problem.empty() && extra)
    problem = "kernel arguments in 'extra' are not supported";
  if (problem.empty() && paramCount && !params)
    problem =
        format("%zu kernel arguments but a null argument array", paramCount);
  if (!problem.empty()) {
    recordError("kernel '" + k.name + "': " + problem);
    return;
  }
  if (BlockcEmuLaunchObserver observer = launchObserver.load())
    observer(k.name.c_str(), launchObserverUser.load());

  LaunchResources &res = launchResources();
  std::lock_guard<std::mutex> lock(res.mutex);
  Launch l;
  l.kernel = k.name;
  l.fn = k.fn;
  l.params = params;
  l.sharedBytes = k.staticShared + dynamicShared;
  l.fibers = k.flags & BLOCKC_EMU_SYNCHRONIZES;
  l.threadCount = block[0] * block[1] * block[2];
  if (l.fibers && !res.stacks.reserve(l.threadCount, l.kernel))
    return;
  size_t sharedSize =
      (std::max<size_t>(l.sharedBytes, 1) + kSharedAlignment - 1) &
      ~(kSharedAlignment - 1);
  if (sharedSize > res.sharedCapacity) {
    std::free(res.shared);
    res.shared =
        static_cast<char *>(std::aligned_alloc(kSharedAlignment, sharedSize));
    res.sharedCapacity = res.shared ? sharedSize : 0;
    if (!res.shared) {
      recordError(format("kernel '%s': cannot allocate %zu bytes of shared "
                         "memory",
                         l.kernel.c_str(), sharedSize));
      return;
    }
  }
  l.shared = res.shared;

  l.threads.resize(l.threadCount);
  l.warps.resize((l.threadCount + kWarpSize - 1) / kWarpSize);
  for (size_t w = 0; w < l.warps.size(); ++w)
    l.warps[w].lanes = static_cast<int32_t>(
        std::min<int64_t>(kWarpSize, l.threadCount - w * kWarpSize));
  for (int64_t i = 0; i < l.threadCount; ++i) {
    ThreadState &t = l.threads[i];
    BlockcEmuThread &th = t.thread;
    th.threadId[0] = static_cast<int32_t>(i % block[0]);
    th.threadId[1] = static_cast<int32_t>(i / block[0] % block[1]);
    th.threadId[2] = static_cast<int32_t>(i / (block[0] * block[1]));
    for (int d = 0; d < 3; ++d) {
      th.blockDim[d] = static_cast<int32_t>(block[d]);
      th.gridDim[d] = static_cast<int32_t>(grid[d]);
    }
    th.laneId = static_cast<int32_t>(i % kWarpSize);
    th.reserved = 0;
    th.runtime = &t;
    t.launch = &l;
    t.warp = static_cast<int32_t>(i / kWarpSize);
  }

  // The profile: every block, or a sample spread over the grid.
  blockc::emu::LaunchProfiler profiler;
  int64_t totalBlocks = grid[0] * grid[1] * grid[2];
  int64_t sample = 0;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> profileLock(r.mutex);
    if (r.profiling) {
      l.profiler = &profiler;
      sample = r.sampleBlocks;
    }
  }
  int64_t runBlocks =
      sample > 0 ? std::min<int64_t>(sample, totalBlocks) : totalBlocks;

  // The blocks to run, by linear index: all of them, or a sample along the
  // grid's diagonal (block i of n at the middle of the i-th n-th of every
  // dimension, so that work varying along any one dimension, like causal
  // attention's query tiles, is averaged); where that would run a block
  // twice (n above every dimension), the middles of n equal runs of the
  // linear order.
  std::vector<int64_t> sampled;
  if (runBlocks < totalBlocks) {
    for (int64_t i = 0; i < runBlocks; ++i) {
      int64_t c[3];
      for (int d = 0; d < 3; ++d)
        c[d] = (2 * i + 1) * grid[d] / (2 * runBlocks);
      sampled.push_back(c[0] + grid[0] * (c[1] + grid[1] * c[2]));
    }
    std::vector<int64_t> sorted = sampled;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      for (int64_t i = 0; i < runBlocks; ++i)
        sampled[i] = (2 * i + 1) * totalBlocks / (2 * runBlocks);
  }

  currentLaunch = &l;
  int64_t blocks = 0;
  for (int64_t i = 0; i < runBlocks && !l.failed; ++i) {
    int64_t linear = sampled.empty() ? i : sampled[i];
    l.blockId[0] = static_cast<int32_t>(linear % grid[0]);
    l.blockId[1] = static_cast<int32_t>(linear / grid[0] % grid[1]);
    l.blockId[2] = static_cast<int32_t>(linear / (grid[0] * grid[1]));
    for (ThreadState &t : l.threads) {
      std::memcpy(t.thread.blockId, l.blockId, sizeof(l.blockId));
      t.occurrences.clear();
      t.wgmmaUncommitted = false;
      t.wgmmaGroups = 0;
    }
    // Uninitialised shared memory reads as NaN.
    std::memset(l.shared, 0xFF, sharedSize);
    ++blocks;
    if (l.fibers) {
      runBlockOnFibers(l, res.stacks);
    } else {
      for (ThreadState &t : l.threads) {
        t.resetAsyncCopies();
        l.fn(l.params, &t.thread, l.shared, l.sharedBytes);
        if (l.failed)
          break;
      }
    }
    if (l.profiler)
      profiler.endBlock();
  }
  currentLaunch = nullptr;
  if (l.profiler) {
    BlockcEmuLaunchProfile p = {};
    std::vector<std::pair<uint64_t, uint64_t>> allocations;
    {
      Registry &r = registry();
      std::lock_guard<std::mutex> allocationLock(r.mutex);
      for (const auto &[ptr, size] : r.allocations)
        allocations.emplace_back(reinterpret_cast<uintptr_t>(ptr),
                                 reinterpret_cast<uintptr_t>(ptr) + size);
    }
    blockc::emu::LaunchCounters c = profiler.finish(
        blocks ? static_cast<double>(totalBlocks) / blocks : 0.0, allocations);
    for (int d = 0; d < 3; ++d) {
      p.grid[d] = static_cast<int32_t>(grid[d]);
      p.block[d] = static_cast<int32_t>(block[d]);
    }
    p.sharedBytes = l.sharedBytes;
    p.blocksRun = blocks;
    p.blocksTotal = totalBlocks;
    p.flops = c.flops;
    p.tensorFlops16 = c.tensorFlops16;
    p.tensorFlopsTF32 = c.tensorFlopsTF32;
    p.globalRequests = c.globalRequests;
    p.globalSectors = c.globalSectors;
    p.globalBytes = c.globalBytes;
    p.uniqueBytes = c.uniqueBytes;
    p.sharedRequests = c.sharedRequests;
    p.sharedWavefronts = c.sharedWavefronts;
    p.barriers = c.barriers;
    Registry &r = registry();
    std::lock_guard<std::mutex> profileLock(r.mutex);
    if (r.profiling)
      r.profile.emplace_back(l.kernel, p);
  }
  if (l.outOfBounds > 1)
    std::fprintf(stderr,
                 "blockc GPU emulator: kernel '%s': %lld more out-of-bounds "
                 "access%s in this launch\n",
                 l.kernel.c_str(), static_cast<long long>(l.outOfBounds - 1),
                 l.outOfBounds > 2 ? "es" : "");

  Registry &r = registry();
  std::lock_guard<std::mutex> statsLock(r.mutex);
  r.stats.launches += 1;
  r.stats.blocks += blocks;
  r.stats.threads += blocks * l.threadCount;
  r.stats.fiberRuns += l.fibers ? 1 : 0;
  r.stats.switches += l.switches;
}

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

void *loadModule(const char *function, const char *data, size_t size) {
  size_t prefix = sizeof(kModulePrefix) - 1;
  if (!data || size < prefix || std::memcmp(data, kModulePrefix, prefix)) {
    const char *what = "";
    if (data && size >= 4 &&
        std::memcmp(data,
                    "\x7f"
                    "ELF",
                    4) == 0)
      what = " (it is an ELF object, a cubin)";
    else if (data && size >= 2 && (data[0] == '/' || data[0] == '.'))
      what = " (it looks like PTX)";
    recordError(format("%s: the GPU module is not an emulator module%s; "
                       "compile with --emulate",
                       function, what));
    return nullptr;
  }
  std::string name(data + prefix, size - prefix);
  while (!name.empty() && name.back() == '\0')
    name.pop_back();
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::unique_ptr<Module> &module = r.modules[name];
  if (!module)
    module.reset(new Module{name});
  return module.get();
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

void *newToken() {
  static std::atomic<uintptr_t> next{1};
  return reinterpret_cast<void *>(next.fetch_add(1) * 16);
}

} // namespace

//===----------------------------------------------------------------------===//
// blockcEmu* entry points
//===----------------------------------------------------------------------===//

BLOCKC_EXPORT void blockcEmuRegisterKernel(
    const char *module, const char *kernel, BlockcEmuKernelFn fn,
    int64_t staticSharedBytes, int64_t maxSharedBytes, int32_t flags,
    int32_t knownBlockX, int32_t knownBlockY, int32_t knownBlockZ) {
  if (!module || !kernel || !fn) {
    recordError(format("blockcEmuRegisterKernel('%s', '%s') without a %s",
                       module ? module : "", kernel ? kernel : "",
                       fn ? "name" : "function"));
    return;
  }
  auto k = std::make_unique<Kernel>();
  k->module = module;
  k->name = kernel;
  k->fn = fn;
  k->staticShared = staticSharedBytes;
  k->maxShared = maxSharedBytes;
  k->flags = flags;
  k->known[0] = knownBlockX;
  k->known[1] = knownBlockY;
  k->known[2] = knownBlockZ;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.kernels[{k->module, k->name}].push_back(k.get());
  r.registrations.push_back(std::move(k));
}

BLOCKC_EXPORT void blockcEmuUnregisterKernel(BlockcEmuKernelFn fn) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto it = r.kernels.begin(); it != r.kernels.end();) {
    std::vector<Kernel *> &stack = it->second;
    stack.erase(std::remove_if(stack.begin(), stack.end(),
                               [&](Kernel *k) {
                                 if (k->fn != fn)
                                   return false;
                                 k->registered = false;
                                 return true;
                               }),
                stack.end());
    it = stack.empty() ? r.kernels.erase(it) : std::next(it);
  }
}

/// LLVM legalizes some bf16 vector moves of the emulated tensor-core
/// kernels (fragment shuffles) through f32 and calls this compiler-rt
/// builtin, which libgcc lacks before GCC 13: objects linked with the
/// runtime find it here (round to nearest even, NaN kept quiet).
BLOCKC_EXPORT __bf16 __truncsfbf2(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t half;
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu))
    half = static_cast<uint16_t>((bits >> 16) | 0x0040u);
  else
    half = static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
  __bf16 result;
  std::memcpy(&result, &half, sizeof(result));
  return result;
}

BLOCKC_EXPORT void blockcEmuBarrier(BlockcEmuThread *thread, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuBarrier", site);
  if (!t)
    return;
  Launch &l = *t->launch;
  if (!l.fibers) {
    failInKernel(*t, format("reaches the barrier at %s but was registered "
                            "without BLOCKC_EMU_SYNCHRONIZES",
                            siteName(site)));
    return;
  }
  t->status = Status::AtBarrier;
  t->site = site;
  if (l.atBarrier++ == 0)
    l.barrierSite = site;
  else if (site != l.barrierSite)
    l.barrierMixed = true;
  yieldToScheduler(*t);
}

/// Enqueues the lane at the warp collective at `site` (a shuffle with
/// `width` and `mode`, or a matrix op, see kLdMatrixMode) and switches to
/// the scheduler until the warp completes it.
static void waitInWarp(ThreadState &t, const char *site, int32_t width,
                       int32_t mode) {
  Launch &l = *t.launch;
  t.status = Status::AtShuffle;
  t.site = site;
  t.width = width;
  t.mode = mode;
  WarpState &warp = l.warps[t.warp];
  if (warp.waiting++ == 0) {
    warp.site = site;
    ++l.warpsAtShuffle;
  } else if (site != warp.site) {
    warp.mixed = true;
  }
  yieldToScheduler(t);
}

BLOCKC_EXPORT int64_t blockcEmuShuffle32(BlockcEmuThread *thread, int32_t value,
                                         int32_t offset, int32_t width,
                                         int32_t mode, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuShuffle32", site);
  if (!t)
    return static_cast<uint32_t>(value);
  Launch &l = *t->launch;
  if (!l.fibers) {
    failInKernel(*t, format("reaches the shuffle at %s but was registered "
                            "without BLOCKC_EMU_SYNCHRONIZES",
                            siteName(site)));
    return static_cast<uint32_t>(value);
  }
  if (width < 1 || width > 32 || mode < 0 || mode > 3) {
    failInKernel(*t, format("the shuffle at %s has width %d and mode %d "
                            "(width must be 1 to 32, mode 0 to 3)",
                            siteName(site), width, mode));
    return static_cast<uint32_t>(value);
  }
  t->value = value;
  t->offset = offset;
  waitInWarp(*t, site, width, mode);
  return t->result;
}

/// Waits, as a lane of a matrix collective, at `site` with `mode` (every
/// lane of the warp must arrive).
static bool warpCollective(ThreadState *t, const char *function,
                           const char *site, int32_t mode) {
  if (!t->launch->fibers) {
    failInKernel(*t, format("reaches %s at %s but was registered without "
                            "BLOCKC_EMU_SYNCHRONIZES",
                            function, siteName(site)));
    return false;
  }
  t->offset = 0;
  waitInWarp(*t, site, kWarpSize, mode);
  return true;
}

BLOCKC_EXPORT void blockcEmuLdMatrix(BlockcEmuThread *thread, const void *row,
                                     void *result, int32_t tiles,
                                     int32_t transpose, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuLdMatrix", site);
  if (!t)
    return;
  if ((tiles != 1 && tiles != 2 && tiles != 4) || (transpose & ~1)) {
    failInKernel(*t, format("ldmatrix at %s has %d tiles and transpose %d "
                            "(1, 2 or 4 tiles; transpose 0 or 1)",
                            siteName(site), tiles, transpose));
    return;
  }
  t->operands[0] = row;
  t->resultAddress = result;
  warpCollective(t, "ldmatrix", site, kLdMatrixMode + 2 * tiles + transpose);
}

BLOCKC_EXPORT void blockcEmuMma(BlockcEmuThread *thread, int32_t type,
                                const void *a, const void *b, const void *c,
                                void *d, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuMma", site);
  if (!t)
    return;
  if (type < 0 || type > 2) {
    failInKernel(*t, format("mma.sync at %s has multiplicand type %d (0 bf16 "
                            "m16n8k16, 1 f16 m16n8k16, 2 tf32 m16n8k8)",
                            siteName(site), type));
    return;
  }
  t->operands[0] = a;
  t->operands[1] = b;
  t->operands[2] = c;
  t->resultAddress = d;
  warpCollective(t, "mma.sync", site, kMmaMode + type);
}

BLOCKC_EXPORT void blockcEmuCpAsync(BlockcEmuThread *thread, void *dst,
                                    const void *src, int32_t dstBytes,
                                    int32_t srcBytes, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuCpAsync", site);
  if (!t)
    return;
  Launch &l = *t->launch;
  const char *d = static_cast<const char *>(dst);
  const char *sp = static_cast<const char *>(src);
  auto addressInt = [](const void *p) {
    return reinterpret_cast<uintptr_t>(p);
  };
  std::string problem;
  if (dstBytes != 4 && dstBytes != 8 && dstBytes != 16)
    problem = format("copies %d bytes (4, 8 or 16)", dstBytes);
  else if (srcBytes < 0 || srcBytes > dstBytes)
    problem = format("reads %d source bytes into %d (0 to %d)", srcBytes,
                     dstBytes, dstBytes);
  else if (d < l.shared || d + dstBytes > l.shared + l.sharedBytes)
    problem = format("writes outside the block's %lld bytes of shared memory",
                     static_cast<long long>(l.sharedBytes));
  else if ((d - l.shared) % dstBytes != 0 || addressInt(src) % dstBytes != 0)
    problem = format("has an address not aligned to its %d bytes", dstBytes);
  else if (srcBytes > 0 && sp + srcBytes > l.shared &&
           sp < l.shared + l.sharedBytes)
    problem = "reads shared memory (the source must be global memory)";
  if (!problem.empty()) {
    failInKernel(*t, format("thread %s of block %s: cp.async at %s %s",
                            dims(t->thread.threadId).c_str(), l.block().c_str(),
                            siteName(site), problem.c_str()));
    return;
  }
  if (l.profiler) {
    uint64_t key = reinterpret_cast<uintptr_t>(site);
    uint32_t n = t->occurrences[key]++;
    if (srcBytes > 0)
      l.profiler->access(t->warp, t->thread.laneId, key, n, addressInt(src),
                         srcBytes, /*shared=*/false);
    // The shared-memory write is its own request (after the read).
    l.profiler->access(t->warp, t->thread.laneId, key + 1, n, addressInt(dst),
                       dstBytes, /*shared=*/true);
  }
  t->openCopies.push_back({static_cast<char *>(dst), sp, dstBytes, srcBytes});
}

BLOCKC_EXPORT void blockcEmuCpAsyncCommit(BlockcEmuThread *thread) {
  ThreadState *t = threadState(thread, "blockcEmuCpAsyncCommit", nullptr);
  if (!t)
    return;
  t->copyGroups.push_back(std::move(t->openCopies));
  t->openCopies.clear();
}

BLOCKC_EXPORT void blockcEmuCpAsyncWait(BlockcEmuThread *thread,
                                        int32_t pending, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuCpAsyncWait", site);
  if (!t)
    return;
  if (pending < 0) {
    failInKernel(*t, format("cp.async.wait_group at %s allows %d pending "
                            "groups",
                            siteName(site), pending));
    return;
  }
  // The copies land now: until then the destination keeps what it held
  // (0xFF bytes in a fresh block), so a read before the wait shows.
  while (t->copyGroups.size() > static_cast<size_t>(pending)) {
    for (const AsyncCopy &copy : t->copyGroups.front()) {
      std::memcpy(copy.dst, copy.src, copy.srcBytes);
      std::memset(copy.dst + copy.srcBytes, 0, copy.dstBytes - copy.srcBytes);
    }
    t->copyGroups.pop_front();
  }
}

//===----------------------------------------------------------------------===//
// Hopper: mbarriers, TMA, wgmma
//===----------------------------------------------------------------------===//

namespace {

/// The tensor maps that mgpuTensorMapEncodeTiledMemref made, interned:
/// equal maps share one entry. A map names a buffer's address, so programs
/// that allocate new buffers make new maps: past kMaxTensorMaps the old ones
/// are forgotten (launches complete before they return, so none is in use;
/// a forgotten pointer is reported as not a tensor map).
constexpr size_t kMaxTensorMaps = 4096;

struct TensorMaps {
  std::mutex mutex;
  std::set<TensorMap> maps;
  std::unordered_set<const void *> valid;
};

TensorMaps &tensorMaps() {
  static TensorMaps *maps = new TensorMaps;
  return *maps;
}

/// "thread (x,y,z) of block (x,y,z)": how the Hopper errors start.
std::string threadInBlock(const ThreadState &t) {
  return format("thread %s of block %s", dims(t.thread.threadId).c_str(),
                t.launch->block().c_str());
}

/// Fails the launch unless the kernel runs on fibers (was registered with
/// BLOCKC_EMU_SYNCHRONIZES).
bool needsFibers(ThreadState &t, const char *what, const char *site) {
  if (t.launch->fibers)
    return true;
  failInKernel(t, format("reaches %s at %s but was registered without "
                         "BLOCKC_EMU_SYNCHRONIZES",
                         what, siteName(site)));
  return false;
}

/// The shared offset of the mbarrier at `address`, or -1 after failing the
/// launch (outside shared memory or misaligned).
int64_t mbarrierOffset(ThreadState &t, const void *address, const char *what,
                       const char *site) {
  Launch &l = *t.launch;
  const char *p = static_cast<const char *>(address);
  if (p < l.shared || p + 8 > l.shared + l.sharedBytes) {
    failInKernel(t, format("%s: %s at %s uses an mbarrier outside the block's "
                           "%lld bytes of shared memory",
                           threadInBlock(t).c_str(), what, siteName(site),
                           static_cast<long long>(l.sharedBytes)));
    return -1;
  }
  int64_t offset = p - l.shared;
  if (offset % 8 != 0) {
    failInKernel(t, format("%s: %s at %s uses an mbarrier at shared offset "
                           "%lld, not 8-byte aligned",
                           threadInBlock(t).c_str(), what, siteName(site),
                           static_cast<long long>(offset)));
    return -1;
  }
  return offset;
}

/// The initialised mbarrier at `address`, or null after failing the launch.
Mbarrier *findMbarrier(ThreadState &t, const void *address, const char *what,
                       const char *site, int64_t *offsetOut = nullptr) {
  int64_t offset = mbarrierOffset(t, address, what, site);
  if (offset < 0)
    return nullptr;
  Launch &l = *t.launch;
  auto it = l.mbarriers.find(offset);
  if (it == l.mbarriers.end()) {
    failInKernel(t, format("%s: %s at %s uses the mbarrier at shared offset "
                           "%lld before its init",
                           threadInBlock(t).c_str(), what, siteName(site),
                           static_cast<long long>(offset)));
    return nullptr;
  }
  if (offsetOut)
    *offsetOut = offset;
  return &it->second;
}

const char *swizzleName(int32_t swizzle) {
  static const char *names[] = {"no swizzle", "32B swizzle", "64B swizzle",
                                "128B swizzle"};
  return swizzle >= 0 && swizzle < 4 ? names[swizzle] : "?";
}

/// Bytes per element of a CUtensorMapDataType (0 if it is not one of
/// 0-12).
int32_t tensorElementBytes(int64_t dataType) {
  static const int32_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return dataType >= 0 && dataType < 13 ? bytes[dataType] : 0;
}

/// Checks and builds a tensor map; returns the problem, or an empty string.
std::string encodeTensorMap(int64_t rank, void *rankedDescriptor,
                            int64_t dataType, int64_t interleave,
                            int64_t swizzle, int64_t oobFill,
                            const int64_t *boxDims, TensorMap &m) {
  if (rank < 1 || rank > kMaxTensorRank)
    return format("rank %lld is not 1 to %d", static_cast<long long>(rank),
                  kMaxTensorRank);
  if (!rankedDescriptor || !boxDims)
    return "a null memref descriptor or box";
  int32_t e = tensorElementBytes(dataType);
  if (!e)
    return format("data type %lld is not a CUtensorMapDataType of 0 to 12",
                  static_cast<long long>(dataType));
  if (interleave != 0)
    return format("interleave %lld is not modelled (only 0, "
                  "CU_TENSOR_MAP_INTERLEAVE_NONE)",
                  static_cast<long long>(interleave));
  if (swizzle < 0 || swizzle > 3)
    return format("swizzle %lld is not 0 to 3 (none, 32B, 64B, 128B)",
                  static_cast<long long>(swizzle));
  if (oobFill != 0 && oobFill != 1)
    return format("OOB fill %lld is not 0 (zeros) or 1 (NaN)",
                  static_cast<long long>(oobFill));
  if (oobFill == 1 && dataType < 6)
    return format("NaN OOB fill needs a floating-point data type, not %lld",
                  static_cast<long long>(dataType));
  // {allocated, aligned, offset, sizes[rank], strides[rank]}.
  const auto *fields = static_cast<const int64_t *>(rankedDescriptor);
  const char *aligned = reinterpret_cast<const char *>(fields[1]);
  int64_t offset = fields[2];
  const int64_t *sizes = fields + 3, *strides = fields + 3 + rank;
  m.base = aligned + offset * e;
  m.rank = static_cast<int32_t>(rank);
  m.dataType = static_cast<int32_t>(dataType);
  m.elementBytes = e;
  m.swizzle = static_cast<int32_t>(swizzle);
  m.oobFill = static_cast<int32_t>(oobFill);
  if (strides[rank - 1] != 1)
    return format("the innermost stride is %lld, not 1",
                  static_cast<long long>(strides[rank - 1]));
  if (reinterpret_cast<uintptr_t>(m.base) % 16 != 0)
    return format("the base address %p (aligned pointer %p plus %lld "
                  "elements) is not 16-byte aligned",
                  static_cast<const void *>(m.base),
                  static_cast<const void *>(aligned),
                  static_cast<long long>(offset));
  // Dimension d of the map is dimension rank - 1 - d of the memref.
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = rank - 1 - i;
    if (sizes[i] < 1 || sizes[i] > (int64_t(1) << 32))
      return format("size %lld of dimension %lld is not 1 to 2^32",
                    static_cast<long long>(sizes[i]),
                    static_cast<long long>(i));
    if (d > 0 && (strides[i] < 1 || strides[i] * e % 16 != 0 ||
                  strides[i] * e >= (int64_t(1) << 40)))
      return format("stride %lld of dimension %lld is %lld bytes, not a "
                    "positive multiple of 16 below 2^40",
                    static_cast<long long>(strides[i]),
                    static_cast<long long>(i),
                    static_cast<long long>(strides[i] * e));
    if (boxDims[i] < 1 || boxDims[i] > 256)
      return format("box size %lld of dimension %lld is not 1 to 256",
                    static_cast<long long>(boxDims[i]),
                    static_cast<long long>(i));
    m.dims[d] = sizes[i];
    m.strides[d] = strides[i] * e;
    m.box[d] = static_cast<int32_t>(boxDims[i]);
  }
  int64_t rowBytes = m.box[0] * e;
  if (rowBytes % 16 != 0)
    return format("the innermost box dimension is %lld bytes, not a multiple "
                  "of 16",
                  static_cast<long long>(rowBytes));
  if (m.swizzle && rowBytes > m.swizzleWidth())
    return format("the innermost box dimension is %lld bytes, more than the "
                  "%d bytes of its %s",
                  static_cast<long long>(rowBytes), m.swizzleWidth(),
                  swizzleName(m.swizzle));
  return {};
}

} // namespace

BLOCKC_EXPORT void blockcEmuNamedBarrier(BlockcEmuThread *thread, int32_t id,
                                         int32_t count, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuNamedBarrier", site);
  if (!t || !needsFibers(*t, "bar.sync", site))
    return;
  Launch &l = *t->launch;
  if (id < 0 || id >= kNamedBarriers) {
    failInKernel(*t, format("%s: bar.sync at %s uses barrier %d (0 to %d)",
                            threadInBlock(*t).c_str(), siteName(site), id,
                            kNamedBarriers - 1));
    return;
  }
  if (count <= 0 || count % kWarpSize != 0 || count > l.threadCount) {
    failInKernel(*t, format("%s: bar.sync at %s expects %d threads (a "
                            "positive multiple of 32 up to the block's %lld)",
                            threadInBlock(*t).c_str(), siteName(site), count,
                            static_cast<long long>(l.threadCount)));
    return;
  }
  NamedBarrier &b = l.named[id];
  if (b.arrived == 0) {
    b.count = count;
  } else if (b.count != count) {
    failInKernel(*t, format("%s: bar.sync at %s expects %d threads at barrier "
                            "%d, where the %d threads waiting there expect %d",
                            threadInBlock(*t).c_str(), siteName(site), count,
                            id, b.arrived, b.count));
    return;
  }
  ++b.arrived;
  t->status = Status::AtNamedBarrier;
  t->site = site;
  t->namedBarrier = id;
  yieldToScheduler(*t);
}

BLOCKC_EXPORT void blockcEmuMbarrierInit(BlockcEmuThread *thread, void *barrier,
                                         int32_t count, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuMbarrierInit", site);
  if (!t || !needsFibers(*t, "mbarrier.init", site))
    return;
  int64_t offset = mbarrierOffset(*t, barrier, "mbarrier.init", site);
  if (offset < 0)
    return;
  if (count < 1 || count > kMaxMbarrierCount) {
    failInKernel(*t, format("%s: mbarrier.init at %s has count %d (1 to %lld)",
                            threadInBlock(*t).c_str(), siteName(site), count,
                            static_cast<long long>(kMaxMbarrierCount)));
    return;
  }
  Mbarrier &b = t->launch->mbarriers[offset];
  if (!b.copies.empty()) {
    failInKernel(*t, format("%s: mbarrier.init at %s initialises the mbarrier "
                            "at shared offset %lld while %zu TMA loads are "
                            "queued on it",
                            threadInBlock(*t).c_str(), siteName(site),
                            static_cast<long long>(offset), b.copies.size()));
    return;
  }
  b = Mbarrier();
  b.expected = b.pending = count;
}

BLOCKC_EXPORT void blockcEmuMbarrierArrive(BlockcEmuThread *thread,
                                           void *barrier, int32_t txBytes,
                                           const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuMbarrierArrive", site);
  const char *what = "mbarrier.arrive";
  if (!t || !needsFibers(*t, what, site))
    return;
  int64_t offset;
  Mbarrier *b = findMbarrier(*t, barrier, what, site, &offset);
  if (!b)
    return;
  if (txBytes < 0 || b->tx + txBytes > kMaxTxCount) {
    failInKernel(*t, format("%s: %s at %s expects %d transaction bytes on the "
                            "mbarrier at shared offset %lld (%lld pending; "
                            "the count must stay within 0 to %lld)",
                            threadInBlock(*t).c_str(), what, siteName(site),
                            txBytes, static_cast<long long>(offset),
                            static_cast<long long>(b->tx),
                            static_cast<long long>(kMaxTxCount)));
    return;
  }
  if (b->pending == 0) {
    failInKernel(*t, format("%s: %s at %s arrives at the mbarrier at shared "
                            "offset %lld in phase %lld, whose %d expected "
                            "arrivals all arrived (%lld transaction bytes "
                            "pending)",
                            threadInBlock(*t).c_str(), what, siteName(site),
                            static_cast<long long>(offset),
                            static_cast<long long>(b->phase), b->expected,
                            static_cast<long long>(b->tx)));
    return;
  }
  b->tx += txBytes;
  --b->pending;
  b->advance();
}

BLOCKC_EXPORT void blockcEmuMbarrierTryWaitParity(BlockcEmuThread *thread,
                                                  void *barrier, int32_t parity,
                                                  const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuMbarrierTryWaitParity", site);
  const char *what = "mbarrier.try_wait.parity";
  if (!t || !needsFibers(*t, what, site))
    return;
  int64_t offset;
  Mbarrier *b = findMbarrier(*t, barrier, what, site, &offset);
  if (!b)
    return;
  if (parity != 0 && parity != 1) {
    failInKernel(*t, format("%s: %s at %s has parity %d (0 or 1)",
                            threadInBlock(*t).c_str(), what, siteName(site),
                            parity));
    return;
  }
  // The TMA loads queued on the barrier land now.
  if (!b->copies.empty())
    landCopies(*t->launch, *b);
  if ((b->phase & 1) != parity)
    return; // the phase of this parity completed
  t->status = Status::AtMbarrier;
  t->site = site;
  t->mbarrier = offset;
  t->parity = parity;
  yieldToScheduler(*t); // resumed when the phase completed
}

BLOCKC_EXPORT void blockcEmuTmaLoad(BlockcEmuThread *thread, void *dst,
                                    const void *tensorMap, int32_t rank,
                                    const int32_t *coords, void *barrier,
                                    const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuTmaLoad", site);
  const char *what = "the TMA load";
  if (!t || !needsFibers(*t, what, site))
    return;
  Launch &l = *t->launch;
  const TensorMap *m = nullptr;
  {
    TensorMaps &maps = tensorMaps();
    std::lock_guard<std::mutex> lock(maps.mutex);
    if (maps.valid.count(tensorMap))
      m = static_cast<const TensorMap *>(tensorMap);
  }
  const char *d = static_cast<const char *>(dst);
  std::string problem;
  if (!m) {
    problem = "has a tensor map that mgpuTensorMapEncodeTiledMemref did not "
              "make";
  } else if (rank != m->rank || !coords) {
    problem =
        format("gives %d coordinates for a rank-%d tensor map", rank, m->rank);
  } else if (d < l.shared || d >= l.shared + l.sharedBytes) {
    problem = format("writes outside the block's %lld bytes of shared memory",
                     static_cast<long long>(l.sharedBytes));
  } else {
    int64_t offset = d - l.shared;
    int width = m->swizzleWidth();
    // The swizzle's repeat: 8 rows of its width (128 bytes without).
    int64_t alignment = width ? 8 * width : 128;
    // Swizzled chunks stay within their `width`-byte segment.
    int64_t granule = width ? width : 16;
    int64_t span = (m->boxBytes() + granule - 1) / granule * granule;
    if (offset % alignment != 0)
      problem =
          format("writes to shared offset %lld, not aligned to the %lld "
                 "bytes that its %s needs",
                 static_cast<long long>(offset),
                 static_cast<long long>(alignment), swizzleName(m->swizzle));
    else if (offset + span > l.sharedBytes)
      problem =
          format("writes a box of %lld bytes at shared offset %lld, "
                 "past the end of the block's %lld bytes of shared "
                 "memory",
                 static_cast<long long>(span), static_cast<long long>(offset),
                 static_cast<long long>(l.sharedBytes));
  }
  if (!problem.empty()) {
    failInKernel(*t, format("%s: %s at %s %s", threadInBlock(*t).c_str(), what,
                            siteName(site), problem.c_str()));
    return;
  }
  Mbarrier *b = findMbarrier(*t, barrier, what, site);
  if (!b)
    return;
  PendingTma copy = {m, static_cast<char *>(dst), {}};
  std::copy(coords, coords + rank, copy.coords);
  b->copies.push_back(copy);
}

BLOCKC_EXPORT void blockcEmuWgmmaCommit(BlockcEmuThread *thread,
                                        int32_t waitDepth, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuWgmmaCommit", site);
  if (!t)
    return;
  if (t->wgmmaUncommitted) {
    ++t->wgmmaGroups;
    t->wgmmaUncommitted = false;
  }
  t->wgmmaGroups = std::min(t->wgmmaGroups, std::max(waitDepth, 0));
}

BLOCKC_EXPORT void blockcEmuWgmmaWait(BlockcEmuThread *thread, int32_t pending,
                                      const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuWgmmaWait", site);
  if (!t)
    return;
  t->wgmmaGroups = std::min(t->wgmmaGroups, std::max(pending, 0));
}

BLOCKC_EXPORT void blockcEmuWgmmaRead(BlockcEmuThread *thread,
                                      const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuWgmmaRead", site);
  if (!t)
    return;
  if (t->wgmmaUncommitted)
    failInKernel(*t, format("%s: %s reads a warpgroup accumulator whose "
                            "wgmma were not committed and waited for "
                            "(wgmma.commit_group, wgmma.wait_group)",
                            threadInBlock(*t).c_str(), siteName(site)));
  else if (t->wgmmaGroups > 0)
    failInKernel(*t,
                 format("%s: %s reads a warpgroup accumulator while %d "
                        "wgmma group%s in flight: wait for %s with "
                        "wgmma.wait_group 0 first",
                        threadInBlock(*t).c_str(), siteName(site),
                        t->wgmmaGroups, t->wgmmaGroups == 1 ? " is" : "s are",
                        t->wgmmaGroups == 1 ? "it" : "them"));
}

BLOCKC_EXPORT void blockcEmuWgmma(BlockcEmuThread *thread, int32_t type,
                                  uint64_t descA, uint64_t descB, int32_t n,
                                  int32_t transposeA, int32_t transposeB,
                                  float *acc, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuWgmma", site);
  if (!t || !needsFibers(*t, "wgmma", site))
    return;
  Launch &l = *t->launch;
  std::string problem;
  blockc::emu::MatrixDescriptor a = blockc::emu::decodeDescriptor(descA);
  blockc::emu::MatrixDescriptor b = blockc::emu::decodeDescriptor(descB);
  if (type != 0 && type != 1)
    problem = format("has multiplicand type %d (0 bf16, 1 f16)", type);
  else if (n < 8 || n > 256 || n % 8 != 0)
    problem = format("has n = %d (8 to 256, a multiple of 8)", n);
  else if (transposeA || (transposeB & ~1) ||
           (transposeB && b.swizzleMode == 0))
    problem = format("has transpose flags A %d, B %d (B swizzle mode %d): "
                     "an MN-major A, or an MN-major B without a swizzle, is "
                     "not modelled",
                     transposeA, transposeB, b.swizzleMode);
  else if (a.baseOffset || b.baseOffset)
    problem = format("has descriptor base offsets A %d, B %d: only 0 is "
                     "modelled",
                     a.baseOffset, b.baseOffset);
  else if (l.threadCount % kWarpgroupSize != 0)
    problem = format("needs whole warpgroups; the block has %lld threads, not "
                     "a multiple of 128",
                     static_cast<long long>(l.threadCount));
  if (problem.empty()) {
    int32_t linear = static_cast<int32_t>(t - l.threads.data());
    int64_t bad = blockc::emu::wgmmaThread(
        static_cast<blockc::emu::MmaType>(type), descA, descB, n,
        linear % kWarpgroupSize, l.shared, l.sharedBytes, acc, transposeB != 0);
    t->wgmmaUncommitted = true;
    // m64nNk16: 2 x 64 x N x 16 FLOPs per warpgroup, a 128th per thread.
    if (l.profiler)
      l.profiler->tensorFlops(2.0 * 64 * n * 16 / kWarpgroupSize,
                              /*tf32=*/false);
    if (bad >= 0)
      problem = format(
          "reads shared offset %lld, outside the block's %lld bytes of shared "
          "memory (A: start %lld, SBO %lld, LBO %lld, mode %d; B: start %lld, "
          "SBO %lld, LBO %lld, mode %d)",
          static_cast<long long>(bad), static_cast<long long>(l.sharedBytes),
          static_cast<long long>(a.start),
          static_cast<long long>(a.strideOffset),
          static_cast<long long>(a.leadingOffset), a.swizzleMode,
          static_cast<long long>(b.start),
          static_cast<long long>(b.strideOffset),
          static_cast<long long>(b.leadingOffset), b.swizzleMode);
  }
  if (!problem.empty())
    failInKernel(*t, format("%s: wgmma.m64n%dk16 at %s %s",
                            threadInBlock(*t).c_str(), n, siteName(site),
                            problem.c_str()));
}

BLOCKC_EXPORT void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *rankedDescriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t /*l2promo*/, int64_t oobFill, int64_t *boxDims) {
  TensorMap m;
  std::string problem =
      encodeTensorMap(rank, rankedDescriptor, dataType, interleave, swizzle,
                      oobFill, boxDims, m);
  if (!problem.empty()) {
    recordError("mgpuTensorMapEncodeTiledMemref: " + problem);
    return nullptr;
  }
  TensorMaps &maps = tensorMaps();
  std::lock_guard<std::mutex> lock(maps.mutex);
  if (maps.maps.size() >= kMaxTensorMaps && !maps.maps.count(m)) {
    maps.maps.clear();
    maps.valid.clear();
  }
  const TensorMap *interned = &*maps.maps.insert(m).first;
  maps.valid.insert(interned);
  return const_cast<TensorMap *>(interned);
}

BLOCKC_EXPORT void blockcEmuOutOfBounds(BlockcEmuThread *thread,
                                        const char *site, int64_t dim,
                                        int64_t index, int64_t size) {
  ThreadState *t = threadState(thread, "blockcEmuOutOfBounds", site);
  if (!t)
    return;
  Launch &l = *t->launch;
  if (l.outOfBounds++ == 0)
    recordError(format(
        "kernel '%s': out-of-bounds access at %s in thread %s "
        "of block %s: index %lld is outside [0, %lld) in "
        "dimension %lld",
        l.kernel.c_str(), siteName(site), dims(t->thread.threadId).c_str(),
        l.block().c_str(), static_cast<long long>(index),
        static_cast<long long>(size), static_cast<long long>(dim)));
}

BLOCKC_EXPORT const char *blockcEmuLastError(void) {
  ErrorState &state = errorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.set ? state.message.c_str() : nullptr;
}

BLOCKC_EXPORT void blockcEmuClearError(void) {
  ErrorState &state = errorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.message.clear();
  state.set.store(false, std::memory_order_release);
}

BLOCKC_EXPORT void blockcEmuSetLaunchObserver(BlockcEmuLaunchObserver observer,
                                              void *user) {
  launchObserverUser.store(user);
  launchObserver.store(observer);
}

BLOCKC_EXPORT void blockcEmuGetStats(BlockcEmuStats *stats) {
  if (!stats)
    return;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  *stats = r.stats;
}

//===----------------------------------------------------------------------===//
// mgpu* host functions (docs/RuntimeABI.md)
//===----------------------------------------------------------------------===//

BLOCKC_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  return loadModule("mgpuModuleLoad", static_cast<const char *>(data),
                    data ? size : 0);
}

BLOCKC_EXPORT void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  const char *text = static_cast<const char *>(data);
  return loadModule("mgpuModuleLoadJIT", text, text ? std::strlen(text) : 0);
}

BLOCKC_EXPORT void mgpuModuleUnload(void * /*module*/) {
  // Modules are names; kernels are unregistered by their own modules.
}

BLOCKC_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module) {
    recordError(format("mgpuModuleGetFunction('%s') on a null module (the "
                       "GPU module did not load)",
                       name ? name : ""));
    return nullptr;
  }
  const std::string &moduleName = static_cast<Module *>(module)->name;
  Registry &r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.kernels.find({moduleName, name ? name : ""});
    if (it != r.kernels.end() && !it->second.empty())
      return it->second.back();
  }
  recordError(format("kernel '%s' is not registered in emulator module '%s'",
                     name ? name : "", moduleName.c_str()));
  return nullptr;
}

BLOCKC_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                    intptr_t gridY, intptr_t gridZ,
                                    intptr_t blockX, intptr_t blockY,
                                    intptr_t blockZ, int32_t smem,
                                    void * /*stream*/, void **params,
                                    void **extra, size_t paramsCount) {
  int64_t grid[3] = {gridX, gridY, gridZ};
  int64_t block[3] = {blockX, blockY, blockZ};
  launchKernel(function, grid, block, smem, params, extra, paramsCount,
               nullptr);
}

BLOCKC_EXPORT void
mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY,
                        intptr_t clusterZ, intptr_t gridX, intptr_t gridY,
                        intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                        intptr_t blockZ, int32_t smem, void * /*stream*/,
                        void **params, void **extra, size_t paramsCount) {
  int64_t cluster[3] = {clusterX, clusterY, clusterZ};
  int64_t grid[3] = {gridX, gridY, gridZ};
  int64_t block[3] = {blockX, blockY, blockZ};
  launchKernel(function, grid, block, smem, params, extra, paramsCount,
               cluster);
}

// Streams and events are tokens: every operation completes before the call
// that issues it returns.
BLOCKC_EXPORT void *mgpuStreamCreate() { return newToken(); }
BLOCKC_EXPORT void mgpuStreamDestroy(void * /*stream*/) {}
BLOCKC_EXPORT void mgpuStreamSynchronize(void * /*stream*/) {}
BLOCKC_EXPORT void mgpuStreamWaitEvent(void * /*stream*/, void * /*event*/) {}
BLOCKC_EXPORT void *mgpuEventCreate() { return newToken(); }
BLOCKC_EXPORT void mgpuEventDestroy(void * /*event*/) {}
BLOCKC_EXPORT void mgpuEventSynchronize(void * /*event*/) {}
BLOCKC_EXPORT void mgpuEventRecord(void * /*event*/, void * /*stream*/) {}

//===----------------------------------------------------------------------===//
// Memory access hooks and the profile
//===----------------------------------------------------------------------===//

BLOCKC_EXPORT void blockcEmuAccess(BlockcEmuThread *thread, int32_t site,
                                   const void *address, int32_t bytes,
                                   int32_t flags, const char *what) {
  ThreadState *t = threadState(thread, "blockcEmuAccess", what);
  if (!t)
    return;
  Launch &l = *t->launch;
  auto a = reinterpret_cast<uintptr_t>(address);
  bool shared = flags & BLOCKC_EMU_ACCESS_SHARED;
  if ((flags & BLOCKC_EMU_ACCESS_CHECK) && !shared &&
      !(flags & BLOCKC_EMU_ACCESS_CONSTANT)) {
    // Global memory must be device memory: a host pointer faults on a GPU.
    if (!l.allocationsRead) {
      Registry &r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      for (const auto &[ptr, size] : r.allocations)
        l.allocations.emplace_back(reinterpret_cast<uintptr_t>(ptr),
                                   reinterpret_cast<uintptr_t>(ptr) + size);
      l.allocationsRead = true;
    }
    auto it = std::upper_bound(
        l.allocations.begin(), l.allocations.end(),
        std::make_pair(a, std::numeric_limits<uintptr_t>::max()));
    bool inside = it != l.allocations.begin() && a >= std::prev(it)->first &&
                  a + bytes <= std::prev(it)->second;
    if (!inside) {
      failInKernel(
          *t, format("%s: %s %s address %p, which is not "
                     "device memory (no live mgpuMemAlloc "
                     "allocation holds its %d bytes; a host pointer "
                     "faults on a GPU)",
                     threadInBlock(*t).c_str(), siteName(what),
                     (flags & BLOCKC_EMU_ACCESS_STORE) ? "writes" : "reads",
                     address, bytes));
      return;
    }
  }
  if (l.profiler && !(flags & BLOCKC_EMU_ACCESS_UNCOUNTED)) {
    auto key = static_cast<uint64_t>(static_cast<uint32_t>(site));
    l.profiler->access(t->warp, t->thread.laneId, key, t->occurrences[key]++, a,
                       bytes, shared);
  }
}

BLOCKC_EXPORT void blockcEmuFlops(BlockcEmuThread *thread, int64_t flops) {
  auto *t = static_cast<ThreadState *>(thread->runtime);
  if (t && t->launch && t->launch->profiler)
    t->launch->profiler->flops(static_cast<double>(flops));
}

BLOCKC_EXPORT void blockcEmuProfileBegin(int64_t sampleBlocks) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.profiling = true;
  r.sampleBlocks = sampleBlocks > 0 ? sampleBlocks : 0;
  r.profile.clear();
}

BLOCKC_EXPORT void blockcEmuProfileEnd(void) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.profiling = false;
  r.sampleBlocks = 0;
}

BLOCKC_EXPORT int64_t blockcEmuProfileLaunches(void) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return static_cast<int64_t>(r.profile.size());
}

BLOCKC_EXPORT int blockcEmuProfileGetLaunch(int64_t index,
                                            BlockcEmuLaunchProfile *out) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!out || index < 0 || index >= static_cast<int64_t>(r.profile.size()))
    return 1;
  *out = r.profile[index].second;
  out->kernel = r.profile[index].first.c_str();
  return 0;
}

BLOCKC_EXPORT int32_t blockcGpuMultiprocessors(void) {
  // An H100's 132 (sm_90a's entry of the chip table), or
  // BLOCKC_EMU_MULTIPROCESSORS, so that a test can give a persistent kernel
  // several tiles per block on a small problem.
  static const int32_t count = [] {
    const char *value = std::getenv("BLOCKC_EMU_MULTIPROCESSORS");
    if (!value || !*value)
      return 132;
    char *end = nullptr;
    long n = std::strtol(value, &end, 10);
    if (*end || n < 1 || n > 100000) {
      std::fprintf(stderr,
                   "blockc GPU emulator: BLOCKC_EMU_MULTIPROCESSORS='%s' is "
                   "not a count from 1 to 100000; using 132\n",
                   value);
      return 132;
    }
    return static_cast<int32_t>(n);
  }();
  return count;
}

namespace {

/// BLOCKC_EMU_PROFILE=1 (or a number N > 1 of blocks per launch to sample)
/// profiles a whole program linked with the runtime (an object from blockc
/// -emit=obj --emulate, mlir-runner) and prints each launch's counters on
/// stderr when the process exits.
struct EnvironmentProfile {
  bool active = false;
  EnvironmentProfile() {
    const char *value = std::getenv("BLOCKC_EMU_PROFILE");
    if (!value || !*value || std::strcmp(value, "0") == 0)
      return;
    long long sample = std::atoll(value);
    blockcEmuProfileBegin(sample > 1 ? sample : 0);
    active = true;
  }
  ~EnvironmentProfile() {
    if (!active)
      return;
    for (int64_t i = 0, n = blockcEmuProfileLaunches(); i < n; ++i) {
      BlockcEmuLaunchProfile p = {};
      if (blockcEmuProfileGetLaunch(i, &p) != 0)
        break;
      std::fprintf(
          stderr,
          "blockc GPU emulator profile: %s grid %s block %s flops %.0f "
          "tensor_flops %.0f global_requests %.0f global_sectors %.0f "
          "global_bytes %.0f unique_bytes %.0f shared_requests %.0f "
          "shared_wavefronts %.0f barriers %.0f\n",
          p.kernel, dims(p.grid).c_str(), dims(p.block).c_str(), p.flops,
          p.tensorFlops16 + p.tensorFlopsTF32, p.globalRequests,
          p.globalSectors, p.globalBytes, p.uniqueBytes, p.sharedRequests,
          p.sharedWavefronts, p.barriers);
    }
    std::fflush(stderr);
  }
};

EnvironmentProfile environmentProfile;

} // namespace

BLOCKC_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                                 bool /*isHostShared*/) {
  // Memory keeps working after an error: host code of a failed program
  // (e.g. after its module failed to load) still writes the buffers it
  // allocates, and must not get null pointers to write through.
  if (sizeBytes == 0)
    return nullptr;
  size_t rounded = (sizeBytes + kAlignment - 1) & ~(kAlignment - 1);
  void *ptr =
      rounded >= sizeBytes ? std::aligned_alloc(kAlignment, rounded) : nullptr;
  if (!ptr) {
    recordError(format("mgpuMemAlloc of %llu bytes failed: out of memory",
                       static_cast<unsigned long long>(sizeBytes)));
    return nullptr;
  }
  // Like shared memory, fresh device memory reads as NaN (0xFF bytes): a
  // kernel that reads what nobody wrote fails its comparison instead of
  // passing on zeros that a GPU does not promise.
  std::memset(ptr, 0xFF, rounded);
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.allocations[ptr] = sizeBytes;
  return ptr;
}

BLOCKC_EXPORT void mgpuMemFree(void *ptr, void * /*stream*/) {
  // Frees work after an error too, so that drivers can clean up.
  if (!ptr)
    return;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.allocations.find(ptr);
    if (it != r.allocations.end()) {
      r.allocations.erase(it);
      std::free(ptr);
      return;
    }
  }
  recordError(
      format("mgpuMemFree(%p): not a live allocation of mgpuMemAlloc", ptr));
}

BLOCKC_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                              void * /*stream*/) {
  if (sizeBytes == 0)
    return;
  if (!dst || !src) {
    recordError(
        format("mgpuMemcpy of %zu bytes from %p to %p", sizeBytes, src, dst));
    return;
  }
  std::memmove(dst, src, sizeBytes);
}

BLOCKC_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                                void * /*stream*/) {
  if (count == 0)
    return;
  if (!dst) {
    recordError(format("mgpuMemset32 of %zu words at a null pointer", count));
    return;
  }
  auto *words = static_cast<uint32_t *>(dst);
  std::fill(words, words + count, static_cast<uint32_t>(value));
}

BLOCKC_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                                void * /*stream*/) {
  if (count == 0)
    return;
  if (!dst) {
    recordError(
        format("mgpuMemset16 of %zu half-words at a null pointer", count));
    return;
  }
  auto *halves = static_cast<uint16_t *>(dst);
  std::fill(halves, halves + count, static_cast<uint16_t>(value));
}

// Host memory is device memory here: registration is a no-op.
BLOCKC_EXPORT void mgpuMemHostRegister(void * /*ptr*/, uint64_t /*size*/) {}
BLOCKC_EXPORT void mgpuMemHostRegisterMemRef(int64_t /*rank*/,
                                             void * /*descriptor*/,
                                             int64_t /*elementSize*/) {}
BLOCKC_EXPORT void mgpuMemHostUnregister(void * /*ptr*/) {}
BLOCKC_EXPORT void mgpuMemHostUnregisterMemRef(int64_t /*rank*/,
                                               void * /*descriptor*/,
                                               int64_t /*elementSize*/) {}

BLOCKC_EXPORT void mgpuSetDefaultDevice(int32_t /*device*/) {}
