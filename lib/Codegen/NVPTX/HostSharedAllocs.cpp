//===- HostSharedAllocs.cpp - managed-memory buffers for kernels ----------===//
//
// memref.alloc -> gpu.alloc host_shared, memref.dealloc -> async
// gpu.dealloc + gpu.wait. See Codegen/NVPTX/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUHOSTSHAREDALLOCSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

/// Whether `use` reads its value inside a kernel, directly or through a
/// chain of views (memref.cast, expand_shape, subview, ...) made on the host.
bool readsInKernel(OpOperand &use) {
  Operation *owner = use.getOwner();
  if (owner->getParentOfType<gpu::LaunchOp>())
    return true;
  auto view = dyn_cast<ViewLikeOpInterface>(owner);
  if (!view || view.getViewSource() != use.get())
    return false;
  for (Value result : owner->getResults())
    for (OpOperand &next : result.getUses())
      if (readsInKernel(next))
        return true;
  return false;
}

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
      return signalPassFailure();
    if (failed(copyGlobalsToManagedMemory(rewriter)))
      return signalPassFailure();
    copyOnTheGPU(rewriter);
  }

  /// A host memref.copy of managed buffers would move their pages to the
  /// host and back (the next kernel then faults them in): contiguous
  /// copies become gpu.memcpy (the driver copies on the GPU; from a host
  /// global it reads host memory). Strided copies stay host loops.
  void copyOnTheGPU(IRRewriter &rewriter) {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      auto source = cast<MemRefType>(copy.getSource().getType());
      auto target = cast<MemRefType>(copy.getTarget().getType());
      if (!copy->getParentOfType<gpu::LaunchOp>() &&
          source.getLayout().isIdentity() && target.getLayout().isIdentity() &&
          !source.getMemorySpace() && !target.getMemorySpace())
        copies.push_back(copy);
    });
    Type token = gpu::AsyncTokenType::get(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      Location loc = copy.getLoc();
      Value start = gpu::WaitOp::create(rewriter, loc, token, ValueRange())
                        .getAsyncToken();
      Value done =
          gpu::MemcpyOp::create(rewriter, loc, token, ValueRange{start},
                                copy.getTarget(), copy.getSource())
              .getAsyncToken();
      gpu::WaitOp::create(rewriter, loc, Type(), ValueRange{done});
      rewriter.eraseOp(copy);
    }
  }

  /// Kernels cannot read host globals: give each kernel-read global a
  /// managed copy made at the start of the call and freed before returning.
  LogicalResult copyGlobalsToManagedMemory(IRRewriter &rewriter) {
    func::FuncOp func = getOperation();
    SmallVector<memref::GetGlobalOp> globals;
    func.walk([&](memref::GetGlobalOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>() &&
          llvm::any_of(op->getUses(), readsInKernel))
        globals.push_back(op);
    });
    SmallVector<Value> copies;
    for (memref::GetGlobalOp global : globals) {
      if (global->getBlock() != &func.getBody().front())
        return global.emitOpError()
               << "is read by a GPU kernel but is not in the entry block; "
                  "cannot place it in GPU-accessible memory";
      rewriter.setInsertionPointAfter(global);
      Location loc = global.getLoc();
      auto shared = gpu::AllocOp::create(rewriter, loc, global.getType(),
                                         Type(), ValueRange(), ValueRange(),
                                         ValueRange(), /*hostShared=*/true);
      memref::CopyOp::create(rewriter, loc, global.getResult(),
                             shared.getMemref());
      global.getResult().replaceUsesWithIf(
          shared.getMemref(), [](OpOperand &use) {
            return !isa<memref::CopyOp>(use.getOwner()) && readsInKernel(use);
          });
      copies.push_back(shared.getMemref());
    }
    if (copies.empty())
      return success();
    Type token = gpu::AsyncTokenType::get(&getContext());
    func.walk([&](func::ReturnOp ret) {
      rewriter.setInsertionPoint(ret);
      for (Value copy : copies) {
        Value start =
            gpu::WaitOp::create(rewriter, ret.getLoc(), token, ValueRange())
                .getAsyncToken();
        Value done = gpu::DeallocOp::create(rewriter, ret.getLoc(), token,
                                            ValueRange{start}, copy)
                         .getAsyncToken();
        gpu::WaitOp::create(rewriter, ret.getLoc(), Type(), ValueRange{done});
      }
    });
    return success();
  }
};
} // namespace
