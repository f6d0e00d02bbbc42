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
// Compiles the model in-process through the CPU pipeline, binds weights by
// tensor name (see ModelSignature.h), runs it, writes the output atomically
// and prints a summary (shapes, checksum, compile time, median run time,
// GFLOP/s). Every input is validated before compilation starts, so a bad
// file fails fast with a message naming the file and tensor.
//
// This file parses options and prints; the work is in the library:
// weight binding in WeightBinding.h, decoding in DecodeSession.h, the JIT in
// BlockJit.h (lib/ExecutionEngine).
//
//===----------------------------------------------------------------------===//

#include "blockc/Analysis/ModelSignature.h"
#include "blockc/Compiler/Compiler.h"
#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/ExecutionEngine/DecodeSession.h"
#include "blockc/ExecutionEngine/MemoryEstimate.h"
#include "blockc/ExecutionEngine/TensorParallel.h"
#include "blockc/ExecutionEngine/WeightBinding.h"
#include "blockc/InitAllDialects.h"
#include "blockc/Pipelines/Pipelines.h"
#include "blockc/Support/TensorFiles.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <chrono>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <cmath>
#include <cstring>
#include <optional>
#include <set>

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
             "or ~/.cache/blockc, see docs/CompileCache.md)"),
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
  if (blockc::TensorParallelWorld::isActive()) {
    // One write, so that the ranks' lines do not interleave.
    std::string line;
    llvm::raw_string_ostream os(line);
    llvm::WithColor::error(os, "blockc-run", /*DisableColors=*/true)
        << "(rank " << world.rank << " of " << world.size << ") " << message
        << "\n";
    llvm::errs() << line;
    llvm::errs().flush();
    if (!everyRank)
      blockc::TensorParallelWorld::abortAll(1);
    blockc::TensorParallelWorld::endTogether();
    return 1;
  }
  llvm::WithColor::error(llvm::errs(), "blockc-run") << message << "\n";
  return 1;
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

std::string formatSeconds(double s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (s < 1e-3)
    os << llvm::format("%.1f us", s * 1e6);
  else if (s < 1.0)
    os << llvm::format("%.3f ms", s * 1e3);
  else
    os << llvm::format("%.3f s", s);
  return out;
}

/// What the decode modes need from main().
struct DecodeContext {
  const blockc::ModelSignature &sig;
  const blockc::HostTensor &input;
  std::vector<blockc::HostTensor> &weights;
  uint64_t numParams;
  std::string weightsHeld;
  std::string inputLabel, weightsLabel;
  bool rank2;
};

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string gib(double bytes) {
  return llvm::formatv("{0:F1} GiB", bytes / (1024.0 * 1024 * 1024)).str();
}

/// Refuses, before anything large is allocated, a run whose f32 buffers
/// would not fit in the memory available (see MemoryEstimate.h).
int checkMemory(const blockc::ModelSignature &sig, int64_t b, int64_t t,
                int64_t steps, int64_t cacheLen) {
  blockc::MemoryEstimate m = blockc::estimateMemory(sig, b, t, steps, cacheLen);
  double avail = blockc::getAvailableMemory();
  if (avail > 0 && m.total() > avail)
    return fail(
        "this run needs about " + gib(m.total()) + " (weights " +
        gib(m.weights) + ", activations " + gib(m.activations) +
        ", input and output " + gib(m.io) +
        (m.kvCaches > 0 ? ", KV caches " + gib(m.kvCaches) : std::string()) +
        "), more than the " + gib(avail) +
        " of memory available; use a smaller --batch/--seq-len");
  return 0;
}

/// What loaded weights hold, e.g. "  (2.6 MiB bf16)": a 16-bit checkpoint
/// stays 16-bit for a model of that type.
std::string describeHeld(llvm::ArrayRef<blockc::HostTensor> weights) {
  uint64_t bytes = 0;
  std::set<std::string> types;
  for (const blockc::HostTensor &w : weights) {
    bytes += w.numElements() * w.elementBytes();
    types.insert(blockc::stringifyElementType(w.elementType));
  }
  return llvm::formatv("  ({0:F1} MiB {1})", bytes / 1048576.0,
                       llvm::join(types, "+"))
      .str();
}

/// In a tensor-parallel run, " on rank 0 (of N)": the parameters of the
/// whole model, of which the counts before are rank 0's part.
std::string describeShare(const blockc::ModelSignature &sig) {
  if (world.size < 2)
    return "";
  int64_t total = 0;
  for (const blockc::ModelArgument &arg : llvm::drop_begin(sig.args)) {
    int64_t n = 1;
    for (int64_t d : arg.fullShape())
      n *= d;
    total += n;
  }
  return " on rank 0 (of " + std::to_string(total) + ")";
}

/// The `prepare` line: how long the prepare function took and what it
/// made (nothing without one).
void printPrepare(llvm::raw_ostream &os, const blockc::PrepareEntry *entry,
                  double seconds, int64_t bytes) {
  if (!entry)
    return;
  os << "  prepare  " << formatSeconds(seconds) << " (@" << entry->funcName
     << ": " << entry->results.size() << " weights packed, "
     << llvm::format("%.1f MiB", bytes / (1024.0 * 1024.0)) << ")\n";
}

/// --check-decode's tolerance: --check-tol when given, else the default
/// for the model's type.
double checkDecodeTolerance(const blockc::ModelSignature &sig) {
  if (checkTolerance.getNumOccurrences() || sig.args.empty())
    return checkTolerance;
  return blockc::DecodeComparison::defaultTolerance(
      sig.args.front().type.getElementType());
}

/// --decode=N and --check-decode: derive the decode entry, compile it alone
/// and drive it through a DecodeSession (docs/Decoding.md).
int runDecodeMode(ModuleOp module, const DecodeContext &ctx) {
  const blockc::HostTensor &input = ctx.input;
  int64_t batchSize = input.shape[0], promptLen = input.shape[1];
  int64_t needed = checkDecode ? promptLen : promptLen + decodeSteps;
  int64_t capacity = maxLen ? maxLen.getValue() : needed;

  FailureOr<std::unique_ptr<blockc::DecodeSession>> session =
      blockc::DecodeSession::derive(module, ctx.sig, options.kvLayout);
  if (failed(session))
    return 1;
  if (llvm::Error e = (*session)->bind(ctx.weights, batchSize, capacity))
    return fail(llvm::toString(std::move(e)));

  auto compileStart = std::chrono::steady_clock::now();
  if (llvm::Error e = (*session)->compile(options, compileCache.get()))
    return fail(llvm::toString(std::move(e)));
  double compileSeconds = secondsSince(compileStart);
  auto prepareStart = std::chrono::steady_clock::now();
  llvm::Expected<int64_t> preparedBytes = (*session)->prepare(ctx.weights);
  if (!preparedBytes)
    return fail("preparing the weights failed: " +
                llvm::toString(preparedBytes.takeError()));
  double prepareSeconds = secondsSince(prepareStart);

  blockc::DecodeRun run;
  blockc::DecodeComparison comparison;
  if (checkDecode) {
    auto result = (*session)->compareWithPrefill(input);
    if (!result)
      return fail(llvm::toString(result.takeError()));
    comparison = std::move(*result);
    if (!comparison.passes(checkDecodeTolerance(ctx.sig)))
      return fail(llvm::formatv("--check-decode: position {0} (batch {1}) "
                                "differs from the prefill by {2:e3}, more "
                                "than {3:e1} of the output scale {4:e3}",
                                comparison.worstPosition, comparison.worstBatch,
                                comparison.maxDiff,
                                checkDecodeTolerance(ctx.sig), comparison.scale)
                      .str());
    run = std::move(comparison.run);
  } else {
    auto result = (*session)->generate(input, decodeSteps);
    if (!result)
      return fail(llvm::toString(result.takeError()));
    run = std::move(*result);
  }

  blockc::HostTensor &all = run.output;
  double sum = 0, absSum = 0;
  bool finite = true;
  for (float v : all.data) {
    sum += v;
    absSum += std::fabs(v);
    finite &= std::isfinite(v);
  }
  if (ctx.rank2)
    all.shape.erase(all.shape.begin());
  // Every rank holds the whole (all-reduced) output: rank 0 writes it.
  if (world.rank != 0)
    return 0;
  if (!outputFile.empty())
    if (llvm::Error e = blockc::writeNpy(outputFile, all))
      return fail(llvm::toString(std::move(e)));

  auto &os = llvm::outs();
  std::vector<int64_t> shownInput = input.shape;
  if (ctx.rank2)
    shownInput.erase(shownInput.begin());
  llvm::ArrayRef<blockc::HostTensor> caches = (*session)->getCaches();
  os << "blockc-run: " << modelFile << " @"
     << (*session)->getSignature().funcName << " (target "
     << (options.isNVPTX() ? "nvptx" : "cpu")
     << (options.emulate ? " emulated" : "") << ", threads "
     << threads.getValue()
     << (world.size > 1 ? ", " + std::to_string(world.size) + " ranks" : "")
     << ")\n";
  os << "  input    " << blockc::formatShape(shownInput) << "  "
     << ctx.inputLabel << "\n";
  os << "  weights  " << ctx.weights.size() << " tensors, " << ctx.numParams
     << " parameters" << describeShare(ctx.sig) << "  " << ctx.weightsLabel
     << ctx.weightsHeld << "\n";
  os << "  kv cache " << (*session)->getNumLayers() << " layer"
     << (caches.size() == 2 ? "" : "s") << " x K, V "
     << (caches.empty() ? std::string("(none)")
                        : blockc::formatShape(caches.front().shape))
     << ((*session)->isHeadMajor() ? " [B, H_kv, L_max, D]"
                                   : " [B, L_max, H_kv, D]")
     << ", " << llvm::format("%.1f KiB", (*session)->getCacheBytes() / 1024.0)
     << "\n";
  os << "  output   " << blockc::formatShape(all.shape)
     << (outputFile.empty() ? "" : "  -> " + outputFile.getValue()) << "\n";
  os << llvm::format("  checksum sum=%.6e abs_sum=%.6e%s\n", sum, absSum,
                     finite ? "" : " (non-finite values!)");
  os << "  compile  " << formatSeconds(compileSeconds) << " ("
     << (*session)->cacheStatus() << ")\n";
  printPrepare(os, (*session)->getPrepareEntry(), prepareSeconds,
               *preparedBytes);
  os << "  prefill  " << promptLen << " tokens in "
     << formatSeconds(run.prefillSeconds) << "\n";
  const std::vector<double> &stepTimes = run.stepSeconds;
  if (!stepTimes.empty()) {
    std::vector<double> sorted = stepTimes;
    std::sort(sorted.begin(), sorted.end());
    double p90 = sorted[std::min<size_t>(sorted.size() - 1,
                                         (sorted.size() * 9 + 9) / 10 - 1)];
    double total = 0;
    for (double t : stepTimes)
      total += t;
    os << "  decode   " << stepTimes.size() << " steps of 1 token: median "
       << formatSeconds(medianOf(stepTimes)) << ", p90 " << formatSeconds(p90)
       << llvm::format(", %.1f tokens/s (batch %lld)\n",
                       double(batchSize) * stepTimes.size() / total,
                       (long long)batchSize);
  }
  if (checkDecode)
    os << llvm::format("  check    PASS: %lld positions x %lld, max |decode "
                       "- prefill| = %.3e (%.1e of the output scale, "
                       "tolerance %.0e)\n",
                       (long long)promptLen, (long long)batchSize,
                       comparison.maxDiff,
                       comparison.maxDiff / std::max(comparison.scale, 1e-30),
                       checkDecodeTolerance(ctx.sig));
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
  DialectRegistry registry;
  blockc::registerAllDialects(registry);
  MLIRContext context(registry);
  // One line per error: do not append the offending op in generic form.
  context.printOpOnDiagnostic(false);
  std::string errorMessage;
  auto file = openInputFile(modelFile, &errorMessage);
  if (!file)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  // Tensor parallelism: join the MPI world first (so that every rank
  // reports what fails below), then the module becomes this rank's program
  // (every rank partitions it the same way) before its signature is read.
  // A model partitioned already must be run with its rank count.
  if (blockc::getTensorParallelRanks(*module) > 1)
    if (llvm::Error e =
            blockc::partitionForTensorParallel(*module, options.tensorParallel))
      return fail(llvm::toString(std::move(e)));
  int64_t tpRanks = options.tensorParallel > 1
                        ? options.tensorParallel
                        : blockc::getTensorParallelRanks(*module);
  if (tpRanks > 1) {
    if (nvptx)
      return fail(
          "tensor parallelism runs on the CPU target over MPI (a GPU "
          "version would all-reduce with NCCL, docs/TensorParallel.md)");
    if (!savePrepared.empty())
      return fail("--save-prepared: not with --tensor-parallel (each rank "
                  "holds a part of the weights)");
    if (!dumpPipeline)
      if (llvm::Error e =
              blockc::TensorParallelWorld::join(tpRanks, &argc, &argv, world))
        return failEveryRank(llvm::toString(std::move(e)));
  }
  llvm::Expected<int64_t> ranks = blockc::partitionModule(*module, options);
  if (!ranks)
    return failEveryRank(llvm::toString(ranks.takeError()));
  tpRanks = *ranks;
  FailureOr<blockc::ModelSignature> sig =
      blockc::analyzeModel(*module, options.entry);
  if (failed(sig)) {
    // The diagnostic above says why; ranks that started MPI end together.
    if (blockc::TensorParallelWorld::isActive())
      return failEveryRank("the entry's signature is invalid (see above)");
    return 1;
  }
  int64_t modelDim = sig->args[0].type.getDimSize(2);
  if (!noCache) {
    llvm::Expected<std::string> dir = blockc::CompileCache::defaultDirectory();
    if (!dir)
      return fail(llvm::toString(dir.takeError()));
    compileCache = std::make_unique<blockc::CompileCache>(*dir);
  }
  if (dumpPipeline) {
    PassManager pm(&context, ModuleOp::getOperationName());
    blockc::buildCompilePipeline(
        pm, options, blockc::CompileStage::LLVMDialect, sig->funcName,
        decodeMode ? blockc::DecodeMode::Only : blockc::DecodeMode::None);
    pm.printAsTextualPipeline(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }

  // ---- Input ----------------------------------------------------------------
  blockc::HostTensor input;
  bool rank2 = false;
  if (!inputFile.empty()) {
    auto in = blockc::readNpy(inputFile);
    if (!in)
      return fail(llvm::toString(in.takeError()));
    input = std::move(*in);
    if (input.shape.size() == 2) {
      rank2 = true;
      input.shape.insert(input.shape.begin(), 1);
    }
    if (input.shape.size() != 3)
      return fail(inputFile + ": input must be [B, T, d] or [T, d], got " +
                  blockc::formatShape(input.shape));
    if (input.shape[2] != modelDim)
      return fail(inputFile + ": input has d = " + llvm::Twine(input.shape[2]) +
                  ", the model expects d = " + llvm::Twine(modelDim));
    if ((seqLen && seqLen != input.shape[1]) ||
        (batch && batch != input.shape[0]))
      return fail(inputFile + ": shape " + blockc::formatShape(input.shape) +
                  " disagrees with --batch/--seq-len");
  } else {
    // Defaults: the model's static B and T, else 1 and 16.
    auto dimOr = [&](unsigned i, int64_t fallback) {
      int64_t d = sig->args[0].type.getDimSize(i);
      return ShapedType::isDynamic(d) ? fallback : d;
    };
    input.shape = {batch ? batch.getValue() : dimOr(0, 1),
                   seqLen ? seqLen.getValue() : dimOr(1, 16), modelDim};
  }
  if (input.shape[0] == 0 || input.shape[1] == 0)
    return fail("empty input: B and T must be at least 1, got " +
                blockc::formatShape(input.shape));
  {
    int64_t steps = decodeMode && !checkDecode ? decodeSteps : 0;
    int64_t cacheLen = !decodeMode ? 0
                       : maxLen    ? maxLen.getValue()
                                   : input.shape[1] + steps;
    if (int rc =
            checkMemory(*sig, input.shape[0], input.shape[1], steps, cacheLen))
      return rc;
  }
  if (inputFile.empty())
    input = blockc::makeRandomTensor(std::move(input.shape), inputSeed);
  // The static dims of the declared input type must match.
  for (unsigned i = 0; i < 2; ++i) {
    int64_t d = sig->args[0].type.getDimSize(i);
    if (!ShapedType::isDynamic(d) && d != input.shape[i])
      return fail((inputFile.empty() ? std::string("random input")
                                     : inputFile.getValue()) +
                  ": shape " + blockc::formatShape(input.shape) +
                  " does not match the model's input type [" +
                  (ShapedType::isDynamic(sig->args[0].type.getDimSize(0))
                       ? std::string("?")
                       : std::to_string(sig->args[0].type.getDimSize(0))) +
                  ", " +
                  (ShapedType::isDynamic(sig->args[0].type.getDimSize(1))
                       ? std::string("?")
                       : std::to_string(sig->args[0].type.getDimSize(1))) +
                  ", " + std::to_string(modelDim) + "]");
  }

  // ---- Weights --------------------------------------------------------------
  std::vector<blockc::HostTensor> weights;
  uint64_t numParams = 0;
  // A file of prepared weights binds once the compiled prepare entry says
  // which layouts it needs (below); its tensors are what the entry reads.
  std::optional<blockc::SafeTensorsFile> preparedFile;
  if (!weightsFile.empty()) {
    auto st = blockc::SafeTensorsFile::open(weightsFile);
    if (!st)
      return fail(llvm::toString(st.takeError()));
    if (st->holdsPreparedWeights()) {
      if (tpRanks > 1)
        return fail(weightsFile + ": prepared weights cannot be split over "
                                  "ranks; give the checkpoint");
      if (decodeMode || nvptx)
        return fail(weightsFile + ": prepared weights load for the plain "
                                  "CPU entry only (not --decode, "
                                  "--check-decode or -target=nvptx)");
      preparedFile = std::move(*st); // bound after compiling
    } else {
      blockc::WeightBindingOptions options;
      options.allowExtraTensors = allowExtraWeights;
      auto bound = blockc::bindWeights(*st, *sig, options, world.rank);
      if (!bound)
        return fail(llvm::toString(bound.takeError()));
      weights = std::move(*bound);
    }
  } else {
    weights = blockc::makeRandomWeights(*sig, weightSeed, world.rank);
  }
  for (const blockc::HostTensor &w : weights)
    numParams += w.numElements();
  std::string weightsHeld = describeHeld(weights);

  // The OpenMP runtime reads its thread count when it initialises.
  if (!nvptx)
    if (llvm::Error e = blockc::setCpuThreads(threads))
      return fail(llvm::toString(std::move(e)));

  if (decodeMode) {
    int rc = runDecodeMode(
        *module,
        {*sig, input, weights, numParams, weightsHeld,
         inputFile.empty() ? "random (seed " + std::to_string(inputSeed) + ")"
                           : inputFile.getValue(),
         weightsFile.empty()
             ? "random (seed " + std::to_string(weightSeed) + ")"
             : weightsFile.getValue(),
         rank2});
    blockc::TensorParallelWorld::finalize();
    return rc;
  }

  // ---- Compile
  // ---------------------------------------------------------------
  auto compileStart = std::chrono::steady_clock::now();
  auto jit =
      blockc::BlockJit::compile(*module, *sig, options, compileCache.get());
  if (!jit)
    return fail(llvm::toString(jit.takeError()));
  double compileSeconds = secondsSince(compileStart);

  // ---- Prepare
  // ------------------------------------------------------------
  // The entry's prepare function packs the weights once; each prepared
  // weight replaces its original. Weights loaded already prepared skip it.
  auto prepareStart = std::chrono::steady_clock::now();
  llvm::Expected<int64_t> preparedBytes = int64_t(0);
  if (preparedFile) {
    auto bound = blockc::bindPreparedWeights(*preparedFile, *sig,
                                             (*jit)->getPrepareEntry());
    if (!bound)
      return fail(llvm::toString(bound.takeError()));
    weights = std::move(*bound);
    // Parameters of the model (the stored words or panels hold more or
    // fewer elements).
    for (const blockc::ModelArgument &arg : llvm::drop_begin(sig->args))
      numParams += arg.type.getNumElements();
    weightsHeld = describeHeld(weights);
  } else {
    std::vector<blockc::HostTensor *> entryArgs = {nullptr};
    for (blockc::HostTensor &w : weights)
      entryArgs.push_back(&w);
    preparedBytes = (*jit)->prepare(entryArgs);
    if (!preparedBytes)
      return fail("preparing the weights failed: " +
                  llvm::toString(preparedBytes.takeError()));
  }
  double prepareSeconds = secondsSince(prepareStart);
  if (!savePrepared.empty())
    if (llvm::Error e = blockc::savePreparedWeights(
            savePrepared, *sig, (*jit)->getPrepareEntry(), weights))
      return fail(llvm::toString(std::move(e)));

  // ---- Run
  // -------------------------------------------------------------------
  blockc::HostTensor output;
  output.shape = input.shape;
  output.data.assign(output.numElements(), 0.0f);
  std::vector<const blockc::HostTensor *> args = {&input};
  for (const blockc::HostTensor &w : weights)
    args.push_back(&w);
  std::vector<double> times;
  std::optional<blockc::GPUProfile> profile;
  // On a GPU: the kernels' measured times and the bounds to compare with.
  std::optional<std::vector<blockc::MeasuredKernel>> measured;
  std::optional<blockc::GPUProfile> bound;
  if (!profileBound.empty()) {
    auto read = blockc::readGPUProfile(profileBound);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    bound = std::move(*read);
  }
  // A sampled profile runs a part of each launch: its output is not the
  // block's.
  bool sampled = profiling && profileBlocks > 0;
  for (unsigned r = 0; r < repeat; ++r) {
    // The profile records the last run (after --repeat's warm-ups).
    bool profiled = profiling && r + 1 == repeat;
    if (profiled)
      if (llvm::Error e = emulate ? blockc::beginEmulatorProfile(profileBlocks)
                                  : blockc::beginCudaProfile())
        return fail(llvm::toString(std::move(e)));
    auto start = std::chrono::steady_clock::now();
    // Repeats run the same weights: their device copies are reused.
    if (llvm::Error e = (*jit)->run(args, output,
                                    r == 0 ? blockc::WeightReuse::Copy
                                           : blockc::WeightReuse::Unchanged))
      return fail("execution failed: " + llvm::toString(std::move(e)));
    times.push_back(secondsSince(start));
    if (profiled && !emulate) {
      auto kernels = blockc::endCudaProfile();
      if (!kernels)
        return fail(llvm::toString(kernels.takeError()));
      measured = std::move(*kernels);
    } else if (profiled) {
      auto launches = blockc::endEmulatorProfile();
      if (!launches)
        return fail(llvm::toString(launches.takeError()));
      blockc::NVPTXPipelineOptions nvptxOptions;
      options.getNVPTXOptions(nvptxOptions);
      auto built =
          blockc::profileRun(*module, nvptxOptions, *launches, profileBlocks);
      if (!built)
        return fail(llvm::toString(built.takeError()));
      profile = std::move(*built);
    }
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  double median =
      sorted.size() % 2
          ? sorted[sorted.size() / 2]
          : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);

  double sum = 0, absSum = 0;
  bool finite = true;
  for (float v : output.data) {
    sum += v;
    absSum += std::fabs(v);
    finite &= std::isfinite(v);
  }

  // A rank-2 input [T, d] gives a rank-2 output.
  if (rank2)
    output.shape.erase(output.shape.begin());
  // Every rank holds the whole (all-reduced) output: rank 0 writes it.
  if (world.rank != 0) {
    blockc::TensorParallelWorld::finalize();
    return 0;
  }
  if (!outputFile.empty() && !sampled)
    if (llvm::Error e = blockc::writeNpy(outputFile, output))
      return fail(llvm::toString(std::move(e)));
  if (measured && !profileFile.empty())
    if (llvm::Error e = blockc::writeMeasuredProfileJSON(
            profileFile, options.gpuArch, *measured, bound ? &*bound : nullptr))
      return fail(llvm::toString(std::move(e)));
  if (profile && !profileFile.empty() && !sampled)
    if (llvm::Error e = blockc::writeGPUProfileJSON(profileFile, *profile))
      return fail(llvm::toString(std::move(e)));

  // ---- Summary ------------------------------------------------------------
  // The ranks' blocks are slices of the model's: theirs summed.
  double flops = sig->flops(input.shape[0], input.shape[1]) * world.size;
  auto &os = llvm::outs();
  os << "blockc-run: " << modelFile << " @" << sig->funcName << " (target "
     << (nvptx ? "nvptx" : "cpu") << (emulate ? " emulated" : "")
     << ", threads " << (nvptx ? 1u : threads.getValue())
     << (world.size > 1 ? ", " + std::to_string(world.size) + " ranks" : "")
     << ")\n";
  std::vector<int64_t> shownInput = input.shape;
  if (rank2)
    shownInput.erase(shownInput.begin());
  os << "  input    " << blockc::formatShape(shownInput) << "  "
     << (inputFile.empty() ? "random (seed " + std::to_string(inputSeed) + ")"
                           : inputFile.getValue())
     << "\n";
  os << "  weights  " << weights.size() << " tensors, " << numParams
     << " parameters" << describeShare(*sig) << "  "
     << (weightsFile.empty()
             ? "random (seed " + std::to_string(weightSeed) + ")"
             : weightsFile.getValue())
     << weightsHeld << "\n";
  os << "  output   " << blockc::formatShape(output.shape)
     << (outputFile.empty()
             ? ""
             : (sampled ? "  (not written: --profile-blocks ran a sample of "
                          "each launch)"
                        : "  -> " + outputFile.getValue()))
     << "\n";
  if (sampled)
    os << "  checksum not meaningful (--profile-blocks ran a sample of each "
          "launch)\n";
  else
    os << llvm::format("  checksum sum=%.6e abs_sum=%.6e%s\n", sum, absSum,
                       finite ? "" : " (non-finite values!)");
  os << "  compile  " << formatSeconds(compileSeconds) << " ("
     << (*jit)->cacheStatus() << ")\n";
  if (preparedFile)
    os << "  prepare  skipped (" << weightsFile
       << " holds the prepared weights)\n";
  else
    printPrepare(os, (*jit)->getPrepareEntry(), prepareSeconds, *preparedBytes);
  if (!savePrepared.empty())
    os << "  saved    prepared weights -> " << savePrepared << "\n";
  os << "  run      median " << formatSeconds(median) << " over " << repeat
     << (repeat == 1 ? " run" : " runs") << " (min "
     << formatSeconds(sorted.front()) << ")\n";
  os << llvm::format("  flops    %.4g per run, %.2f GFLOP/s\n", flops,
                     flops / median * 1e-9);
  if (measured) {
    blockc::printMeasuredProfile(os, *measured, bound ? &*bound : nullptr);
    if (!profileFile.empty())
      os << "  profile  -> " << profileFile << "\n";
  }
  if (profile) {
    blockc::printGPUProfile(os, *profile);
    if (!profileFile.empty())
      os << (sampled ? "  profile  not written to " + profileFile +
                           " (--profile-blocks: the counters are scaled "
                           "from a sample)\n"
                     : "  profile  -> " + profileFile + "\n");
  }
  blockc::TensorParallelWorld::finalize();
  return 0;
}
