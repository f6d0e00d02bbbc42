//===- Embedding.cpp - embedding to a gathering linalg.generic ------------===//
//
// transformer.embedding as one all-parallel linalg.generic over [B, T, d]
// that reads the id of (b, t) and extracts the table element (and the
// position row's) with tensor.extract: an elementwise op with a gather in its
// body, which tiling, vectorisation (a gather or contiguous loads along d)
// and the NVPTX elementwise kernels treat like any other.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace blockc::transformer;
using namespace blockc::detail;

namespace {

/// min(max(i, 0), size - 1) on index values: a row that is always in
/// bounds.
Value clampRow(OpBuilder &b, Location loc, Value i, int64_t size) {
  Value zero = indexConst(b, loc, 0);
  Value last = indexConst(b, loc, size - 1);
  Value lo = arith::MaxSIOp::create(b, loc, i, zero);
  return arith::MinSIOp::create(b, loc, lo, last);
}

struct EmbeddingLowering : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType resultType = op.getType();
    Type elt = resultType.getElementType();
    Value table = op.getTable(), positions = op.getPositions();
    Value offset = op.getPositionOffset();
    int64_t vocab = cast<RankedTensorType>(table.getType()).getDimSize(0);
    int64_t maxPositions =
        positions ? cast<RankedTensorType>(positions.getType()).getDimSize(0)
                  : 0;
    // The ids are indexed by (b, t); the table and position rows are read
    // in the body.
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, op.getIds());
    sizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(2)));
    Value init = emptyTensor(rewriter, loc, sizes, elt);
    auto body = [&](OpBuilder &b, Location l, ValueRange args) -> Value {
      Value id = arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
      Value col = linalg::IndexOp::create(b, l, 2);
      Value row = tensor::ExtractOp::create(
          b, l, table, ValueRange{clampRow(b, l, id, vocab), col});
      if (!positions)
        return row;
      Value p = linalg::IndexOp::create(b, l, 1);
      if (offset)
        p = arith::AddIOp::create(b, l, p, offset);
      if (Value tokenPositions = op.getTokenPositions())
        p = arith::IndexCastOp::create(
            b, l, b.getIndexType(),
            tensor::ExtractOp::create(b, l, tokenPositions, ValueRange{p}));
      Value posRow = tensor::ExtractOp::create(
          b, l, positions, ValueRange{clampRow(b, l, p, maxPositions), col});
      if (elt.isF32())
        return arith::AddFOp::create(b, l, row, posRow);
      // One rounding of the f32 sum, as a sum of two bf16 tensors.
      Type f32 = b.getF32Type();
      Value sum =
          arith::AddFOp::create(b, l, arith::ExtFOp::create(b, l, f32, row),
                                arith::ExtFOp::create(b, l, f32, posRow));
      return arith::TruncFOp::create(b, l, elt, sum);
    };
    auto gather = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{op.getIds()},
        ValueRange{init}, {projection(ctx, 3, {0, 1}), identity(ctx, 3)},
        iterators(3, 0), [&](OpBuilder &b, Location l, ValueRange args) {
          yield(b, l, body(b, l, args.take_front()));
        });
    rewriter.replaceOp(op, gather.getResult(0));
    return success();
  }
};

} // namespace

void blockc::detail::populateEmbeddingLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<EmbeddingLowering>(patterns.getContext());
}
