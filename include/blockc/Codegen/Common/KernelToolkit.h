//===- KernelToolkit.h - what every hand-built kernel emits ----*- C++ -*-===//
//
// The builder and location that every kernel built by hand in
// lib/Codegen carries, with the constants, index arithmetic and loops they
// all emit. The CPU kernel builders (blockc-cpu-lower-linear,
// -lower-quantized-linear, -lower-sdpa, -lower-norms, -fuse-norm,
// -fuse-rope) and the NVPTX KernelBuilder derive from it and add what is
// their own (vector widths, fragments, warp shuffles).
//
// Loops are scf.for whose bodies are built with `b` itself (its insertion
// point moved into the body and restored after it), so a body can call the
// builder's helpers.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_COMMON_KERNELTOOLKIT_H
#define BLOCKC_CODEGEN_COMMON_KERNELTOOLKIT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace blockc {

struct KernelToolkit {
  mlir::OpBuilder &b;
  mlir::Location loc;

  /// Constants.
  mlir::Value idx(int64_t v) {
    return mlir::arith::ConstantIndexOp::create(b, loc, v);
  }
  mlir::Value i32(int64_t v) {
    return mlir::arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  mlir::Value f32(double v) {
    return mlir::arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(v)));
  }

  /// Index (or integer) arithmetic; comparisons are unsigned.
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddIOp::create(b, loc, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulIOp::create(b, loc, x, y);
  }
  mlir::Value minIdx(mlir::Value x, mlir::Value y) {
    return mlir::arith::MinUIOp::create(b, loc, x, y);
  }
  mlir::Value lt(mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ult,
                                       x, y);
  }
  mlir::Value eq(mlir::Value x, int64_t c) {
    return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::eq,
                                       x, idx(c));
  }
  mlir::Value select(mlir::Value c, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b, loc, c, x, y);
  }
  /// lo + ((hi - lo) / step) * step: the end of the whole steps from lo.
  mlir::Value fullEnd(mlir::Value lo, mlir::Value hi, int64_t step) {
    mlir::Value steps = mlir::arith::DivUIOp::create(
        b, loc, mlir::arith::SubIOp::create(b, loc, hi, lo), idx(step));
    return add(lo, mul(steps, idx(step)));
  }

  /// scf.for over [lo, hi) by `step` carrying `init`; `body(iv, iterArgs)`
  /// returns the values to yield. Returns the loop's results.
  llvm::SmallVector<mlir::Value>
  loop(mlir::Value lo, mlir::Value hi, mlir::Value step, mlir::ValueRange init,
       llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value,
                                                         mlir::ValueRange)>
           body) {
    auto forOp = mlir::scf::ForOp::create(
        b, loc, lo, hi, step, init,
        [&](mlir::OpBuilder &nb, mlir::Location, mlir::Value iv,
            mlir::ValueRange iter) {
          mlir::OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          mlir::scf::YieldOp::create(b, loc, body(iv, iter));
        });
    return llvm::SmallVector<mlir::Value>(forOp.getResults());
  }
  llvm::SmallVector<mlir::Value>
  loop(mlir::Value lo, mlir::Value hi, int64_t step, mlir::ValueRange init,
       llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value,
                                                         mlir::ValueRange)>
           body) {
    return loop(lo, hi, idx(step), init, body);
  }

  /// The loop above carrying nothing: `body(iv)` builds the iteration.
  void loop(mlir::Value lo, mlir::Value hi, mlir::Value step,
            llvm::function_ref<void(mlir::Value)> body) {
    loop(lo, hi, step, mlir::ValueRange{},
         [&](mlir::Value iv, mlir::ValueRange) {
           body(iv);
           return llvm::SmallVector<mlir::Value>{};
         });
  }
  /// Builds `body` inside `scf.if condition` (no results).
  void when(mlir::Value condition, llvm::function_ref<void()> body) {
    auto ifOp = mlir::scf::IfOp::create(b, loc, condition,
                                        /*withElseRegion=*/false);
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }

  /// The loop above carrying one value.
  mlir::Value
  forOne(mlir::Value lo, mlir::Value hi, mlir::Value step, mlir::Value init,
         llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> body) {
    return loop(lo, hi, step, mlir::ValueRange{init},
                [&](mlir::Value iv, mlir::ValueRange iter) {
                  return llvm::SmallVector<mlir::Value>{body(iv, iter[0])};
                })
        .front();
  }
  mlir::Value
  forOne(mlir::Value lo, mlir::Value hi, int64_t step, mlir::Value init,
         llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> body) {
    return forOne(lo, hi, idx(step), init, body);
  }
};

} // namespace blockc

#endif // BLOCKC_CODEGEN_COMMON_KERNELTOOLKIT_H
