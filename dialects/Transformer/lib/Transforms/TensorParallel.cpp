//===- TensorParallel.cpp - Megatron-style partitioning of blocks ---------===//
//
// See Transforms/Passes.td (TransformerTensorParallelPass) and
// docs/TensorParallel.md.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace blockc::transformer {
#define GEN_PASS_DEF_TRANSFORMERTENSORPARALLELPASS
#include "blockc/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace blockc::transformer

using namespace mlir;
using namespace blockc::transformer;

namespace {

constexpr llvm::StringLiteral kGridName = "blockc_tp";

/// The ranges each rank reads along one axis of a weight.
struct Split {
  int64_t axis = 0;
  std::vector<std::vector<int64_t>> ranges; // per rank, flat [begin, end)
};

/// Rank r reads [r * size, (r + 1) * size) along `axis`.
static Split even(int64_t axis, int64_t ranks, int64_t size) {
  Split s{axis, {}};
  for (int64_t r = 0; r < ranks; ++r)
    s.ranges.push_back({r * size, (r + 1) * size});
  return s;
}

struct TransformerTensorParallelPass
    : blockc::transformer::impl::TransformerTensorParallelPassBase<
          TransformerTensorParallelPass> {
  using Base::Base;

  /// The K/V rows of each rank: whole K/V heads when `ranks` divides them;
  /// else the heads its query heads use (one when they share it, else one
  /// per query head, in the order of the query heads).
  Split kvSplit(int64_t heads, int64_t kvHeads, int64_t headDim,
                int64_t &localKV) {
    int64_t localHeads = heads / ranks, group = heads / kvHeads;
    if (kvHeads % ranks == 0) {
      localKV = kvHeads / ranks;
      return even(0, ranks, localKV * headDim);
    }
    Split s{0, {}};
    localKV = group % localHeads == 0 ? 1 : localHeads;
    for (int64_t r = 0; r < ranks; ++r) {
      std::vector<int64_t> ranges;
      for (int64_t j = 0; j < localKV; ++j) {
        int64_t kv = (r * localHeads + j) / group;
        ranges.push_back(kv * headDim);
        ranges.push_back((kv + 1) * headDim);
      }
      s.ranges.push_back(std::move(ranges));
    }
    return s;
  }

  /// Gives weight `value` (role `role` of `block`) its local type and slice.
  LogicalResult partitionWeight(BlockOp block, StringRef role, Value value,
                                const Split &split) {
    int64_t ranks = this->ranks;
    auto arg = dyn_cast<BlockArgument>(value);
    auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                    : func::FuncOp();
    if (!func || !arg.getOwner()->isEntryBlock() || !value.hasOneUse())
      return block.emitOpError()
             << "cannot be split over " << ranks << " ranks: its " << role
             << " weight must be an argument of the function used by this "
                "block only";
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<Attribute> perRank;
    int64_t local = 0;
    for (const std::vector<int64_t> &ranges : split.ranges) {
      perRank.push_back(DenseI64ArrayAttr::get(&getContext(), ranges));
      int64_t size = 0;
      for (size_t i = 0; i < ranges.size(); i += 2)
        size += ranges[i + 1] - ranges[i];
      local = std::max(local, size);
    }
    SmallVector<int64_t> shape(type.getShape());
    shape[split.axis] = local;
    arg.setType(RankedTensorType::get(shape, type.getElementType()));
    func.setArgAttr(
        arg.getArgNumber(), TransformerDialect::kShardSliceAttr,
        ShardSliceAttr::get(&getContext(), split.axis,
                            ArrayAttr::get(&getContext(), perRank)));
    return success();
  }

  LogicalResult partition(BlockOp block) {
    int64_t ranks = this->ranks;
    int64_t heads = block.getNumHeads(), kvHeads = block.getNumKvHeads(),
            headDim = block.getHeadDim(), dff = block.getDFf();
    int64_t d = block.getInput().getType().getDimSize(2);
    auto notMultiple = [&](StringRef what, int64_t value) {
      return block.emitOpError()
             << "cannot be split over " << ranks << " ranks: " << what << " ("
             << value << ") is not a multiple of " << ranks;
    };
    if (heads % ranks != 0)
      return notMultiple("num_heads", heads);
    if (dff % ranks != 0)
      return notMultiple("d_ff", dff);
    int64_t localHeads = heads / ranks, localFF = dff / ranks, localKV = 0;
    // Quantised weights are quantised by each rank from its own part (the
    // prepare function sees the local tensors): the row-parallel
    // projections' parts must hold whole int4 groups (and whole runs of
    // quantised activations), so that every group lies on one rank.
    if (WeightQuantAttr quant = block.getWeightQuantAttr()) {
      for (auto [role, k] :
           {std::pair<StringRef, int64_t>{"w_o", localHeads * headDim},
            {"w_down", localFF}}) {
        if (quant.getGroupSize() != 0 && k % quant.getGroupSize() != 0)
          return block.emitOpError()
                 << "cannot be split over " << ranks
                 << " ranks: weight_quant group_size " << quant.getGroupSize()
                 << " does not divide the " << k
                 << " input columns each rank holds of " << role;
        if (quant.quantizesActivations() &&
            k % WeightQuantAttr::kActivationRun != 0)
          return block.emitOpError()
                 << "cannot be split over " << ranks
                 << " ranks: weight_quant activations = int8 quantises runs "
                    "of "
                 << WeightQuantAttr::kActivationRun << " columns, and each "
                 << "rank holds " << k << " input columns of " << role;
      }
    }
    Split q = even(0, ranks, localHeads * headDim);
    Split kv = kvSplit(heads, kvHeads, headDim, localKV);
    Split o = even(1, ranks, localHeads * headDim);
    Split ff = even(0, ranks, localFF);
    Split down = even(1, ranks, localFF);
    // Biases of the row-parallel projections: rank 0 adds them.
    Split once{0, {{0, d}}};
    for (int64_t r = 1; r < ranks; ++r)
      once.ranges.push_back({});
    for (auto [role, value] : block.getNamedWeights()) {
      if (!value)
        continue;
      const Split *split = llvm::StringSwitch<const Split *>(role)
                               .Cases({"w_q", "b_q"}, &q)
                               .Cases({"w_k", "b_k", "w_v", "b_v"}, &kv)
                               .Case("w_o", &o)
                               .Cases({"w_gate", "b_gate", "w_up", "b_up"}, &ff)
                               .Case("w_down", &down)
                               .Cases({"b_o", "b_down"}, &once)
                               .Default(nullptr);
      if (split && failed(partitionWeight(block, role, value, *split)))
        return failure();
    }
    Builder b(&getContext());
    block.setNumHeadsAttr(b.getI64IntegerAttr(localHeads));
    block.setNumKvHeadsAttr(b.getI64IntegerAttr(localKV));
    block.setDFfAttr(b.getI64IntegerAttr(localFF));
    block->setAttr(TransformerDialect::kAllReduceOverAttr,
                   FlatSymbolRefAttr::get(&getContext(), kGridName));
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    int64_t ranks = this->ranks;
    if (ranks < 2) {
      module.emitError() << "transformer-tensor-parallel: ranks must be >= 2, "
                            "got "
                         << ranks;
      return signalPassFailure();
    }
    if (auto done = module->getAttrOfType<IntegerAttr>(
            TransformerDialect::kTensorParallelAttr)) {
      module.emitError() << "transformer-tensor-parallel: the module is "
                            "partitioned already (over "
                         << done.getInt() << " ranks)";
      return signalPassFailure();
    }
    SmallVector<BlockOp> blocks;
    module.walk([&](BlockOp block) { blocks.push_back(block); });
    if (blocks.empty()) {
      module.emitError() << "transformer-tensor-parallel: no "
                            "transformer.block to partition";
      return signalPassFailure();
    }
    for (BlockOp block : blocks)
      if (failed(partition(block)))
        return signalPassFailure();
    // The functions' types follow their arguments.
    module.walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      func.setType(FunctionType::get(ctx,
                                     func.getBody().front().getArgumentTypes(),
                                     func.getResultTypes()));
    });
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    shard::GridOp::create(b, module.getLoc(), kGridName,
                          ArrayRef<int64_t>{ranks});
    module->setAttr(TransformerDialect::kTensorParallelAttr,
                    b.getI64IntegerAttr(ranks));
    // convert-mpi-to-llvm reads the MPI implementation from the DLTI map.
    SmallVector<DataLayoutEntryInterface> entries;
    if (auto map = module->getAttrOfType<MapAttr>(DLTIDialect::kMapAttrName))
      entries.append(map.getEntries().begin(), map.getEntries().end());
    entries.push_back(DataLayoutEntryAttr::get(
        b.getStringAttr("MPI:Implementation"), b.getStringAttr("OpenMPI")));
    module->setAttr(DLTIDialect::kMapAttrName, MapAttr::get(ctx, entries));
  }
};

} // namespace
