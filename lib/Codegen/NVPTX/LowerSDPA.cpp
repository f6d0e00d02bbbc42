//===- LowerSDPA.cpp - fused online-softmax attention kernel for GPUs -----===//
//
// Replaces transformer.sdpa on tensors by one gpu.launch over buffers (the
// operands through bufferization.to_buffer, the result a fresh buffer
// returned through bufferization.to_tensor). See Codegen/NVPTX/Passes.td
// (GPULowerSDPAPass) for the mapping.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "blockc/Codegen/NVPTX/KernelBuilder.h"
#include "blockc/Codegen/NVPTX/KernelMatchers.h"
#include "blockc/Codegen/NVPTX/MmaFragments.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPULOWERSDPAPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using namespace blockc::transformer;

namespace {

constexpr int64_t kWarp = blockc::nvptx::kWarpSize;

/// `x` (f32) as its `elem` rounding and the `elem` rounding of the rest
/// (hi, lo): MMAs of both keep about f32's precision of `x`.
std::pair<Value, Value> splitHiLo(OpBuilder &b, Location loc, Type elem,
                                  Value x) {
  Value hi = arith::TruncFOp::create(b, loc, elem, x);
  Value rest = arith::SubFOp::create(
      b, loc, x, arith::ExtFOp::create(b, loc, b.getF32Type(), hi));
  return {hi, arith::TruncFOp::create(b, loc, elem, rest)};
}

struct SDPAKernel : blockc::nvptx::KernelBuilder {
  int64_t rowsPerWarp, warps, headDim, group;
  bool causal;
  double scale;
  /// The split-KV kernel's keys per split and most splits (see
  /// #blockc_codegen.gpu_attention).
  int64_t keysPerSplit, maxSplits;
  /// Warps per block of the split-KV kernel on tensor cores; 0 for the FMA
  /// kernel (see #blockc_codegen.gpu_attention).
  int64_t splitMmaWarps = 0;

  /// The sum of `v` over the 32 lanes of the warp, in every lane.
  Value warpSum(Value v) {
    return xorReduce(v, {16, 8, 4, 2, 1}, [&](Value x, Value y) {
      return arith::AddFOp::create(b, loc, x, y).getResult();
    });
  }

  /// `x` in f32 (the operands of a bf16 / f16 block are read in their own
  /// type and widened in registers).
  Value widen(Value x) {
    if (x.getType().isF32())
      return x;
    return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  }

  /// Lane `lane`'s elements lane, lane + 32, ... of query row (b, t, h),
  /// multiplied by `scaleF`.
  SmallVector<Value> loadScaledQuery(Value q, Value bIdx, Value t, Value hIdx,
                                     Value lane, Value scaleF) {
    SmallVector<Value> qs;
    for (int64_t i = 0; i < headDim / kWarp; ++i) {
      Value d = add(lane, idx(i * kWarp));
      Value x = widen(
          memref::LoadOp::create(b, loc, q, ValueRange{bIdx, t, hIdx, d}));
      qs.push_back(arith::MulFOp::create(b, loc, x, scaleF));
    }
    return qs;
  }

  /// Lane `lane`'s elements of key and value row (b, j, kvh): one coalesced
  /// load per 32 elements.
  void loadKeyValue(Value k, Value v, Value bIdx, Value j, Value kvh,
                    Value lane, SmallVector<Value> &ks,
                    SmallVector<Value> &vs) {
    for (int64_t i = 0; i < headDim / kWarp; ++i) {
      Value d = add(lane, idx(i * kWarp));
      ks.push_back(widen(
          memref::LoadOp::create(b, loc, k, ValueRange{bIdx, j, kvh, d})));
      vs.push_back(widen(
          memref::LoadOp::create(b, loc, v, ValueRange{bIdx, j, kvh, d})));
    }
  }

  /// The online-softmax state of one query row (m, l, then the lane's
  /// perLane accumulators) after key j with elements `ks` / `vs`: rescale by
  /// exp(m - m'), add p = exp(s - m'). A row that has seen no key yet (m =
  /// -inf) rescales by 0, never by exp(-inf - -inf) = NaN. When `keep` (key
  /// past the row's causal end) is set, the state is unchanged.
  void appendUpdate(ValueRange st, ArrayRef<Value> q, ArrayRef<Value> ks,
                    ArrayRef<Value> vs, Value keep, SmallVector<Value> &next) {
    appendScore(st, warpSum(dot(q, ks)), vs, keep, next);
  }

  /// The lane's share of q . k.
  Value dot(ArrayRef<Value> q, ArrayRef<Value> ks) {
    Value partial = f32(0.0);
    for (auto [x, y] : llvm::zip_equal(q, ks))
      partial = math::FmaOp::create(b, loc, x, y, partial);
    return partial;
  }

  /// appendUpdate with the key's score `s` already summed.
  void appendScore(ValueRange st, Value s, ArrayRef<Value> vs, Value keep,
                   SmallVector<Value> &next) {
    int64_t perLane = vs.size();
    Value zeroF = f32(0.0);
    Value negInf = f32(-std::numeric_limits<double>::infinity());
    Value m = st[0], l = st[1];
    Value mNew = arith::MaximumFOp::create(b, loc, m, s);
    Value first =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
    Value c = arith::SelectOp::create(
        b, loc, first, zeroF,
        math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, m, mNew)));
    Value p =
        math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, s, mNew));
    Value lNew = math::FmaOp::create(b, loc, l, c, p);
    auto pick = [&](Value updated, Value old) -> Value {
      return keep ? arith::SelectOp::create(b, loc, keep, old, updated)
                        .getResult()
                  : updated;
    };
    next.push_back(pick(mNew, m));
    next.push_back(pick(lNew, l));
    for (int64_t i = 0; i < perLane; ++i) {
      Value acc = arith::MulFOp::create(b, loc, st[2 + i], c);
      acc = math::FmaOp::create(b, loc, p, vs[i], acc);
      next.push_back(pick(acc, st[2 + i]));
    }
  }

  /// Emits the launch. q/k/v/out are buffers [B, T|S, H|Hkv, D].
  void buildRows(Value q, Value k, Value v, Value out) {
    Value c0 = idx(0), c1 = idx(1);
    Value bDim = memref::DimOp::create(b, loc, q, 0);
    Value tDim = memref::DimOp::create(b, loc, q, 1);
    Value hDim = memref::DimOp::create(b, loc, q, 2);
    Value sDim = memref::DimOp::create(b, loc, k, 1);
    int64_t tile = rowsPerWarp * warps;
    Value tiles = arith::CeilDivUIOp::create(b, loc, tDim, idx(tile));
    auto launch = gpu::LaunchOp::create(b, loc, tiles, hDim, bDim, idx(kWarp),
                                        idx(warps), c1);
    launch->setAttr(
        blockc::codegen::CodegenDialect::kKernelAttrName,
        blockc::codegen::KernelKindAttr::get(
            b.getContext(), blockc::codegen::KernelKind::fused_attention));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::KernelDim3 block = launch.getBlockIds(),
                    thread = launch.getThreadIds();
    Value lane = thread.x, hIdx = block.y, bIdx = block.z;
    // GQA/MQA: query head h reads kv head h / group, no copy of K/V.
    Value kvh = arith::DivUIOp::create(b, loc, hIdx, idx(group));
    Value row0 = add(mul(block.x, idx(tile)), mul(thread.y, idx(rowsPerWarp)));
    Value lastT = arith::SubIOp::create(b, loc, tDim, c1);
    Value offset = arith::SubIOp::create(b, loc, sDim, tDim); // S - T
    int64_t perLane = headDim / kWarp;

    // Each warp owns rowsPerWarp query rows; lane l holds elements
    // l, l + 32, ... of the (pre-scaled) query and of the accumulator.
    SmallVector<Value> rows, valid, keyEnd;
    SmallVector<SmallVector<Value>> qs(rowsPerWarp);
    Value scaleF = f32(scale);
    for (int64_t r = 0; r < rowsPerWarp; ++r) {
      Value t = add(row0, idx(r));
      rows.push_back(t);
      valid.push_back(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, t, tDim));
      Value tc = arith::MinUIOp::create(b, loc, t, lastT);
      qs[r] = loadScaledQuery(q, bIdx, tc, hIdx, lane, scaleF);
      // Row t sees keys j < t + (S - T) + 1 (bottom-right causal).
      if (causal) {
        Value end = add(add(t, offset), c1);
        end = arith::MinSIOp::create(b, loc, end, sDim);
        keyEnd.push_back(arith::MaxSIOp::create(b, loc, end, c0));
      }
    }
    // The warp visits keys up to the end of its last row: the keys above
    // the causal diagonal of the whole warp are never read.
    Value warpEnd = causal ? keyEnd.back() : sDim;

    Value negInf = f32(-std::numeric_limits<double>::infinity());
    Value zeroF = f32(0.0);
    // State per row: m, l, then perLane accumulators.
    int64_t stride = 2 + perLane;
    SmallVector<Value> init;
    for (int64_t r = 0; r < rowsPerWarp; ++r) {
      init.push_back(negInf);
      init.push_back(zeroF);
      init.append(perLane, zeroF);
    }
    SmallVector<Value> keys =
        loop(c0, warpEnd, c1, init, [&](Value j, ValueRange state) {
          // One coalesced load of key and value row j, shared by all rows.
          SmallVector<Value> ks, vs;
          loadKeyValue(k, v, bIdx, j, kvh, lane, ks, vs);
          SmallVector<Value> next;
          for (int64_t r = 0; r < rowsPerWarp; ++r) {
            Value keep;
            if (causal)
              keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, j,
                                           keyEnd[r]);
            appendUpdate(state.slice(r * stride, stride), qs[r], ks, vs, keep,
                         next);
          }
          return next;
        });

    // out = acc / l; a row without any visible key (l = 0) is 0.
    for (int64_t r = 0; r < rowsPerWarp; ++r) {
      auto ifOp = scf::IfOp::create(b, loc, valid[r], /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value l = keys[r * stride + 1];
      Value inv = reciprocalOrZero(l);
      for (int64_t i = 0; i < perLane; ++i) {
        Value d = add(lane, idx(i * kWarp));
        Value o = arith::MulFOp::create(b, loc, keys[r * stride + 2 + i], inv);
        storeRounded(o, out, ValueRange{bIdx, rows[r], hIdx, d});
      }
    }
    gpu::TerminatorOp::create(b, loc);
  }

  /// How the split-KV kernel spreads a key row over the lanes of a warp:
  /// `lanesPerKey` lanes read one row, each `chunks` runs of `width`
  /// consecutive elements (run c of the lane's slot g = lane % lanesPerKey
  /// starts at element (c lanesPerKey + g) width), so a warp reads 32 /
  /// lanesPerKey keys at a time. `width` is 16 bytes of the operands' type
  /// (8 for bf16 / f16, 4 for f32) when D / width is a power of two, else 1
  /// (element loads, 32 lanes per row).
  struct SplitLayout {
    int64_t width, lanesPerKey, chunks;
  };
  SplitLayout splitLayout(Type elem) const {
    int64_t w = 128 / elem.getIntOrFloatBitWidth();
    if (headDim % w == 0 && llvm::isPowerOf2_64(headDim / w)) {
      int64_t lanes = std::min(kWarp, headDim / w);
      return {w, lanes, headDim / (w * lanes)};
    }
    return {1, kWarp, headDim / kWarp};
  }

  /// Query heads one warp of the split-KV kernel attends for: the largest
  /// divisor of the GQA group up to kMaxHeadsPerWarp, which all read the
  /// same K and V rows (one load for all of them).
  static constexpr int64_t kMaxHeadsPerWarp = 4;
  int64_t headsPerWarp() const {
    for (int64_t n = std::min(group, kMaxHeadsPerWarp); n > 1; --n)
      if (group % n == 0)
        return n;
    return 1;
  }

  /// The lane's runs of row `at` (its last index replaced by each run's
  /// start) of `buffer`, widened to f32: one 16-byte `vector.load` per run
  /// through `view` when `vectors`, else element loads.
  SmallVector<Value> loadRuns(Value buffer, Value view, bool vectors,
                              SmallVector<Value> at, ArrayRef<Value> starts,
                              int64_t width) {
    SmallVector<Value> xs;
    for (Value start : starts) {
      at.back() = start;
      if (vectors && width > 1) {
        for (Value x : loadVector(view, at, width))
          xs.push_back(widen(x));
        continue;
      }
      for (int64_t i = 0; i < width; ++i) {
        at.back() = add(start, idx(i));
        xs.push_back(widen(memref::LoadOp::create(b, loc, buffer, at)));
      }
    }
    return xs;
  }

  /// One query row (T = 1, a decode step) per (batch, head), the keys split
  /// across blocks (flash-decoding): kernel 1 runs one warp per (split,
  /// heads, batch), `headsPerWarp` query heads of one GQA group, over a
  /// contiguous chunk of the S keys; each key row is read once for all of
  /// them, 32 / lanesPerKey rows per step (splitLayout), each slot of lanes
  /// with its own online-softmax state, merged over the warp at the end
  /// (xor shuffles). It writes the states (m, l) to a scratch buffer [B, H,
  /// maxSplits, 2] and the accumulators to [B, H, maxSplits, D]; kernel 2
  /// merges the splits of each (batch, head) with one warp. The kernel
  /// boundary is the only synchronisation (no barrier, no shared memory).
  /// splits = clamp(ceil(S / keysPerSplit), 1, maxSplits). q, k and v are
  /// read in their own type (f32, or the 16-bit type of a bf16 / f16 block)
  /// and widened in registers: with 16-byte vector loads where the run-time
  /// check of their layout holds (KernelBuilder::contiguousView), else by
  /// the same kernel with element loads.
  void buildSplitKV(Value q, Value k, Value v, Value out) {
    Value c0 = idx(0), c1 = idx(1);
    Value bDim = memref::DimOp::create(b, loc, q, 0);
    Value hDim = memref::DimOp::create(b, loc, q, 2);
    Value sDim = memref::DimOp::create(b, loc, k, 1);
    Type elem = cast<MemRefType>(q.getType()).getElementType();
    SplitLayout layout = splitLayout(elem);
    int64_t w = layout.width, lanesPerKey = layout.lanesPerKey;
    int64_t keysPerStep = kWarp / lanesPerKey;
    int64_t perLane = layout.chunks * w;
    int64_t heads = headsPerWarp();
    Value splits = arith::CeilDivUIOp::create(b, loc, sDim, idx(keysPerSplit));
    splits = arith::MaxUIOp::create(
        b, loc, arith::MinUIOp::create(b, loc, splits, idx(maxSplits)), c1);
    Value chunk = arith::CeilDivUIOp::create(b, loc, sDim, splits);
    auto scratch = [&](int64_t width) -> Value {
      auto type = MemRefType::get(
          {ShapedType::kDynamic, ShapedType::kDynamic, maxSplits, width},
          b.getF32Type());
      return memref::AllocOp::create(b, loc, type, ValueRange{bDim, hDim},
                                     b.getI64IntegerAttr(64));
    };
    Value stats = scratch(2), accs = scratch(headDim);
    auto markKernel = [&](gpu::LaunchOp launch) {
      launch->setAttr(
          blockc::codegen::CodegenDialect::kKernelAttrName,
          blockc::codegen::KernelKindAttr::get(
              b.getContext(), blockc::codegen::KernelKind::fused_attention));
    };
    Value negInf = f32(-std::numeric_limits<double>::infinity());
    Value zeroF = f32(0.0);
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value qv = q, kv = k, vv = v;
    if (w > 1) {
      qv = contiguousView(q, w, ok);
      kv = contiguousView(k, w, ok);
      vv = contiguousView(v, w, ok);
    }
    SmallVector<int32_t> slotOffsets, mergeOffsets;
    for (int64_t o = lanesPerKey / 2; o >= 1; o /= 2)
      slotOffsets.push_back(o);
    for (int64_t o = lanesPerKey; o < kWarp; o *= 2)
      mergeOffsets.push_back(o);

    // Kernel 1: the partial states.
    auto partials = [&](bool vectors) {
      auto launch = gpu::LaunchOp::create(
          b, loc, splits, arith::DivUIOp::create(b, loc, hDim, idx(heads)),
          bDim, idx(kWarp), c1, c1);
      markKernel(launch);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&launch.getBody().front());
      gpu::KernelDim3 block = launch.getBlockIds(),
                      thread = launch.getThreadIds();
      Value lane = thread.x, split = block.x, bIdx = block.z;
      Value h0 = mul(block.y, idx(heads));
      Value kvh = arith::DivUIOp::create(b, loc, h0, idx(group));
      Value slot = rem(lane, lanesPerKey), row = div(lane, lanesPerKey);
      SmallVector<Value> starts;
      for (int64_t c = 0; c < layout.chunks; ++c)
        starts.push_back(mul(add(idx(c * lanesPerKey), slot), idx(w)));
      // The single row t = 0 sees every key (causal with T = 1 is the last
      // row of the cache, bottom-right).
      Value lo = arith::MinUIOp::create(b, loc, mul(split, chunk), sDim);
      Value hi = arith::MinUIOp::create(b, loc, add(lo, chunk), sDim);
      Value last = arith::SubIOp::create(
          b, loc, arith::MaxUIOp::create(b, loc, hi, c1), c1);
      Value scaleF = f32(scale);
      SmallVector<SmallVector<Value>> qs;
      SmallVector<Value> init;
      for (int64_t hh = 0; hh < heads; ++hh) {
        SmallVector<Value> x = loadRuns(
            q, qv, vectors, {bIdx, c0, add(h0, idx(hh)), c0}, starts, w);
        for (Value &e : x)
          e = arith::MulFOp::create(b, loc, e, scaleF);
        qs.push_back(std::move(x));
        init.append({negInf, zeroF});
        init.append(perLane, zeroF);
      }
      int64_t stride = 2 + perLane;
      SmallVector<Value> state = loop(
          lo, hi, keysPerStep, init,
          [&](Value j0, ValueRange st) -> SmallVector<Value> {
            // The lane's key: row `row` of the step's keysPerStep; one past
            // hi reads the last key and leaves the state as it was.
            Value j = add(j0, row);
            Value keep =
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, j, hi);
            j = arith::MinUIOp::create(b, loc, j, last);
            SmallVector<Value> ks =
                loadRuns(k, kv, vectors, {bIdx, j, kvh, c0}, starts, w);
            SmallVector<Value> vs =
                loadRuns(v, vv, vectors, {bIdx, j, kvh, c0}, starts, w);
            SmallVector<Value> next;
            for (int64_t hh = 0; hh < heads; ++hh) {
              Value s = xorReduce(dot(qs[hh], ks), slotOffsets,
                                  [&](Value x, Value y) -> Value {
                                    return arith::AddFOp::create(b, loc, x, y);
                                  });
              appendScore(st.slice(hh * stride, stride), s, vs, keep, next);
            }
            return next;
          });
      // Merge the slots' states over the warp: M = max(m, m'), each side
      // scaled by exp(m - M) (0 for a side that saw no key).
      auto factor = [&](Value m, Value mMax) -> Value {
        Value empty =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
        return select(empty, zeroF,
                      math::ExpOp::create(
                          b, loc, arith::SubFOp::create(b, loc, m, mMax)));
      };
      auto shuffle = [&](Value x, int32_t offset) -> Value {
        return gpu::ShuffleOp::create(b, loc, x, offset, /*width=*/kWarp,
                                      gpu::ShuffleMode::XOR)
            .getShuffleResult();
      };
      for (int32_t offset : mergeOffsets)
        for (int64_t hh = 0; hh < heads; ++hh) {
          MutableArrayRef<Value> st(state.data() + hh * stride, stride);
          Value other = shuffle(st[0], offset);
          Value mMax = arith::MaximumFOp::create(b, loc, st[0], other);
          Value f = factor(st[0], mMax), g = factor(other, mMax);
          for (int64_t i = 1; i < stride; ++i) {
            Value x = shuffle(st[i], offset);
            st[i] = math::FmaOp::create(b, loc, st[i], f,
                                        arith::MulFOp::create(b, loc, x, g));
          }
          st[0] = mMax;
        }
      // Every lane stores m and l (the same values): no divergent store. The
      // lanes of the first row store the accumulators, 16 bytes at a time.
      Value firstRow = lt(lane, idx(lanesPerKey));
      for (int64_t hh = 0; hh < heads; ++hh) {
        Value h = add(h0, idx(hh));
        ArrayRef<Value> st(state.data() + hh * stride, stride);
        memref::StoreOp::create(b, loc, st[0], stats,
                                ValueRange{bIdx, h, split, c0});
        memref::StoreOp::create(b, loc, st[1], stats,
                                ValueRange{bIdx, h, split, c1});
        auto ifOp = scf::IfOp::create(b, loc, firstRow, /*withElse=*/false);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        for (int64_t c = 0; c < layout.chunks; ++c) {
          ArrayRef<Value> run = st.slice(2 + c * w, w);
          // 4 floats (16 bytes) per store.
          for (int64_t i = 0; i < w; i += std::min<int64_t>(w, 4)) {
            int64_t n = std::min<int64_t>(w, 4);
            SmallVector<Value> at = {bIdx, h, split, add(starts[c], idx(i))};
            if (n == 1)
              memref::StoreOp::create(b, loc, run[i], accs, at);
            else
              storeVector(run.slice(i, n), accs, at);
          }
        }
      }
      gpu::TerminatorOp::create(b, loc);
    };
    auto kernel1 = [&](bool vectors) {
      if (splitMmaWarps > 0)
        return buildSplitPartialsMma(q, k, v, qv, kv, vv, vectors, splits,
                                     chunk, stats, accs);
      partials(vectors);
    };
    if (w == 1) {
      kernel1(/*vectors=*/false);
    } else {
      auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      kernel1(/*vectors=*/true);
      b.setInsertionPointToStart(ifOp.elseBlock());
      kernel1(/*vectors=*/false);
    }

    // Kernel 2: merge. M = max m_s, L = sum l_s exp(m_s - M), acc likewise;
    // splits that saw no key (m_s = -inf) contribute nothing.
    {
      int64_t perMergeLane = headDim / kWarp;
      auto launch =
          gpu::LaunchOp::create(b, loc, c1, hDim, bDim, idx(kWarp), c1, c1);
      markKernel(launch);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&launch.getBody().front());
      gpu::KernelDim3 block = launch.getBlockIds(),
                      thread = launch.getThreadIds();
      Value lane = thread.x, hIdx = block.y, bIdx = block.z;
      auto maxLoop = scf::ForOp::create(
          b, loc, c0, splits, c1, ValueRange{negInf},
          [&](OpBuilder &nb, Location, Value sIdx, ValueRange state) {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            Value m = memref::LoadOp::create(b, loc, stats,
                                             ValueRange{bIdx, hIdx, sIdx, c0});
            scf::YieldOp::create(
                b, loc,
                ValueRange{arith::MaximumFOp::create(b, loc, state[0], m)});
          });
      Value mMax = maxLoop.getResult(0);
      SmallVector<Value> init = {zeroF};
      init.append(perMergeLane, zeroF);
      auto sumLoop = scf::ForOp::create(
          b, loc, c0, splits, c1, init,
          [&](OpBuilder &nb, Location, Value sIdx, ValueRange state) {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            Value ms = memref::LoadOp::create(b, loc, stats,
                                              ValueRange{bIdx, hIdx, sIdx, c0});
            Value ls = memref::LoadOp::create(b, loc, stats,
                                              ValueRange{bIdx, hIdx, sIdx, c1});
            Value empty = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OEQ, ms, negInf);
            Value factor = arith::SelectOp::create(
                b, loc, empty, zeroF,
                math::ExpOp::create(b, loc,
                                    arith::SubFOp::create(b, loc, ms, mMax)));
            SmallVector<Value> next = {
                math::FmaOp::create(b, loc, ls, factor, state[0])};
            for (int64_t i = 0; i < perMergeLane; ++i) {
              Value col = add(idx(i * kWarp), lane);
              Value as = memref::LoadOp::create(
                  b, loc, accs, ValueRange{bIdx, hIdx, sIdx, col});
              next.push_back(
                  math::FmaOp::create(b, loc, as, factor, state[1 + i]));
            }
            scf::YieldOp::create(b, loc, next);
          });
      Value l = sumLoop.getResult(0);
      Value inv = reciprocalOrZero(l);
      for (int64_t i = 0; i < perMergeLane; ++i) {
        Value d = add(lane, idx(i * kWarp));
        storeRounded(
            arith::MulFOp::create(b, loc, sumLoop.getResult(1 + i), inv), out,
            ValueRange{bIdx, c0, hIdx, d});
      }
      gpu::TerminatorOp::create(b, loc);
    }
    // The scratch buffers are released by the buffer deallocation pipeline.
  }

  /// The `n` elements of `buffer` at `at` (its last index the run's start),
  /// in their own type: one 16-byte `vector.load` through `view` when
  /// `vectors`, else element loads.
  SmallVector<Value> loadRun(Value buffer, Value view, bool vectors,
                             SmallVector<Value> at, int64_t n) {
    if (vectors)
      return loadVector(view, at, n);
    SmallVector<Value> xs;
    Value start = at.back();
    for (int64_t i = 0; i < n; ++i) {
      at.back() = add(start, idx(i));
      xs.push_back(memref::LoadOp::create(b, loc, buffer, at));
    }
    return xs;
  }

  /// Kernel 1 of buildSplitKV on tensor cores (split_mma_warps = W): grid
  /// (ceil(splits / W), H_kv, B), W warps a block, warp w of block x the
  /// split x W + w of one (batch, kv head) for all `group` (2 to 8) query
  /// heads of its GQA group, the rows of an m16n8k16 tile (rows past the
  /// group are zero and never stored). Per step of 16 keys: S = Q K^T as
  /// two n8 tiles (D / 16 MMAs each), the online softmax of the row (the
  /// quad of lanes of an accumulator row, KernelBuilder::onlineSoftmax),
  /// then O += P V with P from the S accumulators as the A fragment (split
  /// into its 16-bit rounding and that of the rest, as the prefill kernel
  /// does), D / 8 n8 tiles. No shared memory: every fragment is loaded
  /// from global memory by its lane, 16 bytes at a time. A dot product does
  /// not depend on the order of its terms, so the head dim of Q and K is
  /// permuted within each run of 32: lane (g, t4) loads elements 32 p +
  /// 8 t4 + [0, 8) of its key row (key 8 n + g of n8 tile n) and of its
  /// query row (head g), and k16 step 2 p + s takes elements 4 s + [0, 2)
  /// as its fragment columns 2 t4 + [0, 2) and 4 s + [2, 4) as 2 t4 + 8 +
  /// [0, 2). Likewise the output columns of P V are permuted: n8 tile n
  /// of O holds head-dim elements 64 (n / 8) + 8 c + n % 8 in its column c,
  /// so lane (g, t4) loads 8 consecutive elements 64 i + 8 g + [0, 8) of
  /// each of its 4 value rows (keys 2 t4 + [0, 2) and 8 + 2 t4 + [0, 2))
  /// and stores its accumulators as runs of 8 consecutive floats. A warp's
  /// request reads 8 key rows' 64 contiguous bytes (K) or 4 value rows'
  /// 128 (V): 16 full sectors. Keys past the split's end read its last key
  /// and are masked (probability 0).
  void buildSplitPartialsMma(Value q, Value k, Value v, Value qv, Value kv,
                             Value vv, bool vectors, Value splits, Value chunk,
                             Value stats, Value accs) {
    MLIRContext *ctx = b.getContext();
    Type elem = cast<MemRefType>(q.getType()).getElementType();
    int64_t warpsPerBlock = splitMmaWarps;
    Value c0 = idx(0), c1 = idx(1);
    Value bDim = memref::DimOp::create(b, loc, q, 0);
    Value kvDim = memref::DimOp::create(b, loc, k, 2);
    Value sDim = memref::DimOp::create(b, loc, k, 1);
    auto launch = gpu::LaunchOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, splits, idx(warpsPerBlock)),
        kvDim, bDim, idx(kWarp), idx(warpsPerBlock), c1);
    launch->setAttr(blockc::codegen::CodegenDialect::kKernelAttrName,
                    blockc::codegen::KernelKindAttr::get(
                        ctx, blockc::codegen::KernelKind::fused_attention));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::KernelDim3 block = launch.getBlockIds(),
                    thread = launch.getThreadIds();
    Value lane = thread.x, kvh = block.y, bIdx = block.z;
    Value split = add(mul(block.x, idx(warpsPerBlock)), thread.y);
    // A whole warp is past the last split or not (no divergence).
    when(lt(split, splits), [&] {
      Value g = div(lane, 4), t4 = rem(lane, 4);
      Value lo = arith::MinUIOp::create(b, loc, mul(split, chunk), sDim);
      Value hi = arith::MinUIOp::create(b, loc, add(lo, chunk), sDim);
      Value last = arith::SubIOp::create(
          b, loc, arith::MaxUIOp::create(b, loc, hi, c1), c1);
      // The lane's query head: g of the group, clamped into it (rows past
      // the group are zero in the A fragments).
      Value h0 = mul(kvh, idx(group));
      Value rowValid = lt(g, idx(group));
      Value head = add(h0, arith::MinUIOp::create(b, loc, g, idx(group - 1)));
      auto fragType = VectorType::get({4, 2}, elem);
      auto pairType = VectorType::get({2}, elem);
      auto accType = VectorType::get({2, 2}, b.getF32Type());
      Value zeroPair = blockc::nvptx::zeroVector(b, loc, pairType);
      Value zeroElem = arith::ConstantOp::create(b, loc, b.getZeroAttr(elem));
      auto pair = [&](Value x, Value y) -> Value {
        return vector::FromElementsOp::create(b, loc, pairType,
                                              ValueRange{x, y});
      };
      // An A fragment of row g only (rows g + 8 zero): registers 0 and 2.
      auto rowFragment = [&](Value r0, Value r2) -> Value {
        Value frag = blockc::nvptx::zeroVector(b, loc, fragType);
        frag = vector::InsertOp::create(b, loc, r0, frag, 0);
        frag = vector::InsertOp::create(b, loc, zeroPair, frag, 1);
        frag = vector::InsertOp::create(b, loc, r2, frag, 2);
        return vector::InsertOp::create(b, loc, zeroPair, frag, 3);
      };
      auto bFragment = [&](Value r0, Value r1) -> Value {
        auto type = VectorType::get({2, 2}, elem);
        Value frag = blockc::nvptx::zeroVector(b, loc, type);
        frag = vector::InsertOp::create(b, loc, r0, frag, 0);
        return vector::InsertOp::create(b, loc, r1, frag, 1);
      };
      int64_t runs = headDim / 32, oTiles = headDim / 8;
      // Q: run p of row g gives the A fragments of k16 steps 2p and 2p + 1.
      SmallVector<Value> qFrag;
      for (int64_t p = 0; p < runs; ++p) {
        Value start = add(idx(32 * p), mul(t4, idx(8)));
        SmallVector<Value> x =
            loadRun(q, qv, vectors, {bIdx, c0, head, start}, 8);
        for (Value &e : x)
          e = select(rowValid, e, zeroElem);
        for (int64_t s = 0; s < 2; ++s)
          qFrag.push_back(rowFragment(pair(x[4 * s], x[4 * s + 1]),
                                      pair(x[4 * s + 2], x[4 * s + 3])));
      }
      Value negInf = f32(-std::numeric_limits<double>::infinity());
      Value scaleF = f32(scale);
      Value keyLimit = arith::SubIOp::create(b, loc, hi, mul(t4, idx(2)));
      // State: m, l, then the O tiles.
      SmallVector<Value> init = {negInf, f32(0)};
      init.append(oTiles, blockc::nvptx::zeroVector(b, loc, accType));
      SmallVector<Value> state =
          loop(lo, hi, 16, init, [&](Value j0, ValueRange st) {
            // S tile n: keys j0 + 8n + [0, 8), the lane's key j0 + 8n + g.
            SmallVector<Value> sAcc;
            for (int64_t n = 0; n < 2; ++n) {
              Value key = arith::MinUIOp::create(
                  b, loc, add(j0, add(g, idx(8 * n))), last);
              Value acc = blockc::nvptx::zeroVector(b, loc, accType);
              for (int64_t p = 0; p < runs; ++p) {
                Value start = add(idx(32 * p), mul(t4, idx(8)));
                SmallVector<Value> x =
                    loadRun(k, kv, vectors, {bIdx, key, kvh, start}, 8);
                for (int64_t s = 0; s < 2; ++s)
                  acc = nvgpu::MmaSyncOp::create(
                      b, loc, qFrag[2 * p + s],
                      bFragment(pair(x[4 * s], x[4 * s + 1]),
                                pair(x[4 * s + 2], x[4 * s + 3])),
                      acc, ArrayRef<int64_t>{16, 8, 16});
              }
              sAcc.push_back(acc);
            }
            SmallVector<Value> next(st.begin(), st.end());
            SoftmaxStep step = onlineSoftmax(
                4,
                [&](int64_t r, int64_t kk) -> Value {
                  return vector::ExtractOp::create(
                      b, loc, sAcc[kk / 2], ArrayRef<int64_t>{r, kk % 2});
                },
                ArrayRef<Value>{keyLimit}, j0, scaleF,
                MutableArrayRef<Value>(next).take_front(2));
            ArrayRef<Value> prob = step.p[0];
            // P (one k16 step of 16 keys): column 2 t4 + c of S tile n is
            // fragment column 8 n + 2 t4 + c; split into hi + lo.
            SmallVector<Value> hiPairs, loPairs;
            for (int64_t n = 0; n < 2; ++n) {
              SmallVector<Value> hiE, loE;
              for (int64_t c = 0; c < 2; ++c) {
                auto [h, l] = splitHiLo(b, loc, elem, prob[2 * n + c]);
                hiE.push_back(h);
                loE.push_back(l);
              }
              hiPairs.push_back(pair(hiE[0], hiE[1]));
              loPairs.push_back(pair(loE[0], loE[1]));
            }
            Value pHi = rowFragment(hiPairs[0], hiPairs[1]);
            Value pLo = rowFragment(loPairs[0], loPairs[1]);
            // V: the lane's keys j0 + 2 t4 + [0, 2) and j0 + 8 + 2 t4 +
            // [0, 2) (the B fragment's k rows), 8 consecutive elements of
            // each per 64 of the head dim.
            SmallVector<Value> vKeys;
            for (int64_t i = 0; i < 4; ++i)
              vKeys.push_back(arith::MinUIOp::create(
                  b, loc,
                  add(j0, add(mul(t4, idx(2)), idx(8 * (i / 2) + i % 2))),
                  last));
            Value alpha = step.alpha[0];
            Value rowScale = vector::InsertOp::create(
                b, loc,
                vector::FromElementsOp::create(
                    b, loc, VectorType::get({2}, b.getF32Type()),
                    ValueRange{alpha, alpha}),
                blockc::nvptx::zeroVector(b, loc, accType), 0);
            for (int64_t i = 0; i < headDim / 64; ++i) {
              Value start = add(idx(64 * i), mul(g, idx(8)));
              SmallVector<SmallVector<Value>> x;
              for (Value key : vKeys)
                x.push_back(
                    loadRun(v, vv, vectors, {bIdx, key, kvh, start}, 8));
              for (int64_t e = 0; e < 8; ++e) {
                Value bFrag =
                    bFragment(pair(x[0][e], x[1][e]), pair(x[2][e], x[3][e]));
                Value &o = next[2 + 8 * i + e];
                o = arith::MulFOp::create(b, loc, o, rowScale);
                o = nvgpu::MmaSyncOp::create(b, loc, pHi, bFrag, o,
                                             ArrayRef<int64_t>{16, 8, 16});
                o = nvgpu::MmaSyncOp::create(b, loc, pLo, bFrag, o,
                                             ArrayRef<int64_t>{16, 8, 16});
              }
            }
            return next;
          });
      // The row's state: every lane of the quad holds m and l (the same
      // values); O tile 8 i + e column c is element 64 i + 8 (2 t4 + c) + e.
      when(rowValid, [&] {
        Value hIdx = add(h0, g);
        memref::StoreOp::create(b, loc, state[0], stats,
                                ValueRange{bIdx, hIdx, split, c0});
        memref::StoreOp::create(b, loc, state[1], stats,
                                ValueRange{bIdx, hIdx, split, c1});
        for (int64_t i = 0; i < headDim / 64; ++i)
          for (int64_t c = 0; c < 2; ++c) {
            SmallVector<Value> run;
            for (int64_t e = 0; e < 8; ++e)
              run.push_back(vector::ExtractOp::create(
                  b, loc, state[2 + 8 * i + e], ArrayRef<int64_t>{0, c}));
            Value start = add(idx(64 * i + 8 * c), mul(t4, idx(16)));
            for (int64_t half = 0; half < 2; ++half)
              storeVector(
                  ArrayRef<Value>(run).slice(4 * half, 4), accs,
                  ValueRange{bIdx, hIdx, split, add(start, idx(4 * half))});
          }
      });
    });
    gpu::TerminatorOp::create(b, loc);
  }

  /// Emits the attention: the split-KV kernel when T is 1 (a decode step),
  /// the row kernel otherwise; a dynamic T picks one at run time.
  void build(Value q, Value k, Value v, Value out, int64_t staticT) {
    if (staticT == 1)
      return buildSplitKV(q, k, v, out);
    if (!ShapedType::isDynamic(staticT))
      return buildRows(q, k, v, out);
    Value tDim = memref::DimOp::create(b, loc, q, 1);
    Value several =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, tDim, idx(1));
    auto ifOp = scf::IfOp::create(b, loc, several, /*withElse=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    buildRows(q, k, v, out);
    b.setInsertionPointToStart(ifOp.elseBlock());
    buildSplitKV(q, k, v, out);
  }
};

/// The FlashAttention-2-style kernel on tensor cores (see
/// GPUMmaAttentionAttr): q/k/v are 16-bit buffers [B, T|S, H|Hkv, D], out an
/// f32 buffer [B, T, H, D], or one of q's type (stores round: storeRounded).
struct MmaAttentionKernel : blockc::nvptx::KernelBuilder {
  int64_t warps, kvTile, headDim, group;
  bool causal;
  double scale;
  Type elem;

  Value zeroVector(VectorType type) {
    return blockc::nvptx::zeroVector(b, loc, type);
  }
  Value rowPair(Value v, int64_t r) {
    return blockc::nvptx::rowPair(b, loc, v, r);
  }
  /// Number of shared-memory stages of the K/V ring: the copy of tile j + 1
  /// is in flight while tile j is computed. (The loop commits and waits for
  /// the copies of one tile at its barrier: 2 stages exactly.)
  static constexpr int64_t kStages = 2;

  /// Calls `body(linear, e)` for linear = tid + e * threads below `total`
  /// (unrolled); the last round is guarded when `threads` does not divide
  /// `total`.
  void forEachOfThread(Value tid, int64_t threads, int64_t total,
                       function_ref<void(Value, int64_t)> body) {
    for (int64_t e = 0; e * threads < total; ++e) {
      Value linear = add(tid, idx(e * threads));
      if ((e + 1) * threads <= total) {
        body(linear, e);
        continue;
      }
      auto ifOp = scf::IfOp::create(b, loc, lt(linear, idx(total)), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      body(linear, e);
    }
  }

  /// Copies rows [row0, row0 + rows) of head `head` of `src` ([B, L, H, D],
  /// 16-bit) into `shared` [..., rows, D + 8] at `prefix` with scalar loads
  /// and stores; rows past `length` copy row `length - 1` (finite values:
  /// their scores are masked, their probabilities are 0 and their outputs
  /// are not stored). Consecutive threads copy consecutive elements of a
  /// row. Unrolled, or else a loop (a compact slow path that keeps no
  /// loaded values live).
  void loadTile(Value src, Value bIdx, Value length, Value row0, Value head,
                int64_t rows, Value tid, int64_t threads, Value shared,
                ValueRange prefix = {}, bool unrolled = true) {
    Value last = arith::SubIOp::create(b, loc, length, idx(1));
    auto copy = [&](Value linear) {
      Value r = div(linear, headDim), d = rem(linear, headDim);
      Value rowC = arith::MinUIOp::create(b, loc, add(row0, r), last);
      Value x =
          memref::LoadOp::create(b, loc, src, ValueRange{bIdx, rowC, head, d});
      SmallVector<Value> at(prefix);
      at.append({r, d});
      memref::StoreOp::create(b, loc, x, shared, at);
    };
    if (unrolled)
      return forEachOfThread(tid, threads, rows * headDim,
                             [&](Value linear, int64_t) { copy(linear); });
    scf::ForOp::create(
        b, loc, tid, idx(rows * headDim), idx(threads), ValueRange{},
        [&](OpBuilder &nb, Location, Value linear, ValueRange) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          copy(linear);
          scf::YieldOp::create(b, loc);
        });
  }

  /// Whether 16-byte cp.async can read rows of `src` ([B, L, H, D], 16-bit,
  /// any strided layout): a unit stride in d, the offset and the other
  /// strides multiples of 8 elements, and a 16-byte aligned base, so that
  /// every 8-element chunk of a row (D is a multiple of 16) starts on 16
  /// bytes. Sets `view` to `src` with its unit stride made static (the
  /// copy's verifier requires it); it is only read where the check holds.
  Value copyable(Value src, Value &view) {
    auto type = cast<MemRefType>(src.getType());
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, src);
    auto eq = [&](Value x, int64_t c) -> Value {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, idx(c));
    };
    Value bits = meta.getOffset();
    for (int64_t i = 0; i < 3; ++i)
      bits = arith::OrIOp::create(b, loc, bits, meta.getStrides()[i]);
    Value ok = arith::AndIOp::create(b, loc, eq(meta.getStrides()[3], 1),
                                     eq(rem(bits, 8), 0));
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, src);
    ok = arith::AndIOp::create(b, loc, ok, eq(rem(base, 16), 0));
    SmallVector<int64_t> strides(4, ShapedType::kDynamic);
    strides[3] = 1;
    auto viewType = MemRefType::get(
        type.getShape(), type.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides),
        type.getMemorySpace());
    SmallVector<OpFoldResult> sizes, strideValues;
    for (int64_t i = 0; i < 4; ++i) {
      sizes.push_back(type.isDynamicDim(i)
                          ? OpFoldResult(meta.getSizes()[i])
                          : OpFoldResult(b.getIndexAttr(type.getDimSize(i))));
      strideValues.push_back(i == 3 ? OpFoldResult(b.getIndexAttr(1))
                                    : OpFoldResult(meta.getStrides()[i]));
    }
    view = memref::ReinterpretCastOp::create(
        b, loc, viewType, src, meta.getOffset(), sizes, strideValues);
    return ok;
  }

  /// Issues 16-byte cp.async copies of rows [row0, row0 + rows) of head
  /// `head` of `src` (a `copyable` view) into `shared` [..., rows, D + 8]
  /// at `prefix`: consecutive threads copy consecutive 16-byte chunks of a
  /// row. Rows past `length` are zero-filled (source size 0, from the
  /// clamped row `length - 1`). The copies are committed by the next
  /// `workgroup_barrier {cp_async_wait}` (their tokens are unused).
  void copyTile(Value src, Value bIdx, Value length, Value row0, Value head,
                int64_t rows, Value tid, int64_t threads, Value shared,
                ValueRange prefix) {
    constexpr int64_t chunk = 8; // 16 bytes of a 16-bit type
    int64_t chunksPerRow = headDim / chunk;
    Value last = arith::SubIOp::create(b, loc, length, idx(1));
    auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    // When whole rows of chunks fit in one round of threads, a thread's
    // chunks share their column and step by threads / chunksPerRow rows.
    bool sameColumn = threads % chunksPerRow == 0;
    Value r0 = div(tid, chunksPerRow);
    Value d0 = mul(rem(tid, chunksPerRow), idx(chunk));
    forEachOfThread(
        tid, threads, rows * chunksPerRow, [&](Value linear, int64_t e) {
          Value r = sameColumn ? add(r0, idx(e * (threads / chunksPerRow)))
                               : div(linear, chunksPerRow);
          Value d =
              sameColumn ? d0 : mul(rem(linear, chunksPerRow), idx(chunk));
          Value row = add(row0, r);
          Value rowC = arith::MinUIOp::create(b, loc, row, last);
          Value srcElements = arith::SelectOp::create(b, loc, lt(row, length),
                                                      idx(chunk), idx(0));
          SmallVector<Value> at(prefix);
          at.append({r, d});
          nvgpu::DeviceAsyncCopyOp::create(b, loc, tokenType, shared, at, src,
                                           ValueRange{bIdx, rowC, head, d},
                                           b.getIndexAttr(chunk), srcElements,
                                           b.getUnitAttr());
        });
  }

  void build(Value q, Value k, Value v, Value out) {
    MLIRContext *ctx = b.getContext();
    int64_t rows = 16 * warps, threads = kWarp * warps;
    int64_t rowElems = headDim + 8; // padded against ldmatrix conflicts
    int64_t dFrags = headDim / 16, sTiles = kvTile / 8, oTiles = headDim / 8;
    Value c0 = idx(0), c1 = idx(1);
    Value bDim = memref::DimOp::create(b, loc, q, 0);
    Value tDim = memref::DimOp::create(b, loc, q, 1);
    Value hDim = memref::DimOp::create(b, loc, q, 2);
    Value sDim = memref::DimOp::create(b, loc, k, 1);
    auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    // Shared memory: the K/V ring [stage][K | V][key][d] (rows padded by 16
    // bytes), and the block's query rows over the last stage, which the
    // loop first fills after every warp has read Q into registers.
    int64_t qBytes = rows * rowElems * 2, kvBytes = kvTile * rowElems * 2;
    int64_t stageBytes = 2 * kvBytes, qOffset = (kStages - 1) * stageBytes;
    int64_t sharedBytes = std::max(kStages * stageBytes, qOffset + qBytes);
    auto launch = gpu::LaunchOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, tDim, idx(rows)), hDim, bDim,
        idx(threads), c1, c1,
        arith::ConstantIntOp::create(b, loc, sharedBytes, 32));
    launch->setAttr(blockc::codegen::CodegenDialect::kKernelAttrName,
                    blockc::codegen::KernelKindAttr::get(
                        ctx, blockc::codegen::KernelKind::mma_attention));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value base = dynamicSharedMemory();
    Value kvS = memref::ViewOp::create(
        b, loc,
        MemRefType::get({kStages, 2, kvTile, rowElems}, elem,
                        MemRefLayoutAttrInterface(), wg),
        base, c0, ValueRange{});
    Value qS =
        memref::ViewOp::create(b, loc,
                               MemRefType::get({rows, rowElems}, elem,
                                               MemRefLayoutAttrInterface(), wg),
                               base, idx(qOffset), ValueRange{});
    gpu::KernelDim3 block = launch.getBlockIds();
    Value tid = launch.getThreadIds().x;
    Value warp = div(tid, kWarp), lane = rem(tid, kWarp);
    Value g = div(lane, 4), t4 = rem(lane, 4);
    Value quad = div(lane, 8), r8 = rem(lane, 8);
    Value hIdx = block.y, bIdx = block.z;
    Value kvh = arith::DivUIOp::create(b, loc, hIdx, idx(group));
    Value t0 = mul(block.x, idx(rows));
    Value offset = arith::SubIOp::create(b, loc, sDim, tDim); // S - T

    // Keys up to the causal end of the block's last row.
    Value kvEnd = sDim;
    if (causal) {
      Value end = add(add(t0, idx(rows)), offset);
      end = arith::MaxSIOp::create(
          b, loc, arith::MinSIOp::create(b, loc, end, sDim), c0);
      kvEnd = end;
    }
    Value numTiles = arith::CeilDivUIOp::create(b, loc, kvEnd, idx(kvTile));

    // K and V tiles go by 16-byte cp.async when both operands' layouts
    // allow it (a run-time check, uniform over the grid: bufferization may
    // give them any strides), else by the scalar loads.
    Value kView, vView;
    Value aligned =
        arith::AndIOp::create(b, loc, copyable(k, kView), copyable(v, vView));
    // Starts loading key tile `tile` (if there is one) into its stage.
    auto issue = [&](Value tile) {
      auto inRange = scf::IfOp::create(b, loc, lt(tile, numTiles), false);
      OpBuilder::InsertionGuard g1(b);
      b.setInsertionPointToStart(inRange.thenBlock());
      Value stage = rem(tile, kStages);
      Value j0 = mul(tile, idx(kvTile));
      auto path = scf::IfOp::create(b, loc, aligned, /*withElse=*/true);
      b.setInsertionPointToStart(path.thenBlock());
      copyTile(kView, bIdx, sDim, j0, kvh, kvTile, tid, threads, kvS,
               ValueRange{stage, c0});
      copyTile(vView, bIdx, sDim, j0, kvh, kvTile, tid, threads, kvS,
               ValueRange{stage, c1});
      b.setInsertionPointToStart(path.elseBlock());
      loadTile(k, bIdx, sDim, j0, kvh, kvTile, tid, threads, kvS,
               ValueRange{stage, c0}, /*unrolled=*/false);
      loadTile(v, bIdx, sDim, j0, kvh, kvTile, tid, threads, kvS,
               ValueRange{stage, c1}, /*unrolled=*/false);
    };
    // Warm-up: tile 0 in flight while Q is loaded.
    issue(c0);

    // Q: the block's rows in shared memory, then each warp's 16 rows as A
    // fragments (one ldmatrix.x4 per k16 of the head dim), kept in
    // registers for the whole key loop. The copy is a loop: unrolled, its
    // loads (64 a thread at head dim 128) cost registers across the key loop
    // (ptxas 13.0, head dim 128, 64-key tiles: 336 -> 0 bytes of spills on
    // sm_80, 92 -> 44 on sm_90a; docs/GPU.md).
    loadTile(q, bIdx, tDim, t0, hIdx, rows, tid, threads, qS, {},
             /*unrolled=*/false);
    blockc::codegen::WorkgroupBarrierOp::create(b, loc);
    auto fragType = VectorType::get({4, 2}, elem);
    Value aRow = add(add(mul(warp, idx(16)), r8), mul(rem(quad, 2), idx(8)));
    Value aCol = mul(div(quad, 2), idx(8));
    SmallVector<Value> qFrag;
    for (int64_t kd = 0; kd < dFrags; ++kd)
      qFrag.push_back(nvgpu::LdMatrixOp::create(
          b, loc, fragType, qS, ValueRange{aRow, add(aCol, idx(16 * kd))},
          /*transpose=*/false, /*numTiles=*/4));

    // This thread's rows g and g + 8 of its warp's 16.
    Value rowBase = add(add(t0, mul(warp, idx(16))), g);
    SmallVector<Value> qRows = {rowBase, add(rowBase, idx(8))};
    // Row t sees keys below min(S, t + S - T + 1) (signed: bottom-right
    // causal, none when t + S - T < 0); less 2 t4, the first key of this
    // thread's accumulator columns.
    SmallVector<Value> keyLimit;
    for (Value t : qRows) {
      Value limit = sDim;
      if (causal)
        limit =
            arith::MinSIOp::create(b, loc, sDim, add(add(t, offset), idx(1)));
      keyLimit.push_back(arith::SubIOp::create(b, loc, limit, mul(t4, idx(2))));
    }

    Value negInf = f32(-std::numeric_limits<double>::infinity());
    auto accType = VectorType::get({2, 2}, b.getF32Type());
    // State: m (2 rows), l (2 rows), O accumulators (head dim / 8).
    SmallVector<Value> init = {negInf, negInf, f32(0), f32(0)};
    init.append(oTiles, zeroVector(accType));
    // B operand addresses: K stored [key][d] is B = K^T ([n][k]); V stored
    // [key][d] is B = V ([k][n]), loaded transposed.
    Value kRow = add(r8, mul(div(lane, 16), idx(8)));
    Value kCol = mul(rem(quad, 2), idx(8));
    Value vRow = add(r8, mul(rem(quad, 2), idx(8)));
    Value vCol = mul(div(lane, 16), idx(8));
    Value scaleF = f32(scale);
    auto loop = scf::ForOp::create(
        b, loc, c0, numTiles, c1, init,
        [&](OpBuilder &nb, Location, Value jt, ValueRange state) {
          OpBuilder::InsertionGuard g2(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value j0 = mul(jt, idx(kvTile));
          // This thread's copies of tile jt are committed and have landed,
          // then one barrier: all threads' copies are visible and every
          // warp is past tile jt - 1, whose stage is refilled with tile
          // jt + 1 while jt is computed. (The copies' group is committed
          // here, not where they are issued: the issue is in a branch, and
          // nvgpu's commit and wait declare no memory effects, which the
          // buffer deallocation after this pass rejects.)
          blockc::codegen::WorkgroupBarrierOp::create(
              b, loc, b.getI32IntegerAttr(kStages - 2));
          issue(add(jt, idx(kStages - 1)));
          Value stage = rem(jt, kStages);

          // S = Q K^T (f32 accumulators, kvTile / 8 m16n8 tiles).
          SmallVector<Value> sAcc(sTiles, zeroVector(accType));
          for (int64_t kd = 0; kd < dFrags; ++kd)
            for (int64_t jp = 0; jp < kvTile / 16; ++jp) {
              Value frag = nvgpu::LdMatrixOp::create(
                  b, loc, fragType, kvS,
                  ValueRange{stage, c0, add(kRow, idx(16 * jp)),
                             add(kCol, idx(16 * kd))},
                  /*transpose=*/false, /*numTiles=*/4);
              for (int64_t h = 0; h < 2; ++h)
                sAcc[2 * jp + h] = nvgpu::MmaSyncOp::create(
                    b, loc, qFrag[kd], rowPair(frag, 2 * h), sAcc[2 * jp + h],
                    ArrayRef<int64_t>{16, 8, 16});
            }

          // Scale, mask (past S, above the causal diagonal) and the online
          // softmax of rows g and g + 8: element (n, c) is key
          // j0 + 2 t4 + 8n + c, visible when 8n + c < keyLimit[r] - j0.
          SmallVector<Value> next(state.begin(), state.end());
          SoftmaxStep step = onlineSoftmax(
              2 * sTiles,
              [&](int64_t r, int64_t k) -> Value {
                return vector::ExtractOp::create(b, loc, sAcc[k / 2],
                                                 ArrayRef<int64_t>{r, k % 2});
              },
              keyLimit, j0, scaleF, MutableArrayRef<Value>(next).take_front(4));
          SmallVector<SmallVector<Value>> &p = step.p;
          SmallVector<Value> &alpha = step.alpha;
          // O *= alpha per row.
          Value a0 = alpha[0], a1 = alpha[1];
          auto rowType = VectorType::get({2}, b.getF32Type());
          Value scaleRows = zeroVector(accType);
          scaleRows =
              vector::InsertOp::create(b, loc,
                                       vector::FromElementsOp::create(
                                           b, loc, rowType, ValueRange{a0, a0}),
                                       scaleRows, 0);
          scaleRows =
              vector::InsertOp::create(b, loc,
                                       vector::FromElementsOp::create(
                                           b, loc, rowType, ValueRange{a1, a1}),
                                       scaleRows, 1);
          SmallVector<Value> acc;
          for (int64_t n = 0; n < oTiles; ++n)
            acc.push_back(
                arith::MulFOp::create(b, loc, state[4 + n], scaleRows));

          // P as A fragments straight from the S accumulators (FA2): k16
          // step kk takes S tiles 2kk and 2kk + 1. P is split into its
          // 16-bit rounding and the 16-bit rounding of the rest, so that
          // P V keeps the probabilities' f32 precision (two MMAs per n8
          // tile of O: one rounding of P alone moves the block's RMS error
          // past the bf16 / f16 tolerance, see docs/GPU.md).
          auto pairType = VectorType::get({2}, elem);
          for (int64_t kk = 0; kk < kvTile / 16; ++kk) {
            Value pHi = zeroVector(fragType), pLo = zeroVector(fragType);
            for (int64_t part = 0; part < 2; ++part)
              for (int64_t r = 0; r < 2; ++r) {
                int64_t n = 2 * kk + part;
                SmallVector<Value> hi, lo;
                for (int64_t c = 0; c < 2; ++c) {
                  auto [h, l] = splitHiLo(b, loc, elem, p[r][2 * n + c]);
                  hi.push_back(h);
                  lo.push_back(l);
                }
                pHi = vector::InsertOp::create(
                    b, loc,
                    vector::FromElementsOp::create(b, loc, pairType, hi), pHi,
                    2 * part + r);
                pLo = vector::InsertOp::create(
                    b, loc,
                    vector::FromElementsOp::create(b, loc, pairType, lo), pLo,
                    2 * part + r);
              }
            for (int64_t dn = 0; dn < headDim / 16; ++dn) {
              Value frag = nvgpu::LdMatrixOp::create(
                  b, loc, fragType, kvS,
                  ValueRange{stage, c1, add(vRow, idx(16 * kk)),
                             add(vCol, idx(16 * dn))},
                  /*transpose=*/true, /*numTiles=*/4);
              for (int64_t h = 0; h < 2; ++h) {
                Value bFrag = rowPair(frag, 2 * h);
                Value &o = acc[2 * dn + h];
                o = nvgpu::MmaSyncOp::create(b, loc, pHi, bFrag, o,
                                             ArrayRef<int64_t>{16, 8, 16});
                o = nvgpu::MmaSyncOp::create(b, loc, pLo, bFrag, o,
                                             ArrayRef<int64_t>{16, 8, 16});
              }
            }
          }
          for (int64_t n = 0; n < oTiles; ++n)
            next[4 + n] = acc[n];
          scf::YieldOp::create(b, loc, next);
        });

    // out = O / l; a row without any visible key (l = 0) is 0.
    blockc::nvptx::storeAttentionRows(
        *this, out, bIdx, hIdx, qRows, tDim, loop.getResults().slice(2, 2),
        2 * oTiles, [&](int64_t r, int64_t i) {
          int64_t n = i / 2, c = i % 2;
          Value d = add(idx(8 * n + c), mul(t4, idx(2)));
          Value o = vector::ExtractOp::create(b, loc, loop.getResult(4 + n),
                                              ArrayRef<int64_t>{r, c});
          return std::make_pair(o, d);
        });
    gpu::TerminatorOp::create(b, loc);
  }
};

/// A memref type for `type` with a fully dynamic strided layout, so that
/// the kernel reads any buffer bufferization assigns to the tensor.
MemRefType anyLayout(RankedTensorType type) {
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, strides);
  return MemRefType::get(type.getShape(), type.getElementType(), layout);
}

struct GPULowerSDPAPass
    : blockc::nvptx::impl::GPULowerSDPAPassBase<GPULowerSDPAPass> {
  using Base::Base;

  void runOnOperation() override {
    // Other head sizes keep the generic linalg lowering.
    struct Work {
      SDPAOp op;
      blockc::codegen::GPUAttentionAttr simt;
      blockc::codegen::GPUMmaAttentionAttr mma;
    };
    SmallVector<Work> ops;
    WalkResult walk =
        getOperation().walk([&](SDPAOp op) {
          auto mma = op->getAttrOfType<blockc::codegen::GPUMmaAttentionAttr>(
              blockc::codegen::CodegenDialect::kGpuMmaAttentionAttrName);
          if (mma && !blockc::nvptx::getTensorCoreAttentionType(op)) {
            op.emitOpError()
                << "has '"
                << blockc::codegen::CodegenDialect::kGpuMmaAttentionAttrName
                << "' but its query, key and value are not widened from one "
                   "16-bit type with a head dim that is a multiple of 16";
            return WalkResult::interrupt();
          }
          if (mma && mma.getWarpgroup()) {
            int64_t d = op.getQuery().getType().getDimSize(3);
            if (d % 64 != 0 || d > 256) {
              op.emitOpError()
                  << "has a warpgroup '"
                  << blockc::codegen::CodegenDialect::kGpuMmaAttentionAttrName
                  << "' but a head dim of " << d
                  << " (the warpgroup kernel needs a multiple of 64 up to "
                     "256)";
              return WalkResult::interrupt();
            }
          }
          auto simt = op->getAttrOfType<blockc::codegen::GPUAttentionAttr>(
              blockc::codegen::CodegenDialect::kGpuAttentionAttrName);
          bool simtCandidate = blockc::nvptx::isFusedAttentionCandidate(op);
          if (simtCandidate && !simt && !mma) {
            op.emitOpError()
                << "has no '"
                << blockc::codegen::CodegenDialect::kGpuAttentionAttrName
                << "' (run blockc-gpu-select-tiles first)";
            return WalkResult::interrupt();
          }
          if (!simtCandidate)
            simt = {};
          if (simt && simt.getSplitMmaWarps() > 0 &&
              !blockc::nvptx::isSplitKVMmaCandidate(op)) {
            op.emitOpError()
                << "has a '"
                << blockc::codegen::CodegenDialect::kGpuAttentionAttrName
                << "' with split_mma_warps = " << simt.getSplitMmaWarps()
                << " but is not a GQA group of 2 to 8 query heads widened "
                   "from one 16-bit type with a head dim of 64 or 128 (use "
                   "split_mma_warps = 0)";
            return WalkResult::interrupt();
          }
          if (simt || mma)
            ops.push_back({op, simt, mma});
          return WalkResult::advance();
        });
    if (walk.wasInterrupted())
      return signalPassFailure();
    OpBuilder b(&getContext());
    for (const Work &work : ops) {
      // Plain copies: lambdas below capture them.
      SDPAOp op = work.op;
      blockc::codegen::GPUAttentionAttr simt = work.simt;
      blockc::codegen::GPUMmaAttentionAttr mma = work.mma;
      RankedTensorType qType = op.getQuery().getType();
      int64_t d = qType.getDimSize(3);
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      // One read-only buffer per tensor, shared by the kernels built here.
      llvm::SmallDenseMap<Value, Value> buffers;
      auto buffer = [&](Value t) -> Value {
        Value &m = buffers[t];
        if (!m) {
          auto type = cast<RankedTensorType>(t.getType());
          m = bufferization::ToBufferOp::create(b, loc, anyLayout(type), t,
                                                /*read_only=*/true);
        }
        return m;
      };
      // The SIMT kernels read the operands of a bf16 / f16 block in that
      // type and widen them in registers: the f32 copies that
      // transformer-compute-in-f32's widenings would otherwise become are
      // never made.
      Type narrowType = blockc::nvptx::getWidenedAttentionType(op);
      auto simtOperand = [&](Value t) -> Value {
        if (narrowType)
          t = t.getDefiningOp<arith::ExtFOp>().getIn();
        return buffer(t);
      };
      SmallVector<Value> dynSizes;
      Value qm = simtOperand(op.getQuery()), km, vm;
      if (simt) {
        km = simtOperand(op.getKey());
        vm = simtOperand(op.getValue());
      }
      for (int64_t i = 0; i < qType.getRank(); ++i)
        if (qType.isDynamicDim(i))
          dynSizes.push_back(memref::DimOp::create(b, loc, qm, i));
      // When the result's only use rounds it (a bf16 / f16 block), the
      // kernels store the rounded values and the rounding goes.
      auto rounding = op->hasOneUse()
                          ? dyn_cast<arith::TruncFOp>(*op->getUsers().begin())
                          : arith::TruncFOp();
      if (rounding && (rounding.getRoundingmodeAttr() ||
                       !isa<RankedTensorType>(rounding.getType()) ||
                       (!getElementTypeOrSelf(rounding.getType()).isBF16() &&
                        !getElementTypeOrSelf(rounding.getType()).isF16())))
        rounding = {};
      Type outElem = rounding ? getElementTypeOrSelf(rounding.getType())
                              : qType.getElementType();
      auto outType = MemRefType::get(qType.getShape(), outElem);
      Value out = memref::AllocOp::create(b, loc, outType, dynSizes);
      int64_t h = qType.getDimSize(2);
      int64_t group = h / op.getKey().getType().getDimSize(2);
      int64_t staticT = qType.getDimSize(1);
      auto simtKernel = [&](bool splitOnly) {
        SDPAKernel kernel{{b, loc},
                          simt.getRowsPerWarp(),
                          simt.getWarps(),
                          d,
                          group,
                          op.getCausal(),
                          op.getScaleOrDefault(),
                          simt.getKeysPerSplit(),
                          simt.getMaxSplits(),
                          simt.getSplitMmaWarps()};
        if (splitOnly)
          kernel.buildSplitKV(qm, km, vm, out);
        else
          kernel.build(qm, km, vm, out, staticT);
      };
      auto mmaKernel = [&]() {
        // The 16-bit tensors the operands widen (exact).
        auto narrow = [&](Value v) {
          return buffer(v.getDefiningOp<arith::ExtFOp>().getIn());
        };
        MmaAttentionKernel kernel{
            {b, loc},
            mma.getWarps(),
            // The warpgroup kernel's mma.sync fallback may take its own
            // key tile.
            mma.getWarpgroup() && mma.getFallbackKvTile() != 0
                ? mma.getFallbackKvTile()
                : mma.getKvTile(),
            d,
            group,
            op.getCausal(),
            op.getScaleOrDefault(),
            getElementTypeOrSelf(
                op.getQuery().getDefiningOp<arith::ExtFOp>().getIn())};
        Value nq = narrow(op.getQuery()), nk = narrow(op.getKey()),
              nv = narrow(op.getValue());
        if (!mma.getWarpgroup())
          return kernel.build(nq, nk, nv, out);
        // The warpgroup kernel reads q, k and v by TMA: where a layout does
        // not allow it (checked on the host: a unit innermost stride, 16-byte
        // strides, offset and base), the mma.sync kernel runs instead. The
        // kernel itself is built after the buffer deallocation
        // (blockc-gpu-lower-warpgroup-attention).
        Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
        Value vq = kernel.contiguousView(nq, 8, ok);
        Value vk = kernel.contiguousView(nk, 8, ok);
        Value vv = kernel.contiguousView(nv, 8, ok);
        auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/true);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        blockc::codegen::WarpgroupAttentionOp::create(
            b, loc, vq, vk, vv, out,
            op.getCausal() ? b.getUnitAttr() : UnitAttr(),
            b.getF64FloatAttr(op.getScaleOrDefault()),
            b.getI64IntegerAttr(group), b.getI64IntegerAttr(mma.getConsumers()),
            b.getI64IntegerAttr(mma.getStages()),
            mma.getOverlap() ? b.getUnitAttr() : UnitAttr());
        b.setInsertionPointToStart(ifOp.elseBlock());
        kernel.build(nq, nk, nv, out);
      };
      if (!mma) {
        simtKernel(/*splitOnly=*/false);
      } else if (!simt) {
        mmaKernel();
      } else if (staticT == 1) {
        // Decode steps keep flash-decoding (split KV).
        simtKernel(/*splitOnly=*/true);
      } else if (!ShapedType::isDynamic(staticT)) {
        mmaKernel();
      } else {
        Value tDim = memref::DimOp::create(b, loc, qm, 1);
        Value one =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tDim,
                                  arith::ConstantIndexOp::create(b, loc, 1));
        auto ifOp = scf::IfOp::create(b, loc, one, /*withElse=*/true);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        simtKernel(/*splitOnly=*/true);
        b.setInsertionPointToStart(ifOp.elseBlock());
        mmaKernel();
      }
      Value result = bufferization::ToTensorOp::create(
          b, loc, RankedTensorType::get(qType.getShape(), outElem), out,
          /*restrict=*/true, /*writable=*/true);
      Operation *replaced = rounding ? rounding.getOperation() : op;
      if (result.getType() != replaced->getResult(0).getType())
        result = tensor::CastOp::create(
            b, loc, replaced->getResult(0).getType(), result);
      replaced->getResult(0).replaceAllUsesWith(result);
      if (rounding)
        rounding->erase();
      op.erase();
      ++numLowered;
    }
  }
};

} // namespace
