//===- PrepareTest.cpp - prepared weights through BlockJit ----------------===//
//
// A projection whose weight is an entry argument reads packed panels that the
// entry's prepare function makes once (blockc-cpu-prepare-weights):
// BlockJit::prepare runs it and replaces the weight by its packed form. The
// output is checked against y = x W^T + b computed here, for T = 1 and 5,
// for AVX-512 and AVX2 kernels, with and without prepared weights; the
// prepared tensor is checked element by element against the documented
// layout P[i, j, k, n] = W[i * panel_n + n, j * panel_k + k] (zero past W).
// findPrepareEntry's errors are checked on hand-written prepare functions.
//
//===----------------------------------------------------------------------===//

#include "blockc/Analysis/PreparedWeights.h"
#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/ExecutionEngine/WeightBinding.h"
#include "blockc/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cmath>
#include <optional>

using namespace blockc;

namespace {

// Two projections, 24 -> 40 (with a bias) -> 24: N = 40 is not a multiple
// of any panel width; the entry returns the activation type.
const char *kLinear = R"(
func.func @forward(%x: tensor<?x?x24xf32>,
    %w: tensor<40x24xf32> {transformer.weight_name = "w"},
    %b: tensor<40xf32> {transformer.weight_name = "b"},
    %w2: tensor<24x40xf32> {transformer.weight_name = "w2"}) -> tensor<?x?x24xf32> {
  %h = transformer.linear %x, %w bias %b : tensor<?x?x24xf32>, tensor<40x24xf32>, tensor<40xf32> -> tensor<?x?x40xf32>
  %y = transformer.linear %h, %w2 : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %y : tensor<?x?x24xf32>
}
)";

class PrepareTest : public testing::Test {
protected:
  void SetUp() override {
    registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    mlir::registerPassManagerCLOptions();
    registerAllPasses();
  }
  mlir::OwningOpRef<mlir::ModuleOp> parse(const char *text) {
    return mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
  }
  /// The diagnostics findPrepareEntry emits for `text`, which must fail.
  std::string prepareError(const char *text) {
    auto module = parse(text);
    EXPECT_TRUE(module);
    std::string message;
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      message += d.str();
      return mlir::success();
    });
    EXPECT_TRUE(failed(findPrepareEntry(*module, "forward")));
    return message;
  }
  mlir::DialectRegistry registry;
  mlir::MLIRContext ctx;
};

TEST_F(PrepareTest, PreparedWeightsMatchTheReference) {
  for (CPUISA isa : {CPUISA::AVX512, CPUISA::AVX2})
    for (bool prepareWeights : {true, false})
      // AVX-512 code only where the host runs it.
      if (missingHostFeature(isa).empty())
        for (int64_t t : {1, 5}) {
          SCOPED_TRACE(testing::Message()
                       << "isa " << stringifyCPUISA(isa).str() << " prepare "
                       << prepareWeights << " T " << t);
          auto module = parse(kLinear);
          ASSERT_TRUE(module);
          auto sig = analyzeModel(*module, "");
          ASSERT_TRUE(succeeded(sig));
          CompileOptions options;
          options.cpu.isa = isa;
          options.cpu.prepareWeights = prepareWeights;
          options.optLevel = 3;
          auto jit = BlockJit::compile(*module, *sig, options);
          ASSERT_TRUE(static_cast<bool>(jit))
              << llvm::toString(jit.takeError());
          const PrepareEntry *entry = (*jit)->getPrepareEntry();
          ASSERT_EQ(entry != nullptr, prepareWeights);

          HostTensor x = makeRandomTensor({2, t, 24}, 1);
          HostTensor w = makeRandomTensor({40, 24}, 2);
          HostTensor b = makeRandomTensor({40}, 3);
          HostTensor w2 = makeRandomTensor({24, 40}, 4);
          const HostTensor original = w, original2 = w2;
          std::vector<HostTensor *> args = {&x, &w, &b, &w2};
          llvm::Expected<int64_t> bytes = (*jit)->prepare(args);
          ASSERT_TRUE(static_cast<bool>(bytes))
              << llvm::toString(bytes.takeError());
          if (prepareWeights) {
            // The weights (arguments 1 and 3) became their packed forms; the
            // bias stays. The layout of the first is checked element-wise.
            ASSERT_EQ(entry->results.size(), 2u);
            ASSERT_NE(entry->find(3), nullptr);
            EXPECT_EQ(entry->find(2), nullptr);
            const PreparedWeight &pw = *entry->find(1);
            EXPECT_EQ(pw.argIndex, 1u);
            EXPECT_EQ(pw.rows, 40);
            EXPECT_EQ(pw.cols, 24);
            int64_t pn = pw.panelN, pk = pw.panelK;
            std::vector<int64_t> shape = {(40 + pn - 1) / pn,
                                          (24 + pk - 1) / pk, pk, pn};
            EXPECT_EQ(w.shape, shape);
            EXPECT_EQ(*bytes, (w.numElements() + w2.numElements()) * 4);
            // One part per weight, run in turn, each original released as
            // soon as its packed form exists: the weights are never all
            // held twice (the originals, then the packed forms).
            ASSERT_EQ(entry->parts.size(), 2u);
            EXPECT_EQ(entry->parts[0].results[0].argIndex, 1u);
            EXPECT_EQ(entry->parts[1].results[0].argIndex, 3u);
            int64_t o1 = original.numElements() * 4,
                    o2 = original2.numElements() * 4;
            int64_t p1 = w.numElements() * 4, p2 = w2.numElements() * 4;
            EXPECT_EQ((*jit)->getPreparePeakBytes(),
                      std::max(o1 + o2 + p1, o2 + p1 + p2));
            EXPECT_LT((*jit)->getPreparePeakBytes(), o1 + o2 + p1 + p2);
            for (int64_t i = 0; i < shape[0]; ++i)
              for (int64_t j = 0; j < shape[1]; ++j)
                for (int64_t k = 0; k < pk; ++k)
                  for (int64_t n = 0; n < pn; ++n) {
                    int64_t row = i * pn + n, col = j * pk + k;
                    float want = row < 40 && col < 24
                                     ? original.data[row * 24 + col]
                                     : 0.0f;
                    ASSERT_EQ(w.data[((i * shape[1] + j) * pk + k) * pn + n],
                              want)
                        << i << " " << j << " " << k << " " << n;
                  }
            EXPECT_EQ(b.shape, std::vector<int64_t>{40});
          } else {
            EXPECT_EQ(*bytes, 0);
            EXPECT_EQ((*jit)->getPreparePeakBytes(), 0);
            EXPECT_EQ(w.shape, original.shape);
          }

          HostTensor out;
          out.shape = {2, t, 24};
          out.data.assign(out.numElements(), 0.0f);
          std::vector<const HostTensor *> runArgs = {&x, &w, &b, &w2};
          ASSERT_FALSE(static_cast<bool>((*jit)->run(runArgs, out)));
          for (int64_t r = 0; r < 2 * t; ++r) {
            double h[40];
            for (int64_t n = 0; n < 40; ++n) {
              h[n] = b.data[n];
              for (int64_t k = 0; k < 24; ++k)
                h[n] += double(x.data[r * 24 + k]) * original.data[n * 24 + k];
            }
            for (int64_t n = 0; n < 24; ++n) {
              double want = 0;
              for (int64_t k = 0; k < 40; ++k)
                want += h[k] * original2.data[n * 40 + k];
              ASSERT_NEAR(out.data[r * 24 + n], want,
                          1e-4 * (1 + std::fabs(want)))
                  << r << " " << n;
            }
          }
        }
}

// Projections 96 -> N -> 96 for the blocked loop order of the prepared
// kernel (panel_group panels per parallel block, row blocks), with the
// cache sizes shrunk so that every path runs on small shapes.
const char *kWide = R"(
func.func @forward(%x: tensor<?x?x96xf32>,
    %w: tensor<NNNx96xf32> {transformer.weight_name = "w"},
    %w2: tensor<96xNNNxf32> {transformer.weight_name = "w2"}) -> tensor<?x?x96xf32> {
  %h = transformer.linear %x, %w : tensor<?x?x96xf32>, tensor<NNNx96xf32> -> tensor<?x?xNNNxf32>
  %y = transformer.linear %h, %w2 : tensor<?x?xNNNxf32>, tensor<96xNNNxf32> -> tensor<?x?x96xf32>
  return %y : tensor<?x?x96xf32>
}
)";

// With a 64 KiB L2 (AVX2: panels of 96 x 16): the first projection takes
// 3 panels per block from T = 32 on (the last block of N = 200 holds one
// partial panel: masked output tiles; N = 192 has whole tiles only), one
// below (T = 1, 31); row blocks of at most 42 rows (T = 100: three blocks
// of 36, 36 and 28 rows, with 4- and 2-row remainder tiles); the second
// reduces over K = N. y = (x W^T) W2^T against a double reference.
TEST_F(PrepareTest, BlockedKernelMatchesTheReference) {
  for (CPUISA isa : {CPUISA::AVX512, CPUISA::AVX2})
    for (int64_t n : {200, 192})
      if (missingHostFeature(isa).empty())
        for (int64_t t : {1, 31, 32, 100}) {
          SCOPED_TRACE(testing::Message()
                       << "isa " << stringifyCPUISA(isa).str() << " N " << n
                       << " T " << t);
          std::string text = kWide;
          for (size_t at; (at = text.find("NNN")) != std::string::npos;)
            text.replace(at, 3, std::to_string(n));
          auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
          ASSERT_TRUE(module);
          auto sig = analyzeModel(*module, "");
          ASSERT_TRUE(succeeded(sig));
          CompileOptions options;
          options.cpu.isa = isa;
          options.cpu.l2Bytes = 64 * 1024;
          auto jit = BlockJit::compile(*module, *sig, options);
          ASSERT_TRUE(static_cast<bool>(jit))
              << llvm::toString(jit.takeError());
          HostTensor x = makeRandomTensor({2, t, 96}, 5);
          HostTensor w = makeRandomTensor({n, 96}, 6);
          HostTensor w2 = makeRandomTensor({96, n}, 7);
          const HostTensor original = w, original2 = w2;
          std::vector<HostTensor *> args = {&x, &w, &w2};
          llvm::Expected<int64_t> bytes = (*jit)->prepare(args);
          ASSERT_TRUE(static_cast<bool>(bytes))
              << llvm::toString(bytes.takeError());
          HostTensor out;
          out.shape = {2, t, 96};
          out.data.assign(out.numElements(), 0.0f);
          std::vector<const HostTensor *> runArgs = {&x, &w, &w2};
          ASSERT_FALSE(static_cast<bool>((*jit)->run(runArgs, out)));
          std::vector<double> h(n);
          for (int64_t r = 0; r < 2 * t; ++r) {
            for (int64_t j = 0; j < n; ++j) {
              h[j] = 0;
              for (int64_t k = 0; k < 96; ++k)
                h[j] += double(x.data[r * 96 + k]) * original.data[j * 96 + k];
            }
            for (int64_t j = 0; j < 96; ++j) {
              double want = 0;
              for (int64_t k = 0; k < n; ++k)
                want += h[k] * original2.data[j * n + k];
              ASSERT_NEAR(out.data[r * 96 + j], want,
                          1e-4 * (1 + std::fabs(want)))
                  << r << " " << j;
            }
          }
        }
}

// A hand-written prepare function: inputs first, then destinations.
const char *kValid = R"(
func.func @forward(%x: tensor<?x?x8xf32>, %w: tensor<1x1x8x32xf32>) -> tensor<?x?x8xf32> {
  return %x : tensor<?x?x8xf32>
}
func.func @forward_prepare(%w: tensor<8x8xf32> {blockc_codegen.source_arg = 1 : i64},
    %d: tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 1 : i64, blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 32>})
    -> (tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 1 : i64, blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 32>})
    attributes {blockc_codegen.prepare_for = "forward"} {
  return %d : tensor<1x1x8x32xf32>
}
)";

TEST_F(PrepareTest, FindsTheRecords) {
  auto module = parse(kValid);
  ASSERT_TRUE(module);
  auto found = findPrepareEntry(*module, "forward");
  ASSERT_TRUE(succeeded(found));
  ASSERT_TRUE(found->has_value());
  const PrepareEntry &entry = **found;
  EXPECT_EQ(entry.funcName, "forward_prepare");
  EXPECT_EQ(entry.inputs, std::vector<unsigned>{1});
  ASSERT_EQ(entry.results.size(), 1u);
  EXPECT_EQ(entry.results[0].shape, (std::vector<int64_t>{1, 1, 8, 32}));
  EXPECT_EQ(entry.results[0].panelN, 32);
  EXPECT_EQ(entry.find(1), &entry.results[0]);
  EXPECT_EQ(entry.find(0), nullptr);
  // No prepare function for another entry.
  auto none = findPrepareEntry(*module, "forward_prepare");
  ASSERT_TRUE(succeeded(none));
  EXPECT_FALSE(none->has_value());
}

TEST_F(PrepareTest, MalformedRecordsAreErrors) {
  std::string text = kValid;
  auto variant = [&](llvm::StringRef from, llvm::StringRef to) {
    std::string s = text;
    size_t at = s.find(from.str());
    EXPECT_NE(at, std::string::npos) << from.str();
    s.replace(at, from.size(), to.str());
    return s;
  };
  EXPECT_EQ(
      prepareError(
          variant("%w: tensor<8x8xf32> {blockc_codegen.source_arg = 1 : i64}",
                  "%w: tensor<8x8xf32>")
              .c_str()),
      "argument #0 has no 'blockc_codegen.source_arg'");
  EXPECT_EQ(
      prepareError(
          variant("%w: tensor<8x8xf32> {blockc_codegen.source_arg = 1 : i64}",
                  "%w: tensor<8x8xf32> {blockc_codegen.source_arg = 7 : i64}")
              .c_str()),
      "argument #0: blockc_codegen.source_arg = 7 is not an argument of "
      "@forward (it has 2)");
  EXPECT_EQ(
      prepareError(
          variant(
              "-> (tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 1 : i64,",
              "-> (tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 0 : i64,")
              .c_str()),
      "result #0 ('tensor<1x1x8x32xf32>') does not match argument #0 "
      "of @forward ('tensor<?x?x8xf32>')");
  EXPECT_EQ(
      prepareError(
          variant(
              "-> (tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 1 : i64, "
              "blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = "
              "8, cols = 8, panel_k = 8, panel_n = 32>})",
              "-> (tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 1 : i64})")
              .c_str()),
      "result #0 has no 'blockc_codegen.prepared' layout");
  EXPECT_EQ(
      prepareError(
          variant("%w: tensor<8x8xf32> {blockc_codegen.source_arg = 1 : i64}",
                  "%w: tensor<8x8xf32> {blockc_codegen.source_arg = 1 : i64, "
                  "blockc_codegen.prepared = "
                  "#blockc_codegen.packed_weight<rows = 8, cols = 8, "
                  "panel_k = 8, panel_n = 32>}")
              .c_str()),
      "argument #0 should not be a destination ('blockc_codegen.prepared'): "
      "the inputs come first, then one destination per result");
  std::string twice = text + R"(
func.func @other_prepare() attributes {blockc_codegen.prepare_for = "forward"} {
  return
}
)";
  EXPECT_EQ(prepareError(twice.c_str()),
            "a second prepare function for @forward (the first is "
            "@forward_prepare)");
}

// The prepare function's parts: the same records, one result each.
const char *kPart = R"(
func.func @forward_prepare_1(%w: tensor<8x8xf32> {blockc_codegen.source_arg = 1 : i64},
    %d: tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 1 : i64, blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 32>})
    -> (tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 1 : i64, blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 32>})
    attributes {blockc_codegen.prepare_part_of = "forward_prepare"} {
  return %d : tensor<1x1x8x32xf32>
}
)";

TEST_F(PrepareTest, FindsTheParts) {
  std::string text = std::string(kValid) + kPart;
  auto module = parse(text.c_str());
  ASSERT_TRUE(module);
  auto found = findPrepareEntry(*module, "forward");
  ASSERT_TRUE(succeeded(found));
  ASSERT_TRUE(found->has_value());
  const PrepareEntry &entry = **found;
  ASSERT_EQ(entry.parts.size(), 1u);
  EXPECT_EQ(entry.parts[0].funcName, "forward_prepare_1");
  EXPECT_EQ(entry.parts[0].inputs, std::vector<unsigned>{1});
  ASSERT_EQ(entry.parts[0].results.size(), 1u);
  EXPECT_EQ(entry.parts[0].results[0].argIndex, 1u);

  // A second part for the same result; a part of another layout.
  std::string second = kPart;
  second.replace(second.find("@forward_prepare_1"), 18, "@forward_prepare_2");
  EXPECT_EQ(prepareError((text + second).c_str()),
            "a second part of @forward_prepare makes argument #1");
  std::string other = kPart;
  for (size_t at; (at = other.find("panel_n = 32")) != std::string::npos;)
    other.replace(at, 12, "panel_n = 16");
  for (size_t at; (at = other.find("1x1x8x32")) != std::string::npos;)
    other.replace(at, 8, "1x1x8x16");
  // (Its type no longer matches the entry's argument.)
  EXPECT_EQ(prepareError((std::string(kValid) + other).c_str()),
            "result #0 ('tensor<1x1x8x16xf32>') does not match argument #1 "
            "of @forward ('tensor<1x1x8x32xf32>')");
  // Parts for only some of the results.
  std::string two = R"(
func.func @forward(%x: tensor<?x?x8xf32>, %w: tensor<1x1x8x32xf32>, %w2: tensor<1x1x8x32xf32>) -> tensor<?x?x8xf32> {
  return %x : tensor<?x?x8xf32>
}
func.func @forward_prepare(%w: tensor<8x8xf32> {blockc_codegen.source_arg = 1 : i64},
    %w2: tensor<8x8xf32> {blockc_codegen.source_arg = 2 : i64},
    %d: tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 1 : i64, blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 32>},
    %d2: tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 2 : i64, blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 32>})
    -> (tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 1 : i64, blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 32>},
        tensor<1x1x8x32xf32> {blockc_codegen.source_arg = 2 : i64, blockc_codegen.prepared = #blockc_codegen.packed_weight<rows = 8, cols = 8, panel_k = 8, panel_n = 32>})
    attributes {blockc_codegen.prepare_for = "forward"} {
  return %d, %d2 : tensor<1x1x8x32xf32>, tensor<1x1x8x32xf32>
}
)";
  EXPECT_EQ(prepareError((two + kPart).c_str()),
            "has parts for only 1 of its 2 results");
  // A part that makes two results.
  std::string both = two;
  both.replace(both.find("@forward_prepare("), 17, "@forward_prepare_1(");
  std::string prepareFor = "prepare_for = \"forward\"";
  both.replace(both.find(prepareFor), prepareFor.size(),
               "prepare_part_of = \"forward_prepare\"");
  both = both.substr(both.find("func.func @forward_prepare_1"));
  EXPECT_EQ(prepareError((two + both).c_str()),
            "a part of @forward_prepare must make exactly one of its results");
}

} // namespace
