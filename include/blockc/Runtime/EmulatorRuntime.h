/*===- EmulatorRuntime.h - the GPU emulator's runtime (C ABI) -----*- C -*-===//
 *
 * libblockc_emulator_runtime runs blockc's NVPTX kernels on the host
 * (blockc-run -target=nvptx --emulate, docs/GPUEmulator.md). It exports:
 *
 *  - the mgpu* host functions that MLIR 22's gpu-to-llvm calls (the same
 *    ABI as libblockc_cuda_runtime, docs/RuntimeABI.md), implemented over
 *    host memory: allocations are aligned host buffers, copies are memmove,
 *    streams and events are tokens (every launch completes before it
 *    returns);
 *  - the functions below, called by kernels that blockc-gpu-emulate-kernels
 *    moved from the gpu.module into host code, and by drivers.
 *
 * A launch runs the thread blocks one after another. Inside a block, a
 * kernel without barriers or warp collectives runs as a loop over its
 * threads; any other kernel runs one fiber per thread (Boost.Context),
 * switching at every barrier and shuffle. CUDA's launch limits and the
 * collective semantics are checked; every violation is recorded as an error
 * naming the kernel. After the first error the runtime is "sticky" like a
 * CUDA context: later launches do nothing until blockcEmuClearError().
 * Memory functions (allocations, copies, memsets, frees), module loads and
 * function lookups keep working, so that the host code of a failed program
 * never writes through a null allocation. The first error is printed once on
 *stderr as "blockc GPU emulator: <message>".
 *
 * Fibers switch only at barriers and shuffles, so races between two sync
 * points are not observed. Every fiber has a 256 KiB stack with a guard
 * page: a kernel's private memory must fit in it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef BLOCKC_RUNTIME_EMULATORRUNTIME_H
#define BLOCKC_RUNTIME_EMULATORRUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The state of one emulated GPU thread. Compiled kernels read the first
   fields with plain loads (their offsets are part of the ABI, see
   blockc-gpu-emulate-kernels); the rest is private to the runtime. */
typedef struct BlockcEmuThread {
  int32_t threadId[3]; /* offset 0  */
  int32_t blockId[3];  /* offset 12 */
  int32_t blockDim[3]; /* offset 24 */
  int32_t gridDim[3];  /* offset 36 */
  int32_t laneId;      /* offset 48: linear thread id % 32 */
  int32_t reserved;    /* offset 52 */
  void *runtime;       /* offset 56: private */
} BlockcEmuThread;

/* The packed entry of one emulated kernel: `params` holds one pointer per
   kernel parameter (the array mgpuLaunchKernel receives), `shared` the
   block's shared memory (static then dynamic, 1024-byte aligned, filled with
   0xFF bytes before each block so that uninitialised reads show up as NaN),
   `sharedBytes` its size (static plus dynamic). */
typedef void (*BlockcEmuKernelFn)(void **params, BlockcEmuThread *thread,
                                  void *shared, int64_t sharedBytes);

/* Flags of blockcEmuRegisterKernel. */
enum {
  /* The kernel has a barrier or a warp collective: run it on fibers. */
  BLOCKC_EMU_SYNCHRONIZES = 1
};

/* Makes `kernel` of the emulated module `module` (the contents of its
   gpu.binary object after the "blockc-emulator:" prefix) resolvable by
   mgpuModuleGetFunction. `staticSharedBytes` is the kernel's static shared
   memory (at most 48 KiB), `maxSharedBytes` the target's opt-in limit for
   static plus dynamic shared memory (0 = 48 KiB); `knownBlock` the kernel's
   known_block_size (all three 0 = unknown; otherwise every launch must use
   exactly this block size). Registering the same (module, kernel) again
   shadows the older entry until it is unregistered. mgpuModuleGetFunction
   returns the newest registration; launching it after it was unregistered
   is an error. */
void blockcEmuRegisterKernel(const char *module, const char *kernel,
                             BlockcEmuKernelFn fn, int64_t staticSharedBytes,
                             int64_t maxSharedBytes, int32_t flags,
                             int32_t knownBlockX, int32_t knownBlockY,
                             int32_t knownBlockZ);
/* Removes every registration of `fn` (compiled modules call it from their
   destructors; the runtime's state is never destroyed, so this is safe
   during process exit). */
void blockcEmuUnregisterKernel(BlockcEmuKernelFn fn);

/* gpu.barrier: waits until every thread of the block reached the barrier
   at `site` (a string naming the kernel and the op's location, used in
   messages; sites are compared by pointer, so each op needs one string).
   Threads at a different site are a deadlock, exited threads a divergence
   error; either abandons the launch: the kernel's frames are dropped
   without unwinding. Only kernels registered with BLOCKC_EMU_SYNCHRONIZES
   may call it. */
void blockcEmuBarrier(BlockcEmuThread *thread, const char *site);

/* bar.sync `id`, `count` (nvvm.barrier with an id and a thread count):
   waits until `count` threads of the block reached named barrier `id`
   (0 to 15), then releases them; the barrier is reusable at once. An id out
   of range, a count that is not a positive multiple of 32 up to the block's
   threads, or threads of one round expecting different counts fail the
   launch; threads that can never complete the round are a deadlock. Only
   kernels registered with BLOCKC_EMU_SYNCHRONIZES may call it. */
void blockcEmuNamedBarrier(BlockcEmuThread *thread, int32_t id, int32_t count,
                           const char *site);

/* The host code's query of the device's multiprocessors (the persistent
   kernels' grid): 132, an H100's, or the positive count in the environment
   variable BLOCKC_EMU_MULTIPROCESSORS (read once; another value is
   reported on stderr and ignored). */
int32_t blockcGpuMultiprocessors(void);

/* gpu.shuffle on a 32-bit value (`mode`: 0 xor, 1 down, 2 up, 3 idx, the
   values of mlir::gpu::ShuffleMode), with the semantics of the
   shfl.sync.{bfly,down,up,idx} that convert-gpu-to-nvvm emits: member mask
   = the first `width` lanes, clamp = width - 1 (up: 32 - width), `offset`
   taken modulo 32. Completes when every existing member lane waits at the
   same `site`; a calling lane outside the member mask, a member lane that
   exited or waits elsewhere, and a valid source lane that does not exist
   (partial last warp) are errors. Returns the 32 result bits in the low
   half and the `valid` flag in bit 32 (invalid lanes get their own value).
   Only kernels registered with BLOCKC_EMU_SYNCHRONIZES may call it. */
int64_t blockcEmuShuffle32(BlockcEmuThread *thread, int32_t value,
                           int32_t offset, int32_t width, int32_t mode,
                           const char *site);

/* Tensor-core instructions (nvgpu.ldmatrix, nvgpu.mma.sync): warp
   collectives like the shuffle, completed when all 32 lanes of the warp wait
   at the same `site` (a partial warp is an error); the data movement and
   arithmetic are blockc::emu::ldMatrix, mmaM16N8K16 and mmaM16N8K8TF32
   (blockc/Runtime/EmulatorMatrix.h), over the lanes' fragments in the PTX
   ISA's layouts. ldmatrix: `row` is this lane's row address (used for lanes
   0 .. 8 * tiles - 1; it must be a 16-byte aligned row inside the block's
   shared memory), `result` receives `tiles` 32-bit registers. mma: `type` 0
   for bf16, 1 for f16 multiplicands (m16n8k16), 2 for tf32 (m16n8k8); `a`
   holds 4, `b` 2 32-bit registers,
   `c` and `d` 4 floats. Only kernels registered with
   BLOCKC_EMU_SYNCHRONIZES may call them. */
void blockcEmuLdMatrix(BlockcEmuThread *thread, const void *row, void *result,
                       int32_t tiles, int32_t transpose, const char *site);
void blockcEmuMma(BlockcEmuThread *thread, int32_t type, const void *a,
                  const void *b, const void *c, void *d, const char *site);

/* cp.async (nvgpu.device_async_copy, create_group, wait): per thread,
   copies queue until committed into a group; a wait with `pending` allowed
   performs every committed group except the newest `pending` ones, in order
   (`srcBytes` copied, then zeros up to `dstBytes`). Until then the
   destination keeps its bytes, so a read before the wait sees the old
   contents (0xFF: NaN in a fresh block). The destination must lie in the
   block's shared memory, both addresses aligned to `dstBytes` (4, 8 or
   16), the source outside shared memory. Copies still queued when the
   thread exits are dropped. */
void blockcEmuCpAsync(BlockcEmuThread *thread, void *dst, const void *src,
                      int32_t dstBytes, int32_t srcBytes, const char *site);
void blockcEmuCpAsyncCommit(BlockcEmuThread *thread);
void blockcEmuCpAsyncWait(BlockcEmuThread *thread, int32_t pending,
                          const char *site);

/* Hopper (sm_90a) asynchronous operations: mbarriers, TMA and warpgroup
   MMA (nvgpu.mbarrier.*, nvgpu.tma.async.load, nvgpu.warpgroup.mma). Only
   kernels registered with BLOCKC_EMU_SYNCHRONIZES may call them (TMA
   stores and their bulk groups excepted).

   An mbarrier is 8 bytes of the block's shared memory (8-byte aligned); the
   runtime keeps its state aside (expected and pending arrivals, the
   transaction count, the phase), forgotten when the block ends. Init sets
   `count` expected arrivals in phase 0 (1 <= count <= 2^20 - 1); arrive
   first adds `txBytes` (>= 0) to the transaction count (arrive.expect_tx),
   then counts one arrival; the phase completes (its parity flips, arrivals
   reset to the expected count) when no arrival and no transaction byte is
   pending. TryWaitParity models nvgpu.mbarrier.try_wait.parity with its
   retry loop: it returns once the phase of parity `parity` completed, i.e.
   while the current phase's parity differs from `parity`; otherwise the
   thread waits (a fiber switch) until it does. A barrier used before its
   init, misaligned or outside shared memory, and more arrivals than
   expected are errors; threads that wait on a phase that never completes
   are a deadlock. */
void blockcEmuMbarrierInit(BlockcEmuThread *thread, void *barrier,
                           int32_t count, const char *site);
void blockcEmuMbarrierArrive(BlockcEmuThread *thread, void *barrier,
                             int32_t txBytes, const char *site);
void blockcEmuMbarrierTryWaitParity(BlockcEmuThread *thread, void *barrier,
                                    int32_t parity, const char *site);

/* cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::
   complete_tx::bytes: the box of `tensorMap` (made by
   mgpuTensorMapEncodeTiledMemref) whose first element is at `coords`
   (`rank` int32 coordinates, innermost dimension first, as PTX orders
   them) is copied to `dst` in the block's shared memory, row-major (the
   innermost box dimension contiguous), each 16-byte chunk moved by the
   map's swizzle (32B, 64B, 128B: offset bits [4, 4 + b) ^= bits [7, 7 + b)
   of the shared offset, b = 1, 2, 3), elements outside the tensor filled
   with zeros (or NVIDIA's canonical NaN, 0x7FFF..., with the map's NaN
   fill); then the box's bytes complete transactions on `barrier`. The copy
   is asynchronous: it lands when a thread next waits on `barrier` (or is
   dropped when the block ends), so shared memory read without waiting keeps
   its old bytes. `dst` must be aligned to the swizzle's repeat (1024, 512,
   256 bytes; 128 without swizzle) and the box must fit in shared memory. */
void blockcEmuTmaLoad(BlockcEmuThread *thread, void *dst, const void *tensorMap,
                      int32_t rank, const int32_t *coords, void *barrier,
                      const char *site);

/* cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group (TMA store,
   nvgpu.tma.async.store): the box of `tensorMap` at `coords` (innermost
   first) is copied from `src` in the block's shared memory (row-major,
   128-byte aligned, no swizzle: a swizzled store map is an error) into the
   tensor; box elements outside the tensor's extents are not written (the
   hardware clips them). The store joins the calling thread's open bulk
   group: blockcEmuBulkCommit (cp.async.bulk.commit_group) closes it, and
   blockcEmuBulkWait (cp.async.bulk.wait_group[.read] `pending`) performs
   every committed group except the newest `pending` ones, in order. Until
   then neither shared memory is read nor the tensor written, so a box
   rewritten before the wait is stored as rewritten (the race the .read
   wait exists to prevent shows up as wrong results). A thread that exits
   with stores not performed fails the launch, as does a store without a
   blockcEmuFenceProxyAsync (fence.proxy.async[.shared::cta]) by the
   storing thread since its last commit; that the writing threads fenced
   and then synchronised with the storing thread is not checked. */
void blockcEmuTmaStore(BlockcEmuThread *thread, const void *src,
                       const void *tensorMap, int32_t rank,
                       const int32_t *coords, const char *site);
void blockcEmuBulkCommit(BlockcEmuThread *thread, const char *site);
void blockcEmuBulkWait(BlockcEmuThread *thread, int32_t pending,
                       const char *site);
void blockcEmuFenceProxyAsync(BlockcEmuThread *thread, const char *site);

/* One wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{bf16,f16}.{bf16,f16}
   (`type` 0 bf16, 1 f16; 8 <= n <= 256, n % 8 == 0) with both operands in
   shared memory given by matrix descriptors in the PTX ISA's format
   (start address >> 4 in bits [0, 14), leading-dimension byte offset >> 4
   in [16, 30), stride-dimension byte offset >> 4 in [32, 46), base offset
   in [49, 52) (only 0 is modelled), swizzle mode in [62, 64): 0 none, 1
   128B, 2 64B, 3 32B; addresses are offsets in the block's shared memory;
   the layouts are blockc::emu::sharedMatrixOffset's). `transposeA` and
   `transposeB` are the imm-trans flags: 0 (K-major) is modelled for both,
   1 (MN-major) for a swizzled B (sharedMatrixOffsetMN); an MN-major A is an
   error. A is 64 x 16 (row m, column k), B is 16 x n stored as n rows of k
   (B[k][n] at row n, column k). This thread's accumulator fragment `acc`
   (n / 2 floats, read and written) is, for thread t of its warpgroup (warp
   w = t / 32 % 4, lane l = 4 * g + q): acc[4j + 0, 1] = D(16w + g, 8j + 2q
   + {0, 1}), acc[4j + 2, 3] = D(16w + g + 8, 8j + 2q + {0, 1}). D = A B +
   acc, each element's 16 products and its C summed exactly in double and
   rounded once. The runtime computes the MMA at the call, and tracks its
   asynchrony per thread with the functions below. `accumulator` numbers
   the accumulator that `acc` holds within the kernel (the registers that
   a chain of MMAs, loops and branches carries; -1: not known), so that a
   read of one accumulator is checked against the group of the last MMA
   that wrote it. */
void blockcEmuWgmma(BlockcEmuThread *thread, int32_t type, uint64_t descA,
                    uint64_t descB, int32_t n, int32_t transposeA,
                    int32_t transposeB, float *acc, int32_t accumulator,
                    const char *site);

/* wgmma's asynchrony, per thread: blockcEmuWgmmaCommit makes the MMAs
   issued since the last commit one group (wgmma.commit_group) and then
   waits until at most `waitDepth` groups are in flight (wgmma.wait_group;
   nvgpu.warpgroup.mma does both with its waitGroup); blockcEmuWgmmaWait is
   wgmma.wait_group `pending`: both retire every group but the newest
   `pending` ones. blockcEmuWgmmaRead, before accumulator `accumulator` is
   read (nvgpu.warpgroup.mma.store, accumulator_to_fragment), and
   blockcEmuWgmmaWrite, before it is written other than by an MMA
   (init_accumulator, fragment_to_accumulator), fail the launch if the last
   MMA that wrote it is uncommitted or its group still in flight: the
   registers would not hold the result on a GPU (or the MMA would overwrite
   the new values). Groups that write other accumulators may stay in
   flight (wgmma.wait_group N > 0); with `accumulator` -1, no group may. A
   further wgmma may chain on an accumulator in flight.
   Shared memory: the bytes each MMA reads (its A and B, from the first to
   the last byte, widened to whole swizzle rows) stay read until its group
   is retired by the thread that issued it. A write into them before that
   fails the launch, naming the writer and the MMA: a thread's store
   (blockcEmuAccess with BLOCKC_EMU_ACCESS_STORE | _SHARED, which the
   emulated wgmma kernels call before every shared store), a TMA load
   issued into them (blockcEmuTmaLoad) or a cp.async (blockcEmuCpAsync).
   On a GPU the MMA may read the new bytes; the emulator computed it when
   it was issued and would not show the race. */
void blockcEmuWgmmaCommit(BlockcEmuThread *thread, int32_t waitDepth,
                          const char *site);
void blockcEmuWgmmaWait(BlockcEmuThread *thread, int32_t pending,
                        const char *site);
void blockcEmuWgmmaRead(BlockcEmuThread *thread, int32_t accumulator,
                        const char *site);
void blockcEmuWgmmaWrite(BlockcEmuThread *thread, int32_t accumulator,
                         const char *site);

/* nvgpu.tma.create.descriptor: a TMA tensor map over the memref whose
   ranked descriptor (allocated, aligned, offset, sizes, strides) is
   `rankedDescriptor`, of rank `rank` (1-5, innermost stride 1), with
   CUtensorMapDataType `dataType`, CUtensorMapInterleave `interleave` (0
   only), CUtensorMapSwizzle `swizzle` (0 none, 1 32B, 2 64B, 3 128B),
   `l2promo` (ignored) and CUtensorMapFloatOOBfill `oobFill` (0 zeros, 1
   NaN), and box sizes `boxDims` in memref order (outermost first, each 1 -
   256; the innermost box row a multiple of 16 bytes and at most the
   swizzle's width). The same ABI and checks as libblockc_cuda_runtime's
   (CUDA's cuTensorMapEncodeTiled: 16-byte aligned base, strides multiples
   of 16 bytes). Returns an opaque pointer that stays valid for the process
   (equal maps share one), or NULL after recording an error. */
void *mgpuTensorMapEncodeTiledMemref(int64_t rank, void *rankedDescriptor,
                                     int64_t dataType, int64_t interleave,
                                     int64_t swizzle, int64_t l2promo,
                                     int64_t oobFill, int64_t *boxDims);

/* Called by kernels compiled with bounds checking instead of an access
   whose `index` in dimension `dim` is outside [0, size); the access is
   skipped (a load yields 0) and the launch fails with this error; the
   launch runs to its end, and further accesses are only counted. */
void blockcEmuOutOfBounds(BlockcEmuThread *thread, const char *site,
                          int64_t dim, int64_t index, int64_t size);

/* Kernels compiled with the profile or with bounds checking
   (blockc-gpu-emulate-kernels{profile}, {check-bounds}) call this before
   each memory access of global or shared memory: `site` identifies the op
   (an integer unique in the program), `what` names it for messages,
   `flags` is BLOCKC_EMU_ACCESS_*. With BLOCKC_EMU_ACCESS_CHECK (bounds
   checking), a global access outside every live mgpuMemAlloc allocation (a
   host pointer, which would fault on a GPU) is an error of the launch;
   while profiling, the access is counted. */
enum {
  BLOCKC_EMU_ACCESS_STORE = 1,
  BLOCKC_EMU_ACCESS_SHARED = 2,
  /* A constant global of the GPU module (memref.get_global in a kernel):
     not an allocation, never checked. */
  BLOCKC_EMU_ACCESS_CONSTANT = 4,
  /* Check that a global access is in device memory. */
  BLOCKC_EMU_ACCESS_CHECK = 8,
  /* Check only: the profile counts the access elsewhere (cp.async). */
  BLOCKC_EMU_ACCESS_UNCOUNTED = 16
};
void blockcEmuAccess(BlockcEmuThread *thread, int32_t site, const void *address,
                     int32_t bytes, int32_t flags, const char *what);
/* Kernels compiled with the profile call this once per execution of each
   straight-line block of code with its floating-point operations (an FMA
   counting 2, a vector op its lanes). */
void blockcEmuFlops(BlockcEmuThread *thread, int64_t flops);

/* The profile (blockc-run --emulate --profile, docs/GPUEmulator.md):
   between blockcEmuProfileBegin and blockcEmuProfileEnd every launch of a
   kernel compiled with the profile is recorded. With `sampleBlocks` > 0 a
   launch runs only that many of its thread blocks, spread over the grid
   (along its diagonal: block i of n at the middle of the i-th n-th of every
   dimension; where that repeats a block, the middles of n equal runs of
   the linear order), and its counters are scaled by total / run (distinct
   bytes per allocation, at most its size): the program's results are then
   meaningless. */
typedef struct BlockcEmuLaunchProfile {
  const char *kernel; /* valid until the next blockcEmuProfileBegin */
  int32_t grid[3];
  int32_t block[3];
  int64_t sharedBytes;     /* static + dynamic shared memory per block */
  int64_t blocksRun;       /* thread blocks emulated */
  int64_t blocksTotal;     /* thread blocks of the grid */
  double flops;            /* every floating-point operation, FMA = 2 */
  double tensorFlops16;    /* of which bf16 / f16 tensor-core MMA */
  double tensorFlopsTF32;  /* of which TF32 tensor-core MMA */
  double globalRequests;   /* warp-level global load/store instructions */
  double globalSectors;    /* distinct 32-byte sectors per request, summed */
  double globalBytes;      /* bytes moved to or from global memory */
  double uniqueBytes;      /* distinct global bytes touched by the launch */
  double sharedRequests;   /* warp-level shared-memory instructions */
  double sharedWavefronts; /* their wavefronts (bank conflicts) */
  double barriers;         /* block-wide barriers completed */
} BlockcEmuLaunchProfile;
void blockcEmuProfileBegin(int64_t sampleBlocks);
void blockcEmuProfileEnd(void);
int64_t blockcEmuProfileLaunches(void);
/* Copies launch `index` (0-based, in launch order); 0 on success. */
int blockcEmuProfileGetLaunch(int64_t index, BlockcEmuLaunchProfile *out);

/* The library also exports compiler-rt's __truncsfbf2 (f32 to bf16, round
   to nearest even): LLVM calls it for some bf16 vector moves of emulated
   tensor-core kernels, and libgcc lacks it before GCC 13. */

/* The first error since the last blockcEmuClearError(), or NULL; the
   string stays valid until blockcEmuClearError(). */
const char *blockcEmuLastError(void);
void blockcEmuClearError(void);

/* The kernel launches, copies and memsets made on a stream since the host
   last waited for it (mgpuStreamSynchronize), over all streams; they ran
   when they were made, but on a GPU they could still be running. A driver
   calls it when the host code it called has returned: a nonzero count is
   recorded as an error (a missing wait), and the counts start again at 0. */
int64_t blockcEmuCheckStreams(void);

/* Counters since the process started, for reports and tests. */
typedef struct BlockcEmuStats {
  int64_t launches;  /* kernels launched */
  int64_t blocks;    /* thread blocks run */
  int64_t threads;   /* threads run */
  int64_t fiberRuns; /* launches that needed fibers */
  int64_t switches;  /* fiber switches */
} BlockcEmuStats;
void blockcEmuGetStats(BlockcEmuStats *stats);

/* Called with each kernel's name as its launch starts (a driver's progress
   line); NULL stops the calls. `user` is passed back. */
typedef void (*BlockcEmuLaunchObserver)(const char *kernel, void *user);
void blockcEmuSetLaunchObserver(BlockcEmuLaunchObserver observer, void *user);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKC_RUNTIME_EMULATORRUNTIME_H */
