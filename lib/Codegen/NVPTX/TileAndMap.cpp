//===- TileAndMap.cpp - parallel loops onto coalesced thread blocks -------===//
//
// Tiles outermost scf.parallel loops with scf::tileParallelLoop and sets the
// GPU mapping attributes innermost-dimension-first. See
// Codegen/NVPTX/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/Builders.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUTILEANDMAPPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using gpu::Processor;

namespace {

/// Maps loop dimension `i` of `rank` dims, innermost first, onto `first`,
/// `first + 1`, `first + 2` (x, y, z) and then sequential.
SmallVector<gpu::ParallelLoopDimMappingAttr>
innermostFirst(MLIRContext *ctx, unsigned rank, Processor first,
               unsigned maxMapped) {
  Builder b(ctx);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  for (unsigned i = 0; i < rank; ++i) {
    unsigned fromInner = rank - 1 - i;
    Processor p =
        fromInner < maxMapped
            ? static_cast<Processor>(static_cast<int64_t>(first) + fromInner)
            : Processor::Sequential;
    mapping.push_back(gpu::ParallelLoopDimMappingAttr::get(
        ctx, p, b.getDimIdentityMap(), b.getDimIdentityMap()));
  }
  return mapping;
}

struct GPUTileAndMapPass
    : blockc::nvptx::impl::GPUTileAndMapPassBase<GPUTileAndMapPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>() &&
          !op->getParentOfType<gpu::LaunchOp>())
        outermost.push_back(op);
    });
    if (outermost.empty())
      return;
    auto map = getOperation()->getAttrOfType<blockc::codegen::GPUMapAttr>(
        blockc::codegen::CodegenDialect::kGpuMapAttrName);
    if (!map) {
      getOperation().emitError()
          << "blockc-gpu-tile-and-map: @" << getOperation().getName()
          << " has parallel loops and no '"
          << blockc::codegen::CodegenDialect::kGpuMapAttrName
          << "' (run blockc-gpu-select-tiles first)";
      return signalPassFailure();
    }
    int64_t threadsX = map.getThreadsX(), threadsY = map.getThreadsY();
    MLIRContext *ctx = &getContext();
    for (scf::ParallelOp op : outermost) {
      unsigned rank = op.getNumLoops();
      SmallVector<int64_t> sizes(rank, 1);
      if (rank == 1) {
        sizes[0] = threadsX * threadsY;
      } else {
        sizes[rank - 1] = threadsX;
        sizes[rank - 2] = threadsY;
      }
      auto [outer, inner] =
          scf::tileParallelLoop(op, sizes, /*noMinMaxBounds=*/true);
      if (failed(gpu::setMappingAttr(
              outer, innermostFirst(ctx, rank, Processor::BlockX, 3))) ||
          failed(gpu::setMappingAttr(
              inner, innermostFirst(ctx, rank, Processor::ThreadX, 3)))) {
        op.emitOpError() << "could not be mapped to GPU blocks and threads";
        return signalPassFailure();
      }
    }
  }
};

} // namespace
