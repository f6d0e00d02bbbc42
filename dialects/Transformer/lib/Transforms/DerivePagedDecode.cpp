//===- DerivePagedDecode.cpp - ragged paged-KV entry from a forward -------===//
//
// Clones and decomposes the model function (DeriveEntry.h, shared with
// transformer-derive-decode), views the packed tokens of a ragged batch as
// one sequence, gives RoPE and learned position embeddings per-token
// positions and routes every attention through per-layer K/V page pools
// (transformer.paged_kv_write, transformer.paged_sdpa). See Passes.td
// (TransformerDerivePagedDecodePass).
//
//===----------------------------------------------------------------------===//

#include "DeriveEntry.h"
#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace blockc::transformer {
#define GEN_PASS_DEF_TRANSFORMERDERIVEPAGEDDECODEPASS
#include "blockc/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace blockc::transformer

using namespace mlir;
using namespace blockc::transformer;
namespace derive = blockc::transformer::detail;

namespace {

constexpr StringLiteral kPass = "transformer-derive-paged-decode";

/// `type` with its leading (batch) dimension 1: the packed tokens as one
/// sequence. Fails when the batch dimension is static and not 1.
FailureOr<RankedTensorType> asOneSequence(RankedTensorType type) {
  if (!type || type.getRank() < 2 ||
      (!type.isDynamicDim(0) && type.getDimSize(0) != 1))
    return failure();
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = 1;
  shape[1] = ShapedType::kDynamic;
  return RankedTensorType::get(shape, type.getElementType());
}

/// `v` cast to `type` (no-op when it has it).
Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}

struct TransformerDerivePagedDecodePass
    : blockc::transformer::impl::TransformerDerivePagedDecodePassBase<
          TransformerDerivePagedDecodePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (pageSize < 1) {
      module.emitError() << kPass << ": page-size must be positive, got "
                         << static_cast<int64_t>(pageSize);
      return signalPassFailure();
    }
    FailureOr<derive::DerivedEntry> derived = derive::cloneAndDecompose(
        module, entry, "_paged", kPass, "a paged entry");
    if (failed(derived))
      return signalPassFailure();
    func::FuncOp forward = derived->entry, paged = derived->derived;
    if (failed(rewrite(*derived))) {
      paged.erase();
      return signalPassFailure();
    }
    if (!keepEntry && failed(derive::removeEntry(module, forward, kPass)))
      return signalPassFailure();
  }

  LogicalResult rewrite(derive::DerivedEntry &derived) {
    MLIRContext *ctx = &getContext();
    func::FuncOp forward = derived.entry, paged = derived.derived;
    Location loc = paged.getLoc();
    Block &body = paged.getBody().front();
    OpBuilder b(ctx);
    auto unit = [&](StringRef name) {
      return DictionaryAttr::get(
          ctx,
          {NamedAttribute(StringAttr::get(ctx, name), UnitAttr::get(ctx))});
    };

    // The input: activations [B, T, d] or token ids [B, T] (i32), packed
    // as [total, d] or [total].
    auto inputType =
        paged.getNumArguments()
            ? dyn_cast<RankedTensorType>(paged.getArgumentTypes()[0])
            : RankedTensorType();
    bool ids = inputType && inputType.getRank() == 2 &&
               inputType.getElementType().isInteger(32);
    bool activations = inputType && inputType.getRank() == 3 &&
                       isa<FloatType>(inputType.getElementType()) &&
                       !inputType.isDynamicDim(2);
    FailureOr<RankedTensorType> batched = asOneSequence(inputType);
    if ((!ids && !activations) || failed(batched)) {
      forward.emitError() << kPass << ": @" << entry
                          << " must take activations [B, T, d] or token ids "
                             "[B, T] (i32) with B dynamic or 1 first";
      return failure();
    }
    if (paged.getNumResults() != 1 ||
        failed(asOneSequence(
            dyn_cast<RankedTensorType>(paged.getResultTypes()[0])))) {
      forward.emitError() << kPass << ": @" << entry
                          << " must return one tensor [B, T, n] with B "
                             "dynamic or 1";
      return failure();
    }
    SmallVector<int64_t> packedShape = {ShapedType::kDynamic};
    if (activations)
      packedShape.push_back(inputType.getDimSize(2));
    auto packedType =
        RankedTensorType::get(packedShape, inputType.getElementType());
    SmallVector<ReassociationIndices> inputGroups =
        activations ? SmallVector<ReassociationIndices>{{0, 1}, {2}}
                    : SmallVector<ReassociationIndices>{{0, 1}};
    (void)paged.insertArgument(0, packedType, paged.getArgAttrDict(0), loc);
    b.setInsertionPointToStart(&body);
    Value packed = body.getArgument(0);
    Value input =
        tensor::ExpandShapeOp::create(b, loc, *batched, packed, inputGroups);
    input = castTo(b, loc, input, inputType);
    body.getArgument(1).replaceAllUsesWith(input);
    if (failed(paged.eraseArgument(1)))
      return failure();

    // The ragged batch.
    unsigned first = paged.getNumArguments();
    auto vectorType =
        RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type());
    auto tableType = RankedTensorType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic}, b.getI32Type());
    (void)paged.insertArgument(first, vectorType,
                               unit(TransformerDialect::kSeqOffsetsAttr), loc);
    (void)paged.insertArgument(first + 1, vectorType,
                               unit(TransformerDialect::kSeqPositionsAttr),
                               loc);
    (void)paged.insertArgument(first + 2, tableType,
                               unit(TransformerDialect::kBlockTableAttr), loc);
    Value cu = body.getArgument(first), seqPos = body.getArgument(first + 1);
    Value table = body.getArgument(first + 2);
    Value positions = TokenPositionsOp::create(b, loc, vectorType, cu, seqPos);

    for (RoPEOp rope : derived.ropes) {
      if (rope.getPositionOffset()) {
        rope.emitOpError() << "has a position offset, which a paged entry "
                              "cannot combine with per-token positions ("
                           << kPass << ")";
        return failure();
      }
      rope.getPositionsMutable().assign(positions);
    }
    for (EmbeddingOp embedding : derived.embeddings) {
      if (!embedding.getPositions())
        continue;
      if (embedding.getPositionOffset()) {
        embedding.emitOpError()
            << "has a position offset, which a paged entry cannot combine "
               "with per-token positions ("
            << kPass << ")";
        return failure();
      }
      embedding.getTokenPositionsMutable().assign(positions);
    }

    SmallVector<Value> updated;
    for (auto [layer, sdpa] : llvm::enumerate(derived.attentions)) {
      Location l = sdpa.getLoc();
      b.setInsertionPoint(sdpa);
      RankedTensorType keyType = sdpa.getKey().getType();
      RankedTensorType valueType = sdpa.getValue().getType();
      if (keyType != valueType || keyType.isDynamicDim(2) ||
          keyType.isDynamicDim(3)) {
        sdpa.emitOpError() << "needs keys and values of one type with static "
                              "kv heads and head dim for a paged entry ("
                           << kPass << ")";
        return failure();
      }
      auto poolType =
          RankedTensorType::get({ShapedType::kDynamic, pageSize,
                                 keyType.getDimSize(2), keyType.getDimSize(3)},
                                keyType.getElementType());
      Value pools[2];
      for (int kv = 0; kv < 2; ++kv) {
        Value entries = kv == 0 ? sdpa.getKey() : sdpa.getValue();
        SmallVector<NamedAttribute> attrs = {
            NamedAttribute(
                StringAttr::get(ctx, TransformerDialect::kKVCacheAttr),
                KVCacheKindAttr::get(ctx, kv == 0 ? KVCacheKind::key
                                                  : KVCacheKind::value)),
            NamedAttribute(StringAttr::get(ctx, TransformerDialect::kLayerAttr),
                           b.getI64IntegerAttr(layer)),
            NamedAttribute(
                StringAttr::get(ctx, TransformerDialect::kPageSizeAttr),
                b.getI64IntegerAttr(pageSize))};
        unsigned index = paged.getNumArguments();
        (void)paged.insertArgument(index, poolType,
                                   DictionaryAttr::get(ctx, attrs), l);
        Value pool = body.getArgument(index);
        Value rows = castTo(b, l, entries, *asOneSequence(keyType));
        pools[kv] = PagedKVWriteOp::create(b, l, poolType, rows, pool, table,
                                           cu, seqPos);
        updated.push_back(pools[kv]);
      }
      RankedTensorType queryType = sdpa.getQuery().getType();
      Value query = castTo(b, l, sdpa.getQuery(), *asOneSequence(queryType));
      Value out =
          PagedSDPAOp::create(b, l, query.getType(), query, pools[0], pools[1],
                              table, cu, seqPos, sdpa.getScaleAttr());
      sdpa.getResult().replaceAllUsesWith(castTo(b, l, out, sdpa.getType()));
      sdpa.erase();
    }

    // The result [B, T, n] as [total, n], then the updated pools.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    auto resultType = cast<RankedTensorType>(paged.getResultTypes()[0]);
    Value result =
        castTo(b, loc, ret.getOperand(0), *asOneSequence(resultType));
    SmallVector<int64_t> flatShape = {ShapedType::kDynamic};
    SmallVector<ReassociationIndices> resultGroups = {{0, 1}};
    for (int64_t i = 2; i < resultType.getRank(); ++i) {
      flatShape.push_back(resultType.getDimSize(i));
      resultGroups.push_back({i});
    }
    auto flatType =
        RankedTensorType::get(flatShape, resultType.getElementType());
    result =
        tensor::CollapseShapeOp::create(b, loc, flatType, result, resultGroups);
    ret.getOperandsMutable()[0].set(result);
    SmallVector<Type> resultTypes = {flatType};
    for (Value v : updated)
      resultTypes.push_back(v.getType());
    ret.getOperandsMutable().append(updated);
    SmallVector<DictionaryAttr> resultAttrs(resultTypes.size(),
                                            DictionaryAttr::get(ctx));
    if (DictionaryAttr firstAttrs = paged.getResultAttrDict(0))
      resultAttrs[0] = firstAttrs;
    paged.setType(
        FunctionType::get(ctx, paged.getArgumentTypes(), resultTypes));
    paged.setAllResultAttrs(resultAttrs);
    return success();
  }
};

} // namespace
