//===- KernelBuilder.h - index arithmetic for NVPTX kernel builders -*- C++
//-*-===//
//
// What every hand-built kernel of lib/Codegen/NVPTX (blockc-gpu-tile-matmul,
// blockc-gpu-lower-sdpa, blockc-gpu-tile-reductions,
// blockc-gpu-tile-elementwise, ...) adds to the kernel toolkit
// (Codegen/Common/KernelToolkit.h): divisions, warp shuffles and 16-byte
// vector accesses.
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
};

} // namespace blockc::nvptx

#endif // BLOCKC_CODEGEN_NVPTX_KERNELBUILDER_H
