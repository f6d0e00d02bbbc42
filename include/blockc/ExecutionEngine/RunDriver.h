//===- RunDriver.h - a JIT run of a model, as blockc-run does it -*- C++
//-*-===//
//
// The steps of blockc-run once its options are parsed: the run's input and
// weight request, then compile the entry (or the derived decode entry),
// prepare the weights, run it (timed, with an optional profile) or drive a
// decode session, reporting each step on a Progress; and the summary each
// kind of run prints (built from RunSummary.h's pieces).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_RUNDRIVER_H
#define BLOCKC_EXECUTIONENGINE_RUNDRIVER_H

#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/ExecutionEngine/CompileCache.h"
#include "blockc/ExecutionEngine/DecodeSession.h"
#include "blockc/ExecutionEngine/Generation.h"
#include "blockc/ExecutionEngine/RunOptions.h"
#include "blockc/ExecutionEngine/RunSummary.h"
#include "blockc/ExecutionEngine/WeightBinding.h"
#include "blockc/Support/Progress.h"
#include "blockc/Tokenizer/Tokenizer.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace blockc {

/// Whether the files `run` writes (output, prepared weights, profile) can
/// be written, before anything is compiled; the error names the file.
llvm::Error checkRunOutputsWritable(const RunOptions &run);

/// What compiling and preparing an entry took, in every kind of run.
struct RunTimes {
  double compileSeconds = 0, prepareSeconds = 0;
  int64_t preparedBytes = 0;
};

/// What --decode=N or --check-decode gave.
struct DecodeRunResult : RunTimes {
  std::unique_ptr<DecodeSession> session;
  DecodeRun run;
  /// --check-decode: the comparison (which passed) and its tolerance.
  std::optional<DecodeComparison> comparison;
  double tolerance = 0;
  /// --profile with --decode=N: the last step's profile (its time, and the
  /// emulator's counters or the kernels' measured times).
  std::optional<TimedRuns> profiledStep;
  /// On a GPU with --profile-bound: the bounds the times are compared with.
  std::optional<GPUProfile> bound;
  /// --profile-blocks ran a sample of each launch (the prefill's and every
  /// step's): the output is not the block's.
  bool sampled = false;
};

/// Derives `module`'s decode entry, binds `weights` to it with caches for
/// `input` ([B, T, d]) and `run.maxLen`, compiles and prepares it, then
/// generates `run.decodeSteps` tokens or compares token-by-token decoding
/// with one prefill (an error when they differ by more than the tolerance).
llvm::Expected<DecodeRunResult>
runDecode(mlir::ModuleOp module, const ModelSignature &signature,
          const HostTensor &input, std::vector<HostTensor> &weights,
          const RunOptions &run, const CompileOptions &options,
          CompileCache *cache, Progress &progress);

/// --generate=N: a causal language model's tokens after the prompt `ids`
/// ([B, T] token ids), through its KV-cached decode entry (the prompt as
/// one prefill, then one step per token; Generation.h). `onTokens` sees
/// every step's new tokens as they are chosen.
struct GenerateRunResult : RunTimes {
  std::unique_ptr<DecodeSession> session;
  GenerationResult generation;
};

llvm::Expected<GenerateRunResult>
runGenerate(mlir::ModuleOp module, const ModelSignature &signature,
            const HostTensor &ids, std::vector<HostTensor> &weights,
            const RunOptions &run, const GenerationOptions &generation,
            const CompileOptions &options, CompileCache *cache,
            Progress &progress,
            const std::function<void(llvm::ArrayRef<int32_t>)> &onTokens);

/// What --paged-steps gave.
struct PagedRunResult : RunTimes {
  std::unique_ptr<BlockJit> jit;
  /// The K and V pools of every layer, [num_pages, S, H_kv, D] in the
  /// model's K/V type (this rank's K/V heads in a tensor-parallel run).
  std::vector<HostTensor> pools;
  /// Every sequence's rows, [B, T, d] (or [B, T, vocab] logits).
  HostTensor output;
  /// Each step's time and its new tokens (all sequences').
  std::vector<double> stepSeconds;
  std::vector<int64_t> stepTokens;
};

/// --paged-steps: derives `module`'s paged entry (transformer-derive-paged-
/// decode, pages of `run.pageSize` tokens), compiles it, prepares
/// `weights` for it and runs the B sequences of `input` ([B, T, d], or
/// [B, T] ids) through it in the ragged steps of `run.pagedSteps`: each
/// step one call with every sequence's next tokens packed, each sequence's
/// pages taken from the pools as it grows (so that the sequences' pages
/// interleave). Row t of sequence b in the output is what the entry gave
/// for input row t of b.
llvm::Expected<PagedRunResult>
runPagedSteps(mlir::ModuleOp module, const ModelSignature &signature,
              const HostTensor &input, std::vector<HostTensor> &weights,
              const RunOptions &run, const CompileOptions &options,
              CompileCache *cache, Progress &progress);

/// --prompt: the ids `tokenizer` encodes `prompt` to ([1, T], with the
/// beginning-of-sequence token where the model's tokenizer adds one), checked
/// against the vocabulary of `signature`'s causal language model.
llvm::Expected<ModelInput> encodePrompt(const Tokenizer &tokenizer,
                                        llvm::StringRef prompt,
                                        const ModelSignature &signature);

/// What a plain run of the entry gave.
struct EntryRunResult : RunTimes {
  std::unique_ptr<BlockJit> jit;
  HostTensor output;
  TimedRuns runs;
  /// On a GPU with --profile-bound: the bounds the times are compared with.
  std::optional<GPUProfile> bound;
  /// --profile-blocks ran a sample of each launch: the output is not the
  /// block's.
  bool sampled = false;
};

/// Compiles `module`'s entry, prepares `weights` for it (or binds the
/// prepared file they came from), saves them with --save-prepared, and runs
/// the entry `run.repeat` times on `input`.
llvm::Expected<EntryRunResult>
runEntry(mlir::ModuleOp module, const ModelSignature &signature,
         const HostTensor &input, RunWeights &weights, const RunOptions &run,
         const CompileOptions &options, CompileCache *cache,
         Progress &progress);

/// The input `run` asks for: --prompt encoded by `tokenizer`, else --input
/// or a random one (loadModelInput). Refused before a random input is made
/// when the run (with the cache a decode needs and the steps it takes)
/// would not fit --max-len or the machine's memory.
llvm::Expected<ModelInput> loadRunInput(const ModelSignature &signature,
                                        const RunOptions &run,
                                        const Tokenizer *tokenizer);

/// The weights `run` asks for on tensor-parallel rank `rank` of `ranks`
/// (a prepared-weight file: that rank's own); a prepared-weight file is
/// refused where it cannot serve (decode entries, NVPTX).
WeightRequest makeWeightRequest(const RunOptions &run, unsigned rank,
                                int64_t ranks, bool nvptx);

/// The head of a run's summary: `model`, the entry, the target, threads and
/// ranks, the input and the weights (a prepared file's once the run bound
/// them).
RunHead describeRun(llvm::StringRef model, const ModelSignature &signature,
                    const CompileOptions &options, const RunOptions &run,
                    int ranks, const ModelInput &input,
                    const RunWeights &weights);

/// Writes the profiles of a plain run (or of --decode=N's last step) to
/// --profile-file, if given: the measured kernels (a GPU), else the
/// emulator's counters (unless the launches were sampled).
llvm::Error writeRunProfiles(const RunOptions &run,
                             const CompileOptions &options,
                             const EntryRunResult &result);
llvm::Error writeRunProfiles(const RunOptions &run,
                             const CompileOptions &options,
                             const DecodeRunResult &result);

/// The summary blockc-run prints after a plain run (head, output,
/// checksum, compile, prepare, times, profiles); `flops` per run.
void printEntrySummary(llvm::raw_ostream &os, const RunHead &head,
                       const ModelSignature &signature,
                       const EntryRunResult &result, const RunOptions &run,
                       bool preparedFile, double flops);

/// The summary after --decode=N or --check-decode of an input of
/// `inputShape`.
void printDecodeSummary(llvm::raw_ostream &os, const RunHead &head,
                        const ModelSignature &signature,
                        const DecodeRunResult &result, const RunOptions &run,
                        const std::vector<int64_t> &inputShape);

/// The summary after --paged-steps.
void printPagedSummary(llvm::raw_ostream &os, const RunHead &head,
                       const ModelSignature &signature,
                       const PagedRunResult &result, const RunOptions &run);

/// Prints --generate's tokens as the steps give them: as text for one
/// sequence with a tokenizer (its decoder primed with the prompt), else
/// the ids, one line per step for a batch. Prints nothing when `enabled`
/// is off (the ranks of a tensor-parallel run other than rank 0).
class GeneratedTokenPrinter {
public:
  GeneratedTokenPrinter(llvm::raw_ostream &os, const HostTensor &promptIds,
                        const Tokenizer *tokenizer, bool enabled);
  /// Prints one step's tokens (one per sequence); the first step calls
  /// `beforeFirst` (which clears the progress line).
  void push(llvm::ArrayRef<int32_t> tokens,
            llvm::function_ref<void()> beforeFirst);
  /// Ends the stream after the last step (the decoder's held-back text).
  void finish();

private:
  llvm::raw_ostream &os;
  int64_t batch;
  bool enabled;
  int64_t step = 0;
  std::optional<StreamingDecoder> text;
};

/// loadRunWeights on this rank; in a tensor-parallel run that joined its
/// world, the ranks then learn whether every one read its weights (a rank
/// may fail alone: its own prepared file, a file it cannot open), and each
/// gets the error: its own, or one naming the first rank that failed.
llvm::Expected<RunWeights>
loadRunWeightsOnEveryRank(const ModelSignature &signature,
                          const WeightRequest &request);

/// Prints the pass pipeline a run with `options` and `run` compiles its
/// entry `entry` with (blockc-run --dump-pass-pipeline).
void printRunPipeline(llvm::raw_ostream &os, mlir::MLIRContext &context,
                      const CompileOptions &options, const RunOptions &run,
                      llvm::StringRef entry);

/// The summary after --generate=N of `batch` prompts of `promptLen`
/// tokens (each sequence's text with a tokenizer and more than one).
void printGenerateSummary(llvm::raw_ostream &os, const RunHead &head,
                          const ModelSignature &signature,
                          const GenerateRunResult &result,
                          const RunOptions &run, int64_t batch,
                          int64_t promptLen, const Tokenizer *tokenizer);

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_RUNDRIVER_H
