//===- LowerLinear.cpp - register-tiled vector kernel for linear ----------===//
//
// Builds the loop nest and micro-kernel described in Codegen/CPU/Passes.td
// directly with scf/vector/tensor builders. The nest carries the output
// tensor through scf.for iter_args (destination-passing style), so one-shot
// bufferization updates it in place.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPULOWERLINEARPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;

namespace {

struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  Value x, w;         // [B, T, K], [N, K]
  VectorType vecType; // vector<V x f32>
  Value zeroF, zeroVec;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value a, Value c) { return arith::AddIOp::create(b, loc, a, c); }

  /// Reads V elements along k; `inBounds` false pads past K with zeros.
  Value read(Value source, ValueRange indices, bool inBounds) {
    return vector::TransferReadOp::create(b, loc, vecType, source, indices,
                                          zeroF, ArrayRef<bool>{inBounds});
  }

  /// acc[i][j] += x[bIdx, t+i, k:k+V] * w[n+j, k:k+V] over [kLo, kHi) in
  /// steps of V, as one loop carrying the accumulators.
  SmallVector<Value> kLoop(Value bIdx, Value t, Value n, int64_t r, int64_t c,
                           Value kLo, Value kHi, int64_t v, bool inBounds,
                           ValueRange accs) {
    auto loop = scf::ForOp::create(
        b, loc, kLo, kHi, idx(v), accs,
        [&](OpBuilder &nb, Location nloc, Value k, ValueRange iter) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> xs, ws, next;
          for (int64_t i = 0; i < r; ++i)
            xs.push_back(read(x, {bIdx, add(t, idx(i)), k}, inBounds));
          for (int64_t j = 0; j < c; ++j)
            ws.push_back(read(w, {add(n, idx(j)), k}, inBounds));
          for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < c; ++j)
              next.push_back(
                  vector::FMAOp::create(b, loc, xs[i], ws[j], iter[i * c + j]));
          scf::YieldOp::create(b, loc, next);
        });
    return SmallVector<Value>(loop.getResults().begin(),
                              loop.getResults().end());
  }

  /// One r x c kernel at (bIdx, t, n) over the k-block [kc, kcEnd), whose
  /// full-vector part ends at kMain; adds into `out` and returns it.
  Value kernel(Value out, Value bIdx, Value t, Value n, Value nOffset,
               int64_t r, int64_t c, Value kc, Value kMain, Value kcEnd,
               int64_t v) {
    SmallVector<Value> accs(r * c, zeroVec);
    accs = kLoop(bIdx, t, n, r, c, kc, kMain, v, /*inBounds=*/true, accs);
    // At most one masked step for the k remainder.
    accs = kLoop(bIdx, t, n, r, c, kMain, kcEnd, v, /*inBounds=*/false, accs);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        Value sum = vector::ReductionOp::create(
            b, loc, vector::CombiningKind::ADD, accs[i * c + j]);
        // `out` is the slice of the output that starts at column nOffset.
        Value col = arith::SubIOp::create(b, loc, add(n, idx(j)), nOffset);
        SmallVector<Value> at = {bIdx, add(t, idx(i)), col};
        Value old = tensor::ExtractOp::create(b, loc, out, at);
        Value updated = arith::AddFOp::create(b, loc, old, sum);
        out = tensor::InsertOp::create(b, loc, updated, out, at);
      }
    return out;
  }

  /// scf.for over [lo, hi) step `step` carrying one tensor.
  Value forTensor(Value lo, Value hi, int64_t step, Value init,
                  function_ref<Value(Value iv, Value acc)> body) {
    auto loop = scf::ForOp::create(
        b, loc, lo, hi, idx(step), ValueRange{init},
        [&](OpBuilder &nb, Location, Value iv, ValueRange iter) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value r = body(iv, iter[0]);
          scf::YieldOp::create(b, loc, r);
        });
    return loop.getResult(0);
  }

  /// lo + ((hi - lo) / step) * step: the end of the full tiles.
  Value fullEnd(Value lo, Value hi, int64_t step) {
    Value len = arith::SubIOp::create(b, loc, hi, lo);
    Value tiles = arith::DivUIOp::create(b, loc, len, idx(step));
    return add(lo, arith::MulIOp::create(b, loc, tiles, idx(step)));
  }

  Value minIdx(Value a, Value c) {
    return arith::MinUIOp::create(b, loc, a, c);
  }
};

struct LowerLinear : OpRewritePattern<LinearOp> {
  LowerLinear(MLIRContext *ctx, int64_t rows, int64_t cols, int64_t width,
              int64_t blockN, int64_t blockK)
      : OpRewritePattern<LinearOp>(ctx), rows(rows), cols(cols), width(width),
        blockN(blockN), blockK(blockK) {}

  /// The n-blocks are independent (each writes its own columns): an
  /// scf.forall that the pipeline turns into an OpenMP parallel loop. Each
  /// iteration computes its [B, T, block] slice of the output.
  Value buildBlocks(PatternRewriter &rewriter, Location loc, KernelBuilder &kb,
                    Value init, Value bDim, Value tDim, int64_t n,
                    int64_t k) const {
    Value c0 = kb.idx(0), nVal = kb.idx(n), kVal = kb.idx(k);
    int64_t numBlocks = (n + blockN - 1) / blockN;
    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(numBlocks)},
        ValueRange{init}, /*mapping=*/std::nullopt);
    // Lets later passes (blockc-cpu-fuse-residual) find the kernel.
    forall->setAttr(blockc::cpu::kLinearKernelAttr, rewriter.getUnitAttr());
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    Value nc = arith::MulIOp::create(rewriter, loc, forall.getInductionVar(0),
                                     kb.idx(blockN));
    Value ncEnd = kb.minIdx(kb.add(nc, kb.idx(blockN)), nVal);
    Value blockWidth = arith::SubIOp::create(rewriter, loc, ncEnd, nc);
    Value shared = forall.getRegionIterArgs()[0];
    SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(0),
                                         rewriter.getIndexAttr(0), nc};
    SmallVector<OpFoldResult> sizes = {bDim, tDim, blockWidth};
    SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(rewriter, loc, shared, offsets,
                                                 sizes, strides);
    Value computed =
        kb.forTensor(c0, kVal, blockK, slice, [&](Value kc, Value o2) {
          Value kcEnd = kb.minIdx(kb.add(kc, kb.idx(blockK)), kVal);
          Value kMain = kb.fullEnd(kc, kcEnd, width);
          return kb.forTensor(c0, bDim, 1, o2, [&](Value bIdx, Value o3) {
            // Columns of one row group: full tiles, then single columns.
            auto colsLoop = [&](Value t, int64_t r, Value o) {
              // A single row (decode) streams more weight rows at once.
              int64_t c = r == 1 ? 2 * cols : cols;
              Value nMain = kb.fullEnd(nc, ncEnd, c);
              o = kb.forTensor(nc, nMain, c, o, [&](Value nIdx, Value acc) {
                return kb.kernel(acc, bIdx, t, nIdx, nc, r, c, kc, kMain, kcEnd,
                                 width);
              });
              return kb.forTensor(
                  nMain, ncEnd, 1, o, [&](Value nIdx, Value acc) {
                    return kb.kernel(acc, bIdx, t, nIdx, nc, r, 1, kc, kMain,
                                     kcEnd, width);
                  });
            };
            Value tMain = kb.fullEnd(c0, tDim, rows);
            o3 = kb.forTensor(c0, tMain, rows, o3, [&](Value t, Value acc) {
              return colsLoop(t, rows, acc);
            });
            return kb.forTensor(tMain, tDim, 1, o3, [&](Value t, Value acc) {
              return colsLoop(t, 1, acc);
            });
          });
        });
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, computed, shared,
                                          offsets, sizes, strides);
    return forall.getResult(0);
  }

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType inType = op.getInput().getType();
    RankedTensorType outType = op.getType();
    if (inType.getRank() != 3 || !inType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "expects an f32 [B, T, K] input");
    Location loc = op.getLoc();
    auto wType = cast<RankedTensorType>(op.getWeight().getType());
    int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);

    KernelBuilder kb{rewriter,
                     loc,
                     op.getInput(),
                     op.getWeight(),
                     VectorType::get({width}, rewriter.getF32Type()),
                     Value(),
                     Value()};
    kb.zeroF =
        arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0));
    kb.zeroVec = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(kb.vecType, 0.0f));

    // The output starts as the broadcast bias, or zero.
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    sizes.back() = rewriter.getIndexAttr(n);
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, sizes, rewriter.getF32Type());
    Value init;
    if (Value bias = op.getBias()) {
      MLIRContext *ctx = getContext();
      AffineMap id = AffineMap::getMultiDimIdentityMap(3, ctx);
      AffineMap last = AffineMap::get(3, 0, {getAffineDimExpr(2, ctx)}, ctx);
      init = linalg::GenericOp::create(
                 rewriter, loc, TypeRange{outType}, ValueRange{bias},
                 ValueRange{empty}, ArrayRef<AffineMap>{last, id},
                 SmallVector<utils::IteratorType>(
                     3, utils::IteratorType::parallel),
                 [](OpBuilder &b, Location l, ValueRange a) {
                   linalg::YieldOp::create(b, l, ValueRange{a[0]});
                 })
                 .getResult(0);
    } else {
      init = linalg::FillOp::create(rewriter, loc, ValueRange{kb.zeroF},
                                    ValueRange{empty})
                 .getResult(0);
    }

    Value bDim = tensor::DimOp::create(rewriter, loc, op.getInput(), 0);
    Value tDim = tensor::DimOp::create(rewriter, loc, op.getInput(), 1);
    Value result = buildBlocks(rewriter, loc, kb, init, bDim, tDim, n, k);
    rewriter.replaceOp(op, result);
    return success();
  }

  int64_t rows, cols, width, blockN, blockK;
};

struct CPULowerLinearPass
    : blockc::cpu::impl::CPULowerLinearPassBase<CPULowerLinearPass> {
  using Base::Base;

  void runOnOperation() override {
    if (rows < 1 || cols < 1 || vectorWidth < 1 || blockN < 1 || blockK < 1) {
      getOperation().emitError()
          << "blockc-cpu-lower-linear: every option must be >= 1";
      return signalPassFailure();
    }
    SmallVector<LinearOp> ops;
    getOperation().walk([&](LinearOp op) { ops.push_back(op); });
    PatternRewriter rewriter(&getContext());
    for (LinearOp op : ops) {
      // Tiles chosen for this op (blockc-cpu-select-tiles or by hand)
      // override the pass options.
      int64_t t[5] = {rows, cols, vectorWidth, blockN, blockK};
      if (Attribute attr = op->getAttr(blockc::cpu::kCpuTilesAttrName)) {
        auto dict = dyn_cast<DictionaryAttr>(attr);
        static constexpr const char *names[5] = {"rows", "cols", "vector_width",
                                                 "block_n", "block_k"};
        for (int i = 0; dict && i < 5; ++i) {
          auto v = dict.getAs<IntegerAttr>(names[i]);
          if (!v || v.getInt() < 1) {
            dict = nullptr;
            break;
          }
          t[i] = v.getInt();
        }
        if (!dict) {
          op.emitOpError() << "has a malformed '"
                           << blockc::cpu::kCpuTilesAttrName
                           << "': expected a dictionary of positive integers "
                              "rows, cols, vector_width, block_n, block_k";
          return signalPassFailure();
        }
      }
      LowerLinear pattern(&getContext(), t[0], t[1], t[2], t[3], t[4]);
      rewriter.setInsertionPoint(op);
      if (succeeded(pattern.matchAndRewrite(op, rewriter)))
        ++numLowered;
    }
  }
};

} // namespace
