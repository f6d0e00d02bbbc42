//===- SelectTiles.cpp - NVPTX kernel configurations ----------------------===//
//
// The heuristic half of the NVPTX kernels: writes the blockc_codegen
// attributes that blockc-gpu-tile-matmul, blockc-gpu-tile-and-map and
// blockc-gpu-lower-sdpa read. See Codegen/NVPTX/Passes.td
// (GPUSelectTilesPass) for the rule per chip.
//
//===----------------------------------------------------------------------===//

#include "EpilogueFusion.h"
#include "TileGemv.h"
#include "blockc/Codegen/NVPTX/KernelMatchers.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUSELECTTILESPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using namespace blockc::codegen;

namespace {

/// The configurations chosen for one chip.
struct ChipDefaults {
  GPUMatmulTilesAttr matmul;
  GPUMapAttr map;
  GPUAttentionAttr attention;
};

/// Tensor-core tiles (mma.sync needs sm_80) for a reduction of `k` (a
/// multiple of 16) over `elementBytes`-byte operands: 128 x 128 output
/// tiles on 2 x 2 warps (64 x 64 per warp: 4 x 8 m16n8 accumulators, 128
/// f32 registers per thread), k steps of 64 bytes (32 bf16, or 16 when 32
/// does not divide k; 16 f32 for TF32) in a 4-stage cp.async ring: 80 KiB
/// (48 KiB) of shared memory, within every sm_80+ chip's opt-in (99 KiB on
/// sm_86/89, 163 on sm_80, 227 on sm_90), two blocks per SM on sm_80 and
/// sm_90.
GPUMmaTilesAttr mmaTilesFor(MLIRContext *ctx, int64_t k, int64_t elementBytes) {
  int64_t wide = 64 / elementBytes;
  return GPUMmaTilesAttr::get(ctx, /*tileM=*/128, /*tileN=*/128,
                              /*tileK=*/k % wide == 0 ? wide : 16,
                              /*warpsM=*/2, /*warpsN=*/2, /*stages=*/4);
}

/// Warpgroup-MMA tiles (sm_90a) for a contraction with `n` output columns
/// (dynamic: ShapedType::kDynamic) under `schedule` (the pass option,
/// checked): "specialized" (the default) gives a producer warpgroup and two
/// consumer warpgroups on 128 x 256 tiles when n >= 256 (128 x 128 below),
/// 4 stages (192 / 128 KiB); "persistent" the same on 128 x 128 tiles with
/// the output tile beside the 4-stage ring (195 KiB); "cooperative" the
/// kernel without a producer on 128 x 128 tiles. With `tmaStore` (the
/// default epilogue), the epilogue ends in a TMA store where the ring, the
/// f32 tile, the staging tile and the mbarriers fit in the chip's
/// `sharedPerBlock` bytes: every schedule but the persistent one (whose f32
/// tile lies beside the ring) on the Hopper chips.
GPUWarpgroupTilesAttr warpgroupTilesFor(MLIRContext *ctx, int64_t n,
                                        StringRef schedule, bool tmaStore,
                                        int64_t sharedPerBlock) {
  bool cooperative = schedule == "cooperative";
  bool persistent = schedule == "persistent";
  bool wide =
      !cooperative && !persistent && !ShapedType::isDynamic(n) && n >= 256;
  int64_t tileM = 128, tileN = wide ? 256 : 128, stages = 4;
  bool producer = !cooperative;
  tmaStore &= GPUWarpgroupTilesAttr::getTmaStoreSharedBytes(
                  tileM, tileN, stages, producer, persistent) <= sharedPerBlock;
  return GPUWarpgroupTilesAttr::get(ctx, tileM, tileN, stages, producer,
                                    persistent, tmaStore,
                                    /*ropeHeadDim=*/0);
}

/// The static reduction size of a tensor-core candidate (the last dimension
/// of its first input).
int64_t reductionSize(linalg::LinalgOp op) {
  return cast<ShapedType>(op.getDpsInputOperand(0)->get().getType())
      .getShape()
      .back();
}

/// Whether the TF32 contraction `op` has a prologue the mma.sync kernel
/// evaluates (planPrologue: its M-side input written by a pointwise
/// generic, an f32 block's norm).
bool hasNormPrologue(linalg::LinalgOp op) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return false;
  return blockc::nvptx::planPrologue(op,
                                     *blockc::nvptx::inputsMN(op, *dims).first)
      .has_value();
}

/// The head dim of the RoPE that reads the rounded result of `op`
/// (blockc::nvptx::planRotation on the epilogue blockc-gpu-tile-matmul
/// plans for it), or 0.
int64_t ropeHeadDim(linalg::LinalgOp op) {
  blockc::nvptx::EpiloguePlan plan = blockc::nvptx::planEpilogue(
      op, /*fuse=*/true,
      [](linalg::LinalgOp, linalg::LinalgOp) { return false; });
  std::optional<blockc::nvptx::RotationPlan> rotation =
      blockc::nvptx::planRotation(plan);
  return rotation ? rotation->headDim : 0;
}

/// The rule of the pass description (Passes.td, GPUSelectTilesPass).
ChipDefaults defaultsFor(MLIRContext *ctx, StringRef chip) {
  // sm_80 and sm_90: 64 x 64 output tiles of 16 x 16 threads (4 x 4
  // registers each) with k steps of 16 (8.1 KiB of shared memory), 32 x 8
  // threads for elementwise and reduction loops, attention blocks of 4
  // warps x 4 query rows (decode steps: 64 keys per split, at most 32
  // splits). Every other chip gets the same: they need at most 256 threads
  // and 8.1 KiB of static shared memory per block, within the limits of
  // every chip since sm_50 (1024 threads, 48 KiB).
  (void)chip;
  return {GPUMatmulTilesAttr::get(ctx, /*tileM=*/64, /*tileN=*/64,
                                  /*tileK=*/16, /*threadsX=*/16,
                                  /*threadsY=*/16),
          GPUMapAttr::get(ctx, /*threadsX=*/32, /*threadsY=*/8),
          GPUAttentionAttr::get(ctx, /*rowsPerWarp=*/4, /*warps=*/4,
                                /*keysPerSplit=*/64, /*maxSplits=*/32,
                                /*splitMmaWarps=*/0)};
}

struct GPUSelectTilesPass
    : blockc::nvptx::impl::GPUSelectTilesPassBase<GPUSelectTilesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    GPUTargetAttr target = blockc::nvptx::getGPUTarget(func, chip);
    if (!target) {
      func.emitError() << "blockc-gpu-select-tiles: unknown GPU architecture '"
                       << chip << "' (known: " << GPUTargetAttr::knownArchs()
                       << ")";
      return signalPassFailure();
    }
    if (warpgroupSchedule != "cooperative" &&
        warpgroupSchedule != "specialized" &&
        warpgroupSchedule != "persistent") {
      func.emitError() << "blockc-gpu-select-tiles: unknown warpgroup "
                          "schedule '"
                       << warpgroupSchedule
                       << "' (cooperative, specialized or persistent)";
      return signalPassFailure();
    }
    if (warpgroupEpilogue != "tma" && warpgroupEpilogue != "elements") {
      func.emitError() << "blockc-gpu-select-tiles: unknown warpgroup "
                          "epilogue '"
                       << warpgroupEpilogue << "' (tma or elements)";
      return signalPassFailure();
    }
    if (attentionConsumers != 1 && attentionConsumers != 2) {
      func.emitError() << "blockc-gpu-select-tiles: attention-consumers must "
                          "be 1 or 2, got "
                       << attentionConsumers.getValue();
      return signalPassFailure();
    }
    if (attentionStages != 2 && attentionStages != 3) {
      func.emitError() << "blockc-gpu-select-tiles: attention-stages must "
                          "be 2 or 3, got "
                       << attentionStages.getValue();
      return signalPassFailure();
    }
    if (func.isExternal())
      return;
    ChipDefaults defaults = defaultsFor(&getContext(), target.getArch());
    auto setIfAbsent = [&](Operation *op, StringRef name, Attribute attr) {
      if (op->hasAttr(name))
        return;
      op->setAttr(name, attr);
      ++numConfigured;
    };
    setIfAbsent(func, CodegenDialect::kGpuMapAttrName, defaults.map);
    func.walk([&](Operation *op) {
      if (auto sdpa = dyn_cast<blockc::transformer::SDPAOp>(op)) {
        // Decode steps of a GQA group (2 to 8 query heads) over 16-bit
        // caches at head dims 64 and 128: the split-KV kernel on tensor
        // cores (sm_80+), blocks of 4 warps of one split each.
        GPUAttentionAttr attention = defaults.attention;
        if (target.hasMmaSync() && blockc::nvptx::isSplitKVMmaCandidate(sdpa))
          attention = GPUAttentionAttr::get(
              &getContext(), attention.getRowsPerWarp(), attention.getWarps(),
              attention.getKeysPerSplit(), attention.getMaxSplits(),
              /*splitMmaWarps=*/4);
        if (blockc::nvptx::isFusedAttentionCandidate(sdpa))
          setIfAbsent(op, CodegenDialect::kGpuAttentionAttrName, attention);
        // Tensor cores (sm_80+): 4 warps of 16 query rows, 64 keys per
        // shared-memory tile, 32 at head dims of 128 and more in the
        // mma.sync kernel, also as the warpgroup kernel's fallback (its
        // registers, ptxas 13.0 at head dim 128: 254 on sm_80 and 255 with
        // 44 bytes of spills on sm_90a with 64-key tiles, 232 and 241 and
        // no spills with 32; docs/GPU.md); on sm_90a with head dims 64 and
        // 128 the warpgroup-MMA kernel, warp-specialised (a producer and two
        // consumer warpgroups of 64 query rows) where its shared memory
        // fits in a block's, else one warpgroup of 64 query rows; the
        // warp-specialised kernel's K/V ring has 3 stages where they fit,
        // and its consumers the intra-warpgroup overlap unless
        // attention-overlap is false.
        if (target.hasMmaSync() &&
            blockc::nvptx::getTensorCoreAttentionType(sdpa)) {
          int64_t d = sdpa.getQuery().getType().getDimSize(3);
          bool warpgroup = target.hasWarpgroupMma() && (d == 64 || d == 128);
          auto fits = [&](int64_t stages) {
            return GPUMmaAttentionAttr::getSpecializedSharedBytes(d, stages) <=
                   target.getSharedPerBlock();
          };
          int64_t consumers =
              warpgroup && attentionConsumers == 2 && fits(2) ? 2 : 1;
          int64_t stages =
              consumers == 2 && attentionStages == 3 && fits(3) ? 3 : 2;
          int64_t mmaKvTile = d >= 128 ? 32 : 64;
          setIfAbsent(op, CodegenDialect::kGpuMmaAttentionAttrName,
                      GPUMmaAttentionAttr::get(
                          &getContext(), /*warps=*/4,
                          warpgroup ? 64 : mmaKvTile, warpgroup, consumers,
                          stages,
                          /*overlap=*/consumers == 2 && attentionOverlap,
                          /*fallbackKvTile=*/
                          warpgroup && mmaKvTile != 64 ? mmaKvTile : 0));
        }
      } else if (isa<blockc::transformer::PagedSDPAOp>(op)) {
        // Paged attention: 4 warps of one (query token, head) each (128
        // threads, within every chip's limits).
        setIfAbsent(op, CodegenDialect::kGpuPagedAttentionAttrName,
                    GPUPagedAttentionAttr::get(&getContext(), /*warps=*/4));
      } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (blockc::nvptx::isTiledMatmulCandidate(linalgOp))
          setIfAbsent(op, CodegenDialect::kGpuMatmulTilesAttrName,
                      defaults.matmul);
        // Decode steps (docs/GPU.md#decoding): the weight-streaming kernel
        // for 16-bit projections on buffers with a small M: a static M <= 64
        // always (blockc-gpu-tile-gemv), a dynamic M (B * T: entries that
        // also decode) when M <= 16 at run time, beside the tensor-core
        // tiles below for larger M (blockc-gpu-tile-matmul chooses).
        // With gemv-rope-append, the kernel also applies the RoPE of its
        // rounded result (a warp per pair of partner columns: q and k) and
        // writes the KV-cache rows that a copy of its result (or of the
        // RoPE's) wrote (k and v of a decode entry).
        if (target.hasMmaSync() && blockc::nvptx::isGemvCandidate(linalgOp)) {
          std::optional<int64_t> m = blockc::nvptx::staticRows(linalgOp);
          int64_t rope = 0;
          bool append = false;
          if (gemvRopeAppend) {
            blockc::nvptx::EpiloguePlan plan = blockc::nvptx::planEpilogue(
                linalgOp, /*fuse=*/true,
                [](linalg::LinalgOp, linalg::LinalgOp) { return false; });
            plan.rotation = blockc::nvptx::planRotation(plan);
            rope = plan.rotation ? plan.rotation->headDim : 0;
            append = blockc::nvptx::planAppend(linalgOp, plan).has_value();
          }
          if (!m || *m <= 64)
            setIfAbsent(op, CodegenDialect::kGpuGemvAttrName,
                        GPUGemvAttr::get(&getContext(), /*warps=*/4,
                                         /*columns=*/rope ? 2 : 1, /*rows=*/1,
                                         /*unroll=*/2, /*maxM=*/m ? 64 : 16,
                                         /*ropeHeadDim=*/rope,
                                         /*kvAppend=*/append));
        }
        // Tensor cores: 16-bit contractions on buffers, and on tensors the
        // contractions whose f32 input blockc-gpu-narrow-mma-operands can
        // narrow exactly.
        if (target.hasMmaSync() &&
            (blockc::nvptx::getTensorCoreMatmulType(linalgOp) ||
             blockc::nvptx::getNarrowableMatmulOperand(linalgOp)))
          setIfAbsent(op, CodegenDialect::kGpuMmaTilesAttrName,
                      mmaTilesFor(&getContext(), reductionSize(linalgOp),
                                  /*elementBytes=*/2));
        // TF32 tensor cores for f32 contractions, only when asked for.
        if (target.hasMmaSync() && allowTf32 &&
            blockc::nvptx::isTF32MatmulCandidate(linalgOp))
          setIfAbsent(op, CodegenDialect::kGpuMmaTilesAttrName,
                      mmaTilesFor(&getContext(), reductionSize(linalgOp),
                                  /*elementBytes=*/4));
        // Hopper's warpgroup MMA and TMA (sm_90a only: wgmma is an
        // arch-specific feature), on buffers (warpgroupTilesFor).
        // With -gpu-allow-tf32 also the TF32 contractions, except those
        // whose A input a norm writes: the mma.sync kernel applies the norm
        // in its prologue (the kernel with TMA loads has no registers the
        // norm could be applied in before the MMA reads shared memory).
        if (target.hasWarpgroupMma() &&
            (blockc::nvptx::isWarpgroupMatmulCandidate(linalgOp) ||
             (allowTf32 && blockc::nvptx::isWarpgroupTF32Candidate(linalgOp) &&
              !hasNormPrologue(linalgOp)))) {
          FailureOr<linalg::ContractionDimensions> dims =
              linalg::inferContractionDims(linalgOp);
          int64_t n = succeeded(dims)
                          ? linalgOp.getStaticLoopRanges()[dims->n.front()]
                          : ShapedType::kDynamic;
          // The TMA-store epilogue for 16-bit contractions only: a TF32
          // one belongs to an f32 block, whose outputs stay f32 (per-element
          // stores).
          bool tmaStore = warpgroupEpilogue == "tma" &&
                          blockc::nvptx::isWarpgroupMatmulCandidate(linalgOp);
          GPUWarpgroupTilesAttr tiles =
              warpgroupTilesFor(&getContext(), n, warpgroupSchedule, tmaStore,
                                target.getSharedPerBlock());
          // A RoPE of the rounded result, applied on the staging tile (or
          // from the f32 tile by the per-element epilogue) where the tiles
          // cover whole heads.
          if (warpgroupRope &&
              blockc::nvptx::isWarpgroupMatmulCandidate(linalgOp) &&
              !op->hasAttr(CodegenDialect::kGpuWarpgroupTilesAttrName))
            if (int64_t d = ropeHeadDim(linalgOp);
                d != 0 && tiles.getTileN() % d == 0)
              tiles = GPUWarpgroupTilesAttr::get(
                  &getContext(), tiles.getTileM(), tiles.getTileN(),
                  tiles.getStages(), tiles.getProducer(), tiles.getPersistent(),
                  tiles.getTmaStore(), d);
          setIfAbsent(op, CodegenDialect::kGpuWarpgroupTilesAttrName, tiles);
        }
        // A RoPE of the rounded result in the mma.sync kernel's epilogue
        // (on a staging tile over the ring), where these tiles (written
        // here, in stage 1 on tensors or above) cover whole heads, the
        // staging tile fits and no warpgroup kernel takes the op.
        if (mmaRope && !op->hasAttr(CodegenDialect::kGpuWarpgroupTilesAttrName))
          if (auto tiles = op->getAttrOfType<GPUMmaTilesAttr>(
                  CodegenDialect::kGpuMmaTilesAttrName);
              tiles && isa<MemRefType>(linalgOp->getOperand(0).getType()) &&
              tiles == mmaTilesFor(&getContext(), reductionSize(linalgOp),
                                   /*elementBytes=*/2))
            if (int64_t d = ropeHeadDim(linalgOp);
                d != 0 && tiles.getTileN() % d == 0) {
              auto rope = GPUMmaTilesAttr::get(
                  &getContext(), tiles.getTileM(), tiles.getTileN(),
                  tiles.getTileK(), tiles.getWarpsM(), tiles.getWarpsN(),
                  tiles.getStages(), d);
              if (rope.getSharedBytes() <= target.getSharedPerBlock())
                op->setAttr(CodegenDialect::kGpuMmaTilesAttrName, rope);
            }
      }
    });
  }
};

} // namespace
