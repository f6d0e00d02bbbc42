//===- FuseNorm.cpp - RMSNorm into the prologue of projection kernels -----===//
//
// See Codegen/CPU/Passes.td (CPUFuseNormPass).
//
//===----------------------------------------------------------------------===//

#include "TileEpilogue.h"
#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/KernelToolkit.h"
#include "blockc/Codegen/Common/NormGuard.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPUFUSENORMPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;

namespace {

struct Builder : blockc::KernelToolkit {
  VectorType vec;

  /// Over the vectors of row x[bi, ti, :] (K long): full vectors, then one
  /// masked (zero-padded) vector; `body` folds each into the carried values.
  SmallVector<Value>
  overRow(Value x, Value bi, Value ti, int64_t k, ValueRange init,
          function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    int64_t width = vec.getNumElements();
    Value pad = f32(0.0);
    auto step = [&](bool inBounds) {
      return [&, inBounds](Value kk, ValueRange acc) {
        Value v = vector::TransferReadOp::create(b, loc, vec, x,
                                                 ValueRange{bi, ti, kk}, pad,
                                                 ArrayRef<bool>{inBounds});
        return body(v, acc);
      };
    };
    int64_t full = k / width * width;
    SmallVector<Value> acc =
        loop(idx(0), idx(full), width, init, step(/*inBounds=*/true));
    if (full < k)
      acc = loop(idx(full), idx(k), width, acc, step(/*inBounds=*/false));
    return acc;
  }

  /// r[b, t] such that rms_norm(x)[b, t, :] = x[b, t, :] * r[b, t] * g, with
  /// the overflow-safe scaling of the RMSNorm lowering (rows whose max |x|
  /// is finite and above 2^50 are summed as x / max|x|): r = inv *
  /// rsqrt(sum((x inv)^2) / K + eps inv^2), inv = 1 / max|x| or 1.
  Value rowScales(Value x, int64_t k, double eps) {
    Value bDim = tensor::DimOp::create(b, loc, x, 0);
    Value tDim = tensor::DimOp::create(b, loc, x, 1);
    Value r = tensor::EmptyOp::create(
        b, loc, ArrayRef<OpFoldResult>{bDim, tDim}, b.getF32Type());
    Value zeroV =
        arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vec, 0.0f));
    return loop(
               idx(0), bDim, 1, {r},
               [&](Value bi, ValueRange r1) {
                 return loop(idx(0), tDim, 1, r1, [&](Value ti, ValueRange r2) {
                   // max |x| (NaN-propagating, as the norm's reduction).
                   Value maxV =
                       overRow(x, bi, ti, k, {zeroV},
                               [&](Value v, ValueRange a) {
                                 return SmallVector<Value>{
                                     arith::MaximumFOp::create(
                                         b, loc, a[0],
                                         math::AbsFOp::create(b, loc, v))};
                               })
                           .front();
                   Value maxAbs = vector::ReductionOp::create(
                       b, loc, vector::CombiningKind::MAXIMUMF, maxV);
                   Value inv = blockc::buildNormInvScale(b, loc, maxAbs);
                   Value invV = vector::BroadcastOp::create(b, loc, vec, inv);
                   Value sumV =
                       overRow(x, bi, ti, k, {zeroV},
                               [&](Value v, ValueRange a) {
                                 Value xs =
                                     arith::MulFOp::create(b, loc, v, invV);
                                 return SmallVector<Value>{
                                     math::FmaOp::create(b, loc, xs, xs, a[0])};
                               })
                           .front();
                   Value sumSq = vector::ReductionOp::create(
                       b, loc, vector::CombiningKind::ADD, sumV);
                   Value meanSq = arith::MulFOp::create(b, loc, sumSq,
                                                        f32(1.0 / double(k)));
                   Value epsScaled = arith::MulFOp::create(
                       b, loc, f32(eps),
                       arith::MulFOp::create(b, loc, inv, inv));
                   Value rs = math::RsqrtOp::create(
                       b, loc,
                       arith::AddFOp::create(b, loc, meanSq, epsScaled));
                   Value rv = arith::MulFOp::create(b, loc, inv, rs);
                   return SmallVector<Value>{tensor::InsertOp::create(
                       b, loc, rv, r2[0], ValueRange{bi, ti})};
                 });
               })
        .front();
  }

  /// tile[b, t, :] *= r[b, t] (tile is the kernel block's [B, T, w] slice;
  /// its b and t are global).
  Value scaleRows(Value tile, Value r) {
    return blockc::cpu::buildTileEpilogue(
        b, loc, tile, vec, [&](Value x, ValueRange at, bool) {
          Value s = vector::BroadcastOp::create(
              b, loc, vec,
              tensor::ExtractOp::create(b, loc, r, at.take_front(2)));
          return Value(arith::MulFOp::create(b, loc, x, s));
        });
  }
};

/// The op of `block` that contains `op` (op itself when it is in `block`).
Operation *ancestorIn(Block *block, Operation *op) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

struct CPUFuseNormPass
    : blockc::cpu::impl::CPUFuseNormPassBase<CPUFuseNormPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<RMSNormOp> norms;
    getOperation().walk([&](RMSNormOp op) { norms.push_back(op); });
    for (RMSNormOp norm : norms) {
      FailureOr<bool> fused = fuse(norm);
      if (failed(fused))
        return signalPassFailure();
      if (*fused)
        ++numFused;
    }
  }

  /// Fuses `norm` into the kernels that read it if it can (true), leaves it
  /// (false), or fails (an error was emitted).
  FailureOr<bool> fuse(RMSNormOp norm) {
    auto type = cast<RankedTensorType>(norm.getType());
    Value n = norm.getResult(), x = norm.getInput(), g = norm.getWeight();
    int64_t k = type.getDimSize(type.getRank() - 1);
    if (type.getRank() != 3 || !type.getElementType().isF32() ||
        ShapedType::isDynamic(k) || k == 0 ||
        cast<RankedTensorType>(g.getType()).getRank() != 1)
      return false;
    // Every use must be a tensor.dim (of the shape, which x shares) or lie
    // in a projection kernel that starts from zero; inside, the weight
    // reads must be 1-D vector reads along k.
    Block *block = norm->getBlock();
    SetVector<scf::ForallOp> kernels;
    SmallVector<tensor::DimOp> dims;
    for (OpOperand &use : n.getUses()) {
      Operation *top = ancestorIn(block, use.getOwner());
      if (auto dim = dyn_cast_or_null<tensor::DimOp>(top)) {
        dims.push_back(dim);
        continue;
      }
      auto forall = dyn_cast_or_null<scf::ForallOp>(top);
      if (!forall || !blockc::cpu::isLinearKernel(forall) ||
          !llvm::all_of(forall.getOutputs(), blockc::cpu::isZeroFill) ||
          !isa<tensor::ExtractOp, vector::TransferReadOp, tensor::DimOp>(
              use.getOwner()))
        return false;
      kernels.insert(forall);
    }
    if (kernels.empty())
      return false;
    // Where each kernel gets the gain: the packed kernel multiplies its
    // weight reads (vector reads of a 2-D tensor from outside the kernel,
    // made once per element while packing; its x reads are scalars); the
    // dot-product kernel multiplies its x vector reads instead (one per row
    // and k step, fewer than its weight reads), so a weight read that shares
    // its loop body with an x vector read is left alone.
    DenseMap<scf::ForallOp, SmallVector<vector::TransferReadOp>> gainReads;
    // A kernel reading prepared weights (packed by a linalg.pack outside
    // it, see blockc-cpu-lower-linear) gets the gain folded into the
    // weight before packing: W[n, k] * g[k], computed once by the entry's
    // prepare function.
    DenseMap<scf::ForallOp, SetVector<linalg::PackOp>> gainPacks;
    for (scf::ForallOp forall : kernels) {
      if (!llvm::all_of(forall.getTerminator().getYieldingOps(),
                        llvm::IsaPred<tensor::ParallelInsertSliceOp>))
        return false;
      bool ok = true;
      SmallVector<vector::TransferReadOp> xReads, wReads;
      DenseSet<Block *> xBlocks;
      forall.walk([&](vector::TransferReadOp read) {
        auto src = dyn_cast<RankedTensorType>(read.getBase().getType());
        bool isX = read.getBase() == n;
        bool isW =
            src && src.getRank() == 2 &&
            !forall->isAncestor(read.getBase().getParentBlock()->getParentOp());
        if (!isX && !isW)
          return;
        // A 16-bit weight (read and widened in place) would need the gain
        // applied after the widening: not fused.
        if (read.getVectorType().getRank() != 1 || read.getMask() ||
            !read.getPermutationMap().isMinorIdentity() ||
            !read.getVectorType().getElementType().isF32())
          ok = false;
        if (isX) {
          xReads.push_back(read);
          xBlocks.insert(read->getBlock());
        } else {
          wReads.push_back(read);
        }
      });
      SetVector<linalg::PackOp> &packs = gainPacks[forall];
      forall.walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          if (auto pack = operand.getDefiningOp<linalg::PackOp>())
            if (!forall->isAncestor(pack))
              packs.insert(pack);
      });
      for (linalg::PackOp pack : packs)
        if (pack.getSourceType().getRank() != 2 ||
            pack.getSourceType().getDimSize(1) != k ||
            !pack.getSourceType().getElementType().isF32())
          ok = false;
      if (!ok || (xReads.empty() && wReads.empty() && packs.empty()))
        return false;
      SmallVector<vector::TransferReadOp> &reads = gainReads[forall];
      reads.append(xReads);
      for (vector::TransferReadOp w : wReads)
        if (!xBlocks.contains(w->getBlock()))
          reads.push_back(w);
    }

    FailureOr<int64_t> width = blockc::cpu::getTargetVectorWidth(
        getOperation(), "blockc-cpu-fuse-norm");
    if (failed(width))
      return failure();
    OpBuilder b(norm);
    Location loc = norm.getLoc();
    VectorType vec = VectorType::get({*width}, b.getF32Type());
    Builder nb{{b, loc}, vec};
    Value r = nb.rowScales(x, k, norm.getEpsilon().convertToDouble());
    for (scf::ForallOp forall : kernels) {
      // x[b, t, k] * g[k] or W[i, k] * g[k] (the last index is k).
      for (vector::TransferReadOp read : gainReads[forall]) {
        OpBuilder rb(read->getNextNode());
        Value gv = vector::TransferReadOp::create(
            rb, read.getLoc(), read.getVectorType(), g,
            ValueRange{read.getIndices().back()}, read.getPadding(),
            ArrayRef<bool>{read.getInBoundsValues()[0]});
        Value scaled =
            arith::MulFOp::create(rb, read.getLoc(), read.getResult(), gv);
        read.getResult().replaceAllUsesExcept(scaled, scaled.getDefiningOp());
      }
      for (linalg::PackOp pack : gainPacks[forall]) {
        OpBuilder pb(pack);
        Value w = pack.getSource();
        auto wType = cast<RankedTensorType>(w.getType());
        MLIRContext *ctx = pb.getContext();
        AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
        AffineMap col = AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx);
        Value empty = tensor::EmptyOp::create(pb, loc, wType.getShape(),
                                              wType.getElementType());
        auto scaled = linalg::GenericOp::create(
            pb, loc, TypeRange{wType}, ValueRange{w, g}, ValueRange{empty},
            ArrayRef<AffineMap>{id, col, id},
            SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
            [](OpBuilder &bb, Location l, ValueRange a) {
              linalg::YieldOp::create(
                  bb, l, ValueRange{arith::MulFOp::create(bb, l, a[0], a[1])});
            });
        pack.getSourceMutable().assign(scaled.getResult(0));
      }
      // x instead of the normalised x, and each finished tile times r.
      n.replaceUsesWithIf(x, [&](OpOperand &use) {
        return forall->isAncestor(use.getOwner());
      });
      // Every member's tile (a horizontal group has one per member).
      OpBuilder eb(forall.getTerminator());
      Builder tb{{eb, loc}, vec};
      for (Operation &op : forall.getTerminator().getYieldingOps()) {
        auto insert = cast<tensor::ParallelInsertSliceOp>(op);
        insert.getSourceMutable().assign(tb.scaleRows(insert.getSource(), r));
      }
    }
    for (tensor::DimOp dim : dims)
      dim.getSourceMutable().assign(x);
    if (!n.use_empty())
      return norm.emitOpError("blockc-cpu-fuse-norm left uses behind");
    norm->erase();
    return true;
  }
};

} // namespace
