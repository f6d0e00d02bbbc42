//===- TileReductions.cpp - one warp per row for row reductions -----------===//
//
// Rewrites reductions over the innermost dimension (norm statistics) into a
// gpu.launch with one warp per output element: the lanes stride over the
// row (coalesced; 16-byte vectors where a host check allows) and combine
// with shuffles. Optionally, reductions that read earlier ones' results at
// their row share their kernel, and so does the elementwise op that then
// applies the results (a norm's apply). See Codegen/NVPTX/Passes.td
// (GPUTileReductionsPass) and docs/GPU.md (the norm's kernels).
//
//===----------------------------------------------------------------------===//

#include "EpilogueFusion.h"
#include "blockc/Codegen/Common/Buffers.h"
#include "blockc/Codegen/NVPTX/KernelBuilder.h"
#include "blockc/Codegen/NVPTX/KernelMatchers.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUTILEREDUCTIONSPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using namespace blockc::codegen;

namespace {

constexpr int64_t kWarp = blockc::nvptx::kWarpSize;

/// The value `x` with `combiner(identity, x) == x` for the combiners this
/// pass takes, or null.
TypedAttr identityOf(Operation *combiner, FloatType type) {
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

/// The combiner of `op` when it is a row reduction this pass rewrites:
/// f32, every loop parallel but the last (the reduction), the output read
/// at the parallel indices in order, point reads of the inputs, and a body
/// without memory effects that yields `combiner(out, v)`, `out` used only
/// there, for an associative and commutative combiner with an identity.
Operation *matchRowReduction(linalg::GenericOp op) {
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

/// Whether `op` (a row reduction, or the all-parallel generic that applies
/// the results) can follow the row reductions `chain` (in block order) in their
/// kernel, built where `op` is: it reads the result of one of them, every
/// such read at the row (its loop indices but the last, in order: linalg's
/// shapes then make the rows the same), has as many loops, and neither
/// writes a buffer they use nor is separated from them by an op that may
/// touch their buffers (they move down to `op`).
bool canFollow(ArrayRef<linalg::GenericOp> chain, linalg::GenericOp op) {
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

/// Whether `op` is an elementwise op that the kernel of `chain` computes
/// after the results (a norm's apply): all-parallel on buffers, one output
/// written at the loop indices in order and not read, point reads of
/// inputs none of which is the output's buffer, a body without memory
/// effects, and canFollow.
bool isChainApply(ArrayRef<linalg::GenericOp> chain, linalg::GenericOp op) {
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
  return canFollow(chain, op);
}

/// The 16-byte path of a generic's accesses along its innermost loop.
struct VectorAccess {
  int64_t width = 0; // elements per lane and step; 0: no vector path
  Value ok = {};     // whether it may run (host, uniform over the grid)
  SmallVector<Value> views = {}; // per operand: a unit-stride view, or null
};

/// One row reduction of a kernel: the op, its combiner and what its output
/// holds before it.
struct Stage {
  linalg::GenericOp op;
  Operation *combiner;
  std::optional<blockc::nvptx::InitValue> init; // what the output holds
  /// Set while the kernel is built.
  Value length = {};     // of the reduced loop (host)
  VectorAccess vec = {}; // the 16-byte path of the inputs
  Value result = {};     // the row's final value (in the kernel)
};

/// Builds the kernel of one row reduction, or of a chain of row reductions
/// over the same rows where each later one reads earlier ones' results at
/// its row (a norm's max |x|, then its scaled sum of squares).
struct RowReductionKernel : blockc::nvptx::KernelBuilder {
  SmallVector<Stage> stages;
  int64_t warps;
  /// The elementwise op over the same rows that reads the results (a
  /// norm's apply), computed by the same warps after them; or null.
  linalg::GenericOp apply = {};
  gpu::LaunchOp launch = {};
  Value applyLength = {};
  VectorAccess applyVec = {};

  /// The indices of `operand` of `op` at loop indices `at` (its map reads
  /// loop indices and constants only).
  SmallVector<Value> indicesAt(linalg::GenericOp op, OpOperand *operand,
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

  /// The `w` elements at loop indices `at` (the innermost one the first)
  /// of each input of `op` that `access` reads through a 16-byte view: one
  /// vector load per input.
  DenseMap<OpOperand *, SmallVector<Value>>
  loadElements(linalg::GenericOp op, const VectorAccess &access,
               ArrayRef<Value> at, int64_t w) {
    DenseMap<OpOperand *, SmallVector<Value>> elements;
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value view = access.views[input->getOperandNumber()];
      if (view)
        elements[input] = loadVector(view, indicesAt(op, input, at), w);
    }
    return elements;
  }

  /// The stage's combiner applied to `acc` (in the place of the output) and
  /// `other`.
  Value combine(Stage &s, Value acc, Value other) {
    Value out = s.op.getMatchingBlockArgument(s.op.getDpsInitOperand(0));
    IRMapping map;
    for (Value operand : s.combiner->getOperands())
      map.map(operand, operand == out ? acc : other);
    return b.clone(*s.combiner, map)->getResult(0);
  }

  /// The value of an earlier stage's result (of any stage when `s` is
  /// null: the apply) when `operand` reads it (at the row: the match
  /// checked the map), else null.
  Value earlierResult(Stage *s, OpOperand &operand) {
    for (Stage &earlier : stages) {
      if (&earlier == s)
        break;
      if (operand.get() == earlier.op.getDpsInits()[0])
        return earlier.result;
    }
    return {};
  }

  /// Prepares the 16-byte path of `operands` of `op` along its innermost
  /// loop (of `length` elements) on the host: every one of them that
  /// depends on that loop reads it as its innermost index (and only
  /// there), from a bf16, f16 or f32 buffer with a strided layout. The
  /// path runs when, at run time (uniform over the grid), the length is a
  /// multiple of `width` elements and each such operand has a unit
  /// innermost stride, an offset and other strides that are multiples of
  /// `width` and a 16-byte aligned base: then every vector of a row starts
  /// on 16 bytes. `width` is 8 when one of them is 16-bit (8 f32 elements
  /// are two 16-byte accesses), else 4.
  VectorAccess prepareVectorPath(linalg::GenericOp op,
                                 ArrayRef<OpOperand *> operands, Value length) {
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

  /// Lane `lane`'s fold of elements lane, lane + 32, ... of the row at `iv`
  /// of `s`, from the combiner's identity.
  Value scalarPartial(Stage &s, ArrayRef<Value> iv, Value lane,
                      Value identity) {
    unsigned n = s.op.getNumLoops();
    OpOperand *out = s.op.getDpsInitOperand(0);
    auto loop = scf::ForOp::create(
        b, loc, lane, s.length, idx(kWarp), ValueRange{identity},
        [&](OpBuilder &nb, Location, Value k, ValueRange acc) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> at(iv);
          at[n - 1] = k;
          Value next = blockc::nvptx::evaluateGenericAt(
              b, loc, s.op, at, [&](OpOperand &operand) {
                return &operand == out ? acc.front()
                                       : earlierResult(&s, operand);
              });
          scf::YieldOp::create(b, loc, next);
        });
    return loop.getResult(0);
  }

  /// The same fold by vectors: lane `lane` reads elements
  /// [w * lane, w * lane + w), then w * 32 further on, ... (one 16-byte
  /// load per input and vector, consecutive lanes on consecutive vectors),
  /// evaluates the body on each element from the identity and combines the
  /// `w` values pairwise before folding them into its partial value. The
  /// inputs read at the row only are loaded once.
  Value vectorPartial(Stage &s, ArrayRef<Value> iv, Value lane,
                      Value identity) {
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
      rowValues[input] =
          v ? v : blockc::nvptx::loadOperandAt(b, loc, s.op, *input, rowAt);
    }
    auto loop = scf::ForOp::create(
        b, loc, mul(lane, idx(w)), s.length, idx(kWarp * w),
        ValueRange{identity},
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
            values.push_back(blockc::nvptx::evaluateGenericAt(
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

  /// The apply's elements of the row at `iv` (every lane holds the
  /// results): lane `lane` writes elements lane, lane + 32, ...; or, on
  /// the 16-byte path, vectors of `w` elements at w lane, w (lane + 32),
  /// ..., evaluated element by element and stored with one 16-byte store.
  void emitApply(ArrayRef<Value> iv, Value lane) {
    unsigned n = apply.getNumLoops();
    OpOperand *out = apply.getDpsInitOperand(0);
    auto scalarPath = [&] {
      scf::ForOp::create(b, loc, lane, applyLength, idx(kWarp), ValueRange{},
                         [&](OpBuilder &nb, Location, Value k, ValueRange) {
                           OpBuilder::InsertionGuard g(b);
                           b.setInsertionPoint(nb.getInsertionBlock(),
                                               nb.getInsertionPoint());
                           SmallVector<Value> at(iv);
                           at[n - 1] = k;
                           Value v = blockc::nvptx::evaluateGenericAt(
                               b, loc, apply, at, [&](OpOperand &operand) {
                                 return earlierResult(nullptr, operand);
                               });
                           memref::StoreOp::create(b, loc, v, out->get(),
                                                   indicesAt(apply, out, at));
                           scf::YieldOp::create(b, loc);
                         });
    };
    if (!applyVec.width) {
      scalarPath();
      return;
    }
    int64_t w = applyVec.width;
    auto path = scf::IfOp::create(b, loc, applyVec.ok, /*withElse=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(path.thenBlock());
    SmallVector<Value> rowAt(iv);
    rowAt[n - 1] = idx(0);
    DenseMap<OpOperand *, Value> rowValues;
    for (OpOperand *input : apply.getDpsInputOperands()) {
      if (applyVec.views[input->getOperandNumber()] ||
          apply.getMatchingBlockArgument(input).use_empty())
        continue;
      Value v = earlierResult(nullptr, *input);
      rowValues[input] =
          v ? v : blockc::nvptx::loadOperandAt(b, loc, apply, *input, rowAt);
    }
    scf::ForOp::create(
        b, loc, mul(lane, idx(w)), applyLength, idx(kWarp * w), ValueRange{},
        [&](OpBuilder &nb, Location, Value k, ValueRange) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> at(iv);
          at[n - 1] = k;
          DenseMap<OpOperand *, SmallVector<Value>> elements =
              loadElements(apply, applyVec, at, w);
          SmallVector<Value> values;
          for (int64_t j = 0; j < w; ++j) {
            SmallVector<Value> elemAt(at);
            elemAt[n - 1] = add(k, idx(j));
            values.push_back(blockc::nvptx::evaluateGenericAt(
                b, loc, apply, elemAt, [&](OpOperand &operand) -> Value {
                  auto it = elements.find(&operand);
                  if (it != elements.end())
                    return it->second[j];
                  return rowValues.lookup(&operand);
                }));
          }
          storeVector(values, applyVec.views[out->getOperandNumber()],
                      indicesAt(apply, out, at));
          scf::YieldOp::create(b, loc);
        });
    b.setInsertionPointToStart(path.elseBlock());
    scalarPath();
  }

  void build() {
    MLIRContext *ctx = b.getContext();
    linalg::GenericOp first = stages.front().op;
    unsigned n = first.getNumLoops();
    SmallVector<Value> sizes;
    for (Range r :
         cast<linalg::LinalgOp>(first.getOperation()).createLoopRanges(b, loc))
      sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
    Value rows = idx(1);
    for (unsigned d = 0; d + 1 < n; ++d)
      rows = mul(rows, sizes[d]);
    for (Stage &s : stages) {
      SmallVector<Range> ranges =
          cast<linalg::LinalgOp>(s.op.getOperation()).createLoopRanges(b, loc);
      s.length = getValueOrCreateConstantIndexOp(b, loc, ranges.back().size);
      s.vec = prepareVectorPath(s.op, s.op.getDpsInputOperands(), s.length);
    }
    if (apply) {
      SmallVector<Range> ranges =
          cast<linalg::LinalgOp>(apply.getOperation()).createLoopRanges(b, loc);
      applyLength = getValueOrCreateConstantIndexOp(b, loc, ranges.back().size);
      SmallVector<OpOperand *> operands(apply.getDpsInputOperands());
      operands.push_back(apply.getDpsInitOperand(0));
      applyVec = prepareVectorPath(apply, operands, applyLength);
      // The output must take the vectors too.
      if (applyVec.width && !applyVec.views[apply.getNumDpsInputs()])
        applyVec = {};
    }
    Value one = idx(1);
    launch = gpu::LaunchOp::create(
        b, loc,
        arith::CeilDivUIOp::create(b, loc, rows, idx(warps)).getResult(), one,
        one, idx(warps * kWarp), one, one);
    launch->setAttr(CodegenDialect::kKernelAttrName,
                    KernelKindAttr::get(ctx, KernelKind::row_reduction));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value tid = launch.getThreadIds().x;
    Value lane = rem(tid, kWarp);
    Value row = add(mul(launch.getBlockIds().x, idx(warps)), div(tid, kWarp));
    // The row is the same for the warp's 32 lanes: the shuffles below run
    // with the whole warp or not at all.
    auto inRange = scf::IfOp::create(b, loc, lt(row, rows), false);
    b.setInsertionPointToStart(inRange.thenBlock());
    SmallVector<Value> iv(n);
    Value linear = row;
    for (int d = static_cast<int>(n) - 2; d > 0; --d) {
      iv[d] = arith::RemUIOp::create(b, loc, linear, sizes[d]);
      linear = arith::DivUIOp::create(b, loc, linear, sizes[d]);
    }
    iv[0] = linear; // row < rows
    SmallVector<Value> outAt(iv.begin(), iv.end() - 1);

    for (size_t i = 0; i < stages.size(); ++i) {
      Stage &s = stages[i];
      OpOperand *out = s.op.getDpsInitOperand(0);
      auto type = cast<FloatType>(s.op.getMatchingBlockArgument(out).getType());
      Value identity =
          arith::ConstantOp::create(b, loc, type, identityOf(s.combiner, type));
      Value partial;
      if (s.vec.ok) {
        auto path = scf::IfOp::create(b, loc, TypeRange{type}, s.vec.ok,
                                      /*withElseRegion=*/true);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(path.thenBlock());
        scf::YieldOp::create(b, loc, vectorPartial(s, iv, lane, identity));
        b.setInsertionPointToStart(path.elseBlock());
        scf::YieldOp::create(b, loc, scalarPartial(s, iv, lane, identity));
        partial = path.getResult(0);
      } else {
        partial = scalarPartial(s, iv, lane, identity);
      }
      // A butterfly leaves the row's total in every lane; the output's
      // initial value (evaluated when the output's writer is known:
      // EpilogueFusion.h) is folded in by lane 0, or by every lane when a
      // later stage reads the result.
      Value acc =
          xorReduce(partial, {16, 8, 4, 2, 1},
                    [&](Value x, Value other) { return combine(s, x, other); });
      auto initial = [&]() -> Value {
        if (!s.init)
          return memref::LoadOp::create(b, loc, out->get(), outAt);
        if (s.init->scalar)
          return s.init->scalar;
        return blockc::nvptx::evaluateGenericAt(
            b, loc, s.init->generic, outAt,
            [](OpOperand &) { return Value(); });
      };
      bool last = i + 1 == stages.size() && !apply;
      if (!last)
        s.result = combine(s, initial(), acc);
      OpBuilder::InsertionGuard g(b);
      auto store = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, idx(0)),
          false);
      b.setInsertionPointToStart(store.thenBlock());
      memref::StoreOp::create(b, loc,
                              last ? combine(s, initial(), acc) : s.result,
                              out->get(), outAt);
    }
    if (apply)
      emitApply(iv, lane);
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }
};

struct GPUTileReductionsPass
    : blockc::nvptx::impl::GPUTileReductionsPassBase<GPUTileReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Operation *>> reductions;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (Operation *combiner = matchRowReduction(op))
        reductions.push_back({op, combiner});
    });
    if (reductions.empty())
      return;
    auto map = getOperation()->getAttrOfType<GPUMapAttr>(
        CodegenDialect::kGpuMapAttrName);
    if (!map) {
      getOperation().emitError()
          << "blockc-gpu-tile-reductions: @" << getOperation().getName()
          << " has row reductions and no '" << CodegenDialect::kGpuMapAttrName
          << "' (run blockc-gpu-select-tiles first)";
      return signalPassFailure();
    }
    int64_t warps =
        std::max<int64_t>(map.getThreadsX() * map.getThreadsY() / kWarp, 1);
    // Chains of reductions over the same rows, each reading earlier ones'
    // results at its row: one kernel each, built where the last one was.
    SmallVector<SmallVector<std::pair<linalg::GenericOp, Operation *>>> chains;
    for (auto [op, combiner] : reductions) {
      if (chainStatistics && !chains.empty()) {
        SmallVector<linalg::GenericOp> earlier;
        for (auto &entry : chains.back())
          earlier.push_back(entry.first);
        if (canFollow(earlier, op)) {
          chains.back().push_back({op, combiner});
          continue;
        }
      }
      chains.push_back({{op, combiner}});
    }
    OpBuilder b(&getContext());
    SmallVector<blockc::nvptx::EpiloguePlan> plans;
    for (auto &chain : chains) {
      linalg::GenericOp last = chain.back().first;
      // The first generic after the chain, when it applies the results.
      linalg::GenericOp apply;
      SmallVector<linalg::GenericOp> ops;
      for (auto &entry : chain)
        ops.push_back(entry.first);
      for (Operation *at = fuseApply ? last->getNextNode() : nullptr; at;
           at = at->getNextNode())
        if (auto generic = dyn_cast<linalg::GenericOp>(at)) {
          if (isChainApply(ops, generic))
            apply = generic;
          break;
        }
      b.setInsertionPoint(apply ? apply : last);
      RowReductionKernel kernel{{b, last.getLoc()}, {}, warps, apply};
      for (auto [op, combiner] : chain)
        kernel.stages.push_back(Stage{
            op, combiner, blockc::nvptx::resolveInit(op.getDpsInits()[0], op)});
      kernel.build();
      blockc::nvptx::EpiloguePlan plan;
      for (Stage &s : kernel.stages)
        plan.inits.push_back(s.init);
      plan.kernel = kernel.launch;
      plans.push_back(std::move(plan));
      for (auto [op, combiner] : chain) {
        op->erase();
        ++numTiled;
      }
      if (apply) {
        apply->erase();
        ++numApplied;
      }
    }
    // The fills (and copies of fills) that only initialised the outputs.
    blockc::nvptx::eraseDeadWrites(getOperation().getBody().front(), plans);
  }
};

} // namespace
