//===- Attention.cpp - rope and sdpa to linalg ----------------------------===//
//
// RoPE (cos/sin tables and one rotation generic) and scaled dot-product
// attention (scores, row max, exp, row sum, normalisation, P x V).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "blockc/Codegen/Common/RoPE.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace blockc::transformer;
using namespace blockc::detail;
using mlir::utils::IteratorType;

namespace {

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

struct RoPELowering : OpRewritePattern<RoPEOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RoPEOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value x = op.getInput();
    RankedTensorType type = op.getType();
    int64_t headDim = type.getShape().back();
    int64_t rotary = op.getRotaryDimOrHeadDim();
    int64_t half = rotary / 2;
    bool interleaved = op.getLayout() == RoPELayout::interleaved;
    if (interleaved && rotary < headDim && headDim % 2 != 0)
      return rewriter.notifyMatchFailure(
          op, "interleaved RoPE with a partial rotary dim and an odd head "
              "dim is not supported");
    // cos/sin tables [T, D] (the shared builder of Codegen/Common/RoPE.h).
    blockc::RoPEShape shape{headDim, rotary, interleaved,
                            op.getTheta().convertToDouble()};
    auto [cosTable, sinTable] =
        blockc::buildRoPETables(rewriter, loc, shape, x, /*tDim=*/1,
                                op.getPositionOffset(), op.getPositions());

    // out[b,t,h,j] = x[j] * cos[t,j] + x[partner(j)] * sin[t,j]
    AffineExpr j = getAffineDimExpr(3, ctx);
    AffineExpr partner =
        interleaved ? j + 1 - (j % 2) * 2 : (j + half) % rotary;
    AffineMap partnerMap =
        AffineMap::get(4, 0,
                       {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
                        getAffineDimExpr(2, ctx), partner},
                       ctx);
    bool partial = rotary < headDim;
    Value result = elementwise(
        rewriter, loc, x, type, {x, x, cosTable, sinTable},
        {identity(ctx, 4), partnerMap, projection(ctx, 4, {1, 3}),
         projection(ctx, 4, {1, 3})},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value rotated = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, a[0], a[2]),
              arith::MulFOp::create(b, l, a[1], a[3]));
          if (!partial)
            return rotated;
          // Beyond the rotary dim the element passes through unchanged.
          Value jIdx = linalg::IndexOp::create(b, l, 3);
          Value inRot = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                              jIdx, indexConst(b, l, rotary));
          return arith::SelectOp::create(b, l, inRot, rotated, a[0]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// SDPA
//===----------------------------------------------------------------------===//

struct SDPALowering : OpRewritePattern<SDPAOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SDPAOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    RankedTensorType qType = op.getQuery().getType();
    int64_t numHeads = qType.getDimSize(2);
    int64_t group = numHeads / op.getKey().getType().getDimSize(2);
    bool causal = op.getCausal();
    Value scale = f32Const(rewriter, loc, op.getScaleOrDefault());

    OpFoldResult bSize = tensor::getMixedSize(rewriter, loc, q, 0);
    OpFoldResult tSize = tensor::getMixedSize(rewriter, loc, q, 1);
    OpFoldResult sSize = tensor::getMixedSize(rewriter, loc, k, 1);
    OpFoldResult hSize = rewriter.getIndexAttr(numHeads);
    // Query row t sees keys s <= t + (S - T).
    Value offset;
    if (causal) {
      Value tVal = getValueOrCreateConstantIndexOp(rewriter, loc, tSize);
      Value sVal = getValueOrCreateConstantIndexOp(rewriter, loc, sSize);
      offset = arith::SubIOp::create(rewriter, loc, sVal, tVal);
    }
    // Whether key s is invisible to query row t, with t and s the generic's
    // loop dimensions `tDim` and `sDim`.
    auto isMasked = [&](OpBuilder &b, Location l, unsigned tDim = 2,
                        unsigned sDim = 3) -> Value {
      Value t = linalg::IndexOp::create(b, l, tDim);
      Value s = linalg::IndexOp::create(b, l, sDim);
      Value limit = arith::AddIOp::create(b, l, t, offset);
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, s, limit);
    };

    AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
               d2 = getAffineDimExpr(2, ctx), d3 = getAffineDimExpr(3, ctx),
               d4 = getAffineDimExpr(4, ctx);

    // scores[b,h,t,s] = sum_d q[b,t,h,d] * k[b,s,h/group,d]
    SmallVector<OpFoldResult> scoreSizes = {bSize, hSize, tSize, sSize};
    Value scoresInit =
        filledTensor(rewriter, loc, scoreSizes, f32Const(rewriter, loc, 0.0));
    auto scoresType = cast<RankedTensorType>(scoresInit.getType());
    Value scores = mulAddContraction(
        rewriter, loc, scoresType, q, k, scoresInit,
        {AffineMap::get(5, 0, {d0, d2, d1, d4}, ctx),
         AffineMap::get(5, 0, {d0, d3, d1.floorDiv(group), d4}, ctx),
         AffineMap::get(5, 0, {d0, d1, d2, d3}, ctx)},
        iterators(4, 1));

    // Row max of the scaled, masked scores.
    SmallVector<OpFoldResult> rowSizes = {bSize, hSize, tSize};
    Value negInf =
        f32Const(rewriter, loc, -std::numeric_limits<double>::infinity());
    Value maxInit = filledTensor(rewriter, loc, rowSizes, negInf);
    AffineMap id4 = identity(ctx, 4), row4 = dropLast(ctx, 4);
    Value rowMax =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{maxInit.getType()}, ValueRange{scores},
            ValueRange{maxInit}, ArrayRef<AffineMap>{id4, row4},
            iterators(3, 1),
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value s = arith::MulFOp::create(b, l, a[0], scale);
              if (causal)
                s = arith::SelectOp::create(b, l, isMasked(b, l), negInf, s);
              yield(b, l, arith::MaximumFOp::create(b, l, a[1], s));
            })
            .getResult(0);

    // p = exp(scale * s - max); masked entries are exactly 0.
    Value probs = elementwise(
        rewriter, loc, scoresInit, scoresType, {scores, rowMax}, {id4, row4},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value s = arith::MulFOp::create(b, l, a[0], scale);
          Value e =
              math::ExpOp::create(b, l, arith::SubFOp::create(b, l, s, a[1]));
          if (causal)
            e = arith::SelectOp::create(b, l, isMasked(b, l),
                                        f32Const(b, l, 0.0), e);
          return e;
        });
    Value rowSum =
        rowReduce(rewriter, loc, probs, {},
                  [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    // Normalise; a row without any visible key has sum 0 and yields 0.
    Value normalized = elementwise(
        rewriter, loc, scoresInit, scoresType, {probs, rowSum}, {id4, row4},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value zero = f32Const(b, l, 0.0);
          Value isZero = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                               a[1], zero);
          Value ratio = arith::DivFOp::create(b, l, a[0], a[1]);
          return arith::SelectOp::create(b, l, isZero, zero, ratio);
        });

    // out[b,t,h,e] = sum_s p[b,h,t,s] * v[b,s,h/group,e]
    SmallVector<OpFoldResult> outSizes = {
        bSize, tSize, hSize, tensor::getMixedSize(rewriter, loc, v, 3)};
    Value outInit =
        filledTensor(rewriter, loc, outSizes, f32Const(rewriter, loc, 0.0));
    SmallVector<AffineMap> pvMaps = {
        AffineMap::get(5, 0, {d0, d2, d1, d4}, ctx),
        AffineMap::get(5, 0, {d0, d4, d2.floorDiv(group), d3}, ctx),
        AffineMap::get(5, 0, {d0, d1, d2, d3}, ctx)};
    Value out;
    if (!causal) {
      out = mulAddContraction(rewriter, loc, op.getType(), normalized, v,
                              outInit, pvMaps, iterators(4, 1));
    } else {
      // A masked key contributes nothing, not 0 x v: a NaN or Inf in the
      // value row of a later token must not reach earlier rows (as in the
      // fused kernels, which never read masked keys).
      out =
          linalg::GenericOp::create(
              rewriter, loc, TypeRange{op.getType()}, ValueRange{normalized, v},
              ValueRange{outInit}, pvMaps, iterators(4, 1),
              [&](OpBuilder &b, Location l, ValueRange a) {
                Value p = arith::MulFOp::create(b, l, a[0], a[1]);
                Value sum = arith::AddFOp::create(b, l, a[2], p);
                yield(b, l,
                      arith::SelectOp::create(b, l, isMasked(b, l, 1, 4), a[2],
                                              sum));
              })
              .getResult(0);
    }
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

void blockc::detail::populateAttentionLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<RoPELowering, SDPALowering>(patterns.getContext());
}
