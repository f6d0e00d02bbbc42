//===- LowerPagedSDPA.cpp - ragged attention over paged K/V pools ---------===//
//
// The CPU kernel of transformer.paged_sdpa, built by blockc-cpu-lower-sdpa
// beside the dense kernels of LowerSDPA.cpp: one work item per (sequence,
// query head) of an scf.forall (OpenMP threads), each writing the
// [1, len, 1, D] slice of the output that holds its sequence's new rows.
// A row runs the online-softmax recurrence over the keys at positions
// 0 .. p_t of its sequence, page by page: the pool page comes from the
// block table, the keys of a page are its first slots (all S but in the
// last page), and K and V rows are read in place from the pools as
// vectors of the head dim (16-bit pools widened in registers), so no page
// is gathered. exp is the polynomial of Codegen/Common/Approximations.h.
//
//===----------------------------------------------------------------------===//

#include "PagedSDPA.h"
#include "TileEpilogue.h"
#include "blockc/Codegen/Common/Approximations.h"
#include "blockc/Codegen/Common/PagedAttention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace blockc::transformer;

void blockc::cpu::lowerPagedSDPA(PagedSDPAOp op, RewriterBase &rewriter) {
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  blockc::PagedSDPAShape shape = blockc::PagedSDPAShape::of(op);
  Type f32 = rewriter.getF32Type();
  Type outElt = shape.queryType.getElementType();
  VectorType vec = VectorType::get({shape.headDim}, f32);

  // Pools (and the query) widened by transformer-compute-in-f32 are read
  // as stored and widened in registers.
  auto stored = [](Value t) -> Value {
    if (auto ext = t.getDefiningOp<arith::ExtFOp>())
      return ext.getIn();
    return t;
  };
  Value q = stored(op.getQuery());
  Value kPool = stored(op.getKeyPool()), vPool = stored(op.getValuePool());
  Value blockTable = op.getBlockTable();

  auto idx = [&](OpBuilder &b, int64_t x) -> Value {
    return arith::ConstantIndexOp::create(b, loc, x);
  };
  auto toIndex = [&](OpBuilder &b, Value src, ValueRange at) -> Value {
    Value v = tensor::ExtractOp::create(b, loc, src, at);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  // D lanes of `src` at `at` as f32.
  auto read = [&](OpBuilder &b, Value src, ValueRange at) -> Value {
    Type elt = getElementTypeOrSelf(src.getType());
    Value pad = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, 0.0));
    Value v = vector::TransferReadOp::create(
        b, loc, VectorType::get({shape.headDim}, elt), src, at, pad,
        ArrayRef<bool>{true});
    if (elt.isF32())
      return v;
    return arith::ExtFOp::create(b, loc, vec, v);
  };
  auto splat = [&](OpBuilder &b, Value s) -> Value {
    return vector::BroadcastOp::create(b, loc, vec, s);
  };

  Value numSeq = tensor::DimOp::create(rewriter, loc, op.getSeqPositions(), 0);
  Value numPages = tensor::DimOp::create(rewriter, loc, kPool, 0);
  Value lastPage =
      arith::SubIOp::create(rewriter, loc, numPages, idx(rewriter, 1));
  Value out = tensor::EmptyOp::create(
      rewriter, loc, tensor::getMixedSizes(rewriter, loc, op.getQuery()),
      outElt);
  Value scale = arith::ConstantOp::create(
      rewriter, loc, rewriter.getF32FloatAttr(op.getScaleOrDefault()));
  Value negInf = arith::ConstantOp::create(
      rewriter, loc,
      rewriter.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  Value zeroF =
      arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0f));
  Value zeroV = arith::ConstantOp::create(rewriter, loc,
                                          DenseElementsAttr::get(vec, 0.0f));

  auto forall = scf::ForallOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{numSeq, rewriter.getIndexAttr(shape.heads)},
      ValueRange{out}, /*mapping=*/std::nullopt);
  {
    OpBuilder::InsertionGuard bodyGuard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    OpBuilder &b = rewriter;
    Value seq = forall.getInductionVar(0), head = forall.getInductionVar(1);
    Value c0 = idx(b, 0), c1 = idx(b, 1), s = idx(b, shape.pageSize);
    Value start = toIndex(b, op.getCuSeqlens(), seq);
    Value end = toIndex(b, op.getCuSeqlens(),
                        arith::AddIOp::create(b, loc, seq, c1).getResult());
    Value cached = toIndex(b, op.getSeqPositions(), seq);
    Value len = arith::SubIOp::create(b, loc, end, start);
    Value kvHead = arith::DivUIOp::create(b, loc, head, idx(b, shape.group));
    Value shared = forall.getRegionIterArgs()[0];
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), start, head,
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), len,
                                       b.getIndexAttr(1),
                                       b.getIndexAttr(shape.headDim)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    auto sliceType = RankedTensorType::get(
        {1, ShapedType::kDynamic, 1, shape.headDim}, outElt);
    Value slice = tensor::ExtractSliceOp::create(b, loc, sliceType, shared,
                                                 offsets, sizes, strides);
    auto rows = scf::ForOp::create(
        b, loc, c0, len, c1, ValueRange{slice},
        [&](OpBuilder &rb, Location l, Value i, ValueRange rowIter) {
          Value t = arith::AddIOp::create(rb, l, start, i);
          Value qv = arith::MulFOp::create(
              rb, l, read(rb, q, ValueRange{c0, t, head, c0}),
              splat(rb, scale));
          // Keys 0 .. p_t: numKeys = cached + i + 1.
          Value numKeys = arith::AddIOp::create(
              rb, l, arith::AddIOp::create(rb, l, cached, i), c1);
          Value pages = arith::CeilDivUIOp::create(rb, l, numKeys, s);
          auto pageLoop = scf::ForOp::create(
              rb, l, c0, pages, c1, ValueRange{negInf, zeroF, zeroV},
              [&](OpBuilder &pb, Location pl, Value lp, ValueRange pIter) {
                // The pool page, clamped into the pool (the page writes
                // assert that every page the batch names is in range).
                Value page = toIndex(pb, blockTable, ValueRange{seq, lp});
                page = arith::MaxSIOp::create(
                    pb, pl, arith::MinSIOp::create(pb, pl, page, lastPage), c0);
                Value first = arith::MulIOp::create(pb, pl, lp, s);
                Value count = arith::MinSIOp::create(
                    pb, pl, s, arith::SubIOp::create(pb, pl, numKeys, first));
                auto slotLoop = scf::ForOp::create(
                    pb, pl, c0, count, c1, pIter,
                    [&](OpBuilder &sb, Location sl, Value slot, ValueRange it) {
                      Value m = it[0], sum = it[1], acc = it[2];
                      Value kv =
                          read(sb, kPool, ValueRange{page, slot, kvHead, c0});
                      Value score = vector::ReductionOp::create(
                          sb, sl, vector::CombiningKind::ADD,
                          arith::MulFOp::create(sb, sl, qv, kv),
                          arith::FastMathFlags::reassoc);
                      Value mNew = arith::MaximumFOp::create(sb, sl, m, score);
                      Value corr = blockc::buildExp(
                          sb, sl, arith::SubFOp::create(sb, sl, m, mNew));
                      Value p = blockc::buildExp(
                          sb, sl, arith::SubFOp::create(sb, sl, score, mNew));
                      Value sumNew = math::FmaOp::create(sb, sl, sum, corr, p);
                      Value vv =
                          read(sb, vPool, ValueRange{page, slot, kvHead, c0});
                      Value accNew = math::FmaOp::create(
                          sb, sl, splat(sb, p), vv,
                          arith::MulFOp::create(sb, sl, acc, splat(sb, corr)));
                      scf::YieldOp::create(sb, sl,
                                           ValueRange{mNew, sumNew, accNew});
                    });
                scf::YieldOp::create(pb, pl, slotLoop.getResults());
              });
          Value o = arith::DivFOp::create(rb, l, pageLoop.getResult(2),
                                          splat(rb, pageLoop.getResult(1)));
          if (!outElt.isF32())
            o = arith::TruncFOp::create(
                rb, l, VectorType::get({shape.headDim}, outElt), o);
          Value written = vector::TransferWriteOp::create(
                              rb, l, o, rowIter[0], ValueRange{c0, i, c0, c0},
                              ArrayRef<bool>{true})
                              .getResult();
          scf::YieldOp::create(rb, l, written);
        });
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, rows.getResult(0),
                                          shared, offsets, sizes, strides);
  }
  setKernelKind(forall, codegen::KernelKind::attention);
  rewriter.replaceOp(op, forall.getResult(0));
}
