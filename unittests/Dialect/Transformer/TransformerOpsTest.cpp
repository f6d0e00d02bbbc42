//===- TransformerOpsTest.cpp - transformer op builders and shapes --------===//
//
// Unit tests for the C++ side of the dialect: shape inference helpers, the
// inferring builders and the verifiers reached from C++.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/InitAllDialects.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace blockc::transformer;

namespace {

class TransformerOpsTest : public ::testing::Test {
protected:
  TransformerOpsTest() {
    DialectRegistry registry;
    blockc::registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, Float32Type::get(&ctx));
  }

  MLIRContext ctx;
};

constexpr int64_t kDyn = ShapedType::kDynamic;

TEST_F(TransformerOpsTest, FormatShape) {
  EXPECT_EQ(formatShape({2, kDyn, 64}), "[2, ?, 64]");
  EXPECT_EQ(formatShape({}), "[]");
}

TEST_F(TransformerOpsTest, InferLinearResultType) {
  auto r =
      inferLinearResultType(tensor({kDyn, kDyn, 4096}), tensor({11008, 4096}));
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(*r, tensor({kDyn, kDyn, 11008}));
  // Rank-1 input (a single token) keeps rank 1.
  EXPECT_EQ(*inferLinearResultType(tensor({64}), tensor({32, 64})),
            tensor({32}));
  EXPECT_TRUE(failed(inferLinearResultType(tensor({8, 64}), tensor({64}))));
}

TEST_F(TransformerOpsTest, InferSDPAResultType) {
  auto r = inferSDPAResultType(tensor({2, kDyn, 32, 128}),
                               tensor({2, kDyn, 8, 128}));
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(*r, tensor({2, kDyn, 32, 128}));
  EXPECT_TRUE(
      failed(inferSDPAResultType(tensor({2, 3, 4}), tensor({2, 3, 4, 5}))));
}

TEST_F(TransformerOpsTest, AttentionShapesGQA) {
  // Mistral-7B: d = 4096, 32 heads, 8 kv heads, head dim 128.
  AttentionShapes s = getAttentionShapes(4096, 32, 8, 128);
  EXPECT_EQ(s.wq, (SmallVector<int64_t, 2>{4096, 4096}));
  EXPECT_EQ(s.wk, (SmallVector<int64_t, 2>{1024, 4096}));
  EXPECT_EQ(s.wv, (SmallVector<int64_t, 2>{1024, 4096}));
  EXPECT_EQ(s.wo, (SmallVector<int64_t, 2>{4096, 4096}));
  EXPECT_EQ(s.bk, (SmallVector<int64_t, 1>{1024}));
  // Parameters of QKVO: d^2 + 2 d d/4 + d^2 = 2.5 d^2 for d_kv = d/4.
  int64_t params = s.wq[0] * s.wq[1] + s.wk[0] * s.wk[1] + s.wv[0] * s.wv[1] +
                   s.wo[0] * s.wo[1];
  EXPECT_EQ(params, 4096LL * 4096 * 5 / 2);
}

TEST_F(TransformerOpsTest, LinearBuilderInfersResultType) {
  OpBuilder b(&ctx);
  Location loc = UnknownLoc::get(&ctx);
  auto func = func::FuncOp::create(
      b, loc, "f",
      b.getFunctionType(
          {tensor({kDyn, kDyn, 64}), tensor({96, 64}), tensor({96})}, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto lin = LinearOp::create(b, loc, entry->getArgument(0),
                              entry->getArgument(1), entry->getArgument(2));
  EXPECT_EQ(lin.getType(), tensor({kDyn, kDyn, 96}));
  func::ReturnOp::create(b, loc);
  EXPECT_TRUE(succeeded(verify(func)));
  func->erase();
}

TEST_F(TransformerOpsTest, VerifierReportsExpectedShape) {
  const char *ir = R"mlir(
    func.func @f(%x: tensor<?x?x64xf32>, %w: tensor<96x32xf32>) {
      %0 = transformer.linear %x, %w
          : tensor<?x?x64xf32>, tensor<96x32xf32> -> tensor<?x?x96xf32>
      return
    })mlir";
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &ctx);
  EXPECT_FALSE(module);
  EXPECT_EQ(message, "'transformer.linear' op expects weight to have shape "
                     "[96, 64], got [96, 32]");
}

TEST_F(TransformerOpsTest, SDPADefaultScale) {
  const char *ir = R"mlir(
    func.func @f(%q: tensor<1x4x8x64xf32>, %k: tensor<1x4x2x64xf32>) {
      %0 = transformer.sdpa %q, %k, %k
          : tensor<1x4x8x64xf32>, tensor<1x4x2x64xf32>, tensor<1x4x2x64xf32>
          -> tensor<1x4x8x64xf32>
      return
    })mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &ctx);
  ASSERT_TRUE(module);
  SDPAOp op;
  module->walk([&](SDPAOp s) { op = s; });
  ASSERT_TRUE(op);
  EXPECT_DOUBLE_EQ(op.getScaleOrDefault(), 0.125);
}

} // namespace
