//===- FuseResidual.cpp - residual adds into projection epilogues ---------===//
//
// See Codegen/CPU/Passes.td (CPUFuseResidualPass).
//
//===----------------------------------------------------------------------===//

#include "TileEpilogue.h"
#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUFUSERESIDUALPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;

namespace {

/// The kernel's init if it is a zero fill (the linear had no bias) or a
/// bias broadcast (a one-input all-parallel generic that yields its input).
enum class InitKind { Zero, Bias, Other };

InitKind classify(Value init) {
  if (init.getDefiningOp<linalg::FillOp>())
    return blockc::cpu::isZeroFill(init) ? InitKind::Zero : InitKind::Other;
  auto generic = init.getDefiningOp<linalg::GenericOp>();
  if (generic && generic.getNumDpsInputs() == 1 &&
      generic.getNumLoops() == generic.getNumParallelLoops()) {
    auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
    if (yield.getValues().size() == 1 &&
        yield.getValues()[0] == generic.getBody()->getArgument(0))
      return InitKind::Bias;
  }
  return InitKind::Other;
}

struct CPUFuseResidualPass
    : blockc::cpu::impl::CPUFuseResidualPassBase<CPUFuseResidualPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<ResidualAddOp> adds;
    getOperation().walk([&](ResidualAddOp op) { adds.push_back(op); });
    DominanceInfo &dom = getAnalysis<DominanceInfo>();
    for (ResidualAddOp add : adds) {
      for (int side = 0; side < 2; ++side) {
        Value y = side ? add.getResidual() : add.getUpdate();
        Value r = side ? add.getUpdate() : add.getResidual();
        auto forall = y.getDefiningOp<scf::ForallOp>();
        if (!forall || !blockc::cpu::isLinearKernel(forall) ||
            forall.getNumResults() != 1 || !y.hasOneUse() ||
            r.getType() != y.getType() || y == r)
          continue;
        OpOperand &initOperand = forall.getOutputsMutable()[0];
        Value init = initOperand.get();
        InitKind kind = classify(init);
        if (kind == InitKind::Other)
          continue;
        // A function argument is the caller's buffer (one-shot bufferization
        // treats arguments as writable): starting the kernel from it would
        // update the caller's input in place. Only intermediates are fused.
        if (isa<BlockArgument>(r))
          continue;
        // The residual must be available before the kernel.
        if (!dom.properlyDominates(r, forall))
          continue;
        if (kind == InitKind::Zero) {
          initOperand.set(r);
          if (init.use_empty())
            init.getDefiningOp()->erase();
        } else {
          // init = r + bias: the broadcast generic reads r as a second
          // input and adds it.
          // Built at the kernel, which r dominates (the bias broadcast may
          // come before r's definition).
          auto generic = init.getDefiningOp<linalg::GenericOp>();
          OpBuilder b(forall);
          Location loc = generic.getLoc();
          SmallVector<AffineMap> maps = {
              generic.getIndexingMapsArray()[0],
              b.getMultiDimIdentityMap(generic.getNumLoops()),
              generic.getIndexingMapsArray()[1]};
          auto fused = linalg::GenericOp::create(
              b, loc, TypeRange{init.getType()},
              ValueRange{generic.getDpsInputs()[0], r}, generic.getDpsInits(),
              maps, generic.getIteratorTypesArray(),
              [](OpBuilder &nb, Location l, ValueRange a) {
                Value s = arith::AddFOp::create(nb, l, a[1], a[0]);
                linalg::YieldOp::create(nb, l, ValueRange{s});
              });
          initOperand.set(fused.getResult(0));
          if (generic->use_empty())
            generic->erase();
        }
        add.getResult().replaceAllUsesWith(y);
        add->erase();
        ++numFused;
        break;
      }
    }
  }
};

} // namespace
