//===- MergeGPUModules.cpp - one gpu.module for all kernels ---------------===//
//
// Moves the kernels of every gpu.module into one module and retargets the
// gpu.launch_func ops. See Codegen/NVPTX/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUMERGEMODULESPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {
struct GPUMergeModulesPass
    : blockc::nvptx::impl::GPUMergeModulesPassBase<GPUMergeModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto gpuModules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.empty())
      return;
    if (SymbolTable::lookupSymbolIn(module, moduleName)) {
      module.emitError() << "blockc-gpu-merge-modules: a symbol named '"
                         << moduleName << "' already exists";
      return signalPassFailure();
    }
    OpBuilder builder(gpuModules.front());
    auto merged = gpu::GPUModuleOp::create(builder, gpuModules.front().getLoc(),
                                           moduleName);
    // Keep the first module's targets and attributes (outlining gives all
    // modules the same ones).
    if (ArrayAttr targets = gpuModules.front().getTargetsAttr())
      merged.setTargetsAttr(targets);
    SymbolTable mergedTable(merged);

    llvm::DenseMap<Attribute, SymbolRefAttr> renamed;
    for (gpu::GPUModuleOp src : gpuModules) {
      for (Operation &op :
           llvm::make_early_inc_range(src.getBody()->without_terminator())) {
        auto symbol = dyn_cast<SymbolOpInterface>(&op);
        StringAttr oldName = symbol ? symbol.getNameAttr() : StringAttr();
        op.remove();
        if (symbol) {
          // Renames on collision and records the new reference.
          StringAttr newName = mergedTable.insert(&op);
          renamed[SymbolRefAttr::get(src.getNameAttr(),
                                     {FlatSymbolRefAttr::get(oldName)})] =
              SymbolRefAttr::get(merged.getNameAttr(),
                                 {FlatSymbolRefAttr::get(newName)});
        } else {
          merged.getBody()->getOperations().insert(
              merged.getBody()->without_terminator().end(), &op);
        }
      }
    }
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernel());
      if (it == renamed.end()) {
        launch.emitOpError() << "refers to a kernel outside any gpu.module";
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(it->second);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    for (gpu::GPUModuleOp src : gpuModules)
      src.erase();
  }
};
} // namespace
