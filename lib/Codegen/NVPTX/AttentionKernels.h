//===- AttentionKernels.h - the attention kernels' shared parts -*- C++ -*-===//
//
// What the tensor-core attention kernels of lib/Codegen/NVPTX
// (blockc-gpu-lower-sdpa's mma.sync kernel, the warpgroup kernels of
// blockc-gpu-lower-warpgroup-attention) share beyond KernelBuilder (which
// holds their online softmax and row normaliser). Private to those two
// files.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_LIB_CODEGEN_NVPTX_ATTENTIONKERNELS_H
#define BLOCKC_LIB_CODEGEN_NVPTX_ATTENTIONKERNELS_H

#include "blockc/Codegen/NVPTX/KernelBuilder.h"

#include <utility>

namespace blockc::nvptx {

/// The attention kernels' epilogue: out = O / l for each of the thread's
/// query rows `rows[r]` below `tDim` (a row without any visible key,
/// l[r] = 0, is 0), into out[bIdx, rows[r], hIdx, d], rounded to out's
/// element type (storeRounded). `valueAt(r, i)` builds the row's i-th
/// value of O (i < `perRow`) and returns it with its column d.
inline void storeAttentionRows(
    KernelBuilder &kb, mlir::Value out, mlir::Value bIdx, mlir::Value hIdx,
    mlir::ValueRange rows, mlir::Value tDim, mlir::ValueRange l, int64_t perRow,
    llvm::function_ref<std::pair<mlir::Value, mlir::Value>(int64_t, int64_t)>
        valueAt) {
  for (int64_t r = 0, e = rows.size(); r < e; ++r)
    kb.when(kb.lt(rows[r], tDim), [&] {
      mlir::Value inv = kb.reciprocalOrZero(l[r]);
      for (int64_t i = 0; i < perRow; ++i) {
        std::pair<mlir::Value, mlir::Value> od = valueAt(r, i);
        kb.storeRounded(
            mlir::arith::MulFOp::create(kb.b, kb.loc, od.first, inv), out,
            mlir::ValueRange{bIdx, rows[r], hIdx, od.second});
      }
    });
}

} // namespace blockc::nvptx

#endif // BLOCKC_LIB_CODEGEN_NVPTX_ATTENTIONKERNELS_H
