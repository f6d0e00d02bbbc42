//===- blockc-run.cpp - JIT-run a compiled transformer block --------------===//
//
//   blockc-run model.mlir [-target=cpu] [--weights=W.safetensors |
//       --random-weights[=SEED]] [--input=x.npy | --random-input[=SEED]]
//       [--seq-len=T] [--batch=B] [--output=y.npy] [--repeat=N]
//       [--threads=N] [--decode=N | --check-decode] [--max-len=L] [--quiet]
//       [--paged-steps=STEPS [--page-size=S]]
//       [--generate=N [--temperature=T] [--top-k=K] [--top-p=P] [--seed=S]
//        [--stop-token=ID]...] [--tokenizer=DIR [--prompt=TEXT]]
//
// --decode=N prefills the input through the KV-cached decode entry derived
// by transformer-derive-decode and runs N single-token steps;
// --check-decode compares token-by-token decoding with one full prefill
// (docs/Decoding.md). --paged-steps runs the input's sequences through the
// paged entry (transformer-derive-paged-decode) in ragged batched steps.
//
// Compiles the model in-process (the compile flow of lib/Compiler, the same
// as blockc's), binds weights by tensor name (see ModelSignature.h), runs
// it, writes the output atomically and prints a summary (shapes, checksum,
// compile time, median run time, GFLOP/s); progress goes to stderr. Every
// argument is checked before anything is compiled, so a bad file fails
// fast with a message naming the file and tensor.
//
// This file parses options and prints; the work is in the libraries: the
// compile options and flow in lib/Compiler, the run options in
// RunOptions.h, weight binding and the input in WeightBinding.h, the run
// itself in RunDriver.h and the summary's pieces in RunSummary.h
// (lib/ExecutionEngine).
//
//===----------------------------------------------------------------------===//

#include "blockc/Compiler/Compiler.h"
#include "blockc/ExecutionEngine/RunDriver.h"
#include "blockc/ExecutionEngine/TensorParallel.h"
#include "blockc/ExecutionEngine/TokenIds.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"

#include <chrono>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::opt<std::string> modelFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required,
                               cl::cat(blockc::getRunOptionCategory()));

/// The compile and run options of the command line (set by main()).
blockc::CompileOptions options;
blockc::RunOptions run;
/// Progress lines on stderr (--quiet: none).
blockc::Progress progress("blockc-run", /*quiet=*/true, /*live=*/false);

/// This process's rank in a tensor-parallel run (rank 0 of 1 otherwise).
blockc::TensorParallelWorld world;

/// Reports an error and returns the exit code; in a tensor-parallel run the
/// message names the rank and every rank ends (a rank that stops would
/// leave the others waiting in their next all-reduce).
int fail(const llvm::Twine &message, bool everyRank = false) {
  progress.clear();
  return world.reportError("blockc-run", message, everyRank);
}

/// An error that every rank of a tensor-parallel run meets alike (the same
/// model, options and world): each rank reports it, then all end together.
int failEveryRank(const llvm::Twine &message) {
  return fail(message, /*everyRank=*/true);
}

/// Reports `error` (nothing more for a DiagnosedError, whose diagnostics
/// were printed) and returns the exit code.
int fail(llvm::Error error) {
  std::string message = blockc::getErrorMessage(std::move(error));
  return message.empty() ? 1 : fail(message);
}

/// Gives a rank-2 input's output back as [T, d] and writes it (unless
/// `write` is off) on rank 0; false on the other ranks, which print
/// nothing, and on failure (`rc`).
bool writeOutput(blockc::HostTensor &output, blockc::RunHead &head, bool rank2,
                 bool write, int &rc) {
  if (rank2) {
    output.shape.erase(output.shape.begin());
    head.inputShape.erase(head.inputShape.begin());
  }
  // Every rank holds the whole (all-reduced) output: rank 0 writes it.
  if (world.rank != 0)
    return false;
  if (write && !run.outputFile.empty())
    if (llvm::Error e = blockc::writeNpy(run.outputFile, output)) {
      rc = fail(llvm::toString(std::move(e)));
      return false;
    }
  return true;
}

/// The result of `from` in `to`, or its error.
template <typename T>
llvm::Error assignTo(std::optional<T> &to, llvm::Expected<T> from) {
  if (!from)
    return from.takeError();
  to = std::move(*from);
  return llvm::Error::success();
}

/// --decode=N and --check-decode, or --paged-steps: the input's sequences
/// through the paged entry in ragged batched steps (docs/Decoding.md).
int runDecodeMode(ModuleOp module, const blockc::ModelSignature &sig,
                  const blockc::ModelInput &input,
                  std::vector<blockc::HostTensor> &weights,
                  blockc::RunHead &head, blockc::CompileCache *cache) {
  std::optional<blockc::DecodeRunResult> decoded;
  std::optional<blockc::PagedRunResult> paged;
  if (llvm::Error e =
          run.pagedMode()
              ? assignTo(paged, blockc::runPagedSteps(module, sig, input.tensor,
                                                      weights, run, options,
                                                      cache, progress))
              : assignTo(decoded,
                         blockc::runDecode(module, sig, input.tensor, weights,
                                           run, options, cache, progress)))
    return fail(std::move(e));
  head.entry = paged ? sig.funcName + "_paged"
                     : decoded->session->getSignature().funcName;
  int rc = 0;
  if (!writeOutput(paged ? paged->output : decoded->run.output, head,
                   input.rank2, /*write=*/paged || !decoded->sampled, rc))
    return rc;
  if (decoded)
    if (llvm::Error e = blockc::writeRunProfiles(run, options, *decoded))
      return fail(std::move(e));
  if (paged)
    blockc::printPagedSummary(llvm::outs(), head, sig, *paged, run);
  else
    blockc::printDecodeSummary(llvm::outs(), head, sig, *decoded, run,
                               input.tensor.shape);
  return 0;
}

/// --generate=N (docs/Generation.md): a causal language model's tokens
/// after the prompt, streamed to stdout as they come (as text with
/// --tokenizer and one sequence), then the summary.
int runGenerateMode(ModuleOp module, const blockc::ModelSignature &sig,
                    const blockc::ModelInput &input,
                    std::vector<blockc::HostTensor> &weights,
                    blockc::RunHead &head, blockc::CompileCache *cache,
                    const blockc::Tokenizer *tokenizer) {
  blockc::GenerationOptions generation;
  generation.maxNewTokens = run.generateTokens;
  generation.sampling = run.sampling;
  generation.stopTokens = run.stopTokens;
  if (tokenizer)
    for (int32_t eos : tokenizer->eosIds())
      if (!llvm::is_contained(generation.stopTokens, eos))
        generation.stopTokens.push_back(eos);
  int64_t batch = input.tensor.shape[0], promptLen = input.tensor.shape[1];

  // Only rank 0 streams (every rank computes the same tokens).
  auto &os = llvm::outs();
  blockc::GeneratedTokenPrinter printer(os, input.tensor, tokenizer,
                                        /*enabled=*/world.rank == 0);
  progress.start(llvm::formatv("generating {0} tokens", run.generateTokens));
  auto result = blockc::runGenerate(
      module, sig, input.tensor, weights, run, generation, options, cache,
      progress, [&](llvm::ArrayRef<int32_t> tokens) {
        printer.push(tokens, [&] { progress.clear(); });
      });
  printer.finish();
  if (!result)
    return fail(result.takeError());
  progress.clear();
  const blockc::GenerationResult &g = result->generation;
  if (world.rank != 0)
    return 0;
  if (!run.outputFile.empty()) {
    blockc::HostTensor ids = blockc::makeTokenIds({batch, g.generated});
    for (int64_t i = 0, e = g.tokens.size(); i < e; ++i)
      blockc::setTokenId(ids, i, g.tokens[i]);
    if (llvm::Error e = blockc::writeTokenIdsNpy(run.outputFile, ids))
      return fail(std::move(e));
  }
  head.entry = result->session->getSignature().funcName;
  blockc::printGenerateSummary(os, head, sig, *result, run, batch, promptLen,
                               tokenizer);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
#if defined(__GLIBC__)
  // The compiled block mallocs its intermediates ([B, T, d_ff] and the
  // like) on every call and frees them before returning. Above glibc's
  // default 128 KiB mmap threshold each would be a fresh mmap whose pages
  // fault in (and are zeroed) again on every call: about 5% of the small
  // block's time at T = 128. Keep blocks up to 32 MiB (glibc's maximum) on
  // the heap and do not trim it, so repeated runs and decode steps reuse
  // the same pages.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  blockc::registerCompileOptions();
  blockc::registerRunOptions();
  blockc::parseCommandLine(argc, argv,
                           "blockc-run: JIT-run a transformer block\n",
                           {&blockc::getRunOptionCategory()});

  // ---- Check every argument
  // --------------------------------------------------
  if (auto parsed = blockc::getCompileOptionsFromCommandLine())
    options = std::move(*parsed);
  else
    return fail(llvm::toString(parsed.takeError()));
  if (std::string error = options.verify(); !error.empty())
    return fail(error);
  if (auto parsed = blockc::getRunOptionsFromCommandLine(options))
    run = std::move(*parsed);
  else
    return fail(llvm::toString(parsed.takeError()));
  progress = blockc::Progress::forStderr("blockc-run", run.quiet);
  if (llvm::Error e = blockc::checkRunOutputsWritable(run))
    return fail(llvm::toString(std::move(e)));
  bool nvptx = options.isNVPTX(), emulate = options.emulate;
  bool decodeMode = run.decodeMode();

  // A GPU run fails fast, before anything is read or compiled, when there is
  // no GPU, driver or runtime.
  bool dumpPipeline = blockc::shouldDumpPassPipeline();
  if (nvptx && !dumpPipeline)
    if (llvm::Error e = blockc::checkGPURuntimeAvailable(emulate))
      return fail(llvm::toString(std::move(e)));
  options.profile = run.profile && emulate;

  // ---- Parse and analyse the model ---------------------------------------
  blockc::ModelFile file;
  llvm::Expected<ModuleOp> module = file.load(modelFile);
  if (!module)
    return fail(module.takeError());
  // Tensor parallelism: join the MPI world first (so that every rank
  // reports what fails below), then the module becomes this rank's program
  // (every rank partitions it the same way) before its signature is read.
  llvm::Expected<int64_t> planned =
      blockc::planTensorParallel(*module, options);
  if (!planned)
    return fail(llvm::toString(planned.takeError()));
  int64_t tpRanks = *planned;
  if (int64_t launched = blockc::getMPILaunchSize();
      tpRanks == 1 && launched > 1)
    return fail(llvm::formatv(
        "started as one of {0} MPI processes (mpirun -np {0}) without "
        "--tensor-parallel: every process would run the whole model and "
        "write the same output; give --tensor-parallel={0}, or run one "
        "process",
        launched));
  if (tpRanks > 1) {
    if (!dumpPipeline)
      if (llvm::Error e =
              blockc::TensorParallelWorld::join(tpRanks, &argc, &argv, world))
        return failEveryRank(llvm::toString(std::move(e)));
  }
  auto sig = blockc::prepareModel(*module, options);
  if (!sig) {
    // A diagnostic above says why the signature is invalid; ranks that
    // started MPI end together.
    std::string message = blockc::getErrorMessage(sig.takeError());
    if (blockc::TensorParallelWorld::isActive())
      return failEveryRank(message.empty()
                               ? "the entry's signature is invalid (see above)"
                               : message);
    return message.empty() ? 1 : fail(message);
  }
  tpRanks = blockc::getTensorParallelRanks(*module);
  if ((run.generateMode() || !run.prompt.empty()) && !sig->takesTokenIds()) {
    std::string type;
    llvm::raw_string_ostream(type) << sig->args.front().type;
    return fail(llvm::formatv(
        "{0} needs a causal-LM model, whose @{1} takes token ids [B, T] "
        "(blockc-import --model=causal-lm); {2}'s @{1} takes {3}",
        run.generateMode() ? "--generate" : "--prompt", sig->funcName,
        modelFile, type));
  }
  // The tokenizer's files are read before anything is compiled.
  std::unique_ptr<blockc::Tokenizer> tokenizer;
  if (!run.tokenizerDir.empty()) {
    auto loadedTokenizer = blockc::Tokenizer::load(run.tokenizerDir);
    if (!loadedTokenizer)
      return fail(loadedTokenizer.takeError());
    tokenizer = std::move(*loadedTokenizer);
  }
  std::unique_ptr<blockc::CompileCache> cache;
  if (!run.noCache) {
    auto fromEnv = blockc::CompileCache::fromEnvironment();
    if (!fromEnv)
      return fail(llvm::toString(fromEnv.takeError()));
    cache = std::move(*fromEnv);
  }
  if (dumpPipeline) {
    blockc::printRunPipeline(llvm::outs(), file.getContext(), options, run,
                             sig->funcName);
    return 0;
  }

  // ---- Input and weights ----------------------------------------------------
  llvm::Expected<blockc::ModelInput> input =
      blockc::loadRunInput(*sig, run, tokenizer.get());
  if (!input)
    return fail(llvm::toString(input.takeError()));
  // Every rank checks the steps against the same input.
  if (run.pagedMode())
    if (llvm::Error e =
            run.checkPagedSteps(input->tensor.shape[0], input->tensor.shape[1]))
      return failEveryRank(llvm::toString(std::move(e)) + " (input " +
                           input->label + ")");
  blockc::WeightRequest request =
      blockc::makeWeightRequest(run, world.rank, tpRanks, nvptx);
  progress.start(run.weightsFile.empty() ? "making random weights"
                                         : "loading " + run.weightsFile);
  auto loadStart = std::chrono::steady_clock::now();
  // A rank may fail to read its weights alone: then every rank reports and
  // all end together.
  auto loaded = blockc::loadRunWeightsOnEveryRank(*sig, request);
  if (!loaded)
    return blockc::TensorParallelWorld::isActive()
               ? failEveryRank(llvm::toString(loaded.takeError()))
               : fail(llvm::toString(loaded.takeError()));
  std::vector<blockc::HostTensor> &weights = loaded->tensors;
  blockc::RunHead head = blockc::describeRun(modelFile, *sig, options, run,
                                             world.size, *input, *loaded);
  progress.finish(llvm::formatv(
      "{0} {1} weights {2} in {3}", run.weightsFile.empty() ? "made" : "loaded",
      head.numWeights, llvm::StringRef(head.weightsHeld).trim(),
      blockc::formatSeconds(std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - loadStart)
                                .count())));

  // The OpenMP runtime reads its thread count when it initialises.
  if (!nvptx)
    if (llvm::Error e = blockc::setCpuThreads(run.threads))
      return fail(llvm::toString(std::move(e)));

  if (run.generateMode()) {
    int rc = runGenerateMode(*module, *sig, *input, weights, head, cache.get(),
                             tokenizer.get());
    blockc::TensorParallelWorld::finalize();
    return rc;
  }
  if (decodeMode || run.pagedMode()) {
    int rc = runDecodeMode(*module, *sig, *input, weights, head, cache.get());
    blockc::TensorParallelWorld::finalize();
    return rc;
  }

  // ---- Compile, prepare, run
  // -------------------------------------------------
  auto result = blockc::runEntry(*module, *sig, input->tensor, *loaded, run,
                                 options, cache.get(), progress);
  if (!result)
    return fail(result.takeError());
  if (loaded->preparedFile) // the run bound the prepared file's weights
    head = blockc::describeRun(modelFile, *sig, options, run, world.size,
                               *input, *loaded);
  int rc = 0;
  if (!writeOutput(result->output, head, input->rank2,
                   /*write=*/!result->sampled, rc)) {
    if (rc == 0)
      blockc::TensorParallelWorld::finalize();
    return rc;
  }
  if (llvm::Error e = blockc::writeRunProfiles(run, options, *result))
    return fail(llvm::toString(std::move(e)));

  // ---- Summary --------------------------------------------------------------
  // The ranks' blocks are slices of the model's: theirs summed.
  double flops =
      sig->flops(input->tensor.shape[0], input->tensor.shape[1]) * world.size;
  blockc::printEntrySummary(llvm::outs(), head, *sig, *result, run,
                            loaded->preparedFile.has_value(), flops);
  blockc::TensorParallelWorld::finalize();
  return 0;
}
