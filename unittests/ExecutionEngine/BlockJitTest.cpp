//===- BlockJitTest.cpp - BlockJit compile errors and GPU weights ---------===//
//
// A failing NVPTX lowering is reported as such (it used to say "lowering to
// the CPU failed"), on machines without a GPU too: the module is lowered
// before the CUDA runtime is loaded. The trigger is an honest one: sm_10,
// an architecture older than NVVM's minimum (sm_20), which the NVVM
// serializer refuses. (A non-numeric chip such as sm_bogus is no good: in
// MLIR 22.1.8 it fails only some of the time.)
//
// The GPU weight copies (under the emulator, so that the test runs
// everywhere): a weight updated in place at the same address is seen by the
// next run; only a caller that vouches for unchanged weights gets the
// copies of the previous run (it used to be keyed by the host pointer).
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/ExecutionEngine/WeightBinding.h"
#include "blockc/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <optional>

using namespace blockc;

namespace {

const char *kModel = R"(
func.func @forward(%x: tensor<?x?x8xf32>,
    %g: tensor<8xf32> {transformer.weight_name = "g"}) -> tensor<?x?x8xf32> {
  %y = transformer.rms_norm %x, %g : tensor<?x?x8xf32>, tensor<8xf32>
  return %y : tensor<?x?x8xf32>
}
)";

/// The model of kModel, parsed and analysed.
class BlockJitTest : public testing::Test {
protected:
  void SetUp() override {
    registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    // BlockJit applies the pass-manager command-line options, and the
    // pipeline builders parse textual pipelines of registered passes.
    mlir::registerPassManagerCLOptions();
    registerAllPasses();
    module = mlir::parseSourceString<mlir::ModuleOp>(kModel, &ctx);
    ASSERT_TRUE(module);
    auto analysed = analyzeModel(*module, "");
    ASSERT_TRUE(succeeded(analysed));
    sig = std::move(*analysed);
  }
  mlir::DialectRegistry registry;
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::optional<ModelSignature> sig;
};

TEST_F(BlockJitTest, NVPTXLoweringFailureNamesNVPTX) {
  CompileOptions options;
  options.target = CompileTarget::NVPTX;
  options.gpuArch = "sm_10";
  options.optLevel = 3;

  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  auto jit = BlockJit::compile(*module, *sig, options);
  ASSERT_FALSE(static_cast<bool>(jit));
  EXPECT_EQ(llvm::toString(jit.takeError()),
            "lowering to NVPTX failed (see the diagnostics above)");
  // The pipeline's first pass rejects an architecture without a known
  // chip, naming the known ones.
  EXPECT_NE(diagnostics.find("blockc-gpu-set-target: unknown GPU "
                             "architecture 'sm_10' (known: sm_75, sm_80"),
            std::string::npos)
      << diagnostics;
}

TEST_F(BlockJitTest, EmulatedGPUSeesWeightsUpdatedInPlace) {
  CompileOptions options;
  options.target = CompileTarget::NVPTX;
  options.emulate = true;
  options.optLevel = 3;
  auto jit = BlockJit::compile(*module, *sig, options);
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());

  HostTensor x = makeRandomTensor({1, 3, 8}, 7);
  HostTensor g = makeRandomTensor({8}, 8);
  HostTensor first, second, stale;
  for (HostTensor *out : {&first, &second, &stale}) {
    out->shape = {1, 3, 8};
    out->data.assign(24, 0.0f);
  }
  std::vector<const HostTensor *> args = {&x, &g};
  ASSERT_FALSE(static_cast<bool>((*jit)->run(args, first)));
  // y = x / rms(x) * g: doubling g in place doubles y exactly.
  for (float &v : g.data)
    v *= 2.0f;
  ASSERT_FALSE(static_cast<bool>((*jit)->run(args, second)));
  for (size_t i = 0; i < first.data.size(); ++i) {
    ASSERT_NE(first.data[i], 0.0f);
    EXPECT_EQ(second.data[i], 2.0f * first.data[i]) << i;
  }
  // A caller that vouches for unchanged weights keeps the device copy: the
  // contract of WeightReuse::Unchanged (used by timed repeats).
  for (float &v : g.data)
    v *= 2.0f;
  ASSERT_FALSE(
      static_cast<bool>((*jit)->run(args, stale, WeightReuse::Unchanged)));
  EXPECT_EQ(stale.data, second.data);
}

} // namespace
