//===- RunDriver.h - a JIT run of a model, as blockc-run does it -*- C++
//-*-===//
//
// The steps of blockc-run after the model, its input and its weights are
// loaded: compile the entry (or the derived decode entry), prepare the
// weights, run it (timed, with an optional profile) or drive a decode
// session, reporting each step on a Progress. The results are returned for
// the tool to print (RunSummary.h); nothing here prints a summary.
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

/// What --decode=N or --check-decode gave.
struct DecodeRunResult {
  std::unique_ptr<DecodeSession> session;
  DecodeRun run;
  /// --check-decode: the comparison (which passed) and its tolerance.
  std::optional<DecodeComparison> comparison;
  double tolerance = 0;
  double compileSeconds = 0, prepareSeconds = 0;
  int64_t preparedBytes = 0;
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

/// What a plain run of the entry gave.
/// --generate=N: a causal language model's tokens after the prompt `ids`
/// ([B, T] token ids), through its KV-cached decode entry (the prompt as
/// one prefill, then one step per token; Generation.h). `onTokens` sees
/// every step's new tokens as they are chosen.
struct GenerateRunResult {
  std::unique_ptr<DecodeSession> session;
  GenerationResult generation;
  double compileSeconds = 0, prepareSeconds = 0;
  int64_t preparedBytes = 0;
};

llvm::Expected<GenerateRunResult>
runGenerate(mlir::ModuleOp module, const ModelSignature &signature,
            const HostTensor &ids, std::vector<HostTensor> &weights,
            const RunOptions &run, const GenerationOptions &generation,
            const CompileOptions &options, CompileCache *cache,
            Progress &progress,
            const std::function<void(llvm::ArrayRef<int32_t>)> &onTokens);

/// --prompt: the ids `tokenizer` encodes `prompt` to ([1, T], with the
/// beginning-of-sequence token where the model's tokenizer adds one), checked
/// against the vocabulary of `signature`'s causal language model.
llvm::Expected<ModelInput> encodePrompt(const Tokenizer &tokenizer,
                                        llvm::StringRef prompt,
                                        const ModelSignature &signature);

struct EntryRunResult {
  std::unique_ptr<BlockJit> jit;
  HostTensor output;
  TimedRuns runs;
  /// On a GPU with --profile-bound: the bounds the times are compared with.
  std::optional<GPUProfile> bound;
  double compileSeconds = 0, prepareSeconds = 0;
  int64_t preparedBytes = 0;
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

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_RUNDRIVER_H
