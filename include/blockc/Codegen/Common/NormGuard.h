//===- NormGuard.h - the overflow guard of RMSNorm and LayerNorm -*- C++
//-*-===//
//
// The norms scale a row whose magnitude would overflow the f32 sum of
// squares by 1 / max|x| before summing. One builder of that factor, used by
// the linalg lowering of the norms, the CPU norm prologue
// (blockc-cpu-fuse-norm) and the CPU norm kernels (blockc-cpu-lower-norms),
// so that every path guards the same rows.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_COMMON_NORMGUARD_H
#define BLOCKC_CODEGEN_COMMON_NORMGUARD_H

#include "mlir/IR/Builders.h"

namespace blockc {

/// The factor a norm's row is scaled by before squaring, from its max |x|
/// (an f32 scalar): 1 / max|x| when that is above 2^50 (so that the sum of
/// squares of up to 2^26 elements cannot overflow f32) and finite, else 1
/// (the unscaled formula is exact for small rows, and an Inf or NaN row
/// keeps IEEE semantics).
mlir::Value buildNormInvScale(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value maxAbs);

} // namespace blockc

#endif // BLOCKC_CODEGEN_COMMON_NORMGUARD_H
