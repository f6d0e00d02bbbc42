//===- LowerSDPA.cpp - fused online-softmax attention kernel --------------===//
//
// Builds the loop nests of Codegen/CPU/Passes.td (CPULowerSDPAPass) with
// scf/vector/tensor builders on tensors, carrying the output through
// scf.for iter_args. Two kernels share one online-softmax recurrence:
//
// W is the vector width (f32 lanes) of the function's
// blockc_codegen.cpu_target.
//
// * the multi-row kernel (full blocks of W query rows): the
//   W rows of the block live in the lanes of every vector. Scores of key j
//   for the W rows are sum_d key[j, d] * Qt[d, :] (a broadcast key element
//   times a row of the transposed, pre-scaled query block Qt, kept in a
//   stack buffer), so no horizontal reduction exists at all; the running
//   max, sum and the transposed accumulator Ot[d, :] are per lane.
// * the single-row kernel (the rows that do not fill a block, e.g. decode):
//   the W keys of a tile live in the lanes; the W partial dot products of a
//   tile (one loop over the head dim, the row's query and accumulator in a
//   stack buffer) are summed across lanes by one transpose-add tree (3 ops
//   per halving step and vector pair instead of a horizontal reduction per
//   key).
//
// exp is the polynomial of Codegen/Common/Approximations.h on vectors (LLVM
// would scalarise a vector llvm.exp into libm calls), exact 0 for -inf and
// NaN-propagating.
//
//===----------------------------------------------------------------------===//

#include "PagedSDPA.h"
#include "TileEpilogue.h"
#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/Approximations.h"
#include "blockc/Codegen/Common/KernelToolkit.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <functional>
#include <limits>
#include <numeric>

namespace blockc::cpu {
#define GEN_PASS_DEF_CPULOWERSDPAPASS
#include "blockc/Codegen/CPU/Passes.h.inc"
} // namespace blockc::cpu

using namespace mlir;
using namespace blockc::transformer;
namespace codegen = blockc::codegen;

namespace {

/// The register tiles of the multi-row kernel (from the op's
/// #blockc_codegen.attention_tiles).
struct AttentionTiles {
  /// Vectors of query rows per block (rows = rowVectors x width).
  int64_t rowVectors;
  /// Keys per score micro-kernel: rowVectors x keyGroup accumulators.
  int64_t keyGroup;
  /// Head dims per P.V micro-kernel: valueGroup x rowVectors accumulators.
  int64_t valueGroup;
  /// Keys per tile of the online softmax (a multiple of keyGroup).
  int64_t keyTile;
  int64_t qkUnroll;
};

/// `add` and `mul` here are the f32 (vector) operations, which hide the
/// toolkit's index ones; index sums are `addi`.
struct AttentionBuilder : blockc::KernelToolkit {
  Value q, k, v; // [B, T, H, D], [B, S, Hkv, D] x 2
  int64_t width, d, nVec;
  VectorType vec;     // vector<width x f32>
  VectorType ivec;    // vector<width x i32>
  Value zeroF, zeroV; // 0.0 as f32 and as vector
  Value negInf, negInfV;
  Value scale, scaleV;
  Value sDim, offset; // S, S - T
  bool causal;
  // Read-only views of K and V for prefetches (or null).
  Value kBuf = nullptr, vBuf = nullptr;
  int64_t prefetchDistance = 1, prefetchLocality = 2;
  int64_t registers = 32; // vector registers of the target

  Value splat(Value scalar) {
    return vector::BroadcastOp::create(b, loc, vec, scalar);
  }
  /// `width` f32 lanes of `src` at `at`; a bf16/f16 source (K and V read
  /// from 16-bit caches) is read narrow and widened in registers.
  Value read(Value src, ValueRange at) {
    Type elt = getElementTypeOrSelf(src.getType());
    if (elt.isF32())
      return vector::TransferReadOp::create(b, loc, vec, src, at, zeroF,
                                            ArrayRef<bool>{true});
    Value narrow = vector::TransferReadOp::create(
        b, loc, VectorType::get({width}, elt), src, at,
        arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, 0.0)),
        ArrayRef<bool>{true});
    return arith::ExtFOp::create(b, loc, vec, narrow);
  }
  /// One element of `src` as f32 (widened from a 16-bit source).
  Value element(Value src, ValueRange at) {
    Value x = tensor::ExtractOp::create(b, loc, src, at);
    if (x.getType().isF32())
      return x;
    return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fma(Value x, Value y, Value z) {
    return math::FmaOp::create(b, loc, x, y, z);
  }
  Value addi(Value x, Value y) { return KernelToolkit::add(x, y); }
  Value addi(Value x, int64_t y) { return y == 0 ? x : addi(x, idx(y)); }
  Value clampIndex(Value x, Value lo, Value hi) {
    return arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, x, hi),
                                  lo);
  }

  /// A constant of the shape of `like` (f32 or vector of f32).
  Value cst(Type like, double x) {
    if (auto vt = dyn_cast<VectorType>(like))
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(vt, static_cast<float>(x)));
    return f32(x);
  }

  /// exp(x) on f32 or vector<f32> (Codegen/Common/Approximations.h):
  /// exact 0 for -inf, NaN-propagating.
  Value exp(Value x) { return blockc::buildExp(b, loc, x); }

  /// A partial result of the transpose-add tree: a vector whose `width /
  /// group` lane groups of `group` lanes each hold partial sums of the
  /// accumulators keys[g].
  struct Partial {
    Value v;
    SmallVector<int64_t> keys;
    int64_t group;
  };

  /// Pairs two partials with the same group size: lane group grp of each
  /// is split in halves, the halves added (two shuffles and one add).
  Partial combine(const Partial &x, const Partial &y) {
    int64_t g = x.group, half = g / 2, groups = width / g;
    SmallVector<int64_t> lo, hi, keys;
    for (int64_t grp = 0; grp < groups; ++grp) {
      for (int64_t side = 0; side < 2; ++side) {
        for (int64_t e = 0; e < half; ++e) {
          lo.push_back(side * width + grp * g + e);
          hi.push_back(side * width + grp * g + half + e);
        }
        keys.push_back((side ? y : x).keys[grp]);
      }
    }
    Value l = vector::ShuffleOp::create(b, loc, x.v, y.v, lo);
    Value h = vector::ShuffleOp::create(b, loc, x.v, y.v, hi);
    return {add(l, h), keys, half};
  }

  /// Lane j of the result is the sum of the lanes of leaf(j), j < width.
  /// For a power-of-two width: a transpose-add tree built depth first, so
  /// each accumulator is folded in as soon as it is complete and at most
  /// log2(width) + 1 partial vectors are live besides the leaves.
  Value sumLanes(function_ref<Value(int64_t)> leaf) {
    int64_t w = width;
    if (!llvm::isPowerOf2_64(w) || w == 1) {
      Value r = zeroV;
      for (int64_t j = 0; j < w; ++j)
        r = vector::InsertOp::create(
            b, loc,
            vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                        leaf(j)),
            r, j);
      return r;
    }
    std::function<Partial(int64_t, int64_t)> tree = [&](int64_t lo, int64_t n) {
      if (n == 1)
        return Partial{leaf(lo), {lo}, w};
      Partial x = tree(lo, n / 2);
      Partial y = tree(lo + n / 2, n / 2);
      return combine(x, y);
    };
    Partial all = tree(0, w);
    // Lane i now holds accumulator keys[i]: put lane j at position j.
    SmallVector<int64_t> perm(w);
    bool identity = true;
    for (int64_t i = 0; i < w; ++i) {
      perm[all.keys[i]] = i;
      identity &= all.keys[i] == i;
    }
    if (identity)
      return all.v;
    return vector::ShuffleOp::create(b, loc, all.v, all.v, perm);
  }

  /// max(x, y) lane-wise as compare and select: one vmaxps on x86 (no NaN
  /// fix-up as for maxnumf; a NaN score still reaches the output through
  /// its exp).
  Value vmax(Value x, Value y) {
    Value gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
    return arith::SelectOp::create(b, loc, gt, x, y);
  }

  /// The maximum of the lanes of x in every lane (butterfly, log2(width)
  /// shuffle + max steps, no scalar chain). Power-of-two widths only.
  Value allLanesMax(Value x) {
    for (int64_t k = width / 2; k >= 1; k /= 2) {
      SmallVector<int64_t> perm;
      for (int64_t i = 0; i < width; ++i)
        perm.push_back(i ^ k);
      x = vmax(x, vector::ShuffleOp::create(b, loc, x, x, perm));
    }
    return x;
  }

  //===--------------------------------------------------------------------===//
  // Single-row kernel: keys in lanes.
  //===--------------------------------------------------------------------===//

  /// Online-softmax state of one row: m (vector, the running max in every
  /// lane) and l (vector, per-lane partial sums); the row's pre-scaled
  /// query is row 0 and its accumulator row 1 of `rowBuf` ([2, D], a stack
  /// buffer), so that neither needs D / V registers (2 x 16 with AVX2 and
  /// D = 128: more than the register file). Folds the key tile [s0, s0 +
  /// width) into the state; with `limit`, keys at or beyond it are masked
  /// (their index is clamped to limit - 1, a visible key, and their score
  /// is -inf).
  SmallVector<Value> rowTile(ValueRange state, Value rowBuf, Value bIdx,
                             Value kvh, Value s0, Value limit) {
    if (vBuf && !limit)
      prefetchRows(bIdx, kvh, s0);
    SmallVector<Value> keyIdx;
    Value last;
    if (limit)
      last = arith::SubIOp::create(b, loc, limit, idx(1));
    for (int64_t j = 0; j < width; ++j) {
      Value s = addi(s0, j);
      keyIdx.push_back(limit ? arith::MinSIOp::create(b, loc, s, last) : s);
    }
    // The width partial dot products of the tile, one loop over the head
    // dim: per step one query vector (from the buffer) and width key
    // vectors, width independent FMA chains.
    Value c0 = idx(0), c1 = idx(1);
    SmallVector<Value> parts = loop(
        c0, idx(d), width, SmallVector<Value>(width, zeroV),
        [&](Value dd, ValueRange a) {
          Value qv =
              vector::LoadOp::create(b, loc, vec, rowBuf, ValueRange{c0, dd});
          SmallVector<Value> next;
          for (int64_t j = 0; j < width; ++j)
            next.push_back(fma(qv, read(k, {bIdx, keyIdx[j], kvh, dd}), a[j]));
          return next;
        });
    Value scores = sumLanes([&](int64_t j) { return parts[j]; });
    if (limit) {
      // lane j visible iff s0 + j < limit, i.e. j < limit - s0.
      Value n = arith::IndexCastOp::create(
          b, loc, b.getI32Type(), arith::SubIOp::create(b, loc, limit, s0));
      Value vis =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iota(),
                                vector::BroadcastOp::create(b, loc, ivec, n));
      scores = arith::SelectOp::create(b, loc, vis, scores, negInfV);
    }
    Value m = state[0];
    Value mNew;
    if (llvm::isPowerOf2_64(width)) {
      mNew = vmax(m, allLanesMax(scores));
    } else {
      Value tileMax = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::MAXNUMF, scores);
      mNew = arith::MaxNumFOp::create(b, loc, m, splat(tileMax));
    }
    Value c = exp(arith::SubFOp::create(b, loc, m, mNew));
    Value p = exp(arith::SubFOp::create(b, loc, scores, mNew));
    Value lNew = fma(state[1], c, p);
    // acc = acc c + sum_j p_j value[j], in chunks of the head dim: chunk
    // vectors of the accumulator in registers across the tile's keys, next
    // to the width broadcasts p_j (invariant in the chunk loop), p, c and a
    // value vector: 8 with 32 registers, 4 with AVX2's 16.
    int64_t chunk = 1;
    while (chunk < 8 && nVec % (2 * chunk) == 0 &&
           2 * chunk + width + 4 <= registers)
      chunk *= 2;
    loop(c0, idx(d), chunk * width, {}, [&](Value d0, ValueRange) {
      SmallVector<Value> acc;
      for (int64_t i = 0; i < chunk; ++i)
        acc.push_back(
            mul(vector::LoadOp::create(b, loc, vec, rowBuf,
                                       ValueRange{c1, addi(d0, i * width)}),
                c));
      for (int64_t j = 0; j < width; ++j) {
        Value pj = vector::ShuffleOp::create(b, loc, p, p,
                                             SmallVector<int64_t>(width, j));
        for (int64_t i = 0; i < chunk; ++i)
          acc[i] = fma(pj, read(v, {bIdx, keyIdx[j], kvh, addi(d0, i * width)}),
                       acc[i]);
      }
      for (int64_t i = 0; i < chunk; ++i)
        vector::StoreOp::create(b, loc, acc[i], rowBuf,
                                ValueRange{c1, addi(d0, i * width)});
      return SmallVector<Value>();
    });
    return {mNew, lNew};
  }

  /// Prefetches the key and value rows of the tile `prefetchDistance`
  /// tiles ahead (its start clamped so that every row is a key; full tiles
  /// only run when S >= width), one prefetch per 64-byte line. The rows of
  /// one head are a few contiguous streams (two per head for head-major
  /// caches): too few for the hardware prefetchers to keep enough lines in
  /// flight, so the kernel asks for them a couple of tiles early, into L2
  /// by default (which holds more outstanding misses than L1).
  void prefetchRows(Value bIdx, Value kvh, Value s0) {
    Value ahead =
        arith::MinSIOp::create(b, loc, addi(s0, prefetchDistance * width),
                               arith::SubIOp::create(b, loc, sDim, idx(width)));
    for (Value buf : {kBuf, vBuf}) {
      // Elements per 64-byte line (32 for a 16-bit cache).
      int64_t perLine =
          512 / cast<MemRefType>(buf.getType()).getElementTypeBitWidth();
      for (int64_t j = 0; j < width; ++j)
        for (int64_t e = 0; e < d; e += perLine)
          memref::PrefetchOp::create(
              b, loc, buf, ValueRange{bIdx, addi(ahead, j), kvh, idx(e)},
              /*isWrite=*/false, prefetchLocality,
              /*isDataCache=*/true);
    }
  }

  Value iota() {
    SmallVector<int32_t> lanes(width);
    std::iota(lanes.begin(), lanes.end(), 0);
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(ivec, ArrayRef<int32_t>(lanes)));
  }

  /// Keys visible to query row t: [0, end(t)); end(t) = clamp(t + S - T + 1,
  /// 0, S) when causal, else S.
  Value rowEnd(Value t) {
    if (!causal)
      return sDim;
    return clampIndex(addi(addi(t, offset), 1), idx(0), sDim);
  }

  Value floorTo(Value x, int64_t m) {
    return arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, x, idx(m)), idx(m));
  }

  /// Query row t of head h, written to row outT of `out` (a [B, rows, 1, D]
  /// slice of the output).
  Value singleRow(Value out, Value rowBuf, Value bIdx, Value t, Value outT,
                  Value h, Value kvh) {
    Value sEnd = rowEnd(t);
    Value c0 = idx(0), c1 = idx(1);
    for (int64_t i = 0; i < nVec; ++i) {
      vector::StoreOp::create(
          b, loc, mul(read(q, {bIdx, t, h, idx(i * width)}), scaleV), rowBuf,
          ValueRange{c0, idx(i * width)});
      vector::StoreOp::create(b, loc, zeroV, rowBuf,
                              ValueRange{c1, idx(i * width)});
    }
    SmallVector<Value> state = {negInfV, zeroV};
    Value full = floorTo(sEnd, width);
    state = loop(idx(0), full, width, state, [&](Value s0, ValueRange st) {
      return rowTile(st, rowBuf, bIdx, kvh, s0, Value());
    });
    // The last partial tile, masked (runs at most once).
    state = loop(full, sEnd, width, state, [&](Value s0, ValueRange st) {
      return rowTile(st, rowBuf, bIdx, kvh, s0, sEnd);
    });
    // out = l > 0 ? acc / l : 0 (a NaN in acc stays NaN).
    Value l = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                          state[1]);
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zeroF);
    Value inv = arith::SelectOp::create(
        b, loc, positive, arith::DivFOp::create(b, loc, f32(1.0), l), zeroF);
    Value invVec = splat(inv);
    for (int64_t i = 0; i < nVec; ++i)
      out = vector::TransferWriteOp::create(
                b, loc,
                mul(vector::LoadOp::create(b, loc, vec, rowBuf,
                                           ValueRange{c1, idx(i * width)}),
                    invVec),
                out, ValueRange{bIdx, outT, idx(0), idx(i * width)},
                ArrayRef<bool>{true})
                .getResult();
    return out;
  }

  //===--------------------------------------------------------------------===//
  // Multi-row kernel: query rows in lanes, register-tiled.
  //===--------------------------------------------------------------------===//

  /// Lanes that see key `s` of the rows base - (S - T) + lane (base =
  /// t0 + (S - T) + r * width for row vector r): s <= base + lane, i.e.
  /// lane >= s - base. Only scalars and the iota constant stay live.
  Value sees(Value base, Value s) {
    Value rel = arith::IndexCastOp::create(
        b, loc, b.getI32Type(),
        clampIndex(arith::SubIOp::create(b, loc, s, base), idx(-1),
                   idx(width)));
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge, iota(),
        vector::BroadcastOp::create(b, loc, ivec, rel));
  }

  Value load(Value buf, Value row, int64_t col) {
    return vector::LoadOp::create(b, loc, vec, buf, ValueRange{row, idx(col)});
  }
  void store(Value x, Value buf, Value row, int64_t col) {
    vector::StoreOp::create(b, loc, x, buf, ValueRange{row, idx(col)});
  }

  /// Rows [t0, t0 + rows) of head h, rows = tiles.rowVectors * width, all
  /// < T, written to rows [outT0, outT0 + rows) of `out`. Scratch: qt and
  /// ot [D, rows], sb [keyTile, rows].
  Value tiledBlock(Value out, Value qt, Value ot, Value sb, Value bIdx,
                   Value t0, Value outT0, Value h, Value kvh,
                   const AttentionTiles &tl) {
    int64_t rv = tl.rowVectors, rows = rv * width;
    MLIRContext *ctx = b.getContext();
    // qt[d, :] = scale * query[b, t0 : t0 + rows, h, d]; ot = 0.
    AffineMap rowsOfQ = AffineMap::get(4, 0, b.getAffineDimExpr(1), ctx);
    loop(idx(0), idx(d), 1, {}, [&](Value dd, ValueRange) {
      for (int64_t r = 0; r < rv; ++r) {
        Value col = vector::TransferReadOp::create(
            b, loc, vec, q, ValueRange{bIdx, addi(t0, r * width), h, dd}, zeroF,
            rowsOfQ, ArrayRef<bool>{true});
        store(mul(col, scaleV), qt, dd, r * width);
        store(zeroV, ot, dd, r * width);
      }
      return SmallVector<Value>();
    });
    // thr[r]: the last key that lane 0 of row vector r sees (causal).
    SmallVector<Value> thr;
    if (causal)
      for (int64_t r = 0; r < rv; ++r)
        thr.push_back(addi(addi(t0, offset), r * width));
    Value endFirst = rowEnd(t0);
    Value endLast = rowEnd(addi(t0, rows - 1));
    Value lastKey = arith::SubIOp::create(b, loc, sDim, idx(1));
    SmallVector<Value> init(rv, negInfV);
    init.append(rv, zeroV);
    // Key tiles up to the last row's end: fully masked tiles never run.
    SmallVector<Value> state =
        loop(idx(0), endLast, tl.keyTile, init, [&](Value s0, ValueRange st) {
          Value nk = arith::MinSIOp::create(
              b, loc, idx(tl.keyTile),
              arith::SubIOp::create(b, loc, endLast, s0));
          // Scores, keyGroup keys at a time: sb[j, :] = sum_d
          // key[s0 + j, d] * qt[d, :], rowVectors x keyGroup accumulators
          // (keys past the tile read a valid row; their scores are never
          // read).
          loop(idx(0), nk, tl.keyGroup, {}, [&](Value g0, ValueRange) {
            SmallVector<Value> keys;
            for (int64_t j = 0; j < tl.keyGroup; ++j)
              keys.push_back(arith::MinSIOp::create(
                  b, loc, addi(addi(s0, g0), j), lastKey));
            int64_t unroll = std::gcd(tl.qkUnroll, d);
            SmallVector<Value> zeros(rv * tl.keyGroup, zeroV);
            SmallVector<Value> acc = loop(
                idx(0), idx(d), unroll, zeros, [&](Value d0, ValueRange a) {
                  SmallVector<Value> next(a);
                  for (int64_t u = 0; u < unroll; ++u) {
                    Value dd = addi(d0, u);
                    SmallVector<Value> qv;
                    for (int64_t r = 0; r < rv; ++r)
                      qv.push_back(load(qt, dd, r * width));
                    for (int64_t j = 0; j < tl.keyGroup; ++j) {
                      Value kb = splat(element(k, {bIdx, keys[j], kvh, dd}));
                      for (int64_t r = 0; r < rv; ++r)
                        next[j * rv + r] = fma(kb, qv[r], next[j * rv + r]);
                    }
                  }
                  return next;
                });
            for (int64_t j = 0; j < tl.keyGroup; ++j)
              for (int64_t r = 0; r < rv; ++r)
                store(acc[j * rv + r], sb, addi(g0, j), r * width);
            return SmallVector<Value>();
          });
          // Keys [0, nAll) of the tile are visible to every row of the
          // block; the rest (the causal diagonal) to some rows only.
          Value nAll = nk;
          if (causal)
            nAll = clampIndex(arith::SubIOp::create(b, loc, endFirst, s0),
                              idx(0), nk);
          // Online softmax per lane (row): invisible keys score -inf, the
          // tile max, then p = exp(s - m') in place and the row sums.
          auto maxStep = [&](Value j, ValueRange a, bool masked) {
            SmallVector<Value> next;
            for (int64_t r = 0; r < rv; ++r) {
              Value sc = load(sb, j, r * width);
              if (masked) {
                sc = arith::SelectOp::create(b, loc, sees(thr[r], addi(s0, j)),
                                             sc, negInfV);
                store(sc, sb, j, r * width);
              }
              next.push_back(arith::MaxNumFOp::create(b, loc, a[r], sc));
            }
            return next;
          };
          SmallVector<Value> mx =
              loop(idx(0), nAll, 1, SmallVector<Value>(rv, negInfV),
                   [&](Value j, ValueRange a) { return maxStep(j, a, false); });
          if (causal)
            mx = loop(nAll, nk, 1, mx, [&](Value j, ValueRange a) {
              return maxStep(j, a, true);
            });
          SmallVector<Value> mNew, mUse, c;
          for (int64_t r = 0; r < rv; ++r) {
            mNew.push_back(arith::MaxNumFOp::create(b, loc, st[r], mx[r]));
            // A row that has seen no visible key keeps m = -inf; subtract 0
            // then, so that exp(-inf - m) is 0 rather than NaN.
            Value none = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OEQ, mNew[r], negInfV);
            mUse.push_back(
                arith::SelectOp::create(b, loc, none, zeroV, mNew[r]));
            c.push_back(exp(arith::SubFOp::create(b, loc, st[r], mUse[r])));
          }
          // One row vector at a time: the exp polynomial's constants, m'
          // and the sum fit the registers of either ISA.
          SmallVector<Value> sums;
          for (int64_t r = 0; r < rv; ++r)
            sums.push_back(
                loop(idx(0), nk, 1, {zeroV}, [&](Value j, ValueRange a) {
                  Value pr = exp(arith::SubFOp::create(
                      b, loc, load(sb, j, r * width), mUse[r]));
                  store(pr, sb, j, r * width);
                  return SmallVector<Value>{add(a[0], pr)};
                }).front());
          // ot[d, :] = ot[d, :] * c + sum_j value[s0 + j, d] * p_j,
          // valueGroup x rowVectors accumulators. Keys that some row of
          // the block does not see (the causal diagonal) add exactly
          // nothing to those rows (a masked FMA: a NaN in a future value
          // row stays out).
          // Whole groups of `dg` head dims, then one group of the rest;
          // `first` scales the accumulators by c (once per tile); keys
          // [jLo, nAll) are folded in with plain FMAs and (`diagonal`) keys
          // [nAll, nk) with masked ones: keys that some row of the block
          // does not see (the causal diagonal) add exactly nothing to those
          // rows (a NaN in a future value row stays out).
          auto pvPass = [&](int64_t dg, bool first, bool plain, bool diagonal) {
            auto groups = [&](int64_t dLo, int64_t dHi, int64_t g) {
              loop(idx(dLo), idx(dHi), g, {}, [&](Value d0, ValueRange) {
                SmallVector<Value> acc;
                for (int64_t i = 0; i < g; ++i)
                  for (int64_t r = 0; r < rv; ++r) {
                    Value o = load(ot, addi(d0, i), r * width);
                    acc.push_back(first ? mul(o, c[r]) : o);
                  }
                auto step = [&](Value j, ValueRange a, bool masked) {
                  Value key = addi(s0, j);
                  SmallVector<Value> pr, vis;
                  for (int64_t r = 0; r < rv; ++r) {
                    pr.push_back(load(sb, j, r * width));
                    if (masked)
                      vis.push_back(sees(thr[r], key));
                  }
                  SmallVector<Value> next(a);
                  for (int64_t i = 0; i < g; ++i) {
                    Value vb = splat(element(v, {bIdx, key, kvh, addi(d0, i)}));
                    for (int64_t r = 0; r < rv; ++r) {
                      Value &x = next[i * rv + r];
                      Value y = fma(vb, pr[r], x);
                      x = masked ? arith::SelectOp::create(b, loc, vis[r], y, x)
                                       .getResult()
                                 : y;
                    }
                  }
                  return next;
                };
                if (plain)
                  acc = loop(idx(0), nAll, 1, acc, [&](Value j, ValueRange a) {
                    return step(j, a, /*masked=*/false);
                  });
                if (diagonal)
                  acc = loop(nAll, nk, 1, acc, [&](Value j, ValueRange a) {
                    return step(j, a, /*masked=*/true);
                  });
                for (int64_t i = 0; i < g; ++i)
                  for (int64_t r = 0; r < rv; ++r)
                    store(acc[i * rv + r], ot, addi(d0, i), r * width);
                return SmallVector<Value>();
              });
            };
            int64_t dMain = d / dg * dg;
            groups(0, dMain, dg);
            if (dMain < d)
              groups(dMain, d, d - dMain);
          };
          // ot[d, :] = ot[d, :] * c + sum_j value[s0 + j, d] * p_j. The
          // masked step also holds one visibility mask per row vector: when
          // those do not fit beside valueGroup x rowVectors accumulators,
          // p and a broadcast (AVX2), the diagonal is a second pass over ot
          // with fewer head dims per group.
          int64_t dg = tl.valueGroup;
          int64_t maskedGroup = dg;
          while (maskedGroup > 1 &&
                 rv * maskedGroup + 2 * rv + 1 > registers - 1)
            --maskedGroup;
          if (!causal || maskedGroup == dg) {
            pvPass(dg, /*first=*/true, /*plain=*/true, /*diagonal=*/causal);
          } else {
            pvPass(dg, /*first=*/true, /*plain=*/true, /*diagonal=*/false);
            pvPass(maskedGroup, /*first=*/false, /*plain=*/false,
                   /*diagonal=*/true);
          }
          SmallVector<Value> next(mNew);
          for (int64_t r = 0; r < rv; ++r)
            next.push_back(fma(st[rv + r], c[r], sums[r]));
          return next;
        });
    // ot[d, :] *= (l > 0 ? 1 / l : 0), then row r of the block is column r.
    SmallVector<Value> inv;
    for (int64_t r = 0; r < rv; ++r) {
      Value l = state[rv + r];
      Value positive =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zeroV);
      inv.push_back(arith::SelectOp::create(
          b, loc, positive, arith::DivFOp::create(b, loc, cst(vec, 1.0), l),
          zeroV));
    }
    loop(idx(0), idx(d), 1, {}, [&](Value dd, ValueRange) {
      for (int64_t r = 0; r < rv; ++r)
        store(mul(load(ot, dd, r * width), inv[r]), ot, dd, r * width);
      return SmallVector<Value>();
    });
    AffineMap column = AffineMap::get(2, 0, b.getAffineDimExpr(0), ctx);
    return loop(idx(0), idx(rows), 1, {out},
                [&](Value r, ValueRange o) {
                  Value res = o[0];
                  for (int64_t i = 0; i < nVec; ++i) {
                    Value col = vector::TransferReadOp::create(
                        b, loc, vec, ot, ValueRange{idx(i * width), r}, zeroF,
                        column, ArrayRef<bool>{true});
                    res = vector::TransferWriteOp::create(
                              b, loc, col, res,
                              ValueRange{bIdx, addi(outT0, r), idx(0),
                                         idx(i * width)},
                              ArrayRef<bool>{true})
                              .getResult();
                  }
                  return SmallVector<Value>{res};
                })
        .front();
  }
};

/// Lowers one sdpa with the schedule `tiles` for a target of `registers`
/// vector registers.
struct LowerSDPA {
  codegen::AttentionTilesAttr config;
  int64_t registers;

  void rewrite(SDPAOp op, RewriterBase &rewriter) const {
    RankedTensorType qType = op.getQuery().getType();
    int64_t headDim = qType.getDimSize(3);
    Location loc = op.getLoc();
    // The kernel's vector width divides the head dim rounded up to 4 (a
    // head dim that 4 does not divide is zero-padded: zero columns add
    // nothing to q.k, and the padded output columns are dropped).
    int64_t d = llvm::alignTo(headDim, 4);
    int64_t width = config.getWidth();
    bool multiRow = config.getMultiRow();
    Value padZero;
    auto padHeadDim = [&](Value t) -> Value {
      if (d == headDim)
        return t;
      auto type = cast<RankedTensorType>(t.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[3] = d;
      if (!padZero)
        padZero = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getF32FloatAttr(0.0f));
      SmallVector<OpFoldResult> low(4, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> high = low;
      high[3] = rewriter.getIndexAttr(d - headDim);
      return tensor::PadOp::create(
          rewriter, loc, RankedTensorType::get(shape, type.getElementType()), t,
          low, high, padZero);
    };
    // K and V widened from 16-bit tensors (a bf16/f16 block's caches, after
    // transformer-compute-in-f32) are read as stored and widened in
    // registers: no f32 copy of the cache per step.
    auto narrowSource = [&](Value t) -> Value {
      auto ext = t.getDefiningOp<arith::ExtFOp>();
      if (d != headDim || !ext)
        return padHeadDim(t);
      Type elt = getElementTypeOrSelf(ext.getIn().getType());
      return elt.isBF16() || elt.isF16() ? ext.getIn() : t;
    };
    int64_t h = qType.getDimSize(2);
    int64_t group = h / op.getKey().getType().getDimSize(2);
    VectorType vec = VectorType::get({width}, rewriter.getF32Type());
    AttentionBuilder ab{{rewriter, loc},
                        padHeadDim(op.getQuery()),
                        narrowSource(op.getKey()),
                        narrowSource(op.getValue()),
                        width,
                        d,
                        d / width,
                        vec,
                        VectorType::get({width}, rewriter.getI32Type()),
                        {},
                        {},
                        {},
                        {},
                        {},
                        {},
                        {},
                        {},
                        op.getCausal()};
    ab.zeroF = ab.f32(0.0);
    ab.zeroV = arith::ConstantOp::create(rewriter, loc,
                                         DenseElementsAttr::get(vec, 0.0f));
    ab.negInf = ab.f32(-std::numeric_limits<float>::infinity());
    ab.negInfV = ab.splat(ab.negInf);
    ab.scale = ab.f32(op.getScaleOrDefault());
    ab.scaleV = ab.splat(ab.scale);

    Value bDim = tensor::DimOp::create(rewriter, loc, op.getQuery(), 0);
    Value tDim = tensor::DimOp::create(rewriter, loc, op.getQuery(), 1);
    ab.sDim = tensor::DimOp::create(rewriter, loc, ab.k, 1);
    ab.offset = arith::SubIOp::create(rewriter, loc, ab.sDim, tDim);
    ab.registers = registers;
    if (config.getPrefetchDistance() > 0) {
      // Read-only views of K and V (any layout: in a decode step they are
      // slices of the caches) for memref.prefetch.
      auto view = [&](Value t) -> Value {
        auto type = cast<RankedTensorType>(t.getType());
        auto layout = StridedLayoutAttr::get(
            rewriter.getContext(), ShapedType::kDynamic,
            SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic));
        return bufferization::ToBufferOp::create(
            rewriter, loc,
            MemRefType::get(type.getShape(), type.getElementType(), layout), t,
            /*readOnly=*/true);
      };
      ab.prefetchDistance = config.getPrefetchDistance();
      ab.prefetchLocality = config.getPrefetchLocality();
      ab.kBuf = view(ab.k);
      ab.vBuf = view(ab.v);
    }
    Value out = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, ab.q),
        rewriter.getF32Type());
    Value c0 = ab.idx(0);

    // Work items: (head, block of query rows), each writing its own
    // [B, rows, 1, D] slice of the output, in parallel (an scf.forall:
    // OpenMP threads). With the multi-row kernel a block is rowVectors x V
    // rows (the last one may be shorter); without, one block of all T rows.
    AttentionTiles tiles{config.getRowVectors(), config.getKeyGroup(),
                         config.getValueGroup(), config.getKeyTile(),
                         config.getQkUnroll()};
    int64_t blockRows = tiles.rowVectors * width;
    Value rowsPer = multiRow ? ab.idx(blockRows) : tDim;
    OpFoldResult numBlocks = rewriter.getIndexAttr(1);
    if (multiRow)
      numBlocks =
          arith::CeilDivUIOp::create(rewriter, loc, tDim, rowsPer).getResult();
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(h), numBlocks},
        ValueRange{out}, /*mapping=*/std::nullopt);
    OpBuilder::InsertionGuard forallGuard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    Value hIdx = forall.getInductionVar(0);
    Value t0 = arith::MulIOp::create(rewriter, loc, forall.getInductionVar(1),
                                     rowsPer);
    Value n = arith::MinSIOp::create(
        rewriter, loc, rowsPer, arith::SubIOp::create(rewriter, loc, tDim, t0));
    Value shared = forall.getRegionIterArgs()[0];
    SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(0), t0, hIdx,
                                         rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {bDim, n, rewriter.getIndexAttr(1),
                                       rewriter.getIndexAttr(d)};
    SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(rewriter, loc, shared, offsets,
                                                 sizes, strides);
    Value kvh = arith::DivUIOp::create(rewriter, loc, hIdx, ab.idx(group));
    // Scratch of the multi-row kernel, per work item: the transposed query
    // block, the transposed accumulator [D, rows] and the scores of a key
    // tile [keyTile, rows] (heap: a stack buffer would need an alloca scope
    // in the OpenMP region; the deallocation pipeline frees them).
    Value qt, ot, sb;
    if (multiRow) {
      auto alloc = [&](int64_t rows) -> Value {
        return memref::AllocaOp::create(
            rewriter, loc,
            MemRefType::get({rows, blockRows}, rewriter.getF32Type()),
            rewriter.getI64IntegerAttr(64));
      };
      qt = alloc(d);
      ot = alloc(d);
      sb = alloc(tiles.keyTile);
    }
    // Rows one at a time (a short last block; all rows without the
    // multi-row kernel; every row of a decode step), with the row's query
    // and accumulator in a [2, D] stack buffer.
    Value rowBuf = memref::AllocaOp::create(
        rewriter, loc, MemRefType::get({2, d}, rewriter.getF32Type()),
        rewriter.getI64IntegerAttr(64));
    auto singleRows = [&](Value res, Value bIdx) {
      return ab
          .loop(c0, n, 1, {res},
                [&](Value r, ValueRange o) {
                  return SmallVector<Value>{ab.singleRow(
                      o[0], rowBuf, bIdx, ab.addi(t0, r), r, hIdx, kvh)};
                })
          .front();
    };
    Value computed =
        ab.loop(c0, bDim, 1, {slice}, [&](Value bIdx, ValueRange o) {
            Value res = o[0];
            if (!multiRow)
              return SmallVector<Value>{singleRows(res, bIdx)};
            Value full = arith::CmpIOp::create(
                rewriter, loc, arith::CmpIPredicate::eq, n, rowsPer);
            auto ifOp =
                scf::IfOp::create(rewriter, loc, TypeRange{res.getType()}, full,
                                  /*withElseRegion=*/true);
            {
              OpBuilder::InsertionGuard guard(rewriter);
              rewriter.setInsertionPointToStart(ifOp.thenBlock());
              scf::YieldOp::create(rewriter, loc,
                                   ab.tiledBlock(res, qt, ot, sb, bIdx, t0, c0,
                                                 hIdx, kvh, tiles));
              rewriter.setInsertionPointToStart(ifOp.elseBlock());
              scf::YieldOp::create(rewriter, loc, singleRows(res, bIdx));
            }
            return SmallVector<Value>{ifOp.getResult(0)};
          }).front();
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, computed, shared,
                                          offsets, sizes, strides);
    blockc::cpu::setKernelKind(forall, blockc::codegen::KernelKind::attention);
    Value result = forall.getResult(0);
    if (d != headDim) {
      rewriter.setInsertionPointAfter(forall);
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(rewriter, loc, op.getQuery());
      result = tensor::ExtractSliceOp::create(
          rewriter, loc, op.getType(), result,
          SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(0)), sizes,
          SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(1)));
    }
    rewriter.replaceOp(op, result);
  }
};

struct CPULowerSDPAPass
    : blockc::cpu::impl::CPULowerSDPAPassBase<CPULowerSDPAPass> {
  using Base::Base;
  void runOnOperation() override {
    // Paged attention (ragged batches): one kernel, no tiles to choose.
    SmallVector<PagedSDPAOp> paged;
    getOperation().walk([&](PagedSDPAOp op) { paged.push_back(op); });
    IRRewriter pagedRewriter(&getContext());
    for (PagedSDPAOp op : paged) {
      blockc::cpu::lowerPagedSDPA(op, pagedRewriter);
      ++numLowered;
    }
    SmallVector<SDPAOp> ops;
    getOperation().walk([&](SDPAOp op) {
      RankedTensorType q = op.getQuery().getType();
      if (q.getElementType().isF32() && !q.isDynamicDim(3) &&
          op.getValue().getType().getDimSize(3) == q.getDimSize(3))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    FailureOr<int64_t> width = blockc::cpu::getTargetVectorWidth(
        getOperation(), "blockc-cpu-lower-sdpa");
    if (failed(width))
      return signalPassFailure();
    int64_t registers = getOperation()
                            ->getAttrOfType<codegen::CPUTargetAttr>(
                                codegen::CodegenDialect::kCpuTargetAttrName)
                            .getRegisters();
    IRRewriter rewriter(&getContext());
    for (SDPAOp op : ops) {
      auto config = op->getAttrOfType<codegen::AttentionTilesAttr>(
          codegen::CodegenDialect::kAttentionTilesAttrName);
      if (!config) {
        op.emitOpError() << "has no '"
                         << codegen::CodegenDialect::kAttentionTilesAttrName
                         << "' (run blockc-cpu-select-tiles first)";
        return signalPassFailure();
      }
      int64_t d = llvm::alignTo(op.getQuery().getType().getDimSize(3), 4);
      if (config.getWidth() > *width || d % config.getWidth() != 0) {
        op.emitOpError() << "attention_tiles width " << config.getWidth()
                         << " must divide the head dim rounded up to 4 (" << d
                         << ") and be at most the target's " << *width;
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(op);
      LowerSDPA{config, registers}.rewrite(op, rewriter);
      ++numLowered;
    }
  }
};

} // namespace
