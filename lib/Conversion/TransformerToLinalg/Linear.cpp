//===- Linear.cpp - linear to a linalg contraction ------------------------===//
//
// transformer.linear as one linalg.generic contraction over the stored
// weight layout, initialised with the broadcast bias or zero.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace blockc::transformer;
using namespace blockc::detail;
using mlir::utils::IteratorType;

namespace {

/// linear as one contraction reading W in its stored [N, K] layout:
///   result[..., n] = init[..., n] + sum_k x[..., k] * W[n, k]
/// with init the broadcast bias or zero. The leading dimensions of x stay
/// separate loops (collapsing B and T into one dynamic row dimension trips
/// an MLIR 22 bug in expand-strided-metadata).
struct LinearLowering : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value x = op.getInput();
    RankedTensorType resultType = op.getType();
    Type elt = resultType.getElementType();
    unsigned rank = resultType.getRank(); // loops: rank parallel + 1 (k)
    int64_t n = resultType.getShape().back();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
    sizes.back() = rewriter.getIndexAttr(n);

    // The accumulator starts as the broadcast bias, or zero.
    Value init;
    if (Value bias = op.getBias()) {
      Value empty = emptyTensor(rewriter, loc, sizes, elt);
      init =
          linalg::GenericOp::create(
              rewriter, loc, TypeRange{resultType}, ValueRange{bias},
              ValueRange{empty},
              ArrayRef<AffineMap>{projection(ctx, rank, {rank - 1}),
                                  identity(ctx, rank)},
              iterators(rank, 0),
              [](OpBuilder &b, Location l, ValueRange a) { yield(b, l, a[0]); })
              .getResult(0);
    } else {
      init = filledTensor(rewriter, loc, sizes, f32Const(rewriter, loc, 0.0));
    }

    // result[..., n] += x[..., k] * W[n, k]: W is read in its stored
    // [out, in] layout (no transposed copy of the weights per call).
    SmallVector<unsigned> xDims, outDims;
    for (unsigned i = 0; i + 1 < rank; ++i)
      xDims.push_back(i);
    xDims.push_back(rank);
    for (unsigned i = 0; i < rank; ++i)
      outDims.push_back(i);
    SmallVector<AffineMap> maps = {projection(ctx, rank + 1, xDims),
                                   projection(ctx, rank + 1, {rank - 1, rank}),
                                   projection(ctx, rank + 1, outDims)};
    Value result =
        mulAddContraction(rewriter, loc, resultType, x, op.getWeight(), init,
                          maps, iterators(rank, 1));
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void blockc::detail::populateLinearLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LinearLowering>(patterns.getContext());
}
