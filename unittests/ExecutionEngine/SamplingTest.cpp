//===- SamplingTest.cpp - greedy, temperature, top-k and top-p ------------===//
//
// The sampler against what each option means: the arg max at temperature
// 0, draws that follow the softmax (frequencies over many draws), only ids
// of the top k / the nucleus ever drawn, and a seed that repeats a draw.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/Sampling.h"

#include "llvm/Support/Error.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <map>
#include <vector>

using namespace blockc;

namespace {

std::string errorOf(const SamplingOptions &options) {
  llvm::Error error = options.check();
  return error ? llvm::toString(std::move(error)) : "";
}

std::vector<double> frequencies(Sampler &sampler,
                                const std::vector<float> &logits, int draws) {
  std::vector<double> counts(logits.size(), 0.0);
  for (int i = 0; i < draws; ++i)
    counts[sampler.next(logits)] += 1.0;
  for (double &c : counts)
    c /= draws;
  return counts;
}

TEST(SamplingTest, GreedyIsTheArgMaxWithTheLowestIdOnTies) {
  Sampler greedy(SamplingOptions{});
  EXPECT_EQ(greedy.next({0.5f, 2.0f, -1.0f, 1.5f}), 1);
  EXPECT_EQ(greedy.next({3.0f, 1.0f, 3.0f}), 0);
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(greedy.next({nan, -5.0f, nan, -4.0f}), 3);
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(greedy.next({-inf, -inf, 0.0f}), 2);
}

TEST(SamplingTest, DrawsFollowTheSoftmaxOfLogitsOverTemperature) {
  std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  Sampler sampler({/*temperature=*/1.0, /*topK=*/0, /*topP=*/1.0, 7});
  std::vector<double> f = frequencies(sampler, logits, 40000);
  EXPECT_NEAR(f[0], 0.5, 0.015);
  EXPECT_NEAR(f[1], 0.3, 0.015);
  EXPECT_NEAR(f[2], 0.2, 0.015);

  // Temperature 2 takes the square root of the odds: 1 : 3 -> 1 : sqrt 3.
  Sampler hot({2.0, 0, 1.0, 8});
  std::vector<double> g = frequencies(hot, {0.0f, std::log(3.0f)}, 40000);
  EXPECT_NEAR(g[1], std::sqrt(3.0) / (1.0 + std::sqrt(3.0)), 0.015);
}

TEST(SamplingTest, TopKDrawsOnlyTheKMostProbable) {
  std::vector<float> logits = {0.1f, 2.0f, 0.3f, 1.9f, 1.8f, -3.0f};
  Sampler sampler({1.0, 3, 1.0, 11});
  std::vector<double> f = frequencies(sampler, logits, 20000);
  EXPECT_EQ(f[0] + f[2] + f[5], 0.0);
  // Renormalised over {1, 3, 4}.
  double z = std::exp(2.0) + std::exp(1.9) + std::exp(1.8);
  EXPECT_NEAR(f[1], std::exp(2.0) / z, 0.015);
  EXPECT_NEAR(f[4], std::exp(1.8) / z, 0.015);

  Sampler one({5.0, 1, 1.0, 12});
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(one.next(logits), 1);
}

TEST(SamplingTest, TopPKeepsTheSmallestNucleus) {
  // Probabilities 0.5, 0.3, 0.15, 0.05: top-p 0.75 keeps {0, 1}, 0.8 too
  // (0.5 + 0.3 reaches it), 0.81 adds id 2.
  std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f),
                               std::log(0.05f)};
  Sampler p75({1.0, 0, 0.75, 3});
  std::vector<double> f = frequencies(p75, logits, 20000);
  EXPECT_EQ(f[2] + f[3], 0.0);
  EXPECT_NEAR(f[0], 0.5 / 0.8, 0.015);
  Sampler p81({1.0, 0, 0.81, 4});
  std::vector<double> g = frequencies(p81, logits, 20000);
  EXPECT_EQ(g[3], 0.0);
  EXPECT_GT(g[2], 0.1);
  Sampler tiny({1.0, 0, 1e-6, 5});
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(tiny.next(logits), 0);
}

TEST(SamplingTest, ASeedRepeatsItsDraws) {
  std::vector<float> flat(50, 0.0f);
  auto draw = [&](uint64_t seed) {
    Sampler sampler({0.8, 0, 0.95, seed});
    std::vector<int32_t> ids;
    for (int i = 0; i < 64; ++i)
      ids.push_back(sampler.next(flat));
    return ids;
  };
  EXPECT_EQ(draw(42), draw(42));
  EXPECT_NE(draw(42), draw(43));
  // The generator is the standard 64-bit Mersenne Twister: its 10000th
  // output for the default seed is fixed by the C++ standard.
  std::mt19937_64 reference;
  reference.discard(9999);
  EXPECT_EQ(reference(), 9981545732273789042ull);
}

TEST(SamplingTest, OptionsOutOfRangeNameTheOption) {
  EXPECT_EQ(errorOf({}), "");
  EXPECT_EQ(errorOf({-0.5, 0, 1.0, 0}),
            "--temperature must be a finite number >= 0 (0 selects "
            "greedily), got -0.5");
  EXPECT_EQ(errorOf({1.0, -2, 1.0, 0}),
            "--top-k must be >= 0 (0 keeps every token), got -2");
  EXPECT_EQ(errorOf({1.0, 0, 0.0, 0}),
            "--top-p must be in (0, 1] (1 keeps every token), got 0");
  EXPECT_EQ(errorOf({1.0, 0, 1.5, 0}),
            "--top-p must be in (0, 1] (1 keeps every token), got 1.5");
}

} // namespace
