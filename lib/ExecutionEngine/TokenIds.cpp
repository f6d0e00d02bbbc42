//===- TokenIds.cpp - token id tensors for causal language models ---------===//
//
// See TokenIds.h. The .npy reader accepts what numpy.save writes for int32
// and int64 arrays (format versions 1 to 3, little-endian, C order).
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/TokenIds.h"
#include "blockc/Support/Error.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <limits>

using namespace blockc;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;

int32_t blockc::getTokenId(const HostTensor &ids, int64_t i) {
  int32_t id;
  std::memcpy(&id, &ids.data[i], sizeof(id));
  return id;
}

void blockc::setTokenId(HostTensor &ids, int64_t i, int32_t id) {
  std::memcpy(&ids.data[i], &id, sizeof(id));
}

HostTensor blockc::makeTokenIds(std::vector<int64_t> shape) {
  HostTensor t;
  t.shape = std::move(shape);
  t.data.assign(t.numElements(), 0.0f); // all-zero bits: id 0
  return t;
}

namespace {

Error idsError(StringRef path, const Twine &message) {
  return makeError(path + ": " + message);
}

} // namespace

Expected<HostTensor> blockc::readTokenIdsNpy(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return idsError(path,
                    "cannot open .npy file: " + buffer.getError().message());
  StringRef bytes = (*buffer)->getBuffer();
  Expected<NpyHeader> header = parseNpyHeader(bytes, path);
  if (!header)
    return header.takeError();
  StringRef dtype = header->dtype;
  bool is32 = dtype == "<i4" || dtype == "=i4" || dtype == "i4";
  bool is64 = dtype == "<i8" || dtype == "=i8" || dtype == "i8";
  if (!is32 && !is64)
    return idsError(path, "token ids must be int32 or int64 ('<i4' or "
                          "'<i8'), got '" +
                              dtype + "'");
  if (header->fortranOrder)
    return idsError(path, "token ids must be a C-order array");
  const std::vector<int64_t> &shape = header->shape;
  for (int64_t d : shape)
    if (d > (int64_t(1) << 31))
      return idsError(path, "malformed .npy shape " + formatShape(shape));
  if (shape.size() != 2)
    return idsError(path,
                    "token ids must be [B, T], got " + formatShape(shape));
  uint64_t n = uint64_t(shape[0]) * uint64_t(shape[1]);
  uint64_t eltBytes = is32 ? 4 : 8;
  uint64_t dataStart = header->dataOffset;
  if (bytes.size() - dataStart != n * eltBytes)
    return idsError(path, "data size mismatch: shape " + formatShape(shape) +
                              " needs " + Twine(n * eltBytes) +
                              " bytes, the file holds " +
                              Twine(bytes.size() - dataStart));
  HostTensor ids = makeTokenIds(shape);
  const char *data = bytes.data() + dataStart;
  for (uint64_t i = 0; i < n; ++i) {
    if (is32) {
      setTokenId(ids, i,
                 int32_t(llvm::support::endian::read32le(data + 4 * i)));
      continue;
    }
    auto v = int64_t(llvm::support::endian::read64le(data + 8 * i));
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max())
      return idsError(
          path, "token id " + Twine(v) + " at [" + Twine(i / shape[1]) + ", " +
                    Twine(i % shape[1]) + "] does not fit in int32");
    setTokenId(ids, i, int32_t(v));
  }
  return ids;
}

Error blockc::writeTokenIdsNpy(StringRef path, const HostTensor &ids) {
  // The ids are int32 bit patterns in the f32 storage (getTokenId).
  return writeNpyBytes(
      path, "<i4", ids.shape,
      StringRef(reinterpret_cast<const char *>(ids.data.data()),
                ids.data.size() * sizeof(float)));
}

Error blockc::checkTokenIds(const HostTensor &ids, int64_t vocab,
                            StringRef what) {
  int64_t t = ids.shape.size() == 2 ? ids.shape[1] : 1;
  for (int64_t i = 0, n = ids.numElements(); i < n; ++i) {
    int32_t id = getTokenId(ids, i);
    if (id < 0 || id >= vocab)
      return makeError(what + ": token id " + Twine(id) + " at [" +
                       Twine(i / t) + ", " + Twine(i % t) +
                       "] is outside the vocabulary [0, " + Twine(vocab) + ")");
  }
  return Error::success();
}

HostTensor blockc::sliceTokenIds(const HostTensor &ids, int64_t t0, int64_t n) {
  int64_t b = ids.shape[0], t = ids.shape[1];
  HostTensor out = makeTokenIds({b, n});
  for (int64_t i = 0; i < b; ++i)
    std::copy_n(ids.data.begin() + i * t + t0, n, out.data.begin() + i * n);
  return out;
}

Expected<ModelInput>
blockc::loadTokenInput(const ModelSignature &sig, const InputRequest &request,
                       llvm::function_ref<Error(int64_t, int64_t)> checkSize) {
  mlir::RankedTensorType type = sig.args[0].type;
  ModelInput input;
  const std::string &file = request.file;
  std::vector<int64_t> shape;
  if (!file.empty()) {
    auto ids = readTokenIdsNpy(file);
    if (!ids)
      return ids.takeError();
    input.tensor = std::move(*ids);
    input.label = file;
    shape = input.tensor.shape;
    if (llvm::Error e = request.checkFileShape(shape))
      return std::move(e);
  } else {
    auto [batch, seqLen] = request.randomShape(type);
    shape = {batch, seqLen};
    input.label = "random ids (seed " + std::to_string(request.seed) + ")";
  }
  if (llvm::Error e = InputRequest::checkNotEmpty(shape))
    return std::move(e);
  if (sig.maxPositions && shape[1] > sig.maxPositions)
    return makeError((file.empty() ? std::string("random input") : file) +
                     ": " + Twine(shape[1]) + " tokens exceed the model's " +
                     Twine(sig.maxPositions) + " learned positions");
  if (checkSize)
    if (Error e = checkSize(shape[0], shape[1]))
      return std::move(e);
  if (file.empty()) {
    input.tensor = makeTokenIds(shape);
    SplitMix64 rng(request.seed);
    for (int64_t i = 0, n = input.tensor.numElements(); i < n; ++i)
      setTokenId(input.tensor, i,
                 int32_t(rng.next() % uint64_t(sig.vocabSize)));
  }
  for (unsigned i = 0; i < 2; ++i) {
    int64_t d = type.getDimSize(i);
    if (!mlir::ShapedType::isDynamic(d) && d != shape[i])
      return makeError((file.empty() ? std::string("random input") : file) +
                       ": shape " + formatShape(shape) +
                       " does not match the model's token ids " +
                       formatShape({type.getDimSize(0), type.getDimSize(1)}));
  }
  if (Error e = checkTokenIds(input.tensor, sig.vocabSize,
                              file.empty() ? StringRef("random input")
                                           : StringRef(file)))
    return std::move(e);
  return input;
}
