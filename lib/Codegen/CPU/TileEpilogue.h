//===- TileEpilogue.h - shared helpers of the CPU kernel passes -*- C++ -*-===//
//
// Used by the passes that build the CPU kernels (blockc-cpu-lower-linear,
// blockc-cpu-lower-sdpa) and by blockc-cpu-fuse-norm,
// blockc-cpu-fuse-activation and blockc-cpu-fuse-residual, which rewrite
// the projection kernels of blockc-cpu-lower-linear.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_CODEGEN_CPU_TILEEPILOGUE_H
#define BLOCKC_LIB_CODEGEN_CPU_TILEEPILOGUE_H

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace blockc::cpu {

/// The f32 lanes per vector of the kernels of `func`: the vector width of
/// its blockc_codegen.cpu_target. Fails, with an error at the function
/// naming `pass`, when the function has no target.
mlir::FailureOr<int64_t> getTargetVectorWidth(mlir::func::FuncOp func,
                                              llvm::StringRef pass);

/// Declares memref.prefetch's memory effects (it declares none, which
/// passes read as unknown effects): a read of its memref. For the passes
/// whose kernels prefetch (getDependentDialects).
void registerPrefetchEffects(mlir::DialectRegistry &registry);

/// getTargetVectorWidth looked up at the first get() only (and then
/// remembered): a pass needs the target only once it has something to
/// build.
class LazyVectorWidth {
public:
  LazyVectorWidth(mlir::func::FuncOp func, llvm::StringRef pass)
      : func(func), pass(pass) {}
  mlir::FailureOr<int64_t> get() {
    if (!width)
      width = getTargetVectorWidth(func, pass);
    return *width;
  }

private:
  mlir::func::FuncOp func;
  llvm::StringRef pass;
  std::optional<mlir::FailureOr<int64_t>> width;
};

/// Marks `op` as a kernel of `kind` (blockc_codegen.kernel).
void setKernelKind(mlir::Operation *op, codegen::KernelKind kind);

/// Whether `op` is the scf.forall of a projection kernel built by
/// blockc-cpu-lower-linear (blockc_codegen.kernel =
/// #blockc_codegen.kernel<linear>); false for null.
bool isLinearKernel(mlir::Operation *op);

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
