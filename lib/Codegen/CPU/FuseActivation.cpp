//===- FuseActivation.cpp - activations into projection epilogues ---------===//
//
// See Codegen/CPU/Passes.td (CPUFuseActivationPass).
//
//===----------------------------------------------------------------------===//

#include "TileEpilogue.h"
#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/Approximations.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUFUSEACTIVATIONPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;

namespace {

/// The projection kernel that produces `v` (one of its results; a
/// horizontal group has one per member), if `v` has exactly one use.
scf::ForallOp kernelOf(Value v) {
  auto forall = v.getDefiningOp<scf::ForallOp>();
  if (!forall || !blockc::cpu::isLinearKernel(forall) || !v.hasOneUse())
    return {};
  return forall;
}

/// The parallel_insert_slice that writes kernel result `v` (its block's
/// tile), or null.
tensor::ParallelInsertSliceOp tileInsert(scf::ForallOp forall, Value v) {
  auto ops = forall.getTerminator().getYieldingOps();
  unsigned index = cast<OpResult>(v).getResultNumber();
  if (static_cast<size_t>(llvm::range_size(ops)) != forall.getNumResults())
    return {};
  return dyn_cast<tensor::ParallelInsertSliceOp>(
      *std::next(ops.begin(), index));
}

struct EpilogueBuilder {
  OpBuilder &b;
  Location loc;
  VectorType vec;

  /// The activation on a vector, as the reference defines it (the
  /// polynomials of Codegen/Common/Approximations.h: LLVM would otherwise
  /// scalarise a vector exp / erf into libm calls).
  Value activate(ActivationKind kind, Value x) {
    switch (kind) {
    case ActivationKind::silu:
      return blockc::buildSilu(b, loc, x);
    case ActivationKind::gelu:
      return blockc::buildGelu(b, loc, x);
    case ActivationKind::gelu_tanh:
      return blockc::buildGeluTanh(b, loc, x);
    case ActivationKind::relu:
      return arith::MaximumFOp::create(
          b, loc, x,
          arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vec, 0.0f)));
    }
    llvm_unreachable("unknown activation kind");
  }

  /// tile[b, t, n] = act(gate[b, t, n]) * tile[b, t, n] (gated) or
  /// act(tile[b, t, n]).
  Value epilogue(Value tile, Value gate, ActivationKind kind) {
    Value pad = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    return blockc::cpu::buildTileEpilogue(
        b, loc, tile, vec, [&](Value x, ValueRange at, bool inBounds) {
          if (!gate)
            return activate(kind, x);
          Value g = vector::TransferReadOp::create(b, loc, vec, gate, at, pad,
                                                   ArrayRef<bool>{inBounds});
          return Value(arith::MulFOp::create(b, loc, activate(kind, g), x));
        });
  }
};

struct CPUFuseActivationPass
    : blockc::cpu::impl::CPUFuseActivationPassBase<CPUFuseActivationPass> {
  using Base::Base;

  /// Ends every block of `forall` with the epilogue. The gate (if any) is
  /// `gateInsert`'s tile when g comes from the same kernel (a horizontal
  /// group computes gate and up block i in one iteration), else `gate`
  /// read at the tile's offsets.
  void fuse(scf::ForallOp forall, tensor::ParallelInsertSliceOp insert,
            Value gate, tensor::ParallelInsertSliceOp gateInsert,
            ActivationKind kind, int64_t width) {
    OpBuilder b(forall.getTerminator());
    Location loc = insert.getLoc();
    EpilogueBuilder eb{b, loc, VectorType::get({width}, b.getF32Type())};
    Value tile = insert.getSource();
    Value gateTile;
    if (gateInsert)
      gateTile = gateInsert.getSource();
    else if (gate)
      gateTile = tensor::ExtractSliceOp::create(
          b, loc, cast<RankedTensorType>(tile.getType()), gate,
          insert.getMixedOffsets(), insert.getMixedSizes(),
          insert.getMixedStrides());
    Value result = eb.epilogue(tile, gateTile, kind);
    insert.getSourceMutable().assign(result);
  }

  /// A group member whose result is dead once the epilogue read its tile
  /// (the gate of a grouped SwiGLU) needs no shared output: its tile starts
  /// from a zero-filled tensor of the iteration's own. Otherwise, once
  /// canonicalization drops the dead result, the tile would be a slice of
  /// the filled tensor outside the loop, which bufferization copies per
  /// iteration (a parallel loop may not write a shared buffer it does not
  /// own). Only zero-filled members (no bias, no residual) are rewritten.
  void privatizeDeadMember(scf::ForallOp forall,
                           tensor::ParallelInsertSliceOp insert) {
    auto arg = dyn_cast<BlockArgument>(insert.getDest());
    if (!arg || arg.getOwner() != forall.getBody())
      return;
    OpOperand *init = forall.getTiedOpOperand(arg);
    if (!init || !blockc::cpu::isZeroFill(init->get()))
      return;
    tensor::ExtractSliceOp slice;
    for (OpOperand &use : arg.getUses()) {
      if (use.getOwner() == insert.getOperation())
        continue;
      auto s = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
      if (slice || !s ||
          !s.isSameAs(insert,
                      [](OpFoldResult a, OpFoldResult c) { return a == c; }))
        return;
      slice = s;
    }
    if (!slice)
      return;
    OpBuilder b(slice);
    Location loc = slice.getLoc();
    Value empty = tensor::EmptyOp::create(b, loc, slice.getMixedSizes(),
                                          slice.getType().getElementType());
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    Value filled =
        linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
            .getResult(0);
    slice.getResult().replaceAllUsesWith(filled);
    slice->erase();
    ++numPrivatized;
  }

  void runOnOperation() override {
    SmallVector<ActivationOp> acts;
    getOperation().walk([&](ActivationOp op) { acts.push_back(op); });
    DominanceInfo &dom = getAnalysis<DominanceInfo>();
    // The target is needed only once there is an epilogue to build.
    blockc::cpu::LazyVectorWidth targetWidth(getOperation(),
                                             "blockc-cpu-fuse-activation");
    auto fuseInto = [&](scf::ForallOp forall,
                        tensor::ParallelInsertSliceOp insert, Value gate,
                        tensor::ParallelInsertSliceOp gateInsert,
                        ActivationKind kind) -> LogicalResult {
      FailureOr<int64_t> width = targetWidth.get();
      if (failed(width))
        return failure();
      fuse(forall, insert, gate, gateInsert, kind, *width);
      return success();
    };
    for (ActivationOp act : acts) {
      auto type = dyn_cast<RankedTensorType>(act.getType());
      if (!type || !type.getElementType().isF32() || type.getRank() != 3)
        continue;
      // Gated: mulf(act(g), u), u a kernel used only there.
      if (act->hasOneUse()) {
        if (auto mul = dyn_cast<arith::MulFOp>(*act->getUsers().begin())) {
          Value other =
              mul.getLhs() == act.getResult() ? mul.getRhs() : mul.getLhs();
          scf::ForallOp forall = kernelOf(other);
          tensor::ParallelInsertSliceOp insert;
          if (forall)
            insert = tileInsert(forall, other);
          Value g = act.getInput();
          // g from the same (grouped) kernel: its tile of the same block.
          if (insert && g.getDefiningOp() == forall.getOperation() &&
              g != other && g.getType() == type) {
            if (auto gateInsert = tileInsert(forall, g)) {
              if (failed(fuseInto(forall, insert, Value(), gateInsert,
                                  act.getKind())))
                return signalPassFailure();
              mul.getResult().replaceAllUsesWith(other);
              mul->erase();
              act->erase();
              if (g.use_empty())
                privatizeDeadMember(forall, gateInsert);
              ++numGated;
              continue;
            }
          }
          if (insert && other != act.getResult() &&
              g.getDefiningOp() != forall.getOperation() &&
              other.getType() == act.getType() && g.getType() == type) {
            // The gate must be available inside u's kernel: move the
            // kernel after g's definition (its users, the mulf, come after
            // g's activation anyway).
            Operation *gDef = g.getDefiningOp();
            if (gDef && gDef->getBlock() == forall->getBlock() &&
                forall->isBeforeInBlock(gDef))
              forall->moveAfter(gDef);
            if (dom.properlyDominates(g, forall)) {
              if (failed(fuseInto(forall, insert, g, {}, act.getKind())))
                return signalPassFailure();
              mul.getResult().replaceAllUsesWith(other);
              mul->erase();
              act->erase();
              ++numGated;
              continue;
            }
          }
        }
      }
      // Plain: act(u), u a kernel used only here.
      scf::ForallOp forall = kernelOf(act.getInput());
      if (!forall || act.getInput().getType() != type)
        continue;
      tensor::ParallelInsertSliceOp insert = tileInsert(forall, act.getInput());
      if (!insert)
        continue;
      if (failed(fuseInto(forall, insert, Value(), {}, act.getKind())))
        return signalPassFailure();
      act.getResult().replaceAllUsesWith(act.getInput());
      act->erase();
      ++numPlain;
    }
  }
};

} // namespace
