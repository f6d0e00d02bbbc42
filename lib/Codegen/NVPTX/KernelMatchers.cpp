//===- KernelMatchers.cpp - what the NVPTX kernel passes rewrite ----------===//
//
// The matchers shared by the kernel passes and blockc-gpu-select-tiles. See
// KernelMatchers.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/KernelMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

namespace {

/// True if the body of `op` is `yield out + in0 * in1` (either order).
bool isMulAddBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&body->front());
  auto add =
      dyn_cast_or_null<arith::AddFOp>(mul ? mul->getNextNode() : nullptr);
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!mul || !add || !yield || yield.getValues().size() != 1 ||
      yield.getValues()[0] != add.getResult())
    return false;
  Value a0 = body->getArgument(0), a1 = body->getArgument(1),
        acc = body->getArgument(2);
  bool mulOk = (mul.getLhs() == a0 && mul.getRhs() == a1) ||
               (mul.getLhs() == a1 && mul.getRhs() == a0);
  bool addOk = (add.getLhs() == acc && add.getRhs() == mul.getResult()) ||
               (add.getRhs() == acc && add.getLhs() == mul.getResult());
  return mulOk && addOk;
}

} // namespace

bool blockc::nvptx::isTiledMatmulCandidate(linalg::LinalgOp op) {
  if (op->getParentOfType<gpu::LaunchOp>())
    return false;
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMulAddBody(op))
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32() ||
        !op.getMatchingIndexingMap(&operand).isProjectedPermutation())
      return false;
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  return succeeded(dims) && dims->n.size() == 1 && dims->k.size() == 1 &&
         !dims->m.empty() &&
         dims->batch.size() + dims->m.size() + 2 == op.getNumLoops();
}

bool blockc::nvptx::isFusedAttentionCandidate(transformer::SDPAOp op) {
  RankedTensorType qType = op.getQuery().getType();
  int64_t d = qType.getDimSize(3);
  return qType.getElementType().isF32() && !ShapedType::isDynamic(d) &&
         d % kWarpSize == 0 && op.getValue().getType().getDimSize(3) == d &&
         !ShapedType::isDynamic(qType.getDimSize(2)) &&
         !ShapedType::isDynamic(op.getKey().getType().getDimSize(2));
}
