//===- LegalizeGrid.cpp - launches within CUDA's grid limits --------------===//
//
// A launch whose grid y or z extent is not known to be at most 65535 gets
// min(extent, 65535) blocks along it and a grid-stride loop over the
// extent around its body; a launch whose grid or block may be empty runs
// only when it is not. See Codegen/NVPTX/Passes.td (GPULegalizeGridPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/GPUChips.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPULEGALIZEGRIDPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

/// CUDA's limit on gridDim.y and gridDim.z.
using blockc::codegen::kMaxGridYZ;

/// Replaces every `OpTy` (gpu.grid_dim, gpu.block_id) along `dim` inside
/// `root` by `value`.
template <typename OpTy>
void replaceDimOps(Operation *root, gpu::Dimension dim, Value value) {
  SmallVector<OpTy> ops;
  root->walk([&](OpTy op) {
    if (op.getDimension() == dim)
      ops.push_back(op);
  });
  for (OpTy op : ops) {
    op.getResult().replaceAllUsesWith(value);
    op.erase();
  }
}

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
           << "has a grid " << (isY ? "y" : "z") << " extent that may exceed "
           << kMaxGridYZ
           << " and a body of several blocks; cannot add a grid-stride loop";
  Location loc = launch.getLoc();
  OpBuilder b(launch);
  Value limit = arith::ConstantIndexOp::create(b, loc, kMaxGridYZ);
  sizeOperand.set(getConstantIntValue(extent)
                      ? limit
                      : arith::MinUIOp::create(b, loc, extent, limit));

  Block &block = body.front();
  gpu::KernelDim3 ids = launch.getBlockIds();
  gpu::KernelDim3 grid = launch.getGridSize();
  Value blockId = isY ? ids.y : ids.z;
  Value gridSize = isY ? grid.y : grid.z;
  // Inside the body the grid keeps its full extent.
  gridSize.replaceAllUsesWith(extent);
  replaceDimOps<gpu::GridDimOp>(launch, dim, extent);

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
  replaceDimOps<gpu::BlockIdOp>(loop, dim, iv);
  return success();
}

/// Runs `launch` only when none of its grid and block sizes is 0 (CUDA
/// refuses an empty launch, and the error would poison the context).
LogicalResult skipWhenEmpty(gpu::LaunchOp launch) {
  if (launch.getAsyncToken())
    return launch.emitOpError()
           << "is asynchronous; cannot guard it against an empty grid";
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value nonEmpty;
  Value zero;
  for (Value size : {launch.getGridSizeX(), launch.getGridSizeY(),
                     launch.getGridSizeZ(), launch.getBlockSizeX(),
                     launch.getBlockSizeY(), launch.getBlockSizeZ()}) {
    if (std::optional<int64_t> c = getConstantIntValue(size); c && *c > 0)
      continue;
    if (!zero)
      zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value positive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, size, zero);
    nonEmpty =
        nonEmpty ? arith::AndIOp::create(b, loc, nonEmpty, positive) : positive;
  }
  if (!nonEmpty)
    return success();
  auto guard = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
  launch->moveBefore(guard.thenBlock()->getTerminator());
  return success();
}

struct GPULegalizeGridPass
    : blockc::nvptx::impl::GPULegalizeGridPassBase<GPULegalizeGridPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches) {
      for (gpu::Dimension dim : {gpu::Dimension::y, gpu::Dimension::z})
        if (failed(strideDimension(launch, dim)))
          return signalPassFailure();
      if (failed(skipWhenEmpty(launch)))
        return signalPassFailure();
    }
  }
};

} // namespace
