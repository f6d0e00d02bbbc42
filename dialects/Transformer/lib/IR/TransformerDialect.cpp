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

LogicalResult TransformerDialect::verifyRegionArgAttribute(
    Operation *op, unsigned regionIndex, unsigned argIndex,
    NamedAttribute attr) {
  if (attr.getName() == kWeightNameAttr) {
    auto name = dyn_cast<StringAttr>(attr.getValue());
    if (!name || name.getValue().empty())
      return op->emitError() << "'" << kWeightNameAttr << "' on argument #"
                             << argIndex << " must be a non-empty string";
    return success();
  }
  if (attr.getName() == kWeightTransposeAttr) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << kWeightTransposeAttr << "' on argument #"
                             << argIndex << " must be a unit attribute";
    return success();
  }
  if (attr.getName() == kWeightSliceAttr) {
    auto slice = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!slice || slice.size() != 3 || slice[0] < 0 || slice[1] < 0 ||
        slice[2] <= slice[1])
      return op->emitError()
             << "'" << kWeightSliceAttr << "' on argument #" << argIndex
             << " must be array<i64: axis, begin, end> with axis >= 0 and "
                "0 <= begin < end";
    return success();
  }
  if (attr.getName() == kKVPositionAttr) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << kKVPositionAttr << "' on argument #"
                             << argIndex << " must be a unit attribute";
    return success();
  }
  if (attr.getName() == kKVCacheAttr) {
    auto kind = dyn_cast<StringAttr>(attr.getValue());
    if (!kind || (kind.getValue() != "k" && kind.getValue() != "v"))
      return op->emitError() << "'" << kKVCacheAttr << "' on argument #"
                             << argIndex << " must be \"k\" or \"v\"";
    return success();
  }
  if (attr.getName() == kLayerAttr) {
    auto layer = dyn_cast<IntegerAttr>(attr.getValue());
    if (!layer || layer.getValue().isNegative())
      return op->emitError() << "'" << kLayerAttr << "' on argument #"
                             << argIndex << " must be a non-negative integer";
    return success();
  }
  if (attr.getName() == kKVLayoutAttr) {
    auto layout = dyn_cast<StringAttr>(attr.getValue());
    if (!layout || (layout.getValue() != "bhsd" && layout.getValue() != "bshd"))
      return op->emitError() << "'" << kKVLayoutAttr << "' on argument #"
                             << argIndex << " must be \"bhsd\" or \"bshd\"";
    return success();
  }
  return op->emitError() << "unknown transformer argument attribute '"
                         << attr.getName().getValue() << "'";
}

LogicalResult
TransformerDialect::verifyOperationAttribute(Operation *op,
                                             NamedAttribute attr) {
  if (attr.getName() == kLayerAttr) {
    auto layer = dyn_cast<IntegerAttr>(attr.getValue());
    if (!layer || layer.getValue().isNegative())
      return op->emitError()
             << "'" << kLayerAttr << "' must be a non-negative integer";
    return success();
  }
  return op->emitError() << "unknown transformer attribute '"
                         << attr.getName().getValue() << "'";
}
