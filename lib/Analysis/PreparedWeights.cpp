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
       << " bits=" << w.bits << " group_size=" << w.groupSize
       << (w.interleave > 1 ? " interleave=" + std::to_string(w.interleave)
                            : std::string())
       << (w.rowLanes ? " row_lanes" : "");
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

namespace {

/// The records of `prepare`, a prepare function of `entry` or one of its
/// parts: its inputs, then one destination per result.
FailureOr<blockc::PrepareEntry> readPrepareFunction(func::FuncOp prepare,
                                                    func::FuncOp entry) {
  StringRef entryName = entry.getSymName();
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

  blockc::PrepareEntry result;
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
    auto packed = dyn_cast_or_null<blockc::codegen::PackedWeightAttr>(layout);
    auto quantized =
        dyn_cast_or_null<blockc::codegen::QuantizedWeightAttr>(layout);
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
    blockc::PreparedWeight w;
    w.argIndex = *index;
    w.shape.assign(type.getShape().begin(), type.getShape().end());
    w.elementType = blockc::getHostElementType(type.getElementType());
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
      w.interleave = quantized.getInterleave();
      w.rowLanes = quantized.getRowLanes();
    }
    result.results.push_back(std::move(w));
  }
  return result;
}

} // namespace

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
  FailureOr<PrepareEntry> result = readPrepareFunction(prepare, entry);
  if (failed(result))
    return failure();

  // Its parts, if any: one per result, each making that weight alone.
  std::vector<bool> covered(result->results.size());
  for (auto func : module.getOps<func::FuncOp>()) {
    auto of =
        func->getAttrOfType<StringAttr>(CodegenDialect::kPreparePartOfAttrName);
    if (!of || of.getValue() != result->funcName)
      continue;
    FailureOr<PrepareEntry> part = readPrepareFunction(func, entry);
    if (failed(part))
      return failure();
    const PreparedWeight *w = part->results.size() == 1
                                  ? result->find(part->results[0].argIndex)
                                  : nullptr;
    if (!w || describePreparedLayout(*w, ElementType::F32) !=
                  describePreparedLayout(part->results[0], ElementType::F32))
      return func.emitError() << "a part of @" << result->funcName
                              << " must make exactly one of its results";
    size_t k = w - result->results.data();
    if (covered[k])
      return func.emitError() << "a second part of @" << result->funcName
                              << " makes argument #" << w->argIndex;
    covered[k] = true;
    result->parts.push_back(std::move(*part));
  }
  if (!result->parts.empty() && llvm::is_contained(covered, false))
    return prepare.emitError()
           << "has parts for only " << result->parts.size() << " of its "
           << result->results.size() << " results";
  return std::optional<PrepareEntry>(std::move(*result));
}

std::string
blockc::serializePrepareEntry(const std::optional<PrepareEntry> &entry) {
  if (!entry)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  auto print = [&](const PrepareEntry &e, StringRef kind) {
    os << kind << " " << e.funcName << "\ninputs";
    for (unsigned i : e.inputs)
      os << " " << i;
    os << "\n";
    for (const PreparedWeight &w : e.results) {
      os << "result " << w.argIndex << " " << w.rows << " " << w.cols << " "
         << w.panelK << " " << w.panelN << " " << w.bits << " " << w.groupSize
         << " " << static_cast<int>(w.elementType) << " " << w.interleave << " "
         << (w.rowLanes ? 1 : 0);
      for (int64_t d : w.shape)
        os << " " << d;
      os << "\n";
    }
  };
  print(*entry, "prepare");
  for (const PrepareEntry &part : entry->parts)
    print(part, "part");
  return text;
}

mlir::FailureOr<std::optional<blockc::PrepareEntry>>
blockc::parsePrepareEntry(llvm::StringRef text) {
  if (text.empty())
    return std::optional<PrepareEntry>();
  llvm::SmallVector<llvm::StringRef> lines;
  text.rtrim('\n').split(lines, '\n');
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
  // The prepare function, then its parts: each a "<kind> <func>" line, an
  // "inputs" line and its "result" lines.
  llvm::ArrayRef<llvm::StringRef> rest = lines;
  auto parse = [&](llvm::StringRef kind, PrepareEntry &entry) {
    if (rest.size() < 2)
      return false;
    llvm::StringRef head = rest[0], inputsLine = rest[1];
    if (!head.consume_front(kind) || !head.consume_front(" ") || head.empty() ||
        !inputsLine.consume_front("inputs"))
      return false;
    entry.funcName = head.str();
    llvm::SmallVector<int64_t> inputs;
    if (!numbers(inputsLine, inputs))
      return false;
    entry.inputs.assign(inputs.begin(), inputs.end());
    rest = rest.drop_front(2);
    while (!rest.empty() && rest[0].starts_with("result ")) {
      llvm::SmallVector<int64_t> v;
      if (!numbers(rest[0].drop_front(7), v) || v.size() < 11 ||
          v[7] > static_cast<int64_t>(ElementType::F16) || v[8] < 1 || v[9] > 1)
        return false;
      PreparedWeight w;
      w.argIndex = static_cast<unsigned>(v[0]);
      w.rows = v[1];
      w.cols = v[2];
      w.panelK = v[3];
      w.panelN = v[4];
      w.bits = v[5];
      w.groupSize = v[6];
      w.elementType = static_cast<ElementType>(v[7]);
      w.interleave = v[8];
      w.rowLanes = v[9] == 1;
      w.shape.assign(v.begin() + 10, v.end());
      entry.results.push_back(std::move(w));
      rest = rest.drop_front();
    }
    return true;
  };
  PrepareEntry entry;
  if (!parse("prepare", entry))
    return mlir::failure();
  while (!rest.empty()) {
    PrepareEntry part;
    if (!parse("part", part) || part.results.size() != 1)
      return mlir::failure();
    entry.parts.push_back(std::move(part));
  }
  return std::optional<PrepareEntry>(std::move(entry));
}
