//===- LowerNorms.cpp - vector kernels for LayerNorm and RMSNorm ----------===//
//
// See Codegen/CPU/Passes.td (CPULowerNormsPass).
//
//===----------------------------------------------------------------------===//

#include "TileEpilogue.h"
#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/KernelToolkit.h"
#include "blockc/Codegen/Common/NormGuard.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPULOWERNORMSPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;

namespace {

struct NormBuilder : blockc::KernelToolkit {
  VectorType vec;
  Value x;   // [B, T, D]
  int64_t d; // a multiple of the vector width

  Value splat(Value s) { return vector::BroadcastOp::create(b, loc, vec, s); }
  Value zeros() {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vec, 0.0f));
  }
  Value read(Value source, ValueRange at) {
    return vector::TransferReadOp::create(b, loc, vec, source, at, f32(0.0),
                                          ArrayRef<bool>{true});
  }

  /// One pass over the row (bi, ti) of x in vectors, carrying `init`:
  /// `body(x[bi, ti, j:j+V], j, carried)` returns the next carried values.
  SmallVector<Value>
  overRow(Value bi, Value ti, ValueRange init,
          function_ref<SmallVector<Value>(Value, Value, ValueRange)> body) {
    return loop(idx(0), idx(d), vec.getNumElements(), init,
                [&](Value j, ValueRange iter) {
                  return body(read(x, {bi, ti, j}), j, iter);
                });
  }

  Value reduce(vector::CombiningKind kind, Value v) {
    return vector::ReductionOp::create(b, loc, kind, v);
  }

  /// The norms' overflow guard (Codegen/Common/NormGuard.h) of row (bi, ti).
  Value invScale(Value bi, Value ti) {
    Value maxV = overRow(bi, ti, {zeros()}, [&](Value v, Value, ValueRange a) {
                   return SmallVector<Value>{arith::MaximumFOp::create(
                       b, loc, a[0], math::AbsFOp::create(b, loc, v))};
                 }).front();
    return blockc::buildNormInvScale(
        b, loc, reduce(vector::CombiningKind::MAXIMUMF, maxV));
  }

  /// Writes row (bi, ti) of the norm into `row` ([1, 1, D]) and returns it.
  Value buildRow(Value row, Value bi, Value ti, double eps, Value gain,
                 Value bias, bool layerNorm) {
    Value inv = invScale(bi, ti);
    Value invV = splat(inv);
    Value invD = f32(1.0 / static_cast<double>(d));
    Value epsScaled = arith::MulFOp::create(
        b, loc, f32(eps), arith::MulFOp::create(b, loc, inv, inv));
    auto scaled = [&](Value v) {
      return arith::MulFOp::create(b, loc, v, invV).getResult();
    };
    Value meanV, r;
    if (layerNorm) {
      Value sum =
          reduce(vector::CombiningKind::ADD,
                 overRow(bi, ti, {zeros()}, [&](Value v, Value, ValueRange a) {
                   return SmallVector<Value>{
                       arith::AddFOp::create(b, loc, a[0], scaled(v))};
                 }).front());
      Value mean = arith::MulFOp::create(b, loc, sum, invD);
      meanV = splat(mean);
      // Two-pass variance, as the linalg lowering.
      Value sumSqDev =
          reduce(vector::CombiningKind::ADD,
                 overRow(bi, ti, {zeros()}, [&](Value v, Value, ValueRange a) {
                   Value dev = arith::SubFOp::create(b, loc, scaled(v), meanV);
                   return SmallVector<Value>{arith::AddFOp::create(
                       b, loc, a[0], arith::MulFOp::create(b, loc, dev, dev))};
                 }).front());
      Value var = arith::MulFOp::create(b, loc, sumSqDev, invD);
      r = math::RsqrtOp::create(b, loc,
                                arith::AddFOp::create(b, loc, var, epsScaled));
    } else {
      Value sumSq =
          reduce(vector::CombiningKind::ADD,
                 overRow(bi, ti, {zeros()}, [&](Value v, Value, ValueRange a) {
                   Value xs = scaled(v);
                   return SmallVector<Value>{arith::AddFOp::create(
                       b, loc, a[0], arith::MulFOp::create(b, loc, xs, xs))};
                 }).front());
      Value meanSq = arith::MulFOp::create(b, loc, sumSq, invD);
      r = math::RsqrtOp::create(
          b, loc, arith::AddFOp::create(b, loc, meanSq, epsScaled));
    }
    Value rV = splat(r);
    Value c0 = idx(0);
    return overRow(bi, ti, {row},
                   [&](Value v, Value j, ValueRange a) {
                     Value xs = scaled(v);
                     Value n =
                         layerNorm
                             ? arith::MulFOp::create(
                                   b, loc,
                                   arith::SubFOp::create(b, loc, xs, meanV), rV)
                             : arith::MulFOp::create(b, loc, xs, rV);
                     Value y =
                         arith::MulFOp::create(b, loc, n, read(gain, {j}));
                     if (bias)
                       y = arith::AddFOp::create(b, loc, y, read(bias, {j}));
                     return SmallVector<Value>{
                         vector::TransferWriteOp::create(b, loc, y, a[0],
                                                         ValueRange{c0, c0, j},
                                                         ArrayRef<bool>{true})
                             .getResult()};
                   })
        .front();
  }
};

struct CPULowerNormsPass
    : blockc::cpu::impl::CPULowerNormsPassBase<CPULowerNormsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> norms;
    getOperation().walk([&](Operation *op) {
      if (isa<LayerNormOp, RMSNormOp>(op))
        norms.push_back(op);
    });
    blockc::cpu::LazyVectorWidth targetWidth(getOperation(),
                                             "blockc-cpu-lower-norms");
    for (Operation *op : norms) {
      Value x = op->getOperand(0);
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      if (type.getRank() != 3 || !type.getElementType().isF32() ||
          ShapedType::isDynamic(type.getDimSize(2)))
        continue;
      FailureOr<int64_t> width = targetWidth.get();
      if (failed(width))
        return signalPassFailure();
      int64_t d = type.getDimSize(2);
      if (d % *width != 0)
        continue;
      bool layerNorm = isa<LayerNormOp>(op);
      Value gain, bias;
      double eps;
      if (auto ln = dyn_cast<LayerNormOp>(op)) {
        gain = ln.getWeight();
        bias = ln.getBias();
        eps = ln.getEpsilon().convertToDouble();
      } else {
        auto rms = cast<RMSNormOp>(op);
        gain = rms.getWeight();
        eps = rms.getEpsilon().convertToDouble();
      }

      OpBuilder b(op);
      Location loc = op->getLoc();
      Value bDim = tensor::DimOp::create(b, loc, x, 0);
      Value tDim = tensor::DimOp::create(b, loc, x, 1);
      Value out = tensor::EmptyOp::create(
          b, loc, tensor::getMixedSizes(b, loc, x), b.getF32Type());
      // One iteration per row: the rows are independent (OpenMP threads).
      auto forall = scf::ForallOp::create(
          b, loc, ArrayRef<OpFoldResult>{bDim, tDim}, ValueRange{out},
          /*mapping=*/std::nullopt);
      blockc::cpu::setKernelKind(forall, blockc::codegen::KernelKind::norm);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(forall.getBody());
        Value bi = forall.getInductionVar(0), ti = forall.getInductionVar(1);
        SmallVector<OpFoldResult> offsets = {bi, ti, b.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                           b.getIndexAttr(d)};
        SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
        Value shared = forall.getRegionIterArgs()[0];
        Value row = tensor::ExtractSliceOp::create(b, loc, shared, offsets,
                                                   sizes, strides);
        NormBuilder nb{
            {b, loc}, VectorType::get({*width}, b.getF32Type()), x, d};
        row = nb.buildRow(row, bi, ti, eps, gain, bias, layerNorm);
        b.setInsertionPointToStart(forall.getTerminator().getBody());
        tensor::ParallelInsertSliceOp::create(b, loc, row, shared, offsets,
                                              sizes, strides);
      }
      op->getResult(0).replaceAllUsesWith(forall.getResult(0));
      op->erase();
      ++numLowered;
    }
  }
};

} // namespace
