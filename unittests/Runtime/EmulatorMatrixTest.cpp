//===- EmulatorMatrixTest.cpp - fragment layouts of the matrix ops --------===//
//
// blockc::emu::mmaM16N8K16, mmaM16N8K8TF32 and ldMatrix against scalar
// matrix code. The
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

/// C (16 x 8) into the fragments, through `lanePermutation`.
void distributeC(const float C[16][8], const int lanePermutation[kLanes],
                 Fragments &f) {
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col)
      f.c[lanePermutation[4 * (row % 8) + col / 2]][2 * (row >= 8) + col % 2] =
          C[row][col];
}

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
  distributeC(p.C, lanePermutation, f);
  return f;
}

/// Number of D elements that differ from the reference of `p` (a Problem or
/// a TF32Problem; read through the un-permuted table).
template <typename P> int mismatches(const P &p, const float d[kLanes][4]) {
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

/// Lane permutations that must each break an MMA's result: swapping two
/// lanes of a group, two groups, or rotating the warp.
std::vector<std::vector<int>> lanePermutations() {
  std::vector<int> swapInGroup = identity(), swapGroups = identity(),
                   rotate(kLanes);
  std::swap(swapInGroup[1], swapInGroup[2]);
  for (int t = 0; t < 4; ++t)
    std::swap(swapGroups[t], swapGroups[4 + t]);
  for (int l = 0; l < kLanes; ++l)
    rotate[l] = (l + 4) % kLanes;
  return {swapInGroup, swapGroups, rotate};
}

TEST(EmulatorMatrixTest, PermutedLanesAreDetected) {
  Problem p = randomProblem(7);
  for (const std::vector<int> &permutation : lanePermutations()) {
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

/// The PTX ISA's m16n8k8 .tf32 tables, inverted: A (row, col): lane
/// 4 * (row % 8) + col % 4, register (row >= 8) + 2 * (col >= 4); B (k, n):
/// lane 4 * n + k % 4, register k >= 4; C as for m16n8k16.
struct TF32Problem {
  float A[16][8], B[8][8], C[16][8];
  double reference[16][8];
};

TF32Problem randomTF32Problem(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-512, 512);
  TF32Problem p;
  // Multiples of 1/64 below 8 in magnitude: at most 10 significant bits,
  // exact in tf32.
  for (auto &row : p.A)
    for (auto &v : row)
      v = small(rng) / 64.0f;
  for (auto &row : p.B)
    for (auto &v : row)
      v = small(rng) / 128.0f;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      p.C[i][j] = small(rng) / 4.0f;
      double sum = p.C[i][j];
      for (int k = 0; k < 8; ++k)
        sum += static_cast<double>(p.A[i][k]) * p.B[k][j];
      p.reference[i][j] = sum;
    }
  return p;
}

uint32_t bitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

Fragments distributeTF32(const TF32Problem &p,
                         const int lanePermutation[kLanes]) {
  Fragments f;
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col)
      f.a[lanePermutation[4 * (row % 8) + col % 4]]
         [(row >= 8) + 2 * (col >= 4)] = bitsOf(p.A[row][col]);
  for (int k = 0; k < 8; ++k)
    for (int n = 0; n < 8; ++n)
      f.b[lanePermutation[4 * n + k % 4]][k >= 4] = bitsOf(p.B[k][n]);
  distributeC(p.C, lanePermutation, f);
  return f;
}

TEST(EmulatorMatrixTest, MmaTF32MatchesScalarMatmul) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    TF32Problem p = randomTF32Problem(seed);
    Fragments f = distributeTF32(p, identity().data());
    float d[kLanes][4];
    mmaM16N8K8TF32(f.a, f.b, f.c, d);
    EXPECT_EQ(mismatches(p, d), 0) << "seed " << seed;
  }
}

TEST(EmulatorMatrixTest, MmaTF32PermutedLanesAreDetected) {
  TF32Problem p = randomTF32Problem(9);
  for (const std::vector<int> &permutation : lanePermutations()) {
    Fragments f = distributeTF32(p, permutation.data());
    float d[kLanes][4];
    mmaM16N8K8TF32(f.a, f.b, f.c, d);
    EXPECT_GT(mismatches(p, d), 0);
  }
}

TEST(EmulatorMatrixTest, MmaTF32IgnoresTheLow13Bits) {
  // 1 + 2^-10 is tf32; 1 + 2^-10 + 2^-11 + 2^-23 is not: its low 13 bits
  // are dropped, not rounded.
  EXPECT_EQ(tf32Value(bitsOf(1.0f + 0x1p-10f)), 1.0f + 0x1p-10f);
  EXPECT_EQ(tf32Value(bitsOf(1.0f + 0x1p-10f + 0x1p-11f + 0x1p-23f)),
            1.0f + 0x1p-10f);
  EXPECT_EQ(tf32Value(bitsOf(-3.0f)), -3.0f);
  EXPECT_TRUE(std::isinf(tf32Value(bitsOf(INFINITY))));
  // A = I, B (k, n) = 1 + 2^-11 (not tf32): D = C + 1 in every element of
  // the top 8 rows.
  uint32_t a[kLanes][4] = {}, b[kLanes][2] = {};
  float c[kLanes][4] = {}, d[kLanes][4];
  for (int i = 0; i < 8; ++i)
    a[4 * i + i % 4][2 * (i >= 4)] = bitsOf(1.0f);
  for (int k = 0; k < 8; ++k)
    for (int n = 0; n < 8; ++n)
      b[4 * n + k % 4][k >= 4] = bitsOf(1.0f + 0x1p-11f);
  mmaM16N8K8TF32(a, b, c, d);
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col)
      EXPECT_EQ(d[4 * (row % 8) + col / 2][2 * (row >= 8) + col % 2],
                row < 8 ? 1.0f : 0.0f)
          << row << ", " << col;
}

TEST(EmulatorMatrixTest, LdMatrixOfF32RowsGivesTF32Fragments) {
  // An x4 ldmatrix of a [16][8] f32 tile (rows of 16 bytes = 8 b16 halves)
  // with matrices (rows 0-7, cols 0-3), (8-15, 0-3), (0-7, 4-7),
  // (8-15, 4-7) gives lane 4 g + t exactly a0..a3 of m16n8k8 .tf32.
  float tile[16][8];
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c)
      tile[r][c] = 100.0f * r + c;
  const uint16_t *rows[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    int q = l / 8, r = l % 8;
    rows[l] =
        reinterpret_cast<const uint16_t *>(&tile[r + 8 * (q % 2)][4 * (q / 2)]);
  }
  uint32_t out[kLanes][4];
  ldMatrix(4, false, rows, out);
  for (int lane = 0; lane < kLanes; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int reg = 0; reg < 4; ++reg)
      EXPECT_EQ(out[lane][reg],
                bitsOf(tile[g + 8 * (reg % 2)][t + 4 * (reg / 2)]))
          << lane << ", " << reg;
  }
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

//===----------------------------------------------------------------------===//
// Hopper: swizzle, matrix descriptors, wgmma
//===----------------------------------------------------------------------===//

/// The swizzle as the PTX ISA draws it: in every 128-byte line of a
/// 1024-byte aligned region, 16-byte chunk c moves to c ^ (line % (W / 16)).
int64_t referenceSwizzle(int64_t offset, int width) {
  if (width == 0)
    return offset;
  int64_t line = offset / 128, chunk = offset % 128 / 16;
  return line * 128 + (chunk ^ (line % (width / 16))) * 16 + offset % 16;
}

TEST(EmulatorMatrixTest, SwizzleMatchesTheReference) {
  for (int width : {0, 32, 64, 128})
    for (int64_t offset = 0; offset < 3 * 1024; ++offset)
      ASSERT_EQ(swizzleOffset(offset, width), referenceSwizzle(offset, width))
          << width << " " << offset;
  // Line 1 of the 128B pattern: chunk 0 <-> chunk 1; line 7: 0 <-> 7.
  EXPECT_EQ(swizzleOffset(128, 128), 144);
  EXPECT_EQ(swizzleOffset(7 * 128 + 2, 128), 7 * 128 + 7 * 16 + 2);
  EXPECT_EQ(swizzleOffset(7 * 128, 64), 7 * 128 + 3 * 16);
  EXPECT_EQ(swizzleOffset(7 * 128, 32), 7 * 128 + 16);
  // Lines 8 and up repeat the pattern.
  EXPECT_EQ(swizzleOffset(1024 + 128, 128), 1024 + 144);
}

/// A wgmma matrix descriptor (the PTX ISA's format).
uint64_t descriptor(int64_t start, int64_t lbo, int64_t sbo, int mode,
                    int base = 0) {
  return static_cast<uint64_t>(start >> 4) |
         static_cast<uint64_t>(lbo >> 4) << 16 |
         static_cast<uint64_t>(sbo >> 4) << 32 |
         static_cast<uint64_t>(base) << 49 | static_cast<uint64_t>(mode) << 62;
}

TEST(EmulatorMatrixTest, DecodeDescriptor) {
  MatrixDescriptor d = decodeDescriptor(descriptor(0x3FFF0, 0x20, 0x400, 1, 5));
  EXPECT_EQ(d.start, 0x3FFF0);
  EXPECT_EQ(d.leadingOffset, 0x20);
  EXPECT_EQ(d.strideOffset, 0x400);
  EXPECT_EQ(d.baseOffset, 5);
  EXPECT_EQ(d.swizzleMode, 1);
  EXPECT_EQ(swizzleWidth(0), 0);
  EXPECT_EQ(swizzleWidth(1), 128);
  EXPECT_EQ(swizzleWidth(2), 64);
  EXPECT_EQ(swizzleWidth(3), 32);
}

TEST(EmulatorMatrixTest, SharedMatrixOffsets) {
  // Without swizzle: 8 x 16-byte core matrices, LBO along k, SBO along rows.
  MatrixDescriptor plain = decodeDescriptor(descriptor(4096, 256, 512, 0));
  // With swizzle W: rows of W bytes, 8-row groups SBO apart.
  struct Case {
    int mode, width;
  } cases[] = {{1, 128}, {2, 64}, {3, 32}};
  for (int row = 0; row < 64; ++row)
    for (int k = 0; k < 16; ++k) {
      ASSERT_EQ(sharedMatrixOffset(plain, row, k),
                4096 + (row / 8) * 512 + (k / 8) * 256 + (row % 8) * 16 +
                    2 * (k % 8))
          << row << " " << k;
      for (const Case &c : cases) {
        MatrixDescriptor d =
            decodeDescriptor(descriptor(2048 + 32, 16, 8 * c.width, c.mode));
        ASSERT_EQ(sharedMatrixOffset(d, row, k),
                  referenceSwizzle(2048 + 32 + row * c.width + 2 * k, c.width))
            << c.width << " " << row << " " << k;
      }
    }
}

/// A wgmma m64nNk(16 * kSteps) problem: A (64 x K) and B (n x K, K-major) of
/// 16-bit values, C, and D = A B^T + C computed exactly.
struct WgmmaProblem {
  int n, kTotal;
  MmaType type;
  std::vector<uint16_t> A, B; // [64][kTotal], [n][kTotal]
  std::vector<float> C;       // [64][n]
  std::vector<double> D;      // [64][n]
};

uint16_t toF16(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof(bits));
  return bits;
}

WgmmaProblem randomWgmma(MmaType type, int n, int kTotal, unsigned seed) {
  std::mt19937 rng(seed);
  // Small integers times powers of two: exact in bf16/f16 and in the sums.
  std::uniform_int_distribution<int> small(-64, 64);
  auto value = [&](float scale) {
    float f = small(rng) * scale;
    return type == MmaType::BF16 ? toBF16(f) : toF16(f);
  };
  WgmmaProblem p{n, kTotal, type, {}, {}, {}, {}};
  for (int i = 0; i < 64 * kTotal; ++i)
    p.A.push_back(value(1 / 8.0f));
  for (int i = 0; i < n * kTotal; ++i)
    p.B.push_back(value(1 / 16.0f));
  for (int m = 0; m < 64; ++m)
    for (int j = 0; j < n; ++j) {
      p.C.push_back(small(rng) / 4.0f);
      double sum = p.C.back();
      for (int k = 0; k < kTotal; ++k)
        sum += static_cast<double>(widen(type, p.A[m * kTotal + k])) *
               widen(type, p.B[j * kTotal + k]);
      p.D.push_back(sum);
    }
  return p;
}

/// Writes a [rows x cols] 16-bit box at `base` of `shared` as TMA would with
/// a swizzle pattern `width` bytes wide (cols * 2 == width).
void writeSwizzledBox(std::vector<uint8_t> &shared, int64_t base,
                      const uint16_t *box, int rows, int cols, int width) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      std::memcpy(&shared[referenceSwizzle(base + (r * cols + c) * 2, width)],
                  &box[r * cols + c], 2);
}

/// Runs the per-thread wgmma for the 128 threads of a warpgroup over all k
/// steps (descriptors from `descriptors(step)`), thread t computing as
/// thread permutation[t]; returns the number of D elements that differ
/// from the exact result, read through the documented fragment layout.
template <typename Descriptors>
int wgmmaMismatches(const WgmmaProblem &p, const std::vector<uint8_t> &shared,
                    Descriptors descriptors,
                    const std::vector<int> &permutation) {
  int wrong = 0;
  for (int t = 0; t < 128; ++t) {
    int w = t / 32, g = t % 32 / 4, q = t % 4;
    std::vector<float> acc(p.n / 2);
    for (int j = 0; j < p.n / 8; ++j)
      for (int e = 0; e < 4; ++e)
        acc[4 * j + e] =
            p.C[(16 * w + g + 8 * (e / 2)) * p.n + 8 * j + 2 * q + e % 2];
    for (int step = 0; step < p.kTotal / 16; ++step) {
      auto [a, b] = descriptors(step);
      EXPECT_EQ(wgmmaThread(p.type, a, b, p.n, permutation[t], shared.data(),
                            static_cast<int64_t>(shared.size()), acc.data()),
                -1);
    }
    for (int j = 0; j < p.n / 8; ++j)
      for (int e = 0; e < 4; ++e) {
        int m = 16 * w + g + 8 * (e / 2), col = 8 * j + 2 * q + e % 2;
        wrong += acc[4 * j + e] != static_cast<float>(p.D[m * p.n + col]);
      }
  }
  return wrong;
}

std::vector<int> warpgroup() {
  std::vector<int> threads(128);
  for (int t = 0; t < 128; ++t)
    threads[t] = t;
  return threads;
}

/// A and B as TMA writes them with a swizzle W bytes wide: [64 x W/2] and
/// [n x W/2] boxes, A at 0 and B at 64 W; k step s starts 32 s bytes into
/// the rows (as CUTLASS and MLIR advance the descriptors).
struct SwizzledOperands {
  std::vector<uint8_t> shared;
  int width, mode;
  SwizzledOperands(const WgmmaProblem &p, int width, int mode)
      : shared(64 * width + p.n * width, 0xEE), width(width), mode(mode) {
    writeSwizzledBox(shared, 0, p.A.data(), 64, p.kTotal, width);
    writeSwizzledBox(shared, 64 * width, p.B.data(), p.n, p.kTotal, width);
  }
  std::pair<uint64_t, uint64_t> operator()(int step) const {
    return {descriptor(32 * step, 16, 8 * width, mode),
            descriptor(64 * width + 32 * step, 16, 8 * width, mode)};
  }
};

TEST(EmulatorMatrixTest, WgmmaBF16With128BSwizzleMatchesScalarMatmul) {
  for (int n : {8, 64, 256}) {
    WgmmaProblem p = randomWgmma(MmaType::BF16, n, 64, n);
    SwizzledOperands operands(p, 128, 1);
    EXPECT_EQ(wgmmaMismatches(p, operands.shared, operands, warpgroup()), 0)
        << "n = " << n;
  }
}

TEST(EmulatorMatrixTest, WgmmaF16With64BAnd32BSwizzle) {
  WgmmaProblem p64 = randomWgmma(MmaType::F16, 32, 32, 3);
  SwizzledOperands operands64(p64, 64, 2);
  EXPECT_EQ(wgmmaMismatches(p64, operands64.shared, operands64, warpgroup()),
            0);
  WgmmaProblem p32 = randomWgmma(MmaType::F16, 16, 16, 4);
  SwizzledOperands operands32(p32, 32, 3);
  EXPECT_EQ(wgmmaMismatches(p32, operands32.shared, operands32, warpgroup()),
            0);
  // Read as bf16, the f16 bits give other values.
  p32.type = MmaType::BF16;
  EXPECT_GT(wgmmaMismatches(p32, operands32.shared, operands32, warpgroup()),
            0);
}

TEST(EmulatorMatrixTest, WgmmaPermutedThreadsAreDetected) {
  WgmmaProblem p = randomWgmma(MmaType::BF16, 64, 64, 11);
  SwizzledOperands operands(p, 128, 1);
  std::vector<int> swapLanes = warpgroup(), swapGroups = warpgroup(),
                   swapWarps = warpgroup();
  std::swap(swapLanes[1], swapLanes[2]);   // q
  std::swap(swapGroups[4], swapGroups[8]); // g
  for (int l = 0; l < 32; ++l)
    std::swap(swapWarps[l], swapWarps[32 + l]); // w
  for (const std::vector<int> &permutation : {swapLanes, swapGroups, swapWarps})
    EXPECT_GT(wgmmaMismatches(p, operands.shared, operands, permutation), 0);
}

TEST(EmulatorMatrixTest, WgmmaWithoutSwizzle) {
  // Core matrices (8 rows x 16 bytes): A's K-blocks 128 bytes apart (LBO)
  // and its 8-row groups 256 apart (SBO); B's 8-row groups 128 apart and its
  // K-blocks n / 8 * 128 apart.
  WgmmaProblem p = randomWgmma(MmaType::BF16, 24, 16, 5);
  int64_t bBase = 4096, bLbo = p.n / 8 * 128;
  std::vector<uint8_t> shared(bBase + 2 * bLbo, 0xEE);
  for (int r = 0; r < 64; ++r)
    for (int k = 0; k < 16; ++k)
      std::memcpy(
          &shared[(r / 8) * 256 + (k / 8) * 128 + (r % 8) * 16 + 2 * (k % 8)],
          &p.A[r * 16 + k], 2);
  for (int r = 0; r < p.n; ++r)
    for (int k = 0; k < 16; ++k)
      std::memcpy(&shared[bBase + (r / 8) * 128 + (k / 8) * bLbo +
                          (r % 8) * 16 + 2 * (k % 8)],
                  &p.B[r * 16 + k], 2);
  auto descriptors = [&](int) {
    return std::make_pair(descriptor(0, 128, 256, 0),
                          descriptor(bBase, bLbo, 128, 0));
  };
  EXPECT_EQ(wgmmaMismatches(p, shared, descriptors, warpgroup()), 0);
  // LBO and SBO exchanged read other elements.
  auto swapped = [&](int) {
    return std::make_pair(descriptor(0, 256, 128, 0),
                          descriptor(bBase, bLbo, 128, 0));
  };
  EXPECT_GT(wgmmaMismatches(p, shared, swapped, warpgroup()), 0);
}

TEST(EmulatorMatrixTest, WgmmaTF32With128BSwizzleMatchesScalarMatmul) {
  // m64nNk8 tf32: A (64 x 32) and B (n x 32) f32 in 128-byte swizzled rows
  // (32 values each), as TMA writes f32 boxes; k8 step s starts 32 s bytes
  // into the rows. Values exact in tf32 with noise in the low 13 bits,
  // which the tensor core ignores (tf32Value).
  for (int n : {8, 64, 256}) {
    std::mt19937 rng(n);
    std::uniform_int_distribution<int> small(-64, 64);
    std::uniform_int_distribution<uint32_t> low(0, 0x1FFF);
    int kTotal = 32;
    auto value = [&](float scale) {
      return bitsOf(small(rng) * scale) | low(rng);
    };
    std::vector<uint32_t> A, B;
    for (int i = 0; i < 64 * kTotal; ++i)
      A.push_back(value(1 / 8.0f));
    for (int i = 0; i < n * kTotal; ++i)
      B.push_back(value(1 / 16.0f));
    std::vector<uint8_t> shared(64 * 128 + n * 128, 0xEE);
    for (int r = 0; r < 64; ++r)
      for (int k = 0; k < kTotal; ++k)
        std::memcpy(&shared[referenceSwizzle((r * kTotal + k) * 4, 128)],
                    &A[r * kTotal + k], 4);
    for (int r = 0; r < n; ++r)
      for (int k = 0; k < kTotal; ++k)
        std::memcpy(
            &shared[referenceSwizzle(64 * 128 + (r * kTotal + k) * 4, 128)],
            &B[r * kTotal + k], 4);
    int wrong = 0, noisy = 0;
    for (int t = 0; t < 128; ++t) {
      int w = t / 32, g = t % 32 / 4, q = t % 4;
      std::vector<float> acc(n / 2, 0.5f), noNoise(n / 2, 0.5f);
      for (int step = 0; step < kTotal / 8; ++step)
        EXPECT_EQ(wgmmaThread(MmaType::TF32, descriptor(32 * step, 16, 1024, 1),
                              descriptor(64 * 128 + 32 * step, 16, 1024, 1), n,
                              t, shared.data(),
                              static_cast<int64_t>(shared.size()), acc.data()),
                  -1);
      for (int j = 0; j < n / 8; ++j)
        for (int e = 0; e < 4; ++e) {
          int m = 16 * w + g + 8 * (e / 2), col = 8 * j + 2 * q + e % 2;
          double exact = 0.5, rounded = 0.5;
          for (int k = 0; k < kTotal; ++k) {
            uint32_t a = A[m * kTotal + k], b = B[col * kTotal + k];
            exact += static_cast<double>(tf32Value(a)) * tf32Value(b);
            float fa, fb;
            std::memcpy(&fa, &a, 4);
            std::memcpy(&fb, &b, 4);
            rounded += static_cast<double>(fa) * fb;
          }
          wrong += acc[4 * j + e] != static_cast<float>(exact);
          noisy += static_cast<float>(rounded) != static_cast<float>(exact);
        }
    }
    EXPECT_EQ(wrong, 0) << "n = " << n;
    EXPECT_GT(noisy, 0) << "n = " << n; // the low bits mattered in f32
  }
  // Transposed tf32 operands do not exist (the PTX ISA): not modelled.
  std::vector<uint8_t> shared(64 * 128 + 8 * 128, 0);
  std::vector<float> acc(4, 1.0f);
  EXPECT_EQ(wgmmaThread(MmaType::TF32, descriptor(0, 16, 1024, 1),
                        descriptor(8192, 16, 1024, 1), 8, 0, shared.data(),
                        static_cast<int64_t>(shared.size()), acc.data(),
                        /*transposeB=*/true),
            0);
}

TEST(EmulatorMatrixTest, WgmmaReportsReadsOutsideShared) {
  std::vector<uint8_t> shared(64 * 128 + 8 * 128, 0);
  std::vector<float> acc(8, 1.0f);
  // B (n = 16) needs 16 rows of 128 bytes after A; only 8 exist.
  int64_t bad = wgmmaThread(MmaType::BF16, descriptor(0, 16, 1024, 1),
                            descriptor(8192, 16, 1024, 1), 16, 0, shared.data(),
                            static_cast<int64_t>(shared.size()), acc.data());
  EXPECT_GE(bad, static_cast<int64_t>(shared.size()));
  EXPECT_EQ(acc[0], 1.0f); // untouched
}

} // namespace
