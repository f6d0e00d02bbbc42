//===- TransformerToLinalg.cpp - transformer primitives to linalg ---------===//
//
// The --convert-transformer-to-linalg pass: lowers every primitive
// transformer op to linalg on tensors in destination-passing style. The
// patterns live in one file per op family (Norms.cpp, Linear.cpp,
// Attention.cpp, Elementwise.cpp, KVCache.cpp, Embedding.cpp); the structure
// of each lowering is documented in Conversion/Passes.td, the comments in
// those files explain the non-obvious choices.
//
//===----------------------------------------------------------------------===//

#include "blockc/Conversion/TransformerToLinalg/TransformerToLinalg.h"
#include "LoweringUtils.h"
#include "blockc/Conversion/Passes.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace blockc {
#define GEN_PASS_DEF_CONVERTTRANSFORMERTOLINALGPASS
#include "blockc/Conversion/Passes.h.inc"
} // namespace blockc

using namespace mlir;
using namespace blockc::transformer;

namespace {

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct ConvertTransformerToLinalgPass
    : blockc::impl::ConvertTransformerToLinalgPassBase<
          ConvertTransformerToLinalgPass> {
  void runOnOperation() override {
    // Diagnose what the patterns do not handle before converting, so that
    // the user sees why rather than a generic legalization failure.
    WalkResult walk = getOperation()->walk([](Operation *op) {
      if (!isa<TransformerDialect>(op->getDialect()))
        return WalkResult::advance();
      if (isa<BlockOp, AttentionOp, FFNOp>(op)) {
        op->emitOpError() << "is a composite op; run --transformer-decompose "
                             "before --convert-transformer-to-linalg";
        return WalkResult::interrupt();
      }
      // A KV cache append and an embedding copy whatever their type (an
      // embedding's position sum rounds once from f32); the others compute in
      // f32 (bf16/f16 models are widened by transformer-compute-in-f32),
      // a linear possibly from a 16-bit weight.
      if (isa<KVCacheAppendOp, EmbeddingOp, TokenPositionsOp, PagedKVWriteOp>(
              op))
        return WalkResult::advance();
      // Paged attention is a target kernel (the CPU's blockc-cpu-lower-sdpa);
      // no generic lowering exists.
      if (isa<PagedSDPAOp>(op)) {
        op->emitOpError() << "has no lowering for this target (paged "
                             "attention is lowered by the CPU pipeline)";
        return WalkResult::interrupt();
      }
      auto linear = dyn_cast<LinearOp>(op);
      for (OpOperand &operand : op->getOpOperands()) {
        auto shaped = dyn_cast<ShapedType>(operand.get().getType());
        // Integer operands (a rope's per-token positions) are indices.
        if (!shaped || shaped.getElementType().isF32() ||
            shaped.getElementType().isInteger())
          continue;
        if (linear && &operand == &linear.getWeightMutable() &&
            linear.getInput().getType().getElementType().isF32())
          continue;
        op->emitOpError() << "computes in " << shaped.getElementType()
                          << ": run --transformer-compute-in-f32 before "
                             "--convert-transformer-to-linalg";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    blockc::populateTransformerToLinalgPatterns(patterns);
    ConversionTarget target(getContext());
    target.addIllegalDialect<TransformerDialect>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           cf::ControlFlowDialect, scf::SCFDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void blockc::populateTransformerToLinalgPatterns(RewritePatternSet &patterns) {
  detail::populateNormLoweringPatterns(patterns);
  detail::populateLinearLoweringPatterns(patterns);
  detail::populateAttentionLoweringPatterns(patterns);
  detail::populateElementwiseLoweringPatterns(patterns);
  detail::populateKVCacheLoweringPatterns(patterns);
  detail::populateEmbeddingLoweringPatterns(patterns);
  detail::populatePagedLoweringPatterns(patterns);
}
