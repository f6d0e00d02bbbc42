//===- LowerQuantizedLinear.cpp - projections on quantised weights -------===//
//
// See Codegen/CPU/Passes.td (CPULowerQuantizedLinearPass).
//
//===----------------------------------------------------------------------===//

#include "TileEpilogue.h"
#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/KernelToolkit.h"
#include "blockc/Codegen/Common/WeightQuant.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/bit.h"

namespace blockc::cpu {
#define GEN_PASS_DEF_CPULOWERQUANTIZEDLINEARPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;
namespace codegen = blockc::codegen;
using codegen::CodegenDialect;

namespace {

/// int4 values are stored in chunks of 32 k (16 bytes).
constexpr int64_t kChunk = 32;

/// `name`(operands) as an `llvm.call_intrinsic` of result type `type` (the
/// pure x86 intrinsics of isPureX86Intrinsic below).
Value callIntrinsic(OpBuilder &b, Location loc, Type type, StringRef name,
                    ValueRange operands) {
  return LLVM::CallIntrinsicOp::create(b, loc, type, b.getStringAttr(name),
                                       operands)
      ->getResult(0);
}

/// Where the words of a row live in P under `layout`: a row's logical words
/// are its value words, then its scales (the layout with interleave 1, where
/// P row n is that row); with an interleave I, tile n / I of P holds the I
/// rows group by group (see #blockc_codegen.quantized_weight).
struct WordAddress {
  blockc::KernelToolkit &q;
  codegen::QuantizedWeightAttr layout;

  int64_t interleave() const { return layout.getInterleave(); }
  /// Words of one row per group (int8: the row's value words).
  int64_t groupWords() const {
    return layout.getBits() == 8 ? layout.getValueWords()
                                 : layout.getGroupSize() / 8;
  }
  /// Words of one group of a tile: the I rows' values and scales.
  int64_t blockWords() const { return interleave() * (groupWords() + 1); }

  /// (P row, P column) of value word `word` of row n.
  std::pair<Value, Value> value(Value n, Value word) {
    int64_t i = interleave();
    if (i == 1)
      return {n, word};
    auto [tile, slot] = split(n);
    Value grp =
        q.b.createOrFold<arith::DivUIOp>(q.loc, word, q.idx(groupWords()));
    Value inGroup =
        q.b.createOrFold<arith::RemUIOp>(q.loc, word, q.idx(groupWords()));
    if (layout.getRowLanes()) // word inGroup of the group: 16 words in
      return {tile, q.add(q.add(q.mul(grp, q.idx(blockWords())),
                                q.mul(inGroup, q.idx(i))),
                          slot)};
    Value chunk = q.b.createOrFold<arith::DivUIOp>(q.loc, inGroup, q.idx(4));
    Value inChunk = q.b.createOrFold<arith::RemUIOp>(q.loc, inGroup, q.idx(4));
    Value col = q.add(
        q.add(q.mul(grp, q.idx(blockWords())), q.mul(chunk, q.idx(4 * i))),
        q.add(q.mul(slot, q.idx(4)), inChunk));
    return {tile, col};
  }
  /// (P row, P column) of the scale word of group `grp` of row n.
  std::pair<Value, Value> scale(Value n, Value grp) {
    int64_t i = interleave();
    if (i == 1)
      return {n, q.add(q.idx(layout.getValueWords()), grp)};
    auto [tile, slot] = split(n);
    return {tile, q.add(q.add(q.mul(grp, q.idx(blockWords())),
                              q.idx(i * groupWords())),
                        slot)};
  }
  /// (tile, slot) of row n.
  std::pair<Value, Value> split(Value n) {
    return {q.b.createOrFold<arith::DivUIOp>(q.loc, n, q.idx(interleave())),
            q.b.createOrFold<arith::RemUIOp>(q.loc, n, q.idx(interleave()))};
  }
};

/// Software prefetches (into L2) of value word `word` of the rows `ahead`
/// rows past `cols` (clamped to the last row), i.e. of a later tile's rows
/// at the same place. Interleaved rows share their lines: the rows at 64
/// bytes from each other (every fourth) and the tile's last one cover a
/// chunk's 16 I bytes.
void prefetchRows(blockc::KernelToolkit &q, Value pBuf,
                  codegen::QuantizedWeightAttr layout, ArrayRef<Value> cols,
                  int64_t ahead, Value word) {
  int64_t il = layout.getInterleave();
  for (auto [j, col] : llvm::enumerate(cols)) {
    int64_t slot = static_cast<int64_t>(j) % il;
    if (il > 1 && slot % 4 != 0 && slot != il - 1)
      continue;
    Value row = arith::MinUIOp::create(q.b, q.loc, q.add(col, q.idx(ahead)),
                                       q.idx(layout.getRows() - 1));
    auto [pRow, pCol] = WordAddress{q, layout}.value(row, word);
    memref::PrefetchOp::create(q.b, q.loc, pBuf, ValueRange{pRow, pCol},
                               /*isWrite=*/false, /*localityHint=*/2,
                               /*isDataCache=*/true);
  }
}

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
        blockc::KernelToolkit q{nb, loc};
        Value n = linalg::IndexOp::create(nb, loc, 0);
        Value word = linalg::IndexOp::create(nb, loc, 1);
        // Interleaved: the row and logical word (values, then scales) of
        // P[tile, column]; rows past N are zero.
        Value inRows;
        if (int64_t il = layout.getInterleave(); il > 1) {
          WordAddress at{q, layout};
          int64_t gw = at.groupWords(), block = at.blockWords();
          Value grp = arith::DivUIOp::create(nb, loc, word, q.idx(block));
          Value r = arith::RemUIOp::create(nb, loc, word, q.idx(block));
          Value inValues = q.lt(r, q.idx(il * gw));
          Value chunk = arith::DivUIOp::create(nb, loc, r, q.idx(4 * il));
          Value rem = arith::RemUIOp::create(nb, loc, r, q.idx(4 * il));
          Value valueSlot = arith::DivUIOp::create(nb, loc, rem, q.idx(4));
          Value valueWord =
              q.add(q.add(q.mul(grp, q.idx(gw)), q.mul(chunk, q.idx(4))),
                    arith::RemUIOp::create(nb, loc, rem, q.idx(4)));
          if (layout.getRowLanes()) {
            // Word r of a group's values: row r % 16, run r / 16.
            valueSlot = arith::RemUIOp::create(nb, loc, r, q.idx(il));
            valueWord = q.add(q.mul(grp, q.idx(gw)),
                              arith::DivUIOp::create(nb, loc, r, q.idx(il)));
          }
          Value scaleSlot = arith::SubIOp::create(
              nb, loc, r, q.select(inValues, r, q.idx(il * gw)));
          Value slot = q.select(inValues, valueSlot, scaleSlot);
          Value row = q.add(q.mul(n, q.idx(il)), slot);
          inRows = q.lt(row, q.idx(layout.getRows()));
          n = q.select(inRows, row, q.idx(0));
          word = q.select(inValues, valueWord, q.add(q.idx(valueWords), grp));
        }
        Value isValue = q.lt(word, q.idx(valueWords));
        // The level of W[n, kk] (0 past K), as an i32.
        auto levelAt = [&](Value kk) -> Value {
          Value inK = q.lt(kk, q.idx(k));
          Value kc = q.select(inK, kk, q.idx(0));
          Value x = tensor::ExtractOp::create(nb, loc, w, ValueRange{n, kc});
          if (!x.getType().isF32()) // a bf16/f16 checkpoint
            x = arith::ExtFOp::create(nb, loc, nb.getF32Type(), x);
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
        // Rows in lanes (int4): word w of a row holds k = 8w + j in nibble
        // j. (int8 rows in lanes keep the bytes of interleave 1's words.)
        bool nibbleLanes = layout.getRowLanes() && bits == 4;
        for (int64_t j = 0; nibbleLanes && j < 8; ++j) {
          Value u =
              q.add(levelAt(q.add(q.mul(wc, q.idx(8)), q.idx(j))), q.i32(8));
          packed = arith::OrIOp::create(
              nb, loc, packed, arith::ShLIOp::create(nb, loc, u, q.i32(4 * j)));
        }
        for (int64_t byte = 0; !nibbleLanes && byte < 4; ++byte) {
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
        Value result = q.select(isValue, packed, sBits);
        if (inRows)
          result = q.select(inRows, result, q.i32(0));
        linalg::YieldOp::create(nb, loc, ValueRange{result});
      });
  generic->setAttr(CodegenDialect::kPreparedAttrName, layout);
  return generic.getResult(0);
}

/// Software prefetches (into L2) of rows-in-lanes tiles `tiles`: the
/// `blockWords` words of each tile `ahead` words past `base` (clamped to the
/// last of its `pWords`), a line (16 words) at a time.
void prefetchLaneTiles(blockc::KernelToolkit &q, Value pBuf,
                       ArrayRef<Value> tiles, Value base, int64_t ahead,
                       int64_t blockWords, int64_t pWords) {
  for (Value tile : tiles)
    for (int64_t line = 0; line < (blockWords + 15) / 16; ++line) {
      Value col = arith::MinUIOp::create(
          q.b, q.loc, q.add(base, q.idx(ahead + 16 * line)), q.idx(pWords - 1));
      memref::PrefetchOp::create(q.b, q.loc, pBuf, ValueRange{tile, col},
                                 /*isWrite=*/false, /*localityHint=*/2,
                                 /*isDataCache=*/true);
    }
}

/// The indices of a rows-in-lanes register tile: input rows t .. t + r and
/// the nt tiles of V weight rows from row n (a multiple of V).
std::pair<SmallVector<Value>, SmallVector<Value>>
laneTileIndices(blockc::KernelToolkit &q, Value t, Value n, int64_t v,
                int64_t r, int64_t nt) {
  SmallVector<Value> rows, tiles;
  for (int64_t i = 0; i < r; ++i)
    rows.push_back(q.add(t, q.idx(i)));
  Value tile0 = arith::DivUIOp::create(q.b, q.loc, n, q.idx(v));
  for (int64_t u = 0; u < nt; ++u)
    tiles.push_back(q.add(tile0, q.idx(u)));
  return {rows, tiles};
}

/// The end of a rows-in-lanes tile: out[bIdx, rows[i], n + V u + l -
/// nOffset] = accs[i * nt + u][l] (+ bias[n + V u + l]) for the nt = accs /
/// rows tiles of V lanes, masked past the output's width.
Value storeLaneTiles(blockc::KernelToolkit &q, Value out, ArrayRef<Value> accs,
                     Value bIdx, ArrayRef<Value> rows, Value n, Value nOffset,
                     Value bias) {
  OpBuilder &b = q.b;
  Location loc = q.loc;
  int64_t r = rows.size(), nt = accs.size() / r;
  auto f32v = cast<VectorType>(accs.front().getType());
  int64_t v = f32v.getNumElements();
  for (int64_t u = 0; u < nt; ++u) {
    Value col = q.add(n, q.idx(v * u));
    Value biasV;
    if (bias)
      biasV =
          vector::TransferReadOp::create(b, loc, f32v, bias, ValueRange{col},
                                         q.f32(0.0), ArrayRef<bool>{false});
    for (int64_t i = 0; i < r; ++i) {
      Value sum = accs[i * nt + u];
      if (biasV)
        sum = arith::AddFOp::create(b, loc, sum, biasV);
      out = vector::TransferWriteOp::create(
                b, loc, sum, out,
                ValueRange{bIdx, rows[i],
                           arith::SubIOp::create(b, loc, col, nOffset)},
                ArrayRef<bool>{false})
                .getResult();
    }
  }
  return out;
}

/// The end of a quantised kernel's r x c tile: out[bIdx, rows[i], cols[j] -
/// nOffset] = the lane sum of accs[i * c + j], times `rowScale(cols[j])`
/// when given (an int8 weight's row scale), plus bias[cols[j]] when there
/// is a bias.
Value storeTileSums(blockc::KernelToolkit &q, Value out, ArrayRef<Value> accs,
                    Value bIdx, ArrayRef<Value> rows, ArrayRef<Value> cols,
                    Value nOffset, Value bias,
                    function_ref<Value(Value)> rowScale) {
  OpBuilder &b = q.b;
  Location loc = q.loc;
  int64_t c = cols.size();
  for (auto [i, row] : llvm::enumerate(rows))
    for (auto [j, n] : llvm::enumerate(cols)) {
      Value sum = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::ADD, accs[i * c + j]);
      if (rowScale)
        sum = arith::MulFOp::create(b, loc, sum, rowScale(n));
      if (bias)
        sum = arith::AddFOp::create(b, loc, sum,
                                    tensor::ExtractOp::create(b, loc, bias, n));
      out = tensor::InsertOp::create(
          b, loc, sum, out,
          ValueRange{bIdx, row, arith::SubIOp::create(b, loc, n, nOffset)});
    }
  return out;
}

struct Kernel {
  blockc::KernelToolkit &q;
  Value x, p, bias; // [B, T, K] f32, [N, words] i32, [N] f32 or null
  codegen::QuantizedWeightAttr layout;
  int64_t v;      // f32 lanes
  Value pBuf;     // P as a memref (read-only: software prefetch), or null
  int64_t blockN; // output columns per work item (quantized_tiles)
  int64_t prefetchTiles; // weight-row tiles ahead (quantized_tiles)
  /// int4 on vdpbf16ps (linear_tiles bf16_dot): the bf16 tensor that x
  /// widens, or null.
  Value x16 = {};
  /// Rows in lanes with 8 lanes (AVX2): the input as that kernel reads it
  /// (buildLaneInput) and its groups' sums times -8 (int8: times -128).
  Value xLanes = {}, xGroupSums = {};

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
    auto [row, col] = WordAddress{q, layout}.value(n, word);
    Value words = vector::TransferReadOp::create(
        b(), loc(), VectorType::get({v / 4}, b().getI32Type()), p,
        ValueRange{row, col}, q.i32(0), ArrayRef<bool>{true});
    return vector::BitCastOp::create(
        b(), loc(), VectorType::get({v}, b().getI8Type()), words);
  }
  Value toF32(Value bytes) {
    Value wide = arith::ExtSIOp::create(
        b(), loc(), VectorType::get({v}, b().getI32Type()), bytes);
    return arith::SIToFPOp::create(
        b(), loc(), VectorType::get({v}, b().getF32Type()), wide);
  }
  /// A vector of V copies of an f32 or i32 constant.
  Value splatF32(double value) {
    return arith::ConstantOp::create(
        b(), loc(),
        DenseElementsAttr::get(VectorType::get({v}, b().getF32Type()),
                               static_cast<float>(value)));
  }
  Value splatI32(int64_t value) {
    VectorType type = VectorType::get({v}, b().getI32Type());
    return arith::ConstantOp::create(
        b(), loc(), DenseElementsAttr::get(type, b().getI32IntegerAttr(value)));
  }
  /// The unsigned int4 values u = q + 8 of the V bytes of row n at
  /// `byteIdx`, as i32 vectors: {low nibbles, high nibbles}, from one read.
  std::pair<Value, Value> nibbles(Value n, Value byteIdx) {
    Value u = arith::ExtUIOp::create(b(), loc(),
                                     VectorType::get({v}, b().getI32Type()),
                                     readBytes(n, byteIdx));
    return {arith::AndIOp::create(b(), loc(), u, splatI32(0x0F)),
            arith::ShRUIOp::create(b(), loc(), u, splatI32(4))};
  }
  Value i32ToF32(Value i) {
    return arith::SIToFPOp::create(b(), loc(),
                                   VectorType::get({v}, b().getF32Type()), i);
  }
  /// Decode streams rows of a few KiB (2.5 KiB of words per 4096-k row at
  /// int4), too short for the hardware prefetchers to run ahead of: each
  /// step prefetches (into L2) word `word` of the rows `ahead` rows past
  /// `cols`, i.e. a later tile's rows at the same place (clamped to the
  /// last row). Measured on the 7B int4 block (Xeon f6m167, 1 thread, one
  /// token): 22 ms without, 16-18 ms one tile ahead, 13.6-14.4 ms two
  /// (blockc-cpu-select-tiles' 2).
  void prefetchAhead(ArrayRef<Value> cols, int64_t ahead, Value word) {
    if (!pBuf || ahead == 0)
      return;
    prefetchRows(q, pBuf, layout, cols, ahead, word);
  }
  /// table[index & 15] per lane of 16 (AVX-512 vpermps).
  Value lookup(Value table, Value index) {
    return intrinsic(table.getType(), "llvm.x86.avx512.permvar.sf.512",
                     ValueRange{table, index});
  }
  /// `name`(operands) for a pure x86 intrinsic of result type `type`.
  Value intrinsic(Type type, StringRef name, ValueRange operands) {
    return callIntrinsic(b(), loc(), type, name, operands);
  }
  /// A constant vector<32 x i16> whose element i is `f(i)`.
  Value words(function_ref<int64_t(int64_t)> f) {
    VectorType type = VectorType::get({2 * v}, b().getI16Type());
    SmallVector<Attribute> values;
    for (int64_t i = 0; i < 2 * v; ++i)
      values.push_back(b().getI16IntegerAttr(f(i)));
    return arith::ConstantOp::create(b(), loc(),
                                     DenseElementsAttr::get(type, values));
  }
  /// The 32 int4 values q of a chunk of row n as exact bf16 k pairs: pair
  /// l holds (k = l, k = 16 + l) of the chunk, i.e. the low and the high
  /// nibble of byte l. Per 16 bytes: one zero-extension to 32-bit lanes,
  /// one vpmaddwd (b * 0x1001 puts the high nibble at bit 16), one vpermw
  /// through a table of the bf16 values of q = u - 8 (32 entries: vpermw
  /// reads 5 index bits, so bit 4 repeats the table).
  Value bf16Pairs(Value n, Value chunkByte, Value table) {
    VectorType i16v = VectorType::get({2 * v}, b().getI16Type());
    Value u = arith::ExtUIOp::create(b(), loc(),
                                     VectorType::get({v}, b().getI32Type()),
                                     readBytes(n, chunkByte));
    Value spread = intrinsic(
        VectorType::get({v}, b().getI32Type()), "llvm.x86.avx512.pmaddw.d.512",
        ValueRange{vector::BitCastOp::create(b(), loc(), i16v, u),
                   words([](int64_t i) { return i % 2 ? 0 : 0x1001; })});
    Value index = vector::BitCastOp::create(b(), loc(), i16v, spread);
    Value qs = intrinsic(i16v, "llvm.x86.avx512.permvar.hi.512",
                         ValueRange{table, index});
    return vector::BitCastOp::create(
        b(), loc(), VectorType::get({2 * v}, b().getBF16Type()), qs);
  }
  /// x16[bIdx, t, kk : kk + 32] as the k pairs of bf16Pairs: (kk + l,
  /// kk + 16 + l).
  Value xPairs(Value bIdx, Value t, Value kk) {
    VectorType type = VectorType::get({2 * v}, b().getBF16Type());
    Value pad = arith::ConstantOp::create(b(), loc(),
                                          b().getZeroAttr(b().getBF16Type()));
    Value row = vector::TransferReadOp::create(b(), loc(), type, x16,
                                               ValueRange{bIdx, t, kk}, pad,
                                               ArrayRef<bool>{true});
    SmallVector<int64_t> mask;
    for (int64_t l = 0; l < v; ++l) {
      mask.push_back(l);
      mask.push_back(v + l);
    }
    return vector::ShuffleOp::create(b(), loc(), row, row, mask);
  }

  /// The f32 scale of group `grp` of row n.
  Value scale(Value n, Value grp) {
    auto [row, col] = WordAddress{q, layout}.scale(n, grp);
    Value bits = tensor::ExtractOp::create(b(), loc(), p, ValueRange{row, col});
    return arith::BitcastOp::create(b(), loc(), b().getF32Type(), bits);
  }

  /// The parts of a step of the panel fill: int8 one (k = kk .. kk + V);
  /// int4 2 x 16 / V per chunk (k = kk + o and kk + 16 + o, o < 16 step V).
  int64_t numParts() const { return layout.getBits() == 8 ? 1 : kChunk / v; }
  /// The k offset of `part` from the step's start.
  int64_t partOffset(int64_t part) const {
    if (layout.getBits() == 8)
      return 0;
    return (part % 2) * (kChunk / 2) + (part / 2) * v;
  }
  /// Part `part` of row n widened: W'[n, k0 + kk + partOffset(part) : + V].
  Value widenedPart(Value n, Value k0, Value kk, int64_t part) {
    VectorType f32v = VectorType::get({v}, b().getF32Type());
    Value kAbs = q.add(k0, kk);
    if (layout.getBits() == 8) {
      Value s =
          vector::BroadcastOp::create(b(), loc(), f32v, scale(n, q.idx(0)));
      return arith::MulFOp::create(b(), loc(), toF32(readBytes(n, kAbs)), s);
    }
    Value s = vector::BroadcastOp::create(
        b(), loc(), f32v,
        scale(n, arith::DivUIOp::create(b(), loc(), kAbs,
                                        q.idx(layout.getGroupSize()))));
    Value chunkByte = arith::DivUIOp::create(b(), loc(), kAbs, q.idx(2));
    auto [low, high] = nibbles(n, q.add(chunkByte, q.idx((part / 2) * v)));
    Value u = part % 2 == 1 ? high : low;
    Value qv = arith::SubIOp::create(b(), loc(), u, splatI32(8));
    return arith::MulFOp::create(b(), loc(), i32ToF32(qv), s);
  }

  /// Rows in lanes (row_lanes): the constant table of q = u - 8, f32.
  Value laneTable() {
    SmallVector<Attribute> values;
    for (int64_t u = 0; u < 16; ++u)
      values.push_back(b().getF32FloatAttr(static_cast<float>(u - 8)));
    return arith::ConstantOp::create(
        b(), loc(),
        DenseElementsAttr::get(VectorType::get({v}, b().getF32Type()), values));
  }
  /// Rows in lanes: the 16 words at word `col` of P row `tile` (as i32 or,
  /// scales, as f32 lanes).
  Value laneWords(Value tile, Value col, bool asF32) {
    Value words = vector::TransferReadOp::create(
        b(), loc(), VectorType::get({v}, b().getI32Type()), p,
        ValueRange{tile, col}, q.i32(0), ArrayRef<bool>{true});
    if (!asF32)
      return words;
    return vector::BitCastOp::create(
        b(), loc(), VectorType::get({v}, b().getF32Type()), words);
  }
  /// Rows in lanes: the values q of nibble j of `words` (V rows' k = 8c + j
  /// of their run c), looked up in `table` (16 lanes: vpermps reads the low
  /// 4 bits), or (8 lanes, no table) shifted, masked, less 8 and converted.
  Value laneValues(Value table, Value words, int64_t j) {
    Value index =
        j == 0 ? words
               : arith::ShRUIOp::create(b(), loc(), words, splatI32(4 * j))
                     .getResult();
    if (v == 16)
      return lookup(table, index);
    Value u = arith::AndIOp::create(b(), loc(), index, splatI32(0x0F));
    return i32ToF32(arith::SubIOp::create(b(), loc(), u, splatI32(8)));
  }
  /// Rows in lanes, 8 lanes: value j of `words` as u 2^(b j) (b = bits; u
  /// = q + 8 for int4, q + 128 for int8, whose words have been flipped by
  /// offsetWords), one mask (the top value: a shift, whose masked value
  /// would be negative) and one conversion, exact (u 2^(b j) < 2^24);
  /// xLanes holds x[k] 2^(-b j) to match.
  Value laneScaledValue(Value words, int64_t j) {
    int64_t bits = layout.getBits(), perWord = 32 / bits;
    Value u =
        j == perWord - 1
            ? arith::ShRUIOp::create(b(), loc(), words, splatI32(32 - bits))
                  .getResult()
            : arith::AndIOp::create(
                  b(), loc(), words,
                  splatI32(((int64_t{1} << bits) - 1) << (bits * j)))
                  .getResult();
    return i32ToF32(u);
  }
  /// Rows in lanes, int8: the words' bytes q as u = q + 128 (each byte's
  /// sign bit flipped: one xor), for laneScaledValue.
  Value offsetWords(Value words) {
    return arith::XOrIOp::create(b(), loc(), words,
                                 splatI32(static_cast<int32_t>(0x80808080u)));
  }
  /// Rows in lanes, int8 prefill: byte j of `words` as q, sign-extended
  /// (two shifts; the top byte one) and converted.
  Value laneBytes(Value words, int64_t j) {
    Value top =
        j == 3 ? words
               : arith::ShLIOp::create(b(), loc(), words, splatI32(24 - 8 * j))
                     .getResult();
    return i32ToF32(arith::ShRSIOp::create(b(), loc(), top, splatI32(24)));
  }
  /// Rows in lanes: the words of one row per group (int8: the row's value
  /// words, its one group), and the k of a word (8 nibbles or 4 bytes).
  int64_t laneGroupWords() const {
    return layout.getBits() == 8 ? layout.getValueWords()
                                 : layout.getGroupSize() / 8;
  }
  int64_t lanePerWord() const { return 32 / layout.getBits(); }

  /// Rows in lanes, prefill: buf[k, j] = W'[nc + j, k0 + k] for k < lenV
  /// (a multiple of 8) and j < block_n: per run of 8 k (int8: 4) and tile
  /// of V rows one read of V words, the run's values q (lookups, or int8's
  /// sign-extended bytes) times the V rows' scales, each stored as it is
  /// (the lanes are the panel's columns: no transpose). Tiles past the
  /// last one repeat it (their columns are never written).
  void fillPanelLanes(Value buf, Value nc, Value k0, Value lenV) {
    int64_t g = layout.getGroupSize(), gw = laneGroupWords();
    int64_t perWord = lanePerWord();
    int64_t blockWords = v * (gw + 1);
    Value lastTile = q.idx(layout.getPreparedShape()[0] - 1);
    Value table = v == 16 ? laneTable() : Value();
    for (int64_t j0 = 0; j0 < blockN; j0 += v) {
      Value tile = arith::MinUIOp::create(
          b(), loc(),
          arith::DivUIOp::create(b(), loc(), q.add(nc, q.idx(j0)), q.idx(v)),
          lastTile);
      q.loop(q.idx(0), lenV, perWord, {}, [&](Value kk, ValueRange) {
        Value kAbs = q.add(k0, kk);
        Value grp = arith::DivUIOp::create(b(), loc(), kAbs, q.idx(g));
        Value base = q.mul(grp, q.idx(blockWords));
        Value run = arith::DivUIOp::create(
            b(), loc(), arith::RemUIOp::create(b(), loc(), kAbs, q.idx(g)),
            q.idx(perWord));
        Value words = laneWords(tile, q.add(base, q.mul(run, q.idx(v))),
                                /*asF32=*/false);
        Value s = laneWords(tile, q.add(base, q.idx(v * gw)), /*asF32=*/true);
        for (int64_t j = 0; j < perWord; ++j) {
          Value values = layout.getBits() == 8 ? laneBytes(words, j)
                                               : laneValues(table, words, j);
          vector::StoreOp::create(
              b(), loc(), arith::MulFOp::create(b(), loc(), values, s), buf,
              ValueRange{q.add(kk, q.idx(j)), q.idx(j0)});
        }
        return SmallVector<Value>();
      });
    }
  }

  /// Rows in lanes, decode: out[bIdx, t + i, n + V u + l - nOffset] for
  /// i < r, u < nt tiles of V rows from row n (a multiple of V), l < V
  /// (masked past the output's width). Per group and tile, per run of 8 k
  /// (int8: 4): one read of V words, then per k the value's vector and one
  /// FMA per input row with x[k] broadcast into the group's sums (two per
  /// tile and row: k even and odd), which the V rows' scales multiply once
  /// per group. The values: with 16 lanes one shift and one lookup of q in
  /// the constant table; with 8 (AVX2: vpermps has 8 entries) one mask and
  /// one conversion of u 2^(b j) (u = q + 8 for int4, nibble j in place, b
  /// = 4; u = q + 128 for int8, byte j, b = 8, after one xor per word;
  /// laneScaledValue) against x[k] 2^(-b j) (xLanes), the group's sums
  /// starting from -8 (int8: -128) times the group's sum of x (xGroupSums)
  /// for the offset of u. int8 has one group, the whole row. The products
  /// x q are exact, so this differs from the reference's sum of x (q s)
  /// only in the order of the f32 roundings (and, with 8 lanes, in the sum
  /// of x that the offset cancels, as the interleaved tables do).
  Value laneTile(Value out, Value bIdx, Value t, Value n, Value nOffset,
                 int64_t r, int64_t nt) {
    int64_t k = layout.getCols(), g = layout.getGroupSize();
    int64_t gw = laneGroupWords(), perWord = lanePerWord();
    bool int8 = layout.getBits() == 8;
    int64_t blockWords = v * (gw + 1);
    int64_t pWords = layout.getPreparedShape()[1];
    VectorType f32v = VectorType::get({v}, b().getF32Type());
    Value zero = splatF32(0.0);
    // 8 lanes: x[k] 16^-j against the nibbles in place (xLanes); 16: tables.
    bool scaled = static_cast<bool>(xLanes);
    Value table = scaled ? Value() : laneTable();
    SmallVector<Value> rows, tiles;
    std::tie(rows, tiles) = laneTileIndices(q, t, n, v, r, nt);
    // x[k] (8 lanes: x[k] 16^-(k % 8)) broadcast.
    auto xAt = [&](Value row, Value kAbs) -> Value {
      return vector::BroadcastOp::create(
          b(), loc(), f32v,
          tensor::ExtractOp::create(b(), loc(), scaled ? xLanes : x,
                                    ValueRange{bIdx, row, kAbs}));
    };
    // Runs c0 .. c0 + runs of the group at word `base` into `sums`.
    auto runsInto = [&](Value kg, Value base, Value c0, int64_t runs,
                        SmallVector<Value>(&sums)[2]) {
      for (int64_t c = 0; c < runs; ++c) {
        Value run = q.add(c0, q.idx(c));
        SmallVector<Value> words;
        for (int64_t u = 0; u < nt; ++u) {
          Value w = laneWords(tiles[u], q.add(base, q.mul(run, q.idx(v))),
                              /*asF32=*/false);
          words.push_back(int8 ? offsetWords(w) : w);
        }
        for (int64_t j = 0; j < perWord; ++j) {
          Value kAbs = q.add(q.add(kg, q.mul(run, q.idx(perWord))), q.idx(j));
          SmallVector<Value> xs;
          for (int64_t i = 0; i < r; ++i)
            xs.push_back(xAt(rows[i], kAbs));
          for (int64_t u = 0; u < nt; ++u) {
            Value qv = scaled ? laneScaledValue(words[u], j)
                              : laneValues(table, words[u], j);
            for (int64_t i = 0; i < r; ++i) {
              Value &sum = sums[j % 2][i * nt + u];
              sum = vector::FMAOp::create(b(), loc(), xs[i], qv, sum);
            }
          }
        }
      }
    };
    // Runs unrolled per group up to 32 k (4 of int4's 8 k, 8 of int8's 4);
    // larger groups loop over their 32 k.
    int64_t unrolled = std::min<int64_t>(gw, 32 / perWord);
    SmallVector<Value> accs(r * nt, zero);
    accs = q.loop(q.idx(0), q.idx(k), g, accs, [&](Value kg, ValueRange it) {
      SmallVector<Value> acc(it);
      Value grp = arith::DivUIOp::create(b(), loc(), kg, q.idx(g));
      SmallVector<Value> sums[2] = {SmallVector<Value>(r * nt, zero),
                                    SmallVector<Value>(r * nt, zero)};
      if (scaled)
        for (int64_t i = 0; i < r; ++i) {
          Value offset = vector::BroadcastOp::create(
              b(), loc(), f32v,
              tensor::ExtractOp::create(b(), loc(), xGroupSums,
                                        ValueRange{bIdx, rows[i], grp}));
          for (int64_t u = 0; u < nt; ++u)
            sums[0][i * nt + u] = offset;
        }
      Value base = q.mul(grp, q.idx(blockWords));
      // Software prefetch (into L2) of each tile's words 2 x prefetch_tiles
      // groups further, a line at a time (clamped to the tile's last word);
      // int8's one group: 2 x prefetch_tiles iterations of 32 k further, in
      // the loop below.
      if (pBuf && prefetchTiles > 0 && !int8)
        prefetchLaneTiles(q, pBuf, tiles, base, prefetchTiles * 2 * blockWords,
                          blockWords, pWords);
      if (gw == unrolled) {
        runsInto(kg, base, q.idx(0), gw, sums);
      } else {
        SmallVector<Value> init(sums[0]);
        init.append(sums[1]);
        SmallVector<Value> res = q.loop(
            q.idx(0), q.idx(gw), unrolled, init, [&](Value c0, ValueRange s) {
              SmallVector<Value> part[2] = {
                  SmallVector<Value>(s.take_front(r * nt)),
                  SmallVector<Value>(s.drop_front(r * nt))};
              if (pBuf && prefetchTiles > 0 && int8)
                prefetchLaneTiles(
                    q, pBuf, tiles, q.add(base, q.mul(c0, q.idx(v))),
                    prefetchTiles * 2 * unrolled * v, unrolled * v, pWords);
              runsInto(kg, base, c0, unrolled, part);
              SmallVector<Value> next(part[0]);
              next.append(part[1]);
              return next;
            });
        sums[0].assign(res.begin(), res.begin() + r * nt);
        sums[1].assign(res.begin() + r * nt, res.end());
      }
      for (int64_t u = 0; u < nt; ++u) {
        Value s = laneWords(tiles[u], q.add(base, q.idx(v * gw)),
                            /*asF32=*/true);
        for (int64_t i = 0; i < r; ++i) {
          int64_t e = i * nt + u;
          acc[e] = vector::FMAOp::create(
              b(), loc(),
              arith::AddFOp::create(b(), loc(), sums[0][e], sums[1][e]), s,
              acc[e]);
        }
      }
      return acc;
    });
    return storeLaneTiles(q, out, accs, bIdx, rows, n, nOffset, bias);
  }

  /// buf[k, j] = W'[nc + j, k0 + k] for k < lenV (a multiple of V; of 32
  /// for int4) and j < 32: V rows widened, transposed in registers (V x V
  /// blocks, vector.transpose) and stored along j. Rows past ncEnd repeat
  /// the last one (their columns are never written out).
  void fillPanelT(Value buf, Value rows, Value nc, Value ncEnd, Value k0,
                  Value lenV) {
    Type f32 = b().getF32Type();
    VectorType block = VectorType::get({v, v}, f32);
    Value last = arith::SubIOp::create(b(), loc(), ncEnd, q.idx(1));
    int64_t step = layout.getBits() == 8 ? v : kChunk;
    for (int64_t j0 = 0; j0 < blockN; j0 += v) {
      q.loop(q.idx(0), lenV, step, {}, [&](Value kk, ValueRange) {
        // int4: the rows' parts go through `rows` ([V, 32], row-major)
        // first, so that only one row's bytes and scale are live at a
        // time; int8 (one part) builds the block directly.
        VectorType f32v = VectorType::get({v}, f32);
        auto rowOf = [&](int64_t jj) -> Value {
          return arith::MinUIOp::create(b(), loc(), q.add(nc, q.idx(j0 + jj)),
                                        last);
        };
        if (numParts() > 1)
          for (int64_t jj = 0; jj < v; ++jj) {
            Value n = rowOf(jj);
            for (int64_t part = 0; part < numParts(); ++part)
              vector::StoreOp::create(
                  b(), loc(), widenedPart(n, k0, kk, part), rows,
                  ValueRange{q.idx(jj), q.idx(partOffset(part))});
          }
        for (int64_t part = 0; part < numParts(); ++part) {
          Value m = arith::ConstantOp::create(
              b(), loc(), DenseElementsAttr::get(block, 0.0f));
          for (int64_t jj = 0; jj < v; ++jj) {
            Value row =
                numParts() > 1
                    ? vector::LoadOp::create(
                          b(), loc(), f32v, rows,
                          ValueRange{q.idx(jj), q.idx(partOffset(part))})
                          .getResult()
                    : widenedPart(rowOf(jj), k0, kk, part);
            m = vector::InsertOp::create(b(), loc(), row, m, jj);
          }
          Value t = vector::TransposeOp::create(b(), loc(), m, {1, 0});
          int64_t off = partOffset(part);
          for (int64_t r = 0; r < v; ++r)
            vector::StoreOp::create(
                b(), loc(), vector::ExtractOp::create(b(), loc(), t, r), buf,
                ValueRange{q.add(kk, q.idx(off + r)), q.idx(j0)});
        }
        return SmallVector<Value>();
      });
    }
  }

  /// out[bIdx, t + i, j0 + j] += sum_{k < len} x[bIdx, t + i, k0 + k]
  /// buf[k, j0 + j] for i < r, j < 2V (masked past the block's width): an
  /// outer-product micro-kernel, r x 2 accumulators.
  Value outerTile(Value out, Value buf, Value bIdx, Value t, int64_t j0,
                  Value k0, Value len, int64_t r) {
    VectorType f32v = VectorType::get({v}, b().getF32Type());
    Value zero = splatF32(0.0);
    SmallVector<Value> accs(2 * r, zero), rowsIdx;
    for (int64_t i = 0; i < r; ++i)
      rowsIdx.push_back(q.add(t, q.idx(i)));
    accs = q.loop(q.idx(0), len, 1, accs, [&](Value kk, ValueRange it) {
      SmallVector<Value> acc(it);
      Value w0 = vector::LoadOp::create(b(), loc(), f32v, buf,
                                        ValueRange{kk, q.idx(j0)});
      Value w1 = vector::LoadOp::create(b(), loc(), f32v, buf,
                                        ValueRange{kk, q.idx(j0 + v)});
      for (int64_t i = 0; i < r; ++i) {
        Value xs = tensor::ExtractOp::create(
            b(), loc(), x, ValueRange{bIdx, rowsIdx[i], q.add(k0, kk)});
        Value xb = vector::BroadcastOp::create(b(), loc(), f32v, xs);
        acc[2 * i] = vector::FMAOp::create(b(), loc(), xb, w0, acc[2 * i]);
        acc[2 * i + 1] =
            vector::FMAOp::create(b(), loc(), xb, w1, acc[2 * i + 1]);
      }
      return acc;
    });
    for (int64_t i = 0; i < r; ++i)
      for (int64_t h = 0; h < 2; ++h) {
        SmallVector<Value> at = {bIdx, rowsIdx[i], q.idx(j0 + h * v)};
        Value old = vector::TransferReadOp::create(
            b(), loc(), f32v, out, at, q.f32(0.0), ArrayRef<bool>{false});
        Value sum = arith::AddFOp::create(b(), loc(), old, accs[2 * i + h]);
        out = vector::TransferWriteOp::create(b(), loc(), sum, out, at,
                                              ArrayRef<bool>{false})
                  .getResult();
      }
    return out;
  }

  /// out[bIdx, t + i, n + j - nOffset] for i < r, j < c: sum_k x W'.
  Value tile(Value out, Value bIdx, Value t, Value n, Value nOffset, int64_t r,
             int64_t c) {
    int64_t k = layout.getCols();
    Type f32v = VectorType::get({v}, b().getF32Type());
    Value zero = splatF32(0.0);
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
        prefetchAhead(cols, prefetchTiles * c,
                      arith::DivUIOp::create(b(), loc(), kk, q.idx(4)));
        for (int64_t j = 0; j < c; ++j)
          ws.push_back(toF32(readBytes(cols[j], kk)));
        fmaAll(xs, ws, acc);
        return acc;
      };
      accs =
          q.loop(q.idx(0), q.idx(kMain), v, accs,
                 [&](Value kk, ValueRange it) { return step(kk, it, true); });
      if (kMain < k)
        accs = step(q.idx(kMain), accs, false);
    } else if (x16) {
      // int4 in a bf16 block (the input holds bf16 values) on AVX512_BF16:
      // per chunk of 32 k, the values q as exact bf16 pairs (bf16Pairs)
      // dot the x pairs on vdpbf16ps into a group sum (f32), and the
      // group's scale multiplies it once per group and column. The
      // products x q are exact, so this differs from the reference's
      // sum of x (q s) only in the order of the f32 roundings.
      int64_t g = layout.getGroupSize();
      Value table = words([](int64_t i) {
        return static_cast<int64_t>(
            llvm::bit_cast<uint32_t>(static_cast<float>(i % 16 - 8)) >> 16);
      });
      accs = q.loop(q.idx(0), q.idx(k), g, accs, [&](Value kg, ValueRange it) {
        SmallVector<Value> acc(it), sums(r * c, zero);
        for (int64_t ch = 0; ch < g; ch += kChunk) {
          Value kk = q.add(kg, q.idx(ch));
          Value chunkByte = arith::DivUIOp::create(b(), loc(), kk, q.idx(2));
          SmallVector<Value> xs;
          for (int64_t i = 0; i < r; ++i)
            xs.push_back(xPairs(bIdx, rows[i], kk));
          prefetchAhead(
              cols, prefetchTiles * c,
              arith::DivUIOp::create(b(), loc(), chunkByte, q.idx(4)));
          for (int64_t j = 0; j < c; ++j) {
            Value w = bf16Pairs(cols[j], chunkByte, table);
            for (int64_t i = 0; i < r; ++i)
              sums[i * c + j] = x86vector::DotBF16Op::create(
                  b(), loc(), f32v, sums[i * c + j], xs[i], w);
          }
        }
        Value grp = arith::DivUIOp::create(b(), loc(), kg, q.idx(g));
        for (int64_t j = 0; j < c; ++j) {
          Value sj = vector::BroadcastOp::create(b(), loc(), f32v,
                                                 scale(cols[j], grp));
          for (int64_t i = 0; i < r; ++i)
            acc[i * c + j] = vector::FMAOp::create(b(), loc(), sums[i * c + j],
                                                   sj, acc[i * c + j]);
        }
        return acc;
      });
    } else if (v == 16) {
      // AVX-512: per group and column, a table of the 16 dequantised
      // values (u - 8) s (one multiply), which vpermps indexes with each
      // nibble: per 16 bytes one zero-extension, a shift, two table
      // lookups and two FMAs into the accumulators (the weights exactly as
      // the reference dequantises them, q s rounded to f32).
      int64_t g = layout.getGroupSize();
      SmallVector<Attribute> values;
      for (int64_t u = 0; u < 16; ++u)
        values.push_back(b().getF32FloatAttr(static_cast<float>(u - 8)));
      Value base = arith::ConstantOp::create(
          b(), loc(), DenseElementsAttr::get(cast<ShapedType>(f32v), values));
      VectorType lanes = VectorType::get({v}, b().getI32Type());
      accs = q.loop(q.idx(0), q.idx(k), g, accs, [&](Value kg, ValueRange it) {
        SmallVector<Value> acc(it), tables;
        Value grp = arith::DivUIOp::create(b(), loc(), kg, q.idx(g));
        for (int64_t j = 0; j < c; ++j)
          tables.push_back(arith::MulFOp::create(
              b(), loc(), base,
              vector::BroadcastOp::create(b(), loc(), f32v,
                                          scale(cols[j], grp))));
        for (int64_t ch = 0; ch < g; ch += kChunk) {
          Value kk = q.add(kg, q.idx(ch));
          Value chunkByte = arith::DivUIOp::create(b(), loc(), kk, q.idx(2));
          SmallVector<Value> xLo, xHi, lo, hi;
          for (int64_t i = 0; i < r; ++i) {
            xLo.push_back(readX(bIdx, rows[i], kk, true));
            xHi.push_back(
                readX(bIdx, rows[i], q.add(kk, q.idx(kChunk / 2)), true));
          }
          prefetchAhead(
              cols, prefetchTiles * c,
              arith::DivUIOp::create(b(), loc(), chunkByte, q.idx(4)));
          for (int64_t j = 0; j < c; ++j) {
            Value u = arith::ExtUIOp::create(b(), loc(), lanes,
                                             readBytes(cols[j], chunkByte));
            // vpermps reads the low 4 bits of each lane's index.
            lo.push_back(lookup(tables[j], u));
            hi.push_back(lookup(
                tables[j], arith::ShRUIOp::create(b(), loc(), u, splatI32(4))));
          }
          fmaAll(xLo, lo, acc);
          fmaAll(xHi, hi, acc);
        }
        return acc;
      });
    } else {
      // Groups of G k, G / 32 chunks each: V bytes at byte offset o of a
      // chunk's 16 hold the nibbles u of k = o .. o + V - 1 (low) and
      // 16 + o .. (high), q = u - 8. Per group the kernel sums x u
      // (unsigned nibbles, widened with one zero-extension per V bytes)
      // and x, then adds (sum x u - 8 sum x) s: one scale per group and
      // column instead of one multiply per weight vector. (The difference
      // cancels: its f32 rounding error grows with 8 sum |x| rather than
      // sum |x q|, well within the reference tolerance for blocks.)
      int64_t g = layout.getGroupSize();
      Value minus8 = splatF32(-8.0);
      accs = q.loop(q.idx(0), q.idx(k), g, accs, [&](Value kg, ValueRange it) {
        SmallVector<Value> acc(it);
        SmallVector<Value> gacc(r * c, zero), xs(r, zero);
        for (int64_t ch = 0; ch < g; ch += kChunk) {
          Value kk = q.add(kg, q.idx(ch));
          Value chunkByte = arith::DivUIOp::create(b(), loc(), kk, q.idx(2));
          for (int64_t o = 0; o < kChunk / 2; o += v) {
            SmallVector<Value> xLo, xHi, lo, hi;
            for (int64_t i = 0; i < r; ++i) {
              xLo.push_back(readX(bIdx, rows[i], q.add(kk, q.idx(o)), true));
              xHi.push_back(
                  readX(bIdx, rows[i], q.add(kk, q.idx(kChunk / 2 + o)), true));
              xs[i] = arith::AddFOp::create(
                  b(), loc(), xs[i],
                  arith::AddFOp::create(b(), loc(), xLo[i], xHi[i]));
            }
            for (int64_t j = 0; j < c; ++j) {
              Value byteIdx = q.add(chunkByte, q.idx(o));
              auto [low, high] = nibbles(cols[j], byteIdx);
              lo.push_back(i32ToF32(low));
              hi.push_back(i32ToF32(high));
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
    return storeTileSums(q, out, accs, bIdx, rows, cols, nOffset, bias,
                         layout.getBits() == 8
                             ? [&](Value n) { return scale(n, q.idx(0)); }
                             : function_ref<Value(Value)>());
  }
};

/// Whether weight-only `op` (int4, `bits`) dots bf16 pairs on vdpbf16ps:
/// marked bf16_dot, on a target with AVX512_BF16 (`avx512Bf16`) and 16
/// lanes, its input the widening of a bf16 tensor.
bool bf16Pairs(LinearOp op, bool avx512Bf16, int64_t v, int64_t bits) {
  auto linearTiles = op->getAttrOfType<codegen::LinearTilesAttr>(
      CodegenDialect::kLinearTilesAttrName);
  auto widened = op.getInput().getDefiningOp<arith::ExtFOp>();
  return linearTiles && linearTiles.getBf16Dot() && avx512Bf16 && v == 16 &&
         bits == 4 && widened && getElementTypeOrSelf(widened.getIn()).isBF16();
}

/// The x86 intrinsics of the integer kernels: pure arithmetic on vectors.
bool isPureX86Intrinsic(StringRef name) {
  return llvm::is_contained(
      {"llvm.x86.avx2.pmadd.ub.sw", "llvm.x86.avx2.pmadd.wd",
       "llvm.x86.avx2.psign.b", "llvm.x86.avx512.vpdpbusd.256",
       "llvm.x86.avx512.permvar.sf.512", "llvm.x86.avx512.permvar.hi.512",
       "llvm.x86.avx512.pmaddw.d.512"},
      name);
}

/// Memory effects of `llvm.call_intrinsic`, which declares none (and which
/// the ownership-based buffer deallocation therefore rejects inside a kernel
/// built on tensors): none for the pure x86 arithmetic above, a read and a
/// write of any memory for every other intrinsic.
struct CallIntrinsicEffects
    : MemoryEffectOpInterface::ExternalModel<CallIntrinsicEffects,
                                             LLVM::CallIntrinsicOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    if (isPureX86Intrinsic(cast<LLVM::CallIntrinsicOp>(op).getIntrin()))
      return;
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

/// activations = int8: the input quantised per row and run of 32 columns,
/// as two tensors built before the kernel: q_x [B, T, K] i8 and the runs'
/// scales s_x = max / 127 [B, T, K / 32] f32. Both with the rules of
/// Codegen/Common/WeightQuant.h, as convert-weight-quant-to-linalg. The
/// scales are divided here, once per run, rather than in the kernels' inner
/// loops, where each register tile divided them again (vdivss: 3 cycles of
/// Zen 3's FP1 pipe each, 6 of the int8 2 x 4 tile's 15 per run of 32 k in
/// llvm-mca).
std::pair<Value, Value> buildQuantizedInput(OpBuilder &b, Location loc,
                                            Value x) {
  constexpr int64_t run = WeightQuantAttr::kActivationRun;
  Value amax = blockc::buildRunAbsMax(b, loc, x, run);
  Value qx = blockc::buildRunwise(
      b, loc, x, amax, run, b.getI8Type(),
      [](OpBuilder &nb, Location nloc, Value v, Value m) -> Value {
        Value s = blockc::buildQuantScale(nb, nloc, m, 127);
        Value lv = blockc::buildQuantLevel(nb, nloc, v, s, 127);
        return arith::FPToSIOp::create(nb, nloc, nb.getI8Type(), lv);
      });
  auto type = cast<RankedTensorType>(amax.getType());
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dynamic.push_back(tensor::DimOp::create(b, loc, amax, i));
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType(), dynamic);
  AffineMap id =
      AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  Value sx =
      linalg::GenericOp::create(
          b, loc, type, ValueRange{amax}, ValueRange{init},
          ArrayRef<AffineMap>{id, id}, parallel,
          [](OpBuilder &nb, Location nloc, ValueRange args) {
            linalg::YieldOp::create(
                nb, nloc,
                ValueRange{blockc::buildQuantScale(nb, nloc, args[0], 127)});
          })
          .getResult(0);
  return {qx, sx};
}

/// activations = int8 on the f32 panels: the quantised input's values
/// q_x s_x, f32 [B, T, K], from the same q_x and s_x as above.
Value buildDequantizedInput(OpBuilder &b, Location loc, Value x) {
  constexpr int64_t run = WeightQuantAttr::kActivationRun;
  Value amax = blockc::buildRunAbsMax(b, loc, x, run);
  return blockc::buildRunwise(
      b, loc, x, amax, run, b.getF32Type(),
      [](OpBuilder &nb, Location nloc, Value v, Value m) -> Value {
        Value s = blockc::buildQuantScale(nb, nloc, m, 127);
        Value lv = blockc::buildQuantLevel(nb, nloc, v, s, 127);
        return arith::MulFOp::create(nb, nloc, lv, s);
      });
}

/// Rows in lanes with 8 lanes (AVX2): the input as that decode kernel reads
/// it, for b-bit values (b = 4 or 8, P = 32 / b per word): x'[..., k] =
/// x[..., k] 2^(-b (k % P)) for k % P < P - 1 and x[..., k] for k % P = P -
/// 1 (the kernel converts value j of a word in place, u 2^(b j), but shifts
/// the top one down), and the groups' sums times -2^(b - 1) (the offset of
/// u = q + 8, or q + 128), c[..., j] = -2^(b - 1) sum_{l < G} x[..., j G +
/// l]; both exact scalings by powers of two (for |x| above 2^-98). Built
/// once per call, before the kernel's parallel loop.
std::pair<Value, Value> buildLaneInput(OpBuilder &b, Location loc, Value x,
                                       int64_t groupSize, int64_t bits) {
  int64_t perWord = 32 / bits;
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < rank; ++i)
    if (type.isDynamicDim(i))
      dynamic.push_back(tensor::DimOp::create(b, loc, x, i));
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), b.getF32Type(), dynamic);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value scaled =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{x}, ValueRange{init},
          ArrayRef<AffineMap>{id, id}, iterators,
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            blockc::KernelToolkit q{nb, nloc};
            Value k = linalg::IndexOp::create(nb, nloc, rank - 1);
            Value j = arith::IndexCastOp::create(
                nb, nloc, nb.getI32Type(),
                arith::RemUIOp::create(nb, nloc, k, q.idx(perWord)));
            // 2^(-b j), 1 for j = P - 1, as its bits: the exponent 127 - b j.
            Value e = arith::SubIOp::create(
                nb, nloc, q.i32(127),
                arith::MulIOp::create(nb, nloc, j, q.i32(bits)));
            Value top = arith::CmpIOp::create(
                nb, nloc, arith::CmpIPredicate::eq, j, q.i32(perWord - 1));
            e = arith::SelectOp::create(nb, nloc, top, q.i32(127), e);
            Value f = arith::BitcastOp::create(
                nb, nloc, nb.getF32Type(),
                arith::ShLIOp::create(nb, nloc, e, q.i32(23)));
            linalg::YieldOp::create(
                nb, nloc,
                ValueRange{arith::MulFOp::create(nb, nloc, args[0], f)});
          })
          .getResult(0);
  float offset = -static_cast<float>(int64_t{1} << (bits - 1));
  Value sums = blockc::buildRunReduction(
      b, loc, x, groupSize,
      [&](OpBuilder &nb, Location nloc, Value r, Value v) {
        Value minusOffset =
            arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(offset));
        return arith::AddFOp::create(
            nb, nloc, r, arith::MulFOp::create(nb, nloc, v, minusOffset));
      });
  return {scaled, sums};
}

/// q_x [B, T, K] as words [B, T, K / 4] i32: word w holds q_x[k(w, i)] in
/// byte i (i < 4), or with `absolute` |q_x[k(w, i)]|.
Value buildQuantizedWords(
    OpBuilder &b, Location loc, Value qx,
    function_ref<Value(blockc::KernelToolkit &, Value, int64_t)> kOf,
    bool absolute) {
  auto type = cast<RankedTensorType>(qx.getType());
  int64_t rank = type.getRank(), k = type.getDimSize(rank - 1);
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < rank; ++i)
    if (type.isDynamicDim(i))
      dynamic.push_back(tensor::DimOp::create(b, loc, qx, i));
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = k / 4;
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getI32Type(), dynamic);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{id}, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange) {
               blockc::KernelToolkit q{nb, nloc};
               SmallVector<Value> at;
               for (int64_t i = 0; i < rank; ++i)
                 at.push_back(linalg::IndexOp::create(nb, nloc, i));
               Value w = at.back();
               Value word = q.i32(0);
               for (int64_t i = 0; i < 4; ++i) {
                 at.back() = kOf(q, w, i);
                 Value byte = tensor::ExtractOp::create(nb, nloc, qx, at);
                 if (absolute) // |q_x| <= 127: a valid i8
                   byte = math::AbsIOp::create(nb, nloc, byte);
                 word = arith::OrIOp::create(
                     nb, nloc, word,
                     arith::ShLIOp::create(nb, nloc,
                                           arith::ExtUIOp::create(
                                               nb, nloc, nb.getI32Type(), byte),
                                           q.i32(8 * i)));
               }
               linalg::YieldOp::create(nb, nloc, ValueRange{word});
             })
      .getResult(0);
}

/// activations = int8 on rows in lanes with 8 lanes (AVX2 without VNNI):
/// q_x as that kernel reads it, built once per call, before the kernel's
/// parallel loop, as two tensors:
/// * int4 weights: words [B, T, K / 4] i32, word 2m + h holding q_x[8m + 2i
///   + h] in byte i (i < 4), the inputs of the nibbles that a row-lanes
///   word keeps in its bytes under the mask 0x0F (h = 0: k even) and after
///   a shift by 4 (h = 1: k odd); and -8 times each run's sum of q_x (f32
///   [B, T, K / 32], exact), the offset of u = q + 8;
/// * int8 weights: words [B, T, K / 4] i32, word m holding q_x[4m + i] in
///   byte i (the k of a row-lanes word's bytes), and the same words of
///   |q_x|, vpmaddubsw's unsigned operand.
std::pair<Value, Value> buildLaneQuantizedInput(OpBuilder &b, Location loc,
                                                Value qx, bool int8) {
  if (int8) {
    auto natural = [](blockc::KernelToolkit &q, Value w, int64_t i) {
      return q.add(q.mul(w, q.idx(4)), q.idx(i));
    };
    return {buildQuantizedWords(b, loc, qx, natural, /*absolute=*/false),
            buildQuantizedWords(b, loc, qx, natural, /*absolute=*/true)};
  }
  Value words = buildQuantizedWords(
      b, loc, qx,
      [](blockc::KernelToolkit &q, Value w, int64_t i) {
        // k of byte 0: 8 (w / 2) + w % 2, i.e. 4 w - 3 (w % 2).
        Value k0 = arith::SubIOp::create(
            q.b, q.loc, q.mul(w, q.idx(4)),
            q.mul(arith::RemUIOp::create(q.b, q.loc, w, q.idx(2)), q.idx(3)));
        return q.add(k0, q.idx(2 * i));
      },
      /*absolute=*/false);
  Value sums = blockc::buildRunReduction(
      b, loc, qx, WeightQuantAttr::kActivationRun,
      [](OpBuilder &nb, Location nloc, Value r, Value v) {
        Value minus8 =
            arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(-8.0f));
        return arith::AddFOp::create(
            nb, nloc, r, arith::MulFOp::create(nb, nloc, v, minus8));
      });
  return {words, sums};
}

/// The kernel of activations = int8: per run of 32 k (one chunk), the
/// integer dot product of q_x and q_w in 8 i32 lanes (ymm registers), exact,
/// converted once and multiplied by s_x (and, int4, the group's s_w):
/// * int8 weights: u8 x s8 on |q_x| and q_w with q_x's sign (vpsignb), so
///   that no pair sum leaves i16 (2 x 127 x 127 < 2^15);
/// * int4: the nibbles u = q_w + 8 are the unsigned operand and q_x the
///   signed one, less 8 x the lane sums of q_x (per row and chunk);
/// the products on vpdpbusd where the target has VNNI (avx512_vnni or
/// avx_vnni: the same intrinsic, EVEX or VEX), else vpmaddubsw + vpmaddwd.
struct IntKernel {
  blockc::KernelToolkit &q;
  Value qx, sxRuns, p, bias; // [B, T, K] i8, [B, T, K/32] f32, [N, words] i32
  codegen::QuantizedWeightAttr layout;
  bool vnni;
  Value pBuf;            // P as a memref (read-only: software prefetch)
  int64_t prefetchTiles; // weight-row tiles ahead (quantized_tiles)
  /// Rows in lanes (8 lanes, no VNNI; buildLaneQuantizedInput): q_x as
  /// words in the order of the weight words' k; int4: -8 times the runs'
  /// sums of q_x; int8: |q_x| as words.
  Value xWords = {}, xRunSums = {}, xAbsWords = {};

  OpBuilder &b() { return q.b; }
  Location loc() { return q.loc; }
  VectorType bytesType() { return VectorType::get({32}, b().getI8Type()); }
  VectorType lanesType() { return VectorType::get({8}, b().getI32Type()); }
  VectorType f32Type() { return VectorType::get({8}, b().getF32Type()); }
  Value splat(VectorType type, int64_t value) {
    return arith::ConstantOp::create(
        b(), loc(),
        DenseElementsAttr::get(
            type, b().getIntegerAttr(type.getElementType(), value)));
  }
  Value intrinsic(Type result, StringRef name, ValueRange args) {
    return callIntrinsic(b(), loc(), result, name, args);
  }
  /// Lane l: sum_{j < 4} u[4l + j] s[4l + j], u unsigned and s signed bytes.
  /// (VNNI: plus `acc`.)
  Value dot(Value u, Value s, Value acc = {}) {
    if (vnni)
      return intrinsic(lanesType(), "llvm.x86.avx512.vpdpbusd.256",
                       {acc ? acc : splat(lanesType(), 0), u, s});
    Value pairs = intrinsic(VectorType::get({16}, b().getI16Type()),
                            "llvm.x86.avx2.pmadd.ub.sw", {u, s});
    return intrinsic(
        lanesType(), "llvm.x86.avx2.pmadd.wd",
        {pairs, splat(VectorType::get({16}, b().getI16Type()), 1)});
  }
  /// q_x[bIdx, t, kk : kk + 32].
  Value readX(Value bIdx, Value t, Value kk) {
    return vector::TransferReadOp::create(
        b(), loc(), bytesType(), qx, ValueRange{bIdx, t, kk},
        arith::ConstantOp::create(b(), loc(), b().getI8IntegerAttr(0)),
        ArrayRef<bool>{true});
  }
  /// The `bytes` bytes of row n from byte `byteIdx` (a multiple of 4).
  Value readBytes(Value n, Value byteIdx, int64_t bytes) {
    Value word = arith::DivUIOp::create(b(), loc(), byteIdx, q.idx(4));
    auto [row, col] = WordAddress{q, layout}.value(n, word);
    Value words = vector::TransferReadOp::create(
        b(), loc(), VectorType::get({bytes / 4}, b().getI32Type()), p,
        ValueRange{row, col}, q.i32(0), ArrayRef<bool>{true});
    return vector::BitCastOp::create(
        b(), loc(), VectorType::get({bytes}, b().getI8Type()), words);
  }
  /// The f32 weight scale of group `grp` of row n.
  Value scale(Value n, Value grp) {
    auto [row, col] = WordAddress{q, layout}.scale(n, grp);
    Value bits = tensor::ExtractOp::create(b(), loc(), p, ValueRange{row, col});
    return arith::BitcastOp::create(b(), loc(), b().getF32Type(), bits);
  }

  /// Rows in lanes (int4, row_lanes with 8 lanes, no VNNI): out[bIdx, t +
  /// i, n + 8 u + l - nOffset] for i < r, u < nt tiles of 8 rows from row n
  /// (a multiple of 8), l < 8 (masked past the output's width). Per run of
  /// 32 k and tile, four reads of 8 words (8 k of the 8 rows each); each
  /// read's bytes masked with 0x0F (the nibbles of k even) and, shifted by
  /// 4, masked again (k odd) are the unsigned operands of two vpmaddubsw
  /// against the matching q_x word broadcast (xWords), summed in i16 lanes:
  /// 8 pair sums of at most 2 x 15 x 127 each, so |sum| <= 30480 < 2^15. One
  /// vpmaddwd with ones then gives each row's sum of u q_x over the run in
  /// its lane, exact; converted, plus -8 times the run's sum of q_x
  /// (xRunSums, for u = q + 8), times the rows' group scales and s_x into
  /// the accumulators. Nothing is cross-lane and nothing is summed across
  /// lanes at the end.
  Value laneTile(Value out, Value bIdx, Value t, Value n, Value nOffset,
                 int64_t r, int64_t nt) {
    if (layout.getBits() == 8)
      return laneTileInt8(out, bIdx, t, n, nOffset, r, nt);
    constexpr int64_t v = 8;
    int64_t k = layout.getCols(), g = layout.getGroupSize(), gw = g / 8;
    int64_t blockWords = v * (gw + 1);
    int64_t pWords = layout.getPreparedShape()[1];
    VectorType i16v = VectorType::get({16}, b().getI16Type());
    Value zero = arith::ConstantOp::create(
        b(), loc(), DenseElementsAttr::get(f32Type(), 0.0f));
    Value zero16 = splat(i16v, 0), ones16 = splat(i16v, 1);
    Value mask = splat(lanesType(), 0x0F0F0F0F), four = splat(lanesType(), 4);
    SmallVector<Value> rows, tiles;
    std::tie(rows, tiles) = laneTileIndices(q, t, n, v, r, nt);
    auto bytes = [&](Value lanes) {
      return vector::BitCastOp::create(b(), loc(), bytesType(), lanes);
    };
    SmallVector<Value> accs(r * nt, zero);
    accs =
        q.loop(q.idx(0), q.idx(k), kChunk, accs, [&](Value kk, ValueRange it) {
          SmallVector<Value> acc(it);
          Value run = arith::DivUIOp::create(b(), loc(), kk, q.idx(kChunk));
          Value grp = arith::DivUIOp::create(b(), loc(), kk, q.idx(g));
          Value base = q.mul(grp, q.idx(blockWords));
          // The run's first word in the group: 8 rows x 4 words per 32 k.
          Value runBase = q.add(
              base,
              q.mul(arith::RemUIOp::create(b(), loc(), run, q.idx(g / kChunk)),
                    q.idx(4 * v)));
          // Software prefetch (into L2) of each tile's words 2 x prefetch_tiles
          // groups further, as the weight-only kernel.
          if (pBuf && prefetchTiles > 0)
            prefetchLaneTiles(q, pBuf, tiles, runBase,
                              prefetchTiles * 2 * blockWords, 5 * v, pWords);
          SmallVector<Value> p16(r * nt, zero16);
          Value w0 = arith::DivUIOp::create(b(), loc(), kk, q.idx(4));
          for (int64_t step = 0; step < 4; ++step) {
            // Per row: the q_x words of k even and odd, broadcast.
            SmallVector<Value> xs[2];
            for (int64_t h = 0; h < 2; ++h)
              for (int64_t i = 0; i < r; ++i)
                xs[h].push_back(bytes(vector::BroadcastOp::create(
                    b(), loc(), lanesType(),
                    tensor::ExtractOp::create(
                        b(), loc(), xWords,
                        ValueRange{bIdx, rows[i],
                                   q.add(w0, q.idx(2 * step + h))}))));
            for (int64_t u = 0; u < nt; ++u) {
              Value words = vector::TransferReadOp::create(
                  b(), loc(), lanesType(), p,
                  ValueRange{tiles[u], q.add(runBase, q.idx(step * v))},
                  q.i32(0), ArrayRef<bool>{true});
              Value nib[2] = {
                  bytes(arith::AndIOp::create(b(), loc(), words, mask)),
                  bytes(arith::AndIOp::create(
                      b(), loc(),
                      arith::ShRUIOp::create(b(), loc(), words, four), mask))};
              for (int64_t h = 0; h < 2; ++h)
                for (int64_t i = 0; i < r; ++i) {
                  Value &sum = p16[i * nt + u];
                  sum = arith::AddIOp::create(
                      b(), loc(), sum,
                      intrinsic(i16v, "llvm.x86.avx2.pmadd.ub.sw",
                                {nib[h], xs[h][i]}));
                }
            }
          }
          SmallVector<Value> sx, offset;
          for (int64_t i = 0; i < r; ++i) {
            SmallVector<Value> at = {bIdx, rows[i], run};
            sx.push_back(vector::BroadcastOp::create(
                b(), loc(), f32Type(),
                tensor::ExtractOp::create(b(), loc(), sxRuns, at)));
            offset.push_back(vector::BroadcastOp::create(
                b(), loc(), f32Type(),
                tensor::ExtractOp::create(b(), loc(), xRunSums, at)));
          }
          for (int64_t u = 0; u < nt; ++u) {
            Value sw = vector::BitCastOp::create(
                b(), loc(), f32Type(),
                vector::TransferReadOp::create(
                    b(), loc(), lanesType(), p,
                    ValueRange{tiles[u], q.add(base, q.idx(v * gw))}, q.i32(0),
                    ArrayRef<bool>{true}));
            for (int64_t i = 0; i < r; ++i) {
              int64_t e = i * nt + u;
              Value d = intrinsic(lanesType(), "llvm.x86.avx2.pmadd.wd",
                                  {p16[e], ones16});
              Value f = arith::AddFOp::create(
                  b(), loc(), arith::SIToFPOp::create(b(), loc(), f32Type(), d),
                  offset[i]);
              acc[e] = vector::FMAOp::create(
                  b(), loc(), arith::MulFOp::create(b(), loc(), f, sw), sx[i],
                  acc[e]);
            }
          }
          return acc;
        });
    return storeLaneTiles(q, out, accs, bIdx, rows, n, nOffset, bias);
  }

  /// Rows in lanes with int8 weights (row_lanes with 8 lanes, no VNNI): the
  /// tiles of laneTile. Per run of 32 k and tile, eight reads of 8 words (4
  /// k of the 8 rows each); per read and input row, vpsignb gives q_w with
  /// q_x's sign (xWords, broadcast), vpmaddubsw multiplies it by |q_x|
  /// (xAbsWords, broadcast) into 16 pair sums of at most 2 x 127 x 127 <
  /// 2^15, and vpmaddwd with ones adds each row's pair into its i32 lane:
  /// 4 operations per 32 products, none cross-lane, where the k-in-lanes
  /// tile spends 5 (its conversion and FMA per run and row) and a
  /// horizontal sum per output. Per run, each row's exact i32 sums are
  /// converted and multiplied by s_x into the accumulators; the rows' scales
  /// multiply the sums once, at the end.
  Value laneTileInt8(Value out, Value bIdx, Value t, Value n, Value nOffset,
                     int64_t r, int64_t nt) {
    constexpr int64_t v = 8;
    int64_t k = layout.getCols(), gw = layout.getValueWords();
    int64_t pWords = layout.getPreparedShape()[1];
    VectorType i16v = VectorType::get({16}, b().getI16Type());
    Value zero = arith::ConstantOp::create(
        b(), loc(), DenseElementsAttr::get(f32Type(), 0.0f));
    Value zero32 = splat(lanesType(), 0), ones16 = splat(i16v, 1);
    SmallVector<Value> rows, tiles;
    std::tie(rows, tiles) = laneTileIndices(q, t, n, v, r, nt);
    auto broadcastWord = [&](Value words, Value i, Value w) -> Value {
      return vector::BitCastOp::create(
          b(), loc(), bytesType(),
          vector::BroadcastOp::create(
              b(), loc(), lanesType(),
              tensor::ExtractOp::create(b(), loc(), words,
                                        ValueRange{bIdx, i, w})));
    };
    SmallVector<Value> accs(r * nt, zero);
    accs =
        q.loop(q.idx(0), q.idx(k), kChunk, accs, [&](Value kk, ValueRange it) {
          SmallVector<Value> acc(it);
          Value run = arith::DivUIOp::create(b(), loc(), kk, q.idx(kChunk));
          // The run's first word: 8 rows x 8 words per 32 k.
          Value runBase = q.mul(run, q.idx(8 * v));
          // Software prefetch (into L2) of each tile's words as far ahead in
          // bytes as the int4 kernel's with groups of 32 (2 x prefetch_tiles
          // groups of 5 x 8 words).
          if (pBuf && prefetchTiles > 0)
            prefetchLaneTiles(q, pBuf, tiles, runBase,
                              prefetchTiles * 2 * 5 * v, 9 * v, pWords);
          SmallVector<Value> sums(r * nt, zero32);
          Value w0 = arith::DivUIOp::create(b(), loc(), kk, q.idx(4));
          for (int64_t step = 0; step < 8; ++step) {
            Value w = q.add(w0, q.idx(step));
            SmallVector<Value> xs, xu;
            for (int64_t i = 0; i < r; ++i) {
              xs.push_back(broadcastWord(xWords, rows[i], w));
              xu.push_back(broadcastWord(xAbsWords, rows[i], w));
            }
            for (int64_t u = 0; u < nt; ++u) {
              Value weights = vector::BitCastOp::create(
                  b(), loc(), bytesType(),
                  vector::TransferReadOp::create(
                      b(), loc(), lanesType(), p,
                      ValueRange{tiles[u], q.add(runBase, q.idx(step * v))},
                      q.i32(0), ArrayRef<bool>{true}));
              for (int64_t i = 0; i < r; ++i) {
                Value signedW = intrinsic(bytesType(), "llvm.x86.avx2.psign.b",
                                          {weights, xs[i]});
                Value pairs = intrinsic(i16v, "llvm.x86.avx2.pmadd.ub.sw",
                                        {xu[i], signedW});
                Value &sum = sums[i * nt + u];
                sum = arith::AddIOp::create(b(), loc(), sum,
                                            intrinsic(lanesType(),
                                                      "llvm.x86.avx2.pmadd.wd",
                                                      {pairs, ones16}));
              }
            }
          }
          for (int64_t i = 0; i < r; ++i) {
            Value sx = vector::BroadcastOp::create(
                b(), loc(), f32Type(),
                tensor::ExtractOp::create(b(), loc(), sxRuns,
                                          ValueRange{bIdx, rows[i], run}));
            for (int64_t u = 0; u < nt; ++u) {
              int64_t e = i * nt + u;
              acc[e] = vector::FMAOp::create(
                  b(), loc(),
                  arith::SIToFPOp::create(b(), loc(), f32Type(), sums[e]), sx,
                  acc[e]);
            }
          }
          return acc;
        });
    // The rows' scales, after the values.
    for (int64_t u = 0; u < nt; ++u) {
      Value sw = vector::BitCastOp::create(
          b(), loc(), f32Type(),
          vector::TransferReadOp::create(b(), loc(), lanesType(), p,
                                         ValueRange{tiles[u], q.idx(v * gw)},
                                         q.i32(0), ArrayRef<bool>{true}));
      for (int64_t i = 0; i < r; ++i)
        accs[i * nt + u] =
            arith::MulFOp::create(b(), loc(), accs[i * nt + u], sw);
    }
    return storeLaneTiles(q, out, accs, bIdx, rows, n, nOffset, bias);
  }

  /// out[bIdx, t + i, n + j - nOffset] for i < r, j < c.
  Value tile(Value out, Value bIdx, Value t, Value n, Value nOffset, int64_t r,
             int64_t c) {
    int64_t k = layout.getCols(), g = layout.getGroupSize();
    bool int8 = layout.getBits() == 8;
    Value zero = arith::ConstantOp::create(
        b(), loc(), DenseElementsAttr::get(f32Type(), 0.0f));
    SmallVector<Value> accs(r * c, zero), rows, cols;
    for (int64_t i = 0; i < r; ++i)
      rows.push_back(q.add(t, q.idx(i)));
    for (int64_t j = 0; j < c; ++j)
      cols.push_back(q.add(n, q.idx(j)));
    // int4 with VNNI reads the chunk's 16 bytes into both halves of a ymm
    // register and masks the low half with 0x0F and the high half with
    // 0xF0: the high nibbles come out as 16 u (at most 240, a valid u8;
    // vpdpbusd has no i16 intermediate to saturate), so lanes 4..7 of the
    // dot product are 16 x their value, which their s_x / 16 (exact)
    // undoes, and their offset is 128 (not 8) x the lane sums of q_x.
    // vpmaddubsw would saturate 2 x 240 x 127: without VNNI the high
    // nibbles are shifted down instead.
    bool halves = !int8 && vnni;
    auto chunkConst = [&](Type elem, auto lo, auto hi) -> Value {
      VectorType type = VectorType::get({kChunk}, elem);
      SmallVector<Attribute> values;
      for (int64_t e = 0; e < kChunk; ++e)
        values.push_back(
            elem.isF32()
                ? Attribute(b().getF32FloatAttr(e < 16 ? lo : hi))
                : Attribute(b().getIntegerAttr(elem, e < 16 ? lo : hi)));
      return arith::ConstantOp::create(b(), loc(),
                                       DenseElementsAttr::get(type, values));
    };
    accs =
        q.loop(q.idx(0), q.idx(k), kChunk, accs, [&](Value kk, ValueRange it) {
          SmallVector<Value> acc(it);
          Value run = arith::DivUIOp::create(b(), loc(), kk, q.idx(kChunk));
          // Per row: q_x, s_x (broadcast; with halves, s_x / 16 in lanes
          // 4..7) and |q_x| (int8) or the offset of the nibbles, -(8 or
          // 128) x q_x's lane sums (int4).
          SmallVector<Value> xs, sx, xu, offset;
          for (int64_t i = 0; i < r; ++i) {
            xs.push_back(readX(bIdx, rows[i], kk));
            Value s = tensor::ExtractOp::create(b(), loc(), sxRuns,
                                                ValueRange{bIdx, rows[i], run});
            Value sv = vector::BroadcastOp::create(b(), loc(), f32Type(), s);
            if (halves) {
              VectorType f8 = f32Type();
              SmallVector<float> sixteenth(8, 1.0f);
              for (int64_t l = 4; l < 8; ++l)
                sixteenth[l] = 1.0f / 16.0f;
              sv = arith::MulFOp::create(
                  b(), loc(), sv,
                  arith::ConstantOp::create(
                      b(), loc(),
                      DenseElementsAttr::get(f8, ArrayRef<float>(sixteenth))));
            }
            sx.push_back(sv);
            if (int8) {
              xu.push_back(math::AbsIOp::create(b(), loc(), xs[i]));
            } else {
              Value eights = halves ? chunkConst(b().getI8Type(), 8, 128)
                                    : splat(bytesType(), 8);
              offset.push_back(arith::SubIOp::create(
                  b(), loc(), splat(lanesType(), 0), dot(eights, xs[i])));
            }
          }
          // Software prefetch (into L2) of the same words of the rows
          // prefetchTiles tiles further (clamped to the last row): the
          // hardware prefetchers do not run ahead of these short rows.
          // Measured on the 7B int4 block with activations = int8 (Xeon
          // f6m167, 1 thread, one token, interleaved): 12.4 ms
          // prefetching 256 bytes ahead in the same row, 10.6 ms four
          // tiles ahead (blockc-cpu-select-tiles' 4).
          if (prefetchTiles > 0)
            prefetchRows(
                q, pBuf, layout, cols, prefetchTiles * c,
                arith::DivUIOp::create(b(), loc(), kk, q.idx(int8 ? 4 : 8)));
          for (int64_t j = 0; j < c; ++j) {
            Value w, sw;
            if (int8) {
              w = readBytes(cols[j], kk, kChunk);
            } else {
              // The chunk's 16 bytes: low nibbles k 0..15, high 16..31.
              Value packed = readBytes(
                  cols[j], arith::DivUIOp::create(b(), loc(), kk, q.idx(2)),
                  kChunk / 2);
              SmallVector<int64_t> order(kChunk);
              for (int64_t e = 0; e < kChunk; ++e)
                order[e] = halves ? e % 16 : e;
              if (halves) {
                w = arith::AndIOp::create(
                    b(), loc(),
                    vector::ShuffleOp::create(b(), loc(), packed, packed,
                                              order),
                    chunkConst(b().getI8Type(), 0x0F, 0xF0));
              } else {
                VectorType half = VectorType::get({16}, b().getI8Type());
                Value lo = arith::AndIOp::create(b(), loc(), packed,
                                                 splat(half, 0x0F));
                Value hi =
                    arith::ShRUIOp::create(b(), loc(), packed, splat(half, 4));
                w = vector::ShuffleOp::create(b(), loc(), lo, hi, order);
              }
              sw = vector::BroadcastOp::create(
                  b(), loc(), f32Type(),
                  scale(cols[j],
                        arith::DivUIOp::create(b(), loc(), kk, q.idx(g))));
            }
            for (int64_t i = 0; i < r; ++i) {
              Value d;
              if (int8) {
                Value signedW =
                    intrinsic(bytesType(), "llvm.x86.avx2.psign.b", {w, xs[i]});
                d = dot(xu[i], signedW);
              } else if (vnni) {
                d = dot(w, xs[i], offset[i]);
              } else {
                d = arith::AddIOp::create(b(), loc(), dot(w, xs[i]), offset[i]);
              }
              Value f = arith::SIToFPOp::create(b(), loc(), f32Type(), d);
              if (sw)
                f = arith::MulFOp::create(b(), loc(), f, sw);
              acc[i * c + j] =
                  vector::FMAOp::create(b(), loc(), f, sx[i], acc[i * c + j]);
            }
          }
          return acc;
        });
    return storeTileSums(q, out, accs, bIdx, rows, cols, nOffset, bias,
                         int8 ? [&](Value n) { return scale(n, q.idx(0)); }
                              : function_ref<Value(Value)>());
  }
};

struct CPULowerQuantizedLinearPass
    : blockc::cpu::impl::CPULowerQuantizedLinearPassBase<
          CPULowerQuantizedLinearPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The x86 integer dot products of activations = int8, with their
    // memory effects (none) declared.
    registry.insert<LLVM::LLVMDialect>();
    registry.addExtension(+[](MLIRContext *ctx, LLVM::LLVMDialect *) {
      std::optional<RegisteredOperationName> name =
          RegisteredOperationName::lookup(
              LLVM::CallIntrinsicOp::getOperationName(), ctx);
      if (name && !name->hasInterface<MemoryEffectOpInterface>())
        LLVM::CallIntrinsicOp::attachInterface<CallIntrinsicEffects>(*ctx);
    });
    registry.insert<bufferization::BufferizationDialect>();
    blockc::cpu::registerPrefetchEffects(registry);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    prepared.clear();
    // f32 projections on [B, T, K] (from a weight of any float type: it is
    // quantised from its values widened to f32); others are left to
    // convert-weight-quant-to-linalg.
    SmallVector<LinearOp> ops;
    func.walk([&](LinearOp op) {
      auto inType = cast<RankedTensorType>(op.getInput().getType());
      if (op.getWeightQuantAttr() && inType.getRank() == 3 &&
          inType.getElementType().isF32())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    FailureOr<int64_t> width = blockc::cpu::getTargetVectorWidth(
        func, "blockc-cpu-lower-quantized-linear");
    if (failed(width))
      return signalPassFailure();
    auto target = func->getAttrOfType<codegen::CPUTargetAttr>(
        CodegenDialect::kCpuTargetAttrName);
    int64_t v = *width;
    if (v < 4 || v > 16 || v % 4 != 0) {
      func.emitError() << "blockc-cpu-lower-quantized-linear: vector width "
                       << v << " is not 4, 8 or 16";
      return signalPassFailure();
    }
    // activations = int8 needs AVX2's byte products (an SSE target leaves
    // those projections to convert-weight-quant-to-linalg); VNNI where the
    // target has it.
    bool intDots = target.getIsa() != codegen::ISA::sse;
    bool vnni = target.getAvx512Vnni() || target.getAvxVnni();
    for (LinearOp op : ops) {
      auto wType = op.getWeight().getType();
      WeightQuantAttr quant = op.getWeightQuantAttr();
      if (quant.quantizesActivations() && !intDots)
        continue;
      auto tiles = op->getAttrOfType<codegen::QuantizedTilesAttr>(
          CodegenDialect::kQuantizedTilesAttrName);
      if (!tiles) {
        op.emitOpError() << "has no '"
                         << CodegenDialect::kQuantizedTilesAttrName
                         << "' (run blockc-cpu-select-tiles first)";
        return signalPassFailure();
      }
      int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
      bool int8 = quant.getType() == WeightQuantType::int8;
      // Rows in lanes: the int4 kernels on 16 or 8 lanes, weight-only and
      // not on bf16 pairs, or with int8 activations on 8 lanes without VNNI
      // (the integer rows-in-lanes kernels are vpmaddubsw's); elsewhere the
      // tiles' interleave alone (int8: interleave 1).
      bool rowLanes = !int8 && tiles.getRowLanes() && (v == 16 || v == 8) &&
                      (!quant.quantizesActivations() || (v == 8 && !vnni)) &&
                      !bf16Pairs(op, target.getAvx512Bf16(), v, 4);
      // int8 weights on rows in lanes, 8 lanes, K a multiple of 32: with
      // int8 activations without VNNI and no f32 panels (whose layout is
      // interleave 1's), or weight-only.
      if (int8)
        rowLanes = tiles.getRowLanes() && tiles.getInterleave() == 8 &&
                   v == 8 && k % 32 == 0 &&
                   (!quant.quantizesActivations() ||
                    (!vnni && tiles.getActPanelMinRows() == 0));
      auto layout = codegen::QuantizedWeightAttr::get(
          &getContext(), n, k, int8 ? 8 : 4, quant.getGroupSizeFor(k),
          int8 && !rowLanes ? 1 : tiles.getInterleave(), rowLanes);
      lower(op, layout, v, tiles, target.getRegisters(),
            quant.quantizesActivations(), vnni, target.getAvx512Bf16());
      ++numLowered;
    }
  }

  /// The prepared words of (weight, layout), built once (projections that
  /// share a weight share them, so prepare-weights can move them).
  DenseMap<std::pair<Value, Attribute>, Value> prepared;

  void lower(LinearOp op, codegen::QuantizedWeightAttr layout, int64_t v,
             codegen::QuantizedTilesAttr tiles, int64_t registers, bool intDots,
             bool vnni, bool avx512Bf16) {
    int64_t rows = tiles.getRows(), cols = tiles.getCols();
    int64_t blockN = tiles.getBlockN();
    OpBuilder b(op);
    Location loc = op.getLoc();
    blockc::KernelToolkit q{b, loc};
    Value x = op.getInput();
    Value w = op.getWeight();
    Value &p = prepared[{w, layout}];
    if (!p) {
      OpBuilder::InsertionGuard guard(b);
      if (auto arg = dyn_cast<BlockArgument>(w))
        b.setInsertionPointToStart(arg.getOwner());
      else
        b.setInsertionPointAfterValue(w);
      p = buildPreparedWeight(b, loc, w, layout);
    }
    int64_t n = layout.getRows();
    Value bDim = tensor::DimOp::create(b, loc, x, 0);
    Value tDim = tensor::DimOp::create(b, loc, x, 1);
    auto outType = cast<RankedTensorType>(op.getType());
    SmallVector<Value> dynamic;
    for (auto [i, d] : llvm::enumerate(ValueRange{bDim, tDim}))
      if (outType.isDynamicDim(i))
        dynamic.push_back(d);
    // The kernel of one path: the output, its scf.forall over blocks of
    // block_n output columns, and before it what the path reads (the
    // quantised input).
    enum class Path { weightOnly, intTiles, actPanels };
    auto buildKernel = [&](Path path, bool branch) -> Value {
      // Behind the row-count branch, an allocation: an scf.if result whose
      // branches yield tensor.empty-based tensors bufferizes to a memref of
      // fully dynamic strides, which every reader after it then indexes
      // with strides loaded at run time.
      Value out = branch ? bufferization::AllocTensorOp::create(b, loc, outType,
                                                                dynamic)
                               .getResult()
                         : tensor::EmptyOp::create(b, loc, outType.getShape(),
                                                   b.getF32Type(), dynamic)
                               .getResult();
      // activations = int8: the input quantised once, before the blocks: q_x
      // (i8) for the integer tiles, its values q_x s_x (f32) for the panels.
      Value qx, sxRuns, xDequantized;
      if (path == Path::intTiles)
        std::tie(qx, sxRuns) = buildQuantizedInput(b, loc, x);
      else if (path == Path::actPanels)
        xDequantized = buildDequantizedInput(b, loc, x);
      int64_t blocks = (n + blockN - 1) / blockN;
      auto forall = scf::ForallOp::create(
          b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(blocks)},
          ValueRange{out},
          /*mapping=*/std::nullopt);
      blockc::cpu::setKernelKind(forall, codegen::KernelKind::quantized_linear);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forall.getBody());
      Value nc = q.mul(forall.getInductionVar(0), q.idx(blockN));
      Value ncEnd =
          arith::MinUIOp::create(b, loc, q.add(nc, q.idx(blockN)), q.idx(n));
      Value width = arith::SubIOp::create(b, loc, ncEnd, nc);
      SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0),
                                           nc};
      SmallVector<OpFoldResult> sizes = {bDim, tDim, width};
      SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
      Value slice = tensor::ExtractSliceOp::create(
          b, loc, forall.getRegionIterArgs()[0], offsets, sizes, strides);
      // P as a memref for software prefetches (read-only).
      Value pBuf;
      if (path == Path::intTiles || v == 16 || layout.getRowLanes()) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(forall);
        auto pType = cast<RankedTensorType>(p.getType());
        pBuf = bufferization::ToBufferOp::create(
            b, loc, MemRefType::get(pType.getShape(), pType.getElementType()),
            p,
            /*read_only=*/true);
      }
      Kernel kern{q,
                  path == Path::actPanels ? xDequantized : x,
                  p,
                  op.getBias(),
                  layout,
                  v,
                  pBuf,
                  blockN,
                  tiles.getPrefetchTiles()};
      // int4 weight-only in a bf16 block, marked bf16_dot (by
      // blockc-cpu-select-tiles: see there where it chooses so): the decode
      // tiles dot bf16 pairs. (bf16_dot is ignored elsewhere.)
      if (!intDots && bf16Pairs(op, avx512Bf16, v, layout.getBits()))
        kern.x16 = op.getInput().getDefiningOp<arith::ExtFOp>().getIn();
      // Rows in lanes with 8 lanes: the scaled input and group sums, once
      // per call (before the parallel loop).
      if (path == Path::weightOnly && layout.getRowLanes() && v == 8) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(forall);
        std::tie(kern.xLanes, kern.xGroupSums) =
            buildLaneInput(b, loc, x, layout.getGroupSize(), layout.getBits());
      }
      // int4 keeps a group accumulator beside each accumulator: half the
      // columns; with AVX-512's table lookups a table per column instead
      // (rows of 2: accumulators, tables and x vectors fit 32 registers).
      bool int4Tables = layout.getBits() == 4 && v == 16;
      int64_t tileCols = layout.getBits() == 8 || int4Tables
                             ? cols
                             : std::max<int64_t>(1, cols / 2);
      // int4 row tiles with 16 registers: accumulators, group accumulators,
      // x sums and the x vectors of 2 rows do not fit; one row at a time.
      int64_t fewTileRows = layout.getBits() == 4 && registers < 32 ? 1 : rows;
      if (int4Tables)
        fewTileRows = std::min<int64_t>(rows, 2);
      Value c0 = q.idx(0);
      // Rows in tiles of tileRows (then single rows), each row tile over the
      // block's columns in tiles of `cols` (2 cols for a single row, then
      // single columns): tile(acc, bIdx, t, n, r, c) per register tile.
      using TileFn =
          function_ref<Value(Value, Value, Value, Value, int64_t, int64_t)>;
      auto rowTiles = [&](Value slice, int64_t tileRows, int64_t cols,
                          TileFn tile) -> Value {
        return q.forOne(c0, bDim, 1, slice, [&](Value bIdx, Value o) {
          auto colsLoop = [&](Value t, int64_t r, Value acc) {
            // A single row streams more weight rows at once.
            int64_t c = r == 1 ? 2 * cols : cols;
            Value nMain = q.fullEnd(nc, ncEnd, c);
            acc = q.forOne(nc, nMain, c, acc, [&](Value nIdx, Value a) {
              return tile(a, bIdx, t, nIdx, r, c);
            });
            return q.forOne(nMain, ncEnd, 1, acc, [&](Value nIdx, Value a) {
              return tile(a, bIdx, t, nIdx, r, 1);
            });
          };
          Value tMain = q.fullEnd(c0, tDim, tileRows);
          o = q.forOne(c0, tMain, tileRows, o, [&](Value t, Value acc) {
            return colsLoop(t, tileRows, acc);
          });
          return q.forOne(tMain, tDim, 1, o, [&](Value t, Value acc) {
            return colsLoop(t, 1, acc);
          });
        });
      };
      // Rows in lanes: input rows 2 at a time (then 1) over 2 tiles of V
      // weight rows (a single input row: 4), then single tiles:
      // tile(acc, bIdx, t, n, r, nt) per register tile.
      using LaneTileFn =
          function_ref<Value(Value, Value, Value, Value, int64_t, int64_t)>;
      auto laneRows = [&](Value slice, LaneTileFn tile) -> Value {
        return q.forOne(c0, bDim, 1, slice, [&](Value bIdx, Value o) {
          auto colsLoop = [&](Value t, int64_t r, Value acc) {
            int64_t nt = r == 1 ? 4 : 2;
            Value nMain = q.fullEnd(nc, ncEnd, v * nt);
            acc = q.forOne(nc, nMain, v * nt, acc, [&](Value nIdx, Value a) {
              return tile(a, bIdx, t, nIdx, r, nt);
            });
            return q.forOne(nMain, ncEnd, v, acc, [&](Value nIdx, Value a) {
              return tile(a, bIdx, t, nIdx, r, 1);
            });
          };
          Value tMain = q.fullEnd(c0, tDim, 2);
          o = q.forOne(c0, tMain, 2, o,
                       [&](Value t, Value acc) { return colsLoop(t, 2, acc); });
          return q.forOne(tMain, tDim, 1, o, [&](Value t, Value acc) {
            return colsLoop(t, 1, acc);
          });
        });
      };
      // Few rows (decode): the weight bytes are widened where they are used.
      auto fewRows = [&](Value slice) -> Value {
        if (layout.getRowLanes())
          return laneRows(slice, [&](Value a, Value bIdx, Value t, Value n,
                                     int64_t r, int64_t nt) {
            return kern.laneTile(a, bIdx, t, n, nc, r, nt);
          });
        return rowTiles(
            slice, fewTileRows, tileCols,
            [&](Value a, Value bIdx, Value t, Value n, int64_t r, int64_t c) {
              return kern.tile(a, bIdx, t, n, nc, r, c);
            });
      };
      // Many rows: each panel of kPanel k of the block's rows is widened
      // once into an f32 buffer [kPanel, blockN], transposed, that every
      // row tile reads; the block's output accumulates over panels.
      auto manyRows = [&](Value slice) -> Value {
        int64_t k = layout.getCols();
        int64_t kPanel = tiles.getPanelK();
        // [kPanel, blockN] f32: the block's panel, transposed.
        Value buf = memref::AllocaOp::create(
            b, loc, MemRefType::get({kPanel, blockN}, b.getF32Type()),
            b.getI64IntegerAttr(64));
        // int4 chunks of V rows before their transposes.
        Value rowsBuf;
        if (layout.getBits() == 4 && !layout.getRowLanes())
          rowsBuf = memref::AllocaOp::create(
              b, loc, MemRefType::get({v, kChunk}, b.getF32Type()),
              b.getI64IntegerAttr(64));
        // Outer-product tiles of panel_rows rows x 2 vectors.
        int64_t outerRows = tiles.getPanelRows();
        // The output block starts as the bias (or zero).
        Value zero = q.f32(0.0);
        Value init = q.forOne(c0, bDim, 1, slice, [&](Value bIdx, Value o) {
          return q.forOne(c0, tDim, 1, o, [&](Value t, Value o2) {
            return q.forOne(nc, ncEnd, 1, o2, [&](Value nIdx, Value o3) {
              Value vBias =
                  op.getBias()
                      ? tensor::ExtractOp::create(b, loc, op.getBias(), nIdx)
                            .getResult()
                      : zero;
              return tensor::InsertOp::create(
                         b, loc, vBias, o3,
                         ValueRange{bIdx, t,
                                    arith::SubIOp::create(b, loc, nIdx, nc)})
                  .getResult();
            });
          });
        });
        return q.forOne(c0, q.idx(k), kPanel, init, [&](Value k0, Value o) {
          Value len = arith::MinUIOp::create(
              b, loc, q.idx(kPanel),
              arith::SubIOp::create(b, loc, q.idx(k), k0));
          Value lenV = q.mul(arith::DivUIOp::create(
                                 b, loc, q.add(len, q.idx(v - 1)), q.idx(v)),
                             q.idx(v));
          if (layout.getRowLanes())
            kern.fillPanelLanes(buf, nc, k0, lenV);
          else
            kern.fillPanelT(buf, rowsBuf, nc, ncEnd, k0, lenV);
          return q.forOne(c0, bDim, 1, o, [&](Value bIdx, Value o2) {
            auto rowTile = [&](Value t, int64_t r, Value acc) {
              for (int64_t j0 = 0; j0 < blockN; j0 += 2 * v)
                acc = kern.outerTile(acc, buf, bIdx, t, j0, k0, len, r);
              return acc;
            };
            Value tMain = q.fullEnd(c0, tDim, outerRows);
            o2 = q.forOne(c0, tMain, outerRows, o2, [&](Value t, Value acc) {
              return rowTile(t, outerRows, acc);
            });
            return q.forOne(tMain, tDim, 1, o2, [&](Value t, Value acc) {
              return rowTile(t, 1, acc);
            });
          });
        });
      };
      // activations = int8 below act_panel_min_rows rows: integer dot
      // products of register tiles (the weight bytes are never widened to
      // f32).
      IntKernel intKern{q,    qx,           sxRuns,
                        p,    op.getBias(), layout,
                        vnni, pBuf,         tiles.getPrefetchTiles()};
      // Rows in lanes (8 lanes, no VNNI): q_x as words in the nibbles'
      // order and the runs' offsets, once per call.
      if (path == Path::intTiles && layout.getRowLanes()) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(forall);
        bool int8 = layout.getBits() == 8;
        auto [words, other] = buildLaneQuantizedInput(b, loc, qx, int8);
        intKern.xWords = words;
        (int8 ? intKern.xAbsWords : intKern.xRunSums) = other;
      }
      auto intRows = [&](Value slice) -> Value {
        if (layout.getRowLanes())
          return laneRows(slice, [&](Value a, Value bIdx, Value t, Value n,
                                     int64_t r, int64_t nt) {
            return intKern.laneTile(a, bIdx, t, n, nc, r, nt);
          });
        return rowTiles(
            slice, rows, cols,
            [&](Value a, Value bIdx, Value t, Value n, int64_t r, int64_t c) {
              return intKern.tile(a, bIdx, t, n, nc, r, c);
            });
      };
      Value computed;
      if (path == Path::intTiles) {
        computed = intRows(slice);
      } else if (path == Path::actPanels) {
        computed = manyRows(slice);
      } else {
        Value many = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           q.mul(bDim, tDim),
                                           q.idx(tiles.getPanelMinRows()));
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{slice.getType()}, many,
                                      /*withElseRegion=*/true);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        scf::YieldOp::create(b, loc, manyRows(slice));
        b.setInsertionPointToStart(ifOp.elseBlock());
        scf::YieldOp::create(b, loc, fewRows(slice));
        computed = ifOp.getResult(0);
      }
      b.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(b, loc, computed,
                                            forall.getRegionIterArgs()[0],
                                            offsets, sizes, strides);
      return forall.getResult(0);
    };
    // activations = int8 from act_panel_min_rows rows (B x T) on: the f32
    // panels on q_x s_x, which outrun the integer tiles at many rows (the
    // same sum of s_x s_w q_x q_w, the products rounded in f32 as on the
    // generic path rather than summed exactly in int32 per run). The row
    // count is tested once, outside the parallel loops: one scf.forall per
    // path, each after its own quantised input, so that the few-rows path
    // is the same kernel as without the panels.
    Value result;
    int64_t actPanelMinRows = tiles.getActPanelMinRows();
    if (intDots && actPanelMinRows > 0) {
      Value many =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                q.mul(bDim, tDim), q.idx(actPanelMinRows));
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{outType}, many,
                                    /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, loc,
                           buildKernel(Path::actPanels, /*branch=*/true));
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, loc,
                           buildKernel(Path::intTiles, /*branch=*/true));
      result = ifOp.getResult(0);
    } else {
      result = buildKernel(intDots ? Path::intTiles : Path::weightOnly,
                           /*branch=*/false);
    }
    op.replaceAllUsesWith(result);
    op.erase();
  }
};

} // namespace
