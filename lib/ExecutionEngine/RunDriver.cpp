//===- RunDriver.cpp - a JIT run of a model, as blockc-run does it --------===//

#include "blockc/ExecutionEngine/RunDriver.h"
#include "blockc/ExecutionEngine/MemoryEstimate.h"
#include "blockc/ExecutionEngine/TensorParallel.h"
#include "blockc/ExecutionEngine/TokenIds.h"
#include "blockc/Support/Error.h"

#include "blockc/Compiler/Compiler.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace blockc;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Runs `prepare` (the weights' prepare function), shown on `progress` when
/// the entry has one (`hasPrepare`), and records its bytes and seconds in
/// `result`.
llvm::Error timePrepare(bool hasPrepare, Progress &progress, RunTimes &result,
                        llvm::function_ref<llvm::Expected<int64_t>()> prepare) {
  auto start = std::chrono::steady_clock::now();
  if (hasPrepare)
    progress.start("preparing the weights");
  llvm::Expected<int64_t> prepared = prepare();
  if (!prepared)
    return makeError("preparing the weights failed: " +
                     llvm::toString(prepared.takeError()));
  result.preparedBytes = *prepared;
  result.prepareSeconds = secondsSince(start);
  if (hasPrepare)
    progress.finish(llvm::formatv("prepared the weights in {0}",
                                  formatSeconds(result.prepareSeconds)));
  return llvm::Error::success();
}

std::string describeTarget(const CompileOptions &options) {
  if (!options.isNVPTX())
    return "cpu";
  return "nvptx " + options.gpuArch + (options.emulate ? ", emulated" : "");
}

/// Runs `compile` (of the entry `funcName`), shown on `progress`, and
/// records the seconds it took in `times`; `cacheStatus` says afterwards
/// where the code came from.
llvm::Error timeCompile(llvm::StringRef funcName, const CompileOptions &options,
                        Progress &progress, RunTimes &times,
                        llvm::function_ref<llvm::Error()> compile,
                        llvm::function_ref<std::string()> cacheStatus) {
  std::string entry = ("@" + funcName).str();
  progress.start("compiling " + entry + " (" + describeTarget(options) + ")");
  auto start = std::chrono::steady_clock::now();
  if (llvm::Error e = compile())
    return e;
  times.compileSeconds = secondsSince(start);
  progress.finish(llvm::formatv("compiled {0} in {1} ({2})", entry,
                                formatSeconds(times.compileSeconds),
                                cacheStatus()));
  return llvm::Error::success();
}

/// Compiles `signature`'s entry of `module` into `result.jit`, shown on
/// `progress`, and records the seconds it took in `result`.
template <typename Result>
llvm::Error compileShown(mlir::ModuleOp module, const ModelSignature &signature,
                         const CompileOptions &options, CompileCache *cache,
                         Progress &progress, Result &result) {
  return timeCompile(
      signature.funcName, options, progress, result,
      [&]() -> llvm::Error {
        auto jit = BlockJit::compile(module, signature, options, cache);
        if (!jit)
          return jit.takeError();
        result.jit = std::move(*jit);
        return llvm::Error::success();
      },
      [&] { return result.jit->cacheStatus(); });
}

/// While alive, shows each emulated kernel launch on `progress` (nothing
/// for a CPU or GPU run).
class LaunchProgress {
public:
  LaunchProgress(const CompileOptions &options, Progress &progress)
      : active(options.emulate && !progress.isQuiet()) {
    if (!active)
      return;
    llvm::Error e =
        observeEmulatedLaunches([&progress, this](llvm::StringRef kernel) {
          progress.update(
              llvm::formatv("emulated launch {0}: {1}", ++launches, kernel));
        });
    // Progress is optional: a runtime that cannot report runs anyway.
    if (e) {
      llvm::consumeError(std::move(e));
      active = false;
    }
  }
  ~LaunchProgress() {
    if (active)
      llvm::consumeError(observeEmulatedLaunches(nullptr));
  }

private:
  bool active;
  int64_t launches = 0;
};

} // namespace

llvm::Error blockc::checkRunOutputsWritable(const RunOptions &run) {
  for (const std::string *path : {&run.outputFile, &run.savePrepared})
    if (!path->empty())
      if (llvm::Error e = checkWritable(*path))
        return e;
  // A sampled profile is not written.
  if (run.profile && !run.profileFile.empty() && run.profileBlocks == 0)
    return checkWritable(run.profileFile);
  return llvm::Error::success();
}

namespace {

/// What --profile records: nothing, the emulator's counters or, on a GPU,
/// the kernels' times.
RunProfile getRunProfile(const RunOptions &run, const CompileOptions &options) {
  return !run.profile      ? RunProfile::None
         : options.emulate ? RunProfile::Emulator
                           : RunProfile::GPU;
}

/// --profile-bound's profile, if given.
llvm::Error readProfileBound(const RunOptions &run,
                             std::optional<GPUProfile> &bound) {
  if (run.profileBound.empty())
    return llvm::Error::success();
  auto read = readGPUProfile(run.profileBound);
  if (!read)
    return read.takeError();
  bound = std::move(*read);
  return llvm::Error::success();
}

/// Profiles the last of `steps` decode steps of `session` (--profile with
/// --decode=N) into `result`: with --profile-blocks the prefill and the
/// earlier steps run sampled too (only the caches' shapes matter to the
/// last step's counters), unrecorded.
void profileLastStep(DecodeSession &session, mlir::ModuleOp module,
                     const RunOptions &run, const CompileOptions &options,
                     int64_t steps, DecodeRunResult &result) {
  RunProfile profile = getRunProfile(run, options);
  int64_t sample = run.profileBlocks;
  result.sampled = sample > 0;
  result.profiledStep.emplace();
  session.setStepHooks(
      [profile, sample, steps](int64_t step) -> llvm::Error {
        if (step == 0 && sample > 0)
          return beginEmulatorProfile(sample);
        if (step != steps)
          return llvm::Error::success();
        if (sample > 0) {
          auto unrecorded = endEmulatorProfile();
          if (!unrecorded)
            return unrecorded.takeError();
        }
        return beginProfile(profile, sample);
      },
      [=, &options, &result](int64_t step) -> llvm::Error {
        if (step != steps)
          return llvm::Error::success();
        return endProfile(profile, module, options, sample,
                          *result.profiledStep);
      });
}

/// The decode session of runDecode and runGenerate: derived, bound to
/// `weights` for `batch` sequences of a `promptLen`-token prompt (the cache
/// as long as `run` needs), compiled and its weights prepared; the seconds
/// and bytes in `times`.
llvm::Expected<std::unique_ptr<DecodeSession>>
startSession(mlir::ModuleOp module, const ModelSignature &signature,
             int64_t batch, int64_t promptLen, const RunOptions &run,
             std::vector<HostTensor> &weights, const CompileOptions &options,
             CompileCache *cache, Progress &progress, RunTimes &times) {
  mlir::FailureOr<std::unique_ptr<DecodeSession>> session =
      DecodeSession::derive(module, signature, options.kvLayout);
  if (failed(session))
    return llvm::make_error<DiagnosedError>("");
  DecodeSession &s = **session;
  int64_t capacity = run.maxLen ? run.maxLen : run.neededCacheLength(promptLen);
  if (llvm::Error e = s.bind(weights, batch, capacity))
    return std::move(e);
  if (llvm::Error e = timeCompile(
          s.getSignature().funcName, options, progress, times,
          [&] { return s.compile(options, cache); },
          [&] { return s.cacheStatus(); }))
    return std::move(e);
  if (llvm::Error e = timePrepare(s.getPrepareEntry() != nullptr, progress,
                                  times, [&] { return s.prepare(weights); }))
    return std::move(e);
  return std::move(*session);
}

} // namespace

llvm::Expected<DecodeRunResult>
blockc::runDecode(mlir::ModuleOp module, const ModelSignature &signature,
                  const HostTensor &input, std::vector<HostTensor> &weights,
                  const RunOptions &run, const CompileOptions &options,
                  CompileCache *cache, Progress &progress) {
  int64_t promptLen = input.shape[1];
  DecodeRunResult result;
  // Before the session derives and compiles the module: any op's
  // #transformer.weight_quant (blocks and projections carry it).
  bool quantizedActivations = false;
  module.walk([&](mlir::Operation *op) {
    for (mlir::NamedAttribute attr : op->getAttrs())
      if (auto quant =
              mlir::dyn_cast<transformer::WeightQuantAttr>(attr.getValue()))
        quantizedActivations |= quant.quantizesActivations();
  });
  auto session = startSession(module, signature, input.shape[0], promptLen, run,
                              weights, options, cache, progress, result);
  if (!session)
    return session.takeError();
  result.session = std::move(*session);
  DecodeSession &s = *result.session;

  std::string what =
      run.checkDecode
          ? llvm::formatv("{0} positions token by token against one prefill",
                          promptLen)
                .str()
          : llvm::formatv("prefill of {0} tokens and {1} decode steps",
                          promptLen, run.decodeSteps)
                .str();
  progress.start((run.checkDecode ? "checking " : "") + what);
  s.setStepObserver([&](int64_t done, int64_t total) {
    progress.update(llvm::formatv("step {0}/{1}", done, total));
  });
  auto start = std::chrono::steady_clock::now();
  LaunchProgress launches(options, progress);
  if (run.checkDecode) {
    result.tolerance = run.checkTolerance ? *run.checkTolerance
                                          : DecodeComparison::defaultTolerance(
                                                signature.getModelElementType(),
                                                quantizedActivations);
    auto compared = s.compareWithPrefill(input);
    if (!compared)
      return compared.takeError();
    DecodeComparison &c = *compared;
    if (!c.passes(result.tolerance))
      return makeError(llvm::formatv("--check-decode: position {0} (batch "
                                     "{1}) differs from the prefill by "
                                     "{2:e3}, more than {3:e1} of the output "
                                     "scale {4:e3}",
                                     c.worstPosition, c.worstBatch, c.maxDiff,
                                     result.tolerance, c.scale)
                           .str());
    result.run = std::move(c.run);
    result.comparison = std::move(c);
  } else {
    if (run.profile) {
      if (llvm::Error e = readProfileBound(run, result.bound))
        return std::move(e);
      profileLastStep(s, module, run, options, run.decodeSteps, result);
    }
    auto generated = s.generate(input, run.decodeSteps);
    s.setStepHooks(nullptr, nullptr);
    if (!generated)
      return generated.takeError();
    result.run = std::move(*generated);
    if (result.profiledStep)
      result.profiledStep->seconds = {result.run.stepSeconds.back()};
  }
  s.setStepObserver(nullptr);
  progress.finish(llvm::formatv("{0}{1} in {2}",
                                run.checkDecode ? "checked " : "", what,
                                formatSeconds(secondsSince(start))));
  return std::move(result);
}

llvm::Expected<GenerateRunResult> blockc::runGenerate(
    mlir::ModuleOp module, const ModelSignature &signature,
    const HostTensor &ids, std::vector<HostTensor> &weights,
    const RunOptions &run, const GenerationOptions &generation,
    const CompileOptions &options, CompileCache *cache, Progress &progress,
    const std::function<void(llvm::ArrayRef<int32_t>)> &onTokens) {
  int64_t batch = ids.shape[0], promptLen = ids.shape[1];
  GenerateRunResult result;
  auto session = startSession(module, signature, batch, promptLen, run, weights,
                              options, cache, progress, result);
  if (!session)
    return session.takeError();
  result.session = std::move(*session);
  DecodeSession &s = *result.session;

  std::vector<int32_t> prompt(batch * promptLen);
  for (int64_t i = 0, e = prompt.size(); i < e; ++i)
    prompt[i] = getTokenId(ids, i);
  HostTensor x, out;
  DecodeStepFunction step = [&](llvm::ArrayRef<int32_t> tokens, int64_t n,
                                std::vector<float> &logits) -> llvm::Error {
    x = makeTokenIds({batch, n});
    for (int64_t i = 0, e = tokens.size(); i < e; ++i)
      setTokenId(x, i, tokens[i]);
    if (llvm::Error e = s.step(x, out))
      return e;
    logits.assign(out.data.begin(), out.data.end());
    return llvm::Error::success();
  };
  auto generated = generateTokens(step, prompt, batch, promptLen,
                                  signature.vocabSize, generation, onTokens);
  if (!generated)
    return generated.takeError();
  result.generation = std::move(*generated);
  return std::move(result);
}

llvm::Expected<PagedRunResult>
blockc::runPagedSteps(mlir::ModuleOp module, const ModelSignature &signature,
                      const HostTensor &input, std::vector<HostTensor> &weights,
                      const RunOptions &run, const CompileOptions &options,
                      CompileCache *cache, Progress &progress) {
  int64_t batch = input.shape[0], seqLen = input.shape[1];
  if (llvm::Error e = run.checkPagedSteps(batch, seqLen))
    return std::move(e);
  PagedRunResult result;

  // The paged entry, derived on a copy (diagnostics say why it cannot be).
  mlir::OwningOpRef<mlir::ModuleOp> copy(module.clone());
  mlir::FailureOr<std::string> name = derivePagedEntry(
      *copy, signature.funcName, run.pageSize, /*keepEntry=*/false);
  if (failed(name))
    return llvm::make_error<DiagnosedError>("");
  ModelSignature paged = signature;
  paged.funcName = *name;
  PagedArguments pagedArgs =
      getPagedArguments(copy->lookupSymbol<mlir::func::FuncOp>(*name));
  if (pagedArgs.pools.empty())
    return makeError("--paged-steps: the model has no attention layer to "
                     "cache");

  if (llvm::Error e =
          compileShown(*copy, paged, options, cache, progress, result))
    return std::move(e);
  BlockJit &jitRef = *result.jit;
  std::vector<HostTensor *> prepareArgs = {nullptr};
  for (HostTensor &w : weights)
    prepareArgs.push_back(&w);
  if (llvm::Error e =
          timePrepare(jitRef.getPrepareEntry() != nullptr, progress, result,
                      [&] { return jitRef.prepare(prepareArgs); }))
    return std::move(e);

  // The pools: exactly the pages the sequences end with, zeroed.
  int64_t pageSize = pagedArgs.pageSize;
  int64_t pagesPerSequence = (seqLen + pageSize - 1) / pageSize;
  int64_t numPages = batch * pagesPerSequence;
  for (const PagedPoolArgument &pool : pagedArgs.pools) {
    HostTensor &p = result.pools.emplace_back();
    llvm::ArrayRef<int64_t> shape = pool.type.getShape();
    p.shape = {numPages, shape[1], shape[2], shape[3]};
    p.elementType = getHostElementType(pool.type.getElementType());
    p.allocate();
  }
  std::vector<HostTensor *> poolPtrs;
  for (HostTensor &p : result.pools)
    poolPtrs.push_back(&p);

  bool ids = signature.takesTokenIds();
  int64_t d = ids ? 1 : signature.getModelDim();
  int64_t width = ids ? signature.vocabSize : signature.getModelDim();
  result.output.shape = {batch, seqLen, width};
  result.output.data.assign(result.output.numElements(), 0.0f);
  std::vector<int64_t> cached(batch, 0);
  std::vector<std::vector<int32_t>> pages(batch);
  int32_t nextPage = 0;
  int64_t numSteps = run.pagedSteps.size();
  progress.start(
      llvm::formatv("running {0} steps of {1} sequences", numSteps, batch));
  LaunchProgress launches(options, progress);
  for (int64_t step = 0; step < numSteps; ++step) {
    const std::vector<int64_t> &counts = run.pagedSteps[step];
    // The sequences with new tokens, packed in order; a sequence's pages
    // are taken as its tokens need them.
    std::vector<int64_t> active;
    std::vector<int32_t> cuSeqlens = {0}, positions;
    int64_t maxPages = 1;
    for (int64_t b = 0; b < batch; ++b) {
      if (counts[b] == 0)
        continue;
      active.push_back(b);
      cuSeqlens.push_back(cuSeqlens.back() + counts[b]);
      positions.push_back(cached[b]);
      while (static_cast<int64_t>(pages[b].size()) * pageSize <
             cached[b] + counts[b])
        pages[b].push_back(nextPage++);
      maxPages = std::max<int64_t>(maxPages, pages[b].size());
    }
    int64_t total = cuSeqlens.back();
    std::vector<int32_t> blockTable(active.size() * maxPages, 0);
    HostTensor x = ids ? makeTokenIds({total}) : HostTensor();
    if (!ids) {
      x.shape = {total, d};
      x.data.reserve(x.numElements());
    }
    for (size_t i = 0; i < active.size(); ++i) {
      int64_t b = active[i];
      llvm::copy(pages[b], blockTable.begin() + i * maxPages);
      int64_t first = b * seqLen + cached[b];
      for (int64_t t = 0; t < counts[b]; ++t) {
        if (ids)
          setTokenId(x, cuSeqlens[i] + t, getTokenId(input, first + t));
        else
          x.data.insert(x.data.end(), input.data.begin() + (first + t) * d,
                        input.data.begin() + (first + t + 1) * d);
      }
    }
    HostTensor out;
    out.shape = {total, width};
    out.data.assign(out.numElements(), 0.0f);
    std::vector<const HostTensor *> args = {&x};
    for (const HostTensor &w : weights)
      args.push_back(&w);
    progress.update(llvm::formatv("step {0}/{1}", step + 1, numSteps));
    auto stepStart = std::chrono::steady_clock::now();
    if (llvm::Error e =
            jitRef.runPaged(args, cuSeqlens, positions, blockTable, maxPages,
                            poolPtrs, out, WeightReuse::Unchanged))
      return makeError(llvm::formatv("--paged-steps: step {0}: {1}", step + 1,
                                     llvm::toString(std::move(e)))
                           .str());
    result.stepSeconds.push_back(secondsSince(stepStart));
    result.stepTokens.push_back(total);
    for (size_t i = 0; i < active.size(); ++i) {
      int64_t b = active[i];
      std::copy(out.data.begin() + cuSeqlens[i] * width,
                out.data.begin() + cuSeqlens[i + 1] * width,
                result.output.data.begin() + (b * seqLen + cached[b]) * width);
      cached[b] += counts[b];
    }
  }
  progress.finish(
      llvm::formatv("ran {0} steps of {1} sequences", numSteps, batch));
  return std::move(result);
}

llvm::Expected<ModelInput>
blockc::encodePrompt(const Tokenizer &tokenizer, llvm::StringRef prompt,
                     const ModelSignature &signature) {
  auto ids = tokenizer.encode(prompt, tokenizer.addsBosByDefault());
  if (!ids)
    return makeError("--prompt: " + llvm::toString(ids.takeError()));
  if (ids->empty())
    return makeError("--prompt: the tokenizer gives no tokens for it");
  ModelInput input;
  int64_t n = ids->size();
  input.tensor = makeTokenIds({1, n});
  for (int64_t i = 0; i < n; ++i)
    setTokenId(input.tensor, i, (*ids)[i]);
  input.label =
      llvm::formatv("--prompt ({0} tokens, {1})", n, tokenizer.kind()).str();
  if (llvm::Error e =
          checkTokenIds(input.tensor, signature.vocabSize, "--prompt"))
    return std::move(e);
  return std::move(input);
}

llvm::Expected<EntryRunResult>
blockc::runEntry(mlir::ModuleOp module, const ModelSignature &signature,
                 const HostTensor &input, RunWeights &weights,
                 const RunOptions &run, const CompileOptions &options,
                 CompileCache *cache, Progress &progress) {
  EntryRunResult result;
  if (llvm::Error e =
          compileShown(module, signature, options, cache, progress, result))
    return std::move(e);

  // The entry's prepare function packs the weights once; each prepared
  // weight replaces its original. Weights loaded already prepared skip it.
  bool preparing = result.jit->getPrepareEntry() && !weights.preparedFile;
  if (preparing)
    progress.start("preparing the weights");
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<int64_t> prepared =
      prepareRunWeights(*result.jit, signature, weights);
  if (!prepared)
    return prepared.takeError();
  result.preparedBytes = *prepared;
  result.prepareSeconds = secondsSince(start);
  if (preparing)
    progress.finish(llvm::formatv("prepared the weights in {0}",
                                  formatSeconds(result.prepareSeconds)));
  // A tensor-parallel rank saves its parts in a file of its own.
  if (!run.savePrepared.empty())
    if (llvm::Error e = savePreparedWeights(
            weights.ranks > 1 ? getRankPreparedPath(run.savePrepared,
                                                    weights.rank, weights.ranks)
                              : run.savePrepared,
            signature, result.jit->getPrepareEntry(), weights.tensors,
            weights.rank, weights.ranks))
      return std::move(e);

  result.output.shape =
      signature.getOutputShape(input.shape[0], input.shape[1]);
  result.output.data.assign(result.output.numElements(), 0.0f);
  std::vector<const HostTensor *> args = {&input};
  for (const HostTensor &w : weights.tensors)
    args.push_back(&w);
  if (llvm::Error e = readProfileBound(run, result.bound))
    return std::move(e);
  RunProfile profile = getRunProfile(run, options);
  std::string entry = "@" + signature.funcName;
  progress.start(llvm::formatv(
      "running {0}{1}", entry,
      run.repeat > 1 ? llvm::formatv(" {0} times", run.repeat).str()
                     : std::string()));
  start = std::chrono::steady_clock::now();
  LaunchProgress launches(options, progress);
  auto runs = runTimed(*result.jit, module, options, args, result.output,
                       run.repeat, profile, run.profileBlocks);
  if (!runs)
    return runs.takeError();
  result.runs = std::move(*runs);
  progress.finish(llvm::formatv("ran {0} {1} {2} in {3}", entry, run.repeat,
                                run.repeat == 1 ? "time" : "times",
                                formatSeconds(secondsSince(start))));
  result.sampled = run.profile && run.profileBlocks > 0;
  return std::move(result);
}

llvm::Expected<ModelInput> blockc::loadRunInput(const ModelSignature &sig,
                                                const RunOptions &run,
                                                const Tokenizer *tokenizer) {
  bool decodeMode = run.decodeMode();
  int64_t steps = run.generateMode()               ? run.generateTokens
                  : decodeMode && !run.checkDecode ? run.decodeSteps
                                                   : 0;
  auto checkSize = [&](int64_t b, int64_t t) -> llvm::Error {
    if (decodeMode)
      if (llvm::Error e = run.checkCacheCapacity(t))
        return e;
    int64_t cacheLen = !decodeMode  ? 0
                       : run.maxLen ? run.maxLen
                                    : run.neededCacheLength(t);
    return checkMemoryFits(sig, b, t, steps, cacheLen);
  };
  if (run.prompt.empty())
    return loadModelInput(
        sig, {run.inputFile, run.inputSeed.value_or(0), run.batch, run.seqLen},
        checkSize);
  auto input = encodePrompt(*tokenizer, run.prompt, sig);
  if (input)
    if (llvm::Error e = checkSize(1, input->tensor.shape[1]))
      return std::move(e);
  return input;
}

WeightRequest blockc::makeWeightRequest(const RunOptions &run, unsigned rank,
                                        int64_t ranks, bool nvptx) {
  WeightRequest request;
  request.file = run.weightsFile;
  request.seed = run.weightSeed.value_or(0);
  request.rank = rank;
  request.ranks = static_cast<unsigned>(ranks);
  request.binding.allowExtraTensors = run.allowExtraWeights;
  if (run.decodeMode() || run.pagedMode() || nvptx)
    request.preparedRefused = "prepared weights load for the plain CPU entry "
                              "only (not --decode, --check-decode, "
                              "--paged-steps or -target=nvptx)";
  return request;
}

RunHead blockc::describeRun(llvm::StringRef model, const ModelSignature &sig,
                            const CompileOptions &options,
                            const RunOptions &run, int ranks,
                            const ModelInput &input,
                            const RunWeights &weights) {
  bool nvptx = options.isNVPTX();
  RunHead head;
  head.model = model.str();
  head.entry = sig.funcName;
  head.target = nvptx ? "nvptx" : "cpu";
  head.emulated = options.emulate;
  head.threads = nvptx && !run.decodeMode() ? 1u : run.threads;
  if (head.threads == run.threads)
    head.threadsSource =
        run.threadSource == ThreadSource::AllCores      ? "all cores"
        : run.threadSource == ThreadSource::Environment ? "OMP_NUM_THREADS"
                                                        : "";
  head.ranks = ranks;
  head.inputShape = input.tensor.shape;
  head.inputLabel = input.label;
  head.numWeights = weights.tensors.size();
  // A prepared file counts the model's parameters: its words or panels
  // hold more or fewer elements (and are read by the run).
  if (weights.preparedFile)
    for (const ModelArgument &arg : llvm::drop_begin(sig.args))
      head.numParams += arg.type.getNumElements();
  else
    for (const HostTensor &w : weights.tensors)
      head.numParams += w.numElements();
  head.weightsLabel = weights.label;
  head.weightsHeld = describeHeld(weights.tensors);
  return head;
}

namespace {

llvm::Error writeProfiles(const RunOptions &run, const CompileOptions &options,
                          const TimedRuns &runs,
                          const std::optional<GPUProfile> &bound,
                          bool sampled) {
  if (run.profileFile.empty())
    return llvm::Error::success();
  if (runs.measured)
    if (llvm::Error e =
            writeMeasuredProfileJSON(run.profileFile, options.gpuArch,
                                     *runs.measured, bound ? &*bound : nullptr))
      return e;
  if (runs.profile && !sampled)
    return writeGPUProfileJSON(run.profileFile, *runs.profile);
  return llvm::Error::success();
}

/// The profile lines of a summary: the measured kernels against their
/// bounds, or the emulator's table, and where the file went.
void printProfiles(llvm::raw_ostream &os, const TimedRuns &runs,
                   const std::optional<GPUProfile> &bound, bool sampled,
                   llvm::StringRef profileFile) {
  if (runs.measured) {
    printMeasuredProfile(os, *runs.measured, bound ? &*bound : nullptr);
    if (!profileFile.empty())
      os << "  profile  -> " << profileFile << "\n";
  }
  if (runs.profile) {
    printGPUProfile(os, *runs.profile);
    if (!profileFile.empty())
      os << (sampled ? "  profile  not written to " + profileFile +
                           " (--profile-blocks: the counters are scaled "
                           "from a sample)\n"
                     : "  profile  -> " + profileFile + "\n");
  }
}

/// The output and checksum lines (a sampled run's output is not the
/// block's).
void printOutput(llvm::raw_ostream &os, const HostTensor &output,
                 llvm::StringRef outputFile, bool sampled) {
  printOutputLine(os, output.shape, outputFile, sampled);
  if (sampled)
    os << "  checksum not meaningful (--profile-blocks ran a sample of each "
          "launch)\n";
  else
    printChecksum(os, Checksum::of(output));
}

} // namespace

llvm::Error blockc::writeRunProfiles(const RunOptions &run,
                                     const CompileOptions &options,
                                     const EntryRunResult &result) {
  return writeProfiles(run, options, result.runs, result.bound, result.sampled);
}

llvm::Error blockc::writeRunProfiles(const RunOptions &run,
                                     const CompileOptions &options,
                                     const DecodeRunResult &result) {
  if (!result.profiledStep)
    return llvm::Error::success();
  return writeProfiles(run, options, *result.profiledStep, result.bound,
                       result.sampled);
}

void blockc::printEntrySummary(llvm::raw_ostream &os, const RunHead &head,
                               const ModelSignature &sig,
                               const EntryRunResult &result,
                               const RunOptions &run, bool preparedFile,
                               double flops) {
  const TimedRuns &runs = result.runs;
  bool sampled = result.sampled;
  printRunHead(os, head, sig);
  printOutput(os, result.output, run.outputFile, sampled);
  printCompileLine(os, result.compileSeconds, result.jit->cacheStatus());
  if (preparedFile)
    os << "  prepare  skipped (" << head.weightsLabel
       << (llvm::StringRef(head.weightsLabel).contains("<r>") ? " hold"
                                                              : " holds")
       << " the prepared weights)\n";
  else
    printPrepare(os, result.jit->getPrepareEntry(), result.prepareSeconds,
                 result.preparedBytes);
  if (!run.savePrepared.empty())
    os << "  saved    prepared weights -> "
       << (head.ranks > 1
               ? getRankPreparedPattern(run.savePrepared, head.ranks) +
                     " (one file per rank)"
               : run.savePrepared)
       << "\n";
  printRunTimes(os, runs.seconds, flops);
  printProfiles(os, runs, result.bound, sampled, run.profileFile);
}

void blockc::printDecodeSummary(llvm::raw_ostream &os, const RunHead &head,
                                const ModelSignature &sig,
                                const DecodeRunResult &result,
                                const RunOptions &run,
                                const std::vector<int64_t> &inputShape) {
  const DecodeSession &session = *result.session;
  printRunHead(os, head, sig);
  printKVCaches(os, session);
  printOutput(os, result.run.output, run.outputFile, result.sampled);
  printCompileLine(os, result.compileSeconds, session.cacheStatus());
  printPrepare(os, session.getPrepareEntry(), result.prepareSeconds,
               result.preparedBytes);
  os << "  prefill  " << inputShape[1] << " tokens in "
     << formatSeconds(result.run.prefillSeconds) << "\n";
  printDecodeSteps(os, result.run.stepSeconds, inputShape[0]);
  if (const auto &c = result.comparison)
    os << llvm::format("  check    PASS: %lld positions x %lld, max |decode "
                       "- prefill| = %.3e (%.1e of the output scale, "
                       "tolerance %.0e)\n",
                       (long long)inputShape[1], (long long)inputShape[0],
                       c->maxDiff, c->maxDiff / std::max(c->scale, 1e-30),
                       result.tolerance);
  if (result.profiledStep) {
    os << "  profiled step " << result.run.stepSeconds.size() << " (cache of "
       << inputShape[1] + (int64_t)result.run.stepSeconds.size() - 1
       << " tokens before it)\n";
    printProfiles(os, *result.profiledStep, result.bound, result.sampled,
                  run.profileFile);
  }
}

void blockc::printPagedSummary(llvm::raw_ostream &os, const RunHead &head,
                               const ModelSignature &sig,
                               const PagedRunResult &result,
                               const RunOptions &run) {
  printRunHead(os, head, sig);
  int64_t poolBytes = 0;
  for (const HostTensor &p : result.pools)
    poolBytes += p.numElements() * (p.elementType == ElementType::F32 ? 4 : 2);
  size_t layers = result.pools.size() / 2;
  os << "  pools    " << layers << " layer" << (layers == 1 ? "" : "s")
     << " x K, V " << formatShape(result.pools.front().shape)
     << " [num_pages, S, H_kv, D]" << (head.ranks > 1 ? " on each rank" : "")
     << ", " << llvm::format("%.1f KiB", poolBytes / 1024.0) << "\n";
  printOutputLine(os, result.output.shape, run.outputFile);
  printChecksum(os, Checksum::of(result.output));
  printCompileLine(os, result.compileSeconds, result.jit->cacheStatus());
  printPrepare(os, result.jit->getPrepareEntry(), result.prepareSeconds,
               result.preparedBytes);
  double total = 0;
  int64_t tokens = 0;
  std::string counts;
  for (size_t i = 0; i < result.stepSeconds.size(); ++i) {
    total += result.stepSeconds[i];
    tokens += result.stepTokens[i];
    counts += (i ? ", " : "") + std::to_string(result.stepTokens[i]);
  }
  os << "  steps    " << result.stepSeconds.size() << " ragged steps of "
     << result.output.shape[0] << " sequences (" << counts
     << " tokens): median " << formatSeconds(medianOf(result.stepSeconds))
     << llvm::format(", %.1f tokens/s\n", double(tokens) / total);
}

void blockc::printGenerateSummary(llvm::raw_ostream &os, const RunHead &head,
                                  const ModelSignature &sig,
                                  const GenerateRunResult &result,
                                  const RunOptions &run, int64_t batch,
                                  int64_t promptLen,
                                  const Tokenizer *tokenizer) {
  const GenerationResult &g = result.generation;
  const DecodeSession &session = *result.session;
  printRunHead(os, head, sig);
  printKVCaches(os, session);
  os << "  generated " << formatShape({batch, g.generated})
     << (run.outputFile.empty() ? "" : "  -> " + run.outputFile) << "\n";
  if (tokenizer && batch > 1)
    for (int64_t b = 0; b < batch; ++b)
      os << "  text[" << b << "]  "
         << tokenizer->decode(llvm::ArrayRef<int32_t>(g.tokens).slice(
                b * g.generated, g.generated))
         << "\n";
  printCompileLine(os, result.compileSeconds, session.cacheStatus());
  printPrepare(os, session.getPrepareEntry(), result.prepareSeconds,
               result.preparedBytes);
  os << "  prefill  " << promptLen << " tokens x " << batch
     << (batch == 1 ? " sequence" : " sequences") << " in "
     << formatSeconds(g.prefillSeconds)
     << llvm::format(", %.1f tokens/s\n",
                     double(batch * promptLen) / g.prefillSeconds);
  printDecodeSteps(os, g.stepSeconds, batch);
}

blockc::GeneratedTokenPrinter::GeneratedTokenPrinter(
    llvm::raw_ostream &os, const HostTensor &promptIds,
    const Tokenizer *tokenizer, bool enabled)
    : os(os), batch(promptIds.shape[0]), enabled(enabled) {
  if (!tokenizer || batch != 1)
    return;
  text.emplace(*tokenizer);
  std::vector<int32_t> prompt;
  for (int64_t i = 0, e = promptIds.shape[1]; i < e; ++i)
    prompt.push_back(getTokenId(promptIds, i));
  text->prime(prompt);
}

void blockc::GeneratedTokenPrinter::push(
    llvm::ArrayRef<int32_t> tokens, llvm::function_ref<void()> beforeFirst) {
  if (!enabled)
    return;
  if (step == 0)
    beforeFirst();
  if (text) {
    os << text->push(tokens[0]);
  } else if (batch == 1) {
    os << (step == 0 ? "  tokens  " : "") << " " << tokens[0];
  } else {
    os << "  step " << step << ":";
    for (int32_t t : tokens)
      os << " " << t;
    os << "\n";
  }
  os.flush();
  ++step;
}

void blockc::GeneratedTokenPrinter::finish() {
  if (!enabled || step == 0 || batch != 1)
    return;
  if (text)
    os << text->finish();
  os << "\n";
}

llvm::Expected<blockc::RunWeights>
blockc::loadRunWeightsOnEveryRank(const ModelSignature &signature,
                                  const WeightRequest &request) {
  auto loaded = loadRunWeights(signature, request);
  if (!TensorParallelWorld::isActive())
    return loaded;
  std::string error = loaded ? "" : llvm::toString(loaded.takeError());
  int failed = TensorParallelWorld::firstFailedRank(!error.empty());
  if (failed < 0)
    return loaded;
  return makeError(!error.empty()
                       ? error
                       : llvm::formatv("rank {0} could not read its weights "
                                       "(see its error)",
                                       failed)
                             .str());
}

void blockc::printRunPipeline(llvm::raw_ostream &os, mlir::MLIRContext &context,
                              const CompileOptions &options,
                              const RunOptions &run, llvm::StringRef entry) {
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  CompileOptions pipelineOptions = options;
  pipelineOptions.paged = run.pagedMode();
  pipelineOptions.pageSize = run.pageSize;
  buildCompilePipeline(pm, pipelineOptions, CompileStage::LLVMDialect, entry,
                       run.decodeMode() || run.pagedMode() ? DecodeMode::Only
                                                           : DecodeMode::None);
  pm.printAsTextualPipeline(os);
  os << "\n";
}
