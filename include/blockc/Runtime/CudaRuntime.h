/*===- CudaRuntime.h - blockc's CUDA host runtime (C ABI) ---------*- C -*-===//
 *
 * libblockc_cuda_runtime implements the mgpu* host functions that MLIR 22's
 * GPU lowering calls (gpu-to-llvm), over the CUDA driver API only. Besides
 * those, it exports the functions below for drivers such as blockc-run.
 * Every CUDA error is printed with the failing call and CUDA's error name
 * and string, and recorded: after the first error, later calls do nothing
 * and blockcCudaLastError() returns the message.
 *
 *===----------------------------------------------------------------------===*/

#ifndef BLOCKC_RUNTIME_CUDARUNTIME_H
#define BLOCKC_RUNTIME_CUDARUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

/* The first CUDA error since the last blockcCudaClearError(), or NULL. */
const char *blockcCudaLastError(void);
void blockcCudaClearError(void);

/* Initialises the driver and the default device. Returns 0 on success, or
   nonzero with the reason in blockcCudaLastError(). */
int blockcCudaInit(void);

/* With the environment variable BLOCKC_CUDA_PROFILE set (not "0"), every
   kernel launch is timed with CUDA events (each launch then waits for its
   kernel); this prints the GPU time per kernel since the last report to
   stderr and starts over. Without it, it prints an empty table. */
void blockcCudaProfileReport(void);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKC_RUNTIME_CUDARUNTIME_H */
