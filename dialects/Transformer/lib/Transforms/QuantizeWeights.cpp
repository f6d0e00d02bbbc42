//===- QuantizeWeights.cpp - weight_quant on every projection -------------===//
//
// See Transforms/Passes.td (TransformerQuantizeWeightsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/Verifier.h"

namespace blockc::transformer {
#define GEN_PASS_DEF_TRANSFORMERQUANTIZEWEIGHTSPASS
#include "blockc/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace blockc::transformer

using namespace mlir;
using namespace blockc::transformer;

namespace {

struct TransformerQuantizeWeightsPass
    : blockc::transformer::impl::TransformerQuantizeWeightsPassBase<
          TransformerQuantizeWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    WeightQuantType kind;
    if (type == "int8") {
      kind = WeightQuantType::int8;
    } else if (type == "int4") {
      kind = WeightQuantType::int4;
    } else {
      getOperation()->emitError()
          << "transformer-quantize-weights: type must be int8 or int4, got '"
          << type << "'";
      return signalPassFailure();
    }
    ActivationQuantType activations;
    if (quantizeActivations == "none") {
      activations = ActivationQuantType::none;
    } else if (quantizeActivations == "int8") {
      activations = ActivationQuantType::int8;
    } else {
      getOperation()->emitError()
          << "transformer-quantize-weights: quantize-activations must be "
             "none or int8, got '"
          << quantizeActivations << "'";
      return signalPassFailure();
    }
    int64_t group = kind == WeightQuantType::int4 ? groupSize.getValue() : 0;
    auto emitError = [&] { return getOperation()->emitError(); };
    WeightQuantAttr quant =
        WeightQuantAttr::getChecked(emitError, ctx, kind, group, activations);
    if (!quant)
      return signalPassFailure();
    bool failedOp = false;
    getOperation()->walk([&](Operation *op) {
      if (!isa<BlockOp, AttentionOp, FFNOp, LinearOp>(op) ||
          op->hasAttr("weight_quant"))
        return;
      op->setAttr("weight_quant", quant);
      // The op's verifier says which projection the groups (or the runs of
      // 32 activations) do not fit.
      if (failed(mlir::verify(op, /*verifyRecursively=*/false))) {
        op->removeAttr("weight_quant");
        failedOp = true;
        return;
      }
      ++numQuantized;
    });
    if (failedOp)
      signalPassFailure();
  }
};

} // namespace
