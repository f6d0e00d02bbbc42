//===- DeriveEntry.h - shared part of derived cached entries --*- C++ -*-===//
//
// transformer-derive-decode and transformer-derive-paged-decode both clone
// the model function, decompose the clone into primitives and then route
// its attentions through caches; the clone, the decomposition, the checks
// and the removal of the entry (keep-entry=false) are written once here.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_TRANSFORMER_LIB_TRANSFORMS_DERIVEENTRY_H
#define BLOCKC_DIALECT_TRANSFORMER_LIB_TRANSFORMS_DERIVEENTRY_H

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace blockc::transformer::detail {

/// A decomposed clone of the model function and the ops a derived entry
/// rewrites, in program order.
struct DerivedEntry {
  mlir::func::FuncOp entry;   // the model function, unchanged
  mlir::func::FuncOp derived; // the clone, public, right after it
  llvm::SmallVector<SDPAOp> attentions;
  llvm::SmallVector<RoPEOp> ropes;
  llvm::SmallVector<EmbeddingOp> embeddings;
};

/// Clones `@entryName` of `module` as `@<entryName><suffix>`, decomposes the
/// clone (transformer-decompose's block and sub-layer patterns) and
/// collects its attentions, ropes and embeddings. Fails, with an error
/// prefixed by `pass` and no clone left behind, when the entry is missing,
/// the name is taken, the decomposition does not converge, there is no
/// attention or an attention is not causal (`what`: "a decode entry").
mlir::FailureOr<DerivedEntry> cloneAndDecompose(mlir::ModuleOp module,
                                                llvm::StringRef entryName,
                                                llvm::StringRef suffix,
                                                llvm::StringRef pass,
                                                llvm::StringRef what);

/// keep-entry=false: erases the model function, unless it is still
/// referenced (an error prefixed by `pass`).
mlir::LogicalResult removeEntry(mlir::ModuleOp module, mlir::func::FuncOp entry,
                                llvm::StringRef pass);

} // namespace blockc::transformer::detail

#endif // BLOCKC_DIALECT_TRANSFORMER_LIB_TRANSFORMS_DERIVEENTRY_H
