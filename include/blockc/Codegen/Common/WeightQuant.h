//===- WeightQuant.h - the rules of #transformer.weight_quant ---*- C++ -*-===//
//
// One builder of the quantisation rules (per-group max |W|, the level of a
// value), used by the reference lowering (convert-weight-quant-to-linalg:
// the dequantised weight) and the CPU kernel on quantised weights
// (blockc-cpu-lower-quantized-linear: the prepared bytes), so both quantise
// exactly alike.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_COMMON_WEIGHTQUANT_H
#define BLOCKC_CODEGEN_COMMON_WEIGHTQUANT_H

#include "mlir/IR/Builders.h"

namespace blockc {

/// amax[n, j] = max_{l < G} |W[n, j G + l]| in f32 ([N, K / G]; W [N, K]
/// of any float type, viewed [N, K / G, G]), as one linalg.generic.
mlir::Value buildGroupAbsMax(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value w, int64_t groupSize);

/// amax[..., j] = max_{l < run} |x[..., j run + l]| in f32 for x [..., K] of
/// any rank and float type (dynamic leading dimensions allowed; K static, a
/// multiple of `run`), viewed [..., K / run, run]: the maxima of the runs of
/// activations that weight_quant's `activations = int8` quantises alike.
mlir::Value buildRunAbsMax(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value x, int64_t run);

/// r[..., j] = combine(... combine(0, x[..., j run]) ..., x[..., j run +
/// run - 1]) in f32 (x widened to f32 first; integers as signed), viewed as
/// buildRunAbsMax, whose combine is max(r, |x|).
mlir::Value buildRunReduction(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, int64_t run,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::Value r, mlir::Value x)>
        combine);

/// y[..., k] = body(x[..., k], amax[..., k floordiv run]) for x [..., K] and
/// its runs' maxima (buildRunAbsMax), as one linalg.generic whose result has
/// x's shape and `resultElem`: the per-element half of the activation
/// quantisation.
mlir::Value
buildRunwise(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
             mlir::Value amax, int64_t run, mlir::Type resultElem,
             llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                            mlir::Value x, mlir::Value amax)>
                 body);

/// The scale of a group: amax / level (f32).
mlir::Value buildQuantScale(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value amax, int64_t level);

/// The level q (an f32 integer in [-level, level]) of the f32 value `x` in a
/// group of scale `s`: clamp(rint(x / s), -level, level), 0 where s == 0.
mlir::Value buildQuantLevel(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value x, mlir::Value s, int64_t level);

} // namespace blockc

#endif // BLOCKC_CODEGEN_COMMON_WEIGHTQUANT_H
