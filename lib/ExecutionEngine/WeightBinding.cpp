//===- WeightBinding.cpp - bind safetensors tensors to model arguments ----===//
//
// See WeightBinding.h. The error messages are the ones blockc-run prints
// (test/blockc-run checks them).
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/WeightBinding.h"
#include "blockc/ExecutionEngine/TokenIds.h"
#include "blockc/Support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

using namespace blockc;
using llvm::Twine;

/// Rank `rank`'s part (ModelArgument::shardRanges) of the whole view `t`.
static HostTensor selectShard(const HostTensor &t, const ModelArgument &arg,
                              unsigned rank) {
  const std::vector<int64_t> &ranges = arg.shardRanges[rank];
  HostTensor part;
  part.shape.assign(arg.type.getShape().begin(), arg.type.getShape().end());
  part.elementType = t.elementType;
  part.allocate();
  if (ranges.empty())
    return part; // zeros: another rank holds this bias
  size_t bytes = t.elementBytes();
  int64_t inner = 1, outer = 1;
  for (size_t d = arg.shardAxis + 1; d < t.shape.size(); ++d)
    inner *= t.shape[d];
  for (int64_t d = 0; d < arg.shardAxis; ++d)
    outer *= t.shape[d];
  int64_t along = t.shape[arg.shardAxis];
  const char *src = static_cast<const char *>(t.bytes());
  char *dst = static_cast<char *>(part.bytes());
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i + 1 < ranges.size(); i += 2) {
      size_t n = (ranges[i + 1] - ranges[i]) * inner * bytes;
      std::memcpy(dst, src + ((o * along + ranges[i]) * inner) * bytes, n);
      dst += n;
    }
  return part;
}

/// bindWeight for a tensor-parallel argument: the view's shape is checked
/// against the whole argument, then only the rank's ranges are read.
static llvm::Expected<HostTensor>
bindShard(const SafeTensorsFile &file, const ModelArgument &arg,
          llvm::StringRef funcName, unsigned rank,
          const std::vector<int64_t> &stored, std::vector<int64_t> view) {
  const std::string &path = file.getPath();
  std::vector<int64_t> full = arg.fullShape();
  bool fits = view.size() == full.size();
  for (size_t d = 0; fits && d < view.size(); ++d)
    fits = view[d] == full[d];
  if (!fits)
    return makeError(path + ": tensor '" + arg.weightName + "' has shape " +
                     formatShape(stored) + ", the model split over " +
                     Twine(arg.shardRanges.size()) + " ranks expects " +
                     formatShape(full) + " (argument #" + Twine(arg.index) +
                     ", " + arg.role + ", of @" + funcName + ")");
  ElementType type = getHostElementType(arg.type.getElementType());
  const std::vector<int64_t> &ranges = arg.shardRanges[rank];
  if (ranges.empty()) {
    HostTensor zeros;
    zeros.shape.assign(arg.type.getShape().begin(), arg.type.getShape().end());
    zeros.elementType = type;
    zeros.allocate();
    return zeros;
  }
  // The stored rows and columns that the rank's part of the view reads.
  std::vector<int64_t> rows, cols = {0, stored.back()};
  if (stored.size() == 2)
    rows = {0, stored[0]};
  if (arg.sliceAxis == 0 && stored.size() == 2)
    rows = {arg.sliceBegin, arg.sliceEnd};
  else if (arg.sliceAxis == static_cast<int64_t>(stored.size()) - 1)
    cols = {arg.sliceBegin, arg.sliceEnd};
  int64_t storedAxis = arg.transpose ? 1 - arg.shardAxis : arg.shardAxis;
  int64_t offset = arg.sliceAxis == storedAxis ? arg.sliceBegin : 0;
  std::vector<int64_t> picked;
  for (int64_t bound : ranges)
    picked.push_back(bound + offset);
  if (stored.size() == 2 && storedAxis == 0)
    rows = picked;
  else
    cols = picked;
  llvm::Expected<HostTensor> t =
      file.loadRegion(arg.weightName, type, rows, cols);
  if (!t)
    return t.takeError();
  if (arg.transpose)
    *t = transpose2D(*t);
  return t;
}

llvm::Expected<HostTensor> blockc::bindWeight(const SafeTensorsFile &file,
                                              const ModelArgument &arg,
                                              llvm::StringRef funcName,
                                              unsigned rank) {
  const std::string &path = file.getPath();
  auto it = file.getEntries().find(arg.weightName);
  if (it == file.getEntries().end())
    return makeError(path + ": missing tensor '" + arg.weightName +
                     "' (argument #" + Twine(arg.index) + ", " + arg.role +
                     ", of @" + funcName + ")");
  const std::vector<int64_t> &stored = it->second.shape;
  if (!SafeTensorsFile::isFloatDType(it->second.dtype))
    return makeError(path + ": tensor '" + arg.weightName + "' has dtype " +
                     it->second.dtype + ", argument #" + Twine(arg.index) +
                     " (" + arg.role + ", of @" + funcName +
                     ") needs F32, F16 or BF16 values");
  std::vector<int64_t> expected(arg.type.getShape().begin(),
                                arg.type.getShape().end());
  // The stored shape, after the argument's slice and transpose.
  std::vector<int64_t> view = stored;
  std::string how;
  if (arg.sliceAxis >= 0) {
    if (arg.sliceAxis >= static_cast<int64_t>(view.size()) ||
        arg.sliceEnd > view[arg.sliceAxis])
      return makeError(path + ": tensor '" + arg.weightName + "' has shape " +
                       formatShape(view) + ", too small for the slice [" +
                       Twine(arg.sliceBegin) + ", " + Twine(arg.sliceEnd) +
                       ") along axis " + Twine(arg.sliceAxis) +
                       " that argument #" + Twine(arg.index) + " reads");
    view[arg.sliceAxis] = arg.sliceEnd - arg.sliceBegin;
    how += " sliced";
  }
  if (arg.transpose) {
    if (view.size() != 2)
      return makeError(path + ": tensor '" + arg.weightName + "' has shape " +
                       formatShape(stored) + " but argument #" +
                       Twine(arg.index) + " transposes it (needs rank 2)");
    std::swap(view[0], view[1]);
    how += how.empty() ? " transposed" : " and transposed";
  }
  if (arg.shardAxis >= 0)
    return bindShard(file, arg, funcName, rank, stored, view);
  if (view != expected)
    return makeError(path + ": tensor '" + arg.weightName + "' has shape " +
                     formatShape(stored) +
                     (how.empty() ? "" : " (" + formatShape(view) + how + ")") +
                     ", the model expects " + formatShape(expected));
  // In the argument's element type: a tensor stored in that type is used
  // as it is stored, in the mapped file (no copy, no widening) unless the
  // argument reads a slice or the transpose.
  ElementType type = getHostElementType(arg.type.getElementType());
  llvm::Expected<HostTensor> t = arg.sliceAxis < 0 && !arg.transpose
                                     ? file.view(arg.weightName, type)
                                     : file.load(arg.weightName, type);
  if (!t)
    return t.takeError();
  if (arg.sliceAxis >= 0)
    *t = sliceTensor(*t, arg.sliceAxis, arg.sliceBegin, arg.sliceEnd);
  if (arg.transpose)
    *t = transpose2D(*t);
  return t;
}

llvm::Expected<std::vector<HostTensor>>
blockc::bindWeights(const SafeTensorsFile &file, const ModelSignature &sig,
                    const WeightBindingOptions &options, unsigned rank) {
  std::vector<HostTensor> weights;
  llvm::StringSet<> bound;
  for (const ModelArgument &arg : llvm::drop_begin(sig.args)) {
    bound.insert(arg.weightName);
    llvm::Expected<HostTensor> t = bindWeight(file, arg, sig.funcName, rank);
    if (!t)
      return t.takeError();
    weights.push_back(std::move(*t));
  }
  if (!options.allowExtraTensors)
    for (const auto &entry : file.getEntries())
      if (!bound.contains(entry.getKey()))
        return makeError(file.getPath() + ": unexpected tensor '" +
                         entry.getKey() + "' binds to no argument of @" +
                         sig.funcName + " (--allow-extra-weights ignores it)");
  return std::move(weights);
}

/// The name under which `checkpoint` holds the tensor a model names `name`:
/// `name` itself, else the same tensor under the wrapper prefix of
/// transformers' state dicts: a GPT2LMHeadModel saves GPT2Model's "h.0...",
/// "wte.weight" as "transformer.h.0...", "transformer.wte.weight"; a bare
/// LlamaModel (Qwen2Model, MistralModel) saves "model.layers.0..." as
/// "layers.0...". `name` when neither is held.
static std::string storedName(const Checkpoint &checkpoint,
                              llvm::StringRef name) {
  if (checkpoint.find(name))
    return name.str();
  std::string prefixed = ("transformer." + name).str();
  if (checkpoint.find(prefixed))
    return prefixed;
  if (name.starts_with("model.") &&
      checkpoint.find(name.drop_front(strlen("model."))))
    return name.drop_front(strlen("model.")).str();
  return name.str();
}

llvm::Expected<HostTensor> blockc::bindWeight(const Checkpoint &checkpoint,
                                              const ModelArgument &arg,
                                              llvm::StringRef funcName,
                                              unsigned rank) {
  if (std::string stored = storedName(checkpoint, arg.weightName);
      stored != arg.weightName) {
    ModelArgument renamed = arg;
    renamed.weightName = stored;
    return bindWeight(*checkpoint.find(stored), renamed, funcName, rank);
  }
  if (const SafeTensorsFile *file = checkpoint.find(arg.weightName))
    return bindWeight(*file, arg, funcName, rank);
  // Not held: named as a single file names it, or by the folder.
  if (!checkpoint.isFolder())
    return bindWeight(checkpoint.getFiles().front(), arg, funcName, rank);
  return makeError(
      checkpoint.getPath() + ": missing tensor '" + arg.weightName +
      "' (argument #" + Twine(arg.index) + ", " + arg.role + ", of @" +
      funcName + "): " +
      (checkpoint.isSharded()
           ? Twine(Checkpoint::kIndexFile) + " does not list it"
           : Twine(Checkpoint::kSingleFile) + " does not hold it"));
}

llvm::Expected<std::vector<HostTensor>>
blockc::bindWeights(const Checkpoint &checkpoint, const ModelSignature &sig,
                    const WeightBindingOptions &options, unsigned rank) {
  std::vector<HostTensor> weights;
  for (const ModelArgument &arg : llvm::drop_begin(sig.args)) {
    llvm::Expected<HostTensor> t =
        bindWeight(checkpoint, arg, sig.funcName, rank);
    if (!t)
      return t.takeError();
    weights.push_back(std::move(*t));
  }
  if (!checkpoint.isFolder() && !options.allowExtraTensors)
    for (const std::string &name : checkpoint.getTensorNames())
      if (llvm::none_of(llvm::drop_begin(sig.args),
                        [&](const ModelArgument &a) {
                          return storedName(checkpoint, a.weightName) == name;
                        }))
        return makeError(checkpoint.getPath() + ": unexpected tensor '" + name +
                         "' binds to no argument of @" + sig.funcName +
                         " (--allow-extra-weights ignores it)");
  return std::move(weights);
}

size_t blockc::countUnusedTensors(const Checkpoint &checkpoint,
                                  const ModelSignature &sig) {
  llvm::StringSet<> bound;
  for (const ModelArgument &arg : llvm::drop_begin(sig.args))
    bound.insert(storedName(checkpoint, arg.weightName));
  return llvm::count_if(checkpoint.getTensorNames(), [&](const std::string &n) {
    return !bound.contains(n);
  });
}

/// The safetensors dtype of a tensor of `type` in a file of prepared
/// weights: "I32" for the int32 words of a quantised weight.
static std::string storedDType(ElementType type, bool quantizedWords) {
  if (quantizedWords)
    return "I32";
  return type == ElementType::BF16  ? "BF16"
         : type == ElementType::F16 ? "F16"
                                    : "F32";
}

llvm::Expected<std::vector<HostTensor>>
blockc::bindPreparedWeights(const SafeTensorsFile &file,
                            const ModelSignature &sig,
                            const PrepareEntry *prepare) {
  const std::string &path = file.getPath();
  std::vector<HostTensor> weights;
  for (const ModelArgument &arg : llvm::drop_begin(sig.args)) {
    std::string key = getBindingKey(arg);
    auto it = file.getEntries().find(key);
    if (it == file.getEntries().end())
      return makeError(path + ": missing tensor '" + key + "' (argument #" +
                       Twine(arg.index) + ", " + arg.role + ", of @" +
                       sig.funcName + ")");
    auto stored =
        file.getMetadata().find((SafeTensorsFile::kPreparedPrefix + key));
    const PreparedWeight *w = prepare ? prepare->find(arg.index) : nullptr;
    if (!w) {
      if (stored != file.getMetadata().end())
        return makeError(path + ": tensor '" + key + "' is prepared (" +
                         stored->second + ") but this compilation reads " +
                         "argument #" + Twine(arg.index) +
                         " unprepared (prepare from the checkpoint again)");
      ModelArgument plain = arg;
      plain.weightName = key; // stored whole under its binding key
      plain.sliceAxis = -1;
      plain.transpose = false;
      // A tensor-parallel rank's file holds its part already.
      plain.shardAxis = -1;
      plain.shardRanges.clear();
      llvm::Expected<HostTensor> t = bindWeight(file, plain, sig.funcName);
      if (!t)
        return t.takeError();
      weights.push_back(std::move(*t));
      continue;
    }
    std::string want = describePreparedLayout(
        *w, getHostElementType(arg.type.getElementType()));
    if (stored == file.getMetadata().end() || stored->second != want)
      return makeError(path + ": tensor '" + key + "' was prepared as " +
                       (stored == file.getMetadata().end()
                            ? std::string("nothing")
                            : stored->second) +
                       ", this compilation needs " + want +
                       " (prepare from the checkpoint again)");
    // Stored exactly as prepared: the layout's shape and element type (I32
    // words for a quantised weight), never converted.
    const SafeTensorsFile::Entry &entry = it->second;
    std::string dtype = storedDType(w->elementType, w->bits != 0);
    if (entry.shape != w->shape || entry.dtype != dtype)
      return makeError(path + ": tensor '" + key + "' is " + entry.dtype + " " +
                       formatShape(entry.shape) + ", its layout says " + dtype +
                       " " + formatShape(w->shape));
    llvm::Expected<HostTensor> t = file.load(key, w->elementType);
    if (!t)
      return t.takeError();
    weights.push_back(std::move(*t));
  }
  return std::move(weights);
}

llvm::Error blockc::savePreparedWeights(llvm::StringRef path,
                                        const ModelSignature &sig,
                                        const PrepareEntry *prepare,
                                        llvm::ArrayRef<HostTensor> weights,
                                        unsigned rank, unsigned ranks) {
  std::vector<SafeTensorsEntry> entries;
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"format", SafeTensorsFile::kPreparedFormat}};
  if (ranks > 1) {
    metadata.push_back({kPreparedRankKey, std::to_string(rank)});
    metadata.push_back({kPreparedRanksKey, std::to_string(ranks)});
  }
  for (auto [arg, t] : llvm::zip_equal(llvm::drop_begin(sig.args), weights)) {
    SafeTensorsEntry e;
    e.name = getBindingKey(arg);
    e.shape = t.shape;
    e.data = t.bytes();
    e.bytes = t.numElements() * t.elementBytes();
    const PreparedWeight *w = prepare ? prepare->find(arg.index) : nullptr;
    e.dtype = storedDType(t.elementType, w && w->bits);
    if (w) {
      metadata.push_back(
          {SafeTensorsFile::kPreparedPrefix + e.name,
           describePreparedLayout(
               *w, getHostElementType(arg.type.getElementType()))});
    }
    entries.push_back(std::move(e));
  }
  if (prepare)
    metadata.push_back({"blockc.prepare_function", prepare->funcName});
  return writeSafeTensors(path, entries, metadata);
}

/// getRankPreparedPath with the rank as text ("<r>" names them all).
static std::string getRankPartPath(llvm::StringRef path, llvm::StringRef rank,
                                   unsigned ranks) {
  llvm::StringRef stem = path;
  stem.consume_back(".safetensors");
  return (stem + ".rank" + rank + "-of-" + Twine(ranks) + ".safetensors").str();
}

std::string blockc::getRankPreparedPath(llvm::StringRef path, unsigned rank,
                                        unsigned ranks) {
  return getRankPartPath(path, std::to_string(rank), ranks);
}

std::string blockc::getRankPreparedPattern(llvm::StringRef path,
                                           unsigned ranks) {
  return getRankPartPath(path, "<r>", ranks);
}

namespace {
/// Whose prepared weights a file holds: rank `rank` of `ranks`, or one
/// process's ({0, 1}).
struct PreparedOwner {
  unsigned rank = 0, ranks = 1;
  std::string describe() const {
    return ranks == 1 ? std::string("one process's prepared weights")
                      : llvm::formatv("rank {0} of {1}'s prepared weights",
                                      rank, ranks)
                            .str();
  }
};
} // namespace

static llvm::Expected<PreparedOwner>
getPreparedOwner(const SafeTensorsFile &file) {
  const llvm::StringMap<std::string> &meta = file.getMetadata();
  auto rankIt = meta.find(kPreparedRankKey);
  auto ranksIt = meta.find(kPreparedRanksKey);
  if (rankIt == meta.end() && ranksIt == meta.end())
    return PreparedOwner();
  PreparedOwner owner;
  if (rankIt == meta.end() || ranksIt == meta.end() ||
      llvm::StringRef(rankIt->second).getAsInteger(10, owner.rank) ||
      llvm::StringRef(ranksIt->second).getAsInteger(10, owner.ranks) ||
      owner.ranks < 2 || owner.rank >= owner.ranks)
    return makeError(file.getPath() + ": metadata '" + kPreparedRankKey +
                     "' and '" + kPreparedRanksKey +
                     "' must give a rank below a rank count of at least 2");
  return owner;
}

/// The name a run saved the prepared file at `path` under: `path` without
/// ".rank<r>-of-<n>" when it is rank r of n's file.
static std::string getSavedName(llvm::StringRef path,
                                const PreparedOwner &owner) {
  std::string suffix =
      getRankPartPath("", std::to_string(owner.rank), owner.ranks);
  if (owner.ranks > 1 && path.ends_with(suffix))
    return (path.drop_back(suffix.size()) + ".safetensors").str();
  return path.str();
}

/// Checks that the file of prepared weights `file` holds the parts of the
/// rank that `request` reads.
static llvm::Error checkPreparedOwner(const SafeTensorsFile &file,
                                      const WeightRequest &request) {
  llvm::Expected<PreparedOwner> held = getPreparedOwner(file);
  if (!held)
    return held.takeError();
  PreparedOwner want{request.rank, request.ranks};
  if (held->rank == want.rank && held->ranks == want.ranks)
    return llvm::Error::success();
  const std::string &path = file.getPath();
  std::string saved = getSavedName(path, *held);
  if (want.ranks == 1)
    return makeError(llvm::formatv(
        "{0}: holds {1} (saved by a --tensor-parallel={2} run), not one "
        "process's; run it as mpirun -np {2} blockc-run --tensor-parallel={2} "
        "--weights={3}, or give the checkpoint",
        path, held->describe(), held->ranks, saved));
  if (held->ranks == 1)
    return makeError(llvm::formatv(
        "{0}: holds {1}, not {2}: save them from a --tensor-parallel={3} run "
        "(--save-prepared writes one file per rank), or give the checkpoint",
        path, held->describe(), want.describe(), want.ranks));
  if (held->ranks != want.ranks)
    return makeError(
        llvm::formatv("{0}: holds {1}, not {2}: save them again from a "
                      "--tensor-parallel={3} run, or give the checkpoint",
                      path, held->describe(), want.describe(), want.ranks));
  return makeError(llvm::formatv(
      "{0}: holds {1}, not {2}: give --weights={3} and each rank reads its "
      "own {4}",
      path, held->describe(), want.describe(), saved,
      getRankPartPath(saved, "<r>", want.ranks)));
}

/// The rank counts of the rank files saved as `path` that are in its
/// folder (p.rank<r>-of-<n>.safetensors), ascending and each once.
static std::vector<unsigned> findSavedRankCounts(llvm::StringRef path) {
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  llvm::StringRef stem = llvm::sys::path::filename(path);
  stem.consume_back(".safetensors");
  std::string prefix = (stem + ".rank").str();
  std::vector<unsigned> counts;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    auto [rank, count] = name.split("-of-");
    unsigned r = 0, n = 0;
    if (rank.consume_front(prefix) && !rank.getAsInteger(10, r) &&
        count.consume_back(".safetensors") && !count.getAsInteger(10, n) &&
        r < n)
      counts.push_back(n);
  }
  llvm::sort(counts);
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

HostTensor blockc::makeRandomWeight(const ModelArgument &arg, uint64_t seed,
                                    unsigned rank) {
  HostTensor t;
  t.shape = arg.fullShape();
  t.allocate(); // huge pages advised
  SplitMix64 rng(seed * 1000003 + arg.index);
  bool isNorm = llvm::StringRef(arg.role).ends_with("norm");
  double scale =
      t.shape.size() == 2 ? 1.0 / std::sqrt(double(t.shape[1])) : 0.1;
  for (float &v : t.data)
    v = isNorm ? 1.0f + 0.1f * rng.uniform()
               : static_cast<float>(scale * rng.uniform());
  // The f32 draws, rounded to the argument's type.
  ElementType type = getHostElementType(arg.type.getElementType());
  if (type != ElementType::F32)
    t = convertElements(t, type);
  // Not `cond ? selectShard(...) : t`, which copies t into storage that
  // allocate() did not advise.
  if (arg.shardAxis >= 0)
    return selectShard(t, arg, rank);
  return t;
}

std::vector<HostTensor> blockc::makeRandomWeights(const ModelSignature &sig,
                                                  uint64_t seed,
                                                  unsigned rank) {
  std::vector<HostTensor> weights;
  for (const ModelArgument &arg : llvm::drop_begin(sig.args))
    weights.push_back(makeRandomWeight(arg, seed, rank));
  return weights;
}

HostTensor blockc::makeRandomTensor(std::vector<int64_t> shape, uint64_t seed) {
  HostTensor t;
  t.shape = std::move(shape);
  t.data.resize(t.numElements());
  SplitMix64 rng(seed);
  for (float &v : t.data)
    v = rng.uniform();
  return t;
}

llvm::Error
InputRequest::checkFileShape(const std::vector<int64_t> &shape) const {
  if ((seqLen && seqLen != shape[1]) || (batch && batch != shape[0]))
    return makeError(file + ": shape " + formatShape(shape) +
                     " disagrees with --batch/--seq-len");
  return llvm::Error::success();
}

llvm::Error InputRequest::checkNotEmpty(const std::vector<int64_t> &shape) {
  if (shape[0] == 0 || shape[1] == 0)
    return makeError("empty input: B and T must be at least 1, got " +
                     formatShape(shape));
  return llvm::Error::success();
}

std::array<int64_t, 2>
InputRequest::randomShape(mlir::RankedTensorType type) const {
  auto dimOr = [&](unsigned i, int64_t given, int64_t fallback) {
    int64_t d = type.getDimSize(i);
    return given ? given : mlir::ShapedType::isDynamic(d) ? fallback : d;
  };
  return {dimOr(0, batch, 1), dimOr(1, seqLen, 16)};
}

llvm::Expected<ModelInput> blockc::loadModelInput(
    const ModelSignature &sig, const InputRequest &request,
    llvm::function_ref<llvm::Error(int64_t, int64_t)> checkSize) {
  if (sig.takesTokenIds())
    return loadTokenInput(sig, request, checkSize);
  mlir::RankedTensorType type = sig.args[0].type;
  int64_t modelDim = type.getDimSize(2);
  ModelInput input;
  std::vector<int64_t> &shape = input.tensor.shape;
  const std::string &file = request.file;
  if (!file.empty()) {
    auto in = readNpy(file);
    if (!in)
      return in.takeError();
    input.tensor = std::move(*in);
    input.label = file;
    if (shape.size() == 2) {
      input.rank2 = true;
      shape.insert(shape.begin(), 1);
    }
    if (shape.size() != 3)
      return makeError(file + ": input must be [B, T, d] or [T, d], got " +
                       formatShape(shape));
    if (shape[2] != modelDim)
      return makeError(file + ": input has d = " + Twine(shape[2]) +
                       ", the model expects d = " + Twine(modelDim));
    if (llvm::Error e = request.checkFileShape(shape))
      return std::move(e);
  } else {
    auto [batch, seqLen] = request.randomShape(type);
    shape = {batch, seqLen, modelDim};
    input.label = "random (seed " + std::to_string(request.seed) + ")";
  }
  if (llvm::Error e = InputRequest::checkNotEmpty(shape))
    return std::move(e);
  if (checkSize)
    if (llvm::Error e = checkSize(shape[0], shape[1]))
      return std::move(e);
  if (file.empty())
    input.tensor = makeRandomTensor(std::move(shape), request.seed);
  // The static dims of the declared input type must match.
  auto dim = [&](unsigned i) {
    int64_t d = type.getDimSize(i);
    return mlir::ShapedType::isDynamic(d) ? std::string("?")
                                          : std::to_string(d);
  };
  for (unsigned i = 0; i < 2; ++i)
    if (dim(i) != "?" && type.getDimSize(i) != input.tensor.shape[i])
      return makeError((file.empty() ? std::string("random input") : file) +
                       ": shape " + formatShape(input.tensor.shape) +
                       " does not match the model's input type [" + dim(0) +
                       ", " + dim(1) + ", " + std::to_string(modelDim) + "]");
  return input;
}

llvm::Expected<RunWeights>
blockc::loadRunWeights(const ModelSignature &sig,
                       const WeightRequest &request) {
  RunWeights weights;
  weights.rank = request.rank;
  weights.ranks = request.ranks;
  if (request.file.empty()) {
    weights.tensors = makeRandomWeights(sig, request.seed, request.rank);
    weights.label = "random (seed " + std::to_string(request.seed) + ")";
    return std::move(weights);
  }
  weights.label = request.file;
  // A tensor-parallel rank reads its own file of prepared weights, saved
  // under the same name (--save-prepared=p.safetensors, --weights=
  // p.safetensors), when there is one.
  if (request.ranks > 1) {
    std::string part =
        getRankPreparedPath(request.file, request.rank, request.ranks);
    if (llvm::sys::fs::exists(part)) {
      auto file = SafeTensorsFile::open(part);
      if (!file)
        return file.takeError();
      if (!file->holdsPreparedWeights())
        return makeError(part +
                         ": not a file of prepared weights (its "
                         "metadata has no \"format\": \"" +
                         SafeTensorsFile::kPreparedFormat + "\")");
      if (!request.preparedRefused.empty())
        return makeError(part + ": " + request.preparedRefused);
      if (llvm::Error e = checkPreparedOwner(*file, request))
        return std::move(e);
      weights.preparedFile = std::move(*file);
      weights.label = getRankPreparedPattern(request.file, request.ranks);
      return std::move(weights);
    }
    // Without the file nor any rank's file it is a missing checkpoint
    // (Checkpoint::open says so).
    std::vector<unsigned> counts;
    if (!llvm::sys::fs::exists(request.file))
      counts = findSavedRankCounts(request.file);
    if (!counts.empty()) {
      std::string message = llvm::formatv(
          "{0}: no such file, nor rank {1} of {2}'s prepared weights {3}",
          request.file, request.rank, request.ranks, part);
      if (llvm::is_contained(counts, request.ranks)) {
        message += llvm::formatv(" (its folder holds other ranks' files of "
                                 "--tensor-parallel={0}, not this rank's)",
                                 request.ranks);
      } else {
        std::string saved;
        for (unsigned n : counts)
          saved += (saved.empty() ? "" : ", ") + std::to_string(n);
        message += llvm::formatv(
            " (its folder holds the prepared weights of --tensor-parallel={0} "
            "runs: save them again from a --tensor-parallel={1} run)",
            saved, request.ranks);
      }
      return makeError(message);
    }
  }
  auto checkpoint = Checkpoint::open(request.file);
  if (!checkpoint)
    return checkpoint.takeError();
  if (!checkpoint->isFolder() &&
      checkpoint->getFiles().front().holdsPreparedWeights()) {
    if (!request.preparedRefused.empty())
      return makeError(request.file + ": " + request.preparedRefused);
    if (llvm::Error e =
            checkPreparedOwner(checkpoint->getFiles().front(), request))
      return std::move(e);
    weights.preparedFile = checkpoint->getFiles().front();
    return std::move(weights);
  }
  auto bound = bindWeights(*checkpoint, sig, request.binding, request.rank);
  if (!bound)
    return bound.takeError();
  weights.tensors = std::move(*bound);
  if (checkpoint->isFolder()) {
    size_t files = checkpoint->getFiles().size();
    size_t unused = countUnusedTensors(*checkpoint, sig);
    weights.label +=
        " (" +
        (checkpoint->isSharded()
             ? std::to_string(files) + (files == 1 ? " shard" : " shards")
             : std::string(Checkpoint::kSingleFile)) +
        ", " + std::to_string(unused) + (unused == 1 ? " tensor" : " tensors") +
        " unused)";
  }
  return std::move(weights);
}
