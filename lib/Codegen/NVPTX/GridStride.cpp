//===- GridStride.cpp - grid y and z within CUDA's limits -----------------===//
//
// A launch whose grid y or z extent is not known to be at most 65535 gets
// min(extent, 65535) blocks along it and a grid-stride loop over the
// extent around its body. See Codegen/NVPTX/Passes.td
// (GPUGridStridePass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUGRIDSTRIDEPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

/// CUDA's limit on gridDim.y and gridDim.z.
constexpr int64_t kMaxGridYZ = 65535;

/// Wraps the body of `launch` in a loop over the blocks along `dim` (y or
/// z) when their number may exceed the limit.
LogicalResult strideDimension(gpu::LaunchOp launch, gpu::Dimension dim) {
  bool isY = dim == gpu::Dimension::y;
  OpOperand &sizeOperand =
      isY ? launch.getGridSizeYMutable() : launch.getGridSizeZMutable();
  Value extent = sizeOperand.get();
  if (std::optional<int64_t> c = getConstantIntValue(extent);
      c && *c <= kMaxGridYZ)
    return success();
  Region &body = launch.getBody();
  if (!body.hasOneBlock())
    return launch.emitOpError()
           << "has a grid " << (isY ? "y" : "z")
           << " extent that may exceed " << kMaxGridYZ
           << " and a body of several blocks; cannot add a grid-stride loop";
  Location loc = launch.getLoc();
  OpBuilder b(launch);
  Value limit = arith::ConstantIndexOp::create(b, loc, kMaxGridYZ);
  sizeOperand.set(arith::MinUIOp::create(b, loc, extent, limit));

  Block &block = body.front();
  gpu::KernelDim3 ids = launch.getBlockIds();
  gpu::KernelDim3 grid = launch.getGridSize();
  Value blockId = isY ? ids.y : ids.z;
  Value gridSize = isY ? grid.y : grid.z;
  // Inside the body the grid keeps its full extent.
  gridSize.replaceAllUsesWith(extent);
  SmallVector<Operation *> gridDims;
  launch.walk([&](gpu::GridDimOp op) {
    if (op.getDimension() == dim)
      gridDims.push_back(op);
  });
  for (Operation *op : gridDims) {
    op->getResult(0).replaceAllUsesWith(extent);
    op->erase();
  }

  b.setInsertionPointToStart(&block);
  auto loop = scf::ForOp::create(b, loc, blockId, extent, gridSize);
  Operation *terminator = block.getTerminator();
  Block *loopBody = loop.getBody();
  while (loop->getNextNode() != terminator)
    loop->getNextNode()->moveBefore(loopBody->getTerminator());
  Value iv = loop.getInductionVar();
  blockId.replaceUsesWithIf(iv, [&](OpOperand &use) {
    return loop->isProperAncestor(use.getOwner());
  });
  SmallVector<Operation *> blockIds;
  loop.walk([&](gpu::BlockIdOp op) {
    if (op.getDimension() == dim)
      blockIds.push_back(op);
  });
  for (Operation *op : blockIds) {
    op->getResult(0).replaceAllUsesWith(iv);
    op->erase();
  }
  return success();
}

struct GPUGridStridePass
    : blockc::nvptx::impl::GPUGridStridePassBase<GPUGridStridePass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches)
      for (gpu::Dimension dim : {gpu::Dimension::y, gpu::Dimension::z})
        if (failed(strideDimension(launch, dim)))
          return signalPassFailure();
  }
};

} // namespace
