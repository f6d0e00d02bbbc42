//===- ExpandBF16.cpp - bf16 conversions as integer code ------------------===//
//
// See Codegen/CPU/Passes.td (CPUExpandBF16Pass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUEXPANDBF16PASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;

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
    // (Statistics may be no-ops in a release LLVM: count here.)
    int64_t count = 0;
    getOperation().walk([&](Operation *op) { count += isBF16Conversion(op); });
    if (count == 0)
      return;
    numExpanded += count;
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
