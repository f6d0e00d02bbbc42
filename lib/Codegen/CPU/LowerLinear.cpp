//===- LowerLinear.cpp - register-tiled vector kernel for linear ----------===//
//
// Builds the loop nest and micro-kernel described in Codegen/CPU/Passes.td
// directly with scf/vector/tensor builders. The nest carries the output
// tensor through scf.for iter_args (destination-passing style), so one-shot
// bufferization updates it in place.
//
//===----------------------------------------------------------------------===//

#include "TileEpilogue.h"
#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/KernelToolkit.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace blockc::cpu {
#define GEN_PASS_DEF_CPULOWERLINEARPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;
using blockc::codegen::CodegenDialect;

namespace {

/// How far ahead of its reads a kernel that streams a weight once (one
/// input row; few rows of prepared panels) prefetches it is the tiles'
/// prefetch_bytes (blockc-cpu-select-tiles chooses it per CPU vendor).
/// Packed micro-kernels of at most this many rows prefetch their panel
/// (the first tile of few rows streams it; prefill's 8-row tiles read it
/// from L1 and stay as they were).
constexpr int64_t kMaxPrefetchRows = 4;

struct KernelBuilder : blockc::KernelToolkit {
  Value x, w;         // [B, T, K], [N, K]
  VectorType vecType; // vector<V x f32>
  Value zeroF, zeroVec;
  /// bf16 pairs on vdpbf16ps (linear_tiles bf16_dot): the bf16 tensor
  /// [B, T, K] that `x` widens, read instead of `x`.
  Value x16 = Value();
  /// Whether every k pair of x16 is whole (K even).
  bool xPairInBounds = true;
  /// AMX (linear_tiles amx): a 32 x 32 f32 scratch of the kernel's block
  /// (stack, per thread) through which the accumulator tiles reach the
  /// output.
  Value amxScratch = Value();
  /// Software prefetch of the weight stream of few-row tiles: the weight
  /// (or its prepared panels) as a 1-D buffer of its elements, or null.
  Value pfBuf = Value();
  /// How far ahead (linear_tiles prefetch_bytes; 0: no prefetch, pfBuf
  /// stays null).
  int64_t pfBytes = 0;

  bool bf16Dot() const { return static_cast<bool>(x16); }

  /// Prefetches (into L1) element `at` of pfBuf, clamped to its last one.
  void prefetch(Value at) {
    at = minIdx(at, idx(cast<MemRefType>(pfBuf.getType()).getDimSize(0) - 1));
    memref::PrefetchOp::create(b, loc, pfBuf, ValueRange{at},
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
  }
  /// Elements of pfBuf in pfBytes.
  int64_t prefetchElements() const {
    int64_t bytes =
        cast<MemRefType>(pfBuf.getType()).getElementTypeBitWidth() / 8;
    return pfBytes / bytes;
  }
  /// vector<2V x bf16>: the k pairs of one vdpbf16ps.
  VectorType pairsType() const {
    return VectorType::get({2 * vecType.getNumElements()}, b.getBF16Type());
  }
  /// Reads 2V bf16 elements along k (zeros past K unless `inBounds`).
  Value readPairs(Value source, ValueRange indices, bool inBounds) {
    Value pad =
        arith::ConstantOp::create(b, loc, b.getZeroAttr(b.getBF16Type()));
    return vector::TransferReadOp::create(b, loc, pairsType(), source, indices,
                                          pad, ArrayRef<bool>{inBounds});
  }
  /// acc + the pairwise dot products of `a` and `c` (vdpbf16ps).
  Value dotPairs(Value acc, Value a, Value c) {
    return x86vector::DotBF16Op::create(b, loc, acc.getType(), acc, a, c);
  }

  /// Reads V elements along k; `inBounds` false pads past K with zeros.
  Value read(Value source, ValueRange indices, bool inBounds) {
    return vector::TransferReadOp::create(b, loc, vecType, source, indices,
                                          zeroF, ArrayRef<bool>{inBounds});
  }

  /// As read, for a weight that may be stored in a 16-bit float (bf16,
  /// f16): read in its own type and widened exactly in registers.
  Value readWeight(Value source, ValueRange indices, bool inBounds) {
    Type elt = cast<ShapedType>(source.getType()).getElementType();
    if (elt.isF32())
      return read(source, indices, inBounds);
    Value pad = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
    Value narrow = vector::TransferReadOp::create(
        b, loc, VectorType::get(vecType.getShape(), elt), source, indices, pad,
        ArrayRef<bool>{inBounds});
    return arith::ExtFOp::create(b, loc, vecType, narrow);
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
          // One input row streams c weight rows: each prefetched
          // pfBytes ahead (into the next rows past its end).
          if (r == 1 && pfBuf) {
            int64_t kDim = cast<ShapedType>(w.getType()).getDimSize(1);
            for (int64_t j = 0; j < c; ++j)
              prefetch(add(mul(add(n, idx(j)), idx(kDim)),
                           add(k, idx(prefetchElements()))));
          }
          if (bf16Dot()) {
            // 2V consecutive k of an input row and of a weight row: V
            // pairs, one vdpbf16ps.
            for (int64_t i = 0; i < r; ++i)
              xs.push_back(readPairs(x16, {bIdx, add(t, idx(i)), k}, inBounds));
            for (int64_t j = 0; j < c; ++j)
              ws.push_back(readPairs(w, {add(n, idx(j)), k}, inBounds));
            for (int64_t i = 0; i < r; ++i)
              for (int64_t j = 0; j < c; ++j)
                next.push_back(dotPairs(iter[i * c + j], xs[i], ws[j]));
            scf::YieldOp::create(b, loc, next);
            return;
          }
          for (int64_t i = 0; i < r; ++i)
            xs.push_back(read(x, {bIdx, add(t, idx(i)), k}, inBounds));
          for (int64_t j = 0; j < c; ++j)
            ws.push_back(readWeight(w, {add(n, idx(j)), k}, inBounds));
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
  /// full-vector part ends at kMain; adds into `out` and returns it. `v` is
  /// the k step: V elements, or 2V with bf16 pairs.
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

  /// Rows [lo, hi) in tiles of r rows, then the remainder in halving row
  /// counts down to 1: `tile(t, rows, acc)` per tile, carrying one tensor.
  Value
  forRowTiles(Value lo, Value hi, int64_t r, Value acc,
              function_ref<Value(Value t, int64_t rows, Value acc)> tile) {
    auto tiles = [&](Value from, Value to, int64_t rr, Value a) {
      return forOne(from, to, rr, a,
                    [&](Value t, Value a2) { return tile(t, rr, a2); });
    };
    Value end = fullEnd(lo, hi, r);
    acc = tiles(lo, end, r, acc);
    for (int64_t rr = llvm::bit_floor(uint64_t(r - 1)); r > 1 && rr >= 1;
         rr /= 2) {
      Value next = fullEnd(end, hi, rr);
      acc = tiles(end, next, rr, acc);
      end = next;
    }
    return acc;
  }

  /// ceil(a / 2): the k pairs of a length.
  Value halfUp(Value a) {
    return arith::CeilDivUIOp::create(b, loc, a, idx(2));
  }

  /// The packed kernels' panel of `panelK` x `panelN`: f32 [panelK,
  /// panelN]; with bf16 pairs bf16 [panelK / 2, 2 panelN], row p holding
  /// the pairs (W[n, 2p], W[n, 2p + 1]) of the panel's columns n in turn
  /// (AMX's layout of a tile's second operand).
  RankedTensorType panelType(int64_t panelK, int64_t panelN) {
    if (bf16Dot())
      return RankedTensorType::get({panelK / 2, 2 * panelN}, b.getBF16Type());
    return RankedTensorType::get({panelK, panelN}, b.getF32Type());
  }

  /// Transposes `rows` (V vectors of V lanes) in registers: one
  /// vector.transpose of the V x V block they form, lowered for the target
  /// by blockc-cpu-lower-transposes.
  void transposeInRegisters(SmallVectorImpl<Value> &rows) {
    int64_t v = rows.size();
    auto rowType = cast<VectorType>(rows.front().getType());
    auto blockType = VectorType::get({v, v}, rowType.getElementType());
    Value block = ub::PoisonOp::create(b, loc, blockType);
    for (int64_t i = 0; i < v; ++i)
      block = vector::InsertOp::create(b, loc, rows[i], block, i);
    Value t = vector::TransposeOp::create(b, loc, block, {1, 0});
    for (int64_t i = 0; i < v; ++i)
      rows[i] = vector::ExtractOp::create(b, loc, t, i);
  }

  /// Packs W[nc + j, kc + k] for j < width (of the n-block), k < kLen into
  /// panel[k][j] (transposed), V x V blocks at a time: V vector reads along
  /// k of V weight rows, an in-register transpose, V vector writes along n.
  /// Rows past N read row N - 1 (the columns they fill are never stored)
  /// and k past K reads zeros.
  ///
  /// With bf16 pairs the panel's rows are k pairs: panel[p][j] holds the
  /// bits of W[nc + j, kc + 2p : kc + 2p + 2] (an f32 lane of two bf16
  /// values), packed from reads of 2V bf16 elements per weight row.
  Value pack(Value panel, Value nc, Value width, Value kc, Value kLen,
             int64_t n, int64_t k, int64_t v) {
    bool clampRows = n % v != 0;
    bool kInBounds = bf16Dot() ? k % (2 * v) == 0 : k % v == 0;
    Value c0 = idx(0), lastRow = idx(n - 1);
    Value rowsOfPanel = bf16Dot() ? halfUp(kLen) : kLen;
    return forOne(c0, rowsOfPanel, v, panel, [&](Value k0, Value p) {
      return forOne(c0, width, v, p, [&](Value j0, Value q) {
        SmallVector<Value> rows;
        Value kAt =
            add(kc, bf16Dot()
                        ? arith::MulIOp::create(b, loc, k0, idx(2)).getResult()
                        : k0);
        for (int64_t jj = 0; jj < v; ++jj) {
          Value row = add(add(nc, j0), idx(jj));
          if (clampRows)
            row = minIdx(row, lastRow);
          if (bf16Dot())
            rows.push_back(vector::BitCastOp::create(
                b, loc, vecType, readPairs(w, {row, kAt}, kInBounds)));
          else
            rows.push_back(readWeight(w, {row, kAt}, kInBounds));
        }
        transposeInRegisters(rows);
        // bf16 pairs: row kk of the block is pair k0 + kk of V columns,
        // 2V bf16 from column 2 j0 of the bf16 panel.
        Value col = bf16Dot()
                        ? arith::MulIOp::create(b, loc, j0, idx(2)).getResult()
                        : j0;
        for (int64_t kk = 0; kk < v; ++kk) {
          Value row = rows[kk];
          if (bf16Dot())
            row = vector::BitCastOp::create(b, loc, pairsType(), row);
          q = vector::TransferWriteOp::create(b, loc, row, q,
                                              ValueRange{add(k0, idx(kk)), col},
                                              ArrayRef<bool>{true})
                  .getResult();
        }
        return q;
      });
    });
  }

  /// The AMX micro-kernel: out[bIdx, t + i, n0 + j] for i < 16 rowTiles,
  /// j < 32, accumulated over k < kLen (a multiple of 32) of a bf16-pair
  /// panel from its column panelN0: per 32 k, rowTiles tiles of x16 (16
  /// rows x 32 bf16) and two of the panel (16 pairs x 16 columns), 2
  /// rowTiles tdpbf16ps into 16 x 16 f32 tiles. The tiles then go through
  /// amxScratch into the output (masked past the block's width unless
  /// outInBounds).
  Value amxKernel(Value out, Value panel, Value bIdx, Value t, Value n0,
                  int64_t rowTiles, Value kc, Value kLen, bool outInBounds,
                  Value panelN0) {
    MLIRContext *ctx = b.getContext();
    auto operandType = amx::TileType::get({16, 32}, b.getBF16Type());
    auto accType = amx::TileType::get({16, 16}, b.getF32Type());
    // Buffers of any layout with contiguous rows (bufferization casts to
    // them; tile loads need a unit innermost stride).
    auto bufferOf = [&](Value tensor) {
      auto type = cast<RankedTensorType>(tensor.getType());
      SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
      strides.back() = 1;
      auto layout = StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides);
      return bufferization::ToBufferOp::create(
          b, loc,
          MemRefType::get(type.getShape(), type.getElementType(), layout),
          tensor, b.getUnitAttr());
    };
    Value xBuf = bufferOf(x16), pBuf = bufferOf(panel);
    Value panelCol = arith::MulIOp::create(b, loc, panelN0, idx(2));
    // One 32-k step at kk: acc[rt * 2 + ct] += x tile rt * panel tile ct.
    auto step = [&](Value kk, SmallVectorImpl<Value> &acc) {
      Value pair = arith::DivUIOp::create(b, loc, kk, idx(2));
      SmallVector<Value> xs, ps;
      for (int64_t rt = 0; rt < rowTiles; ++rt)
        xs.push_back(amx::TileLoadOp::create(
            b, loc, operandType, xBuf,
            ValueRange{bIdx, add(t, idx(16 * rt)), add(kc, kk)}));
      for (int64_t ct = 0; ct < 2; ++ct)
        ps.push_back(amx::TileLoadOp::create(
            b, loc, operandType, pBuf,
            ValueRange{pair, add(panelCol, idx(32 * ct))}));
      for (int64_t rt = 0; rt < rowTiles; ++rt)
        for (int64_t ct = 0; ct < 2; ++ct)
          acc[rt * 2 + ct] = amx::TileMulFOp::create(b, loc, accType, xs[rt],
                                                     ps[ct], acc[rt * 2 + ct]);
    };
    auto store = [&](ArrayRef<Value> acc) {
      for (int64_t rt = 0; rt < rowTiles; ++rt)
        for (int64_t ct = 0; ct < 2; ++ct)
          amx::TileStoreOp::create(b, loc, amxScratch,
                                   ValueRange{idx(16 * rt), idx(16 * ct)},
                                   acc[rt * 2 + ct]);
    };
    auto load = [&]() {
      SmallVector<Value> acc;
      for (int64_t rt = 0; rt < rowTiles; ++rt)
        for (int64_t ct = 0; ct < 2; ++ct)
          acc.push_back(
              amx::TileLoadOp::create(b, loc, accType, amxScratch,
                                      ValueRange{idx(16 * rt), idx(16 * ct)}));
      return acc;
    };
    // One tilezero per accumulator (a shared zero tile is copied through
    // the stack, the only way to copy a tile register).
    auto zeros = [&]() {
      SmallVector<Value> acc;
      for (int64_t i = 0; i < 2 * rowTiles; ++i)
        acc.push_back(amx::TileZeroOp::create(b, loc, accType));
      return acc;
    };
    // Tiles never cross blocks (the LLVM conversions of the OpenMP and
    // control-flow ops do not know the tile type): a whole panel
    // (kLen = panelK, the rule) is one straight run of steps; a shorter
    // last panel keeps its accumulators in the scratch between steps.
    int64_t panelK = cast<RankedTensorType>(panel.getType()).getDimSize(0) * 2;
    Value whole = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kLen,
                                        idx(panelK));
    scf::IfOp::create(
        b, loc, whole,
        [&](OpBuilder &nb, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> acc = zeros();
          for (int64_t kk = 0; kk < panelK; kk += 32)
            step(idx(kk), acc);
          store(acc);
          scf::YieldOp::create(b, loc);
        },
        [&](OpBuilder &nb, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          store(zeros());
          scf::ForOp::create(
              b, loc, idx(0), kLen, idx(32), ValueRange{},
              [&](OpBuilder &lb, Location, Value kk, ValueRange) {
                OpBuilder::InsertionGuard guard2(b);
                b.setInsertionPoint(lb.getInsertionBlock(),
                                    lb.getInsertionPoint());
                SmallVector<Value> acc = load();
                step(kk, acc);
                store(acc);
                scf::YieldOp::create(b, loc);
              });
          scf::YieldOp::create(b, loc);
        });
    for (int64_t i = 0; i < 16 * rowTiles; ++i)
      for (int64_t ct = 0; ct < 2; ++ct) {
        Value sum = vector::TransferReadOp::create(
            b, loc, vecType, amxScratch, ValueRange{idx(i), idx(16 * ct)},
            zeroF, ArrayRef<bool>{true});
        SmallVector<Value> at = {bIdx, add(t, idx(i)), add(n0, idx(16 * ct))};
        Value acc =
            arith::AddFOp::create(b, loc, read(out, at, outInBounds), sum);
        out = vector::TransferWriteOp::create(b, loc, acc, out, at,
                                              ArrayRef<bool>{outInBounds})
                  .getResult();
      }
    return out;
  }

  /// Rows [lo, hi) of one panel's columns [n0, n0 + 32): with AMX, blocks
  /// of 32 rows, then one of 16, on tiles; the rest (and everything
  /// without AMX) by `tile` in row tiles of r (forRowTiles).
  Value forPanelRows(
      Value lo, Value hi, int64_t r, Value acc, bool amx,
      function_ref<Value(Value t, int64_t rows, Value acc)> tile,
      function_ref<Value(Value t, int64_t rowTiles, Value acc)> amxTile) {
    if (amx) {
      Value end32 = fullEnd(lo, hi, 32);
      acc = forOne(lo, end32, 32, acc,
                   [&](Value t, Value a) { return amxTile(t, 2, a); });
      Value end16 = fullEnd(end32, hi, 16);
      acc = forOne(end32, end16, 16, acc,
                   [&](Value t, Value a) { return amxTile(t, 1, a); });
      lo = end16;
    }
    return forRowTiles(lo, hi, r, acc, tile);
  }

  /// The outer-product micro-kernel: out[bIdx, t+i, n0 + jV : +V] for
  /// i < r, j < c, accumulated over k < kLen of the packed panel: per k, c
  /// vector reads of panel[k, n0:], r broadcast scalars x[bIdx, t+i, kc+k],
  /// r * c FMAs. The accumulators start from, and end in, the output tile
  /// (masked past the block's width).
  ///
  /// With bf16 pairs, per k pair: c panel reads of V pairs, r broadcast
  /// pairs of x16, r * c vdpbf16ps (`xPairInBounds`: K is even).
  ///
  /// `pfAt` (prepared panels, r <= kMaxPrefetchRows): the pfBuf element of
  /// the kernel's first panel row and column; each step prefetches the
  /// row pfBytes ahead (past the panel: the next one in memory), in whole
  /// rows, at least one.
  Value outerKernel(Value out, Value panel, Value bIdx, Value t, Value n0,
                    int64_t r, int64_t c, Value kc, Value kLen, int64_t v,
                    bool outInBounds = false, Value panelN0 = Value(),
                    Value pfAt = Value()) {
    SmallVector<SmallVector<Value>> at;
    SmallVector<Value> accs;
    if (!panelN0)
      panelN0 = n0;
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        at.push_back({bIdx, add(t, idx(i)), add(n0, idx(j * v))});
        accs.push_back(read(out, at.back(), outInBounds));
      }
    // One k step: next[i * c + j] += x[t + i, kc + kk] * panel[kk, j]
    // (accumulator set `set` of `sets`).
    Type panelElt = cast<ShapedType>(panel.getType()).getElementType();
    // Elements of one panel row (of k pairs with bf16 pairs) and of one
    // read of it.
    int64_t rowElements = cast<ShapedType>(panel.getType()).getDimSize(1);
    int64_t readElements = bf16Dot() ? 2 * v : v;
    int64_t eltBytes = panelElt.getIntOrFloatBitWidth() / 8;
    bool prefetchPanel = pfAt && pfBuf && r <= kMaxPrefetchRows;
    int64_t aheadRows =
        prefetchPanel ? std::max<int64_t>(1, pfBytes / (rowElements * eltBytes))
                      : 0;
    auto step = [&](Value kk, SmallVectorImpl<Value> &next, int64_t set) {
      SmallVector<Value> ps;
      if (prefetchPanel) {
        // One prefetch per cache line of the kernel's reads.
        Value rowAt = add(pfAt, mul(add(kk, idx(aheadRows)), idx(rowElements)));
        for (int64_t j = 0; j < c; ++j)
          if ((j * readElements * eltBytes) % 64 == 0)
            prefetch(add(rowAt, idx(j * readElements)));
      }
      if (bf16Dot()) {
        // Pair kk of the panel: c vectors of V pairs, and per row the pair
        // x[bIdx, t + i, kc + 2kk : +2] broadcast to every lane.
        for (int64_t j = 0; j < c; ++j)
          ps.push_back(readPairs(
              panel,
              {kk,
               arith::MulIOp::create(b, loc, add(panelN0, idx(j * v)), idx(2))
                   .getResult()},
              true));
        Value kAt =
            add(kc, arith::MulIOp::create(b, loc, kk, idx(2)).getResult());
        auto pairType = VectorType::get({2}, b.getBF16Type());
        Value pad =
            arith::ConstantOp::create(b, loc, b.getZeroAttr(b.getBF16Type()));
        for (int64_t i = 0; i < r; ++i) {
          Value pair = vector::TransferReadOp::create(
              b, loc, pairType, x16, ValueRange{bIdx, add(t, idx(i)), kAt}, pad,
              ArrayRef<bool>{xPairInBounds});
          Value word = vector::BitCastOp::create(
              b, loc, VectorType::get({1}, b.getF32Type()), pair);
          Value bx = vector::BitCastOp::create(
              b, loc, pairsType(),
              vector::BroadcastOp::create(b, loc, vecType, word));
          for (int64_t j = 0; j < c; ++j) {
            Value &acc = next[(set * r + i) * c + j];
            acc = dotPairs(acc, bx, ps[j]);
          }
        }
        return;
      }
      for (int64_t j = 0; j < c; ++j)
        ps.push_back(readWeight(panel, {kk, add(panelN0, idx(j * v))}, true));
      Value kAt = add(kc, kk);
      for (int64_t i = 0; i < r; ++i) {
        Value s = tensor::ExtractOp::create(
            b, loc, x, ValueRange{bIdx, add(t, idx(i)), kAt});
        Value bx = vector::BroadcastOp::create(b, loc, vecType, s);
        for (int64_t j = 0; j < c; ++j) {
          Value &acc = next[(set * r + i) * c + j];
          acc = vector::FMAOp::create(b, loc, bx, ps[j], acc);
        }
      }
    };
    auto kLoop = [&](Value lo, Value hi, int64_t sets, ValueRange init) {
      auto loop = scf::ForOp::create(
          b, loc, lo, hi, idx(sets), init,
          [&](OpBuilder &nb, Location nloc, Value kk, ValueRange iter) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            SmallVector<Value> next(iter.begin(), iter.end());
            for (int64_t set = 0; set < sets; ++set)
              step(add(kk, idx(set)), next, set);
            scf::YieldOp::create(b, loc, next);
          });
      return SmallVector<Value>(loop.getResults());
    };
    // A single row of a 16-bit panel (decode) has too few accumulators to
    // hide the FMA latency behind the narrower loads: even and odd k go to
    // two sets, added at the end.
    SmallVector<Value> results;
    if (bf16Dot()) {
      results = kLoop(idx(0), halfUp(kLen), 1, accs);
    } else if (r == 1 && !panelElt.isF32()) {
      SmallVector<Value> init(accs);
      init.append(c, zeroVec);
      Value kEven = fullEnd(idx(0), kLen, 2);
      SmallVector<Value> two = kLoop(idx(0), kEven, 2, init);
      SmallVector<Value> one(two.begin(), two.begin() + c);
      one = kLoop(kEven, kLen, 1, one);
      for (int64_t j = 0; j < c; ++j)
        results.push_back(arith::AddFOp::create(b, loc, one[j], two[c + j]));
    } else {
      results = kLoop(idx(0), kLen, 1, accs);
    }
    for (int64_t i = 0; i < r * c; ++i)
      out = vector::TransferWriteOp::create(b, loc, results[i], out, at[i],
                                            ArrayRef<bool>{outInBounds})
                .getResult();
    return out;
  }
};

/// Tile parameters of one projection (its blockc_codegen.linear_tiles) and
/// the target's vector width.
struct Tiles {
  // Dot-product kernel (T < packMinRows, e.g. decode).
  int64_t rows, cols, width, blockN, blockK;
  // Packed outer-product kernel (T >= packMinRows).
  int64_t packRows, packCols, panelK, panelN, packMinRows;
  // Prepared weights: panels per parallel block, rows per cache block (0:
  // none).
  int64_t panelGroup = 1, rowBlock = 0;
  // Columns every parallel block covers a multiple of (prepared weights).
  int64_t blockAlign = 1;
  // The weight is read as prepared packed panels (weight_layout
  // packed_panels): the packed kernel at every T, no per-call packing.
  bool prepared = false;
  // bf16 pairs on vdpbf16ps.
  bool bf16Dot = false;
  // The packed kernel's blocks of 16 and 32 rows on AMX tiles.
  bool amx = false;
  // Bytes ahead the few-row kernels prefetch the weight stream (0: none).
  int64_t prefetchBytes = 0;

  /// Whether two projections can share one kernel: equal tiles but for the
  /// block alignment (the group takes the least common multiple).
  bool sameKernel(const Tiles &o) const {
    return rows == o.rows && cols == o.cols && width == o.width &&
           blockN == o.blockN && blockK == o.blockK && packRows == o.packRows &&
           packCols == o.packCols && panelK == o.panelK && panelN == o.panelN &&
           packMinRows == o.packMinRows && panelGroup == o.panelGroup &&
           rowBlock == o.rowBlock && prepared == o.prepared &&
           bf16Dot == o.bf16Dot && amx == o.amx &&
           prefetchBytes == o.prefetchBytes;
  }

  /// The panels per block are a multiple of this count to keep blocks
  /// aligned to blockAlign columns of an N-column weight; 0 when the
  /// alignment cannot be kept (weights not prepared, panel_n does not divide
  /// blockAlign, or N is not a multiple of it).
  int64_t alignPanels(int64_t n) const {
    if (!prepared || blockAlign % panelN != 0 || n % blockAlign != 0)
      return 0;
    return blockAlign / panelN;
  }
};

struct LowerLinear : OpRewritePattern<LinearOp> {
  LowerLinear(MLIRContext *ctx, const Tiles &tiles)
      : OpRewritePattern<LinearOp>(ctx), tiles(tiles) {}

  /// The dot-product kernel over one n-block (`slice` = out[:, :, nc:ncEnd]).
  Value buildDotBlock(KernelBuilder &kb, Value slice, Value bDim, Value tDim,
                      Value nc, Value ncEnd, int64_t k) const {
    int64_t rows = tiles.rows, cols = tiles.cols, width = tiles.width,
            blockK = tiles.blockK;
    Value c0 = kb.idx(0), kVal = kb.idx(k);
    // The k step of one vector: V elements, or 2V bf16 (V pairs).
    int64_t kStepV = tiles.bf16Dot ? 2 * width : width;
    // k-blocks keep a weight block in cache while the rows of x reuse it.
    // A single row (B * T == 1, one decode step of one sequence) has no
    // reuse: it streams every weight row whole, which keeps the hardware
    // prefetchers on long runs (about 5% more bandwidth than 2048-element
    // blocks in a C probe of a 7B projection).
    Value single = arith::CmpIOp::create(
        kb.b, kb.loc, arith::CmpIPredicate::eq,
        arith::MulIOp::create(kb.b, kb.loc, bDim, tDim), kb.idx(1));
    Value kStep = arith::SelectOp::create(
        kb.b, kb.loc, single, kb.idx(std::max<int64_t>(k, 1)), kb.idx(blockK));
    return kb.forOne(c0, kVal, kStep, slice, [&](Value kc, Value o2) {
      Value kcEnd = kb.minIdx(kb.add(kc, kStep), kVal);
      Value kMain = kb.fullEnd(kc, kcEnd, kStepV);
      return kb.forOne(c0, bDim, 1, o2, [&](Value bIdx, Value o3) {
        // Columns of one row group: full tiles, then single columns.
        auto colsLoop = [&](Value t, int64_t r, Value o) {
          // A single row (decode) streams more weight rows at once.
          int64_t c = r == 1 ? 2 * cols : cols;
          Value nMain = kb.fullEnd(nc, ncEnd, c);
          o = kb.forOne(nc, nMain, c, o, [&](Value nIdx, Value acc) {
            return kb.kernel(acc, bIdx, t, nIdx, nc, r, c, kc, kMain, kcEnd,
                             kStepV);
          });
          return kb.forOne(nMain, ncEnd, 1, o, [&](Value nIdx, Value acc) {
            return kb.kernel(acc, bIdx, t, nIdx, nc, r, 1, kc, kMain, kcEnd,
                             kStepV);
          });
        };
        Value tMain = kb.fullEnd(c0, tDim, rows);
        o3 = kb.forOne(c0, tMain, rows, o3, [&](Value t, Value acc) {
          return colsLoop(t, rows, acc);
        });
        return kb.forOne(tMain, tDim, 1, o3, [&](Value t, Value acc) {
          return colsLoop(t, 1, acc);
        });
      });
    });
  }

  /// The packed kernel over one n-block of at most panelN columns, for a
  /// weight in the checkpoint's layout: per k-block, the transposed weight
  /// panel packed here, then the outer-product micro-kernel over all rows
  /// (packRows at a time, the remainder in halving row counts down to 1)
  /// and the block's column tiles.
  Value buildPackedBlock(KernelBuilder &kb, Value slice, Value bDim, Value tDim,
                         Value nc, Value blockWidth, int64_t n,
                         int64_t k) const {
    int64_t v = tiles.width, r = tiles.packRows, c = tiles.packCols;
    int64_t panelK = tiles.panelK, panelN = tiles.panelN;
    Value c0 = kb.idx(0), kVal = kb.idx(k);
    return kb.forOne(c0, kVal, panelK, slice, [&](Value kc, Value o) {
      Value kLen = arith::SubIOp::create(
          kb.b, kb.loc, kb.minIdx(kb.add(kc, kb.idx(panelK)), kVal), kc);
      RankedTensorType panelType = kb.panelType(panelK, panelN);
      Value panel = tensor::EmptyOp::create(kb.b, kb.loc, panelType.getShape(),
                                            panelType.getElementType());
      panel = kb.pack(panel, nc, blockWidth, kc, kLen, n, k, v);
      return kb.forOne(c0, bDim, 1, o, [&](Value bIdx, Value o2) {
        return kb.forPanelRows(
            c0, tDim, r, o2, tiles.amx,
            [&](Value t, int64_t rr, Value a) {
              return kb.forOne(c0, blockWidth, c * v, a,
                               [&](Value n0, Value a2) {
                                 return kb.outerKernel(a2, panel, bIdx, t, n0,
                                                       rr, c, kc, kLen, v);
                               });
            },
            [&](Value t, int64_t rowTiles, Value a) {
              return kb.forOne(c0, blockWidth, 32, a, [&](Value n0, Value a2) {
                return kb.amxKernel(a2, panel, bIdx, t, n0, rowTiles, kc, kLen,
                                    /*outInBounds=*/false, n0);
              });
            });
      });
    });
  }

  /// The packed kernel over one block of prepared panels (block `nBlock`:
  /// panels [nBlock * G, nBlock * G + G) of the prepared weight, G =
  /// panelGroup, at most G * panelN columns), in the loop order of a
  /// blocked GEMM: row blocks of at most rowBlock rows (balanced, whole
  /// micro-kernel rows), k-panels, the block's panels, then the row tiles.
  /// The micro-kernel's panel (panelK x panelN) stays in L1 across a row
  /// block's tiles, the row block's slice of the input (rowBlock x panelK)
  /// in L2 across the G panels, and the output block of a row block in
  /// L2 across the k-panels.
  Value buildPreparedBlock(KernelBuilder &kb, Value slice, Value bDim,
                           Value tDim, Value nBlock, Value group,
                           Value blockWidth, int64_t n, int64_t k,
                           Value prepacked) const {
    int64_t v = tiles.width, r = tiles.packRows, c = tiles.packCols;
    int64_t panelK = tiles.panelK, panelN = tiles.panelN;
    // Every column tile is whole when N is a multiple of the tile width:
    // the output tile is read and written without masks (masked stores
    // are slow on AVX2 machines).
    bool outInBounds = n % (c * v) == 0 && panelN % (c * v) == 0;
    Value c0 = kb.idx(0), kVal = kb.idx(k);
    // Balanced row blocks: ceil(T / rowBlock) blocks of
    // roundUp(ceil(T / blocks), r) rows (at most rowBlock: it is rounded
    // down to whole micro-kernel rows here); without row blocks, all rows.
    int64_t rowBlock =
        tiles.rowBlock > 0 ? std::max(r, tiles.rowBlock / r * r) : 0;
    Value one = kb.idx(1);
    auto ceilDiv = [&](Value a, Value d) -> Value {
      return arith::CeilDivUIOp::create(kb.b, kb.loc, a, d);
    };
    Value rowStep;
    if (rowBlock) {
      Value numRowBlocks = arith::MaxUIOp::create(
          kb.b, kb.loc, ceilDiv(tDim, kb.idx(rowBlock)), one);
      Value rows = ceilDiv(tDim, numRowBlocks);
      rowStep = arith::MaxUIOp::create(
          kb.b, kb.loc,
          arith::MulIOp::create(kb.b, kb.loc, ceilDiv(rows, kb.idx(r)),
                                kb.idx(r)),
          kb.idx(r));
    } else {
      rowStep = arith::MaxUIOp::create(kb.b, kb.loc, tDim, one);
    }
    Value numPanels = ceilDiv(blockWidth, kb.idx(panelN));
    Value firstPanel = arith::MulIOp::create(kb.b, kb.loc, nBlock, group);
    return kb.forOne(c0, bDim, 1, slice, [&](Value bIdx, Value o) {
      return kb.forOne(c0, tDim, rowStep, o, [&](Value t0, Value o1) {
        Value tHi = kb.minIdx(kb.add(t0, rowStep), tDim);
        return kb.forOne(c0, kVal, panelK, o1, [&](Value kc, Value o2) {
          Value kLen = arith::SubIOp::create(
              kb.b, kb.loc, kb.minIdx(kb.add(kc, kb.idx(panelK)), kVal), kc);
          Value kBlock =
              arith::DivUIOp::create(kb.b, kb.loc, kc, kb.idx(panelK));
          return kb.forOne(c0, numPanels, 1, o2, [&](Value g, Value o3) {
            Value gLo = arith::MulIOp::create(kb.b, kb.loc, g, kb.idx(panelN));
            Value gHi = kb.minIdx(kb.add(gLo, kb.idx(panelN)), blockWidth);
            Value panel;
            if (prepacked && tiles.bf16Dot) {
              // P[firstPanel + g, kc / panelK, 0] as [panelK / 2, panelN,
              // 2], then the [panelK / 2, 2 panelN] panel of k pairs.
              OpFoldResult oneAttr = kb.b.getIndexAttr(1),
                           zero = kb.b.getIndexAttr(0);
              SmallVector<OpFoldResult> offsets = {
                  kb.add(firstPanel, g), kBlock, zero, zero, zero, zero};
              SmallVector<OpFoldResult> sizes = {oneAttr,
                                                 oneAttr,
                                                 oneAttr,
                                                 kb.b.getIndexAttr(panelK / 2),
                                                 kb.b.getIndexAttr(panelN),
                                                 kb.b.getIndexAttr(2)};
              SmallVector<OpFoldResult> strides(6, oneAttr);
              Type bf16 = kb.b.getBF16Type();
              Value pairs = tensor::ExtractSliceOp::create(
                  kb.b, kb.loc,
                  RankedTensorType::get({panelK / 2, panelN, 2}, bf16),
                  prepacked, offsets, sizes, strides);
              panel = tensor::CollapseShapeOp::create(
                  kb.b, kb.loc, kb.panelType(panelK, panelN), pairs,
                  SmallVector<ReassociationIndices>{{0}, {1, 2}});
            } else if (prepacked) {
              // P[firstPanel + g, kc / panelK] as a [panelK, panelN] tensor.
              OpFoldResult oneAttr = kb.b.getIndexAttr(1),
                           zero = kb.b.getIndexAttr(0);
              SmallVector<OpFoldResult> offsets = {kb.add(firstPanel, g),
                                                   kBlock, zero, zero};
              SmallVector<OpFoldResult> sizes = {oneAttr, oneAttr,
                                                 kb.b.getIndexAttr(panelK),
                                                 kb.b.getIndexAttr(panelN)};
              SmallVector<OpFoldResult> strides(4, oneAttr);
              auto panelType = RankedTensorType::get(
                  {panelK, panelN},
                  cast<ShapedType>(prepacked.getType()).getElementType());
              panel = tensor::ExtractSliceOp::create(
                  kb.b, kb.loc, panelType, prepacked, offsets, sizes, strides);
            } else {
              // A weight read in place: this panel packed (and widened)
              // here, once per row block.
              RankedTensorType panelType = kb.panelType(panelK, panelN);
              panel =
                  tensor::EmptyOp::create(kb.b, kb.loc, panelType.getShape(),
                                          panelType.getElementType());
              Value col = arith::MulIOp::create(
                  kb.b, kb.loc, kb.add(firstPanel, g), kb.idx(panelN));
              panel = kb.pack(panel, col,
                              arith::SubIOp::create(kb.b, kb.loc, gHi, gLo), kc,
                              kLen, n, k, v);
            }
            // The prepared panel's first element in memory (panels of
            // panelK x panelN elements, k-blocks after each other).
            Value panelAt;
            if (prepacked && kb.pfBuf) {
              int64_t kBlocks =
                  cast<ShapedType>(prepacked.getType()).getDimSize(1);
              panelAt =
                  kb.mul(kb.add(kb.mul(kb.add(firstPanel, g), kb.idx(kBlocks)),
                                kBlock),
                         kb.idx(panelK * panelN));
            }
            return kb.forPanelRows(
                t0, tHi, r, o3, tiles.amx,
                [&](Value t, int64_t rr, Value a) {
                  return kb.forOne(gLo, gHi, c * v, a, [&](Value n0, Value a2) {
                    Value inPanel =
                        arith::SubIOp::create(kb.b, kb.loc, n0, gLo);
                    Value pfAt;
                    if (panelAt)
                      pfAt = kb.add(panelAt, tiles.bf16Dot
                                                 ? kb.mul(inPanel, kb.idx(2))
                                                 : inPanel);
                    return kb.outerKernel(a2, panel, bIdx, t, n0, rr, c, kc,
                                          kLen, v, outInBounds, inPanel, pfAt);
                  });
                },
                [&](Value t, int64_t rowTiles, Value a) {
                  return kb.forOne(gLo, gHi, 32, a, [&](Value n0, Value a2) {
                    Value inPanel =
                        arith::SubIOp::create(kb.b, kb.loc, n0, gLo);
                    return kb.amxKernel(a2, panel, bIdx, t, n0, rowTiles, kc,
                                        kLen, outInBounds, inPanel);
                  });
                });
          });
        });
      });
    });
  }

  /// `weight` (a function argument, or the prepared panels packed from
  /// one) as a read-only 1-D buffer of its elements, for software
  /// prefetches; null for other weights (their layout is not known here).
  static Value flatBuffer(PatternRewriter &rewriter, Location loc,
                          Value weight) {
    auto type = cast<RankedTensorType>(weight.getType());
    auto isArgument = [](Value v) {
      auto arg = dyn_cast<BlockArgument>(v);
      return arg && isa<func::FuncOp>(arg.getOwner()->getParentOp());
    };
    bool argument = isArgument(weight);
    if (auto pack = weight.getDefiningOp<linalg::PackOp>()) {
      Value source = pack.getSource();
      if (auto expand = source.getDefiningOp<tensor::ExpandShapeOp>())
        source = expand.getSrc();
      argument = isArgument(source);
    }
    if (!argument || !type.hasStaticShape())
      return Value();
    ReassociationIndices all(type.getRank());
    std::iota(all.begin(), all.end(), 0);
    Value flat = tensor::CollapseShapeOp::create(
        rewriter, loc, weight, SmallVector<ReassociationIndices>{all});
    auto flatType = cast<RankedTensorType>(flat.getType());
    return bufferization::ToBufferOp::create(
        rewriter, loc,
        MemRefType::get(flatType.getShape(), flatType.getElementType()), flat,
        /*read_only=*/true);
  }

  /// The n-blocks are independent (each writes its own columns): an
  /// scf.forall that the pipeline turns into an OpenMP parallel loop. Each
  /// iteration computes its [B, T, block] slice of the output, with the
  /// packed kernel when T >= packMinRows (blocks of panelN columns) and the
  /// dot-product kernel otherwise (blocks of blockN); a static T keeps only
  /// one of them, a dynamic T chooses at run time.
  SmallVector<Value> buildBlocks(PatternRewriter &rewriter, Location loc,
                                 KernelBuilder &kb, ArrayRef<Value> inits,
                                 ArrayRef<Value> weights,
                                 ArrayRef<Value> prepacked, Value bDim,
                                 Value tDim, int64_t n, int64_t k,
                                 int64_t staticT) const {
    bool canPack = llvm::isPowerOf2_64(tiles.width);
    bool packed = canPack, dot = true;
    if (tiles.prepared) {
      dot = false;
    } else if (!ShapedType::isDynamic(staticT)) {
      packed = canPack && staticT >= tiles.packMinRows;
      dot = !packed;
    }
    // A weight read in place with panel groups (a 16-bit weight): the
    // packed path runs the prepared kernel's blocked loops, packing each
    // panel per row block.
    bool blockedInPlace = !tiles.prepared && packed && tiles.panelGroup > 1;
    int64_t packedBlockN =
        blockedInPlace ? tiles.panelGroup * tiles.panelN : tiles.panelN;
    Value nVal = kb.idx(n);
    Value usePacked, blockSize;
    // Prepared weights: panel_group panels per block from packMinRows rows
    // on; fewer rows (decode) take one panel per block, so that a block
    // streams its panels in memory order.
    Value group;
    int64_t staticGroup = 1;
    bool dynamicGroup = false;
    if (tiles.prepared) {
      // Blocks of whole blockAlign columns: both group sizes are multiples
      // of `align` panels.
      int64_t align = std::max<int64_t>(tiles.alignPanels(n), 1);
      int64_t fewRowsGroup = align;
      staticGroup = (tiles.panelGroup + align - 1) / align * align;
      if (!ShapedType::isDynamic(staticT) && staticT < tiles.packMinRows)
        staticGroup = fewRowsGroup;
      dynamicGroup =
          staticGroup != fewRowsGroup && ShapedType::isDynamic(staticT);
      group = kb.idx(staticGroup);
      if (dynamicGroup)
        group = arith::SelectOp::create(
            rewriter, loc,
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::uge,
                                  tDim, kb.idx(tiles.packMinRows)),
            group, kb.idx(fewRowsGroup));
      blockSize =
          arith::MulIOp::create(rewriter, loc, group, kb.idx(tiles.panelN));
    } else if (packed && dot) {
      usePacked =
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::uge, tDim,
                                kb.idx(tiles.packMinRows));
      blockSize = arith::SelectOp::create(
          rewriter, loc, usePacked, kb.idx(packedBlockN), kb.idx(tiles.blockN));
    } else {
      blockSize = kb.idx(packed ? packedBlockN : tiles.blockN);
    }
    // ceil(N / blockSize) blocks.
    OpFoldResult numBlocks;
    if ((packed && dot) || dynamicGroup) {
      numBlocks = arith::DivUIOp::create(
                      rewriter, loc,
                      kb.add(nVal, arith::SubIOp::create(rewriter, loc,
                                                         blockSize, kb.idx(1))),
                      blockSize)
                      .getResult();
    } else {
      int64_t bs = tiles.prepared ? staticGroup * tiles.panelN
                   : packed       ? packedBlockN
                                  : tiles.blockN;
      numBlocks = rewriter.getIndexAttr((n + bs - 1) / bs);
    }
    auto forall =
        scf::ForallOp::create(rewriter, loc, ArrayRef<OpFoldResult>{numBlocks},
                              ValueRange(inits), /*mapping=*/std::nullopt);
    // Lets later passes (blockc-cpu-fuse-residual) find the kernel, and
    // tells them the tiles it was built with (as rounded here: panel_group
    // is the group from pack_min_rows rows on, block_align the alignment
    // kept, 1 if none).
    blockc::cpu::setKernelKind(forall, blockc::codegen::KernelKind::linear);
    int64_t align = tiles.alignPanels(n);
    int64_t builtGroup = tiles.panelGroup;
    if (align > 0)
      builtGroup = (builtGroup + align - 1) / align * align;
    forall->setAttr(CodegenDialect::kLinearTilesAttrName,
                    blockc::codegen::LinearTilesAttr::get(
                        rewriter.getContext(), tiles.rows, tiles.cols,
                        tiles.blockN, tiles.blockK, tiles.packRows,
                        tiles.packCols, tiles.panelK, tiles.panelN,
                        tiles.packMinRows, builtGroup, tiles.rowBlock,
                        align > 0 ? tiles.blockAlign : 1, tiles.bf16Dot,
                        tiles.amx, tiles.prefetchBytes));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    if (tiles.amx && packed)
      kb.amxScratch = memref::AllocaOp::create(
          rewriter, loc, MemRefType::get({32, 32}, rewriter.getF32Type()));
    Value nc = arith::MulIOp::create(rewriter, loc, forall.getInductionVar(0),
                                     blockSize);
    Value ncEnd = kb.minIdx(kb.add(nc, blockSize), nVal);
    Value blockWidth = arith::SubIOp::create(rewriter, loc, ncEnd, nc);
    SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(0),
                                         rewriter.getIndexAttr(0), nc};
    SmallVector<OpFoldResult> sizes = {bDim, tDim, blockWidth};
    SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
    // Column block i of every member of the group, one after the other
    // (the input rows they all read stay in cache).
    SmallVector<Value> computedTiles;
    for (auto member :
         llvm::zip_equal(forall.getRegionIterArgs(), weights, prepacked)) {
      // Copies, not structured bindings: the lambdas below capture them.
      Value shared = std::get<0>(member), weight = std::get<1>(member);
      auto packedWeight = std::get<2>(member);
      kb.w = weight;
      // What the few-row kernels prefetch: the prepared panels, or the
      // weight that the dot-product kernel streams.
      kb.pfBuf = Value();
      kb.pfBytes = tiles.prefetchBytes;
      if (tiles.prefetchBytes > 0 && (tiles.prepared || dot))
        kb.pfBuf =
            flatBuffer(rewriter, loc, tiles.prepared ? packedWeight : weight);
      Value slice = tensor::ExtractSliceOp::create(rewriter, loc, shared,
                                                   offsets, sizes, strides);
      // The kernels index the slice from 0; the dot kernel takes absolute
      // weight rows [nc, ncEnd) and subtracts nc itself.
      auto packedBlock = [&]() {
        if (tiles.prepared)
          return buildPreparedBlock(kb, slice, bDim, tDim,
                                    forall.getInductionVar(0), group,
                                    blockWidth, n, k, packedWeight);
        if (blockedInPlace)
          return buildPreparedBlock(
              kb, slice, bDim, tDim, forall.getInductionVar(0),
              kb.idx(tiles.panelGroup), blockWidth, n, k, Value());
        return buildPackedBlock(kb, slice, bDim, tDim, nc, blockWidth, n, k);
      };
      auto dotBlock = [&]() {
        return buildDotBlock(kb, slice, bDim, tDim, nc, ncEnd, k);
      };
      Value computed;
      if (packed && dot) {
        auto ifOp = scf::IfOp::create(
            rewriter, loc, usePacked,
            [&](OpBuilder &nb, Location) {
              OpBuilder::InsertionGuard g(rewriter);
              rewriter.setInsertionPoint(nb.getInsertionBlock(),
                                         nb.getInsertionPoint());
              scf::YieldOp::create(rewriter, loc, packedBlock());
            },
            [&](OpBuilder &nb, Location) {
              OpBuilder::InsertionGuard g(rewriter);
              rewriter.setInsertionPoint(nb.getInsertionBlock(),
                                         nb.getInsertionPoint());
              scf::YieldOp::create(rewriter, loc, dotBlock());
            });
        computed = ifOp.getResult(0);
      } else {
        computed = packed ? packedBlock() : dotBlock();
      }
      computedTiles.push_back(computed);
    }
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    for (auto [computed, shared] :
         llvm::zip_equal(computedTiles, forall.getRegionIterArgs()))
      tensor::ParallelInsertSliceOp::create(rewriter, loc, computed, shared,
                                            offsets, sizes, strides);
    return SmallVector<Value>(forall.getResults());
  }

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    return lowerGroup({op}, rewriter);
  }

  /// Lowers `ops` (one op, or a horizontal group: same input, weight type,
  /// bias presence and result type) into one kernel at the first op.
  LogicalResult lowerGroup(ArrayRef<LinearOp> ops,
                           PatternRewriter &rewriter) const {
    LinearOp op = ops.front();
    RankedTensorType inType = op.getInput().getType();
    RankedTensorType outType = op.getType();
    if (inType.getRank() != 3 || !inType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "expects an f32 [B, T, K] input");
    Location loc = op.getLoc();
    auto wType = cast<RankedTensorType>(op.getWeight().getType());
    int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);

    KernelBuilder kb{
        {rewriter, loc}, op.getInput(),
        op.getWeight(),  VectorType::get({tiles.width}, rewriter.getF32Type()),
        Value(),         Value()};
    if (tiles.bf16Dot) {
      // The bf16 values the input widens (checked by the pass).
      kb.x16 = op.getInput().getDefiningOp<arith::ExtFOp>().getIn();
      kb.xPairInBounds = k % 2 == 0;
    }
    kb.zeroF =
        arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0));
    kb.zeroVec = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(kb.vecType, 0.0f));

    // Each output starts as the broadcast bias, or zero.
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    sizes.back() = rewriter.getIndexAttr(n);
    SmallVector<Value> inits, weights;
    for (LinearOp member : ops) {
      weights.push_back(member.getWeight());
      // The members of a group need outputs of their own: identical
      // tensor.empty + zero fills would be merged by CSE, and bufferization
      // would then copy the one filled buffer into each (an allocation is
      // never merged).
      Value empty;
      if (ops.size() > 1) {
        SmallVector<Value> dynamicSizes;
        SmallVector<int64_t> staticSizes;
        dispatchIndexOpFoldResults(sizes, dynamicSizes, staticSizes);
        empty = bufferization::AllocTensorOp::create(
            rewriter, loc,
            RankedTensorType::get(staticSizes, rewriter.getF32Type()),
            dynamicSizes);
      } else {
        empty = tensor::EmptyOp::create(rewriter, loc, sizes,
                                        rewriter.getF32Type());
      }
      if (Value bias = member.getBias()) {
        MLIRContext *ctx = getContext();
        AffineMap id = AffineMap::getMultiDimIdentityMap(3, ctx);
        AffineMap last = AffineMap::get(3, 0, {getAffineDimExpr(2, ctx)}, ctx);
        inits.push_back(linalg::GenericOp::create(
                            rewriter, loc, TypeRange{outType}, ValueRange{bias},
                            ValueRange{empty}, ArrayRef<AffineMap>{last, id},
                            SmallVector<utils::IteratorType>(
                                3, utils::IteratorType::parallel),
                            [](OpBuilder &b, Location l, ValueRange a) {
                              linalg::YieldOp::create(b, l, ValueRange{a[0]});
                            })
                            .getResult(0));
      } else {
        inits.push_back(linalg::FillOp::create(rewriter, loc,
                                               ValueRange{kb.zeroF},
                                               ValueRange{empty})
                            .getResult(0));
      }
    }

    // Prepared weights: each member's weight packed whole, once per call
    // here; blockc-cpu-prepare-weights moves the packing into the entry's
    // prepare function (linalg.pack is exactly the panel layout).
    SmallVector<Value> prepacked(weights.size(), Value());
    if (tiles.prepared) {
      auto layout = blockc::codegen::PackedWeightAttr::get(
          getContext(), n, k, tiles.panelK, tiles.panelN, tiles.bf16Dot);
      // Panels in the weight's own type: a bf16/f16 weight stays 16-bit
      // (the micro-kernel widens each panel row as it reads it); with bf16
      // pairs, panels of k pairs, the weight seen as [N, K / 2, 2].
      Type wElt = wType.getElementType();
      Value zeroW =
          arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(wElt));
      SmallVector<int64_t> innerDims = {1, 0};
      SmallVector<OpFoldResult> innerTiles = {
          rewriter.getIndexAttr(tiles.panelK),
          rewriter.getIndexAttr(tiles.panelN)};
      if (tiles.bf16Dot) {
        innerDims.push_back(2);
        innerTiles = {rewriter.getIndexAttr(tiles.panelK / 2),
                      rewriter.getIndexAttr(tiles.panelN),
                      rewriter.getIndexAttr(2)};
      }
      for (auto [weight, packedWeight] : llvm::zip_equal(weights, prepacked)) {
        Value source = weight;
        if (tiles.bf16Dot)
          source = tensor::ExpandShapeOp::create(
              rewriter, loc, RankedTensorType::get({n, k / 2, 2}, wElt), weight,
              SmallVector<ReassociationIndices>{{0}, {1, 2}});
        Value dest = tensor::EmptyOp::create(rewriter, loc,
                                             layout.getPackedShape(), wElt);
        auto pack = linalg::PackOp::create(rewriter, loc, source, dest,
                                           innerDims, innerTiles, zeroW);
        pack->setAttr(CodegenDialect::kPreparedAttrName, layout);
        packedWeight = pack.getResult();
      }
    }

    Value bDim = tensor::DimOp::create(rewriter, loc, op.getInput(), 0);
    Value tDim = tensor::DimOp::create(rewriter, loc, op.getInput(), 1);
    SmallVector<Value> results =
        buildBlocks(rewriter, loc, kb, inits, weights, prepacked, bDim, tDim, n,
                    k, inType.getDimSize(1));
    for (auto [member, result] : llvm::zip_equal(ops, results))
      rewriter.replaceOp(member, result);
    return success();
  }

  Tiles tiles;
};

struct CPULowerLinearPass
    : blockc::cpu::impl::CPULowerLinearPassBase<CPULowerLinearPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    blockc::cpu::registerPrefetchEffects(registry);
  }

  /// What bf16_dot needs: a CPU with AVX512_BF16 (the function's
  /// cpu_target), 16 lanes, a bf16 weight read as stored and an input
  /// widened from bf16.
  LogicalResult checkBF16Dot(LinearOp op, const Tiles &t) {
    auto target = getOperation()->getAttrOfType<blockc::codegen::CPUTargetAttr>(
        CodegenDialect::kCpuTargetAttrName);
    auto fail = [&](StringRef why) {
      return op.emitOpError() << "has linear_tiles bf16_dot but " << why;
    };
    if (!target || !target.getAvx512Bf16() || t.width != 16)
      return fail("the function's cpu_target has no avx512_bf16 with 16 "
                  "lanes");
    if (!op.getWeight().getType().getElementType().isBF16())
      return fail("its weight is not bf16");
    if (t.prepared && op.getWeight().getType().getDimSize(1) % 2 != 0)
      return fail("its weight is read as prepared panels of k pairs and K "
                  "is odd");
    auto ext = op.getInput().getDefiningOp<arith::ExtFOp>();
    if (!ext || !getElementTypeOrSelf(ext.getIn()).isBF16())
      return fail("its input is not widened from bf16 (arith.extf)");
    return success();
  }

  /// What amx needs beyond bf16_dot: a CPU with AMX-BF16 and whole 32-k
  /// steps. The kernel asks Linux for the tile state at the function's
  /// entry (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), so that
  /// objects work in any process.
  LogicalResult checkAMX(LinearOp op, const Tiles &t) {
    auto target = getOperation()->getAttrOfType<blockc::codegen::CPUTargetAttr>(
        CodegenDialect::kCpuTargetAttrName);
    auto fail = [&](StringRef why) {
      return op.emitOpError() << "has linear_tiles amx but " << why;
    };
    if (!target || !target.getAmxBf16())
      return fail("the function's cpu_target has no amx_bf16");
    if (op.getWeight().getType().getDimSize(1) % 32 != 0)
      return fail("K is not a multiple of 32");
    requestTileState(getOperation());
    return success();
  }

  /// At the start of `func`, once: the arch_prctl system call that grants
  /// this process the AMX tile state (its result is ignored: without it,
  /// the tile instructions fault as they would anyway).
  static void requestTileState(func::FuncOp func) {
    static constexpr llvm::StringLiteral kAsm = "syscall";
    Block &entry = func.getBody().front();
    for (auto asmOp : entry.getOps<LLVM::InlineAsmOp>())
      if (asmOp.getAsmString() == kAsm)
        return;
    OpBuilder b(func.getContext());
    b.setInsertionPointToStart(&entry);
    Location loc = func.getLoc();
    auto i64 = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
    };
    // SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA.
    SmallVector<Value> args = {i64(158), i64(0x1023), i64(18)};
    LLVM::InlineAsmOp::create(
        b, loc, b.getI64Type(), args, kAsm,
        "={rax},{rax},{rdi},{rsi},~{rcx},~{r11},~{memory}",
        /*has_side_effects=*/true,
        /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr(), ArrayAttr());
  }

  void runOnOperation() override {
    // The ops this pass lowers (f32 [B, T, K] inputs); the others are left
    // to convert-transformer-to-linalg, and quantised ones that
    // blockc-cpu-lower-quantized-linear did not take to
    // convert-weight-quant-to-linalg.
    SmallVector<LinearOp> ops;
    getOperation().walk([&](LinearOp op) {
      RankedTensorType inType = op.getInput().getType();
      if (inType.getRank() == 3 && inType.getElementType().isF32() &&
          !op.getWeightQuantAttr())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    FailureOr<int64_t> width = blockc::cpu::getTargetVectorWidth(
        getOperation(), "blockc-cpu-lower-linear");
    if (failed(width))
      return signalPassFailure();
    PatternRewriter rewriter(&getContext());
    SmallVector<Tiles> tilesOf;
    for (LinearOp op : ops) {
      // The tiles chosen for this op (blockc-cpu-select-tiles or by hand).
      auto tiles = op->getAttrOfType<blockc::codegen::LinearTilesAttr>(
          CodegenDialect::kLinearTilesAttrName);
      if (!tiles) {
        op.emitOpError() << "has no '" << CodegenDialect::kLinearTilesAttrName
                         << "' (run blockc-cpu-select-tiles first)";
        return signalPassFailure();
      }
      Tiles t{
          tiles.getRows(),        tiles.getCols(),       *width,
          tiles.getBlockN(),      tiles.getBlockK(),     tiles.getPackRows(),
          tiles.getPackCols(),    tiles.getPanelK(),     tiles.getPanelN(),
          tiles.getPackMinRows(), tiles.getPanelGroup(), tiles.getRowBlock(),
          tiles.getBlockAlign()};
      auto layout = op->getAttrOfType<blockc::codegen::WeightLayoutAttr>(
          CodegenDialect::kWeightLayoutAttrName);
      t.prepared =
          layout &&
          layout.getValue() == blockc::codegen::WeightLayout::packed_panels &&
          llvm::isPowerOf2_64(t.width);
      t.bf16Dot = tiles.getBf16Dot();
      t.amx = tiles.getAmx();
      t.prefetchBytes = tiles.getPrefetchBytes();
      if (t.bf16Dot && failed(checkBF16Dot(op, t)))
        return signalPassFailure();
      if (t.amx && failed(checkAMX(op, t)))
        return signalPassFailure();
      // The panel holds whole V x V transposed blocks (of V k pairs with
      // bf16 pairs) and whole column tiles of the micro-kernel.
      int64_t tileN = t.packCols * t.width;
      int64_t kUnit = t.bf16Dot ? 2 * t.width : t.width;
      auto roundUp = [](int64_t a, int64_t m) { return (a + m - 1) / m * m; };
      t.panelN = roundUp(t.panelN, tileN);
      t.panelK = roundUp(t.panelK, kUnit);
      // A panel need not be larger than the whole (padded) weight.
      auto wType = cast<RankedTensorType>(op.getWeight().getType());
      t.panelN = std::min(t.panelN, roundUp(wType.getDimSize(0), tileN));
      t.panelK = std::min(t.panelK, roundUp(wType.getDimSize(1), kUnit));
      tilesOf.push_back(t);
    }

    // Horizontal groups (blockc_codegen.horizontal_group): members that can
    // share one kernel are lowered together at the first member; the others
    // of the group (different shapes or tiles, or a weight or bias that does
    // not dominate the first member) are lowered on their own.
    DominanceInfo &dom = getAnalysis<DominanceInfo>();
    DenseSet<Operation *> done;
    for (auto [i, op] : llvm::enumerate(ops)) {
      if (done.contains(op))
        continue;
      SmallVector<LinearOp> group = {op};
      auto id = op->getAttrOfType<blockc::codegen::HorizontalGroupAttr>(
          CodegenDialect::kHorizontalGroupAttrName);
      for (size_t j = i + 1; id && j < ops.size(); ++j) {
        LinearOp other = ops[j];
        auto otherId =
            other->getAttrOfType<blockc::codegen::HorizontalGroupAttr>(
                CodegenDialect::kHorizontalGroupAttrName);
        if (!otherId || otherId != id || done.contains(other) ||
            !tilesOf[j].sameKernel(tilesOf[i]) ||
            other->getBlock() != op->getBlock() ||
            other.getInput() != op.getInput() ||
            other.getWeight().getType() != op.getWeight().getType() ||
            static_cast<bool>(other.getBias()) !=
                static_cast<bool>(op.getBias()) ||
            other.getType() != op.getType())
          continue;
        auto available = [&dom, first = op.getOperation()](Value v) {
          return !v || dom.properlyDominates(v, first);
        };
        if (!available(other.getWeight()) || !available(other.getBias()))
          continue;
        group.push_back(other);
      }
      for (LinearOp member : group)
        done.insert(member);
      // One block alignment that suits every member.
      Tiles tiles = tilesOf[i];
      for (LinearOp member : group)
        tiles.blockAlign =
            std::lcm(tiles.blockAlign,
                     tilesOf[llvm::find(ops, member) - ops.begin()].blockAlign);
      LowerLinear pattern(&getContext(), tiles);
      rewriter.setInsertionPoint(op);
      if (succeeded(pattern.lowerGroup(group, rewriter))) {
        numLowered += group.size();
        if (group.size() > 1)
          ++numGroups;
      }
    }
  }
};

} // namespace
