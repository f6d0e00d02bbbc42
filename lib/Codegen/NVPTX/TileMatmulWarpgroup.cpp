//===- TileMatmulWarpgroup.cpp - the warpgroup-MMA contraction kernel ---===//
//
// The sm_90a kernel of blockc-gpu-tile-matmul: TMA into a ring of swizzled
// stages on mbarriers, warpgroup MMAs (wgmma; bf16 / f16, or tf32 for f32
// operands rounded in shared memory), optionally a producer warpgroup and
// persistent blocks, and an epilogue through shared memory that ends in
// per-element stores or a TMA store.
// See Codegen/NVPTX/Passes.td (GPUTileMatmulPass) and TileMatmul.h.
//
//===----------------------------------------------------------------------===//

#include "TileMatmul.h"
#include "blockc/Dialect/Codegen/IR/FragmentOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>

using namespace mlir;
using namespace blockc::codegen;
using blockc::nvptx::ContractionKernel;

namespace {

/// Builds the warpgroup-MMA kernel (sm_90a) for one contraction (see
/// GPUWarpgroupTilesAttr): TMA loads into a ring of 128-byte swizzled
/// stages completed on mbarriers, m64nNk16 warpgroup MMAs reading both
/// operands from shared memory (m64nNk8 .tf32 for f32 operands, which the
/// consumers round to tf32 in place first), an epilogue through shared
/// memory.
struct WarpgroupKernel : ContractionKernel {
  GPUWarpgroupTilesAttr tiles;
  Type elem; // bf16 or f16, or f32 (tf32 operands)
  blockc::nvptx::EpiloguePlan plan;
  gpu::LaunchOp launch = {};
  static constexpr int64_t kTileK = GPUWarpgroupTilesAttr::kTileK;
  /// Elements whose epilogue inputs one thread loads before it stores
  /// their results (at most; a power of two dividing its share). 8 made
  /// ptxas spill 20-32 bytes in the 7B block's projections, 4 spills none.
  static constexpr int64_t kEpilogueGroup = 4;
  static constexpr int64_t kRowBytes = kTileK * 2; // the swizzle's width

  /// f32 operands multiplied as tf32 (-gpu-allow-tf32).
  bool tf32() const { return elem.isF32(); }
  /// Reduction elements per stage: one 128-byte row (64 16-bit values, 32
  /// f32), so the stages have the same bytes for every type.
  int64_t tileK() const { return tf32() ? kRowBytes / 4 : kTileK; }
  /// The k of one wgmma: m64nNk16, m64nNk8 for tf32; 32 bytes either way.
  int64_t mmaK() const { return tf32() ? 8 : 16; }

  MemRefType sharedType(ArrayRef<int64_t> shape, Type type) {
    return MemRefType::get(shape, type, MemRefLayoutAttrInterface(),
                           gpu::AddressSpaceAttr::get(
                               b.getContext(), gpu::AddressSpace::Workgroup));
  }

  /// `buffer` as the 2-D [rows, K] matrix TMA reads (the M dimensions of
  /// the M input collapse: identity layouts, isWarpgroupMatmulCandidate).
  Value asMatrix(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    if (type.getRank() == 2)
      return buffer;
    SmallVector<ReassociationIndices> groups(2);
    for (int64_t d = 0; d + 1 < type.getRank(); ++d)
      groups[0].push_back(d);
    groups[1].push_back(type.getRank() - 1);
    return memref::CollapseShapeOp::create(b, loc, buffer, groups);
  }

  /// The TMA tensor map of `matrix` with `rows` x 64 boxes, 128-byte
  /// swizzled (the layout warpgroup MMA reads K-major operands in), zero
  /// filled outside the matrix; or, with `cols`, `rows` x `cols` boxes of
  /// `type` without a swizzle (the TMA store's row-major staging tile).
  Value tensorMap(Value matrix, int64_t rows, int64_t cols = 0,
                  Type type = {}) {
    bool store = cols != 0;
    if (!store) {
      cols = tileK();
      type = elem;
    }
    auto mapType = nvgpu::TensorMapDescriptorType::get(
        b.getContext(), sharedType({rows, cols}, type),
        store ? nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE
              : nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
    Value unranked = memref::CastOp::create(
        b, loc, UnrankedMemRefType::get(type, 0), matrix);
    return nvgpu::TmaCreateDescriptorOp::create(
        b, loc, mapType, unranked, ValueRange{idx(rows), idx(cols)});
  }

  /// The output the epilogue writes if a TMA store can write it (the
  /// attribute's `tma_store`): a bf16 or f16 buffer in global memory, row
  /// major with an identity layout, whose rows are a static multiple of 16
  /// bytes (TMA's strides), indexed by the M dimensions then N in loop
  /// order (so that its collapsed [M, N] matrix is the tile's). Null
  /// otherwise: the per-element epilogue.
  Value tmaStoreOutput() {
    if (!tiles.getTmaStore())
      return {};
    Value out = blockc::nvptx::epilogueOutput(op, plan);
    auto type = dyn_cast<MemRefType>(out.getType());
    if (!type || type.getMemorySpace() || !type.getLayout().isIdentity() ||
        !(type.getElementType().isBF16() || type.getElementType().isF16()) ||
        type.getRank() < 2 || ShapedType::isDynamic(type.getShape().back()) ||
        type.getShape().back() * 2 % 16 != 0)
      return {};
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    SmallVector<unsigned> order(dims.m.begin(), dims.m.end());
    order.push_back(dims.n.front());
    if (map.getNumResults() != static_cast<unsigned>(type.getRank()) ||
        map.getNumResults() != order.size())
      return {};
    for (auto [e, d] : llvm::zip_equal(map.getResults(), order)) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim || dim.getPosition() != d)
        return {};
    }
    // With a RoPE, its [M..., H, D] output (planRotation checked it) as
    // [M..., H * D].
    if (plan.rotation) {
      auto rotated = cast<MemRefType>(plan.rotation->output.getType());
      int64_t rank = rotated.getRank();
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0; d + 2 < rank; ++d)
        groups.push_back({d});
      groups.push_back({rank - 2, rank - 1});
      return memref::CollapseShapeOp::create(b, loc, plan.rotation->output,
                                             groups);
    }
    return out;
  }

  /// A view of `shape` x `type` at byte `offset` of the dynamic shared
  /// memory `base`.
  Value view(Value base, Value offset, ArrayRef<int64_t> shape, Type type) {
    return memref::ViewOp::create(b, loc, sharedType(shape, type), base, offset,
                                  ValueRange{});
  }

  /// Applies the plan's RoPE to the staging tile of the output tile at
  /// (m0, n0), whose columns are whole heads of D: after `sync` (every
  /// thread wrote its results), threads `first`, `first + count`, ... each
  /// take a pair of columns d, d + D / 2 of one head in one row, read both
  /// values, evaluate the RoPE's body for both (x and its rotate-half
  /// partner swapped) and write both back, so that no thread reads what
  /// another writes (rotateStaged). Rows past M and heads past N read the
  /// RoPE's other inputs at clamped indices (TMA clips their results).
  void rotate(Value staging, Value m0, Value n0, Value mLast, Value first,
              int64_t count, function_ref<void()> sync) {
    sync();
    rotateStaged(
        *plan.rotation, loadFrom(staging), tiles.getTileM(), tiles.getTileN(),
        m0, n0, mLast, /*mSize=*/Value(), first, count,
        [&](Value r, Value c0, Value c1, ArrayRef<Value>, ArrayRef<Value>,
            Value y0, Value y1) {
          memref::StoreOp::create(b, loc, y0, staging, ValueRange{r, c0});
          memref::StoreOp::create(b, loc, y1, staging, ValueRange{r, c1});
        });
  }

  /// The `staged` of rotateStaged that loads the values from `tile`.
  std::function<Value(Value, Value, ArrayRef<Value>)> loadFrom(Value tile) {
    return [this, tile](Value r, Value c, ArrayRef<Value>) -> Value {
      return memref::LoadOp::create(b, loc, tile, ValueRange{r, c});
    };
  }

  Value eq(Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, idx(v));
  }

  void build() {
    MLIRContext *ctx = b.getContext();
    auto [aIn, bIn] = inputsMN();
    OpOperand &aOp = *aIn, &bOp = *bIn;
    int64_t tileM = tiles.getTileM(), tileN = tiles.getTileN(),
            stages = tiles.getStages();
    int64_t kSize = cast<MemRefType>(aOp.get().getType()).getShape().back();
    int64_t numK = llvm::divideCeil(kSize, tileK());
    int64_t stageBytes = tiles.getStageBytes();
    int64_t aBytes = tileM * kRowBytes;
    int64_t consumers = tiles.getConsumers();
    Value mSize = product(dims.m), nSize = loopSizes[dims.n.front()];
    // A pair (gate and up): the B tile is tile_n / 2 rows of each weight,
    // so the accumulator's first half of columns are gate columns and the
    // second half the same up columns.
    bool paired = plan.contractions.size() == 2;
    int64_t outTileN = paired ? tileN / 2 : tileN;

    // The output's tensor map when a TMA store writes it.
    Value output = tmaStoreOutput();
    Type outType =
        output ? cast<MemRefType>(output.getType()).getElementType() : Type();
    Value outMap = output
                       ? tensorMap(asMatrix(output), tileM, outTileN, outType)
                       : Value();

    // Host: the tensor maps of both inputs (of all three for a pair).
    Value aMap = tensorMap(asMatrix(aOp.get()), tileM);
    Value bMap = tensorMap(bOp.get(), outTileN);
    Value b2Map = paired ? tensorMap(plan.contractions[1]
                                         ->getOpOperand(bOp.getOperandNumber())
                                         .get(),
                                     outTileN)
                         : Value();

    // A block per output tile, or (persistent) one per multiprocessor of
    // the device the kernel runs on (blockcGpuMultiprocessors, of the
    // runtime), at most one per tile.
    Value one = idx(1);
    Value tilesN = ceilDiv(nSize, outTileN), tilesM = ceilDiv(mSize, tileM);
    Value numTiles = mul(tilesN, tilesM);
    Value gridX = tilesN, gridY = tilesM;
    if (tiles.getPersistent()) {
      // An LLVM declaration: a C function, which the host pipeline's C
      // wrappers (of every func.func) must not rename.
      auto module = op->getParentOfType<ModuleOp>();
      StringRef name = "blockcGpuMultiprocessors";
      auto query = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!query) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToEnd(module.getBody());
        query = LLVM::LLVMFuncOp::create(
            b, loc, name, LLVM::LLVMFunctionType::get(b.getI32Type(), {}));
      }
      Value sms = arith::IndexCastUIOp::create(
          b, loc, b.getIndexType(),
          LLVM::CallOp::create(b, loc, query, ValueRange{}).getResult());
      gridX = arith::MinUIOp::create(b, loc, numTiles, sms);
      gridY = one;
    }
    launch = gpu::LaunchOp::create(
        b, loc, gridX, gridY, one, idx(tiles.getThreads()), one, one,
        arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                   idx(tiles.getSharedBytes())),
        /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{});
    launch->setAttr(CodegenDialect::kKernelAttrName,
                    KernelKindAttr::get(ctx, KernelKind::warpgroup_matmul));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::KernelDim3 block = launch.getBlockIds();
    Value tid = launch.getThreadIds().x;
    Value warpgroup = div(tid, 128);
    Value isLeader = eq(tid, 0);

    // The ring starts at the first 1024-byte boundary of the dynamic shared
    // memory (the period of the 128-byte swizzle).
    Value pad;
    Value base = alignedDynamicSharedMemory(1024, pad);
    auto stageOffset = [&](Value stage) {
      return add(pad, mul(stage, idx(stageBytes)));
    };

    // One "full" mbarrier per stage, initialised by thread 0 for its one
    // arrival (the arrive.expect_tx before the stage's loads); with a
    // producer, one "empty" mbarrier per stage for the consumer warps'
    // releases.
    auto barsType = nvgpu::MBarrierGroupType::get(
        ctx, gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup),
        stages);
    Value full = nvgpu::MBarrierCreateOp::create(b, loc, barsType);
    Value empty = tiles.getProducer()
                      ? nvgpu::MBarrierCreateOp::create(b, loc, barsType)
                      : Value();
    when(isLeader, [&] {
      for (int64_t s = 0; s < stages; ++s) {
        nvgpu::MBarrierInitOp::create(b, loc, full, one, idx(s), Value());
        if (empty)
          nvgpu::MBarrierInitOp::create(b, loc, empty, idx(consumers * 4),
                                        idx(s), Value());
      }
    });
    gpu::BarrierOp::create(b, loc);

    // Thread 0 loads reduction step `kt` of the tile at (m0, n0) into
    // `stage`.
    auto issue = [&](Value stage, Value kt, Value m0, Value n0) {
      nvgpu::MBarrierArriveExpectTxOp::create(b, loc, full, idx(stageBytes),
                                              stage, Value());
      Value offset = stageOffset(stage);
      Value k0 = mul(kt, idx(tileK()));
      nvgpu::TmaAsyncLoadOp::create(
          b, loc, view(base, offset, {tileM, tileK()}, elem), full, aMap,
          ValueRange{k0, m0}, stage, Value(), Value());
      for (int64_t p = 0; p < (paired ? 2 : 1); ++p)
        nvgpu::TmaAsyncLoadOp::create(
            b, loc,
            view(base, add(offset, idx(aBytes + p * outTileN * kRowBytes)),
                 {outTileN, tileK()}, elem),
            full, p ? b2Map : bMap, ValueRange{k0, n0}, stage, Value(),
            Value());
    };
    // Waits until the `it`-th use of the ring (counted over the block's
    // tiles) has landed in its stage.
    auto waitFull = [&](Value stage, Value it) {
      Value parity = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           rem(div(it, stages), 2), idx(0));
      nvgpu::MBarrierTryWaitParityOp::create(b, loc, full, parity,
                                             idx(10000000), stage);
    };

    auto accType = nvgpu::WarpgroupAccumulatorType::get(
        ctx, VectorType::get({64, tileN}, b.getF32Type()));
    // The descriptors' tensor types say the multiplicand type (nvgpu
    // takes tf32 there, the f32 words of shared memory as tf32 operands).
    Type mmaType = tf32() ? Type(b.getTF32Type()) : elem;
    auto aDescType = nvgpu::WarpgroupMatrixDescriptorType::get(
        ctx, sharedType({64, mmaK()}, mmaType));
    auto bDescType = nvgpu::WarpgroupMatrixDescriptorType::get(
        ctx, sharedType({mmaK(), tileN}, mmaType));
    // Consumer warpgroup `w` multiplies rows [64 w, 64 w + 64) of the A
    // tile in `stage` into `acc`; k16 (tf32: k8) step kk starts 32 bytes
    // further along the swizzled rows. Each MMA waits for all but the newest
    // group (wgmma.wait_group 1): after the first, the previous step's MMAs
    // are done, and `afterFirst` runs.
    auto multiply = [&](Value stage, Value w, Value acc,
                        function_ref<void()> afterFirst) {
      Value offset = stageOffset(stage);
      Value aRows = add(offset, mul(w, idx(64 * kRowBytes)));
      Value bRows = add(offset, idx(aBytes));
      for (int64_t kk = 0; kk < tileK() / mmaK(); ++kk) {
        Value descA = nvgpu::WarpgroupGenerateDescriptorOp::create(
            b, loc, aDescType,
            view(base, add(aRows, idx(kk * 32)), {64, mmaK()}, elem), aMap);
        // The descriptor's tensor type is wgmma's [K, N] view of B; the
        // memref is the [N, k] slice of the K-major tile it starts at.
        Value descB = nvgpu::WarpgroupGenerateDescriptorOp::create(
            b, loc, bDescType,
            view(base, add(bRows, idx(kk * 32)), {tileN, mmaK()}, elem), bMap);
        acc = nvgpu::WarpgroupMmaOp::create(b, loc, accType, descA, descB,
                                            b.getI64IntegerAttr(1), UnitAttr(),
                                            UnitAttr(), acc);
        if (kk == 0 && afterFirst)
          afterFirst();
      }
      return acc;
    };

    // tf32: threads `first`, `first + count`, ... round the f32 words of
    // `stage` (its A and B tiles, as TMA wrote them) to tf32 in place, 16
    // bytes at a time (the swizzle moves whole 16-byte chunks, so the words
    // need no coordinates), as the mma.sync kernel rounds its fragments;
    // then fence.proxy.async: the generic-proxy writes before the wgmmas
    // (async proxy) read them, once the caller's barrier has joined the
    // threads.
    auto roundStage = [&](Value stage, Value first, int64_t count) {
      Type f32 = b.getF32Type();
      auto chunkType = VectorType::get({4}, f32);
      Value words = view(base, stageOffset(stage), {stageBytes / 4}, f32);
      loop(first, idx(stageBytes / 16), idx(count), [&](Value c) {
        Value at = mul(c, idx(4));
        Value chunk =
            vector::LoadOp::create(b, loc, chunkType, words, ValueRange{at},
                                   /*nontemporal=*/false, llvm::MaybeAlign(16));
        vector::StoreOp::create(b, loc,
                                blockc::nvptx::roundToTF32(b, loc, chunk),
                                words, ValueRange{at},
                                /*nontemporal=*/false, llvm::MaybeAlign(16));
      });
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    };

    // The f32 tile's rows are padded by 16 bytes: a store of the
    // accumulator fragment writes 8 rows at once (lane 4g + q: row g), which
    // unpadded rows (a multiple of 128 bytes) would put in one bank.
    int64_t rowFloats = GPUWarpgroupTilesAttr::getOutputRowFloats(tileN);
    // Epilogue of the tile at (m0, n0), once its MMAs completed
    // (wgmma.wait_group 0): consumer warpgroup `w` stores its accumulator
    // `acc` into the f32 tile at `tileOffset` (after `sync`:
    // the tile's previous readers and the ring's are done), and after
    // `sync` again threads `first`, `first + count`, ... turn the tile into
    // results, consecutive threads on consecutive columns.
    //
    // With a TMA store (`output`), the results go to the staging tile after
    // the f32 tile instead, and thread `first` = 0 stores it once every
    // thread wrote and fenced its part; it waits for the previous tile's
    // store to have read the staging tile before the threads write it again.
    auto epilogue = [&](Value acc, Value w, Value m0, Value n0,
                        Value tileOffset, Value first, int64_t count,
                        function_ref<void()> sync) {
      sync();
      Value padded =
          view(base, add(tileOffset, mul(w, idx(64 * rowFloats * 4))),
               {64, rowFloats}, b.getF32Type());
      // This thread's registers in the PTX ISA's layout (warp v = tid / 32
      // % 4 of its warpgroup, lane 4 g + q: rows 16 v + g + 8 h, columns
      // 8 j + 2 q + e in element 4 j + 2 h + e), stored two at a time.
      // Upstream's nvgpu.warpgroup.mma.store takes the warp as tid / 32 of
      // the whole block, which is right for a block's first warpgroup only.
      Value frag = AccumulatorToFragmentOp::create(
          b, loc, VectorType::get({tileN / 2}, b.getF32Type()), acc);
      Value lane = rem(tid, 32);
      Value row0 = add(mul(rem(div(tid, 32), 4), idx(16)), div(lane, 4));
      Value col0 = mul(rem(lane, 4), idx(2));
      for (int64_t j = 0; j < tileN / 8; ++j)
        for (int64_t h = 0; h < 2; ++h) {
          SmallVector<Value> two;
          for (int64_t e = 0; e < 2; ++e)
            two.push_back(vector::ExtractOp::create(
                b, loc, frag, ArrayRef<int64_t>{4 * j + 2 * h + e}));
          Value pair = vector::FromElementsOp::create(
              b, loc, VectorType::get({2}, b.getF32Type()), two);
          vector::StoreOp::create(
              b, loc, pair, padded,
              ValueRange{add(row0, idx(8 * h)), add(col0, idx(8 * j))},
              /*nontemporal=*/false, llvm::MaybeAlign(8));
        }
      Value storer = output ? eq(first, 0) : Value();
      if (output)
        when(storer, [&] {
          NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, b.getUnitAttr());
        });
      sync();
      Value tile = view(base, tileOffset, {tileM, rowFloats}, b.getF32Type());
      Value staging =
          output ? view(base, add(tileOffset, idx(tiles.getStagingOffset())),
                        {tileM, outTileN}, outType)
                 : Value();
      // The per-element epilogue with a RoPE: each thread takes pairs of
      // columns d, d + D / 2 of a head in a row of the f32 tile, computes
      // the consumer's value of both and stores the RoPE's two values to
      // its output (rows inside M).
      if (plan.rotation && !output) {
        const blockc::nvptx::RotationPlan &rotation = *plan.rotation;
        rotateStaged(
            rotation,
            [&](Value r, Value c, ArrayRef<Value> rowIv) -> Value {
              SmallVector<Value> iv(rowIv);
              iv[dims.n.front()] = add(n0, c);
              Value sum =
                  memref::LoadOp::create(b, loc, tile, ValueRange{r, c});
              return blockc::nvptx::computeEpilogueResult(b, loc, op, plan, iv,
                                                          {sum});
            },
            tileM, tileN, m0, n0, /*mLast=*/Value(), mSize, first, count,
            [&](Value, Value, Value, ArrayRef<Value> iv0, ArrayRef<Value> iv1,
                Value y0, Value y1) {
              memref::StoreOp::create(b, loc, y0, rotation.output, iv0);
              memref::StoreOp::create(b, loc, y1, rotation.output, iv1);
            });
        return;
      }
      // Each thread turns tileM * outTileN / count elements into results,
      // kEpilogueGroup at a time: first the memory inputs of the group's
      // elements (residuals, inits: at indices clamped into the output, so
      // unguarded, and so in flight together), then each element's result
      // where it is inside the output. One element at a time, each load
      // would wait behind the previous element's store.
      int64_t elements = tileM * outTileN;
      int64_t group = 1;
      while (group < kEpilogueGroup && elements % (count * group * 2) == 0)
        group *= 2;
      Value mLast = arith::SubIOp::create(b, loc, mSize, idx(1));
      Value nLast = arith::SubIOp::create(b, loc, nSize, idx(1));
      auto results = [&](ArrayRef<Value> es) {
        SmallVector<Value> inside;
        SmallVector<SmallVector<Value>> ivs, loaded;
        for (Value e : es) {
          Value r = div(e, outTileN), c = rem(e, outTileN);
          Value m = add(m0, r), n = add(n0, c);
          inside.push_back(
              arith::AndIOp::create(b, loc, lt(m, mSize), lt(n, nSize)));
          SmallVector<Value> iv(op.getNumLoops(), idx(0));
          delinearize(arith::MinUIOp::create(b, loc, m, mLast), dims.m, iv);
          iv[dims.n.front()] = arith::MinUIOp::create(b, loc, n, nLast);
          loaded.push_back(
              blockc::nvptx::loadEpilogueInputs(b, loc, op, plan, iv));
          ivs.push_back(std::move(iv));
        }
        for (size_t i = 0; i < es.size(); ++i) {
          Value e = es[i];
          auto result = [&] {
            Value r = div(e, outTileN), c = rem(e, outTileN);
            SmallVector<Value> sums;
            for (int64_t p = 0; p < (paired ? 2 : 1); ++p)
              sums.push_back(memref::LoadOp::create(
                  b, loc, tile, ValueRange{r, add(c, idx(p * outTileN))}));
            if (!output)
              return blockc::nvptx::writeEpilogueResults(
                  b, loc, op, plan, ivs[i], sums, loaded[i]);
            // Every element of the staging tile (those outside the output
            // from clamped inputs: the TMA store clips them).
            memref::StoreOp::create(
                b, loc,
                blockc::nvptx::computeEpilogueResult(b, loc, op, plan, ivs[i],
                                                     sums, loaded[i]),
                staging, ValueRange{r, c});
          };
          if (output)
            result();
          else
            when(inside[i], result);
        }
      };
      // count = 2 tile_m (a consumer warpgroup per 64 rows) and the output
      // tile's width is a multiple of 8 (the attribute's verifier): each
      // thread's share is outTileN / 2 elements.
      assert(elements % count == 0 && "a thread's share is not whole");
      loop(idx(0), idx(elements / count), idx(group), [&](Value i) {
        SmallVector<Value> es;
        for (int64_t u = 0; u < group; ++u)
          es.push_back(add(first, mul(add(i, idx(u)), idx(count))));
        results(es);
      });
      if (!output)
        return;
      if (plan.rotation)
        rotate(staging, m0, n0, mLast, first, count, sync);
      // Each thread's generic-proxy writes of the staging tile before the
      // TMA store (async proxy) reads them; one bulk group per tile.
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
      sync();
      when(storer, [&] {
        nvgpu::TmaAsyncStoreOp::create(b, loc, staging, outMap,
                                       ValueRange{n0, m0}, Value());
        NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
      });
    };
    // The storing thread waits for its last store to have read the staging
    // tile before the block's shared memory goes.
    auto finishStores = [&](Value first) {
      if (output)
        when(eq(first, 0), [&] {
          NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, b.getUnitAttr());
        });
    };

    // The reduction of one tile: `step(kt, acc)` for kt = 0 .. numK - 1,
    // from a zero accumulator; returns the last accumulator.
    auto reduceTile = [&](function_ref<Value(Value, Value)> step) {
      Value acc0 =
          nvgpu::WarpgroupMmaInitAccumulatorOp::create(b, loc, accType);
      auto kLoop = scf::ForOp::create(
          b, loc, idx(0), idx(numK), one, ValueRange{acc0},
          [&](OpBuilder &nb, Location, Value kt, ValueRange accs) {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            scf::YieldOp::create(b, loc, step(kt, accs.front()));
          });
      return kLoop.getResult(0);
    };

    if (!tiles.getProducer()) {
      // Every warpgroup multiplies; thread 0 also keeps `stages - 1` steps
      // in flight, refilling the stage of step kt - 1 once the block's
      // barrier shows every warpgroup is done with it.
      Value m0 = mul(block.y, idx(tileM)), n0 = mul(block.x, idx(outTileN));
      when(isLeader, [&] {
        for (int64_t s = 0; s + 1 < stages && s < numK; ++s)
          issue(idx(s), idx(s), m0, n0);
      });
      Value acc = reduceTile([&](Value kt, Value acc) {
        Value stage = rem(kt, stages);
        waitFull(stage, kt);
        if (tf32()) {
          roundStage(stage, tid, tiles.getThreads());
          gpu::BarrierOp::create(b, loc);
        }
        acc = multiply(stage, warpgroup, acc, nullptr);
        // Each warpgroup's first MMA of this step waited for its MMAs of
        // step kt - 1: after the barrier, that step's stage is free.
        gpu::BarrierOp::create(b, loc);
        Value next = add(kt, idx(stages - 1));
        when(arith::AndIOp::create(b, loc, isLeader, lt(next, idx(numK))),
             [&] { issue(rem(next, stages), next, m0, n0); });
        return acc;
      });
      // The tile reuses the ring once every warpgroup is done reading it.
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
      epilogue(acc, warpgroup, m0, n0, pad, tid, tiles.getThreads(),
               [&] { gpu::BarrierOp::create(b, loc); });
      finishStores(tid);
      gpu::TerminatorOp::create(b, loc);
      return;
    }

    // Warp-specialised: warpgroup 0 produces, the others consume. Both
    // walk the same tiles; `it0` counts the ring's uses before the tile.
    auto forEachTile = [&](function_ref<void(Value, Value, Value)> body) {
      if (!tiles.getPersistent())
        return body(mul(block.y, idx(tileM)), mul(block.x, idx(outTileN)),
                    idx(0));
      // Grouped order: kGroupM row tiles at a time, column by column, so
      // that the blocks running at once share the weight's columns in L2.
      Value grid = launch.getGridSize().x;
      int64_t groupM = GPUWarpgroupTilesAttr::kGroupM;
      loop(block.x, numTiles, grid, [&](Value t) {
        Value it0 =
            mul(arith::DivUIOp::create(
                    b, loc, arith::SubIOp::create(b, loc, t, block.x), grid),
                idx(numK));
        Value perGroup = mul(tilesN, idx(groupM));
        Value group = arith::DivUIOp::create(b, loc, t, perGroup);
        Value firstM = mul(group, idx(groupM));
        Value rows = arith::MinUIOp::create(
            b, loc, arith::SubIOp::create(b, loc, tilesM, firstM), idx(groupM));
        Value inGroup = arith::RemUIOp::create(b, loc, t, perGroup);
        Value tm = add(firstM, arith::RemUIOp::create(b, loc, inGroup, rows));
        Value tn = arith::DivUIOp::create(b, loc, inGroup, rows);
        body(mul(tm, idx(tileM)), mul(tn, idx(outTileN)), it0);
      });
    };
    auto producer = scf::IfOp::create(b, loc, eq(warpgroup, 0),
                                      /*withElseRegion=*/true);
    {
      // The producer keeps 40 registers; its first thread fills each stage
      // once the consumer warps released its previous use.
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(producer.thenBlock());
      NVVM::SetMaxRegisterOp::create(b, loc,
                                     GPUWarpgroupTilesAttr::kProducerRegisters,
                                     NVVM::SetMaxRegisterAction::decrease);
      when(isLeader, [&] {
        forEachTile([&](Value m0, Value n0, Value it0) {
          loop(idx(0), idx(numK), one, [&](Value kt) {
            Value it = add(it0, kt);
            Value stage = rem(it, stages);
            when(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, it,
                                       idx(stages)),
                 [&] {
                   // Use u = it / stages needs the release of use u - 1.
                   Value parity =
                       arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             rem(div(it, stages), 2), idx(0));
                   nvgpu::MBarrierTryWaitParityOp::create(b, loc, empty, parity,
                                                          idx(10000000), stage);
                 });
            issue(stage, kt, m0, n0);
          });
        });
      });
    }
    {
      // Consumers: all the other registers; each warp releases a stage
      // once its MMAs of that stage completed (wgmma.wait_group is
      // warp-synchronous, bar.warp.sync makes every lane's wait precede
      // lane 0's arrival).
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(producer.elseBlock());
      NVVM::SetMaxRegisterOp::create(b, loc, tiles.getConsumerRegisters(),
                                     NVVM::SetMaxRegisterAction::increase);
      Value w = arith::SubIOp::create(b, loc, warpgroup, one);
      Value ctid = arith::SubIOp::create(b, loc, tid, idx(128));
      auto release = [&](Value stage) {
        NVVM::SyncWarpOp::create(b, loc,
                                 arith::ConstantIntOp::create(b, loc, -1, 32));
        when(eq(rem(tid, 32), 0), [&] {
          nvgpu::MBarrierArriveExpectTxOp::create(b, loc, empty, idx(0), stage,
                                                  Value());
        });
      };
      // The f32 tile: in the ring once the consumers are done with it, or
      // (persistent) after it, so that the producer fills the ring with
      // the next tile meanwhile.
      Value tileOffset =
          tiles.getPersistent() ? add(pad, idx(tiles.getRingBytes())) : pad;
      int64_t consumerThreads = consumers * 128;
      auto consumersSync = [&] {
        NVVM::BarrierOp::create(
            b, loc, TypeRange{}, arith::ConstantIntOp::create(b, loc, 1, 32),
            arith::ConstantIntOp::create(b, loc, consumerThreads, 32),
            NVVM::BarrierReductionAttr(), Value());
      };
      forEachTile([&](Value m0, Value n0, Value it0) {
        Value acc = reduceTile([&](Value kt, Value acc) {
          Value it = add(it0, kt);
          Value stage = rem(it, stages);
          waitFull(stage, it);
          if (tf32()) {
            roundStage(stage, ctid, consumerThreads);
            consumersSync();
          }
          return multiply(stage, w, acc, [&] {
            when(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, kt,
                                       idx(0)),
                 [&] {
                   release(rem(arith::SubIOp::create(b, loc, it, one), stages));
                 });
          });
        });
        // The tile's last stage is free once its MMAs completed.
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
        release(rem(add(it0, idx(numK - 1)), stages));
        epilogue(acc, w, m0, n0, tileOffset, ctid, consumerThreads,
                 [&] { consumersSync(); });
      });
      finishStores(ctid);
    }
    gpu::TerminatorOp::create(b, loc);
  }
};

} // namespace

gpu::LaunchOp blockc::nvptx::buildWarpgroupMatmul(const ContractionKernel &base,
                                                  GPUWarpgroupTilesAttr tiles,
                                                  Type elem,
                                                  const EpiloguePlan &plan) {
  WarpgroupKernel kernel{base, tiles, elem, plan};
  kernel.build();
  return kernel.launch;
}
