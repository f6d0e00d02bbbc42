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
#include "RowReductions.h"

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// A KV-cache append that the weight-streaming kernel does itself
/// (`kv_append`): `copy` writes the kernel's final result (the RoPE's
/// output with `plan.rotation`, else the consumer's output or its view as
/// `[M..., H, D]`) into `cache[offsets...]`, a unit-stride subview of a
/// function argument; the kernel stores each element there instead
/// (guarded by the argument's sizes) and the copy goes.
struct AppendPlan {
  mlir::memref::CopyOp copy;
  mlir::Value cache;
  llvm::SmallVector<mlir::OpFoldResult> offsets;
  /// D of the cache's [M..., H, D] rows.
  int64_t headDim = 0;
};

/// The append of `plan`'s result (one contraction `op`, with a consumer;
/// with `plan.rotation`, its output), when the only reader of that result
/// is one `memref.copy` into a subview of a function argument (the
/// result's [M..., N] as [M..., H, D] through an `expand_shape`, or the
/// RoPE's output as it is) whose offsets are function arguments or
/// constants, after the kernel's place in its block, and nothing between
/// them reads or writes that argument (only views and sizes of it).
std::optional<AppendPlan> planAppend(mlir::linalg::LinalgOp op,
                                     const EpiloguePlan &plan);

/// Plans what `gemv`'s rope_head_dim and kv_append ask of `plan`'s kernel
/// (at `b`, the kernel's place): the RoPE (planRotation, its output hoisted
/// to `b`) into `plan.rotation`, the append into `append`. Fails with an
/// error on `op` when the IR does not have them.
mlir::LogicalResult planGemvRopeAppend(mlir::OpBuilder &b,
                                       mlir::linalg::LinalgOp op,
                                       codegen::GPUGemvAttr gemv,
                                       EpiloguePlan &plan,
                                       std::optional<AppendPlan> &append);

/// The last op before `before` (same block) that writes `buffer` through a
/// use of its own (not only reads it), or null.
mlir::Operation *lastWriterBefore(mlir::Value buffer, mlir::Operation *before);

/// A norm that weight-streaming kernels evaluate in their prologue (the
/// `norm-prologue` option of blockc-gpu-tile-matmul): a chain of row
/// reductions over `x` and the elementwise op that applies their results
/// and writes the kernels' M-side input. The ops are those in the branch
/// that still runs the norm (for the tensor-core kernels); the kernels
/// clone their bodies.
struct NormPrologue {
  /// The reductions, with their lengths and 16-byte paths set (host).
  llvm::SmallVector<RowStage> stages;
  mlir::linalg::GenericOp apply;
  /// The 16-byte path of the apply's inputs along K (host).
  VectorAccess applyVec;
  /// M <= max_m and every 16-byte path valid: the weight-streaming
  /// kernels run (host).
  mlir::Value condition;
};

/// Plans the norm prologue of the contractions `consumers` (configured
/// with `gemv`; dynamic M, tensor-core tiles: they choose at run time),
/// which all read as their M-side input the buffer `input` written last
/// by the same op: when that writer is a norm (the apply of a chain of row
/// reductions over one input, chain and apply as blockc-gpu-tile-reductions
/// fuses them, each reduction's init a scalar), those contractions are all that
/// read the norm's results before they are overwritten, nothing writes the
/// norm's inputs before the last of them, and its accesses along K take 16-byte
/// vectors of 8 elements, the norm moves into `scf.if not condition` (a
/// copy with allocations of its own for the statistics) and the plan is
/// returned. None otherwise (the IR is unchanged).
std::optional<NormPrologue>
planNormPrologue(mlir::OpBuilder &b, mlir::Value input,
                 llvm::ArrayRef<mlir::linalg::LinalgOp> consumers,
                 codegen::GPUGemvAttr gemv);

/// Builds at `b`'s insertion point the weight-streaming kernel of `plan`
/// (`op` is one of its contractions; `loopSizes` its loop sizes as host
/// values) and returns the launch. With `rope_head_dim` on `gemv`, it
/// applies `plan.rotation` (which must be set); with `append`, it writes
/// into the cache instead of the result buffer; with `norm`, it computes
/// its M-side input from the norm's inputs.
mlir::gpu::LaunchOp
buildGemvKernel(mlir::OpBuilder &b, mlir::linalg::LinalgOp op,
                llvm::ArrayRef<mlir::Value> loopSizes,
                codegen::GPUGemvAttr gemv, const EpiloguePlan &plan,
                const std::optional<AppendPlan> &append = std::nullopt,
                const NormPrologue *norm = nullptr);

/// Builds at `b`'s insertion point `scf.if M <= max_m` (with `norm`, its
/// condition) whose then-block holds the weight-streaming kernel of
/// `plan`, and leaves `b` at the start of its else-block, where the caller
/// builds the kernel for larger M.
mlir::scf::IfOp
buildGemvDispatch(mlir::OpBuilder &b, mlir::linalg::LinalgOp op,
                  llvm::ArrayRef<mlir::Value> loopSizes,
                  codegen::GPUGemvAttr gemv, const EpiloguePlan &plan,
                  const std::optional<AppendPlan> &append = std::nullopt,
                  const NormPrologue *norm = nullptr);

} // namespace blockc::nvptx

#endif // BLOCKC_LIB_CODEGEN_NVPTX_TILEGEMV_H
