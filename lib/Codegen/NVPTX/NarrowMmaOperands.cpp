//===- NarrowMmaOperands.cpp - 16-bit inputs for tensor-core matmuls ------===//
//
// Replaces the f32 input of a contraction configured for tensor cores by its
// exact truncation to the weight's 16-bit type. See Codegen/NVPTX/Passes.td
// (GPUNarrowMmaOperandsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/KernelMatchers.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUNARROWMMAOPERANDSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using namespace blockc::codegen;

namespace {

/// Replaces `operand`'s value by its truncation to `type` and widens the
/// matching block argument in the body.
void narrow(linalg::LinalgOp op, OpOperand &operand, Type type) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value value = operand.get();
  auto valueType = cast<RankedTensorType>(value.getType());
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, value), type);
  AffineMap identity = b.getMultiDimIdentityMap(valueType.getRank());
  SmallVector<utils::IteratorType> parallel(valueType.getRank(),
                                            utils::IteratorType::parallel);
  auto truncation = linalg::GenericOp::create(
      b, loc, TypeRange{empty.getType()}, ValueRange{value}, ValueRange{empty},
      ArrayRef<AffineMap>{identity, identity}, parallel,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value narrowed = arith::TruncFOp::create(nb, nloc, type, args[0]);
        linalg::YieldOp::create(nb, nloc, narrowed);
      });
  operand.set(truncation.getResult(0));
  BlockArgument arg = op.getMatchingBlockArgument(&operand);
  arg.setType(type);
  OpBuilder body = OpBuilder::atBlockBegin(op.getBlock());
  auto widened = arith::ExtFOp::create(body, loc, b.getF32Type(), arg);
  arg.replaceAllUsesExcept(widened, widened);
}

struct GPUNarrowMmaOperandsPass
    : blockc::nvptx::impl::GPUNarrowMmaOperandsPassBase<
          GPUNarrowMmaOperandsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, OpOperand *>> work;
    WalkResult walk =
        getOperation().walk([&](linalg::LinalgOp op) {
          if (!op->hasAttr(CodegenDialect::kGpuMmaTilesAttrName) ||
              !op.hasPureTensorSemantics())
            return WalkResult::advance();
          bool allSixteen = llvm::all_of(op.getDpsInputs(), [](Value v) {
            Type t = getElementTypeOrSelf(v.getType());
            return t.isBF16() || t.isF16();
          });
          // Two f32 inputs: a TF32 contraction (nothing to narrow).
          if (allSixteen || blockc::nvptx::isTF32MatmulCandidate(op))
            return WalkResult::advance();
          OpOperand *operand = blockc::nvptx::getNarrowableMatmulOperand(op);
          if (!operand) {
            op->emitOpError()
                << "has '" << CodegenDialect::kGpuMmaTilesAttrName
                << "' but is not a contraction of a 16-bit weight with an f32 "
                   "input known to hold values of the weight's type";
            return WalkResult::interrupt();
          }
          work.push_back({op, operand});
          return WalkResult::advance();
        });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (auto [op, operand] : work) {
      OpOperand &other =
          op->getOpOperand(operand->getOperandNumber() == 0 ? 1 : 0);
      narrow(op, *operand, getElementTypeOrSelf(other.get().getType()));
      ++numNarrowed;
    }
  }
};

} // namespace
