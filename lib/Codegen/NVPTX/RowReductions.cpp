//===- RowReductions.cpp - a warp per row for row reductions --------------===//
//
// See RowReductions.h.
//
//===----------------------------------------------------------------------===//

#include "RowReductions.h"

#include "blockc/Codegen/Common/Buffers.h"
#include "blockc/Codegen/NVPTX/KernelMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace blockc::nvptx;

static constexpr int64_t kWarp = kWarpSize;

TypedAttr blockc::nvptx::identityOf(Operation *combiner, FloatType type) {
  const llvm::fltSemantics &sem = type.getFloatSemantics();
  if (isa<arith::AddFOp>(combiner)) // -0 + x == x, also for x = -0
    return FloatAttr::get(type, APFloat::getZero(sem, /*Negative=*/true));
  if (isa<arith::MulFOp>(combiner))
    return FloatAttr::get(type, APFloat::getOne(sem));
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner))
    return FloatAttr::get(type, APFloat::getInf(sem, /*Negative=*/true));
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(combiner))
    return FloatAttr::get(type, APFloat::getInf(sem, /*Negative=*/false));
  return {};
}

Operation *blockc::nvptx::matchRowReduction(linalg::GenericOp op) {
  unsigned n = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || n < 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return nullptr;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!cast<MemRefType>(init->get().getType()).getElementType().isF32())
    return nullptr;
  AffineMap initMap = op.getMatchingIndexingMap(init);
  if (initMap.getNumResults() != n - 1)
    return nullptr;
  for (auto [i, e] : llvm::enumerate(initMap.getResults())) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || d.getPosition() != i)
      return nullptr;
  }
  for (OpOperand *input : op.getDpsInputOperands())
    if (!blockc::nvptx::isPointMap(op.getMatchingIndexingMap(input)))
      return nullptr;
  if (!blockc::nvptx::hasPureBody(op))
    return nullptr;
  Block *body = op.getBody();
  BlockArgument out = op.getMatchingBlockArgument(init);
  Operation *combiner = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || !out.hasOneUse() || combiner->getNumOperands() != 2 ||
      !llvm::is_contained(combiner->getOperands(), Value(out)) ||
      combiner->getOperand(0) == combiner->getOperand(1) ||
      !combiner->getResult(0).hasOneUse() ||
      !identityOf(combiner, cast<FloatType>(out.getType())))
    return nullptr;
  return combiner;
}

bool blockc::nvptx::canFollowRowChain(ArrayRef<linalg::GenericOp> chain,
                                      linalg::GenericOp op) {
  Block *block = op->getBlock();
  unsigned n = op.getNumLoops();
  if (llvm::any_of(chain, [&](linalg::GenericOp c) {
        return c->getBlock() != block || c.getNumLoops() != n ||
               !c->isBeforeInBlock(op);
      }))
    return false;
  AffineMap rowMap =
      AffineMap::getMultiDimIdentityMap(n, op.getContext()).dropResult(n - 1);
  DenseSet<Value> results, used;
  for (linalg::GenericOp c : chain) {
    results.insert(c.getDpsInits()[0]);
    for (Value operand : c->getOperands())
      used.insert(blockc::getRootBuffer(operand));
  }
  bool readsResult = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!results.contains(input->get()))
      continue;
    if (op.getMatchingIndexingMap(input) != rowMap)
      return false;
    readsResult = true;
  }
  if (!readsResult || op.getNumDpsInits() != 1 ||
      used.contains(blockc::getRootBuffer(op.getDpsInits()[0])))
    return false;
  // Each of them moves down past the ops between it and `op`.
  for (linalg::GenericOp c : chain) {
    DenseSet<Value> buffers;
    for (Value operand : c->getOperands())
      buffers.insert(blockc::getRootBuffer(operand));
    for (Operation *at = c->getNextNode(); at != op; at = at->getNextNode()) {
      if (llvm::is_contained(chain, at))
        continue;
      std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
          getEffectsRecursively(at);
      if (!effects)
        return false;
      for (MemoryEffects::EffectInstance &effect : *effects) {
        if (isa<MemoryEffects::Allocate>(effect.getEffect()))
          continue;
        Value value = effect.getValue();
        if (!value || buffers.contains(blockc::getRootBuffer(value)))
          return false;
      }
    }
  }
  return true;
}

bool blockc::nvptx::isRowChainApply(ArrayRef<linalg::GenericOp> chain,
                                    linalg::GenericOp op) {
  unsigned n = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || n < 2 ||
      op.getNumParallelLoops() != n || !blockc::nvptx::hasPureBody(op))
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isIdentity() ||
      !op.getMatchingBlockArgument(init).use_empty())
    return false;
  Value outRoot = blockc::getRootBuffer(init->get());
  for (OpOperand *input : op.getDpsInputOperands())
    if (!blockc::nvptx::isPointMap(op.getMatchingIndexingMap(input)) ||
        blockc::getRootBuffer(input->get()) == outRoot)
      return false;
  return canFollowRowChain(chain, op);
}

SmallVector<Value> RowChainBuilder::indicesAt(linalg::GenericOp op,
                                              OpOperand *operand,
                                              ArrayRef<Value> at) {
  SmallVector<Value> indices;
  for (AffineExpr e : op.getMatchingIndexingMap(operand).getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      indices.push_back(at[d.getPosition()]);
    else
      indices.push_back(idx(cast<AffineConstantExpr>(e).getValue()));
  }
  return indices;
}

DenseMap<OpOperand *, SmallVector<Value>>
RowChainBuilder::loadElements(linalg::GenericOp op, const VectorAccess &access,
                              ArrayRef<Value> at, int64_t w) {
  DenseMap<OpOperand *, SmallVector<Value>> elements;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value view = access.views[input->getOperandNumber()];
    if (view)
      elements[input] = loadVector(view, indicesAt(op, input, at), w);
  }
  return elements;
}

Value RowChainBuilder::combine(RowStage &s, Value acc, Value other) {
  Value out = s.op.getMatchingBlockArgument(s.op.getDpsInitOperand(0));
  IRMapping map;
  for (Value operand : s.combiner->getOperands())
    map.map(operand, operand == out ? acc : other);
  return b.clone(*s.combiner, map)->getResult(0);
}

Value RowChainBuilder::earlierResult(RowStage *s, OpOperand &operand) {
  for (RowStage &earlier : stages) {
    if (&earlier == s)
      break;
    if (operand.get() == earlier.op.getDpsInits()[0])
      return earlier.result;
  }
  return {};
}

VectorAccess RowChainBuilder::prepareVectorPath(linalg::GenericOp op,
                                                ArrayRef<OpOperand *> operands,
                                                Value length) {
  unsigned n = op.getNumLoops();
  SmallVector<OpOperand *> vectorInputs;
  bool sixteenBit = false;
  VectorAccess vec;
  for (OpOperand *input : operands) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(n - 1))
      continue;
    auto type = dyn_cast<MemRefType>(input->get().getType());
    AffineDimExpr last(nullptr);
    if (map.getNumResults())
      last = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!type || !last || last.getPosition() != n - 1 ||
        map.dropResult(map.getNumResults() - 1).isFunctionOfDim(n - 1) ||
        !isa<Float32Type, BFloat16Type, Float16Type>(type.getElementType()) ||
        !type.isStrided())
      return vec;
    sixteenBit |= !type.getElementType().isF32();
    vectorInputs.push_back(input);
  }
  if (vectorInputs.empty())
    return vec;
  vec.width = sixteenBit ? 8 : 4;
  Value ok = eq(rem(length, vec.width), 0);
  vec.views.assign(op->getNumOperands(), Value());
  for (OpOperand *input : vectorInputs)
    vec.views[input->getOperandNumber()] =
        contiguousView(input->get(), vec.width, ok);
  vec.ok = ok;
  return vec;
}

Value RowChainBuilder::scalarPartial(RowStage &s, ArrayRef<Value> iv,
                                     Value lane, Value identity) {
  unsigned n = s.op.getNumLoops();
  OpOperand *out = s.op.getDpsInitOperand(0);
  auto loop = scf::ForOp::create(
      b, loc, lane, s.length, idx(kWarp), ValueRange{identity},
      [&](OpBuilder &nb, Location, Value k, ValueRange acc) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        SmallVector<Value> at(iv);
        at[n - 1] = k;
        Value next =
            evaluateGenericAt(b, loc, s.op, at, [&](OpOperand &operand) {
              return &operand == out ? acc.front() : earlierResult(&s, operand);
            });
        scf::YieldOp::create(b, loc, next);
      });
  return loop.getResult(0);
}

Value RowChainBuilder::vectorPartial(RowStage &s, ArrayRef<Value> iv,
                                     Value lane, Value identity) {
  unsigned n = s.op.getNumLoops();
  int64_t w = s.vec.width;
  OpOperand *out = s.op.getDpsInitOperand(0);
  SmallVector<Value> rowAt(iv);
  rowAt[n - 1] = idx(0);
  DenseMap<OpOperand *, Value> rowValues;
  for (OpOperand *input : s.op.getDpsInputOperands()) {
    if (s.vec.views[input->getOperandNumber()] ||
        s.op.getMatchingBlockArgument(input).use_empty())
      continue;
    Value v = earlierResult(&s, *input);
    rowValues[input] = v ? v : loadOperandAt(b, loc, s.op, *input, rowAt);
  }
  auto loop = scf::ForOp::create(
      b, loc, mul(lane, idx(w)), s.length, idx(kWarp * w), ValueRange{identity},
      [&](OpBuilder &nb, Location, Value k, ValueRange acc) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        SmallVector<Value> at(iv);
        at[n - 1] = k;
        DenseMap<OpOperand *, SmallVector<Value>> elements =
            loadElements(s.op, s.vec, at, w);
        SmallVector<Value> values;
        for (int64_t j = 0; j < w; ++j) {
          SmallVector<Value> elemAt(at);
          elemAt[n - 1] = add(k, idx(j));
          values.push_back(evaluateGenericAt(
              b, loc, s.op, elemAt, [&](OpOperand &operand) -> Value {
                if (&operand == out)
                  return identity;
                auto it = elements.find(&operand);
                if (it != elements.end())
                  return it->second[j];
                return rowValues.lookup(&operand);
              }));
        }
        while (values.size() > 1) {
          SmallVector<Value> pairs;
          for (size_t i = 0; i + 1 < values.size(); i += 2)
            pairs.push_back(combine(s, values[i], values[i + 1]));
          if (values.size() % 2)
            pairs.push_back(values.back());
          values = std::move(pairs);
        }
        scf::YieldOp::create(b, loc, combine(s, acc.front(), values[0]));
      });
  return loop.getResult(0);
}

void RowChainBuilder::prepareStages() {
  for (RowStage &s : stages) {
    SmallVector<Range> ranges =
        cast<linalg::LinalgOp>(s.op.getOperation()).createLoopRanges(b, loc);
    s.length = getValueOrCreateConstantIndexOp(b, loc, ranges.back().size);
    s.vec = prepareVectorPath(s.op, s.op.getDpsInputOperands(), s.length);
  }
}

Value RowChainBuilder::identity(RowStage &s) {
  OpOperand *out = s.op.getDpsInitOperand(0);
  auto type = cast<FloatType>(s.op.getMatchingBlockArgument(out).getType());
  return arith::ConstantOp::create(b, loc, type, identityOf(s.combiner, type));
}

Value RowChainBuilder::warpTotal(RowStage &s, Value partial) {
  return xorReduce(partial, {16, 8, 4, 2, 1},
                   [&](Value x, Value other) { return combine(s, x, other); });
}

Value RowChainBuilder::initialValue(RowStage &s, ArrayRef<Value> outAt) {
  if (!s.init)
    return memref::LoadOp::create(b, loc, s.op.getDpsInits()[0], outAt);
  if (s.init->scalar)
    return s.init->scalar;
  return evaluateGenericAt(b, loc, s.init->generic, outAt,
                           [](OpOperand &) { return Value(); });
}
