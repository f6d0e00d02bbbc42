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

#include "EmulatorState.h"

#include <unordered_map>

using namespace blockc::emu::detail;

namespace {

/// The operations queued on each stream (launches, copies, memsets) since
/// the host last waited for it. They run when they are made, but on a GPU
/// they would still be running: blockcEmuCheckStreams reports a stream that
/// a host function left with queued work.
std::mutex queuedMutex;
std::unordered_map<void *, int64_t> queuedOnStream;

void queueOn(void *stream) {
  if (!stream)
    return;
  std::lock_guard<std::mutex> lock(queuedMutex);
  ++queuedOnStream[stream];
}

void forgetStream(void *stream) {
  std::lock_guard<std::mutex> lock(queuedMutex);
  queuedOnStream.erase(stream);
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
  if (!l.sharedReads.empty()) {
    checkSharedWrite(*t, d - l.shared, d - l.shared + dstBytes, "cp.async",
                     site);
    if (l.failed)
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
                                    intptr_t blockZ, int32_t smem, void *stream,
                                    void **params, void **extra,
                                    size_t paramsCount) {
  int64_t grid[3] = {gridX, gridY, gridZ};
  int64_t block[3] = {blockX, blockY, blockZ};
  queueOn(stream);
  launchKernel(function, grid, block, smem, params, extra, paramsCount,
               nullptr);
}

BLOCKC_EXPORT void
mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY,
                        intptr_t clusterZ, intptr_t gridX, intptr_t gridY,
                        intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                        intptr_t blockZ, int32_t smem, void *stream,
                        void **params, void **extra, size_t paramsCount) {
  int64_t cluster[3] = {clusterX, clusterY, clusterZ};
  int64_t grid[3] = {gridX, gridY, gridZ};
  int64_t block[3] = {blockX, blockY, blockZ};
  queueOn(stream);
  launchKernel(function, grid, block, smem, params, extra, paramsCount,
               cluster);
}

// Streams and events are tokens: every operation completes before the call
// that issues it returns. What a GPU would still have queued on a stream is
// counted until the host waits for it (blockcEmuCheckStreams).
BLOCKC_EXPORT void *mgpuStreamCreate() { return newToken(); }
BLOCKC_EXPORT void mgpuStreamDestroy(void *stream) { forgetStream(stream); }
BLOCKC_EXPORT void mgpuStreamSynchronize(void *stream) { forgetStream(stream); }

BLOCKC_EXPORT int64_t blockcEmuCheckStreams(void) {
  int64_t operations = 0, streams = 0;
  {
    std::lock_guard<std::mutex> lock(queuedMutex);
    for (auto &[stream, count] : queuedOnStream) {
      operations += count;
      ++streams;
    }
    queuedOnStream.clear();
  }
  if (operations)
    recordError(format(
        "%lld kernel launches, copies or memsets on %lld stream%s were not "
        "waited for (mgpuStreamSynchronize) when the host code returned: on a "
        "GPU they could still be running when their results are read",
        static_cast<long long>(operations), static_cast<long long>(streams),
        streams == 1 ? "" : "s"));
  return operations;
}
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
  // A shared store into what a wgmma group in flight reads.
  if (shared && (flags & BLOCKC_EMU_ACCESS_STORE) && !l.sharedReads.empty()) {
    auto offset =
        static_cast<int64_t>(a - reinterpret_cast<uintptr_t>(l.shared));
    checkSharedWrite(*t, offset, offset + bytes, "", what);
    if (l.failed)
      return;
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
                              void *stream) {
  queueOn(stream);
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
                                void *stream) {
  queueOn(stream);
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
                                void *stream) {
  queueOn(stream);
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
