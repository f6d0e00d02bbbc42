//===- OutlineParallelKernels.cpp - parallel kernels as functions --------===//
//
// See Codegen/CPU/Passes.td (CPUOutlineParallelKernelsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"

#include "blockc/Codegen/Common/Outlining.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUOUTLINEPARALLELKERNELSPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;

namespace {

/// Moves `parallel` into a new private function, placed after `after`
/// (which becomes the new function), and calls it in its place.
void outline(omp::ParallelOp parallel, func::FuncOp parent, Operation *&after,
             SymbolTable &symbols) {
  // The values the kernel reads from above: its own operands, then those
  // its region captures, in order of first use.
  SetVector<Value> used(parallel->getOperands().begin(),
                        parallel->getOperands().end());
  getUsedValuesDefinedAbove(parallel->getRegions(), used);
  SmallVector<Value> inputs, constants;
  for (Value v : used)
    (blockc::isClonableConstant(v) ? constants : inputs).push_back(v);

  OpBuilder b(parent);
  Location loc = parallel.getLoc();
  func::FuncOp kernel = blockc::createOutlinedFunction(
      b, loc, (parent.getSymName() + "_kernel").str(),
      ValueRange(inputs).getTypes(), after, symbols);
  after = kernel;

  Block *body = &kernel.front();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(inputs, body->getArguments());
  for (Value c : constants)
    mapping.map(c, b.clone(*c.getDefiningOp())->getResult(0));
  b.clone(*parallel, mapping);
  func::ReturnOp::create(b, loc);

  b.setInsertionPoint(parallel);
  func::CallOp::create(b, loc, kernel, inputs);
  parallel.erase();
}

struct CPUOutlineParallelKernelsPass
    : blockc::cpu::impl::CPUOutlineParallelKernelsPassBase<
          CPUOutlineParallelKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      // Outermost kernels only: a nested omp.parallel moves with its parent.
      SmallVector<omp::ParallelOp> kernels;
      func.walk<WalkOrder::PreOrder>([&](omp::ParallelOp parallel) {
        kernels.push_back(parallel);
        return WalkResult::skip();
      });
      Operation *after = func;
      for (omp::ParallelOp parallel : kernels)
        outline(parallel, func, after, symbols);
      numOutlined += kernels.size();
    }
  }
};

} // namespace
