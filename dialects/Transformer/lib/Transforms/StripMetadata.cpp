//===- StripMetadata.cpp - drop transformer binding attributes ------------===//
//
// Removes the transformer binding attributes once the drivers have read
// them, and the blockc_codegen configuration once the kernels are built.
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
constexpr llvm::StringLiteral kCodegenPrefix = "blockc_codegen.";

struct TransformerStripMetadataPass
    : blockc::transformer::impl::TransformerStripMetadataPassBase<
          TransformerStripMetadataPass> {
  void runOnOperation() override {
    // The grid of a tensor-parallel module: its collectives are MPI calls
    // by now (convert-shard-to-mpi), and LLVM translation has no grids.
    SmallVector<shard::GridOp> grids;
    getOperation()->walk([&](shard::GridOp grid) { grids.push_back(grid); });
    for (shard::GridOp grid : grids)
      grid.erase();
    getOperation()->walk([](Operation *op) {
      op->removeAttr(TransformerDialect::kLayerAttr);
      op->removeAttr(TransformerDialect::kTensorParallelAttr);
      op->removeAttr(TransformerDialect::kAllReduceOverAttr);
      // The codegen configuration (blockc_codegen.*, written and read by the
      // kernel passes of stage 1) is matched by name: dialects/ do not
      // depend on each other's C++.
      SmallVector<StringAttr> codegen;
      for (NamedAttribute attr : op->getDiscardableAttrs())
        if (attr.getName().getValue().starts_with(kCodegenPrefix))
          codegen.push_back(attr.getName());
      for (StringAttr name : codegen)
        op->removeDiscardableAttr(name);
      auto func = dyn_cast<FunctionOpInterface>(op);
      if (!func)
        return;
      // Argument and result attributes: the binding attributes and the
      // prepared-weight records (blockc_codegen.prepared, .source_arg).
      auto codegenNames = [](ArrayRef<NamedAttribute> attrs) {
        SmallVector<StringAttr> names;
        for (NamedAttribute attr : attrs)
          if (attr.getName().getValue().starts_with(kCodegenPrefix))
            names.push_back(attr.getName());
        return names;
      };
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
        for (StringRef name : {TransformerDialect::kWeightNameAttr,
                               TransformerDialect::kWeightTransposeAttr,
                               TransformerDialect::kWeightSliceAttr,
                               TransformerDialect::kShardSliceAttr,
                               TransformerDialect::kKVPositionAttr,
                               TransformerDialect::kKVCacheAttr,
                               TransformerDialect::kKVLayoutAttr,
                               TransformerDialect::kSeqOffsetsAttr,
                               TransformerDialect::kSeqPositionsAttr,
                               TransformerDialect::kBlockTableAttr,
                               TransformerDialect::kPageSizeAttr,
                               TransformerDialect::kLayerAttr})
          func.removeArgAttr(i, name);
        for (StringAttr name : codegenNames(func.getArgAttrs(i)))
          func.removeArgAttr(i, name);
      }
      for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
        for (StringAttr name : codegenNames(func.getResultAttrs(i)))
          func.removeResultAttr(i, name);
    });
  }
};
} // namespace
