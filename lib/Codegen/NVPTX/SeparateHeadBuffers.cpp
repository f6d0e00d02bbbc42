//===- SeparateHeadBuffers.cpp - q, k, v results in buffers of their own --===//
//
// Gives a projection's per-head result (q, k, v: the epilogue generic whose
// result is split into [H, D] heads) an allocation of its own before
// bufferization, so that its buffer is not shared with other values of the
// same shape. See Codegen/NVPTX/Passes.td (GPUSeparateHeadBuffersPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUSEPARATEHEADBUFFERSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

/// Whether `v` is split into heads: a view of it as [M..., H, D] (an
/// expand_shape of its last dimension into two) reads it.
bool isSplitIntoHeads(Value v) {
  for (Operation *user : v.getUsers()) {
    auto expand = dyn_cast<tensor::ExpandShapeOp>(user);
    if (!expand)
      continue;
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    if (groups.empty() || groups.back().size() != 2)
      continue;
    if (llvm::all_of(
            ArrayRef(groups).drop_back(),
            [](const ReassociationIndices &g) { return g.size() == 1; }))
      return true;
  }
  return false;
}

/// The init of `op` when `op` is a projection's epilogue generic whose
/// result is split into heads and whose init is an empty tensor something
/// else also starts from.
OpOperand *sharedHeadInit(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op.getNumLoops() != op.getNumParallelLoops())
    return nullptr;
  OpOperand *init = op.getDpsInitOperand(0);
  auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
  if (!empty || empty->hasOneUse() || op.payloadUsesValueFromOperand(init))
    return nullptr;
  bool readsContraction = llvm::any_of(op.getDpsInputs(), [](Value in) {
    auto producer = in.getDefiningOp<linalg::LinalgOp>();
    return producer && linalg::isaContractionOpInterface(producer);
  });
  if (!readsContraction || !isSplitIntoHeads(op->getResult(0)))
    return nullptr;
  return init;
}

struct GPUSeparateHeadBuffersPass
    : blockc::nvptx::impl::GPUSeparateHeadBuffersPassBase<
          GPUSeparateHeadBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<OpOperand *> inits;
    getOperation().walk([&](linalg::GenericOp op) {
      if (OpOperand *init = sharedHeadInit(op))
        inits.push_back(init);
    });
    for (OpOperand *init : inits) {
      auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
      OpBuilder b(init->getOwner());
      Value own = bufferization::AllocTensorOp::create(
          b, empty.getLoc(), empty.getType(), empty.getDynamicSizes());
      init->set(own);
      ++numSeparated;
    }
  }
};

} // namespace
