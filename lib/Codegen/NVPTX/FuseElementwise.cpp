//===- FuseElementwise.cpp - fuse elementwise chains into one kernel ------===//
//
// Upstream's elementwise fusion patterns with a control function that keeps
// contractions and reductions intact. See Codegen/NVPTX/Passes.td
// (GPUFuseElementwisePass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUFUSEELEMENTWISEPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

bool allParallel(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumLoops() == linalgOp.getNumParallelLoops();
}

struct GPUFuseElementwisePass
    : blockc::nvptx::impl::GPUFuseElementwisePassBase<GPUFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Only all-parallel consumers: a producer fused into a contraction or a
    // reduction would be recomputed for every reduction step and would hide
    // the contraction from blockc-gpu-tile-matmul.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          return allParallel(fused->getOwner()) &&
                 allParallel(fused->get().getDefiningOp());
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
