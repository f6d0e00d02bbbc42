//===- FragmentOps.h - warpgroup accumulator fragments ----------*- C++ -*-===//
//
// blockc_codegen.accumulator_to_fragment and
// blockc_codegen.fragment_to_accumulator (FragmentOps.td), apart from
// CodegenDialect.h so that only their users include the nvgpu dialect.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_CODEGEN_IR_FRAGMENTOPS_H
#define BLOCKC_DIALECT_CODEGEN_IR_FRAGMENTOPS_H

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

#define GET_OP_CLASSES
#include "blockc/Dialect/Codegen/IR/FragmentOps.h.inc"

#endif // BLOCKC_DIALECT_CODEGEN_IR_FRAGMENTOPS_H
