//===- ShardAllReduceToMPI.cpp - tensor-parallel all-reduces to MPI -------===//
//
// See Codegen/Common/Passes.td (ShardAllReduceToMPIPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace blockc {
#define GEN_PASS_DEF_SHARDALLREDUCETOMPIPASS
#include "blockc/Codegen/Common/Passes.h.inc"
} // namespace blockc

using namespace mlir;

namespace {

/// The module attribute of transformer-tensor-parallel (matched by name:
/// code generation does not depend on the transformer dialect's C++).
constexpr llvm::StringLiteral kTensorParallelAttr =
    "transformer.tensor_parallel";

struct ShardAllReduceToMPIPass
    : blockc::impl::ShardAllReduceToMPIPassBase<ShardAllReduceToMPIPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto ranks = module->getAttrOfType<IntegerAttr>(kTensorParallelAttr);
    if (!ranks)
      return;
    SmallVector<shard::AllReduceOp> reduces;
    WalkResult walk = module.walk([&](shard::AllReduceOp op) {
      auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
          op, op.getGridAttr());
      bool wholeGrid = grid && grid.getRank() == 1 &&
                       (op.getGridAxes().empty() ||
                        op.getGridAxes() == ArrayRef<int16_t>{0});
      auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
      if (!wholeGrid || op.getReduction() != shard::ReductionKind::Sum ||
          !type || !type.getElementType().isF32()) {
        op.emitOpError() << "in a tensor-parallel module must sum an f32 "
                            "tensor over the one axis of a 1-D grid";
        return WalkResult::interrupt();
      }
      if (grid.getShape().front() != ranks.getInt()) {
        op.emitOpError() << "reduces over a grid of " << grid.getShape().front()
                         << " ranks in a module partitioned over "
                         << ranks.getInt();
        return WalkResult::interrupt();
      }
      reduces.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (shard::AllReduceOp op : reduces) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      auto tensorType = cast<RankedTensorType>(op.getInput().getType());
      auto bufferType =
          MemRefType::get(tensorType.getShape(), tensorType.getElementType());
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < tensorType.getRank(); ++d)
        if (tensorType.isDynamicDim(d))
          sizes.push_back(tensor::DimOp::create(b, loc, op.getInput(), d));
      Value source =
          bufferization::ToBufferOp::create(b, loc, bufferType, op.getInput());
      Value buffer = memref::AllocOp::create(b, loc, bufferType, sizes);
      memref::CopyOp::create(b, loc, source, buffer);
      SmallVector<ReassociationIndices> all(1);
      for (int64_t d = 0; d < tensorType.getRank(); ++d)
        all.front().push_back(d);
      Value flat = memref::CollapseShapeOp::create(b, loc, buffer, all);
      Value world =
          mpi::CommWorldOp::create(b, loc, mpi::CommType::get(&getContext()));
      mpi::AllReduceOp::create(
          b, loc, /*retval=*/Type(), flat, flat,
          mpi::MPI_ReductionOpEnumAttr::get(&getContext(),
                                            mpi::MPI_ReductionOpEnum::MPI_SUM),
          world);
      auto result = bufferization::ToTensorOp::create(
          b, loc, tensorType, buffer, /*restrict=*/true);
      op.getResult().replaceAllUsesWith(result.getResult());
      op.erase();
    }
  }
};

} // namespace
