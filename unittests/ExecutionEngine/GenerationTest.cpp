//===- GenerationTest.cpp - the generation loop on a model made of rules --===//
//
// generateTokens on stand-in models whose logits follow a rule (the next
// token is the last one plus one; or a flat distribution), so every token
// is known: the prefill sees the whole prompt and every later step one
// token, stop tokens end a sequence and pad its row, a seed repeats the
// draws per sequence, and errors name what went wrong.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/Generation.h"

#include "gtest/gtest.h"

#include <vector>

using namespace blockc;

namespace {

constexpr int64_t kVocab = 10;

/// A model whose logits at a position favour (id at that position + 1) mod
/// the vocabulary, recording the calls it gets.
struct CountingModel {
  std::vector<int64_t> calls; // n of each call
  std::vector<int32_t> seen;  // every id it was fed

  DecodeStepFunction function() {
    return [this](llvm::ArrayRef<int32_t> ids, int64_t n,
                  std::vector<float> &logits) -> llvm::Error {
      calls.push_back(n);
      seen.insert(seen.end(), ids.begin(), ids.end());
      logits.assign(ids.size() * kVocab, 0.0f);
      for (size_t i = 0; i < ids.size(); ++i)
        logits[i * kVocab + (ids[i] + 1) % kVocab] = 5.0f;
      return llvm::Error::success();
    };
  }
};

TEST(GenerationTest, PrefillThenOneTokenPerStep) {
  CountingModel model;
  GenerationOptions options;
  options.maxNewTokens = 4;
  std::vector<std::vector<int32_t>> streamed;
  auto result = generateTokens(
      model.function(), {3, 4, 5, 7, 8, 1}, /*batch=*/2, /*promptLen=*/3,
      kVocab, options,
      [&](llvm::ArrayRef<int32_t> t) { streamed.emplace_back(t.vec()); });
  ASSERT_TRUE(static_cast<bool>(result)) << toString(result.takeError());
  EXPECT_EQ(result->generated, 4);
  EXPECT_EQ(result->tokens, (std::vector<int32_t>{6, 7, 8, 9, 2, 3, 4, 5}));
  EXPECT_EQ(model.calls, (std::vector<int64_t>{3, 1, 1, 1}));
  // The prompt, then each step's tokens (the last is never fed back).
  EXPECT_EQ(model.seen,
            (std::vector<int32_t>{3, 4, 5, 7, 8, 1, 6, 2, 7, 3, 8, 4}));
  EXPECT_EQ(streamed, (std::vector<std::vector<int32_t>>{
                          {6, 2}, {7, 3}, {8, 4}, {9, 5}}));
  EXPECT_EQ(result->stepSeconds.size(), 3u);
}

TEST(GenerationTest, StopTokensEndSequencesAndPadTheirRows) {
  CountingModel model;
  GenerationOptions options;
  options.maxNewTokens = 8;
  options.stopTokens = {9, 4};
  auto result = generateTokens(model.function(), {6, 1}, 2, 1, kVocab, options);
  ASSERT_TRUE(static_cast<bool>(result)) << toString(result.takeError());
  // Row 0: 7 8 9 (stops); row 1: 2 3 4 (stops at the same step).
  EXPECT_EQ(result->generated, 3);
  EXPECT_EQ(result->tokens, (std::vector<int32_t>{7, 8, 9, 2, 3, 4}));

  options.stopTokens = {8};
  CountingModel again;
  result = generateTokens(again.function(), {6, 1}, 2, 1, kVocab, options);
  ASSERT_TRUE(static_cast<bool>(result)) << toString(result.takeError());
  // Row 0 stops at 8 and repeats it; row 1 runs on to its 8.
  EXPECT_EQ(result->generated, 7);
  EXPECT_EQ(result->token(0, 1), 8);
  EXPECT_EQ(result->token(0, 6), 8);
  EXPECT_EQ(result->token(1, 6), 8);
  EXPECT_EQ(result->token(1, 5), 7);
}

TEST(GenerationTest, ASeedRepeatsEachSequencesDraws) {
  auto flat = [](llvm::ArrayRef<int32_t> ids, int64_t,
                 std::vector<float> &logits) -> llvm::Error {
    logits.assign(ids.size() * kVocab, 0.0f);
    return llvm::Error::success();
  };
  GenerationOptions options;
  options.maxNewTokens = 24;
  options.sampling = {/*temperature=*/1.0, 0, 1.0, /*seed=*/5};
  auto one = generateTokens(flat, {1}, 1, 1, kVocab, options);
  auto two = generateTokens(flat, {1, 2}, 2, 1, kVocab, options);
  auto again = generateTokens(flat, {1, 2}, 2, 1, kVocab, options);
  ASSERT_TRUE(one && two && again);
  EXPECT_EQ(two->tokens, again->tokens);
  // Sequence 0 draws the same with or without a second sequence, which
  // draws differently.
  std::vector<int32_t> row0(two->tokens.begin(), two->tokens.begin() + 24);
  std::vector<int32_t> row1(two->tokens.begin() + 24, two->tokens.end());
  EXPECT_EQ(row0, one->tokens);
  EXPECT_NE(row0, row1);
  options.sampling.seed = 6;
  auto other = generateTokens(flat, {1}, 1, 1, kVocab, options);
  ASSERT_TRUE(static_cast<bool>(other));
  EXPECT_NE(other->tokens, one->tokens);
}

TEST(GenerationTest, ErrorsNameWhatIsWrong) {
  CountingModel model;
  GenerationOptions options;
  options.maxNewTokens = 2;
  auto empty = generateTokens(model.function(), {}, 1, 0, kVocab, options);
  ASSERT_FALSE(static_cast<bool>(empty));
  EXPECT_EQ(toString(empty.takeError()),
            "generation needs a prompt of at least one token per sequence, "
            "got 0 ids for [1, 0]");

  auto shortLogits = [](llvm::ArrayRef<int32_t> ids, int64_t,
                        std::vector<float> &logits) -> llvm::Error {
    logits.assign(3, 0.0f);
    return llvm::Error::success();
  };
  auto bad = generateTokens(shortLogits, {1, 2}, 1, 2, kVocab, options);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(toString(bad.takeError()),
            "the model returned 3 logits, not [1, 2, 10]");

  options.sampling.topP = 2.0;
  auto badOption = generateTokens(model.function(), {1}, 1, 1, kVocab, options);
  ASSERT_FALSE(static_cast<bool>(badOption));
  EXPECT_EQ(toString(badOption.takeError()),
            "--top-p must be in (0, 1] (1 keeps every token), got 2");
}

} // namespace
