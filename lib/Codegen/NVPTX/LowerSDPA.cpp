//===- LowerSDPA.cpp - fused online-softmax attention kernel for GPUs -----===//
//
// Replaces transformer.sdpa on tensors by one gpu.launch over buffers (the
// operands through bufferization.to_buffer, the result a fresh buffer
// returned through bufferization.to_tensor). See Codegen/NVPTX/Passes.td
// (GPULowerSDPAPass) for the mapping.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/NVPTX/KernelMatchers.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPULOWERSDPAPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using namespace blockc::transformer;

namespace {

constexpr int64_t kWarp = blockc::nvptx::kWarpSize;

struct SDPAKernel {
  OpBuilder &b;
  Location loc;
  int64_t rowsPerWarp, warps, headDim, group;
  bool causal;
  double scale;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc,
                                     b.getF32FloatAttr(static_cast<float>(v)));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }

  /// The sum of `v` over the 32 lanes of the warp, in every lane.
  Value warpSum(Value v) {
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
      Value other = gpu::ShuffleOp::create(b, loc, v, offset, kWarp,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      v = arith::AddFOp::create(b, loc, v, other);
    }
    return v;
  }

  /// Lane `lane`'s elements lane, lane + 32, ... of query row (b, t, h),
  /// multiplied by `scaleF`.
  SmallVector<Value> loadScaledQuery(Value q, Value bIdx, Value t, Value hIdx,
                                     Value lane, Value scaleF) {
    SmallVector<Value> qs;
    for (int64_t i = 0; i < headDim / kWarp; ++i) {
      Value d = add(lane, idx(i * kWarp));
      Value x = memref::LoadOp::create(b, loc, q, ValueRange{bIdx, t, hIdx, d});
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
      ks.push_back(
          memref::LoadOp::create(b, loc, k, ValueRange{bIdx, j, kvh, d}));
      vs.push_back(
          memref::LoadOp::create(b, loc, v, ValueRange{bIdx, j, kvh, d}));
    }
  }

  /// The online-softmax state of one query row (m, l, then the lane's
  /// perLane accumulators) after key j with elements `ks` / `vs`: rescale by
  /// exp(m - m'), add p = exp(s - m'). A row that has seen no key yet (m =
  /// -inf) rescales by 0, never by exp(-inf - -inf) = NaN. When `keep` (key
  /// past the row's causal end) is set, the state is unchanged.
  void appendUpdate(ValueRange st, ArrayRef<Value> q, ArrayRef<Value> ks,
                    ArrayRef<Value> vs, Value keep, SmallVector<Value> &next) {
    int64_t perLane = headDim / kWarp;
    Value zeroF = f32(0.0);
    Value negInf = f32(-std::numeric_limits<double>::infinity());
    Value partial = zeroF;
    for (int64_t i = 0; i < perLane; ++i)
      partial = math::FmaOp::create(b, loc, q[i], ks[i], partial);
    Value s = warpSum(partial);
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
    auto keys = scf::ForOp::create(
        b, loc, c0, warpEnd, c1, init,
        [&](OpBuilder &nb, Location, Value j, ValueRange state) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
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
          scf::YieldOp::create(b, loc, next);
        });

    // out = acc / l; a row without any visible key (l = 0) is 0.
    for (int64_t r = 0; r < rowsPerWarp; ++r) {
      auto ifOp = scf::IfOp::create(b, loc, valid[r], /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value l = keys.getResult(r * stride + 1);
      Value positive =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zeroF);
      Value inv = arith::SelectOp::create(
          b, loc, positive, arith::DivFOp::create(b, loc, f32(1.0), l), zeroF);
      for (int64_t i = 0; i < perLane; ++i) {
        Value d = add(lane, idx(i * kWarp));
        Value o = arith::MulFOp::create(
            b, loc, keys.getResult(r * stride + 2 + i), inv);
        memref::StoreOp::create(b, loc, o, out,
                                ValueRange{bIdx, rows[r], hIdx, d});
      }
    }
    gpu::TerminatorOp::create(b, loc);
  }

  /// One query row (T = 1, a decode step) per (batch, head), the keys split
  /// across blocks (flash-decoding): kernel 1 runs one warp per (split,
  /// head, batch) over a contiguous chunk of the S keys and writes its
  /// online-softmax state (m, l, acc[D]) to a scratch buffer [B, H,
  /// kMaxSplits, 2 + D]; kernel 2 merges the splits of each (batch, head)
  /// with one warp. The kernel boundary is the only synchronisation (no
  /// barrier, no shared memory). splits = clamp(ceil(S / kKeysPerSplit), 1,
  /// kMaxSplits).
  static constexpr int64_t kMaxSplits = 32;
  static constexpr int64_t kKeysPerSplit = 64;
  void buildSplitKV(Value q, Value k, Value v, Value out) {
    Value c0 = idx(0), c1 = idx(1);
    Value bDim = memref::DimOp::create(b, loc, q, 0);
    Value hDim = memref::DimOp::create(b, loc, q, 2);
    Value sDim = memref::DimOp::create(b, loc, k, 1);
    int64_t perLane = headDim / kWarp;
    int64_t width = 2 + headDim;
    Value splits = arith::CeilDivUIOp::create(b, loc, sDim, idx(kKeysPerSplit));
    splits = arith::MaxUIOp::create(
        b, loc, arith::MinUIOp::create(b, loc, splits, idx(kMaxSplits)), c1);
    Value chunk = arith::CeilDivUIOp::create(b, loc, sDim, splits);
    auto scratchType = MemRefType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic, kMaxSplits, width},
        b.getF32Type());
    Value scratch =
        memref::AllocOp::create(b, loc, scratchType, ValueRange{bDim, hDim});
    auto markKernel = [&](gpu::LaunchOp launch) {
      launch->setAttr(
          blockc::codegen::CodegenDialect::kKernelAttrName,
          blockc::codegen::KernelKindAttr::get(
              b.getContext(), blockc::codegen::KernelKind::fused_attention));
    };
    Value negInf = f32(-std::numeric_limits<double>::infinity());
    Value zeroF = f32(0.0);

    // Kernel 1: the partial states.
    {
      auto launch =
          gpu::LaunchOp::create(b, loc, splits, hDim, bDim, idx(kWarp), c1, c1);
      markKernel(launch);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&launch.getBody().front());
      gpu::KernelDim3 block = launch.getBlockIds(),
                      thread = launch.getThreadIds();
      Value lane = thread.x, split = block.x, hIdx = block.y, bIdx = block.z;
      Value kvh = arith::DivUIOp::create(b, loc, hIdx, idx(group));
      // The single row t = 0 sees every key (causal with T = 1 is the last
      // row of the cache, bottom-right).
      Value lo = arith::MinUIOp::create(b, loc, mul(split, chunk), sDim);
      Value hi = arith::MinUIOp::create(b, loc, add(lo, chunk), sDim);
      SmallVector<Value> qs =
          loadScaledQuery(q, bIdx, c0, hIdx, lane, f32(scale));
      SmallVector<Value> init = {negInf, zeroF};
      init.append(perLane, zeroF);
      auto keys = scf::ForOp::create(
          b, loc, lo, hi, c1, init,
          [&](OpBuilder &nb, Location, Value j, ValueRange state) {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            SmallVector<Value> ks, vs;
            loadKeyValue(k, v, bIdx, j, kvh, lane, ks, vs);
            SmallVector<Value> next;
            appendUpdate(state, qs, ks, vs, Value(), next);
            scf::YieldOp::create(b, loc, next);
          });
      // Every lane stores m and l (the same values): no divergent store.
      memref::StoreOp::create(b, loc, keys.getResult(0), scratch,
                              ValueRange{bIdx, hIdx, split, c0});
      memref::StoreOp::create(b, loc, keys.getResult(1), scratch,
                              ValueRange{bIdx, hIdx, split, c1});
      for (int64_t i = 0; i < perLane; ++i) {
        Value col = add(idx(2 + i * kWarp), lane);
        memref::StoreOp::create(b, loc, keys.getResult(2 + i), scratch,
                                ValueRange{bIdx, hIdx, split, col});
      }
      gpu::TerminatorOp::create(b, loc);
    }

    // Kernel 2: merge. M = max m_s, L = sum l_s exp(m_s - M), acc likewise;
    // splits that saw no key (m_s = -inf) contribute nothing.
    {
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
            Value m = memref::LoadOp::create(b, loc, scratch,
                                             ValueRange{bIdx, hIdx, sIdx, c0});
            scf::YieldOp::create(
                b, loc,
                ValueRange{arith::MaximumFOp::create(b, loc, state[0], m)});
          });
      Value mMax = maxLoop.getResult(0);
      SmallVector<Value> init = {zeroF};
      init.append(perLane, zeroF);
      auto sumLoop = scf::ForOp::create(
          b, loc, c0, splits, c1, init,
          [&](OpBuilder &nb, Location, Value sIdx, ValueRange state) {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            Value ms = memref::LoadOp::create(b, loc, scratch,
                                              ValueRange{bIdx, hIdx, sIdx, c0});
            Value ls = memref::LoadOp::create(b, loc, scratch,
                                              ValueRange{bIdx, hIdx, sIdx, c1});
            Value empty = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OEQ, ms, negInf);
            Value factor = arith::SelectOp::create(
                b, loc, empty, zeroF,
                math::ExpOp::create(b, loc,
                                    arith::SubFOp::create(b, loc, ms, mMax)));
            SmallVector<Value> next = {
                math::FmaOp::create(b, loc, ls, factor, state[0])};
            for (int64_t i = 0; i < perLane; ++i) {
              Value col = add(idx(2 + i * kWarp), lane);
              Value as = memref::LoadOp::create(
                  b, loc, scratch, ValueRange{bIdx, hIdx, sIdx, col});
              next.push_back(
                  math::FmaOp::create(b, loc, as, factor, state[1 + i]));
            }
            scf::YieldOp::create(b, loc, next);
          });
      Value l = sumLoop.getResult(0);
      Value positive =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zeroF);
      Value inv = arith::SelectOp::create(
          b, loc, positive, arith::DivFOp::create(b, loc, f32(1.0), l), zeroF);
      for (int64_t i = 0; i < perLane; ++i) {
        Value d = add(lane, idx(i * kWarp));
        memref::StoreOp::create(
            b, loc,
            arith::MulFOp::create(b, loc, sumLoop.getResult(1 + i), inv), out,
            ValueRange{bIdx, c0, hIdx, d});
      }
      gpu::TerminatorOp::create(b, loc);
    }
    // The scratch buffer is released by the buffer deallocation pipeline.
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
    SmallVector<std::pair<SDPAOp, blockc::codegen::GPUAttentionAttr>> ops;
    WalkResult walk =
        getOperation().walk([&](SDPAOp op) {
          if (!blockc::nvptx::isFusedAttentionCandidate(op))
            return WalkResult::advance();
          auto config = op->getAttrOfType<blockc::codegen::GPUAttentionAttr>(
              blockc::codegen::CodegenDialect::kGpuAttentionAttrName);
          if (!config) {
            op.emitOpError()
                << "has no '"
                << blockc::codegen::CodegenDialect::kGpuAttentionAttrName
                << "' (run blockc-gpu-select-tiles first)";
            return WalkResult::interrupt();
          }
          ops.push_back({op, config});
          return WalkResult::advance();
        });
    if (walk.wasInterrupted())
      return signalPassFailure();
    OpBuilder b(&getContext());
    for (auto [op, config] : ops) {
      RankedTensorType qType = op.getQuery().getType();
      int64_t d = qType.getDimSize(3);
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      auto buffer = [&](Value t) -> Value {
        auto type = cast<RankedTensorType>(t.getType());
        return bufferization::ToBufferOp::create(b, loc, anyLayout(type), t,
                                                 /*read_only=*/true);
      };
      Value qm = buffer(op.getQuery()), km = buffer(op.getKey()),
            vm = buffer(op.getValue());
      SmallVector<Value> dynSizes;
      for (int64_t i = 0; i < qType.getRank(); ++i)
        if (qType.isDynamicDim(i))
          dynSizes.push_back(memref::DimOp::create(b, loc, qm, i));
      auto outType = MemRefType::get(qType.getShape(), qType.getElementType());
      Value out = memref::AllocOp::create(b, loc, outType, dynSizes);
      int64_t h = qType.getDimSize(2);
      SDPAKernel kernel{b,
                        loc,
                        config.getRowsPerWarp(),
                        config.getWarps(),
                        d,
                        h / op.getKey().getType().getDimSize(2),
                        op.getCausal(),
                        op.getScaleOrDefault()};
      kernel.build(qm, km, vm, out, qType.getDimSize(1));
      Value result = bufferization::ToTensorOp::create(
          b, loc,
          RankedTensorType::get(qType.getShape(), qType.getElementType()), out,
          /*restrict=*/true, /*writable=*/true);
      if (result.getType() != op.getType())
        result = tensor::CastOp::create(b, loc, op.getType(), result);
      op.replaceAllUsesWith(result);
      op.erase();
      ++numLowered;
    }
  }
};

} // namespace
