//===- FuseElementwise.cpp - fuse elementwise chains into one op ----------===//
//
// Upstream's elementwise fusion patterns with a control function that keeps
// contractions and reductions intact and never recomputes a producer per
// broadcast element. See Codegen/Common/Passes.td (FuseElementwisePass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// Whether `op` only widens its one input (a `linalg.generic` whose body is
/// one `arith.extf` of it): recomputing it in every consumer is free.
bool isWidening(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1)
    return false;
  Block *body = generic.getBody();
  auto ext = dyn_cast<arith::ExtFOp>(body->front());
  return ext && ext.getIn() == body->getArgument(0) &&
         body->getTerminator()->getOperand(0) == ext.getResult();
}

/// Whether `v` is computed, through all-parallel linalg ops, from the result
/// of a contraction configured for tensor cores (whose epilogue can compute
/// it, once: blockc-gpu-tile-matmul).
bool dependsOnTensorCoreResult(Value v, int depth = 0) {
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  if (!op || depth > 8)
    return false;
  if (op->hasAttr(blockc::codegen::CodegenDialect::kGpuMmaTilesAttrName))
    return true;
  return allParallel(op) && llvm::any_of(op.getDpsInputs(), [&](Value input) {
           return dependsOnTensorCoreResult(input, depth + 1);
         });
}

/// Whether more than one op other than `tensor.dim` reads `v`.
bool hasSeveralReaders(Value v) {
  SmallPtrSet<Operation *, 4> readers;
  for (Operation *user : v.getUsers())
    if (!isa<tensor::DimOp>(user))
      readers.insert(user);
  return readers.size() > 1;
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
         fuseIntoReductions = bool(fuseIntoReductions),
         keepShared = bool(keepSharedTensorCoreResults)](OpOperand *fused) {
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          Operation *producer = fused->get().getDefiningOp();
          if (!consumer || !allParallel(producer))
            return false;
          // A value several ops read that a tensor-core projection's
          // epilogue can compute (e.g. the residual stream after the O
          // projection) is computed once there rather than in each reader.
          // (Nor is it folded into a widening that several ops read, which
          // would make that widening the shared value, in f32.)
          if (keepShared && dependsOnTensorCoreResult(fused->get()) &&
              ((!isWidening(producer) && hasSeveralReaders(fused->get())) ||
               (isWidening(consumer) &&
                hasSeveralReaders(consumer->getResult(0)))))
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
