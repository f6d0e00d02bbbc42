//===- PreparedWeights.cpp - an entry's prepare function ------------------===//

#include "blockc/Analysis/PreparedWeights.h"
#include "blockc/Analysis/ModelSignature.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using blockc::codegen::CodegenDialect;

std::string blockc::describePreparedLayout(const PreparedWeight &w,
                                           ElementType source) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (w.bits)
    os << "quantized_weight rows=" << w.rows << " cols=" << w.cols
       << " bits=" << w.bits << " group_size=" << w.groupSize;
  else
    os << "packed_weight rows=" << w.rows << " cols=" << w.cols
       << " panel_k=" << w.panelK << " panel_n=" << w.panelN
       << (w.pairs() ? " pairs" : "")
       << " type=" << stringifyElementType(w.elementType);
  os << " shape=" << formatShape(w.shape)
     << " from=" << stringifyElementType(source);
  return s;
}

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
    Attribute layout = attrs.get(CodegenDialect::kPreparedAttrName);
    auto packed = dyn_cast_or_null<codegen::PackedWeightAttr>(layout);
    auto quantized = dyn_cast_or_null<codegen::QuantizedWeightAttr>(layout);
    if (!packed && !quantized)
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
    w.elementType = getHostElementType(type.getElementType());
    if (packed) {
      w.rows = packed.getRows();
      w.cols = packed.getCols();
      w.panelK = packed.getPanelK();
      w.panelN = packed.getPanelN();
    } else {
      w.rows = quantized.getRows();
      w.cols = quantized.getCols();
      w.bits = quantized.getBits();
      w.groupSize = quantized.getGroupSize();
    }
    result.results.push_back(std::move(w));
  }
  return std::optional<PrepareEntry>(std::move(result));
}

std::string
blockc::serializePrepareEntry(const std::optional<PrepareEntry> &entry) {
  if (!entry)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "prepare " << entry->funcName << "\ninputs";
  for (unsigned i : entry->inputs)
    os << " " << i;
  os << "\n";
  for (const PreparedWeight &w : entry->results) {
    os << "result " << w.argIndex << " " << w.rows << " " << w.cols << " "
       << w.panelK << " " << w.panelN << " " << w.bits << " " << w.groupSize
       << " " << static_cast<int>(w.elementType);
    for (int64_t d : w.shape)
      os << " " << d;
    os << "\n";
  }
  return text;
}

mlir::FailureOr<std::optional<blockc::PrepareEntry>>
blockc::parsePrepareEntry(llvm::StringRef text) {
  if (text.empty())
    return std::optional<PrepareEntry>();
  PrepareEntry entry;
  llvm::SmallVector<llvm::StringRef> lines;
  text.rtrim('\n').split(lines, '\n');
  if (lines.size() < 2 || !lines[0].consume_front("prepare ") ||
      lines[0].empty() || !lines[1].consume_front("inputs"))
    return mlir::failure();
  entry.funcName = lines[0].str();
  auto numbers = [](llvm::StringRef line, llvm::SmallVectorImpl<int64_t> &out) {
    llvm::SmallVector<llvm::StringRef> words;
    line.split(words, ' ', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef w : words) {
      int64_t v;
      if (w.getAsInteger(10, v) || v < 0)
        return false;
      out.push_back(v);
    }
    return true;
  };
  llvm::SmallVector<int64_t> inputs;
  if (!numbers(lines[1], inputs))
    return mlir::failure();
  entry.inputs.assign(inputs.begin(), inputs.end());
  for (llvm::StringRef line : llvm::ArrayRef(lines).drop_front(2)) {
    llvm::SmallVector<int64_t> v;
    if (!line.consume_front("result ") || !numbers(line, v) || v.size() < 9 ||
        v[7] > static_cast<int64_t>(ElementType::F16))
      return mlir::failure();
    PreparedWeight w;
    w.argIndex = static_cast<unsigned>(v[0]);
    w.rows = v[1];
    w.cols = v[2];
    w.panelK = v[3];
    w.panelN = v[4];
    w.bits = v[5];
    w.groupSize = v[6];
    w.elementType = static_cast<ElementType>(v[7]);
    w.shape.assign(v.begin() + 8, v.end());
    entry.results.push_back(std::move(w));
  }
  return std::optional<PrepareEntry>(std::move(entry));
}
