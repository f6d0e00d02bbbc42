//===- ElementTypesTest.cpp - f32 <-> bf16/f16 conversions ----------------===//
//
// The host's narrowing conversions (blockc-run rounds f32 checkpoints and
// inputs to a bf16/f16 model's type with them) against exact arithmetic:
// every 16-bit value round-trips, and the points halfway between two
// neighbours round to the even one, for both types over their whole range
// (subnormals and the overflow to infinity included).
//
//===----------------------------------------------------------------------===//

#include "blockc/Support/TensorFiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace blockc;

namespace {

float bitsToFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

TEST(ElementTypes, HalfRoundTripsAndRoundsHalfwayToEven) {
  for (uint32_t h = 0; h < 0x7c00; ++h) { // finite non-negative halves
    float v = halfToFloat(static_cast<uint16_t>(h));
    EXPECT_EQ(floatToHalf(v), h) << h;
    EXPECT_EQ(floatToHalf(-v), h | 0x8000) << h;
    if (h + 1 == 0x7c00)
      continue; // the next is infinity (checked below)
    // Halfway to the next half (exact in f32: a half has 11 bits).
    float next = halfToFloat(static_cast<uint16_t>(h + 1));
    float mid = v + (next - v) / 2;
    uint32_t even = (h & 1) ? h + 1 : h;
    EXPECT_EQ(floatToHalf(mid), even) << h;
    // Just above and below the midpoint.
    EXPECT_EQ(floatToHalf(std::nextafter(mid, 1e30f)), h + 1) << h;
    EXPECT_EQ(floatToHalf(std::nextafter(mid, -1e30f)), h) << h;
  }
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // rounds to infinity
  EXPECT_EQ(floatToHalf(std::nextafter(65520.0f, 0.0f)), 0x7bff); // max
  EXPECT_EQ(floatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(floatToHalf(1e-9f), 0); // below half a subnormal
  uint16_t nan = floatToHalf(NAN);
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x3ff, 0);
}

TEST(ElementTypes, BFloat16RoundTripsAndRoundsHalfwayToEven) {
  for (uint32_t b = 0; b < 0x7f80; ++b) { // finite non-negative bf16
    float v = bfloat16ToFloat(static_cast<uint16_t>(b));
    EXPECT_EQ(floatToBFloat16(v), b) << b;
    EXPECT_EQ(floatToBFloat16(-v), b | 0x8000) << b;
    uint32_t bits = b << 16;
    float mid = bitsToFloat(bits | 0x8000); // halfway to b + 1
    uint32_t even = (b & 1) ? b + 1 : b;
    EXPECT_EQ(floatToBFloat16(mid), even) << b;
    EXPECT_EQ(floatToBFloat16(bitsToFloat(bits | 0x8001)), b + 1) << b;
    EXPECT_EQ(floatToBFloat16(bitsToFloat(bits | 0x7fff)), b) << b;
  }
  EXPECT_EQ(floatToBFloat16(INFINITY), 0x7f80);
  EXPECT_EQ(floatToBFloat16(bitsToFloat(0x7f7fffff)), 0x7f80); // overflow
  uint16_t nan = floatToBFloat16(NAN);
  EXPECT_EQ(nan & 0x7f80, 0x7f80);
  EXPECT_NE(nan & 0x7f, 0);
}

TEST(ElementTypes, ConvertElementsKeepsShapeAndType) {
  HostTensor t;
  t.shape = {2, 3};
  t.allocate();
  for (int i = 0; i < 6; ++i)
    t.data[i] = 1.0f + i / 1024.0f; // bf16 keeps 1 + i/128 steps only
  HostTensor b = convertElements(t, ElementType::BF16);
  EXPECT_EQ(b.shape, t.shape);
  EXPECT_EQ(b.elementType, ElementType::BF16);
  EXPECT_EQ(b.elementBytes(), 2u);
  ASSERT_EQ(b.bits16.size(), 6u);
  EXPECT_TRUE(b.data.empty());
  HostTensor back = convertElements(b, ElementType::F32);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(back.data[i], bfloat16ToFloat(floatToBFloat16(t.data[i])));
  EXPECT_EQ(back.data[4], 1.0f); // 1 + 4/1024 rounds down to 1
}

} // namespace
