//===- HostSharedAllocs.cpp - managed-memory buffers for kernels ----------===//
//
// memref.alloc -> gpu.alloc host_shared, memref.dealloc -> async
// gpu.dealloc + gpu.wait. See Codegen/NVPTX/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUHOSTSHAREDALLOCSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {
struct GPUHostSharedAllocsPass
    : blockc::nvptx::impl::GPUHostSharedAllocsPassBase<
          GPUHostSharedAllocsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    bool failedAny = false;
    getOperation().walk([&](Operation *op) {
      // Allocations inside kernels are not buffers of the host program.
      if (op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<gpu::GPUFuncOp>())
        return;
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (alloc.getType().getMemorySpace() ||
            !alloc.getSymbolOperands().empty()) {
          alloc.emitOpError()
              << "cannot be placed in GPU-accessible memory (memory space "
                 "or symbol operands)";
          failedAny = true;
          return;
        }
        rewriter.setInsertionPoint(alloc);
        auto shared = gpu::AllocOp::create(
            rewriter, alloc.getLoc(), alloc.getType(),
            /*asyncToken=*/Type(), /*asyncDependencies=*/ValueRange(),
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/true);
        rewriter.replaceOp(alloc, shared.getMemref());
        return;
      }
      if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        rewriter.setInsertionPoint(dealloc);
        Location loc = dealloc.getLoc();
        Type token = gpu::AsyncTokenType::get(&getContext());
        Value start = gpu::WaitOp::create(rewriter, loc, token, ValueRange())
                          .getAsyncToken();
        Value done =
            gpu::DeallocOp::create(rewriter, loc, token, ValueRange{start},
                                   dealloc.getMemref())
                .getAsyncToken();
        gpu::WaitOp::create(rewriter, loc, Type(), ValueRange{done});
        rewriter.eraseOp(dealloc);
      }
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
