//===- DropInPlaceResults.cpp - drop results that are argument buffers ----===//
//
// See Codegen/CPU/Passes.td (DropInPlaceResultsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/BitVector.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_DROPINPLACERESULTSPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;

namespace {

struct DropInPlaceResultsPass
    : blockc::cpu::impl::DropInPlaceResultsPassBase<DropInPlaceResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      // Callers would need rewriting: leave called functions alone.
      std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
      if (!uses || !uses->empty())
        continue;
      auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
      llvm::BitVector drop(func.getNumResults());
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        auto arg = dyn_cast<BlockArgument>(v);
        if (arg && isa<BaseMemRefType>(arg.getType()) &&
            arg.getOwner() == &func.getBody().front())
          drop.set(i);
      }
      if (drop.none())
        continue;
      ret->eraseOperands(drop);
      if (failed(func.eraseResults(drop))) {
        func.emitError() << "blockc-drop-inplace-results: cannot erase the "
                            "results of @"
                         << func.getName();
        return signalPassFailure();
      }
      numDropped += drop.count();
    }
  }
};

} // namespace
