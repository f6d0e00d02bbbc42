//===- StripMetadata.cpp - drop transformer binding attributes ------------===//
//
// Removes `transformer.weight_name` argument attributes and
// `transformer.layer` op attributes once the drivers have read them.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace blockc::transformer {
#define GEN_PASS_DEF_TRANSFORMERSTRIPMETADATAPASS
#include "blockc/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace blockc::transformer

using namespace mlir;
using namespace blockc::transformer;

namespace {
struct TransformerStripMetadataPass
    : blockc::transformer::impl::TransformerStripMetadataPassBase<
          TransformerStripMetadataPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      op->removeAttr(TransformerDialect::kLayerAttr);
      if (auto func = dyn_cast<FunctionOpInterface>(op))
        for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
          for (StringRef name : {TransformerDialect::kWeightNameAttr,
                                 TransformerDialect::kWeightTransposeAttr,
                                 TransformerDialect::kWeightSliceAttr,
                                 TransformerDialect::kKVPositionAttr,
                                 TransformerDialect::kKVCacheAttr,
                                 TransformerDialect::kKVLayoutAttr,
                                 TransformerDialect::kLayerAttr})
            func.removeArgAttr(i, name);
    });
  }
};
} // namespace
