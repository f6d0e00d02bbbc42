//===- LowerTransposes.cpp - target-chosen vector.transpose lowering ------===//
//
// See Codegen/CPU/Passes.td (CPULowerTransposesPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/X86Vector/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPULOWERTRANSPOSESPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
namespace codegen = blockc::codegen;

namespace {

/// The upstream lowerings this pass chooses between.
enum class Strategy { Shuffle16x16, AVX2, Shuffle1D };

Strategy chooseStrategy(vector::TransposeOp op, codegen::ISA isa) {
  VectorType type = op.getSourceVectorType();
  Type element = type.getElementType();
  if (type.getRank() != 2 || !element.isIntOrFloat())
    return Strategy::Shuffle1D;
  if (element.getIntOrFloatBitWidth() == 32 && type.getDimSize(0) == 16 &&
      type.getDimSize(1) == 16)
    return Strategy::Shuffle16x16;
  if (isa == codegen::ISA::avx2 && element.isF32() && type.getDimSize(1) == 8 &&
      (type.getDimSize(0) == 8 || type.getDimSize(0) == 4))
    return Strategy::AVX2;
  return Strategy::Shuffle1D;
}

struct CPULowerTransposesPass
    : blockc::cpu::impl::CPULowerTransposesPassBase<CPULowerTransposesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> byStrategy[3];
    int64_t count = 0;
    func.walk([&](vector::TransposeOp) { ++count; });
    if (count == 0)
      return;
    auto target = func->getAttrOfType<codegen::CPUTargetAttr>(
        codegen::CodegenDialect::kCpuTargetAttrName);
    if (!target) {
      func.emitError() << "blockc-cpu-lower-transposes: the function has no '"
                       << codegen::CodegenDialect::kCpuTargetAttrName
                       << "' (run blockc-cpu-select-tiles first)";
      return signalPassFailure();
    }
    func.walk([&](vector::TransposeOp op) {
      byStrategy[static_cast<int>(chooseStrategy(op, target.getIsa()))]
          .push_back(op);
    });

    MLIRContext *ctx = &getContext();
    auto apply = [&](ArrayRef<Operation *> ops,
                     function_ref<void(RewritePatternSet &)> populate) {
      if (ops.empty())
        return success();
      RewritePatternSet patterns(ctx);
      populate(patterns);
      // Only the chosen ops are rewritten; what their lowering creates
      // (shape casts, shuffles) is left for convert-vector-to-llvm.
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingOps);
      return applyOpPatternsGreedily(ops, std::move(patterns), config);
    };
    if (failed(apply(byStrategy[0],
                     [](RewritePatternSet &p) {
                       vector::populateVectorTransposeLoweringPatterns(
                           p, vector::VectorTransposeLowering::Shuffle16x16);
                     })) ||
        failed(apply(
            byStrategy[1],
            [](RewritePatternSet &p) {
              x86vector::avx2::populateSpecializedTransposeLoweringPatterns(
                  p, x86vector::avx2::LoweringOptions().setTransposeOptions(
                         x86vector::avx2::TransposeLoweringOptions()
                             .lower4x8xf32()
                             .lower8x8xf32()));
            })) ||
        failed(apply(byStrategy[2], [](RewritePatternSet &p) {
          vector::populateVectorTransposeLoweringPatterns(
              p, vector::VectorTransposeLowering::Shuffle1D);
        })))
      return signalPassFailure();
    int64_t left = 0;
    func.walk([&](vector::TransposeOp) { ++left; });
    numLowered += count - left;
    if (left != 0) {
      func.emitError() << "blockc-cpu-lower-transposes: " << left
                       << " vector.transpose op(s) could not be lowered";
      return signalPassFailure();
    }
  }
};

} // namespace
