//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
//
// Declarations generated from Codegen/CPU/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_CPU_PASSES_H
#define BLOCKC_CODEGEN_CPU_PASSES_H

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"

namespace blockc::cpu {

// The configuration that blockc-cpu-select-tiles and
// blockc-cpu-group-projections write and the kernel passes read lives in the
// blockc_codegen dialect (blockc/Dialect/Codegen/IR/CodegenDialect.h):
// blockc_codegen.cpu_target, .linear_tiles, .horizontal_group and .kernel.

#define GEN_PASS_DECL
#include "blockc/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "blockc/Codegen/CPU/Passes.h.inc"

} // namespace blockc::cpu

#endif // BLOCKC_CODEGEN_CPU_PASSES_H
