//===- PreparedWeights.cpp - an entry's prepare function ------------------===//

#include "blockc/Analysis/PreparedWeights.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using blockc::codegen::CodegenDialect;

const blockc::PreparedWeight *
blockc::PrepareEntry::find(unsigned argIndex) const {
  for (const PreparedWeight &w : results)
    if (w.argIndex == argIndex)
      return &w;
  return nullptr;
}

FailureOr<std::optional<blockc::PrepareEntry>>
blockc::findPrepareEntry(ModuleOp module, StringRef entryName) {
  auto entry = module.lookupSymbol<func::FuncOp>(entryName);
  if (!entry)
    return std::optional<PrepareEntry>();
  func::FuncOp prepare;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto target =
        func->getAttrOfType<StringAttr>(CodegenDialect::kPrepareForAttrName);
    if (!target || target.getValue() != entryName)
      continue;
    if (prepare)
      return func.emitError()
             << "a second prepare function for @" << entryName
             << " (the first is @" << prepare.getSymName() << ")";
    prepare = func;
  }
  if (!prepare)
    return std::optional<PrepareEntry>();

  unsigned numEntryArgs = entry.getNumArguments();
  auto sourceArg = [&](DictionaryAttr attrs, StringRef what,
                       unsigned i) -> FailureOr<unsigned> {
    auto index =
        attrs ? attrs.getAs<IntegerAttr>(CodegenDialect::kSourceArgAttrName)
              : IntegerAttr();
    if (!index)
      return prepare.emitError() << what << " #" << i << " has no '"
                                 << CodegenDialect::kSourceArgAttrName << "'";
    int64_t v = index.getInt();
    if (v < 0 || v >= static_cast<int64_t>(numEntryArgs))
      return prepare.emitError()
             << what << " #" << i << ": " << CodegenDialect::kSourceArgAttrName
             << " = " << v << " is not an argument of @" << entryName
             << " (it has " << numEntryArgs << ")";
    return static_cast<unsigned>(v);
  };

  PrepareEntry result;
  result.funcName = prepare.getSymName().str();
  // Inputs, then one destination (marked prepared) per result.
  unsigned numDests = prepare.getNumResults();
  if (prepare.getNumArguments() < numDests)
    return prepare.emitError()
           << "has " << prepare.getNumArguments()
           << " arguments, fewer than its " << numDests << " destinations";
  unsigned numInputs = prepare.getNumArguments() - numDests;
  for (unsigned i = 0; i < prepare.getNumArguments(); ++i) {
    DictionaryAttr attrs = prepare.getArgAttrDict(i);
    FailureOr<unsigned> index = sourceArg(attrs, "argument", i);
    if (failed(index))
      return failure();
    bool isDest = attrs && attrs.get(CodegenDialect::kPreparedAttrName);
    if (isDest != (i >= numInputs))
      return prepare.emitError()
             << "argument #" << i << " should " << (isDest ? "not " : "")
             << "be a destination ('" << CodegenDialect::kPreparedAttrName
             << "'): the inputs come first, then one destination per result";
    if (isDest) {
      if (prepare.getArgumentTypes()[i] !=
          prepare.getResultTypes()[i - numInputs])
        return prepare.emitError() << "destination #" << i - numInputs
                                   << " does not have its result's type";
      continue;
    }
    result.inputs.push_back(*index);
  }
  for (unsigned i = 0; i < prepare.getNumResults(); ++i) {
    DictionaryAttr attrs = prepare.getResultAttrDict(i);
    FailureOr<unsigned> index = sourceArg(attrs, "result", i);
    if (failed(index))
      return failure();
    auto layout = attrs.getAs<codegen::PackedWeightAttr>(
        CodegenDialect::kPreparedAttrName);
    if (!layout)
      return prepare.emitError()
             << "result #" << i << " has no '"
             << CodegenDialect::kPreparedAttrName << "' layout";
    auto type = dyn_cast<ShapedType>(prepare.getResultTypes()[i]);
    Type argType = entry.getArgumentTypes()[*index];
    if (!type || !type.hasStaticShape() || type != argType)
      return prepare.emitError()
             << "result #" << i << " (" << prepare.getResultTypes()[i]
             << ") does not match argument #" << *index << " of @" << entryName
             << " (" << argType << ")";
    if (result.find(*index))
      return prepare.emitError() << "two results replace argument #" << *index
                                 << " of @" << entryName;
    PreparedWeight w;
    w.argIndex = *index;
    w.shape.assign(type.getShape().begin(), type.getShape().end());
    w.rows = layout.getRows();
    w.cols = layout.getCols();
    w.panelK = layout.getPanelK();
    w.panelN = layout.getPanelN();
    result.results.push_back(std::move(w));
  }
  return std::optional<PrepareEntry>(std::move(result));
}
