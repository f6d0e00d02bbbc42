//===- RunOptions.h - what a run of a compiled model asks for ----*- C++
//-*-===//
//
// The options of blockc-run beside the compile options (CompileOptions.h):
// weights, input, output, repetitions, threads, decoding, profiling. Like
// the compile options they are registered once (registerRunOptions) and
// read back checked (getRunOptionsFromCommandLine), so that a tool only
// parses its command line and every argument is checked before anything is
// read or compiled.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_RUNOPTIONS_H
#define BLOCKC_EXECUTIONENGINE_RUNOPTIONS_H

#include "blockc/Compiler/CompileOptions.h"
#include "blockc/ExecutionEngine/Sampling.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace blockc {

/// Where a run's CPU thread count came from.
enum class ThreadSource {
  /// --threads=N.
  Option,
  /// The OMP_NUM_THREADS environment variable.
  Environment,
  /// Neither: every core this process may run on.
  AllCores
};

struct RunOptions {
  /// Weights: a safetensors file, or deterministic random weights (seed).
  std::string weightsFile;
  std::optional<uint64_t> weightSeed;
  /// Input: a .npy file, or a deterministic random input (seed; the
  /// default without --input).
  std::string inputFile;
  std::optional<uint64_t> inputSeed;
  /// The random input's shape (0: the model's, else 1 and 16).
  int64_t batch = 0, seqLen = 0;
  std::string outputFile;
  /// CPU: write the prepared weights to this file after preparing them.
  std::string savePrepared;
  unsigned repeat = 1;
  unsigned threads = 1;
  ThreadSource threadSource = ThreadSource::Option;
  /// --decode=N (steps after the prefill) or --check-decode, and the KV
  /// cache capacity (0: what the run needs).
  unsigned decodeSteps = 0;
  bool checkDecode = false;
  int64_t maxLen = 0;
  /// --check-tol when given (else the model type's default).
  std::optional<double> checkTolerance;
  bool allowExtraWeights = false;
  bool noCache = false;
  /// No progress lines (the summary and errors stay).
  bool quiet = false;
  /// --profile[=FILE.json], --profile-bound=FILE, --profile-blocks=N.
  bool profile = false;
  std::string profileFile, profileBound;
  int64_t profileBlocks = 0;

  /// --generate=N (causal-LM models): new tokens per sequence, how they
  /// are chosen, the ids that end a sequence, and the tokenizer folder and
  /// text prompt (instead of --input ids).
  unsigned generateTokens = 0;
  SamplingOptions sampling;
  std::vector<int32_t> stopTokens;
  std::string tokenizerDir, prompt;

  /// --paged-steps: the ragged batched steps of a paged run through the
  /// paged entry (docs/Decoding.md): per step, every sequence's number of
  /// new tokens (0: it sits the step out); empty: not a paged run. And the
  /// tokens a page of its K/V pools holds (--page-size).
  std::vector<std::vector<int64_t>> pagedSteps;
  int64_t pageSize = 16;

  bool generateMode() const { return generateTokens > 0; }
  bool pagedMode() const { return !pagedSteps.empty(); }
  /// Whether the run goes through the KV-cached decode entry.
  bool decodeMode() const {
    return decodeSteps > 0 || checkDecode || generateMode();
  }
  /// The KV cache capacity a decode of a `promptLen`-token input needs.
  int64_t neededCacheLength(int64_t promptLen) const {
    if (generateMode()) // the last token is never fed back
      return promptLen + generateTokens - 1;
    return checkDecode ? promptLen : promptLen + decodeSteps;
  }
  /// Whether the KV cache holds what a decode of `promptLen` tokens needs;
  /// else an error naming --max-len and the capacity needed.
  llvm::Error checkCacheCapacity(int64_t promptLen) const;

  /// Whether --paged-steps fits an input of `batch` sequences of `seqLen`
  /// tokens: a count per sequence in every step, every step running a
  /// token, each sequence's counts summing to `seqLen`; else an error
  /// naming the step or sequence.
  llvm::Error checkPagedSteps(int64_t batch, int64_t seqLen) const;
};

/// The category of the run options in --help.
llvm::cl::OptionCategory &getRunOptionCategory();

/// Registers the run options (once per process; with the compile options'
/// registerCompileOptions()).
void registerRunOptions();

/// The run options of the parsed command line, checked against each other
/// and against `compile` (e.g. --profile needs -target=nvptx); an error
/// names the option. The thread count is --threads, else OMP_NUM_THREADS,
/// else every core the process may use.
llvm::Expected<RunOptions>
getRunOptionsFromCommandLine(const CompileOptions &compile);

/// How many processes an MPI launcher (mpirun, mpiexec, srun's PMI)
/// started together with this one, from the launcher's environment; 1
/// when none did.
int64_t getMPILaunchSize();

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_RUNOPTIONS_H
