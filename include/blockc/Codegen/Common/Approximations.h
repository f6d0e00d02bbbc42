//===- Approximations.h - f32 exp, erf, tanh and activations ----*- C++ -*-===//
//
// The one implementation of the elementary functions and activations that
// blockc emits inline: exp, erf, erfc, tanh as polynomials built from
// arith/math ops on an f32 or vector<...xf32> value, and SiLU and GeLU (erf
// and tanh forms) on top of them. The CPU kernels (projection epilogues,
// fused attention), the GPU math expansion and the linalg lowering all call
// these builders. docs/Pipelines.md ("Math approximations") gives the
// algorithms and their measured accuracy; unittests/Codegen/Common checks it
// against libm over the whole f32 range.
//
// The polynomials use arith ops plus math.fma, math.floor and math.absf,
// which every blockc target lowers natively (x86 vfmadd/vrndscale, PTX
// fma.rn/cvt.rmi/abs).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_COMMON_APPROXIMATIONS_H
#define BLOCKC_CODEGEN_COMMON_APPROXIMATIONS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc {

/// e^x: Cephes range reduction by ln 2 and degree-5 polynomial, with 2^n
/// applied in two steps so that results in the denormal range are rounded
/// once rather than flushed. exp(-inf) = +0, exp(+inf) = +inf, exp(NaN) =
/// NaN, overflow gives +inf and underflow +0.
mlir::Value buildExp(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// erf(x): an odd polynomial for |x| < 1, 1 - erfc(|x|) above (erfc as
/// below); erf(+-inf) = +-1, erf(-0) = -0, NaN propagates.
mlir::Value buildErf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// erfc(x) = 1 - erf(x): 1 - (erf's odd polynomial) for -1 < x < 0.5, else
/// t exp(-x^2 + Q(t)) with t = 1 / (1 + |x|/2) (x^2 carried exactly, as a
/// sum of two floats), mirrored to 2 - erfc(|x|) for x < 0; erfc(+inf) = 0,
/// erfc(-inf) = 2, NaN propagates.
mlir::Value buildErfc(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// tanh(x): an odd polynomial for |x| < 0.75, 1 - 2 / (e^{2|x|} + 1) with
/// the sign of x above; tanh(+-inf) = +-1, NaN propagates.
mlir::Value buildTanh(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// How the activation builders compute the elementary functions they need.
enum class ElementaryMath {
  /// The polynomials above (only arith/math.fma/floor/absf ops remain).
  Polynomial,
  /// math.exp / math.erfc (plus math.absf / math.fma) ops, left to the
  /// target's math lowering (libm on the CPU's scalar loops, the
  /// polynomials above inside GPU kernels).
  MathDialect,
};

/// SiLU x sigmoid(x), as (x < 0 ? x s : x) / (1 + s) with s = e^-|x| (no
/// overflow, so the tail x << 0 keeps its accuracy); silu(-inf) = -0.
mlir::Value buildSilu(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      ElementaryMath fns = ElementaryMath::Polynomial);

/// Exact GeLU 0.5 x (1 + erf(x / sqrt 2)), computed as 0.5 x erfc(-x/sqrt 2)
/// so that the tail x << 0 keeps its relative accuracy; gelu(-inf) = -0.
mlir::Value buildGelu(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      ElementaryMath fns = ElementaryMath::Polynomial);

/// Tanh-form GeLU 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
/// computed as the same function x sigmoid(2u) (as SiLU, without the
/// cancellation of 1 + tanh(u) for x << 0); gelu_tanh(-inf) = -0.
mlir::Value buildGeluTanh(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                          ElementaryMath fns = ElementaryMath::Polynomial);

/// Patterns rewriting math.exp, math.erf, math.erfc and math.tanh on f32 or
/// vectors of f32 into the builders above.
void populateMathApproximationPatterns(mlir::RewritePatternSet &patterns,
                                       mlir::PatternBenefit benefit = 1);

} // namespace blockc

#endif // BLOCKC_CODEGEN_COMMON_APPROXIMATIONS_H
