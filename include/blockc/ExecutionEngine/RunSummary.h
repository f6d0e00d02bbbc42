//===- RunSummary.h - what a run of a model reports -------------*- C++ -*-===//
//
// The timed runs of a compiled entry (with the GPU profile of the last),
// and the pieces of blockc-run's summary, shared by a plain run and a
// decode run: the model, input and weights lines, the checksum of an
// output, the prepare line, timings and their median. Each is a plain
// function of the run's figures, so that the tool only gathers them and
// prints.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_RUNSUMMARY_H
#define BLOCKC_EXECUTIONENGINE_RUNSUMMARY_H

#include "blockc/Analysis/ModelSignature.h"
#include "blockc/Analysis/PreparedWeights.h"
#include "blockc/Compiler/CompileOptions.h"
#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/ExecutionEngine/DecodeSession.h"
#include "blockc/ExecutionEngine/GPUProfile.h"
#include "blockc/ExecutionEngine/WeightBinding.h"
#include "blockc/Support/TensorFiles.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace blockc {

/// Makes `weights` what `jit`'s compiled entry reads: a file of prepared
/// weights is bound (bindPreparedWeights), else the entry's prepare
/// function packs the tensors in place (BlockJit::prepare). Returns the
/// bytes the prepare function made (0 for a file).
llvm::Expected<int64_t> prepareRunWeights(BlockJit &jit,
                                          const ModelSignature &signature,
                                          RunWeights &weights);

/// Which profile the last of the timed runs records.
enum class RunProfile {
  None,
  /// The emulator's counters (the entry compiled with options.profile).
  Emulator,
  /// Per-kernel CUDA event times on a GPU.
  GPU
};

/// What timed runs give.
struct TimedRuns {
  std::vector<double> seconds;
  /// RunProfile::Emulator: the launches' profile.
  std::optional<GPUProfile> profile;
  /// RunProfile::GPU: each kernel's measured time.
  std::optional<std::vector<MeasuredKernel>> measured;
};

/// Starts recording `profile` (not RunProfile::None); the emulator runs
/// `sampleBlocks` thread blocks of each launch (0: all).
llvm::Error beginProfile(RunProfile profile, int64_t sampleBlocks);

/// Stops recording `profile` into `runs`: the kernels' measured times (a
/// GPU) or the emulator's profile of the launches since beginProfile, whose
/// kernels `module` compiled with `options` holds.
llvm::Error endProfile(RunProfile profile, mlir::ModuleOp module,
                       const CompileOptions &options, int64_t sampleBlocks,
                       TimedRuns &runs);

/// Runs `jit`'s entry `repeat` times on `args` into `out` (the weights'
/// device copies of the first run reused by the others) and records the
/// last run's `profile`; with `sampleBlocks` > 0 the emulator runs that many
/// thread blocks of each launch. `module` and `options` are what `jit` was
/// compiled from (the emulator's profile reads the kernels' code).
llvm::Expected<TimedRuns> runTimed(BlockJit &jit, mlir::ModuleOp module,
                                   const CompileOptions &options,
                                   llvm::ArrayRef<const HostTensor *> args,
                                   HostTensor &out, unsigned repeat,
                                   RunProfile profile = RunProfile::None,
                                   int64_t sampleBlocks = 0);

/// "12.3 us", "4.567 ms" or "1.234 s".
std::string formatSeconds(double seconds);

/// The median of `values` (the mean of the middle two for an even count);
/// `values` must not be empty.
double medianOf(std::vector<double> values);

/// The sum and the sum of magnitudes of an output, and whether every value
/// is finite.
struct Checksum {
  double sum = 0, absSum = 0;
  bool finite = true;
  static Checksum of(const HostTensor &tensor);
};

/// What loaded weights hold, e.g. "  (2.6 MiB bf16)".
std::string describeHeld(llvm::ArrayRef<HostTensor> weights);

/// The first lines of a run's summary.
struct RunHead {
  std::string model, entry;
  std::string target; // "cpu" or "nvptx"
  bool emulated = false;
  unsigned threads = 1;
  /// Where the thread count came from, when not from --threads ("all
  /// cores", "OMP_NUM_THREADS").
  std::string threadsSource;
  int ranks = 1;
  /// The input as given ([T, d] or [B, T, d]) and where it came from.
  std::vector<int64_t> inputShape;
  std::string inputLabel;
  /// The weights this process holds, where they came from and what they
  /// hold (describeHeld).
  size_t numWeights = 0;
  uint64_t numParams = 0;
  std::string weightsLabel, weightsHeld;
};

/// Prints the model line ("blockc-run: <model> @<entry> (target ...)") and
/// the input and weights lines; in a tensor-parallel run the weights line
/// also counts the parameters of the whole model of `signature`.
void printRunHead(llvm::raw_ostream &os, const RunHead &head,
                  const ModelSignature &signature);

/// The checksum line.
void printChecksum(llvm::raw_ostream &os, const Checksum &checksum);

/// The output line: its shape and the file it went to (none when `path` is
/// empty; "not written" for a sampled profile run).
void printOutputLine(llvm::raw_ostream &os, const std::vector<int64_t> &shape,
                     llvm::StringRef path, bool sampled = false);

/// The compile line: how long it took and the compile cache's status.
void printCompileLine(llvm::raw_ostream &os, double seconds,
                      llvm::StringRef cacheStatus);

/// The run and flops lines: the median and minimum of `seconds` over the
/// runs, and `flops` per run.
void printRunTimes(llvm::raw_ostream &os, const std::vector<double> &seconds,
                   double flops);

/// The prepare line: how long the prepare function `entry` took and what it
/// made (nothing without one).
void printPrepare(llvm::raw_ostream &os, const PrepareEntry *entry,
                  double seconds, int64_t bytes);

/// The kv cache line of a decode session: layers, each cache's shape and
/// layout, their bytes.
void printKVCaches(llvm::raw_ostream &os, const DecodeSession &session);

/// The decode line: the steps' median and 90th percentile and the tokens
/// per second of `batch` sequences (nothing without steps).
void printDecodeSteps(llvm::raw_ostream &os,
                      const std::vector<double> &stepSeconds, int64_t batch);

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_RUNSUMMARY_H
