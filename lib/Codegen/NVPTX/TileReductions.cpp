//===- TileReductions.cpp - one warp per row for row reductions -----------===//
//
// Rewrites reductions over the innermost dimension (norm statistics) into a
// gpu.launch with one warp per output element: the lanes stride over the
// row (coalesced) and combine with shuffles. See Codegen/NVPTX/Passes.td
// (GPUTileReductionsPass).
//
//===----------------------------------------------------------------------===//

#include "EpilogueFusion.h"
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

/// Builds the kernel of one row reduction.
struct RowReductionKernel : blockc::nvptx::KernelBuilder {
  linalg::GenericOp op;
  Operation *combiner;
  int64_t warps;
  std::optional<blockc::nvptx::InitValue> init; // what the output holds
  gpu::LaunchOp launch = {};

  /// `combiner` applied to `acc` (in the place of the output) and `other`.
  Value combine(Value acc, Value other) {
    Value out = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
    IRMapping map;
    for (Value operand : combiner->getOperands())
      map.map(operand, operand == out ? acc : other);
    return b.clone(*combiner, map)->getResult(0);
  }

  void build() {
    MLIRContext *ctx = b.getContext();
    unsigned n = op.getNumLoops();
    SmallVector<Value> sizes;
    for (Range r :
         cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc))
      sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
    Value rows = idx(1);
    for (unsigned d = 0; d + 1 < n; ++d)
      rows = mul(rows, sizes[d]);
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

    OpOperand *out = op.getDpsInitOperand(0);
    auto type = cast<FloatType>(op.getMatchingBlockArgument(out).getType());
    Value identity =
        arith::ConstantOp::create(b, loc, type, identityOf(combiner, type));
    // Lane l folds elements l, l + 32, ... of the row from the identity.
    auto loop = scf::ForOp::create(
        b, loc, lane, sizes[n - 1], idx(kWarp), ValueRange{identity},
        [&](OpBuilder &nb, Location, Value k, ValueRange acc) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> at(iv);
          at[n - 1] = k;
          Value next = blockc::nvptx::evaluateGenericAt(
              b, loc, op, at, [&](OpOperand &operand) {
                return &operand == out ? acc.front() : Value();
              });
          scf::YieldOp::create(b, loc, next);
        });
    // A butterfly leaves the row's total in every lane; lane 0 folds it
    // into the output's initial value (evaluated when the output's writer
    // is known: EpilogueFusion.h).
    Value acc =
        xorReduce(loop.getResult(0), {16, 8, 4, 2, 1},
                  [&](Value x, Value other) { return combine(x, other); });
    auto first = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, idx(0)),
        false);
    b.setInsertionPointToStart(first.thenBlock());
    SmallVector<Value> outAt(iv.begin(), iv.end() - 1);
    Value old;
    if (!init)
      old = memref::LoadOp::create(b, loc, out->get(), outAt);
    else if (init->scalar)
      old = init->scalar;
    else
      old = blockc::nvptx::evaluateGenericAt(
          b, loc, init->generic, outAt, [](OpOperand &) { return Value(); });
    memref::StoreOp::create(b, loc, combine(old, acc), out->get(), outAt);
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
    OpBuilder b(&getContext());
    SmallVector<blockc::nvptx::EpiloguePlan> plans;
    for (auto [op, combiner] : reductions) {
      b.setInsertionPoint(op);
      RowReductionKernel kernel{
          {b, op.getLoc()},
          op,
          combiner,
          warps,
          blockc::nvptx::resolveInit(op.getDpsInits()[0], op)};
      kernel.build();
      plans.push_back({{}, {kernel.init}, {}, kernel.launch});
      op->erase();
      ++numTiled;
    }
    // The fills (and copies of fills) that only initialised the outputs.
    blockc::nvptx::eraseDeadWrites(getOperation().getBody().front(), plans);
  }
};

} // namespace
