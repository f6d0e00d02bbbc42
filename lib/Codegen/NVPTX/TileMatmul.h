//===- TileMatmul.h - the kernels of blockc-gpu-tile-matmul -----*- C++ -*-===//
//
// The three contraction kernels of blockc-gpu-tile-matmul, one file each:
// the f32 FMA kernel (TileMatmulFma.cpp), the mma.sync tensor-core kernel
// (TileMatmulMma.cpp) and the sm_90a warpgroup-MMA kernel
// (TileMatmulWarpgroup.cpp); the pass (TileMatmul.cpp) chooses by the
// op's tile attribute. What they share is ContractionKernel.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_CODEGEN_NVPTX_TILEMATMUL_H
#define BLOCKC_LIB_CODEGEN_NVPTX_TILEMATMUL_H

#include "EpilogueFusion.h"
#include "blockc/Codegen/NVPTX/KernelBuilder.h"
#include "blockc/Codegen/NVPTX/KernelMatchers.h"
#include "blockc/Dialect/Codegen/IR/CodegenDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>

namespace blockc::nvptx {

/// What both contraction kernels share: the op, its loop sizes (host
/// values) and index arithmetic. Loop dimensions are grouped into batch
/// (grid z), M (grid y, rows of the tile), N (grid x) and K (the reduction).
struct ContractionKernel : KernelBuilder {
  mlir::linalg::LinalgOp op;
  mlir::linalg::ContractionDimensions dims;
  llvm::SmallVector<mlir::Value>
      loopSizes; // one per loop dimension (host values)
  mlir::Value product(llvm::ArrayRef<unsigned> group) {
    mlir::Value p = idx(1);
    for (unsigned d : group)
      p = mul(p, loopSizes[d]);
    return p;
  }
  mlir::Value ceilDiv(mlir::Value v, int64_t d) {
    return mlir::arith::CeilDivUIOp::create(b, loc, v, idx(d));
  }

  /// Splits the linear index `linear` of `group` (last dimension fastest)
  /// into the per-dimension indices, written into `iv`.
  void delinearize(mlir::Value linear, llvm::ArrayRef<unsigned> group,
                   llvm::SmallVectorImpl<mlir::Value> &iv) {
    for (unsigned d : llvm::reverse(group)) {
      iv[d] = mlir::arith::RemUIOp::create(b, loc, linear, loopSizes[d]);
      linear = mlir::arith::DivUIOp::create(b, loc, linear, loopSizes[d]);
    }
  }

  /// Indices into operand `operand` for the loop indices `iv`.
  llvm::SmallVector<mlir::Value>
  operandIndices(mlir::OpOperand &operand, llvm::ArrayRef<mlir::Value> iv) {
    llvm::SmallVector<mlir::Value> indices;
    for (mlir::AffineExpr e : op.getMatchingIndexingMap(&operand).getResults())
      indices.push_back(iv[llvm::cast<mlir::AffineDimExpr>(e).getPosition()]);
    return indices;
  }

  std::pair<mlir::OpOperand *, mlir::OpOperand *> inputsMN() {
    return ::blockc::nvptx::inputsMN(op, dims);
  }

  /// The batch indices of the current block (grid z).
  llvm::SmallVector<mlir::Value> batchIndices(mlir::Value blockZ) {
    llvm::SmallVector<mlir::Value> iv(op.getNumLoops(), idx(0));
    delinearize(blockZ, dims.batch, iv);
    return iv;
  }

  /// Writes the kernel's results at the contractions' loop indices `iv`
  /// (batch, M and N set; the output columns of a pair), given the f32
  /// sums (one per contraction of `plan`): each result is its init (the
  /// plan's evaluated init, or what its buffer holds) plus its sum; with a
  /// consumer, the consumer's value is written instead.
  void writeResults(EpiloguePlan &plan, llvm::ArrayRef<mlir::Value> iv,
                    llvm::ArrayRef<mlir::Value> sums) {
    writeEpilogueResults(b, loc, op, plan, iv, sums);
  }

  /// Applies `rotation` (the plan's RoPE) to the output tile at (m0, n0)
  /// held in shared memory: `staged(r, c, rowIv)` gives the 16-bit result
  /// at row r, column c of its `tileM` rows of `tileN` columns (whole heads
  /// of D; `rowIv`: the contraction's loop indices with that row's M
  /// indices set). Threads `first`, `first + count`,
  /// ... each take a pair of columns c0 = h D + j, c1 = c0 + D / 2 of one
  /// row r, get both values and evaluate the RoPE's body for both
  /// (x and its rotate-half partner swapped); `store(r, c0, c1, iv0, iv1,
  /// y0, y1)` writes them (`iv0`, `iv1`: the RoPE's loop indices of the two
  /// elements). With `mSize`, rows at or past M and heads past the output
  /// are skipped; without, they are evaluated at clamped indices (rows at
  /// `mLast`). Where `count` is a multiple of tileN / 2, a thread's columns
  /// are the same in every row it takes: their indices and the RoPE's
  /// inputs indexed by head and d only (the frequency table) are computed
  /// and loaded once, before the loop.
  void rotateStaged(
      const RotationPlan &rotation,
      llvm::function_ref<mlir::Value(mlir::Value, mlir::Value,
                                     llvm::ArrayRef<mlir::Value>)>
          staged,
      int64_t tileM, int64_t tileN, mlir::Value m0, mlir::Value n0,
      mlir::Value mLast, mlir::Value mSize, mlir::Value first, int64_t count,
      llvm::function_ref<void(
          mlir::Value, mlir::Value, mlir::Value, llvm::ArrayRef<mlir::Value>,
          llvm::ArrayRef<mlir::Value>, mlir::Value, mlir::Value)>
          store);

  /// out[m, n] += value where m < mSize and n < nSize (the output holds the
  /// bias or zero).
  void accumulateGuarded(mlir::Value m, mlir::Value n, mlir::Value mSize,
                         mlir::Value nSize, llvm::ArrayRef<mlir::Value> batchIv,
                         mlir::Value value) {
    mlir::Value inside =
        mlir::arith::AndIOp::create(b, loc, lt(m, mSize), lt(n, nSize));
    auto ifOp = mlir::scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    mlir::OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    llvm::SmallVector<mlir::Value> iv(batchIv);
    delinearize(m, dims.m, iv);
    iv[dims.n.front()] = n;
    mlir::OpOperand &out = *op.getDpsInitOperand(0);
    llvm::SmallVector<mlir::Value> at = operandIndices(out, iv);
    mlir::Value old = mlir::memref::LoadOp::create(b, loc, out.get(), at);
    mlir::Value sum = mlir::arith::AddFOp::create(b, loc, old, value);
    mlir::memref::StoreOp::create(b, loc, sum, out.get(), at);
  }
};

/// Builds the f32 FMA kernel of `base.op` (see GPUMatmulTilesAttr).
void buildFmaMatmul(const ContractionKernel &base,
                    codegen::GPUMatmulTilesAttr tiles);

/// Builds the tensor-core kernel (mma.sync; TF32 for `elem` f32) of
/// `base.op` computing `plan`, with `prologue` evaluated on its A
/// fragments when given; returns its launch.
mlir::gpu::LaunchOp buildMmaMatmul(const ContractionKernel &base,
                                   codegen::GPUMmaTilesAttr tiles,
                                   mlir::Type elem, const EpiloguePlan &plan,
                                   std::optional<ProloguePlan> prologue);

/// Rounds each f32 of `vector` to tf32, to nearest with ties away from zero
/// (cvt.rna.tf32.f32, the rounding cuBLAS uses): half a tf32 ulp (bit 12)
/// is added to the bits of finite values, and the low 13 bits are cleared,
/// so the MMA gets a tf32 value whatever it does with those bits.
/// Infinities stay; a NaN gets its quiet bit (bit 22), so that clearing a
/// payload held in the low bits leaves a NaN (the addition could carry a
/// NaN's payload into its sign).
mlir::Value roundToTF32(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value vector);

/// Builds the warpgroup-MMA kernel (sm_90a) of `base.op` computing `plan`;
/// returns its launch.
mlir::gpu::LaunchOp buildWarpgroupMatmul(const ContractionKernel &base,
                                         codegen::GPUWarpgroupTilesAttr tiles,
                                         mlir::Type elem,
                                         const EpiloguePlan &plan);

} // namespace blockc::nvptx

#endif // BLOCKC_LIB_CODEGEN_NVPTX_TILEMATMUL_H
