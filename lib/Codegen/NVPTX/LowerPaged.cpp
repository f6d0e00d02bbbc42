//===- LowerPaged.cpp - GPU kernels of the ragged paged-KV ops ------------===//
//
// transformer.token_positions, transformer.paged_kv_write and
// transformer.paged_sdpa on tensors become gpu.launch ops on buffers
// (bufferization.to_buffer / to_tensor around them), so that a paged
// entry's batch bookkeeping and page accesses run on the GPU. See
// Codegen/NVPTX/Passes.td (GPULowerPagedPass) for the kernels.
//
//===----------------------------------------------------------------------===//

#include "blockc/Codegen/Common/PagedAttention.h"
#include "blockc/Codegen/NVPTX/KernelBuilder.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPULOWERPAGEDPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using namespace blockc::transformer;
using blockc::codegen::CodegenDialect;
using blockc::codegen::KernelKind;

namespace {

constexpr int64_t kWarp = 32;
/// Threads per block of the token-position and page-write kernels.
constexpr int64_t kPositionThreads = 256, kWriteThreads = 128;

/// A memref type for `type` with a fully dynamic strided layout, so that a
/// kernel reads any buffer bufferization assigns to the tensor.
MemRefType anyLayout(RankedTensorType type) {
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, strides);
  return MemRefType::get(type.getShape(), type.getElementType(), layout);
}

/// `t` as a read-only buffer of any layout.
Value readBuffer(OpBuilder &b, Location loc, Value t) {
  return bufferization::ToBufferOp::create(
      b, loc, anyLayout(cast<RankedTensorType>(t.getType())), t,
      /*read_only=*/true);
}

/// A pool as the attention reads it: the buffer a page write of this pass
/// wrote (read directly: a read-only to_buffer of its to_tensor would let
/// canonicalization fold the reads back onto the pool's original tensor,
/// before the write), or `t` as a read-only buffer.
Value poolBuffer(OpBuilder &b, Location loc, Value t) {
  if (auto written = t.getDefiningOp<bufferization::ToTensorOp>())
    if (auto toBuffer =
            written.getBuffer().getDefiningOp<bufferization::ToBufferOp>();
        toBuffer && !toBuffer.getReadOnly())
      return written.getBuffer();
  return readBuffer(b, loc, t);
}

/// Whether `buffer` is a pool a page write of this pass wrote (an
/// identity-layout to_buffer that is not read-only).
bool isWritten(Value buffer) {
  auto toBuffer = buffer.getDefiningOp<bufferization::ToBufferOp>();
  return toBuffer && !toBuffer.getReadOnly();
}

/// The tensor a 16-bit operand widened by transformer-compute-in-f32 was
/// read from (the kernels widen in registers), or `t`.
Value stored(Value t) {
  if (auto ext = t.getDefiningOp<arith::ExtFOp>())
    return ext.getIn();
  return t;
}

/// Elements of `type` in 16 bytes when every row of `d` elements is made of
/// whole 16-byte runs, else 1.
int64_t vectorWidth(Type type, int64_t d) {
  int64_t w = 128 / type.getIntOrFloatBitWidth();
  return d % w == 0 ? w : 1;
}

/// The body `build(w)` with `wide` elements per access where the run-time
/// check `ok` holds and one element otherwise (just the latter when `wide`
/// is 1).
void buildWideOrScalar(OpBuilder &b, Location loc, int64_t wide, Value ok,
                       llvm::function_ref<void(int64_t)> build) {
  if (wide == 1)
    return build(1);
  auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  build(wide);
  b.setInsertionPointToStart(ifOp.elseBlock());
  build(1);
}

void markKernel(gpu::LaunchOp launch, KernelKind kind) {
  launch->setAttr(
      CodegenDialect::kKernelAttrName,
      blockc::codegen::KernelKindAttr::get(launch.getContext(), kind));
}

struct PagedKernel : blockc::nvptx::KernelBuilder {
  /// cu_seqlens [B + 1] and seq_pos [B] (i32 buffers).
  Value cu, seqPos;

  Value loadIndex(Value buffer, ValueRange at) {
    Value v = memref::LoadOp::create(b, loc, buffer, at);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }

  /// scf.for lo .. hi carrying `init`; `body(i, carried)` returns the next
  /// values, built with `b`.
  scf::ForOp
  loop(Value lo, Value hi, ValueRange init,
       llvm::function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    return scf::ForOp::create(
        b, loc, lo, hi, idx(1), init,
        [&](OpBuilder &nb, Location, Value i, ValueRange carried) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          scf::YieldOp::create(b, loc, body(i, carried));
        });
  }

  /// The sequence of token row `t`: the number of b in 1 .. B with
  /// cu[b] <= t (cu does not decrease; empty sequences are skipped).
  Value sequenceOf(Value t, Value numSeq) {
    Value one = idx(1);
    auto count =
        loop(one, add(numSeq, one), ValueRange{idx(0)},
             [&](Value seq, ValueRange c) -> SmallVector<Value> {
               Value before = arith::CmpIOp::create(
                   b, loc, arith::CmpIPredicate::sle, loadIndex(cu, seq), t);
               Value inc = arith::SelectOp::create(b, loc, before, one, idx(0));
               return {add(c[0], inc)};
             });
    return count.getResult(0);
  }

  /// (sequence, position) of token row `t`.
  std::pair<Value, Value> locate(Value t, Value numSeq) {
    Value seq = sequenceOf(t, numSeq);
    Value position =
        add(loadIndex(seqPos, seq), sub(t, loadIndex(cu, ValueRange{seq})));
    return {seq, position};
  }

  gpu::LaunchOp launch(Value gx, Value gy, int64_t tx, int64_t ty,
                       KernelKind kind) {
    auto op =
        gpu::LaunchOp::create(b, loc, gx, gy, idx(1), idx(tx), idx(ty), idx(1));
    markKernel(op, kind);
    return op;
  }
};

/// The packed token count of the paged entry that holds `op`: the first
/// dimension of its function's first argument.
FailureOr<Value> packedTokens(OpBuilder &b, Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func || func.getNumArguments() == 0 ||
      !isa<RankedTensorType>(func.getArgument(0).getType()) ||
      cast<RankedTensorType>(func.getArgument(0).getType()).getRank() == 0)
    return op->emitOpError()
           << "on nvptx needs the paged entry's packed input (a ranked "
              "tensor [total, ...]) as its function's first argument";
  return tensor::DimOp::create(b, op->getLoc(), func.getArgument(0), 0)
      .getResult();
}

/// token_positions: one thread per token.
LogicalResult lowerTokenPositions(TokenPositionsOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  FailureOr<Value> total = packedTokens(b, op);
  if (failed(total))
    return failure();
  PagedKernel k{{b, loc},
                readBuffer(b, loc, op.getCuSeqlens()),
                readBuffer(b, loc, op.getSeqPositions())};
  Value numSeq = memref::DimOp::create(b, loc, k.seqPos, 0);
  auto outType = MemRefType::get({ShapedType::kDynamic}, b.getI32Type());
  Value out = memref::AllocOp::create(b, loc, outType, ValueRange{*total});
  Value blocks =
      arith::CeilDivUIOp::create(b, loc, *total, k.idx(kPositionThreads));
  k.when(k.lt(k.idx(0), *total), [&] {
    gpu::LaunchOp launch = k.launch(blocks, k.idx(1), kPositionThreads, 1,
                                    KernelKind::paged_cache);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value t = k.add(k.mul(launch.getBlockIds().x, k.idx(kPositionThreads)),
                    launch.getThreadIds().x);
    k.when(k.lt(t, *total), [&] {
      Value position = k.locate(t, numSeq).second;
      memref::StoreOp::create(
          b, loc, arith::IndexCastOp::create(b, loc, b.getI32Type(), position),
          out, ValueRange{t});
    });
    gpu::TerminatorOp::create(b, loc);
  });
  Value result = bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type()),
      out, /*restrict=*/true, /*writable=*/true);
  op.getResult().replaceAllUsesWith(result);
  op.erase();
  return success();
}

/// paged_kv_write: one block row per token, `w` elements per thread.
void lowerPagedKVWrite(PagedKVWriteOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  RankedTensorType poolType = op.getPool().getType();
  int64_t pageSize = poolType.getDimSize(1);
  int64_t hkv = poolType.getDimSize(2), d = poolType.getDimSize(3);
  Type elt = poolType.getElementType();
  PagedKernel k{{b, loc},
                readBuffer(b, loc, op.getCuSeqlens()),
                readBuffer(b, loc, op.getSeqPositions())};
  Value entries = readBuffer(b, loc, op.getNewEntries());
  Value table = readBuffer(b, loc, op.getBlockTable());
  // The pool is written in place (a writable function argument after
  // bufferization: the caller's pages).
  Value pool = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(poolType.getShape(), elt), op.getPool());
  Value numSeq = memref::DimOp::create(b, loc, k.seqPos, 0);
  Value total = memref::DimOp::create(b, loc, entries, 1);
  Value numPages = memref::DimOp::create(b, loc, pool, 0);
  Value maxPages = memref::DimOp::create(b, loc, table, 1);
  int64_t wide = vectorWidth(elt, d);
  Value ok = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  Value view = wide > 1 ? k.contiguousView(pool, wide, ok) : pool;

  auto build = [&](int64_t w) {
    int64_t vectors = hkv * d / w;
    Value blocksY = k.idx((vectors + kWriteThreads - 1) / kWriteThreads);
    gpu::LaunchOp launch =
        k.launch(total, blocksY, kWriteThreads, 1, KernelKind::paged_cache);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value t = launch.getBlockIds().x;
    Value e = k.add(k.mul(launch.getBlockIds().y, k.idx(kWriteThreads)),
                    launch.getThreadIds().x);
    k.when(k.lt(e, k.idx(vectors)), [&] {
      std::pair<Value, Value> located = k.locate(t, numSeq);
      Value seq = located.first, position = located.second;
      Value logical = k.div(position, pageSize);
      Value slot = k.rem(position, pageSize);
      k.when(k.lt(logical, maxPages), [&] {
        Value page = k.loadIndex(table, ValueRange{seq, logical});
        // Pages outside the pool (negative ids too, unsigned) are skipped.
        k.when(k.lt(page, numPages), [&] {
          Value flat = k.mul(e, k.idx(w));
          Value h = k.div(flat, d), c = k.rem(flat, d);
          SmallVector<Value> values;
          for (int64_t i = 0; i < w; ++i)
            values.push_back(memref::LoadOp::create(
                b, loc, entries,
                ValueRange{k.idx(0), t, h, k.add(c, k.idx(i))}));
          if (w > 1)
            k.storeVector(values, view, ValueRange{page, slot, h, c});
          else
            memref::StoreOp::create(b, loc, values[0], pool,
                                    ValueRange{page, slot, h, c});
        });
      });
    });
    gpu::TerminatorOp::create(b, loc);
  };
  k.when(k.lt(k.idx(0), total),
         [&] { buildWideOrScalar(b, loc, wide, ok, build); });
  Value result = bufferization::ToTensorOp::create(
      b, loc, poolType, pool, /*restrict=*/true, /*writable=*/true);
  op.getResult().replaceAllUsesWith(result);
  op.erase();
}

/// paged_sdpa: one warp per (query token, head).
void lowerPagedSDPA(PagedSDPAOp op,
                    blockc::codegen::GPUPagedAttentionAttr config,
                    OpBuilder &b) {
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  blockc::PagedSDPAShape shape = blockc::PagedSDPAShape::of(op);
  int64_t warps = config.getWarps();
  double scale = op.getScaleOrDefault();
  PagedKernel k{{b, loc},
                readBuffer(b, loc, op.getCuSeqlens()),
                readBuffer(b, loc, op.getSeqPositions())};
  Value q = readBuffer(b, loc, stored(op.getQuery()));
  Value kPool = poolBuffer(b, loc, stored(op.getKeyPool()));
  Value vPool = poolBuffer(b, loc, stored(op.getValuePool()));
  Value table = readBuffer(b, loc, op.getBlockTable());
  Type poolElt = cast<MemRefType>(kPool.getType()).getElementType();
  Value numSeq = memref::DimOp::create(b, loc, k.seqPos, 0);
  Value total = memref::DimOp::create(b, loc, q, 1);
  Value numPages = memref::DimOp::create(b, loc, kPool, 0);
  auto outType = MemRefType::get(shape.queryType.getShape(),
                                 shape.queryType.getElementType());
  Value out = memref::AllocOp::create(b, loc, outType, ValueRange{total});
  int64_t wide = vectorWidth(poolElt, shape.headDim);
  Value ok = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  Value kView = kPool, vView = vPool;
  if (wide > 1) {
    kView = k.contiguousView(kPool, wide, ok);
    vView = k.contiguousView(vPool, wide, ok);
  }
  Value blocks = arith::CeilDivUIOp::create(b, loc, total, k.idx(warps));
  Value negInf = k.f32(-std::numeric_limits<double>::infinity());
  Value zeroF = k.f32(0.0);
  auto widen = [&](Value v) -> Value {
    if (v.getType().isF32())
      return v;
    return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  };

  auto build = [&](int64_t w) {
    int64_t chunks = (shape.headDim + kWarp * w - 1) / (kWarp * w);
    gpu::LaunchOp launch = k.launch(blocks, k.idx(shape.heads), kWarp, warps,
                                    KernelKind::paged_attention);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value lane = launch.getThreadIds().x;
    Value head = launch.getBlockIds().y;
    Value t = k.add(k.mul(launch.getBlockIds().x, k.idx(warps)),
                    launch.getThreadIds().y);
    // The whole warp shares t: a warp past the last token does nothing
    // (its shuffles stay uniform).
    k.when(k.lt(t, total), [&] {
      Value c0 = k.idx(0);
      std::pair<Value, Value> located = k.locate(t, numSeq);
      Value seq = located.first, position = located.second;
      Value numKeys = k.add(position, k.idx(1));
      Value kvh = k.div(head, shape.group);
      // Lane l's elements of chunk c start at (32 c + l) w; lanes past D
      // read element 0 and hold zeros.
      SmallVector<Value> active, start;
      for (int64_t c = 0; c < chunks; ++c) {
        Value first = k.mul(k.add(lane, k.idx(c * kWarp)), k.idx(w));
        active.push_back(k.lt(first, k.idx(shape.headDim)));
        start.push_back(
            arith::SelectOp::create(b, loc, active.back(), first, c0));
      }
      SmallVector<Value> qs;
      Value scaleF = k.f32(scale);
      for (int64_t c = 0; c < chunks; ++c)
        for (int64_t i = 0; i < w; ++i) {
          Value x = widen(memref::LoadOp::create(
              b, loc, q, ValueRange{c0, t, head, k.add(start[c], k.idx(i))}));
          x = arith::MulFOp::create(b, loc, x, scaleF);
          qs.push_back(arith::SelectOp::create(b, loc, active[c], x, zeroF));
        }
      // Lane's K or V elements of (page, slot).
      auto readRow = [&](Value pool, Value view, Value page, Value slot) {
        SmallVector<Value> xs;
        for (int64_t c = 0; c < chunks; ++c) {
          SmallVector<Value> at = {page, slot, kvh, start[c]};
          if (w > 1) {
            for (Value x : k.loadVector(view, at, w))
              xs.push_back(widen(x));
          } else if (isWritten(pool)) {
            // A vector of one: memref.load on the written pool's buffer
            // would be folded onto the pool's tensor before the write.
            Value x = vector::LoadOp::create(
                b, loc, VectorType::get({1}, poolElt), pool, at);
            xs.push_back(widen(
                vector::ExtractOp::create(b, loc, x, ArrayRef<int64_t>{0})));
          } else {
            xs.push_back(widen(memref::LoadOp::create(b, loc, pool, at)));
          }
        }
        return xs;
      };
      SmallVector<Value> init = {negInf, zeroF};
      init.append(chunks * w, zeroF);
      Value lastPage = k.sub(numPages, k.idx(1));
      Value pages =
          arith::CeilDivUIOp::create(b, loc, numKeys, k.idx(shape.pageSize));
      auto pageLoop = k.loop(
          c0, pages, init, [&](Value lp, ValueRange st) -> SmallVector<Value> {
            // The pool page, clamped into the pool (the page writes skip
            // pages outside it; the host checks the batch).
            Value page = k.loadIndex(table, ValueRange{seq, lp});
            page = arith::MaxSIOp::create(b, loc, k.min(page, lastPage), c0);
            Value count =
                k.min(k.idx(shape.pageSize),
                      k.sub(numKeys, k.mul(lp, k.idx(shape.pageSize))));
            auto slotLoop = k.loop(
                c0, count, st,
                [&](Value slot, ValueRange s) -> SmallVector<Value> {
                  SmallVector<Value> ks = readRow(kPool, kView, page, slot);
                  Value partial = zeroF;
                  for (auto [x, y] : llvm::zip(qs, ks))
                    partial = math::FmaOp::create(b, loc, x, y, partial);
                  Value score =
                      k.xorReduce(partial, {16, 8, 4, 2, 1},
                                  [&](Value x, Value y) -> Value {
                                    return arith::AddFOp::create(b, loc, x, y);
                                  });
                  Value m = s[0], l = s[1];
                  Value mNew = arith::MaximumFOp::create(b, loc, m, score);
                  // The first key rescales by 0, never exp(-inf + inf).
                  Value firstKey = arith::CmpFOp::create(
                      b, loc, arith::CmpFPredicate::OEQ, m, negInf);
                  Value corr = arith::SelectOp::create(
                      b, loc, firstKey, zeroF,
                      math::ExpOp::create(
                          b, loc, arith::SubFOp::create(b, loc, m, mNew)));
                  Value p = math::ExpOp::create(
                      b, loc, arith::SubFOp::create(b, loc, score, mNew));
                  SmallVector<Value> next = {
                      mNew, math::FmaOp::create(b, loc, l, corr, p)};
                  SmallVector<Value> vs = readRow(vPool, vView, page, slot);
                  for (auto [acc, v] : llvm::zip(s.drop_front(2), vs))
                    next.push_back(math::FmaOp::create(
                        b, loc, p, v,
                        arith::MulFOp::create(b, loc, acc, corr)));
                  return next;
                });
            return SmallVector<Value>(slotLoop.getResults());
          });
      // Every token sees at least itself: l > 0.
      Value inv =
          arith::DivFOp::create(b, loc, k.f32(1.0), pageLoop.getResult(1));
      Type outElt = shape.queryType.getElementType();
      for (int64_t c = 0; c < chunks; ++c)
        k.when(active[c], [&] {
          for (int64_t i = 0; i < w; ++i) {
            Value o = arith::MulFOp::create(
                b, loc, pageLoop.getResult(2 + c * w + i), inv);
            if (!outElt.isF32())
              o = arith::TruncFOp::create(b, loc, outElt, o);
            memref::StoreOp::create(
                b, loc, o, out,
                ValueRange{c0, t, head, k.add(start[c], k.idx(i))});
          }
        });
    });
    gpu::TerminatorOp::create(b, loc);
  };
  k.when(k.lt(k.idx(0), total),
         [&] { buildWideOrScalar(b, loc, wide, ok, build); });
  Value result = bufferization::ToTensorOp::create(
      b, loc,
      RankedTensorType::get(shape.queryType.getShape(),
                            shape.queryType.getElementType()),
      out, /*restrict=*/true, /*writable=*/true);
  op.getResult().replaceAllUsesWith(result);
  op.erase();
}

struct GPULowerPagedPass
    : blockc::nvptx::impl::GPULowerPagedPassBase<GPULowerPagedPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    WalkResult walk = getOperation().walk([&](Operation *op) {
      if (auto sdpa = dyn_cast<PagedSDPAOp>(op)) {
        if (!sdpa->getAttrOfType<blockc::codegen::GPUPagedAttentionAttr>(
                CodegenDialect::kGpuPagedAttentionAttrName)) {
          sdpa.emitOpError()
              << "has no '" << CodegenDialect::kGpuPagedAttentionAttrName
              << "' (run blockc-gpu-select-tiles first)";
          return WalkResult::interrupt();
        }
      }
      if (isa<TokenPositionsOp, PagedKVWriteOp, PagedSDPAOp>(op))
        ops.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    OpBuilder b(&getContext());
    for (Operation *op : ops) {
      if (auto positions = dyn_cast<TokenPositionsOp>(op)) {
        if (failed(lowerTokenPositions(positions, b)))
          return signalPassFailure();
      } else if (auto write = dyn_cast<PagedKVWriteOp>(op)) {
        lowerPagedKVWrite(write, b);
      } else {
        auto sdpa = cast<PagedSDPAOp>(op);
        lowerPagedSDPA(
            sdpa,
            sdpa->getAttrOfType<blockc::codegen::GPUPagedAttentionAttr>(
                CodegenDialect::kGpuPagedAttentionAttrName),
            b);
      }
      ++numLowered;
    }
  }
};

} // namespace
