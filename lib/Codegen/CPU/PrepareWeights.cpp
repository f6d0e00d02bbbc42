//===- PrepareWeights.cpp - prepare functions for packed weights ----------===//
//
// See Codegen/CPU/Passes.td (CPUPrepareWeightsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUPREPAREWEIGHTSPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
namespace codegen = blockc::codegen;
using codegen::CodegenDialect;

namespace {

/// One packed weight that moves into the prepare function.
struct Prepared {
  linalg::PackOp pack;
  codegen::PackedWeightAttr layout;
  unsigned argIndex; // the packed weight's argument of the entry
  SetVector<Operation *> slice;
  SetVector<unsigned> leaves; // entry arguments the slice reads
};

/// The weight `pack` packs: its source, seen through the elementwise
/// producers that fold other weights into it (a norm gain), as an argument
/// of `entry`'s body.
BlockArgument packedArgument(linalg::PackOp pack, Block *body) {
  Value v = pack.getSource();
  while (auto generic = v.getDefiningOp<linalg::GenericOp>()) {
    if (generic.getNumDpsInputs() == 0)
      return {};
    v = generic.getDpsInputOperand(0)->get();
  }
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != body)
    return {};
  return arg;
}

/// The computation in `body` (top-level ops) that `pack` depends on, if it
/// reads only arguments of `body` and constants and has no side effects.
LogicalResult collectSlice(linalg::PackOp pack, Block *body,
                           Prepared &prepared) {
  SmallVector<Operation *> worklist = {pack};
  DenseSet<Operation *> seen;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!seen.insert(op).second)
      continue;
    if (op->getBlock() != body || !isMemoryEffectFree(op))
      return failure();
    SmallVector<Value> operands(op->getOperands());
    // Values the op's regions capture from above.
    SetVector<Value> captured;
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, captured);
    operands.append(captured.begin(), captured.end());
    for (Value operand : operands) {
      if (auto arg = dyn_cast<BlockArgument>(operand)) {
        if (arg.getOwner() != body)
          return failure();
        prepared.leaves.insert(arg.getArgNumber());
        continue;
      }
      worklist.push_back(operand.getDefiningOp());
    }
  }
  // In block order, so that cloning keeps definitions before uses.
  for (Operation &op : *body)
    if (seen.contains(&op))
      prepared.slice.insert(&op);
  return success();
}

struct CPUPrepareWeightsPass
    : blockc::cpu::impl::CPUPrepareWeightsPassBase<CPUPrepareWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() &&
          !func->hasAttr(CodegenDialect::kPrepareForAttrName) &&
          SymbolTable::symbolKnownUseEmpty(func, module))
        entries.push_back(func);
    for (func::FuncOp entry : entries)
      if (failed(prepare(entry, symbols)))
        return signalPassFailure();

    // Lower every marked pack that is left (in prepare functions, and those
    // that still pack per call).
    SmallVector<linalg::PackOp> packs;
    module.walk([&](linalg::PackOp pack) {
      if (pack->hasAttr(CodegenDialect::kPreparedAttrName))
        packs.push_back(pack);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::PackOp pack : packs) {
      rewriter.setInsertionPoint(pack);
      if (failed(linalg::lowerPack(rewriter, pack))) {
        pack.emitOpError("blockc-cpu-prepare-weights could not lower it");
        return signalPassFailure();
      }
    }
  }

  LogicalResult prepare(func::FuncOp entry, SymbolTable &symbols) {
    Block *body = &entry.getBody().front();
    SmallVector<Prepared> moves;
    DenseSet<unsigned> packedArgs;
    for (auto pack : body->getOps<linalg::PackOp>()) {
      auto layout = pack->getAttrOfType<codegen::PackedWeightAttr>(
          CodegenDialect::kPreparedAttrName);
      if (!layout)
        continue;
      Prepared p{pack, layout, 0, {}, {}};
      BlockArgument arg = packedArgument(pack, body);
      if (!arg || failed(collectSlice(pack, body, p)) ||
          !packedArgs.insert(arg.getArgNumber()).second) {
        ++numLeft;
        continue;
      }
      p.argIndex = arg.getArgNumber();
      moves.push_back(std::move(p));
    }
    // A packed weight argument must have no use outside its own slice.
    llvm::erase_if(moves, [&](Prepared &p) {
      for (OpOperand &use : body->getArgument(p.argIndex).getUses())
        if (!p.slice.contains(use.getOwner())) {
          ++numLeft;
          return true;
        }
      return false;
    });
    if (moves.empty())
      return success();
    llvm::sort(moves, [](const Prepared &a, const Prepared &b) {
      return a.argIndex < b.argIndex;
    });

    std::string name = (entry.getSymName() + "_prepare").str();
    if (symbols.lookup(name))
      return entry.emitError()
             << "blockc-cpu-prepare-weights: a function named '" << name
             << "' already exists";

    // The prepare function: the arguments every slice reads, in entry
    // order, then the slices, returning the packed weights.
    SetVector<unsigned> inputs;
    for (Prepared &p : moves)
      inputs.insert(p.leaves.begin(), p.leaves.end());
    SmallVector<unsigned> order(inputs.begin(), inputs.end());
    llvm::sort(order);
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    b.setInsertionPointAfter(entry);
    Builder attrs(ctx);
    SmallVector<Type> argTypes, resultTypes;
    for (unsigned i : order)
      argTypes.push_back(body->getArgument(i).getType());
    for (Prepared &p : moves)
      resultTypes.push_back(p.pack.getResult().getType());
    auto prepare = func::FuncOp::create(
        b, entry.getLoc(), name, b.getFunctionType(argTypes, resultTypes));
    // A string, not a symbol reference: the entry must stay an entry (no
    // symbol uses) for the passes that look for callers.
    prepare->setAttr(CodegenDialect::kPrepareForAttrName,
                     entry.getSymNameAttr());
    for (auto [j, i] : llvm::enumerate(order)) {
      if (DictionaryAttr dict = entry.getArgAttrDict(i))
        for (NamedAttribute attr : dict)
          prepare.setArgAttr(j, attr.getName(), attr.getValue());
      prepare.setArgAttr(j, CodegenDialect::kSourceArgAttrName,
                         attrs.getI64IntegerAttr(i));
    }
    for (auto [j, p] : llvm::enumerate(moves)) {
      prepare.setResultAttr(j, CodegenDialect::kSourceArgAttrName,
                            attrs.getI64IntegerAttr(p.argIndex));
      prepare.setResultAttr(j, CodegenDialect::kPreparedAttrName, p.layout);
    }
    Block *prepBody = prepare.addEntryBlock();
    IRMapping map;
    for (auto [j, i] : llvm::enumerate(order))
      map.map(body->getArgument(i), prepBody->getArgument(j));
    b.setInsertionPointToStart(prepBody);
    SetVector<Operation *> all;
    for (Prepared &p : moves)
      all.insert(p.slice.begin(), p.slice.end());
    for (Operation &op : *body)
      if (all.contains(&op))
        b.clone(op, map);
    SmallVector<Value> results;
    for (Prepared &p : moves)
      results.push_back(map.lookup(p.pack.getResult()));
    func::ReturnOp::create(b, entry.getLoc(), results);

    // The entry reads the prepared weights from the packed arguments.
    for (Prepared &p : moves) {
      BlockArgument arg = body->getArgument(p.argIndex);
      Value packed = p.pack.getResult();
      arg.setType(packed.getType());
      packed.replaceAllUsesWith(arg);
      entry.setArgAttr(p.argIndex, CodegenDialect::kPreparedAttrName, p.layout);
      ++numPrepared;
    }
    // Erase the moved computation (in reverse order, what is now unused).
    SmallVector<Operation *> reversed(all.begin(), all.end());
    for (Operation *op : llvm::reverse(reversed))
      if (op->use_empty())
        op->erase();
    SmallVector<Type> newArgs(body->getArgumentTypes());
    entry.setType(
        FunctionType::get(ctx, newArgs, entry.getFunctionType().getResults()));
    symbols.insert(prepare);
    return success();
  }
};

} // namespace
