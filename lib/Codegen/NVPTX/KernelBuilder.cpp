//===- KernelBuilder.cpp - 16-byte vector accesses of NVPTX kernels -------===//
//
// See include/blockc/Codegen/NVPTX/KernelBuilder.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/KernelBuilder.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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
