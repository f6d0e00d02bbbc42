//===- FoldEmpty.cpp - fold transformer ops with empty results ------------===//
//
// A transformer op whose result has a static zero dimension computes no
// element: its result is replaced by tensor.empty of the same type, before
// any kernel pass sees a zero-size tile.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc::transformer {
#define GEN_PASS_DEF_TRANSFORMERFOLDEMPTYPASS
#include "blockc/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace blockc::transformer

using namespace mlir;
using namespace blockc::transformer;

namespace {

/// The sizes of `op`'s single result when it is statically empty: static
/// dimensions as they are, dynamic ones read from the same dimension of the
/// first operand (every transformer op keeps the leading [B, T, ...]
/// dimensions of its input). Fails when the op does not qualify.
FailureOr<SmallVector<Value>> emptyResultDynamicSizes(OpBuilder &b,
                                                      Operation *op) {
  if (op->getNumResults() != 1 || op->getNumOperands() == 0 ||
      isa<KVCacheAppendOp, TokenPositionsOp, PagedKVWriteOp, PagedSDPAOp>(op))
    return failure();
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto inputType = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!type || !inputType || !llvm::is_contained(type.getShape(), 0))
    return failure();
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size) &&
        (i >= static_cast<size_t>(inputType.getRank()) ||
         !inputType.isDynamicDim(i)))
      return failure();
  SmallVector<Value> dynamicSizes;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      dynamicSizes.push_back(
          tensor::DimOp::create(b, op->getLoc(), op->getOperand(0), i));
  return dynamicSizes;
}

struct TransformerFoldEmptyPass
    : blockc::transformer::impl::TransformerFoldEmptyPassBase<
          TransformerFoldEmptyPass> {
  using Base::Base;

  void runOnOperation() override {
    Dialect *dialect = getContext().getLoadedDialect<TransformerDialect>();
    SmallVector<Operation *> candidates;
    getOperation()->walk([&](Operation *op) {
      if (op->getDialect() == dialect)
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : candidates) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> sizes =
          emptyResultDynamicSizes(rewriter, op);
      if (failed(sizes))
        continue;
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      Value empty =
          tensor::EmptyOp::create(rewriter, op->getLoc(), type.getShape(),
                                  type.getElementType(), *sizes);
      rewriter.replaceOp(op, empty);
      ++numFolded;
    }
  }
};

} // namespace
