//===- EmulatorMatrix.h - warp-level matrix instructions --------*- C++ -*-===//
//
// What the GPU emulator computes when a warp completes a tensor-core
// instruction: the data movement of ldmatrix and the arithmetic of mma.sync,
// over the 32 lanes' registers laid out exactly as the PTX ISA defines the
// fragments ("Warp-level matrix instructions": "Matrix fragments for
// mma.m16n8k16 with floating point type", "ldmatrix"). Pure functions,
// unit-tested against scalar matrix code (unittests/Runtime).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_RUNTIME_EMULATORMATRIX_H
#define BLOCKC_RUNTIME_EMULATORMATRIX_H

#include <cstdint>

namespace blockc::emu {

constexpr int kLanes = 32;

/// The 16-bit multiplicand types of mma.sync m16n8k16 with f32
/// accumulators.
enum class MmaType : int32_t { BF16 = 0, F16 = 1 };

/// The f32 value of a bf16 or f16 bit pattern (exact; f16 subnormals,
/// infinities and NaNs included).
float widen(MmaType type, uint16_t bits);

/// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32 for
/// one warp. Lane l = 4 * g + t (g = groupID, t = threadID_in_group) holds:
///  - a[l][0..3]: A (16 x 16) elements (g, 2t..2t+1), (g+8, 2t..2t+1),
///    (g, 2t+8..2t+9), (g+8, 2t+8..2t+9), two 16-bit values per register,
///    the lower column in the low half;
///  - b[l][0..1]: B (16 x 8, K x N) elements (2t..2t+1, g) and
///    (2t+8..2t+9, g);
///  - c[l][0..3], d[l][0..3]: C and D (16 x 8) elements (g, 2t), (g, 2t+1),
///    (g+8, 2t), (g+8, 2t+1).
/// D = A B + C: the 16 exact products and C summed in double precision and
/// rounded once to f32 (the hardware's internal accumulation order and
/// precision are not specified; this is its exact value, rounded).
void mmaM16N8K16(MmaType type, const uint32_t a[kLanes][4],
                 const uint32_t b[kLanes][2], const float c[kLanes][4],
                 float d[kLanes][4]);

/// ldmatrix.sync.aligned.m8n8.x{tiles}{.trans}.shared.b16 for one warp:
/// lanes 8i .. 8i+7 give the addresses of rows 0-7 of matrix i (8 16-bit
/// elements each) for i < tiles; lane l = 4 * g + t receives in out[l][i]
/// elements (g, 2t) and (g, 2t+1) of matrix i (the lower column in the low
/// half), or with `transpose` elements (2t, g) and (2t+1, g).
void ldMatrix(int tiles, bool transpose, const uint16_t *const rows[kLanes],
              uint32_t out[kLanes][4]);

} // namespace blockc::emu

#endif // BLOCKC_RUNTIME_EMULATORMATRIX_H
