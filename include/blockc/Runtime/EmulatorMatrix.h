//===- EmulatorMatrix.h - warp-level matrix instructions --------*- C++ -*-===//
//
// What the GPU emulator computes when a warp completes a tensor-core
// instruction: the data movement of ldmatrix and the arithmetic of mma.sync,
// over the 32 lanes' registers laid out exactly as the PTX ISA defines the
// fragments ("Warp-level matrix instructions": "Matrix fragments for
// mma.m16n8k16 with floating point type", "ldmatrix"), and the per-thread
// part of Hopper's warpgroup MMA (wgmma.mma_async m64nNk16) with its shared
// memory matrix descriptors and swizzle modes ("Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate": "Matrix Descriptor Format", "Shared Memory
// Matrix Layout"). Pure functions, unit-tested against scalar matrix code
// (unittests/Runtime).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_RUNTIME_EMULATORMATRIX_H
#define BLOCKC_RUNTIME_EMULATORMATRIX_H

#include <cstdint>
#include <utility>

namespace blockc::emu {

constexpr int kLanes = 32;

/// The multiplicand types of mma.sync with f32 accumulators: the 16-bit
/// types of m16n8k16, and tf32 of m16n8k8 (mmaM16N8K8TF32).
enum class MmaType : int32_t { BF16 = 0, F16 = 1, TF32 = 2 };

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

/// The value a tensor core multiplies for the 32-bit register `bits` of a
/// .tf32 operand: its sign, exponent and upper 10 mantissa bits; the low 13
/// bits are ignored (truncation, as A100 and H100 tensor cores do; the PTX
/// ISA leaves them unspecified, so blockc's kernels round before the MMA
/// and clear them).
float tf32Value(uint32_t bits);

/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 for one warp. Lane
/// l = 4 * g + t holds:
///  - a[l][0..3]: A (16 x 8) elements (g, t), (g+8, t), (g, t+4),
///    (g+8, t+4), one 32-bit value each;
///  - b[l][0..1]: B (8 x 8, K x N) elements (t, g) and (t+4, g);
///  - c[l][0..3], d[l][0..3]: as for m16n8k16.
/// D = A B + C over the tf32Value of each operand: the 8 exact products and
/// C summed in double precision and rounded once to f32.
void mmaM16N8K8TF32(const uint32_t a[kLanes][4], const uint32_t b[kLanes][2],
                    const float c[kLanes][4], float d[kLanes][4]);

/// ldmatrix.sync.aligned.m8n8.x{tiles}{.trans}.shared.b16 for one warp:
/// lanes 8i .. 8i+7 give the addresses of rows 0-7 of matrix i (8 16-bit
/// elements each) for i < tiles; lane l = 4 * g + t receives in out[l][i]
/// elements (g, 2t) and (g, 2t+1) of matrix i (the lower column in the low
/// half), or with `transpose` elements (2t, g) and (2t+1, g).
void ldMatrix(int tiles, bool transpose, const uint16_t *const rows[kLanes],
              uint32_t out[kLanes][4]);

/// The 16-byte chunk swizzle of TMA and wgmma with a pattern `width` bytes
/// wide (32, 64 or 128; 0 = none) applied to a byte offset from a
/// 1024-byte aligned base: chunk bits [4, 4 + b) ^= bits [7, 7 + b), where
/// b = 1, 2, 3 for 32, 64, 128 bytes (CUTLASS's Swizzle<b, 4, 3>).
int64_t swizzleOffset(int64_t offset, int width);

/// The fields of a wgmma shared memory matrix descriptor (the PTX ISA's
/// "Matrix Descriptor Format"): byte values, the 4-bit-shifted fields
/// already scaled back.
struct MatrixDescriptor {
  int64_t start = 0;         // bits [0, 14) << 4: start address (offset)
  int64_t leadingOffset = 0; // bits [16, 30) << 4: LBO
  int64_t strideOffset = 0;  // bits [32, 46) << 4: SBO
  int32_t baseOffset = 0;    // bits [49, 52)
  int32_t swizzleMode = 0;   // bits [62, 64): 0 none, 1 128B, 2 64B, 3 32B
};
MatrixDescriptor decodeDescriptor(uint64_t descriptor);

/// The swizzle pattern width in bytes of a descriptor's swizzle mode: 0, 128,
/// 64, 32 for modes 0-3.
int swizzleWidth(int32_t swizzleMode);

/// The shared memory byte offset of element (row, k) of a K-major operand
/// with `elementBytes`-byte elements (2: bf16/f16; 4: tf32) given by
/// `descriptor` (A: row = m; B: row = n), in the canonical layouts: with a
/// swizzle pattern W bytes wide, rows of W bytes in groups of 8 (SBO
/// apart), k contiguous, then swizzled: swizzleOffset(start + (row / 8) SBO
/// + (row % 8) W + e k, W) (LBO unused: one wgmma's k values, 32 bytes,
/// fit in W); without swizzle, 8 x 16-byte core matrices of c = 16 / e
/// values per row: start + (row / 8) SBO + (k / c) LBO + (row % 8) 16 +
/// e (k % c).
int64_t sharedMatrixOffset(const MatrixDescriptor &descriptor, int row, int k,
                           int elementBytes = 2);

/// The shared memory byte offset of element (k, mn) of an MN-major operand
/// (wgmma's imm-trans 1: B stored as rows of k, mn contiguous) with 16-bit
/// elements in a swizzled layout (W = 32, 64 or 128 bytes): rows of W
/// bytes (W / 2 values of mn), 8 rows of k per group SBO apart, groups of
/// W / 2 mn LBO apart, then swizzled:
/// swizzleOffset(start + (k / 8) SBO + (mn / (W / 2)) LBO + (k % 8) W +
/// 2 (mn % (W / 2)), W). Returns -1 without a swizzle (not modelled).
int64_t sharedMatrixOffsetMN(const MatrixDescriptor &descriptor, int k, int mn);

/// The shared memory bytes [first, second) that one wgmma reads of an
/// operand given by `descriptor` with `rows` rows (A: 64, B: n) of `k`
/// values of `elementBytes` bytes (K-major, or with `mnMajor` k rows of
/// `rows` values, sharedMatrixOffsetMN's layout): from the first to the
/// last byte it reads, widened to whole swizzle rows (the swizzle moves
/// chunks within them). A superset of the bytes read where the layout has
/// gaps (a leading offset larger than the rows it skips).
std::pair<int64_t, int64_t>
wgmmaOperandRange(const MatrixDescriptor &descriptor, int rows, int k,
                  int elementBytes, bool mnMajor);

/// One thread's part of wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{bf16,
/// f16}.{bf16,f16}, or with `type` TF32 of m64n{n}k8.f32.tf32.tf32 (K = 8
/// 32-bit values per row, each read as tf32Value: the low 13 bits
/// ignored; K-major only, as the PTX ISA allows no transpose for tf32),
/// with K-major A (64 x K) and B (n rows of K k) in
/// `shared` (`sharedBytes` bytes), for thread `thread` (0-127) of its
/// warpgroup: warp w = thread / 32, lane 4 g + q; acc (n / 2 floats) holds
/// acc[4j + {0, 1}] = D(16w + g, 8j + 2q + {0, 1}) and acc[4j + {2, 3}] =
/// D(16w + g + 8, 8j + 2q + {0, 1}). D = A B + acc, each element's K
/// exact products and its C summed in double and rounded once to f32.
/// n must be 8 to 256, a multiple of 8. Returns -1, or (leaving acc
/// untouched) the offset of the first element it reads that is not inside
/// [0, sharedBytes).
/// With `transposeB`, B is MN-major (sharedMatrixOffsetMN).
int64_t wgmmaThread(MmaType type, uint64_t descriptorA, uint64_t descriptorB,
                    int n, int thread, const void *shared, int64_t sharedBytes,
                    float *acc, bool transposeB = false);

} // namespace blockc::emu

#endif // BLOCKC_RUNTIME_EMULATORMATRIX_H
