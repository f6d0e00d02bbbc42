//===- TileMatmul.cpp - shared-memory tiled contractions on the GPU -------===//
//
// Rewrites mul-add contractions on buffers (linalg ops whose body is
// `out + a * b`) into one gpu.launch that stages tiles of both operands in
// workgroup (shared) memory and keeps a register tile of accumulators per
// thread. See Codegen/NVPTX/Passes.td (GPUTileMatmulPass).
//
//===----------------------------------------------------------------------===//

#include "EpilogueFusion.h"
#include "TileGemv.h"
#include "blockc/Codegen/NVPTX/KernelBuilder.h"
#include "blockc/Codegen/NVPTX/KernelMatchers.h"
#include "blockc/Codegen/NVPTX/MmaFragments.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"
#include "blockc/Dialect/Codegen/IR/FragmentOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace blockc::nvptx {
#define GEN_PASS_DEF_GPUTILEMATMULPASS
#include "blockc/Codegen/NVPTX/Passes.h.inc"
} // namespace blockc::nvptx

using namespace mlir;
using namespace blockc::codegen;

namespace {

using blockc::nvptx::inputsMN;

/// The sizes of a GPUMatmulTilesAttr (verified there: the divisions below
/// are exact and the block and shared tiles fit).
struct Tiling {
  int64_t tileM, tileN, tileK, threadsX, threadsY;
  int64_t regM() const { return tileM / threadsY; }
  int64_t regN() const { return tileN / threadsX; }
  int64_t threads() const { return threadsX * threadsY; }
};

/// What both contraction kernels share: the op, its loop sizes (host
/// values) and index arithmetic. Loop dimensions are grouped into batch
/// (grid z), M (grid y, rows of the tile), N (grid x) and K (the reduction).
struct ContractionKernel : blockc::nvptx::KernelBuilder {
  linalg::LinalgOp op;
  linalg::ContractionDimensions dims;
  SmallVector<Value> loopSizes; // one per loop dimension (host values)
  Value product(ArrayRef<unsigned> group) {
    Value p = idx(1);
    for (unsigned d : group)
      p = mul(p, loopSizes[d]);
    return p;
  }
  Value ceilDiv(Value v, int64_t d) {
    return arith::CeilDivUIOp::create(b, loc, v, idx(d));
  }

  /// Splits the linear index `linear` of `group` (last dimension fastest)
  /// into the per-dimension indices, written into `iv`.
  void delinearize(Value linear, ArrayRef<unsigned> group,
                   SmallVectorImpl<Value> &iv) {
    for (unsigned d : llvm::reverse(group)) {
      iv[d] = arith::RemUIOp::create(b, loc, linear, loopSizes[d]);
      linear = arith::DivUIOp::create(b, loc, linear, loopSizes[d]);
    }
  }

  /// Indices into operand `operand` for the loop indices `iv`.
  SmallVector<Value> operandIndices(OpOperand &operand, ArrayRef<Value> iv) {
    SmallVector<Value> indices;
    for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults())
      indices.push_back(iv[cast<AffineDimExpr>(e).getPosition()]);
    return indices;
  }

  std::pair<OpOperand *, OpOperand *> inputsMN() {
    return blockc::nvptx::inputsMN(op, dims);
  }

  /// The batch indices of the current block (grid z).
  SmallVector<Value> batchIndices(Value blockZ) {
    SmallVector<Value> iv(op.getNumLoops(), idx(0));
    delinearize(blockZ, dims.batch, iv);
    return iv;
  }

  /// Writes the kernel's results at the contractions' loop indices `iv`
  /// (batch, M and N set; the output columns of a pair), given the f32
  /// sums (one per contraction of `plan`): each result is its init (the
  /// plan's evaluated init, or what its buffer holds) plus its sum; with a
  /// consumer, the consumer's value is written instead.
  void writeResults(blockc::nvptx::EpiloguePlan &plan, ArrayRef<Value> iv,
                    ArrayRef<Value> sums) {
    blockc::nvptx::writeEpilogueResults(b, loc, op, plan, iv, sums);
  }

  /// out[m, n] += value where m < mSize and n < nSize (the output holds the
  /// bias or zero).
  void accumulateGuarded(Value m, Value n, Value mSize, Value nSize,
                         ArrayRef<Value> batchIv, Value value) {
    Value inside = arith::AndIOp::create(b, loc, lt(m, mSize), lt(n, nSize));
    auto ifOp = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<Value> iv(batchIv);
    delinearize(m, dims.m, iv);
    iv[dims.n.front()] = n;
    OpOperand &out = *op.getDpsInitOperand(0);
    SmallVector<Value> at = operandIndices(out, iv);
    Value old = memref::LoadOp::create(b, loc, out.get(), at);
    Value sum = arith::AddFOp::create(b, loc, old, value);
    memref::StoreOp::create(b, loc, sum, out.get(), at);
  }
};

/// Builds the f32 FMA kernel for one contraction: the reduction is staged
/// through shared memory in steps of tileK.
struct MatmulKernel : ContractionKernel {
  Tiling tiling;

  /// Whether the operand's fastest-varying index is the K dimension (then
  /// consecutive threads load consecutive k for coalesced reads).
  bool kFastest(OpOperand &operand) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    return cast<AffineDimExpr>(map.getResults().back()).getPosition() ==
           dims.k.front();
  }

  /// Copies the [tileK x rows] tile of `operand` starting at row `row0` of
  /// `rowGroup` and at `k0` into `shared[k][row]`; out-of-range elements
  /// read a clamped in-bounds address and store zero.
  void loadTile(OpOperand &operand, ArrayRef<unsigned> rowGroup, Value rows,
                int64_t tileRows, Value row0, Value k0, Value kSize,
                ArrayRef<Value> batchIv, Value tid, Value shared) {
    int64_t elems = tileRows * tiling.tileK;
    bool byK = kFastest(operand);
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    for (int64_t e = 0; e < elems / tiling.threads(); ++e) {
      Value linear = add(tid, idx(e * tiling.threads()));
      Value r, kk;
      if (byK) {
        kk = arith::RemUIOp::create(b, loc, linear, idx(tiling.tileK));
        r = arith::DivUIOp::create(b, loc, linear, idx(tiling.tileK));
      } else {
        r = arith::RemUIOp::create(b, loc, linear, idx(tileRows));
        kk = arith::DivUIOp::create(b, loc, linear, idx(tileRows));
      }
      Value row = add(row0, r), k = add(k0, kk);
      Value inside = arith::AndIOp::create(b, loc, lt(row, rows), lt(k, kSize));
      // Clamp to the last valid element (the grid only exists when the
      // sizes are non-zero, so the clamped address is in bounds).
      Value rowC = arith::MinUIOp::create(
          b, loc, row, arith::SubIOp::create(b, loc, rows, idx(1)));
      Value kC = arith::MinUIOp::create(
          b, loc, k, arith::SubIOp::create(b, loc, kSize, idx(1)));
      SmallVector<Value> iv(batchIv.begin(), batchIv.end());
      delinearize(rowC, rowGroup, iv);
      iv[dims.k.front()] = kC;
      Value v = memref::LoadOp::create(b, loc, operand.get(),
                                       operandIndices(operand, iv));
      v = arith::SelectOp::create(b, loc, inside, v, zero);
      memref::StoreOp::create(b, loc, v, shared, ValueRange{kk, r});
    }
  }

  void build() {
    MLIRContext *ctx = b.getContext();
    OpOperand &lhs = op->getOpOperand(0), &rhs = op->getOpOperand(1);
    // Which input is indexed by M (the other by N).
    bool lhsIsM = false;
    for (AffineExpr e : op.getMatchingIndexingMap(&lhs).getResults())
      if (llvm::is_contained(dims.m, cast<AffineDimExpr>(e).getPosition()))
        lhsIsM = true;
    OpOperand &aOp = lhsIsM ? lhs : rhs, &bOp = lhsIsM ? rhs : lhs;

    Value mSize = product(dims.m), nSize = loopSizes[dims.n.front()],
          kSize = loopSizes[dims.k.front()], batchSize = product(dims.batch);
    auto ceilDiv = [&](Value v, int64_t d) {
      return arith::CeilDivUIOp::create(b, loc, v, idx(d));
    };
    Value one = idx(1);
    auto sharedType = [&](int64_t rows) {
      return MemRefType::get(
          {tiling.tileK, rows + 1}, b.getF32Type(), MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
    };
    auto launch = gpu::LaunchOp::create(
        b, loc, ceilDiv(nSize, tiling.tileN), ceilDiv(mSize, tiling.tileM),
        batchSize, idx(tiling.threadsX), idx(tiling.threadsY), one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{},
        TypeRange{sharedType(tiling.tileM), sharedType(tiling.tileN)});
    launch->setAttr(CodegenDialect::kKernelAttrName,
                    KernelKindAttr::get(ctx, KernelKind::tiled_matmul));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value aShared = launch.getWorkgroupAttributions()[0];
    Value bShared = launch.getWorkgroupAttributions()[1];
    gpu::KernelDim3 block = launch.getBlockIds(),
                    thread = launch.getThreadIds();
    Value tid = add(mul(thread.y, idx(tiling.threadsX)), thread.x);
    Value m0 = mul(block.y, idx(tiling.tileM));
    Value n0 = mul(block.x, idx(tiling.tileN));
    SmallVector<Value> batchIv(op.getNumLoops(), idx(0));
    delinearize(block.z, dims.batch, batchIv);

    int64_t rm = tiling.regM(), rn = tiling.regN();
    Value zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    SmallVector<Value> init(rm * rn, zeroF);
    auto kLoop = scf::ForOp::create(
        b, loc, idx(0), kSize, idx(tiling.tileK), init,
        [&](OpBuilder &nb, Location, Value k0, ValueRange accs) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          loadTile(aOp, dims.m, mSize, tiling.tileM, m0, k0, kSize, batchIv,
                   tid, aShared);
          loadTile(bOp, dims.n, nSize, tiling.tileN, n0, k0, kSize, batchIv,
                   tid, bShared);
          gpu::BarrierOp::create(b, loc);
          auto inner = scf::ForOp::create(
              b, loc, idx(0), idx(tiling.tileK), idx(1), accs,
              [&](OpBuilder &ib, Location, Value kk, ValueRange acc) {
                OpBuilder::InsertionGuard g2(b);
                b.setInsertionPoint(ib.getInsertionBlock(),
                                    ib.getInsertionPoint());
                // Row i of the thread's tile is thread.y + threadsY * i, so
                // a warp reads consecutive columns (no bank conflicts) and
                // stores consecutive addresses.
                SmallVector<Value> av, bv, next;
                for (int64_t i = 0; i < rm; ++i)
                  av.push_back(memref::LoadOp::create(
                      b, loc, aShared,
                      ValueRange{kk, add(thread.y, idx(i * tiling.threadsY))}));
                for (int64_t j = 0; j < rn; ++j)
                  bv.push_back(memref::LoadOp::create(
                      b, loc, bShared,
                      ValueRange{kk, add(thread.x, idx(j * tiling.threadsX))}));
                for (int64_t i = 0; i < rm; ++i)
                  for (int64_t j = 0; j < rn; ++j)
                    next.push_back(math::FmaOp::create(b, loc, av[i], bv[j],
                                                       acc[i * rn + j]));
                scf::YieldOp::create(b, loc, next);
              });
          // The tile is consumed before the next iteration overwrites it.
          gpu::BarrierOp::create(b, loc);
          scf::YieldOp::create(b, loc, inner.getResults());
        });

    // Epilogue: out += acc for the in-range elements of the register tile.
    for (int64_t i = 0; i < rm; ++i) {
      Value m = add(add(m0, thread.y), idx(i * tiling.threadsY));
      for (int64_t j = 0; j < rn; ++j) {
        Value n = add(add(n0, thread.x), idx(j * tiling.threadsX));
        accumulateGuarded(m, n, mSize, nSize, batchIv,
                          kLoop.getResult(i * rn + j));
      }
    }
    gpu::TerminatorOp::create(b, loc);
  }
};

/// Builds the tensor-core kernel for one contraction of two 16-bit inputs
/// into f32 (see GPUMmaTilesAttr): a ring of `stages` shared-memory tiles
/// filled by cp.async, ldmatrix fragments and m16n8k16 mma.sync; or, for
/// two f32 inputs, the same kernel on TF32 tensor cores (m16n8k8, each
/// fragment rounded to tf32 in registers).
struct TensorCoreKernel : ContractionKernel {
  GPUMmaTilesAttr tiles;
  Type elem; // bf16, f16, or f32 (tf32)
  blockc::nvptx::EpiloguePlan plan;
  /// TF32: the producer of A evaluated on each A fragment element.
  std::optional<blockc::nvptx::ProloguePlan> prologue = std::nullopt;
  gpu::LaunchOp launch = {};
  int64_t numK = 0;                 // reduction steps (K / tile_k)
  Value tid = {}, m0 = {}, n0 = {}; // in the launch body
  SmallVector<Value> batchIv = {};
  Type tokenType = {};

  bool tf32() const { return elem.isF32(); }

  /// The prologue producer's input `in` at the producer's loop indices
  /// `pIv`.
  Value loadAt(OpOperand &in, ArrayRef<Value> pIv) {
    return blockc::nvptx::loadOperandAt(b, loc, prologue->producer, in, pIv);
  }
  int64_t elemBytes() const { return elem.getIntOrFloatBitWidth() / 8; }
  /// Elements per 16-byte cp.async chunk (and per ldmatrix row).
  int64_t chunkElems() const { return 16 / elemBytes(); }
  /// The k of one mma.sync: m16n8k16, or m16n8k8 for tf32.
  int64_t mmaK() const { return tf32() ? 8 : 16; }

  /// Rounds each f32 of an ldmatrix fragment to tf32, to nearest with ties
  /// away from zero (cvt.rna.tf32.f32, the rounding cuBLAS uses): half a
  /// tf32 ulp (bit 12) is added to the bits of finite values, and the low
  /// 13 bits are cleared, so the MMA gets a tf32 value whatever it does
  /// with those bits. Infinities stay; a NaN gets its quiet bit (bit 22),
  /// so that clearing a payload held in the low bits leaves a NaN (the
  /// addition could carry a NaN's payload into its sign).
  Value roundToTF32(Value fragment) {
    auto type = cast<VectorType>(fragment.getType());
    auto intType = VectorType::get(type.getShape(), b.getI32Type());
    auto splat = [&](int32_t v) {
      return arith::ConstantOp::create(
          b, loc, intType,
          DenseElementsAttr::get(intType, b.getI32IntegerAttr(v)));
    };
    Value bits = arith::BitcastOp::create(b, loc, intType, fragment);
    Value magnitude = arith::AndIOp::create(b, loc, bits, splat(0x7FFFFFFF));
    Value finite = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         magnitude, splat(0x7F800000));
    Value nan = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      magnitude, splat(0x7F800000));
    Value rounded = arith::AddIOp::create(b, loc, bits, splat(0x1000));
    Value quiet = arith::OrIOp::create(b, loc, bits, splat(0x00400000));
    Value special = arith::SelectOp::create(b, loc, nan, quiet, bits);
    Value result = arith::SelectOp::create(b, loc, finite, rounded, special);
    Value cleared = arith::AndIOp::create(
        b, loc, result, splat(static_cast<int32_t>(0xFFFFE000u)));
    return arith::BitcastOp::create(b, loc, type, cleared);
  }

  /// One thread's 16-byte chunk of an operand tile: its row and k offset
  /// in the tile, whether the row exists, and the operand's loop indices
  /// of the (clamped) row. Computed once per kernel, outside the reduction
  /// loop (the row's delinearization divides by dynamic sizes).
  struct Chunk {
    Value row, kOffset, rowValid;
    SmallVector<Value> iv;
    bool second = false; // of a pair: a row of the second contraction's B
  };

  /// The chunks of one operand's `tileRows x tile_k` tile that this thread
  /// copies: consecutive threads on consecutive chunks of a row (16 bytes
  /// of consecutive k each: coalesced). With `half` (a pair's B), the
  /// tile's rows alternate in runs of `half` between the two weights: run
  /// 2h + s is rows [h half, (h + 1) half) after `row0` of weight s, so that
  /// each warp's columns are its gate columns then the same up columns (the
  /// caller checks that each chunk index c stays in one run).
  SmallVector<Chunk> chunksOf(ArrayRef<unsigned> rowGroup, Value rows,
                              int64_t tileRows, Value row0, int64_t half = 0) {
    int64_t chunksPerRow = tiles.getTileK() / chunkElems();
    int64_t perThread = tileRows * chunksPerRow / tiles.getThreads();
    Value lastRow = arith::SubIOp::create(b, loc, rows, idx(1));
    SmallVector<Chunk> chunks;
    for (int64_t c = 0; c < perThread; ++c) {
      Value chunk = add(tid, idx(c * tiles.getThreads()));
      Chunk ch;
      ch.row = div(chunk, chunksPerRow);
      ch.kOffset = mul(rem(chunk, chunksPerRow), idx(chunkElems()));
      Value row = add(row0, ch.row);
      if (half) {
        int64_t run = c * (tiles.getThreads() / chunksPerRow) / half;
        ch.second = run % 2;
        row = arith::SubIOp::create(b, loc, row, idx((run - run / 2) * half));
      }
      ch.rowValid = lt(row, rows);
      ch.iv.assign(batchIv.begin(), batchIv.end());
      delinearize(arith::MinUIOp::create(b, loc, row, lastRow), rowGroup,
                  ch.iv);
      chunks.push_back(std::move(ch));
    }
    return chunks;
  }

  /// Queues the cp.async copies of `chunks` of one operand at reduction
  /// step `kTile` into `shared[stage]`. Rows past the operand's and steps
  /// past the last copy nothing (source size 0: the chunk is zero-filled)
  /// from a clamped address.
  void copyTile(OpOperand &operand, Value source, Value second,
                ArrayRef<Chunk> chunks, Value stage, Value kTile, Value shared,
                SmallVectorImpl<Value> &tokens) {
    Value kValid = lt(kTile, idx(numK));
    Value kTileC = arith::MinUIOp::create(b, loc, kTile,
                                          idx(std::max<int64_t>(numK - 1, 0)));
    Value k0 = mul(kTileC, idx(tiles.getTileK()));
    for (const Chunk &ch : chunks) {
      Value valid = arith::AndIOp::create(b, loc, ch.rowValid, kValid);
      SmallVector<Value> iv(ch.iv);
      iv[dims.k.front()] = add(k0, ch.kOffset);
      Value srcElements =
          arith::SelectOp::create(b, loc, valid, idx(chunkElems()), idx(0));
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, tokenType, shared, ValueRange{stage, ch.row, ch.kOffset},
          ch.second ? second : source, operandIndices(operand, iv),
          b.getIndexAttr(chunkElems()), srcElements, b.getUnitAttr()));
    }
  }

  void build() {
    MLIRContext *ctx = b.getContext();
    auto [aIn, bIn] = inputsMN();
    OpOperand &aOp = *aIn, &bOp = *bIn;
    int64_t tileM = tiles.getTileM(), tileN = tiles.getTileN(),
            tileK = tiles.getTileK(), stages = tiles.getStages();
    int64_t warpTileM = tileM / tiles.getWarpsM(),
            warpTileN = tileN / tiles.getWarpsN();
    int64_t mFrags = warpTileM / 16, nFrags = warpTileN / 8;
    int64_t kSize = cast<MemRefType>(aOp.get().getType()).getShape().back();
    numK = kSize / tileK;
    // A pair (gate and up) computes tile_n / 2 output columns per block:
    // each warp's first nFrags / 2 fragments are its gate columns, the
    // others the same up columns (chunksOf).
    bool paired = plan.contractions.size() == 2;
    int64_t outTileN = paired ? tileN / 2 : tileN,
            outWarpN = paired ? warpTileN / 2 : warpTileN,
            outFrags = paired ? nFrags / 2 : nFrags;
    Value bSecond =
        paired
            ? plan.contractions[1]->getOpOperand(bOp.getOperandNumber()).get()
            : Value();
    tokenType = nvgpu::DeviceAsyncTokenType::get(ctx);
    Value mSize = product(dims.m), nSize = loopSizes[dims.n.front()],
          batchSize = product(dims.batch);
    // The ring lives in dynamic shared memory (more than the 48 KiB of
    // static shared memory: the driver opts the kernel in at launch), A's
    // stages then B's.
    auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto sharedType = [&](int64_t rows) {
      return MemRefType::get({stages, rows, tiles.getSharedRow(elemBytes())},
                             elem, MemRefLayoutAttrInterface(), wg);
    };
    int64_t aBytes =
        stages * tileM * tiles.getSharedRow(elemBytes()) * elemBytes();
    Value one = idx(1);
    launch = gpu::LaunchOp::create(
        b, loc, ceilDiv(nSize, outTileN), ceilDiv(mSize, tileM), batchSize,
        idx(tiles.getThreads()), one, one,
        arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                   idx(tiles.getSharedBytes(elemBytes()))),
        /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{});
    launch->setAttr(CodegenDialect::kKernelAttrName,
                    KernelKindAttr::get(ctx, KernelKind::tensor_core_matmul));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value base = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), wg));
    Value aShared = memref::ViewOp::create(b, loc, sharedType(tileM), base,
                                           idx(0), ValueRange{});
    Value bShared = memref::ViewOp::create(b, loc, sharedType(tileN), base,
                                           idx(aBytes), ValueRange{});
    gpu::KernelDim3 block = launch.getBlockIds();
    tid = launch.getThreadIds().x;
    Value warp = div(tid, 32), lane = rem(tid, 32);
    Value warpM = div(warp, tiles.getWarpsN()),
          warpN = rem(warp, tiles.getWarpsN());
    m0 = mul(block.y, idx(tileM));
    n0 = mul(block.x, idx(outTileN));
    batchIv = batchIndices(block.z);

    SmallVector<Chunk> aChunks = chunksOf(dims.m, mSize, tileM, m0);
    SmallVector<Chunk> bChunks =
        chunksOf(dims.n, nSize, tileN, n0, paired ? outWarpN : 0);
    auto issue = [&](Value stage, Value kTile) {
      SmallVector<Value> tokens;
      // With a prologue, A's tiles come from the producer's streamed input
      // (same shape, read at the same indices).
      copyTile(aOp, prologue ? prologue->streamed->get() : aOp.get(), Value(),
               aChunks, stage, kTile, aShared, tokens);
      copyTile(bOp, bOp.get(), bSecond, bChunks, stage, kTile, bShared, tokens);
      return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens)
          .getResult();
    };
    // Warm-up: stages - 1 tiles in flight.
    Value lastGroup;
    for (int64_t s = 0; s + 1 < stages; ++s)
      lastGroup = issue(idx(s), idx(s));

    // ldmatrix.x4 row addresses of this lane (matrix q = lane / 8, row
    // lane % 8 of it; a row is 16 bytes: c = 8 16-bit or 4 f32 elements).
    // A fragment (m16 x k2c): matrices (m 0-7, k 0..c-1), (m 8-15, k 0..c-1),
    // (m 0-7, k c..2c-1), (m 8-15, k c..2c-1) are registers a0..a3 of
    // mma.sync (m16n8k16, or m16n8k8 with tf32, whose a0..a3 hold (g, t),
    // (g + 8, t), (g, t + 4), (g + 8, t + 4): one f32 per b16 pair). B
    // (stored [n][k]): (n 0-7, k 0..c-1), (n 0-7, k c..2c-1), (n 8-15,
    // k 0..c-1), (n 8-15, k c..2c-1) are b0, b1 of two n8 tiles.
    int64_t chunk = chunkElems();
    Value q = div(lane, 8), r8 = rem(lane, 8);
    Value aRow =
        add(add(mul(warpM, idx(warpTileM)), r8), mul(rem(q, 2), idx(8)));
    Value aCol = mul(div(q, 2), idx(chunk));
    Value bRow =
        add(add(mul(warpN, idx(warpTileN)), r8), mul(div(q, 2), idx(8)));
    Value bCol = mul(rem(q, 2), idx(chunk));

    // The prologue's per-row inputs at this lane's rows g and g + 8 of each
    // m16 fragment (clamped into M: rows past it are zero-filled and not
    // stored), read once; each row's producer loop indices.
    Value g = div(lane, 4), t = rem(lane, 4);
    Value rowBase = add(add(m0, mul(warpM, idx(warpTileM))), g);
    SmallVector<SmallVector<Value>> rowIv;               // [i * 2 + h]
    SmallVector<DenseMap<OpOperand *, Value>> rowValues; // [i * 2 + h]
    if (prologue) {
      Value lastRow = arith::SubIOp::create(b, loc, mSize, idx(1));
      AffineMap aMap = op.getMatchingIndexingMap(&aOp);
      for (int64_t i = 0; i < mFrags; ++i)
        for (int64_t h = 0; h < 2; ++h) {
          Value m = arith::MinUIOp::create(
              b, loc, add(rowBase, idx(i * 16 + h * 8)), lastRow);
          SmallVector<Value> iv(batchIv);
          delinearize(m, dims.m, iv);
          // The producer's loop j is A's dimension j.
          SmallVector<Value> pIv;
          for (AffineExpr e : aMap.getResults().drop_back())
            pIv.push_back(iv[cast<AffineDimExpr>(e).getPosition()]);
          pIv.push_back(idx(0));
          DenseMap<OpOperand *, Value> values;
          for (OpOperand *in : prologue->rowInputs)
            values[in] = loadAt(*in, pIv);
          rowIv.push_back(pIv);
          rowValues.push_back(std::move(values));
        }
    }

    auto accType = VectorType::get({2, 2}, b.getF32Type());
    Value zero = blockc::nvptx::zeroVector(b, loc, accType);
    SmallVector<Value> init(mFrags * nFrags, zero);
    auto fragType = VectorType::get({4, 4 / elemBytes()}, elem);
    auto kLoop = scf::ForOp::create(
        b, loc, idx(0), idx(numK), one, init,
        [&](OpBuilder &nb, Location, Value kt, ValueRange accs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          // Wait until at most stages - 2 groups are pending (step kt's
          // copies of this thread are in; the wait counts groups, the token
          // is only an operand), then one barrier: every thread's copies
          // are visible and every warp is past step kt - 1, whose stage is
          // refilled with step kt + stages - 1 while kt is consumed.
          nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup,
                                           b.getI32IntegerAttr(stages - 2));
          gpu::BarrierOp::create(b, loc);
          Value next = add(kt, idx(stages - 1));
          issue(rem(next, stages), next);
          Value stage = rem(kt, stages);
          SmallVector<Value> acc(accs);
          int64_t k = mmaK();
          auto load = [&](Value shared, Value row, Value col) {
            return nvgpu::LdMatrixOp::create(b, loc, fragType, shared,
                                             ValueRange{stage, row, col},
                                             /*transpose=*/false,
                                             /*numTiles=*/4)
                .getResult();
          };
          auto round = [&](Value frag) {
            return tf32() ? roundToTF32(frag) : frag;
          };
          for (int64_t kk = 0; kk < tileK / k; ++kk) {
            SmallVector<Value> aFrag, bFrag;
            // The prologue's per-k inputs at this lane's columns t and
            // t + 4 of the k8 step.
            SmallVector<Value> kIdx;
            SmallVector<DenseMap<OpOperand *, Value>> kValues;
            if (prologue)
              for (int64_t c = 0; c < 2; ++c) {
                Value kIndex =
                    add(add(mul(kt, idx(tileK)), idx(kk * k + 4 * c)), t);
                SmallVector<Value> pIv(rowIv.front().size(), idx(0));
                pIv.back() = kIndex;
                DenseMap<OpOperand *, Value> values;
                for (OpOperand *in : prologue->kInputs)
                  values[in] = loadAt(*in, pIv);
                kIdx.push_back(kIndex);
                kValues.push_back(std::move(values));
              }
            for (int64_t i = 0; i < mFrags; ++i) {
              Value frag =
                  load(aShared, add(aRow, idx(i * 16)), add(aCol, idx(kk * k)));
              // Register r holds (row g + 8 (r % 2), column t + 4 (r / 2)).
              if (prologue)
                for (int64_t r = 0; r < 4; ++r) {
                  int64_t h = r % 2, c = r / 2;
                  SmallVector<Value> pIv = rowIv[i * 2 + h];
                  pIv.back() = kIdx[c];
                  Value x = vector::ExtractOp::create(b, loc, frag,
                                                      ArrayRef<int64_t>{r, 0});
                  Value v = blockc::nvptx::evaluateGenericAt(
                      b, loc, prologue->producer, pIv, [&](OpOperand &in) {
                        if (&in == prologue->streamed)
                          return x;
                        if (Value row = rowValues[i * 2 + h].lookup(&in))
                          return row;
                        return kValues[c].lookup(&in);
                      });
                  frag = vector::InsertOp::create(b, loc, v, frag,
                                                  ArrayRef<int64_t>{r, 0});
                }
              aFrag.push_back(round(frag));
            }
            for (int64_t j = 0; j < nFrags / 2; ++j) {
              Value pair = round(load(bShared, add(bRow, idx(j * 16)),
                                      add(bCol, idx(kk * k))));
              bFrag.push_back(blockc::nvptx::rowPair(b, loc, pair, 0));
              bFrag.push_back(blockc::nvptx::rowPair(b, loc, pair, 2));
            }
            for (int64_t i = 0; i < mFrags; ++i)
              for (int64_t j = 0; j < nFrags; ++j)
                acc[i * nFrags + j] = nvgpu::MmaSyncOp::create(
                    b, loc, aFrag[i], bFrag[j], acc[i * nFrags + j],
                    ArrayRef<int64_t>{16, 8, k}, /*tf32Enabled=*/tf32());
          }
          scf::YieldOp::create(b, loc, acc);
        });
    // The last groups copied nothing; wait for them before exiting.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup, b.getI32IntegerAttr(0));

    // Epilogue: accumulator (i, j) of lane (g = lane / 4, t = lane % 4)
    // holds rows g and g + 8, columns 2t and 2t + 1 of its m16 x n8 tile.
    Value colBase = add(add(n0, mul(warpN, idx(outWarpN))), mul(t, idx(2)));
    // Each of the thread's rows is delinearized once (under its bounds
    // check); its columns are checked against N.
    for (int64_t i = 0; i < mFrags; ++i)
      for (int64_t r = 0; r < 2; ++r) {
        Value m = add(rowBase, idx(i * 16 + r * 8));
        auto rowIf = scf::IfOp::create(b, loc, lt(m, mSize), false);
        OpBuilder::InsertionGuard rowGuard(b);
        b.setInsertionPointToStart(rowIf.thenBlock());
        SmallVector<Value> iv(batchIv);
        delinearize(m, dims.m, iv);
        for (int64_t j = 0; j < outFrags; ++j)
          for (int64_t c = 0; c < 2; ++c) {
            Value n = add(colBase, idx(j * 8 + c));
            auto colIf = scf::IfOp::create(b, loc, lt(n, nSize), false);
            OpBuilder::InsertionGuard g2(b);
            b.setInsertionPointToStart(colIf.thenBlock());
            iv[dims.n.front()] = n;
            SmallVector<Value> sums;
            for (int64_t p = 0; p < (paired ? 2 : 1); ++p)
              sums.push_back(vector::ExtractOp::create(
                  b, loc, kLoop.getResult(i * nFrags + j + p * outFrags),
                  ArrayRef<int64_t>{r, c}));
            writeResults(plan, iv, sums);
          }
      }
    gpu::TerminatorOp::create(b, loc);
  }
};

/// Builds the warpgroup-MMA kernel (sm_90a) for one contraction (see
/// GPUWarpgroupTilesAttr): TMA loads into a ring of 128-byte swizzled
/// stages completed on mbarriers, m64nNk16 warpgroup MMAs reading both
/// operands from shared memory, an epilogue through shared memory.
struct WarpgroupKernel : ContractionKernel {
  GPUWarpgroupTilesAttr tiles;
  Type elem; // bf16 or f16
  blockc::nvptx::EpiloguePlan plan;
  gpu::LaunchOp launch = {};
  static constexpr int64_t kTileK = GPUWarpgroupTilesAttr::kTileK;
  static constexpr int64_t kRowBytes = kTileK * 2; // the swizzle's width

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
  /// filled outside the matrix.
  Value tensorMap(Value matrix, int64_t rows) {
    auto type = nvgpu::TensorMapDescriptorType::get(
        b.getContext(), sharedType({rows, kTileK}, elem),
        nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
    Value unranked = memref::CastOp::create(
        b, loc, UnrankedMemRefType::get(elem, 0), matrix);
    return nvgpu::TmaCreateDescriptorOp::create(
        b, loc, type, unranked, ValueRange{idx(rows), idx(kTileK)});
  }

  /// A view of `shape` x `type` at byte `offset` of the dynamic shared
  /// memory `base`.
  Value view(Value base, Value offset, ArrayRef<int64_t> shape, Type type) {
    return memref::ViewOp::create(b, loc, sharedType(shape, type), base, offset,
                                  ValueRange{});
  }

  Value eq(Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, idx(v));
  }

  /// Runs `body` under `condition`.
  void when(Value condition, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }

  /// A loop over [lb, ub) by `step` whose body `body(iv)` is built at the
  /// builder's insertion point.
  void loop(Value lb, Value ub, Value step, function_ref<void(Value)> body) {
    scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                       [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                         OpBuilder::InsertionGuard g(b);
                         b.setInsertionPoint(nb.getInsertionBlock(),
                                             nb.getInsertionPoint());
                         body(iv);
                         scf::YieldOp::create(b, loc);
                       });
  }

  void build() {
    MLIRContext *ctx = b.getContext();
    auto [aIn, bIn] = inputsMN();
    OpOperand &aOp = *aIn, &bOp = *bIn;
    int64_t tileM = tiles.getTileM(), tileN = tiles.getTileN(),
            stages = tiles.getStages();
    int64_t kSize = cast<MemRefType>(aOp.get().getType()).getShape().back();
    int64_t numK = llvm::divideCeil(kSize, kTileK);
    int64_t stageBytes = tiles.getStageBytes();
    int64_t aBytes = tileM * kRowBytes;
    int64_t consumers = tiles.getConsumers();
    Value mSize = product(dims.m), nSize = loopSizes[dims.n.front()];
    // A pair (gate and up): the B tile is tile_n / 2 rows of each weight,
    // so the accumulator's first half of columns are gate columns and the
    // second half the same up columns.
    bool paired = plan.contractions.size() == 2;
    int64_t outTileN = paired ? tileN / 2 : tileN;

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
      Value k0 = mul(kt, idx(kTileK));
      nvgpu::TmaAsyncLoadOp::create(
          b, loc, view(base, offset, {tileM, kTileK}, elem), full, aMap,
          ValueRange{k0, m0}, stage, Value(), Value());
      for (int64_t p = 0; p < (paired ? 2 : 1); ++p)
        nvgpu::TmaAsyncLoadOp::create(
            b, loc,
            view(base, add(offset, idx(aBytes + p * outTileN * kRowBytes)),
                 {outTileN, kTileK}, elem),
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
    auto aDescType = nvgpu::WarpgroupMatrixDescriptorType::get(
        ctx, sharedType({64, 16}, elem));
    auto bDescType = nvgpu::WarpgroupMatrixDescriptorType::get(
        ctx, sharedType({16, tileN}, elem));
    // Consumer warpgroup `w` multiplies rows [64 w, 64 w + 64) of the A
    // tile in `stage` into `acc`; k16 step kk starts 32 bytes further along
    // the swizzled rows. Each MMA waits for all but the newest group
    // (wgmma.wait_group 1): after the first, the previous step's MMAs are
    // done, and `afterFirst` runs.
    auto multiply = [&](Value stage, Value w, Value acc,
                        function_ref<void()> afterFirst) {
      Value offset = stageOffset(stage);
      Value aRows = add(offset, mul(w, idx(64 * kRowBytes)));
      Value bRows = add(offset, idx(aBytes));
      for (int64_t kk = 0; kk < kTileK / 16; ++kk) {
        Value descA = nvgpu::WarpgroupGenerateDescriptorOp::create(
            b, loc, aDescType,
            view(base, add(aRows, idx(kk * 32)), {64, 16}, elem), aMap);
        // The descriptor's tensor type is wgmma's [K, N] view of B; the
        // memref is the [N, 16] slice of the K-major tile it starts at.
        Value descB = nvgpu::WarpgroupGenerateDescriptorOp::create(
            b, loc, bDescType,
            view(base, add(bRows, idx(kk * 32)), {tileN, 16}, elem), bMap);
        acc = nvgpu::WarpgroupMmaOp::create(b, loc, accType, descA, descB,
                                            b.getI64IntegerAttr(1), UnitAttr(),
                                            UnitAttr(), acc);
        if (kk == 0 && afterFirst)
          afterFirst();
      }
      return acc;
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
      sync();
      Value tile = view(base, tileOffset, {tileM, rowFloats}, b.getF32Type());
      loop(first, idx(tileM * outTileN), idx(count), [&](Value e) {
        Value r = div(e, outTileN), c = rem(e, outTileN);
        Value m = add(m0, r), n = add(n0, c);
        when(arith::AndIOp::create(b, loc, lt(m, mSize), lt(n, nSize)), [&] {
          SmallVector<Value> iv(op.getNumLoops(), idx(0));
          delinearize(m, dims.m, iv);
          iv[dims.n.front()] = n;
          SmallVector<Value> sums;
          for (int64_t p = 0; p < (paired ? 2 : 1); ++p)
            sums.push_back(memref::LoadOp::create(
                b, loc, tile, ValueRange{r, add(c, idx(p * outTileN))}));
          writeResults(plan, iv, sums);
        });
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
    }
    gpu::TerminatorOp::create(b, loc);
  }
};

struct GPUTileMatmulPass
    : blockc::nvptx::impl::GPUTileMatmulPassBase<GPUTileMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Attribute>> candidates;
    WalkResult walk = getOperation().walk([&](linalg::LinalgOp op) {
      // Tensor cores where configured (blockc-gpu-select-tiles does on
      // sm_80 and newer), the f32 FMA kernel for f32 contractions.
      if (auto wg = op->getAttrOfType<GPUWarpgroupTilesAttr>(
              CodegenDialect::kGpuWarpgroupTilesAttrName)) {
        if (!blockc::nvptx::isWarpgroupMatmulCandidate(op)) {
          op->emitOpError()
              << "has '" << CodegenDialect::kGpuWarpgroupTilesAttrName
              << "' but is not a contraction of a bf16 or f16 [M..., K] "
                 "buffer and an [N, K] buffer of that type into f32";
          return WalkResult::interrupt();
        }
        candidates.push_back({op, wg});
        return WalkResult::advance();
      }
      if (auto mma = op->getAttrOfType<GPUMmaTilesAttr>(
              CodegenDialect::kGpuMmaTilesAttrName)) {
        Type elem = blockc::nvptx::getMmaMultiplicandType(op);
        if (!elem) {
          op->emitOpError() << "has '" << CodegenDialect::kGpuMmaTilesAttrName
                            << "' but is not a contraction of two bf16, f16 "
                               "or f32 (TF32) buffers into f32 with K "
                               "innermost";
          return WalkResult::interrupt();
        }
        // The attribute verifies 16-bit tiles; f32 tiles take twice the
        // bytes (and twice the 16-byte chunks, which the threads still
        // divide).
        if (elem.isF32()) {
          int64_t bytes = mma.getSharedBytes(4);
          // The module's chip (blockc-gpu-set-target), else any known chip.
          GPUTargetAttr target = blockc::nvptx::getGPUTarget(op, "");
          int64_t limit = target ? target.getSharedPerBlock()
                                 : GPUTargetAttr::maxKnownSharedPerBlock();
          if (bytes > limit) {
            op->emitOpError()
                << "has TF32 tiles whose " << mma.getStages() << " stages take "
                << bytes << " bytes, more than the " << limit
                << " bytes of shared memory a block may have on "
                << (target ? target.getName().str() : std::string("any chip"));
            return WalkResult::interrupt();
          }
        }
        int64_t k =
            cast<MemRefType>(op.getDpsInputs()[0].getType()).getShape().back();
        if (k % mma.getTileK() != 0) {
          op->emitOpError() << "tile_k (" << mma.getTileK()
                            << ") must divide the reduction size (" << k << ")";
          return WalkResult::interrupt();
        }
        candidates.push_back({op, mma});
        return WalkResult::advance();
      }
      if (!blockc::nvptx::isTiledMatmulCandidate(op))
        return WalkResult::advance();
      auto tiles = op->getAttrOfType<GPUMatmulTilesAttr>(
          CodegenDialect::kGpuMatmulTilesAttrName);
      if (!tiles) {
        op->emitOpError() << "has no '"
                          << CodegenDialect::kGpuMatmulTilesAttrName
                          << "' (run blockc-gpu-select-tiles first)";
        return WalkResult::interrupt();
      }
      candidates.push_back({op, tiles});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    OpBuilder b(&getContext());
    // TF32 kernels evaluate the producer of their A input (an f32 block's
    // normalisation) in registers; planned before any kernel is built.
    DenseMap<Operation *, blockc::nvptx::ProloguePlan> prologues;
    llvm::SetVector<Operation *> producers;
    if (fuseEpilogues)
      for (auto [op, config] : candidates) {
        if (!isa<GPUMmaTilesAttr>(config) ||
            !blockc::nvptx::getMmaMultiplicandType(op).isF32())
          continue;
        OpOperand *a = inputsMN(op, *linalg::inferContractionDims(op)).first;
        if (auto prologue = blockc::nvptx::planPrologue(op, *a))
          prologues[op] = *prologue;
      }
    SmallVector<blockc::nvptx::EpiloguePlan> plans;
    DenseSet<Operation *> done; // the second contractions of pairs
    for (auto [op, config] : candidates) {
      if (done.contains(op))
        continue;
      // Tensor-core kernels compute their init and their consumer in the
      // epilogue (and pair gate with up); the kernel goes where the
      // consumer was (only allocations and pure ops are in between).
      blockc::nvptx::EpiloguePlan plan;
      bool tensorCores = isa<GPUWarpgroupTilesAttr, GPUMmaTilesAttr>(config);
      if (tensorCores) {
        plan = blockc::nvptx::planEpilogue(
            op, fuseEpilogues,
            [config = config](linalg::LinalgOp first, linalg::LinalgOp second) {
              return canPair(first, second, config);
            });
        b.setInsertionPoint(plan.consumer ? plan.consumer.getOperation()
                                          : op.getOperation());
        // A producer that this kernel computes as its consumer is no
        // longer there for a later kernel's prologue.
        if (plan.consumer)
          for (auto it = prologues.begin(); it != prologues.end();) {
            auto next = std::next(it);
            if (it->second.producer == plan.consumer)
              prologues.erase(it);
            it = next;
          }
      } else {
        b.setInsertionPoint(op);
      }
      Location loc = op.getLoc();
      SmallVector<Value> sizes;
      for (Range r : op.createLoopRanges(b, loc))
        sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
      ContractionKernel base{
          {b, loc}, op, *linalg::inferContractionDims(op), sizes};
      // A dynamic M also configured for the weight-streaming kernel (left
      // here by blockc-gpu-tile-gemv): that kernel when M <= max_m at run
      // time, this one otherwise; both compute the same plan.
      scf::IfOp gemvDispatch;
      if (auto gemv =
              op->getAttrOfType<GPUGemvAttr>(CodegenDialect::kGpuGemvAttrName);
          gemv && tensorCores)
        gemvDispatch =
            blockc::nvptx::buildGemvDispatch(b, op, sizes, gemv, plan);
      if (auto wg = dyn_cast<GPUWarpgroupTilesAttr>(config)) {
        WarpgroupKernel kernel{
            base, wg, blockc::nvptx::getTensorCoreMatmulType(op), plan};
        kernel.build();
        plan.kernel = kernel.launch;
        ++numWarpgroup;
      } else if (auto mma = dyn_cast<GPUMmaTilesAttr>(config)) {
        TensorCoreKernel kernel{
            base, mma, blockc::nvptx::getMmaMultiplicandType(op), plan};
        // Not when the kernel writes what its prologue reads (other blocks
        // would read it while it is written).
        if (auto it = prologues.find(op);
            it != prologues.end() &&
            !blockc::nvptx::writesPrologueInputs(plan, it->second)) {
          kernel.prologue = it->second;
          producers.insert(it->second.producer);
          ++numPrologues;
        }
        kernel.build();
        plan.kernel = kernel.launch;
        ++numTensorCore;
      } else {
        auto tiles = cast<GPUMatmulTilesAttr>(config);
        MatmulKernel kernel{base,
                            {tiles.getTileM(), tiles.getTileN(),
                             tiles.getTileK(), tiles.getThreadsX(),
                             tiles.getThreadsY()}};
        kernel.build();
      }
      if (gemvDispatch)
        plan.kernel = gemvDispatch;
      if (plan.consumer)
        ++numEpilogues;
      if (plan.contractions.size() == 2)
        ++numPairs;
      blockc::nvptx::eraseComputedOps(plan, op, done);
      ++numTiled;
      if (tensorCores)
        plans.push_back(plan);
    }
    // A producer whose every reader now recomputes it is gone (one that
    // is also a kernel's init writer is eraseDeadWrites' to erase).
    for (const blockc::nvptx::EpiloguePlan &plan : plans)
      for (const std::optional<blockc::nvptx::InitValue> &init : plan.inits)
        if (init && init->writer)
          producers.remove(init->writer);
    for (Operation *producer : producers)
      blockc::nvptx::eraseIfUnread(cast<linalg::GenericOp>(producer));
    blockc::nvptx::eraseDeadWrites(getOperation().getBody().front(), plans);
  }

  /// Whether the tensor-core contractions `first` and `second` (configured
  /// with `config`) can run as one pair kernel: the same M-side input, the
  /// same maps and shapes, no batch dimension, and tiles that split B's
  /// rows evenly between the two weights.
  static bool canPair(linalg::LinalgOp first, linalg::LinalgOp second,
                      Attribute config) {
    StringRef name = isa<GPUWarpgroupTilesAttr>(config)
                         ? CodegenDialect::kGpuWarpgroupTilesAttrName
                         : CodegenDialect::kGpuMmaTilesAttrName;
    if (second->getAttr(name) != config ||
        first.getIndexingMapsArray() != second.getIndexingMapsArray() ||
        first->getOperandTypes() != second->getOperandTypes())
      return false;
    Type elem = blockc::nvptx::getMmaMultiplicandType(second);
    if (!elem)
      return false;
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(first);
    if (failed(dims) || !dims->batch.empty())
      return false;
    OpOperand *aIn = inputsMN(first, *dims).first;
    if (aIn->get() != second->getOpOperand(aIn->getOperandNumber()).get())
      return false;
    if (auto wg = dyn_cast<GPUWarpgroupTilesAttr>(config))
      return blockc::nvptx::isWarpgroupMatmulCandidate(second) &&
             wg.getTileN() % 16 == 0;
    auto mma = cast<GPUMmaTilesAttr>(config);
    int64_t chunksPerRow = mma.getTileK() / (elem.isF32() ? 4 : 8);
    int64_t half = mma.getTileN() / mma.getWarpsN() / 2;
    if (mma.getThreads() % chunksPerRow != 0 || half % 8 != 0)
      return false;
    return half % (mma.getThreads() / chunksPerRow) == 0;
  }
};

} // namespace
