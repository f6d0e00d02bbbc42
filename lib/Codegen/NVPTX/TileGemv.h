//===- TileGemv.h - weight-streaming small-M contractions -------*- C++ -*-===//
//
// The kernel of blockc-gpu-tile-gemv (a decode step's projections: M = B *
// T rows with T = 1), which blockc-gpu-tile-matmul also builds as the
// run-time alternative of its tensor-core kernels when M is not static.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_CODEGEN_NVPTX_TILEGEMV_H
#define BLOCKC_LIB_CODEGEN_NVPTX_TILEGEMV_H

#include "EpilogueFusion.h"

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace blockc::nvptx {

/// Whether `gemv` configures a contraction whose weight-streaming kernel
/// blockc-gpu-tile-gemv builds (the shape isWarpgroupMatmulCandidate
/// accepts).
bool isGemvCandidate(mlir::linalg::LinalgOp op);

/// Whether the contractions `first` and `second` of a gate/up pair can run
/// as one weight-streaming kernel configured with `gemv`: both carry it,
/// with the same maps, operand types and M-side input.
bool canPairGemv(mlir::linalg::LinalgOp first, mlir::linalg::LinalgOp second,
                 codegen::GPUGemvAttr gemv);

/// The static M (the product of the M dimensions) of `op`, if every M
/// dimension is static.
std::optional<int64_t> staticRows(mlir::linalg::LinalgOp op);

/// Builds at `b`'s insertion point the weight-streaming kernel of `plan`
/// (`op` is one of its contractions; `loopSizes` its loop sizes as host
/// values) and returns the launch.
mlir::gpu::LaunchOp buildGemvKernel(mlir::OpBuilder &b,
                                    mlir::linalg::LinalgOp op,
                                    llvm::ArrayRef<mlir::Value> loopSizes,
                                    codegen::GPUGemvAttr gemv,
                                    const EpiloguePlan &plan);

/// Builds at `b`'s insertion point `scf.if M <= max_m` whose then-block
/// holds the weight-streaming kernel of `plan`, and leaves `b` at the start
/// of its else-block, where the caller builds the kernel for larger M.
mlir::scf::IfOp buildGemvDispatch(mlir::OpBuilder &b, mlir::linalg::LinalgOp op,
                                  llvm::ArrayRef<mlir::Value> loopSizes,
                                  codegen::GPUGemvAttr gemv,
                                  const EpiloguePlan &plan);

} // namespace blockc::nvptx

#endif // BLOCKC_LIB_CODEGEN_NVPTX_TILEGEMV_H
