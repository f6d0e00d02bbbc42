//===- DecodeSessionTest.cpp - KV-cached decoding in-process --------------===//
//
// A DecodeSession on tiny causal grouped-query attention (4 query heads, 2
// KV heads of 8): token-by-token decoding agrees with one prefill in both cache
// layouts, the two layouts hold the same keys and values in transposed
// memory order, generate() feeds each step's last row back, and the errors
// (overflow, static batch, non-causal attention) are the ones blockc-run
// prints. The two sessions are compiled once for the whole suite.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/DecodeSession.h"
#include "blockc/ExecutionEngine/WeightBinding.h"
#include "blockc/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace blockc;

namespace {

/// Causal grouped-query attention on [B, T, 32]: 4 query heads of 8 (the
/// input scaled by the weight `scale`) over 2 KV heads (the first 16
/// features as both keys and values). The smallest model with a decode
/// entry whose cache layouts differ; it JIT-compiles in a fraction of a
/// second, unlike a whole block.
const char *kModel = R"(
func.func @forward(%x: tensor<?x?x32xf32>,
    %s: tensor<32xf32> {transformer.weight_name = "scale"})
    -> tensor<?x?x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x32xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x32xf32>
  %e = tensor.empty(%b, %t) : tensor<?x?x32xf32>
  %xs = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>,
      affine_map<(i, j, k) -> (k)>, affine_map<(i, j, k) -> (i, j, k)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<?x?x32xf32>, tensor<32xf32>)
      outs(%e : tensor<?x?x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<?x?x32xf32>
  %q = tensor.expand_shape %xs [[0], [1], [2, 3]] output_shape [%b, %t, 4, 8]
      : tensor<?x?x32xf32> into tensor<?x?x4x8xf32>
  %kv = tensor.extract_slice %x[0, 0, 0] [%b, %t, 16] [1, 1, 1]
      : tensor<?x?x32xf32> to tensor<?x?x16xf32>
  %k = tensor.expand_shape %kv [[0], [1], [2, 3]] output_shape [%b, %t, 2, 8]
      : tensor<?x?x16xf32> into tensor<?x?x2x8xf32>
  %o = transformer.sdpa %q, %k, %k {causal} : tensor<?x?x4x8xf32>,
      tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32> -> tensor<?x?x4x8xf32>
  %r = tensor.collapse_shape %o [[0], [1], [2, 3]]
      : tensor<?x?x4x8xf32> into tensor<?x?x32xf32>
  return %r : tensor<?x?x32xf32>
}
)";

/// Attention of a static batch of 2 over the input as queries, keys and
/// values; `causal` is its mask.
std::string staticBatchModel(bool causal = true) {
  return std::string(R"(
func.func @forward(%x: tensor<2x?x16xf32>) -> tensor<2x?x16xf32> {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %x, %c1 : tensor<2x?x16xf32>
  %q = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [2, %t, 2, 8]
      : tensor<2x?x16xf32> into tensor<2x?x2x8xf32>
  %o = transformer.sdpa %q, %q, %q )") +
         (causal ? "{causal} " : "") + R"(: tensor<2x?x2x8xf32>,
      tensor<2x?x2x8xf32>, tensor<2x?x2x8xf32> -> tensor<2x?x2x8xf32>
  %r = tensor.collapse_shape %o [[0], [1], [2, 3]]
      : tensor<2x?x2x8xf32> into tensor<2x?x16xf32>
  return %r : tensor<2x?x16xf32>
}
)";
}

/// A parsed model, its signature and random weights.
struct Model {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ModelSignature signature;
  std::vector<HostTensor> weights;
};

mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    auto *c = new mlir::MLIRContext(registry);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

Model parseModel(const std::string &text) {
  Model m;
  m.module = mlir::parseSourceString<mlir::ModuleOp>(text, &context());
  if (!m.module)
    return m;
  auto sig = analyzeModel(*m.module, "");
  if (failed(sig)) {
    m.module = nullptr;
    return m;
  }
  m.signature = *sig;
  m.weights = makeRandomWeights(m.signature, /*seed=*/3);
  return m;
}

/// The largest |a - b| over two tensors of one shape.
double maxAbsDiff(const HostTensor &a, const HostTensor &b) {
  EXPECT_EQ(a.shape, b.shape);
  double m = 0;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i)
    m = std::max(m, double(std::fabs(a.data[i] - b.data[i])));
  return m;
}

class DecodeSessionTest : public ::testing::Test {
protected:
  static constexpr int64_t kBatch = 2, kCapacity = 8;

  /// One compiled session per layout: [0] bhsd, [1] bshd.
  static void SetUpTestSuite() {
    ASSERT_FALSE(static_cast<bool>(setCpuThreads(1)));
    // BlockJit applies the pass-manager command-line options, and the
    // pipeline builders parse textual pipelines of registered passes.
    mlir::registerPassManagerCLOptions();
    registerAllPasses();
    for (int i = 0; i < 2; ++i) {
      models[i] = new Model(parseModel(kModel));
      ASSERT_TRUE(models[i]->module);
      auto session = DecodeSession::derive(
          *models[i]->module, models[i]->signature,
          i == 0 ? transformer::KVLayout::bhsd : transformer::KVLayout::bshd);
      ASSERT_TRUE(succeeded(session));
      sessions[i] = session->release();
      llvm::Error e = sessions[i]->bind(models[i]->weights, kBatch, kCapacity);
      ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));
      CompileOptions options;
      options.optLevel = 0;
      e = sessions[i]->compile(options);
      ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));
    }
  }
  static void TearDownTestSuite() {
    for (int i = 0; i < 2; ++i) {
      delete sessions[i];
      delete models[i];
      sessions[i] = nullptr;
      models[i] = nullptr;
    }
  }
  void SetUp() override {
    for (int i = 0; i < 2; ++i)
      ASSERT_NE(sessions[i], nullptr);
  }

  static Model *models[2];
  static DecodeSession *sessions[2];
};

Model *DecodeSessionTest::models[2];
DecodeSession *DecodeSessionTest::sessions[2];

TEST_F(DecodeSessionTest, CacheArgumentsAndLayouts) {
  for (int i = 0; i < 2; ++i) {
    DecodeSession &s = *sessions[i];
    EXPECT_EQ(s.getSignature().funcName, "forward_decode");
    EXPECT_EQ(s.getNumLayers(), 1u);
    EXPECT_EQ(s.isHeadMajor(), i == 0);
    // The forward function is gone; the entry keeps its weights.
    EXPECT_FALSE(models[i]->module->lookupSymbol("forward"));
    auto decode =
        models[i]->module->lookupSymbol<mlir::func::FuncOp>("forward_decode");
    ASSERT_TRUE(decode);
    llvm::SmallVector<KVCacheArgument> args = getKVCacheArguments(decode);
    // %x, the weight, %pos, then k_0 and v_0.
    ASSERT_EQ(args.size(), 2u);
    EXPECT_EQ(args[0].argNumber, 3u);
    EXPECT_EQ(args[1].argNumber, 4u);
    for (const KVCacheArgument &a : args) {
      EXPECT_EQ(a.headMajor, i == 0);
      EXPECT_EQ(a.type.getDimSize(2), 2);
      EXPECT_EQ(a.type.getDimSize(3), 8);
    }
    ASSERT_EQ(s.getCaches().size(), 2u);
    std::vector<int64_t> expected =
        i == 0 ? std::vector<int64_t>{kBatch, 2, kCapacity, 8}
               : std::vector<int64_t>{kBatch, kCapacity, 2, 8};
    EXPECT_EQ(s.getCaches()[0].shape, expected);
    EXPECT_EQ(s.getCaches()[1].shape, expected);
    EXPECT_EQ(s.getCacheBytes(), 2 * kBatch * kCapacity * 2 * 8 * 4);
  }
}

TEST_F(DecodeSessionTest, TokenByTokenMatchesPrefill) {
  HostTensor input = makeRandomTensor({kBatch, 6, 32}, 9);
  for (DecodeSession *s : sessions) {
    auto cmp = s->compareWithPrefill(input);
    ASSERT_TRUE(static_cast<bool>(cmp)) << llvm::toString(cmp.takeError());
    EXPECT_EQ(cmp->run.output.shape, input.shape);
    EXPECT_EQ(cmp->run.stepSeconds.size(), 6u);
    EXPECT_GT(cmp->scale, 0.1);
    EXPECT_TRUE(cmp->passes(1e-4))
        << "max diff " << cmp->maxDiff << " at position " << cmp->worstPosition
        << " batch " << cmp->worstBatch;
    EXPECT_EQ(s->getPosition(), 6);
  }
}

TEST_F(DecodeSessionTest, LayoutsHoldTheSameCacheTransposed) {
  HostTensor prompt = makeRandomTensor({kBatch, 3, 32}, 4);
  auto head = sessions[0]->generate(prompt, 2);
  ASSERT_TRUE(static_cast<bool>(head)) << llvm::toString(head.takeError());
  auto token = sessions[1]->generate(prompt, 2);
  ASSERT_TRUE(static_cast<bool>(token)) << llvm::toString(token.takeError());
  EXPECT_EQ(head->output.shape, (std::vector<int64_t>{kBatch, 5, 32}));
  EXPECT_LE(maxAbsDiff(head->output, token->output), 1e-5);
  EXPECT_EQ(head->stepSeconds.size(), 2u);

  // 5 tokens cached: element (b, s, h, d) of the tensor [B, L, H_kv, D] is
  // at [b][h][s][d] head-major and at [b][s][h][d] token-major; rows from 5
  // on are still zero.
  for (size_t c = 0; c < 2; ++c) {
    const HostTensor &h = sessions[0]->getCaches()[c];
    const HostTensor &t = sessions[1]->getCaches()[c];
    double diff = 0, beyond = 0, norm = 0;
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t s = 0; s < kCapacity; ++s)
        for (int64_t k = 0; k < 2; ++k)
          for (int64_t d = 0; d < 8; ++d) {
            float hv = h.data[((b * 2 + k) * kCapacity + s) * 8 + d];
            float tv = t.data[((b * kCapacity + s) * 2 + k) * 8 + d];
            if (s < 5) {
              diff = std::max(diff, double(std::fabs(hv - tv)));
              norm = std::max(norm, double(std::fabs(hv)));
            } else {
              beyond = std::max(
                  {beyond, double(std::fabs(hv)), double(std::fabs(tv))});
            }
          }
    EXPECT_GT(norm, 0.01) << "cache " << c << " holds no keys or values";
    EXPECT_LE(diff, 1e-5) << "cache " << c;
    EXPECT_EQ(beyond, 0.0) << "cache " << c;
  }
  // Read in the other's order, the two caches differ: the layouts are not
  // the same memory.
  double crossed = 0;
  const HostTensor &h = sessions[0]->getCaches()[0];
  const HostTensor &t = sessions[1]->getCaches()[0];
  for (size_t i = 0; i < h.data.size(); ++i)
    crossed = std::max(crossed, double(std::fabs(h.data[i] - t.data[i])));
  EXPECT_GT(crossed, 0.01);
}

TEST_F(DecodeSessionTest, GenerateFeedsTheLastRowBack) {
  DecodeSession &s = *sessions[0];
  HostTensor prompt = makeRandomTensor({kBatch, 3, 32}, 5);
  auto run = s.generate(prompt, 3);
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  ASSERT_EQ(run->output.shape, (std::vector<int64_t>{kBatch, 6, 32}));
  EXPECT_EQ(s.getPosition(), 6);

  // The consumed sequence: the prompt, then each step's input, which is the
  // previous position's output. One prefill over it gives every output.
  HostTensor consumed;
  consumed.shape = {kBatch, 6, 32};
  consumed.data.assign(kBatch * 6 * 32, 0.0f);
  storeRows(consumed, prompt, 0);
  storeRows(consumed, sliceRows(run->output, 2, 3), 3);
  s.reset();
  EXPECT_EQ(s.getPosition(), 0);
  HostTensor full;
  llvm::Error e = s.step(consumed, full);
  ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));
  EXPECT_LE(maxAbsDiff(full, run->output), 1e-4);
}

TEST_F(DecodeSessionTest, OverflowIsRefusedBeforeRunning) {
  DecodeSession &s = *sessions[1];
  HostTensor prompt = makeRandomTensor({kBatch, 5, 32}, 6);
  llvm::Error e = s.bind(models[1]->weights, kBatch, /*capacity=*/4);
  ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));
  auto run = s.generate(prompt, 1);
  ASSERT_FALSE(static_cast<bool>(run));
  EXPECT_EQ(llvm::toString(run.takeError()),
            "KV cache overflow: 0 cached + 5 new tokens exceed the capacity "
            "L_max = 4 (--max-len)");
  EXPECT_EQ(s.getPosition(), 0);

  run = s.generate(sliceRows(prompt, 0, 3), 2);
  ASSERT_FALSE(static_cast<bool>(run));
  EXPECT_EQ(llvm::toString(run.takeError()),
            "KV cache overflow: 4 cached + 1 new tokens exceed the capacity "
            "L_max = 4 (--max-len)");
  EXPECT_EQ(s.getPosition(), 4);

  e = s.bind(models[1]->weights, kBatch, kCapacity);
  ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));
}

TEST(DecodeComparisonTest, ToleranceIsRelativeToTheScale) {
  DecodeComparison c;
  c.maxDiff = 1e-3;
  c.scale = 10;
  EXPECT_TRUE(c.passes(1e-4));
  EXPECT_FALSE(c.passes(0.9e-4));
  // A NaN is recorded as an infinite difference, which never passes.
  c.maxDiff = INFINITY;
  EXPECT_FALSE(c.passes(1e30));
  // An all-zero output passes only an exact match.
  c.scale = 0;
  c.maxDiff = 0;
  EXPECT_TRUE(c.passes(1e-4));
  c.maxDiff = 1e-20;
  EXPECT_FALSE(c.passes(1e-4));
}

TEST(DecodeSessionErrors, StaticBatchMismatch) {
  Model m = parseModel(staticBatchModel());
  ASSERT_TRUE(m.module);
  auto session = DecodeSession::derive(*m.module, m.signature);
  ASSERT_TRUE(succeeded(session));
  llvm::Error e = (*session)->bind(m.weights, /*batch=*/3, /*capacity=*/4);
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_EQ(llvm::toString(std::move(e)),
            "the KV cache of argument #2 has batch 2, the input has 3");
  e = (*session)->bind(m.weights, /*batch=*/2, /*capacity=*/4);
  EXPECT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));
}

TEST(DecodeSessionErrors, StepBeforeCompile) {
  Model m = parseModel(kModel);
  ASSERT_TRUE(m.module);
  auto session = DecodeSession::derive(*m.module, m.signature,
                                       transformer::KVLayout::bshd);
  ASSERT_TRUE(succeeded(session));
  llvm::Error e = (*session)->bind(m.weights, 1, 4);
  ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));
  HostTensor out;
  e = (*session)->step(makeRandomTensor({1, 2, 32}, 1), out);
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_EQ(llvm::toString(std::move(e)), "the decode entry is not compiled");
}

TEST(DecodeSessionErrors, NonCausalAttentionHasNoDecodeEntry) {
  Model m = parseModel(staticBatchModel(/*causal=*/false));
  ASSERT_TRUE(m.module);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context(), [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  EXPECT_TRUE(failed(DecodeSession::derive(*m.module, m.signature)));
  EXPECT_EQ(diagnostics,
            "'transformer.sdpa' op is not causal: a decode entry "
            "needs causal attention (transformer-derive-decode)\n");
  // The module is left with its forward function.
  EXPECT_TRUE(m.module->lookupSymbol("forward"));
}

} // namespace
