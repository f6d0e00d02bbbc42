//===- GPUProfile.h - per-kernel speed-of-light profile ---------*- C++ -*-===//
//
// The profile of `blockc-run -target=nvptx --emulate --profile`
// (docs/GPUEmulator.md#profile): what each kernel computes and moves,
// counted exactly by the GPU emulator, the registers ptxas gives it, the
// occupancy that follows, and the least time the target chip
// (#blockc_codegen.gpu_target) needs for it.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_GPUPROFILE_H
#define BLOCKC_EXECUTIONENGINE_GPUPROFILE_H

#include "blockc/Compiler/CompileOptions.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace blockc {

/// One launch's counters, as the emulator runtime records them (scaled to
/// the whole grid when only a sample of its blocks ran).
struct GPULaunchCounters {
  std::string kernel;
  std::array<int64_t, 3> grid = {1, 1, 1}, block = {1, 1, 1};
  int64_t sharedBytes = 0;
  int64_t blocksRun = 0, blocksTotal = 0;
  double flops = 0, tensorFlops16 = 0, tensorFlopsTF32 = 0;
  double globalRequests = 0, globalSectors = 0, globalBytes = 0;
  double uniqueBytes = 0, sharedRequests = 0, sharedWavefronts = 0;
  double barriers = 0;
};

/// What `ptxas -v` says of one kernel.
struct PtxasKernelInfo {
  int64_t registers = 0;
  /// Spill stores plus spill loads, in bytes.
  int64_t spillBytes = 0;
};

/// One kernel: its launches summed.
struct GPUKernelProfile {
  std::string name;
  int64_t launches = 0;
  /// Of the first launch.
  std::array<int64_t, 3> grid = {1, 1, 1}, block = {1, 1, 1};
  GPULaunchCounters totals;
  std::optional<int64_t> registers, spillBytes;
  /// Resident warps per SM over the chip's maximum, for the first launch;
  /// unknown without the registers.
  std::optional<double> occupancy;
  double boundUs = 0;
  /// What bounds it: "tensor" (tensor-core peak), "fp32" (CUDA-core peak),
  /// "dram" (memory bandwidth) or "launch" (the launch overhead).
  std::string limiter;
};

struct GPUProfile {
  /// The architecture (e.g. "sm_90a") and the chip (e.g. "h100").
  std::string arch, chip;
  std::vector<GPUKernelProfile> kernels;
  double totalFlops = 0, totalUniqueBytes = 0, totalBoundUs = 0;
  /// Thread blocks emulated per launch (0: every block).
  int64_t sampleBlocks = 0;
  /// Whether ptxas ran (registers and spills known).
  bool haveRegisters = false;
};

/// The overhead counted for each launch in the bound, in microseconds.
constexpr double kLaunchOverheadUs = 2.0;

/// Resident warps per SM over the maximum for blocks of `threads` threads
/// with `sharedBytes` of shared memory and `registers` per thread (0:
/// unknown, not a limit) on `target`.
double occupancyOf(codegen::GPUTargetAttr target, int64_t threads,
                   int64_t sharedBytes, int64_t registers);

/// The launches aggregated per kernel (in order of first launch), with
/// their bounds on `target` and ptxas's registers where known.
GPUProfile buildGPUProfile(llvm::ArrayRef<GPULaunchCounters> launches,
                           codegen::GPUTargetAttr target,
                           const llvm::StringMap<PtxasKernelInfo> &ptxas,
                           int64_t sampleBlocks);

/// The table: a header line starting with `kernel`, one row per kernel
/// (whitespace-separated, unknown values `-`), then
/// `total <flops> <unique_bytes> <bound_us>`.
void printGPUProfile(llvm::raw_ostream &os, const GPUProfile &profile);

/// {"chip", "kernels": [...], "total": {...}} (docs/GPUEmulator.md#profile).
llvm::Error writeGPUProfileJSON(llvm::StringRef path,
                                const GPUProfile &profile);

/// One kernel's time measured on a GPU (CUDA events around each launch,
/// libblockc_cuda_runtime's blockcCudaProfile*).
struct MeasuredKernel {
  std::string name;
  int64_t launches = 0;
  double measuredUs = 0;
};

/// A profile written by writeGPUProfileJSON, or printed by printGPUProfile
/// (the table, which a sampled profile leaves instead of a file): the
/// kernels' names, launches, bounds and limiters, and the total. The error
/// names the file and what is wrong.
llvm::Expected<GPUProfile> readGPUProfile(llvm::StringRef path);

/// The measured table: per kernel its launches, measured microseconds and,
/// with `bound`, the kernel's bound and measured / bound; then the totals.
void printMeasuredProfile(llvm::raw_ostream &os,
                          llvm::ArrayRef<MeasuredKernel> measured,
                          const GPUProfile *bound);

/// The measured table as JSON: {"chip", "kernels": [{"name", "launches",
/// "measured_us", "bound_us", "limiter"}], "total": {"measured_us",
/// "bound_us"}} (bounds null without `bound`).
llvm::Error writeMeasuredProfileJSON(llvm::StringRef path, llvm::StringRef arch,
                                     llvm::ArrayRef<MeasuredKernel> measured,
                                     const GPUProfile *bound);

/// Runs `ptxas -v` on `ptx` for `arch` and reads each entry's registers and
/// spills. The error says why not (no ptxas, or it failed).
llvm::Expected<llvm::StringMap<PtxasKernelInfo>>
runPtxasVerbose(llvm::StringRef ptx, llvm::StringRef arch,
                llvm::StringRef toolkit = "");

/// The PTX that the compile flow (lib/Compiler: `options` without
/// emulation or profiling, PTX as the binary format) makes of a clone of
/// `module`: what ptxas reads for the profile's registers.
llvm::Expected<std::string> compileToPTX(mlir::ModuleOp module,
                                         const CompileOptions &options);

/// The profile of one run of `module` compiled with `options`: `launches`
/// (endEmulatorProfile) on the options' chip, with the registers and spills
/// of ptxas -v where a CUDA toolkit is found (none otherwise).
llvm::Expected<GPUProfile>
profileRun(mlir::ModuleOp module, const CompileOptions &options,
           llvm::ArrayRef<GPULaunchCounters> launches, int64_t sampleBlocks);

/// Parses ptxas -v's report (for tests).
llvm::StringMap<PtxasKernelInfo> parsePtxasVerbose(llvm::StringRef text);

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_GPUPROFILE_H
