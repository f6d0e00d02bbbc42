//===- Passes.h - NVPTX code generation passes ------------------*- C++ -*-===//
//
// Declarations generated from Codegen/NVPTX/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_NVPTX_PASSES_H
#define BLOCKC_CODEGEN_NVPTX_PASSES_H

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace blockc::nvptx {

#define GEN_PASS_DECL
#include "blockc/Codegen/NVPTX/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "blockc/Codegen/NVPTX/Passes.h.inc"

/// The `blockc_codegen.gpu_target` of the module around `op`
/// (blockc-gpu-set-target), else the default chip of the architecture
/// `fallbackArch` (a pass option, for pass tests without the pipeline);
/// null if neither is known.
codegen::GPUTargetAttr getGPUTarget(mlir::Operation *op,
                                    llvm::StringRef fallbackArch);

} // namespace blockc::nvptx

#endif // BLOCKC_CODEGEN_NVPTX_PASSES_H
