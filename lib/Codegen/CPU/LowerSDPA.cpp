//===- LowerSDPA.cpp - fused online-softmax attention kernel --------------===//
//
// Builds the loop nest of Codegen/CPU/Passes.td (CPULowerSDPAPass) with
// scf/vector/tensor builders on tensors, carrying the output through
// scf.for iter_args.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace blockc::cpu {
#define GEN_PASS_DEF_CPULOWERSDPAPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;

namespace {

struct AttentionBuilder {
  OpBuilder &b;
  Location loc;
  Value q, k, v; // [B, T, H, D], [B, S, Hkv, D] x 2
  int64_t width, nVec, group;
  VectorType vec; // vector<width x f32>
  Value zeroF;

  Value idx(int64_t x) { return arith::ConstantIndexOp::create(b, loc, x); }
  Value f32(double x) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(x));
  }
  Value splat(Value scalar) {
    return vector::BroadcastOp::create(b, loc, vec, scalar);
  }
  Value read(Value src, ValueRange at) {
    return vector::TransferReadOp::create(b, loc, vec, src, at, zeroF,
                                          ArrayRef<bool>{true});
  }

  /// q . key[bIdx, s, kvh, :] for the pre-scaled query vectors `qs`.
  Value dot(ArrayRef<Value> qs, Value bIdx, Value s, Value kvh) {
    Value acc =
        arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vec, 0.0f));
    for (int64_t i = 0; i < nVec; ++i)
      acc = vector::FMAOp::create(b, loc, qs[i],
                                  read(k, {bIdx, s, kvh, idx(i * width)}), acc);
    return vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, acc);
  }

  /// State carried across keys: m, l, then nVec accumulator vectors.
  /// Folds the scores of `keys` (a vector of `count` lanes, or a scalar when
  /// count == 1) starting at key `s0` into the state.
  SmallVector<Value> update(ValueRange state, Value scores, int64_t count,
                            Value bIdx, Value s0, Value kvh) {
    Value m = state[0], l = state[1];
    Value tileMax = count == 1
                        ? scores
                        : vector::ReductionOp::create(
                              b, loc, vector::CombiningKind::MAXNUMF, scores);
    Value mNew = arith::MaxNumFOp::create(b, loc, m, tileMax);
    Value c =
        math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, m, mNew));
    Value p, pSum;
    if (count == 1) {
      p = math::ExpOp::create(b, loc,
                              arith::SubFOp::create(b, loc, scores, mNew));
      pSum = p;
    } else {
      p = math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, scores, splat(mNew)));
      pSum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, p);
    }
    Value lNew = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, l, c), pSum);
    SmallVector<Value> acc;
    Value cVec = splat(c);
    for (int64_t i = 0; i < nVec; ++i)
      acc.push_back(arith::MulFOp::create(b, loc, state[2 + i], cVec));
    for (int64_t j = 0; j < count; ++j) {
      Value pj = count == 1 ? p : vector::ExtractOp::create(b, loc, p, j);
      Value pjVec = splat(pj);
      Value s = arith::AddIOp::create(b, loc, s0, idx(j));
      for (int64_t i = 0; i < nVec; ++i)
        acc[i] = vector::FMAOp::create(
            b, loc, pjVec, read(v, {bIdx, s, kvh, idx(i * width)}), acc[i]);
    }
    SmallVector<Value> next = {mNew, lNew};
    next.append(acc);
    return next;
  }
};

struct LowerSDPA : OpRewritePattern<SDPAOp> {
  LowerSDPA(MLIRContext *ctx, int64_t width)
      : OpRewritePattern<SDPAOp>(ctx), width(width) {}

  LogicalResult matchAndRewrite(SDPAOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType qType = op.getQuery().getType();
    int64_t d = qType.getDimSize(3);
    if (!qType.getElementType().isF32() || ShapedType::isDynamic(d) ||
        d % width != 0 || op.getValue().getType().getDimSize(3) != d)
      return rewriter.notifyMatchFailure(
          op, "expects f32 and a head dim that is a multiple of the width");
    Location loc = op.getLoc();
    int64_t h = qType.getDimSize(2);
    int64_t group = h / op.getKey().getType().getDimSize(2);
    AttentionBuilder ab{rewriter,
                        loc,
                        op.getQuery(),
                        op.getKey(),
                        op.getValue(),
                        width,
                        d / width,
                        group,
                        VectorType::get({width}, rewriter.getF32Type()),
                        Value()};
    ab.zeroF = ab.f32(0.0);
    Value scale = ab.f32(op.getScaleOrDefault());
    Value scaleVec = ab.splat(scale);
    Value negInf = ab.f32(-std::numeric_limits<float>::infinity());

    Value bDim = tensor::DimOp::create(rewriter, loc, op.getQuery(), 0);
    Value tDim = tensor::DimOp::create(rewriter, loc, op.getQuery(), 1);
    Value sDim = tensor::DimOp::create(rewriter, loc, op.getKey(), 1);
    Value offset = arith::SubIOp::create(rewriter, loc, sDim, tDim);
    Value out = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, op.getQuery()),
        rewriter.getF32Type());
    Value c0 = ab.idx(0), c1 = ab.idx(1);
    bool causal = op.getCausal();

    auto forTensor = [&](Value lo, Value hi, Value init,
                         function_ref<Value(Value, Value)> body) -> Value {
      auto loop = scf::ForOp::create(
          rewriter, loc, lo, hi, c1, ValueRange{init},
          [&](OpBuilder &nb, Location, Value iv, ValueRange iter) {
            OpBuilder::InsertionGuard guard(rewriter);
            rewriter.setInsertionPoint(nb.getInsertionBlock(),
                                       nb.getInsertionPoint());
            scf::YieldOp::create(rewriter, loc, body(iv, iter[0]));
          });
      return loop.getResult(0);
    };

    // Heads are independent: an scf.forall (OpenMP threads) whose
    // iterations each write their own [B, T, 1, D] slice of the output.
    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(h)},
        ValueRange{out}, /*mapping=*/std::nullopt);
    OpBuilder::InsertionGuard forallGuard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    Value hIdx = forall.getInductionVar(0);
    Value shared = forall.getRegionIterArgs()[0];
    SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(0),
                                         rewriter.getIndexAttr(0), hIdx,
                                         rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {bDim, tDim, rewriter.getIndexAttr(1),
                                       rewriter.getIndexAttr(d)};
    SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(rewriter, loc, shared, offsets,
                                                 sizes, strides);
    Value kvh = arith::DivUIOp::create(rewriter, loc, hIdx, ab.idx(group));
    Value computed = forTensor(c0, bDim, slice, [&](Value bIdx, Value o2) {
      {
        return forTensor(c0, tDim, o2, [&](Value t, Value o3) {
          // Keys visible to row t: all, or s <= t + (S - T).
          Value sEnd = sDim;
          if (causal) {
            Value limit = arith::AddIOp::create(
                rewriter, loc, arith::AddIOp::create(rewriter, loc, t, offset),
                c1);
            sEnd = arith::MinSIOp::create(rewriter, loc, limit, sDim);
            sEnd = arith::MaxSIOp::create(rewriter, loc, sEnd, c0);
          }
          SmallVector<Value> qs;
          for (int64_t i = 0; i < ab.nVec; ++i)
            qs.push_back(arith::MulFOp::create(
                rewriter, loc,
                ab.read(ab.q, {bIdx, t, hIdx, ab.idx(i * width)}), scaleVec));
          SmallVector<Value> state = {negInf, ab.zeroF};
          for (int64_t i = 0; i < ab.nVec; ++i)
            state.push_back(arith::ConstantOp::create(
                rewriter, loc, DenseElementsAttr::get(ab.vec, 0.0f)));

          // Full tiles of `width` keys.
          Value full = arith::MulIOp::create(
              rewriter, loc,
              arith::DivUIOp::create(rewriter, loc, sEnd, ab.idx(width)),
              ab.idx(width));
          auto tiles = scf::ForOp::create(
              rewriter, loc, c0, full, ab.idx(width), state,
              [&](OpBuilder &nb, Location, Value s0, ValueRange iter) {
                OpBuilder::InsertionGuard guard(rewriter);
                rewriter.setInsertionPoint(nb.getInsertionBlock(),
                                           nb.getInsertionPoint());
                Value scores = arith::ConstantOp::create(
                    rewriter, loc, DenseElementsAttr::get(ab.vec, 0.0f));
                for (int64_t j = 0; j < width; ++j)
                  scores = vector::InsertOp::create(
                      rewriter, loc,
                      ab.dot(
                          qs, bIdx,
                          arith::AddIOp::create(rewriter, loc, s0, ab.idx(j)),
                          kvh),
                      scores, j);
                scf::YieldOp::create(
                    rewriter, loc,
                    ab.update(iter, scores, width, bIdx, s0, kvh));
              });
          // The remaining keys one at a time.
          auto tail = scf::ForOp::create(
              rewriter, loc, full, sEnd, c1, tiles.getResults(),
              [&](OpBuilder &nb, Location, Value s, ValueRange iter) {
                OpBuilder::InsertionGuard guard(rewriter);
                rewriter.setInsertionPoint(nb.getInsertionBlock(),
                                           nb.getInsertionPoint());
                scf::YieldOp::create(
                    rewriter, loc,
                    ab.update(iter, ab.dot(qs, bIdx, s, kvh), 1, bIdx, s, kvh));
              });
          // out = l > 0 ? acc / l : 0
          Value l = tail.getResult(1);
          Value positive = arith::CmpFOp::create(
              rewriter, loc, arith::CmpFPredicate::OGT, l, ab.zeroF);
          Value inv = arith::SelectOp::create(
              rewriter, loc, positive,
              arith::DivFOp::create(rewriter, loc, ab.f32(1.0), l), ab.zeroF);
          Value invVec = ab.splat(inv);
          Value o = o3;
          for (int64_t i = 0; i < ab.nVec; ++i) {
            Value row = arith::MulFOp::create(rewriter, loc,
                                              tail.getResult(2 + i), invVec);
            o = vector::TransferWriteOp::create(
                    rewriter, loc, row, o,
                    ValueRange{bIdx, t, c0, ab.idx(i * width)},
                    ArrayRef<bool>{true})
                    .getResult();
          }
          return o;
        });
      }
    });
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, computed, shared,
                                          offsets, sizes, strides);
    rewriter.replaceOp(op, forall.getResult(0));
    return success();
  }

  int64_t width;
};

struct CPULowerSDPAPass
    : blockc::cpu::impl::CPULowerSDPAPassBase<CPULowerSDPAPass> {
  using Base::Base;
  void runOnOperation() override {
    if (vectorWidth < 1) {
      getOperation().emitError()
          << "blockc-cpu-lower-sdpa: vector-width must be >= 1";
      return signalPassFailure();
    }
    SmallVector<SDPAOp> ops;
    getOperation().walk([&](SDPAOp op) { ops.push_back(op); });
    LowerSDPA pattern(&getContext(), vectorWidth);
    PatternRewriter rewriter(&getContext());
    for (SDPAOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (succeeded(pattern.matchAndRewrite(op, rewriter)))
        ++numLowered;
    }
  }
};

} // namespace
