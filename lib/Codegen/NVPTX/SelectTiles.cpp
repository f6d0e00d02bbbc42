//===- SelectTiles.cpp - NVPTX kernel configurations ----------------------===//
//
// The heuristic half of the NVPTX kernels: writes the blockc_codegen
// attributes that blockc-gpu-tile-matmul, blockc-gpu-tile-and-map and
// blockc-gpu-lower-sdpa read. See Codegen/NVPTX/Passes.td
// (GPUSelectTilesPass) for the rule per chip.
//
//===----------------------------------------------------------------------===//

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

/// Whether `chip` names a CUDA chip, `sm_<N>` with an optional feature
/// suffix (`sm_90a`, `sm_100f`).
bool isChipName(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return false;
  chip = chip.rtrim("af");
  unsigned cc;
  return !chip.empty() && !chip.getAsInteger(10, cc);
}

/// The rule of the pass description (Passes.td, GPUSelectTilesPass).
ChipDefaults defaultsFor(MLIRContext *ctx, StringRef chip) {
  // sm_80 and sm_90: 64 x 64 output tiles of 16 x 16 threads (4 x 4
  // registers each) with k steps of 16 (8.1 KiB of shared memory), 32 x 8
  // threads for elementwise and reduction loops, attention blocks of 4
  // warps x 4 query rows. Every other chip gets the same: they need at most
  // 256 threads and 8.1 KiB of static shared memory per block, within the
  // limits of every chip since sm_50 (1024 threads, 48 KiB).
  (void)chip;
  return {GPUMatmulTilesAttr::get(ctx, /*tileM=*/64, /*tileN=*/64,
                                  /*tileK=*/16, /*threadsX=*/16,
                                  /*threadsY=*/16),
          GPUMapAttr::get(ctx, /*threadsX=*/32, /*threadsY=*/8),
          GPUAttentionAttr::get(ctx, /*rowsPerWarp=*/4, /*warps=*/4)};
}

struct GPUSelectTilesPass
    : blockc::nvptx::impl::GPUSelectTilesPassBase<GPUSelectTilesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!isChipName(chip)) {
      func.emitError() << "blockc-gpu-select-tiles: chip must be sm_<N> "
                          "(e.g. sm_90), not '"
                       << chip << "'";
      return signalPassFailure();
    }
    if (func.isExternal())
      return;
    ChipDefaults defaults = defaultsFor(&getContext(), chip);
    auto setIfAbsent = [&](Operation *op, StringRef name, Attribute attr) {
      if (op->hasAttr(name))
        return;
      op->setAttr(name, attr);
      ++numConfigured;
    };
    setIfAbsent(func, CodegenDialect::kGpuMapAttrName, defaults.map);
    func.walk([&](Operation *op) {
      if (auto sdpa = dyn_cast<blockc::transformer::SDPAOp>(op)) {
        if (blockc::nvptx::isFusedAttentionCandidate(sdpa))
          setIfAbsent(op, CodegenDialect::kGpuAttentionAttrName,
                      defaults.attention);
      } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (blockc::nvptx::isTiledMatmulCandidate(linalgOp))
          setIfAbsent(op, CodegenDialect::kGpuMatmulTilesAttrName,
                      defaults.matmul);
      }
    });
  }
};

} // namespace
