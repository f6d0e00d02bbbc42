//===- LowerTensorMapArgs.cpp - TMA tensor maps as kernel pointers --------===//
//
// See Codegen/NVPTX/Passes.td (GPULowerTensorMapArgsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPULOWERTENSORMAPARGSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

struct GPULowerTensorMapArgsPass
    : blockc::nvptx::impl::GPULowerTensorMapArgsPassBase<
          GPULowerTensorMapArgsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Type ptrType = LLVM::LLVMPointerType::get(&getContext());
    // Kernels: each tensor-map argument becomes a pointer, cast back in the
    // entry block for the body's uses.
    DenseMap<Operation *, SmallVector<unsigned>> rewritten;
    module.walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel() || func.isExternal())
        return;
      SmallVector<unsigned> positions;
      Block &entry = func.getBody().front();
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      for (BlockArgument arg : func.getArguments()) {
        auto type = dyn_cast<nvgpu::TensorMapDescriptorType>(arg.getType());
        if (!type)
          continue;
        positions.push_back(arg.getArgNumber());
        arg.setType(ptrType);
        auto cast = UnrealizedConversionCastOp::create(b, func.getLoc(), type,
                                                       ValueRange{arg});
        arg.replaceAllUsesExcept(cast.getResult(0), cast);
      }
      if (positions.empty())
        return;
      SmallVector<Type> inputs(func.getFunctionType().getInputs());
      for (unsigned position : positions)
        inputs[position] = ptrType;
      func.setFunctionType(FunctionType::get(
          &getContext(), inputs, func.getFunctionType().getResults()));
      rewritten[func] = std::move(positions);
    });
    if (rewritten.empty())
      return;
    // Launches of those kernels pass the host's map as a pointer.
    SymbolTableCollection symbols;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto func = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      auto it = func ? rewritten.find(func) : rewritten.end();
      if (it == rewritten.end())
        return;
      OpBuilder b(launch);
      for (unsigned position : it->second) {
        OpOperand &operand = launch.getKernelOperandsMutable()[position];
        operand.set(UnrealizedConversionCastOp::create(b, launch.getLoc(),
                                                       ptrType, operand.get())
                        .getResult(0));
      }
    });
  }
};

} // namespace
