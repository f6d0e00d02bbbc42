//===- MergeLaunches.cpp - independent neighbouring launches as one -------===//
//
// See Codegen/NVPTX/Passes.td (GPUMergeLaunchesPass) and docs/GPU.md.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Buffers.h"
#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUMERGELAUNCHESPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using blockc::codegen::CodegenDialect;
using blockc::codegen::KernelKindAttr;

namespace {

/// Whether a write to one of `writes` may be seen by (or clobber) an
/// access to one of `others`.
bool mayConflict(ArrayRef<Value> writes, bool unknownWrites,
                 ArrayRef<Value> others, bool unknownOthers) {
  if (unknownWrites && (unknownOthers || !others.empty()))
    return true;
  if (unknownOthers && !writes.empty())
    return true;
  for (Value w : writes)
    for (Value o : others)
      if (!blockc::areDistinctBuffers(w, o))
        return true;
  return false;
}

bool areIndependent(gpu::LaunchOp a, gpu::LaunchOp b) {
  blockc::BufferAccesses x = blockc::collectBufferAccesses(a),
                         y = blockc::collectBufferAccesses(b);
  SmallVector<Value> yAll(y.reads), xAll(x.reads);
  llvm::append_range(yAll, y.writes);
  llvm::append_range(xAll, x.writes);
  return !mayConflict(x.writes, x.unknownWrites, yAll,
                      y.unknownReads || y.unknownWrites) &&
         !mayConflict(y.writes, y.unknownWrites, xAll,
                      x.unknownReads || x.unknownWrites);
}

struct MergeLaunchesPass
    : blockc::nvptx::impl::GPUMergeLaunchesPassBase<MergeLaunchesPass> {
  using Base::Base;

  /// Whether `launch` may take part in a merge at all.
  bool isCandidate(gpu::LaunchOp launch) {
    if (launch.getDynamicSharedMemorySize() || launch.hasClusterSize() ||
        launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
        launch.getNumWorkgroupAttributions() != 0 ||
        launch.getNumPrivateAttributions() != 0 ||
        !launch.getBody().hasOneBlock())
      return false;
    auto kind =
        launch->getAttrOfType<KernelKindAttr>(CodegenDialect::kKernelAttrName);
    if (!kinds.empty() &&
        (!kind ||
         !llvm::is_contained(
             kinds, blockc::codegen::stringifyKernelKind(kind.getValue()))))
      return false;
    // Block ids and grid extents along x are remapped through the body's
    // arguments; the ops that read them otherwise are not.
    WalkResult grid = launch.getBody().walk([](Operation *op) {
      bool alongX = false;
      if (auto id = dyn_cast<gpu::BlockIdOp>(op))
        alongX = id.getDimension() == gpu::Dimension::x;
      if (auto dim = dyn_cast<gpu::GridDimOp>(op))
        alongX = dim.getDimension() == gpu::Dimension::x;
      return alongX || isa<gpu::GlobalIdOp, gpu::ClusterIdOp,
                           gpu::ClusterBlockIdOp, gpu::ClusterDimOp,
                           gpu::ClusterDimBlocksOp>(op)
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    return !grid.wasInterrupted();
  }

  bool canMerge(gpu::LaunchOp a, gpu::LaunchOp b) {
    if (!isCandidate(a) || !isCandidate(b))
      return false;
    if (a->getAttr(CodegenDialect::kKernelAttrName) !=
        b->getAttr(CodegenDialect::kKernelAttrName))
      return false;
    gpu::KernelDim3 ta = a.getBlockSizeOperandValues(),
                    tb = b.getBlockSizeOperandValues();
    gpu::KernelDim3 ga = a.getGridSizeOperandValues(),
                    gb = b.getGridSizeOperandValues();
    // Equal values or equal constants.
    auto same = [](Value x, Value y) {
      return isEqualConstantIntOrValue(x, y);
    };
    return same(ta.x, tb.x) && same(ta.y, tb.y) && same(ta.z, tb.z) &&
           same(ga.y, gb.y) && same(ga.z, gb.z) && areIndependent(a, b);
  }

  /// Whether `op`, which lies after `anchor` in its block, may move above
  /// it: it has no regions and neither reads nor writes memory (it may
  /// allocate), and its operands are defined above `anchor` or by ops
  /// that move with it.
  static bool canHoist(Operation *op, Operation *anchor,
                       const llvm::SmallPtrSetImpl<Operation *> &moving) {
    if (op->getNumRegions() != 0 || op->getNumResults() == 0)
      return false;
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface)
      return false;
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    if (!llvm::all_of(effects, [](MemoryEffects::EffectInstance &e) {
          return isa<MemoryEffects::Allocate>(e.getEffect());
        }))
      return false;
    // `op` is in `anchor`'s block: block arguments and values of enclosing
    // blocks dominate both.
    return llvm::all_of(op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return !def || moving.contains(def) ||
             def->getBlock() != anchor->getBlock() ||
             def->isBeforeInBlock(anchor);
    });
  }

  /// The first operation after `anchor` that cannot move above it, and in
  /// `between` those before it that can.
  static Operation *nextFixed(Operation *anchor,
                              SmallVectorImpl<Operation *> &between) {
    llvm::SmallPtrSet<Operation *, 8> moving;
    for (Operation *op = anchor->getNextNode(); op; op = op->getNextNode()) {
      if (!canHoist(op, anchor, moving))
        return op;
      moving.insert(op);
      between.push_back(op);
    }
    return nullptr;
  }

  /// The launch that `block` starts (ends) with, skipping operations
  /// without memory effects; null if there is none.
  static gpu::LaunchOp firstLaunch(Block &block) {
    // Operations without memory effects before it do not stop the search:
    // they would move above the other launch in the merge.
    for (Operation &op : block) {
      if (auto launch = dyn_cast<gpu::LaunchOp>(op))
        return launch;
      if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
        return {};
    }
    return {};
  }

  static gpu::LaunchOp lastLaunch(Block &block) {
    for (Operation &op : llvm::reverse(block.without_terminator())) {
      if (auto launch = dyn_cast<gpu::LaunchOp>(op))
        return launch;
      if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
        return {};
    }
    return {};
  }

  /// Whether the then (else) blocks of `a` and `b` end and start with
  /// launches that would merge.
  bool branchesMerge(scf::IfOp a, scf::IfOp b) {
    auto pairMerges = [&](Region &ra, Region &rb) {
      if (ra.empty() || rb.empty())
        return false;
      gpu::LaunchOp x = lastLaunch(ra.front()), y = firstLaunch(rb.front());
      return x && y && canMerge(x, y);
    };
    return pairMerges(a.getThenRegion(), b.getThenRegion()) ||
           pairMerges(a.getElseRegion(), b.getElseRegion());
  }

  /// Moves the branches of `b` to the ends of those of `a`; erases `b`.
  static void mergeIfs(scf::IfOp a, scf::IfOp b) {
    auto append = [](Region &to, Region &from) {
      if (from.empty())
        return;
      Block &dst = to.front(), &src = from.front();
      dst.getOperations().splice(dst.getTerminator()->getIterator(),
                                 src.getOperations(), src.begin(),
                                 src.getTerminator()->getIterator());
    };
    append(a.getThenRegion(), b.getThenRegion());
    if (!b.getElseRegion().empty()) {
      if (a.getElseRegion().empty()) {
        OpBuilder builder(a);
        Block *block = builder.createBlock(&a.getElseRegion());
        builder.setInsertionPointToEnd(block);
        scf::YieldOp::create(builder, a.getLoc());
      }
      append(a.getElseRegion(), b.getElseRegion());
    }
    b.erase();
  }

  /// One launch that runs `a`'s blocks, then `b`'s.
  gpu::LaunchOp mergeLaunches(gpu::LaunchOp a, gpu::LaunchOp b) {
    OpBuilder builder(a);
    Location loc = b.getLoc();
    gpu::KernelDim3 ga = a.getGridSizeOperandValues(),
                    gb = b.getGridSizeOperandValues(),
                    threads = a.getBlockSizeOperandValues();
    Value total = builder.createOrFold<arith::AddIOp>(loc, ga.x, gb.x);
    auto merged = gpu::LaunchOp::create(builder, a.getLoc(), total, ga.y, ga.z,
                                        threads.x, threads.y, threads.z);
    merged->setDiscardableAttrs(a->getDiscardableAttrDictionary());
    Block &body = merged.getBody().front();
    builder.setInsertionPointToEnd(&body);
    Value bx = merged.getBlockIds().x;
    Value first = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                        bx, ga.x);
    auto choice = scf::IfOp::create(builder, loc, first, /*withElse=*/true);
    gpu::TerminatorOp::create(builder, loc);

    auto inlineBody = [&](gpu::LaunchOp from, Block &into, Value blockX,
                          Value gridX) {
      IRMapping map;
      Block &src = from.getBody().front();
      for (auto [oldArg, newArg] :
           llvm::zip(src.getArguments().take_front(
                         gpu::LaunchOp::kNumConfigRegionAttributes),
                     body.getArguments().take_front(
                         gpu::LaunchOp::kNumConfigRegionAttributes)))
        map.map(oldArg, newArg);
      map.map(from.getBlockIds().x, blockX);
      map.map(from.getGridSize().x, gridX);
      OpBuilder inner = OpBuilder::atBlockTerminator(&into);
      for (Operation &op : src.without_terminator())
        inner.clone(op, map);
    };
    inlineBody(a, choice.getThenRegion().front(), bx, ga.x);
    OpBuilder atElse = OpBuilder::atBlockBegin(&choice.getElseRegion().front());
    Value shifted = arith::SubIOp::create(atElse, loc, bx, ga.x);
    inlineBody(b, choice.getElseRegion().front(), shifted, gb.x);
    a.erase();
    b.erase();
    ++numMerged;
    return merged;
  }

  /// Merges what can be merged among the operations of `block` and, after
  /// that, in the regions of the operations left.
  void mergeInBlock(Block &block) {
    if (block.empty())
      return;
    for (Operation *op = &block.front(); op; op = op->getNextNode()) {
      while (true) {
        SmallVector<Operation *> between;
        Operation *next = nextFixed(op, between);
        if (!next)
          break;
        auto la = dyn_cast<gpu::LaunchOp>(op);
        auto lb = dyn_cast<gpu::LaunchOp>(next);
        auto ia = dyn_cast<scf::IfOp>(op);
        auto ib = dyn_cast<scf::IfOp>(next);
        bool launches = la && lb && canMerge(la, lb);
        bool ifs =
            ia && ib && ia.getNumResults() == 0 && ib.getNumResults() == 0 &&
            ia.getCondition() == ib.getCondition() && branchesMerge(ia, ib);
        if (!launches && !ifs)
          break;
        for (Operation *moved : between)
          moved->moveBefore(op);
        if (launches)
          op = mergeLaunches(la, lb);
        else
          mergeIfs(ia, ib); // Its launches merge below.
      }
      if (!isa<gpu::LaunchOp>(op))
        for (Region &region : op->getRegions())
          for (Block &inner : region)
            mergeInBlock(inner);
    }
  }

  void runOnOperation() override {
    for (Block &block : getOperation().getFunctionBody())
      mergeInBlock(block);
  }
};

} // namespace
