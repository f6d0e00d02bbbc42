//===- KernelProfile.h - per-kernel GPU times ------------------*- C++ -*-===//
//
// The table behind blockcCudaProfileStart / Stop / WriteJSON / Report
// (include/blockc/Runtime/CudaRuntime.h): the launches and the summed GPU
// time of each kernel, by name, and its two printed forms. Independent of
// CUDA (the runtime measures each launch with CUDA events and records it
// here), unit-tested in unittests/Runtime/CudaRuntimeTest.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_RUNTIME_CUDA_KERNELPROFILE_H
#define BLOCKC_LIB_RUNTIME_CUDA_KERNELPROFILE_H

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace blockc::cuda {

class KernelProfile {
public:
  struct Kernel {
    int64_t launches = 0;
    double microseconds = 0;
  };

  /// Adds one launch of `kernel` that took `microseconds` on the GPU.
  void record(std::string_view kernel, double microseconds);
  void clear() { kernels.clear(); }
  bool empty() const { return kernels.empty(); }
  /// The kernels by name (sorted).
  const std::map<std::string, Kernel, std::less<>> &byName() const {
    return kernels;
  }
  double totalMicroseconds() const;

  /// {"kernels": [{"name": N, "launches": L, "measured_us": T}, ...],
  ///  "total_us": S}: one object per kernel sorted by name, T the sum over
  /// its launches, S the sum of every T; times with 3 decimals (ns), one
  /// kernel per line, ending in a newline.
  std::string toJSON() const;

  /// One line per kernel ("blockc CUDA profile: <name> <launches> launches
  /// <ms> ms (<share>%)") and a total line, for stderr.
  std::string toText() const;

private:
  std::map<std::string, Kernel, std::less<>> kernels;
};

/// `text` as a JSON string literal (quoted; ", \ and control characters
/// escaped).
std::string jsonString(std::string_view text);

} // namespace blockc::cuda

#endif // BLOCKC_LIB_RUNTIME_CUDA_KERNELPROFILE_H
