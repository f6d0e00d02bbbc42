//===- KernelBuilder.h - index arithmetic for NVPTX kernel builders -*- C++
//-*-===//
//
// The builder and location every hand-built kernel of lib/Codegen/NVPTX
// carries (blockc-gpu-tile-matmul, blockc-gpu-lower-sdpa), with the index
// and f32 arithmetic they all emit.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_NVPTX_KERNELBUILDER_H
#define BLOCKC_CODEGEN_NVPTX_KERNELBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace blockc::nvptx {

struct KernelBuilder {
  mlir::OpBuilder &b;
  mlir::Location loc;

  mlir::Value idx(int64_t v) {
    return mlir::arith::ConstantIndexOp::create(b, loc, v);
  }
  mlir::Value f32(double v) {
    return mlir::arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(v)));
  }
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddIOp::create(b, loc, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulIOp::create(b, loc, x, y);
  }
  mlir::Value div(mlir::Value x, int64_t d) {
    return mlir::arith::DivUIOp::create(b, loc, x, idx(d));
  }
  mlir::Value rem(mlir::Value x, int64_t d) {
    return mlir::arith::RemUIOp::create(b, loc, x, idx(d));
  }
  /// Unsigned x < y on indices.
  mlir::Value lt(mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ult,
                                       x, y);
  }
};

} // namespace blockc::nvptx

#endif // BLOCKC_CODEGEN_NVPTX_KERNELBUILDER_H
