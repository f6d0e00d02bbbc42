//===- RunSummaryTest.cpp - a run's input, memory check and summary -------===//
//
// The pieces blockc-run gathers and prints, on a hand-made signature: the
// input a run asks for (random defaults from the model's static dims, an
// .npy file given as [T, d], the errors naming what disagrees), the memory
// check, and the summary's lines.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/RunSummary.h"
#include "blockc/ExecutionEngine/MemoryEstimate.h"
#include "blockc/ExecutionEngine/WeightBinding.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

using namespace blockc;

namespace {

class RunSummaryTest : public testing::Test {
protected:
  /// @forward(%x: [B, ?, 4], %w: [4, 4]) with B static when given.
  ModelSignature signature(int64_t batch = mlir::ShapedType::kDynamic) {
    ModelSignature sig;
    sig.funcName = "forward";
    auto f32 = mlir::Float32Type::get(&ctx);
    auto input = mlir::RankedTensorType::get(
        {batch, mlir::ShapedType::kDynamic, 4}, f32);
    for (auto [role, type] :
         {std::pair<const char *, mlir::RankedTensorType>{"input", input},
          {"w", mlir::RankedTensorType::get({4, 4}, f32)}}) {
      ModelArgument arg;
      arg.index = sig.args.size();
      arg.role = role;
      arg.weightName = arg.index ? role : "";
      arg.type = type;
      sig.args.push_back(arg);
    }
    sig.resultType = input;
    return sig;
  }

  std::string errorOf(llvm::Expected<ModelInput> input) {
    if (input) {
      ADD_FAILURE() << "expected an error";
      return "";
    }
    return llvm::toString(input.takeError());
  }

  mlir::MLIRContext ctx;
};

TEST_F(RunSummaryTest, RandomInputDefaults) {
  auto input = loadModelInput(signature(), {"", 7, 0, 0});
  ASSERT_TRUE(static_cast<bool>(input)) << llvm::toString(input.takeError());
  EXPECT_EQ(input->tensor.shape, (std::vector<int64_t>{1, 16, 4}));
  EXPECT_EQ(input->label, "random (seed 7)");
  EXPECT_FALSE(input->rank2);
  // A static batch is the default; --batch and --seq-len win.
  input = loadModelInput(signature(3), {"", 0, 0, 5});
  ASSERT_TRUE(static_cast<bool>(input));
  EXPECT_EQ(input->tensor.shape, (std::vector<int64_t>{3, 5, 4}));
  EXPECT_EQ(errorOf(loadModelInput(signature(3), {"", 0, 2, 5})),
            "random input: shape [2, 5, 4] does not match the model's input "
            "type [3, ?, 4]");
}

TEST_F(RunSummaryTest, SizeIsCheckedBeforeTheInputIsMade) {
  int64_t seen = 0;
  auto input = loadModelInput(signature(), {"", 0, 2, 3},
                              [&](int64_t b, int64_t t) -> llvm::Error {
                                seen = b * t;
                                return llvm::createStringError(
                                    llvm::inconvertibleErrorCode(), "too big");
                              });
  EXPECT_EQ(errorOf(std::move(input)), "too big");
  EXPECT_EQ(seen, 6);
  // A run far larger than any machine's memory is refused with its parts.
  llvm::Error e = checkMemoryFits(signature(), int64_t(1) << 40, 1 << 20, 0, 0);
  std::string message = llvm::toString(std::move(e));
  EXPECT_NE(message.find("this run needs about"), std::string::npos) << message;
  EXPECT_NE(message.find("use a smaller --batch/--seq-len"), std::string::npos);
  EXPECT_FALSE(static_cast<bool>(checkMemoryFits(signature(), 1, 1, 0, 0)));
}

TEST_F(RunSummaryTest, NpyInputOfRankTwo) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("input", "npy", path));
  HostTensor x = makeRandomTensor({3, 4}, 1);
  ASSERT_FALSE(static_cast<bool>(writeNpy(path, x)));
  auto input = loadModelInput(signature(), {std::string(path), 0, 0, 0});
  ASSERT_TRUE(static_cast<bool>(input)) << llvm::toString(input.takeError());
  EXPECT_TRUE(input->rank2);
  EXPECT_EQ(input->tensor.shape, (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(input->label, std::string(path));
  EXPECT_EQ(errorOf(loadModelInput(signature(), {std::string(path), 0, 0, 2})),
            std::string(path) + ": shape [1, 3, 4] disagrees with " +
                "--batch/--seq-len");
  llvm::sys::fs::remove(path);
}

TEST_F(RunSummaryTest, RandomWeights) {
  auto weights = loadRunWeights(signature(), {"", 3, 0, {}, ""});
  ASSERT_TRUE(static_cast<bool>(weights))
      << llvm::toString(weights.takeError());
  EXPECT_EQ(weights->label, "random (seed 3)");
  ASSERT_EQ(weights->tensors.size(), 1u);
  EXPECT_EQ(weights->tensors[0].shape, (std::vector<int64_t>{4, 4}));
  EXPECT_FALSE(weights->preparedFile.has_value());
  WeightRequest request;
  request.file = "/nonexistent.safetensors";
  auto missing = loadRunWeights(signature(), request);
  EXPECT_FALSE(static_cast<bool>(missing));
  llvm::consumeError(missing.takeError());
}

TEST_F(RunSummaryTest, SummaryLines) {
  EXPECT_EQ(formatSeconds(12.5e-6), "12.5 us");
  EXPECT_EQ(formatSeconds(0.0045), "4.500 ms");
  EXPECT_EQ(formatSeconds(2.0), "2.000 s");
  EXPECT_EQ(medianOf({3, 1, 2}), 2);
  EXPECT_EQ(medianOf({4, 1, 2, 3}), 2.5);

  HostTensor t;
  t.shape = {3};
  t.data = {1.0f, -2.0f, 0.5f};
  Checksum c = Checksum::of(t);
  EXPECT_EQ(c.sum, -0.5);
  EXPECT_EQ(c.absSum, 3.5);
  EXPECT_TRUE(c.finite);

  RunHead head;
  head.model = "m.mlir";
  head.entry = "forward";
  head.target = "cpu";
  head.threads = 2;
  head.inputShape = {1, 3, 4};
  head.inputLabel = "random (seed 0)";
  head.numWeights = 1;
  head.numParams = 16;
  head.weightsLabel = "w.safetensors";
  head.weightsHeld = describeHeld({makeRandomTensor({4, 4}, 0)});
  std::string text;
  llvm::raw_string_ostream os(text);
  printRunHead(os, head, signature());
  printChecksum(os, c);
  printDecodeSteps(os, {0.5, 0.25}, 2);
  EXPECT_EQ(text,
            "blockc-run: m.mlir @forward (target cpu, threads 2)\n"
            "  input    [1, 3, 4]  random (seed 0)\n"
            "  weights  1 tensors, 16 parameters  w.safetensors  (0.0 MiB "
            "f32)\n"
            "  checksum sum=-5.000000e-01 abs_sum=3.500000e+00\n"
            "  decode   2 steps of 1 token: median 375.000 ms, p90 500.000 "
            "ms, 5.3 tokens/s (batch 2)\n");
}

} // namespace
