//===- EpilogueFusion.cpp - what tensor-core kernels do with results ------===//
//
// See EpilogueFusion.h and Codegen/NVPTX/Passes.td (GPUTileMatmulPass).
//
//===----------------------------------------------------------------------===//

#include "EpilogueFusion.h"
#include "blockc/Codegen/Common/Buffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace blockc::nvptx {
namespace {

/// Whether the buffers `a` and `b` may overlap: unless they view distinct
/// allocations or distinct function arguments (which the runtimes pass as
/// distinct buffers).
bool mayAlias(Value a, Value b) {
  Value ra = getRootBuffer(a), rb = getRootBuffer(b);
  if (ra == rb)
    return true;
  auto known = [](Value v) {
    return isa<BlockArgument>(v) || v.getDefiningOp<memref::AllocOp>();
  };
  return !known(ra) || !known(rb);
}

/// Whether `generic` computes one value per element of its one output
/// (identity map, all-parallel) from point reads of its inputs, with a body
/// that can be cloned anywhere (no memory effects).
bool isPointwise(linalg::GenericOp generic) {
  if (generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      generic->getNumResults() != 0)
    return false;
  OpOperand *init = generic.getDpsInitOperand(0);
  if (!generic.getMatchingIndexingMap(init).isIdentity())
    return false;
  for (OpOperand *input : generic.getDpsInputOperands())
    if (!isPointMap(generic.getMatchingIndexingMap(input)))
      return false;
  return hasPureBody(generic);
}

} // namespace

bool isReadOnlyUse(OpOperand &use) {
  Operation *user = use.getOwner();
  if (isa<memref::DimOp, memref::LoadOp>(user))
    return true;
  if (auto copy = dyn_cast<memref::CopyOp>(user))
    return &use == &copy.getSourceMutable() &&
           copy.getTarget() != copy.getSource();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
    return linalgOp.isDpsInput(&use);
  return false;
}

bool isFullWrite(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto fill = dyn_cast<linalg::FillOp>(user))
    return fill.getDpsInitOperand(0) == &use;
  if (auto copy = dyn_cast<memref::CopyOp>(user))
    return &use == &copy.getTargetMutable() &&
           copy.getTarget() != copy.getSource();
  if (auto generic = dyn_cast<linalg::GenericOp>(user))
    return generic.getDpsInitOperand(0) == &use && isPointwise(generic) &&
           generic.getMatchingBlockArgument(&use).use_empty() &&
           llvm::none_of(generic.getDpsInputs(),
                         [&](Value v) { return v == use.get(); });
  return false;
}

namespace {

/// Whether the function argument `v` is only ever read.
bool isReadOnlyArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return false;
  return llvm::all_of(arg.getUses(),
                      [](OpOperand &use) { return isReadOnlyUse(use); });
}

/// Whether every op strictly between `from` and `to` (same block) is free
/// of memory effects or an allocation, except those in `allowed`.
bool onlyPureOpsBetween(Operation *from, Operation *to,
                        ArrayRef<Operation *> allowed) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode())
    if (!llvm::is_contained(allowed, op) && !isMemoryEffectFree(op) &&
        !isa<memref::AllocOp, memref::DimOp>(op))
      return false;
  return true;
}

/// The uses of `buffer` by ops after `op` (same block): deallocations and
/// one pointwise generic that reads it; that generic, or null when there is
/// anything else. Uses after a reader that overwrites `buffer` in place (its
/// output, with the identity map, e.g. an f32 silu(gate) * up into gate's
/// buffer) see the reader's values and do not count.
linalg::GenericOp singleReaderAfter(Value buffer, Operation *op) {
  SmallVector<std::pair<Operation *, OpOperand *>> later;
  for (OpOperand &use : buffer.getUses()) {
    // A view (made before or after) could be read anywhere: give up.
    if (isa<ViewLikeOpInterface>(use.getOwner()))
      return {};
    Operation *user = op->getBlock()->findAncestorOpInBlock(*use.getOwner());
    if (user == op)
      continue;
    if (!user)
      return {};
    if (user->isBeforeInBlock(op))
      continue;
    later.push_back({user, &use});
  }
  llvm::stable_sort(later, [](const auto &x, const auto &y) {
    return x.first != y.first && x.first->isBeforeInBlock(y.first);
  });
  linalg::GenericOp reader;
  auto overwrites = [&](linalg::GenericOp generic) {
    for (OpOperand &init : generic.getDpsInitsMutable())
      if (init.get() == buffer &&
          generic.getMatchingIndexingMap(&init).isIdentity())
        return true;
    return false;
  };
  for (auto [user, use] : later) {
    if (reader && user != reader && overwrites(reader))
      break;
    if (isa<memref::DeallocOp>(user))
      continue;
    auto generic = user == use->getOwner() ? dyn_cast<linalg::GenericOp>(user)
                                           : linalg::GenericOp();
    if (!generic || (reader && reader != generic))
      return {};
    // The output use of a reader that also reads `buffer` (in place) is not
    // a read.
    if (generic.isDpsInit(use) && overwrites(generic) &&
        llvm::any_of(generic.getDpsInputOperands(), [&](OpOperand *in) {
          return in->get() == buffer &&
                 generic.getMatchingIndexingMap(in).isIdentity();
        }))
      continue;
    if (!generic.isDpsInput(use) ||
        !generic.getMatchingIndexingMap(use).isIdentity())
      return {};
    reader = generic;
  }
  return reader;
}

} // namespace

bool isPointMap(AffineMap map) {
  return llvm::all_of(map.getResults(), [](AffineExpr e) {
    return isa<AffineDimExpr, AffineConstantExpr>(e);
  });
}

bool hasPureBody(linalg::GenericOp generic) {
  return llvm::all_of(generic.getBody()->without_terminator(),
                      [](Operation &op) { return isMemoryEffectFree(&op); });
}

std::optional<InitValue> resolveInit(Value buffer, Operation *before) {
  if (!buffer.getDefiningOp<memref::AllocOp>() ||
      buffer.getParentBlock() != before->getBlock())
    return std::nullopt;
  Operation *writer = nullptr;
  for (OpOperand &use : buffer.getUses()) {
    // Uses inside other ops (kernels built already) count where those ops
    // are.
    Operation *user =
        before->getBlock()->findAncestorOpInBlock(*use.getOwner());
    if (!user)
      return std::nullopt;
    if (user == before || before->isBeforeInBlock(user) || isReadOnlyUse(use))
      continue;
    if (user != use.getOwner() || !isFullWrite(use))
      return std::nullopt;
    if (!writer || writer->isBeforeInBlock(user))
      writer = user;
  }
  if (!writer)
    return std::nullopt;
  if (auto fill = dyn_cast<linalg::FillOp>(writer)) {
    // The fill converts its scalar; the kernels use it as it is.
    if (fill.value().getType() != getElementTypeOrSelf(buffer.getType()))
      return std::nullopt;
    return InitValue{fill.value(), {}, writer};
  }
  if (auto copy = dyn_cast<memref::CopyOp>(writer)) {
    std::optional<InitValue> source = resolveInit(copy.getSource(), copy);
    if (!source)
      return std::nullopt;
    return InitValue{source->scalar, source->generic, writer};
  }
  // A bias broadcast: recomputed in the kernel, so its inputs must hold the
  // same values there (arguments nothing writes).
  auto generic = cast<linalg::GenericOp>(writer);
  if (!llvm::all_of(generic.getDpsInputs(), isReadOnlyArgument))
    return std::nullopt;
  return InitValue{{}, generic, writer};
}

EpiloguePlan
planEpilogue(linalg::LinalgOp op, bool fuse,
             function_ref<bool(linalg::LinalgOp, linalg::LinalgOp)> canPair) {
  EpiloguePlan plan;
  Value out = op.getDpsInitOperand(0)->get();
  plan.contractions.push_back(op);
  plan.inits.push_back(resolveInit(out, op));
  if (!fuse || !out.getDefiningOp<memref::AllocOp>())
    return plan;
  linalg::GenericOp consumer = singleReaderAfter(out, op);
  if (!consumer || !isPointwise(consumer) ||
      cast<MemRefType>(out.getType()).getRank() !=
          static_cast<int64_t>(consumer.getNumLoops()))
    return plan;
  Value result = consumer.getDpsInits()[0];
  // A second contraction whose result the consumer also reads (written
  // between the two): the pair runs as one kernel.
  linalg::LinalgOp partner;
  for (Value input : consumer.getDpsInputs()) {
    if (input == out)
      continue;
    for (Operation *user : input.getUsers()) {
      auto other = dyn_cast<linalg::LinalgOp>(user);
      if (!other || other == op || other->getBlock() != op->getBlock() ||
          other.getNumReductionLoops() == 0 || other.getNumDpsInits() != 1 ||
          other.getDpsInitOperand(0)->get() != input ||
          !op->isBeforeInBlock(other) || !other->isBeforeInBlock(consumer))
        continue;
      if (partner && partner != other)
        return plan;
      partner = other;
    }
  }
  SmallVector<Value, 2> outputs = {out};
  std::optional<InitValue> partnerInit;
  // Between the first contraction and the consumer: the partner and what
  // initialises its buffer (e.g. a copy of a zero-filled buffer).
  SmallVector<Operation *, 2> between;
  if (partner) {
    Value partnerOut = partner.getDpsInitOperand(0)->get();
    if (!partnerOut.getDefiningOp<memref::AllocOp>() ||
        singleReaderAfter(partnerOut, partner) != consumer ||
        !canPair(op, partner))
      return plan;
    outputs.push_back(partnerOut);
    partnerInit = resolveInit(partnerOut, partner);
    between.push_back(partner);
    if (partnerInit)
      between.push_back(partnerInit->writer);
  }
  if (!onlyPureOpsBetween(op, consumer, between))
    return plan;
  // The consumer's output is written while the contractions' inputs are
  // read by other blocks: it must not overlap them, nor the consumer's
  // other inputs except elementwise in place. It may be a contraction's own
  // output (an f32 consumer bufferized in place, e.g. silu(gate) * up into
  // gate's buffer): the kernel reads that buffer, if at all (an init not
  // evaluated), at the element it then writes, in the same thread.
  for (linalg::LinalgOp c : {op, partner}) {
    if (!c)
      continue;
    for (OpOperand &operand : c->getOpOperands())
      if (mayAlias(operand.get(), result) &&
          !(c.isDpsInit(&operand) && operand.get() == result))
        return plan;
  }
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    if (llvm::is_contained(outputs, input->get()))
      continue;
    if (mayAlias(input->get(), result) &&
        (input->get() != result ||
         !consumer.getMatchingIndexingMap(input).isIdentity()))
      return plan;
  }
  plan.consumer = consumer;
  if (partner) {
    plan.contractions.push_back(partner);
    plan.inits.push_back(partnerInit);
  }
  return plan;
}

namespace {

/// Whether `v` is available before `at` (same block or an enclosing one).
bool availableBefore(Value v, Operation *at) {
  Block *block = v.getParentBlock();
  Operation *anchor = block->findAncestorOpInBlock(*at);
  if (!anchor)
    return false;
  if (isa<BlockArgument>(v))
    return true;
  return v.getDefiningOp()->isBeforeInBlock(anchor);
}

/// Whether `v` is a buffer nothing writes: a read-only function argument or
/// a constant global.
bool isReadOnlyBuffer(Value v) {
  if (isReadOnlyArgument(v))
    return true;
  auto get = v.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return false;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  return global && global.getConstant();
}

} // namespace

std::optional<RotationPlan> planRotation(const EpiloguePlan &plan) {
  if (!plan.consumer || plan.contractions.size() != 1)
    return std::nullopt;
  linalg::GenericOp consumer = plan.consumer;
  Value out = consumer.getDpsInits()[0];
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (!outType || !out.getDefiningOp<memref::AllocOp>() ||
      out.getParentBlock() != consumer->getBlock() ||
      !outType.getLayout().isIdentity() ||
      ShapedType::isDynamic(outType.getShape().back()))
    return std::nullopt;
  int64_t rank = outType.getRank();
  // The contraction's output is indexed as the consumer's loops, whose
  // output map is the identity: the M dimensions, then N.
  linalg::LinalgOp op = plan.contractions.front();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->n.size() != 1 || !dims->batch.empty())
    return std::nullopt;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<unsigned> order(dims->m.begin(), dims->m.end());
  order.push_back(dims->n.front());
  if (outMap.getNumResults() != order.size() ||
      static_cast<int64_t>(order.size()) != rank)
    return std::nullopt;
  for (auto [e, d] : llvm::zip_equal(outMap.getResults(), order)) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || dim.getPosition() != d)
      return std::nullopt;
  }
  // The result's uses: the consumer, deallocations, one view splitting its
  // last dimension into [H, D] (the first after the consumer) and, after
  // the RoPE (checked below), uses of the buffer for something else.
  memref::ExpandShapeOp view;
  SmallVector<OpOperand *> others;
  for (OpOperand &use : out.getUses()) {
    Operation *user = use.getOwner();
    if (user == consumer.getOperation() || isa<memref::DeallocOp>(user))
      continue;
    auto expand = dyn_cast<memref::ExpandShapeOp>(user);
    if (expand && expand->getBlock() == consumer->getBlock() &&
        consumer->isBeforeInBlock(expand) &&
        (!view || expand->isBeforeInBlock(view))) {
      if (view)
        others.push_back(&view.getSrcMutable());
      view = expand;
      continue;
    }
    others.push_back(&use);
  }
  if (!view)
    return std::nullopt;
  SmallVector<ReassociationIndices> groups = view.getReassociationIndices();
  if (static_cast<int64_t>(groups.size()) != rank)
    return std::nullopt;
  for (int64_t i = 0; i + 1 < rank; ++i)
    if (groups[i].size() != 1)
      return std::nullopt;
  MemRefType viewType = view.getResultType();
  if (groups.back().size() != 2 || viewType.isDynamicDim(rank) ||
      viewType.isDynamicDim(rank - 1))
    return std::nullopt;
  int64_t headDim = viewType.getDimSize(rank);
  if (headDim % 2 != 0)
    return std::nullopt;
  // The view's uses: dims, and the RoPE.
  linalg::GenericOp rope;
  for (Operation *user : view->getUsers()) {
    if (isa<memref::DimOp>(user))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || (rope && rope != generic))
      return std::nullopt;
    rope = generic;
  }
  if (!rope || rope->getBlock() != consumer->getBlock() ||
      rope.getNumDpsInits() != 1 || rope->getNumResults() != 0 ||
      rope.getNumLoops() != rope.getNumParallelLoops() ||
      static_cast<int64_t>(rope.getNumLoops()) != rank + 1 ||
      !hasPureBody(rope))
    return std::nullopt;
  // Its output: a fresh 16-bit [M..., H, D] buffer, used only from the RoPE
  // on.
  OpOperand *init = rope.getDpsInitOperand(0);
  Value rotated = init->get();
  auto rotatedType = dyn_cast<MemRefType>(rotated.getType());
  if (!rotatedType || !rotated.getDefiningOp<memref::AllocOp>() ||
      rotated.getParentBlock() != rope->getBlock() ||
      !rotatedType.getLayout().isIdentity() ||
      rotatedType.getShape() != viewType.getShape() ||
      rotatedType.getElementType() != outType.getElementType() ||
      rotatedType.getElementTypeBitWidth() != 16 ||
      !rope.getMatchingIndexingMap(init).isIdentity() ||
      !rope.getMatchingBlockArgument(init).use_empty())
    return std::nullopt;
  for (Operation *user : rotated.getUsers()) {
    Operation *at = rope->getBlock()->findAncestorOpInBlock(*user);
    if (!at || (at != rope.getOperation() && at->isBeforeInBlock(rope)))
      return std::nullopt;
  }
  // The result's other uses come after the RoPE, the first of them a full
  // overwrite (bufferization reusing the buffer): they do not read it.
  Operation *first = nullptr;
  OpOperand *firstUse = nullptr;
  for (OpOperand *use : others) {
    Operation *at = rope->getBlock()->findAncestorOpInBlock(*use->getOwner());
    if (!at || !rope->isBeforeInBlock(at))
      return std::nullopt;
    if (!first || at->isBeforeInBlock(first)) {
      first = at;
      firstUse = at == use->getOwner() ? use : nullptr;
    } else if (at == first) {
      firstUse = nullptr;
    }
  }
  if (first && (!firstUse || !isFullWrite(*firstUse)))
    return std::nullopt;
  // Its inputs: the view at d and at (d + D / 2) mod D, the others read-only
  // buffers at loop indices.
  MLIRContext *ctx = rope.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank + 1, ctx);
  SmallVector<AffineExpr> rotatedExprs(identity.getResults());
  rotatedExprs.back() = (getAffineDimExpr(rank, ctx) + headDim / 2) % headDim;
  AffineMap rotatedMap = AffineMap::get(rank + 1, 0, rotatedExprs, ctx);
  RotationPlan rotation;
  rotation.rope = rope;
  rotation.headDim = headDim;
  rotation.output = rotated;
  for (OpOperand *input : rope.getDpsInputOperands()) {
    AffineMap map = rope.getMatchingIndexingMap(input);
    if (input->get() == view.getResult()) {
      if (map == identity && !rotation.x)
        rotation.x = input;
      else if (map == rotatedMap && !rotation.partner)
        rotation.partner = input;
      else
        return std::nullopt;
      continue;
    }
    if (!isPointMap(map) || !isReadOnlyBuffer(input->get()) ||
        !availableBefore(input->get(), consumer))
      return std::nullopt;
  }
  if (!rotation.x || !rotation.partner)
    return std::nullopt;
  // Values the body uses from outside (an offset of the positions) are
  // there where the kernel is.
  WalkResult walk = rope.getRegion().walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!rope->isAncestor(v.getParentBlock()->getParentOp()) &&
          !availableBefore(v, consumer))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return rotation;
}

void hoistRotationOutput(OpBuilder &b, Location loc, const EpiloguePlan &plan,
                         RotationPlan &rotation) {
  auto old = rotation.output.getDefiningOp<memref::AllocOp>();
  Value out = linalg::GenericOp(plan.consumer).getDpsInits()[0];
  auto type = cast<MemRefType>(old.getType());
  // Its M dimensions are the result's.
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(memref::DimOp::create(b, loc, out, d));
  auto alloc =
      memref::AllocOp::create(b, loc, type, sizes, old.getAlignmentAttr());
  old.getResult().replaceAllUsesWith(alloc.getResult());
  old->erase();
  rotation.output = alloc.getResult();
}

void eraseRotation(const EpiloguePlan &plan, const RotationPlan &rotation) {
  auto view = rotation.x->get().getDefiningOp<memref::ExpandShapeOp>();
  Value out = linalg::GenericOp(plan.consumer).getDpsInits()[0];
  linalg::GenericOp rope = rotation.rope;
  rope->erase();
  // Dims of the view are the result's (M dimensions) or constants.
  OpBuilder b(view);
  b.setInsertionPointAfter(view);
  for (Operation *user : llvm::make_early_inc_range(view->getUsers())) {
    auto dim = dyn_cast<memref::DimOp>(user);
    std::optional<int64_t> d = dim ? dim.getConstantIndex() : std::nullopt;
    if (!d)
      continue;
    int64_t rank = cast<MemRefType>(out.getType()).getRank();
    Value size;
    if (*d < rank - 1)
      size = memref::DimOp::create(b, dim.getLoc(), out, *d);
    else
      size = arith::ConstantIndexOp::create(
          b, dim.getLoc(), view.getResultType().getDimSize(*d));
    dim.replaceAllUsesWith(size);
    dim->erase();
  }
  if (view->use_empty())
    view->erase();
}

Value loadOperandAt(OpBuilder &b, Location loc, linalg::GenericOp generic,
                    OpOperand &operand, ArrayRef<Value> iv) {
  SmallVector<Value> at;
  for (AffineExpr e : generic.getMatchingIndexingMap(&operand).getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      at.push_back(iv[d.getPosition()]);
    else
      at.push_back(arith::ConstantIndexOp::create(
          b, loc, cast<AffineConstantExpr>(e).getValue()));
  }
  return memref::LoadOp::create(b, loc, operand.get(), at);
}

Value evaluateGenericAt(OpBuilder &b, Location loc, linalg::GenericOp generic,
                        ArrayRef<Value> iv,
                        function_ref<Value(OpOperand &)> given) {
  IRMapping map;
  Block *body = generic.getBody();
  for (OpOperand &operand : generic->getOpOperands()) {
    BlockArgument arg = generic.getMatchingBlockArgument(&operand);
    if (arg.use_empty())
      continue;
    Value v = given(operand);
    if (!v)
      v = loadOperandAt(b, loc, generic, operand, iv);
    map.map(arg, v);
  }
  for (Operation &bodyOp : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
      map.map(index.getResult(), iv[index.getDim()]);
      continue;
    }
    b.clone(bodyOp, map);
  }
  return map.lookupOrDefault(body->getTerminator()->getOperand(0));
}

std::optional<ProloguePlan> planPrologue(linalg::LinalgOp op,
                                         OpOperand &input) {
  Value buffer = input.get();
  auto type = dyn_cast<MemRefType>(buffer.getType());
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!type || !type.getElementType().isF32() || !alloc ||
      alloc->getBlock() != op->getBlock())
    return std::nullopt;
  // The last writer before `op`: every other use between it and `op` only
  // reads the buffer.
  linalg::GenericOp producer;
  for (Operation *at = op->getPrevNode(); at; at = at->getPrevNode()) {
    bool writes = false;
    for (OpOperand &use : at->getOpOperands())
      if (use.get() == buffer && !isReadOnlyUse(use))
        writes = true;
    if (!writes)
      continue;
    producer = dyn_cast<linalg::GenericOp>(at);
    break;
  }
  if (!producer || !isPointwise(producer) ||
      producer.getDpsInits()[0] != buffer ||
      !producer.getMatchingBlockArgument(producer.getDpsInitOperand(0))
           .use_empty() ||
      producer.getNumLoops() != static_cast<unsigned>(type.getRank()) ||
      llvm::is_contained(producer.getDpsInputs(), buffer))
    return std::nullopt;
  // Uses of the buffer nested in ops between the two (a region reading or
  // writing it) are not followed.
  for (OpOperand &use : buffer.getUses()) {
    Operation *at = op->getBlock()->findAncestorOpInBlock(*use.getOwner());
    if (!at || (at != use.getOwner() && producer->isBeforeInBlock(at) &&
                at->isBeforeInBlock(op)))
      return std::nullopt;
  }
  ProloguePlan plan;
  plan.producer = producer;
  int64_t last = type.getRank() - 1;
  for (OpOperand *in : producer.getDpsInputOperands()) {
    AffineMap map = producer.getMatchingIndexingMap(in);
    if (map.isIdentity() && in->get().getType() == type && !plan.streamed) {
      plan.streamed = in;
      continue;
    }
    bool rows = true, ks = true;
    for (AffineExpr e : map.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e)) {
        rows &= d.getPosition() != last;
        ks &= d.getPosition() == last;
      }
    if (rows)
      plan.rowInputs.push_back(in);
    else if (ks)
      plan.kInputs.push_back(in);
    else
      return std::nullopt;
  }
  if (!plan.streamed)
    return std::nullopt;
  // Nothing between the producer and `op` writes what the kernel reads in
  // the producer's place.
  for (Operation *at = producer->getNextNode(); at != op;
       at = at->getNextNode()) {
    if (isMemoryEffectFree(at) || isa<memref::AllocOp, memref::DimOp>(at))
      continue;
    SmallVector<Value> written;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(at))
      written.push_back(dealloc.getMemref());
    else if (auto copy = dyn_cast<memref::CopyOp>(at))
      written.push_back(copy.getTarget());
    else if (auto dps = dyn_cast<linalg::LinalgOp>(at))
      llvm::append_range(written, dps.getDpsInits());
    else
      return std::nullopt;
    for (Value w : written)
      for (Value read : producer->getOperands())
        if (mayAlias(w, read))
          return std::nullopt;
  }
  return plan;
}

bool writesPrologueInputs(const EpiloguePlan &plan,
                          const ProloguePlan &prologue) {
  SmallVector<Value> written;
  for (linalg::LinalgOp c : plan.contractions)
    written.push_back(c.getDpsInitOperand(0)->get());
  linalg::GenericOp consumer = plan.consumer, producer = prologue.producer;
  if (consumer)
    written.push_back(consumer.getDpsInits()[0]);
  for (Value w : written)
    for (Value read : producer.getDpsInputs())
      if (mayAlias(w, read))
        return true;
  return false;
}

void eraseIfUnread(linalg::GenericOp producer) {
  Value buffer = producer.getDpsInits()[0];
  Block *block = producer->getBlock();
  Operation *first = nullptr;
  OpOperand *firstUse = nullptr;
  for (OpOperand &use : buffer.getUses()) {
    Operation *at = block->findAncestorOpInBlock(*use.getOwner());
    if (!at)
      return;
    if (at == producer.getOperation() || at->isBeforeInBlock(producer) ||
        isa<memref::DeallocOp>(at))
      continue;
    if (!first || at->isBeforeInBlock(first)) {
      first = at;
      firstUse = at == use.getOwner() ? &use : nullptr;
    } else if (at == first) {
      // Two uses by one op: it reads the buffer unless it is a full write.
      firstUse = nullptr;
    }
  }
  if (first && (!firstUse || !isFullWrite(*firstUse)))
    return;
  producer->erase();
}

namespace {

/// Visits, in writeEpilogueResults's order, each operand whose value it
/// loads from memory: `visit(generic, operand)` for an operand of an
/// evaluated init or of the consumer, `visit({}, init)` for a contraction's
/// init buffer read as it is.
void forEachEpilogueLoad(
    linalg::LinalgOp op, const EpiloguePlan &plan,
    function_ref<void(linalg::GenericOp, OpOperand &)> visit) {
  for (auto [c, start] : llvm::zip_equal(plan.contractions, plan.inits)) {
    if (!start) {
      visit({}, *linalg::LinalgOp(c).getDpsInitOperand(0));
    } else if (!start->scalar) {
      linalg::GenericOp generic = start->generic;
      for (OpOperand &operand : generic->getOpOperands())
        if (!generic.getMatchingBlockArgument(&operand).use_empty())
          visit(generic, operand);
    }
  }
  if (!plan.consumer)
    return;
  linalg::GenericOp consumer = plan.consumer;
  for (OpOperand &operand : consumer->getOpOperands()) {
    if (consumer.getMatchingBlockArgument(&operand).use_empty())
      continue;
    if (llvm::any_of(plan.contractions, [&](linalg::LinalgOp c) {
          return operand.get() == c.getDpsInitOperand(0)->get();
        }))
      continue;
    visit(consumer, operand);
  }
}

/// The indices of `op`'s output at loop indices `iv`.
SmallVector<Value> initIndices(linalg::LinalgOp op, ArrayRef<Value> iv) {
  SmallVector<Value> at;
  for (AffineExpr e :
       op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResults())
    at.push_back(iv[cast<AffineDimExpr>(e).getPosition()]);
  return at;
}

} // namespace

SmallVector<Value> loadEpilogueInputs(OpBuilder &b, Location loc,
                                      linalg::LinalgOp op,
                                      const EpiloguePlan &plan,
                                      ArrayRef<Value> iv) {
  SmallVector<Value> at = initIndices(op, iv);
  SmallVector<Value> loaded;
  forEachEpilogueLoad(op, plan, [&](linalg::GenericOp generic, OpOperand &in) {
    if (!generic)
      loaded.push_back(memref::LoadOp::create(b, loc, in.get(), at));
    else
      loaded.push_back(loadOperandAt(b, loc, generic, in, at));
  });
  return loaded;
}

Value epilogueOutput(linalg::LinalgOp op, const EpiloguePlan &plan) {
  if (plan.consumer)
    return linalg::GenericOp(plan.consumer).getDpsInits()[0];
  return op.getDpsInitOperand(0)->get();
}

void writeEpilogueResults(OpBuilder &b, Location loc, linalg::LinalgOp op,
                          const EpiloguePlan &plan, ArrayRef<Value> iv,
                          ArrayRef<Value> sums, ArrayRef<Value> loaded) {
  Value value = computeEpilogueResult(b, loc, op, plan, iv, sums, loaded);
  memref::StoreOp::create(b, loc, value, epilogueOutput(op, plan),
                          initIndices(op, iv));
}

Value computeEpilogueResult(OpBuilder &b, Location loc, linalg::LinalgOp op,
                            const EpiloguePlan &plan, ArrayRef<Value> iv,
                            ArrayRef<Value> sums, ArrayRef<Value> loaded) {
  SmallVector<Value> at = initIndices(op, iv);
  // The next preloaded value, in forEachEpilogueLoad's order (null without
  // `loaded`: load it here).
  size_t next = 0;
  auto preloaded = [&]() -> Value {
    return loaded.empty() ? Value() : loaded[next++];
  };
  SmallVector<Value> results;
  for (auto [c, start, sum] :
       llvm::zip_equal(plan.contractions, plan.inits, sums)) {
    Value out = linalg::LinalgOp(c).getDpsInitOperand(0)->get();
    Value value;
    if (!start) {
      value = preloaded();
      if (!value)
        value = memref::LoadOp::create(b, loc, out, at);
    } else if (start->scalar) {
      value = start->scalar;
    } else {
      value = evaluateGenericAt(b, loc, start->generic, at,
                                [&](OpOperand &) { return preloaded(); });
    }
    results.push_back(arith::AddFOp::create(b, loc, value, sum));
  }
  if (!plan.consumer)
    return results.front();
  linalg::GenericOp consumer = plan.consumer;
  return evaluateGenericAt(b, loc, consumer, at, [&](OpOperand &operand) {
    for (auto [c, result] : llvm::zip_equal(plan.contractions, results))
      if (operand.get() == linalg::LinalgOp(c).getDpsInitOperand(0)->get())
        return result;
    return preloaded();
  });
}

std::pair<OpOperand *, OpOperand *>
inputsMN(linalg::LinalgOp op, const linalg::ContractionDimensions &dims) {
  OpOperand *lhs = op.getDpsInputOperand(0), *rhs = op.getDpsInputOperand(1);
  for (AffineExpr e : op.getMatchingIndexingMap(lhs).getResults())
    if (llvm::is_contained(dims.m, cast<AffineDimExpr>(e).getPosition()))
      return {lhs, rhs};
  return {rhs, lhs};
}

void eraseComputedOps(EpiloguePlan &plan, linalg::LinalgOp op,
                      DenseSet<Operation *> &done) {
  if (plan.consumer)
    plan.consumer->erase();
  for (linalg::LinalgOp c : plan.contractions) {
    done.insert(c);
    if (c != op)
      c->erase();
  }
  op->erase();
}

void eraseDeadWrites(Block &body, ArrayRef<EpiloguePlan> plans) {
  // The writers of the buffers the kernels now start from their evaluated
  // init: dead when nothing reads the buffer between them and the kernel.
  for (const EpiloguePlan &plan : plans) {
    if (!plan.kernel)
      continue;
    for (const std::optional<InitValue> &init : plan.inits) {
      if (!init || !init->writer)
        continue;
      Operation *writer = init->writer;
      Value buffer;
      if (auto copy = dyn_cast<memref::CopyOp>(writer))
        buffer = copy.getTarget();
      else
        buffer = cast<DestinationStyleOpInterface>(writer).getDpsInits()[0];
      // Positions are compared in the writer's block (a kernel may be
      // built in a nested block of the function).
      Block *block = writer->getBlock();
      if (plan.kernel->getBlock() != block)
        continue;
      bool read = llvm::any_of(buffer.getUsers(), [&](Operation *user) {
        Operation *at = block->findAncestorOpInBlock(*user);
        return !at || (at != writer && writer->isBeforeInBlock(at) &&
                       at->isBeforeInBlock(plan.kernel));
      });
      if (!read)
        writer->erase();
    }
  }
  // Allocations that are only written and freed, to a fixed point (erasing
  // a copy ends a read of its source).
  while (true) {
    SmallVector<memref::AllocOp> dead;
    for (auto alloc : body.getOps<memref::AllocOp>())
      if (llvm::all_of(alloc->getUses(), [](OpOperand &use) {
            return isa<memref::DeallocOp>(use.getOwner()) || isFullWrite(use);
          }))
        dead.push_back(alloc);
    if (dead.empty())
      return;
    for (memref::AllocOp alloc : dead) {
      SetVector<Operation *> users(alloc->user_begin(), alloc->user_end());
      for (Operation *user : users)
        user->erase();
      alloc->erase();
    }
  }
}

} // namespace blockc::nvptx
