//===- EmulatorMatrix.cpp - warp-level matrix instructions ----------------===//
//
// See include/blockc/Runtime/EmulatorMatrix.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/Runtime/EmulatorMatrix.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace blockc::emu {

namespace {

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h >> 15) << 31;
  uint32_t exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  if (exponent == 0x1F) // infinity or NaN (payload kept)
    return fromBits(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return fromBits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t low(uint32_t reg) { return static_cast<uint16_t>(reg & 0xFFFF); }
uint16_t high(uint32_t reg) { return static_cast<uint16_t>(reg >> 16); }

} // namespace

float widen(MmaType type, uint16_t bits) {
  if (type == MmaType::BF16)
    return fromBits(static_cast<uint32_t>(bits) << 16);
  return halfToFloat(bits);
}

namespace {

/// D = A B + C for one warp's m16n8kK MMA, A and B gathered from the
/// fragments: lane 4g + t's C and D element i is (g + 8 (i / 2),
/// 2t + i % 2); each element's K exact products and its C are summed in
/// double and rounded once to f32.
template <int K>
void multiplyAccumulate(const float (&A)[16][K], const float (&B)[K][8],
                        const float c[kLanes][4], float d[kLanes][4]) {
  for (int lane = 0; lane < kLanes; ++lane) {
    int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; ++i) {
      int row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
      double sum = c[lane][i];
      for (int k = 0; k < K; ++k)
        sum += static_cast<double>(A[row][k]) * B[k][col];
      d[lane][i] = static_cast<float>(sum);
    }
  }
}

} // namespace

void mmaM16N8K16(MmaType type, const uint32_t a[kLanes][4],
                 const uint32_t b[kLanes][2], const float c[kLanes][4],
                 float d[kLanes][4]) {
  // Gather the warp's fragments into whole matrices.
  float A[16][16], B[16][8];
  for (int lane = 0; lane < kLanes; ++lane) {
    int g = lane >> 2, t = lane & 3;
    for (int r = 0; r < 4; ++r) {
      int row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
      A[row][col] = widen(type, low(a[lane][r]));
      A[row][col + 1] = widen(type, high(a[lane][r]));
    }
    for (int r = 0; r < 2; ++r) {
      int k = 2 * t + 8 * r;
      B[k][g] = widen(type, low(b[lane][r]));
      B[k + 1][g] = widen(type, high(b[lane][r]));
    }
  }
  multiplyAccumulate(A, B, c, d);
}

float tf32Value(uint32_t bits) { return fromBits(bits & 0xFFFFE000u); }

void mmaM16N8K8TF32(const uint32_t a[kLanes][4], const uint32_t b[kLanes][2],
                    const float c[kLanes][4], float d[kLanes][4]) {
  float A[16][8], B[8][8];
  for (int lane = 0; lane < kLanes; ++lane) {
    int g = lane >> 2, t = lane & 3;
    for (int r = 0; r < 4; ++r)
      A[g + 8 * (r & 1)][t + 4 * (r >> 1)] = tf32Value(a[lane][r]);
    for (int r = 0; r < 2; ++r)
      B[t + 4 * r][g] = tf32Value(b[lane][r]);
  }
  multiplyAccumulate(A, B, c, d);
}

void ldMatrix(int tiles, bool transpose, const uint16_t *const rows[kLanes],
              uint32_t out[kLanes][4]) {
  for (int lane = 0; lane < kLanes; ++lane) {
    int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < tiles; ++i) {
      const uint16_t *const *matrix = rows + 8 * i;
      uint16_t lo, hi;
      if (transpose) {
        lo = matrix[2 * t][g];
        hi = matrix[2 * t + 1][g];
      } else {
        lo = matrix[g][2 * t];
        hi = matrix[g][2 * t + 1];
      }
      out[lane][i] = static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi)
                                                     << 16;
    }
  }
}

int64_t swizzleOffset(int64_t offset, int width) {
  int64_t mask = width == 128 ? 7 : width == 64 ? 3 : width == 32 ? 1 : 0;
  return offset ^ (((offset >> 7) & mask) << 4);
}

MatrixDescriptor decodeDescriptor(uint64_t descriptor) {
  MatrixDescriptor d;
  d.start = static_cast<int64_t>(descriptor & 0x3FFF) << 4;
  d.leadingOffset = static_cast<int64_t>((descriptor >> 16) & 0x3FFF) << 4;
  d.strideOffset = static_cast<int64_t>((descriptor >> 32) & 0x3FFF) << 4;
  d.baseOffset = static_cast<int32_t>((descriptor >> 49) & 7);
  d.swizzleMode = static_cast<int32_t>(descriptor >> 62);
  return d;
}

int swizzleWidth(int32_t swizzleMode) {
  static const int widths[] = {0, 128, 64, 32};
  return widths[swizzleMode & 3];
}

int64_t sharedMatrixOffset(const MatrixDescriptor &descriptor, int row, int k,
                           int elementBytes) {
  int width = swizzleWidth(descriptor.swizzleMode);
  int64_t group = descriptor.start + (row / 8) * descriptor.strideOffset;
  if (width == 0) {
    int perCore = 16 / elementBytes; // k values in a core matrix's row
    return group + (k / perCore) * descriptor.leadingOffset + (row % 8) * 16 +
           elementBytes * (k % perCore);
  }
  return swizzleOffset(group + (row % 8) * width + elementBytes * k, width);
}

int64_t sharedMatrixOffsetMN(const MatrixDescriptor &descriptor, int k,
                             int mn) {
  int width = swizzleWidth(descriptor.swizzleMode);
  if (width == 0)
    return -1;
  int perRow = width / 2;
  int64_t group = descriptor.start + (k / 8) * descriptor.strideOffset +
                  (mn / perRow) * descriptor.leadingOffset;
  return swizzleOffset(group + (k % 8) * width + 2 * (mn % perRow), width);
}

std::pair<int64_t, int64_t> wgmmaOperandRange(const MatrixDescriptor &d,
                                              int rows, int k, int elementBytes,
                                              bool mnMajor) {
  int width = swizzleWidth(d.swizzleMode);
  if (mnMajor) {
    // k rows of `width` bytes in groups of 8 (SBO apart), `width` / 2 values
    // of mn per row, panels of them LBO apart (sharedMatrixOffsetMN).
    int perRow = width ? width / 2 : 8;
    int64_t last = d.start + (k - 1) / 8 * d.strideOffset +
                   (rows - 1) / perRow * d.leadingOffset +
                   ((k - 1) % 8) * (width ? width : 16) +
                   2 * ((rows - 1) % perRow);
    int64_t granule = width ? width : 16;
    return {d.start / granule * granule, last / granule * granule + granule};
  }
  if (width == 0) {
    int perCore = 16 / elementBytes;
    int64_t last = d.start + (rows - 1) / 8 * d.strideOffset +
                   (k - 1) / perCore * d.leadingOffset + 7 * 16 + 15;
    return {d.start, last + 1};
  }
  int64_t last = d.start + (rows - 1) / 8 * d.strideOffset +
                 std::min(rows - 1, 7) * width + elementBytes * (k - 1);
  return {d.start / width * width, last / width * width + width};
}

int64_t wgmmaThread(MmaType type, uint64_t descriptorA, uint64_t descriptorB,
                    int n, int thread, const void *shared, int64_t sharedBytes,
                    float *acc, bool transposeB) {
  MatrixDescriptor a = decodeDescriptor(descriptorA);
  MatrixDescriptor b = decodeDescriptor(descriptorB);
  const auto *bytes = static_cast<const unsigned char *>(shared);
  int warp = (thread / kLanes) % 4, lane = thread % kLanes;
  int g = lane / 4, q = lane % 4;
  // m64nNk16 with 16-bit multiplicands, m64nNk8 with tf32 (32-bit words).
  bool tf32 = type == MmaType::TF32;
  int kSize = tf32 ? 8 : 16, elementBytes = tf32 ? 4 : 2;
  // Gather the operand rows this thread needs: A rows 16w + g (+ 8), B
  // rows 8j + 2q (+ 1).
  auto load = [&](const MatrixDescriptor &d, int row, float *out,
                  bool mnMajor = false) -> int64_t {
    for (int k = 0; k < kSize; ++k) {
      int64_t offset = mnMajor ? sharedMatrixOffsetMN(d, k, row)
                               : sharedMatrixOffset(d, row, k, elementBytes);
      if (offset < 0 || offset + elementBytes > sharedBytes)
        return offset;
      if (tf32) {
        uint32_t bits;
        std::memcpy(&bits, bytes + offset, sizeof(bits));
        out[k] = tf32Value(bits);
      } else {
        uint16_t bits;
        std::memcpy(&bits, bytes + offset, sizeof(bits));
        out[k] = widen(type, bits);
      }
    }
    return -1;
  };
  float rowsA[2][16];
  float rowsB[256 / 4 * 16]; // n <= 256
  if (n < 8 || n > 256 || n % 8 != 0 || (tf32 && transposeB))
    return 0;
  for (int i = 0; i < 2; ++i)
    if (int64_t bad = load(a, 16 * warp + g + 8 * i, rowsA[i]); bad >= 0)
      return bad;
  for (int j = 0; j < n / 8; ++j)
    for (int i = 0; i < 2; ++i)
      if (int64_t bad =
              load(b, 8 * j + 2 * q + i, &rowsB[(2 * j + i) * 16], transposeB);
          bad >= 0)
        return bad;
  for (int j = 0; j < n / 8; ++j)
    for (int e = 0; e < 4; ++e) {
      const float *rowA = rowsA[e / 2];
      const float *rowB = &rowsB[(2 * j + e % 2) * 16];
      double sum = acc[4 * j + e];
      for (int k = 0; k < kSize; ++k)
        sum += static_cast<double>(rowA[k]) * rowB[k];
      acc[4 * j + e] = static_cast<float>(sum);
    }
  return -1;
}

} // namespace blockc::emu
