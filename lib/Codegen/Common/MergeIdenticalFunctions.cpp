//===- MergeIdenticalFunctions.cpp - one of each identical function ------===//
//
// See Codegen/Common/Passes.td (MergeIdenticalFunctionsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Outlining.h"
#include "blockc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include <unordered_map>

namespace blockc {
#define GEN_PASS_DEF_MERGEIDENTICALFUNCTIONSPASS
#include "blockc/Codegen/Common/Passes.h.inc"
} // namespace blockc

using namespace mlir;

namespace {

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
          kept[static_cast<size_t>(blockc::hashFunctionBody(func))];
      auto equal = llvm::find_if(candidates, [&](func::FuncOp other) {
        return blockc::areEquivalentFunctions(other, func);
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
