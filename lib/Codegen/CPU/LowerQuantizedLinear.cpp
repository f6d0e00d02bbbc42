//===- LowerQuantizedLinear.cpp - projections on quantised weights -------===//
//
// See Codegen/CPU/Passes.td (CPULowerQuantizedLinearPass).
//
//===----------------------------------------------------------------------===//

#include "TileEpilogue.h"
#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/WeightQuant.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPULOWERQUANTIZEDLINEARPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;
namespace codegen = blockc::codegen;
using codegen::CodegenDialect;

namespace {

/// Output columns per parallel work item.
constexpr int64_t kBlockN = 32;
/// int4 values are stored in chunks of 32 k (16 bytes).
constexpr int64_t kChunk = 32;

struct Builder {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// lo + ((hi - lo) / step) * step.
  Value fullEnd(Value lo, Value hi, int64_t step) {
    Value n = arith::DivUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, hi, lo), idx(step));
    return add(lo, mul(n, idx(step)));
  }
  /// scf.for over [lo, hi) carrying one value.
  Value forOne(Value lo, Value hi, int64_t step, Value init,
               function_ref<Value(Value, Value)> body) {
    return blockc::cpu::buildLoop(b, loc, lo, hi, step, ValueRange{init},
                                  [&](Value iv, ValueRange it) {
                                    return SmallVector<Value>{body(iv, it[0])};
                                  })
        .front();
  }
};

/// Builds the prepared weight P [N, words] (i32) of `w` [N, K] under
/// `layout` (see #blockc_codegen.quantized_weight): one linalg.generic over
/// the words that reads W and the group maxima, marked as prepared.
Value buildPreparedWeight(OpBuilder &b, Location loc, Value w,
                          codegen::QuantizedWeightAttr layout) {
  int64_t k = layout.getCols(), g = layout.getGroupSize();
  int64_t bits = layout.getBits(), level = bits == 8 ? 127 : 7;
  int64_t valueWords = layout.getValueWords();
  Value amax = blockc::buildGroupAbsMax(b, loc, w, g);
  SmallVector<int64_t, 2> shape = layout.getPreparedShape();
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getI32Type());
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{id},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                    utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location, ValueRange) {
        Builder q{nb, loc};
        Value n = linalg::IndexOp::create(nb, loc, 0);
        Value word = linalg::IndexOp::create(nb, loc, 1);
        Value isValue = q.lt(word, q.idx(valueWords));
        // The level of W[n, kk] (0 past K), as an i32.
        auto levelAt = [&](Value kk) -> Value {
          Value inK = q.lt(kk, q.idx(k));
          Value kc = q.select(inK, kk, q.idx(0));
          Value x = tensor::ExtractOp::create(nb, loc, w, ValueRange{n, kc});
          Value grp = arith::DivUIOp::create(nb, loc, kc, q.idx(g));
          Value s = blockc::buildQuantScale(
              nb, loc,
              tensor::ExtractOp::create(nb, loc, amax, ValueRange{n, grp}),
              level);
          Value lv = blockc::buildQuantLevel(nb, loc, x, s, level);
          Value iv = arith::FPToSIOp::create(nb, loc, nb.getI32Type(), lv);
          return q.select(inK, iv, q.i32(0));
        };
        // Value words: four bytes each, little-endian.
        Value wc = q.select(isValue, word, q.idx(0));
        Value packed = q.i32(0);
        for (int64_t byte = 0; byte < 4; ++byte) {
          Value v;
          if (bits == 8) {
            v = arith::AndIOp::create(
                nb, loc, levelAt(q.add(q.mul(wc, q.idx(4)), q.idx(byte))),
                q.i32(0xFF));
          } else {
            // Word j of chunk c holds bytes 4j .. 4j + 3 of the chunk; byte
            // i pairs k = 32c + i (low nibble) with 32c + 16 + i (high).
            Value c = arith::DivUIOp::create(nb, loc, wc, q.idx(4));
            Value j = arith::RemUIOp::create(nb, loc, wc, q.idx(4));
            Value i = q.add(q.mul(j, q.idx(4)), q.idx(byte));
            Value kLo = q.add(q.mul(c, q.idx(kChunk)), i);
            Value lo = q.add(levelAt(kLo), q.i32(8));
            Value hi = q.add(levelAt(q.add(kLo, q.idx(kChunk / 2))), q.i32(8));
            v = arith::OrIOp::create(
                nb, loc, lo, arith::ShLIOp::create(nb, loc, hi, q.i32(4)));
          }
          packed = arith::OrIOp::create(
              nb, loc, packed,
              arith::ShLIOp::create(nb, loc, v, q.i32(8 * byte)));
        }
        // Scale words: the bits of s for group word - valueWords.
        Value sg =
            q.select(isValue, q.idx(0),
                     arith::SubIOp::create(nb, loc, word, q.idx(valueWords)));
        Value s = blockc::buildQuantScale(
            nb, loc,
            tensor::ExtractOp::create(nb, loc, amax, ValueRange{n, sg}), level);
        Value sBits = arith::BitcastOp::create(nb, loc, nb.getI32Type(), s);
        linalg::YieldOp::create(nb, loc,
                                ValueRange{q.select(isValue, packed, sBits)});
      });
  generic->setAttr(CodegenDialect::kPreparedAttrName, layout);
  return generic.getResult(0);
}

struct Kernel {
  Builder &q;
  Value x, p, bias; // [B, T, K] f32, [N, words] i32, [N] f32 or null
  codegen::QuantizedWeightAttr layout;
  int64_t v; // f32 lanes

  OpBuilder &b() { return q.b; }
  Location loc() { return q.loc; }

  /// x[bIdx, t, k : k + V] (zero past K when !inBounds).
  Value readX(Value bIdx, Value t, Value k, bool inBounds) {
    return vector::TransferReadOp::create(
        b(), loc(), VectorType::get({v}, b().getF32Type()), x,
        ValueRange{bIdx, t, k}, q.f32(0.0), ArrayRef<bool>{inBounds});
  }
  /// The V bytes of row n that start at byte `byteIdx` (a multiple of 4).
  Value readBytes(Value n, Value byteIdx) {
    Value word = arith::DivUIOp::create(b(), loc(), byteIdx, q.idx(4));
    Value words = vector::TransferReadOp::create(
        b(), loc(), VectorType::get({v / 4}, b().getI32Type()), p,
        ValueRange{n, word}, q.i32(0), ArrayRef<bool>{true});
    return vector::BitCastOp::create(
        b(), loc(), VectorType::get({v}, b().getI8Type()), words);
  }
  Value toF32(Value bytes) {
    Value wide = arith::ExtSIOp::create(
        b(), loc(), VectorType::get({v}, b().getI32Type()), bytes);
    return arith::SIToFPOp::create(
        b(), loc(), VectorType::get({v}, b().getF32Type()), wide);
  }
  /// The f32 scale of group `grp` of row n.
  Value scale(Value n, Value grp) {
    Value bits = tensor::ExtractOp::create(
        b(), loc(), p,
        ValueRange{n, q.add(q.idx(layout.getValueWords()), grp)});
    return arith::BitcastOp::create(b(), loc(), b().getF32Type(), bits);
  }

  /// out[bIdx, t + i, n + j - nOffset] for i < r, j < c: sum_k x W'.
  Value tile(Value out, Value bIdx, Value t, Value n, Value nOffset, int64_t r,
             int64_t c) {
    int64_t k = layout.getCols();
    Type f32v = VectorType::get({v}, b().getF32Type());
    Value zero = arith::ConstantOp::create(
        b(), loc(), DenseElementsAttr::get(cast<ShapedType>(f32v), 0.0f));
    SmallVector<Value> accs(r * c, zero);
    SmallVector<Value> rows, cols;
    for (int64_t i = 0; i < r; ++i)
      rows.push_back(q.add(t, q.idx(i)));
    for (int64_t j = 0; j < c; ++j)
      cols.push_back(q.add(n, q.idx(j)));
    auto fmaAll = [&](ArrayRef<Value> xs, ArrayRef<Value> ws,
                      MutableArrayRef<Value> acc) {
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < c; ++j)
          acc[i * c + j] =
              vector::FMAOp::create(b(), loc(), xs[i], ws[j], acc[i * c + j]);
    };
    if (layout.getBits() == 8) {
      // sum_k x q, scaled by s[n] at the end; the values are padded with
      // zeros to 16 bytes, so the last, partial step reads them in bounds.
      int64_t kMain = k / v * v;
      auto step = [&](Value kk, ValueRange it, bool inBounds) {
        SmallVector<Value> acc(it), xs, ws;
        for (int64_t i = 0; i < r; ++i)
          xs.push_back(readX(bIdx, rows[i], kk, inBounds));
        for (int64_t j = 0; j < c; ++j)
          ws.push_back(toF32(readBytes(cols[j], kk)));
        fmaAll(xs, ws, acc);
        return acc;
      };
      accs = blockc::cpu::buildLoop(
          b(), loc(), q.idx(0), q.idx(kMain), v, accs,
          [&](Value kk, ValueRange it) { return step(kk, it, true); });
      if (kMain < k)
        accs = step(q.idx(kMain), accs, false);
    } else {
      // Groups of G k, G / 32 chunks each: V bytes at byte offset o of a
      // chunk's 16 hold the nibbles u of k = o .. o + V - 1 (low) and
      // 16 + o .. (high), q = u - 8. Per group the kernel sums x u
      // (unsigned nibbles, widened with one zero-extension per V bytes)
      // and x, then adds (sum x u - 8 sum x) s: one scale per group and
      // column instead of one multiply per weight vector.
      int64_t g = layout.getGroupSize();
      VectorType i32v = VectorType::get({v}, b().getI32Type());
      auto splat32 = [&](int64_t value) -> Value {
        return arith::ConstantOp::create(
            b(), loc(),
            DenseElementsAttr::get(i32v, b().getI32IntegerAttr(value)));
      };
      Value minus8 = arith::ConstantOp::create(
          b(), loc(), DenseElementsAttr::get(cast<ShapedType>(f32v), -8.0f));
      accs = blockc::cpu::buildLoop(
          b(), loc(), q.idx(0), q.idx(k), g, accs,
          [&](Value kg, ValueRange it) {
            SmallVector<Value> acc(it);
            SmallVector<Value> gacc(r * c, zero), xs(r, zero);
            for (int64_t ch = 0; ch < g; ch += kChunk) {
              Value kk = q.add(kg, q.idx(ch));
              Value chunkByte =
                  arith::DivUIOp::create(b(), loc(), kk, q.idx(2));
              for (int64_t o = 0; o < kChunk / 2; o += v) {
                SmallVector<Value> xLo, xHi, lo, hi;
                for (int64_t i = 0; i < r; ++i) {
                  xLo.push_back(
                      readX(bIdx, rows[i], q.add(kk, q.idx(o)), true));
                  xHi.push_back(readX(bIdx, rows[i],
                                      q.add(kk, q.idx(kChunk / 2 + o)), true));
                  xs[i] = arith::AddFOp::create(
                      b(), loc(), xs[i],
                      arith::AddFOp::create(b(), loc(), xLo[i], xHi[i]));
                }
                for (int64_t j = 0; j < c; ++j) {
                  Value u = arith::ExtUIOp::create(
                      b(), loc(), i32v,
                      readBytes(cols[j], q.add(chunkByte, q.idx(o))));
                  auto toF = [&](Value i) -> Value {
                    return arith::SIToFPOp::create(b(), loc(), f32v, i);
                  };
                  lo.push_back(
                      toF(arith::AndIOp::create(b(), loc(), u, splat32(0x0F))));
                  hi.push_back(
                      toF(arith::ShRUIOp::create(b(), loc(), u, splat32(4))));
                }
                fmaAll(xLo, lo, gacc);
                fmaAll(xHi, hi, gacc);
              }
            }
            Value grp = arith::DivUIOp::create(b(), loc(), kg, q.idx(g));
            for (int64_t j = 0; j < c; ++j) {
              Value sj = vector::BroadcastOp::create(b(), loc(), f32v,
                                                     scale(cols[j], grp));
              for (int64_t i = 0; i < r; ++i) {
                Value t = vector::FMAOp::create(b(), loc(), xs[i], minus8,
                                                gacc[i * c + j]);
                acc[i * c + j] =
                    vector::FMAOp::create(b(), loc(), t, sj, acc[i * c + j]);
              }
            }
            return acc;
          });
    }
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        Value sum = vector::ReductionOp::create(
            b(), loc(), vector::CombiningKind::ADD, accs[i * c + j]);
        if (layout.getBits() == 8)
          sum =
              arith::MulFOp::create(b(), loc(), sum, scale(cols[j], q.idx(0)));
        if (bias)
          sum = arith::AddFOp::create(
              b(), loc(), sum,
              tensor::ExtractOp::create(b(), loc(), bias, cols[j]));
        Value col = arith::SubIOp::create(b(), loc(), cols[j], nOffset);
        out = tensor::InsertOp::create(b(), loc(), sum, out,
                                       ValueRange{bIdx, rows[i], col});
      }
    return out;
  }
};

struct CPULowerQuantizedLinearPass
    : blockc::cpu::impl::CPULowerQuantizedLinearPassBase<
          CPULowerQuantizedLinearPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<LinearOp> ops;
    func.walk([&](LinearOp op) {
      if (op.getWeightQuantAttr())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    auto target = func->getAttrOfType<codegen::CPUTargetAttr>(
        CodegenDialect::kCpuTargetAttrName);
    if (!target) {
      func.emitError() << "blockc-cpu-lower-quantized-linear: the function "
                          "has no '"
                       << CodegenDialect::kCpuTargetAttrName << "'";
      return signalPassFailure();
    }
    int64_t v = target.getVectorWidth();
    if (v < 4 || v > 16 || v % 4 != 0) {
      func.emitError() << "blockc-cpu-lower-quantized-linear: vector width "
                       << v << " is not 4, 8 or 16";
      return signalPassFailure();
    }
    // Register tiles: rows x columns of accumulators beside the row vectors
    // and one weight vector at a time (2 x 4 in 16 registers, 4 x 4 in 32);
    // a single row streams 8 weight rows at once.
    int64_t rows = target.getRegisters() >= 32 ? 4 : 2, cols = 4;
    for (LinearOp op : ops) {
      auto inType = cast<RankedTensorType>(op.getInput().getType());
      auto wType = op.getWeight().getType();
      if (inType.getRank() != 3 || !inType.getElementType().isF32() ||
          !wType.getElementType().isF32())
        continue; // left to convert-weight-quant-to-linalg
      WeightQuantAttr quant = op.getWeightQuantAttr();
      int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
      bool int8 = quant.getType() == WeightQuantType::int8;
      auto layout = codegen::QuantizedWeightAttr::get(
          &getContext(), n, k, int8 ? 8 : 4, quant.getGroupSizeFor(k));
      lower(op, layout, v, rows, cols);
      ++numLowered;
    }
  }

  void lower(LinearOp op, codegen::QuantizedWeightAttr layout, int64_t v,
             int64_t rows, int64_t cols) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Builder q{b, loc};
    Value x = op.getInput();
    Value p = buildPreparedWeight(b, loc, op.getWeight(), layout);
    int64_t n = layout.getRows();
    Value bDim = tensor::DimOp::create(b, loc, x, 0);
    Value tDim = tensor::DimOp::create(b, loc, x, 1);
    auto outType = cast<RankedTensorType>(op.getType());
    SmallVector<Value> dynamic;
    for (auto [i, d] : llvm::enumerate(ValueRange{bDim, tDim}))
      if (outType.isDynamicDim(i))
        dynamic.push_back(d);
    Value out = tensor::EmptyOp::create(b, loc, outType.getShape(),
                                        b.getF32Type(), dynamic);
    int64_t blocks = (n + kBlockN - 1) / kBlockN;
    auto forall = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(blocks)}, ValueRange{out},
        /*mapping=*/std::nullopt);
    blockc::cpu::setKernelKind(forall, codegen::KernelKind::quantized_linear);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    Value nc = q.mul(forall.getInductionVar(0), q.idx(kBlockN));
    Value ncEnd =
        arith::MinUIOp::create(b, loc, q.add(nc, q.idx(kBlockN)), q.idx(n));
    Value width = arith::SubIOp::create(b, loc, ncEnd, nc);
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0),
                                         nc};
    SmallVector<OpFoldResult> sizes = {bDim, tDim, width};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, forall.getRegionIterArgs()[0], offsets, sizes, strides);
    Kernel kern{q, x, p, op.getBias(), layout, v};
    // int4 keeps a group accumulator beside each accumulator: half the
    // columns.
    int64_t tileCols =
        layout.getBits() == 8 ? cols : std::max<int64_t>(1, cols / 2);
    int64_t singleCols = 2 * tileCols;
    Value c0 = q.idx(0);
    Value computed = q.forOne(c0, bDim, 1, slice, [&](Value bIdx, Value o) {
      auto colsLoop = [&](Value t, int64_t r, Value acc) {
        // A single row streams more weight rows at once.
        int64_t c = r == 1 ? singleCols : tileCols;
        Value nMain = q.fullEnd(nc, ncEnd, c);
        acc = q.forOne(nc, nMain, c, acc, [&](Value nIdx, Value a) {
          return kern.tile(a, bIdx, t, nIdx, nc, r, c);
        });
        return q.forOne(nMain, ncEnd, 1, acc, [&](Value nIdx, Value a) {
          return kern.tile(a, bIdx, t, nIdx, nc, r, 1);
        });
      };
      Value tMain = q.fullEnd(c0, tDim, rows);
      o = q.forOne(c0, tMain, rows, o,
                   [&](Value t, Value acc) { return colsLoop(t, rows, acc); });
      return q.forOne(tMain, tDim, 1, o,
                      [&](Value t, Value acc) { return colsLoop(t, 1, acc); });
    });
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, computed,
                                          forall.getRegionIterArgs()[0],
                                          offsets, sizes, strides);
    op.replaceAllUsesWith(forall.getResult(0));
    op.erase();
  }
};

} // namespace
