//===- FmaToFmulAdd.cpp - math.fma as a multiply-add the target may fuse --===//
//
// See Codegen/CPU/Passes.td (CPUFmaToFmulAddPass).
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUFMATOFMULADDPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;

namespace {

struct CPUFmaToFmulAddPass
    : blockc::cpu::impl::CPUFmaToFmulAddPassBase<CPUFmaToFmulAddPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<math::FmaOp> fmas;
    getOperation().walk([&](math::FmaOp op) { fmas.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (math::FmaOp op : fmas) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<LLVM::FMulAddOp>(op, op.getType(), op.getA(),
                                                   op.getB(), op.getC());
      ++numRewritten;
    }
  }
};

} // namespace
