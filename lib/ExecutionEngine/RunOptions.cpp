//===- RunOptions.cpp - blockc-run's options and their checks -------------===//
//
// The command-line options of RunOptions live in one ManagedStatic created
// by registerRunOptions(), as the compile options do (CompileOptions.cpp).
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/RunOptions.h"
#include "blockc/Support/Error.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/Threading.h"

#include <cstdlib>
#include <memory>

using namespace blockc;
namespace cl = llvm::cl;

namespace {

struct RunCLOptions {
  cl::OptionCategory &cat = getRunOptionCategory();
  cl::opt<std::string> weightsFile{
      "weights",
      cl::desc(
          "safetensors file, or Hugging Face model folder (model.safetensors "
          "or the shards of model.safetensors.index.json), with the weights"),
      cl::value_desc("file or dir"), cl::cat(cat)};
  cl::opt<std::string> randomWeights{
      "random-weights", cl::desc("Use deterministic random weights"),
      cl::value_desc("seed"), cl::ValueOptional, cl::cat(cat)};
  cl::opt<std::string> inputFile{"input",
                                 cl::desc(".npy input [B,T,d] or [T,d]"),
                                 cl::value_desc("file or dir"), cl::cat(cat)};
  cl::opt<std::string> randomInput{
      "random-input",
      cl::desc("Use a deterministic random input (default without --input)"),
      cl::value_desc("seed"), cl::ValueOptional, cl::cat(cat)};
  cl::opt<int64_t> seqLen{"seq-len", cl::desc("Sequence length T"), cl::init(0),
                          cl::cat(cat)};
  cl::opt<int64_t> batch{"batch", cl::desc("Batch size B"), cl::init(0),
                         cl::cat(cat)};
  cl::opt<std::string> outputFile{"output", cl::desc("Write the output (.npy)"),
                                  cl::value_desc("file or dir"), cl::cat(cat)};
  cl::opt<std::string> savePrepared{
      "save-prepared",
      cl::desc("CPU: after the prepare function ran, write every weight "
               "argument as the entry reads it (prepared layouts and their "
               "description in the metadata) to this safetensors file "
               "(--tensor-parallel=N: one file per rank, "
               "<file>.rank<r>-of-N.safetensors); --weights=<it> later skips "
               "preparing (docs/RuntimeABI.md)"),
      cl::value_desc("file or dir"), cl::cat(cat)};
  cl::opt<std::string> profileFile{
      "profile",
      cl::desc("With -target=nvptx --emulate: print each kernel's FLOPs, "
               "memory traffic, registers, occupancy and speed-of-light "
               "bound on the -gpu-chip (docs/GPUEmulator.md#profile); "
               "--profile=FILE.json also writes it as JSON. On a GPU: time "
               "each kernel with CUDA events (beside --profile-bound's "
               "bounds). With --decode=N: the last decode step's kernels"),
      cl::value_desc("file.json"), cl::ValueOptional, cl::cat(cat)};
  cl::opt<std::string> profileBound{
      "profile-bound",
      cl::desc("With --profile on a GPU: the emulator's profile of the same "
               "module and shape (its JSON file, or the table it printed), "
               "whose bounds the measured times are compared with"),
      cl::value_desc("file or dir"), cl::cat(cat)};
  cl::opt<int64_t> profileBlocks{
      "profile-blocks",
      cl::desc("With --profile: emulate only N thread blocks of each "
               "launch, spread over the grid, and scale the counters (for "
               "large shapes; the run's output and the profile file are not "
               "written)"),
      cl::value_desc("N"), cl::init(0), cl::cat(cat)};
  cl::opt<unsigned> repeat{"repeat", cl::desc("Number of timed runs"),
                           cl::init(1), cl::cat(cat)};
  // libLLVM already registers a global option named "threads", so ours is
  // "num-threads" and parseCommandLine() maps --threads=N onto it.
  cl::opt<unsigned> threads{
      "num-threads",
      cl::desc("CPU threads (also --threads=N; default: OMP_NUM_THREADS "
               "when set, else every core)"),
      cl::value_desc("N"), cl::init(0), cl::cat(cat)};
  cl::opt<unsigned> decodeSteps{
      "decode",
      cl::desc("Prefill the input through the KV-cached decode entry, then "
               "run N single-token steps feeding each step's last output row "
               "back"),
      cl::value_desc("N"), cl::init(0), cl::cat(cat)};
  cl::opt<bool> checkDecode{
      "check-decode",
      cl::desc("Run the input token by token through the KV cache and "
               "compare every position with one full prefill; fail on "
               "mismatch"),
      cl::init(false), cl::cat(cat)};
  cl::opt<std::string> pagedSteps{
      "paged-steps",
      cl::desc("Run the input's B sequences through the paged entry "
               "(transformer-derive-paged-decode) in ragged batched steps: "
               "'/'-separated steps, each B comma-separated counts of the "
               "sequences' new tokens (0: none), each sequence's counts "
               "summing to T; e.g. 1,7,13,16/15,9,3,0 (docs/Decoding.md)"),
      cl::value_desc("steps"), cl::cat(cat)};
  cl::opt<int64_t> pageSize{
      "page-size",
      cl::desc("With --paged-steps: tokens per page of the K/V pools "
               "(default 16)"),
      cl::value_desc("S"), cl::init(16), cl::cat(cat)};
  cl::opt<int64_t> maxLen{
      "max-len",
      cl::desc("KV cache capacity L_max in tokens (default: what the run "
               "needs)"),
      cl::value_desc("L"), cl::init(0), cl::cat(cat)};
  cl::opt<double> checkTolerance{
      "check-tol",
      cl::desc("--check-decode tolerance, relative to the largest |output| "
               "(default: 1e-4 for f32 models, two units of the last place "
               "for bf16 (2^-7) and f16 (2^-10) models, at least 2e-3 with "
               "activations = int8)"),
      cl::init(1e-4), cl::cat(cat)};
  cl::opt<bool> allowExtraWeights{
      "allow-extra-weights",
      cl::desc("Ignore tensors in the weights file that bind to no argument"),
      cl::init(false), cl::cat(cat)};
  cl::opt<bool> noCache{
      "no-cache",
      cl::desc("Neither read nor write the compile cache ($XDG_CACHE_HOME/"
               "blockc or ~/.cache/blockc, at most BLOCKC_CACHE_MAX_SIZE, "
               "default 1G; see docs/CompileCache.md)"),
      cl::init(false), cl::cat(cat)};
  cl::opt<unsigned> generate{
      "generate",
      cl::desc("Causal-LM models: run the prompt's token ids (--input, or "
               "--prompt with --tokenizer) as one prefill, then generate N "
               "tokens per sequence through the KV cache, streaming them; "
               "--output writes the generated ids [B, N] (int32 .npy)"),
      cl::value_desc("N"), cl::init(0), cl::cat(cat)};
  cl::opt<double> temperature{
      "temperature",
      cl::desc("With --generate: sample from softmax(logits / T) (default "
               "0: greedy, the most probable token)"),
      cl::value_desc("T"), cl::init(0.0), cl::cat(cat)};
  cl::opt<int64_t> topK{
      "top-k",
      cl::desc("With --generate and a temperature: sample among the K most "
               "probable tokens (default 0: all)"),
      cl::value_desc("K"), cl::init(0), cl::cat(cat)};
  cl::opt<double> topP{
      "top-p",
      cl::desc("With --generate and a temperature: sample among the most "
               "probable tokens whose probability reaches P (default 1: "
               "all)"),
      cl::value_desc("P"), cl::init(1.0), cl::cat(cat)};
  cl::opt<uint64_t> seed{
      "seed", cl::desc("With --generate: the sampling seed (default 0)"),
      cl::value_desc("S"), cl::init(0), cl::cat(cat)};
  cl::list<int32_t> stopTokens{
      "stop-token",
      cl::desc("With --generate: a token id that ends a sequence "
               "(repeatable; with --tokenizer its end-of-sequence id is "
               "one too)"),
      cl::value_desc("id"), cl::cat(cat)};
  cl::opt<std::string> tokenizer{
      "tokenizer",
      cl::desc("A folder with tokenizer.json (byte-level BPE) or "
               "tokenizer.model (SentencePiece): --prompt is encoded with "
               "it and --generate prints the text as it comes"),
      cl::value_desc("dir"), cl::cat(cat)};
  cl::opt<std::string> prompt{
      "prompt",
      cl::desc("With --tokenizer: the text whose ids are the input "
               "(instead of --input)"),
      cl::value_desc("text"), cl::cat(cat)};
  cl::opt<bool> quiet{
      "quiet",
      cl::desc("No progress lines on stderr (loading, compiling, preparing, "
               "running, decode steps); the summary and errors stay"),
      cl::init(false), cl::cat(cat)};
};

llvm::ManagedStatic<RunCLOptions> clOptions;

/// A seed option's value: 0 when given without one.
llvm::Expected<uint64_t> parseSeed(const cl::opt<std::string> &opt) {
  uint64_t seed = 0;
  if (!opt.empty() && llvm::StringRef(opt).getAsInteger(10, seed))
    return makeError("--" + opt.ArgStr + ": invalid seed '" + opt + "'");
  return seed;
}

/// The value of environment variable `name` as a positive integer.
std::optional<int64_t> positiveEnv(const char *name) {
  const char *value = std::getenv(name);
  int64_t n;
  if (!value || llvm::StringRef(value).trim().getAsInteger(10, n) || n < 1)
    return std::nullopt;
  return n;
}

} // namespace

cl::OptionCategory &blockc::getRunOptionCategory() {
  static cl::OptionCategory category("blockc-run options");
  return category;
}

void blockc::registerRunOptions() { *clOptions; }

int64_t blockc::getMPILaunchSize() {
  // Open MPI's mpirun, then the PMI / PMIx launchers (MPICH's hydra, srun).
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (std::optional<int64_t> n = positiveEnv(name))
      return *n;
  return 1;
}

llvm::Error RunOptions::checkCacheCapacity(int64_t promptLen) const {
  int64_t needed = neededCacheLength(promptLen);
  if (maxLen == 0 || maxLen >= needed)
    return llvm::Error::success();
  std::string what =
      checkDecode
          ? "--check-decode of " + std::to_string(promptLen) + " tokens needs"
      : generateMode()
          ? "the prompt's " + std::to_string(promptLen) + " tokens and " +
                std::to_string(generateTokens) +
                " generated tokens (the last is not cached) need"
          : "the prompt's " + std::to_string(promptLen) + " tokens and " +
                std::to_string(decodeSteps) + " decode steps need";
  return makeError("--max-len=" + llvm::Twine(maxLen) + " is too small: " +
                   what + " a KV cache of " + llvm::Twine(needed) +
                   " tokens (--max-len=" + llvm::Twine(needed) + " or more)");
}

llvm::Error RunOptions::checkPagedSteps(int64_t batch, int64_t seqLen) const {
  std::vector<int64_t> sums(batch, 0);
  for (size_t step = 0; step < pagedSteps.size(); ++step) {
    const std::vector<int64_t> &counts = pagedSteps[step];
    if (static_cast<int64_t>(counts.size()) != batch)
      return makeError(llvm::formatv("--paged-steps: step {0} has {1} "
                                     "token count{2}, the input has B = {3} "
                                     "sequences",
                                     step + 1, counts.size(),
                                     counts.size() == 1 ? "" : "s", batch)
                           .str());
    int64_t total = 0;
    for (int64_t b = 0; b < batch; ++b) {
      sums[b] += counts[b];
      total += counts[b];
    }
    if (total == 0)
      return makeError(
          llvm::formatv("--paged-steps: step {0} runs no token", step + 1)
              .str());
  }
  for (int64_t b = 0; b < batch; ++b)
    if (sums[b] != seqLen)
      return makeError(llvm::formatv("--paged-steps: sequence {0}'s token "
                                     "counts sum to {1}, the input has T = "
                                     "{2} tokens per sequence",
                                     b, sums[b], seqLen)
                           .str());
  return llvm::Error::success();
}

namespace {

/// --paged-steps' value: '/'-separated steps of ','-separated counts.
llvm::Expected<std::vector<std::vector<int64_t>>>
parsePagedSteps(llvm::StringRef spec) {
  std::vector<std::vector<int64_t>> steps;
  if (spec.trim().empty())
    return makeError("--paged-steps is empty (give each step's token counts, "
                     "e.g. --paged-steps=1,7/1,1)");
  llvm::SmallVector<llvm::StringRef> stepTexts, countTexts;
  spec.split(stepTexts, '/');
  for (llvm::StringRef stepText : stepTexts) {
    steps.emplace_back();
    countTexts.clear();
    stepText.split(countTexts, ',');
    for (llvm::StringRef text : countTexts) {
      int64_t n;
      if (text.trim().getAsInteger(10, n) || n < 0)
        return makeError("--paged-steps: '" + text +
                         "' is not a token count (an integer >= 0) in step " +
                         llvm::Twine(steps.size()) + " of '" + spec + "'");
      steps.back().push_back(n);
    }
  }
  return steps;
}

} // namespace

llvm::Expected<RunOptions>
blockc::getRunOptionsFromCommandLine(const CompileOptions &compile) {
  const RunCLOptions &cl = *clOptions;
  RunOptions r;
  bool nvptx = compile.isNVPTX(), emulate = compile.emulate;

  // Profiling.
  r.profile = cl.profileFile.getNumOccurrences() > 0;
  r.profileFile = cl.profileFile;
  r.profileBound = cl.profileBound;
  r.profileBlocks = cl.profileBlocks;
  bool sampleGiven = cl.profileBlocks.getNumOccurrences() > 0;
  if (r.profile && !nvptx)
    return makeError("--profile needs -target=nvptx (with --emulate: the "
                     "emulator's counters and bounds; without: kernel "
                     "times on the GPU)");
  if (sampleGiven && !r.profile)
    return makeError("--profile-blocks needs --profile");
  if (sampleGiven && !emulate)
    return makeError("--profile-blocks samples emulated launches: it "
                     "needs --emulate");
  if (!r.profileBound.empty() && (!r.profile || emulate))
    return makeError("--profile-bound needs --profile on a GPU (without "
                     "--emulate)");
  if (sampleGiven && r.profileBlocks < 1)
    return makeError("--profile-blocks must be at least 1");

  // Decoding.
  r.decodeSteps = cl.decodeSteps;
  r.generateTokens = cl.generate;
  r.checkDecode = cl.checkDecode;
  r.maxLen = cl.maxLen;
  if (cl.decodeSteps.getNumOccurrences() && r.decodeSteps == 0)
    return makeError("--decode must be at least 1 (the single-token steps "
                     "after the prefill)");
  if (r.decodeSteps > 0 && r.checkDecode)
    return makeError("give only one of --decode=N and --check-decode");
  if (r.profile && (r.checkDecode || r.generateMode()))
    return makeError("--profile profiles the entry's run or the last step of "
                     "--decode=N, not --check-decode or --generate=N");
  if (r.maxLen < 0 || (cl.maxLen.getNumOccurrences() && r.maxLen == 0))
    return makeError("--max-len must be at least 1");
  if (cl.maxLen.getNumOccurrences() && !r.decodeMode())
    return makeError("--max-len needs --decode=N, --check-decode or "
                     "--generate=N");
  // Paged steps.
  if (cl.pagedSteps.getNumOccurrences()) {
    auto steps = parsePagedSteps(cl.pagedSteps);
    if (!steps)
      return steps.takeError();
    r.pagedSteps = std::move(*steps);
  }
  r.pageSize = cl.pageSize;
  if (cl.pageSize.getNumOccurrences() && !r.pagedMode())
    return makeError("--page-size needs --paged-steps");
  if (r.pageSize < 1)
    return makeError("--page-size must be at least 1");
  if (r.pagedMode() && r.decodeMode())
    return makeError("give only one of --paged-steps, --decode=N, "
                     "--check-decode and --generate=N");
  if (r.pagedMode() && r.profile)
    return makeError("--profile profiles the entry's run, not --paged-steps");
  if (r.pagedMode() && cl.repeat > 1)
    return makeError("--repeat times the plain entry; --paged-steps runs "
                     "each step once (its times are in the summary)");
  // Generation.
  if (cl.generate.getNumOccurrences() && r.generateTokens == 0)
    return makeError("--generate must be at least 1 (the tokens to "
                     "generate per sequence)");
  if (r.generateTokens > 0 && (r.decodeSteps > 0 || r.checkDecode))
    return makeError("give only one of --generate=N, --decode=N and "
                     "--check-decode");
  for (const cl::Option *o : std::initializer_list<const cl::Option *>{
           &cl.temperature, &cl.topK, &cl.topP, &cl.seed,
           static_cast<const cl::Option *>(std::addressof(cl.stopTokens))})
    if (o->getNumOccurrences() && !r.generateMode())
      return makeError("--" + o->ArgStr + " needs --generate=N");
  r.sampling.temperature = cl.temperature;
  r.sampling.topK = cl.topK;
  r.sampling.topP = cl.topP;
  r.sampling.seed = cl.seed;
  if (llvm::Error e = r.sampling.check())
    return std::move(e);
  if (r.sampling.isGreedy() &&
      (cl.topK.getNumOccurrences() || cl.topP.getNumOccurrences()))
    return makeError("--top-k and --top-p restrict sampling: they need a "
                     "--temperature above 0 (temperature 0 is greedy)");
  r.stopTokens.assign(cl.stopTokens.begin(), cl.stopTokens.end());
  for (int32_t id : r.stopTokens)
    if (id < 0)
      return makeError("--stop-token must be a token id (>= 0), got " +
                       llvm::Twine(id));
  r.tokenizerDir = cl.tokenizer;
  r.prompt = cl.prompt;
  if (cl.prompt.getNumOccurrences() && r.tokenizerDir.empty())
    return makeError("--prompt needs --tokenizer=DIR (the tokenizer that "
                     "turns the text into token ids)");
  if (cl.prompt.getNumOccurrences() && r.prompt.empty())
    return makeError("--prompt is empty");
  if (cl.prompt.getNumOccurrences() &&
      (!cl.inputFile.empty() || cl.randomInput.getNumOccurrences()))
    return makeError("give only one of --prompt and --input / "
                     "--random-input");
  if (!r.tokenizerDir.empty() && !r.generateMode() &&
      !cl.prompt.getNumOccurrences())
    return makeError("--tokenizer is used by --prompt and --generate");

  if (!(cl.checkTolerance > 0))
    return makeError("--check-tol must be positive");
  if (cl.checkTolerance.getNumOccurrences())
    r.checkTolerance = cl.checkTolerance;

  // Weights and input.
  bool randomWeights = cl.randomWeights.getNumOccurrences() > 0;
  bool randomInput = cl.randomInput.getNumOccurrences() > 0;
  if (cl.weightsFile.empty() == !randomWeights)
    return makeError("give exactly one of --weights=FILE and --random-weights");
  if (!cl.inputFile.empty() && randomInput)
    return makeError("give only one of --input=FILE and --random-input");
  r.weightsFile = cl.weightsFile;
  r.inputFile = cl.inputFile;
  if (randomWeights) {
    auto seed = parseSeed(cl.randomWeights);
    if (!seed)
      return seed.takeError();
    r.weightSeed = *seed;
  }
  if (r.inputFile.empty()) {
    auto seed = parseSeed(cl.randomInput);
    if (!seed)
      return seed.takeError();
    r.inputSeed = *seed;
  }
  r.seqLen = cl.seqLen;
  r.batch = cl.batch;
  if (r.seqLen < 0 || r.batch < 0)
    return makeError("--seq-len and --batch must be positive");
  if (cl.seqLen.getNumOccurrences() && r.seqLen == 0)
    return makeError("--seq-len must be at least 1 (the tokens of the "
                     "input)");
  if (cl.batch.getNumOccurrences() && r.batch == 0)
    return makeError("--batch must be at least 1 (the sequences of the "
                     "input)");
  r.allowExtraWeights = cl.allowExtraWeights;

  // Outputs.
  r.outputFile = cl.outputFile;
  r.savePrepared = cl.savePrepared;
  if (!r.savePrepared.empty() && (r.decodeMode() || r.pagedMode()))
    return makeError("--save-prepared runs the plain entry (not --decode=N, "
                     "--check-decode, --generate=N or --paged-steps)");
  if (!r.savePrepared.empty() && nvptx)
    return makeError("--save-prepared: only the CPU target prepares "
                     "weights");

  // Repetitions and threads.
  r.repeat = cl.repeat;
  if (r.repeat == 0)
    return makeError("--repeat must be at least 1");
  if (cl.threads.getNumOccurrences()) {
    if (cl.threads == 0)
      return makeError("--threads must be at least 1");
    r.threads = cl.threads;
    r.threadSource = ThreadSource::Option;
  } else if (std::optional<int64_t> n = positiveEnv("OMP_NUM_THREADS")) {
    r.threads = static_cast<unsigned>(*n);
    r.threadSource = ThreadSource::Environment;
  } else {
    // The cores of this process's affinity mask (taskset, cgroups).
    r.threads =
        std::max(1u, llvm::hardware_concurrency().compute_thread_count());
    r.threadSource = ThreadSource::AllCores;
  }
  r.noCache = cl.noCache;
  r.quiet = cl.quiet;
  return r;
}
