//===- LoweringUtils.cpp - shared linalg-building helpers -----------------===//
//
// See LoweringUtils.h.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using mlir::utils::IteratorType;

namespace blockc::detail {

void yield(OpBuilder &b, Location loc, ValueRange values) {
  linalg::YieldOp::create(b, loc, values);
}
void yield(OpBuilder &b, Location loc, Value value) {
  linalg::YieldOp::create(b, loc, ValueRange{value});
}

Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value f64Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value filledTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   Value value) {
  Value empty = emptyTensor(b, loc, sizes, value.getType());
  return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{empty})
      .getResult(0);
}

AffineMap identity(MLIRContext *ctx, unsigned rank) {
  return AffineMap::getMultiDimIdentityMap(rank, ctx);
}

AffineMap projection(MLIRContext *ctx, unsigned numLoops,
                     ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

AffineMap dropLast(MLIRContext *ctx, unsigned numLoops) {
  SmallVector<unsigned> dims;
  for (unsigned i = 0; i + 1 < numLoops; ++i)
    dims.push_back(i);
  return projection(ctx, numLoops, dims);
}

SmallVector<IteratorType> iterators(unsigned parallel, unsigned reduction) {
  SmallVector<IteratorType> its(parallel, IteratorType::parallel);
  its.append(reduction, IteratorType::reduction);
  return its;
}

Value reciprocalOfLastDim(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t d = type.getShape().back();
  if (!ShapedType::isDynamic(d))
    return f32Const(b, loc, 1.0 / static_cast<double>(d));
  Value dim = tensor::DimOp::create(b, loc, v, type.getRank() - 1);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), dim);
  Value asF = arith::SIToFPOp::create(b, loc, b.getF32Type(), asInt);
  return arith::DivFOp::create(b, loc, f32Const(b, loc, 1.0), asF);
}

Value rowReduce(
    OpBuilder &b, Location loc, Value x, ValueRange extraInputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> term,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  sizes.pop_back();
  Value init = filledTensor(b, loc, sizes, f32Const(b, loc, 0.0));
  SmallVector<Value> inputs = {x};
  inputs.append(extraInputs.begin(), extraInputs.end());
  SmallVector<AffineMap> maps = {identity(ctx, rank)};
  for (size_t i = 0; i < extraInputs.size(); ++i)
    maps.push_back(dropLast(ctx, rank));
  maps.push_back(dropLast(ctx, rank));
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             iterators(rank - 1, 1),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value t = term(nb, nloc, args.drop_back());
               Value acc =
                   combine ? combine(nb, nloc, args.back(), t)
                           : arith::AddFOp::create(nb, nloc, args.back(), t);
               yield(nb, nloc, acc);
             })
      .getResult(0);
}

Value mulAddContraction(OpBuilder &b, Location loc, Type resultType, Value lhs,
                        Value rhs, Value init, ArrayRef<AffineMap> maps,
                        ArrayRef<IteratorType> iteratorTypes) {
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{lhs, rhs},
             ValueRange{init}, maps, iteratorTypes,
             [](OpBuilder &nb, Location l, ValueRange a) {
               // A narrower operand (a linear's bf16/f16 weight) is widened
               // exactly to the accumulator's type.
               Type acc = a[2].getType();
               auto widen = [&](Value v) -> Value {
                 return v.getType() == acc
                            ? v
                            : arith::ExtFOp::create(nb, l, acc, v).getResult();
               };
               Value p = arith::MulFOp::create(nb, l, widen(a[0]), widen(a[1]));
               yield(nb, l, arith::AddFOp::create(nb, l, a[2], p));
             })
      .getResult(0);
}

Value elementwise(OpBuilder &b, Location loc, Value sizeSource,
                  RankedTensorType resultType, ValueRange inputs,
                  ArrayRef<AffineMap> inputMaps,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  unsigned rank = resultType.getRank();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, sizeSource);
  Value init = emptyTensor(b, loc, sizes, resultType.getElementType());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(identity(b.getContext(), rank));
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
             iterators(rank, 0),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               yield(nb, nloc, body(nb, nloc, args.drop_back()));
             })
      .getResult(0);
}

} // namespace blockc::detail
