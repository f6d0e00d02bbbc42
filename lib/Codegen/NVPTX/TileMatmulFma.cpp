//===- TileMatmulFma.cpp - the f32 FMA contraction kernel ---===//
//
// The f32 FMA kernel of blockc-gpu-tile-matmul: tiles of both operands
// staged in shared memory, a register tile of accumulators per thread.
// See Codegen/NVPTX/Passes.td (GPUTileMatmulPass) and TileMatmul.h.
//
//===----------------------------------------------------------------------===//

#include "TileMatmul.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace blockc::codegen;
using blockc::nvptx::ContractionKernel;

namespace {

/// The sizes of a GPUMatmulTilesAttr (verified there: the divisions below
/// are exact and the block and shared tiles fit).
struct Tiling {
  int64_t tileM, tileN, tileK, threadsX, threadsY;
  int64_t regM() const { return tileM / threadsY; }
  int64_t regN() const { return tileN / threadsX; }
  int64_t threads() const { return threadsX * threadsY; }
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

} // namespace

void blockc::nvptx::buildFmaMatmul(const ContractionKernel &base,
                                   GPUMatmulTilesAttr tiles) {
  MatmulKernel kernel{base,
                      {tiles.getTileM(), tiles.getTileN(), tiles.getTileK(),
                       tiles.getThreadsX(), tiles.getThreadsY()}};
  kernel.build();
}
