//===- MemoryEstimateTest.cpp - the host memory a run needs ---------------===//
//
// estimateMemory on a hand-made signature whose figures are easy to count.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/MemoryEstimate.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace blockc;

namespace {

/// An argument with its index, role, weight name and type, the rest as a
/// default ModelArgument has it.
ModelArgument argument(unsigned index, std::string role, std::string name,
                       mlir::RankedTensorType type) {
  ModelArgument a;
  a.index = index;
  a.role = std::move(role);
  a.weightName = std::move(name);
  a.type = type;
  return a;
}

TEST(MemoryEstimateTest, CountsEveryKind) {
  mlir::MLIRContext ctx;
  auto f32 = mlir::Float32Type::get(&ctx);
  ModelSignature sig;
  sig.funcName = "forward";
  auto input = mlir::RankedTensorType::get(
      {mlir::ShapedType::kDynamic, mlir::ShapedType::kDynamic, 16}, f32);
  sig.args.push_back(argument(0, "input", "", input));
  sig.args.push_back(
      argument(1, "w_q", "q", mlir::RankedTensorType::get({16, 16}, f32)));
  sig.args.push_back(
      argument(2, "attn_norm", "g", mlir::RankedTensorType::get({16}, f32)));
  // d = 16, H = 4, H_kv = 2, D = 4, d_ff = 32: 6 * 16 + 2 * 6 * 4 + 3 * 32
  // = 240 floats per token, more than 8 d = 128.
  sig.blocks.push_back({16, 4, 2, 4, 32, true});
  sig.blocks.push_back({16, 4, 2, 4, 8, true});

  // 2 sequences of 3 tokens plus 5 steps, caches of 10 tokens.
  MemoryEstimate m = estimateMemory(sig, 2, 3, 5, 10);
  EXPECT_EQ(m.weights, (256 + 16) * 4.0);
  EXPECT_EQ(m.activations, 2 * 8 * 240 * 4.0);
  EXPECT_EQ(m.io, 2 * (2 * 8 * 16) * 4.0);
  // K and V of 2 layers: 2 * B * L * H_kv * D floats each.
  EXPECT_EQ(m.kvCaches, 2 * (2 * 2 * 10 * 2 * 4) * 4.0);
  EXPECT_EQ(m.total(), m.weights + m.activations + m.io + m.kvCaches);

  // Without caches and blocks: no KV bytes, at least 8 d per token.
  sig.blocks.clear();
  m = estimateMemory(sig, 1, 4, 0, 0);
  EXPECT_EQ(m.kvCaches, 0.0);
  EXPECT_EQ(m.activations, 4 * 8 * 16 * 4.0);
}

TEST(MemoryEstimateTest, AvailableMemoryIsKnownOnLinux) {
#ifdef __linux__
  EXPECT_GT(getAvailableMemory(), 0.0);
#endif
}

} // namespace
