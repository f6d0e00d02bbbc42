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
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/ExecutionEngine/ModelSignature.h"
#include "blockc/InitAllDialects.h"
#include "blockc/Support/TensorFiles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
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

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("blockc-run options");

cl::opt<std::string> modelFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> targetName("target", cl::desc("cpu (default) or nvptx"),
                                cl::init("cpu"), cl::cat(category));
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
cl::opt<unsigned> repeat("repeat", cl::desc("Number of timed runs"),
                         cl::init(1), cl::cat(category));
// libLLVM already registers a global option named "threads", so ours is
// "num-threads" and main() maps --threads=N onto it.
cl::opt<unsigned> threads("num-threads",
                          cl::desc("Threads to use (also --threads=N)"),
                          cl::init(1), cl::cat(category));
cl::opt<std::string> entryName("entry", cl::desc("Entry function"),
                               cl::cat(category));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimisation level (0-3)"),
                           cl::init(3), cl::Prefix, cl::cat(category));
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
cl::opt<std::string> kvLayout(
    "kv-layout",
    cl::desc("Memory order of the KV caches: bhsd (head-major, default) or "
             "bshd (token-major)"),
    cl::init("bhsd"), cl::cat(category));
cl::opt<double> checkTolerance(
    "check-tol",
    cl::desc("--check-decode tolerance, relative to the largest |output|"),
    cl::init(1e-4), cl::cat(category));
cl::opt<bool> allowExtraWeights(
    "allow-extra-weights",
    cl::desc("Ignore tensors in the weights file that bind to no argument"),
    cl::init(false), cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "blockc-run") << message << "\n";
  return 1;
}

/// splitmix64: a small, portable, deterministic generator.
struct Random {
  uint64_t state;
  explicit Random(uint64_t seed) : state(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  float uniform() {
    return static_cast<float>((next() >> 40) * 0x1.0p-23 - 1.0);
  }
};

bool parseSeed(const cl::opt<std::string> &opt, uint64_t &seed) {
  if (opt.empty()) {
    seed = 0;
    return true;
  }
  return !llvm::StringRef(opt).getAsInteger(10, seed);
}

blockc::HostTensor randomWeight(const blockc::ModelArgument &arg,
                                uint64_t seed) {
  blockc::HostTensor t;
  t.shape.assign(arg.type.getShape().begin(), arg.type.getShape().end());
  t.data.resize(t.numElements());
  Random rng(seed * 1000003 + arg.index);
  bool isNorm = llvm::StringRef(arg.role).ends_with("norm");
  double scale =
      t.shape.size() == 2 ? 1.0 / std::sqrt(double(t.shape[1])) : 0.1;
  for (float &v : t.data)
    v = isNorm ? 1.0f + 0.1f * rng.uniform()
               : static_cast<float>(scale * rng.uniform());
  return t;
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
  const std::vector<blockc::HostTensor> &weights;
  uint64_t numParams;
  std::string inputLabel, weightsLabel;
  bool rank2;
};

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Rows [t0, t0 + n) of every batch of a [B, T, d] tensor.
blockc::HostTensor sliceRows(const blockc::HostTensor &x, int64_t t0,
                             int64_t n) {
  int64_t b = x.shape[0], t = x.shape[1], d = x.shape[2];
  blockc::HostTensor out;
  out.shape = {b, n, d};
  out.data.resize(b * n * d);
  for (int64_t i = 0; i < b; ++i)
    std::copy_n(x.data.begin() + (i * t + t0) * d, n * d,
                out.data.begin() + i * n * d);
  return out;
}

/// Writes `rows` ([B, n, d]) at rows [t0, t0 + n) of `dst` ([B, T, d]).
void storeRows(blockc::HostTensor &dst, const blockc::HostTensor &rows,
               int64_t t0) {
  int64_t b = dst.shape[0], t = dst.shape[1], d = dst.shape[2];
  int64_t n = rows.shape[1];
  for (int64_t i = 0; i < b; ++i)
    std::copy_n(rows.data.begin() + i * n * d, n * d,
                dst.data.begin() + (i * t + t0) * d);
}

/// Bytes of memory available to this process: MemAvailable from
/// /proc/meminfo (free memory plus reclaimable caches), else 0 (unknown).
double availableBytes() {
  auto buf = llvm::MemoryBuffer::getFileAsStream("/proc/meminfo");
  if (!buf)
    return 0;
  llvm::StringRef text = (*buf)->getBuffer();
  size_t pos = text.find("MemAvailable:");
  if (pos == llvm::StringRef::npos)
    return 0;
  unsigned long long kib = 0;
  llvm::StringRef rest = text.drop_front(pos + 13).ltrim();
  if (rest.consumeInteger(10, kib))
    return 0;
  return double(kib) * 1024.0;
}

std::string gib(double bytes) {
  return llvm::formatv("{0:F1} GiB", bytes / (1024.0 * 1024 * 1024)).str();
}

/// Refuses, before anything large is allocated, a run whose f32 buffers
/// (weights, input and output, the largest block's live intermediates, KV
/// caches) would not fit in the memory available. The activations are an
/// estimate: per token, 6 d + 2 (H + H_kv) D + 3 d_ff floats of one block
/// (blocks run one after the other; attention keeps no T x T matrix).
int checkMemory(const blockc::ModelSignature &sig, int64_t b, int64_t t,
                int64_t steps, int64_t cacheLen) {
  double weights = 0;
  for (const blockc::ModelArgument &arg : llvm::drop_begin(sig.args)) {
    double n = 4;
    for (int64_t d : arg.type.getShape())
      n *= double(d);
    weights += n;
  }
  double tokens = double(b) * double(t + steps);
  double d = double(sig.args[0].type.getDimSize(2));
  double act = 8 * d, kv = 0;
  for (const blockc::BlockConfig &c : sig.blocks) {
    act = std::max(act, 6.0 * c.modelDim +
                            2.0 * (c.numHeads + c.numKVHeads) * c.headDim +
                            3.0 * c.dff);
    kv += 2.0 * double(b) * double(cacheLen) * c.numKVHeads * c.headDim * 4;
  }
  double activations = tokens * act * 4;
  double io = 2 * tokens * d * 4;
  double total = weights + activations + io + kv;
  double avail = availableBytes();
  if (avail > 0 && total > avail)
    return fail("this run needs about " + gib(total) + " (weights " +
                gib(weights) + ", activations " + gib(activations) +
                ", input and output " + gib(io) +
                (kv > 0 ? ", KV caches " + gib(kv) : std::string()) +
                "), more than the " + gib(avail) +
                " of memory available; use a smaller --batch/--seq-len");
  return 0;
}

/// --decode=N and --check-decode: derive the decode entry
/// (transformer-derive-decode), compile it alone and drive it with caches
/// allocated here (head-major by default, see runDecode).
int runDecodeMode(ModuleOp module, const DecodeContext &ctx) {
  const blockc::HostTensor &input = ctx.input;
  int64_t batchSize = input.shape[0], promptLen = input.shape[1];
  int64_t modelDim = input.shape[2];
  int64_t needed = checkDecode ? promptLen : promptLen + decodeSteps;
  int64_t capacity = maxLen ? maxLen.getValue() : needed;

  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  std::string pipeline = "transformer-derive-decode{entry=" + ctx.sig.funcName +
                         " kv-layout=" + kvLayout + "}";
  if (failed(parsePassPipeline(pipeline, pm)) || failed(pm.run(module)))
    return 1;
  // The forward function is not needed: prefill is the decode entry at
  // position 0.
  module.lookupSymbol<func::FuncOp>(ctx.sig.funcName).erase();
  blockc::ModelSignature sig = ctx.sig;
  sig.funcName += "_decode";
  auto decodeFunc = module.lookupSymbol<func::FuncOp>(sig.funcName);

  // One zeroed cache per K/V argument: [B, H_kv, L_max, D] in memory for
  // the head-major layout (the default of transformer-derive-decode), else
  // [B, L_max, H_kv, D].
  std::vector<std::vector<int64_t>> cacheShapes;
  bool headMajor = false;
  for (BlockArgument arg : decodeFunc.getArguments()) {
    if (!decodeFunc.getArgAttr(
            arg.getArgNumber(),
            blockc::transformer::TransformerDialect::kKVCacheAttr))
      continue;
    auto layout =
        decodeFunc.getArgAttrOfType<blockc::transformer::KVLayoutAttr>(
            arg.getArgNumber(),
            blockc::transformer::TransformerDialect::kKVLayoutAttr);
    headMajor =
        layout && layout.getValue() == blockc::transformer::KVLayout::bhsd;
    auto type = cast<RankedTensorType>(arg.getType());
    if (!ShapedType::isDynamic(type.getDimSize(0)) &&
        type.getDimSize(0) != batchSize)
      return fail("the KV cache of argument #" +
                  llvm::Twine(arg.getArgNumber()) + " has batch " +
                  llvm::Twine(type.getDimSize(0)) + ", the input has " +
                  llvm::Twine(batchSize));
    if (headMajor)
      cacheShapes.push_back(
          {batchSize, type.getDimSize(2), capacity, type.getDimSize(3)});
    else
      cacheShapes.push_back(
          {batchSize, capacity, type.getDimSize(2), type.getDimSize(3)});
  }
  auto freshCaches = [&] {
    std::vector<blockc::HostTensor> caches(cacheShapes.size());
    for (size_t i = 0; i < caches.size(); ++i) {
      caches[i].shape = cacheShapes[i];
      caches[i].data.assign(caches[i].numElements(), 0.0f);
    }
    return caches;
  };
  int64_t cacheBytes = 0;
  for (const auto &shape : cacheShapes)
    cacheBytes += shape[0] * shape[1] * shape[2] * shape[3] * 4;

  auto compileStart = std::chrono::steady_clock::now();
  auto jit =
      blockc::BlockJit::compile(module, sig, blockc::JitTarget::CPU, optLevel);
  if (!jit)
    return fail(llvm::toString(jit.takeError()));
  double compileSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - compileStart)
                              .count();

  // One call of the entry: `x` ([B, n, d]) at position `pos`; the overflow
  // check comes first (the compiled code would abort).
  std::string error;
  auto step = [&](const blockc::HostTensor &x, int64_t pos,
                  std::vector<blockc::HostTensor> &caches,
                  blockc::HostTensor &out) -> bool {
    int64_t n = x.shape[1];
    if (pos + n > capacity) {
      error = "KV cache overflow: " + std::to_string(pos) + " cached + " +
              std::to_string(n) + " new tokens exceed the capacity L_max = " +
              std::to_string(capacity) + " (--max-len)";
      return false;
    }
    out.shape = x.shape;
    out.data.assign(out.numElements(), 0.0f);
    std::vector<const blockc::HostTensor *> args = {&x};
    for (const blockc::HostTensor &w : ctx.weights)
      args.push_back(&w);
    std::vector<blockc::HostTensor *> cachePtrs;
    for (blockc::HostTensor &c : caches)
      cachePtrs.push_back(&c);
    if (llvm::Error e =
            (*jit)->runDecode(args, pos, cachePtrs, headMajor, out)) {
      error = "execution failed: " + llvm::toString(std::move(e));
      return false;
    }
    return true;
  };
  auto seconds = [](auto start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };

  // All outputs, [B, T (+ steps), d].
  blockc::HostTensor all;
  all.shape = {batchSize, needed, modelDim};
  all.data.assign(all.numElements(), 0.0f);
  double prefillSeconds = 0, maxDiff = 0, scale = 0;
  std::vector<double> stepTimes;
  if (checkDecode) {
    // One full prefill, then the same sequence token by token.
    std::vector<blockc::HostTensor> caches = freshCaches();
    blockc::HostTensor full;
    auto start = std::chrono::steady_clock::now();
    if (!step(input, 0, caches, full))
      return fail(error);
    prefillSeconds = seconds(start);
    caches = freshCaches();
    for (int64_t t = 0; t < promptLen; ++t) {
      blockc::HostTensor row, out;
      row = sliceRows(input, t, 1);
      auto s0 = std::chrono::steady_clock::now();
      if (!step(row, t, caches, out))
        return fail(error);
      stepTimes.push_back(seconds(s0));
      storeRows(all, out, t);
    }
    for (float v : full.data)
      scale = std::max(scale, double(std::fabs(v)));
    int64_t worstT = 0, worstB = 0;
    for (int64_t b = 0; b < batchSize; ++b)
      for (int64_t t = 0; t < promptLen; ++t)
        for (int64_t i = 0; i < modelDim; ++i) {
          int64_t at = (b * promptLen + t) * modelDim + i;
          double diff = std::fabs(double(all.data[at]) - full.data[at]);
          if (!(diff <= maxDiff)) { // NaN counts as the worst
            maxDiff = std::isnan(diff) ? INFINITY : diff;
            worstT = t;
            worstB = b;
          }
        }
    if (!(maxDiff <= checkTolerance * std::max(scale, 1e-30)))
      return fail(llvm::formatv("--check-decode: position {0} (batch {1}) "
                                "differs from the prefill by {2:e3}, more "
                                "than {3:e1} of the output scale {4:e3}",
                                worstT, worstB, maxDiff,
                                checkTolerance.getValue(), scale)
                      .str());
  } else {
    std::vector<blockc::HostTensor> caches = freshCaches();
    blockc::HostTensor out;
    auto start = std::chrono::steady_clock::now();
    if (!step(input, 0, caches, out))
      return fail(error);
    prefillSeconds = seconds(start);
    storeRows(all, out, 0);
    int64_t pos = promptLen;
    for (unsigned s = 0; s < decodeSteps; ++s) {
      // The last output row stands in for the sampled token's embedding.
      blockc::HostTensor next = sliceRows(out, out.shape[1] - 1, 1);
      auto s0 = std::chrono::steady_clock::now();
      if (!step(next, pos, caches, out))
        return fail(error);
      stepTimes.push_back(seconds(s0));
      storeRows(all, out, pos);
      pos += 1;
    }
  }

  double sum = 0, absSum = 0;
  bool finite = true;
  for (float v : all.data) {
    sum += v;
    absSum += std::fabs(v);
    finite &= std::isfinite(v);
  }
  if (ctx.rank2)
    all.shape.erase(all.shape.begin());
  if (!outputFile.empty())
    if (llvm::Error e = blockc::writeNpy(outputFile, all))
      return fail(llvm::toString(std::move(e)));

  auto &os = llvm::outs();
  std::vector<int64_t> shownInput = input.shape;
  if (ctx.rank2)
    shownInput.erase(shownInput.begin());
  os << "blockc-run: " << modelFile << " @" << sig.funcName
     << " (target cpu, threads " << threads.getValue() << ")\n";
  os << "  input    " << blockc::formatShape(shownInput) << "  "
     << ctx.inputLabel << "\n";
  os << "  weights  " << ctx.weights.size() << " tensors, " << ctx.numParams
     << " parameters  " << ctx.weightsLabel << "\n";
  os << "  kv cache " << cacheShapes.size() / 2 << " layer"
     << (cacheShapes.size() == 2 ? "" : "s") << " x K, V "
     << blockc::formatShape(cacheShapes.front())
     << (headMajor ? " [B, H_kv, L_max, D]" : " [B, L_max, H_kv, D]") << ", "
     << llvm::format("%.1f KiB", cacheBytes / 1024.0) << "\n";
  os << "  output   " << blockc::formatShape(all.shape)
     << (outputFile.empty() ? "" : "  -> " + outputFile.getValue()) << "\n";
  os << llvm::format("  checksum sum=%.6e abs_sum=%.6e%s\n", sum, absSum,
                     finite ? "" : " (non-finite values!)");
  os << "  compile  " << formatSeconds(compileSeconds) << "\n";
  os << "  prefill  " << promptLen << " tokens in "
     << formatSeconds(prefillSeconds) << "\n";
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
                       (long long)promptLen, (long long)batchSize, maxDiff,
                       maxDiff / std::max(scale, 1e-30),
                       checkTolerance.getValue());
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
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  blockc::registerAllPasses();
  std::vector<std::string> argStorage(argv, argv + argc);
  for (std::string &a : argStorage)
    for (const char *prefix : {"--threads=", "-threads="})
      if (llvm::StringRef(a).starts_with(prefix))
        a = "--num-threads=" + a.substr(std::strlen(prefix));
  std::vector<const char *> cliArgs;
  for (const std::string &a : argStorage)
    cliArgs.push_back(a.c_str());
  cl::ParseCommandLineOptions(static_cast<int>(cliArgs.size()), cliArgs.data(),
                              "blockc-run: JIT-run a transformer block\n");

  // ---- Validate options ---------------------------------------------------
  if (targetName != "cpu" && targetName != "nvptx")
    return fail("unknown target '" + targetName + "' (expected cpu or nvptx)");
  if (optLevel > 3)
    return fail("-O must be 0, 1, 2 or 3");
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
  if (decodeMode && targetName != "cpu")
    return fail("--decode and --check-decode run on the CPU target only");
  if (!(checkTolerance > 0))
    return fail("--check-tol must be positive");
  if (kvLayout != "bhsd" && kvLayout != "bshd")
    return fail("--kv-layout must be bhsd or bshd");
  if (!outputFile.empty())
    if (llvm::Error e = blockc::checkWritable(outputFile))
      return fail(llvm::toString(std::move(e)));

  blockc::JitTarget jitTarget =
      targetName == "nvptx" ? blockc::JitTarget::NVPTX : blockc::JitTarget::CPU;
  // A GPU run fails fast, before anything is read or compiled, when there is
  // no GPU, driver or runtime.
  if (jitTarget == blockc::JitTarget::NVPTX)
    if (llvm::Error e = blockc::checkCudaAvailable())
      return fail(llvm::toString(std::move(e)));

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
  FailureOr<blockc::ModelSignature> sig =
      blockc::analyzeModel(*module, entryName);
  if (failed(sig))
    return 1;
  int64_t modelDim = sig->args[0].type.getDimSize(2);

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
  if (inputFile.empty()) {
    input.data.resize(input.numElements());
    Random rng(inputSeed);
    for (float &v : input.data)
      v = rng.uniform();
  }
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
  if (!weightsFile.empty()) {
    auto st = blockc::SafeTensorsFile::open(weightsFile);
    if (!st)
      return fail(llvm::toString(st.takeError()));
    llvm::StringSet<> bound;
    for (const blockc::ModelArgument &arg : llvm::drop_begin(sig->args)) {
      bound.insert(arg.weightName);
      auto it = st->getEntries().find(arg.weightName);
      if (it == st->getEntries().end())
        return fail(weightsFile + ": missing tensor '" + arg.weightName +
                    "' (argument #" + llvm::Twine(arg.index) + ", " + arg.role +
                    ", of @" + sig->funcName + ")");
      std::vector<int64_t> expected(arg.type.getShape().begin(),
                                    arg.type.getShape().end());
      // The stored shape, after the argument's slice and transpose.
      std::vector<int64_t> view = it->second.shape;
      std::string how;
      if (arg.sliceAxis >= 0) {
        if (arg.sliceAxis >= static_cast<int64_t>(view.size()) ||
            arg.sliceEnd > view[arg.sliceAxis])
          return fail(
              weightsFile + ": tensor '" + arg.weightName + "' has shape " +
              blockc::formatShape(view) + ", too small for the slice [" +
              llvm::Twine(arg.sliceBegin) + ", " + llvm::Twine(arg.sliceEnd) +
              ") along axis " + llvm::Twine(arg.sliceAxis) +
              " that argument #" + llvm::Twine(arg.index) + " reads");
        view[arg.sliceAxis] = arg.sliceEnd - arg.sliceBegin;
        how += " sliced";
      }
      if (arg.transpose) {
        if (view.size() != 2)
          return fail(weightsFile + ": tensor '" + arg.weightName +
                      "' has shape " + blockc::formatShape(it->second.shape) +
                      " but argument #" + llvm::Twine(arg.index) +
                      " transposes it (needs rank 2)");
        std::swap(view[0], view[1]);
        how += how.empty() ? " transposed" : " and transposed";
      }
      if (view != expected)
        return fail(
            weightsFile + ": tensor '" + arg.weightName + "' has shape " +
            blockc::formatShape(it->second.shape) +
            (how.empty() ? "" : " (" + blockc::formatShape(view) + how + ")") +
            ", the model expects " + blockc::formatShape(expected));
      auto t = st->load(arg.weightName);
      if (!t)
        return fail(llvm::toString(t.takeError()));
      if (arg.sliceAxis >= 0)
        *t = blockc::sliceTensor(*t, arg.sliceAxis, arg.sliceBegin,
                                 arg.sliceEnd);
      if (arg.transpose)
        *t = blockc::transpose2D(*t);
      weights.push_back(std::move(*t));
    }
    if (!allowExtraWeights)
      for (const auto &entry : st->getEntries())
        if (!bound.contains(entry.getKey()))
          return fail(weightsFile + ": unexpected tensor '" + entry.getKey() +
                      "' binds to no argument of @" + sig->funcName +
                      " (--allow-extra-weights ignores it)");
  } else {
    for (const blockc::ModelArgument &arg : llvm::drop_begin(sig->args))
      weights.push_back(randomWeight(arg, weightSeed));
  }
  for (const blockc::HostTensor &w : weights)
    numParams += w.numElements();

  // The OpenMP runtime reads its thread count when it initialises.
  if (jitTarget == blockc::JitTarget::CPU)
    if (llvm::Error e = blockc::setCpuThreads(threads))
      return fail(llvm::toString(std::move(e)));

  if (decodeMode)
    return runDecodeMode(
        *module,
        {*sig, input, weights, numParams,
         inputFile.empty() ? "random (seed " + std::to_string(inputSeed) + ")"
                           : inputFile.getValue(),
         weightsFile.empty()
             ? "random (seed " + std::to_string(weightSeed) + ")"
             : weightsFile.getValue(),
         rank2});

  // ---- Compile
  // ---------------------------------------------------------------
  auto compileStart = std::chrono::steady_clock::now();
  auto jit = blockc::BlockJit::compile(*module, *sig, jitTarget, optLevel);
  if (!jit)
    return fail(llvm::toString(jit.takeError()));
  double compileSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - compileStart)
                              .count();

  // ---- Run
  // -------------------------------------------------------------------
  blockc::HostTensor output;
  output.shape = input.shape;
  output.data.assign(output.numElements(), 0.0f);
  std::vector<const blockc::HostTensor *> args = {&input};
  for (const blockc::HostTensor &w : weights)
    args.push_back(&w);
  std::vector<double> times;
  for (unsigned r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error e = (*jit)->run(args, output))
      return fail("execution failed: " + llvm::toString(std::move(e)));
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
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
  if (!outputFile.empty())
    if (llvm::Error e = blockc::writeNpy(outputFile, output))
      return fail(llvm::toString(std::move(e)));

  // ---- Summary ------------------------------------------------------------
  double flops = sig->flops(input.shape[0], input.shape[1]);
  auto &os = llvm::outs();
  os << "blockc-run: " << modelFile << " @" << sig->funcName << " (target "
     << targetName << ", threads "
     << (jitTarget == blockc::JitTarget::CPU ? threads.getValue() : 1u)
     << ")\n";
  std::vector<int64_t> shownInput = input.shape;
  if (rank2)
    shownInput.erase(shownInput.begin());
  os << "  input    " << blockc::formatShape(shownInput) << "  "
     << (inputFile.empty() ? "random (seed " + std::to_string(inputSeed) + ")"
                           : inputFile.getValue())
     << "\n";
  os << "  weights  " << weights.size() << " tensors, " << numParams
     << " parameters  "
     << (weightsFile.empty()
             ? "random (seed " + std::to_string(weightSeed) + ")"
             : weightsFile.getValue())
     << "\n";
  os << "  output   " << blockc::formatShape(output.shape)
     << (outputFile.empty() ? "" : "  -> " + outputFile.getValue()) << "\n";
  os << llvm::format("  checksum sum=%.6e abs_sum=%.6e%s\n", sum, absSum,
                     finite ? "" : " (non-finite values!)");
  os << "  compile  " << formatSeconds(compileSeconds) << "\n";
  os << "  run      median " << formatSeconds(median) << " over " << repeat
     << (repeat == 1 ? " run" : " runs") << " (min "
     << formatSeconds(sorted.front()) << ")\n";
  os << llvm::format("  flops    %.4g per run, %.2f GFLOP/s\n", flops,
                     flops / median * 1e-9);
  return 0;
}
