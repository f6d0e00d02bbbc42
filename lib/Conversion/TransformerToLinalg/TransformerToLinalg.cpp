//===- TransformerToLinalg.cpp - transformer primitives to linalg ---------===//
//
// Lowers every primitive transformer op to linalg on tensors in
// destination-passing style. The structure of each lowering is documented in
// Conversion/Passes.td; the comments here explain the non-obvious choices.
//
//===----------------------------------------------------------------------===//

#include "blockc/Conversion/TransformerToLinalg/TransformerToLinalg.h"
#include "blockc/Conversion/Passes.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <limits>

namespace blockc {
#define GEN_PASS_DEF_CONVERTTRANSFORMERTOLINALGPASS
#include "blockc/Conversion/Passes.h.inc"
} // namespace blockc

using namespace mlir;
using namespace blockc::transformer;
using mlir::utils::IteratorType;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

void yield(OpBuilder &b, Location loc, ValueRange values) {
  linalg::YieldOp::create(b, loc, values);
}
void yield(OpBuilder &b, Location loc, Value value) {
  linalg::YieldOp::create(b, loc, ValueRange{value});
}

Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value f64Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// An empty tensor of the given mixed sizes.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

/// A tensor of the given sizes filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   Value value) {
  Value empty = emptyTensor(b, loc, sizes, value.getType());
  return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{empty})
      .getResult(0);
}

/// The identity map on `rank` loops.
AffineMap identity(MLIRContext *ctx, unsigned rank) {
  return AffineMap::getMultiDimIdentityMap(rank, ctx);
}

/// The map (d0, ..., d_{n-1}) -> (d_i for i in `dims`).
AffineMap projection(MLIRContext *ctx, unsigned numLoops,
                     ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

/// The map dropping the last loop: (d0..d_{n-1}) -> (d0..d_{n-2}).
AffineMap dropLast(MLIRContext *ctx, unsigned numLoops) {
  SmallVector<unsigned> dims;
  for (unsigned i = 0; i + 1 < numLoops; ++i)
    dims.push_back(i);
  return projection(ctx, numLoops, dims);
}

SmallVector<IteratorType> iterators(unsigned parallel, unsigned reduction) {
  SmallVector<IteratorType> its(parallel, IteratorType::parallel);
  its.append(reduction, IteratorType::reduction);
  return its;
}

/// 1/n for the last dimension of `v` as an f32 value (static or dynamic).
Value reciprocalOfLastDim(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t d = type.getShape().back();
  if (!ShapedType::isDynamic(d))
    return f32Const(b, loc, 1.0 / static_cast<double>(d));
  Value dim = tensor::DimOp::create(b, loc, v, type.getRank() - 1);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), dim);
  Value asF = arith::SIToFPOp::create(b, loc, b.getF32Type(), asInt);
  return arith::DivFOp::create(b, loc, f32Const(b, loc, 1.0), asF);
}

/// Sum over the last dimension of `x` of `term(x)`: returns a tensor of the
/// leading dimensions. `extraInputs` are indexed by the row map.
Value rowReduce(OpBuilder &b, Location loc, Value x, ValueRange extraInputs,
                function_ref<Value(OpBuilder &, Location, ValueRange)> term) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  sizes.pop_back();
  Value init = filledTensor(b, loc, sizes, f32Const(b, loc, 0.0));
  SmallVector<Value> inputs = {x};
  inputs.append(extraInputs.begin(), extraInputs.end());
  SmallVector<AffineMap> maps = {identity(ctx, rank)};
  for (size_t i = 0; i < extraInputs.size(); ++i)
    maps.push_back(dropLast(ctx, rank));
  maps.push_back(dropLast(ctx, rank));
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             iterators(rank - 1, 1),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value t = term(nb, nloc, args.drop_back());
               Value acc = arith::AddFOp::create(nb, nloc, args.back(), t);
               yield(nb, nloc, acc);
             })
      .getResult(0);
}

/// A contraction `acc += a * b` over `maps` (inputs a, b, then the init).
Value mulAddContraction(OpBuilder &b, Location loc, Type resultType, Value lhs,
                        Value rhs, Value init, ArrayRef<AffineMap> maps,
                        ArrayRef<IteratorType> iteratorTypes) {
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{lhs, rhs},
             ValueRange{init}, maps, iteratorTypes,
             [](OpBuilder &nb, Location l, ValueRange a) {
               Value p = arith::MulFOp::create(nb, l, a[0], a[1]);
               yield(nb, l, arith::AddFOp::create(nb, l, a[2], p));
             })
      .getResult(0);
}

/// An all-parallel generic over the iteration space of `result` (identity
/// output map) whose inputs are indexed by `inputMaps`.
Value elementwise(OpBuilder &b, Location loc, Value sizeSource,
                  RankedTensorType resultType, ValueRange inputs,
                  ArrayRef<AffineMap> inputMaps,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  unsigned rank = resultType.getRank();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, sizeSource);
  Value init = emptyTensor(b, loc, sizes, resultType.getElementType());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(identity(b.getContext(), rank));
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
             iterators(rank, 0),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               yield(nb, nloc, body(nb, nloc, args.drop_back()));
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

/// max |x| over the last dimension of `x` (NaN propagates).
Value rowMaxAbs(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  sizes.pop_back();
  Value init = filledTensor(b, loc, sizes, f32Const(b, loc, 0.0));
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
             ArrayRef<AffineMap>{identity(ctx, rank), dropLast(ctx, rank)},
             iterators(rank - 1, 1),
             [](OpBuilder &nb, Location l, ValueRange a) {
               Value m = arith::MaximumFOp::create(
                   nb, l, a[1], math::AbsFOp::create(nb, l, a[0]));
               yield(nb, l, m);
             })
      .getResult(0);
}

/// The factor a norm's row is scaled by before squaring: 1 / max|x| when
/// that is above 2^50 (so that the sum of squares of up to 2^26 elements
/// cannot overflow f32) and finite, else 1 (the unscaled formula is exact
/// for small rows, and an Inf or NaN row keeps IEEE semantics).
Value rowInvScale(OpBuilder &b, Location l, Value maxAbs) {
  Value big = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, maxAbs,
                                    f32Const(b, l, 0x1p50));
  Value finite = arith::CmpFOp::create(
      b, l, arith::CmpFPredicate::OLT, maxAbs,
      f32Const(b, l, std::numeric_limits<double>::infinity()));
  Value scale =
      arith::SelectOp::create(b, l, arith::AndIOp::create(b, l, big, finite),
                              maxAbs, f32Const(b, l, 1.0));
  return arith::DivFOp::create(b, l, f32Const(b, l, 1.0), scale);
}

/// RMSNorm and LayerNorm scale rows whose magnitude would overflow the f32
/// sum of squares (|x| above 2^50): y is computed from x' = x / max|x| with
/// epsilon / max|x|^2, which is the same value mathematically, so rows up to
/// the f32 maximum normalise correctly instead of to zero; the extra max|x|
/// reduction reads the row once more.
struct RMSNormLowering : OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RMSNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    RankedTensorType type = op.getType();
    unsigned rank = type.getRank();
    MLIRContext *ctx = getContext();
    Value invD = reciprocalOfLastDim(rewriter, loc, x);
    Value eps = f32Const(rewriter, loc, op.getEpsilon().convertToDouble());
    Value maxAbs = rowMaxAbs(rewriter, loc, x);
    Value sumSq = rowReduce(
        rewriter, loc, x, {maxAbs}, [](OpBuilder &b, Location l, ValueRange a) {
          Value xs = arith::MulFOp::create(b, l, a[0], rowInvScale(b, l, a[1]));
          return arith::MulFOp::create(b, l, xs, xs);
        });
    Value result =
        elementwise(rewriter, loc, x, type, {x, sumSq, op.getWeight(), maxAbs},
                    {identity(ctx, rank), dropLast(ctx, rank),
                     projection(ctx, rank, {rank - 1}), dropLast(ctx, rank)},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Value inv = rowInvScale(b, l, a[3]);
                      Value meanSq = arith::MulFOp::create(b, l, a[1], invD);
                      Value epsScaled = arith::MulFOp::create(
                          b, l, eps, arith::MulFOp::create(b, l, inv, inv));
                      Value r = math::RsqrtOp::create(
                          b, l, arith::AddFOp::create(b, l, meanSq, epsScaled));
                      Value xs = arith::MulFOp::create(b, l, a[0], inv);
                      return arith::MulFOp::create(
                          b, l, arith::MulFOp::create(b, l, xs, r), a[2]);
                    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LayerNormLowering : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    RankedTensorType type = op.getType();
    unsigned rank = type.getRank();
    MLIRContext *ctx = getContext();
    Value invD = reciprocalOfLastDim(rewriter, loc, x);
    Value eps = f32Const(rewriter, loc, op.getEpsilon().convertToDouble());
    Value maxAbs = rowMaxAbs(rewriter, loc, x);
    // Sums of the scaled row x' = x * inv (see rowInvScale).
    Value sum = rowReduce(
        rewriter, loc, x, {maxAbs}, [](OpBuilder &b, Location l, ValueRange a) {
          return arith::MulFOp::create(b, l, a[0], rowInvScale(b, l, a[1]));
        });
    // Two-pass variance: sum((x' - mean')^2), numerically safer than
    // E[x^2] - E[x]^2.
    Value sumSqDev = rowReduce(
        rewriter, loc, x, {sum, maxAbs},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value mean = arith::MulFOp::create(b, l, a[1], invD);
          Value xs = arith::MulFOp::create(b, l, a[0], rowInvScale(b, l, a[2]));
          Value dev = arith::SubFOp::create(b, l, xs, mean);
          return arith::MulFOp::create(b, l, dev, dev);
        });
    Value result =
        elementwise(rewriter, loc, x, type,
                    {x, sum, sumSqDev, op.getWeight(), op.getBias(), maxAbs},
                    {identity(ctx, rank), dropLast(ctx, rank),
                     dropLast(ctx, rank), projection(ctx, rank, {rank - 1}),
                     projection(ctx, rank, {rank - 1}), dropLast(ctx, rank)},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Value inv = rowInvScale(b, l, a[5]);
                      Value mean = arith::MulFOp::create(b, l, a[1], invD);
                      Value var = arith::MulFOp::create(b, l, a[2], invD);
                      Value epsScaled = arith::MulFOp::create(
                          b, l, eps, arith::MulFOp::create(b, l, inv, inv));
                      Value r = math::RsqrtOp::create(
                          b, l, arith::AddFOp::create(b, l, var, epsScaled));
                      Value xs = arith::MulFOp::create(b, l, a[0], inv);
                      Value n = arith::MulFOp::create(
                          b, l, arith::SubFOp::create(b, l, xs, mean), r);
                      return arith::AddFOp::create(
                          b, l, arith::MulFOp::create(b, l, n, a[3]), a[4]);
                    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Linear
//===----------------------------------------------------------------------===//

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
    double logTheta = std::log(op.getTheta().convertToDouble());
    Value offset = op.getPositionOffset();
    if (!offset)
      offset = indexConst(rewriter, loc, 0);

    // inv_freq per element j of a head, folded at compile time (f64):
    // theta^(-2i/R) with i the pair index of j, and 0 beyond the rotary dim.
    Type f32 = rewriter.getF32Type(), f64 = rewriter.getF64Type();
    SmallVector<double> invFreq(headDim, 0.0);
    for (int64_t jj = 0; jj < rotary; ++jj) {
      int64_t i = interleaved ? jj / 2 : jj % half;
      invFreq[jj] = std::exp(-2.0 * static_cast<double>(i) / rotary * logTheta);
    }
    auto invFreqType = RankedTensorType::get({headDim}, f64);
    Value invFreqTable = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(invFreqType, ArrayRef<double>(invFreq)));

    // cos/sin tables [T, D]: the angle pos * inv_freq and its reduction to
    // [-pi, pi] are exact in f64 (arithmetic only); cos and sin of the
    // reduced angle are then f32 functions, which every target provides
    // natively (no libdevice / libm f64 dependency). The rotation sign is
    // folded into sin, and (1, 0) is used beyond the rotary dim.
    SmallVector<OpFoldResult> tableSizes = {
        tensor::getMixedSize(rewriter, loc, x, 1),
        rewriter.getIndexAttr(headDim)};
    Value cosInit = emptyTensor(rewriter, loc, tableSizes, f32);
    Value sinInit = emptyTensor(rewriter, loc, tableSizes, f32);
    auto tableType = cast<RankedTensorType>(cosInit.getType());
    auto tables = linalg::GenericOp::create(
        rewriter, loc, TypeRange{tableType, tableType},
        ValueRange{invFreqTable}, ValueRange{cosInit, sinInit},
        ArrayRef<AffineMap>{projection(ctx, 2, {1}), identity(ctx, 2),
                            identity(ctx, 2)},
        iterators(2, 0), [&](OpBuilder &b, Location l, ValueRange args) {
          Value t = linalg::IndexOp::create(b, l, 0);
          Value j = linalg::IndexOp::create(b, l, 1);
          Value pos = arith::AddIOp::create(b, l, t, offset);
          Value posF = arith::SIToFPOp::create(
              b, l, f64, arith::IndexCastOp::create(b, l, b.getI64Type(), pos));
          Value angle = arith::MulFOp::create(b, l, posF, args[0]);
          // r = angle - 2 pi k, k = round(angle / 2 pi); 2 pi split in a
          // high part (exact product with k) and a low correction.
          constexpr double kTwoPiHi = 6.28318530717958623200;
          constexpr double kTwoPiLo = 2.44929359829470635445e-16;
          Value k = math::RoundEvenOp::create(
              b, l,
              arith::MulFOp::create(b, l, angle,
                                    f64Const(b, l, 1.0 / kTwoPiHi)));
          Value r = arith::SubFOp::create(
              b, l, angle,
              arith::MulFOp::create(b, l, k, f64Const(b, l, kTwoPiHi)));
          r = arith::SubFOp::create(
              b, l, r,
              arith::MulFOp::create(b, l, k, f64Const(b, l, kTwoPiLo)));
          Value r32 = arith::TruncFOp::create(b, l, f32, r);
          Value c = math::CosOp::create(b, l, r32);
          Value sn = math::SinOp::create(b, l, r32);
          Value two = indexConst(b, l, 2);
          Value negate =
              interleaved
                  ? arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                          arith::RemUIOp::create(b, l, j, two),
                                          indexConst(b, l, 0))
                  : arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, j,
                                          indexConst(b, l, half));
          sn = arith::SelectOp::create(b, l, negate,
                                       arith::NegFOp::create(b, l, sn), sn);
          Value inRot = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                              j, indexConst(b, l, rotary));
          c = arith::SelectOp::create(b, l, inRot, c, f32Const(b, l, 1.0));
          sn = arith::SelectOp::create(b, l, inRot, sn, f32Const(b, l, 0.0));
          yield(b, l, ValueRange{c, sn});
        });

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
        rewriter, loc, x, type,
        {x, x, tables.getResult(0), tables.getResult(1)},
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

//===----------------------------------------------------------------------===//
// Activation and residual add
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct ConvertTransformerToLinalgPass
    : blockc::impl::ConvertTransformerToLinalgPassBase<
          ConvertTransformerToLinalgPass> {
  void runOnOperation() override {
    // Diagnose what the patterns do not handle before converting, so that
    // the user sees why rather than a generic legalization failure.
    WalkResult walk = getOperation()->walk([](Operation *op) {
      if (!isa<TransformerDialect>(op->getDialect()))
        return WalkResult::advance();
      if (isa<BlockOp, AttentionOp, FFNOp>(op)) {
        op->emitOpError() << "is a composite op; run --transformer-decompose "
                             "before --convert-transformer-to-linalg";
        return WalkResult::interrupt();
      }
      for (Type t : op->getOperandTypes()) {
        auto shaped = dyn_cast<ShapedType>(t);
        if (shaped && !shaped.getElementType().isF32()) {
          op->emitOpError()
              << "lowering of element type " << shaped.getElementType()
              << " is not supported yet (only f32)";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    blockc::populateTransformerToLinalgPatterns(patterns);
    ConversionTarget target(getContext());
    target.addIllegalDialect<TransformerDialect>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           cf::ControlFlowDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void blockc::populateTransformerToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RMSNormLowering, LayerNormLowering, LinearLowering, RoPELowering,
               SDPALowering, ActivationLowering, ResidualAddLowering,
               KVCacheAppendLowering>(patterns.getContext());
}
