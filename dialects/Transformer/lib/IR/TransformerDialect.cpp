//===- TransformerDialect.cpp - transformer dialect -----------------------===//
//
// Registers the ops and attributes of the `transformer` dialect.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace blockc::transformer;

#include "blockc/Dialect/Transformer/IR/TransformerOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "blockc/Dialect/Transformer/IR/TransformerAttrs.cpp.inc"

void TransformerDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "blockc/Dialect/Transformer/IR/TransformerOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "blockc/Dialect/Transformer/IR/TransformerAttrs.cpp.inc"
      >();
}
