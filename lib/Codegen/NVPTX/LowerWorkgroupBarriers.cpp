//===- LowerWorkgroupBarriers.cpp - workgroup barriers to gpu.barrier -----===//
//
// See Codegen/NVPTX/Passes.td (GPULowerWorkgroupBarriersPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPULOWERWORKGROUPBARRIERSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

struct GPULowerWorkgroupBarriersPass
    : blockc::nvptx::impl::GPULowerWorkgroupBarriersPassBase<
          GPULowerWorkgroupBarriersPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registry.insert<nvgpu::NVGPUDialect>();
  }

  void runOnOperation() override {
    SmallVector<blockc::codegen::WorkgroupBarrierOp> barriers;
    WalkResult walk =
        getOperation().walk([&](blockc::codegen::WorkgroupBarrierOp op) {
          if (!op->getParentOfType<gpu::LaunchOp>() &&
              !op->getParentOfType<gpu::GPUFuncOp>()) {
            op.emitOpError() << "is not inside a GPU kernel";
            return WalkResult::interrupt();
          }
          barriers.push_back(op);
          return WalkResult::advance();
        });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (blockc::codegen::WorkgroupBarrierOp op : barriers) {
      OpBuilder b(op);
      // Commit this thread's open cp.async copies as a group (the group
      // closes every copy since the last commit, whatever its token) and
      // wait for all but the newest N groups.
      if (std::optional<uint32_t> pending = op.getCpAsyncWait()) {
        Value group = nvgpu::DeviceAsyncCreateGroupOp::create(
            b, op.getLoc(), nvgpu::DeviceAsyncTokenType::get(b.getContext()),
            ValueRange{});
        nvgpu::DeviceAsyncWaitOp::create(b, op.getLoc(), group,
                                         b.getI32IntegerAttr(*pending));
      }
      gpu::BarrierOp::create(b, op.getLoc());
      op.erase();
    }
  }
};

} // namespace
