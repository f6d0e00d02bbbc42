//===- CompilerTest.cpp - the compile flow shared by every tool -----------===//
//
// What lib/Compiler decides for the tools: the checks of option
// combinations, the output paths, the stages each target's pipeline runs
// (the JIT's full pipeline is the builders' whole pipeline; a split
// pipeline is the same passes), the staged compile's prepare records and
// the decode entry derived on a copy, and the error a tool prints.
//
//===----------------------------------------------------------------------===//

#include "blockc/Compiler/Compiler.h"
#include "blockc/InitAllDialects.h"

#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace blockc;

namespace {

/// A projection (whose weight a prepare function packs) and causal
/// attention (which a decode entry caches).
const char *kModel = R"(
func.func @forward(%x: tensor<1x?x16xf32>,
    %w: tensor<16x16xf32> {transformer.weight_name = "w"})
    -> tensor<1x?x16xf32> {
  %h = transformer.linear %x, %w : tensor<1x?x16xf32>, tensor<16x16xf32>
      -> tensor<1x?x16xf32>
  %c1 = arith.constant 1 : index
  %t = tensor.dim %h, %c1 : tensor<1x?x16xf32>
  %q = tensor.expand_shape %h [[0], [1], [2, 3]] output_shape [1, %t, 2, 8]
      : tensor<1x?x16xf32> into tensor<1x?x2x8xf32>
  %o = transformer.sdpa %q, %q, %q {causal} : tensor<1x?x2x8xf32>,
      tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32> -> tensor<1x?x2x8xf32>
  %r = tensor.collapse_shape %o [[0], [1], [2, 3]]
      : tensor<1x?x2x8xf32> into tensor<1x?x16xf32>
  return %r : tensor<1x?x16xf32>
}
)";

std::string
pipelineText(mlir::MLIRContext &ctx,
             llvm::function_ref<void(mlir::OpPassManager &)> build) {
  mlir::PassManager pm(&ctx, mlir::ModuleOp::getOperationName());
  build(pm);
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  return text;
}

TEST(CompileOptionsTest, VerifyNamesTheOption) {
  CompileOptions options;
  EXPECT_EQ(options.verify(), "");
  options.emulate = true;
  EXPECT_EQ(options.verify(), "--emulate needs -target=nvptx");
  options.target = CompileTarget::NVPTX;
  EXPECT_EQ(options.verify(), "");
  options.optLevel = 4;
  EXPECT_EQ(options.verify(), "-O must be 0, 1, 2 or 3");
  options.optLevel = 2;
  options.warpgroupSchedule = "eager";
  EXPECT_EQ(options.verify(),
            "unknown -gpu-warpgroup-schedule 'eager' (expected specialized, "
            "persistent or cooperative)");
  options.warpgroupSchedule = "specialized";
  options.tensorParallel = -1;
  EXPECT_EQ(options.verify(), "--tensor-parallel must be at least 1");
}

TEST(CompilerTest, VerifyStage) {
  CompileOptions options;
  EXPECT_EQ(verifyStage(options, CompileStage::Object), "");
  EXPECT_EQ(verifyStage(options, CompileStage::PTX),
            "-emit=ptx|cubin|fatbin need -target=nvptx");
  options.target = CompileTarget::NVPTX;
  options.emulate = true;
  EXPECT_NE(verifyStage(options, CompileStage::Cubin).find("--emulate"),
            std::string::npos);
  EXPECT_EQ(verifyStage(options, CompileStage::Object), "");
}

TEST(CompilerTest, OutputPaths) {
  auto paths = getOutputPaths("dir/model.mlir", "", "", CompileStage::Object);
  ASSERT_TRUE(static_cast<bool>(paths));
  EXPECT_EQ(paths->output, "model.o");
  EXPECT_EQ(paths->header, "model.h");
  paths = getOutputPaths("-", "", "", CompileStage::Cubin);
  ASSERT_TRUE(static_cast<bool>(paths));
  EXPECT_EQ(paths->output, "model.cubin");
  paths = getOutputPaths("m.mlir", "out/b.o", "", CompileStage::Object);
  ASSERT_TRUE(static_cast<bool>(paths));
  EXPECT_EQ(paths->header, "out/b.h");
  paths = getOutputPaths("m.mlir", "", "", CompileStage::LLVMIR);
  ASSERT_TRUE(static_cast<bool>(paths));
  EXPECT_EQ(paths->output, "-");
  paths = getOutputPaths("m.mlir", "-", "", CompileStage::Fatbin);
  ASSERT_FALSE(static_cast<bool>(paths));
  EXPECT_EQ(getErrorMessage(paths.takeError()),
            "-emit=obj|cubin|fatbin need an output file (-o)");
}

TEST(CompilerTest, DiagnosedErrorsHaveNoMessageForTools) {
  EXPECT_EQ(getErrorMessage(llvm::make_error<DiagnosedError>("x failed")), "");
  EXPECT_EQ(getErrorMessage(llvm::createStringError(
                llvm::inconvertibleErrorCode(), "plain")),
            "plain");
}

TEST(CompilerTest, PipelineStagesMatchTheBuilders) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  CompileOptions options;
  options.cpu.isa = CPUISA::AVX2;
  std::string whole = pipelineText(
      ctx, [&](mlir::OpPassManager &pm) { buildCPUPipeline(pm, options.cpu); });
  EXPECT_EQ(pipelineText(ctx,
                         [&](mlir::OpPassManager &pm) {
                           buildCompilePipeline(pm, options,
                                                CompileStage::LLVMDialect,
                                                "forward");
                         }),
            whole);
  // Split after stage 1: the same passes in two parts.
  std::string first = pipelineText(ctx, [&](mlir::OpPassManager &pm) {
    buildCompilePipeline(pm, options, CompileStage::LLVMDialect, "forward",
                         DecodeMode::None, "", PipelinePart::UpToLinalg);
  });
  std::string rest = pipelineText(ctx, [&](mlir::OpPassManager &pm) {
    buildCompilePipeline(pm, options, CompileStage::LLVMDialect, "forward",
                         DecodeMode::None, "", PipelinePart::AfterLinalg);
  });
  EXPECT_EQ(pipelineText(ctx,
                         [&](mlir::OpPassManager &pm) {
                           buildCompilePipeline(
                               pm, options, CompileStage::Linalg, "forward");
                         }),
            first);
  EXPECT_NE(rest, "");
  EXPECT_NE(whole.find(rest.substr(rest.find('(') + 1, 40)), std::string::npos);
  // A decode session's pipeline derives the decode entry alone.
  std::string decode = pipelineText(ctx, [&](mlir::OpPassManager &pm) {
    buildCompilePipeline(pm, options, CompileStage::LLVMDialect, "forward",
                         DecodeMode::Only);
  });
  DecodeOptions derive;
  derive.keepPrefill = false;
  EXPECT_EQ(decode, pipelineText(ctx, [&](mlir::OpPassManager &pm) {
              buildCPUDecodePipeline(pm, options.cpu, derive);
            }));
}

/// kModel parsed in a context with every dialect.
class CompilerModelTest : public testing::Test {
protected:
  void SetUp() override {
    registerAllDialects(registry);
    ctx = std::make_unique<mlir::MLIRContext>(registry);
    module = mlir::parseSourceString<mlir::ModuleOp>(kModel, ctx.get());
    ASSERT_TRUE(module);
  }
  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(CompilerModelTest, TensorParallelRanksAreCheckedBeforeJoining) {
  CompileOptions options;
  auto ranks = planTensorParallel(*module, options);
  ASSERT_TRUE(static_cast<bool>(ranks));
  EXPECT_EQ(*ranks, 1);
  options.tensorParallel = 2;
  ranks = planTensorParallel(*module, options);
  ASSERT_TRUE(static_cast<bool>(ranks));
  EXPECT_EQ(*ranks, 2);
  // Planning partitions nothing that was not partitioned already.
  EXPECT_EQ(getTensorParallelRanks(*module), 1);
  options.target = CompileTarget::NVPTX;
  ranks = planTensorParallel(*module, options);
  ASSERT_FALSE(static_cast<bool>(ranks));
  EXPECT_NE(getErrorMessage(ranks.takeError()).find("runs on the CPU target"),
            std::string::npos);
}

TEST_F(CompilerModelTest, LowerModuleReadsRecordsAndDerivesDecode) {
  // lowerModule applies the pass-manager command-line options.
  mlir::registerPassManagerCLOptions();
  CompileOptions options;
  auto signature = prepareModel(*module, options);
  ASSERT_TRUE(static_cast<bool>(signature))
      << llvm::toString(signature.takeError());
  EXPECT_EQ(signature->funcName, "forward");
  auto lowered =
      lowerModule(*module, options, CompileStage::LLVMDialect, *signature,
                  DecodeMode::BesideEntry, "", /*readPrepareRecords=*/true);
  ASSERT_TRUE(static_cast<bool>(lowered))
      << llvm::toString(lowered.takeError());
  // Both entries read the projection's weight prepared; the decode entry
  // caches K and V head-major (the default layout).
  ASSERT_TRUE(lowered->prepare.has_value());
  EXPECT_EQ(lowered->prepare->results.size(), 1u);
  ASSERT_TRUE(lowered->decode.has_value());
  EXPECT_EQ(lowered->decode->funcName, "forward_decode");
  EXPECT_EQ(lowered->decode->caches.size(), 2u);
  EXPECT_TRUE(lowered->decode->headMajor);
  EXPECT_TRUE(lowered->decode->prepare.has_value());
  EXPECT_TRUE(module->lookupSymbol("forward_decode"));
}

} // namespace
