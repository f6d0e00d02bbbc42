//===- LowerWarpgroupAttention.cpp - sm_90a attention on wgmma ------------===//
//
// Replaces blockc_codegen.warpgroup_attention (written by
// blockc-gpu-lower-sdpa) by the FlashAttention-3-style kernel once buffers
// are deallocated. See Codegen/NVPTX/Passes.td
// (GPULowerWarpgroupAttentionPass).
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "blockc/Codegen/NVPTX/KernelBuilder.h"
#include "blockc/Codegen/NVPTX/MmaFragments.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Codegen/IR/FragmentOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPULOWERWARPGROUPATTENTIONPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;

namespace {

/// The FlashAttention-3-style kernel on warpgroup MMA (sm_90a; see
/// GPUMmaAttentionAttr with `warpgroup = true`): one warpgroup (128 threads)
/// per 64 query rows of one (batch, head). Q (loaded once) and a 2-stage
/// ring of K and V tiles of 64 keys come by TMA from 4-D tensor maps over
/// [B, L, H, D] (boxes of 64 rows x 64 elements, 128-byte swizzle, zero
/// filled past L), completed on mbarriers. S = Q K^T is one m64n64k16
/// wgmma per k16 of the head dim (both operands K-major in shared memory);
/// its accumulator is read in registers (blockc_codegen.
/// accumulator_to_fragment), where the online softmax runs as in the
/// mma.sync kernel (rows g and g + 8 of the thread's warp, quad
/// reductions); P is written as its 16-bit rounding and the 16-bit rounding
/// of the rest into two 128-byte swizzled K-major tiles. O is one 64 x 64
/// wgmma accumulator per 64 columns of the head dim, carried across the key
/// tiles: each tile rescales it by alpha in registers and P V (m64n64k16
/// wgmmas with V read N-major, the V tile as TMA wrote it, transposeB)
/// accumulates onto it. q/k/v are 16-bit buffers with a unit
/// innermost stride whose layouts TMA can read (checked on the host by the
/// caller); out as for MmaAttentionKernel.
struct WarpgroupAttentionKernel : blockc::nvptx::KernelBuilder {
  int64_t headDim, group;
  bool causal;
  double scale;
  Type elem;
  int64_t consumers;  // 1, or 2: buildSpecialized
  int64_t ringStages; // the K/V ring of buildSpecialized: 2 or 3
  bool overlap;       // buildSpecialized: the intra-warpgroup overlap

  static constexpr int64_t kRows = 64;             // query rows per block
  static constexpr int64_t kKeys = 64;             // keys per tile
  static constexpr int64_t kStages = 2;            // K/V ring of build
  static constexpr int64_t kPanel = 64;            // elements of a 128-byte row
  static constexpr int64_t kPanelBytes = 64 * 128; // 64 rows of 128 bytes

  // What build and buildSpecialized set (setUp, then inside the launch) for
  // the helpers below. Shared memory, from the first 1024-byte boundary:
  // qTiles tiles of Q (qBytes each), a ring of `stages` K/V stages
  // (stageBytes each: K, then V) at kvOff, then P at pOff.
  int64_t panels = 0, stages = 0, qBytes = 0, stageBytes = 0, kvOff = 0,
          pOff = 0;
  Value c0{}, c1{}, bDim{}, tDim{}, hDim{}, sDim{};
  Value qMap{}, kMap{}, vMap{};
  // Inside the launch: the dynamic shared memory and the bytes from its
  // start to its first 1024-byte boundary (the 128-byte swizzle's period),
  // the block's (batch, head), its K/V head and S - T.
  Value base{}, pad{}, bIdx{}, hIdx{}, kvh{}, offset{};

  MemRefType sharedType(ArrayRef<int64_t> shape, Type type) {
    return MemRefType::get(shape, type, MemRefLayoutAttrInterface(),
                           gpu::AddressSpaceAttr::get(
                               b.getContext(), gpu::AddressSpace::Workgroup));
  }
  Value view(Value base, Value offset, ArrayRef<int64_t> shape, Type type) {
    return memref::ViewOp::create(b, loc, sharedType(shape, type), base, offset,
                                  ValueRange{});
  }
  /// The TMA map of a [B, L, H, D] buffer: boxes of one (batch, head) x 64
  /// rows x 64 elements, 128-byte swizzled, zero filled past the edges.
  Value tensorMap(Value buffer) {
    auto type = nvgpu::TensorMapDescriptorType::get(
        b.getContext(), sharedType({1, 64, 1, kPanel}, elem),
        nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
    Value unranked = memref::CastOp::create(
        b, loc, UnrankedMemRefType::get(elem, 0), buffer);
    return nvgpu::TmaCreateDescriptorOp::create(
        b, loc, type, unranked,
        ValueRange{idx(1), idx(64), idx(1), idx(kPanel)});
  }

  /// The shared-memory layout (`qTiles` tiles of Q before a ring of
  /// `ringStages` stages), the operands' dims and (on the host, made once
  /// per launch, cached by the runtime) the tensor maps.
  void setUp(Value q, Value k, Value v, int64_t qTiles, int64_t ringStages) {
    panels = headDim / kPanel;
    stages = ringStages;
    qBytes = panels * kPanelBytes; // 64 rows of Q, or one K or V tile
    stageBytes = 2 * qBytes;       // K and V
    kvOff = qTiles * qBytes;
    pOff = kvOff + stages * stageBytes;
    c0 = idx(0);
    c1 = idx(1);
    bDim = memref::DimOp::create(b, loc, q, 0);
    tDim = memref::DimOp::create(b, loc, q, 1);
    hDim = memref::DimOp::create(b, loc, q, 2);
    sDim = memref::DimOp::create(b, loc, k, 1);
    qMap = tensorMap(q);
    kMap = tensorMap(k);
    vMap = tensorMap(v);
  }
  /// The kernel's launch: grid (x, y, z), `threads` threads per block and
  /// `sharedBytes` of dynamic shared memory.
  gpu::LaunchOp launchKernel(Value x, Value y, Value z, int64_t threads,
                             int64_t sharedBytes) {
    auto launch = gpu::LaunchOp::create(
        b, loc, x, y, z, idx(threads), c1, c1,
        arith::ConstantIntOp::create(b, loc, sharedBytes, 32));
    launch->setAttr(
        blockc::codegen::CodegenDialect::kKernelAttrName,
        blockc::codegen::KernelKindAttr::get(
            b.getContext(), blockc::codegen::KernelKind::warpgroup_attention));
    return launch;
  }

  /// Shared-memory addresses (bytes from `base`): `offset` bytes past the
  /// first 1024-byte boundary, and panel `p` of the K (`which` = 0) or V
  /// (1) tile in `stage`.
  Value at(int64_t offset) { return add(pad, idx(offset)); }
  Value kPanelAt(Value stage, int64_t p, int64_t which) {
    return add(at(kvOff + which * qBytes + p * kPanelBytes),
               mul(stage, idx(stageBytes)));
  }

  /// A TMA load of panel `p` (64 elements) of 64 rows from `row` of head
  /// `head` through `map` into `dst`, completing on mbarrier `barrier` of
  /// `bars`.
  void tmaLoad(Value dst, Value map, Value row, Value head, int64_t p,
               Value bars, Value barrier) {
    nvgpu::TmaAsyncLoadOp::create(
        b, loc, view(base, dst, {1, 64, 1, kPanel}, elem), bars, map,
        ValueRange{idx(p * kPanel), head, row, bIdx}, barrier, Value(),
        Value());
  }
  /// Thread 0 loads key tile `tile` (its K and V) into `stage`, on the
  /// stage's mbarrier of `bars` (arrive.expect_tx, then the TMA loads).
  void loadKeyTile(Value bars, Value stage, Value tile) {
    nvgpu::MBarrierArriveExpectTxOp::create(b, loc, bars, idx(stageBytes),
                                            stage, Value());
    Value j0 = mul(tile, idx(kKeys));
    for (int64_t p = 0; p < panels; ++p) {
      tmaLoad(kPanelAt(stage, p, 0), kMap, j0, kvh, p, bars, stage);
      tmaLoad(kPanelAt(stage, p, 1), vMap, j0, kvh, p, bars, stage);
    }
  }
  void waitParity(Value bars, Value parity, Value index) {
    nvgpu::MBarrierTryWaitParityOp::create(b, loc, bars, parity, idx(10000000),
                                           index);
  }
  /// The parity of use it / stages of a stage (`it` counts the ring's
  /// uses).
  Value useParity(Value it) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                 rem(div(it, stages), 2), c0)
        .getResult();
  }
  /// The key tiles of the 64 query rows from `rowBase`: up to the causal
  /// end of the last row (signed: bottom-right causal); later tiles are
  /// fully masked and never loaded.
  Value keyTiles(Value rowBase) {
    Value kvEnd = sDim;
    if (causal)
      kvEnd = arith::MaxSIOp::create(
          b, loc,
          arith::MinSIOp::create(b, loc, add(add(rowBase, idx(kRows)), offset),
                                 sDim),
          c0);
    return arith::CeilDivUIOp::create(b, loc, kvEnd, idx(kKeys));
  }

  /// This thread's fragment rows (of the warpgroup's 64 from `rowBase`) and
  /// the first column of its pairs in each n8 tile: rows 16 w + g (+ 8),
  /// columns 8 j + 2 q.
  struct ThreadRows {
    Value g, col0;
    SmallVector<Value> rowIn, qRows, keyLimit;
  };
  ThreadRows threadRows(Value warp, Value g, Value q4, Value rowBase) {
    ThreadRows rows;
    rows.g = g;
    Value r0 = add(mul(warp, idx(16)), g);
    rows.rowIn = {r0, add(r0, idx(8))};
    rows.col0 = mul(q4, idx(2));
    // Row t sees keys below min(S, t + S - T + 1) (signed: bottom-right
    // causal); less 2 q, the first key of this thread's columns.
    for (Value r : rows.rowIn) {
      Value t = add(rowBase, r);
      rows.qRows.push_back(t);
      Value limit = sDim;
      if (causal)
        limit = arith::MinSIOp::create(b, loc, sDim, add(add(t, offset), c1));
      rows.keyLimit.push_back(arith::SubIOp::create(b, loc, limit, rows.col0));
    }
    return rows;
  }

  nvgpu::WarpgroupAccumulatorType accType() {
    return nvgpu::WarpgroupAccumulatorType::get(
        b.getContext(), VectorType::get({64, 64}, b.getF32Type()));
  }
  nvgpu::WarpgroupMatrixDescriptorType aDescType() {
    return nvgpu::WarpgroupMatrixDescriptorType::get(
        b.getContext(), sharedType({64, 16}, elem));
  }
  nvgpu::WarpgroupMatrixDescriptorType bDescType() {
    return nvgpu::WarpgroupMatrixDescriptorType::get(
        b.getContext(), sharedType({16, 64}, elem));
  }
  VectorType fragType() { return VectorType::get({32}, b.getF32Type()); }
  Value descriptor(nvgpu::WarpgroupMatrixDescriptorType type, Value offset,
                   ArrayRef<int64_t> shape, Value map) {
    return nvgpu::WarpgroupGenerateDescriptorOp::create(
        b, loc, type, view(base, offset, shape, elem), map);
  }
  /// This thread's registers of a 64 x 64 accumulator: element
  /// 4 j + 2 h + e is row 16 w + g + 8 h, column 8 j + 2 q + e (the PTX
  /// ISA's wgmma layout); reading needs its wgmmas waited for.
  Value fragment(Value acc) {
    return blockc::codegen::AccumulatorToFragmentOp::create(b, loc, fragType(),
                                                            acc)
        .getResult();
  }
  Value element(Value frag, int64_t j, int64_t h, int64_t e) {
    return vector::ExtractOp::create(b, loc, frag,
                                     ArrayRef<int64_t>{4 * j + 2 * h + e})
        .getResult();
  }
  /// An m64n64k16 wgmma onto `acc`; it commits and waits for all groups
  /// but the newest `waitGroup`.
  Value mma(Value descA, Value descB, Value acc, bool transposeB,
            int64_t waitGroup) {
    return nvgpu::WarpgroupMmaOp::create(
               b, loc, accType(), descA, descB, b.getI64IntegerAttr(waitGroup),
               UnitAttr(), transposeB ? b.getUnitAttr() : UnitAttr(), acc)
        .getResult();
  }

  /// The state the key loop carries: m (2 rows), l (2 rows), O as one
  /// accumulator per 64 columns of the head dim.
  SmallVector<Value> initialState() {
    Value negInf = f32(-std::numeric_limits<double>::infinity());
    SmallVector<Value> init = {negInf, negInf, f32(0), f32(0)};
    for (int64_t pn = 0; pn < panels; ++pn)
      init.push_back(
          nvgpu::WarpgroupMmaInitAccumulatorOp::create(b, loc, accType()));
    return init;
  }
  /// S = Q K^T for the key tile in `stage`: one m64n64k16 per k16 of the
  /// head dim, 32 bytes further along the swizzled rows of its 64-element
  /// panel; Q's panel `p`, `within` bytes along, is at `qAt(p, within)`.
  /// With `waitLast` the last wgmma waits for all; every other wgmma
  /// waits for all groups but the newest `depth`.
  Value scores(function_ref<Value(int64_t, int64_t)> qAt, Value stage,
               bool waitLast, int64_t depth = 1) {
    Value sAcc =
        nvgpu::WarpgroupMmaInitAccumulatorOp::create(b, loc, accType());
    for (int64_t kk = 0; kk < headDim / 16; ++kk) {
      int64_t p = kk / 4, within = (kk % 4) * 32;
      Value descA = descriptor(aDescType(), qAt(p, within), {64, 16}, qMap);
      Value descB = descriptor(
          bDescType(), add(kPanelAt(stage, p, 0), idx(within)), {64, 16}, kMap);
      bool last = waitLast && kk + 1 == headDim / 16;
      sAcc = mma(descA, descB, sAcc, /*transposeB=*/false, last ? 0 : depth);
    }
    return sAcc;
  }
  /// Scale, mask (past S, above the causal diagonal) and the online
  /// softmax of the thread's two rows (h = 0, 1) of S's fragment `sFrag`:
  /// score 2 j + e is column 8 j + e after the thread's first. Updates m
  /// and l, the front of `state`.
  SoftmaxStep softmax(Value sFrag, const ThreadRows &rows, Value j0,
                      Value scaleF, MutableArrayRef<Value> state) {
    return onlineSoftmax(
        16,
        [&](int64_t i, int64_t k) { return element(sFrag, k / 2, i, k % 2); },
        rows.keyLimit, j0, scaleF, state.take_front(4));
  }
  /// O (the accumulators in `state`, every wgmma that wrote them waited
  /// for) times alpha per row, in registers, back into accumulators.
  SmallVector<Value> rescaledO(ArrayRef<Value> alpha, ValueRange state) {
    SmallVector<Value> rowAlpha;
    for (int64_t k = 0; k < 32; ++k)
      rowAlpha.push_back(alpha[k / 2 % 2]);
    Value rowScale =
        vector::FromElementsOp::create(b, loc, fragType(), rowAlpha);
    SmallVector<Value> oAcc;
    for (int64_t pn = 0; pn < panels; ++pn) {
      Value o =
          arith::MulFOp::create(b, loc, fragment(state[4 + pn]), rowScale);
      oAcc.push_back(blockc::codegen::FragmentToAccumulatorOp::create(
          b, loc, accType(), o));
    }
    return oAcc;
  }
  /// P into shared memory as two K-major 64 x 64 tiles at `tileAt(half)`
  /// (its 16-bit rounding and the rounding of the rest, so that P V keeps
  /// the probabilities' f32 precision, as in the mma.sync kernel), in the
  /// 128-byte swizzle: the 16-byte chunk j of row r is at chunk j ^ (r %
  /// 8), and r % 8 = g for both of the thread's rows. Then the fence that
  /// orders these generic-proxy writes before the wgmmas (async proxy)
  /// read them, once the caller's barrier has every thread's.
  void storeP(ArrayRef<SmallVector<Value>> p,
              function_ref<Value(int64_t)> tileAt, const ThreadRows &rows) {
    auto halfPair = VectorType::get({2}, elem);
    for (int64_t half = 0; half < 2; ++half) {
      Value pTile = view(base, tileAt(half), {64, 64}, elem);
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 8; ++j) {
          SmallVector<Value> pair;
          for (int64_t e = 0; e < 2; ++e) {
            Value x = p[i][2 * j + e];
            Value h = arith::TruncFOp::create(b, loc, elem, x);
            if (half == 1)
              h = arith::TruncFOp::create(
                  b, loc, elem,
                  arith::SubFOp::create(
                      b, loc, x,
                      arith::ExtFOp::create(b, loc, b.getF32Type(), h)));
            pair.push_back(h);
          }
          Value chunk = arith::XOrIOp::create(b, loc, idx(j), rows.g);
          vector::StoreOp::create(
              b, loc, vector::FromElementsOp::create(b, loc, halfPair, pair),
              pTile,
              ValueRange{rows.rowIn[i], add(mul(chunk, idx(8)), rows.col0)});
        }
    }
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }
  /// O += P V per 64 columns of the head dim onto `oAcc`: A = P (K-major,
  /// part `half`, k16 step kk at `pAt(half, kk)`), B = the V tile in
  /// `stage` as stored ([key][d]: N-major, transposeB), k16 step kk 16 rows
  /// of 128 bytes further. With `waitLast` the last wgmma waits for all;
  /// every other wgmma waits for all groups but the newest `depth`.
  SmallVector<Value> accumulatePV(ArrayRef<Value> oAcc,
                                  function_ref<Value(int64_t, int64_t)> pAt,
                                  Value stage, bool waitLast,
                                  int64_t depth = 1) {
    SmallVector<Value> result;
    for (int64_t pn = 0; pn < panels; ++pn) {
      Value acc = oAcc[pn];
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t kk = 0; kk < kKeys / 16; ++kk) {
          Value descA = descriptor(aDescType(), pAt(half, kk), {64, 16}, qMap);
          Value descB = descriptor(
              bDescType(), add(kPanelAt(stage, pn, 1), idx(kk * 16 * 128)),
              {16, 64}, vMap);
          bool last =
              waitLast && pn + 1 == panels && half == 1 && kk + 1 == kKeys / 16;
          acc = mma(descA, descB, acc, /*transposeB=*/true, last ? 0 : depth);
        }
      result.push_back(acc);
    }
    return result;
  }
  /// out = O / l from the key loop's final `state` (its wgmmas waited
  /// for) for the thread's rows below T; a row without any visible key
  /// (l = 0) is 0.
  void storeOut(ValueRange state, const ThreadRows &rows, Value out) {
    SmallVector<Value> oFrag;
    for (int64_t pn = 0; pn < panels; ++pn)
      oFrag.push_back(fragment(state[4 + pn]));
    blockc::nvptx::storeAttentionRows(
        *this, out, bIdx, hIdx, rows.qRows, tDim, state.slice(2, 2),
        panels * 16, [&](int64_t i, int64_t k) {
          int64_t pn = k / 16, j = k / 2 % 8, e = k % 2;
          Value o = element(oFrag[pn], j, i, e);
          Value d = add(rows.col0, idx(pn * kPanel + 8 * j + e));
          return std::make_pair(o, d);
        });
  }

  void build(Value q, Value k, Value v, Value out) {
    if (consumers == 2)
      return buildSpecialized(q, k, v, out);
    MLIRContext *ctx = b.getContext();
    setUp(q, k, v, /*qTiles=*/1, kStages); // Q, K/V ring, P hi, P lo
    int64_t sharedBytes = pOff + 2 * kPanelBytes + 1024;
    auto launch =
        launchKernel(arith::CeilDivUIOp::create(b, loc, tDim, idx(kRows)), hDim,
                     bDim, 128, sharedBytes);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::KernelDim3 block = launch.getBlockIds();
    Value tid = launch.getThreadIds().x;
    Value warp = div(tid, 32), lane = rem(tid, 32);
    Value g = div(lane, 4), q4 = rem(lane, 4);
    hIdx = block.y;
    bIdx = block.z;
    kvh = arith::DivUIOp::create(b, loc, hIdx, idx(group));
    Value t0 = mul(block.x, idx(kRows));
    Value isLeader = eq(tid, 0);
    base = alignedDynamicSharedMemory(1024, pad);

    // mbarriers: one per stage ("full": its K and V tiles landed), and Q's.
    auto barsType = nvgpu::MBarrierGroupType::get(
        ctx, gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup),
        kStages + 1);
    Value bars = nvgpu::MBarrierCreateOp::create(b, loc, barsType);
    when(isLeader, [&] {
      for (int64_t s = 0; s <= kStages; ++s)
        nvgpu::MBarrierInitOp::create(b, loc, bars, c1, idx(s), Value());
    });
    gpu::BarrierOp::create(b, loc);

    offset = arith::SubIOp::create(b, loc, sDim, tDim); // S - T
    Value numTiles = keyTiles(t0);
    // Thread 0 starts loading key tile `tile` into its stage.
    auto issue = [&](Value tile) {
      loadKeyTile(bars, rem(tile, kStages), tile);
    };
    when(isLeader, [&] {
      nvgpu::MBarrierArriveExpectTxOp::create(b, loc, bars, idx(qBytes),
                                              idx(kStages), Value());
      for (int64_t p = 0; p < panels; ++p)
        tmaLoad(at(p * kPanelBytes), qMap, t0, hIdx, p, bars, idx(kStages));
      for (int64_t s = 0; s < kStages; ++s)
        when(lt(idx(s), numTiles), [&] { issue(idx(s)); });
    });
    auto falseV = arith::ConstantIntOp::create(b, loc, 0, 1);
    nvgpu::MBarrierTryWaitParityOp::create(b, loc, bars, falseV, idx(10000000),
                                           idx(kStages));

    ThreadRows rows = threadRows(warp, g, q4, t0);
    SmallVector<Value> init = initialState();
    Value scaleF = f32(scale);
    SmallVector<Value> results =
        loop(c0, numTiles, c1, init, [&](Value jt, ValueRange state) {
          Value stage = rem(jt, kStages);
          Value j0 = mul(jt, idx(kKeys));
          waitParity(bars, useParity(jt), stage);

          Value sFrag = fragment(scores(
              [&](int64_t p, int64_t within) {
                return at(p * kPanelBytes + within);
              },
              stage, /*waitLast=*/true));
          SmallVector<Value> next(state.begin(), state.end());
          SoftmaxStep step = softmax(sFrag, rows, j0, scaleF, next);

          // P into shared memory (two K-major tiles at pOff), then, for
          // every thread of the warpgroup, a barrier before the wgmmas
          // read it.
          storeP(
              step.p,
              [&](int64_t half) { return at(pOff + half * kPanelBytes); },
              rows);
          gpu::BarrierOp::create(b, loc);

          // O *= alpha in registers (every wgmma that wrote O was waited for
          // at the end of the last tile), back into the accumulators; then
          // O += P V.
          SmallVector<Value> oAcc = rescaledO(step.alpha, state);
          llvm::copy(accumulatePV(
                         oAcc,
                         [&](int64_t half, int64_t kk) {
                           return at(pOff + half * kPanelBytes + kk * 32);
                         },
                         stage, /*waitLast=*/true),
                     next.begin() + 4);
          // Every thread's MMAs of this tile completed: its stage and P are
          // free; thread 0 refills the stage with tile jt + 2.
          gpu::BarrierOp::create(b, loc);
          Value ahead = add(jt, idx(kStages));
          when(arith::AndIOp::create(b, loc, isLeader, lt(ahead, numTiles)),
               [&] { issue(ahead); });
          return next;
        });

    // out = O / l, from O's registers (the last tile waited for its
    // wgmmas).
    storeOut(results, rows, out);
    gpu::TerminatorOp::create(b, loc);
  }
  /// The warp-specialised kernel (consumers = 2; see
  /// GPUMmaAttentionAttr): three warpgroups per 128 query rows of one
  /// (batch, head), grid (ceil(T / 128) * B, H, 1). Warpgroup 0, the producer,
  /// keeps 24 registers (setmaxnreg) and its first thread loads each consumer's
  /// 64 rows of Q once and K and V tiles of 64 keys into a ring of
  /// ringStages (2 or 3) stages, each with a "full" mbarrier (arrive.expect_tx,
  /// TMA) and an "empty" one on which each of the 8 consumer warps arrives once
  /// its wgmmas reading the stage completed. Warpgroups 1 and 2, the consumers
  /// (240 registers), own rows [64 c, 64 c + 64) of the block (c = warpgroup -
  /// 1) and run the one-warpgroup kernel's tile step, overlapped within
  /// the warpgroup (FlashAttention-3): step j issues S = Q K^T of tile j and
  /// P V of tile j - 1, waits for S alone (wgmma.wait_group N > 0), runs the
  /// online softmax of tile j in registers and writes its P (two parts,
  /// double-buffered per consumer) while P V of tile j - 1 is in flight,
  /// then waits for P V and rescales O. They take turns to issue their
  /// wgmmas (ping-pong, on two "turn" mbarriers), one turn per step:
  /// consumer 0 issues step j, then consumer 1, so that each consumer's
  /// softmax also runs while the other's wgmmas do.
  /// Each consumer walks the key tiles up to its own causal end; the key
  /// tiles past both ends are never loaded; a consumer whose rows all lie
  /// past T computes nothing. A consumer with fewer tiles than the other
  /// takes no turns past its last tile (the other runs freely) and
  /// releases the stages of the other's remaining tiles as they land.
  void buildSpecialized(Value q, Value k, Value v, Value out) {
    using Attr = blockc::codegen::GPUMmaAttentionAttr;
    MLIRContext *ctx = b.getContext();
    constexpr int64_t blockRows = 2 * kRows;
    // Both consumers' Q, the K/V ring, then per consumer two P buffers of
    // two parts.
    setUp(q, k, v, /*qTiles=*/2, ringStages);
    int64_t sharedBytes = Attr::getSpecializedSharedBytes(headDim, stages);
    assert(pOff + 8 * kPanelBytes + 1024 == sharedBytes &&
           "shared memory layout and size disagree");
    // Grid (ceil(T / 128) * B, H, 1): no grid-stride loop over a dynamic
    // B in z (blockc-gpu-legalize-grid), around which values would stay
    // live through the producer's 24 registers (ptxas spills them).
    Value qBlocks = arith::CeilDivUIOp::create(b, loc, tDim, idx(blockRows));
    auto launch =
        launchKernel(mul(qBlocks, bDim), hDim, c1, 3 * 128, sharedBytes);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::KernelDim3 block = launch.getBlockIds();
    Value tid = launch.getThreadIds().x;
    Value warpgroup = div(tid, 128);
    hIdx = block.y;
    bIdx = arith::DivUIOp::create(b, loc, block.x, qBlocks);
    kvh = arith::DivUIOp::create(b, loc, hIdx, idx(group));
    Value t0 =
        mul(arith::RemUIOp::create(b, loc, block.x, qBlocks), idx(blockRows));
    Value isLeader = eq(tid, 0);
    base = alignedDynamicSharedMemory(1024, pad);
    auto qPanelAt = [&](Value c, int64_t p) {
      return add(at(p * kPanelBytes), mul(c, idx(qBytes)));
    };
    // Consumer c's P buffer u (of 2), part `half` (16-bit rounding, rest).
    auto pTileAt = [&](Value c, Value u, int64_t half) {
      return add(
          at(pOff + half * kPanelBytes),
          add(mul(c, idx(4 * kPanelBytes)), mul(u, idx(2 * kPanelBytes))));
    };

    auto barriers = [&](int64_t n) {
      auto type = nvgpu::MBarrierGroupType::get(
          ctx, gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup),
          n);
      return nvgpu::MBarrierCreateOp::create(b, loc, type).getResult();
    };
    Value full = barriers(stages), empty = barriers(stages);
    Value qBars = barriers(2), turns = barriers(2);
    when(isLeader, [&] {
      for (int64_t s = 0; s < stages; ++s) {
        nvgpu::MBarrierInitOp::create(b, loc, full, c1, idx(s), Value());
        nvgpu::MBarrierInitOp::create(b, loc, empty, idx(8), idx(s), Value());
      }
      for (int64_t c = 0; c < 2; ++c) {
        nvgpu::MBarrierInitOp::create(b, loc, qBars, c1, idx(c), Value());
        nvgpu::MBarrierInitOp::create(b, loc, turns, idx(4), idx(c), Value());
      }
    });
    gpu::BarrierOp::create(b, loc);

    // Key tiles of the consumer whose rows start at `rowBase`; none if its
    // rows all lie past T.
    offset = arith::SubIOp::create(b, loc, sDim, tDim); // S - T
    auto tilesFrom = [&](Value rowBase) {
      Value n = keyTiles(rowBase);
      return arith::SelectOp::create(b, loc, lt(rowBase, tDim), n, c0)
          .getResult();
    };
    Value n0 = tilesFrom(t0), n1 = tilesFrom(add(t0, idx(kRows)));
    Value nMax = arith::MaxUIOp::create(b, loc, n0, n1);
    Value nMin = arith::MinUIOp::create(b, loc, n0, n1);
    auto falseV = arith::ConstantIntOp::create(b, loc, 0, 1);

    auto producer = scf::IfOp::create(b, loc, eq(warpgroup, 0),
                                      /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(producer.thenBlock());
      NVVM::SetMaxRegisterOp::create(b, loc, Attr::kProducerRegisters,
                                     NVVM::SetMaxRegisterAction::decrease);
      when(isLeader, [&] {
        // Each consumer's Q, when it has key tiles.
        for (int64_t c = 0; c < 2; ++c)
          when(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                     c ? n1 : n0, c0),
               [&] {
                 nvgpu::MBarrierArriveExpectTxOp::create(
                     b, loc, qBars, idx(qBytes), idx(c), Value());
                 for (int64_t p = 0; p < panels; ++p)
                   tmaLoad(qPanelAt(idx(c), p), qMap, add(t0, idx(c * kRows)),
                           hIdx, p, qBars, idx(c));
               });
        // Key tile j into stage j % stages once both consumers released
        // the stage's previous use.
        loop(c0, nMax, c1, [&](Value j) {
          Value stage = rem(j, stages);
          when(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, j,
                                     idx(stages)),
               [&] {
                 waitParity(empty,
                            arith::CmpIOp::create(b, loc,
                                                  arith::CmpIPredicate::eq,
                                                  rem(div(j, stages), 2), c0),
                            stage);
               });
          loadKeyTile(full, stage, j);
        });
      });
    }
    b.setInsertionPointToStart(producer.elseBlock());
    NVVM::SetMaxRegisterOp::create(b, loc, Attr::kConsumerRegisters,
                                   NVVM::SetMaxRegisterAction::increase);
    Value c = arith::SubIOp::create(b, loc, warpgroup, c1);
    Value isFirst = eq(c, 0);
    Value lane = rem(tid, 32);
    // The warp within the consumer's warpgroup (the accumulator layout's).
    Value warp = rem(div(tid, 32), 4);
    Value g = div(lane, 4), q4 = rem(lane, 4);
    Value rowBase = add(t0, mul(c, idx(kRows)));
    Value n = arith::SelectOp::create(b, loc, isFirst, n0, n1);
    // Each warp's lane 0 arrives on mbarrier `index` of `bars` once every
    // lane of the warp got here.
    auto warpArrive = [&](Value bars, Value index) {
      NVVM::SyncWarpOp::create(b, loc,
                               arith::ConstantIntOp::create(b, loc, -1, 32));
      when(eq(lane, 0), [&] {
        nvgpu::MBarrierArriveExpectTxOp::create(b, loc, bars, c0, index,
                                                Value());
      });
    };
    when(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, n, c0),
         [&] { waitParity(qBars, falseV, c); });

    ThreadRows rows = threadRows(warp, g, q4, rowBase);
    // Each nvgpu.warpgroup.mma commits its wgmma as one group and waits
    // for all groups but the newest `depth`: S's wgmmas of one tile are
    // sGroups groups, P V's pvGroups; the depths below never make a wgmma
    // wait for another, and the explicit waits retire what each step
    // reads.
    int64_t sGroups = headDim / 16;
    int64_t pvGroups = panels * 2 * (kKeys / 16);
    auto waitGroups = [&](int64_t pending) {
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(pending));
    };
    auto namedBarrier = [&] {
      NVVM::BarrierOp::create(
          b, loc, TypeRange{},
          arith::IndexCastOp::create(b, loc, b.getI32Type(), add(c, c1)),
          arith::ConstantIntOp::create(b, loc, 128, 32),
          NVVM::BarrierReductionAttr(), Value());
    };

    SmallVector<Value> init = initialState();
    Value scaleF = f32(scale);
    Value other = arith::SubIOp::create(b, loc, c1, c);
    Value isSecond = arith::XOrIOp::create(
        b, loc, isFirst, arith::ConstantIntOp::create(b, loc, 1, 1));
    // Turns (ping-pong): the consumers' turns alternate 0, 1, 0, 1, ...,
    // one per step: turn 0 issues S of tile 0, turn i (0 < i < n) S of
    // tile i and P V of tile i - 1, turn n P V of tile n - 1. The turns
    // i <= nMin (when both consumers have tiles) are taken by both. Each
    // turn waits for the other's previous turn on this consumer's
    // mbarrier (its 4 warps arrive after issuing); consumer 0 starts.
    // Phases: consumer 0's turn i waits for phase i - 1 of its mbarrier
    // (parity (i + 1) % 2), consumer 1's for phase i (parity i % 2).
    Value bothHaveTiles =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, nMin, c0);
    auto inTurns = [&](Value i) {
      return arith::AndIOp::create(
                 b, loc, bothHaveTiles,
                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, i,
                                       nMin))
          .getResult();
    };
    auto turn = [&](Value i) {
      Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        rem(i, 2), c0);
      Value parity = arith::XOrIOp::create(b, loc, isFirst, odd);
      Value waits = arith::AndIOp::create(
          b, loc, inTurns(i),
          arith::OrIOp::create(
              b, loc, isSecond,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, i, c0)));
      when(waits, [&] { waitParity(turns, parity, c); });
    };
    auto endTurn = [&](Value i) {
      when(inTurns(i), [&] { warpArrive(turns, other); });
    };
    auto sAt = [&](int64_t p, int64_t within) {
      return add(qPanelAt(c, p), idx(within));
    };
    auto pAt = [&](Value tile) {
      Value u = rem(tile, 2);
      return [&, u](int64_t half, int64_t kk) {
        return add(pTileAt(c, u, half), idx(kk * 32));
      };
    };
    // `state` with O replaced by `oAcc`.
    auto withO = [](ValueRange state, ArrayRef<Value> oAcc) {
      SmallVector<Value> next(state.begin(), state.end());
      llvm::copy(oAcc, next.begin() + 4);
      return next;
    };
    // The softmax of tile `jt` from its S accumulator (its group waited
    // for): m and l of `next` updated, O (in `next`, its groups waited
    // for) rescaled by alpha, P's two 16-bit parts into buffer jt % 2
    // (whose last reader, P V of tile jt - 2, every warp of this
    // warpgroup waited for before its named barrier of step jt - 1).
    auto softmaxStep = [&](Value sAcc, Value jt, SmallVector<Value> &next,
                           function_ref<void()> beforeRescale) {
      SoftmaxStep step =
          softmax(fragment(sAcc), rows, mul(jt, idx(kKeys)), scaleF, next);
      Value u = rem(jt, 2);
      storeP(
          step.p, [&](int64_t half) { return pTileAt(c, u, half); }, rows);
      beforeRescale();
      llvm::copy(rescaledO(step.alpha, next), next.begin() + 4);
      // Every warp's P (and fence) before the next step's P V reads it.
      namedBarrier();
    };

    SmallVector<Value> results;
    if (overlap) {
      // FlashAttention-3's intra-warpgroup overlap: step i issues S of tile
      // i and P V of tile i - 1, waits for S alone (wgmma.wait_group
      // pvGroups: P V stays in flight), runs the softmax of tile i and
      // stores its P into the other P buffer while P V of tile i - 1 runs,
      // then waits for P V (its V stage is free), rescales O and goes on. O's
      // operations are the same as one tile at a time (rescale by alpha of
      // tile i, then add P V of tile i), so are its values.
      // Step 0 (S of tile 0), when the consumer has tiles: a loop of 0 or 1
      // iterations.
      Value hasTiles = arith::MinUIOp::create(b, loc, n, c1);
      SmallVector<Value> first =
          loop(c0, hasTiles, c1, init, [&](Value, ValueRange state) {
            waitParity(full, useParity(c0), c0);
            turn(c0);
            // The last of S's wgmmas waits for all (wgmma.wait_group 0),
            // before the end of the turn: with its own wait_group sGroups
            // there and the wait_group 0 after the turn, ptxas 13.0
            // serialised the kernel's wgmmas at head dim 128 (C7515; found
            // by editing the PTX, docs/GPU.md). S is read next anyway.
            Value sAcc = scores(sAt, c0, /*waitLast=*/true, sGroups);
            endTurn(c0);
            SmallVector<Value> next(state.begin(), state.end());
            softmaxStep(sAcc, c0, next, [] {});
            return next;
          });
      // Steps 1 .. n - 1.
      SmallVector<Value> steps =
          loop(c1, n, c1, first, [&](Value jt, ValueRange state) {
            Value stage = rem(jt, stages);
            Value prev = arith::SubIOp::create(b, loc, jt, c1);
            Value prevStage = rem(prev, stages);
            waitParity(full, useParity(jt), stage);
            turn(jt);
            Value sAcc = scores(sAt, stage, /*waitLast=*/false, sGroups);
            SmallVector<Value> oAcc = accumulatePV(
                llvm::to_vector(state.drop_front(4)), pAt(prev), prevStage,
                /*waitLast=*/false, sGroups + pvGroups);
            endTurn(jt);
            // S of tile jt landed; P V of tile jt - 1 stays in flight.
            waitGroups(pvGroups);
            SmallVector<Value> next = withO(state, oAcc);
            softmaxStep(sAcc, jt, next, [&] {
              // P V of tile jt - 1 completed: its stage is free, O can be
              // read.
              waitGroups(0);
              warpArrive(empty, prevStage);
            });
            return next;
          });
      // Step n: P V of the last tile.
      results = loop(c0, hasTiles, c1, steps, [&](Value, ValueRange state) {
        Value last = arith::SubIOp::create(b, loc, n, c1);
        Value lastStage = rem(last, stages);
        turn(n);
        SmallVector<Value> oAcc = accumulatePV(
            llvm::to_vector(state.drop_front(4)), pAt(last), lastStage,
            /*waitLast=*/false, pvGroups);
        endTurn(n);
        waitGroups(0);
        warpArrive(empty, lastStage);
        return withO(state, oAcc);
      });
    } else {
      // Without the overlap (overlap = false on the op): one key tile at a
      // time, two turns per tile (S, then P V), each wgmma waiting for all
      // groups but the newest and the consumer for all after its turn
      // (wgmma.wait_group 0), so that no accumulator is in flight while
      // the other consumer issues. Turns i = 2 j (S of tile j) and 2 j + 1
      // (P V of tile j) for the tiles j < nMin both consumers have; S
      // turns wait for parity 1 (0) and P V turns for parity 0 (1) on
      // consumer 0's (1's) mbarrier.
      auto tileTurn = [&](Value inTurns, Value parity) {
        when(inTurns, [&] { waitParity(turns, parity, c); });
      };
      auto endTileTurn = [&](Value inTurns) {
        when(inTurns, [&] { warpArrive(turns, other); });
      };
      results = loop(c0, n, c1, init, [&](Value jt, ValueRange state) {
        Value stage = rem(jt, stages);
        waitParity(full, useParity(jt), stage);
        Value inTurns = lt(jt, nMin);
        // S = Q K^T.
        tileTurn(arith::AndIOp::create(
                     b, loc, inTurns,
                     arith::OrIOp::create(
                         b, loc, isSecond,
                         arith::CmpIOp::create(
                             b, loc, arith::CmpIPredicate::ugt, jt, c0))),
                 isFirst);
        Value sAcc = scores(sAt, stage, /*waitLast=*/false);
        endTileTurn(inTurns);
        waitGroups(0);
        SmallVector<Value> next(state.begin(), state.end());
        SoftmaxStep step =
            softmax(fragment(sAcc), rows, mul(jt, idx(kKeys)), scaleF, next);
        // O *= alpha in registers (the last tile's P V was waited for).
        SmallVector<Value> oAcc = rescaledO(step.alpha, state);
        // P's two parts into buffer jt % 2, then the named barrier before
        // the wgmmas read them.
        Value u = rem(jt, 2);
        storeP(
            step.p, [&](int64_t half) { return pTileAt(c, u, half); }, rows);
        namedBarrier();
        // O += P V, then (the other consumer's turn) waiting for it: this
        // tile's stage is free.
        tileTurn(inTurns, isSecond);
        llvm::copy(accumulatePV(oAcc, pAt(jt), stage, /*waitLast=*/false),
                   next.begin() + 4);
        endTileTurn(inTurns);
        waitGroups(0);
        warpArrive(empty, stage);
        return next;
      });
    }
    // The stages of the other consumer's remaining tiles, as they land.
    loop(n, nMax, c1, [&](Value j) {
      Value stage = rem(j, stages);
      waitParity(full, useParity(j), stage);
      warpArrive(empty, stage);
    });

    // out = O / l for the consumer's rows below T.
    storeOut(results, rows, out);
    b.setInsertionPointAfter(producer);
    gpu::TerminatorOp::create(b, loc);
  }
};

struct GPULowerWarpgroupAttentionPass
    : blockc::nvptx::impl::GPULowerWarpgroupAttentionPassBase<
          GPULowerWarpgroupAttentionPass> {
  void runOnOperation() override {
    SmallVector<blockc::codegen::WarpgroupAttentionOp> ops;
    getOperation().walk(
        [&](blockc::codegen::WarpgroupAttentionOp op) { ops.push_back(op); });
    for (blockc::codegen::WarpgroupAttentionOp op : ops) {
      auto qType = cast<MemRefType>(op.getQuery().getType());
      int64_t d = qType.getRank() == 4 ? qType.getDimSize(3) : 0;
      Type elem = qType.getElementType();
      if (d <= 0 || d % 64 != 0 || d > 256 ||
          (!elem.isBF16() && !elem.isF16()) ||
          cast<MemRefType>(op.getKey().getType()).getElementType() != elem ||
          cast<MemRefType>(op.getValue().getType()).getElementType() != elem) {
        op.emitOpError() << "needs bf16 or f16 [B, T, H, D] operands of one "
                            "type with D a multiple of 64 up to 256";
        return signalPassFailure();
      }
      int64_t consumers = op.getConsumers();
      if (consumers != 1 && (consumers != 2 || (d != 64 && d != 128))) {
        op.emitOpError() << "has consumers = " << consumers << " at head dim "
                         << d
                         << " (1, or 2 at head dims 64 and 128: the "
                            "warp-specialised kernel)";
        return signalPassFailure();
      }
      int64_t stages = op.getStages();
      if (stages != 2 && (stages != 3 || consumers != 2)) {
        op.emitOpError() << "has stages = " << stages
                         << " with consumers = " << consumers
                         << " (2, or 3 with consumers = 2: the "
                            "warp-specialised kernel's ring)";
        return signalPassFailure();
      }
      bool overlap = op.getOverlap();
      if (overlap && consumers != 2) {
        op.emitOpError() << "has overlap with consumers = " << consumers
                         << " (the intra-warpgroup overlap needs consumers "
                            "= 2: the warp-specialised kernel)";
        return signalPassFailure();
      }
      OpBuilder b(op);
      WarpgroupAttentionKernel kernel{{b, op.getLoc()},
                                      d,
                                      static_cast<int64_t>(op.getGroup()),
                                      op.getCausal(),
                                      op.getScale().convertToDouble(),
                                      elem,
                                      consumers,
                                      stages,
                                      overlap};
      kernel.build(op.getQuery(), op.getKey(), op.getValue(), op.getOut());
      op.erase();
    }
  }
};

} // namespace
