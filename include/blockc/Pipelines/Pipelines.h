//===- Pipelines.h - blockc pass pipelines ----------------------*- C++ -*-===//
//
// Builder functions for every named pipeline. The drivers (blockc,
// blockc-run) call these same functions, and registerBlockcPipelines()
// registers them by name, so `blockc-opt --blockc-cpu-pipeline` reproduces
// exactly what the driver runs (see docs/Pipelines.md).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_PIPELINES_PIPELINES_H
#define BLOCKC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace blockc {

/// Stage 1: transformer dialect -> linalg on tensors.
void buildLowerToLinalgPipeline(mlir::OpPassManager &pm);

/// Stage 1 (CPU): as buildLowerToLinalgPipeline, with transformer.linear
/// lowered to the register-tiled vector kernel (blockc-cpu-lower-linear).
void buildCPULowerToLinalgPipeline(mlir::OpPassManager &pm);

/// Stage 2 (CPU): linalg on tensors -> loops on buffers. The entry
/// function's tensor results become trailing out-parameters.
void buildCPUBufferizePipeline(mlir::OpPassManager &pm);

/// Stage 3 (CPU): loops on buffers -> LLVM dialect, with C-interface
/// wrappers (`_mlir_ciface_<name>`) on every function.
void buildCPULowerToLLVMPipeline(mlir::OpPassManager &pm);

/// All CPU stages.
void buildCPUPipeline(mlir::OpPassManager &pm);

/// Options of the NVPTX pipeline (the blockc driver's -gpu-arch,
/// -ptx-features and -emit flags map onto them).
struct NVPTXPipelineOptions
    : public mlir::PassPipelineOptions<NVPTXPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU architecture (sm_XX)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features; sm_90 needs +ptx80 or newer"),
      llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Embedded GPU binary: isa (PTX text, needs no CUDA "
                     "toolkit), bin (cubin, needs ptxas) or fatbin"),
      llvm::cl::init("isa")};
  Option<int> optLevel{*this, "opt-level",
                       llvm::cl::desc("NVVM optimisation level"),
                       llvm::cl::init(3)};
};

/// Stage 1 (NVPTX): as buildLowerToLinalgPipeline, with transformer.sdpa as
/// the fused attention kernel (blockc-gpu-lower-sdpa) and elementwise chains
/// fused (blockc-gpu-fuse-elementwise).
void buildNVPTXLowerToLinalgPipeline(mlir::OpPassManager &pm);

/// Stage 2 (NVPTX): linalg on tensors -> buffers in managed memory and
/// gpu.launch ops (parallel loops tiled into blocks of threads).
void buildNVPTXMapToGPUPipeline(mlir::OpPassManager &pm);

/// Stage 3 (NVPTX): kernel outlining into one gpu.module, NVVM, the GPU
/// binary and the host side in the LLVM dialect.
void buildNVPTXLowerToLLVMPipeline(mlir::OpPassManager &pm,
                                   const NVPTXPipelineOptions &options);

/// All NVPTX stages.
void buildNVPTXPipeline(mlir::OpPassManager &pm,
                        const NVPTXPipelineOptions &options);

/// Registers the pipelines above under their names
/// (blockc-lower-to-linalg-pipeline, blockc-cpu-bufferize-pipeline,
/// blockc-cpu-lower-to-llvm-pipeline, blockc-cpu-pipeline,
/// blockc-nvptx-map-to-gpu-pipeline, blockc-nvptx-lower-to-llvm-pipeline,
/// blockc-nvptx-pipeline).
void registerBlockcPipelines();

} // namespace blockc

#endif // BLOCKC_PIPELINES_PIPELINES_H
