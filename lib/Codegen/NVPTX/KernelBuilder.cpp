//===- KernelBuilder.cpp - shared pieces of the NVPTX kernels -------------===//
//
// See include/blockc/Codegen/NVPTX/KernelBuilder.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/KernelBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace blockc::nvptx;

Value KernelBuilder::contiguousView(Value buffer, int64_t width, Value &ok) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t rank = type.getRank();
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value bits = meta.getOffset();
  for (int64_t i = 0; i + 1 < rank; ++i)
    bits = arith::OrIOp::create(b, loc, bits, meta.getStrides()[i]);
  ok = arith::AndIOp::create(b, loc, ok, eq(meta.getStrides()[rank - 1], 1));
  ok = arith::AndIOp::create(b, loc, ok, eq(rem(bits, width), 0));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  ok = arith::AndIOp::create(b, loc, ok, eq(rem(base, 16), 0));
  auto [strides, offset] = type.getStridesAndOffset();
  if (strides.back() == 1)
    return buffer;
  SmallVector<int64_t> viewStrides(rank, ShapedType::kDynamic);
  viewStrides.back() = 1;
  auto viewType = MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, viewStrides),
      type.getMemorySpace());
  SmallVector<OpFoldResult> sizes, strideValues;
  for (int64_t i = 0; i < rank; ++i) {
    sizes.push_back(type.isDynamicDim(i)
                        ? OpFoldResult(meta.getSizes()[i])
                        : OpFoldResult(b.getIndexAttr(type.getDimSize(i))));
    strideValues.push_back(i + 1 == rank ? OpFoldResult(b.getIndexAttr(1))
                                         : OpFoldResult(meta.getStrides()[i]));
  }
  return memref::ReinterpretCastOp::create(
      b, loc, viewType, buffer, meta.getOffset(), sizes, strideValues);
}

SmallVector<Value> KernelBuilder::loadVector(Value view, ValueRange indices,
                                             int64_t width) {
  auto type = VectorType::get(
      {width}, cast<MemRefType>(view.getType()).getElementType());
  Value vec =
      vector::LoadOp::create(b, loc, type, view, indices,
                             /*nontemporal=*/false, llvm::MaybeAlign(16));
  SmallVector<Value> elements;
  for (int64_t j = 0; j < width; ++j)
    elements.push_back(
        vector::ExtractOp::create(b, loc, vec, ArrayRef<int64_t>{j}));
  return elements;
}

void KernelBuilder::storeVector(ValueRange elements, Value view,
                                ValueRange indices) {
  auto type =
      VectorType::get({static_cast<int64_t>(elements.size())},
                      cast<MemRefType>(view.getType()).getElementType());
  Value vec = vector::FromElementsOp::create(b, loc, type, elements);
  vector::StoreOp::create(b, loc, vec, view, indices, /*nontemporal=*/false,
                          llvm::MaybeAlign(16));
}

Value KernelBuilder::dynamicSharedMemory() {
  auto type = MemRefType::get(
      {ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  return gpu::DynamicSharedMemoryOp::create(b, loc, type);
}

Value KernelBuilder::alignedDynamicSharedMemory(int64_t alignment, Value &pad) {
  Value base = dynamicSharedMemory();
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, base);
  pad = rem(
      arith::SubIOp::create(b, loc, idx(alignment), rem(address, alignment)),
      alignment);
  return base;
}

KernelBuilder::SoftmaxStep
KernelBuilder::onlineSoftmax(int64_t perRow,
                             function_ref<Value(int64_t, int64_t)> score,
                             ArrayRef<Value> keyLimit, Value firstKey,
                             Value scale, MutableArrayRef<Value> maxAndSum) {
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  auto maximum = [&](Value x, Value y) -> Value {
    return arith::MaximumFOp::create(b, loc, x, y);
  };
  auto plus = [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(b, loc, x, y);
  };
  size_t rows = keyLimit.size();
  SoftmaxStep step;
  for (size_t r = 0; r < rows; ++r) {
    Value visible = arith::SubIOp::create(b, loc, keyLimit[r], firstKey);
    SmallVector<Value> vals;
    Value rowMax = negInf;
    for (int64_t k = 0; k < perRow; ++k) {
      Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          idx(8 * (k / 2) + k % 2), visible);
      Value v = arith::SelectOp::create(
          b, loc, valid,
          arith::MulFOp::create(b, loc, score(static_cast<int64_t>(r), k),
                                scale),
          negInf);
      vals.push_back(v);
      rowMax = maximum(rowMax, v);
    }
    rowMax = xorReduce(rowMax, {1, 2}, maximum);
    Value m = maxAndSum[r], l = maxAndSum[rows + r];
    Value mNew = maximum(m, rowMax);
    Value none =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, negInf);
    Value shift = arith::SelectOp::create(b, loc, none, f32(0), mNew);
    Value alpha =
        math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, m, shift));
    Value sum = f32(0);
    SmallVector<Value> p;
    for (Value v : vals) {
      Value e =
          math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, v, shift));
      p.push_back(e);
      sum = plus(sum, e);
    }
    sum = xorReduce(sum, {1, 2}, plus);
    maxAndSum[r] = mNew;
    maxAndSum[rows + r] = math::FmaOp::create(b, loc, l, alpha, sum);
    step.p.push_back(std::move(p));
    step.alpha.push_back(alpha);
  }
  return step;
}

void blockc::nvptx::KernelBuilder::storeRounded(Value v, Value out,
                                                ValueRange at) {
  Type type = cast<MemRefType>(out.getType()).getElementType();
  if (type != v.getType())
    v = arith::TruncFOp::create(b, loc, type, v);
  memref::StoreOp::create(b, loc, v, out, at);
}

Value blockc::nvptx::KernelBuilder::reciprocalOrZero(Value l) {
  Value zero = f32(0);
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zero);
  return arith::SelectOp::create(
      b, loc, positive, arith::DivFOp::create(b, loc, f32(1.0), l), zero);
}
