//===- RoPE.cpp - the cos/sin tables of rotary position embeddings --------===//
//
// See include/blockc/Codegen/Common/RoPE.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/RoPE.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;

std::pair<Value, Value> blockc::buildRoPETables(OpBuilder &b, Location loc,
                                                const RoPEShape &shape,
                                                Value sizeSource, unsigned tDim,
                                                Value offset, Value positions) {
  MLIRContext *ctx = b.getContext();
  int64_t headDim = shape.headDim, rotary = shape.rotary, half = rotary / 2;
  bool interleaved = shape.interleaved;
  double logTheta = std::log(shape.theta);
  auto index = [&](OpBuilder &nb, Location l, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(nb, l, v);
  };
  if (!offset)
    offset = index(b, loc, 0);

  // inv_freq per element j of a head, folded at compile time (f64):
  // theta^(-2i/R) with i the pair index of j, and 0 beyond the rotary dim.
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  SmallVector<double> invFreq(headDim, 0.0);
  for (int64_t jj = 0; jj < rotary; ++jj) {
    int64_t i = interleaved ? jj / 2 : jj % half;
    invFreq[jj] = std::exp(-2.0 * static_cast<double>(i) / rotary * logTheta);
  }
  auto invFreqType = RankedTensorType::get({headDim}, f64);
  Value invFreqTable = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(invFreqType, ArrayRef<double>(invFreq)));

  SmallVector<OpFoldResult> sizes = {
      tensor::getMixedSize(b, loc, sizeSource, tDim), b.getIndexAttr(headDim)};
  Value cosInit = tensor::EmptyOp::create(b, loc, sizes, f32);
  Value sinInit = tensor::EmptyOp::create(b, loc, sizes, f32);
  auto tableType = cast<RankedTensorType>(cosInit.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap column = AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx);
  auto tables = linalg::GenericOp::create(
      b, loc, TypeRange{tableType, tableType}, ValueRange{invFreqTable},
      ValueRange{cosInit, sinInit}, ArrayRef<AffineMap>{column, id, id},
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        auto f64Const = [&](double v) -> Value {
          return arith::ConstantOp::create(nb, l, nb.getF64FloatAttr(v));
        };
        auto f32Const = [&](double v) -> Value {
          return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(float(v)));
        };
        Value t = linalg::IndexOp::create(nb, l, 0);
        Value j = linalg::IndexOp::create(nb, l, 1);
        Value pos = positions
                        ? arith::IndexCastOp::create(
                              nb, l, nb.getIndexType(),
                              tensor::ExtractOp::create(nb, l, positions,
                                                        ValueRange{t}))
                              .getResult()
                        : arith::AddIOp::create(nb, l, t, offset).getResult();
        Value posF = arith::SIToFPOp::create(
            nb, l, f64,
            arith::IndexCastOp::create(nb, l, nb.getI64Type(), pos));
        Value angle = arith::MulFOp::create(nb, l, posF, args[0]);
        // r = angle - 2 pi k, k = round(angle / 2 pi); 2 pi split in a high
        // part (exact product with k) and a low correction.
        constexpr double kTwoPiHi = 6.28318530717958623200;
        constexpr double kTwoPiLo = 2.44929359829470635445e-16;
        Value k = math::RoundEvenOp::create(
            nb, l,
            arith::MulFOp::create(nb, l, angle, f64Const(1.0 / kTwoPiHi)));
        Value r = arith::SubFOp::create(
            nb, l, angle, arith::MulFOp::create(nb, l, k, f64Const(kTwoPiHi)));
        r = arith::SubFOp::create(
            nb, l, r, arith::MulFOp::create(nb, l, k, f64Const(kTwoPiLo)));
        Value r32 = arith::TruncFOp::create(nb, l, f32, r);
        Value c = math::CosOp::create(nb, l, r32);
        Value sn = math::SinOp::create(nb, l, r32);
        Value negate =
            interleaved
                ? arith::CmpIOp::create(
                      nb, l, arith::CmpIPredicate::eq,
                      arith::RemUIOp::create(nb, l, j, index(nb, l, 2)),
                      index(nb, l, 0))
                : arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, j,
                                        index(nb, l, half));
        sn = arith::SelectOp::create(nb, l, negate,
                                     arith::NegFOp::create(nb, l, sn), sn);
        Value inRot = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, j,
                                            index(nb, l, rotary));
        c = arith::SelectOp::create(nb, l, inRot, c, f32Const(1.0));
        sn = arith::SelectOp::create(nb, l, inRot, sn, f32Const(0.0));
        linalg::YieldOp::create(nb, l, ValueRange{c, sn});
      });
  return {tables.getResult(0), tables.getResult(1)};
}
