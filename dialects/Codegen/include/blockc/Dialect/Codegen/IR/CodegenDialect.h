//===- CodegenDialect.h - blockc_codegen dialect ----------------*- C++ -*-===//
//
// Declares the `blockc_codegen` dialect, its enums and its attributes: the
// typed code generation configuration that heuristic passes write and
// lowering passes read.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_CODEGEN_IR_CODEGENDIALECT_H
#define BLOCKC_DIALECT_CODEGEN_IR_CODEGENDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "blockc/Dialect/Codegen/IR/GPUChips.h"

#include "blockc/Dialect/Codegen/IR/CodegenDialect.h.inc"
#include "blockc/Dialect/Codegen/IR/CodegenEnums.h.inc"

#include "blockc/Dialect/Codegen/IR/CodegenAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "blockc/Dialect/Codegen/IR/CodegenAttrs.h.inc"

#define GET_OP_CLASSES
#include "blockc/Dialect/Codegen/IR/CodegenOps.h.inc"

#endif // BLOCKC_DIALECT_CODEGEN_IR_CODEGENDIALECT_H
