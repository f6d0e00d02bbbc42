//===- KVCache.cpp - kv_cache_append to tensor ops ------------------------===//
//
// transformer.kv_cache_append as a bound check and one insert_slice.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace blockc::transformer;
using namespace blockc::detail;

namespace {

/// kv_cache_append -> a run-time bound check (cf.assert) and one
/// tensor.insert_slice of the new rows at [0, position, 0, 0]. Bufferized in
/// place on a writable cache argument, this writes only the new rows.
struct KVCacheAppendLowering : OpRewritePattern<KVCacheAppendOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(KVCacheAppendOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value entries = op.getNewEntries(), cache = op.getCache();
    Value pos = op.getPosition();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, entries);
    Value newLen = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[1]);
    Value end = arith::AddIOp::create(rewriter, loc, pos, newLen);
    Value capacity = tensor::DimOp::create(rewriter, loc, cache, 1);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value fits = arith::AndIOp::create(
        rewriter, loc,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, pos,
                              zero),
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle, end,
                              capacity));
    cf::AssertOp::create(rewriter, loc, fits,
                         "blockc: KV cache overflow (position + new tokens > "
                         "cache capacity L_max)");
    SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(0), pos,
                                         rewriter.getIndexAttr(0),
                                         rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(op, entries, cache,
                                                       offsets, sizes, strides);
    return success();
  }
};

} // namespace

void blockc::detail::populateKVCacheLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<KVCacheAppendLowering>(patterns.getContext());
}
