//===- HoistThreadScratch.cpp - one stack scratch buffer per thread -------===//
//
// See Codegen/CPU/Passes.td (CPUHoistThreadScratchPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUHOISTTHREADSCRATCHPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;

namespace {

struct CPUHoistThreadScratchPass
    : blockc::cpu::impl::CPUHoistThreadScratchPassBase<
          CPUHoistThreadScratchPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](omp::ParallelOp parallel) {
      Block &entry = parallel.getRegion().front();
      SmallVector<memref::AllocaOp> allocas;
      parallel.walk([&](memref::AllocaOp alloca) {
        // Static buffers inside the work-sharing loop of this parallel
        // region (not of a nested one).
        if (alloca->getNumOperands() == 0 &&
            alloca->getParentOfType<omp::ParallelOp>() == parallel &&
            alloca->getParentOfType<omp::WsloopOp>())
          allocas.push_back(alloca);
      });
      for (memref::AllocaOp alloca : allocas) {
        alloca->moveBefore(&entry, entry.begin());
        ++numHoisted;
      }
    });
    // A work item's scope that holds no alloca any more is inlined here:
    // canonicalize keeps a scope around any op whose memory effects it does
    // not know (a call of a micro-kernel, inline assembly), although those
    // cannot allocate on this frame's stack.
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](memref::AllocaScopeOp scope) {
      if (!scope->getParentOfType<omp::WsloopOp>())
        return;
      bool allocates = false;
      scope.walk([&](memref::AllocaOp) { allocates = true; });
      if (!allocates)
        scopes.push_back(scope);
    });
    for (memref::AllocaScopeOp scope : scopes) {
      Block &body = scope.getBodyRegion().front();
      auto ret = cast<memref::AllocaScopeReturnOp>(body.getTerminator());
      SmallVector<Value> results(ret.getResults());
      ret.erase();
      scope->getBlock()->getOperations().splice(Block::iterator(scope),
                                                body.getOperations());
      scope.replaceAllUsesWith(results);
      scope.erase();
      ++numInlined;
    }
  }
};

} // namespace
