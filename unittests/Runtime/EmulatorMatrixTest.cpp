//===- EmulatorMatrixTest.cpp - fragment layouts of the matrix ops --------===//
//
// blockc::emu::mmaM16N8K16 and ldMatrix against scalar matrix code. The
// fragments are distributed here from the PTX ISA's tables read the other
// way round (which lane, register and half owns each matrix element), so a
// layout error on either side shows; the permutation tests show that the
// check fails when lanes are exchanged.
//
//===----------------------------------------------------------------------===//

#include "blockc/Runtime/EmulatorMatrix.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

using namespace blockc::emu;

namespace {

uint16_t toBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return static_cast<uint16_t>(bits >> 16); // values below are exact
}

float fromBF16(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// Sets half `half` of a 32-bit register.
void setHalf(uint32_t &reg, int half, uint16_t value) {
  reg &= half ? 0x0000FFFFu : 0xFFFF0000u;
  reg |= static_cast<uint32_t>(value) << (16 * half);
}

struct Problem {
  uint16_t A[16][16], B[16][8]; // bf16 bits
  float C[16][8];
  double reference[16][8]; // A B + C
};

Problem randomProblem(unsigned seed) {
  std::mt19937 rng(seed);
  // Small integers times powers of two: exact in bf16, distinct enough
  // that a misplaced element changes the result.
  std::uniform_int_distribution<int> small(-64, 64);
  Problem p;
  for (auto &row : p.A)
    for (auto &v : row)
      v = toBF16(small(rng) / 8.0f);
  for (auto &row : p.B)
    for (auto &v : row)
      v = toBF16(small(rng) / 16.0f);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      p.C[i][j] = small(rng) / 4.0f;
      double sum = p.C[i][j];
      for (int k = 0; k < 16; ++k)
        sum += static_cast<double>(fromBF16(p.A[i][k])) * fromBF16(p.B[k][j]);
      p.reference[i][j] = sum;
    }
  return p;
}

/// The PTX ISA's m16n8k16 tables, inverted: the owner of each element.
/// A (row, col): lane 4 * (row % 8) + (col % 8) / 2, register
/// (row >= 8) + 2 * (col >= 8), half col % 2. B (k, n): lane 4 * n +
/// (k % 8) / 2, register k >= 8, half k % 2. C (row, col): lane
/// 4 * (row % 8) + col / 2, element 2 * (row >= 8) + col % 2.
struct Fragments {
  uint32_t a[kLanes][4] = {}, b[kLanes][2] = {};
  float c[kLanes][4] = {};
};

Fragments distribute(const Problem &p, const int lanePermutation[kLanes]) {
  Fragments f;
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 16; ++col) {
      int lane = lanePermutation[4 * (row % 8) + (col % 8) / 2];
      setHalf(f.a[lane][(row >= 8) + 2 * (col >= 8)], col % 2, p.A[row][col]);
    }
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) {
      int lane = lanePermutation[4 * n + (k % 8) / 2];
      setHalf(f.b[lane][k >= 8], k % 2, p.B[k][n]);
    }
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col)
      f.c[lanePermutation[4 * (row % 8) + col / 2]][2 * (row >= 8) + col % 2] =
          p.C[row][col];
  return f;
}

/// Number of D elements that differ from the reference (read through the
/// un-permuted table).
int mismatches(const Problem &p, const float d[kLanes][4]) {
  int wrong = 0;
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col) {
      float got = d[4 * (row % 8) + col / 2][2 * (row >= 8) + col % 2];
      wrong += got != static_cast<float>(p.reference[row][col]);
    }
  return wrong;
}

std::vector<int> identity() {
  std::vector<int> lanes(kLanes);
  for (int l = 0; l < kLanes; ++l)
    lanes[l] = l;
  return lanes;
}

TEST(EmulatorMatrixTest, MmaBF16MatchesScalarMatmul) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    Problem p = randomProblem(seed);
    Fragments f = distribute(p, identity().data());
    float d[kLanes][4];
    mmaM16N8K16(MmaType::BF16, f.a, f.b, f.c, d);
    EXPECT_EQ(mismatches(p, d), 0) << "seed " << seed;
  }
}

TEST(EmulatorMatrixTest, PermutedLanesAreDetected) {
  Problem p = randomProblem(7);
  // Swapping two lanes of a group, two groups, or rotating the warp must
  // each break the result.
  std::vector<std::vector<int>> permutations;
  std::vector<int> swapInGroup = identity(), swapGroups = identity(),
                   rotate(kLanes);
  std::swap(swapInGroup[1], swapInGroup[2]);
  for (int t = 0; t < 4; ++t)
    std::swap(swapGroups[t], swapGroups[4 + t]);
  for (int l = 0; l < kLanes; ++l)
    rotate[l] = (l + 4) % kLanes;
  for (const std::vector<int> &permutation :
       {swapInGroup, swapGroups, rotate}) {
    Fragments f = distribute(p, permutation.data());
    float d[kLanes][4];
    mmaM16N8K16(MmaType::BF16, f.a, f.b, f.c, d);
    EXPECT_GT(mismatches(p, d), 0);
  }
}

TEST(EmulatorMatrixTest, MmaF16UsesHalfPrecision) {
  // A = I (f16 1.0 = 0x3C00), B holds f16 values: D = B (top 8 rows) + C.
  uint32_t a[kLanes][4] = {}, b[kLanes][2] = {};
  float c[kLanes][4] = {}, d[kLanes][4];
  const uint16_t one = 0x3C00;
  for (int i = 0; i < 16; ++i) {
    int lane = 4 * (i % 8) + (i % 8) / 2;
    setHalf(a[lane][(i >= 8) + 2 * (i >= 8)], i % 2, one);
  }
  // B (k, n) = f16 with bits 0x3C00 + 64 * k + n (1 + k / 16 + n / 1024).
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n)
      setHalf(b[4 * n + (k % 8) / 2][k >= 8], k % 2,
              static_cast<uint16_t>(0x3C00 + 64 * k + n));
  mmaM16N8K16(MmaType::F16, a, b, c, d);
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col) {
      float expected = 1.0f + row / 16.0f + col / 1024.0f;
      EXPECT_EQ(d[4 * (row % 8) + col / 2][2 * (row >= 8) + col % 2], expected)
          << row << ", " << col;
    }
}

TEST(EmulatorMatrixTest, WidenHalfMatchesTheCompiler) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    _Float16 h;
    uint16_t b16 = static_cast<uint16_t>(bits);
    std::memcpy(&h, &b16, sizeof(h));
    float expected = static_cast<float>(h);
    float got = widen(MmaType::F16, b16);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(got, expected) << std::hex << bits;
    ASSERT_EQ(std::signbit(got), std::signbit(expected)) << std::hex << bits;
  }
  EXPECT_EQ(widen(MmaType::BF16, 0x3F80), 1.0f);
  EXPECT_EQ(widen(MmaType::BF16, 0xC040), -3.0f);
}

/// Four 8 x 8 matrices of distinct values in rows of 24 elements (a padded
/// shared tile); lane l points at row l % 8 of matrix l / 8.
struct Tile {
  uint16_t data[4][8][24];
  const uint16_t *rows[kLanes];
  Tile() {
    for (int m = 0; m < 4; ++m)
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 24; ++c)
          data[m][r][c] = static_cast<uint16_t>(1000 * m + 100 * r + c);
    for (int l = 0; l < kLanes; ++l)
      rows[l] = data[l / 8][l % 8];
  }
};

TEST(EmulatorMatrixTest, LdMatrixX4) {
  Tile tile;
  uint32_t out[kLanes][4];
  ldMatrix(4, /*transpose=*/false, tile.rows, out);
  // Element (row, col) of matrix m goes to lane 4 * row + col / 2, register
  // m, half col % 2.
  for (int m = 0; m < 4; ++m)
    for (int row = 0; row < 8; ++row)
      for (int col = 0; col < 8; ++col) {
        uint32_t reg = out[4 * row + col / 2][m];
        EXPECT_EQ(col % 2 ? reg >> 16 : reg & 0xFFFF, tile.data[m][row][col])
            << m << " " << row << " " << col;
      }
}

TEST(EmulatorMatrixTest, LdMatrixTransposed) {
  Tile tile;
  uint32_t out[kLanes][4];
  ldMatrix(4, /*transpose=*/true, tile.rows, out);
  // Transposed: element (row, col) goes to lane 4 * col + row / 2, half
  // row % 2.
  for (int m = 0; m < 4; ++m)
    for (int row = 0; row < 8; ++row)
      for (int col = 0; col < 8; ++col) {
        uint32_t reg = out[4 * col + row / 2][m];
        EXPECT_EQ(row % 2 ? reg >> 16 : reg & 0xFFFF, tile.data[m][row][col])
            << m << " " << row << " " << col;
      }
}

TEST(EmulatorMatrixTest, LdMatrixX2ReadsLanes0To15Only) {
  Tile tile;
  // Lanes 16-31 give no address for .x2.
  for (int l = 16; l < kLanes; ++l)
    tile.rows[l] = nullptr;
  uint32_t out[kLanes][4];
  std::memset(out, 0xAB, sizeof(out));
  ldMatrix(2, /*transpose=*/false, tile.rows, out);
  for (int l = 0; l < kLanes; ++l) {
    EXPECT_EQ(out[l][0] & 0xFFFF, tile.data[0][l / 4][2 * (l % 4)]);
    EXPECT_EQ(out[l][1] >> 16, tile.data[1][l / 4][2 * (l % 4) + 1]);
    EXPECT_EQ(out[l][2], 0xABABABABu); // untouched
  }
}

} // namespace
