//===- MergeIdenticalFunctions.cpp - one of each identical function ------===//
//
// See Codegen/Common/Passes.td (MergeIdenticalFunctionsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/Hashing.h"

#include <unordered_map>

namespace blockc {
#define GEN_PASS_DEF_MERGEIDENTICALFUNCTIONSPASS
#include "blockc/Codegen/Common/Passes.h.inc"
} // namespace blockc

using namespace mlir;

namespace {

/// A hash of `func`'s type, attributes and body that equal functions share:
/// every op's name, attributes and types, not the values it reads.
llvm::hash_code hashFunction(func::FuncOp func) {
  llvm::hash_code hash = llvm::hash_combine(
      func.getFunctionType(), func.getArgAttrsAttr(), func.getResAttrsAttr());
  func.getBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// `a` and `b` are the same function under different names.
bool areEqual(func::FuncOp a, func::FuncOp b) {
  if (a.getFunctionType() != b.getFunctionType() ||
      a.getArgAttrsAttr() != b.getArgAttrsAttr() ||
      a.getResAttrsAttr() != b.getResAttrsAttr() ||
      a.getNoInline() != b.getNoInline() ||
      a->getDiscardableAttrDictionary() != b->getDiscardableAttrDictionary())
    return false;
  return OperationEquivalence::isRegionEquivalentTo(
      &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

struct MergeIdenticalFunctionsPass
    : blockc::impl::MergeIdenticalFunctionsPassBase<
          MergeIdenticalFunctionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::unordered_map<size_t, SmallVector<func::FuncOp>> kept;
    SmallVector<func::FuncOp> merged;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func.isPrivate() || func.isExternal())
        continue;
      SmallVector<func::FuncOp> &candidates =
          kept[static_cast<size_t>(hashFunction(func))];
      auto equal = llvm::find_if(candidates, [&](func::FuncOp other) {
        return areEqual(other, func);
      });
      if (equal == candidates.end()) {
        candidates.push_back(func);
        continue;
      }
      if (failed(SymbolTable::replaceAllSymbolUses(
              func, equal->getSymNameAttr(), module))) {
        func.emitError("could not redirect the uses of this function");
        return signalPassFailure();
      }
      merged.push_back(func);
    }
    for (func::FuncOp func : merged)
      func.erase();
    numMerged += merged.size();
  }
};

} // namespace
