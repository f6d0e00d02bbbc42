//===- TileEpilogue.h - shared helpers of the CPU epilogue passes -*- C++
//-*-===//
//
// Used by blockc-cpu-fuse-norm, blockc-cpu-fuse-activation and
// blockc-cpu-fuse-residual, which all rewrite the projection kernels of
// blockc-cpu-lower-linear.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_CODEGEN_CPU_TILEEPILOGUE_H
#define BLOCKC_LIB_CODEGEN_CPU_TILEEPILOGUE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace blockc::cpu {

/// Whether `init` (a kernel's shared output) is a zero fill, i.e. the
/// projection had no bias and nothing was fused into its start.
bool isZeroFill(mlir::Value init);

/// Rewrites every element of `tile` (a kernel block's [B, T, w] f32 slice)
/// in vectors of `vec`: loops over b and t, full vectors along the last
/// dim, then at most one masked (zero-padded) vector. `body(x, at,
/// inBounds)` gets the tile's vector at `at` = {b, t, n} and returns its
/// new value. Returns the rewritten tile.
mlir::Value buildTileEpilogue(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value tile,
    mlir::VectorType vec,
    llvm::function_ref<mlir::Value(mlir::Value, mlir::ValueRange, bool)> body);

} // namespace blockc::cpu

#endif // BLOCKC_LIB_CODEGEN_CPU_TILEEPILOGUE_H
