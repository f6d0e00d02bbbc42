//===- TileMatmulMma.cpp - the mma.sync contraction kernel ---===//
//
// The tensor-core kernel of blockc-gpu-tile-matmul on sm_80 and newer:
// cp.async into a ring of shared-memory stages, ldmatrix, mma.sync.
// See Codegen/NVPTX/Passes.td (GPUTileMatmulPass) and TileMatmul.h.
//
//===----------------------------------------------------------------------===//

#include "TileMatmul.h"
#include "blockc/Codegen/NVPTX/MmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace blockc::codegen;
using blockc::nvptx::ContractionKernel;

namespace {

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

  /// Rounds each f32 of an ldmatrix fragment to tf32 (roundToTF32).
  Value roundToTF32(Value fragment) {
    return blockc::nvptx::roundToTF32(b, loc, fragment);
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
    Value base = dynamicSharedMemory();
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

    // With a RoPE (rope_head_dim) the results go to a staging tile over the
    // ring, once every warp is past its last ldmatrix and every thread's
    // last copies are in; the RoPE then pairs its columns (below).
    Value staging;
    if (plan.rotation) {
      gpu::BarrierOp::create(b, loc);
      Type outElem =
          cast<MemRefType>(plan.rotation->output.getType()).getElementType();
      staging = memref::ViewOp::create(
          b, loc,
          MemRefType::get({tileM, tiles.getStagingRow()}, outElem,
                          MemRefLayoutAttrInterface(), wg),
          base, idx(0), ValueRange{});
    }
    Value rowInTile = add(mul(warpM, idx(warpTileM)), g),
          colInTile = add(mul(warpN, idx(outWarpN)), mul(t, idx(2)));

    // Epilogue: accumulator (i, j) of lane (g = lane / 4, t = lane % 4)
    // holds rows g and g + 8, columns 2t and 2t + 1 of its m16 x n8 tile.
    Value colBase = add(n0, colInTile);
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
            if (!staging) {
              writeResults(plan, iv, sums);
              continue;
            }
            memref::StoreOp::create(
                b, loc,
                blockc::nvptx::computeEpilogueResult(b, loc, op, plan, iv,
                                                     sums),
                staging,
                ValueRange{add(rowInTile, idx(i * 16 + r * 8)),
                           add(colInTile, idx(j * 8 + c))});
          }
      }
    // The RoPE: after a barrier (every result staged), each thread takes
    // pairs of columns d, d + D / 2 of a head in a row of the tile and
    // stores the RoPE's two values to its output (rows inside M).
    if (staging) {
      gpu::BarrierOp::create(b, loc);
      const blockc::nvptx::RotationPlan &rotation = *plan.rotation;
      rotateStaged(
          rotation,
          [&](Value r, Value c, ArrayRef<Value>) -> Value {
            return memref::LoadOp::create(b, loc, staging, ValueRange{r, c});
          },
          tileM, tileN, m0, n0, /*mLast=*/Value(), mSize, tid,
          tiles.getThreads(),
          [&](Value, Value, Value, ArrayRef<Value> iv0, ArrayRef<Value> iv1,
              Value y0, Value y1) {
            memref::StoreOp::create(b, loc, y0, rotation.output, iv0);
            memref::StoreOp::create(b, loc, y1, rotation.output, iv1);
          });
    }
    gpu::TerminatorOp::create(b, loc);
  }
};

} // namespace

gpu::LaunchOp blockc::nvptx::buildMmaMatmul(
    const ContractionKernel &base, GPUMmaTilesAttr tiles, Type elem,
    const EpiloguePlan &plan, std::optional<ProloguePlan> prologue) {
  TensorCoreKernel kernel{base, tiles, elem, plan};
  kernel.prologue = std::move(prologue);
  kernel.build();
  return kernel.launch;
}

Value blockc::nvptx::roundToTF32(OpBuilder &b, Location loc, Value vector) {
  auto type = cast<VectorType>(vector.getType());
  auto intType = VectorType::get(type.getShape(), b.getI32Type());
  auto splat = [&](int32_t v) {
    return arith::ConstantOp::create(
        b, loc, intType,
        DenseElementsAttr::get(intType, b.getI32IntegerAttr(v)));
  };
  Value bits = arith::BitcastOp::create(b, loc, intType, vector);
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
