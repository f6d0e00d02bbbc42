//===- blockc-run.cpp - JIT-run a compiled transformer block --------------===//
//
//   blockc-run model.mlir [-target=cpu] [--weights=W.safetensors |
//       --random-weights[=SEED]] [--input=x.npy | --random-input[=SEED]]
//       [--seq-len=T] [--batch=B] [--output=y.npy] [--repeat=N]
//       [--threads=N] [--decode=N | --check-decode] [--max-len=L]
//
// --decode=N prefills the input through the KV-cached decode entry derived
// by transformer-derive-decode and runs N single-token steps;
// --check-decode compares token-by-token decoding with one full prefill
// (docs/Decoding.md).
//
// Compiles the model in-process (the compile flow of lib/Compiler, the same
// as blockc's), binds weights by tensor name (see ModelSignature.h), runs
// it, writes the output atomically and prints a summary (shapes, checksum,
// compile time, median run time, GFLOP/s). Every input is validated before
// compilation starts, so a bad file fails fast with a message naming the
// file and tensor.
//
// This file parses options and prints; the work is in the libraries: the
// compile options and flow in lib/Compiler, weight binding and the input in
// WeightBinding.h, decoding in DecodeSession.h, the JIT in BlockJit.h, timed
// runs and the summary's pieces in RunSummary.h (lib/ExecutionEngine).
//
//===----------------------------------------------------------------------===//

#include "blockc/Compiler/Compiler.h"
#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/ExecutionEngine/DecodeSession.h"
#include "blockc/ExecutionEngine/MemoryEstimate.h"
#include "blockc/ExecutionEngine/RunSummary.h"
#include "blockc/ExecutionEngine/TensorParallel.h"
#include "blockc/ExecutionEngine/WeightBinding.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("blockc-run options");

cl::opt<std::string> modelFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> weightsFile("weights",
                                 cl::desc("safetensors file with the weights"),
                                 cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> randomWeights("random-weights",
                                   cl::desc("Use deterministic random weights"),
                                   cl::value_desc("seed"), cl::ValueOptional,
                                   cl::cat(category));
cl::opt<std::string> inputFile("input", cl::desc(".npy input [B,T,d] or [T,d]"),
                               cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> randomInput("random-input",
                                 cl::desc("Use a deterministic random input"),
                                 cl::value_desc("seed"), cl::ValueOptional,
                                 cl::cat(category));
cl::opt<int64_t> seqLen("seq-len", cl::desc("Sequence length T"), cl::init(0),
                        cl::cat(category));
cl::opt<int64_t> batch("batch", cl::desc("Batch size B"), cl::init(0),
                       cl::cat(category));
cl::opt<std::string> outputFile("output", cl::desc("Write the output (.npy)"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> savePrepared(
    "save-prepared",
    cl::desc("CPU: after the prepare function ran, write every weight "
             "argument as the entry reads it (prepared layouts and their "
             "description in the metadata) to this safetensors file; "
             "--weights=<it> later skips preparing (docs/RuntimeABI.md)"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> profileFile(
    "profile",
    cl::desc("With -target=nvptx --emulate: print each kernel's FLOPs, "
             "memory traffic, registers, occupancy and speed-of-light bound "
             "on the -gpu-chip (docs/GPUEmulator.md#profile); "
             "--profile=FILE.json also writes it as JSON. On a GPU: time "
             "each kernel with CUDA events (beside --profile-bound's bounds)"),
    cl::value_desc("file.json"), cl::ValueOptional, cl::cat(category));
cl::opt<std::string> profileBound(
    "profile-bound",
    cl::desc("With --profile on a GPU: the emulator's profile of the same "
             "module and shape (its JSON file, or the table it printed), "
             "whose bounds the measured times are compared with"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<int64_t> profileBlocks(
    "profile-blocks",
    cl::desc("With --profile: emulate only N thread blocks of each launch, "
             "spread over the grid, and scale the counters (for large "
             "shapes; the run's output and the profile file are not "
             "written)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
cl::opt<unsigned> repeat("repeat", cl::desc("Number of timed runs"),
                         cl::init(1), cl::cat(category));
// libLLVM already registers a global option named "threads", so ours is
// "num-threads" and main() maps --threads=N onto it.
cl::opt<unsigned> threads("num-threads",
                          cl::desc("Threads to use (also --threads=N)"),
                          cl::init(1), cl::cat(category));
cl::opt<unsigned> decodeSteps(
    "decode",
    cl::desc("Prefill the input through the KV-cached decode entry, then run "
             "N single-token steps feeding each step's last output row back"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
cl::opt<bool> checkDecode(
    "check-decode",
    cl::desc("Run the input token by token through the KV cache and compare "
             "every position with one full prefill; fail on mismatch"),
    cl::init(false), cl::cat(category));
cl::opt<int64_t>
    maxLen("max-len",
           cl::desc("KV cache capacity L_max in tokens (default: what the run "
                    "needs)"),
           cl::value_desc("L"), cl::init(0), cl::cat(category));
cl::opt<double> checkTolerance(
    "check-tol",
    cl::desc("--check-decode tolerance, relative to the largest |output| "
             "(default: 1e-4 for f32 models, two units of the last place for "
             "bf16 (2^-7) and f16 (2^-10) models)"),
    cl::init(1e-4), cl::cat(category));
cl::opt<bool> allowExtraWeights(
    "allow-extra-weights",
    cl::desc("Ignore tensors in the weights file that bind to no argument"),
    cl::init(false), cl::cat(category));

cl::opt<bool> noCache(
    "no-cache",
    cl::desc("Neither read nor write the compile cache ($XDG_CACHE_HOME/blockc "
             "or ~/.cache/blockc, at most BLOCKC_CACHE_MAX_SIZE, default "
             "1G; see docs/CompileCache.md)"),
    cl::init(false), cl::cat(category));

/// The compile options of the command line (set by main()).
blockc::CompileOptions options;

/// Seconds elapsed since `start`.
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The compile cache of this run (null with --no-cache).
std::unique_ptr<blockc::CompileCache> compileCache;

/// This process's rank in a tensor-parallel run (rank 0 of 1 otherwise).
blockc::TensorParallelWorld world;

/// Reports an error and returns the exit code; in a tensor-parallel run the
/// message names the rank and every rank ends (a rank that stops would
/// leave the others waiting in their next all-reduce).
int fail(const llvm::Twine &message, bool everyRank = false) {
  return world.reportError("blockc-run", message, everyRank);
}

/// An error that every rank of a tensor-parallel run meets alike (the same
/// model, options and world): each rank reports it, then all end together.
int failEveryRank(const llvm::Twine &message) {
  return fail(message, /*everyRank=*/true);
}

bool parseSeed(const cl::opt<std::string> &opt, uint64_t &seed) {
  if (opt.empty()) {
    seed = 0;
    return true;
  }
  return !llvm::StringRef(opt).getAsInteger(10, seed);
}

/// --check-decode's tolerance: --check-tol when given, else the default
/// for the model's type.
double checkDecodeTolerance(const blockc::ModelSignature &sig) {
  if (checkTolerance.getNumOccurrences() || sig.args.empty())
    return checkTolerance;
  return blockc::DecodeComparison::defaultTolerance(
      sig.args.front().type.getElementType());
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
  if (write && !outputFile.empty())
    if (llvm::Error e = blockc::writeNpy(outputFile, output)) {
      rc = fail(llvm::toString(std::move(e)));
      return false;
    }
  return true;
}

/// --decode=N and --check-decode: derive the decode entry, compile it alone
/// and drive it through a DecodeSession (docs/Decoding.md).
int runDecodeMode(ModuleOp module, const blockc::ModelSignature &sig,
                  const blockc::ModelInput &input,
                  std::vector<blockc::HostTensor> &weights,
                  blockc::RunHead &head) {
  int64_t batchSize = input.tensor.shape[0], promptLen = input.tensor.shape[1];
  int64_t needed = checkDecode ? promptLen : promptLen + decodeSteps;
  FailureOr<std::unique_ptr<blockc::DecodeSession>> session =
      blockc::DecodeSession::derive(module, sig, options.kvLayout);
  if (failed(session))
    return 1;
  if (llvm::Error e = (*session)->bind(weights, batchSize,
                                       maxLen ? maxLen.getValue() : needed))
    return fail(llvm::toString(std::move(e)));
  auto compileStart = std::chrono::steady_clock::now();
  if (llvm::Error e = (*session)->compile(options, compileCache.get()))
    return fail(llvm::toString(std::move(e)));
  double compileSeconds = secondsSince(compileStart);
  auto prepareStart = std::chrono::steady_clock::now();
  llvm::Expected<int64_t> preparedBytes = (*session)->prepare(weights);
  if (!preparedBytes)
    return fail("preparing the weights failed: " +
                llvm::toString(preparedBytes.takeError()));
  double prepareSeconds = secondsSince(prepareStart);

  blockc::DecodeRun run;
  blockc::DecodeComparison comparison;
  double tolerance = checkDecodeTolerance(sig);
  if (checkDecode) {
    auto result = (*session)->compareWithPrefill(input.tensor);
    if (!result)
      return fail(llvm::toString(result.takeError()));
    comparison = std::move(*result);
    if (!comparison.passes(tolerance))
      return fail(llvm::formatv("--check-decode: position {0} (batch {1}) "
                                "differs from the prefill by {2:e3}, more "
                                "than {3:e1} of the output scale {4:e3}",
                                comparison.worstPosition, comparison.worstBatch,
                                comparison.maxDiff, tolerance, comparison.scale)
                      .str());
    run = std::move(comparison.run);
  } else {
    auto result = (*session)->generate(input.tensor, decodeSteps);
    if (!result)
      return fail(llvm::toString(result.takeError()));
    run = std::move(*result);
  }

  blockc::Checksum checksum = blockc::Checksum::of(run.output);
  head.entry = (*session)->getSignature().funcName;
  int rc = 0;
  if (!writeOutput(run.output, head, input.rank2, /*write=*/true, rc))
    return rc;
  auto &os = llvm::outs();
  blockc::printRunHead(os, head, sig);
  blockc::printKVCaches(os, **session);
  os << "  output   " << blockc::formatShape(run.output.shape)
     << (outputFile.empty() ? "" : "  -> " + outputFile.getValue()) << "\n";
  blockc::printChecksum(os, checksum);
  os << "  compile  " << blockc::formatSeconds(compileSeconds) << " ("
     << (*session)->cacheStatus() << ")\n";
  blockc::printPrepare(os, (*session)->getPrepareEntry(), prepareSeconds,
                       *preparedBytes);
  os << "  prefill  " << promptLen << " tokens in "
     << blockc::formatSeconds(run.prefillSeconds) << "\n";
  blockc::printDecodeSteps(os, run.stepSeconds, batchSize);
  if (checkDecode)
    os << llvm::format(
        "  check    PASS: %lld positions x %lld, max |decode "
        "- prefill| = %.3e (%.1e of the output scale, "
        "tolerance %.0e)\n",
        (long long)promptLen, (long long)batchSize, comparison.maxDiff,
        comparison.maxDiff / std::max(comparison.scale, 1e-30), tolerance);
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
  blockc::parseCommandLine(
      argc, argv, "blockc-run: JIT-run a transformer block\n", {&category});

  // ---- Validate options ---------------------------------------------------
  if (auto parsed = blockc::getCompileOptionsFromCommandLine())
    options = std::move(*parsed);
  else
    return fail(llvm::toString(parsed.takeError()));
  bool nvptx = options.isNVPTX(), emulate = options.emulate;
  if (std::string error = options.verify(); !error.empty())
    return fail(error);
  bool profiling = profileFile.getNumOccurrences() > 0;
  if (profiling && !nvptx)
    return fail("--profile needs -target=nvptx (with --emulate: the "
                "emulator's counters and bounds; without: kernel times on "
                "the GPU)");
  if (profileBlocks.getNumOccurrences() && !profiling)
    return fail("--profile-blocks needs --profile");
  if (profileBlocks.getNumOccurrences() && !emulate)
    return fail("--profile-blocks samples emulated launches: it needs "
                "--emulate");
  if (!profileBound.empty() && (!profiling || emulate))
    return fail("--profile-bound needs --profile on a GPU (without "
                "--emulate)");
  if (profileBlocks.getNumOccurrences() && profileBlocks < 1)
    return fail("--profile-blocks must be at least 1");
  if (profiling && (decodeSteps > 0 || checkDecode))
    return fail("--profile profiles the entry's run, not --decode=N or "
                "--check-decode");
  if (profiling && !profileFile.empty() && !profileBlocks.getNumOccurrences())
    if (llvm::Error e = blockc::checkWritable(profileFile))
      return fail(llvm::toString(std::move(e)));
  bool haveRandomWeights = randomWeights.getNumOccurrences() > 0;
  bool haveRandomInput = randomInput.getNumOccurrences() > 0;
  if (weightsFile.empty() == !haveRandomWeights)
    return fail("give exactly one of --weights=FILE and --random-weights");
  if (inputFile.empty() && !haveRandomInput)
    haveRandomInput = true; // default: random input
  if (!inputFile.empty() && haveRandomInput)
    return fail("give only one of --input=FILE and --random-input");
  uint64_t weightSeed = 0, inputSeed = 0;
  if (haveRandomWeights && !parseSeed(randomWeights, weightSeed))
    return fail("--random-weights: invalid seed '" + randomWeights + "'");
  if (haveRandomInput && !parseSeed(randomInput, inputSeed))
    return fail("--random-input: invalid seed '" + randomInput + "'");
  if (seqLen < 0 || batch < 0)
    return fail("--seq-len and --batch must be positive");
  if (seqLen.getNumOccurrences() && seqLen == 0)
    return fail("--seq-len must be at least 1 (the tokens of the input)");
  if (batch.getNumOccurrences() && batch == 0)
    return fail("--batch must be at least 1 (the sequences of the input)");
  if (decodeSteps.getNumOccurrences() && decodeSteps == 0)
    return fail("--decode must be at least 1 (the single-token steps after "
                "the prefill)");
  if (repeat == 0)
    return fail("--repeat must be at least 1");
  if (threads == 0)
    return fail("--threads must be at least 1");
  bool decodeMode = decodeSteps > 0 || checkDecode;
  if (decodeSteps > 0 && checkDecode)
    return fail("give only one of --decode=N and --check-decode");
  if (maxLen < 0 || (maxLen.getNumOccurrences() && maxLen == 0))
    return fail("--max-len must be at least 1");
  if (maxLen.getNumOccurrences() && !decodeMode)
    return fail("--max-len needs --decode=N or --check-decode");
  if (!(checkTolerance > 0))
    return fail("--check-tol must be positive");
  if (!outputFile.empty())
    if (llvm::Error e = blockc::checkWritable(outputFile))
      return fail(llvm::toString(std::move(e)));
  if (!savePrepared.empty()) {
    if (decodeMode)
      return fail("--save-prepared runs the plain entry (not --decode=N or "
                  "--check-decode)");
    if (nvptx)
      return fail("--save-prepared: only the CPU target prepares weights");
    if (llvm::Error e = blockc::checkWritable(savePrepared))
      return fail(llvm::toString(std::move(e)));
  }

  // A GPU run fails fast, before anything is read or compiled, when there is
  // no GPU, driver or runtime.
  bool dumpPipeline = blockc::shouldDumpPassPipeline();
  if (nvptx && !dumpPipeline)
    if (llvm::Error e = blockc::checkGPURuntimeAvailable(emulate))
      return fail(llvm::toString(std::move(e)));
  options.profile = profiling && emulate;

  // ---- Parse and analyse the model ---------------------------------------
  blockc::ModelFile file;
  llvm::Expected<ModuleOp> module = file.load(modelFile);
  if (!module) {
    std::string message = blockc::getErrorMessage(module.takeError());
    return message.empty() ? 1 : fail(message);
  }
  // Tensor parallelism: join the MPI world first (so that every rank
  // reports what fails below), then the module becomes this rank's program
  // (every rank partitions it the same way) before its signature is read.
  llvm::Expected<int64_t> planned =
      blockc::planTensorParallel(*module, options);
  if (!planned)
    return fail(llvm::toString(planned.takeError()));
  int64_t tpRanks = *planned;
  if (tpRanks > 1) {
    if (!savePrepared.empty())
      return fail("--save-prepared: not with --tensor-parallel (each rank "
                  "holds a part of the weights)");
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
  if (!noCache) {
    auto cache = blockc::CompileCache::fromEnvironment();
    if (!cache)
      return fail(llvm::toString(cache.takeError()));
    compileCache = std::move(*cache);
  }
  if (dumpPipeline) {
    PassManager pm(&file.getContext(), ModuleOp::getOperationName());
    blockc::buildCompilePipeline(
        pm, options, blockc::CompileStage::LLVMDialect, sig->funcName,
        decodeMode ? blockc::DecodeMode::Only : blockc::DecodeMode::None);
    pm.printAsTextualPipeline(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }

  // ---- Input ----------------------------------------------------------------
  int64_t steps = decodeMode && !checkDecode ? decodeSteps : 0;
  auto input = blockc::loadModelInput(
      *sig, {inputFile, inputSeed, batch, seqLen}, [&](int64_t b, int64_t t) {
        int64_t cacheLen = !decodeMode ? 0
                           : maxLen    ? maxLen.getValue()
                                       : t + steps;
        return blockc::checkMemoryFits(*sig, b, t, steps, cacheLen);
      });
  if (!input)
    return fail(llvm::toString(input.takeError()));

  // ---- Weights --------------------------------------------------------------
  blockc::WeightRequest request{weightsFile, weightSeed, world.rank, {}, ""};
  request.binding.allowExtraTensors = allowExtraWeights;
  if (tpRanks > 1)
    request.preparedRefused = "prepared weights cannot be split over ranks; "
                              "give the checkpoint";
  else if (decodeMode || nvptx)
    request.preparedRefused = "prepared weights load for the plain CPU entry "
                              "only (not --decode, --check-decode or "
                              "-target=nvptx)";
  auto loaded = blockc::loadRunWeights(*sig, request);
  if (!loaded)
    return fail(llvm::toString(loaded.takeError()));
  std::vector<blockc::HostTensor> &weights = loaded->tensors;
  std::optional<blockc::SafeTensorsFile> &preparedFile = loaded->preparedFile;
  blockc::RunHead head;
  head.model = modelFile;
  head.entry = sig->funcName;
  head.target = nvptx ? "nvptx" : "cpu";
  head.emulated = emulate;
  head.threads = nvptx && !decodeMode ? 1u : threads.getValue();
  head.ranks = world.size;
  head.inputShape = input->tensor.shape;
  head.inputLabel = input->label;
  head.numWeights = weights.size();
  for (const blockc::HostTensor &w : weights)
    head.numParams += w.numElements();
  head.weightsLabel = loaded->label;
  head.weightsHeld = blockc::describeHeld(weights);

  // The OpenMP runtime reads its thread count when it initialises.
  if (!nvptx)
    if (llvm::Error e = blockc::setCpuThreads(threads))
      return fail(llvm::toString(std::move(e)));

  if (decodeMode) {
    int rc = runDecodeMode(*module, *sig, *input, weights, head);
    blockc::TensorParallelWorld::finalize();
    return rc;
  }

  // ---- Compile --------------------------------------------------------------
  auto compileStart = std::chrono::steady_clock::now();
  auto jit =
      blockc::BlockJit::compile(*module, *sig, options, compileCache.get());
  if (!jit)
    return fail(llvm::toString(jit.takeError()));
  double compileSeconds = secondsSince(compileStart);

  // ---- Prepare --------------------------------------------------------------
  // The entry's prepare function packs the weights once; each prepared
  // weight replaces its original. Weights loaded already prepared skip it.
  auto prepareStart = std::chrono::steady_clock::now();
  llvm::Expected<int64_t> preparedBytes =
      blockc::prepareRunWeights(**jit, *sig, *loaded);
  if (!preparedBytes)
    return fail(llvm::toString(preparedBytes.takeError()));
  if (preparedFile) {
    // Parameters of the model (the stored words or panels hold more or
    // fewer elements).
    head.numWeights = weights.size();
    for (const blockc::ModelArgument &arg : llvm::drop_begin(sig->args))
      head.numParams += arg.type.getNumElements();
    head.weightsHeld = blockc::describeHeld(weights);
  }
  double prepareSeconds = secondsSince(prepareStart);
  if (!savePrepared.empty())
    if (llvm::Error e = blockc::savePreparedWeights(
            savePrepared, *sig, (*jit)->getPrepareEntry(), weights))
      return fail(llvm::toString(std::move(e)));

  // ---- Run ------------------------------------------------------------------
  blockc::HostTensor output;
  output.shape = input->tensor.shape;
  output.data.assign(output.numElements(), 0.0f);
  std::vector<const blockc::HostTensor *> args = {&input->tensor};
  for (const blockc::HostTensor &w : weights)
    args.push_back(&w);
  // On a GPU: the bounds to compare the kernels' measured times with.
  std::optional<blockc::GPUProfile> bound;
  if (!profileBound.empty()) {
    auto read = blockc::readGPUProfile(profileBound);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    bound = std::move(*read);
  }
  auto runs = blockc::runTimed(**jit, *module, options, args, output, repeat,
                               !profiling ? blockc::RunProfile::None
                               : emulate  ? blockc::RunProfile::Emulator
                                          : blockc::RunProfile::GPU,
                               profileBlocks);
  if (!runs)
    return fail(llvm::toString(runs.takeError()));
  // A sampled profile runs a part of each launch: its output is not the
  // block's.
  bool sampled = profiling && profileBlocks > 0;
  double median = blockc::medianOf(runs->seconds);
  blockc::Checksum checksum = blockc::Checksum::of(output);
  int rc = 0;
  if (!writeOutput(output, head, input->rank2, /*write=*/!sampled, rc)) {
    if (rc == 0)
      blockc::TensorParallelWorld::finalize();
    return rc;
  }
  if (runs->measured && !profileFile.empty())
    if (llvm::Error e = blockc::writeMeasuredProfileJSON(
            profileFile, options.gpuArch, *runs->measured,
            bound ? &*bound : nullptr))
      return fail(llvm::toString(std::move(e)));
  if (runs->profile && !profileFile.empty() && !sampled)
    if (llvm::Error e =
            blockc::writeGPUProfileJSON(profileFile, *runs->profile))
      return fail(llvm::toString(std::move(e)));

  // ---- Summary --------------------------------------------------------------
  // The ranks' blocks are slices of the model's: theirs summed.
  double flops =
      sig->flops(input->tensor.shape[0], input->tensor.shape[1]) * world.size;
  auto &os = llvm::outs();
  blockc::printRunHead(os, head, *sig);
  os << "  output   " << blockc::formatShape(output.shape)
     << (outputFile.empty() ? ""
         : sampled ? "  (not written: --profile-blocks ran a sample of each "
                     "launch)"
                   : "  -> " + outputFile.getValue())
     << "\n";
  if (sampled)
    os << "  checksum not meaningful (--profile-blocks ran a sample of each "
          "launch)\n";
  else
    blockc::printChecksum(os, checksum);
  os << "  compile  " << blockc::formatSeconds(compileSeconds) << " ("
     << (*jit)->cacheStatus() << ")\n";
  if (preparedFile)
    os << "  prepare  skipped (" << weightsFile
       << " holds the prepared weights)\n";
  else
    blockc::printPrepare(os, (*jit)->getPrepareEntry(), prepareSeconds,
                         *preparedBytes);
  if (!savePrepared.empty())
    os << "  saved    prepared weights -> " << savePrepared << "\n";
  os << "  run      median " << blockc::formatSeconds(median) << " over "
     << repeat << (repeat == 1 ? " run" : " runs") << " (min "
     << blockc::formatSeconds(
            *std::min_element(runs->seconds.begin(), runs->seconds.end()))
     << ")\n";
  os << llvm::format("  flops    %.4g per run, %.2f GFLOP/s\n", flops,
                     flops / median * 1e-9);
  if (runs->measured) {
    blockc::printMeasuredProfile(os, *runs->measured,
                                 bound ? &*bound : nullptr);
    if (!profileFile.empty())
      os << "  profile  -> " << profileFile << "\n";
  }
  if (runs->profile) {
    blockc::printGPUProfile(os, *runs->profile);
    if (!profileFile.empty())
      os << (sampled ? "  profile  not written to " + profileFile +
                           " (--profile-blocks: the counters are scaled "
                           "from a sample)\n"
                     : "  profile  -> " + profileFile + "\n");
  }
  blockc::TensorParallelWorld::finalize();
  return 0;
}
