//===- Generation.h - token generation around a decode step -----*- C++ -*-===//
//
// Generation of a causal language model: one prefill of the prompt's ids,
// then one single-token step per new token, each token chosen from the
// last position's logits by a Sampler. The model is reached through one
// function (a step of the KV-cached decode entry: DecodeSession in
// blockc-run), so the loop, the stop tokens and the timing are the same on
// every target and testable without a compiled model.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_GENERATION_H
#define BLOCKC_EXECUTIONENGINE_GENERATION_H

#include "blockc/ExecutionEngine/Sampling.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace blockc {

/// Runs `ids` (row-major [batch, n]: n new tokens of every sequence) at the
/// model's current position, advancing it by n, and stores the logits of
/// the n positions in `logits` (row-major [batch, n, vocab]).
using DecodeStepFunction = std::function<llvm::Error(
    llvm::ArrayRef<int32_t> ids, int64_t n, std::vector<float> &logits)>;

struct GenerationOptions {
  /// Tokens to generate per sequence (at most).
  int64_t maxNewTokens = 0;
  SamplingOptions sampling;
  /// A sequence ends once it has generated one of these; generation ends
  /// when every sequence has.
  std::vector<int32_t> stopTokens;
};

struct GenerationResult {
  /// Row-major [batch, generated]: a sequence that stopped early repeats
  /// its stop token to the end of its row.
  std::vector<int32_t> tokens;
  int64_t batch = 0, generated = 0;
  /// The prefill's time and each single-token step's.
  double prefillSeconds = 0;
  std::vector<double> stepSeconds;

  int32_t token(int64_t b, int64_t i) const {
    return tokens[b * generated + i];
  }
};

/// Generates up to options.maxNewTokens tokens after `prompt` (row-major
/// [batch, promptLen] ids) with `step` (a fresh model: position 0) and
/// `vocab` logits per position. `onTokens`, when set, is called with each
/// step's new token of every sequence as soon as it is chosen. Logits the
/// model returns are checked for size; a step's error ends generation.
/// Sequence b samples with its own generator, seeded with the options'
/// seed + b * 0x9E3779B97F4A7C15, so its tokens do not depend on the
/// other sequences of the batch.
llvm::Expected<GenerationResult> generateTokens(
    const DecodeStepFunction &step, llvm::ArrayRef<int32_t> prompt,
    int64_t batch, int64_t promptLen, int64_t vocab,
    const GenerationOptions &options,
    const std::function<void(llvm::ArrayRef<int32_t>)> &onTokens = nullptr);

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_GENERATION_H
