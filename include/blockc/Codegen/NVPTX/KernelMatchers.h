//===- KernelMatchers.h - what the NVPTX kernel passes rewrite --*- C++ -*-===//
//
// The ops that blockc-gpu-tile-matmul and blockc-gpu-lower-sdpa turn into
// kernels. blockc-gpu-select-tiles configures exactly these ops, and the
// kernel passes require a configuration on each of them.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_NVPTX_KERNELMATCHERS_H
#define BLOCKC_CODEGEN_NVPTX_KERNELMATCHERS_H

#include "blockc/Dialect/Codegen/IR/GPUChips.h"
#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace blockc::nvptx {

/// The warp size the kernels are written for.
using ::blockc::codegen::kWarpSize;

/// Whether `op` is a contraction that blockc-gpu-tile-matmul tiles: a linalg
/// op on f32 buffers, outside any gpu.launch, whose body is `out + a * b`
/// and whose indexing maps are projected permutations with exactly one N and
/// one K dimension (batch and M may be several dimensions).
bool isTiledMatmulCandidate(mlir::linalg::LinalgOp op);

/// The 16-bit float type (bf16 or f16) of both inputs if `op` is a
/// contraction that blockc-gpu-tile-matmul turns into a tensor-core kernel:
/// a linalg op on buffers, outside any gpu.launch, whose body is
/// `out + extf(a) * extf(b)` with both inputs of that type and an f32
/// output, with projected-permutation maps, one N and one K dimension, K the
/// fastest-varying index of both inputs, identity layouts and a static K
/// that is a multiple of 16. Null otherwise.
mlir::Type getTensorCoreMatmulType(mlir::linalg::LinalgOp op);

/// Whether `op` is a contraction of two f32 inputs into f32 (on tensors or
/// buffers) that can run on TF32 tensor cores (mma.sync m16n8k8, when
/// `-gpu-allow-tf32` asks for it): body `out + a * b` with no widening,
/// getTensorCoreMatmulType's shape (one N and one K dimension, K innermost
/// in both inputs, static and a multiple of 16, identity layouts) and no
/// batch dimension (a projection, not attention's Q K^T).
bool isTF32MatmulCandidate(mlir::linalg::LinalgOp op);

/// The multiplicand type of a contraction on buffers that
/// blockc-gpu-tile-matmul builds an mma.sync kernel for: bf16 or f16
/// (getTensorCoreMatmulType), or f32 for a TF32 contraction
/// (isTF32MatmulCandidate). Null otherwise.
mlir::Type getMmaMultiplicandType(mlir::linalg::LinalgOp op);

/// Whether the tensor-core contraction `op` (getTensorCoreMatmulType) can
/// run on the warpgroup-MMA kernel (sm_90a): no batch dimension, the M
/// dimensions in order as the leading dimensions of the M input (so that
/// the input collapses to a 2-D [M, K] matrix for TMA) and the N input a
/// 2-D [N, K] matrix (K, a multiple of 16, gives TMA's 16-byte strides).
bool isWarpgroupMatmulCandidate(mlir::linalg::LinalgOp op);

/// Whether the TF32 contraction `op` (isTF32MatmulCandidate, on buffers)
/// can run on the warpgroup-MMA kernel with tf32 operands: the layout
/// isWarpgroupMatmulCandidate asks of 16-bit ones.
bool isWarpgroupTF32Candidate(mlir::linalg::LinalgOp op);

/// On tensors (stage 1): the f32 input `a` of a contraction
/// `out + a * extf(w)` with a 16-bit `w`, when `a` holds values of `w`'s
/// type, so that narrowing it to that type is exact: its producer is a
/// linalg op that yields `arith.extf` from that type. Null otherwise (also
/// when the contraction does not have getTensorCoreMatmulType's shape, or
/// when both inputs are 16-bit already).
mlir::OpOperand *getNarrowableMatmulOperand(mlir::linalg::LinalgOp op);

/// The 16-bit float type T (bf16 or f16) that the query, key and value of
/// `op` are each widened from by `arith.extf` (as transformer-compute-in-f32
/// writes a 16-bit block), so that a kernel may read the 16-bit tensors
/// exactly; null otherwise.
mlir::Type getWidenedAttentionType(transformer::SDPAOp op);

/// The 16-bit float type T if blockc-gpu-lower-sdpa can run `op` on tensor
/// cores: query, key and value are each `arith.extf` from T (bf16 or f16;
/// reading the 16-bit tensors is exact), with a static head dim that is a
/// multiple of 16 (at most 256) and the same for keys and values, and static
/// head counts. Null otherwise.
mlir::Type getTensorCoreAttentionType(transformer::SDPAOp op);

/// Whether the split-KV (decode step) attention of `op` can run on tensor
/// cores (GPUAttentionAttr's split_mma_warps): a fused-attention candidate
/// whose query, key and value are widened from one 16-bit type
/// (getWidenedAttentionType), with a head dim of 64 or 128 and GQA groups
/// of 2 to 8 query heads (the M rows of one m16n8k16 tile, padded).
bool isSplitKVMmaCandidate(transformer::SDPAOp op);

/// Whether blockc-gpu-lower-sdpa lowers `op` to the fused attention kernel:
/// f32, a static head dim that is a multiple of the warp size and the same
/// for keys and values, static head counts. Other sdpa ops keep the generic
/// linalg lowering.
bool isFusedAttentionCandidate(transformer::SDPAOp op);

} // namespace blockc::nvptx

#endif // BLOCKC_CODEGEN_NVPTX_KERNELMATCHERS_H
