//===- WeightQuant.cpp - the rules of #transformer.weight_quant -----------===//

#include "blockc/Codegen/Common/WeightQuant.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value blockc::buildGroupAbsMax(OpBuilder &b, Location loc, Value w,
                               int64_t groupSize) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t n = type.getDimSize(0), k = type.getDimSize(1);
  int64_t groups = k / groupSize;
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type(), elem = type.getElementType();
  Value grouped = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({n, groups, groupSize}, elem), w,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value init =
      linalg::FillOp::create(
          b, loc, zero,
          tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{n, groups}, f32)
              .getResult())
          .getResult(0);
  AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
  AffineMap drop3 = AffineMap::get(
      3, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)}, ctx);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{grouped}, ValueRange{init},
             ArrayRef<AffineMap>{id3, drop3},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel,
                                           utils::IteratorType::reduction},
             [&](OpBuilder &nb, Location, ValueRange args) {
               Value x = args[0];
               if (elem != f32)
                 x = arith::ExtFOp::create(nb, loc, f32, x);
               Value a = math::AbsFOp::create(nb, loc, x);
               linalg::YieldOp::create(
                   nb, loc,
                   ValueRange{arith::MaximumFOp::create(nb, loc, args[1], a)});
             })
      .getResult(0);
}

Value blockc::buildRunAbsMax(OpBuilder &b, Location loc, Value x, int64_t run) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank(), k = type.getDimSize(rank - 1);
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type(), elem = type.getElementType();
  SmallVector<int64_t> runsShape(type.getShape().drop_back());
  runsShape.push_back(k / run);
  SmallVector<int64_t> expandedShape(runsShape);
  expandedShape.push_back(run);
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t i = 0; i + 1 < rank; ++i)
    reassoc.push_back({i});
  reassoc.push_back({rank - 1, rank});
  SmallVector<OpFoldResult> expandedSizes;
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i + 1 < rank; ++i) {
    if (type.isDynamicDim(i)) {
      Value d = tensor::DimOp::create(b, loc, x, i);
      expandedSizes.push_back(d);
      dynamic.push_back(d);
    } else {
      expandedSizes.push_back(b.getIndexAttr(type.getDimSize(i)));
    }
  }
  expandedSizes.push_back(b.getIndexAttr(k / run));
  expandedSizes.push_back(b.getIndexAttr(run));
  Value runs = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(expandedShape, elem), x, reassoc,
      expandedSizes);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value init =
      linalg::FillOp::create(
          b, loc, zero,
          tensor::EmptyOp::create(b, loc, runsShape, f32, dynamic).getResult())
          .getResult(0);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank + 1, ctx);
  AffineMap drop = id.dropResult(rank);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{runs}, ValueRange{init},
             ArrayRef<AffineMap>{id, drop}, iterators,
             [&](OpBuilder &nb, Location, ValueRange args) {
               Value v = args[0];
               if (elem != f32)
                 v = arith::ExtFOp::create(nb, loc, f32, v);
               Value a = math::AbsFOp::create(nb, loc, v);
               linalg::YieldOp::create(
                   nb, loc,
                   ValueRange{arith::MaximumFOp::create(nb, loc, args[1], a)});
             })
      .getResult(0);
}

Value blockc::buildQuantScale(OpBuilder &b, Location loc, Value amax,
                              int64_t level) {
  return arith::DivFOp::create(
      b, loc, amax,
      arith::ConstantOp::create(b, loc,
                                b.getF32FloatAttr(static_cast<float>(level))));
}

Value blockc::buildQuantLevel(OpBuilder &b, Location loc, Value x, Value s,
                              int64_t level) {
  auto f32 = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  Value q =
      math::RoundEvenOp::create(b, loc, arith::DivFOp::create(b, loc, x, s));
  q = arith::MinimumFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, q, f32(-double(level))),
      f32(double(level)));
  Value zero = f32(0.0);
  Value isZero =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, s, zero);
  return arith::SelectOp::create(b, loc, isZero, zero, q);
}
