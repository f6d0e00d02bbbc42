//===- TileElementwise.cpp - parallel vector loops for elementwise ops ----===//
//
// See Codegen/CPU/Passes.td (CPUTileElementwisePass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/Approximations.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUTILEELEMENTWISEPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using blockc::codegen::CodegenDialect;
using blockc::codegen::ElementwiseTilesAttr;

namespace {

/// Tiles `op` with `sizes` (0: untiled) into loops of `type`; returns the
/// tiled op (null on failure, after replacing nothing).
Operation *tile(RewriterBase &rewriter, TilingInterface op,
                ArrayRef<int64_t> sizes, scf::SCFTilingOptions::LoopType type) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), sizes));
  options.setLoopType(type);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, op, options);
  if (failed(tiled))
    return nullptr;
  rewriter.replaceOp(op, tiled->replacements);
  return tiled->tiledOps.back();
}

struct CPUTileElementwisePass
    : blockc::cpu::impl::CPUTileElementwisePassBase<CPUTileElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(CodegenDialect::kElementwiseTilesAttrName))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    RewritePatternSet mathPatterns(&getContext());
    blockc::populateMathApproximationPatterns(mathPatterns);
    FrozenRewritePatternSet frozenMath(std::move(mathPatterns));

    for (linalg::LinalgOp op : ops) {
      auto tiles = op->getAttrOfType<ElementwiseTilesAttr>(
          CodegenDialect::kElementwiseTilesAttrName);
      if (!tiles) {
        op->emitError("blockc_codegen.elementwise_tiles must be a "
                      "#blockc_codegen.elementwise_tiles attribute");
        return signalPassFailure();
      }
      unsigned n = op.getNumLoops();
      if (!isa<linalg::GenericOp, linalg::FillOp>(op.getOperation()) ||
          !op.hasPureTensorSemantics() || n == 0 ||
          op.getNumParallelLoops() != n) {
        op->emitError("blockc-cpu-tile-elementwise: elementwise_tiles needs "
                      "an all-parallel linalg.generic or linalg.fill on "
                      "tensors with at least one loop");
        return signalPassFailure();
      }
      // Upstream's tile of an operand read through another map (RoPE's
      // rotate-half partner, (d + D/2) mod D) would be the wrong slice.
      if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) {
            return m.isProjectedPermutation();
          })) {
        op->emitError("blockc-cpu-tile-elementwise: every operand must be "
                      "read through a projected permutation");
        return signalPassFailure();
      }
      int64_t width = tiles.getWidth();
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (width > 0 &&
          (ShapedType::isDynamic(ranges[n - 1]) || ranges[n - 1] % width)) {
        op->emitError() << "blockc-cpu-tile-elementwise: the innermost loop ("
                        << (ShapedType::isDynamic(ranges[n - 1])
                                ? std::string("dynamic")
                                : std::to_string(ranges[n - 1]))
                        << ") is not a multiple of width " << width;
        return signalPassFailure();
      }
      op->removeAttr(CodegenDialect::kElementwiseTilesAttrName);

      // The work items: `rows` indices of loop n - 2, one of each outer one.
      Operation *item = op;
      if (n >= 2) {
        SmallVector<int64_t> sizes(n, 1);
        sizes[n - 2] = tiles.getRows();
        sizes[n - 1] = 0;
        item = tile(rewriter, cast<TilingInterface>(item), sizes,
                    scf::SCFTilingOptions::LoopType::ForallOp);
        if (!item) {
          op->emitError("blockc-cpu-tile-elementwise: tiling failed");
          return signalPassFailure();
        }
        ++numTiled;
      }
      if (width == 0)
        continue;

      // Vectors of `width` along the innermost loop.
      SmallVector<int64_t> sizes(n, 1);
      sizes[n - 1] = width;
      Operation *vectorOp = tile(rewriter, cast<TilingInterface>(item), sizes,
                                 scf::SCFTilingOptions::LoopType::ForOp);
      if (!vectorOp) {
        item->emitError("blockc-cpu-tile-elementwise: tiling failed");
        return signalPassFailure();
      }
      Operation *loop = vectorOp->getParentOp();
      // The tiled op is [1, ..., 1, width] (the unit sizes of dynamic loops
      // are min(1, remaining) = 1): as a generic without its unit loops
      // (rank-reducing slices), it is a 1-D op of static size.
      rewriter.setInsertionPoint(vectorOp);
      if (auto fill = dyn_cast<linalg::FillOp>(vectorOp)) {
        FailureOr<linalg::GenericOp> generic =
            linalg::generalizeNamedOp(rewriter, fill);
        if (failed(generic)) {
          fill->emitError("blockc-cpu-tile-elementwise: generalizing failed");
          return signalPassFailure();
        }
        vectorOp = *generic;
      }
      if (n > 1) {
        linalg::ControlDropUnitDims control;
        control.rankReductionStrategy = linalg::ControlDropUnitDims::
            RankReductionStrategy::ExtractInsertSlice;
        rewriter.setInsertionPoint(vectorOp);
        FailureOr<linalg::DropUnitDimsResult> dropped = linalg::dropUnitDims(
            rewriter, cast<linalg::GenericOp>(vectorOp), control);
        if (failed(dropped)) {
          vectorOp->emitError("blockc-cpu-tile-elementwise: dropping the unit "
                              "loops failed");
          return signalPassFailure();
        }
        rewriter.replaceOp(vectorOp, dropped->replacements);
        vectorOp = dropped->resultOp;
      }
      if (failed(linalg::vectorizeOpPrecondition(vectorOp)))
        continue; // an element loop is left
      rewriter.setInsertionPoint(vectorOp);
      FailureOr<linalg::VectorizationResult> vectorized =
          linalg::vectorize(rewriter, vectorOp);
      if (failed(vectorized)) {
        vectorOp->emitError("blockc-cpu-tile-elementwise: vectorization "
                            "failed");
        return signalPassFailure();
      }
      rewriter.replaceOp(vectorOp, vectorized->replacements);
      ++numVectorized;

      // The vector math as polynomials (the loop holds no scalar math any
      // more).
      (void)applyPatternsGreedily(loop->getRegion(0), frozenMath);
    }
  }
};

} // namespace
