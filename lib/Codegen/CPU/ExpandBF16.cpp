//===- ExpandBF16.cpp - bf16 conversions as integer code ------------------===//
//
// See Codegen/CPU/Passes.td (CPUExpandBF16Pass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUEXPANDBF16PASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
namespace codegen = blockc::codegen;

namespace {

bool isBF16Conversion(Operation *op) {
  if (!isa<arith::ExtFOp, arith::TruncFOp>(op))
    return false;
  auto isBF16 = [](Type t) { return getElementTypeOrSelf(t).isBF16(); };
  return isBF16(op->getOperand(0).getType()) ||
         isBF16(op->getResult(0).getType());
}

struct CPUExpandBF16Pass
    : blockc::cpu::impl::CPUExpandBF16PassBase<CPUExpandBF16Pass> {
  using Base::Base;

  void runOnOperation() override {
    // With AVX512_BF16 (the function's cpu_target) LLVM rounds f32 to bf16
    // with vcvtneps2bf16: the truncations stay, the widenings (a shift)
    // are expanded as everywhere.
    auto target = getOperation()->getAttrOfType<codegen::CPUTargetAttr>(
        codegen::CodegenDialect::kCpuTargetAttrName);
    bool nativeTrunc = target && target.getAvx512Bf16();
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isBF16Conversion(op) &&
          !(nativeTrunc && isa<arith::TruncFOp>(op) &&
            getElementTypeOrSelf(op->getOperand(0).getType()).isF32()))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    // (Statistics may be no-ops in a release LLVM: counted here.)
    numExpanded += ops.size();
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
