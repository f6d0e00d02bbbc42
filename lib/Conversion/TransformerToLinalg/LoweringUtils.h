//===- LoweringUtils.h - TransformerToLinalg private helpers ----*- C++ -*-===//
//
// Helpers shared by the per-op-family lowerings of
// --convert-transformer-to-linalg (builders of linalg.generic ops on tensors
// and their affine maps), and the entry point of each family's patterns.
// Private to lib/Conversion/TransformerToLinalg.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_CONVERSION_TRANSFORMERTOLINALG_LOWERINGUTILS_H
#define BLOCKC_LIB_CONVERSION_TRANSFORMERTOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc::detail {

//===----------------------------------------------------------------------===//
// Patterns per op family
//===----------------------------------------------------------------------===//

/// rms_norm and layer_norm (Norms.cpp).
void populateNormLoweringPatterns(mlir::RewritePatternSet &patterns);
/// linear (Linear.cpp).
void populateLinearLoweringPatterns(mlir::RewritePatternSet &patterns);
/// rope and sdpa (Attention.cpp).
void populateAttentionLoweringPatterns(mlir::RewritePatternSet &patterns);
/// activation and residual_add (Elementwise.cpp).
void populateElementwiseLoweringPatterns(mlir::RewritePatternSet &patterns);
/// embedding (Embedding.cpp).
void populateEmbeddingLoweringPatterns(mlir::RewritePatternSet &patterns);
/// kv_cache_append (KVCache.cpp).
void populateKVCacheLoweringPatterns(mlir::RewritePatternSet &patterns);
/// token_positions and paged_kv_write (Paged.cpp).
void populatePagedLoweringPatterns(mlir::RewritePatternSet &patterns);

//===----------------------------------------------------------------------===//
// Builders (LoweringUtils.cpp)
//===----------------------------------------------------------------------===//

/// linalg.yield of `values` / `value`.
void yield(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange values);
void yield(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);

/// Scalar constants.
mlir::Value f32Const(mlir::OpBuilder &b, mlir::Location loc, double v);
mlir::Value f64Const(mlir::OpBuilder &b, mlir::Location loc, double v);
mlir::Value indexConst(mlir::OpBuilder &b, mlir::Location loc, int64_t v);

/// An empty tensor of the given mixed sizes.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        llvm::ArrayRef<mlir::OpFoldResult> sizes,
                        mlir::Type elementType);

/// A tensor of the given sizes filled with `value`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         llvm::ArrayRef<mlir::OpFoldResult> sizes,
                         mlir::Value value);

/// The identity map on `rank` loops.
mlir::AffineMap identity(mlir::MLIRContext *ctx, unsigned rank);

/// The map (d0, ..., d_{n-1}) -> (d_i for i in `dims`).
mlir::AffineMap projection(mlir::MLIRContext *ctx, unsigned numLoops,
                           llvm::ArrayRef<unsigned> dims);

/// The map dropping the last loop: (d0..d_{n-1}) -> (d0..d_{n-2}).
mlir::AffineMap dropLast(mlir::MLIRContext *ctx, unsigned numLoops);

/// `parallel` parallel iterators followed by `reduction` reduction ones.
llvm::SmallVector<mlir::utils::IteratorType> iterators(unsigned parallel,
                                                       unsigned reduction);

/// 1/n for the last dimension of `v` as an f32 value (static or dynamic).
mlir::Value reciprocalOfLastDim(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value v);

/// Sum over the last dimension of `x` of `term(x)`: returns a tensor of the
/// leading dimensions, from 0. `extraInputs` are indexed by the row map.
/// `combine` (acc, term), when given, replaces the sum (e.g. a maximum).
mlir::Value
rowReduce(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
          mlir::ValueRange extraInputs,
          llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                         mlir::ValueRange)>
              term,
          llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                         mlir::Value, mlir::Value)>
              combine = nullptr);

/// A contraction `acc += a * b` over `maps` (inputs a, b, then the init).
mlir::Value
mulAddContraction(mlir::OpBuilder &b, mlir::Location loc, mlir::Type resultType,
                  mlir::Value lhs, mlir::Value rhs, mlir::Value init,
                  llvm::ArrayRef<mlir::AffineMap> maps,
                  llvm::ArrayRef<mlir::utils::IteratorType> iteratorTypes);

/// An all-parallel generic over the iteration space of `result` (identity
/// output map) whose inputs are indexed by `inputMaps`.
mlir::Value
elementwise(mlir::OpBuilder &b, mlir::Location loc, mlir::Value sizeSource,
            mlir::RankedTensorType resultType, mlir::ValueRange inputs,
            llvm::ArrayRef<mlir::AffineMap> inputMaps,
            llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                           mlir::ValueRange)>
                body);

} // namespace blockc::detail

#endif // BLOCKC_LIB_CONVERSION_TRANSFORMERTOLINALG_LOWERINGUTILS_H
