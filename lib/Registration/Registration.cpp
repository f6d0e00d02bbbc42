//===- Registration.cpp - register dialects, passes and pipelines ---------===//
//
// The single place that decides what every blockc tool can parse and run.
//
//===----------------------------------------------------------------------===//

#include "blockc/InitAllDialects.h"

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/Passes.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Conversion/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"
#include "blockc/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void blockc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<blockc::transformer::TransformerDialect,
                  blockc::codegen::CodegenDialect>();
  // The pipelines go through linalg, bufferization, memref, scf, vector,
  // math and LLVM; registering every upstream dialect with its interface
  // models keeps blockc-opt able to parse any intermediate stage.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // LLVM IR translation of every dialect (including gpu.module/gpu.binary
  // offloading) and the NVVM target used by gpu-module-to-binary.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

void blockc::registerAllPasses() {
  mlir::registerAllPasses();
  blockc::transformer::registerTransformerPasses();
  blockc::registerBlockcConversionPasses();
  blockc::registerBlockcCommonPasses();
  blockc::nvptx::registerBlockcNVPTXPasses();
  blockc::cpu::registerBlockcCPUPasses();
  blockc::registerBlockcPipelines();
}
