//===- SetTarget.cpp - the target GPU's facts on the module ---------------===//
//
// blockc-gpu-set-target: attaches the known chip's #blockc_codegen.gpu_target
// to the module (Codegen/NVPTX/Passes.td, GPUSetTargetPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUSETTARGETPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using blockc::codegen::CodegenDialect;
using blockc::codegen::GPUTargetAttr;

GPUTargetAttr blockc::nvptx::getGPUTarget(Operation *op,
                                          StringRef fallbackArch) {
  Operation *module = isa<ModuleOp>(op) ? op : op->getParentOfType<ModuleOp>();
  // The outermost module: a gpu.module's kernels are inside it too.
  while (module && module->getParentOfType<ModuleOp>())
    module = module->getParentOfType<ModuleOp>();
  if (module)
    if (auto target = module->getAttrOfType<GPUTargetAttr>(
            CodegenDialect::kGpuTargetAttrName))
      return target;
  return GPUTargetAttr::getKnown(op->getContext(), fallbackArch);
}

namespace {

struct GPUSetTargetPass
    : blockc::nvptx::impl::GPUSetTargetPassBase<GPUSetTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string error;
    GPUTargetAttr target =
        GPUTargetAttr::lookup(&getContext(), chip, gpu, error);
    if (!target) {
      module.emitError() << "blockc-gpu-set-target: " << error;
      return signalPassFailure();
    }
    if (auto existing = module->getAttrOfType<GPUTargetAttr>(
            CodegenDialect::kGpuTargetAttrName)) {
      if (existing.getName() == target.getName() &&
          existing.getArch() == target.getArch())
        return;
      module.emitError() << "blockc-gpu-set-target: the module targets "
                         << existing.getName() << " (" << existing.getArch()
                         << ") already, not " << target.getName() << " ("
                         << target.getArch() << ")";
      return signalPassFailure();
    }
    module->setAttr(CodegenDialect::kGpuTargetAttrName, target);
  }
};

} // namespace
