//===- RoPE.h - the cos/sin tables of rotary position embeddings -*- C++
//-*-===//
//
// One builder of the RoPE tables, used by the linalg lowering of
// transformer.rope (every target) and by the CPU projection epilogue that
// applies RoPE inside the Q/K kernels (blockc-cpu-fuse-rope), so that both
// rotate with the same f32 values.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_CODEGEN_COMMON_ROPE_H
#define BLOCKC_CODEGEN_COMMON_ROPE_H

#include "mlir/IR/Builders.h"

#include <utility>

namespace blockc {

/// The geometry of one rotary embedding (a transformer.rope's attributes).
struct RoPEShape {
  int64_t headDim; // D, the last dim of the rotated tensor
  int64_t rotary;  // R <= D, the rotated leading part of each head (even)
  bool interleaved;
  double theta;

  /// The partner of element j < R of a head: j's pair member (j ^ 1) in the
  /// interleaved layout, (j + R/2) mod R in the half layout.
  int64_t partner(int64_t j) const {
    return interleaved ? j ^ 1 : (j + rotary / 2) % rotary;
  }
};

/// The tables [T, D] of cos and signed sin such that the rotated element is
/// `out[t, j] = x[t, j] * cos[t, j] + x[t, partner(j)] * sin[t, j]` for
/// j < R, with position `t + offset` (offset an index value; null: 0), or
/// `positions[t]` when `positions` (a 1-D i32 tensor [T], per-token
/// positions of a ragged batch) is given; the
/// sin sign is folded in, and (1, 0) is stored beyond R so that the same
/// formula passes those elements through. T is dim `tDim` of `sizeSource`.
/// The angle and its reduction to [-pi, pi] are exact in f64 (arithmetic
/// only); cos and sin of the reduced angle are f32 math ops, which every
/// target provides natively.
std::pair<mlir::Value, mlir::Value>
buildRoPETables(mlir::OpBuilder &b, mlir::Location loc, const RoPEShape &shape,
                mlir::Value sizeSource, unsigned tDim, mlir::Value offset,
                mlir::Value positions = {});

} // namespace blockc

#endif // BLOCKC_CODEGEN_COMMON_ROPE_H
