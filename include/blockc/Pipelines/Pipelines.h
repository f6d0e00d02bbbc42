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

/// Stage 2 (CPU): linalg on tensors -> loops on buffers. The entry
/// function's tensor results become trailing out-parameters.
void buildCPUBufferizePipeline(mlir::OpPassManager &pm);

/// Stage 3 (CPU): loops on buffers -> LLVM dialect, with C-interface
/// wrappers (`_mlir_ciface_<name>`) on every function.
void buildCPULowerToLLVMPipeline(mlir::OpPassManager &pm);

/// All CPU stages.
void buildCPUPipeline(mlir::OpPassManager &pm);

/// Registers the pipelines above under their names
/// (blockc-lower-to-linalg-pipeline, blockc-cpu-bufferize-pipeline,
/// blockc-cpu-lower-to-llvm-pipeline, blockc-cpu-pipeline).
void registerBlockcPipelines();

} // namespace blockc

#endif // BLOCKC_PIPELINES_PIPELINES_H
