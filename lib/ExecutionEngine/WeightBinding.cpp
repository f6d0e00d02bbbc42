//===- WeightBinding.cpp - bind safetensors tensors to model arguments ----===//
//
// See WeightBinding.h. The error messages are the ones blockc-run prints
// (test/blockc-run checks them).
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/WeightBinding.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <utility>

using namespace blockc;
using llvm::Twine;

namespace {
llvm::Error makeError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

llvm::Expected<HostTensor> blockc::bindWeight(const SafeTensorsFile &file,
                                              const ModelArgument &arg,
                                              llvm::StringRef funcName) {
  const std::string &path = file.getPath();
  auto it = file.getEntries().find(arg.weightName);
  if (it == file.getEntries().end())
    return makeError(path + ": missing tensor '" + arg.weightName +
                     "' (argument #" + Twine(arg.index) + ", " + arg.role +
                     ", of @" + funcName + ")");
  const std::vector<int64_t> &stored = it->second.shape;
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
  if (view != expected)
    return makeError(path + ": tensor '" + arg.weightName + "' has shape " +
                     formatShape(stored) +
                     (how.empty() ? "" : " (" + formatShape(view) + how + ")") +
                     ", the model expects " + formatShape(expected));
  // In the argument's element type: a bf16 or f16 tensor for a model of
  // that type is kept as it is stored (no widened copy).
  llvm::Expected<HostTensor> t =
      file.load(arg.weightName, getHostElementType(arg.type.getElementType()));
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
                    const WeightBindingOptions &options) {
  std::vector<HostTensor> weights;
  llvm::StringSet<> bound;
  for (const ModelArgument &arg : llvm::drop_begin(sig.args)) {
    bound.insert(arg.weightName);
    llvm::Expected<HostTensor> t = bindWeight(file, arg, sig.funcName);
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
                                        llvm::ArrayRef<HostTensor> weights) {
  std::vector<SafeTensorsEntry> entries;
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"format", SafeTensorsFile::kPreparedFormat}};
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

HostTensor blockc::makeRandomWeight(const ModelArgument &arg, uint64_t seed) {
  HostTensor t;
  t.shape.assign(arg.type.getShape().begin(), arg.type.getShape().end());
  t.data.resize(t.numElements());
  SplitMix64 rng(seed * 1000003 + arg.index);
  bool isNorm = llvm::StringRef(arg.role).ends_with("norm");
  double scale =
      t.shape.size() == 2 ? 1.0 / std::sqrt(double(t.shape[1])) : 0.1;
  for (float &v : t.data)
    v = isNorm ? 1.0f + 0.1f * rng.uniform()
               : static_cast<float>(scale * rng.uniform());
  // The f32 draws, rounded to the argument's type.
  ElementType type = getHostElementType(arg.type.getElementType());
  return type == ElementType::F32 ? t : convertElements(t, type);
}

std::vector<HostTensor> blockc::makeRandomWeights(const ModelSignature &sig,
                                                  uint64_t seed) {
  std::vector<HostTensor> weights;
  for (const ModelArgument &arg : llvm::drop_begin(sig.args))
    weights.push_back(makeRandomWeight(arg, seed));
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
