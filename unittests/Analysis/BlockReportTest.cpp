//===- BlockReportTest.cpp - the report reproduces the seed figures -------===//
//
// The seed decks give exact parameter and FLOP counts for Llama-2-7B, the
// 2017 base block and GQA; the report must reproduce them from the IR.
//
//===----------------------------------------------------------------------===//

#include "blockc/Analysis/BlockReport.h"
#include "blockc/InitAllDialects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/JSON.h"

#include "gtest/gtest.h"

using namespace blockc;

namespace {

BlockShape llama2_7b() {
  BlockShape s;
  s.modelDim = 4096;
  s.numHeads = 32;
  s.numKVHeads = 32;
  s.headDim = 128;
  s.dff = 11008;
  return s;
}

BlockShape base2017() {
  BlockShape s;
  s.modelDim = 512;
  s.numHeads = 8;
  s.numKVHeads = 8;
  s.headDim = 64;
  s.dff = 2048;
  s.layerNorm = true;
  s.preNorm = false;
  s.gated = false;
  s.rope = false;
  s.causal = false;
  s.activation = transformer::ActivationKind::relu;
  s.biasQ = s.biasK = s.biasV = s.biasO = true;
  s.biasUp = s.biasDown = true;
  return s;
}

const ReportStep &step(const BlockReport &r, llvm::StringRef name) {
  for (const ReportStep &s : r.steps)
    if (s.name == name)
      return s;
  ADD_FAILURE() << "no step " << name.str();
  return r.steps.front();
}

TEST(BlockReportTest, Llama2_7BParametersAndFlops) {
  ReportOptions o;
  o.kvLen = 4096;
  BlockReport r = buildReport(llama2_7b(), o);
  const int64_t d = 4096, dff = 11008;
  // 4 d^2 + 3 d d_ff + 2 d.
  EXPECT_EQ(r.totalParams(), 202383360);
  EXPECT_EQ(r.totalParams(), 4 * d * d + 3 * d * dff + 2 * d);
  // 2 d^2 per d x d projection, 2 d d_ff per FFN matrix.
  for (const char *p : {"Q", "K", "V", "O"})
    EXPECT_EQ(step(r, p).flopsPerToken, 33554432.0) << p;
  for (const char *p : {"gate", "up", "down"})
    EXPECT_EQ(step(r, p).flopsPerToken, 90177536.0) << p;
  EXPECT_EQ(r.staticFlopsPerToken(), 404750336.0);
  // 4 d L attention FLOPs per token, split between scores and A V.
  EXPECT_EQ(r.attentionFlopsPerToken(), 4.0 * d * 4096);
  EXPECT_EQ(step(r, "scores").flopsPerTokenLDependent +
                step(r, "A V").flopsPerTokenLDependent,
            4.0 * d * 4096);
  // Attention holds a third of the weights, the FFN two thirds.
  EXPECT_EQ(r.params("attention"), 4 * d * d);
  EXPECT_EQ(r.params("ffn"), 3 * d * dff);
  EXPECT_EQ(r.params("norm"), 2 * d);
  EXPECT_EQ(r.kvCacheBytesPerToken(), 2.0 * d * 4);
  // The pre-norm walk has the 16 steps of the seed table.
  ASSERT_EQ(r.steps.size(), 16u);
  EXPECT_EQ(r.steps.front().name, "norm (attention)");
  EXPECT_EQ(r.steps[4].name, "RoPE");
  EXPECT_EQ(r.steps.back().name, "residual");
  EXPECT_EQ(step(r, "Q").outputShape, (std::vector<int64_t>{1, 32, 128}));
  EXPECT_EQ(step(r, "gate").outputShape, (std::vector<int64_t>{1, 11008}));
}

TEST(BlockReportTest, Base2017WeightsAndSeparateBiases) {
  BlockReport r = buildReport(base2017(), ReportOptions());
  EXPECT_EQ(r.params("attention"), 1048576);
  EXPECT_EQ(r.params("ffn"), 2097152);
  // Biases: q, k, v, o (4 x 512), up (2048), down (512); LayerNorm: 4 x 512.
  EXPECT_EQ(r.params("bias"), 4 * 512 + 2048 + 512);
  EXPECT_EQ(r.params("norm"), 4 * 512);
  EXPECT_EQ(r.totalParams(), 1048576 + 2097152 + 4608 + 2048);
  // Post-norm order: attention first, the last step is the second norm; no
  // RoPE and no gate.
  EXPECT_EQ(r.steps.front().name, "Q");
  EXPECT_EQ(r.steps.back().name, "norm (FFN)");
  for (const ReportStep &s : r.steps) {
    EXPECT_NE(s.name, "RoPE");
    EXPECT_NE(s.name, "gate");
  }
}

TEST(BlockReportTest, GQAQKVOIs2Point25DSquared) {
  BlockShape s = llama2_7b();
  s.numHeads = 64;
  s.headDim = 64;
  s.numKVHeads = 8; // d_kv = d / 8
  BlockReport r = buildReport(s, ReportOptions());
  const double d = 4096;
  EXPECT_EQ(static_cast<double>(r.params("attention")), 2.25 * d * d);
  // The KV cache shrinks by the group size.
  EXPECT_EQ(r.kvCacheBytesPerToken(), 2.0 * (d / 8) * 4);
}

TEST(BlockReportTest, QuantisedWeightsCountAsStored) {
  const int64_t d = 4096, dff = 11008;
  const int64_t weights = 4 * d * d + 3 * d * dff;
  BlockShape s = llama2_7b();
  // int8: a byte per weight and an f32 scale per output row.
  s.weightStorage = WeightStorage::Int8;
  EXPECT_EQ(s.projectionBytes(dff, d), dff * d + 4 * dff);
  BlockReport r8 = buildReport(s, ReportOptions());
  EXPECT_EQ(r8.totalParams(), 202383360);
  EXPECT_EQ(r8.weightBytes(),
            weights + 4 * (4 * d + 2 * dff + d) + 2 * d * 4); // 202,577,920
  EXPECT_EQ(r8.weightBytes(), 202577920);
  // The Q step streams the stored bytes.
  EXPECT_EQ(step(r8, "Q").bytes,
            static_cast<double>(d * d + 4 * d + 2 * d * 4));
  // int4, groups of 32: half a byte and a 4-byte scale per 32 weights.
  s.weightStorage = WeightStorage::Int4;
  s.quantGroupSize = 32;
  EXPECT_EQ(s.projectionBytes(d, dff), d * dff / 2 + 4 * d * (dff / 32));
  BlockReport r4 = buildReport(s, ReportOptions());
  EXPECT_EQ(r4.bytesPerProjectionWeight(), 0.625);
  EXPECT_EQ(r4.weightBytes(), weights * 5 / 8 + 2 * d * 4); // 126,517,248
  EXPECT_EQ(r4.weightBytes(), 126517248);
  for (const ReportComponent &c : r4.components)
    EXPECT_EQ(c.storage, c.kind == "norm" ? "f32" : "int4 g32") << c.name;
  // bf16: every component in 2 bytes.
  BlockShape h = llama2_7b();
  h.elementBytes = 2;
  h.elementType = "bf16";
  EXPECT_EQ(buildReport(h, ReportOptions()).weightBytes(), 2 * 202383360);
}

TEST(BlockReportTest, TensorParallelWholeModel) {
  // Llama-2-7B on 2 ranks: each rank's part has half the heads and d_ff.
  BlockShape s = llama2_7b();
  s.numHeads = s.numKVHeads = 16;
  s.dff = 5504;
  ReportOptions o;
  o.ranks = 2;
  BlockReport r = buildReport(s, o);
  EXPECT_EQ(r.totalParams(), 202383360 / 2 + 4096); // norms on both ranks
  EXPECT_EQ(r.modelParams(), 202383360);
  EXPECT_EQ(r.modelWeightBytes(), 4 * 202383360LL);
  // GQA 4/2 on 4 ranks: each rank holds one K/V head, shared by two ranks;
  // the whole model has 2.
  BlockShape g;
  g.modelDim = 32;
  g.numHeads = 1;
  g.numKVHeads = 1;
  g.headDim = 8;
  g.dff = 16;
  g.modelKVHeads = 2;
  o.ranks = 4;
  BlockReport rg = buildReport(g, o);
  EXPECT_EQ(rg.totalParams(), 2624);
  EXPECT_EQ(rg.modelParams(), 9280);
  for (const ReportComponent &c : rg.components)
    if (c.name == "W_K")
      EXPECT_EQ(c.modelParams, 16 * 32);
}

TEST(BlockReportTest, FromIRAndJSON) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  const char *ir = R"mlir(
    func.func @f(%x: tensor<?x?x64xf32>, %g: tensor<64xf32>,
                 %wq: tensor<64x64xf32>, %wkv: tensor<16x64xf32>,
                 %wg: tensor<96x64xf32>, %wd: tensor<64x96xf32>)
        -> tensor<?x?x64xf32> {
      %y = transformer.block %x attn_norm(%g : tensor<64xf32>)
          q(%wq : tensor<64x64xf32>) k(%wkv : tensor<16x64xf32>)
          v(%wkv : tensor<16x64xf32>) o(%wq : tensor<64x64xf32>)
          ffn_norm(%g : tensor<64xf32>) gate(%wg : tensor<96x64xf32>)
          up(%wg : tensor<96x64xf32>) down(%wd : tensor<64x96xf32>)
          {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64,
           d_ff = 96 : i64, causal, rope = #transformer.rope<rotate_half>}
          : tensor<?x?x64xf32>
      return %y : tensor<?x?x64xf32>
    })mlir";
  auto module = mlir::parseSourceString<mlir::ModuleOp>(ir, &ctx);
  ASSERT_TRUE(module);
  std::vector<BlockReport> reports;
  module->walk([&](transformer::BlockOp op) {
    reports.push_back(buildReport(BlockShape::fromOp(op), ReportOptions()));
  });
  ASSERT_EQ(reports.size(), 1u);
  // MQA: QKVO = 2 d^2 + 2 d (d / 4).
  EXPECT_EQ(reports[0].params("attention"), 2 * 64 * 64 + 2 * 64 * 16);
  EXPECT_EQ(reports[0].params("ffn"), 3 * 64 * 96);

  std::string text;
  llvm::raw_string_ostream os(text);
  printReport(os, "m", reports, ReportFormat::JSON);
  auto json = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(json)) << llvm::toString(json.takeError());
  const llvm::json::Object *root = json->getAsObject();
  ASSERT_TRUE(root);
  EXPECT_EQ(root->getString("schema"), "blockc-report/1");
  const llvm::json::Array *blocks = root->getArray("blocks");
  ASSERT_TRUE(blocks && blocks->size() == 1);
  const llvm::json::Object *totals =
      (*blocks)[0].getAsObject()->getObject("totals");
  EXPECT_EQ(totals->getInteger("params"),
            2 * 64 * 64 + 2 * 64 * 16 + 3 * 64 * 96 + 2 * 64);
}

} // namespace
