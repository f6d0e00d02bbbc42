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
    // Already merged (e.g. the pass runs twice): nothing to do.
    if (gpuModules.size() == 1 && gpuModules.front().getName() == moduleName)
      return;
    if (SymbolTable::lookupSymbolIn(module, moduleName)) {
      module.emitError() << "blockc-gpu-merge-modules: a symbol named '"
                         << moduleName << "' already exists";
      return signalPassFailure();
    }
    OpBuilder builder(gpuModules.front());
    auto merged = gpu::GPUModuleOp::create(builder, gpuModules.front().getLoc(),
                                           moduleName);
    // Keep the first module's targets (outlining gives all modules the same
    // ones).
    if (ArrayAttr targets = gpuModules.front().getTargetsAttr())
      merged.setTargetsAttr(targets);
    SymbolTable mergedTable(merged);

    llvm::DenseMap<Attribute, SymbolRefAttr> renamed;
    for (gpu::GPUModuleOp src : gpuModules) {
      SmallVector<Operation *> moved;
      SmallVector<std::pair<StringAttr, StringAttr>> renames;
      for (Operation &op :
           llvm::make_early_inc_range(src.getBody()->without_terminator())) {
        moved.push_back(&op);
        auto symbol = dyn_cast<SymbolOpInterface>(&op);
        StringAttr oldName = symbol ? symbol.getNameAttr() : StringAttr();
        op.remove();
        if (symbol) {
          // Renames on collision and records the new reference.
          StringAttr newName = mergedTable.insert(&op);
          if (newName != oldName)
            renames.push_back({oldName, newName});
          renamed[SymbolRefAttr::get(src.getNameAttr(),
                                     {FlatSymbolRefAttr::get(oldName)})] =
              SymbolRefAttr::get(merged.getNameAttr(),
                                 {FlatSymbolRefAttr::get(newName)});
        } else {
          merged.getBody()->getOperations().insert(
              merged.getBody()->without_terminator().end(), &op);
        }
      }
      // Symbols renamed on collision: retarget their uses among the ops
      // that came from the same module (e.g. calls to a helper function).
      for (auto [oldName, newName] : renames)
        for (Operation *op : moved)
          if (failed(SymbolTable::replaceAllSymbolUses(oldName, newName, op)))
            return signalPassFailure();
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
