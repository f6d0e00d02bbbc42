//===- Sampling.h - the next token from a row of logits ---------*- C++ -*-===//
//
// Token selection for generation: greedy (the arg max, the lowest id on
// ties) at temperature 0, otherwise a draw from the softmax of the logits
// divided by the temperature, restricted to the top k ids and then to the
// smallest set of most probable ids whose probability reaches top-p (the
// order Hugging Face's generate applies them in). Draws come from a 64-bit
// Mersenne Twister seeded by the options, turned into doubles bit by bit,
// so a seed gives the same tokens on every machine and standard library.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_SAMPLING_H
#define BLOCKC_EXECUTIONENGINE_SAMPLING_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace blockc {

struct SamplingOptions {
  /// 0 selects greedily; otherwise logits are divided by it.
  double temperature = 0.0;
  /// Keep only the k most probable ids (0: all).
  int64_t topK = 0;
  /// Keep the smallest set of most probable ids whose probability reaches
  /// this (1: all).
  double topP = 1.0;
  uint64_t seed = 0;

  bool isGreedy() const { return temperature == 0.0; }
  /// A clear error naming the option out of range: temperature negative or
  /// not finite, top-k negative, top-p outside (0, 1].
  llvm::Error check() const;
};

class Sampler {
public:
  explicit Sampler(const SamplingOptions &options);

  /// The next token from one row of logits (one entry per vocabulary id).
  /// NaN logits are never chosen unless every logit is NaN (then id 0).
  int32_t next(llvm::ArrayRef<float> logits);

  /// A uniform double in [0, 1) from the generator (53 random bits).
  double uniform();

private:
  SamplingOptions options;
  std::mt19937_64 generator;
  std::vector<std::pair<float, int32_t>> candidates;
};

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_SAMPLING_H
