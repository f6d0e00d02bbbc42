//===- WeightQuant.cpp - dequantised weights of quantised projections -----===//
//
// See Conversion/Passes.td (ConvertWeightQuantToLinalgPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Conversion/Passes.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc {
#define GEN_PASS_DEF_CONVERTWEIGHTQUANTTOLINALGPASS
#include "blockc/Conversion/Passes.h.inc"
} // namespace blockc

using namespace mlir;
using namespace blockc::transformer;

namespace {

/// W' = q * s (see #transformer.weight_quant) for the weight `w` [N, K],
/// computed in f32 and returned in w's element type:
///   amax[n, j] = max_{l < G} |W[n, j G + l]|          (W viewed [N, K/G, G])
///   s = amax / L; W'[n, k] = s == 0 ? 0 : clamp(rint(W / s), -L, L) * s
/// with s = amax[n, k floordiv G] and L the largest level (127 or 7).
Value buildDequantizedWeight(OpBuilder &b, Location loc, Value w,
                             WeightQuantAttr quant) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t n = type.getDimSize(0), k = type.getDimSize(1);
  int64_t g = quant.getGroupSizeFor(k), groups = k / g;
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type(), elem = type.getElementType();
  auto toF32 = [&](OpBuilder &nb, Value v) -> Value {
    return elem == f32 ? v : arith::ExtFOp::create(nb, loc, f32, v).getResult();
  };
  auto f32Const = [&](OpBuilder &nb, double v) -> Value {
    return arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(v));
  };

  // The per-group maxima of |W|, over W viewed as [N, K/G, G].
  Value grouped = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({n, groups, g}, elem), w,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  Value amaxInit =
      linalg::FillOp::create(
          b, loc, f32Const(b, 0.0),
          tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{n, groups}, f32)
              .getResult())
          .getResult(0);
  AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
  AffineMap drop3 = AffineMap::get(
      3, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)}, ctx);
  Value amax =
      linalg::GenericOp::create(
          b, loc, amaxInit.getType(), ValueRange{grouped}, ValueRange{amaxInit},
          ArrayRef<AffineMap>{id3, drop3},
          ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                        utils::IteratorType::parallel,
                                        utils::IteratorType::reduction},
          [&](OpBuilder &nb, Location, ValueRange args) {
            Value a = math::AbsFOp::create(nb, loc, toF32(nb, args[0]));
            linalg::YieldOp::create(
                nb, loc,
                ValueRange{arith::MaximumFOp::create(nb, loc, args[1], a)});
          })
          .getResult(0);

  // The dequantised weight, elementwise over W (its first input, so that
  // blockc-cpu-prepare-weights sees the weight this computation reads).
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap group = AffineMap::get(
      2, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx).floorDiv(g)},
      ctx);
  double level = static_cast<double>(quant.getMaxLevel());
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), elem);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{w, amax}, ValueRange{init},
             ArrayRef<AffineMap>{id2, group, id2},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel},
             [&](OpBuilder &nb, Location, ValueRange args) {
               Value x = toF32(nb, args[0]);
               Value s =
                   arith::DivFOp::create(nb, loc, args[1], f32Const(nb, level));
               Value q = math::RoundEvenOp::create(
                   nb, loc, arith::DivFOp::create(nb, loc, x, s));
               q = arith::MinimumFOp::create(
                   nb, loc,
                   arith::MaximumFOp::create(nb, loc, q, f32Const(nb, -level)),
                   f32Const(nb, level));
               Value zero = f32Const(nb, 0.0);
               Value isZero = arith::CmpFOp::create(
                   nb, loc, arith::CmpFPredicate::OEQ, s, zero);
               Value r = arith::SelectOp::create(
                   nb, loc, isZero, zero, arith::MulFOp::create(nb, loc, q, s));
               if (elem != f32)
                 r = arith::TruncFOp::create(nb, loc, elem, r);
               linalg::YieldOp::create(nb, loc, ValueRange{r});
             })
      .getResult(0);
}

struct ConvertWeightQuantToLinalgPass
    : blockc::impl::ConvertWeightQuantToLinalgPassBase<
          ConvertWeightQuantToLinalgPass> {
  void runOnOperation() override {
    SmallVector<LinearOp> linears;
    getOperation()->walk([&](LinearOp op) {
      if (op.getWeightQuantAttr())
        linears.push_back(op);
    });
    // Weights quantised the same way by several projections are
    // dequantised once.
    DenseMap<std::pair<Value, Attribute>, Value> done;
    for (LinearOp op : linears) {
      WeightQuantAttr quant = op.getWeightQuantAttr();
      Value w = op.getWeight();
      Value &dequantized = done[{w, quant}];
      if (!dequantized) {
        OpBuilder b(op);
        if (auto arg = dyn_cast<BlockArgument>(w))
          b.setInsertionPointToStart(arg.getOwner());
        else
          b.setInsertionPointAfterValue(w);
        dequantized = buildDequantizedWeight(b, op.getLoc(), w, quant);
      }
      op.getWeightMutable().assign(dequantized);
      op.removeWeightQuantAttr();
    }
  }
};

} // namespace
