//===- EmulatorRuntimeTest.cpp - the GPU emulator's runtime ---------------===//
//
// Small kernels written by hand with the BlockcEmuKernelFn signature call the
// runtime the way blockc-gpu-emulate-kernels' output does, and are launched
// through mgpuModuleLoad / mgpuModuleGetFunction / mgpuLaunchKernel like the
// host code of gpu-to-llvm: barrier and shuffle semantics, thread ids, CUDA's
// launch limits, the error messages and the memory functions; Hopper's
// mbarriers, TMA loads and stores (through mgpuTensorMapEncodeTiledMemref)
// and wgmma.
//
//===----------------------------------------------------------------------===//

#include "blockc/Runtime/EmulatorRuntime.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

// The mgpu* functions, with the signatures of docs/RuntimeABI.md.
extern "C" {
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void mgpuLaunchClusterKernel(void *function, intptr_t clusterX,
                             intptr_t clusterY, intptr_t clusterZ,
                             intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                             intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                             int32_t smem, void *stream, void **params,
                             void **extra, size_t paramsCount);
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate();
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes);
void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSize);
void mgpuMemHostUnregister(void *ptr);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t elementSize);
void mgpuSetDefaultDevice(int32_t device);
}

namespace {

constexpr char kModuleData[] = "blockc-emulator:testmod";
constexpr int32_t kXor = 0, kDown = 1, kUp = 2, kIdx = 3;

struct Dim3 {
  intptr_t x = 1, y = 1, z = 1;
};

/// Argument `i` of a kernel: params[i] points to the argument's value.
template <typename T> T arg(void **params, int i) {
  return *static_cast<T *>(params[i]);
}

int linearThread(const BlockcEmuThread *t) {
  return t->threadId[0] + t->threadId[1] * t->blockDim[0] +
         t->threadId[2] * t->blockDim[0] * t->blockDim[1];
}

int linearBlock(const BlockcEmuThread *t) {
  return t->blockId[0] + t->blockId[1] * t->gridDim[0] +
         t->blockId[2] * t->gridDim[0] * t->gridDim[1];
}

int threadsPerBlock(const BlockcEmuThread *t) {
  return t->blockDim[0] * t->blockDim[1] * t->blockDim[2];
}

/// Splits a shuffle result into its value and valid flag.
struct Shuffled {
  int32_t value;
  bool valid;
};
Shuffled split(int64_t r) {
  return {static_cast<int32_t>(static_cast<uint32_t>(r)),
          static_cast<bool>((r >> 32) & 1)};
}
bool operator==(const Shuffled &a, const Shuffled &b) {
  return a.value == b.value && a.valid == b.valid;
}
std::ostream &operator<<(std::ostream &os, const Shuffled &s) {
  return os << "{" << s.value << ", " << (s.valid ? "valid" : "invalid") << "}";
}

// Counters the kernels update (launches run on the calling thread).
int entered = 0, finished = 0;

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

void noopKernel(void **, BlockcEmuThread *, void *, int64_t) { ++entered; }

/// out = in reversed within each block, through shared memory: right only if
/// the barrier waits for every thread's store.
void reverseKernel(void **params, BlockcEmuThread *t, void *shared, int64_t) {
  auto *in = arg<float *>(params, 0);
  auto *out = arg<float *>(params, 1);
  int n = t->blockDim[0], i = t->threadId[0], base = t->blockId[0] * n;
  auto *s = static_cast<float *>(shared);
  s[i] = in[base + i];
  blockcEmuBarrier(t, "reverse: barrier");
  out[base + i] = s[n - 1 - i];
}

/// out[block] = the sum of the block's elements of in (tree reduction in
/// shared memory, a barrier per step).
void reduceKernel(void **params, BlockcEmuThread *t, void *shared, int64_t) {
  auto *in = arg<int64_t *>(params, 0);
  auto *out = arg<int64_t *>(params, 1);
  int64_t count = arg<int64_t>(params, 2);
  int n = t->blockDim[0], i = t->threadId[0];
  int64_t g = static_cast<int64_t>(t->blockId[0]) * n + i;
  auto *s = static_cast<int64_t *>(shared);
  s[i] = g < count ? in[g] : 0;
  blockcEmuBarrier(t, "reduce: load");
  for (int stride = n / 2; stride > 0; stride /= 2) {
    if (i < stride)
      s[i] += s[i + stride];
    blockcEmuBarrier(t, "reduce: step");
  }
  if (i == 0)
    out[t->blockId[0]] = s[0];
}

/// Runs the shuffle cases {mode, offset} on the lanes below `active`, each
/// lane offering lane * 10 + 1; out[c * 32 + lane] = the raw result.
void shuffleKernel(void **params, BlockcEmuThread *t, void *, int64_t) {
  auto *cases = arg<const int32_t *>(params, 0);
  int32_t caseCount = arg<int32_t>(params, 1);
  int32_t width = arg<int32_t>(params, 2);
  int32_t active = arg<int32_t>(params, 3);
  auto *out = arg<int64_t *>(params, 4);
  int lane = t->laneId;
  if (lane >= active)
    return;
  for (int c = 0; c < caseCount; ++c)
    out[c * 32 + lane] =
        blockcEmuShuffle32(t, lane * 10 + 1, cases[2 * c + 1], width,
                           cases[2 * c], "shuffle: case");
}

/// A butterfly sum over offsets 8, 4, 2, 1 (groups of 16 lanes).
void butterflyKernel(void **params, BlockcEmuThread *t, void *, int64_t) {
  auto *out = arg<int32_t *>(params, 0);
  int32_t v = linearThread(t);
  for (int offset = 8; offset > 0; offset /= 2)
    v += split(blockcEmuShuffle32(t, v, offset, 32, kXor, "butterfly")).value;
  out[linearThread(t)] = v;
}

void xor16Kernel(void **, BlockcEmuThread *t, void *, int64_t) {
  blockcEmuShuffle32(t, 1, 16, 32, kXor, "xor16 shuffle");
}

/// Records every field of BlockcEmuThread, the shared size and the order in
/// which blocks run.
int blockOrder = 0;
void idsKernel(void **params, BlockcEmuThread *t, void *, int64_t bytes) {
  auto *out = arg<int32_t *>(params, 0);
  int32_t *o =
      out + (linearBlock(t) * threadsPerBlock(t) + linearThread(t)) * 15;
  for (int d = 0; d < 3; ++d) {
    o[d] = t->threadId[d];
    o[3 + d] = t->blockId[d];
    o[6 + d] = t->blockDim[d];
    o[9 + d] = t->gridDim[d];
  }
  o[12] = t->laneId;
  o[13] = static_cast<int32_t>(bytes);
  o[14] = linearThread(t) == 0 ? blockOrder++ : -1;
}

/// Reads each thread's shared word before writing it: 0xFFFFFFFF (NaN) in
/// every block.
void sharedFillKernel(void **params, BlockcEmuThread *t, void *shared,
                      int64_t bytes) {
  auto *out = arg<uint32_t *>(params, 0);
  auto *aligned = arg<int32_t *>(params, 1);
  auto *s = static_cast<uint32_t *>(shared);
  int i = linearThread(t);
  uint32_t v = s[i];
  if (i == 0) // the last word of static plus dynamic shared memory
    v &= s[bytes / 4 - 1];
  out[linearBlock(t) * threadsPerBlock(t) + i] = v;
  s[i] = 0;
  if (reinterpret_cast<uintptr_t>(shared) % 1024 != 0)
    *aligned = 0;
}

/// Threads 32 and above return before the barrier.
void divergeKernel(void **, BlockcEmuThread *t, void *, int64_t) {
  ++entered;
  if (t->threadId[0] >= 32)
    return;
  blockcEmuBarrier(t, "siteA");
  ++finished;
}

/// Like a warp-specialised kernel: threads 0-127 (the "producer") return at
/// once; threads 128-255 reverse their half through shared memory, synced
/// by named barrier 1 of 128 threads, twice (the barrier is reusable).
void namedReverseKernel(void **params, BlockcEmuThread *t, void *shared,
                        int64_t) {
  auto *in = arg<float *>(params, 0);
  auto *out = arg<float *>(params, 1);
  int i = t->threadId[0];
  if (i < 128)
    return;
  int j = i - 128;
  auto *s = static_cast<float *>(shared);
  s[j] = in[j];
  blockcEmuNamedBarrier(t, 1, 128, "named: store");
  float v = s[127 - j];
  blockcEmuNamedBarrier(t, 1, 128, "named: read");
  s[j] = v * 2;
  blockcEmuNamedBarrier(t, 1, 128, "named: store again");
  out[j] = s[127 - j];
}

/// A named barrier used with the id and count in params (threads 0-63
/// only; the others return).
void namedMisuseKernel(void **params, BlockcEmuThread *t, void *, int64_t) {
  int32_t id = arg<int32_t>(params, 0), count = arg<int32_t>(params, 1);
  int32_t other = arg<int32_t>(params, 2);
  if (t->threadId[0] >= 64)
    return;
  blockcEmuNamedBarrier(t, id, t->threadId[0] < 32 ? count : other, "misused");
  ++finished;
}

/// Two halves of the block wait at different barriers.
void deadlockKernel(void **, BlockcEmuThread *t, void *, int64_t) {
  if (t->threadId[0] < 64)
    blockcEmuBarrier(t, "siteA");
  else
    blockcEmuBarrier(t, "siteB");
  ++finished;
}

/// Lanes 16 and above return before a full-warp shuffle.
void shuffleDivergeKernel(void **, BlockcEmuThread *t, void *, int64_t) {
  if (t->laneId >= 16)
    return;
  blockcEmuShuffle32(t, 1, 1, 32, kXor, "shuffle site");
  ++finished;
}

/// Every lane runs a width-16 shuffle: lanes 16-31 are outside the mask.
void outsideMaskKernel(void **, BlockcEmuThread *t, void *, int64_t) {
  blockcEmuShuffle32(t, 1, 1, 16, kXor, "width-16 shuffle");
}

/// Warp 1 waits at the barrier while warp 0 reduces with shuffles; then
/// warp 0 waits while warp 1 reduces.
void interleaveKernel(void **params, BlockcEmuThread *t, void *shared,
                      int64_t) {
  auto *out = arg<int32_t *>(params, 0);
  auto *s = static_cast<int32_t *>(shared);
  int i = t->threadId[0], warp = i / 32;
  for (int round = 0; round < 2; ++round) {
    if (warp == round) {
      int32_t v = i + round;
      for (int offset = 16; offset > 0; offset /= 2)
        v += split(blockcEmuShuffle32(t, v, offset, 32, kXor, "reduce")).value;
      if (t->laneId == 0)
        s[round] = v;
    }
    blockcEmuBarrier(t, "interleave barrier");
  }
  out[i] = s[0] + s[1];
}

/// A barrier in a kernel registered without BLOCKC_EMU_SYNCHRONIZES.
void unflaggedBarrierKernel(void **, BlockcEmuThread *t, void *, int64_t) {
  ++entered;
  blockcEmuBarrier(t, "unflagged barrier");
}

/// Two threads of block 1 report out-of-bounds accesses.
void outOfBoundsKernel(void **, BlockcEmuThread *t, void *, int64_t) {
  ++entered;
  if (t->blockId[0] == 1 && (t->threadId[0] == 3 || t->threadId[0] == 4))
    blockcEmuOutOfBounds(t, "oob site", 1, 7, 5);
}

void firstVersionKernel(void **params, BlockcEmuThread *, void *, int64_t) {
  *arg<int32_t *>(params, 0) = 1;
}
void secondVersionKernel(void **params, BlockcEmuThread *, void *, int64_t) {
  *arg<int32_t *>(params, 0) = 2;
}

/// `barriers` barriers per thread, a running sum through shared memory.
void manyBarriersKernel(void **params, BlockcEmuThread *t, void *shared,
                        int64_t) {
  auto *out = arg<int32_t *>(params, 0);
  int32_t barriers = arg<int32_t>(params, 1);
  auto *s = static_cast<int32_t *>(shared);
  int n = t->blockDim[0], i = t->threadId[0];
  int32_t v = i;
  for (int b = 0; b < barriers; ++b) {
    s[i] = v;
    blockcEmuBarrier(t, "many: store");
    v = s[(i + 1) % n];
    blockcEmuBarrier(t, "many: load");
  }
  out[t->blockId[0] * n + i] = v;
}

// Tensor cores: one warp copies a 16 x 16 bf16 A into shared memory with
// cp.async, loads its fragment with ldmatrix.x4 and multiplies by B (given
// as each lane's registers, [n][k] in global memory) with mma.sync; D goes
// out in the PTX fragment layout.
void mmaKernel(void **params, BlockcEmuThread *t, void *shared, int64_t) {
  auto *a = arg<const uint16_t *>(params, 0);
  auto *b = arg<const uint16_t *>(params, 1); // [8][16]
  auto *d = arg<float *>(params, 2);          // [16][8]
  int lane = t->laneId, g = lane / 4, q = lane / 8;
  auto *tile = static_cast<uint16_t *>(shared); // [16][16]
  int row = lane / 2, col = 8 * (lane % 2);
  blockcEmuCpAsync(t, tile + 16 * row + col, a + 16 * row + col, 16, 16,
                   "mma copy");
  blockcEmuCpAsyncCommit(t);
  blockcEmuCpAsyncWait(t, 0, "mma wait");
  blockcEmuBarrier(t, "mma barrier");
  uint32_t aRegs[4], bRegs[2];
  float c[4] = {0, 0, 0, 0}, dOut[4];
  blockcEmuLdMatrix(t, tile + 16 * (8 * (q % 2) + lane % 8) + 8 * (q / 2),
                    aRegs, 4, 0, "mma ldmatrix");
  for (int r = 0; r < 2; ++r) {
    const uint16_t *k = b + 16 * g + 2 * (lane % 4) + 8 * r;
    bRegs[r] = static_cast<uint32_t>(k[0]) | static_cast<uint32_t>(k[1]) << 16;
  }
  blockcEmuMma(t, 0, aRegs, bRegs, c, dOut, "mma site");
  for (int i = 0; i < 4; ++i)
    d[8 * (g + 8 * (i / 2)) + 2 * (lane % 4) + i % 2] = dOut[i];
}

// cp.async into shared memory read before and after its wait.
void copyVisibilityKernel(void **params, BlockcEmuThread *t, void *shared,
                          int64_t) {
  auto *src = arg<const uint32_t *>(params, 0);
  auto *out = arg<uint32_t *>(params, 1);
  auto *dst = static_cast<uint32_t *>(shared) + 4 * t->laneId;
  blockcEmuCpAsync(t, dst, src + 4 * t->laneId, 16, 8, "copy");
  blockcEmuCpAsyncCommit(t);
  out[8 * t->laneId] = dst[0]; // not landed yet
  blockcEmuCpAsyncWait(t, 0, "wait");
  for (int i = 0; i < 4; ++i)
    out[8 * t->laneId + 1 + i] = dst[i]; // 2 copied, 2 zero-filled
}

void copyToGlobalKernel(void **params, BlockcEmuThread *t, void *, int64_t) {
  auto *buffer = arg<uint32_t *>(params, 0);
  blockcEmuCpAsync(t, buffer + 4, buffer, 16, 16, "bad copy");
}

void misalignedLdMatrixKernel(void **, BlockcEmuThread *t, void *shared,
                              int64_t) {
  uint32_t regs[4];
  char *row = static_cast<char *>(shared) + 16 * t->laneId;
  if (t->laneId == 5)
    row += 8;
  blockcEmuLdMatrix(t, row, regs, 4, 0, "ldmatrix site");
}

void mmaInPartialWarpKernel(void **, BlockcEmuThread *t, void *, int64_t) {
  uint32_t a[4] = {}, b[2] = {};
  float c[4] = {}, d[4];
  blockcEmuMma(t, 0, a, b, c, d, "partial mma");
}

void divergentMmaKernel(void **, BlockcEmuThread *t, void *, int64_t) {
  ++entered;
  if (t->laneId >= 16)
    return;
  uint32_t a[4] = {}, b[2] = {};
  float c[4] = {}, d[4];
  blockcEmuMma(t, 0, a, b, c, d, "half mma");
  ++finished;
}

// Hopper: mbarriers, TMA, wgmma.

/// Two threads pass two mbarrier phases, each phase publishing a word that
/// the other thread wrote before its arrival; out[4 i + 0..3] records what
/// thread i saw.
void mbarrierPhasesKernel(void **params, BlockcEmuThread *t, void *shared,
                          int64_t) {
  auto *out = arg<uint32_t *>(params, 0);
  auto *s = static_cast<uint32_t *>(shared);
  void *bar = s;
  uint32_t *word = s + 4;
  int i = t->threadId[0];
  if (i == 0)
    blockcEmuMbarrierInit(t, bar, 2, "init");
  blockcEmuBarrier(t, "after init");
  // Phase 0 is current: the phase of parity 1 counts as completed.
  blockcEmuMbarrierTryWaitParity(t, bar, 1, "early wait");
  out[4 * i] = 7;
  if (i == 1)
    *word = 42;
  blockcEmuMbarrierArrive(t, bar, 0, "arrive 0");
  blockcEmuMbarrierTryWaitParity(t, bar, 0, "wait 0");
  out[4 * i + 1] = *word;
  if (i == 0)
    *word = 43;
  blockcEmuMbarrierArrive(t, bar, 0, "arrive 1");
  blockcEmuMbarrierTryWaitParity(t, bar, 1, "wait 1");
  out[4 * i + 2] = *word;
  // Phase 2 is current: parity 1's phase completed.
  blockcEmuMbarrierTryWaitParity(t, bar, 1, "wait 1 again");
  out[4 * i + 3] = 9;
}

/// Thread `producer` loads an [64 x 64] 16-bit box at (x, y) into shared
/// offset 0 with TMA (the mbarrier at 8192 expects its 8192 bytes) and
/// copies shared memory out before the wait; thread 0 copies it after the
/// wait. A producer other than thread 0 exits without waiting: the copy
/// lands for the threads that already wait.
void tmaKernel(void **params, BlockcEmuThread *t, void *shared, int64_t) {
  void *map = arg<void *>(params, 0);
  int32_t coords[2] = {arg<int32_t>(params, 1), arg<int32_t>(params, 2)};
  auto *before = arg<uint8_t *>(params, 3);
  auto *after = arg<uint8_t *>(params, 4);
  char *s = static_cast<char *>(shared);
  void *bar = s + 8192;
  int32_t producer = arg<int32_t>(params, 5);
  int i = t->threadId[0];
  if (i == 0)
    blockcEmuMbarrierInit(t, bar, 1, "tma init");
  blockcEmuBarrier(t, "tma barrier");
  if (i == producer) {
    blockcEmuMbarrierArrive(t, bar, 8192, "tma expect");
    blockcEmuTmaLoad(t, s, map, 2, coords, bar, "tma load");
    std::memcpy(before, s, 8192); // not landed yet
    if (producer != 0) {
      ++finished;
      return;
    }
  }
  blockcEmuMbarrierTryWaitParity(t, bar, 0, "tma wait");
  if (i == 0)
    std::memcpy(after, s, 8192);
  ++finished;
}

/// Every thread waits on an mbarrier that thread 0 initialised (count 1);
/// thread 0 arrives expecting `tx` bytes if tx >= 0; no TMA delivers them.
void mbarrierDeadlockKernel(void **params, BlockcEmuThread *t, void *shared,
                            int64_t) {
  int32_t tx = arg<int32_t>(params, 0);
  if (t->threadId[0] == 0)
    blockcEmuMbarrierInit(t, shared, 1, "deadlock init");
  blockcEmuBarrier(t, "deadlock barrier");
  if (t->threadId[0] == 0 && tx >= 0)
    blockcEmuMbarrierArrive(t, shared, tx, "deadlock arrive");
  blockcEmuMbarrierTryWaitParity(t, shared, 0, "deadlock wait");
  ++finished;
}

/// Misuses of an mbarrier (`mode`): 0 arrive before init, 1 a third
/// arrival on a barrier of count 2 with transactions pending, 2 a
/// misaligned barrier, 3 a barrier outside shared memory, 4 count 0.
void mbarrierMisuseKernel(void **params, BlockcEmuThread *t, void *shared,
                          int64_t) {
  int32_t mode = arg<int32_t>(params, 0);
  char *s = static_cast<char *>(shared);
  switch (mode) {
  case 0:
    blockcEmuMbarrierArrive(t, s + 8, 0, "early arrive");
    break;
  case 1:
    blockcEmuMbarrierInit(t, s, 2, "init 2");
    blockcEmuMbarrierArrive(t, s, 16, "arrive");
    blockcEmuMbarrierArrive(t, s, 0, "arrive");
    blockcEmuMbarrierArrive(t, s, 0, "arrive");
    break;
  case 2:
    blockcEmuMbarrierInit(t, s + 4, 1, "misaligned init");
    break;
  case 3:
    blockcEmuMbarrierInit(t, s + 64, 1, "outside init");
    break;
  default:
    blockcEmuMbarrierInit(t, s, 0, "zero init");
    break;
  }
}

/// Thread 0 issues one TMA load of `map` to shared offset `dst` with `rank`
/// coordinates (0, 0), on the mbarrier at `barrier` (initialised first).
void tmaMisuseKernel(void **params, BlockcEmuThread *t, void *shared, int64_t) {
  void *map = arg<void *>(params, 0);
  int64_t dst = arg<int64_t>(params, 1), barrier = arg<int64_t>(params, 2);
  int32_t rank = arg<int32_t>(params, 3);
  char *s = static_cast<char *>(shared);
  int32_t coords[5] = {0, 0, 0, 0, 0};
  blockcEmuMbarrierInit(t, s + barrier, 1, "misuse init");
  blockcEmuTmaLoad(t, s + dst, map, rank, coords, s + barrier, "bad tma");
}

void unflaggedMbarrierKernel(void **, BlockcEmuThread *t, void *shared,
                             int64_t) {
  blockcEmuMbarrierInit(t, shared, 1, "unflagged init");
}

/// A wgmma matrix descriptor (the PTX ISA's format).
uint64_t matrixDescriptor(int64_t start, int64_t lbo, int64_t sbo, int mode) {
  return static_cast<uint64_t>(start >> 4) |
         static_cast<uint64_t>(lbo >> 4) << 16 |
         static_cast<uint64_t>(sbo >> 4) << 32 |
         static_cast<uint64_t>(mode) << 62;
}

/// A warpgroup loads A (64 x 64) and B (64 x 64, n x k) of bf16 with TMA
/// (128B swizzle) and multiplies them with four wgmma m64n64k16 (the
/// descriptors advance 32 bytes per k step); D goes out as [64][64].
void wgmmaKernel(void **params, BlockcEmuThread *t, void *shared, int64_t) {
  void *mapA = arg<void *>(params, 0), *mapB = arg<void *>(params, 1);
  auto *d = arg<float *>(params, 2);
  char *s = static_cast<char *>(shared);
  void *bar = s + 16384;
  int i = t->threadId[0];
  if (i == 0)
    blockcEmuMbarrierInit(t, bar, 1, "wgmma init");
  blockcEmuBarrier(t, "wgmma barrier");
  if (i == 0) {
    int32_t coords[2] = {0, 0};
    blockcEmuMbarrierArrive(t, bar, 16384, "wgmma expect");
    blockcEmuTmaLoad(t, s, mapA, 2, coords, bar, "load A");
    blockcEmuTmaLoad(t, s + 8192, mapB, 2, coords, bar, "load B");
  }
  blockcEmuMbarrierTryWaitParity(t, bar, 0, "wgmma wait");
  float acc[32] = {};
  for (int k = 0; k < 4; ++k)
    blockcEmuWgmma(t, 0, matrixDescriptor(32 * k, 16, 1024, 1),
                   matrixDescriptor(8192 + 32 * k, 16, 1024, 1), 64, 0, 0, acc,
                   0, "wgmma site");
  int w = i / 32 % 4, g = t->laneId / 4, q = t->laneId % 4;
  for (int j = 0; j < 8; ++j)
    for (int e = 0; e < 4; ++e)
      d[(16 * w + g + 8 * (e / 2)) * 64 + 8 * j + 2 * q + e % 2] =
          acc[4 * j + e];
}

/// One wgmma m64n8k16 over zeros with the given transpose flags.
void wgmmaMisuseKernel(void **params, BlockcEmuThread *t, void *, int64_t) {
  int32_t transposeA = arg<int32_t>(params, 0);
  float acc[4] = {};
  blockcEmuWgmma(t, 0, matrixDescriptor(0, 16, 1024, 1),
                 matrixDescriptor(8192, 16, 1024, 1), 8, transposeA, 0, acc, 0,
                 "misused wgmma");
}

/// Two chained wgmma groups (as a K loop issues them with wait depth 1),
/// then `params[0]` as the final wgmma.wait_group depth (-1: none), then
/// the accumulator is read.
void wgmmaWaitKernel(void **params, BlockcEmuThread *t, void *, int64_t) {
  int32_t finalDepth = arg<int32_t>(params, 0);
  float acc[4] = {};
  for (int k = 0; k < 2; ++k) {
    blockcEmuWgmma(t, 0, matrixDescriptor(0, 16, 1024, 1),
                   matrixDescriptor(8192, 16, 1024, 1), 8, 0, 0, acc, -1,
                   "chained wgmma");
    blockcEmuWgmmaCommit(t, 1, "chained wgmma");
  }
  if (finalDepth >= 0)
    blockcEmuWgmmaWait(t, finalDepth, "final wait");
  blockcEmuWgmmaRead(t, -1, "accumulator store");
}

/// A wgmma never committed before its accumulator is read.
void wgmmaUncommittedKernel(void **, BlockcEmuThread *t, void *, int64_t) {
  float acc[4] = {};
  blockcEmuWgmma(t, 0, matrixDescriptor(0, 16, 1024, 1),
                 matrixDescriptor(8192, 16, 1024, 1), 8, 0, 0, acc, -1,
                 "lone wgmma");
  blockcEmuWgmmaRead(t, -1, "accumulator store");
}

/// FlashAttention-3's overlap with two accumulators: S (accumulator 0: A
/// at shared offset 0, B at 8192) and then P V (accumulator 1: A, the P
/// tile, at 10240, B at 18432) are committed as two groups, then
/// wgmma.wait_group 1 retires S alone. `mode`: 0 reads S, waits for P V
/// (wait_group 0), then reads O and rewrites P (allowed); 1 reads O while
/// P V is in flight; 2 writes O (rescales it) while P V is in flight; 3
/// stores into the P tile while P V is in flight; 4 stores into S's A
/// tile, which no group in flight reads (allowed), then waits; 5 (thread
/// 0) issues a TMA load of `params[1]` into the P tile while P V is in
/// flight.
void wgmmaOverlapKernel(void **params, BlockcEmuThread *t, void *shared,
                        int64_t) {
  int32_t mode = arg<int32_t>(params, 0);
  char *s = static_cast<char *>(shared);
  float sAcc[4] = {}, oAcc[4] = {};
  blockcEmuWgmma(t, 0, matrixDescriptor(0, 16, 1024, 1),
                 matrixDescriptor(8192, 16, 1024, 1), 8, 0, 0, sAcc, 0,
                 "S wgmma");
  blockcEmuWgmmaCommit(t, 1, "S wgmma");
  blockcEmuWgmma(t, 0, matrixDescriptor(10240, 16, 1024, 1),
                 matrixDescriptor(18432, 16, 1024, 1), 8, 0, 0, oAcc, 1,
                 "P V wgmma");
  blockcEmuWgmmaCommit(t, 2, "P V wgmma");
  blockcEmuWgmmaWait(t, 1, "wait for S");
  int32_t flags = BLOCKC_EMU_ACCESS_STORE | BLOCKC_EMU_ACCESS_SHARED;
  switch (mode) {
  case 0:
    blockcEmuWgmmaRead(t, 0, "softmax reads S");
    blockcEmuWgmmaWait(t, 0, "wait for P V");
    blockcEmuWgmmaRead(t, 1, "rescale reads O");
    blockcEmuWgmmaWrite(t, 1, "rescale writes O");
    blockcEmuAccess(t, 0, s + 10240 + 4 * t->threadId[0], 4, flags, "P store");
    break;
  case 1:
    blockcEmuWgmmaRead(t, 1, "rescale reads O");
    break;
  case 2:
    blockcEmuWgmmaWrite(t, 1, "rescale writes O");
    break;
  case 3:
    blockcEmuAccess(t, 0, s + 12000, 4, flags, "P store");
    break;
  case 4:
    blockcEmuAccess(t, 0, s + 4 * t->threadId[0], 4, flags, "Q store");
    blockcEmuWgmmaWait(t, 0, "wait for P V");
    break;
  default:
    if (t->threadId[0] == 0) {
      int32_t coords[2] = {0, 0};
      blockcEmuMbarrierInit(t, s + 20480, 1, "overlap init");
      blockcEmuTmaLoad(t, s + 10240, arg<void *>(params, 1), 2, coords,
                       s + 20480, "P load");
    }
    break;
  }
}

//===----------------------------------------------------------------------===//
// Fixture
//===----------------------------------------------------------------------===//

class EmulatorRuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    blockcEmuClearError();
    entered = finished = 0;
    module = mgpuModuleLoad(const_cast<char *>(kModuleData),
                            sizeof(kModuleData) - 1);
    ASSERT_NE(module, nullptr);
  }

  void TearDown() override {
    for (BlockcEmuKernelFn fn : registered)
      blockcEmuUnregisterKernel(fn);
    mgpuModuleUnload(module);
    blockcEmuClearError();
  }

  void add(const char *name, BlockcEmuKernelFn fn,
           int32_t flags = BLOCKC_EMU_SYNCHRONIZES, int64_t staticShared = 0,
           int64_t maxShared = 48 * 1024, Dim3 known = {0, 0, 0}) {
    blockcEmuRegisterKernel("testmod", name, fn, staticShared, maxShared, flags,
                            known.x, known.y, known.z);
    registered.push_back(fn);
  }

  /// Launches like gpu-to-llvm's host code: look the function up, launch on
  /// a fresh stream, synchronize and destroy the stream.
  void launch(const char *name, Dim3 grid, Dim3 block,
              std::vector<void *> args = {}, int32_t dynamicShared = 0) {
    void *function = mgpuModuleGetFunction(module, name);
    void *stream = mgpuStreamCreate();
    mgpuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y,
                     block.z, dynamicShared, stream, args.data(), nullptr,
                     args.size());
    mgpuStreamSynchronize(stream);
    mgpuStreamDestroy(stream);
  }

  std::string error() {
    const char *message = blockcEmuLastError();
    return message ? message : "";
  }

  /// The error of launching `name` (registered already) with these sizes;
  /// the kernel must not have run.
  std::string launchError(const char *name, Dim3 grid, Dim3 block,
                          int32_t dynamicShared = 0) {
    blockcEmuClearError();
    entered = 0;
    launch(name, grid, block, {}, dynamicShared);
    EXPECT_EQ(entered, 0) << name;
    std::string message = error();
    blockcEmuClearError();
    return message;
  }

  void *module = nullptr;
  std::vector<BlockcEmuKernelFn> registered;
};

template <typename T> T *alloc(size_t count) {
  return static_cast<T *>(mgpuMemAlloc(count * sizeof(T), nullptr, true));
}

//===----------------------------------------------------------------------===//
// Barriers
//===----------------------------------------------------------------------===//

TEST_F(EmulatorRuntimeTest, BarrierReversesThroughSharedMemory) {
  add("reverse", reverseKernel, BLOCKC_EMU_SYNCHRONIZES, 256 * 4);
  constexpr int kBlocks = 4, kThreads = 256;
  float *in = alloc<float>(kBlocks * kThreads);
  float *out = alloc<float>(kBlocks * kThreads);
  for (int i = 0; i < kBlocks * kThreads; ++i)
    in[i] = static_cast<float>(i);
  launch("reverse", {kBlocks}, {kThreads}, {&in, &out});
  EXPECT_EQ(error(), "");
  for (int b = 0; b < kBlocks; ++b)
    for (int i = 0; i < kThreads; ++i)
      ASSERT_EQ(out[b * kThreads + i], in[b * kThreads + kThreads - 1 - i])
          << "block " << b << " thread " << i;
  mgpuMemFree(in, nullptr);
  mgpuMemFree(out, nullptr);
  EXPECT_EQ(error(), "");
}

TEST_F(EmulatorRuntimeTest, LaunchObserverSeesEachLaunch) {
  add("reverse", reverseKernel, BLOCKC_EMU_SYNCHRONIZES, 256 * 4);
  float *in = alloc<float>(256), *out = alloc<float>(256);
  std::vector<std::string> seen;
  blockcEmuSetLaunchObserver(
      [](const char *kernel, void *user) {
        static_cast<std::vector<std::string> *>(user)->push_back(kernel);
      },
      &seen);
  launch("reverse", {1}, {256}, {&in, &out});
  launch("reverse", {1}, {256}, {&in, &out});
  // A launch refused by its checks is not reported.
  launch("reverse", {1}, {2048}, {&in, &out});
  EXPECT_NE(error(), "");
  blockcEmuClearError();
  blockcEmuSetLaunchObserver(nullptr, nullptr);
  launch("reverse", {1}, {256}, {&in, &out});
  EXPECT_EQ(seen, (std::vector<std::string>{"reverse", "reverse"}));
  mgpuMemFree(in, nullptr);
  mgpuMemFree(out, nullptr);
  EXPECT_EQ(error(), "");
}

TEST_F(EmulatorRuntimeTest, TwoPhaseReduction) {
  add("reduce", reduceKernel, BLOCKC_EMU_SYNCHRONIZES, 256 * 8);
  constexpr int64_t kCount = 10000, kThreads = 256;
  constexpr int64_t kBlocks = (kCount + kThreads - 1) / kThreads; // 40
  int64_t *in = alloc<int64_t>(kCount);
  int64_t *partial = alloc<int64_t>(kBlocks);
  int64_t *total = alloc<int64_t>(1);
  int64_t expected = 0;
  for (int64_t i = 0; i < kCount; ++i) {
    in[i] = i * i % 1009;
    expected += in[i];
  }
  int64_t count = kCount;
  launch("reduce", {kBlocks}, {kThreads}, {&in, &partial, &count});
  int64_t expectedFirst = 0;
  for (int64_t i = 0; i < kThreads; ++i)
    expectedFirst += in[i];
  EXPECT_EQ(partial[0], expectedFirst);
  int64_t partials = kBlocks;
  launch("reduce", {1}, {64}, {&partial, &total, &partials});
  EXPECT_EQ(error(), "");
  EXPECT_EQ(total[0], expected);
  mgpuMemFree(in, nullptr);
  mgpuMemFree(partial, nullptr);
  mgpuMemFree(total, nullptr);
}

TEST_F(EmulatorRuntimeTest, DivergentBarrierAbandonsTheLaunch) {
  add("diverge", divergeKernel);
  add("reverse", reverseKernel, BLOCKC_EMU_SYNCHRONIZES, 64 * 4);
  testing::internal::CaptureStderr();
  launch("diverge", {2}, {128});
  std::string printed = testing::internal::GetCapturedStderr();
  const char *expected = "kernel 'diverge': divergent barrier in block "
                         "(0,0,0): 32 threads wait at siteA, 96 threads exited";
  EXPECT_EQ(error(), expected);
  EXPECT_EQ(printed, std::string("blockc GPU emulator: ") + expected + "\n");
  // Block 0's threads all started; none passed the barrier; block 1 never
  // ran.
  EXPECT_EQ(entered, 128);
  EXPECT_EQ(finished, 0);

  // The abandoned fibers' stacks serve the next launch.
  blockcEmuClearError();
  float *in = alloc<float>(64), *out = alloc<float>(64);
  for (int i = 0; i < 64; ++i)
    in[i] = static_cast<float>(i);
  launch("reverse", {1}, {64}, {&in, &out});
  EXPECT_EQ(error(), "");
  EXPECT_EQ(out[0], 63.0f);
  EXPECT_EQ(out[63], 0.0f);
  mgpuMemFree(in, nullptr);
  mgpuMemFree(out, nullptr);
}

TEST_F(EmulatorRuntimeTest, DifferentBarrierSitesDeadlock) {
  add("deadlock", deadlockKernel);
  launch("deadlock", {1}, {128});
  EXPECT_EQ(error(), "kernel 'deadlock': deadlock in block (0,0,0): 64 "
                     "threads wait at siteA, 64 threads wait at siteB");
  EXPECT_EQ(finished, 0);
}

TEST_F(EmulatorRuntimeTest, NamedBarrierSyncsPartOfTheBlock) {
  add("named", namedReverseKernel, BLOCKC_EMU_SYNCHRONIZES, 128 * 4);
  float *in = alloc<float>(128), *out = alloc<float>(128);
  for (int i = 0; i < 128; ++i)
    in[i] = static_cast<float>(i);
  launch("named", {3}, {256}, {&in, &out});
  EXPECT_EQ(error(), "");
  // out[j] = 2 * s[127 - j] = 2 * in[j] after two reversals.
  for (int j = 0; j < 128; ++j)
    ASSERT_EQ(out[j], 2.0f * j) << "thread " << j + 128;
  mgpuMemFree(in, nullptr);
  mgpuMemFree(out, nullptr);
}

TEST_F(EmulatorRuntimeTest, NamedBarrierMisuse) {
  add("misuse", namedMisuseKernel, BLOCKC_EMU_SYNCHRONIZES);
  auto run = [&](int32_t id, int32_t count, int32_t other) {
    blockcEmuClearError();
    finished = 0;
    launch("misuse", {1}, {128}, {&id, &count, &other});
    std::string message = error();
    blockcEmuClearError();
    return message;
  };
  EXPECT_EQ(run(2, 64, 64), "");
  EXPECT_EQ(finished, 64);
  EXPECT_EQ(run(16, 64, 64),
            "kernel 'misuse': thread (0,0,0) of block (0,0,0): bar.sync at "
            "misused uses barrier 16 (0 to 15)");
  EXPECT_EQ(run(1, 48, 48),
            "kernel 'misuse': thread (0,0,0) of block (0,0,0): bar.sync at "
            "misused expects 48 threads (a positive multiple of 32 up to the "
            "block's 128)");
  EXPECT_EQ(run(1, 64, 96),
            "kernel 'misuse': thread (32,0,0) of block (0,0,0): bar.sync at "
            "misused expects 96 threads at barrier 1, where the 32 threads "
            "waiting there expect 64");
  // 96 threads expected, 64 arrive, the others exited.
  EXPECT_EQ(run(1, 96, 96),
            "kernel 'misuse': divergent barrier in block (0,0,0): 64 threads "
            "wait at misused, 64 threads exited");
  EXPECT_EQ(finished, 0);
}

TEST_F(EmulatorRuntimeTest, BarrierInUnflaggedKernel) {
  add("unflagged", unflaggedBarrierKernel, 0);
  launch("unflagged", {4}, {64});
  EXPECT_EQ(error(), "kernel 'unflagged': reaches the barrier at unflagged "
                     "barrier but was registered without "
                     "BLOCKC_EMU_SYNCHRONIZES");
  // The plain loop stops after the thread that failed.
  EXPECT_EQ(entered, 1);
}

// Work queued on a stream that the host did not wait for is an error when
// blockcEmuCheckStreams is called (a driver, after host code returned); a
// wait or a destroyed stream forgets it.
TEST_F(EmulatorRuntimeTest, StreamsLeftWithQueuedWork) {
  add("noop", noopKernel, 0);
  void *function = mgpuModuleGetFunction(module, "noop");
  // What earlier tests left queued does not count here.
  blockcEmuCheckStreams();
  blockcEmuClearError();
  entered = 0;
  void *waited = mgpuStreamCreate(), *left = mgpuStreamCreate();
  int32_t *word = alloc<int32_t>(1);
  mgpuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, waited, nullptr, nullptr, 0);
  mgpuStreamSynchronize(waited);
  mgpuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, left, nullptr, nullptr, 0);
  mgpuMemset32(word, 7, 1, left);
  // Each ran when it was made.
  EXPECT_EQ(entered, 2);
  EXPECT_EQ(*word, 7);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(blockcEmuCheckStreams(), 2);
  EXPECT_EQ(error(), "2 kernel launches, copies or memsets on 1 stream were "
                     "not waited for (mgpuStreamSynchronize) when the host "
                     "code returned: on a GPU they could still be running "
                     "when their results are read");
  blockcEmuClearError();
  // The counts started again.
  EXPECT_EQ(blockcEmuCheckStreams(), 0);
  EXPECT_EQ(error(), "");
  mgpuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, left, nullptr, nullptr, 0);
  mgpuStreamDestroy(left);
  mgpuStreamDestroy(waited);
  EXPECT_EQ(blockcEmuCheckStreams(), 0);
  EXPECT_EQ(error(), "");
  mgpuMemFree(word, nullptr);
}

TEST_F(EmulatorRuntimeTest, CollectivesOutsideALaunch) {
  blockcEmuBarrier(nullptr, "stray barrier");
  EXPECT_EQ(error(), "blockcEmuBarrier (at stray barrier) called outside an "
                     "emulated kernel launch");
}

TEST_F(EmulatorRuntimeTest, ManyBlocksWithManyBarriers) {
  add("many", manyBarriersKernel, BLOCKC_EMU_SYNCHRONIZES, 256 * 4);
  constexpr int kBlocks = 2048, kThreads = 256;
  int32_t barriers = 8; // 16 barriers per thread
  int32_t *out = alloc<int32_t>(kBlocks * kThreads);
  BlockcEmuStats before, after;
  blockcEmuGetStats(&before);
  auto start = std::chrono::steady_clock::now();
  launch("many", {kBlocks}, {kThreads}, {&out, &barriers});
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  blockcEmuGetStats(&after);
  EXPECT_EQ(error(), "");
  for (int b = 0; b < kBlocks; ++b)
    for (int i = 0; i < kThreads; ++i)
      ASSERT_EQ(out[b * kThreads + i], (i + barriers) % kThreads);
  // Every thread is resumed once to start and once after each barrier.
  int64_t switches = int64_t(kBlocks) * kThreads * (2 * barriers + 1);
  EXPECT_EQ(after.switches - before.switches, switches);
  std::printf("%lld fiber switches in %.3f s (%.1f ns each)\n",
              static_cast<long long>(switches), seconds,
              seconds * 1e9 / static_cast<double>(switches));
  mgpuMemFree(out, nullptr);
}

//===----------------------------------------------------------------------===//
// Shuffles
//===----------------------------------------------------------------------===//

class ShuffleTest : public EmulatorRuntimeTest {
protected:
  /// Runs the shuffle cases and returns result[case][lane].
  std::vector<std::vector<Shuffled>> run(const std::vector<int32_t> &cases,
                                         int32_t width, int32_t active) {
    add("shuffle", shuffleKernel);
    int32_t *caseData = alloc<int32_t>(cases.size());
    std::memcpy(caseData, cases.data(), cases.size() * sizeof(int32_t));
    int32_t caseCount = static_cast<int32_t>(cases.size() / 2);
    int64_t *out = alloc<int64_t>(caseCount * 32);
    mgpuMemset32(out, 0xDEADBEEF, caseCount * 64, nullptr);
    launch("shuffle", {1}, {32},
           {&caseData, &caseCount, &width, &active, &out});
    EXPECT_EQ(error(), "");
    std::vector<std::vector<Shuffled>> results(caseCount);
    for (int c = 0; c < caseCount; ++c)
      for (int lane = 0; lane < active; ++lane)
        results[c].push_back(split(out[c * 32 + lane]));
    mgpuMemFree(caseData, nullptr);
    mgpuMemFree(out, nullptr);
    return results;
  }
};

/// The value lane `lane` offers.
int32_t offered(int lane) { return lane * 10 + 1; }

TEST_F(ShuffleTest, EveryModeWithWidth32) {
  auto r = run({kXor, 1, kXor, 16, kXor, 0, kDown, 1, kDown, 5, kUp, 1, kUp, 3,
                kIdx, 7, kIdx, 35},
               32, 32);
  for (int lane = 0; lane < 32; ++lane) {
    SCOPED_TRACE("lane " + std::to_string(lane));
    EXPECT_EQ(r[0][lane], (Shuffled{offered(lane ^ 1), true}));
    EXPECT_EQ(r[1][lane], (Shuffled{offered(lane ^ 16), true}));
    EXPECT_EQ(r[2][lane], (Shuffled{offered(lane), true}));
    // down: lanes whose source is past lane 31 keep their value, invalid.
    EXPECT_EQ(r[3][lane], (lane < 31 ? Shuffled{offered(lane + 1), true}
                                     : Shuffled{offered(lane), false}));
    EXPECT_EQ(r[4][lane], (lane <= 26 ? Shuffled{offered(lane + 5), true}
                                      : Shuffled{offered(lane), false}));
    // up: lanes whose source is below lane 0 keep their value, invalid.
    EXPECT_EQ(r[5][lane], (lane >= 1 ? Shuffled{offered(lane - 1), true}
                                     : Shuffled{offered(lane), false}));
    EXPECT_EQ(r[6][lane], (lane >= 3 ? Shuffled{offered(lane - 3), true}
                                     : Shuffled{offered(lane), false}));
    // idx: every lane reads the source lane; the index is taken mod 32.
    EXPECT_EQ(r[7][lane], (Shuffled{offered(7), true}));
    EXPECT_EQ(r[8][lane], (Shuffled{offered(3), true}));
  }
}

TEST_F(ShuffleTest, EveryModeWithWidth16) {
  // Only lanes 0-15 (the member mask) take part.
  auto r =
      run({kXor, 8, kXor, 16, kDown, 4, kUp, 1, kIdx, 3, kIdx, 20}, 16, 16);
  for (int lane = 0; lane < 16; ++lane) {
    SCOPED_TRACE("lane " + std::to_string(lane));
    EXPECT_EQ(r[0][lane], (Shuffled{offered(lane ^ 8), true}));
    // Sources above the clamp (lane 15) are invalid.
    EXPECT_EQ(r[1][lane], (Shuffled{offered(lane), false}));
    EXPECT_EQ(r[2][lane], (lane <= 11 ? Shuffled{offered(lane + 4), true}
                                      : Shuffled{offered(lane), false}));
    // up with width 16 clamps at lane 32 - 16 = 16: no member lane is
    // valid (shfl.sync.up as convert-gpu-to-nvvm emits it).
    EXPECT_EQ(r[3][lane], (Shuffled{offered(lane), false}));
    EXPECT_EQ(r[4][lane], (Shuffled{offered(3), true}));
    EXPECT_EQ(r[5][lane], (Shuffled{offered(lane), false}));
  }
}

TEST_F(ShuffleTest, Width8) {
  auto r = run({kXor, 4, kDown, 1, kIdx, 5}, 8, 8);
  for (int lane = 0; lane < 8; ++lane) {
    SCOPED_TRACE("lane " + std::to_string(lane));
    EXPECT_EQ(r[0][lane], (Shuffled{offered(lane ^ 4), true}));
    EXPECT_EQ(r[1][lane], (lane < 7 ? Shuffled{offered(lane + 1), true}
                                    : Shuffled{offered(lane), false}));
    EXPECT_EQ(r[2][lane], (Shuffled{offered(5), true}));
  }
}

TEST_F(EmulatorRuntimeTest, PartialWarp) {
  add("butterfly", butterflyKernel);
  int32_t *out = alloc<int32_t>(48);
  launch("butterfly", {1}, {48}, {&out});
  EXPECT_EQ(error(), "");
  // Sums over groups of 16 consecutive thread ids; warp 1 has lanes 0-15.
  for (int i = 0; i < 48; ++i) {
    int group = i / 16 * 16;
    EXPECT_EQ(out[i], 16 * group + 120) << "thread " << i;
  }
  mgpuMemFree(out, nullptr);
}

TEST_F(EmulatorRuntimeTest, ShuffleFromAMissingLaneOfAPartialWarp) {
  add("xor16", xor16Kernel);
  launch("xor16", {1}, {48});
  EXPECT_EQ(error(), "kernel 'xor16': lane 0 of warp 1 in block (0,0,0) "
                     "reads lane 16 in the shuffle at xor16 shuffle (xor 16, "
                     "width 32), but lane 16 does not exist in this partial "
                     "warp");
}

TEST_F(EmulatorRuntimeTest, DivergentShuffle) {
  add("shfl_diverge", shuffleDivergeKernel);
  launch("shfl_diverge", {1}, {64});
  EXPECT_EQ(error(), "kernel 'shfl_diverge': divergent shuffle in block "
                     "(0,0,0), warp 0: 16 threads wait at shuffle site, 16 "
                     "threads exited");
  EXPECT_EQ(finished, 0);
}

TEST_F(EmulatorRuntimeTest, ShuffleLaneOutsideTheMemberMask) {
  add("outside_mask", outsideMaskKernel);
  launch("outside_mask", {1}, {32});
  EXPECT_EQ(error(), "kernel 'outside_mask': lane 16 of warp 0 in block "
                     "(0,0,0) executes the shuffle at width-16 shuffle with "
                     "width 16, outside its member mask (lanes 0-15)");
}

TEST_F(EmulatorRuntimeTest, ShufflesCompleteWhileOtherWarpsWaitAtABarrier) {
  add("interleave", interleaveKernel, BLOCKC_EMU_SYNCHRONIZES, 8);
  int32_t *out = alloc<int32_t>(64);
  launch("interleave", {1}, {64}, {&out});
  EXPECT_EQ(error(), "");
  // sum(0..31) + sum(32..63) + 32.
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(out[i], 496 + 1520 + 32) << "thread " << i;
  mgpuMemFree(out, nullptr);
}

//===----------------------------------------------------------------------===//
// Thread ids and shared memory
//===----------------------------------------------------------------------===//

TEST_F(EmulatorRuntimeTest, ThreadAndBlockIdsOf3DLaunch) {
  // The same kernel as a plain loop and on fibers.
  add("ids_loop", idsKernel, 0, 28);
  add("ids_fibers", idsKernel, BLOCKC_EMU_SYNCHRONIZES, 28);
  Dim3 grid{2, 3, 2}, block{4, 2, 5};
  int blocks = 12, threads = 40;
  for (const char *name : {"ids_loop", "ids_fibers"}) {
    SCOPED_TRACE(name);
    int32_t *out = alloc<int32_t>(blocks * threads * 15);
    blockOrder = 0;
    launch(name, grid, block, {&out}, 100);
    EXPECT_EQ(error(), "");
    for (int bz = 0; bz < 2; ++bz)
      for (int by = 0; by < 3; ++by)
        for (int bx = 0; bx < 2; ++bx)
          for (int tz = 0; tz < 5; ++tz)
            for (int ty = 0; ty < 2; ++ty)
              for (int tx = 0; tx < 4; ++tx) {
                int b = bx + by * 2 + bz * 6, t = tx + ty * 4 + tz * 8;
                const int32_t *o = out + (b * threads + t) * 15;
                std::vector<int32_t> got(o, o + 15);
                std::vector<int32_t> want = {
                    tx, ty, tz,     bx,  by,
                    bz, 4,  2,      5,   2,
                    3,  2,  t % 32, 128, t == 0 ? b : -1};
                ASSERT_EQ(got, want) << "block " << b << " thread " << t;
              }
    mgpuMemFree(out, nullptr);
  }
}

TEST_F(EmulatorRuntimeTest, SharedMemoryStartsAsNaNInEveryBlock) {
  add("fill", sharedFillKernel, BLOCKC_EMU_SYNCHRONIZES, 1000);
  uint32_t *out = alloc<uint32_t>(3 * 64);
  int32_t *aligned = alloc<int32_t>(1);
  *aligned = 1;
  launch("fill", {3}, {64}, {&out, &aligned}, 24);
  EXPECT_EQ(error(), "");
  for (int i = 0; i < 3 * 64; ++i) {
    ASSERT_EQ(out[i], 0xFFFFFFFFu) << i;
    float f;
    std::memcpy(&f, &out[i], 4);
    ASSERT_TRUE(std::isnan(f));
  }
  EXPECT_EQ(*aligned, 1);
  mgpuMemFree(out, nullptr);
  mgpuMemFree(aligned, nullptr);
}

//===----------------------------------------------------------------------===//
// Launch checks
//===----------------------------------------------------------------------===//

TEST_F(EmulatorRuntimeTest, LaunchLimits) {
  add("noop", noopKernel, 0);
  EXPECT_EQ(launchError("noop", {1}, {5, 5, 41}),
            "kernel 'noop': block (5,5,41) has 1025 threads, more than 1024");
  EXPECT_EQ(launchError("noop", {1}, {1025}),
            "kernel 'noop': block x = 1025 exceeds 1024");
  EXPECT_EQ(launchError("noop", {1}, {1, 1025}),
            "kernel 'noop': block y = 1025 exceeds 1024");
  EXPECT_EQ(launchError("noop", {1}, {1, 1, 65}),
            "kernel 'noop': block z = 65 exceeds 64");
  EXPECT_EQ(launchError("noop", {1, 65536}, {32}),
            "kernel 'noop': grid y = 65536 exceeds 65535");
  EXPECT_EQ(launchError("noop", {1, 1, 70000}, {32}),
            "kernel 'noop': grid z = 70000 exceeds 65535");
  EXPECT_EQ(launchError("noop", {intptr_t(1) << 31}, {32}),
            "kernel 'noop': grid x = 2147483648 exceeds 2147483647");
  EXPECT_EQ(launchError("noop", {0}, {32}),
            "kernel 'noop': grid x = 0 is not positive");
  EXPECT_EQ(launchError("noop", {4, 1, 0}, {32}),
            "kernel 'noop': grid z = 0 is not positive");
  EXPECT_EQ(launchError("noop", {1}, {32, 0}),
            "kernel 'noop': block y = 0 is not positive");
  EXPECT_EQ(launchError("noop", {1}, {32}, -4),
            "kernel 'noop': dynamic shared memory of -4 bytes is negative");

  // The largest legal launch shapes run.
  entered = 0;
  launch("noop", {2, 1, 1}, {1024});
  launch("noop", {1}, {16, 1, 64});
  EXPECT_EQ(error(), "");
  EXPECT_EQ(entered, 2048 + 1024);
}

TEST_F(EmulatorRuntimeTest, SharedMemoryLimits) {
  add("static_too_big", noopKernel, 0, 49153, 227 * 1024);
  EXPECT_EQ(launchError("static_too_big", {1}, {32}),
            "kernel 'static_too_big': static shared memory of 49153 bytes "
            "exceeds 49152");
  add("dynamic", noopKernel, 0, 1024);
  EXPECT_EQ(launchError("dynamic", {1}, {32}, 48129),
            "kernel 'dynamic': static (1024) plus dynamic (48129) shared "
            "memory is 49153 bytes, more than the target's 49152");
  add("opt_in", noopKernel, 0, 1024, 101376);
  EXPECT_EQ(launchError("opt_in", {1}, {32}, 100353),
            "kernel 'opt_in': static (1024) plus dynamic (100353) shared "
            "memory is 101377 bytes, more than the target's 101376");
  // Up to the limit, dynamic shared memory above 48 KiB is fine.
  entered = 0;
  launch("opt_in", {1}, {32}, {}, 100352);
  launch("dynamic", {1}, {32}, {}, 48128);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(entered, 64);
}

TEST_F(EmulatorRuntimeTest, KnownBlockSize) {
  add("known", noopKernel, 0, 0, 48 * 1024, {128, 1, 1});
  EXPECT_EQ(launchError("known", {1}, {64}),
            "kernel 'known': block size (64,1,1) differs from the kernel's "
            "known block size (128,1,1)");
  EXPECT_EQ(launchError("known", {1}, {128, 1, 2}),
            "kernel 'known': block size (128,1,2) differs from the kernel's "
            "known block size (128,1,1)");
  entered = 0;
  launch("known", {3}, {128});
  EXPECT_EQ(error(), "");
  EXPECT_EQ(entered, 3 * 128);
}

TEST_F(EmulatorRuntimeTest, ClusterLaunch) {
  add("noop", noopKernel, 0);
  void *function = mgpuModuleGetFunction(module, "noop");
  mgpuLaunchClusterKernel(function, 2, 1, 1, 4, 2, 1, 32, 1, 1, 0, nullptr,
                          nullptr, nullptr, 0);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(entered, 8 * 32);
  entered = 0;
  mgpuLaunchClusterKernel(function, 3, 1, 1, 4, 2, 1, 32, 1, 1, 0, nullptr,
                          nullptr, nullptr, 0);
  EXPECT_EQ(error(), "kernel 'noop': cluster x = 3 does not divide grid x = 4");
  EXPECT_EQ(entered, 0);
}

TEST_F(EmulatorRuntimeTest, NullFunction) {
  mgpuLaunchKernel(nullptr, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  EXPECT_EQ(error(), "launch of a null kernel function (mgpuModuleGetFunction "
                     "found no kernel)");
}

TEST_F(EmulatorRuntimeTest, UnknownKernelAndNullModule) {
  EXPECT_EQ(mgpuModuleGetFunction(module, "nope"), nullptr);
  EXPECT_EQ(error(),
            "kernel 'nope' is not registered in emulator module 'testmod'");
  blockcEmuClearError();
  EXPECT_EQ(mgpuModuleGetFunction(nullptr, "k"), nullptr);
  EXPECT_EQ(error(), "mgpuModuleGetFunction('k') on a null module (the GPU "
                     "module did not load)");
}

TEST_F(EmulatorRuntimeTest, ModuleData) {
  // mgpuModuleLoad uses the size (the data need not end in NUL);
  // mgpuModuleLoadJIT reads a C string. Both name the same module.
  char data[] = "blockc-emulator:testmodGARBAGE";
  EXPECT_EQ(mgpuModuleLoad(data, sizeof(kModuleData) - 1), module);
  char text[] = "blockc-emulator:testmod";
  EXPECT_EQ(mgpuModuleLoadJIT(text, 2), module);
  EXPECT_NE(mgpuModuleLoad(data, sizeof(data) - 1), module);
  EXPECT_EQ(error(), "");

  char cubin[] = "\x7f"
                 "ELF\x02\x01\x01";
  EXPECT_EQ(mgpuModuleLoad(cubin, sizeof(cubin) - 1), nullptr);
  EXPECT_EQ(error(), "mgpuModuleLoad: the GPU module is not an emulator "
                     "module (it is an ELF object, a cubin); compile with "
                     "--emulate");
  blockcEmuClearError();
  char ptx[] = "//\n// Generated by LLVM NVPTX Back-End\n.version 8.0\n";
  EXPECT_EQ(mgpuModuleLoadJIT(ptx, 2), nullptr);
  EXPECT_EQ(error(), "mgpuModuleLoadJIT: the GPU module is not an emulator "
                     "module (it looks like PTX); compile with --emulate");
  blockcEmuClearError();
  char shortData[] = "blockc-emu";
  EXPECT_EQ(mgpuModuleLoad(shortData, sizeof(shortData) - 1), nullptr);
  EXPECT_EQ(error(), "mgpuModuleLoad: the GPU module is not an emulator "
                     "module; compile with --emulate");
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(EmulatorRuntimeTest, OutOfBoundsReport) {
  add("oob", outOfBoundsKernel, 0);
  testing::internal::CaptureStderr();
  launch("oob", {3}, {8});
  std::string printed = testing::internal::GetCapturedStderr();
  const char *expected = "kernel 'oob': out-of-bounds access at oob site in "
                         "thread (3,0,0) of block (1,0,0): index 7 is "
                         "outside [0, 5) in dimension 1";
  EXPECT_EQ(error(), expected);
  EXPECT_EQ(printed, std::string("blockc GPU emulator: ") + expected +
                         "\nblockc GPU emulator: kernel 'oob': 1 more "
                         "out-of-bounds access in this launch\n");
  // The access is skipped and the launch goes on.
  EXPECT_EQ(entered, 24);
}

TEST_F(EmulatorRuntimeTest, StickyErrorUntilCleared) {
  add("noop", noopKernel, 0);
  testing::internal::CaptureStderr();
  mgpuModuleGetFunction(module, "missing");
  const char *first =
      "kernel 'missing' is not registered in emulator module 'testmod'";
  // Later errors are not recorded and launches do nothing; memory keeps
  // working (host code of a failed program must not get null buffers).
  launch("noop", {1, 1, 0}, {32});
  launch("noop", {2}, {32});
  EXPECT_EQ(entered, 0);
  void *buffer = mgpuMemAlloc(64, nullptr, true);
  EXPECT_NE(buffer, nullptr);
  mgpuMemFree(buffer, nullptr);
  uint32_t a = 1, b = 2;
  mgpuMemcpy(&a, &b, sizeof(a), nullptr);
  EXPECT_EQ(a, 2u);
  mgpuMemset32(&a, 7, 1, nullptr);
  EXPECT_EQ(a, 7u);
  a = 1;
  EXPECT_EQ(error(), first);
  std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(printed, std::string("blockc GPU emulator: ") + first + "\n");

  blockcEmuClearError();
  EXPECT_EQ(blockcEmuLastError(), nullptr);
  launch("noop", {2}, {32});
  mgpuMemcpy(&a, &b, sizeof(a), nullptr);
  EXPECT_EQ(entered, 64);
  EXPECT_EQ(a, 2u);
  EXPECT_EQ(error(), "");
}

//===----------------------------------------------------------------------===//
// Registration, memory, streams, counters
//===----------------------------------------------------------------------===//

TEST_F(EmulatorRuntimeTest, NewestRegistrationWinsUntilUnregistered) {
  add("versioned", firstVersionKernel, 0);
  add("versioned", secondVersionKernel, 0);
  int32_t *out = alloc<int32_t>(1);
  launch("versioned", {1}, {1}, {&out});
  EXPECT_EQ(*out, 2);
  blockcEmuUnregisterKernel(secondVersionKernel);
  launch("versioned", {1}, {1}, {&out});
  EXPECT_EQ(*out, 1);
  EXPECT_EQ(error(), "");

  // A function looked up before its kernel was unregistered.
  void *stale = mgpuModuleGetFunction(module, "versioned");
  blockcEmuUnregisterKernel(firstVersionKernel);
  *out = 0;
  void *params[] = {&out};
  mgpuLaunchKernel(stale, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr, 1);
  EXPECT_EQ(*out, 0);
  EXPECT_EQ(error(), "kernel 'versioned' of emulator module 'testmod' was "
                     "unregistered before its launch");
  blockcEmuClearError();
  EXPECT_EQ(mgpuModuleGetFunction(module, "versioned"), nullptr);
  EXPECT_EQ(error(), "kernel 'versioned' is not registered in emulator module "
                     "'testmod'");
  blockcEmuClearError();
  mgpuMemFree(out, nullptr);
}

TEST_F(EmulatorRuntimeTest, Memory) {
  EXPECT_EQ(mgpuMemAlloc(0, nullptr, false), nullptr);
  EXPECT_EQ(error(), "");
  auto *p = static_cast<uint8_t *>(mgpuMemAlloc(1000, nullptr, false));
  auto *q = static_cast<uint8_t *>(mgpuMemAlloc(1, mgpuStreamCreate(), true));
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 256, 0u);
  // Fresh device memory reads as NaN (0xFF bytes), every byte of it: a
  // kernel that reads what nobody wrote fails its comparison.
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(p[i], 0xFF) << i;
  EXPECT_EQ(q[0], 0xFF);
  float fresh;
  std::memcpy(&fresh, p + 40, sizeof(fresh));
  EXPECT_TRUE(std::isnan(fresh));

  mgpuMemset32(p, 0x01020304u, 250, nullptr);
  uint32_t word;
  std::memcpy(&word, p + 996, 4);
  EXPECT_EQ(word, 0x01020304u);
  mgpuMemset16(p, 0xABCD, 3, nullptr);
  uint16_t half;
  std::memcpy(&half, p + 4, 2);
  EXPECT_EQ(half, 0xABCD);
  std::memcpy(&half, p + 6, 2);
  EXPECT_EQ(half, 0x0102);
  // mgpuMemcpy is a memmove: overlapping ranges are fine.
  for (int i = 0; i < 16; ++i)
    p[i] = static_cast<uint8_t>(i);
  mgpuMemcpy(p + 2, p, 8, nullptr);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(p[2 + i], i);
  EXPECT_EQ(error(), "");

  // Host registration is a no-op, the memref variants included.
  float host[6] = {};
  int64_t descriptor[] = {reinterpret_cast<int64_t>(host),
                          reinterpret_cast<int64_t>(host),
                          0,
                          2,
                          3,
                          3,
                          1};
  mgpuMemHostRegister(host, sizeof(host));
  mgpuMemHostRegisterMemRef(2, descriptor, 4);
  mgpuMemHostUnregisterMemRef(2, descriptor, 4);
  mgpuMemHostUnregister(host);
  mgpuSetDefaultDevice(0);
  EXPECT_EQ(error(), "");

  mgpuMemFree(nullptr, nullptr);
  mgpuMemFree(q, nullptr);
  EXPECT_EQ(error(), "");
  mgpuMemFree(q, nullptr);
  char expected[128];
  std::snprintf(expected, sizeof(expected),
                "mgpuMemFree(%p): not a live allocation of mgpuMemAlloc",
                static_cast<void *>(q));
  EXPECT_EQ(error(), expected);
  blockcEmuClearError();
  mgpuMemFree(host, nullptr);
  std::snprintf(expected, sizeof(expected),
                "mgpuMemFree(%p): not a live allocation of mgpuMemAlloc",
                static_cast<void *>(host));
  EXPECT_EQ(error(), expected);
  blockcEmuClearError();
  // Frees still work after an error.
  mgpuModuleGetFunction(module, "missing");
  mgpuMemFree(p, nullptr);
  blockcEmuClearError();
  mgpuMemFree(p, nullptr);
  EXPECT_NE(error(), "");
}

TEST_F(EmulatorRuntimeTest, StreamsAndEventsAreDistinctTokens) {
  void *s1 = mgpuStreamCreate(), *s2 = mgpuStreamCreate();
  void *e1 = mgpuEventCreate(), *e2 = mgpuEventCreate();
  EXPECT_NE(s1, nullptr);
  EXPECT_NE(e1, nullptr);
  EXPECT_NE(s1, s2);
  EXPECT_NE(e1, e2);
  EXPECT_NE(s1, e1);
  mgpuEventRecord(e1, s1);
  mgpuStreamWaitEvent(s2, e1);
  mgpuEventSynchronize(e1);
  mgpuStreamSynchronize(s2);
  mgpuEventDestroy(e1);
  mgpuEventDestroy(e2);
  mgpuStreamDestroy(s1);
  mgpuStreamDestroy(s2);
  EXPECT_EQ(error(), "");
}

TEST_F(EmulatorRuntimeTest, Stats) {
  add("noop", noopKernel, 0);
  add("reverse", reverseKernel, BLOCKC_EMU_SYNCHRONIZES, 64 * 4);
  BlockcEmuStats s0, s1, s2;
  blockcEmuGetStats(&s0);
  launch("noop", {3}, {64});
  blockcEmuGetStats(&s1);
  EXPECT_EQ(s1.launches - s0.launches, 1);
  EXPECT_EQ(s1.blocks - s0.blocks, 3);
  EXPECT_EQ(s1.threads - s0.threads, 192);
  EXPECT_EQ(s1.fiberRuns - s0.fiberRuns, 0);
  EXPECT_EQ(s1.switches - s0.switches, 0);
  float *in = alloc<float>(128), *out = alloc<float>(128);
  launch("reverse", {2}, {64}, {&in, &out});
  blockcEmuGetStats(&s2);
  EXPECT_EQ(s2.launches - s1.launches, 1);
  EXPECT_EQ(s2.blocks - s1.blocks, 2);
  EXPECT_EQ(s2.threads - s1.threads, 128);
  EXPECT_EQ(s2.fiberRuns - s1.fiberRuns, 1);
  // Each thread starts once and resumes once after its barrier.
  EXPECT_EQ(s2.switches - s1.switches, 256);
  mgpuMemFree(in, nullptr);
  mgpuMemFree(out, nullptr);
}

//===----------------------------------------------------------------------===//
// Tensor-core instructions
//===----------------------------------------------------------------------===//

uint16_t bf16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return static_cast<uint16_t>(bits >> 16);
}

TEST_F(EmulatorRuntimeTest, MmaThroughSharedMemory) {
  add("mma", mmaKernel, BLOCKC_EMU_SYNCHRONIZES, 16 * 16 * 2);
  uint16_t *a = alloc<uint16_t>(16 * 16), *b = alloc<uint16_t>(8 * 16);
  float *d = alloc<float>(16 * 8);
  // Small integers: exact in bf16 and in the sums.
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 16; ++k)
      a[16 * i + k] = bf16Bits(static_cast<float>((3 * i + 5 * k) % 7 - 3));
  for (int n = 0; n < 8; ++n)
    for (int k = 0; k < 16; ++k)
      b[16 * n + k] = bf16Bits(static_cast<float>((2 * n + k) % 5 - 2));
  launch("mma", {1}, {32}, {&a, &b, &d});
  EXPECT_EQ(error(), "");
  for (int i = 0; i < 16; ++i)
    for (int n = 0; n < 8; ++n) {
      float expected = 0;
      for (int k = 0; k < 16; ++k)
        expected += static_cast<float>((3 * i + 5 * k) % 7 - 3) *
                    static_cast<float>((2 * n + k) % 5 - 2);
      EXPECT_EQ(d[8 * i + n], expected) << i << ", " << n;
    }
  mgpuMemFree(a, nullptr);
  mgpuMemFree(b, nullptr);
  mgpuMemFree(d, nullptr);
}

TEST_F(EmulatorRuntimeTest, CpAsyncLandsAtTheWait) {
  add("copy", copyVisibilityKernel, 0, 32 * 16);
  uint32_t *src = alloc<uint32_t>(32 * 4), *out = alloc<uint32_t>(32 * 8);
  for (int i = 0; i < 32 * 4; ++i)
    src[i] = 1000 + i;
  launch("copy", {1}, {32}, {&src, &out});
  EXPECT_EQ(error(), "");
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(out[8 * l], 0xFFFFFFFFu) << "lane " << l; // fresh shared memory
    EXPECT_EQ(out[8 * l + 1], 1000u + 4 * l);
    EXPECT_EQ(out[8 * l + 2], 1001u + 4 * l);
    EXPECT_EQ(out[8 * l + 3], 0u); // zero-filled past the 8 source bytes
    EXPECT_EQ(out[8 * l + 4], 0u);
  }
  mgpuMemFree(src, nullptr);
  mgpuMemFree(out, nullptr);
}

TEST_F(EmulatorRuntimeTest, CpAsyncMustWriteSharedMemory) {
  add("to_global", copyToGlobalKernel, 0, 64);
  uint32_t *buffer = alloc<uint32_t>(8);
  launch("to_global", {1}, {1}, {&buffer});
  EXPECT_EQ(error(), "kernel 'to_global': thread (0,0,0) of block (0,0,0): "
                     "cp.async at bad copy writes outside the block's 64 "
                     "bytes of shared memory");
  mgpuMemFree(buffer, nullptr);
}

TEST_F(EmulatorRuntimeTest, LdMatrixRowsMustBeAlignedSharedRows) {
  add("ldm", misalignedLdMatrixKernel, BLOCKC_EMU_SYNCHRONIZES, 32 * 16 + 16);
  launch("ldm", {1}, {32});
  EXPECT_EQ(error(), "kernel 'ldm': lane 5 of warp 0 in block (0,0,0) gives "
                     "ldmatrix.x4 at ldmatrix site a row address that is not "
                     "a 16-byte aligned row of the block's shared memory "
                     "(offset 88 of 528 bytes)");
}

TEST_F(EmulatorRuntimeTest, MmaNeedsAFullWarp) {
  add("partial", mmaInPartialWarpKernel);
  launch("partial", {1}, {16});
  EXPECT_EQ(error(), "kernel 'partial': mma.m16n8k16 bf16 at partial mma "
                     "needs a full warp; warp 0 of block (0,0,0) has 16 "
                     "threads");
}

TEST_F(EmulatorRuntimeTest, DivergentMma) {
  add("half", divergentMmaKernel);
  launch("half", {1}, {32});
  EXPECT_EQ(error(), "kernel 'half': divergent shuffle in block (0,0,0), warp "
                     "0: 16 threads wait at half mma, 16 threads exited");
  EXPECT_EQ(finished, 0);
}

//===----------------------------------------------------------------------===//
// Hopper: mbarriers, TMA, wgmma
//===----------------------------------------------------------------------===//

/// A ranked memref descriptor {allocated, aligned, offset, sizes, strides}.
struct MemRefDescriptor {
  std::vector<int64_t> fields;
  MemRefDescriptor(const void *data, int64_t offset, std::vector<int64_t> sizes,
                   std::vector<int64_t> strides) {
    fields = {reinterpret_cast<intptr_t>(data),
              reinterpret_cast<intptr_t>(data), offset};
    fields.insert(fields.end(), sizes.begin(), sizes.end());
    fields.insert(fields.end(), strides.begin(), strides.end());
  }
  void *get() { return fields.data(); }
};

constexpr int64_t kBF16 = 9, kF32 = 7, kSwizzle128B = 3;

/// The 128B swizzle as the PTX ISA draws it: 16-byte chunk c of 128-byte
/// line l moves to c ^ (l % 8).
int64_t swizzle128(int64_t offset) {
  int64_t line = offset / 128, chunk = offset % 128 / 16;
  return line * 128 + (chunk ^ (line % 8)) * 16 + offset % 16;
}

TEST_F(EmulatorRuntimeTest, MbarrierPhasesAcrossTwoThreads) {
  add("phases", mbarrierPhasesKernel, BLOCKC_EMU_SYNCHRONIZES, 64);
  uint32_t *out = alloc<uint32_t>(8);
  launch("phases", {2}, {2}, {&out});
  EXPECT_EQ(error(), "");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(out[4 * i], 7u) << i;
    EXPECT_EQ(out[4 * i + 1], 42u) << i; // thread 1's word, after phase 0
    EXPECT_EQ(out[4 * i + 2], 43u) << i; // thread 0's word, after phase 1
    EXPECT_EQ(out[4 * i + 3], 9u) << i;
  }
  mgpuMemFree(out, nullptr);
}

TEST_F(EmulatorRuntimeTest, TmaLoadSwizzlesFillsAndLandsAtTheWait) {
  add("tma", tmaKernel, BLOCKC_EMU_SYNCHRONIZES, 8192 + 8);
  // A 100 x 80 bf16 view (row stride 96, offset 8 elements) of a 100 x 96
  // buffer: columns 80-87 of the buffer exist but are outside the view.
  constexpr int kRows = 100, kCols = 80, kStride = 96, kOffset = 8;
  uint16_t *buffer = alloc<uint16_t>(kRows * kStride);
  for (int i = 0; i < kRows * kStride; ++i)
    buffer[i] = static_cast<uint16_t>(1 + i % 30000);
  MemRefDescriptor view(buffer, kOffset, {kRows, kCols}, {kStride, 1});
  int64_t box[2] = {64, 64};
  uint8_t *before = alloc<uint8_t>(8192), *after = alloc<uint8_t>(8192);
  struct Case {
    int32_t x, y;
    int64_t oobFill;
    int32_t producer;
  } cases[] = {{64, 64, 0, 0}, {-8, 90, 0, 0}, {16, 40, 1, 0}, {8, 8, 0, 31}};
  for (const Case &c : cases) {
    void *map = mgpuTensorMapEncodeTiledMemref(2, view.get(), kBF16, 0,
                                               kSwizzle128B, 0, c.oobFill, box);
    ASSERT_NE(map, nullptr) << error();
    int32_t x = c.x, y = c.y, producer = c.producer;
    finished = 0;
    launch("tma", {1}, {32}, {&map, &x, &y, &before, &after, &producer});
    EXPECT_EQ(error(), "");
    EXPECT_EQ(finished, 32);
    int inside = 0;
    for (int r = 0; r < 64; ++r)
      for (int col = 0; col < 64; ++col) {
        int row = y + r, column = x + col;
        bool in = row >= 0 && row < kRows && column >= 0 && column < kCols;
        inside += in;
        uint16_t expected =
            in ? buffer[row * kStride + kOffset + column]
               : (c.oobFill ? 0x7FFF : 0); // NVIDIA's canonical NaN
        uint16_t got;
        std::memcpy(&got, after + swizzle128((r * 64 + col) * 2), 2);
        ASSERT_EQ(got, expected) << "box (" << c.x << ", " << c.y
                                 << ") element " << r << ", " << col;
        ASSERT_EQ(before[(r * 64 + col) * 2], 0xFF); // fresh shared memory
      }
    EXPECT_GT(inside, 0);
  }
  mgpuMemFree(buffer, nullptr);
  mgpuMemFree(before, nullptr);
  mgpuMemFree(after, nullptr);
}

TEST_F(EmulatorRuntimeTest, MbarrierDeadlock) {
  add("nobody", mbarrierDeadlockKernel, BLOCKC_EMU_SYNCHRONIZES, 8);
  int32_t tx = -1;
  launch("nobody", {1}, {32}, {&tx});
  EXPECT_EQ(error(), "kernel 'nobody': deadlock in block (0,0,0): 32 threads "
                     "wait at deadlock wait; the mbarrier at shared offset 0 "
                     "is in phase 0 with 1 of 1 arrivals and 0 transaction "
                     "bytes pending");
  EXPECT_EQ(finished, 0);
  blockcEmuClearError();
  tx = 1024;
  launch("nobody", {1}, {32}, {&tx});
  EXPECT_EQ(error(), "kernel 'nobody': deadlock in block (0,0,0): 32 threads "
                     "wait at deadlock wait; the mbarrier at shared offset 0 "
                     "is in phase 0 with 0 of 1 arrivals and 1024 transaction "
                     "bytes pending");
}

TEST_F(EmulatorRuntimeTest, MbarrierMisuse) {
  add("misuse", mbarrierMisuseKernel, BLOCKC_EMU_SYNCHRONIZES, 64);
  const char *expected[] = {
      "thread (0,0,0) of block (0,0,0): mbarrier.arrive at early arrive uses "
      "the mbarrier at shared offset 8 before its init",
      "thread (0,0,0) of block (0,0,0): mbarrier.arrive at arrive arrives at "
      "the mbarrier at shared offset 0 in phase 0, whose 2 expected arrivals "
      "all arrived (16 transaction bytes pending)",
      "thread (0,0,0) of block (0,0,0): mbarrier.init at misaligned init uses "
      "an mbarrier at shared offset 4, not 8-byte aligned",
      "thread (0,0,0) of block (0,0,0): mbarrier.init at outside init uses an "
      "mbarrier outside the block's 64 bytes of shared memory",
      "thread (0,0,0) of block (0,0,0): mbarrier.init at zero init has count "
      "0 (1 to 1048575)"};
  for (int32_t mode = 0; mode < 5; ++mode) {
    blockcEmuClearError();
    launch("misuse", {1}, {1}, {&mode});
    EXPECT_EQ(error(), std::string("kernel 'misuse': ") + expected[mode]);
  }
  add("unflagged_mbarrier", unflaggedMbarrierKernel, 0, 64);
  blockcEmuClearError();
  launch("unflagged_mbarrier", {1}, {1});
  EXPECT_EQ(error(), "kernel 'unflagged_mbarrier': reaches mbarrier.init at "
                     "unflagged init but was registered without "
                     "BLOCKC_EMU_SYNCHRONIZES");
}

TEST_F(EmulatorRuntimeTest, TmaLoadMisuse) {
  add("tma_misuse", tmaMisuseKernel, BLOCKC_EMU_SYNCHRONIZES, 8192 + 1024);
  uint16_t *buffer = alloc<uint16_t>(128 * 64);
  MemRefDescriptor tensor(buffer, 0, {128, 64}, {64, 1});
  int64_t box[2] = {64, 64};
  void *map = mgpuTensorMapEncodeTiledMemref(2, tensor.get(), kBF16, 0,
                                             kSwizzle128B, 0, 0, box);
  ASSERT_NE(map, nullptr);
  int dummy = 0;
  struct Case {
    void *map;
    int64_t dst, barrier;
    int32_t rank;
    const char *message;
  } cases[] = {
      {map, 128, 8192, 2,
       "the TMA load at bad tma writes to shared offset 128, not aligned to "
       "the 1024 bytes that its 128B swizzle needs"},
      {map, 2048, 0, 2,
       "the TMA load at bad tma writes a box of 8192 bytes at shared offset "
       "2048, past the end of the block's 9216 bytes of shared memory"},
      {map, 0, 8192, 3,
       "the TMA load at bad tma gives 3 coordinates for a rank-2 tensor map"},
      {&dummy, 0, 8192, 2,
       "the TMA load at bad tma has a tensor map that "
       "mgpuTensorMapEncodeTiledMemref did not make"},
      {map, 0, 8196, 2,
       "mbarrier.init at misuse init uses an mbarrier at shared offset 8196, "
       "not 8-byte aligned"},
  };
  for (Case &c : cases) {
    blockcEmuClearError();
    launch("tma_misuse", {1}, {1}, {&c.map, &c.dst, &c.barrier, &c.rank});
    EXPECT_EQ(error(), std::string("kernel 'tma_misuse': thread (0,0,0) of "
                                   "block (0,0,0): ") +
                           c.message);
  }
  mgpuMemFree(buffer, nullptr);
}

TEST_F(EmulatorRuntimeTest, TensorMapArguments) {
  std::vector<uint8_t> storage(64 * 1024 + 64);
  // A 16-byte aligned base inside `storage`.
  auto *base = reinterpret_cast<uint16_t *>(
      (reinterpret_cast<uintptr_t>(storage.data()) + 15) & ~uintptr_t(15));
  struct Case {
    int64_t rank;
    int64_t offset;
    std::vector<int64_t> sizes, strides, box;
    int64_t dataType, interleave, swizzle, oobFill;
    const char *message;
  } cases[] = {
      {2,
       0,
       {64, 64},
       {64, 2},
       {8, 8},
       kBF16,
       0,
       0,
       0,
       "the innermost stride is 2, not 1"},
      {2,
       0,
       {64, 60},
       {60, 1},
       {8, 8},
       kBF16,
       0,
       0,
       0,
       "stride 60 of dimension 0 is 120 bytes, not a positive multiple of 16 "
       "below 2^40"},
      {2,
       1,
       {64, 64},
       {64, 1},
       {8, 8},
       kBF16,
       0,
       0,
       0,
       "is not 16-byte aligned"},
      {2,
       0,
       {64, 64},
       {64, 1},
       {0, 8},
       kBF16,
       0,
       0,
       0,
       "box size 0 of dimension 0 is not 1 to 256"},
      {2,
       0,
       {64, 512},
       {512, 1},
       {8, 257},
       kBF16,
       0,
       0,
       0,
       "box size 257 of dimension 1 is not 1 to 256"},
      {2,
       0,
       {64, 256},
       {256, 1},
       {8, 128},
       kBF16,
       0,
       kSwizzle128B,
       0,
       "the innermost box dimension is 256 bytes, more than the 128 bytes of "
       "its 128B swizzle"},
      {2,
       0,
       {64, 64},
       {64, 1},
       {8, 4},
       kBF16,
       0,
       0,
       0,
       "the innermost box dimension is 8 bytes, not a multiple of 16"},
      {2,
       0,
       {64, 64},
       {64, 1},
       {8, 8},
       kBF16,
       1,
       0,
       0,
       "interleave 1 is not modelled (only 0, CU_TENSOR_MAP_INTERLEAVE_NONE)"},
      {2,
       0,
       {64, 64},
       {64, 1},
       {8, 8},
       kBF16,
       0,
       4,
       0,
       "swizzle 4 is not 0 to 3 (none, 32B, 64B, 128B)"},
      {2,
       0,
       {64, 64},
       {64, 1},
       {8, 8},
       kBF16,
       0,
       0,
       2,
       "OOB fill 2 is not 0 (zeros) or 1 (NaN)"},
      {2,
       0,
       {64, 64},
       {64, 1},
       {8, 8},
       3,
       0,
       0,
       1,
       "NaN OOB fill needs a floating-point data type, not 3"},
      {2,
       0,
       {64, 64},
       {64, 1},
       {8, 8},
       13,
       0,
       0,
       0,
       "data type 13 is not a CUtensorMapDataType of 0 to 12"},
      {6,
       0,
       {1, 1, 1, 1, 1, 8},
       {8, 8, 8, 8, 8, 1},
       {1, 1, 1, 1, 1, 8},
       kBF16,
       0,
       0,
       0,
       "rank 6 is not 1 to 5"},
      {2,
       0,
       {0, 64},
       {64, 1},
       {8, 8},
       kBF16,
       0,
       0,
       0,
       "size 0 of dimension 0 is not 1 to 2^32"},
  };
  for (Case &c : cases) {
    blockcEmuClearError();
    MemRefDescriptor d(base, c.offset, c.sizes, c.strides);
    void *map = mgpuTensorMapEncodeTiledMemref(c.rank, d.get(), c.dataType,
                                               c.interleave, c.swizzle, 0,
                                               c.oobFill, c.box.data());
    EXPECT_EQ(map, nullptr) << c.message;
    std::string message = error();
    EXPECT_EQ(message.rfind("mgpuTensorMapEncodeTiledMemref: ", 0), 0u)
        << message;
    EXPECT_NE(message.find(c.message), std::string::npos)
        << "got: " << message << "\nexpected: " << c.message;
  }
  blockcEmuClearError();
  // Every rank from 1 to 5, f32 with 64B swizzle.
  for (int64_t rank = 1; rank <= 5; ++rank) {
    std::vector<int64_t> sizes(rank, 4), strides(rank), box(rank, 2);
    sizes.back() = box.back() = 16;
    for (int64_t i = rank - 1, stride = 1; i >= 0; --i) {
      strides[i] = stride;
      stride *= sizes[i];
    }
    MemRefDescriptor d(base, 0, sizes, strides);
    EXPECT_NE(mgpuTensorMapEncodeTiledMemref(rank, d.get(), kF32, 0, 2, 0, 1,
                                             box.data()),
              nullptr)
        << rank << ": " << error();
  }
  EXPECT_EQ(error(), "");
}

TEST_F(EmulatorRuntimeTest, TensorMapsAreInterned) {
  uint16_t *buffer = alloc<uint16_t>(64 * 64);
  MemRefDescriptor d(buffer, 0, {64, 64}, {64, 1});
  int64_t box[2] = {64, 64}, otherBox[2] = {32, 64};
  void *first = mgpuTensorMapEncodeTiledMemref(2, d.get(), kBF16, 0,
                                               kSwizzle128B, 0, 0, box);
  // l2promo is ignored: the same map.
  void *second = mgpuTensorMapEncodeTiledMemref(2, d.get(), kBF16, 0,
                                                kSwizzle128B, 2, 0, box);
  void *other = mgpuTensorMapEncodeTiledMemref(2, d.get(), kBF16, 0,
                                               kSwizzle128B, 0, 0, otherBox);
  void *unswizzled =
      mgpuTensorMapEncodeTiledMemref(2, d.get(), kBF16, 0, 0, 0, 0, box);
  EXPECT_EQ(error(), "");
  EXPECT_NE(first, nullptr);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other);
  EXPECT_NE(first, unswizzled);
  EXPECT_NE(other, unswizzled);
  mgpuMemFree(buffer, nullptr);
}

TEST_F(EmulatorRuntimeTest, WgmmaAfterTmaMatchesMatmul) {
  add("wgmma", wgmmaKernel, BLOCKC_EMU_SYNCHRONIZES, 16384 + 8);
  uint16_t *a = alloc<uint16_t>(64 * 64), *b = alloc<uint16_t>(64 * 64);
  float *d = alloc<float>(64 * 64);
  // Small integers: exact in bf16 and in the sums.
  auto aValue = [](int m, int k) { return (3 * m + 5 * k) % 7 - 3; };
  auto bValue = [](int n, int k) { return (2 * n + 7 * k) % 5 - 2; };
  for (int i = 0; i < 64; ++i)
    for (int k = 0; k < 64; ++k) {
      a[64 * i + k] = bf16Bits(static_cast<float>(aValue(i, k)));
      b[64 * i + k] = bf16Bits(static_cast<float>(bValue(i, k)));
    }
  MemRefDescriptor descA(a, 0, {64, 64}, {64, 1}),
      descB(b, 0, {64, 64}, {64, 1});
  int64_t box[2] = {64, 64};
  void *mapA = mgpuTensorMapEncodeTiledMemref(2, descA.get(), kBF16, 0,
                                              kSwizzle128B, 0, 0, box);
  void *mapB = mgpuTensorMapEncodeTiledMemref(2, descB.get(), kBF16, 0,
                                              kSwizzle128B, 0, 0, box);
  launch("wgmma", {1}, {128}, {&mapA, &mapB, &d});
  EXPECT_EQ(error(), "");
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n) {
      int expected = 0;
      for (int k = 0; k < 64; ++k)
        expected += aValue(m, k) * bValue(n, k);
      ASSERT_EQ(d[64 * m + n], static_cast<float>(expected)) << m << ", " << n;
    }
  mgpuMemFree(a, nullptr);
  mgpuMemFree(b, nullptr);
  mgpuMemFree(d, nullptr);
}

TEST_F(EmulatorRuntimeTest, WgmmaWaitGroupDepth) {
  add("wgmma_wait", wgmmaWaitKernel, BLOCKC_EMU_SYNCHRONIZES, 16384);
  // wait_group 0 before the read: every group retired.
  int32_t depth = 0;
  launch("wgmma_wait", {1}, {128}, {&depth});
  EXPECT_EQ(error(), "");
  // A wrong depth leaves the last group in flight.
  depth = 1;
  launch("wgmma_wait", {1}, {128}, {&depth});
  EXPECT_EQ(error(), "kernel 'wgmma_wait': thread (0,0,0) of block (0,0,0): "
                     "accumulator store reads a warpgroup accumulator while 1 "
                     "wgmma group is in flight: wait for it with "
                     "wgmma.wait_group 0 first");
  blockcEmuClearError();
  // No final wait at all: the same.
  depth = -1;
  launch("wgmma_wait", {1}, {128}, {&depth});
  EXPECT_NE(error().find("while 1 wgmma group is in flight"), std::string::npos)
      << error();
  blockcEmuClearError();
  add("wgmma_uncommitted", wgmmaUncommittedKernel, BLOCKC_EMU_SYNCHRONIZES,
      16384);
  launch("wgmma_uncommitted", {1}, {128});
  EXPECT_EQ(error(), "kernel 'wgmma_uncommitted': thread (0,0,0) of block "
                     "(0,0,0): accumulator store reads a warpgroup accumulator "
                     "whose wgmma were not committed and waited for "
                     "(wgmma.commit_group, wgmma.wait_group)");
}

TEST_F(EmulatorRuntimeTest, WgmmaGroupsPerAccumulator) {
  add("wgmma_overlap", wgmmaOverlapKernel, BLOCKC_EMU_SYNCHRONIZES, 20488);
  uint16_t *p = alloc<uint16_t>(64 * 64);
  MemRefDescriptor d(p, 0, {64, 64}, {64, 1});
  int64_t box[2] = {64, 64};
  void *map = mgpuTensorMapEncodeTiledMemref(2, d.get(), kBF16, 0, kSwizzle128B,
                                             0, 0, box);
  int32_t mode = 0;
  // S read after wait_group 1 with P V in flight; O and P after wait 0.
  launch("wgmma_overlap", {1}, {128}, {&mode, &map});
  EXPECT_EQ(error(), "");
  mode = 4;
  launch("wgmma_overlap", {1}, {128}, {&mode, &map});
  EXPECT_EQ(error(), "");
  mode = 1;
  launch("wgmma_overlap", {1}, {128}, {&mode, &map});
  EXPECT_EQ(error(), "kernel 'wgmma_overlap': thread (0,0,0) of block (0,0,0): "
                     "rescale reads O reads warpgroup accumulator 1 while the "
                     "wgmma group that writes it is in flight (1 group in "
                     "flight, it is the 1st newest): wait for it with "
                     "wgmma.wait_group 0 first");
  blockcEmuClearError();
  mode = 2;
  launch("wgmma_overlap", {1}, {128}, {&mode, &map});
  EXPECT_NE(error().find("rescale writes O writes warpgroup accumulator 1 "
                         "while the wgmma group that writes it is in flight"),
            std::string::npos)
      << error();
  blockcEmuClearError();
  mode = 3;
  launch("wgmma_overlap", {1}, {128}, {&mode, &map});
  EXPECT_EQ(error(), "kernel 'wgmma_overlap': thread (0,0,0) of block (0,0,0): "
                     "P store writes shared bytes [12000, 12004), which a "
                     "wgmma group in flight reads (shared bytes [10240, "
                     "19456), the wgmma at P V wgmma): the group must be "
                     "waited for (wgmma.wait_group) by every thread that "
                     "issued it before the buffer is written");
  blockcEmuClearError();
  mode = 5;
  launch("wgmma_overlap", {1}, {128}, {&mode, &map});
  EXPECT_NE(error().find("the TMA load at P load writes shared bytes [10240, "
                         "18432), which a wgmma group in flight reads"),
            std::string::npos)
      << error();
  blockcEmuClearError();
  mgpuMemFree(p, nullptr);
}

TEST_F(EmulatorRuntimeTest, WgmmaMisuse) {
  add("wgmma_misuse", wgmmaMisuseKernel, BLOCKC_EMU_SYNCHRONIZES, 16384);
  int32_t transpose = 0;
  launch("wgmma_misuse", {1}, {64}, {&transpose});
  EXPECT_EQ(error(), "kernel 'wgmma_misuse': thread (0,0,0) of block (0,0,0): "
                     "wgmma.m64n8k16 at misused wgmma needs whole warpgroups; "
                     "the block has 64 threads, not a multiple of 128");
  blockcEmuClearError();
  transpose = 1;
  launch("wgmma_misuse", {1}, {128}, {&transpose});
  EXPECT_EQ(error(), "kernel 'wgmma_misuse': thread (0,0,0) of block (0,0,0): "
                     "wgmma.m64n8k16 at misused wgmma has transpose flags A "
                     "1, B 0 (B swizzle mode 1): an MN-major A, or an "
                     "MN-major B without a swizzle, is not modelled");
  // B (8 rows of 128 bytes at 8192) ends past the 8200 bytes.
  add("wgmma_small", wgmmaMisuseKernel, BLOCKC_EMU_SYNCHRONIZES, 8200);
  blockcEmuClearError();
  transpose = 0;
  launch("wgmma_small", {1}, {128}, {&transpose});
  EXPECT_NE(error().find("wgmma.m64n8k16 at misused wgmma reads shared "
                         "offset "),
            std::string::npos)
      << error();
  EXPECT_NE(error().find("outside the block's 8200 bytes of shared memory"),
            std::string::npos)
      << error();
}

/// Every thread writes 32 of the 16 x 32 bf16 box at shared offset 0
/// (element i of the box = `base` + i), fences and meets the others; thread
/// 0 stores the box at (x, y) through `map` and commits it. `mode`: 0 waits
/// (wait_group.read 0); 1 rewrites the box (base + 1000) before the wait;
/// 2 has no fence; 3 never waits; 4 waits with 1 group allowed pending; 5
/// stores from shared offset 64.
void tmaStoreKernel(void **params, BlockcEmuThread *t, void *shared, int64_t) {
  void *map = arg<void *>(params, 0);
  int32_t coords[2] = {arg<int32_t>(params, 1), arg<int32_t>(params, 2)};
  int32_t mode = arg<int32_t>(params, 3);
  auto *box = static_cast<uint16_t *>(shared);
  int i = t->threadId[0];
  for (int e = 0; e < 16; ++e)
    box[i * 16 + e] = static_cast<uint16_t>(i * 16 + e + 1);
  if (mode != 2)
    blockcEmuFenceProxyAsync(t, "store fence");
  blockcEmuBarrier(t, "store barrier");
  if (i != 0)
    return;
  blockcEmuTmaStore(t, static_cast<char *>(shared) + (mode == 5 ? 64 : 0), map,
                    2, coords, "tma store");
  blockcEmuBulkCommit(t, "store commit");
  if (mode == 1)
    for (int e = 0; e < 16 * 32; ++e)
      box[e] = static_cast<uint16_t>(e + 1001);
  if (mode != 3)
    blockcEmuBulkWait(t, mode == 4 ? 1 : 0, "store wait");
}

TEST_F(EmulatorRuntimeTest, TmaStoreClipsAndLandsAtTheWait) {
  add("tma_store", tmaStoreKernel, BLOCKC_EMU_SYNCHRONIZES, 1024);
  // A 20 x 40 bf16 tensor (row stride 48): boxes of 16 x 32 at (x, y).
  constexpr int kRows = 20, kCols = 40, kStride = 48;
  uint16_t *tensor = alloc<uint16_t>(kRows * kStride);
  MemRefDescriptor view(tensor, 0, {kRows, kCols}, {kStride, 1});
  int64_t box[2] = {16, 32};
  void *map =
      mgpuTensorMapEncodeTiledMemref(2, view.get(), kBF16, 0, 0, 0, 0, box);
  ASSERT_NE(map, nullptr) << error();
  struct Case {
    int32_t x, y, mode;
  } cases[] = {{0, 0, 0}, {16, 8, 0}, {-8, -4, 0}, {8, 16, 1}};
  for (Case c : cases) {
    for (int e = 0; e < kRows * kStride; ++e)
      tensor[e] = 0xABCD;
    launch("tma_store", {1}, {32}, {&map, &c.x, &c.y, &c.mode});
    EXPECT_EQ(error(), "");
    for (int row = 0; row < kRows; ++row)
      for (int col = 0; col < kStride; ++col) {
        int r = row - c.y, x = col - c.x;
        bool in = col < kCols && r >= 0 && r < 16 && x >= 0 && x < 32;
        uint16_t expected =
            in ? static_cast<uint16_t>(r * 32 + x + (c.mode == 1 ? 1001 : 1))
               : 0xABCD;
        ASSERT_EQ(tensor[row * kStride + col], expected)
            << "box (" << c.x << ", " << c.y << ") mode " << c.mode
            << " element " << row << ", " << col;
      }
  }
  mgpuMemFree(tensor, nullptr);
}

TEST_F(EmulatorRuntimeTest, TmaStoreMisuse) {
  add("tma_store_misuse", tmaStoreKernel, BLOCKC_EMU_SYNCHRONIZES, 1024);
  uint16_t *tensor = alloc<uint16_t>(64 * 64);
  MemRefDescriptor view(tensor, 0, {64, 64}, {64, 1});
  int64_t box[2] = {16, 32};
  void *map =
      mgpuTensorMapEncodeTiledMemref(2, view.get(), kBF16, 0, 0, 0, 0, box);
  int64_t swizzledBox[2] = {8, 64};
  void *swizzled = mgpuTensorMapEncodeTiledMemref(
      2, view.get(), kBF16, 0, kSwizzle128B, 0, 0, swizzledBox);
  ASSERT_NE(map, nullptr);
  ASSERT_NE(swizzled, nullptr);
  std::string prefix =
      "kernel 'tma_store_misuse': thread (0,0,0) of block (0,0,0): ";
  struct Case {
    void *map;
    int32_t mode;
    std::string message;
  } cases[] = {
      {map, 2,
       "the TMA store at tma store follows no fence.proxy.async of its "
       "thread since the thread last committed a bulk group: the async "
       "proxy need not see the generic proxy's writes of the box"},
      {map, 3,
       "the thread exits with 1 TMA store (the first at tma store) not "
       "performed: commit them (cp.async.bulk.commit_group) and wait for their "
       "reads "
       "(cp.async.bulk.wait_group.read 0) before the block's shared memory "
       "goes"},
      {map, 4,
       "the thread exits with 1 TMA store (the first at tma store) not "
       "performed: commit them (cp.async.bulk.commit_group) and wait for their "
       "reads "
       "(cp.async.bulk.wait_group.read 0) before the block's shared memory "
       "goes"},
      {map, 5,
       "the TMA store at tma store reads from shared offset 64, not "
       "128-byte aligned"},
      {swizzled, 0,
       "the TMA store at tma store has a tensor map with a 128B swizzle "
       "(only stores without a swizzle are modelled)"},
  };
  for (Case &c : cases) {
    blockcEmuClearError();
    int32_t x = 0, y = 0;
    launch("tma_store_misuse", {1}, {32}, {&c.map, &x, &y, &c.mode});
    EXPECT_EQ(error(), prefix + c.message) << "mode " << c.mode;
  }
  mgpuMemFree(tensor, nullptr);
}

} // namespace
