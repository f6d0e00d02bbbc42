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
#include "RowReductions.h"
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

using blockc::nvptx::RowStage;
using blockc::nvptx::VectorAccess;

/// Builds the kernel of one row reduction, or of a chain of row reductions
/// over the same rows where each later one reads earlier ones' results at
/// its row (a norm's max |x|, then its scaled sum of squares).
struct RowReductionKernel : blockc::nvptx::RowChainBuilder {
  int64_t warps;
  gpu::LaunchOp launch = {};
  Value applyLength = {};
  VectorAccess applyVec = {};

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
    prepareStages();
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
      RowStage &s = stages[i];
      OpOperand *out = s.op.getDpsInitOperand(0);
      Value identity = this->identity(s);
      Type type = identity.getType();
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
      Value acc = warpTotal(s, partial);
      auto initial = [&] { return initialValue(s, outAt); };
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
      if (Operation *combiner = blockc::nvptx::matchRowReduction(op))
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
        if (blockc::nvptx::canFollowRowChain(earlier, op)) {
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
          if (blockc::nvptx::isRowChainApply(ops, generic))
            apply = generic;
          break;
        }
      b.setInsertionPoint(apply ? apply : last);
      RowReductionKernel kernel{{{b, last.getLoc()}, {}, apply}, warps};
      for (auto [op, combiner] : chain)
        kernel.stages.push_back(RowStage{
            op, combiner, blockc::nvptx::resolveInit(op.getDpsInits()[0], op)});
      kernel.build();
      blockc::nvptx::EpiloguePlan plan;
      for (RowStage &s : kernel.stages)
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
