//===- DeriveDecode.cpp - KV-cached decode entry from a forward function --===//
//
// Clones the model function, decomposes the clone into primitives (both
// shared with transformer-derive-paged-decode: DeriveEntry.h) and routes
// every attention through per-layer K/V caches (transformer.kv_cache_append
// plus a view of the valid prefix), with RoPE and learned position
// embeddings at the absolute positions pos .. pos + T - 1. See Passes.td
// (TransformerDeriveDecodePass).
//
//===----------------------------------------------------------------------===//

#include "DeriveEntry.h"
#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace blockc::transformer {
#define GEN_PASS_DEF_TRANSFORMERDERIVEDECODEPASS
#include "blockc/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace blockc::transformer

using namespace mlir;
using namespace blockc::transformer;
namespace derive = blockc::transformer::detail;

namespace {

struct TransformerDeriveDecodePass
    : blockc::transformer::impl::TransformerDeriveDecodePassBase<
          TransformerDeriveDecodePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    FailureOr<derive::DerivedEntry> derived = derive::cloneAndDecompose(
        module, entry, "_decode", "transformer-derive-decode",
        "a decode entry");
    if (failed(derived))
      return signalPassFailure();
    func::FuncOp forward = derived->entry, decode = derived->derived;
    SmallVector<SDPAOp> attentions = derived->attentions;
    SmallVector<RoPEOp> ropes = derived->ropes;
    SmallVector<EmbeddingOp> embeddings = derived->embeddings;

    // %pos: the number of tokens already in the caches.
    Location loc = decode.getLoc();
    Block &body = decode.getBody().front();
    unsigned posIndex = decode.getNumArguments();
    (void)decode.insertArgument(
        posIndex, IndexType::get(ctx),
        DictionaryAttr::get(
            ctx, {NamedAttribute(
                     StringAttr::get(ctx, TransformerDialect::kKVPositionAttr),
                     UnitAttr::get(ctx))}),
        loc);
    Value pos = body.getArgument(posIndex);

    OpBuilder b(ctx);
    for (RoPEOp rope : ropes) {
      b.setInsertionPoint(rope);
      Value offset = pos;
      if (Value old = rope.getPositionOffset())
        offset = arith::AddIOp::create(b, rope.getLoc(), old, pos);
      rope.getPositionOffsetMutable().assign(offset);
    }
    // Learned positions (GPT-2's wpe) are read at the absolute positions
    // too.
    for (EmbeddingOp embedding : embeddings) {
      if (!embedding.getPositions())
        continue;
      b.setInsertionPoint(embedding);
      Value offset = pos;
      if (Value old = embedding.getPositionOffset())
        offset = arith::AddIOp::create(b, embedding.getLoc(), old, pos);
      embedding.getPositionOffsetMutable().assign(offset);
    }

    SmallVector<Value> updated;
    for (auto [layer, sdpa] : llvm::enumerate(attentions)) {
      Location l = sdpa.getLoc();
      b.setInsertionPoint(sdpa);
      Value views[2];
      for (int kv = 0; kv < 2; ++kv) {
        Value entries = kv == 0 ? sdpa.getKey() : sdpa.getValue();
        auto type = cast<RankedTensorType>(entries.getType());
        auto cacheType =
            RankedTensorType::get({type.getDimSize(0), ShapedType::kDynamic,
                                   type.getDimSize(2), type.getDimSize(3)},
                                  type.getElementType());
        SmallVector<NamedAttribute> attrs = {
            NamedAttribute(
                StringAttr::get(ctx, TransformerDialect::kKVCacheAttr),
                KVCacheKindAttr::get(ctx, kv == 0 ? KVCacheKind::key
                                                  : KVCacheKind::value)),
            NamedAttribute(StringAttr::get(ctx, TransformerDialect::kLayerAttr),
                           b.getI64IntegerAttr(layer)),
            NamedAttribute(
                StringAttr::get(ctx, TransformerDialect::kKVLayoutAttr),
                KVLayoutAttr::get(ctx, kvLayout))};
        if (kvLayout == KVLayout::bhsd) {
          // Element (b, s, h, d) at b * sB + h * sH + s * D + d: strides
          // [?, D, ?, 1] of the [B, L_max, H_kv, D] tensor.
          int64_t dyn = ShapedType::kDynamic;
          attrs.push_back(NamedAttribute(
              StringAttr::get(
                  ctx,
                  bufferization::BufferizationDialect::kBufferLayoutAttrName),
              StridedLayoutAttr::get(ctx, dyn,
                                     {dyn, type.getDimSize(3), dyn, 1})));
        }
        unsigned index = decode.getNumArguments();
        (void)decode.insertArgument(index, cacheType,
                                    DictionaryAttr::get(ctx, attrs), l);
        Value cache = body.getArgument(index);
        Value appended =
            KVCacheAppendOp::create(b, l, cacheType, entries, cache, pos);
        updated.push_back(appended);
        // The valid prefix: rows [0, pos + T).
        SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, l, entries);
        Value newLen = getValueOrCreateConstantIndexOp(b, l, sizes[1]);
        sizes[1] = arith::AddIOp::create(b, l, pos, newLen).getResult();
        SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
        SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
        auto viewType =
            RankedTensorType::get({type.getDimSize(0), ShapedType::kDynamic,
                                   type.getDimSize(2), type.getDimSize(3)},
                                  type.getElementType());
        views[kv] = tensor::ExtractSliceOp::create(b, l, viewType, appended,
                                                   offsets, sizes, strides);
      }
      sdpa.getKeyMutable().assign(views[0]);
      sdpa.getValueMutable().assign(views[1]);
    }

    // Return the updated caches after the activation.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    unsigned numResults = decode.getNumResults();
    for (auto [i, v] : llvm::enumerate(updated))
      (void)decode.insertResult(numResults + i, v.getType(),
                                DictionaryAttr::get(ctx));
    ret.getOperandsMutable().append(updated);

    if (!keepEntry && failed(derive::removeEntry(module, forward,
                                                 "transformer-derive-decode")))
      return signalPassFailure();
  }
};

} // namespace
