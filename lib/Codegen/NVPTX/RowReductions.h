//===- RowReductions.h - a warp per row for row reductions ------*- C++ -*-===//
//
// The row reductions over the innermost dimension (a norm's statistics),
// the chains of them that read earlier ones' results at their row, and the
// elementwise op that then applies the results (a norm's apply): what
// blockc-gpu-tile-reductions builds its kernels from, and what the
// weight-streaming kernel (TileGemv.h) evaluates in its prologue. The warp
// code is shared, so that both compute a row's statistics the same way.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_CODEGEN_NVPTX_ROWREDUCTIONS_H
#define BLOCKC_LIB_CODEGEN_NVPTX_ROWREDUCTIONS_H

#include "EpilogueFusion.h"

#include "blockc/Codegen/NVPTX/KernelBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace blockc::nvptx {

/// The value `x` with `combiner(identity, x) == x` for the combiners of
/// matchRowReduction, or null.
mlir::TypedAttr identityOf(mlir::Operation *combiner, mlir::FloatType type);

/// The combiner of `op` when it is a row reduction: f32, every loop
/// parallel but the last (the reduction), the output read at the parallel
/// indices in order, point reads of the inputs, and a body without memory
/// effects that yields `combiner(out, v)`, `out` used only there, for an
/// associative and commutative combiner with an identity. Null otherwise.
mlir::Operation *matchRowReduction(mlir::linalg::GenericOp op);

/// Whether `op` (a row reduction, or the all-parallel generic that applies
/// the results) can follow the row reductions `chain` (in block order) in
/// their kernel, built where `op` is: it reads the result of one of them,
/// every such read at the row (its loop indices but the last, in order:
/// linalg's shapes then make the rows the same), has as many loops, and
/// neither writes a buffer they use nor is separated from them by an op
/// that may touch their buffers (they move down to `op`).
bool canFollowRowChain(llvm::ArrayRef<mlir::linalg::GenericOp> chain,
                       mlir::linalg::GenericOp op);

/// Whether `op` is an elementwise op that the kernel of `chain` computes
/// after the results (a norm's apply): all-parallel on buffers, one output
/// written at the loop indices in order and not read, point reads of
/// inputs none of which is the output's buffer, a body without memory
/// effects, and canFollowRowChain.
bool isRowChainApply(llvm::ArrayRef<mlir::linalg::GenericOp> chain,
                     mlir::linalg::GenericOp op);

/// The 16-byte path of a generic's accesses along its innermost loop.
struct VectorAccess {
  int64_t width = 0;   // elements per lane and step; 0: no vector path
  mlir::Value ok = {}; // whether it may run (host, uniform over the grid)
  llvm::SmallVector<mlir::Value> views = {}; // per operand: a view, or null
};

/// One row reduction of a chain: the op, its combiner and what its output
/// holds before it.
struct RowStage {
  mlir::linalg::GenericOp op;
  mlir::Operation *combiner;
  std::optional<InitValue> init; // what the output holds
  /// Set while a kernel is built.
  mlir::Value length = {}; // of the reduced loop (host)
  VectorAccess vec = {};   // the 16-byte path of the inputs
  mlir::Value result = {}; // the row's final value (in the kernel)
};

/// Emits a warp's code for the rows of a chain of row reductions (and of
/// the op that applies their results): each lane folds its part of a row,
/// a butterfly of xor shuffles leaves the row's value in every lane.
struct RowChainBuilder : KernelBuilder {
  llvm::SmallVector<RowStage> stages;
  /// The elementwise op over the same rows that reads the results, or
  /// null.
  mlir::linalg::GenericOp apply = {};

  /// The indices of `operand` of `op` at loop indices `at` (its map reads
  /// loop indices and constants only).
  llvm::SmallVector<mlir::Value> indicesAt(mlir::linalg::GenericOp op,
                                           mlir::OpOperand *operand,
                                           llvm::ArrayRef<mlir::Value> at);

  /// The `w` elements at loop indices `at` (the innermost one the first)
  /// of each input of `op` that `access` reads through a 16-byte view: one
  /// vector load per input.
  llvm::DenseMap<mlir::OpOperand *, llvm::SmallVector<mlir::Value>>
  loadElements(mlir::linalg::GenericOp op, const VectorAccess &access,
               llvm::ArrayRef<mlir::Value> at, int64_t w);

  /// The stage's combiner applied to `acc` (in the place of the output) and
  /// `other`.
  mlir::Value combine(RowStage &s, mlir::Value acc, mlir::Value other);

  /// The value of an earlier stage's result (of any stage when `s` is
  /// null: the apply) when `operand` reads it (at the row: the match
  /// checked the map), else null.
  mlir::Value earlierResult(RowStage *s, mlir::OpOperand &operand);

  /// Prepares the 16-byte path of `operands` of `op` along its innermost
  /// loop (of `length` elements) on the host: every one of them that
  /// depends on that loop reads it as its innermost index (and only
  /// there), from a bf16, f16 or f32 buffer with a strided layout. The
  /// path runs when, at run time (uniform over the grid), the length is a
  /// multiple of `width` elements and each such operand has a unit
  /// innermost stride, an offset and other strides that are multiples of
  /// `width` and a 16-byte aligned base: then every vector of a row starts
  /// on 16 bytes. `width` is 8 when one of them is 16-bit (8 f32 elements
  /// are two 16-byte accesses), else 4.
  VectorAccess prepareVectorPath(mlir::linalg::GenericOp op,
                                 llvm::ArrayRef<mlir::OpOperand *> operands,
                                 mlir::Value length);

  /// Sets each stage's `length` and `vec` (on the host).
  void prepareStages();

  /// Lane `lane`'s fold of elements lane, lane + 32, ... of the row at `iv`
  /// of `s`, from the combiner's identity.
  mlir::Value scalarPartial(RowStage &s, llvm::ArrayRef<mlir::Value> iv,
                            mlir::Value lane, mlir::Value identity);

  /// The same fold by vectors: lane `lane` reads elements
  /// [w * lane, w * lane + w), then w * 32 further on, ... (one 16-byte
  /// load per input and vector, consecutive lanes on consecutive vectors),
  /// evaluates the body on each element from the identity and combines the
  /// `w` values pairwise before folding them into its partial value. The
  /// inputs read at the row only are loaded once.
  mlir::Value vectorPartial(RowStage &s, llvm::ArrayRef<mlir::Value> iv,
                            mlir::Value lane, mlir::Value identity);

  /// The identity of `s`'s combiner as a constant.
  mlir::Value identity(RowStage &s);

  /// The whole warp's value of `s` for the row whose partial values the
  /// lanes hold: the butterfly of xor shuffles (every lane ends with it).
  mlir::Value warpTotal(RowStage &s, mlir::Value partial);

  /// What the output of `s` holds at `outAt` before it: its init (a scalar
  /// or an evaluated generic), else a load.
  mlir::Value initialValue(RowStage &s, llvm::ArrayRef<mlir::Value> outAt);
};

} // namespace blockc::nvptx

#endif // BLOCKC_LIB_CODEGEN_NVPTX_ROWREDUCTIONS_H
