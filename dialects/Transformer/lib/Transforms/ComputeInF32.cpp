//===- ComputeInF32.cpp - bf16/f16 blocks computed in f32 -----------------===//
//
// See Transforms/Passes.td (TransformerComputeInF32Pass) and
// docs/Precision.md for the rounding points.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/OpDefinition.h"

namespace blockc::transformer {
#define GEN_PASS_DEF_TRANSFORMERCOMPUTEINF32PASS
#include "blockc/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace blockc::transformer

using namespace mlir;
using namespace blockc::transformer;

namespace {

/// Whether `t` is a tensor of a 16-bit float (a storage type).
bool isNarrowFloatTensor(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && isa<BFloat16Type, Float16Type>(tensor.getElementType());
}

RankedTensorType withElementType(Type t, Type elt) {
  return cast<RankedTensorType>(t).clone(elt);
}

/// `v` widened to f32 (exact).
Value widen(OpBuilder &b, Location loc, Value v) {
  return arith::ExtFOp::create(b, loc,
                               withElementType(v.getType(), b.getF32Type()), v);
}

/// The ops that compute on their operands (and so round their results);
/// shape ops, KV cache appends and the rounding casts themselves only move
/// or convert values.
bool computes(Operation *op) {
  if (isa<RMSNormOp, LayerNormOp, LinearOp, RoPEOp, SDPAOp, PagedSDPAOp,
          ActivationOp, ResidualAddOp>(op))
    return true;
  return isa<arith::ArithDialect>(op->getDialect()) &&
         !isa<arith::ExtFOp, arith::TruncFOp>(op) &&
         op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1 &&
         isa<RankedTensorType>(op->getResult(0).getType());
}

struct TransformerComputeInF32Pass
    : blockc::transformer::impl::TransformerComputeInF32PassBase<
          TransformerComputeInF32Pass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    bool composite = false;
    getOperation()->walk([&](Operation *op) {
      bool narrow = llvm::any_of(op->getOperandTypes(), isNarrowFloatTensor) ||
                    llvm::any_of(op->getResultTypes(), isNarrowFloatTensor);
      if (!narrow)
        return;
      if (isa<BlockOp, AttentionOp, FFNOp>(op)) {
        op->emitOpError() << "must be decomposed before "
                             "transformer-compute-in-f32";
        composite = true;
      } else if (computes(op) || isa<shard::AllReduceOp>(op)) {
        ops.push_back(op);
      }
    });
    if (composite)
      return signalPassFailure();
    for (Operation *op : ops) {
      if (auto norm = dyn_cast<RMSNormOp>(op))
        widenRMSNorm(norm);
      else if (auto reduce = dyn_cast<shard::AllReduceOp>(op))
        widenAllReduce(reduce);
      else if (!widenOp(op))
        continue; // already f32 but for a linear's 16-bit weight
      ++numWidened;
    }
  }

  /// Widens the narrow operands (not a linear's weight), computes in f32
  /// and rounds each narrow result back to its type; false if nothing was
  /// narrow but a linear's weight.
  bool widenOp(Operation *op) {
    bool changed = false;
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto linear = dyn_cast<LinearOp>(op);
    auto paged = dyn_cast<PagedSDPAOp>(op);
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isNarrowFloatTensor(operand.get().getType()))
        continue;
      if (linear && operand.getOperandNumber() ==
                        linear.getWeightMutable().getOperandNumber())
        continue;
      // Paged attention reads its 16-bit pools as stored (widened in
      // registers): only the query is widened.
      if (paged && &operand != &paged.getQueryMutable())
        continue;
      operand.set(widen(b, loc, operand.get()));
      changed = true;
    }
    b.setInsertionPointAfter(op);
    for (OpResult result : op->getResults()) {
      Type narrow = result.getType();
      if (!isNarrowFloatTensor(narrow))
        continue;
      result.setType(withElementType(narrow, b.getF32Type()));
      auto round = arith::TruncFOp::create(b, loc, narrow, result);
      result.replaceAllUsesExcept(round, round);
      changed = true;
    }
    return changed;
  }

  /// A tensor-parallel all-reduce (transformer-decompose) of the ranks'
  /// partial projection outputs sums them in f32 and rounds once: a partial
  /// that is a rounded f32 result is summed unrounded, so the sum rounds
  /// where the single-process projection's result does (and MPI needs no
  /// 16-bit float type).
  void widenAllReduce(shard::AllReduceOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value partial = op.getInput();
    if (auto round = partial.getDefiningOp<arith::TruncFOp>();
        round && round.getIn().getType() ==
                     withElementType(partial.getType(), b.getF32Type()))
      partial = round.getIn();
    else
      partial = widen(b, loc, partial);
    op.getInputMutable().assign(partial);
    Type narrow = op.getResult().getType();
    op.getResult().setType(withElementType(narrow, b.getF32Type()));
    b.setInsertionPointAfter(op);
    auto rounded = arith::TruncFOp::create(b, loc, narrow, op.getResult());
    op.getResult().replaceAllUsesExcept(rounded, rounded);
  }

  /// LlamaRMSNorm in a narrow type: `weight * (x * rsqrt(mean(x^2) +
  /// eps)).to(dtype)`: the f32 norm with a unit gain, rounded, then the
  /// product with the gain, rounded.
  void widenRMSNorm(RMSNormOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type f32 = b.getF32Type(), narrow = type.getElementType();
    auto gainType = cast<RankedTensorType>(op.getWeight().getType());
    Value ones = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(gainType.clone(f32), b.getF32FloatAttr(1.0)));
    auto normalized =
        RMSNormOp::create(b, loc, withElementType(type, f32),
                          widen(b, loc, op.getInput()), ones, op.getEpsilon());
    // Discardable attributes (e.g. a layer tag) stay with the norm.
    for (NamedAttribute attr : op->getDiscardableAttrs())
      normalized->setAttr(attr.getName(), attr.getValue());
    Value rounded = arith::TruncFOp::create(b, loc, type, normalized);
    // result[..., i] = round(widen(rounded[..., i]) * widen(gain[i])).
    unsigned rank = type.getRank();
    SmallVector<Value> dynSizes;
    for (unsigned i = 0; i < rank; ++i)
      if (type.isDynamicDim(i))
        dynSizes.push_back(tensor::DimOp::create(b, loc, rounded, i));
    Value init = tensor::EmptyOp::create(b, loc, type, dynSizes);
    MLIRContext *ctx = b.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap last = AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, ctx));
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto gained = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{rounded, op.getWeight()},
        ValueRange{init}, ArrayRef<AffineMap>{id, last, id}, iters,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value x = arith::ExtFOp::create(nb, l, f32, args[0]);
          Value g = arith::ExtFOp::create(nb, l, f32, args[1]);
          Value p = arith::MulFOp::create(nb, l, x, g);
          linalg::YieldOp::create(
              nb, l, ValueRange{arith::TruncFOp::create(nb, l, narrow, p)});
        });
    op.replaceAllUsesWith(gained.getResult(0));
    op.erase();
  }
};

} // namespace
