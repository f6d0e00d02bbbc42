//===- GroupProjections.cpp - horizontal fusion groups --------------------===//
//
// See Codegen/CPU/Passes.td (CPUGroupProjectionsPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUGROUPPROJECTIONSPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;
using blockc::codegen::CodegenDialect;
using blockc::codegen::HorizontalGroupAttr;

namespace {

struct CPUGroupProjectionsPass
    : blockc::cpu::impl::CPUGroupProjectionsPassBase<CPUGroupProjectionsPass> {
  using Base::Base;

  void runOnOperation() override {
    // Ids already in use (pinned by hand) are not reused.
    int64_t nextId = 0;
    getOperation().walk([&](LinearOp op) {
      if (auto group = op->getAttrOfType<HorizontalGroupAttr>(
              CodegenDialect::kHorizontalGroupAttrName))
        nextId = std::max(nextId, group.getId() + 1);
    });
    // Members of one group: same block, input, weight type, bias
    // presence, result type and tile attribute.
    SmallVector<SmallVector<LinearOp>> groups;
    getOperation().walk([&](LinearOp op) {
      if (op->hasAttr(CodegenDialect::kHorizontalGroupAttrName))
        return;
      for (SmallVector<LinearOp> &g : groups) {
        LinearOp first = g.front();
        if (first->getBlock() == op->getBlock() &&
            first.getInput() == op.getInput() &&
            first.getWeight().getType() == op.getWeight().getType() &&
            static_cast<bool>(first.getBias()) ==
                static_cast<bool>(op.getBias()) &&
            (!first.getBias() ||
             first.getBias().getType() == op.getBias().getType()) &&
            first.getType() == op.getType() &&
            first->getAttr(CodegenDialect::kLinearTilesAttrName) ==
                op->getAttr(CodegenDialect::kLinearTilesAttrName)) {
          g.push_back(op);
          return;
        }
      }
      groups.push_back({op});
    });
    for (SmallVector<LinearOp> &g : groups) {
      if (g.size() < 2)
        continue;
      for (LinearOp op : g)
        op->setAttr(CodegenDialect::kHorizontalGroupAttrName,
                    HorizontalGroupAttr::get(&getContext(), nextId));
      ++nextId;
      ++numGroups;
    }
  }
};

} // namespace
