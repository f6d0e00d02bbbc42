//===- CudaRuntimeWrappers.cpp - mgpu* host functions on the driver API ---===//
//
// The host side of code produced by MLIR 22's gpu-to-llvm calls these
// functions; their signatures follow the LLVM IR that MLIR 22.1.8 emits
// (docs/RuntimeABI.md, checked by test/Pipelines/runtime-abi.test). Only the
// CUDA driver API is used, so the library needs nothing but libcuda. This is
// the only file of blockc that includes cuda.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/Runtime/CudaRuntime.h"

#include "BufferPool.h"
#include "KernelProfile.h"
#include "LaunchLimits.h"

#include "cuda.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#define BLOCKC_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::mutex errorMutex;
std::string lastError;
int32_t defaultDevice = 0;
CUcontext context = nullptr;

bool hasError() {
  std::lock_guard<std::mutex> lock(errorMutex);
  return !lastError.empty();
}

/// Reports a failed driver call once on stderr and records it.
void report(const char *call, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  std::string message = std::string(call) +
                        " failed: " + (name ? name : "unknown CUDA error") +
                        " (" + (text ? text : "no description") + ")";
  std::fprintf(stderr, "blockc CUDA runtime: %s\n", message.c_str());
  std::lock_guard<std::mutex> lock(errorMutex);
  if (lastError.empty())
    lastError = message;
}

#define CHECK(call)                                                            \
  [&]() {                                                                      \
    CUresult result_ = (call);                                                 \
    if (result_ != CUDA_SUCCESS) {                                             \
      report(#call, result_);                                                  \
      return false;                                                            \
    }                                                                          \
    return true;                                                               \
  }()

/// Makes the primary context of the default device current (once per
/// thread); false when there is none. Memory functions use it directly:
/// they keep working after an unrelated error (a failed module load), so
/// that the host code never writes through a null allocation.
bool ensureDevice() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    CUdevice device;
    ok = CHECK(cuInit(0)) && CHECK(cuDeviceGet(&device, defaultDevice)) &&
         CHECK(cuDevicePrimaryCtxRetain(&context, device));
  });
  if (!ok)
    return false;
  CUresult result = cuCtxSetCurrent(context);
  // At process exit the driver may shut down before the destructors that
  // unload the kernels' module run (found on an H200): nothing is left to
  // release then, and it is no error of the program's.
  if (result == CUDA_ERROR_DEINITIALIZED)
    return false;
  if (result != CUDA_SUCCESS) {
    report("cuCtxSetCurrent(context)", result);
    return false;
  }
  return true;
}

/// ensureDevice(), and false after any error (launches and module loads
/// do nothing once an error is recorded).
bool ensureContext() { return !hasError() && ensureDevice(); }

/// Records an error that is not a failed driver call.
void reportMessage(const std::string &message) {
  std::fprintf(stderr, "blockc CUDA runtime: %s\n", message.c_str());
  std::lock_guard<std::mutex> lock(errorMutex);
  if (lastError.empty())
    lastError = message;
}

} // namespace

//===----------------------------------------------------------------------===//
// blockc entry points
//===----------------------------------------------------------------------===//

BLOCKC_EXPORT const char *blockcCudaLastError(void) {
  std::lock_guard<std::mutex> lock(errorMutex);
  return lastError.empty() ? nullptr : lastError.c_str();
}

BLOCKC_EXPORT void blockcCudaClearError(void) {
  std::lock_guard<std::mutex> lock(errorMutex);
  lastError.clear();
}

BLOCKC_EXPORT int blockcCudaInit(void) { return ensureContext() ? 0 : 1; }

BLOCKC_EXPORT int32_t blockcGpuMultiprocessors(void) {
  static std::atomic<int32_t> cached{0};
  if (int32_t n = cached.load())
    return n;
  CUdevice device;
  int n = 0;
  if (ensureDevice() && CHECK(cuCtxGetDevice(&device)) &&
      CHECK(cuDeviceGetAttribute(&n, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                 device)) &&
      n > 0) {
    cached.store(n);
    return n;
  }
  // One block still computes every tile of a persistent kernel.
  return 1;
}

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

BLOCKC_EXPORT CUmodule mgpuModuleLoad(void *data, size_t /*size*/) {
  CUmodule module = nullptr;
  if (ensureContext())
    CHECK(cuModuleLoadData(&module, data));
  return module;
}

BLOCKC_EXPORT CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  CUmodule module = nullptr;
  if (!ensureContext())
    return nullptr;
  // PTX is compiled by the driver; keep its log for the error message.
  char errorLog[8192] = {0};
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    errorLog, reinterpret_cast<void *>(sizeof(errorLog))};
  if (!CHECK(cuModuleLoadDataEx(&module, data, 3, options, values)) &&
      errorLog[0])
    std::fprintf(stderr, "blockc CUDA runtime: PTX JIT log:\n%s\n", errorLog);
  return module;
}

BLOCKC_EXPORT void mgpuModuleUnload(CUmodule module) {
  if (module && ensureContext())
    CHECK(cuModuleUnload(module));
}

BLOCKC_EXPORT CUfunction mgpuModuleGetFunction(CUmodule module,
                                               const char *name) {
  CUfunction function = nullptr;
  if (!module) {
    reportMessage(std::string("mgpuModuleGetFunction('") + name +
                  "') on a null module (the GPU module did not load)");
    return nullptr;
  }
  if (ensureContext())
    CHECK(cuModuleGetFunction(&function, module, name));
  return function;
}

namespace {

/// Per-kernel GPU times of the launches between blockcCudaProfileStart and
/// blockcCudaProfileStop.
std::mutex profileMutex;
blockc::cuda::KernelProfile profile;
std::atomic<bool> profiling{false};

/// The kernel's name for messages and the profile.
std::string kernelName(CUfunction function) {
  const char *name = nullptr;
  if (cuFuncGetName(&name, function) != CUDA_SUCCESS || !name)
    return "<unnamed kernel>";
  return name;
}

/// Prepares a launch of `function` (with `cluster`: a cluster launch): checks
/// that it can be made (a non-null function, a valid launch configuration,
/// reported and refused before the dimensions are narrowed to unsigned, and
/// a usable context), then opts the kernel in to the launch's dynamic shared
/// memory. False when the launch must not be made.
bool prepareLaunch(CUfunction function, const blockc::cuda::Dim3 *cluster,
                   const blockc::cuda::Dim3 &grid,
                   const blockc::cuda::Dim3 &block, int32_t smem) {
  if (!function) {
    reportMessage("launch of a null kernel function (mgpuModuleGetFunction "
                  "found no kernel)");
    return false;
  }
  auto check = [&](std::string_view name) {
    return cluster ? blockc::cuda::checkClusterLaunch(name, *cluster, grid,
                                                      block, smem)
                   : blockc::cuda::checkLaunch(name, grid, block, smem);
  };
  if (!check("").empty()) {
    // Only a bad launch looks the kernel's name up.
    reportMessage(check(kernelName(function)));
    return false;
  }
  if (!ensureContext())
    return false;
  // Opt in to the dynamic shared memory of the launch: beyond 48 KiB it
  // must be requested, and the kernel's static shared memory counts
  // against the 48 KiB too (gpu.dynamic_shared_memory lowers to a 1-byte
  // static symbol), so any dynamic size is requested.
  return smem <= 0 ||
         CHECK(cuFuncSetAttribute(
             function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
}

/// The streams with work queued by these functions since the host last
/// waited for them. blockc-gpu-async-launches makes the host wait for a
/// function's stream before each memory access of its host code; where
/// nothing was queued since, the wait returns at once (a wait inside a host
/// loop costs one driver call, not one per iteration).
std::mutex busyMutex;
std::unordered_set<CUstream> busyStreams;

void markBusy(CUstream stream) {
  if (!stream)
    return;
  std::lock_guard<std::mutex> lock(busyMutex);
  busyStreams.insert(stream);
}

/// Whether work was queued on `stream` since its last wait; forgets it.
bool takeBusy(CUstream stream) {
  std::lock_guard<std::mutex> lock(busyMutex);
  return busyStreams.erase(stream) > 0;
}

/// Runs `launch` (which enqueues one kernel on `stream`); while profiling,
/// between two CUDA events, waiting for the kernel and recording its time.
template <typename LaunchFn>
void timedLaunch(CUfunction function, CUstream stream, LaunchFn launch) {
  if (!profiling.load(std::memory_order_relaxed)) {
    launch();
    return;
  }
  CUevent start = nullptr, stop = nullptr;
  if (CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT)) &&
      CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT)) &&
      CHECK(cuEventRecord(start, stream)) && launch()) {
    float ms = 0;
    if (CHECK(cuEventRecord(stop, stream)) && CHECK(cuEventSynchronize(stop)) &&
        CHECK(cuEventElapsedTime(&ms, start, stop))) {
      std::string name = kernelName(function);
      std::lock_guard<std::mutex> lock(profileMutex);
      profile.record(name, 1000.0 * ms);
    }
  }
  if (start)
    cuEventDestroy(start);
  if (stop)
    cuEventDestroy(stop);
}

} // namespace

BLOCKC_EXPORT void blockcCudaProfileStart(void) {
  std::lock_guard<std::mutex> lock(profileMutex);
  profile.clear();
  profiling.store(true);
}

BLOCKC_EXPORT void blockcCudaProfileStop(void) { profiling.store(false); }

BLOCKC_EXPORT int blockcCudaProfileWriteJSON(const char *path) {
  if (!path || !*path) {
    std::fprintf(stderr, "blockc CUDA runtime: blockcCudaProfileWriteJSON: "
                         "no file name given\n");
    return 1;
  }
  std::string json;
  {
    std::lock_guard<std::mutex> lock(profileMutex);
    json = profile.toJSON();
  }
  FILE *file = std::fopen(path, "w");
  if (!file) {
    std::fprintf(stderr,
                 "blockc CUDA runtime: blockcCudaProfileWriteJSON: cannot "
                 "open '%s' for writing: %s\n",
                 path, std::strerror(errno));
    return 1;
  }
  bool written = std::fwrite(json.data(), 1, json.size(), file) == json.size();
  if (std::fclose(file) != 0 || !written) {
    std::fprintf(stderr,
                 "blockc CUDA runtime: blockcCudaProfileWriteJSON: cannot "
                 "write '%s': %s\n",
                 path, std::strerror(errno));
    return 1;
  }
  return 0;
}

BLOCKC_EXPORT void blockcCudaProfileReport(void) {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(profileMutex);
    text = profile.toText();
    profile.clear();
  }
  std::fputs(text.c_str(), stderr);
}

BLOCKC_EXPORT void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                    intptr_t gridY, intptr_t gridZ,
                                    intptr_t blockX, intptr_t blockY,
                                    intptr_t blockZ, int32_t smem,
                                    CUstream stream, void **params,
                                    void **extra, size_t /*paramsCount*/) {
  if (!prepareLaunch(function, /*cluster=*/nullptr, {gridX, gridY, gridZ},
                     {blockX, blockY, blockZ}, smem))
    return;
  // The dimensions are in range (prepareLaunch): narrowing them is exact.
  markBusy(stream);
  timedLaunch(function, stream, [&] {
    return CHECK(cuLaunchKernel(
        function, static_cast<unsigned>(gridX), static_cast<unsigned>(gridY),
        static_cast<unsigned>(gridZ), static_cast<unsigned>(blockX),
        static_cast<unsigned>(blockY), static_cast<unsigned>(blockZ),
        static_cast<unsigned>(smem), stream, params, extra));
  });
}

BLOCKC_EXPORT void mgpuLaunchClusterKernel(
    CUfunction function, intptr_t clusterX, intptr_t clusterY,
    intptr_t clusterZ, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
    intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t smem,
    CUstream stream, void **params, void **extra, size_t /*paramsCount*/) {
  blockc::cuda::Dim3 cluster{clusterX, clusterY, clusterZ};
  if (!prepareLaunch(function, &cluster, {gridX, gridY, gridZ},
                     {blockX, blockY, blockZ}, smem))
    return;
  CUlaunchAttribute attribute;
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = static_cast<unsigned>(clusterX);
  attribute.value.clusterDim.y = static_cast<unsigned>(clusterY);
  attribute.value.clusterDim.z = static_cast<unsigned>(clusterZ);
  CUlaunchConfig config = {};
  config.gridDimX = static_cast<unsigned>(gridX);
  config.gridDimY = static_cast<unsigned>(gridY);
  config.gridDimZ = static_cast<unsigned>(gridZ);
  config.blockDimX = static_cast<unsigned>(blockX);
  config.blockDimY = static_cast<unsigned>(blockY);
  config.blockDimZ = static_cast<unsigned>(blockZ);
  config.sharedMemBytes = static_cast<unsigned>(smem);
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  markBusy(stream);
  timedLaunch(function, stream, [&] {
    return CHECK(cuLaunchKernelEx(&config, function, params, extra));
  });
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

namespace {

/// Destroyed streams kept for the next mgpuStreamCreate (the process has one
/// context): each call of a compiled host function creates a stream and
/// destroys it at its return, and a decode step is short enough for the
/// driver's stream creation and destruction to show.
constexpr size_t kMaxIdleStreams = 16;
std::mutex idleStreamMutex;
std::vector<CUstream> idleStreams;

} // namespace

BLOCKC_EXPORT CUstream mgpuStreamCreate() {
  if (!ensureContext())
    return nullptr;
  {
    std::lock_guard<std::mutex> lock(idleStreamMutex);
    if (!idleStreams.empty()) {
      CUstream stream = idleStreams.back();
      idleStreams.pop_back();
      return stream;
    }
  }
  CUstream stream = nullptr;
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

BLOCKC_EXPORT void mgpuStreamDestroy(CUstream stream) {
  if (!stream)
    return;
  takeBusy(stream);
  {
    // Work still queued on it runs before what its next user queues.
    std::lock_guard<std::mutex> lock(idleStreamMutex);
    if (idleStreams.size() < kMaxIdleStreams) {
      idleStreams.push_back(stream);
      return;
    }
  }
  if (ensureContext())
    CHECK(cuStreamDestroy(stream));
}

static void reapFrees();

BLOCKC_EXPORT void mgpuStreamSynchronize(CUstream stream) {
  // Nothing queued on it since the last wait: nothing to wait for.
  if (stream && !takeBusy(stream))
    return;
  if (ensureContext())
    CHECK(cuStreamSynchronize(stream));
  reapFrees();
}

BLOCKC_EXPORT void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (event && ensureContext())
    CHECK(cuStreamWaitEvent(stream, event, 0));
}

BLOCKC_EXPORT CUevent mgpuEventCreate() {
  CUevent event = nullptr;
  if (ensureContext())
    CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

BLOCKC_EXPORT void mgpuEventDestroy(CUevent event) {
  if (event && ensureContext())
    CHECK(cuEventDestroy(event));
}

BLOCKC_EXPORT void mgpuEventSynchronize(CUevent event) {
  if (event && ensureContext())
    CHECK(cuEventSynchronize(event));
}

BLOCKC_EXPORT void mgpuEventRecord(CUevent event, CUstream stream) {
  if (event && ensureContext())
    CHECK(cuEventRecord(event, stream));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

namespace {

/// Managed buffers are kept for reuse instead of freed (BufferPool.h: by
/// exact size, the idle bytes bounded by BLOCKC_CUDA_POOL_MAX_IDLE_BYTES,
/// default 1 GiB, the oldest idle buffers released first; 0 frees at once).
uint64_t maxIdleBytesFromEnvironment() {
  const char *value = std::getenv("BLOCKC_CUDA_POOL_MAX_IDLE_BYTES");
  if (!value)
    return blockc::cuda::kDefaultMaxIdleBytes;
  if (std::optional<uint64_t> bytes = blockc::cuda::parseByteCount(value))
    return *bytes;
  std::fprintf(
      stderr,
      "blockc CUDA runtime: BLOCKC_CUDA_POOL_MAX_IDLE_BYTES='%s' is "
      "not a byte count (digits with an optional K, M or G); using "
      "%llu\n",
      value,
      static_cast<unsigned long long>(blockc::cuda::kDefaultMaxIdleBytes));
  return blockc::cuda::kDefaultMaxIdleBytes;
}

blockc::cuda::BufferPool &managedPool() {
  // Outlives static destructors (buffers freed at exit still find it).
  static auto *pool = new blockc::cuda::BufferPool(
      maxIdleBytesFromEnvironment(),
      [](blockc::cuda::BufferPool::Handle handle, uint64_t) {
        if (ensureDevice())
          CHECK(cuMemFree(static_cast<CUdeviceptr>(handle)));
      });
  return *pool;
}

/// Kernels write most managed buffers first (the block's intermediates):
/// place the pages on the GPU instead of faulting them in from inside the
/// kernels. Only a hint: the host can still touch them, and a device
/// without managed prefetch ignores it.
void preferGPU(CUdeviceptr ptr, uint64_t sizeBytes, CUstream stream) {
  CUmemLocation gpu = {};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = defaultDevice;
  if (cuMemAdvise(ptr, sizeBytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, gpu) ==
      CUDA_SUCCESS)
    (void)cuMemPrefetchAsync(ptr, sizeBytes, gpu, 0, stream);
}

} // namespace

namespace {

/// Frees ordered on a stream (mgpuMemFree with a stream): each buffer with
/// an event recorded after the work queued before the free. The buffer goes
/// back to the pool (or to the driver) once the event has completed, so no
/// kernel still queued can find it reused by another call or released.
std::mutex pendingMutex;
std::vector<std::pair<CUdeviceptr, CUevent>> pendingFrees;

void freeNow(CUdeviceptr device) {
  switch (managedPool().free(device)) {
  case blockc::cuda::BufferPool::FreeResult::Kept:
  case blockc::cuda::BufferPool::FreeResult::Released:
    return;
  case blockc::cuda::BufferPool::FreeResult::AlreadyFree: {
    char text[32];
    std::snprintf(text, sizeof(text), "%p", reinterpret_cast<void *>(device));
    reportMessage(std::string("mgpuMemFree(") + text +
                  "): the managed buffer was already freed (double free); "
                  "nothing was done");
    return;
  }
  case blockc::cuda::BufferPool::FreeResult::NotPooled:
    break;
  }
  // Managed allocations cannot be freed asynchronously; a synchronous free
  // is correct for every kind of allocation made above.
  if (ensureDevice())
    CHECK(cuMemFree(device));
}

} // namespace

/// Completes the pending frees whose streams have passed them.
static void reapFrees() {
  std::vector<CUdeviceptr> done;
  {
    std::lock_guard<std::mutex> lock(pendingMutex);
    auto kept = pendingFrees.begin();
    for (auto &[device, event] : pendingFrees) {
      CUresult state = cuEventQuery(event);
      if (state == CUDA_ERROR_NOT_READY) {
        *kept++ = {device, event};
        continue;
      }
      if (state != CUDA_SUCCESS)
        CHECK(cuEventSynchronize(event));
      cuEventDestroy(event);
      done.push_back(device);
    }
    pendingFrees.erase(kept, pendingFrees.end());
  }
  for (CUdeviceptr device : done)
    freeNow(device);
}

BLOCKC_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream,
                                 bool isHostShared) {
  if (sizeBytes == 0 || !ensureDevice())
    return nullptr;
  reapFrees();
  CUdeviceptr ptr = 0;
  if (isHostShared) {
    blockc::cuda::BufferPool &pool = managedPool();
    if (std::optional<uint64_t> reused = pool.acquire(sizeBytes))
      return reinterpret_cast<void *>(static_cast<CUdeviceptr>(*reused));
    if (!CHECK(cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL)))
      return nullptr;
    preferGPU(ptr, sizeBytes, stream);
    markBusy(stream);
    pool.track(ptr, sizeBytes);
  } else if (stream) {
    CHECK(cuMemAllocAsync(&ptr, sizeBytes, stream));
  } else {
    CHECK(cuMemAlloc(&ptr, sizeBytes));
  }
  return reinterpret_cast<void *>(ptr);
}

BLOCKC_EXPORT void mgpuMemFree(void *ptr, CUstream stream) {
  if (!ptr)
    return;
  auto device = reinterpret_cast<CUdeviceptr>(ptr);
  reapFrees();
  // On a stream: after the work queued on it so far.
  CUevent event = nullptr;
  if (stream && ensureContext() &&
      CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING))) {
    if (CHECK(cuEventRecord(event, stream))) {
      std::lock_guard<std::mutex> lock(pendingMutex);
      pendingFrees.emplace_back(device, event);
      return;
    }
    cuEventDestroy(event);
    CHECK(cuStreamSynchronize(stream));
  }
  freeNow(device);
}

BLOCKC_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                              CUstream stream) {
  markBusy(stream);
  if (ensureDevice())
    CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                        reinterpret_cast<CUdeviceptr>(src), sizeBytes, stream));
}

BLOCKC_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                                CUstream stream) {
  markBusy(stream);
  if (ensureDevice())
    CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                           stream));
}

BLOCKC_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                                CUstream stream) {
  markBusy(stream);
  if (ensureDevice())
    CHECK(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                           stream));
}

namespace {
/// The byte size of the memref described by an unranked descriptor
/// (rank, pointer to {allocated, aligned, offset, sizes[rank],
/// strides[rank]}).
void *memrefData(int64_t rank, void *descriptor, int64_t elementSize,
                 size_t &bytes) {
  auto *fields = static_cast<int64_t *>(descriptor);
  auto *aligned = reinterpret_cast<char *>(fields[1]);
  int64_t offset = fields[2];
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i)
    count *= fields[3 + i];
  bytes = static_cast<size_t>(count * elementSize);
  return aligned + offset * elementSize;
}
} // namespace

BLOCKC_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  if (ensureContext())
    CHECK(cuMemHostRegister(ptr, sizeBytes, 0));
}

BLOCKC_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                             int64_t elementSize) {
  size_t bytes;
  void *data = memrefData(rank, descriptor, elementSize, bytes);
  mgpuMemHostRegister(data, bytes);
}

BLOCKC_EXPORT void mgpuMemHostUnregister(void *ptr) {
  if (ensureContext())
    CHECK(cuMemHostUnregister(ptr));
}

BLOCKC_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                               int64_t elementSize) {
  size_t bytes;
  mgpuMemHostUnregister(memrefData(rank, descriptor, elementSize, bytes));
}

BLOCKC_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  defaultDevice = device;
}

//===----------------------------------------------------------------------===//
// TMA tensor maps
//===----------------------------------------------------------------------===//

namespace {

/// Device copies of the tensor maps made so far, by the map's bytes: host
/// code encodes its maps before every launch, and repeated launches reuse
/// one copy of each map. A map names a buffer's address, so programs that
/// allocate new buffers make new maps: past kMaxTensorMapCopies the device
/// waits for its work and the copies are freed.
constexpr size_t kMaxTensorMapCopies = 4096;
std::mutex tensorMapMutex;
std::map<std::array<cuuint64_t, CU_TENSOR_MAP_NUM_QWORDS>, CUdeviceptr>
    tensorMapCopies;

} // namespace

/// nvgpu.tma.create.descriptor (the ABI of upstream MLIR's
/// CudaRuntimeWrappers, include/blockc/Runtime/EmulatorRuntime.h): a
/// CUtensorMap over the memref of the ranked descriptor {allocated,
/// aligned, offset, sizes[rank], strides[rank]}, with its real strides and
/// offset, copied to device memory (kernels take it as a pointer to a
/// 128-byte aligned global). Returns that copy, or null after an error.
BLOCKC_EXPORT void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *rankedDescriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2promo, int64_t oobFill, int64_t *boxDims) {
  if (rank < 1 || rank > 5 || !rankedDescriptor || !boxDims) {
    reportMessage(
        "mgpuTensorMapEncodeTiledMemref: rank " + std::to_string(rank) +
        (rank < 1 || rank > 5 ? " is not 1 to 5"
                              : " with a null memref descriptor or box"));
    return nullptr;
  }
  if (dataType < 0 || dataType > CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ) {
    reportMessage("mgpuTensorMapEncodeTiledMemref: data type " +
                  std::to_string(dataType) +
                  " is not a CUtensorMapDataType of 0 to 12");
    return nullptr;
  }
  static const int64_t elementBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  int64_t e = elementBytes[dataType];
  // {allocated, aligned, offset, sizes[rank], strides[rank]}.
  const auto *fields = static_cast<const int64_t *>(rankedDescriptor);
  char *aligned = reinterpret_cast<char *>(fields[1]);
  int64_t offset = fields[2];
  const int64_t *sizes = fields + 3, *strides = fields + 3 + rank;
  if (strides[rank - 1] != 1) {
    reportMessage("mgpuTensorMapEncodeTiledMemref: the innermost stride is " +
                  std::to_string(strides[rank - 1]) + ", not 1");
    return nullptr;
  }
  // Innermost first; globalStrides has rank - 1 entries (the innermost
  // stride is the element size), in bytes.
  cuuint64_t globalDim[5], globalStrides[4];
  cuuint32_t boxDim[5], elementStrides[5];
  for (int64_t d = 0; d < rank; ++d) {
    int64_t i = rank - 1 - d;
    globalDim[d] = static_cast<cuuint64_t>(sizes[i]);
    if (d > 0)
      globalStrides[d - 1] = static_cast<cuuint64_t>(strides[i] * e);
    boxDim[d] = static_cast<cuuint32_t>(boxDims[i]);
    elementStrides[d] = 1;
  }
  if (!ensureContext())
    return nullptr;
  CUtensorMap map;
  std::memset(&map, 0, sizeof(map));
  CUresult result = cuTensorMapEncodeTiled(
      &map, static_cast<CUtensorMapDataType>(dataType),
      static_cast<cuuint32_t>(rank), aligned + offset * e, globalDim,
      globalStrides, boxDim, elementStrides,
      static_cast<CUtensorMapInterleave>(interleave),
      static_cast<CUtensorMapSwizzle>(swizzle),
      static_cast<CUtensorMapL2promotion>(l2promo),
      static_cast<CUtensorMapFloatOOBfill>(oobFill));
  if (result != CUDA_SUCCESS) {
    // Name the arguments (innermost first), which the driver does not.
    auto list = [](const auto *values, int64_t count) {
      std::string text;
      for (int64_t d = 0; d < count; ++d)
        text += (d ? "," : "") + std::to_string(values[d]);
      return "[" + text + "]";
    };
    char base[32];
    std::snprintf(base, sizeof(base), "%p",
                  static_cast<void *>(aligned + offset * e));
    std::string call =
        "cuTensorMapEncodeTiled(data type " + std::to_string(dataType) +
        ", base " + base + ", dims " + list(globalDim, rank) +
        ", byte strides " + list(globalStrides, rank - 1) + ", box " +
        list(boxDim, rank) + ", interleave " + std::to_string(interleave) +
        ", swizzle " + std::to_string(swizzle) + ", OOB fill " +
        std::to_string(oobFill) + ")";
    report(call.c_str(), result);
    return nullptr;
  }
  std::array<cuuint64_t, CU_TENSOR_MAP_NUM_QWORDS> key;
  std::memcpy(key.data(), map.opaque, sizeof(map.opaque));
  std::lock_guard<std::mutex> lock(tensorMapMutex);
  auto it = tensorMapCopies.find(key);
  if (it != tensorMapCopies.end())
    return reinterpret_cast<void *>(it->second);
  if (tensorMapCopies.size() >= kMaxTensorMapCopies) {
    // Kernels still queued may read the copies: wait for them first.
    CHECK(cuCtxSynchronize());
    for (auto &[bytes, old] : tensorMapCopies)
      cuMemFree(old);
    tensorMapCopies.clear();
  }
  CUdeviceptr copy = 0;
  if (!CHECK(cuMemAlloc(&copy, sizeof(map))))
    return nullptr;
  if (!CHECK(cuMemcpyHtoD(copy, &map, sizeof(map)))) {
    cuMemFree(copy);
    return nullptr;
  }
  tensorMapCopies.emplace(key, copy);
  return reinterpret_cast<void *>(copy);
}
