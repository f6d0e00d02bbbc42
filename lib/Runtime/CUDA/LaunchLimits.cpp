//===- LaunchLimits.cpp - CUDA launch configuration checks ----------------===//
//
// See LaunchLimits.h.
//
//===----------------------------------------------------------------------===//

#include "LaunchLimits.h"

namespace blockc::cuda {

namespace {

std::string prefix(std::string_view kernel) {
  return "launch of kernel '" + std::string(kernel) + "': ";
}

const char *kNothingLaunched = "; nothing was launched";

/// The message for `what` = `value` outside [lo, hi], or "" when inside.
std::string checkRange(std::string_view kernel, const char *what, int64_t value,
                       int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi)
    return "";
  return prefix(kernel) + what + " = " + std::to_string(value) +
         " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) +
         "]" + kNothingLaunched;
}

std::string format(const Dim3 &d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" +
         std::to_string(d.z);
}

} // namespace

std::string checkLaunch(std::string_view kernel, const Dim3 &grid,
                        const Dim3 &block, int64_t sharedMemoryBytes) {
  struct Bound {
    const char *what;
    int64_t value, hi;
  };
  const Bound bounds[] = {
      {"grid x", grid.x, kMaxGridX},     {"grid y", grid.y, kMaxGridYZ},
      {"grid z", grid.z, kMaxGridYZ},    {"block x", block.x, kMaxBlockXY},
      {"block y", block.y, kMaxBlockXY}, {"block z", block.z, kMaxBlockZ}};
  for (const Bound &b : bounds)
    if (std::string error = checkRange(kernel, b.what, b.value, 1, b.hi);
        !error.empty())
      return error;
  // Each factor is in [1, 1024] now: the product cannot overflow.
  int64_t threads = block.x * block.y * block.z;
  if (threads > kMaxBlockThreads)
    return prefix(kernel) + "block " + format(block) + " has " +
           std::to_string(threads) + " threads, more than " +
           std::to_string(kMaxBlockThreads) + kNothingLaunched;
  if (sharedMemoryBytes < 0)
    return prefix(kernel) + "dynamic shared memory of " +
           std::to_string(sharedMemoryBytes) + " bytes is negative" +
           kNothingLaunched;
  return "";
}

std::string checkClusterLaunch(std::string_view kernel, const Dim3 &cluster,
                               const Dim3 &grid, const Dim3 &block,
                               int64_t sharedMemoryBytes) {
  if (std::string error = checkLaunch(kernel, grid, block, sharedMemoryBytes);
      !error.empty())
    return error;
  struct Pair {
    const char *what;
    int64_t value, gridValue;
  };
  const Pair pairs[] = {{"cluster x", cluster.x, grid.x},
                        {"cluster y", cluster.y, grid.y},
                        {"cluster z", cluster.z, grid.z}};
  for (const Pair &p : pairs) {
    if (std::string error = checkRange(kernel, p.what, p.value, 1, p.gridValue);
        !error.empty())
      return error;
    if (p.gridValue % p.value != 0)
      return prefix(kernel) + p.what + " = " + std::to_string(p.value) +
             " does not divide the grid's " + std::to_string(p.gridValue) +
             " (grid " + format(grid) + ")" + kNothingLaunched;
  }
  return "";
}

} // namespace blockc::cuda
