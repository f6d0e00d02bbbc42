//===- TileMatmul.cpp - shared-memory tiled contractions on the GPU -------===//
//
// Rewrites mul-add contractions on buffers (linalg ops whose body is
// `out + a * b`) into one gpu.launch that stages tiles of both operands in
// workgroup (shared) memory and keeps a register tile of accumulators per
// thread. See Codegen/NVPTX/Passes.td (GPUTileMatmulPass).
//
//===----------------------------------------------------------------------===//

#include "TileMatmul.h"
#include "TileGemv.h"
#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"

#include <deque>

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUTILEMATMULPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using namespace blockc::codegen;

namespace {

using blockc::nvptx::ContractionKernel;
using blockc::nvptx::inputsMN;

} // namespace

void blockc::nvptx::ContractionKernel::rotateStaged(
    const blockc::nvptx::RotationPlan &rotation,
    function_ref<Value(Value, Value, ArrayRef<Value>)> staged, int64_t tileM,
    int64_t tileN, Value m0, Value n0, Value mLast, Value mSize, Value first,
    int64_t count,
    function_ref<void(Value, Value, Value, ArrayRef<Value>, ArrayRef<Value>,
                      Value, Value)>
        store) {
  linalg::GenericOp rope = rotation.rope;
  int64_t headDim = rotation.headDim, half = headDim / 2;
  auto rotatedType = cast<MemRefType>(rotation.output.getType());
  // The RoPE's loops: the output's M dimensions, the head, d.
  int64_t loops = rotatedType.getRank();
  int64_t heads = rotatedType.getDimSize(loops - 2);
  int64_t rowPairs = tileN / 2, pairs = tileM * rowPairs;
  assert(tileN % headDim == 0 && pairs % count == 0 &&
         "the tile is not whole heads or pairs");
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  // The RoPE's inputs read by head and d only (the same in every row).
  SmallVector<OpOperand *> columnInputs;
  for (OpOperand *in : rope.getDpsInputOperands()) {
    if (in == rotation.x || in == rotation.partner ||
        rope.getMatchingBlockArgument(in).use_empty())
      continue;
    AffineMap map = rope.getMatchingIndexingMap(in);
    if (llvm::all_of(map.getResults(), [&](AffineExpr e) {
          auto d = dyn_cast<AffineDimExpr>(e);
          return !d || d.getPosition() + 2 >= static_cast<unsigned>(loops);
        }))
      columnInputs.push_back(in);
  }
  // A thread's pair of columns in the tile (q: the pair's index in a row)
  // and the column inputs there.
  struct Columns {
    Value j, c0, c1, head, inside;
    DenseMap<OpOperand *, Value> at0, at1;
  };
  auto columnsOf = [&](Value q) {
    Columns c;
    c.j = rem(q, half);
    c.c0 = add(mul(div(q, half), idx(headDim)), c.j);
    c.c1 = add(c.c0, idx(half));
    Value head = div(add(n0, c.c0), headDim);
    c.inside = lt(head, idx(heads));
    c.head = arith::MinUIOp::create(b, loc, head, idx(heads - 1));
    SmallVector<Value> iv(loops, idx(0));
    iv[loops - 2] = c.head;
    iv[loops - 1] = c.j;
    for (OpOperand *in : columnInputs)
      c.at0[in] = blockc::nvptx::loadOperandAt(b, loc, rope, *in, iv);
    iv[loops - 1] = add(c.j, idx(half));
    for (OpOperand *in : columnInputs)
      c.at1[in] = blockc::nvptx::loadOperandAt(b, loc, rope, *in, iv);
    return c;
  };
  std::optional<Columns> fixed;
  if (count % rowPairs == 0)
    fixed = columnsOf(rem(first, rowPairs));
  loop(first, idx(pairs), idx(count), [&](Value p) {
    Columns c = fixed ? *fixed : columnsOf(rem(p, rowPairs));
    Value r = div(p, rowPairs);
    Value m = add(m0, r);
    auto rotate = [&](Value row) {
      SmallVector<Value> rowIv(op.getNumLoops(), idx(0));
      delinearize(row, dims.m, rowIv);
      Value x0 = staged(r, c.c0, rowIv), x1 = staged(r, c.c1, rowIv);
      SmallVector<Value> iv0;
      for (int64_t d = 0; d + 2 < loops; ++d)
        iv0.push_back(
            rowIv[cast<AffineDimExpr>(outMap.getResult(d)).getPosition()]);
      iv0.push_back(c.head);
      iv0.push_back(c.j);
      SmallVector<Value> iv1(iv0);
      iv1.back() = add(c.j, idx(half));
      auto evaluate = [&](ArrayRef<Value> at, Value x, Value partner,
                          const DenseMap<OpOperand *, Value> &columns) {
        return blockc::nvptx::evaluateGenericAt(
            b, loc, rope, at, [&](OpOperand &operand) -> Value {
              if (&operand == rotation.x)
                return x;
              if (&operand == rotation.partner)
                return partner;
              return columns.lookup(&operand);
            });
      };
      Value y0 = evaluate(iv0, x0, x1, c.at0);
      Value y1 = evaluate(iv1, x1, x0, c.at1);
      store(r, c.c0, c.c1, iv0, iv1, y0, y1);
    };
    if (mSize)
      when(arith::AndIOp::create(b, loc, lt(m, mSize), c.inside),
           [&] { rotate(m); });
    else
      rotate(arith::MinUIOp::create(b, loc, m, mLast));
  });
}

namespace {

struct GPUTileMatmulPass
    : blockc::nvptx::impl::GPUTileMatmulPassBase<GPUTileMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Attribute>> candidates;
    WalkResult walk = getOperation().walk([&](linalg::LinalgOp op) {
      // Tensor cores where configured (blockc-gpu-select-tiles does on
      // sm_80 and newer), the f32 FMA kernel for f32 contractions.
      if (auto wg = op->getAttrOfType<GPUWarpgroupTilesAttr>(
              CodegenDialect::kGpuWarpgroupTilesAttrName)) {
        if (!blockc::nvptx::isWarpgroupMatmulCandidate(op) &&
            !blockc::nvptx::isWarpgroupTF32Candidate(op)) {
          op->emitOpError()
              << "has '" << CodegenDialect::kGpuWarpgroupTilesAttrName
              << "' but is not a contraction of a bf16, f16 or f32 (TF32) "
                 "[M..., K] buffer and an [N, K] buffer of that type into "
                 "f32";
          return WalkResult::interrupt();
        }
        candidates.push_back({op, wg});
        return WalkResult::advance();
      }
      if (auto mma = op->getAttrOfType<GPUMmaTilesAttr>(
              CodegenDialect::kGpuMmaTilesAttrName)) {
        Type elem = blockc::nvptx::getMmaMultiplicandType(op);
        if (!elem) {
          op->emitOpError() << "has '" << CodegenDialect::kGpuMmaTilesAttrName
                            << "' but is not a contraction of two bf16, f16 "
                               "or f32 (TF32) buffers into f32 with K "
                               "innermost";
          return WalkResult::interrupt();
        }
        // The attribute verifies 16-bit tiles; f32 tiles take twice the
        // bytes (and twice the 16-byte chunks, which the threads still
        // divide).
        if (elem.isF32()) {
          int64_t bytes = mma.getSharedBytes(4);
          // The module's chip (blockc-gpu-set-target), else any known chip.
          GPUTargetAttr target = blockc::nvptx::getGPUTarget(op, "");
          int64_t limit = target ? target.getSharedPerBlock()
                                 : GPUTargetAttr::maxKnownSharedPerBlock();
          if (bytes > limit) {
            op->emitOpError()
                << "has TF32 tiles whose " << mma.getStages() << " stages take "
                << bytes << " bytes, more than the " << limit
                << " bytes of shared memory a block may have on "
                << (target ? target.getName().str() : std::string("any chip"));
            return WalkResult::interrupt();
          }
        }
        int64_t k =
            cast<MemRefType>(op.getDpsInputs()[0].getType()).getShape().back();
        if (k % mma.getTileK() != 0) {
          op->emitOpError() << "tile_k (" << mma.getTileK()
                            << ") must divide the reduction size (" << k << ")";
          return WalkResult::interrupt();
        }
        candidates.push_back({op, mma});
        return WalkResult::advance();
      }
      if (!blockc::nvptx::isTiledMatmulCandidate(op))
        return WalkResult::advance();
      auto tiles = op->getAttrOfType<GPUMatmulTilesAttr>(
          CodegenDialect::kGpuMatmulTilesAttrName);
      if (!tiles) {
        op->emitOpError() << "has no '"
                          << CodegenDialect::kGpuMatmulTilesAttrName
                          << "' (run blockc-gpu-select-tiles first)";
        return WalkResult::interrupt();
      }
      candidates.push_back({op, tiles});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    OpBuilder b(&getContext());
    // TF32 kernels evaluate the producer of their A input (an f32 block's
    // normalisation) in registers; planned before any kernel is built.
    DenseMap<Operation *, blockc::nvptx::ProloguePlan> prologues;
    llvm::SetVector<Operation *> producers;
    if (fuseEpilogues)
      for (auto [op, config] : candidates) {
        if (!isa<GPUMmaTilesAttr>(config) ||
            !blockc::nvptx::getMmaMultiplicandType(op).isF32())
          continue;
        OpOperand *a = inputsMN(op, *linalg::inferContractionDims(op)).first;
        if (auto prologue = blockc::nvptx::planPrologue(op, *a))
          prologues[op] = *prologue;
      }
    // Contractions that choose the weight-streaming kernel at run time and
    // read a norm's output: that kernel evaluates the norm itself, which
    // then runs for the tensor-core kernels only.
    std::deque<blockc::nvptx::NormPrologue> norms;
    DenseMap<Operation *, const blockc::nvptx::NormPrologue *> normOf;
    if (normPrologue) {
      // By the value they read: the buffer and its last writer.
      llvm::MapVector<std::pair<Value, Operation *>,
                      SmallVector<linalg::LinalgOp>>
          readers;
      for (auto [op, config] : candidates) {
        if (!isa<GPUWarpgroupTilesAttr, GPUMmaTilesAttr>(config) ||
            !op->hasAttr(CodegenDialect::kGpuGemvAttrName))
          continue;
        Value input =
            inputsMN(op, *linalg::inferContractionDims(op)).first->get();
        readers[{input, blockc::nvptx::lastWriterBefore(input, op)}].push_back(
            op);
      }
      for (auto &[key, ops] : readers) {
        Value input = key.first;
        auto gemv = ops.front()->getAttrOfType<GPUGemvAttr>(
            CodegenDialect::kGpuGemvAttrName);
        if (llvm::any_of(ops, [&](linalg::LinalgOp op) {
              return op->getAttrOfType<GPUGemvAttr>(
                           CodegenDialect::kGpuGemvAttrName)
                         .getMaxM() != gemv.getMaxM();
            }))
          continue;
        std::optional<blockc::nvptx::NormPrologue> norm =
            blockc::nvptx::planNormPrologue(b, input, ops, gemv);
        if (!norm)
          continue;
        norms.push_back(std::move(*norm));
        for (linalg::LinalgOp op : ops)
          normOf[op] = &norms.back();
      }
    }
    SmallVector<blockc::nvptx::EpiloguePlan> plans;
    DenseSet<Operation *> done; // the second contractions of pairs
    for (auto [op, config] : candidates) {
      if (done.contains(op))
        continue;
      // Tensor-core kernels compute their init and their consumer in the
      // epilogue (and pair gate with up); the kernel goes where the
      // consumer was (only allocations and pure ops are in between).
      blockc::nvptx::EpiloguePlan plan;
      bool tensorCores = isa<GPUWarpgroupTilesAttr, GPUMmaTilesAttr>(config);
      if (tensorCores) {
        plan = blockc::nvptx::planEpilogue(
            op, fuseEpilogues,
            [config = config](linalg::LinalgOp first, linalg::LinalgOp second) {
              return canPair(first, second, config);
            });
        b.setInsertionPoint(plan.consumer ? plan.consumer.getOperation()
                                          : op.getOperation());
        // A producer that this kernel computes as its consumer is no
        // longer there for a later kernel's prologue.
        if (plan.consumer)
          for (auto it = prologues.begin(); it != prologues.end();) {
            auto next = std::next(it);
            if (it->second.producer == plan.consumer)
              prologues.erase(it);
            it = next;
          }
      } else {
        b.setInsertionPoint(op);
      }
      Location loc = op.getLoc();
      // sm_90a tiles covering whole heads (rope_head_dim, chosen by
      // blockc-gpu-select-tiles): the kernel also applies the RoPE that
      // reads its rounded result, and writes the RoPE's output.
      // The same for mma.sync tiles (on their staging tile over the ring).
      int64_t ropeHeadDim = 0;
      if (auto wgTiles = dyn_cast<GPUWarpgroupTilesAttr>(config))
        ropeHeadDim = wgTiles.getRopeHeadDim();
      else if (auto mmaTiles = dyn_cast<GPUMmaTilesAttr>(config))
        ropeHeadDim = mmaTiles.getRopeHeadDim();
      // A dynamic M also configured for the weight-streaming kernel (left
      // here by blockc-gpu-tile-gemv): that kernel when M <= max_m at run
      // time, this one otherwise; both compute the same plan. Its RoPE and
      // KV-cache append (rope_head_dim, kv_append) are planned here.
      auto gemv =
          tensorCores
              ? op->getAttrOfType<GPUGemvAttr>(CodegenDialect::kGpuGemvAttrName)
              : GPUGemvAttr();
      std::optional<blockc::nvptx::AppendPlan> append;
      if (gemv && fuseEpilogues &&
          (gemv.getRopeHeadDim() != 0 || gemv.getKvAppend())) {
        if (ropeHeadDim != 0 && gemv.getRopeHeadDim() != 0 &&
            ropeHeadDim != gemv.getRopeHeadDim()) {
          op->emitOpError()
              << "has rope_head_dim = " << ropeHeadDim << " on its tiles but "
              << gemv.getRopeHeadDim() << " on '"
              << CodegenDialect::kGpuGemvAttrName << "'";
          return signalPassFailure();
        }
        if (gemv.getKvAppend() && ropeHeadDim != 0 &&
            gemv.getRopeHeadDim() == 0) {
          op->emitOpError() << "has '" << CodegenDialect::kGpuGemvAttrName
                            << "' with kv_append but without the "
                               "rope_head_dim of its tiles";
          return signalPassFailure();
        }
        if (failed(
                blockc::nvptx::planGemvRopeAppend(b, op, gemv, plan, append)))
          return signalPassFailure();
      }
      if (ropeHeadDim != 0 && fuseEpilogues && !plan.rotation) {
        std::optional<blockc::nvptx::RotationPlan> rotation =
            blockc::nvptx::planRotation(plan);
        if (!rotation || rotation->headDim != ropeHeadDim) {
          op->emitOpError()
              << "has rope_head_dim = " << ropeHeadDim
              << " but its rounded result is not read by a rotate-half RoPE "
                 "of that head dim alone";
          return signalPassFailure();
        }
        blockc::nvptx::hoistRotationOutput(b, loc, plan, *rotation);
        plan.rotation = std::move(rotation);
      }
      SmallVector<Value> sizes;
      for (Range r : op.createLoopRanges(b, loc))
        sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
      ContractionKernel base{
          {b, loc}, op, *linalg::inferContractionDims(op), sizes};
      scf::IfOp gemvDispatch;
      if (gemv) {
        const blockc::nvptx::NormPrologue *norm = normOf.lookup(op);
        gemvDispatch = blockc::nvptx::buildGemvDispatch(b, op, sizes, gemv,
                                                        plan, append, norm);
        if (norm)
          ++numNormPrologues;
      }
      // The tensor-core kernel's plan: without the RoPE when its tiles do
      // not apply it (a copy of the RoPE follows it).
      blockc::nvptx::EpiloguePlan tensorCorePlan = plan;
      if (ropeHeadDim == 0)
        tensorCorePlan.rotation.reset();
      if (auto wg = dyn_cast<GPUWarpgroupTilesAttr>(config)) {
        // bf16 / f16, or f32 for tf32 operands.
        plan.kernel = blockc::nvptx::buildWarpgroupMatmul(
            base, wg, blockc::nvptx::getMmaMultiplicandType(op),
            tensorCorePlan);
        ++numWarpgroup;
      } else if (auto mma = dyn_cast<GPUMmaTilesAttr>(config)) {
        // A prologue only when the kernel does not write what it reads
        // (other blocks would read it while it is written).
        std::optional<blockc::nvptx::ProloguePlan> prologue;
        if (auto it = prologues.find(op);
            it != prologues.end() &&
            !blockc::nvptx::writesPrologueInputs(plan, it->second)) {
          prologue = it->second;
          producers.insert(it->second.producer);
          ++numPrologues;
        }
        plan.kernel = blockc::nvptx::buildMmaMatmul(
            base, mma, blockc::nvptx::getMmaMultiplicandType(op),
            tensorCorePlan, std::move(prologue));
        ++numTensorCore;
      } else {
        blockc::nvptx::buildFmaMatmul(base, cast<GPUMatmulTilesAttr>(config));
      }
      if (gemvDispatch) {
        plan.kernel = gemvDispatch;
        // A kernel that writes the unrotated result: the RoPE follows it
        // in its branch.
        if (plan.rotation && gemv.getRopeHeadDim() == 0)
          cloneRotationAfter(b, gemvDispatch.thenBlock(), plan);
        if (plan.rotation && ropeHeadDim == 0)
          cloneRotationAfter(b, gemvDispatch.elseBlock(), plan);
        // The weight-streaming kernel appended; the tensor-core kernel's
        // result is copied when it ran.
        if (append) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(append->copy);
          auto large = scf::IfOp::create(b, append->copy.getLoc(),
                                         gemvDispatch.getCondition(),
                                         /*withElse=*/true);
          append->copy->moveBefore(large.elseBlock()->getTerminator());
          ++numAppends;
        }
      }
      if (plan.rotation) {
        blockc::nvptx::eraseRotation(plan, *plan.rotation);
        ++numRotations;
      }
      if (plan.consumer)
        ++numEpilogues;
      if (plan.contractions.size() == 2)
        ++numPairs;
      blockc::nvptx::eraseComputedOps(plan, op, done);
      ++numTiled;
      if (tensorCores)
        plans.push_back(plan);
    }
    // A producer whose every reader now recomputes it is gone (one that
    // is also a kernel's init writer is eraseDeadWrites' to erase).
    for (const blockc::nvptx::EpiloguePlan &plan : plans)
      for (const std::optional<blockc::nvptx::InitValue> &init : plan.inits)
        if (init && init->writer)
          producers.remove(init->writer);
    for (Operation *producer : producers)
      blockc::nvptx::eraseIfUnread(cast<linalg::GenericOp>(producer));
    blockc::nvptx::eraseDeadWrites(getOperation().getBody().front(), plans);
  }

  /// Applies `plan`'s RoPE at the end of `branch` (of the run-time
  /// dispatch), whose kernel writes the unrotated result: a view of that
  /// result as `[M..., H, D]` and a copy of the RoPE into the rotated
  /// output.
  static void cloneRotationAfter(OpBuilder &b, Block *branch,
                                 const blockc::nvptx::EpiloguePlan &plan) {
    const blockc::nvptx::RotationPlan &rotation = *plan.rotation;
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(branch->getTerminator());
    linalg::GenericOp rope = rotation.rope;
    Location loc = rope.getLoc();
    auto view = rotation.x->get().getDefiningOp<memref::ExpandShapeOp>();
    Value out = linalg::GenericOp(plan.consumer).getDpsInits()[0];
    MemRefType viewType = view.getResultType();
    SmallVector<OpFoldResult> shape;
    for (int64_t d = 0; d < viewType.getRank(); ++d)
      shape.push_back(
          viewType.isDynamicDim(d)
              ? OpFoldResult(memref::DimOp::create(b, loc, out, d).getResult())
              : OpFoldResult(b.getIndexAttr(viewType.getDimSize(d))));
    Value newView = memref::ExpandShapeOp::create(
        b, loc, viewType, out, view.getReassociationIndices(), shape);
    IRMapping map;
    map.map(view.getResult(), newView);
    b.clone(*rope.getOperation(), map);
  }

  /// Whether the tensor-core contractions `first` and `second` (configured
  /// with `config`) can run as one pair kernel: the same M-side input, the
  /// same maps and shapes, no batch dimension, and tiles that split B's
  /// rows evenly between the two weights.
  static bool canPair(linalg::LinalgOp first, linalg::LinalgOp second,
                      Attribute config) {
    StringRef name = isa<GPUWarpgroupTilesAttr>(config)
                         ? CodegenDialect::kGpuWarpgroupTilesAttrName
                         : CodegenDialect::kGpuMmaTilesAttrName;
    if (second->getAttr(name) != config ||
        first.getIndexingMapsArray() != second.getIndexingMapsArray() ||
        first->getOperandTypes() != second->getOperandTypes())
      return false;
    Type elem = blockc::nvptx::getMmaMultiplicandType(second);
    if (!elem)
      return false;
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(first);
    if (failed(dims) || !dims->batch.empty())
      return false;
    OpOperand *aIn = inputsMN(first, *dims).first;
    if (aIn->get() != second->getOpOperand(aIn->getOperandNumber()).get())
      return false;
    if (auto wg = dyn_cast<GPUWarpgroupTilesAttr>(config))
      return (blockc::nvptx::isWarpgroupMatmulCandidate(second) ||
              blockc::nvptx::isWarpgroupTF32Candidate(second)) &&
             wg.getTileN() % 16 == 0;
    auto mma = cast<GPUMmaTilesAttr>(config);
    int64_t chunksPerRow = mma.getTileK() / (elem.isF32() ? 4 : 8);
    int64_t half = mma.getTileN() / mma.getWarpsN() / 2;
    if (mma.getThreads() % chunksPerRow != 0 || half % 8 != 0)
      return false;
    return half % (mma.getThreads() / chunksPerRow) == 0;
  }
};

} // namespace
