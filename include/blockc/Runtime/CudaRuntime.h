/*===- CudaRuntime.h - blockc's CUDA host runtime (C ABI) ---------*- C -*-===//
 *
 * libblockc_cuda_runtime implements the mgpu* host functions that MLIR 22's
 * GPU lowering calls (gpu-to-llvm), over the CUDA driver API only. Besides
 * those, it exports the functions below for drivers such as blockc-run.
 * Every CUDA error is printed with the failing call and CUDA's error name
 * and string, and recorded, and so is a launch outside CUDA's limits
 * (docs/RuntimeABI.md): after the first error, launches, module loads and
 * stream calls do nothing and blockcCudaLastError() returns the message.
 *
 *===----------------------------------------------------------------------===*/

#ifndef BLOCKC_RUNTIME_CUDARUNTIME_H
#define BLOCKC_RUNTIME_CUDARUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The first CUDA error since the last blockcCudaClearError(), or NULL. */
const char *blockcCudaLastError(void);
void blockcCudaClearError(void);

/* Initialises the driver and the default device. Returns 0 on success, or
   nonzero with the reason in blockcCudaLastError(). */
int blockcCudaInit(void);

/* The multiprocessors of the current device (the persistent kernels launch
   one block per multiprocessor; docs/RuntimeABI.md); 1 when there is no
   device. */
int32_t blockcGpuMultiprocessors(void);

/* Per-kernel GPU timing (docs/RuntimeABI.md). Between
   blockcCudaProfileStart() and blockcCudaProfileStop(), every kernel launch
   (mgpuLaunchKernel, mgpuLaunchClusterKernel) is timed with a pair of CUDA
   events around it, and the launch waits for its kernel: the sum over a
   call's kernels is its GPU time without the launch overlap, so time
   calls without profiling and profile them apart.
   blockcCudaProfileStart() clears the table and starts timing;
   blockcCudaProfileStop() stops timing and keeps the table. */
void blockcCudaProfileStart(void);
void blockcCudaProfileStop(void);

/* Writes the table to `path` as JSON:
     {"kernels": [{"name": "k", "launches": 3, "measured_us": 12.345}, ...],
      "total_us": 12.345}
   one object per kernel sorted by name, measured_us the GPU time summed
   over its launches in microseconds, total_us the sum over the kernels.
   Returns 0 on success; otherwise nonzero, after printing why (the file
   cannot be written) to stderr. It records no CUDA error. */
int blockcCudaProfileWriteJSON(const char *path);

/* Prints the table to stderr, one line per kernel (launches, milliseconds,
   share of the total) and the total, then clears it (timing goes on if it
   was started). */
void blockcCudaProfileReport(void);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKC_RUNTIME_CUDARUNTIME_H */
