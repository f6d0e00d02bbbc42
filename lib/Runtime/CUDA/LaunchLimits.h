//===- LaunchLimits.h - CUDA launch configuration checks --------*- C++ -*-===//
//
// The range checks that libblockc_cuda_runtime applies to a launch before
// its dimensions are narrowed to the unsigned values of cuLaunchKernel and
// cuLaunchKernelEx: the host code passes them as 64-bit signed integers
// (intptr_t), so a negative or oversized value would otherwise wrap into a
// different, valid-looking launch. Pure functions of the launch (no CUDA
// types), unit-tested in unittests/Runtime/CudaRuntimeTest.cpp.
//
// The limits are CUDA's for every device blockc targets (compute capability
// 5.0 and newer): grid x in [1, 2^31 - 1], grid y and z in [1, 65535];
// block x and y at most 1024, z at most 64, at most 1024 threads in all,
// each at least 1. Dynamic shared memory must not be negative (its upper
// bound depends on the device and the kernel; the driver checks it).
// Cluster dimensions must be at least 1 and divide the grid's.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_RUNTIME_CUDA_LAUNCHLIMITS_H
#define BLOCKC_LIB_RUNTIME_CUDA_LAUNCHLIMITS_H

#include <cstdint>
#include <string>
#include <string_view>

namespace blockc::cuda {

/// A launch dimension as the host code passes it (x, y, z).
struct Dim3 {
  int64_t x = 1, y = 1, z = 1;
};

constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxBlockXY = 1024;
constexpr int64_t kMaxBlockZ = 64;
constexpr int64_t kMaxBlockThreads = 1024;

/// Checks the grid, block and dynamic shared memory of a launch of
/// `kernel`. Returns the empty string when the launch is valid, else one
/// sentence naming the kernel, the first bad dimension, its value and its
/// range, e.g. "launch of kernel 'k': grid y = 70000 is outside [1, 65535];
/// nothing was launched".
std::string checkLaunch(std::string_view kernel, const Dim3 &grid,
                        const Dim3 &block, int64_t sharedMemoryBytes);

/// checkLaunch, then the cluster dimensions of a cluster launch: each at
/// least 1 and dividing the grid's dimension.
std::string checkClusterLaunch(std::string_view kernel, const Dim3 &cluster,
                               const Dim3 &grid, const Dim3 &block,
                               int64_t sharedMemoryBytes);

} // namespace blockc::cuda

#endif // BLOCKC_LIB_RUNTIME_CUDA_LAUNCHLIMITS_H
