//===- Approximations.cpp - f32 exp, erf, tanh and activations ------------===//
//
// See Approximations.h. The polynomial coefficients were fitted with a
// weighted least-squares minimax iteration in double precision (exp keeps
// the Cephes coefficients); the comment above each gives the fitted range
// and its approximation error before f32 rounding.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Approximations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <limits>

using namespace mlir;
using blockc::ElementaryMath;

namespace {

/// Emits f32 arithmetic on values of one shape (f32 or vector<...xf32>).
struct Emitter {
  OpBuilder &b;
  Location loc;
  Type type;    // f32 or vector<...xf32>
  Type intType; // i32 of the same shape

  Emitter(OpBuilder &b, Location loc, Type type)
      : b(b), loc(loc), type(type), intType(b.getI32Type()) {
    if (auto vt = dyn_cast<VectorType>(type))
      intType = vt.clone(b.getI32Type());
  }

  Value f(double v) {
    if (auto vt = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(vt, static_cast<float>(v)));
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value i(int32_t v) {
    if (auto vt = dyn_cast<VectorType>(intType))
      return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vt, v));
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value fma(Value x, Value y, Value z) {
    return math::FmaOp::create(b, loc, x, y, z);
  }
  Value abs(Value x) { return math::AbsFOp::create(b, loc, x); }
  /// maxnum / minnum: a NaN operand yields the other one.
  Value maxnum(Value x, Value y) {
    return arith::MaxNumFOp::create(b, loc, x, y);
  }
  Value minnum(Value x, Value y) {
    return arith::MinNumFOp::create(b, loc, x, y);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// Horner's scheme; `coeffs` from the highest degree down.
  Value poly(Value x, ArrayRef<double> coeffs) {
    Value p = f(coeffs.front());
    for (double c : coeffs.drop_front())
      p = fma(p, x, f(c));
    return p;
  }
  /// 2^n for integer n in [-126, 127] (the exponent field alone).
  Value pow2(Value n) {
    Value bits = arith::ShLIOp::create(
        b, loc, arith::AddIOp::create(b, loc, n, i(127)), i(23));
    return arith::BitcastOp::create(b, loc, type, bits);
  }
  /// `r` with its sign flipped where x < 0 (r >= 0 or NaN).
  Value withSignOf(Value x, Value r) {
    return select(cmp(arith::CmpFPredicate::OLT, x, f(0.0)), neg(r), r);
  }
  /// -0 where x is -inf, else r (for the activations, whose formulas give
  /// -inf * 0 = NaN there although the limit is -0).
  Value negInfToNegZero(Value x, Value r) {
    Value isNegInf = cmp(arith::CmpFPredicate::OEQ, x,
                         f(-std::numeric_limits<double>::infinity()));
    return select(isNegInf, f(-0.0), r);
  }

  //===--------------------------------------------------------------------===//
  // exp
  //===--------------------------------------------------------------------===//

  /// e^(hi + lo) for hi + lo in [-180, 88.75], not NaN (`lo` may be null,
  /// else small against hi; it carries the low part of an argument that is
  /// not a single float, e.g. -x^2). n = round((hi + lo) / ln 2), r = hi -
  /// n ln 2 + lo with ln 2 in two parts (n * 0.693359375 is exact), e^r by
  /// the Cephes polynomial (relative error < 2^-22.5 on |r| <= ln2 / 2), and
  /// 2^n applied as 2^(n/2) 2^(n - n/2): both factors are normal floats, so
  /// a denormal result is rounded once and an overflow gives +inf.
  Value expCore(Value hi, Value lo) {
    Value sum = lo ? add(hi, lo) : hi;
    Value fx =
        math::FloorOp::create(b, loc, fma(sum, f(1.44269504088896341), f(0.5)));
    Value r = fma(fx, f(-0.693359375), hi);
    r = fma(fx, f(2.12194440e-4), r);
    if (lo)
      r = add(r, lo);
    Value p = poly(r, {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                       4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1});
    Value y = fma(p, mul(r, r), add(r, f(1.0)));
    Value n = arith::FPToSIOp::create(b, loc, intType, fx);
    Value n1 = arith::ShRSIOp::create(b, loc, n, i(1));
    Value n2 = arith::SubIOp::create(b, loc, n, n1);
    return mul(mul(y, pow2(n1)), pow2(n2));
  }

  Value exp(Value x) {
    // Below -104 the result is 0 (e^-104 < 2^-150), above 88.75 it is +inf
    // (e^88.75 > FLT_MAX); maxnum/minnum map a NaN to a bound (so that
    // fptosi sees no NaN), the NaN is put back at the end.
    Value xc = minnum(maxnum(x, f(-104.0)), f(88.75));
    Value isNaN = cmp(arith::CmpFPredicate::UNO, x, x);
    return select(isNaN, x, expCore(xc, Value()));
  }

  //===--------------------------------------------------------------------===//
  // erf, erfc
  //===--------------------------------------------------------------------===//

  /// erf(x) / x = P(x^2) on |x| <= 1; error 1.2e-9.
  Value erfSmall(Value x) {
    Value p =
        poly(mul(x, x), {7.85385358e-05, -0.000801019157, 0.00518832749,
                         -0.0268538119, 0.112835851, -0.376126258, 1.12837917});
    return mul(x, p);
  }

  /// erfc(a) for a in [0.5, 10.5] given a^2 = sqHi + sqLo exactly:
  /// t exp(-a^2 + Q(t)), t = 1 / (1 + a/2); Q fitted on a in [0.5, 10.5]
  /// (error 1.5e-9, absolute in the exponent, i.e. relative in erfc).
  Value erfcLarge(Value a, Value sqHi, Value sqLo) {
    Value t = div(f(1.0), fma(a, f(0.5), f(1.0)));
    Value q = poly(t, {0.252997118, -1.19026838, 2.19329234, -1.88754687,
                       0.769343175, -0.387456922, 0.148350482, 0.366168326,
                       1.00068497, -1.2655352});
    return mul(t, expCore(neg(sqHi), sub(q, sqLo)));
  }

  /// erfc(|z|) for the large branches: |z| clamped to [0.5, 10.5]
  /// (erfc(10.5) rounds to 0), its square split exactly.
  Value erfcOfAbs(Value z) {
    Value a = minnum(maxnum(abs(z), f(0.5)), f(10.5));
    Value sqHi = mul(a, a);
    Value sqLo = fma(a, a, neg(sqHi));
    return erfcLarge(a, sqHi, sqLo);
  }

  /// Whether lo < x < hi, or x is NaN (the polynomial branches, which
  /// propagate it).
  Value inOrNaN(Value x, double lo, double hi) {
    return arith::AndIOp::create(b, loc,
                                 cmp(arith::CmpFPredicate::UGT, x, f(lo)),
                                 cmp(arith::CmpFPredicate::ULT, x, f(hi)));
  }

  Value erf(Value x) {
    Value small = inOrNaN(x, -1.0, 1.0);
    Value large = withSignOf(x, sub(f(1.0), erfcOfAbs(x)));
    return select(small, erfSmall(x), large);
  }

  Value erfc(Value x) {
    // 1 - erf(x) loses bits where erf(x) approaches 1: erfc(x) for x >= 0.5
    // comes from the erfc branch.
    Value small = inOrNaN(x, -1.0, 0.5);
    Value c = erfcOfAbs(x);
    Value large =
        select(cmp(arith::CmpFPredicate::OLT, x, f(0.0)), sub(f(2.0), c), c);
    return select(small, sub(f(1.0), erfSmall(x)), large);
  }

  //===--------------------------------------------------------------------===//
  // tanh
  //===--------------------------------------------------------------------===//

  Value tanh(Value x) {
    // |x| < 0.75: x (1 + x^2 P(x^2)) (tanh(x)/x fitted on [0, 0.75], error
    // 1.5e-9; a product with x, so that tanh(-0) = -0).
    Value x2 = mul(x, x);
    Value p = poly(x2, {0.00172034889, -0.00762702099, 0.0214308684,
                        -0.0538856301, 0.133325791, -0.333333072});
    Value small = mul(x, fma(x2, p, f(1.0)));
    // Above: 1 - 2 / (e^{2|x|} + 1), |x| clamped to 9.1 where tanh rounds
    // to 1 (minnum also maps NaN to 9.1; NaN takes the polynomial branch).
    Value a = minnum(abs(x), f(9.1));
    Value e = expCore(add(a, a), Value());
    Value large = withSignOf(x, sub(f(1.0), div(f(2.0), add(e, f(1.0)))));
    Value isSmall = cmp(arith::CmpFPredicate::ULT, abs(x), f(0.75));
    return select(isSmall, small, large);
  }

  //===--------------------------------------------------------------------===//
  // Activations
  //===--------------------------------------------------------------------===//

  Value expOf(Value x, ElementaryMath fns) {
    if (fns == ElementaryMath::MathDialect)
      return math::ExpOp::create(b, loc, x);
    return exp(x);
  }

  /// x * sigmoid(v) for v of the sign of x: x s / (1 + s) for v < 0 and
  /// x / (1 + s) otherwise, s = e^-|v| in (0, 1] (never overflows, so the
  /// tail x << 0 keeps its relative accuracy down to the denormals).
  Value xSigmoid(Value x, Value v, ElementaryMath fns) {
    Value one = f(1.0);
    Value s = expOf(neg(abs(v)), fns);
    Value num = select(cmp(arith::CmpFPredicate::OLT, v, f(0.0)), mul(x, s), x);
    return negInfToNegZero(x, div(num, add(one, s)));
  }

  Value silu(Value x, ElementaryMath fns) { return xSigmoid(x, x, fns); }

  Value gelu(Value x, ElementaryMath fns) {
    Value half = f(0.5);
    if (fns == ElementaryMath::MathDialect) {
      // 0.5 x erfc(-x / sqrt 2).
      Value z = mul(x, f(-M_SQRT1_2));
      Value c = math::ErfcOp::create(b, loc, z);
      return negInfToNegZero(x, mul(mul(x, half), c));
    }
    // 1 + erf(z), z = x / sqrt 2: 1 + z P(z^2) for -0.5 < z < 1, else
    // erfc(|z|) for x < 0 and 2 - erfc(|z|) for x > 0, with z^2 = x^2 / 2
    // carried exactly (x clamped to +-10.5 sqrt 2 first: beyond, erfc(|z|)
    // rounds to 0 anyway).
    Value z = mul(x, f(M_SQRT1_2));
    Value small = inOrNaN(z, -0.5, 1.0);
    Value onePlusErfSmall = add(f(1.0), erfSmall(z));
    Value xc = minnum(maxnum(x, f(-14.85)), f(14.85));
    Value sqHi = mul(xc, xc);
    Value sqLo = fma(xc, xc, neg(sqHi));
    Value a = maxnum(abs(mul(xc, f(M_SQRT1_2))), f(0.5));
    Value c = erfcLarge(a, mul(sqHi, half), mul(sqLo, half));
    Value onePlusErfLarge =
        select(cmp(arith::CmpFPredicate::OLT, x, f(0.0)), c, sub(f(2.0), c));
    Value onePlusErf = select(small, onePlusErfSmall, onePlusErfLarge);
    return negInfToNegZero(x, mul(mul(x, half), onePlusErf));
  }

  Value geluTanh(Value x, ElementaryMath fns) {
    // x sigmoid(2u), 2u = x (2 sqrt(2/pi)) (1 + 0.044715 x^2).
    Value x2 = mul(x, x);
    Value inner = fma(x2, f(0.044715), f(1.0));
    Value twoU = mul(mul(x, f(2.0 * 0.7978845608028654)), inner);
    return xSigmoid(x, twoU, fns);
  }
};

bool isF32OrVectorOfF32(Type t) {
  if (auto vt = dyn_cast<VectorType>(t))
    return vt.getElementType().isF32();
  return t.isF32();
}

template <typename MathOp> struct ApproximateOp : OpRewritePattern<MathOp> {
  using BuildFn = Value (*)(OpBuilder &, Location, Value);
  ApproximateOp(MLIRContext *ctx, PatternBenefit benefit, BuildFn build)
      : OpRewritePattern<MathOp>(ctx, benefit), build(build) {}
  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    if (!isF32OrVectorOfF32(op.getType()))
      return rewriter.notifyMatchFailure(op, "not f32 or a vector of f32");
    rewriter.replaceOp(op, build(rewriter, op.getLoc(), op.getOperand()));
    return success();
  }
  BuildFn build;
};

} // namespace

Value blockc::buildExp(OpBuilder &b, Location loc, Value x) {
  return Emitter(b, loc, x.getType()).exp(x);
}
Value blockc::buildErf(OpBuilder &b, Location loc, Value x) {
  return Emitter(b, loc, x.getType()).erf(x);
}
Value blockc::buildErfc(OpBuilder &b, Location loc, Value x) {
  return Emitter(b, loc, x.getType()).erfc(x);
}
Value blockc::buildTanh(OpBuilder &b, Location loc, Value x) {
  return Emitter(b, loc, x.getType()).tanh(x);
}
Value blockc::buildSilu(OpBuilder &b, Location loc, Value x,
                        ElementaryMath fns) {
  return Emitter(b, loc, x.getType()).silu(x, fns);
}
Value blockc::buildGelu(OpBuilder &b, Location loc, Value x,
                        ElementaryMath fns) {
  return Emitter(b, loc, x.getType()).gelu(x, fns);
}
Value blockc::buildGeluTanh(OpBuilder &b, Location loc, Value x,
                            ElementaryMath fns) {
  return Emitter(b, loc, x.getType()).geluTanh(x, fns);
}

void blockc::populateMathApproximationPatterns(RewritePatternSet &patterns,
                                               PatternBenefit benefit) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ApproximateOp<math::ExpOp>>(ctx, benefit, &buildExp);
  patterns.add<ApproximateOp<math::ErfOp>>(ctx, benefit, &buildErf);
  patterns.add<ApproximateOp<math::ErfcOp>>(ctx, benefit, &buildErfc);
  patterns.add<ApproximateOp<math::TanhOp>>(ctx, benefit, &buildTanh);
}
