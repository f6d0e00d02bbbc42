//===- TransformerOps.h - transformer dialect operations --------*- C++ -*-===//
//
// Declares the ops and enum attributes of the `transformer` dialect and the
// shape helpers that their verifiers and builders share.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_H
#define BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_H

#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "blockc/Dialect/Transformer/IR/TransformerEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "blockc/Dialect/Transformer/IR/TransformerAttrs.h.inc"

#define GET_OP_CLASSES
#include "blockc/Dialect/Transformer/IR/TransformerOps.h.inc"

namespace blockc::transformer {

/// The result type of `linear`: the input type with its last dimension
/// replaced by the weight's first (output) dimension. Fails when the input
/// has rank 0 or the weight is not a rank-2 tensor.
mlir::FailureOr<mlir::RankedTensorType>
inferLinearResultType(mlir::RankedTensorType input,
                      mlir::RankedTensorType weight);

/// The result type of `sdpa`: the query type with its last dimension replaced
/// by the value head dimension.
mlir::FailureOr<mlir::RankedTensorType>
inferSDPAResultType(mlir::RankedTensorType query, mlir::RankedTensorType value);

/// Formats a shape as "[2, ?, 64]" for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// The weight shapes a block or attention sub-layer with the given
/// configuration expects, as (operand name, shape) pairs in operand order.
struct AttentionShapes {
  llvm::SmallVector<int64_t, 2> wq, wk, wv, wo;
  llvm::SmallVector<int64_t, 1> bq, bk, bv, bo;
};
AttentionShapes getAttentionShapes(int64_t modelDim, int64_t numHeads,
                                   int64_t numKVHeads, int64_t headDim);

} // namespace blockc::transformer

#endif // BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_H
