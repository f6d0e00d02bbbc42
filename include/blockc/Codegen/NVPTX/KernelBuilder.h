//===- KernelBuilder.h - index arithmetic for NVPTX kernel builders -*- C++
//-*-===//
//
// What every hand-built kernel of lib/Codegen/NVPTX (blockc-gpu-tile-matmul,
// blockc-gpu-lower-sdpa, blockc-gpu-tile-reductions,
// blockc-gpu-tile-elementwise, ...) adds to the kernel toolkit
// (Codegen/Common/KernelToolkit.h): divisions, warp shuffles, 16-byte
// vector accesses, the aligned dynamic shared memory of the Hopper kernels
// and the online softmax of the attention kernels.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_NVPTX_KERNELBUILDER_H
#define BLOCKC_CODEGEN_NVPTX_KERNELBUILDER_H

#include "blockc/Codegen/Common/KernelToolkit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace blockc::nvptx {

struct KernelBuilder : blockc::KernelToolkit {
  mlir::Value div(mlir::Value x, int64_t d) {
    return mlir::arith::DivUIOp::create(b, loc, x, idx(d));
  }
  mlir::Value rem(mlir::Value x, int64_t d) {
    return mlir::arith::RemUIOp::create(b, loc, x, idx(d));
  }
  /// 1 / l for l > 0, else 0: the normaliser of an attention row whose
  /// softmax sum is `l` (a row that saw no key is 0).
  mlir::Value reciprocalOrZero(mlir::Value l);
  /// Stores the f32 value `v` into `out` at `at`, rounded to `out`'s
  /// element type when that is narrower (the results of bf16 / f16 blocks).
  void storeRounded(mlir::Value v, mlir::Value out, mlir::ValueRange at);
  /// `v` combined with `combine` over the lanes of a warp whose lane ids
  /// differ only in the bits of `offsets` (one `gpu.shuffle xor` per
  /// offset): every such lane ends with the same result, e.g. offsets 16,
  /// 8, 4, 2, 1 reduce the whole warp, 1, 2 a quad of lanes.
  mlir::Value
  xorReduce(mlir::Value v, llvm::ArrayRef<int32_t> offsets,
            llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> combine) {
    for (int32_t offset : offsets)
      v = combine(v, mlir::gpu::ShuffleOp::create(b, loc, v, offset,
                                                  /*width=*/32,
                                                  mlir::gpu::ShuffleMode::XOR)
                         .getShuffleResult());
    return v;
  }

  /// The 16-byte vector path of the strided buffer `buffer` (emitted on the
  /// host): ANDs into `ok` that, at run time, its innermost stride is 1,
  /// its offset and other strides are multiples of `width` elements and its
  /// base is 16-byte aligned, so that every run of `width` elements that
  /// starts at a multiple of `width` in the innermost index starts on 16
  /// bytes when `width` elements are 16 bytes or more. Returns the buffer
  /// to read and write the vectors through: `buffer` itself when its type
  /// has a static unit innermost stride, else a `memref.reinterpret_cast`
  /// with one (`vector.load` / `vector.store` need it), valid where `ok`
  /// holds.
  mlir::Value contiguousView(mlir::Value buffer, int64_t width,
                             mlir::Value &ok);

  /// The `width` elements at `indices` of `view` (a buffer with a static
  /// unit innermost stride): one 16-byte aligned `vector.load`, then each
  /// element extracted.
  llvm::SmallVector<mlir::Value>
  loadVector(mlir::Value view, mlir::ValueRange indices, int64_t width);

  /// Stores `elements` at `indices` of `view` with one 16-byte aligned
  /// `vector.store` of `vector.from_elements`.
  void storeVector(mlir::ValueRange elements, mlir::Value view,
                   mlir::ValueRange indices);

  /// The block's dynamic shared memory: a dynamic i8 memref in workgroup
  /// memory (inside a launch).
  mlir::Value dynamicSharedMemory();
  /// The block's dynamic shared memory (dynamicSharedMemory); `pad` is set to
  /// the bytes from its start to its first `alignment`-byte boundary (the
  /// Hopper kernels align to 1024, the period of the 128-byte swizzle, which
  /// TMA and wgmma apply to address bits).
  mlir::Value alignedDynamicSharedMemory(int64_t alignment, mlir::Value &pad);

  /// One key tile of the attention kernels' online softmax, on rows whose
  /// S values a quad of lanes holds (the mma.sync and wgmma accumulator
  /// layouts): `score(r, k)`, k < `perRow`, is row r's S at column
  /// 8 (k / 2) + k % 2 after the thread's first, whose key is visible
  /// (else -inf) when that column is below `keyLimit[r] - firstKey`
  /// (signed); it is scaled by `scale`. `maxAndSum` holds the rows' running
  /// maxima, then their sums, and is updated. The max and the sum are
  /// reduced over the quad (two xor shuffles each); a row that has seen no
  /// visible key yet keeps exp(-inf) = 0 weights.
  struct SoftmaxStep {
    /// exp(s - max) per score of each row.
    llvm::SmallVector<llvm::SmallVector<mlir::Value>> p;
    /// exp(old max - max) per row: rescales O.
    llvm::SmallVector<mlir::Value> alpha;
  };
  SoftmaxStep onlineSoftmax(
      int64_t perRow, llvm::function_ref<mlir::Value(int64_t, int64_t)> score,
      llvm::ArrayRef<mlir::Value> keyLimit, mlir::Value firstKey,
      mlir::Value scale, llvm::MutableArrayRef<mlir::Value> maxAndSum);
};

} // namespace blockc::nvptx

#endif // BLOCKC_CODEGEN_NVPTX_KERNELBUILDER_H
