//===- Passes.h - transformer dialect passes --------------------*- C++ -*-===//
//
// Declarations generated from Passes.td, and the pattern entry points that
// pipelines reuse without the pass.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_H
#define BLOCKC_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_H

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace blockc::transformer {

/// The composites that transformer-decompose rewrites (its `composites`
/// option).
enum class DecomposeComposites {
  /// Blocks, attention and ffn: everything down to primitives.
  all,
  /// Blocks only, into attention / ffn sub-layers, norms and residual adds.
  block,
};

#define GEN_PASS_DECL
#include "blockc/Dialect/Transformer/Transforms/Passes.h.inc"

/// Patterns that rewrite transformer.block into sub-layers, norms and
/// residual adds.
void populateDecomposeBlockPatterns(mlir::RewritePatternSet &patterns);

/// Patterns that rewrite transformer.attention and transformer.ffn into
/// primitive ops.
void populateDecomposeSubLayerPatterns(mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "blockc/Dialect/Transformer/Transforms/Passes.h.inc"

} // namespace blockc::transformer

#endif // BLOCKC_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_H
