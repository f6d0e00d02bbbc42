//===- WeightQuant.cpp - the rules of #transformer.weight_quant -----------===//

#include "blockc/Codegen/Common/WeightQuant.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value blockc::buildGroupAbsMax(OpBuilder &b, Location loc, Value w,
                               int64_t groupSize) {
  // A weight's groups are runs of its rows.
  return buildRunAbsMax(b, loc, w, groupSize);
}

Value blockc::buildRunAbsMax(OpBuilder &b, Location loc, Value x, int64_t run) {
  return buildRunReduction(
      b, loc, x, run, [](OpBuilder &nb, Location nloc, Value r, Value v) {
        return arith::MaximumFOp::create(nb, nloc, r,
                                         math::AbsFOp::create(nb, nloc, v));
      });
}

Value blockc::buildRunReduction(
    OpBuilder &b, Location loc, Value x, int64_t run,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
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
               if (isa<IntegerType>(elem))
                 v = arith::SIToFPOp::create(nb, loc, f32, v);
               else if (elem != f32)
                 v = arith::ExtFOp::create(nb, loc, f32, v);
               linalg::YieldOp::create(
                   nb, loc, ValueRange{combine(nb, loc, args[1], v)});
             })
      .getResult(0);
}

Value blockc::buildRunwise(
    OpBuilder &b, Location loc, Value x, Value amax, int64_t run,
    Type resultElem,
    function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < rank; ++i)
    if (type.isDynamicDim(i))
      dynamic.push_back(tensor::DimOp::create(b, loc, x, i));
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineExpr> runExprs(id.getResults());
  runExprs.back() = runExprs.back().floorDiv(run);
  AffineMap runMap = AffineMap::get(rank, 0, runExprs, ctx);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), resultElem, dynamic);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{x, amax}, ValueRange{init},
             ArrayRef<AffineMap>{id, runMap, id},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nloc, ValueRange{body(nb, nloc, args[0], args[1])});
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
