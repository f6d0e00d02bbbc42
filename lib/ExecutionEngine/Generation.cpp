//===- Generation.cpp - token generation around a decode step -------------===//

#include "blockc/ExecutionEngine/Generation.h"
#include "blockc/Support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace blockc;

llvm::Expected<GenerationResult> blockc::generateTokens(
    const DecodeStepFunction &step, llvm::ArrayRef<int32_t> prompt,
    int64_t batch, int64_t promptLen, int64_t vocab,
    const GenerationOptions &options,
    const std::function<void(llvm::ArrayRef<int32_t>)> &onTokens) {
  if (batch < 1 || promptLen < 1 ||
      static_cast<int64_t>(prompt.size()) != batch * promptLen)
    return makeError(llvm::formatv("generation needs a prompt of at least one "
                                   "token per sequence, got {0} ids for "
                                   "[{1}, {2}]",
                                   prompt.size(), batch, promptLen));
  if (vocab < 1)
    return makeError("generation needs logits over at least one token");
  if (llvm::Error e = options.sampling.check())
    return std::move(e);

  // One generator per sequence (seeds spread by the golden ratio), so a
  // sequence's draws do not depend on the other rows of its batch.
  std::vector<Sampler> samplers;
  for (int64_t b = 0; b < batch; ++b) {
    SamplingOptions sampling = options.sampling;
    sampling.seed += static_cast<uint64_t>(b) * 0x9E3779B97F4A7C15ull;
    samplers.emplace_back(sampling);
  }
  GenerationResult result;
  result.batch = batch;
  std::vector<std::vector<int32_t>> rows(batch);
  std::vector<bool> stopped(batch, false);
  std::vector<int32_t> ids(prompt.begin(), prompt.end()), next(batch);
  std::vector<float> logits;
  int64_t n = promptLen;
  for (int64_t i = 0; i < options.maxNewTokens; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error e = step(ids, n, logits))
      return std::move(e);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (i == 0)
      result.prefillSeconds = seconds;
    else
      result.stepSeconds.push_back(seconds);
    if (static_cast<int64_t>(logits.size()) != batch * n * vocab)
      return makeError(llvm::formatv("the model returned {0} logits, not "
                                     "[{1}, {2}, {3}]",
                                     logits.size(), batch, n, vocab));
    // A stopped sequence repeats its stop token without drawing.
    for (int64_t b = 0; b < batch; ++b) {
      if (stopped[b]) {
        next[b] = rows[b].back();
        continue;
      }
      llvm::ArrayRef<float> row(logits.data() + ((b * n) + n - 1) * vocab,
                                vocab);
      next[b] = samplers[b].next(row);
      if (llvm::is_contained(options.stopTokens, next[b]))
        stopped[b] = true;
    }
    for (int64_t b = 0; b < batch; ++b)
      rows[b].push_back(next[b]);
    ++result.generated;
    if (onTokens)
      onTokens(next);
    if (llvm::all_of(stopped, [](bool s) { return s; }))
      break;
    ids = next;
    n = 1;
  }
  result.tokens.reserve(batch * result.generated);
  for (const std::vector<int32_t> &row : rows)
    llvm::append_range(result.tokens, row);
  return std::move(result);
}
