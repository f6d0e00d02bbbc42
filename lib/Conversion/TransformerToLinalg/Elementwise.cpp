//===- Elementwise.cpp - activation and residual_add to linalg ------------===//
//
// The elementwise primitives as all-parallel identity-map generics.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "blockc/Codegen/Common/Approximations.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace blockc;
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
          // The formulas of Codegen/Common/Approximations.h on math.exp /
          // math.erfc, which each target implements (libm on the CPU's
          // loops, blockc's polynomials in GPU kernels).
          Value x = a[0];
          switch (kind) {
          case ActivationKind::silu:
            return buildSilu(b, l, x, ElementaryMath::MathDialect);
          case ActivationKind::gelu:
            return buildGelu(b, l, x, ElementaryMath::MathDialect);
          case ActivationKind::gelu_tanh:
            return buildGeluTanh(b, l, x, ElementaryMath::MathDialect);
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
