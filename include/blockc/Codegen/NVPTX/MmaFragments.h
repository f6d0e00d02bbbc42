//===- MmaFragments.h - helpers for mma.sync fragments ----------*- C++ -*-===//
//
// Small builders shared by the tensor-core kernels of blockc-gpu-tile-matmul
// and blockc-gpu-lower-sdpa (docs/GPU.md): fragments are the vectors of
// nvgpu.ldmatrix / nvgpu.mma.sync, one row per 32-bit register.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_NVPTX_MMAFRAGMENTS_H
#define BLOCKC_CODEGEN_NVPTX_MMAFRAGMENTS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace blockc::nvptx {

/// A zero vector of `type`.
inline mlir::Value zeroVector(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::VectorType type) {
  return mlir::arith::ConstantOp::create(
      b, loc, type,
      mlir::DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
}

/// The vector<2xRxT> B fragment of rows r and r + 1 of an ldmatrix.x4
/// result (vector<4xRxT>, R = 2 16-bit or 1 32-bit elements per register):
/// b0 and b1 of one n8 tile.
inline mlir::Value rowPair(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value fragment, int64_t r) {
  auto type = mlir::cast<mlir::VectorType>(fragment.getType());
  mlir::Value pair = zeroVector(
      b, loc,
      mlir::VectorType::get({2, type.getDimSize(1)}, type.getElementType()));
  for (int64_t i = 0; i < 2; ++i)
    pair = mlir::vector::InsertOp::create(
        b, loc, mlir::vector::ExtractOp::create(b, loc, fragment, r + i), pair,
        i);
  return pair;
}

} // namespace blockc::nvptx

#endif // BLOCKC_CODEGEN_NVPTX_MMAFRAGMENTS_H
