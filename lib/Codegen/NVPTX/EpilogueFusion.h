//===- EpilogueFusion.h - tensor-core kernel epilogues ----------*- C++ -*-===//
//
// The analysis blockc-gpu-tile-matmul runs on buffers before it builds a
// tensor-core kernel: where the contraction's output starts (its init,
// evaluated in the kernel instead of by a fill or bias kernel before it),
// which elementwise consumer its epilogue computes (the bf16 rounding, the
// residual add, the activation), and which second contraction of the same
// input it pairs with (gate and up of a gated FFN, whose consumer reads
// both).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_CODEGEN_NVPTX_EPILOGUEFUSION_H
#define BLOCKC_LIB_CODEGEN_NVPTX_EPILOGUEFUSION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace blockc::nvptx {

/// The value a contraction's output buffer holds before the contraction,
/// as something the kernel can compute per element: a fill's scalar or an
/// all-parallel generic (a bias broadcast) over read-only inputs.
struct InitValue {
  mlir::Value scalar;              // a linalg.fill's value, or
  mlir::linalg::GenericOp generic; // a generic that wrote the buffer
  /// The op that wrote the contraction's own buffer (a fill, a copy, the
  /// generic): dead once the kernel no longer reads the buffer.
  mlir::Operation *writer = nullptr;
};

/// A rotary position embedding (Hugging Face's rotate-half form) that reads
/// the 16-bit result of a kernel's epilogue: the only reader of that result
/// (the consumer's output, `[M..., N]`) is `rope`, an all-parallel generic
/// over its view as `[M..., H, D]` (an expand_shape of the last dimension)
/// that reads it at `d` (`x`) and at `(d + D / 2) mod D` (`partner`) and
/// its other inputs (the cos/sin table) at loop indices only, from
/// read-only function arguments or globals, with a pure body, into a
/// function-local 16-bit `[M..., H, D]` buffer of identity layout.
/// A kernel whose output tiles cover whole heads applies it to its tile.
struct RotationPlan {
  mlir::linalg::GenericOp rope;
  mlir::OpOperand *x = nullptr, *partner = nullptr;
  int64_t headDim = 0;
  /// The buffer the rotated result goes to (`rope`'s output; once the
  /// kernel is planned, an allocation before the kernel in its place).
  mlir::Value output;
};

/// What the kernel of `contractions` (one, or a pair sharing their M-side
/// input) writes: each `contractions[i]`'s result is its init (evaluated,
/// or read from its buffer when `inits[i]` is empty) plus the f32 sum; with
/// a `consumer`, that generic's value at the same element is written to
/// the consumer's output instead, and the contractions' buffers are not
/// (unless the consumer's output is one of them: an in-place consumer).
struct EpiloguePlan {
  llvm::SmallVector<mlir::linalg::LinalgOp, 2> contractions;
  llvm::SmallVector<std::optional<InitValue>, 2> inits;
  mlir::linalg::GenericOp consumer;
  /// With a consumer (one contraction): a RoPE of its output that the
  /// kernel applies too, writing `rotation->output` (the sm_90a kernel's
  /// TMA-store epilogue, `rope_head_dim` on its tiles).
  std::optional<RotationPlan> rotation;
  /// The kernel's launch, once built.
  mlir::Operation *kernel = nullptr;
};

/// The init of the buffer `buffer` as `before` (an op of the same block)
/// reads it, when it is a function-local allocation whose last writer is a
/// fill, a copy of such a buffer or an all-parallel generic over function
/// arguments that nothing writes, and nothing else uses it in ways this
/// cannot follow.
std::optional<InitValue> resolveInit(mlir::Value buffer,
                                     mlir::Operation *before);

/// The plan for the tensor-core contraction `op`: its init, and with
/// `fuse`, its consumer and pair partner when they are legal to fuse
/// (`canPair(first, second)` says whether the kernel can run the two
/// together). The contractions of a pair are in block order.
EpiloguePlan planEpilogue(
    mlir::linalg::LinalgOp op, bool fuse,
    llvm::function_ref<bool(mlir::linalg::LinalgOp, mlir::linalg::LinalgOp)>
        canPair);

/// The RoPE that reads the result of `plan`'s kernel (its consumer's
/// output) when there is one of the form RotationPlan describes, whose
/// values and output are available where the consumer is (the kernel's
/// place), and between the consumer and which nothing else touches that
/// result.
std::optional<RotationPlan> planRotation(const EpiloguePlan &plan);

/// Moves the output of `rotation` to an allocation at `b` (before the
/// kernel, which writes it), in place of the allocation before the RoPE.
void hoistRotationOutput(mlir::OpBuilder &b, mlir::Location loc,
                         const EpiloguePlan &plan, RotationPlan &rotation);

/// Erases `rotation`'s RoPE, which the kernel now computes, and the view
/// of the unrotated result it read when nothing else reads that view.
void eraseRotation(const EpiloguePlan &plan, const RotationPlan &rotation);

/// A pointwise generic that writes the M-side input buffer of a TF32
/// contraction (an f32 block's normalisation: x * r[row] * gain[k]), which
/// the kernel evaluates on each A fragment element in registers instead of
/// reading the buffer: the kernel copies `streamed` (the producer's input
/// of the buffer's shape) in its place, and reads `rowInputs` (indexed by
/// M dimensions only, e.g. the row statistics) once per row and `kInputs`
/// (by the K dimension only, e.g. the gain) once per k step.
struct ProloguePlan {
  mlir::linalg::GenericOp producer;
  mlir::OpOperand *streamed = nullptr;
  llvm::SmallVector<mlir::OpOperand *> rowInputs, kInputs;
};

/// The prologue of contraction `op` whose M-side input is `input`: the last
/// writer of that buffer (a function-local allocation) is a pointwise
/// generic before `op` in the same block, with one input of the buffer's
/// type read at the identity map (identity layout: it is copied by cp.async
/// in the buffer's place) and its other inputs indexed by the buffer's
/// leading (M) dimensions only or by its last (K) dimension only; no op
/// between the producer and `op` writes the buffer or those inputs. None
/// otherwise.
std::optional<ProloguePlan> planPrologue(mlir::linalg::LinalgOp op,
                                         mlir::OpOperand &input);

/// Whether the kernel of `plan` writes (into a contraction's buffer or the
/// consumer's output) a buffer that `prologue`'s producer reads: then the
/// kernel cannot read it in the producer's place.
bool writesPrologueInputs(const EpiloguePlan &plan,
                          const ProloguePlan &prologue);

/// Erases `producer` when nothing reads its output any more: no use of the
/// buffer after it before a full overwrite (deallocations aside).
void eraseIfUnread(mlir::linalg::GenericOp producer);

/// Whether `map` reads at loop indices and constants only (the maps
/// evaluateGenericAt can load through).
bool isPointMap(mlir::AffineMap map);

/// Whether every op of `generic`'s body is free of memory effects (so that
/// it can be cloned into a kernel).
bool hasPureBody(mlir::linalg::GenericOp generic);

/// Loads `generic`'s operand `operand` at loop indices `iv` through its
/// indexing map (loop indices and constants only).
mlir::Value loadOperandAt(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::linalg::GenericOp generic,
                          mlir::OpOperand &operand,
                          llvm::ArrayRef<mlir::Value> iv);

/// Emits at `b` the value `generic` yields (its first) at loop indices
/// `iv`: its body cloned, `linalg.index` replaced by `iv`, each used block
/// argument given by `given(operand)` or, when that returns null, loaded
/// from the operand at its indexing map (loop indices and constants only).
mlir::Value
evaluateGenericAt(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::linalg::GenericOp generic,
                  llvm::ArrayRef<mlir::Value> iv,
                  llvm::function_ref<mlir::Value(mlir::OpOperand &)> given);

/// Emits at `b` the results of `plan`'s kernel at the contractions' loop
/// indices `iv` (batch, M and N set; the output columns of a pair), given
/// the f32 sums (one per contraction of `plan`): each result is its init
/// (the plan's evaluated init, or what its buffer holds) plus its sum; with
/// a consumer, the consumer's value is stored to the consumer's output
/// instead, else the result to `op`'s output (`op` is one of the plan's
/// contractions, which share their indexing maps).
/// With `loaded` (from loadEpilogueInputs at the same `iv`), the values it
/// would load from memory are those instead.
void writeEpilogueResults(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::linalg::LinalgOp op, const EpiloguePlan &plan,
                          llvm::ArrayRef<mlir::Value> iv,
                          llvm::ArrayRef<mlir::Value> sums,
                          llvm::ArrayRef<mlir::Value> loaded = {});

/// The value writeEpilogueResults stores, without the store (a kernel that
/// stages its results in shared memory stores it there).
mlir::Value computeEpilogueResult(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::linalg::LinalgOp op,
                                  const EpiloguePlan &plan,
                                  llvm::ArrayRef<mlir::Value> iv,
                                  llvm::ArrayRef<mlir::Value> sums,
                                  llvm::ArrayRef<mlir::Value> loaded = {});

/// The buffer writeEpilogueResults stores to: the consumer's output, or
/// else `op`'s (at `op`'s output indices).
mlir::Value epilogueOutput(mlir::linalg::LinalgOp op, const EpiloguePlan &plan);

/// Loads, at loop indices `iv`, every value that writeEpilogueResults reads
/// from memory for `plan` (the contractions' inits where they are neither
/// a scalar nor evaluated, the evaluated inits' and the consumer's other
/// operands), in the order it reads them. A kernel loads several elements'
/// inputs this way before it stores any of them, so that the loads are in
/// flight together instead of one at a time behind each store.
llvm::SmallVector<mlir::Value>
loadEpilogueInputs(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::linalg::LinalgOp op, const EpiloguePlan &plan,
                   llvm::ArrayRef<mlir::Value> iv);

/// The input of the contraction `op` indexed by an M dimension, then the
/// one indexed by N (the weight of a projection).
std::pair<mlir::OpOperand *, mlir::OpOperand *>
inputsMN(mlir::linalg::LinalgOp op,
         const mlir::linalg::ContractionDimensions &dims);

/// Erases what `plan`'s kernel, built for `op`, now computes: its consumer,
/// its contractions and `op`; the contractions are added to `done`.
void eraseComputedOps(EpiloguePlan &plan, mlir::linalg::LinalgOp op,
                      llvm::DenseSet<mlir::Operation *> &done);

/// Whether `use` only reads its buffer (sizes, loads, a copy's source, a
/// linalg op's input).
bool isReadOnlyUse(mlir::OpOperand &use);

/// Whether `use` overwrites every element of its buffer without reading
/// it: a fill, a copy into it, or a pointwise generic whose output
/// argument is unused.
bool isFullWrite(mlir::OpOperand &use);

/// Erases the writes nobody reads any more once the kernels of `plans` are
/// built (and their contractions and consumers erased): each init writer a
/// kernel evaluates itself when no other op reads the buffer before the
/// kernel, then every allocation of `body` that is only written and freed.
void eraseDeadWrites(mlir::Block &body, llvm::ArrayRef<EpiloguePlan> plans);

} // namespace blockc::nvptx

#endif // BLOCKC_LIB_CODEGEN_NVPTX_EPILOGUEFUSION_H
