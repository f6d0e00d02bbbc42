//===- Outlining.h - outlined functions and their equality ------*- C++ -*-===//
//
// What the passes that move code into private functions share: the function
// they create (private, internal linkage, never inlined), which captured
// values they clone instead of passing, and when two such functions are the
// same function under two names (blockc-merge-identical-functions and
// blockc-cpu-outline-micro-kernels keep one of each).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_COMMON_OUTLINING_H
#define BLOCKC_CODEGEN_COMMON_OUTLINING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/Hashing.h"

namespace blockc {

/// A value an outlined body clones instead of taking it as an argument: the
/// result of a ConstantLike op without operands or regions.
bool isClonableConstant(mlir::Value v);

/// A new private function `name` (uniqued in `symbols`) of `inputs` to no
/// results, with an entry block, placed after `after`. It has internal
/// linkage (no symbol in the object) and is never inlined (`no_inline`, and
/// `passthrough = ["noinline"]`, which func-to-llvm carries to LLVM).
mlir::func::FuncOp
createOutlinedFunction(mlir::OpBuilder &b, mlir::Location loc,
                       llvm::StringRef name, mlir::TypeRange inputs,
                       mlir::Operation *after, mlir::SymbolTable &symbols);

/// A hash of `func`'s type, argument and result attributes and body that
/// equal functions share: every op's name, attributes and types, not the
/// values it reads.
llvm::hash_code hashFunctionBody(mlir::func::FuncOp func);

/// `a` and `b` are the same function under different names: same type,
/// attributes (the symbol name and visibility aside) and structurally equal
/// bodies, locations ignored.
bool areEquivalentFunctions(mlir::func::FuncOp a, mlir::func::FuncOp b);

} // namespace blockc

#endif // BLOCKC_CODEGEN_COMMON_OUTLINING_H
