//===- TileGemv.cpp - weight-streaming small-M contractions ---------------===//
//
// Rewrites bf16 / f16 contractions configured with #blockc_codegen.gpu_gemv
// (a decode step's projections, M = B * T with T = 1) into one gpu.launch
// that reads the weight once with 16-byte vector loads, a warp per output
// column, and reduces over the warp with shuffles; optionally it applies
// the RoPE of its result (a warp per pair of partner columns) and writes
// it into the KV cache. See Codegen/NVPTX/Passes.td (GPUTileGemvPass) and
// docs/GPU.md#decoding.
//
//===----------------------------------------------------------------------===//

#include "TileGemv.h"

#include "blockc/Codegen/Common/Buffers.h"
#include "blockc/Codegen/NVPTX/KernelBuilder.h"
#include "blockc/Codegen/NVPTX/KernelMatchers.h"
#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

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
  const std::optional<blockc::nvptx::AppendPlan> &append;
  // The norm that writes the M-side input, evaluated here; or null.
  const blockc::nvptx::NormPrologue *norm;

  linalg::ContractionDimensions dims = {};
  OpOperand *aOp = nullptr; // the activation [M..., K]
  // [N, K], one per contraction of the plan.
  SmallVector<Value> weights = {};
  Type elem = {};
  int64_t numChunks = 0; // 16-byte vectors per row of K
  Value mSize = {}, nSize = {}, lane = {};
  // Whether the kernel applies the plan's RoPE (warps own pairs of
  // partner columns); else a RoPE of the plan follows the kernel.
  bool rope = false;
  // Per column: n (clamped), n < N.
  SmallVector<Value> columns = {}, columnValid = {};
  // With `norm`: per row of emitRows, the results of its reductions.
  SmallVector<SmallVector<Value>> rowStats = {};

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

  /// The norm's statistics of the row whose activation indices are `at`
  /// (the norm's loop indices, K ignored), in every lane: the reductions'
  /// code of the norm's own kernel (RowChainBuilder), so the same values.
  SmallVector<Value> normStatistics(ArrayRef<Value> at) {
    blockc::nvptx::RowChainBuilder chain{{b, loc}, norm->stages, norm->apply};
    SmallVector<Value> outAt(at.drop_back());
    SmallVector<Value> results;
    for (blockc::nvptx::RowStage &s : chain.stages) {
      Value partial = chain.vectorPartial(s, at, lane, chain.identity(s));
      s.result = chain.combine(s, chain.initialValue(s, outAt),
                               chain.warpTotal(s, partial));
      results.push_back(s.result);
    }
    return results;
  }

  /// The 8 elements of the M-side input at `at` (K the vector's first) as
  /// f32, from the norm's inputs: its apply evaluated on each element with
  /// the row's statistics `stats`.
  Value normalized(ArrayRef<Value> at, ArrayRef<Value> stats) {
    blockc::nvptx::RowChainBuilder chain{{b, loc}, {}, norm->apply};
    linalg::GenericOp apply = norm->apply;
    DenseMap<OpOperand *, SmallVector<Value>> elements =
        chain.loadElements(apply, norm->applyVec, at, kVector);
    SmallVector<Value> values;
    for (int64_t j = 0; j < kVector; ++j) {
      SmallVector<Value> elemAt(at);
      elemAt.back() = add(at.back(), idx(j));
      values.push_back(blockc::nvptx::evaluateGenericAt(
          b, loc, apply, elemAt, [&](OpOperand &operand) -> Value {
            auto it = elements.find(&operand);
            if (it != elements.end())
              return it->second[j];
            for (auto [s, stat] : llvm::zip_equal(norm->stages, stats))
              if (operand.get() == linalg::GenericOp(s.op).getDpsInits()[0])
                return stat;
            return Value();
          }));
    }
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({kVector}, elem), values);
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
        x[u].push_back(norm ? normalized(at, rowStats[r])
                            : load(aOp->get(), at));
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
    // The norm's statistics of each row first (the apply's loop indices
    // are the input's indices: it writes the input at the identity).
    rowStats.clear();
    if (norm)
      for (int64_t r = 0; r < nRows; ++r)
        rowStats.push_back(normStatistics(rowAt[r]));
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
    if (rope) {
      // Lane r * columns / 2 + p writes row r, pair p (columns 2p, 2p + 1).
      for (int64_t r = 0; r < nRows; ++r)
        for (int64_t p = 0; p < cols / 2; ++p) {
          Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             lane, idx(r * cols / 2 + p));
          when(arith::AndIOp::create(b, loc, mine, columnValid[2 * p]), [&] {
            writeRotated(rowIv[r], columns[2 * p], columns[2 * p + 1],
                         sums[r * cols + 2 * p], sums[r * cols + 2 * p + 1]);
          });
        }
      return;
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
        if (!append) {
          blockc::nvptx::writeEpilogueResults(b, loc, op, plan, iv, results);
          continue;
        }
        // Into the cache: [M..., N] as [M..., N / D, N % D].
        Value value =
            blockc::nvptx::computeEpilogueResult(b, loc, op, plan, iv, results);
        SmallVector<Value> at = outputRowIndices(rowIv[r]);
        at.push_back(div(columns[c], append->headDim));
        at.push_back(rem(columns[c], append->headDim));
        storeAppended(value, at);
      }
  }

  /// The output's M indices (its leading dimensions) of loop indices `iv`.
  SmallVector<Value> outputRowIndices(ArrayRef<Value> iv) {
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    SmallVector<Value> at;
    for (AffineExpr e : outMap.getResults().drop_back())
      at.push_back(iv[cast<AffineDimExpr>(e).getPosition()]);
    return at;
  }

  /// Stores `value` to the cache rows of the append at `at` (indices of
  /// the copied [M..., H, D] buffer), where they are inside the cache.
  void storeAppended(Value value, ArrayRef<Value> at) {
    SmallVector<Value> indices;
    Value inside;
    for (auto [d, i] : llvm::enumerate(at)) {
      OpFoldResult offset = append->offsets[d];
      if (isConstantIntValue(offset, 0)) {
        indices.push_back(i);
        continue;
      }
      Value index = add(getValueOrCreateConstantIndexOp(b, loc, offset), i);
      Value ok = lt(index, memref::DimOp::create(b, loc, append->cache, d));
      inside = inside ? arith::AndIOp::create(b, loc, inside, ok) : ok;
      indices.push_back(index);
    }
    if (!inside) {
      memref::StoreOp::create(b, loc, value, append->cache, indices);
      return;
    }
    when(inside, [&] {
      memref::StoreOp::create(b, loc, value, append->cache, indices);
    });
  }

  /// Evaluates the RoPE of the plan at the pair (n0, n1 = n0 + D / 2) of
  /// row loop indices `rowIv` from the pair's sums, and stores both values
  /// (into the RoPE's output, or the cache).
  void writeRotated(ArrayRef<Value> rowIv, Value n0, Value n1, Value sum0,
                    Value sum1) {
    const blockc::nvptx::RotationPlan &rotation = *plan.rotation;
    int64_t headDim = rotation.headDim;
    SmallVector<Value> iv0(rowIv), iv1(rowIv);
    iv0[dims.n.front()] = n0;
    iv1[dims.n.front()] = n1;
    // The rounded results (the consumer's values).
    Value x0 =
        blockc::nvptx::computeEpilogueResult(b, loc, op, plan, iv0, {sum0});
    Value x1 =
        blockc::nvptx::computeEpilogueResult(b, loc, op, plan, iv1, {sum1});
    // The RoPE's loop indices: the output's M indices, head, d.
    SmallVector<Value> at0 = outputRowIndices(rowIv);
    at0.push_back(div(n0, headDim));
    SmallVector<Value> at1(at0);
    Value j = rem(n0, headDim);
    at0.push_back(j);
    at1.push_back(add(j, idx(headDim / 2)));
    auto evaluate = [&](ArrayRef<Value> at, Value x, Value partner) {
      return blockc::nvptx::evaluateGenericAt(
          b, loc, rotation.rope, at, [&](OpOperand &operand) -> Value {
            if (&operand == rotation.x)
              return x;
            if (&operand == rotation.partner)
              return partner;
            return Value();
          });
    };
    Value y0 = evaluate(at0, x0, x1), y1 = evaluate(at1, x1, x0);
    if (append) {
      storeAppended(y0, at0);
      storeAppended(y1, at1);
      return;
    }
    memref::StoreOp::create(b, loc, y0, rotation.output, at0);
    memref::StoreOp::create(b, loc, y1, rotation.output, at1);
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
    rope = plan.rotation && cfg.getRopeHeadDim() != 0;
    if (rope) {
      int64_t headDim = cfg.getRopeHeadDim();
      // Pair q = n0 / 2 + p: column h D + j and its partner h D + j + D / 2
      // (q = h D / 2 + j), both valid when the head is (N = H D).
      int64_t half = headDim / 2;
      for (int64_t p = 0; p < cfg.getColumns() / 2; ++p) {
        Value q = add(div(n0, 2), idx(p));
        Value c0 = add(mul(div(q, half), idx(headDim)), rem(q, half));
        Value valid = lt(c0, nSize);
        for (Value n : {c0, add(c0, idx(half))}) {
          columnValid.push_back(valid);
          columns.push_back(arith::MinUIOp::create(b, loc, n, lastN));
        }
      }
    } else {
      for (int64_t c = 0; c < cfg.getColumns(); ++c) {
        Value n = add(n0, idx(c));
        columnValid.push_back(lt(n, nSize));
        columns.push_back(arith::MinUIOp::create(b, loc, n, lastN));
      }
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
      std::optional<blockc::nvptx::AppendPlan> append;
      if (fuseEpilogues &&
          failed(blockc::nvptx::planGemvRopeAppend(b, op, gemv, plan, append)))
        return signalPassFailure();
      SmallVector<Value> sizes;
      for (Range r : op.createLoopRanges(b, loc))
        sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
      plan.kernel =
          blockc::nvptx::buildGemvKernel(b, op, sizes, gemv, plan, append);
      if (plan.rotation) {
        blockc::nvptx::eraseRotation(plan, *plan.rotation);
        ++numRotations;
      }
      if (append) {
        append->copy->erase();
        ++numAppends;
      }
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

LogicalResult
blockc::nvptx::planGemvRopeAppend(OpBuilder &b, linalg::LinalgOp op,
                                  GPUGemvAttr gemv, EpiloguePlan &plan,
                                  std::optional<AppendPlan> &append) {
  if (int64_t headDim = gemv.getRopeHeadDim()) {
    std::optional<RotationPlan> rotation =
        plan.consumer ? planRotation(plan) : std::nullopt;
    if (!rotation || rotation->headDim != headDim)
      return op->emitOpError()
             << "has '" << CodegenDialect::kGpuGemvAttrName
             << "' with rope_head_dim = " << headDim
             << " but its rounded result is not read by a rotate-half RoPE "
                "of that head dim alone";
    hoistRotationOutput(b, op.getLoc(), plan, *rotation);
    plan.rotation = std::move(rotation);
  }
  if (gemv.getKvAppend()) {
    append = planAppend(op, plan);
    if (!append)
      return op->emitOpError()
             << "has '" << CodegenDialect::kGpuGemvAttrName
             << "' with kv_append but its "
             << (plan.rotation ? "RoPE's output" : "result")
             << " is not copied alone into rows of a function argument";
  }
  return success();
}

/// Whether the uses of `v` (a function argument or a view of it) between
/// `from` and `to` (ops of one block) only take views or sizes of it.
static bool onlyViewedBetween(Value v, Operation *from, Operation *to) {
  Block *block = from->getBlock();
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    Operation *at = block->findAncestorOpInBlock(*user);
    if (!at)
      return false;
    if (at == to || !from->isBeforeInBlock(at) || !at->isBeforeInBlock(to))
      continue;
    if (at != user)
      return false;
    if (isa<memref::DimOp>(user))
      continue;
    if (!isa<ViewLikeOpInterface, memref::CastOp,
             memref::ExtractStridedMetadataOp>(user))
      return false;
    for (Value r : user->getResults())
      if (isa<MemRefType>(r.getType()) && !onlyViewedBetween(r, from, to))
        return false;
  }
  return true;
}

std::optional<blockc::nvptx::AppendPlan>
blockc::nvptx::planAppend(linalg::LinalgOp op, const EpiloguePlan &plan) {
  if (!plan.consumer || plan.contractions.size() != 1)
    return std::nullopt;
  Operation *consumer = plan.consumer;
  Block *block = consumer->getBlock();
  Value result =
      plan.rotation ? plan.rotation->output : epilogueOutput(op, plan);
  Operation *rope = nullptr;
  if (plan.rotation)
    rope = plan.rotation->rope;
  if (!result.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  // The result's readers: one copy (of it, or of one [M..., H, D] view of
  // it); the RoPE, the consumer, deallocations and sizes aside.
  memref::CopyOp copy;
  memref::ExpandShapeOp view;
  int64_t headDim = plan.rotation ? plan.rotation->headDim : 0;
  auto takeCopy = [&](Operation *user, Value source) {
    auto c = dyn_cast<memref::CopyOp>(user);
    if (!c || copy || c.getSource() != source)
      return false;
    copy = c;
    return true;
  };
  for (Operation *user : result.getUsers()) {
    if (user == consumer || (rope && user == rope) ||
        isa<memref::DeallocOp, memref::DimOp>(user) || takeCopy(user, result))
      continue;
    auto expand = dyn_cast<memref::ExpandShapeOp>(user);
    if (!expand || view || plan.rotation)
      return std::nullopt;
    view = expand;
  }
  if (view) {
    if (copy)
      return std::nullopt;
    int64_t rank = view.getSrcType().getRank();
    SmallVector<ReassociationIndices> groups = view.getReassociationIndices();
    for (int64_t i = 0; i + 1 < rank; ++i)
      if (groups[i].size() != 1)
        return std::nullopt;
    if (groups.back().size() != 2 || view.getResultType().isDynamicDim(rank))
      return std::nullopt;
    headDim = view.getResultType().getDimSize(rank);
    for (Operation *user : view->getUsers())
      if (!isa<memref::DimOp>(user) && !takeCopy(user, view.getResult()))
        return std::nullopt;
  }
  if (!copy || copy->getBlock() != block || !consumer->isBeforeInBlock(copy) ||
      (rope && !rope->isBeforeInBlock(copy)))
    return std::nullopt;
  // Into a unit-stride subview of a function argument of the same rank.
  auto subview = copy.getTarget().getDefiningOp<memref::SubViewOp>();
  if (!subview || !subview.hasUnitStride() ||
      subview.getSourceType().getRank() != subview.getType().getRank() ||
      subview.getSourceType().getElementType() !=
          cast<MemRefType>(copy.getSource().getType()).getElementType())
    return std::nullopt;
  auto isEntryArgument = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner()->isEntryBlock() &&
           isa<func::FuncOp>(arg.getOwner()->getParentOp());
  };
  Value cache = subview.getSource();
  if (!isEntryArgument(cache))
    return std::nullopt;
  SmallVector<OpFoldResult> offsets = subview.getMixedOffsets();
  for (OpFoldResult offset : offsets)
    if (auto v = dyn_cast<Value>(offset);
        v && !isEntryArgument(v) && !getConstantIntValue(v))
      return std::nullopt;
  // Nothing between the kernel's place and the copy touches the cache.
  if (!onlyViewedBetween(cache, consumer, copy))
    return std::nullopt;
  return AppendPlan{copy, cache, std::move(offsets), headDim};
}

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

gpu::LaunchOp blockc::nvptx::buildGemvKernel(
    OpBuilder &b, linalg::LinalgOp op, ArrayRef<Value> loopSizes,
    GPUGemvAttr gemv, const EpiloguePlan &plan,
    const std::optional<AppendPlan> &append, const NormPrologue *norm) {
  GemvKernel kernel{{b, op.getLoc()}, op,   loopSizes, gemv, plan,
                    append,           norm, {}};
  return kernel.build();
}

scf::IfOp blockc::nvptx::buildGemvDispatch(
    OpBuilder &b, linalg::LinalgOp op, ArrayRef<Value> loopSizes,
    GPUGemvAttr gemv, const EpiloguePlan &plan,
    const std::optional<AppendPlan> &append, const NormPrologue *norm) {
  Location loc = op.getLoc();
  Value small = norm ? norm->condition : Value();
  if (!small) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    Value m = arith::ConstantIndexOp::create(b, loc, 1);
    for (unsigned d : dims->m)
      m = arith::MulIOp::create(b, loc, m, loopSizes[d]);
    small = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ule, m,
        arith::ConstantIndexOp::create(b, loc, gemv.getMaxM()));
  }
  auto ifOp = scf::IfOp::create(b, loc, small, /*withElse=*/true);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  buildGemvKernel(b, op, loopSizes, gemv, plan, append, norm);
  b.setInsertionPointToStart(ifOp.elseBlock());
  return ifOp;
}

using blockc::BufferAccesses;
using blockc::collectBufferAccesses;
using blockc::getRootBuffer;

Operation *blockc::nvptx::lastWriterBefore(Value buffer, Operation *before) {
  for (Operation *at = before->getPrevNode(); at; at = at->getPrevNode())
    for (OpOperand &use : at->getOpOperands())
      if (use.get() == buffer && !blockc::nvptx::isReadOnlyUse(use))
        return at;
  return nullptr;
}

/// Whether `type` is a buffer in a block's shared or a thread's private
/// memory (inside a kernel).
static bool isKernelLocal(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return false;
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(memref.getMemorySpace());
  return space && space.getValue() != gpu::AddressSpace::Global;
}

/// Whether, after `from`, every use of `buffer` (in `from`'s block, views
/// not followed) until one that overwrites all of it is a deallocation or
/// a read by an op that `reader` accepts.
static bool onlyReadAfter(Value buffer, Operation *from,
                          function_ref<bool(Operation *)> reader) {
  Block *block = from->getBlock();
  SmallVector<std::pair<Operation *, OpOperand *>> uses;
  for (OpOperand &use : buffer.getUses()) {
    Operation *at = block->findAncestorOpInBlock(*use.getOwner());
    if (!at)
      return false;
    if (at != from && from->isBeforeInBlock(at))
      uses.push_back({at, &use});
  }
  llvm::sort(uses, [](auto &x, auto &y) {
    return x.first != y.first && x.first->isBeforeInBlock(y.first);
  });
  for (auto [at, use] : uses) {
    bool direct = at == use->getOwner();
    if (isa<memref::DeallocOp>(at) ||
        (direct && reader(at) && blockc::nvptx::isReadOnlyUse(*use)))
      continue;
    return direct && blockc::nvptx::isFullWrite(*use);
  }
  return true;
}

std::optional<blockc::nvptx::NormPrologue>
blockc::nvptx::planNormPrologue(OpBuilder &b, Value input,
                                ArrayRef<linalg::LinalgOp> consumers,
                                GPUGemvAttr gemv) {
  if (!input.getDefiningOp<memref::AllocOp>() || consumers.empty())
    return std::nullopt;
  Block *block = consumers.front()->getBlock();
  Operation *first = consumers.front(), *last = first;
  for (linalg::LinalgOp c : consumers) {
    if (c->getBlock() != block)
      return std::nullopt;
    if (c->isBeforeInBlock(first))
      first = c;
    if (last->isBeforeInBlock(c))
      last = c;
  }
  // The apply: the input's last writer, all-parallel, after its chain.
  auto apply =
      dyn_cast_or_null<linalg::GenericOp>(lastWriterBefore(input, first));
  if (!apply || apply.getNumDpsInits() != 1 ||
      apply.getDpsInits()[0] != input ||
      llvm::any_of(consumers, [&](linalg::LinalgOp c) {
        return lastWriterBefore(input, c) != apply.getOperation();
      }))
    return std::nullopt;
  unsigned n = apply.getNumLoops();
  AffineMap rowMap = AffineMap::getMultiDimIdentityMap(n, apply.getContext())
                         .dropResult(n - 1);
  SmallVector<linalg::GenericOp> chain;
  for (OpOperand *in : apply.getDpsInputOperands()) {
    if (apply.getMatchingIndexingMap(in) != rowMap)
      continue;
    auto reduction =
        dyn_cast_or_null<linalg::GenericOp>(lastWriterBefore(in->get(), apply));
    if (!reduction || !matchRowReduction(reduction) ||
        reduction.getDpsInits()[0] != in->get())
      return std::nullopt;
    if (!llvm::is_contained(chain, reduction))
      chain.push_back(reduction);
  }
  if (chain.empty())
    return std::nullopt;
  llvm::sort(chain, [](linalg::GenericOp x, linalg::GenericOp y) {
    return x->isBeforeInBlock(y);
  });
  for (size_t i = 1; i < chain.size(); ++i)
    if (!canFollowRowChain(ArrayRef(chain).take_front(i), chain[i]))
      return std::nullopt;
  if (!isRowChainApply(chain, apply))
    return std::nullopt;
  // Each reduction's output starts from a scalar, and nothing reads it
  // after the apply; the kernels read the apply's result only.
  SmallVector<RowStage> stages;
  DenseSet<Value> statistics;
  for (linalg::GenericOp r : chain) {
    Value out = r.getDpsInits()[0];
    std::optional<InitValue> init = resolveInit(out, r);
    auto type = dyn_cast<MemRefType>(out.getType());
    if (!init || !init->scalar || !type || !type.getLayout().isIdentity() ||
        !onlyReadAfter(out, apply, [](Operation *) { return false; }))
      return std::nullopt;
    stages.push_back(RowStage{r, matchRowReduction(r), init});
    statistics.insert(out);
  }
  auto isConsumer = [&](Operation *op) {
    return llvm::is_contained(consumers, op);
  };
  if (!onlyReadAfter(input, apply, isConsumer))
    return std::nullopt;
  // What the kernels read in the input's place: nothing writes it from
  // the norm to the last of them and their epilogues' consumers.
  SmallVector<Value> inputs;
  SmallVector<linalg::GenericOp> normOps(chain);
  normOps.push_back(apply);
  for (linalg::GenericOp op : normOps)
    for (Value v : op.getDpsInputs())
      if (!statistics.contains(v))
        inputs.push_back(getRootBuffer(v));
  SetVector<Operation *> checked;
  for (Operation *at = apply->getNextNode(); at != last->getNextNode();
       at = at->getNextNode())
    checked.insert(at);
  for (linalg::LinalgOp c : consumers) {
    Value out = c.getDpsInits()[0];
    for (Operation *at = c->getNextNode(); at; at = at->getNextNode())
      if (llvm::any_of(at->getOperands(), [&](Value v) { return v == out; })) {
        checked.insert(at);
        break;
      }
  }
  // Writes to a block's shared or a thread's private memory (inside the
  // kernels already built) are not the norm's inputs.
  for (Operation *at : checked) {
    BufferAccesses accesses = collectBufferAccesses(at);
    if (accesses.unknownWrites)
      return std::nullopt;
    for (Value w : accesses.writes)
      for (Value in : inputs)
        if (!isKernelLocal(w.getType()) && !areDistinctBuffers(w, in))
          return std::nullopt;
  }

  // The host side, before the norm: the 16-byte paths and the condition.
  Location loc = apply.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(apply);
  RowChainBuilder host{{b, loc}, stages, apply};
  host.prepareStages();
  SmallVector<Value> sizes;
  for (Range r :
       cast<linalg::LinalgOp>(apply.getOperation()).createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
  VectorAccess applyVec =
      host.prepareVectorPath(apply, apply.getDpsInputOperands(), sizes.back());
  if (applyVec.width != kVector ||
      llvm::any_of(host.stages,
                   [](const RowStage &s) { return s.vec.width != kVector; }))
    return std::nullopt;
  Value m = host.idx(1);
  for (Value size : ArrayRef(sizes).drop_back())
    m = host.mul(m, size);
  Value condition = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, m,
                                          host.idx(gemv.getMaxM()));
  condition = arith::AndIOp::create(b, loc, condition, applyVec.ok);
  for (RowStage &s : host.stages)
    condition = arith::AndIOp::create(b, loc, condition, s.vec.ok);

  // The norm for the tensor-core kernels: a copy under `not condition`,
  // its statistics in allocations of its own (filled with their inits).
  Value large = arith::XOrIOp::create(
      b, loc, condition,
      arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  auto branch = scf::IfOp::create(b, loc, large, /*withElse=*/false);
  b.setInsertionPoint(branch.thenBlock()->getTerminator());
  IRMapping map;
  SmallVector<Value> allocs;
  for (RowStage &s : host.stages) {
    Value out = s.op.getDpsInits()[0];
    auto type = cast<MemRefType>(out.getType());
    SmallVector<Value> dynamicSizes;
    if (auto alloc = out.getDefiningOp<memref::AllocOp>())
      dynamicSizes.assign(alloc.getDynamicSizes().begin(),
                          alloc.getDynamicSizes().end());
    else
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          dynamicSizes.push_back(memref::DimOp::create(b, loc, out, d));
    Value fresh = memref::AllocOp::create(b, loc, type, dynamicSizes);
    auto fill = linalg::FillOp::create(b, loc, s.init->scalar, fresh);
    allocs.push_back(fresh);
    map.map(out, fresh);
    auto copy = cast<linalg::GenericOp>(b.clone(*s.op, map));
    s.init = InitValue{s.init->scalar, {}, fill};
    s.op = copy;
    s.combiner = matchRowReduction(copy);
  }
  auto applyCopy = cast<linalg::GenericOp>(b.clone(*apply, map));
  for (Value fresh : allocs)
    memref::DeallocOp::create(b, loc, fresh);
  apply->erase();
  for (linalg::GenericOp r : llvm::reverse(chain))
    r->erase();
  return NormPrologue{std::move(host.stages), applyCopy, std::move(applyVec),
                      condition};
}
