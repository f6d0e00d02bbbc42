//===- EmulatorMatrix.cpp - warp-level matrix instructions ----------------===//
//
// See include/blockc/Runtime/EmulatorMatrix.h.
//
//===----------------------------------------------------------------------===//

#include "blockc/Runtime/EmulatorMatrix.h"

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

void mmaM16N8K16(MmaType type, const uint32_t a[kLanes][4],
                 const uint32_t b[kLanes][2], const float c[kLanes][4],
                 float d[kLanes][4]) {
  // Gather the warp's fragments into whole matrices.
  float A[16][16], B[16][8], C[16][8];
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
    for (int i = 0; i < 4; ++i)
      C[g + 8 * (i >> 1)][2 * t + (i & 1)] = c[lane][i];
  }
  for (int lane = 0; lane < kLanes; ++lane) {
    int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; ++i) {
      int row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
      double sum = C[row][col];
      for (int k = 0; k < 16; ++k)
        sum += static_cast<double>(A[row][k]) * B[k][col];
      d[lane][i] = static_cast<float>(sum);
    }
  }
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

} // namespace blockc::emu
