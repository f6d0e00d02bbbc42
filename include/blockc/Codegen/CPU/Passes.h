//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
//
// Declarations generated from Codegen/CPU/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_CPU_PASSES_H
#define BLOCKC_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace blockc::cpu {

/// The tile-size dictionary {rows, cols, vector_width, block_n, block_k}
/// that blockc-cpu-select-tiles attaches and blockc-cpu-lower-linear reads.
inline constexpr llvm::StringLiteral kCpuTilesAttrName = "blockc.cpu_tiles";

/// Marks the scf.forall of a projection kernel built by
/// blockc-cpu-lower-linear (its shared output starts as the kernel's init).
inline constexpr llvm::StringLiteral kLinearKernelAttr = "blockc.linear_kernel";
/// Projections with the same value of this integer attribute are lowered by
/// blockc-cpu-lower-linear into one kernel (see blockc-cpu-group-projections).
inline constexpr llvm::StringLiteral kHorizontalGroupAttrName =
    "blockc.horizontal_group";

#define GEN_PASS_DECL
#include "blockc/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "blockc/Codegen/CPU/Passes.h.inc"

} // namespace blockc::cpu

#endif // BLOCKC_CODEGEN_CPU_PASSES_H
