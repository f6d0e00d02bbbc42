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

#include "mlir/Conversion/MPIToLLVM/MPIToLLVM.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace {

/// The memory effects of mpi.allreduce, which upstream does not declare:
/// it reads its send buffer and writes its receive buffer. The ownership-
/// based buffer deallocation rejects ops with unknown effects, and the
/// all-reduce of a tensor-parallel block (convert-shard-to-mpi) runs on
/// buffers that bufferization allocated.
struct AllReduceEffects
    : mlir::MemoryEffectOpInterface::ExternalModel<AllReduceEffects,
                                                   mlir::mpi::AllReduceOp> {
  void getEffects(mlir::Operation *op,
                  llvm::SmallVectorImpl<mlir::SideEffects::EffectInstance<
                      mlir::MemoryEffects::Effect>> &effects) const {
    auto allReduce = mlir::cast<mlir::mpi::AllReduceOp>(op);
    effects.emplace_back(mlir::MemoryEffects::Read::get(),
                         &allReduce.getSendbufMutable());
    effects.emplace_back(mlir::MemoryEffects::Write::get(),
                         &allReduce.getRecvbufMutable());
  }
};

} // namespace

void blockc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<blockc::transformer::TransformerDialect,
                  blockc::codegen::CodegenDialect>();
  // The pipelines go through linalg, bufferization, memref, scf, vector,
  // math and LLVM; registering every upstream dialect with its interface
  // models keeps blockc-opt able to parse any intermediate stage.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // convert-to-llvm{filter-dialects=mpi} of tensor-parallel modules.
  mlir::mpi::registerConvertMPIToLLVMInterface(registry);
  registry.addExtension(+[](mlir::MLIRContext *ctx, mlir::mpi::MPIDialect *) {
    mlir::mpi::AllReduceOp::attachInterface<AllReduceEffects>(*ctx);
  });
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
