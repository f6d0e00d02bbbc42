//===- TransformerDialect.cpp - transformer dialect -----------------------===//
//
// Registers the ops and attributes of the `transformer` dialect.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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

Attribute WeightQuantAttr::parse(AsmParser &parser, Type) {
  FailureOr<WeightQuantType> type;
  int64_t groupSize = 0;
  ActivationQuantType activations = ActivationQuantType::none;
  if (parser.parseLess() ||
      failed(type = FieldParser<WeightQuantType>::parse(parser)))
    return {};
  bool seenGroup = false, seenActivations = false;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "group_size" && !seenGroup && !seenActivations) {
      seenGroup = true;
      if (parser.parseInteger(groupSize))
        return {};
    } else if (key == "activations" && !seenActivations) {
      seenActivations = true;
      FailureOr<ActivationQuantType> a =
          FieldParser<ActivationQuantType>::parse(parser);
      if (failed(a))
        return {};
      activations = *a;
    } else {
      parser.emitError(keyLoc)
          << "expected 'group_size' or 'activations' (in that order, each "
             "once), got '"
          << key << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), *type, groupSize, activations);
}

void WeightQuantAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyWeightQuantType(getType());
  if (getGroupSize() != 0)
    printer << ", group_size = " << getGroupSize();
  if (getActivations() != ActivationQuantType::none)
    printer << ", activations = "
            << stringifyActivationQuantType(getActivations());
  printer << ">";
}

LogicalResult
WeightQuantAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        WeightQuantType type, int64_t groupSize,
                        ActivationQuantType) {
  if (type == WeightQuantType::int8 && groupSize != 0)
    return emitError() << "int8 weights are quantised per output row: "
                          "group_size is for int4";
  if (type == WeightQuantType::int4 && groupSize != 32 && groupSize != 64 &&
      groupSize != 128)
    return emitError() << "int4 weights need group_size = 32, 64 or 128, got "
                       << groupSize;
  return success();
}

LogicalResult
ShardSliceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t axis, ArrayAttr ranks) {
  if (axis < 0)
    return emitError() << "axis must be >= 0, got " << axis;
  if (ranks.size() < 2)
    return emitError() << "needs the ranges of at least 2 ranks, got "
                       << ranks.size();
  int64_t local = -1;
  for (auto [r, attr] : llvm::enumerate(ranks)) {
    auto ranges = dyn_cast<DenseI64ArrayAttr>(attr);
    if (!ranges || ranges.size() % 2 != 0)
      return emitError() << "rank " << r
                         << " needs an array<i64> of [begin, end) pairs";
    int64_t size = 0;
    for (int64_t i = 0; i < ranges.size(); i += 2) {
      if (ranges[i] < 0 || ranges[i + 1] <= ranges[i])
        return emitError() << "rank " << r << " has the range [" << ranges[i]
                           << ", " << ranges[i + 1]
                           << "): needs 0 <= begin < end";
      size += ranges[i + 1] - ranges[i];
    }
    if (size == 0)
      continue;
    if (local >= 0 && size != local)
      return emitError() << "rank " << r << " reads " << size
                         << " elements, another rank " << local
                         << " (every reading rank must read as many)";
    local = size;
  }
  if (local < 0)
    return emitError() << "no rank reads anything";
  return success();
}

ArrayRef<int64_t> ShardSliceAttr::getRanges(unsigned rank) const {
  return cast<DenseI64ArrayAttr>(getRanks()[rank]).asArrayRef();
}

int64_t ShardSliceAttr::getLocalSize() const {
  for (unsigned r = 0; r < getRanks().size(); ++r) {
    ArrayRef<int64_t> ranges = getRanges(r);
    int64_t size = 0;
    for (size_t i = 0; i + 1 < ranges.size(); i += 2)
      size += ranges[i + 1] - ranges[i];
    if (size > 0)
      return size;
  }
  return 0;
}

/// The KV-cache marks: the value's kind is checked by the caller; here what
/// the attribute kinds cannot say. A cache is a rank-4 tensor or memref
/// [B, L_max, H_kv, D], and a layout only makes sense on a cache.
static LogicalResult verifyCacheArgument(Operation *op, unsigned argIndex,
                                         StringRef name) {
  // Argument attributes are verified through here for functions only
  // (function_interface_impl::verifyTrait).
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return success();
  auto type = dyn_cast<ShapedType>(func.getArgumentTypes()[argIndex]);
  if (!type || !type.hasRank() || type.getRank() != 4)
    return op->emitError() << "'" << name << "' on argument #" << argIndex
                           << " needs a rank-4 tensor or memref [B, L_max, "
                              "H_kv, D], not "
                           << func.getArgumentTypes()[argIndex];
  if (name == TransformerDialect::kKVLayoutAttr &&
      !func.getArgAttr(argIndex, TransformerDialect::kKVCacheAttr))
    return op->emitError() << "'" << name << "' on argument #" << argIndex
                           << " needs '" << TransformerDialect::kKVCacheAttr
                           << "' on the same argument";
  return success();
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
  if (attr.getName() == kShardSliceAttr) {
    if (!isa<ShardSliceAttr>(attr.getValue()))
      return op->emitError()
             << "'" << kShardSliceAttr << "' on argument #" << argIndex
             << " must be a #transformer.shard_slice";
    return success();
  }
  if (attr.getName() == kKVPositionAttr) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << kKVPositionAttr << "' on argument #"
                             << argIndex << " must be a unit attribute";
    return success();
  }
  if (attr.getName() == kKVCacheAttr) {
    if (!isa<KVCacheKindAttr>(attr.getValue()))
      return op->emitError() << "'" << kKVCacheAttr << "' on argument #"
                             << argIndex << " must be a #transformer.kv_cache";
    return verifyCacheArgument(op, argIndex, kKVCacheAttr);
  }
  if (attr.getName() == kLayerAttr) {
    auto layer = dyn_cast<IntegerAttr>(attr.getValue());
    if (!layer || layer.getValue().isNegative())
      return op->emitError() << "'" << kLayerAttr << "' on argument #"
                             << argIndex << " must be a non-negative integer";
    return success();
  }
  if (attr.getName() == kKVLayoutAttr) {
    if (!isa<KVLayoutAttr>(attr.getValue()))
      return op->emitError() << "'" << kKVLayoutAttr << "' on argument #"
                             << argIndex << " must be a #transformer.kv_layout";
    return verifyCacheArgument(op, argIndex, kKVLayoutAttr);
  }
  if (attr.getName() == kSeqOffsetsAttr ||
      attr.getName() == kSeqPositionsAttr ||
      attr.getName() == kBlockTableAttr) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << attr.getName().getValue() << "' on argument #"
             << argIndex << " must be a unit attribute";
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!func)
      return success();
    int64_t rank = attr.getName() == kBlockTableAttr ? 2 : 1;
    auto type = dyn_cast<ShapedType>(func.getArgumentTypes()[argIndex]);
    if (!type || !type.hasRank() || type.getRank() != rank ||
        !type.getElementType().isInteger(32))
      return op->emitError()
             << "'" << attr.getName().getValue() << "' on argument #"
             << argIndex << " needs a rank-" << rank << " i32 tensor, not "
             << func.getArgumentTypes()[argIndex];
    return success();
  }
  if (attr.getName() == kPageSizeAttr) {
    auto size = dyn_cast<IntegerAttr>(attr.getValue());
    if (!size || size.getValue().getSExtValue() < 1)
      return op->emitError() << "'" << kPageSizeAttr << "' on argument #"
                             << argIndex << " must be a positive integer";
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (func && !func.getArgAttr(argIndex, kKVCacheAttr))
      return op->emitError()
             << "'" << kPageSizeAttr << "' on argument #" << argIndex
             << " needs '" << kKVCacheAttr << "' on the same argument";
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
  if (attr.getName() == kTensorParallelAttr) {
    auto ranks = dyn_cast<IntegerAttr>(attr.getValue());
    if (!ranks || !isa<ModuleOp>(op) || ranks.getInt() < 2)
      return op->emitError() << "'" << kTensorParallelAttr
                             << "' must be an integer >= 2 on a module";
    return success();
  }
  if (attr.getName() == kAllReduceOverAttr) {
    if (!isa<FlatSymbolRefAttr>(attr.getValue()) || !isa<BlockOp>(op))
      return op->emitError() << "'" << kAllReduceOverAttr
                             << "' must be a flat symbol reference (a "
                                "shard.grid) on a transformer.block";
    return success();
  }
  return op->emitError() << "unknown transformer attribute '"
                         << attr.getName().getValue() << "'";
}
