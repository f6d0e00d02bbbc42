//===- TileGemv.cpp - weight-streaming small-M contractions ---------------===//
//
// Rewrites bf16 / f16 contractions configured with #blockc_codegen.gpu_gemv
// (a decode step's projections, M = B * T with T = 1) into one gpu.launch
// that reads the weight once with 16-byte vector loads, a warp per output
// column, and reduces over the warp with shuffles. See
// Codegen/NVPTX/Passes.td (GPUTileGemvPass) and docs/GPU.md#decoding.
//
//===----------------------------------------------------------------------===//

#include "TileGemv.h"

#include "blockc/Codegen/NVPTX/KernelBuilder.h"
#include "blockc/Codegen/NVPTX/KernelMatchers.h"
#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUTILEGEMVPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using namespace blockc::codegen;

namespace {

/// Elements of one 16-byte vector load of a 16-bit type.
constexpr int64_t kVector = 8;

using blockc::nvptx::inputsMN;

/// Builds the kernel of one plan (see GPUGemvAttr and GPUTileGemvPass).
struct GemvKernel : blockc::nvptx::KernelBuilder {
  linalg::LinalgOp op;
  ArrayRef<Value> loopSizes; // host values, one per loop dimension
  GPUGemvAttr cfg;
  const blockc::nvptx::EpiloguePlan &plan;

  linalg::ContractionDimensions dims = {};
  OpOperand *aOp = nullptr; // the activation [M..., K]
  // [N, K], one per contraction of the plan.
  SmallVector<Value> weights = {};
  Type elem = {};
  int64_t numChunks = 0; // 16-byte vectors per row of K
  Value mSize = {}, nSize = {}, lane = {};
  // Per column: n (clamped), n < N.
  SmallVector<Value> columns = {}, columnValid = {};

  Value product(ArrayRef<unsigned> group) {
    Value p = idx(1);
    for (unsigned d : group)
      p = mul(p, loopSizes[d]);
    return p;
  }

  /// Loop indices with the M dimensions set from the linear row `m`.
  SmallVector<Value> rowIndices(Value m) {
    SmallVector<Value> iv(op.getNumLoops(), idx(0));
    for (unsigned d : llvm::reverse(dims.m)) {
      iv[d] = arith::RemUIOp::create(b, loc, m, loopSizes[d]);
      m = arith::DivUIOp::create(b, loc, m, loopSizes[d]);
    }
    return iv;
  }

  Value load(Value buffer, SmallVector<Value> indices) {
    auto type = VectorType::get({kVector}, elem);
    Value v =
        vector::LoadOp::create(b, loc, type, buffer, indices,
                               /*nontemporal=*/false, llvm::MaybeAlign(16))
            .getResult();
    return arith::ExtFOp::create(b, loc,
                                 VectorType::get({kVector}, b.getF32Type()), v);
  }

  /// One unrolled step of the reduction over `nRows` rows whose activation
  /// indices (K last, set here) are `rowAt`: `unroll` vectors per row and
  /// weight row, vector u of lane l at element `base + 8 (32 u + l)`; with
  /// `tail`, only the first `tail` vectors after `base` exist (later lanes
  /// read the last one and keep their sums).
  SmallVector<Value> step(Value base, ArrayRef<SmallVector<Value>> rowAt,
                          ValueRange accs, int64_t tail) {
    int64_t unroll = cfg.getUnroll(), cols = cfg.getColumns(),
            pairs = weights.size(), nRows = rowAt.size();
    SmallVector<Value> acc(accs);
    // All loads of the step first (several 16-byte loads in flight per
    // lane), then the FMAs.
    SmallVector<Value> ks, guards;
    SmallVector<SmallVector<Value>> x(unroll), w(unroll);
    for (int64_t u = 0; u < unroll; ++u) {
      Value chunk = add(idx(32 * u), lane);
      Value guard;
      if (tail) {
        if (32 * u >= tail)
          break;
        if (32 * (u + 1) > tail) {
          guard = lt(chunk, idx(tail));
          chunk = arith::MinUIOp::create(b, loc, chunk, idx(tail - 1));
        }
      }
      Value k = add(base, mul(chunk, idx(kVector)));
      guards.push_back(guard);
      for (int64_t c = 0; c < cols; ++c)
        for (Value weight : weights)
          w[u].push_back(load(weight, {columns[c], k}));
      for (int64_t r = 0; r < nRows; ++r) {
        SmallVector<Value> at(rowAt[r]);
        at.back() = k;
        x[u].push_back(load(aOp->get(), at));
      }
    }
    for (auto [u, guard] : llvm::enumerate(guards))
      for (int64_t r = 0; r < nRows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          for (int64_t p = 0; p < pairs; ++p) {
            int64_t i = (r * cols + c) * pairs + p;
            Value sum = math::FmaOp::create(b, loc, x[u][r],
                                            w[u][c * pairs + p], acc[i]);
            acc[i] = guard ? arith::SelectOp::create(b, loc, guard, sum, acc[i])
                                 .getResult()
                           : sum;
          }
    return acc;
  }

  /// The results of rows [m0, m0 + nRows) (all valid) of the warp's
  /// columns.
  void emitRows(Value m0, int64_t nRows) {
    int64_t unroll = cfg.getUnroll(), cols = cfg.getColumns(),
            pairs = weights.size();
    SmallVector<SmallVector<Value>> rowIv, rowAt;
    AffineMap aMap = op.getMatchingIndexingMap(aOp);
    for (int64_t r = 0; r < nRows; ++r) {
      rowIv.push_back(rowIndices(add(m0, idx(r))));
      SmallVector<Value> at;
      for (AffineExpr e : aMap.getResults())
        at.push_back(rowIv.back()[cast<AffineDimExpr>(e).getPosition()]);
      rowAt.push_back(std::move(at));
    }
    auto accType = VectorType::get({kVector}, b.getF32Type());
    Value zero = arith::ConstantOp::create(
        b, loc, accType, DenseElementsAttr::get(accType, 0.0f));
    SmallVector<Value> init(nRows * cols * pairs, zero);
    int64_t perStep = 32 * unroll; // vectors of a row per warp and step
    int64_t full = numChunks / perStep, tail = numChunks % perStep;
    SmallVector<Value> acc = init;
    if (full > 0) {
      auto loop = scf::ForOp::create(
          b, loc, idx(0), idx(full), idx(1), init,
          [&](OpBuilder &nb, Location, Value s, ValueRange accs) {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            Value base = mul(s, idx(perStep * kVector));
            scf::YieldOp::create(b, loc, step(base, rowAt, accs, 0));
          });
      acc.assign(loop.getResults().begin(), loop.getResults().end());
    }
    if (tail)
      acc = step(idx(full * perStep * kVector), rowAt, acc, tail);
    // Every lane ends with every sum (uniform control flow: the shuffles
    // are reached by the whole warp).
    SmallVector<Value> sums;
    for (Value a : acc) {
      Value s =
          vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, a);
      sums.push_back(xorReduce(s, {16, 8, 4, 2, 1}, [&](Value x, Value y) {
        return arith::AddFOp::create(b, loc, x, y).getResult();
      }));
    }
    // Lane r * columns + c writes row r, column c.
    for (int64_t r = 0; r < nRows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           lane, idx(r * cols + c));
        auto ifOp = scf::IfOp::create(
            b, loc, arith::AndIOp::create(b, loc, mine, columnValid[c]),
            /*withElse=*/false);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        SmallVector<Value> iv(rowIv[r]);
        iv[dims.n.front()] = columns[c];
        SmallVector<Value> results;
        for (int64_t p = 0; p < pairs; ++p)
          results.push_back(sums[(r * cols + c) * pairs + p]);
        blockc::nvptx::writeEpilogueResults(b, loc, op, plan, iv, results);
      }
  }

  gpu::LaunchOp build() {
    MLIRContext *ctx = b.getContext();
    dims = *linalg::inferContractionDims(op);
    auto [a, w] = inputsMN(op, dims);
    aOp = a;
    for (linalg::LinalgOp c : plan.contractions)
      weights.push_back(c->getOpOperand(w->getOperandNumber()).get());
    elem = getElementTypeOrSelf(w->get().getType());
    numChunks =
        cast<MemRefType>(w->get().getType()).getShape().back() / kVector;
    mSize = product(dims.m);
    nSize = loopSizes[dims.n.front()];
    int64_t perBlock = cfg.getWarps() * cfg.getColumns();
    Value one = idx(1);
    auto launch = gpu::LaunchOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, nSize, idx(perBlock)), one,
        one, idx(32 * cfg.getWarps()), one, one);
    launch->setAttr(CodegenDialect::kKernelAttrName,
                    KernelKindAttr::get(ctx, KernelKind::gemv));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value tid = launch.getThreadIds().x;
    lane = rem(tid, 32);
    Value warp = div(tid, 32);
    Value n0 = mul(add(mul(launch.getBlockIds().x, idx(cfg.getWarps())), warp),
                   idx(cfg.getColumns()));
    Value lastN = arith::SubIOp::create(b, loc, nSize, one);
    for (int64_t c = 0; c < cfg.getColumns(); ++c) {
      Value n = add(n0, idx(c));
      columnValid.push_back(lt(n, nSize));
      columns.push_back(arith::MinUIOp::create(b, loc, n, lastN));
    }
    // Chunks of `rows` rows, then the rest one row at a time.
    int64_t rows = cfg.getRows();
    Value fullRows = mSize;
    if (rows > 1) {
      fullRows = mul(div(mSize, rows), idx(rows));
      scf::ForOp::create(b, loc, idx(0), fullRows, idx(rows), ValueRange{},
                         [&](OpBuilder &nb, Location, Value m0, ValueRange) {
                           OpBuilder::InsertionGuard g(b);
                           b.setInsertionPoint(nb.getInsertionBlock(),
                                               nb.getInsertionPoint());
                           emitRows(m0, rows);
                           scf::YieldOp::create(b, loc);
                         });
    }
    scf::ForOp::create(
        b, loc, rows > 1 ? fullRows : idx(0), mSize, one, ValueRange{},
        [&](OpBuilder &nb, Location, Value m0, ValueRange) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          emitRows(m0, 1);
          scf::YieldOp::create(b, loc);
        });
    gpu::TerminatorOp::create(b, loc);
    return launch;
  }
};

struct GPUTileGemvPass
    : blockc::nvptx::impl::GPUTileGemvPassBase<GPUTileGemvPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, GPUGemvAttr>> candidates;
    WalkResult walk = getOperation().walk([&](linalg::LinalgOp op) {
      auto gemv =
          op->getAttrOfType<GPUGemvAttr>(CodegenDialect::kGpuGemvAttrName);
      if (!gemv)
        return WalkResult::advance();
      if (!blockc::nvptx::isGemvCandidate(op)) {
        op->emitOpError() << "has '" << CodegenDialect::kGpuGemvAttrName
                          << "' but is not a contraction of a bf16 or f16 "
                             "[M..., K] buffer and an [N, K] buffer of that "
                             "type into f32";
        return WalkResult::interrupt();
      }
      std::optional<int64_t> m = blockc::nvptx::staticRows(op);
      if (m && *m > gemv.getMaxM()) {
        op->emitOpError() << "has '" << CodegenDialect::kGpuGemvAttrName
                          << "' but its M (" << *m << ") exceeds max_m ("
                          << gemv.getMaxM() << ")";
        return WalkResult::interrupt();
      }
      // A dynamic M with tensor-core tiles: blockc-gpu-tile-matmul chooses
      // at run time.
      if (!m && (op->hasAttr(CodegenDialect::kGpuMmaTilesAttrName) ||
                 op->hasAttr(CodegenDialect::kGpuWarpgroupTilesAttrName)))
        return WalkResult::advance();
      candidates.push_back({op, gemv});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    OpBuilder b(&getContext());
    SmallVector<blockc::nvptx::EpiloguePlan> plans;
    DenseSet<Operation *> done; // the second contractions of pairs
    for (auto [op, gemv] : candidates) {
      if (done.contains(op))
        continue;
      blockc::nvptx::EpiloguePlan plan = blockc::nvptx::planEpilogue(
          op, fuseEpilogues,
          [gemv = gemv](linalg::LinalgOp first, linalg::LinalgOp second) {
            return blockc::nvptx::canPairGemv(first, second, gemv);
          });
      b.setInsertionPoint(plan.consumer ? plan.consumer.getOperation()
                                        : op.getOperation());
      Location loc = op.getLoc();
      SmallVector<Value> sizes;
      for (Range r : op.createLoopRanges(b, loc))
        sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
      plan.kernel = blockc::nvptx::buildGemvKernel(b, op, sizes, gemv, plan);
      ++numGemv;
      if (plan.consumer)
        ++numEpilogues;
      if (plan.contractions.size() == 2)
        ++numPairs;
      blockc::nvptx::eraseComputedOps(plan, op, done);
      plans.push_back(plan);
    }
    blockc::nvptx::eraseDeadWrites(getOperation().getBody().front(), plans);
  }
};

} // namespace

bool blockc::nvptx::isGemvCandidate(linalg::LinalgOp op) {
  return isWarpgroupMatmulCandidate(op);
}

std::optional<int64_t> blockc::nvptx::staticRows(linalg::LinalgOp op) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t m = 1;
  for (unsigned d : dims->m) {
    if (ShapedType::isDynamic(ranges[d]))
      return std::nullopt;
    m *= ranges[d];
  }
  return m;
}

bool blockc::nvptx::canPairGemv(linalg::LinalgOp first, linalg::LinalgOp second,
                                GPUGemvAttr gemv) {
  if (second->getAttr(CodegenDialect::kGpuGemvAttrName) != gemv ||
      first.getIndexingMapsArray() != second.getIndexingMapsArray() ||
      first->getOperandTypes() != second->getOperandTypes() ||
      !isGemvCandidate(second))
    return false;
  linalg::ContractionDimensions dims = *linalg::inferContractionDims(first);
  OpOperand *a = inputsMN(first, dims).first;
  return a->get() == second->getOpOperand(a->getOperandNumber()).get();
}

gpu::LaunchOp blockc::nvptx::buildGemvKernel(OpBuilder &b, linalg::LinalgOp op,
                                             ArrayRef<Value> loopSizes,
                                             GPUGemvAttr gemv,
                                             const EpiloguePlan &plan) {
  GemvKernel kernel{{b, op.getLoc()}, op, loopSizes, gemv, plan, {}};
  return kernel.build();
}

scf::IfOp blockc::nvptx::buildGemvDispatch(OpBuilder &b, linalg::LinalgOp op,
                                           ArrayRef<Value> loopSizes,
                                           GPUGemvAttr gemv,
                                           const EpiloguePlan &plan) {
  Location loc = op.getLoc();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  Value m = arith::ConstantIndexOp::create(b, loc, 1);
  for (unsigned d : dims->m)
    m = arith::MulIOp::create(b, loc, m, loopSizes[d]);
  Value small = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ule, m,
      arith::ConstantIndexOp::create(b, loc, gemv.getMaxM()));
  auto ifOp = scf::IfOp::create(b, loc, small, /*withElse=*/true);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  buildGemvKernel(b, op, loopSizes, gemv, plan);
  b.setInsertionPointToStart(ifOp.elseBlock());
  return ifOp;
}
