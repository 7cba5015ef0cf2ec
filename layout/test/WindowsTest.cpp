//===- WindowsTest.cpp - Tests for the conv/pool output-size rules --------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// GoogleTest suite for the output sizes of memfmt/Layout/Windows.h. The
// symmetric-padding expectations were checked against torch 1.13 (Debian's
// python3-torch): F.conv2d(...).shape, F.max_pool2d(..., ceil_mode=...) and
// F.avg_pool2d(..., ceil_mode=...). The pinned case is ceil mode with a last
// window that would start in the end padding (5 rows, kernel 2, stride 2,
// padding 1): ATen drops it (3 rows), ONNX's rounding keeps it (4 rows). The
// runtime's average-pool check used the ONNX count until both sides called
// poolOutputSize. findEmptyWindow is checked against a walk over every
// window on all small cases and on sizes near 2^40, where the walk would take
// minutes.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Layout/Windows.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <limits>

using namespace memfmt::layout;

namespace {

int64_t ceilDivForTest(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct SizeCase {
  int64_t in, kernel, stride, pad, dilation;
  int64_t floorSize, ceilSize; // torch's (ATen's) answers
  int64_t roundUpCount;        // windowCount(..., roundUp=true), ONNX's
};

const SizeCase kTorchCases[] = {
    // ResNet's stem max pool: 112 -> 56 (57 in ceil mode).
    {112, 3, 2, 1, 1, 56, 57, 57},
    // The last ceil-mode window would start at row 5 of 5 (in the end
    // padding): ATen drops it.
    {5, 2, 2, 1, 1, 3, 3, 4},
    {10, 2, 3, 1, 1, 4, 4, 5},
    // Ceil mode adds a clipped window that starts inside the input.
    {8, 3, 2, 0, 1, 3, 4, 4},
    {6, 3, 2, 0, 1, 2, 3, 3},
    {3, 3, 3, 1, 1, 1, 2, 2},
    // Dilation.
    {9, 3, 1, 1, 2, 7, 7, 7},
    {11, 3, 4, 1, 2, 3, 3, 3},
    // Exact fits and one-pixel planes.
    {4, 2, 2, 0, 1, 2, 2, 2},
    {1, 1, 1, 0, 1, 1, 1, 1},
    {2, 3, 1, 1, 1, 2, 2, 2},
    {7, 3, 2, 1, 1, 4, 4, 4},
    {13, 5, 4, 2, 1, 4, 4, 4},
};

TEST(WindowsTest, PoolOutputSizeMatchesTorch) {
  for (const SizeCase &c : kTorchCases) {
    SCOPED_TRACE(testing::Message()
                 << "in " << c.in << " kernel " << c.kernel << " stride "
                 << c.stride << " pad " << c.pad << " dilation " << c.dilation);
    EXPECT_EQ(poolOutputSize(c.in, c.kernel, c.stride, c.pad, c.pad, c.dilation,
                             /*ceilMode=*/false),
              c.floorSize);
    EXPECT_EQ(poolOutputSize(c.in, c.kernel, c.stride, c.pad, c.pad, c.dilation,
                             /*ceilMode=*/true),
              c.ceilSize);
    EXPECT_EQ(windowCount(c.in, c.kernel, c.stride, c.pad, c.pad, c.dilation,
                          /*roundUp=*/true),
              c.roundUpCount);
    // A convolution is the floor-mode count.
    EXPECT_EQ(
        convOutputSize(c.in, c.kernel, c.stride, c.pad, c.pad, c.dilation),
        c.floorSize);
  }
}

TEST(WindowsTest, CeilModeDropsOnlyWindowsStartingInTheEndPadding) {
  // 4 rows, kernel 2, stride 2, one padded row: the third window starts at
  // row 4. With the padding at the end that is past the input (dropped);
  // with the padding at the beginning it is the last input row (kept).
  EXPECT_EQ(poolOutputSize(4, 2, 2, /*padBegin=*/0, /*padEnd=*/1, 1, true), 2);
  EXPECT_EQ(poolOutputSize(4, 2, 2, /*padBegin=*/1, /*padEnd=*/0, 1, true), 3);
  EXPECT_EQ(windowCount(4, 2, 2, 0, 1, 1, /*roundUp=*/true), 3);
}

TEST(WindowsTest, KernelLargerThanThePaddedInput) {
  // 3 rows, kernel 5: no window fits (sizes <= 0, callers reject them).
  EXPECT_LE(convOutputSize(3, 5, 1, 0, 0, 1), 0);
  EXPECT_LE(poolOutputSize(3, 5, 1, 0, 0, 1, false), 0);
  EXPECT_LE(poolOutputSize(3, 5, 1, 0, 0, 1, true), 0);
  // The dilated kernel (5 rows) is what must fit.
  EXPECT_LE(convOutputSize(4, 3, 1, 0, 0, 2), 0);
  EXPECT_EQ(convOutputSize(5, 3, 1, 0, 0, 2), 1);
}

TEST(WindowsTest, WindowArithmeticFits) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(windowArithmeticFits(224, 7, 2, 3, 3, 1));
  EXPECT_FALSE(windowArithmeticFits(4, kMax, 1, 0, 0, 2));
  EXPECT_FALSE(windowArithmeticFits(kMax, 1, 1, 1, 0, 1));
  EXPECT_FALSE(windowArithmeticFits(kMax - 2, 1, 2, 0, 1, 1));
}

/// The definition findEmptyWindow must agree with: every window, in order.
int64_t emptyWindowByWalk(int64_t outSize, int64_t kernel, int64_t stride,
                          int64_t pad, int64_t dilation, int64_t low,
                          int64_t high) {
  for (int64_t o = 0; o < outSize; ++o)
    if (windowTaps(o, kernel, stride, pad, dilation, low, high).empty())
      return o;
  return -1;
}

TEST(WindowsTest, FindEmptyWindowAgreesWithTheWalk) {
  int64_t checked = 0, found = 0;
  for (int64_t outSize = 0; outSize <= 14; ++outSize)
    for (int64_t kernel = 1; kernel <= 5; ++kernel)
      for (int64_t stride = 1; stride <= 5; ++stride)
        for (int64_t pad = 0; pad <= 9; ++pad)
          for (int64_t dilation = 1; dilation <= 7; ++dilation)
            for (int64_t low = 0; low <= 2; ++low)
              for (int64_t high = low; high <= low + 7; ++high) {
                int64_t expected = emptyWindowByWalk(outSize, kernel, stride,
                                                     pad, dilation, low, high);
                ASSERT_EQ(findEmptyWindow(outSize, kernel, stride, pad,
                                          dilation, low, high),
                          expected)
                    << "out " << outSize << " kernel " << kernel << " stride "
                    << stride << " pad " << pad << " dilation " << dilation
                    << " range [" << low << ", " << high << ")";
                ++checked;
                found += expected >= 0;
              }
  // Both answers occur often (the loops are not vacuous).
  EXPECT_GT(found, checked / 10);
  EXPECT_LT(found, checked - checked / 10);
}

TEST(WindowsTest, FindEmptyWindowOnHugeSizes) {
  constexpr int64_t d = int64_t(1) << 40;
  // Kernel 2 with dilation 2^40 on 2^40 - 1 rows: the taps of a window that
  // starts before row 0 are d apart, so they step over every row only when
  // the first one is row -1 (the second is row d - 1, past the input).
  for (int64_t pad : {int64_t(1), int64_t(12345), d / 3, d - 1})
    EXPECT_EQ(findEmptyWindow(d, 2, 1, pad, d, 0, d - 1), pad - 1);
  // Stride 3: window o starts at 3o - pad; it is empty iff that is -1 mod d
  // and negative, i.e. 3o = pad - 1 (pad - 1 a multiple of 3).
  EXPECT_EQ(findEmptyWindow(d, 2, 3, 3001, d, 0, d - 1), 1000);
  EXPECT_EQ(findEmptyWindow(d, 2, 3, 3002, d, 0, d - 1),
            ceilDivForTest(3002 + d - 1, 3));
  // The fuzzer's input: a 1099023255554-tap max pool with 549755813888 rows
  // of padding on 5 rows (dilation 1): no window is empty.
  EXPECT_EQ(findEmptyWindow(488372228, 1099023255554, 1, 549755813888, 1, 0, 5),
            -1);
}

} // namespace
