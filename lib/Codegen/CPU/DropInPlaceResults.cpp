//===- DropInPlaceResults.cpp - drop results that are argument buffers ----===//
//
// See Codegen/CPU/Passes.td (DropInPlaceResultsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_DROPINPLACERESULTSPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using blockc::codegen::CodegenDialect;
using blockc::transformer::TransformerDialect;

namespace {

/// `v` is an argument of `func`'s entry block that the caller owns and the
/// function writes in place: a KV cache (transformer.kv_cache, see
/// transformer-derive-decode) or the destination of a prepared weight
/// (blockc_codegen.prepared on an argument of a prepare function or of one
/// of its parts, see blockc-cpu-prepare-weights).
bool isKVCacheArgument(func::FuncOp func, Value v);

/// Whether `loop` yields, as its `i`-th value, its own `i`-th iter_arg
/// buffer (directly or through inner loops that carry it the same way): the
/// loop's `i`-th result is then the buffer of its `i`-th init.
bool yieldsIterArg(scf::ForOp loop, unsigned i) {
  Value iterArg = loop.getRegionIterArgs()[i];
  Value y = loop.getYieldedValues()[i];
  while (y != iterArg) {
    auto result = dyn_cast<OpResult>(y);
    auto inner = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
    if (!inner || !yieldsIterArg(inner, result.getResultNumber()))
      return false;
    y = inner.getInitArgs()[result.getResultNumber()];
  }
  return true;
}

/// `v`, or the buffer that the scf.for loops defining `v` carry unchanged
/// (a paged entry's page writes thread their pool through loops).
Value carriedBuffer(Value v) {
  while (auto result = dyn_cast<OpResult>(v)) {
    auto loop = dyn_cast<scf::ForOp>(result.getOwner());
    if (!loop || !yieldsIterArg(loop, result.getResultNumber()))
      break;
    v = loop.getInitArgs()[result.getResultNumber()];
  }
  return v;
}

bool isKVCacheArgument(func::FuncOp func, Value v) {
  auto arg = dyn_cast<BlockArgument>(carriedBuffer(v));
  if (!arg || arg.getOwner() != &func.getBody().front() ||
      !isa<BaseMemRefType>(arg.getType()))
    return false;
  unsigned i = arg.getArgNumber();
  return func.getArgAttr(i, TransformerDialect::kKVCacheAttr) ||
         ((func->hasAttr(CodegenDialect::kPrepareForAttrName) ||
           func->hasAttr(CodegenDialect::kPreparePartOfAttrName)) &&
          func.getArgAttr(i, CodegenDialect::kPreparedAttrName));
}

/// `v` is a fresh buffer whose only other use is one memref.copy of a whole
/// KV cache argument into it, after which (up to `ret`) only allocations
/// and copies into fresh buffers run: returns that copy.
memref::CopyOp copyOfCache(func::FuncOp func, Value v, Operation *ret) {
  Block &body = func.getBody().front();
  auto alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != &body)
    return {};
  memref::CopyOp copy;
  for (Operation *user : alloc->getUsers()) {
    if (user == ret)
      continue;
    auto c = dyn_cast<memref::CopyOp>(user);
    if (!c || c.getTarget() != v || copy)
      return {};
    copy = c;
  }
  if (!copy || !isKVCacheArgument(func, copy.getSource()) ||
      copy->getBlock() != &body)
    return {};
  for (Operation *op = copy->getNextNode(); op != ret; op = op->getNextNode()) {
    if (isa<memref::AllocOp>(op) || isPure(op))
      continue;
    auto c = dyn_cast<memref::CopyOp>(op);
    if (!c || !c.getTarget().getDefiningOp<memref::AllocOp>())
      return {};
  }
  return copy;
}

struct DropInPlaceResultsPass
    : blockc::cpu::impl::DropInPlaceResultsPassBase<DropInPlaceResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Called functions first, until nothing changes: dropping a callee's
    // results rewrites its calls, after which a caller may return its own
    // argument (a prepare function returning what its parts filled).
    SmallVector<func::FuncOp> called, entries;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
      if (uses)
        (uses->empty() ? entries : called).push_back(func);
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (func::FuncOp func : called) {
        FailureOr<bool> dropped = dropResults(func, module, /*isCalled=*/true);
        if (failed(dropped))
          return signalPassFailure();
        changed |= *dropped;
      }
    }
    for (func::FuncOp func : entries)
      if (failed(dropResults(func, module, /*isCalled=*/false)))
        return signalPassFailure();
  }

  /// Drops the results of `func` that are its own in-place arguments
  /// (isKVCacheArgument) and, for an entry, copies of them (copyOfCache).
  /// A called function's calls (all of them func.call, else it is left
  /// alone) take the argument they pass instead of each dropped result.
  /// Returns whether anything was dropped.
  FailureOr<bool> dropResults(func::FuncOp func, ModuleOp module,
                              bool isCalled) {
    SmallVector<func::CallOp> calls;
    if (isCalled) {
      std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
      for (const SymbolTable::SymbolUse &use : *uses) {
        auto call = dyn_cast<func::CallOp>(use.getUser());
        if (!call)
          return false;
        calls.push_back(call);
      }
    }
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    llvm::BitVector drop(func.getNumResults());
    SmallVector<memref::CopyOp> copies;
    // Only the caches: any other argument the entry returns (an input
    // passed through) is a result the caller expects.
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      if (isKVCacheArgument(func, v)) {
        drop.set(i);
      } else if (!isCalled) {
        if (memref::CopyOp copy = copyOfCache(func, v, ret)) {
          drop.set(i);
          copies.push_back(copy);
        }
      }
    }
    if (drop.none())
      return false;
    // The argument a dropped result is, per result.
    auto argumentOf = [&](unsigned i) {
      return cast<BlockArgument>(carriedBuffer(ret.getOperand(i)))
          .getArgNumber();
    };
    for (func::CallOp call : calls)
      for (unsigned i : drop.set_bits())
        if (call.getOperand(argumentOf(i)).getType() !=
            call.getResult(i).getType())
          return false;
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      SmallVector<Type> kept;
      for (auto [i, r] : llvm::enumerate(call.getResults()))
        if (!drop.test(i))
          kept.push_back(r.getType());
      auto newCall = func::CallOp::create(b, call.getLoc(), call.getCallee(),
                                          kept, call.getOperands());
      unsigned next = 0;
      for (auto [i, r] : llvm::enumerate(call.getResults()))
        r.replaceAllUsesWith(drop.test(i) ? call.getOperand(argumentOf(i))
                                          : newCall.getResult(next++));
      call->erase();
    }
    ret->eraseOperands(drop);
    for (memref::CopyOp copy : copies) {
      Operation *alloc = copy.getTarget().getDefiningOp();
      copy->erase();
      alloc->erase();
    }
    if (failed(func.eraseResults(drop)))
      return func.emitError()
             << "blockc-drop-inplace-results: cannot erase the results of @"
             << func.getName();
    numDropped += drop.count();
    return true;
  }
};

} // namespace
