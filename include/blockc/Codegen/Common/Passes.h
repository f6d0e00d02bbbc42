//===- Passes.h - code generation passes shared by the targets --*- C++ -*-===//
//
// Declarations generated from Codegen/Common/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_COMMON_PASSES_H
#define BLOCKC_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace blockc {

#define GEN_PASS_DECL
#include "blockc/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "blockc/Codegen/Common/Passes.h.inc"

} // namespace blockc

#endif // BLOCKC_CODEGEN_COMMON_PASSES_H
