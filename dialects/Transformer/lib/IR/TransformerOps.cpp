//===- TransformerOps.cpp - transformer dialect operations ----------------===//
//
// Builders and verifiers of the `transformer` ops. Every verifier message
// names the offending operand or attribute and, for shapes, the expected and
// actual shape; test/Dialect/Transformer/invalid.mlir covers each message.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace blockc::transformer;

#include "blockc/Dialect/Transformer/IR/TransformerEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

std::string blockc::transformer::formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

FailureOr<RankedTensorType>
blockc::transformer::inferLinearResultType(RankedTensorType input,
                                           RankedTensorType weight) {
  if (!input || !weight || input.getRank() < 1 || weight.getRank() != 2)
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  shape.back() = weight.getDimSize(0);
  return RankedTensorType::get(shape, input.getElementType());
}

FailureOr<RankedTensorType>
blockc::transformer::inferSDPAResultType(RankedTensorType query,
                                         RankedTensorType value) {
  if (!query || !value || query.getRank() != 4 || value.getRank() != 4)
    return failure();
  SmallVector<int64_t> shape(query.getShape());
  shape.back() = value.getDimSize(3);
  return RankedTensorType::get(shape, query.getElementType());
}

AttentionShapes blockc::transformer::getAttentionShapes(int64_t modelDim,
                                                        int64_t numHeads,
                                                        int64_t numKVHeads,
                                                        int64_t headDim) {
  AttentionShapes s;
  int64_t qDim = numHeads * headDim, kvDim = numKVHeads * headDim;
  s.wq = {qDim, modelDim};
  s.wk = {kvDim, modelDim};
  s.wv = {kvDim, modelDim};
  s.wo = {modelDim, qDim};
  s.bq = {qDim};
  s.bk = {kvDim};
  s.bv = {kvDim};
  s.bo = {modelDim};
  return s;
}

namespace {

/// Two shapes agree when they have the same rank and every pair of static
/// dimensions is equal (a dynamic dimension agrees with anything).
bool shapesAgree(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return false;
  return true;
}

/// Checks that `value` (named `name` in diagnostics) has shape `expected`.
LogicalResult checkShape(Operation *op, StringRef name, Value value,
                         ArrayRef<int64_t> expected) {
  auto type = cast<RankedTensorType>(value.getType());
  if (shapesAgree(type.getShape(), expected))
    return success();
  return op->emitOpError() << "expects " << name << " to have shape "
                           << formatShape(expected) << ", got "
                           << formatShape(type.getShape());
}

/// Checks that a result has exactly the inferred shape: the same static
/// dimensions and the same dynamic ones (lowerings size results from their
/// operands, so a result may not be more static than its operands).
LogicalResult checkResultShape(Operation *op, Value result,
                               ArrayRef<int64_t> expected) {
  auto type = cast<RankedTensorType>(result.getType());
  if (type.getShape() == expected)
    return success();
  return op->emitOpError() << "expects result to have shape "
                           << formatShape(expected) << ", got "
                           << formatShape(type.getShape());
}

/// Checks that every named operand has the element type of the first one.
LogicalResult
checkElementTypes(Operation *op,
                  ArrayRef<std::pair<StringRef, Value>> namedOperands) {
  Type expected;
  StringRef first;
  for (auto [name, value] : namedOperands) {
    if (!value)
      continue;
    Type elt = cast<ShapedType>(value.getType()).getElementType();
    if (!expected) {
      expected = elt;
      first = name;
      continue;
    }
    if (elt != expected)
      return op->emitOpError()
             << "expects " << name << " to have element type " << expected
             << " (the element type of " << first << "), got " << elt;
  }
  return success();
}

/// As above, for an op's input followed by its named weights.
LogicalResult
checkElementTypes(Operation *op, Value input,
                  ArrayRef<std::pair<StringRef, Value>> namedWeights) {
  SmallVector<std::pair<StringRef, Value>> all = {{"input", input}};
  all.append(namedWeights.begin(), namedWeights.end());
  return checkElementTypes(op, all);
}

LogicalResult checkEpsilon(Operation *op, double epsilon) {
  if (epsilon > 0.0 && std::isfinite(epsilon))
    return success();
  return op->emitOpError() << "expects a finite epsilon > 0, got " << epsilon;
}

LogicalResult checkPositiveFinite(Operation *op, StringRef name, double v) {
  if (v > 0.0 && std::isfinite(v))
    return success();
  return op->emitOpError() << "expects a finite " << name << " > 0, got " << v;
}

/// The static model dimension (last dim) of a [B, T, d] activation.
FailureOr<int64_t> getModelDim(Operation *op, Value input) {
  int64_t d = cast<RankedTensorType>(input.getType()).getShape().back();
  if (ShapedType::isDynamic(d))
    return op->emitOpError()
           << "expects a static model dimension (the last dimension of input)";
  return d;
}

LogicalResult checkHeads(Operation *op, int64_t numHeads, int64_t numKVHeads) {
  if (numHeads % numKVHeads == 0)
    return success();
  return op->emitOpError() << "expects num_kv_heads (" << numKVHeads
                           << ") to divide num_heads (" << numHeads << ")";
}

LogicalResult checkOptionalShape(Operation *op, StringRef name, Value value,
                                 ArrayRef<int64_t> expected) {
  return value ? checkShape(op, name, value, expected) : success();
}

/// Verifies the projections of an attention sub-layer (shared by
/// `attention` and `block`).
LogicalResult verifyAttentionWeights(Operation *op, int64_t d, int64_t numHeads,
                                     int64_t numKVHeads, int64_t headDim,
                                     bool hasRope, Value wq, Value bq, Value wk,
                                     Value bk, Value wv, Value bv, Value wo,
                                     Value bo) {
  if (failed(checkHeads(op, numHeads, numKVHeads)))
    return failure();
  if (hasRope && headDim % 2 != 0)
    return op->emitOpError()
           << "expects an even head_dim when RoPE is applied, got " << headDim;
  AttentionShapes s = getAttentionShapes(d, numHeads, numKVHeads, headDim);
  if (failed(checkShape(op, "w_q", wq, s.wq)) ||
      failed(checkOptionalShape(op, "b_q", bq, s.bq)) ||
      failed(checkShape(op, "w_k", wk, s.wk)) ||
      failed(checkOptionalShape(op, "b_k", bk, s.bk)) ||
      failed(checkShape(op, "w_v", wv, s.wv)) ||
      failed(checkOptionalShape(op, "b_v", bv, s.bv)) ||
      failed(checkShape(op, "w_o", wo, s.wo)) ||
      failed(checkOptionalShape(op, "b_o", bo, s.bo)))
    return failure();
  return success();
}

/// Verifies the weights of an FFN sub-layer (shared by `ffn` and `block`).
/// `dff` is the expected hidden size, or dynamic to take it from w_up.
LogicalResult verifyFFNWeights(Operation *op, int64_t d, int64_t dff,
                               Value wGate, Value bGate, Value wUp, Value bUp,
                               Value wDown, Value bDown) {
  if (ShapedType::isDynamic(dff)) {
    auto upType = cast<RankedTensorType>(wUp.getType());
    if (upType.getRank() != 2)
      return op->emitOpError() << "expects w_up to have shape [d_ff, " << d
                               << "], got " << formatShape(upType.getShape());
    dff = upType.getDimSize(0);
  }
  if (!wGate && bGate)
    return op->emitOpError() << "expects b_gate only together with w_gate";
  if (failed(checkOptionalShape(op, "w_gate", wGate, {dff, d})) ||
      failed(checkOptionalShape(op, "b_gate", bGate, {dff})) ||
      failed(checkShape(op, "w_up", wUp, {dff, d})) ||
      failed(checkOptionalShape(op, "b_up", bUp, {dff})) ||
      failed(checkShape(op, "w_down", wDown, {d, dff})) ||
      failed(checkOptionalShape(op, "b_down", bDown, {d})))
    return failure();
  return success();
}

/// Verifies `quant` against the projection weights among `weights` (the
/// names starting with "w": w_q, ..., or a linear's "weight"; null entries
/// are absent optional weights): an int4 group must divide every
/// projection's input dimension K, and activations = int8 needs K to hold
/// whole runs of 32 columns.
LogicalResult checkWeightQuant(Operation *op, WeightQuantAttr quant,
                               ArrayRef<std::pair<StringRef, Value>> weights) {
  if (!quant)
    return success();
  for (auto [name, weight] : weights) {
    if (!weight || !name.starts_with("w"))
      continue;
    auto type = cast<RankedTensorType>(weight.getType());
    if (type.getRank() != 2)
      continue;
    int64_t k = type.getDimSize(1);
    if (quant.quantizesActivations() &&
        k % WeightQuantAttr::kActivationRun != 0)
      return op->emitOpError()
             << "weight_quant activations = int8 quantises the input in runs "
                "of "
             << WeightQuantAttr::kActivationRun
             << " columns: the input dimension " << k << " of " << name
             << " is not a multiple of " << WeightQuantAttr::kActivationRun;
    if (quant.getGroupSize() != 0 && k % quant.getGroupSize() != 0)
      return op->emitOpError()
             << "weight_quant group_size " << quant.getGroupSize()
             << " does not divide the input dimension " << k << " of " << name;
  }
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// RMSNormOp / LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult RMSNormOp::verify() {
  auto inputType = getInput().getType();
  if (inputType.getRank() < 1)
    return emitOpError() << "expects input of rank >= 1";
  if (failed(checkElementTypes(
          *this, {{"input", getInput()}, {"weight", getWeight()}})))
    return failure();
  if (failed(checkShape(*this, "weight", getWeight(),
                        {inputType.getShape().back()})))
    return failure();
  return checkEpsilon(*this, getEpsilon().convertToDouble());
}

LogicalResult LayerNormOp::verify() {
  auto inputType = getInput().getType();
  if (inputType.getRank() < 1)
    return emitOpError() << "expects input of rank >= 1";
  if (failed(checkElementTypes(*this, {{"input", getInput()},
                                       {"weight", getWeight()},
                                       {"bias", getBias()}})))
    return failure();
  int64_t d = inputType.getShape().back();
  if (failed(checkShape(*this, "weight", getWeight(), {d})) ||
      failed(checkShape(*this, "bias", getBias(), {d})))
    return failure();
  return checkEpsilon(*this, getEpsilon().convertToDouble());
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

void LinearOp::build(OpBuilder &builder, OperationState &state, Value input,
                     Value weight, Value bias) {
  auto resultType =
      inferLinearResultType(cast<RankedTensorType>(input.getType()),
                            cast<RankedTensorType>(weight.getType()));
  build(builder, state,
        succeeded(resultType) ? Type(*resultType) : input.getType(), input,
        weight, bias, /*weight_quant=*/WeightQuantAttr());
}

LogicalResult LinearOp::verify() {
  RankedTensorType inputType = getInput().getType();
  auto weightType = cast<RankedTensorType>(getWeight().getType());
  if (inputType.getRank() < 1)
    return emitOpError() << "expects input of rank >= 1";
  if (weightType.getRank() != 2)
    return emitOpError() << "expects weight to be a rank-2 [out, in] tensor, "
                            "got rank "
                         << weightType.getRank();
  // An f32 projection may keep its weight in a 16-bit float (a stored
  // type that the kernels widen exactly as they read it).
  Type weightElt = weightType.getElementType();
  bool narrowWeight = inputType.getElementType().isF32() &&
                      isa<BFloat16Type, Float16Type>(weightElt);
  if (failed(checkElementTypes(
          *this, {{"input", getInput()},
                  {"weight", narrowWeight ? Value() : getWeight()},
                  {"bias", getBias()},
                  {"result", getResult()}})))
    return failure();
  int64_t in = inputType.getShape().back();
  int64_t out = weightType.getDimSize(0);
  if (failed(checkShape(*this, "weight", getWeight(), {out, in})) ||
      failed(checkOptionalShape(*this, "bias", getBias(), {out})))
    return failure();
  auto expected = *inferLinearResultType(inputType, weightType);
  if (failed(checkResultShape(*this, getResult(), expected.getShape())))
    return failure();
  return checkWeightQuant(*this, getWeightQuantAttr(),
                          {{"weight", getWeight()}});
}

//===----------------------------------------------------------------------===//
// Ragged batches (paged entries)
//===----------------------------------------------------------------------===//

namespace {

/// Checks per-token positions `positions` ([T], named `name`) of an op
/// whose `tokens` operand is [B, T, ...]: B = 1, one position per token and
/// no position offset beside them.
LogicalResult checkTokenPositions(Operation *op, StringRef name,
                                  Value positions, Value offset, Value tokens) {
  if (offset)
    return op->emitOpError() << "has both a position offset and " << name;
  ArrayRef<int64_t> shape = cast<ShapedType>(tokens.getType()).getShape();
  if (!ShapedType::isDynamic(shape[0]) && shape[0] != 1)
    return op->emitOpError()
           << "expects batch size 1 with " << name << ", got " << shape[0];
  int64_t n = cast<ShapedType>(positions.getType()).getDimSize(0);
  if (!ShapedType::isDynamic(n) && !ShapedType::isDynamic(shape[1]) &&
      n != shape[1])
    return op->emitOpError()
           << "expects " << name << " to have one element per token ("
           << shape[1] << "), got " << n;
  return success();
}

/// Checks the ragged-batch operands of a paged op: block_table [B, ?],
/// cu_seqlens [B + 1] and seq_positions [B] where static.
LogicalResult checkRaggedBatch(Operation *op, Value blockTable, Value cuSeqlens,
                               Value seqPositions) {
  int64_t cu = cast<ShapedType>(cuSeqlens.getType()).getDimSize(0);
  int64_t b = cast<ShapedType>(seqPositions.getType()).getDimSize(0);
  if (!ShapedType::isDynamic(cu) && !ShapedType::isDynamic(b) && cu != b + 1)
    return op->emitOpError()
           << "expects cu_seqlens to have one more element than "
              "seq_positions (B + 1 and B), got "
           << cu << " and " << b;
  if (!blockTable)
    return success();
  int64_t rows = cast<ShapedType>(blockTable.getType()).getDimSize(0);
  if (!ShapedType::isDynamic(rows) && !ShapedType::isDynamic(b) && rows != b)
    return op->emitOpError() << "expects one block_table row per sequence ("
                             << b << "), got " << rows;
  return success();
}

/// Checks a page pool [P, S, H_kv, D] (named `name`): static S, H_kv, D.
LogicalResult checkPool(Operation *op, StringRef name, Value pool) {
  ArrayRef<int64_t> shape = cast<ShapedType>(pool.getType()).getShape();
  if (ShapedType::isDynamic(shape[1]) || ShapedType::isDynamic(shape[2]) ||
      ShapedType::isDynamic(shape[3]))
    return op->emitOpError() << "expects " << name
                             << " to have a static page size, kv head count "
                                "and head dimension, got "
                             << formatShape(shape);
  return success();
}

} // namespace

LogicalResult TokenPositionsOp::verify() {
  return checkRaggedBatch(*this, Value(), getCuSeqlens(), getSeqPositions());
}

LogicalResult PagedKVWriteOp::verify() {
  if (failed(checkElementTypes(
          *this, {{"pool", getPool()}, {"new_entries", getNewEntries()}})) ||
      failed(checkPool(*this, "pool", getPool())))
    return failure();
  ArrayRef<int64_t> pool = getPool().getType().getShape();
  ArrayRef<int64_t> entries = getNewEntries().getType().getShape();
  if (failed(checkShape(*this, "new_entries", getNewEntries(),
                        {1, entries[1], pool[2], pool[3]})))
    return failure();
  return checkRaggedBatch(*this, getBlockTable(), getCuSeqlens(),
                          getSeqPositions());
}

double PagedSDPAOp::getScaleOrDefault() {
  if (std::optional<APFloat> s = getScale())
    return s->convertToDouble();
  return 1.0 /
         std::sqrt(static_cast<double>(getQuery().getType().getShape().back()));
}

LogicalResult PagedSDPAOp::verify() {
  if (getKeyPool().getType() != getValuePool().getType())
    return emitOpError() << "expects key_pool and value_pool to have the same "
                            "type, got "
                         << getKeyPool().getType() << " and "
                         << getValuePool().getType();
  if (failed(checkPool(*this, "key_pool", getKeyPool())))
    return failure();
  ArrayRef<int64_t> q = getQuery().getType().getShape();
  ArrayRef<int64_t> pool = getKeyPool().getType().getShape();
  if (ShapedType::isDynamic(q[2]))
    return emitOpError() << "expects a static number of query heads";
  if (failed(checkShape(*this, "query", getQuery(), {1, q[1], q[2], pool[3]})))
    return failure();
  if (pool[2] < 1 || q[2] % pool[2] != 0)
    return emitOpError() << "expects the number of kv heads (" << pool[2]
                         << ") to divide the number of query heads (" << q[2]
                         << ")";
  if (failed(checkRaggedBatch(*this, getBlockTable(), getCuSeqlens(),
                              getSeqPositions())))
    return failure();
  if (std::optional<APFloat> s = getScale())
    return checkPositiveFinite(*this, "scale", s->convertToDouble());
  return success();
}

//===----------------------------------------------------------------------===//
// RoPEOp
//===----------------------------------------------------------------------===//

int64_t RoPEOp::getRotaryDimOrHeadDim() {
  if (std::optional<uint64_t> r = getRotaryDim())
    return static_cast<int64_t>(*r);
  return getInput().getType().getShape().back();
}

LogicalResult RoPEOp::verify() {
  int64_t headDim = getInput().getType().getShape().back();
  if (ShapedType::isDynamic(headDim))
    return emitOpError() << "expects a static head dimension";
  if (headDim < 1)
    return emitOpError() << "expects a non-empty head dimension";
  int64_t rotary = getRotaryDimOrHeadDim();
  if (rotary % 2 != 0)
    return emitOpError() << "expects an even rotary dimension, got " << rotary;
  if (rotary > headDim)
    return emitOpError() << "expects rotary_dim (" << rotary
                         << ") to be at most the head dimension (" << headDim
                         << ")";
  // Interleaved pairs (2i, 2i+1) must stay inside the head.
  if (getLayout() == RoPELayout::interleaved && headDim % 2 != 0)
    return emitOpError() << "expects an even head dimension for interleaved "
                            "RoPE, got "
                         << headDim;
  if (Value positions = getPositions())
    if (failed(checkTokenPositions(*this, "positions", positions,
                                   getPositionOffset(), getInput())))
      return failure();
  return checkPositiveFinite(*this, "theta", getTheta().convertToDouble());
}

//===----------------------------------------------------------------------===//
// SDPAOp
//===----------------------------------------------------------------------===//

double SDPAOp::getScaleOrDefault() {
  if (std::optional<APFloat> s = getScale())
    return s->convertToDouble();
  return 1.0 /
         std::sqrt(static_cast<double>(getQuery().getType().getShape().back()));
}

LogicalResult SDPAOp::verify() {
  ArrayRef<int64_t> q = getQuery().getType().getShape();
  ArrayRef<int64_t> k = getKey().getType().getShape();
  ArrayRef<int64_t> v = getValue().getType().getShape();
  if (failed(checkElementTypes(*this, {{"query", getQuery()},
                                       {"key", getKey()},
                                       {"value", getValue()},
                                       {"result", getResult()}})))
    return failure();
  if (ShapedType::isDynamic(q[2]) || ShapedType::isDynamic(k[2]) ||
      ShapedType::isDynamic(q[3]))
    return emitOpError()
           << "expects static head counts and head dimension in query and key";
  // value must agree with key in batch, length and kv heads.
  if (failed(checkShape(*this, "value", getValue(), {k[0], k[1], k[2], v[3]})))
    return failure();
  if (failed(checkShape(*this, "key", getKey(), {q[0], k[1], k[2], q[3]})))
    return failure();
  if (k[2] < 1)
    return emitOpError() << "expects at least one kv head, got " << k[2];
  if (q[2] % k[2] != 0)
    return emitOpError() << "expects the number of kv heads (" << k[2]
                         << ") to divide the number of query heads (" << q[2]
                         << ")";
  if (failed(checkResultShape(
          *this, getResult(),
          inferSDPAResultType(getQuery().getType(), getValue().getType())
              ->getShape())))
    return failure();
  if (std::optional<APFloat> s = getScale())
    return checkPositiveFinite(*this, "scale", s->convertToDouble());
  return success();
}

//===----------------------------------------------------------------------===//
// KVCacheAppendOp
//===----------------------------------------------------------------------===//

LogicalResult KVCacheAppendOp::verify() {
  if (failed(checkElementTypes(
          *this, {{"cache", getCache()}, {"new_entries", getNewEntries()}})))
    return failure();
  ArrayRef<int64_t> cache = getCache().getType().getShape();
  ArrayRef<int64_t> entries = getNewEntries().getType().getShape();
  // Batch, kv heads and head dim agree; the length may differ.
  if (failed(checkShape(*this, "new_entries", getNewEntries(),
                        {cache[0], entries[1], cache[2], cache[3]})))
    return failure();
  if (!ShapedType::isDynamic(entries[1]) && !ShapedType::isDynamic(cache[1]) &&
      entries[1] > cache[1])
    return emitOpError() << "expects at most the cache capacity L_max = "
                         << cache[1] << " new entries, got " << entries[1];
  return success();
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

void EmbeddingOp::build(OpBuilder &builder, OperationState &state, Value ids,
                        Value table, Value positions, Value positionOffset,
                        Value tokenPositions) {
  auto idsType = cast<RankedTensorType>(ids.getType());
  auto tableType = cast<RankedTensorType>(table.getType());
  auto resultType = RankedTensorType::get(
      {idsType.getDimSize(0), idsType.getDimSize(1), tableType.getDimSize(1)},
      tableType.getElementType());
  build(builder, state, resultType, ids, table, positions, positionOffset,
        tokenPositions);
}

LogicalResult EmbeddingOp::verify() {
  auto tableType = cast<RankedTensorType>(getTable().getType());
  if (tableType.getRank() != 2)
    return emitOpError() << "expects table to be a rank-2 [vocab, d] tensor, "
                            "got rank "
                         << tableType.getRank();
  int64_t d = tableType.getDimSize(1);
  if (Value positions = getPositions()) {
    if (failed(checkElementTypes(
            *this, {{"table", getTable()}, {"positions", positions}})))
      return failure();
    auto positionsType = cast<RankedTensorType>(positions.getType());
    if (positionsType.getRank() != 2 || positionsType.getDimSize(1) != d)
      return emitOpError() << "expects positions to have shape [max_positions, "
                           << d << "] (the table's row size), got "
                           << formatShape(positionsType.getShape());
  } else if (getPositionOffset()) {
    return emitOpError() << "has a position offset but no position table";
  } else if (getTokenPositions()) {
    return emitOpError() << "has per-token positions but no position table";
  }
  if (Value tokenPositions = getTokenPositions())
    if (failed(checkTokenPositions(*this, "token_positions", tokenPositions,
                                   getPositionOffset(), getIds())))
      return failure();
  Type elt = getType().getElementType();
  if (elt != tableType.getElementType())
    return emitOpError() << "expects the result to have the table's element "
                            "type "
                         << tableType.getElementType() << ", got " << elt;
  ArrayRef<int64_t> ids = getIds().getType().getShape();
  return checkResultShape(*this, getResult(), {ids[0], ids[1], d});
}

//===----------------------------------------------------------------------===//
// FFNOp
//===----------------------------------------------------------------------===//

SmallVector<std::pair<StringRef, Value>> FFNOp::getNamedWeights() {
  return {{"w_gate", getWGate()}, {"b_gate", getBGate()},
          {"w_up", getWUp()},     {"b_up", getBUp()},
          {"w_down", getWDown()}, {"b_down", getBDown()}};
}

LogicalResult FFNOp::verify() {
  if (failed(checkElementTypes(*this, getInput(), getNamedWeights())))
    return failure();
  FailureOr<int64_t> d = getModelDim(*this, getInput());
  if (failed(d))
    return failure();
  if (failed(verifyFFNWeights(*this, *d, ShapedType::kDynamic, getWGate(),
                              getBGate(), getWUp(), getBUp(), getWDown(),
                              getBDown())))
    return failure();
  return checkWeightQuant(*this, getWeightQuantAttr(), getNamedWeights());
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

SmallVector<std::pair<StringRef, Value>> AttentionOp::getNamedWeights() {
  return {{"w_q", getWQ()}, {"b_q", getBQ()}, {"w_k", getWK()},
          {"b_k", getBK()}, {"w_v", getWV()}, {"b_v", getBV()},
          {"w_o", getWO()}, {"b_o", getBO()}};
}

LogicalResult AttentionOp::verify() {
  if (failed(checkElementTypes(*this, getInput(), getNamedWeights())))
    return failure();
  FailureOr<int64_t> d = getModelDim(*this, getInput());
  if (failed(d))
    return failure();
  if (failed(checkPositiveFinite(*this, "rope_theta",
                                 getRopeTheta().convertToDouble())))
    return failure();
  if (std::optional<APFloat> s = getScale())
    if (failed(checkPositiveFinite(*this, "scale", s->convertToDouble())))
      return failure();
  if (failed(verifyAttentionWeights(*this, *d, getNumHeads(), getNumKvHeads(),
                                    getHeadDim(), getRope().has_value(),
                                    getWQ(), getBQ(), getWK(), getBK(), getWV(),
                                    getBV(), getWO(), getBO())))
    return failure();
  return checkWeightQuant(*this, getWeightQuantAttr(), getNamedWeights());
}

//===----------------------------------------------------------------------===//
// BlockOp
//===----------------------------------------------------------------------===//

SmallVector<std::pair<StringRef, Value>> BlockOp::getNamedWeights() {
  return {{"attn_norm", getAttnNormWeight()},
          {"attn_norm_bias", getAttnNormBias()},
          {"w_q", getWQ()},
          {"b_q", getBQ()},
          {"w_k", getWK()},
          {"b_k", getBK()},
          {"w_v", getWV()},
          {"b_v", getBV()},
          {"w_o", getWO()},
          {"b_o", getBO()},
          {"ffn_norm", getFfnNormWeight()},
          {"ffn_norm_bias", getFfnNormBias()},
          {"w_gate", getWGate()},
          {"b_gate", getBGate()},
          {"w_up", getWUp()},
          {"b_up", getBUp()},
          {"w_down", getWDown()},
          {"b_down", getBDown()}};
}

LogicalResult BlockOp::verify() {
  if (failed(checkElementTypes(*this, getInput(), getNamedWeights())))
    return failure();
  FailureOr<int64_t> d = getModelDim(*this, getInput());
  if (failed(d))
    return failure();
  if (failed(checkEpsilon(*this, getEpsilon().convertToDouble())) ||
      failed(checkPositiveFinite(*this, "rope_theta",
                                 getRopeTheta().convertToDouble())))
    return failure();

  // Norm parameters: a bias exactly when the norm is a LayerNorm.
  bool isLayerNorm = getNorm() == NormKind::layer;
  for (auto [name, bias] :
       {std::pair<StringRef, Value>{"attn_norm_bias", getAttnNormBias()},
        std::pair<StringRef, Value>{"ffn_norm_bias", getFfnNormBias()}}) {
    if (isLayerNorm && !bias)
      return emitOpError() << "expects " << name << " with norm = layer";
    if (!isLayerNorm && bias)
      return emitOpError() << "unexpected " << name
                           << " with norm = rms (RMSNorm has no bias)";
  }
  if (failed(checkShape(*this, "attn_norm", getAttnNormWeight(), {*d})) ||
      failed(checkOptionalShape(*this, "attn_norm_bias", getAttnNormBias(),
                                {*d})) ||
      failed(checkShape(*this, "ffn_norm", getFfnNormWeight(), {*d})) ||
      failed(
          checkOptionalShape(*this, "ffn_norm_bias", getFfnNormBias(), {*d})))
    return failure();

  if (failed(verifyAttentionWeights(*this, *d, getNumHeads(), getNumKvHeads(),
                                    getHeadDim(), getRope().has_value(),
                                    getWQ(), getBQ(), getWK(), getBK(), getWV(),
                                    getBV(), getWO(), getBO())))
    return failure();
  if (failed(verifyFFNWeights(*this, *d, getDFf(), getWGate(), getBGate(),
                              getWUp(), getBUp(), getWDown(), getBDown())))
    return failure();
  return checkWeightQuant(*this, getWeightQuantAttr(), getNamedWeights());
}

#define GET_OP_CLASSES
#include "blockc/Dialect/Transformer/IR/TransformerOps.cpp.inc"
