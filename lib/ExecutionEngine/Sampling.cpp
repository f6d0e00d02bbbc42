//===- Sampling.cpp - the next token from a row of logits -----------------===//

#include "blockc/ExecutionEngine/Sampling.h"
#include "blockc/Support/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace blockc;

static std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

llvm::Error SamplingOptions::check() const {
  if (!std::isfinite(temperature) || temperature < 0.0)
    return makeError("--temperature must be a finite number >= 0 (0 selects "
                     "greedily), got " +
                     number(temperature));
  if (topK < 0)
    return makeError("--top-k must be >= 0 (0 keeps every token), got " +
                     std::to_string(topK));
  if (!(topP > 0.0 && topP <= 1.0))
    return makeError("--top-p must be in (0, 1] (1 keeps every token), got " +
                     number(topP));
  return llvm::Error::success();
}

Sampler::Sampler(const SamplingOptions &options)
    : options(options), generator(options.seed) {}

double Sampler::uniform() {
  return static_cast<double>(generator() >> 11) * 0x1.0p-53;
}

/// Orders candidates by logit, highest first, NaN last, then by id.
static bool ranksBefore(const std::pair<float, int32_t> &a,
                        const std::pair<float, int32_t> &b) {
  bool aNaN = std::isnan(a.first), bNaN = std::isnan(b.first);
  if (aNaN != bNaN)
    return bNaN;
  if (!aNaN && a.first != b.first)
    return a.first > b.first;
  return a.second < b.second;
}

int32_t Sampler::next(llvm::ArrayRef<float> logits) {
  if (logits.empty())
    return 0;
  if (options.isGreedy()) {
    std::pair<float, int32_t> best = {logits[0], 0};
    for (size_t i = 1; i < logits.size(); ++i) {
      std::pair<float, int32_t> c = {logits[i], static_cast<int32_t>(i)};
      if (ranksBefore(c, best))
        best = c;
    }
    return best.second;
  }

  candidates.clear();
  candidates.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    candidates.push_back({logits[i], static_cast<int32_t>(i)});
  size_t keep = candidates.size();
  if (options.topK > 0)
    keep = std::min<size_t>(keep, static_cast<size_t>(options.topK));
  // Only the kept prefix needs ordering.
  std::partial_sort(candidates.begin(), candidates.begin() + keep,
                    candidates.end(), ranksBefore);
  candidates.resize(keep);
  while (keep > 1 && std::isnan(candidates[keep - 1].first))
    --keep;
  candidates.resize(keep);
  if (std::isnan(candidates[0].first))
    return candidates[0].second;

  // Softmax of logit / temperature over the kept ids, in double.
  std::vector<double> probs(keep);
  double top = candidates[0].first / options.temperature, sum = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    probs[i] = std::exp(candidates[i].first / options.temperature - top);
    sum += probs[i];
  }
  for (double &p : probs)
    p /= sum;

  // Nucleus: the smallest prefix whose probability reaches top-p.
  if (options.topP < 1.0) {
    double cumulative = 0.0;
    size_t n = 0;
    while (n < keep) {
      cumulative += probs[n++];
      if (cumulative >= options.topP)
        break;
    }
    keep = n;
    sum = cumulative;
  } else {
    sum = 1.0;
  }

  double u = uniform() * sum, acc = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    acc += probs[i];
    if (u < acc)
      return candidates[i].second;
  }
  return candidates[keep - 1].second;
}
