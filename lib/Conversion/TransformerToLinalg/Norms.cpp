//===- Norms.cpp - rms_norm and layer_norm to linalg ----------------------===//
//
// The norms as row reductions and one elementwise generic; rows whose
// sum of squares could overflow f32 are scaled by 1 / max|x| first.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "blockc/Codegen/Common/NormGuard.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace blockc::transformer;
using namespace blockc::detail;
using mlir::utils::IteratorType;

namespace {

/// max |x| over the last dimension of `x` (NaN propagates).
Value rowMaxAbs(OpBuilder &b, Location loc, Value x) {
  return rowReduce(
      b, loc, x, {},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return math::AbsFOp::create(nb, l, a[0]);
      },
      [](OpBuilder &nb, Location l, Value acc, Value abs) -> Value {
        return arith::MaximumFOp::create(nb, l, acc, abs);
      });
}

/// What both norms start from: the op's input rows, 1 / d, epsilon as f32
/// and each row's max |x| (see the guard below).
struct NormRows {
  Location loc;
  Value x;
  RankedTensorType type;
  unsigned rank;
  Value invD, eps, maxAbs;

  template <typename NormOp>
  static NormRows of(NormOp op, PatternRewriter &rewriter) {
    Location loc = op.getLoc();
    Value x = op.getInput();
    return {loc,
            x,
            op.getType(),
            static_cast<unsigned>(op.getType().getRank()),
            reciprocalOfLastDim(rewriter, loc, x),
            f32Const(rewriter, loc, op.getEpsilon().convertToDouble()),
            rowMaxAbs(rewriter, loc, x)};
  }

  /// The row sums of x' = x * inv, or of x'^2 with `squared` (see
  /// Codegen/Common/NormGuard.h).
  Value scaledRowSum(OpBuilder &b, bool squared) const {
    return rowReduce(b, loc, x, {maxAbs},
                     [=](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value xs = arith::MulFOp::create(
                           nb, l, a[0], blockc::buildNormInvScale(nb, l, a[1]));
                       return squared ? arith::MulFOp::create(nb, l, xs, xs)
                                      : xs;
                     });
  }

  /// 1 / sqrt(m + eps inv^2) for the mean square (or variance) `m` of the
  /// row scaled by `inv` (see the guard below).
  Value rsqrtOfScaled(OpBuilder &b, Location l, Value m, Value inv) const {
    Value epsScaled =
        arith::MulFOp::create(b, l, eps, arith::MulFOp::create(b, l, inv, inv));
    return math::RsqrtOp::create(b, l,
                                 arith::AddFOp::create(b, l, m, epsScaled));
  }
};

/// RMSNorm and LayerNorm scale rows whose magnitude would overflow the f32
/// sum of squares (|x| above 2^50): y is computed from x' = x / max|x| with
/// epsilon / max|x|^2, which is the same value mathematically, so rows up to
/// the f32 maximum normalise correctly instead of to zero; the extra max|x|
/// reduction reads the row once more.
struct RMSNormLowering : OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RMSNormOp op,
                                PatternRewriter &rewriter) const override {
    NormRows n = NormRows::of(op, rewriter);
    MLIRContext *ctx = getContext();
    Value sumSq = n.scaledRowSum(rewriter, /*squared=*/true);
    Value result = elementwise(
        rewriter, n.loc, n.x, n.type, {n.x, sumSq, op.getWeight(), n.maxAbs},
        {identity(ctx, n.rank), dropLast(ctx, n.rank),
         projection(ctx, n.rank, {n.rank - 1}), dropLast(ctx, n.rank)},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value inv = blockc::buildNormInvScale(b, l, a[3]);
          Value meanSq = arith::MulFOp::create(b, l, a[1], n.invD);
          Value r = n.rsqrtOfScaled(b, l, meanSq, inv);
          Value xs = arith::MulFOp::create(b, l, a[0], inv);
          return arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, xs, r),
                                       a[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LayerNormLowering : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    NormRows n = NormRows::of(op, rewriter);
    MLIRContext *ctx = getContext();
    Value sum = n.scaledRowSum(rewriter, /*squared=*/false);
    // Two-pass variance: sum((x' - mean')^2), numerically safer than
    // E[x^2] - E[x]^2.
    Value sumSqDev =
        rowReduce(rewriter, n.loc, n.x, {sum, n.maxAbs},
                  [&](OpBuilder &b, Location l, ValueRange a) {
                    Value mean = arith::MulFOp::create(b, l, a[1], n.invD);
                    Value xs = arith::MulFOp::create(
                        b, l, a[0], blockc::buildNormInvScale(b, l, a[2]));
                    Value dev = arith::SubFOp::create(b, l, xs, mean);
                    return arith::MulFOp::create(b, l, dev, dev);
                  });
    Value result = elementwise(
        rewriter, n.loc, n.x, n.type,
        {n.x, sum, sumSqDev, op.getWeight(), op.getBias(), n.maxAbs},
        {identity(ctx, n.rank), dropLast(ctx, n.rank), dropLast(ctx, n.rank),
         projection(ctx, n.rank, {n.rank - 1}),
         projection(ctx, n.rank, {n.rank - 1}), dropLast(ctx, n.rank)},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value inv = blockc::buildNormInvScale(b, l, a[5]);
          Value mean = arith::MulFOp::create(b, l, a[1], n.invD);
          Value var = arith::MulFOp::create(b, l, a[2], n.invD);
          Value r = n.rsqrtOfScaled(b, l, var, inv);
          Value xs = arith::MulFOp::create(b, l, a[0], inv);
          Value normed = arith::MulFOp::create(
              b, l, arith::SubFOp::create(b, l, xs, mean), r);
          return arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, normed, a[3]), a[4]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void blockc::detail::populateNormLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<RMSNormLowering, LayerNormLowering>(patterns.getContext());
}
