//===- NormGuard.cpp - the overflow guard of RMSNorm and LayerNorm --------===//
//
// See include/blockc/Codegen/Common/NormGuard.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/NormGuard.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <limits>

using namespace mlir;

Value blockc::buildNormInvScale(OpBuilder &b, Location loc, Value maxAbs) {
  auto f32 = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc,
                                     b.getF32FloatAttr(static_cast<float>(v)));
  };
  Value big = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, maxAbs,
                                    f32(0x1p50));
  Value finite =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, maxAbs,
                            f32(std::numeric_limits<double>::infinity()));
  Value scale = arith::SelectOp::create(
      b, loc, arith::AndIOp::create(b, loc, big, finite), maxAbs, f32(1.0));
  return arith::DivFOp::create(b, loc, f32(1.0), scale);
}
