//===- FuseElementwise.cpp - fuse elementwise chains into one op ----------===//
//
// Upstream's elementwise fusion patterns with a control function that keeps
// contractions and reductions intact and never recomputes a producer per
// broadcast element. See Codegen/Common/Passes.td (FuseElementwisePass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace blockc {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "blockc/Codegen/Common/Passes.h.inc"
} // namespace blockc

using namespace mlir;

namespace {

bool allParallel(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumLoops() == linalgOp.getNumParallelLoops();
}

struct FuseElementwisePass
    : blockc::impl::FuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Only all-parallel consumers: a producer fused into a contraction or a
    // reduction would be recomputed for every reduction step and would hide
    // the contraction from the projection kernels. Only permutation reads:
    // a producer read through a broadcast would be recomputed per element.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns,
        [fuseBroadcast = bool(fuseBroadcast),
         fuseIntoReductions = bool(fuseIntoReductions)](OpOperand *fused) {
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          if (!consumer || !allParallel(fused->get().getDefiningOp()))
            return false;
          bool permutation =
              consumer.getMatchingIndexingMap(fused).isPermutation();
          // A reduction that reads each producer element once (a
          // permutation of all its loops) recomputes nothing.
          if (!allParallel(consumer))
            return fuseIntoReductions && permutation &&
                   consumer.getNumReductionLoops() > 0;
          return fuseBroadcast || permutation;
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
