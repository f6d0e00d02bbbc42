//===- Elementwise.cpp - activation and residual_add to linalg ------------===//
//
// The elementwise primitives as all-parallel identity-map generics.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace blockc::transformer;
using namespace blockc::detail;

namespace {

struct ActivationLowering : OpRewritePattern<ActivationOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ActivationOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    ActivationKind kind = op.getKind();
    Value result = elementwise(
        rewriter, loc, op.getInput(), type, {op.getInput()},
        {identity(getContext(), type.getRank())},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value x = a[0];
          Value one = f32Const(b, l, 1.0), halfC = f32Const(b, l, 0.5);
          switch (kind) {
          case ActivationKind::silu: {
            // x * sigmoid(x) = x / (1 + exp(-x)); exp overflow gives -0.
            Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
            return arith::DivFOp::create(b, l, x,
                                         arith::AddFOp::create(b, l, one, e));
          }
          case ActivationKind::gelu: {
            Value e = math::ErfOp::create(
                b, l,
                arith::MulFOp::create(b, l, x, f32Const(b, l, M_SQRT1_2)));
            Value hx = arith::MulFOp::create(b, l, x, halfC);
            return arith::MulFOp::create(b, l, hx,
                                         arith::AddFOp::create(b, l, one, e));
          }
          case ActivationKind::gelu_tanh: {
            Value x3 = arith::MulFOp::create(b, l, x,
                                             arith::MulFOp::create(b, l, x, x));
            Value inner = arith::AddFOp::create(
                b, l, x,
                arith::MulFOp::create(b, l, x3, f32Const(b, l, 0.044715)));
            Value th = math::TanhOp::create(
                b, l,
                arith::MulFOp::create(b, l, inner,
                                      f32Const(b, l, 0.7978845608028654)));
            Value hx = arith::MulFOp::create(b, l, x, halfC);
            return arith::MulFOp::create(b, l, hx,
                                         arith::AddFOp::create(b, l, one, th));
          }
          case ActivationKind::relu:
            return arith::MaximumFOp::create(b, l, x, f32Const(b, l, 0.0));
          }
          llvm_unreachable("unknown activation kind");
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ResidualAddLowering : OpRewritePattern<ResidualAddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ResidualAddOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = cast<RankedTensorType>(op.getType());
    AffineMap id = identity(getContext(), type.getRank());
    Value result =
        elementwise(rewriter, op.getLoc(), op.getResidual(), type,
                    {op.getResidual(), op.getUpdate()}, {id, id},
                    [](OpBuilder &b, Location l, ValueRange a) -> Value {
                      return arith::AddFOp::create(b, l, a[0], a[1]);
                    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void blockc::detail::populateElementwiseLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ActivationLowering, ResidualAddLowering>(patterns.getContext());
}
