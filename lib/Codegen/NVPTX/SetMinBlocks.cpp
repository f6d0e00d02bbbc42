//===- SetMinBlocks.cpp - a launch bound for setmaxnreg kernels -----------===//
//
// Kernels that reallocate registers get nvvm.minctasm = 1, so that ptxas
// knows their register count at entry and applies setmaxnreg. See
// Codegen/NVPTX/Passes.td (GPUSetMinBlocksPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUSETMINBLOCKSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

struct GPUSetMinBlocksPass
    : blockc::nvptx::impl::GPUSetMinBlocksPassBase<GPUSetMinBlocksPass> {
  void runOnOperation() override {
    StringRef name = NVVM::NVVMDialect::getMinctasmAttrName();
    for (auto func : getOperation().getOps<gpu::GPUFuncOp>()) {
      if (!func.isKernel() || func->hasAttr(name))
        continue;
      bool reallocates = func.walk([](NVVM::SetMaxRegisterOp) {
                               return WalkResult::interrupt();
                             })
                             .wasInterrupted();
      if (reallocates)
        func->setAttr(name,
                      IntegerAttr::get(IntegerType::get(&getContext(), 32), 1));
    }
  }
};

} // namespace
