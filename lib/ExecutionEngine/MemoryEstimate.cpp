//===- MemoryEstimate.cpp - the host memory a run needs -------------------===//
//
// See MemoryEstimate.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/MemoryEstimate.h"
#include "blockc/Support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

using namespace blockc;

MemoryEstimate blockc::estimateMemory(const ModelSignature &sig, int64_t b,
                                      int64_t t, int64_t steps,
                                      int64_t cacheLen) {
  MemoryEstimate m;
  // Weights and KV caches are held in the model's type (bf16/f16: 2 bytes);
  // activations inside the block are f32 buffers.
  for (const ModelArgument &arg : llvm::drop_begin(sig.args)) {
    double n = arg.type.getElementType().getIntOrFloatBitWidth() / 8;
    for (int64_t d : arg.type.getShape())
      n *= double(d);
    m.weights += n;
  }
  double tokens = double(b) * double(t + steps);
  double d = double(sig.getModelDim());
  double kvBytes = sig.getModelElementType().getIntOrFloatBitWidth() / 8;
  double act = 8 * d;
  for (const BlockConfig &c : sig.blocks) {
    act = std::max(act, 6.0 * c.modelDim +
                            2.0 * (c.numHeads + c.numKVHeads) * c.headDim +
                            3.0 * c.dff);
    m.kvCaches +=
        2.0 * double(b) * double(cacheLen) * c.numKVHeads * c.headDim * kvBytes;
  }
  m.activations = tokens * act * 4;
  // A causal language model reads ids and writes f32 logits.
  m.io = sig.takesTokenIds() ? tokens * (1 + double(sig.vocabSize)) * 4
                             : 2 * tokens * d * 4;
  return m;
}

double blockc::getAvailableMemory() {
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

llvm::Error blockc::checkMemoryFits(const ModelSignature &signature,
                                    int64_t batch, int64_t seqLen,
                                    int64_t steps, int64_t cacheLen) {
  MemoryEstimate m = estimateMemory(signature, batch, seqLen, steps, cacheLen);
  double avail = getAvailableMemory();
  if (avail <= 0 || m.total() <= avail)
    return llvm::Error::success();
  auto gib = [](double bytes) {
    return llvm::formatv("{0:F1} GiB", bytes / (1024.0 * 1024 * 1024)).str();
  };
  return makeError(
      "this run needs about " + gib(m.total()) + " (weights " + gib(m.weights) +
      ", activations " + gib(m.activations) + ", input and output " +
      gib(m.io) +
      (m.kvCaches > 0 ? ", KV caches " + gib(m.kvCaches) : std::string()) +
      "), more than the " + gib(avail) +
      " of memory available; use a smaller --batch/--seq-len");
}
