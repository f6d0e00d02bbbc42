//===- Paged.cpp - ragged-batch position and page-write ops ---------------===//
//
// transformer.token_positions and transformer.paged_kv_write as loops over
// the sequences of a ragged batch and their new tokens (scf.for on tensors):
// a token's position is written into a fresh tensor, a token's K or V row is
// inserted into its page's slot. Bufferized on a writable pool argument, the
// page write stores only the new rows, in place. transformer.paged_sdpa is a
// kernel of each target (the CPU's in Codegen/CPU/LowerPagedSDPA.cpp).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <tuple>

using namespace mlir;
using namespace blockc::transformer;

namespace {

/// Element `at` of an i32 tensor as an index.
Value extractIndex(OpBuilder &b, Location loc, Value t, ValueRange at) {
  Value v = tensor::ExtractOp::create(b, loc, t, at);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

/// The sequences of a ragged batch: B and, for sequence `b`, the first row
/// of its new tokens, the end of them and its cached length.
struct RaggedBatch {
  Value cuSeqlens, seqPositions;
  Value numSequences(OpBuilder &b, Location loc) {
    return tensor::DimOp::create(b, loc, seqPositions, 0);
  }
  /// (start, end, cached) of sequence `seq`.
  std::tuple<Value, Value, Value> sequence(OpBuilder &b, Location loc,
                                           Value seq) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value start = extractIndex(b, loc, cuSeqlens, seq);
    Value end = extractIndex(
        b, loc, cuSeqlens, arith::AddIOp::create(b, loc, seq, one).getResult());
    Value cached = extractIndex(b, loc, seqPositions, seq);
    return {start, end, cached};
  }
  /// The loop nest over every sequence and its new tokens, carrying `init`:
  /// `body(b, loc, seq, t, position, carried)` returns the next value for
  /// token row t of sequence seq at absolute position seq_pos + t - cu.
  Value forEachToken(OpBuilder &builder, Location loc, Value init,
                     llvm::function_ref<Value(OpBuilder &, Location, Value,
                                              Value, Value, Value)>
                         body) {
    Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
    Value one = arith::ConstantIndexOp::create(builder, loc, 1);
    auto outer = scf::ForOp::create(
        builder, loc, zero, numSequences(builder, loc), one, ValueRange{init},
        [&](OpBuilder &b, Location l, Value seq, ValueRange iter) {
          auto [start, end, cached] = sequence(b, l, seq);
          auto inner = scf::ForOp::create(
              b, l, start, end, one, iter,
              [&](OpBuilder &ib, Location il, Value t, ValueRange acc) {
                Value position = arith::AddIOp::create(
                    ib, il, cached, arith::SubIOp::create(ib, il, t, start));
                scf::YieldOp::create(ib, il,
                                     body(ib, il, seq, t, position, acc[0]));
              });
          scf::YieldOp::create(b, l, inner.getResults());
        });
    return outer.getResult(0);
  }
};

/// token_positions: total = cu[B]; for every sequence and new token t,
/// result[t] = seq_pos[b] + t - cu[b].
struct TokenPositionsLowering : OpRewritePattern<TokenPositionsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TokenPositionsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RaggedBatch batch{op.getCuSeqlens(), op.getSeqPositions()};
    Value numSeq = batch.numSequences(rewriter, loc);
    Value total = extractIndex(rewriter, loc, op.getCuSeqlens(), numSeq);
    Value init = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{total}, rewriter.getI32Type());
    init = tensor::CastOp::create(rewriter, loc, op.getType(), init);
    Value result = batch.forEachToken(
        rewriter, loc, init,
        [&](OpBuilder &b, Location l, Value, Value t, Value p, Value acc) {
          Value p32 = arith::IndexCastOp::create(b, l, b.getI32Type(), p);
          return tensor::InsertOp::create(b, l, p32, acc, ValueRange{t})
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// paged_kv_write: for every sequence and new token, a bound check of its
/// logical page and of the pool page the block table names (cf.assert), then
/// one tensor.insert_slice of the token's [1, 1, H_kv, D] row at
/// [page, slot, 0, 0].
struct PagedKVWriteLowering : OpRewritePattern<PagedKVWriteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PagedKVWriteOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType poolType = op.getPool().getType();
    int64_t pageSize = poolType.getDimSize(1);
    int64_t hkv = poolType.getDimSize(2), d = poolType.getDimSize(3);
    RaggedBatch batch{op.getCuSeqlens(), op.getSeqPositions()};
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value s = arith::ConstantIndexOp::create(rewriter, loc, pageSize);
    Value numPages = tensor::DimOp::create(rewriter, loc, op.getPool(), 0);
    Value maxPages =
        tensor::DimOp::create(rewriter, loc, op.getBlockTable(), 1);
    Value entries = op.getNewEntries();
    auto rowType =
        RankedTensorType::get({1, 1, hkv, d}, poolType.getElementType());
    Value result = batch.forEachToken(
        rewriter, loc, op.getPool(),
        [&](OpBuilder &ib, Location il, Value seq, Value t, Value j,
            Value pool) -> Value {
          auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) {
            return arith::CmpIOp::create(ib, il, pred, x, y);
          };
          Value logical = arith::DivUIOp::create(ib, il, j, s);
          Value slot = arith::RemUIOp::create(ib, il, j, s);
          cf::AssertOp::create(
              ib, il,
              arith::AndIOp::create(
                  ib, il, cmp(arith::CmpIPredicate::sge, j, zero),
                  cmp(arith::CmpIPredicate::slt, logical, maxPages)),
              "blockc: paged KV write past the block table (position / "
              "page size >= max_pages)");
          Value page = extractIndex(ib, il, op.getBlockTable(),
                                    ValueRange{seq, logical});
          cf::AssertOp::create(
              ib, il,
              arith::AndIOp::create(
                  ib, il, cmp(arith::CmpIPredicate::sge, page, zero),
                  cmp(arith::CmpIPredicate::slt, page, numPages)),
              "blockc: block table names a page outside the pool");
          SmallVector<OpFoldResult> rowOffsets = {
              ib.getIndexAttr(0), t, ib.getIndexAttr(0), ib.getIndexAttr(0)};
          SmallVector<OpFoldResult> sizes = {
              ib.getIndexAttr(1), ib.getIndexAttr(1), ib.getIndexAttr(hkv),
              ib.getIndexAttr(d)};
          SmallVector<OpFoldResult> strides(4, ib.getIndexAttr(1));
          Value row = tensor::ExtractSliceOp::create(
              ib, il, rowType, entries, rowOffsets, sizes, strides);
          SmallVector<OpFoldResult> poolOffsets = {
              page, slot, ib.getIndexAttr(0), ib.getIndexAttr(0)};
          return tensor::InsertSliceOp::create(ib, il, row, pool, poolOffsets,
                                               sizes, strides);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void blockc::detail::populatePagedLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<TokenPositionsLowering, PagedKVWriteLowering>(
      patterns.getContext());
}
