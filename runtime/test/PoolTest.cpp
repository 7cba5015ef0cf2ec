//===- PoolTest.cpp - Pooling kernels against naive pooling ---------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// max_pool2d (with and without indices), avg_pool2d and adaptive_avg_pool2d
// on the reference and fast kernels, for floor- and ceil-mode output sizes,
// padding (symmetric and asymmetric), dilation, one-pixel planes and single
// channels, in every test layout, against Naive.h. Max pooling also gets
// ties, NaN and -inf inputs, where PyTorch's rules (first maximum wins, NaN
// wins and propagates, padding never wins) decide the indices.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

/// Input and output layouts every pooling test runs.
const std::pair<Layout, Layout> kPoolLayouts[] = {
    {C, C}, {CL, CL}, {CLS, CLS}, {S, S}, {C, CL}, {CL, S}, {S, CL}};

// oneDNN takes f32 average pooling (not max pooling, whose NaNs it does not
// keep, nor adaptive pooling: CpuBackend.cpp) where it can; the tests below
// run the own loops with kOwnLoops set, and OneDnnTakesF32AveragePooling the
// default.

/// Checks the implementation the fast kernels picked for a layout pair:
/// channels-last pairs run the channels-last loops, NCHW pairs a dense loop
/// (the channels-last one where the shape is both formats, L3).
void expectFastImpl(const TestContext &ctx, int64_t node, Layout in, Layout out,
                    const std::string &what) {
  std::string impl = ctx.implOf(node);
  if (in == CL && out == CL) {
    EXPECT_EQ(impl, "channels_last") << what;
  } else if (in == C && out == C) {
    EXPECT_NE(impl, "reference") << what;
  }
}

struct PoolCase {
  const char *name;
  int64_t n, c, h, w;
  PoolAttrs attrs;
  bool ceil;
};

/// gtest prints a case by its name.
void PrintTo(const PoolCase &c, std::ostream *os) { *os << c.name; }

// attrs: kernel h, w; stride h, w; pad top, left, bottom, right; dilation h,
// w; count_include_pad. Max pooling uses pad bottom = top and right = left
// to size its output (the kernel itself only takes top and left).
const PoolCase kMaxPoolCases[] = {
    {"ResNet3x3Stride2", 2, 3, 9, 9, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, false},
    {"TwoByTwo", 1, 4, 6, 7, {2, 2, 2, 2, 0, 0, 0, 0, 1, 1}, false},
    {"CeilOdd", 2, 3, 8, 10, {3, 3, 2, 2, 0, 0, 0, 0, 1, 1}, true},
    {"CeilWithPadding", 1, 2, 8, 5, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, true},
    {"Dilation", 2, 2, 9, 10, {3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, false},
    {"AsymmetricKernel", 1, 3, 6, 5, {3, 2, 2, 1, 1, 0, 1, 0, 1, 1}, false},
    {"OnePixel", 2, 3, 1, 1, {1, 1, 1, 1, 0, 0, 0, 0, 1, 1}, false},
    {"KernelOverPaddedPixel",
     1,
     2,
     2,
     2,
     {3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
     false},
    {"SingleChannel", 3, 1, 5, 5, {2, 2, 1, 1, 0, 0, 0, 0, 1, 1}, false},
};

const PoolCase kAvgPoolCases[] = {
    {"Same3x3", 2, 3, 6, 7, {3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, false},
    {"TwoByTwo", 1, 4, 6, 8, {2, 2, 2, 2, 0, 0, 0, 0, 1, 1}, false},
    {"CeilWithPadding", 2, 2, 7, 6, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, true},
    {"CeilClipsAtPaddedEdge", 1, 3, 6, 6, {3, 3, 2, 2, 0, 0, 0, 0, 1, 1}, true},
    // ATen drops the last ceil-mode window, which would start in the end
    // padding: 3x3 outputs, not 4x4.
    {"CeilDropsWindowInEndPadding",
     1,
     2,
     5,
     5,
     {2, 2, 2, 2, 1, 1, 1, 1, 1, 1},
     true},
    {"AsymmetricPadding", 2, 2, 5, 6, {2, 3, 1, 2, 1, 0, 0, 2, 1, 1}, false},
    {"OnePixel", 1, 3, 1, 1, {1, 1, 1, 1, 0, 0, 0, 0, 1, 1}, false},
    {"WindowMostlyPadding", 1, 2, 2, 3, {3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, false},
};

class MaxPoolTest
    : public ::testing::TestWithParam<std::tuple<PoolCase, memfmt_kernels_t>> {
};

TEST_P(MaxPoolTest, MatchesNaiveWithAndWithoutIndices) {
  const auto &[pc, kernels] = GetParam();
  const PoolAttrs &p = pc.attrs;
  TestContext ctx(kernels);
  int64_t oh = poolOutSize(pc.h, p.kernelH, p.strideH, p.padTop, p.padTop,
                           p.dilationH, pc.ceil);
  int64_t ow = poolOutSize(pc.w, p.kernelW, p.strideW, p.padLeft, p.padLeft,
                           p.dilationW, pc.ceil);
  int64_t node = 0;
  for (auto [inLayout, outLayout] : kPoolLayouts) {
    Tensor in({pc.n, pc.c, pc.h, pc.w}, inLayout);
    in.fillRandom(11);
    // Ties: a repeated value in every plane.
    in.flat(in.numElements() / 2) = in.flat(0);
    Tensor out({pc.n, pc.c, oh, ow}, outLayout);
    Tensor outWithIndices({pc.n, pc.c, oh, ow}, outLayout);
    IndexTensor indices({pc.n, pc.c, oh, ow}, outLayout);
    std::string what =
        std::string(pc.name) + " " + in.describe() + " -> " + out.describe();
    Expected want = naiveMaxPool(in, oh, ow, p);
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_max_pool2d_f32(
                              ctx, node, in.memref(), out.memref(), p.kernelH,
                              p.kernelW, p.strideH, p.strideW, p.padTop,
                              p.padLeft, p.dilationH, p.dilationW));
    expectClose(out, want, 0, what);
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_max_pool2d_with_indices_f32(
                              ctx, node + 1, in.memref(),
                              outWithIndices.memref(), indices.memref(),
                              p.kernelH, p.kernelW, p.strideH, p.strideW,
                              p.padTop, p.padLeft, p.dilationH, p.dilationW));
    expectClose(outWithIndices, want, 0, what + " (with indices)");
    for (int64_t i = 0; i < indices.numElements(); ++i)
      ASSERT_EQ(indices.flat(i), want.index[i]) << what << " index " << i;
    EXPECT_TRUE(indices.gapsIntact()) << what;
    if (kernels == MEMFMT_KERNELS_FAST) {
      expectFastImpl(ctx, node, inLayout, outLayout, what);
      expectFastImpl(ctx, node + 1, inLayout, outLayout, what);
    }
    node += 2;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MaxPoolTest,
    ::testing::Combine(::testing::ValuesIn(kMaxPoolCases),
                       ::testing::Values(MEMFMT_KERNELS_REFERENCE,
                                         MEMFMT_KERNELS_FAST)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) +
             toString(std::get<1>(info.param));
    });

/// NaN wins and propagates (the last NaN's index is kept), -inf inputs
/// still pick a real position, padding never wins, ties keep the first.
TEST(MaxPoolSpecialValuesTest, NanInfAndTiesFollowPyTorch) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (memfmt_kernels_t kernels :
       {MEMFMT_KERNELS_REFERENCE, MEMFMT_KERNELS_FAST}) {
    for (Layout layout : {C, CL, S}) {
      TestContext ctx(kernels);
      // Plane 0: NaNs at (0, 1) and (1, 0); plane 1: all -inf; plane 2:
      // all equal; plane 3: negative values next to the padding.
      Tensor in({1, 4, 2, 2}, layout);
      const float values[4][4] = {{1, nan, nan, 2},
                                  {-inf, -inf, -inf, -inf},
                                  {3, 3, 3, 3},
                                  {-5, -4, -3, -2}};
      for (int64_t c = 0; c < 4; ++c)
        for (int64_t i = 0; i < 4; ++i)
          in.at({0, c, i / 2, i % 2}) = values[c][i];
      // 2x2 windows, stride 1, padding 1: a 3x3 output.
      Tensor out({1, 4, 3, 3}, layout);
      IndexTensor indices({1, 4, 3, 3}, layout);
      PoolAttrs p{2, 2, 1, 1, 1, 1, 1, 1, 1, 1};
      Expected want = naiveMaxPool(in, 3, 3, p);
      ASSERT_EQ(_mlir_ciface_memfmt_max_pool2d_with_indices_f32(
                    ctx, 0, in.memref(), out.memref(), indices.memref(), 2, 2,
                    1, 1, 1, 1, 1, 1),
                MEMFMT_STATUS_OK)
          << ctx.lastError();
      expectClose(out, want, 0, toString(layout));
      for (int64_t i = 0; i < indices.numElements(); ++i)
        EXPECT_EQ(indices.flat(i), want.index[i]) << "index " << i;
      // Spot checks of the rules themselves.
      EXPECT_TRUE(std::isnan(out.at({0, 0, 1, 1})));
      EXPECT_EQ(indices.at({0, 0, 1, 1}), 2); // The last NaN, (1, 0).
      EXPECT_EQ(out.at({0, 1, 1, 1}), -inf);
      EXPECT_EQ(indices.at({0, 1, 1, 1}), 0); // The first real position.
      EXPECT_EQ(indices.at({0, 2, 1, 1}), 0); // Ties: the first.
      EXPECT_EQ(out.at({0, 3, 0, 0}), -5);    // Padding never wins.
    }
  }
}

/// Windows far larger than the input: the kernels and the validation visit
/// only the taps that land in the input, so a 2^30-tap window costs what a
/// 3-tap one does (walking every tap made one call take seconds, and this
/// one years; found by memfmt-fuzz-runtime, test/fuzz/regressions/runtime).
TEST(MaxPoolSpecialValuesTest, HugeWindowsVisitOnlyTheInput) {
  const int64_t kernel = (int64_t(1) << 30) + 1, pad = int64_t(1) << 29;
  for (memfmt_kernels_t kernels :
       {MEMFMT_KERNELS_REFERENCE, MEMFMT_KERNELS_FAST}) {
    for (Layout layout : {C, CL, S}) {
      TestContext ctx(kernels);
      Tensor in({2, 3, 3, 3}, layout);
      in.fillRandom(7);
      // Every window covers the whole 3x3 plane: a 3x3 output of its max.
      Tensor out({2, 3, 3, 3}, layout);
      IndexTensor indices({2, 3, 3, 3}, layout);
      ASSERT_EQ(_mlir_ciface_memfmt_max_pool2d_with_indices_f32(
                    ctx, 0, in.memref(), out.memref(), indices.memref(), kernel,
                    kernel, 1, 1, pad, pad, 1, 1),
                MEMFMT_STATUS_OK)
          << ctx.lastError();
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 3; ++c) {
          float best = in.at({n, c, 0, 0});
          int64_t where = 0;
          for (int64_t i = 1; i < 9; ++i)
            if (in.at({n, c, i / 3, i % 3}) > best) {
              best = in.at({n, c, i / 3, i % 3});
              where = i;
            }
          for (int64_t i = 0; i < 9; ++i) {
            EXPECT_EQ(out.at({n, c, i / 3, i % 3}), best) << toString(layout);
            EXPECT_EQ(indices.at({n, c, i / 3, i % 3}), where);
          }
        }
    }
  }
}

/// Many ties (three distinct values), scattered NaNs and -infs, and one
/// channel of -inf only, in planes large enough for the fast kernels'
/// interior loops and with 19 channels (a channels-last block of 16 kept in
/// registers, and 3 more) and 75 columns (NCHW with indices: blocks of 16
/// interior output columns at strides 1, 2 and 3, then the rest), checked
/// against the naive rules in every layout.
TEST(MaxPoolSpecialValuesTest, TiesAndNanInLargerPlanes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t channels = 19, width = 75;
  for (memfmt_kernels_t kernels :
       {MEMFMT_KERNELS_REFERENCE, MEMFMT_KERNELS_FAST}) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (auto [inLayout, outLayout] : kPoolLayouts) {
      Tensor in({2, channels, 9, width}, inLayout);
      in.fillRandom(14);
      for (int64_t i = 0; i < in.numElements(); ++i)
        in.flat(i) = std::round(in.flat(i)); // -1, 0 or 1.
      for (int64_t i = 5; i < in.numElements(); i += 37)
        in.flat(i) = nan;
      for (int64_t i = 11; i < in.numElements(); i += 29)
        in.flat(i) = -inf;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t h = 0; h < 9; ++h)
          for (int64_t w = 0; w < width; ++w)
            in.at({n, 7, h, w}) = -inf;
      for (PoolAttrs p : {PoolAttrs{3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                          PoolAttrs{3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                          PoolAttrs{3, 2, 2, 2, 0, 1, 0, 1, 2, 1},
                          PoolAttrs{2, 3, 1, 3, 0, 1, 0, 1, 1, 2}}) {
        int64_t oh = poolOutSize(9, p.kernelH, p.strideH, p.padTop, p.padTop,
                                 p.dilationH, false);
        int64_t ow = poolOutSize(width, p.kernelW, p.strideW, p.padLeft,
                                 p.padLeft, p.dilationW, false);
        Tensor out({2, channels, oh, ow}, outLayout);
        IndexTensor indices({2, channels, oh, ow}, outLayout);
        Expected want = naiveMaxPool(in, oh, ow, p);
        std::string what = in.describe() + " -> " + out.describe();
        ASSERT_EQ(_mlir_ciface_memfmt_max_pool2d_with_indices_f32(
                      ctx, node++, in.memref(), out.memref(), indices.memref(),
                      p.kernelH, p.kernelW, p.strideH, p.strideW, p.padTop,
                      p.padLeft, p.dilationH, p.dilationW),
                  MEMFMT_STATUS_OK)
            << ctx.lastError();
        expectClose(out, want, 0, what);
        for (int64_t i = 0; i < indices.numElements(); ++i)
          ASSERT_EQ(indices.flat(i), want.index[i]) << what << " index " << i;
        Tensor plain({2, channels, oh, ow}, outLayout);
        ASSERT_EQ(_mlir_ciface_memfmt_max_pool2d_f32(
                      ctx, node++, in.memref(), plain.memref(), p.kernelH,
                      p.kernelW, p.strideH, p.strideW, p.padTop, p.padLeft,
                      p.dilationH, p.dilationW),
                  MEMFMT_STATUS_OK)
            << ctx.lastError();
        expectClose(plain, want, 0, what + " (without indices)");
      }
    }
  }
}

class AvgPoolTest
    : public ::testing::TestWithParam<
          std::tuple<PoolCase, memfmt_kernels_t, bool /*countIncludePad*/>> {};

TEST_P(AvgPoolTest, MatchesNaive) {
  auto [pc, kernels, countIncludePad] = GetParam();
  PoolAttrs p = pc.attrs;
  p.countIncludePad = countIncludePad;
  ScopedEnv ownLoops(kOwnLoops, kernels == MEMFMT_KERNELS_FAST ? "1" : nullptr);
  TestContext ctx(kernels);
  int64_t oh = poolOutSize(pc.h, p.kernelH, p.strideH, p.padTop, p.padBottom, 1,
                           pc.ceil);
  int64_t ow = poolOutSize(pc.w, p.kernelW, p.strideW, p.padLeft, p.padRight, 1,
                           pc.ceil);
  int64_t node = 0;
  for (auto [inLayout, outLayout] : kPoolLayouts) {
    Tensor in({pc.n, pc.c, pc.h, pc.w}, inLayout);
    in.fillRandom(12);
    Tensor out({pc.n, pc.c, oh, ow}, outLayout);
    std::string what =
        std::string(pc.name) + " " + in.describe() + " -> " + out.describe();
    EXPECT_KERNEL_OK(ctx,
                     _mlir_ciface_memfmt_avg_pool2d_f32(
                         ctx, node, in.memref(), out.memref(), p.kernelH,
                         p.kernelW, p.strideH, p.strideW, p.padTop, p.padLeft,
                         p.padBottom, p.padRight, countIncludePad))
        << what;
    expectClose(out, naiveAvgPool(in, oh, ow, p), kReferenceFactor, what);
    if (kernels == MEMFMT_KERNELS_FAST)
      expectFastImpl(ctx, node, inLayout, outLayout, what);
    ++node;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AvgPoolTest,
    ::testing::Combine(::testing::ValuesIn(kAvgPoolCases),
                       ::testing::Values(MEMFMT_KERNELS_REFERENCE,
                                         MEMFMT_KERNELS_FAST),
                       ::testing::Bool()),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) +
             toString(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "IncludePad" : "ExcludePad");
    });

struct AdaptiveCase {
  const char *name;
  int64_t n, c, h, w, oh, ow;
};

/// gtest prints a case by its name.
void PrintTo(const AdaptiveCase &c, std::ostream *os) { *os << c.name; }

const AdaptiveCase kAdaptiveCases[] = {
    {"Global", 2, 5, 7, 7, 1, 1},        {"Uneven", 1, 3, 7, 9, 3, 4},
    {"Upsample", 2, 2, 5, 5, 7, 7},      {"OnePixelUp", 1, 2, 1, 1, 2, 3},
    {"Identity", 1, 3, 6, 4, 6, 4},      {"TallToWide", 2, 1, 10, 3, 4, 2},
    {"ManyChannels", 1, 64, 3, 3, 1, 1},
};

class AdaptiveAvgPoolTest : public ::testing::TestWithParam<
                                std::tuple<AdaptiveCase, memfmt_kernels_t>> {};

TEST_P(AdaptiveAvgPoolTest, MatchesNaive) {
  const auto &[ac, kernels] = GetParam();
  ScopedEnv ownLoops(kOwnLoops, kernels == MEMFMT_KERNELS_FAST ? "1" : nullptr);
  TestContext ctx(kernels);
  int64_t node = 0;
  for (auto [inLayout, outLayout] : kPoolLayouts) {
    Tensor in({ac.n, ac.c, ac.h, ac.w}, inLayout);
    in.fillRandom(13);
    Tensor out({ac.n, ac.c, ac.oh, ac.ow}, outLayout);
    std::string what =
        std::string(ac.name) + " " + in.describe() + " -> " + out.describe();
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_adaptive_avg_pool2d_f32(
                              ctx, node, in.memref(), out.memref()))
        << what;
    expectClose(out, naiveAdaptiveAvgPool(in, ac.oh, ac.ow), kReferenceFactor,
                what);
    if (kernels == MEMFMT_KERNELS_FAST)
      expectFastImpl(ctx, node, inLayout, outLayout, what);
    ++node;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AdaptiveAvgPoolTest,
    ::testing::Combine(::testing::ValuesIn(kAdaptiveCases),
                       ::testing::Values(MEMFMT_KERNELS_REFERENCE,
                                         MEMFMT_KERNELS_FAST)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) +
             toString(std::get<1>(info.param));
    });


/// By default the fast f32 average pooling runs on oneDNN where the build has
/// it (its jitted kernels beat the own loops: CpuBackend.cpp), adaptive
/// pooling and max pooling (which keeps NaNs) on the own loops; the values
/// are the naive ones either way, in both formats.
TEST(PoolDispatchTest, OneDnnTakesF32AveragePooling) {
  ScopedEnv ownLoops(kOwnLoops, nullptr);
  TestContext ctx(MEMFMT_KERNELS_FAST);
  const std::string pooled =
      memfmt_runtime_has_onednn() ? "onednn" : "channels_last";
  int64_t node = 0;
  for (Layout layout : {CL, C}) {
    Tensor in({2, 24, 9, 11}, layout);
    in.fillRandom(14);
    Tensor avg({2, 24, 5, 6}, layout), global({2, 24, 1, 1}, layout),
        max({2, 24, 5, 6}, layout);
    std::string what = in.describe();
    PoolAttrs p{3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
    p.countIncludePad = false;
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_avg_pool2d_f32(
                              ctx, node, in.memref(), avg.memref(), 3, 3, 2,
                              2, 1, 1, 1, 1, 0));
    // oneDNN sums a window (9 taps) in float.
    expectClose(avg, naiveAvgPool(in, 5, 6, p), floatSumFactor(9), what);
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_adaptive_avg_pool2d_f32(
                              ctx, node + 1, in.memref(), global.memref()));
    expectClose(global, naiveAdaptiveAvgPool(in, 1, 1), kReferenceFactor,
                what);
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_max_pool2d_f32(
                              ctx, node + 2, in.memref(), max.memref(), 3, 3,
                              2, 2, 1, 1, 1, 1));
    expectClose(max, naiveMaxPool(in, 5, 6, p), 0, what);
    if (layout == CL) {
      EXPECT_EQ(ctx.implOf(node), pooled) << what;
      EXPECT_EQ(ctx.implOf(node + 1), "channels_last") << what;
      EXPECT_EQ(ctx.implOf(node + 2), "channels_last") << what;
    }
    node += 3;
  }
}

/// The channels-last f32 max pool keeps blocks of 16 channels (where the
/// channels divide by 16), then 8, then single channels in registers over
/// a window: every mix of the three, with NaNs and ties, equals the naive
/// pool (NaN wins and stays).
TEST(PoolDispatchTest, ChannelsLastMaxPoolBlocks) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  int64_t node = 0;
  for (int64_t channels : {1, 7, 8, 17, 24, 32, 33, 48}) {
    Tensor in({2, channels, 7, 8}, CL);
    in.fillRandom(15);
    in.flat(3) = nan;
    in.flat(in.numElements() / 2) = in.flat(0);
    in.flat(in.numElements() - 1) = nan;
    Tensor out({2, channels, 4, 4}, CL);
    PoolAttrs p{3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
    const std::string what = in.describe();
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_max_pool2d_f32(
                              ctx, node, in.memref(), out.memref(), 3, 3, 2,
                              2, 1, 1, 1, 1));
    expectClose(out, naiveMaxPool(in, 4, 4, p), 0, what);
    EXPECT_EQ(ctx.implOf(node), "channels_last") << what;
    ++node;
  }
}

/// MEMFMT_CPU_OWN_LOOPS=0 is the default; a bad value is refused by name.
TEST(PoolDispatchTest, OwnLoopsEnvironmentVariable) {
  {
    ScopedEnv env(kOwnLoops, "0");
    TestContext ctx(MEMFMT_KERNELS_FAST);
    ASSERT_NE(ctx.get(), nullptr);
  }
  expectEnvironmentRefused(kOwnLoops, "maybe");
}

} // namespace
