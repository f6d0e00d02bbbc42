//===- FragmentOps.cpp - warpgroup accumulator fragments ------------------===//
//
// Verifiers of blockc_codegen.accumulator_to_fragment and
// blockc_codegen.fragment_to_accumulator.
//
//===----------------------------------------------------------------------===//

#include "blockc/Dialect/Codegen/IR/FragmentOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace blockc::codegen;

#define GET_OP_CLASSES
#include "blockc/Dialect/Codegen/IR/FragmentOps.cpp.inc"

namespace {

/// The shapes of the two ops: a 64 x N f32 accumulator (one m64 wgmma per
/// warpgroup; the thread's share is then N / 2 registers) and a fragment of
/// N / 2 f32.
LogicalResult verifyFragment(Operation *op,
                             nvgpu::WarpgroupAccumulatorType accumulator,
                             VectorType fragment) {
  VectorType matrix = accumulator.getFragmented();
  if (matrix.getRank() != 2 || matrix.getDimSize(0) != 64 ||
      !matrix.getElementType().isF32())
    return op->emitOpError()
           << "needs an accumulator of 64 rows of f32 (one m64 wgmma per "
              "warpgroup), not "
           << accumulator;
  int64_t n = matrix.getDimSize(1);
  if (fragment.getNumElements() * 2 != n)
    return op->emitOpError()
           << "needs a fragment of " << n / 2 << " f32 (a thread's share of "
           << "the 64 x " << n << " accumulator), not " << fragment;
  return success();
}

} // namespace

LogicalResult AccumulatorToFragmentOp::verify() {
  return verifyFragment(*this, getAccumulator().getType(),
                        getFragment().getType());
}

LogicalResult FragmentToAccumulatorOp::verify() {
  return verifyFragment(*this, getAccumulator().getType(),
                        getFragment().getType());
}
