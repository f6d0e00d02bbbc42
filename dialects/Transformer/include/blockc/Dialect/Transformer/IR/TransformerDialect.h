//===- TransformerDialect.h - transformer dialect ---------------*- C++ -*-===//
//
// Declares the `transformer` dialect, which expresses transformer blocks and
// their primitive operations.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_H
#define BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_H

#include "mlir/IR/Dialect.h"

#include "blockc/Dialect/Transformer/IR/TransformerOpsDialect.h.inc"

#endif // BLOCKC_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_H
