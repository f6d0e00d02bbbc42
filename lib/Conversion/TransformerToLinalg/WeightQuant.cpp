//===- WeightQuant.cpp - dequantised weights of quantised projections -----===//
//
// See Conversion/Passes.td (ConvertWeightQuantToLinalgPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/WeightQuant.h"
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
/// computed in f32 and returned in `elem` (the projection's input type:
/// an f32 projection of a bf16/f16 weight gets W' in f32):
///   amax[n, j] = max_{l < G} |W[n, j G + l]|          (W viewed [N, K/G, G])
///   s = amax / L; W'[n, k] = (s == 0 ? 0 : clamp(rint(W / s), -L, L)) * s
/// with s = amax[n, k floordiv G] and L the largest level (127 or 7).
Value buildDequantizedWeight(OpBuilder &b, Location loc, Value w,
                             WeightQuantAttr quant, Type elem) {
  auto wType = cast<RankedTensorType>(w.getType());
  auto type = wType.clone(elem);
  int64_t k = type.getDimSize(1);
  int64_t g = quant.getGroupSizeFor(k), level = quant.getMaxLevel();
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type(), wElem = wType.getElementType();
  Value amax = blockc::buildGroupAbsMax(b, loc, w, g);
  // The dequantised weight, elementwise over W.
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap group = AffineMap::get(
      2, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx).floorDiv(g)},
      ctx);
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), elem);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{w, amax}, ValueRange{init},
             ArrayRef<AffineMap>{id2, group, id2},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel},
             [&](OpBuilder &nb, Location, ValueRange args) {
               Value x = args[0];
               if (wElem != f32)
                 x = arith::ExtFOp::create(nb, loc, f32, x);
               Value s = blockc::buildQuantScale(nb, loc, args[1], level);
               Value q = blockc::buildQuantLevel(nb, loc, x, s, level);
               Value r = arith::MulFOp::create(nb, loc, q, s);
               if (elem != f32)
                 r = arith::TruncFOp::create(nb, loc, elem, r);
               linalg::YieldOp::create(nb, loc, ValueRange{r});
             })
      .getResult(0);
}

/// x' = q_x * s_x for the input `x` [..., K] of a projection whose
/// weight_quant has activations = int8, in x's type (computed in f32):
///   amax[..., j] = max_{l < 32} |x[..., 32 j + l]|     (x viewed [..., K/32,
///   32]) s_x = amax / 127; x'[..., k] = (s_x == 0 ? 0 :
///                                   clamp(rint(x / s_x), -127, 127)) * s_x
/// with s_x = amax[..., k floordiv 32]. A linear of x' and the dequantised
/// weight computes sum over runs of s_x s_w sum(q_x q_w), the integer sums
/// carried in f32 (exact while they stay below 2^24: a run sums at most
/// 32 x 127 x 127).
Value buildDequantizedInput(OpBuilder &b, Location loc, Value x) {
  constexpr int64_t run = WeightQuantAttr::kActivationRun;
  constexpr int64_t level = 127;
  Type f32 = b.getF32Type(), elem = getElementTypeOrSelf(x);
  Value amax = blockc::buildRunAbsMax(b, loc, x, run);
  return blockc::buildRunwise(
      b, loc, x, amax, run, elem,
      [&](OpBuilder &nb, Location nloc, Value v, Value m) -> Value {
        if (elem != f32)
          v = arith::ExtFOp::create(nb, nloc, f32, v);
        Value s = blockc::buildQuantScale(nb, nloc, m, level);
        Value q = blockc::buildQuantLevel(nb, nloc, v, s, level);
        Value r = arith::MulFOp::create(nb, nloc, q, s);
        if (elem != f32)
          r = arith::TruncFOp::create(nb, nloc, elem, r);
        return r;
      });
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
    DenseMap<std::tuple<Value, Attribute, Type>, Value> done;
    for (LinearOp op : linears) {
      WeightQuantAttr quant = op.getWeightQuantAttr();
      Value w = op.getWeight();
      Value &dequantized =
          done[{w, quant, op.getInput().getType().getElementType()}];
      if (!dequantized) {
        OpBuilder b(op);
        if (auto arg = dyn_cast<BlockArgument>(w))
          b.setInsertionPointToStart(arg.getOwner());
        else
          b.setInsertionPointAfterValue(w);
        dequantized = buildDequantizedWeight(
            b, op.getLoc(), w, quant, op.getInput().getType().getElementType());
      }
      op.getWeightMutable().assign(dequantized);
      if (quant.quantizesActivations()) {
        OpBuilder b(op);
        op.getInputMutable().assign(
            buildDequantizedInput(b, op.getLoc(), op.getInput()));
      }
      op.removeWeightQuantAttr();
    }
  }
};

} // namespace
