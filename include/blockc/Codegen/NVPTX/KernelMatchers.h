//===- KernelMatchers.h - what the NVPTX kernel passes rewrite --*- C++ -*-===//
//
// The ops that blockc-gpu-tile-matmul and blockc-gpu-lower-sdpa turn into
// kernels. blockc-gpu-select-tiles configures exactly these ops, and the
// kernel passes require a configuration on each of them.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_NVPTX_KERNELMATCHERS_H
#define BLOCKC_CODEGEN_NVPTX_KERNELMATCHERS_H

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace blockc::nvptx {

/// The warp size the kernels are written for.
constexpr int64_t kWarpSize = 32;

/// Whether `op` is a contraction that blockc-gpu-tile-matmul tiles: a linalg
/// op on f32 buffers, outside any gpu.launch, whose body is `out + a * b`
/// and whose indexing maps are projected permutations with exactly one N and
/// one K dimension (batch and M may be several dimensions).
bool isTiledMatmulCandidate(mlir::linalg::LinalgOp op);

/// Whether blockc-gpu-lower-sdpa lowers `op` to the fused attention kernel:
/// f32, a static head dim that is a multiple of the warp size and the same
/// for keys and values, static head counts. Other sdpa ops keep the generic
/// linalg lowering.
bool isFusedAttentionCandidate(transformer::SDPAOp op);

} // namespace blockc::nvptx

#endif // BLOCKC_CODEGEN_NVPTX_KERNELMATCHERS_H
