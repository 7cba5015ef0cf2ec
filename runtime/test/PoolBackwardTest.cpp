//===- PoolBackwardTest.cpp - Pooling gradients against naive scatters ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// adaptive_avg_pool2d_backward and max_pool2d_with_indices_backward on both
// kernel families, in every test layout, against naive scatters written from
// PyTorch's definitions: each grad_output element adds (divided by its
// window's size, for the average) to the grad_input positions its forward
// window read (the average) or chose (the max, through the indices the
// forward max_pool2d_with_indices kernel wrote). Edge shapes: windows that
// overlap (so a position gathers from several cells), output larger than
// the input (adaptive upsampling), one-pixel planes, dilation and padding.
// Bad calls fail with a message; grad_input is overwritten, gaps untouched.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

const std::pair<Layout, Layout> kLayouts[] = {{C, C}, {CL, CL}, {CLS, CLS},
                                              {S, S}, {C, CL},  {CL, S}};

/// The naive adaptive-average gradient of grad_output `go` for an input of
/// H x W.
Expected naiveAdaptiveBackward(const Tensor &go, int64_t h, int64_t w) {
  int64_t n = go.sizes[0], c = go.sizes[1], oh = go.sizes[2], ow = go.sizes[3];
  Expected e;
  e.value.assign(n * c * h * w, 0.0);
  e.magnitude.assign(n * c * h * w, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          int64_t h0 = y * h / oh, h1 = ((y + 1) * h + oh - 1) / oh;
          int64_t w0 = x * w / ow, w1 = ((x + 1) * w + ow - 1) / ow;
          double share = go.at({i, ch, y, x}) / double((h1 - h0) * (w1 - w0));
          for (int64_t a = h0; a < h1; ++a)
            for (int64_t b = w0; b < w1; ++b) {
              int64_t at = ((i * c + ch) * h + a) * w + b;
              e.value[at] += share;
              e.magnitude[at] += std::fabs(share);
            }
        }
  return e;
}

/// The naive max gradient: each cell adds its gradient at its index.
Expected naiveMaxBackward(const Tensor &go, const IndexTensor &indices,
                          int64_t h, int64_t w) {
  int64_t n = go.sizes[0], c = go.sizes[1], oh = go.sizes[2], ow = go.sizes[3];
  Expected e;
  e.value.assign(n * c * h * w, 0.0);
  e.magnitude.assign(n * c * h * w, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          int64_t at = (i * c + ch) * h * w + indices.at({i, ch, y, x});
          e.value[at] += go.at({i, ch, y, x});
          e.magnitude[at] += std::fabs(go.at({i, ch, y, x}));
        }
  return e;
}

/// The fast kernels run dense grad_inputs themselves (a training step's
/// layouts), whatever grad_output's strides.
void expectDenseFast(const TestContext &ctx, memfmt_kernels_t kernels,
                     const Tensor &gi, const std::string &what) {
  if (kernels == MEMFMT_KERNELS_FAST && gi.layout == CL)
    EXPECT_EQ(ctx.implOf(1), "channels_last") << what;
  if (kernels == MEMFMT_KERNELS_FAST && gi.layout == C)
    EXPECT_NE(ctx.implOf(1), "reference") << what;
}

struct AdaptiveCase {
  const char *name;
  int64_t n, c, h, w, oh, ow;
};

void PrintTo(const AdaptiveCase &c, std::ostream *os) { *os << c.name; }

const AdaptiveCase kAdaptiveCases[] = {
    {"GlobalResNet", 2, 8, 7, 7, 1, 1}, {"Overlapping", 1, 3, 10, 7, 4, 3},
    {"Upsampling", 2, 2, 3, 2, 5, 4},   {"OnePixel", 1, 5, 1, 1, 1, 1},
    {"Identity", 1, 4, 3, 5, 3, 5},     {"TallToWide", 1, 2, 1, 33, 31, 1},
};

class AdaptiveBackwardTest : public ::testing::TestWithParam<
                                 std::tuple<memfmt_kernels_t, AdaptiveCase>> {};

TEST_P(AdaptiveBackwardTest, MatchesNaive) {
  auto [kernels, cs] = GetParam();
  TestContext ctx(kernels);
  for (auto [inLayout, outLayout] : kLayouts) {
    Tensor go({cs.n, cs.c, cs.oh, cs.ow}, inLayout);
    go.fillRandom(7);
    Tensor gi({cs.n, cs.c, cs.h, cs.w}, outLayout);
    std::string what = go.describe() + " -> " + gi.describe();
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_adaptive_avg_pool2d_backward_f32(
                              ctx, 1, go.memref(), gi.memref()));
    expectClose(gi, naiveAdaptiveBackward(go, cs.h, cs.w), 1e-6, what);
    EXPECT_TRUE(gi.gapsIntact()) << what;
    expectDenseFast(ctx, kernels, gi, what);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, AdaptiveBackwardTest,
    ::testing::Combine(::testing::Values(MEMFMT_KERNELS_FAST,
                                         MEMFMT_KERNELS_REFERENCE),
                       ::testing::ValuesIn(kAdaptiveCases)));

struct MaxCase {
  const char *name;
  int64_t n, c, h, w;
  int64_t kh, kw, sh, sw, pt, pl, dh, dw;
};

void PrintTo(const MaxCase &c, std::ostream *os) { *os << c.name; }

const MaxCase kMaxCases[] = {
    {"ResNet3x3Stride2", 2, 4, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1},
    {"OverlappingStride1", 1, 3, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1},
    {"TwoByTwo", 2, 2, 6, 8, 2, 2, 2, 2, 0, 0, 1, 1},
    {"Dilation", 1, 2, 9, 8, 3, 2, 1, 2, 2, 1, 2, 2},
    {"OnePixel", 2, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1},
};

class MaxBackwardTest
    : public ::testing::TestWithParam<std::tuple<memfmt_kernels_t, MaxCase>> {};

TEST_P(MaxBackwardTest, MatchesNaive) {
  auto [kernels, cs] = GetParam();
  TestContext ctx(kernels);
  int64_t oh = poolOutSize(cs.h, cs.kh, cs.sh, cs.pt, cs.pt, cs.dh, false);
  int64_t ow = poolOutSize(cs.w, cs.kw, cs.sw, cs.pl, cs.pl, cs.dw, false);
  for (auto [inLayout, outLayout] : kLayouts) {
    // The indices of a real forward pass.
    Tensor x({cs.n, cs.c, cs.h, cs.w}, Layout::Contiguous);
    x.fillRandom(3);
    Tensor y({cs.n, cs.c, oh, ow}, Layout::Contiguous);
    IndexTensor indices({cs.n, cs.c, oh, ow}, inLayout);
    ASSERT_EQ(_mlir_ciface_memfmt_max_pool2d_with_indices_f32(
                  ctx, 0, x.memref(), y.memref(), indices.memref(), cs.kh,
                  cs.kw, cs.sh, cs.sw, cs.pt, cs.pl, cs.dh, cs.dw),
              MEMFMT_STATUS_OK)
        << ctx.lastError();
    Tensor go({cs.n, cs.c, oh, ow}, inLayout);
    go.fillRandom(11);
    Tensor gi({cs.n, cs.c, cs.h, cs.w}, outLayout);
    std::string what = go.describe() + " -> " + gi.describe();
    EXPECT_KERNEL_OK(
        ctx, _mlir_ciface_memfmt_max_pool2d_with_indices_backward_f32(
                 ctx, 1, go.memref(), indices.memref(), gi.memref(), cs.kh,
                 cs.kw, cs.sh, cs.sw, cs.pt, cs.pl, cs.dh, cs.dw));
    expectClose(gi, naiveMaxBackward(go, indices, cs.h, cs.w), 1e-6, what);
    EXPECT_TRUE(gi.gapsIntact()) << what;
    expectDenseFast(ctx, kernels, gi, what);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, MaxBackwardTest,
    ::testing::Combine(::testing::Values(MEMFMT_KERNELS_FAST,
                                         MEMFMT_KERNELS_REFERENCE),
                       ::testing::ValuesIn(kMaxCases)));

/// An index outside its cell's window contributes nothing; grad_input is
/// overwritten (old values do not survive).
TEST(MaxBackwardTest, IgnoresIndicesOutsideTheWindow) {
  for (memfmt_kernels_t kernels :
       {MEMFMT_KERNELS_REFERENCE, MEMFMT_KERNELS_FAST}) {
    TestContext ctx(kernels);
    // 1x1x2x4 input, 2x2 windows with stride 2: cells cover columns 0-1, 2-3.
    Tensor go({1, 1, 1, 2});
    go.flat(0) = 1.0f;
    go.flat(1) = 2.0f;
    IndexTensor indices({1, 1, 1, 2});
    indices.flat(0) = 5; // (1, 1): inside cell 0's window.
    indices.flat(1) = 0; // (0, 0): outside cell 1's window.
    Tensor gi({1, 1, 2, 4});
    for (int64_t i = 0; i < 8; ++i)
      gi.flat(i) = 9.0f;
    EXPECT_KERNEL_OK(ctx,
                     _mlir_ciface_memfmt_max_pool2d_with_indices_backward_f32(
                         ctx, 0, go.memref(), indices.memref(), gi.memref(), 2,
                         2, 2, 2, 0, 0, 1, 1));
    for (int64_t i = 0; i < 8; ++i)
      EXPECT_EQ(gi.flat(i), i == 5 ? 1.0f : 0.0f) << "element " << i;
  }
}

/// With padding a window starts left of column 0, so a flat index one row
/// above a window's first real column is not a tap of it: the row and the
/// column of an index are checked apart, not its offset from the window's
/// first tap.
TEST(MaxBackwardTest, IgnoresIndicesThatWrapAroundARow) {
  for (memfmt_kernels_t kernels :
       {MEMFMT_KERNELS_REFERENCE, MEMFMT_KERNELS_FAST}) {
    TestContext ctx(kernels);
    // 1x1x3x3 input, 3x3 windows, stride 1, padding 1: cell (1, 0) covers
    // rows 0-2 and columns -1-1, so index 2 = (0, 2) is outside it although
    // (0 * 3 - 1) + 3 = 2 is one row below its first tap.
    Tensor go({1, 1, 3, 3});
    IndexTensor indices({1, 1, 3, 3});
    for (int64_t i = 0; i < 9; ++i) {
      go.flat(i) = 0.0f;
      indices.flat(i) = 4; // The centre, a tap of every window.
    }
    go.flat(3) = 1.0f; // Cell (1, 0) ...
    indices.flat(3) = 2; // ... names (0, 2).
    go.flat(4) = 2.0f; // Cell (1, 1) names the centre.
    Tensor gi({1, 1, 3, 3});
    EXPECT_KERNEL_OK(ctx,
                     _mlir_ciface_memfmt_max_pool2d_with_indices_backward_f32(
                         ctx, 0, go.memref(), indices.memref(), gi.memref(), 3,
                         3, 1, 1, 1, 1, 1, 1));
    for (int64_t i = 0; i < 9; ++i)
      EXPECT_EQ(gi.flat(i), i == 4 ? 2.0f : 0.0f) << "element " << i;
  }
}

TEST(PoolBackwardErrorTest, BadShapesFailWithAMessage) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor go({1, 2, 3, 3}), gi({1, 3, 6, 6});
  EXPECT_EQ(_mlir_ciface_memfmt_adaptive_avg_pool2d_backward_f32(
                ctx, 4, go.memref(), gi.memref()),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("memfmt_adaptive_avg_pool2d_backward_f32 "
                                 "(node 4): grad_output has shape [1, 2, 3, "
                                 "3], but its batch and channel dims must be "
                                 "grad_input's [1, 3, 6, 6]"),
            std::string::npos)
      << ctx.lastError();
  Tensor gi2({1, 2, 6, 6});
  IndexTensor wrong({1, 2, 3, 2});
  EXPECT_EQ(_mlir_ciface_memfmt_max_pool2d_with_indices_backward_f32(
                ctx, 5, go.memref(), wrong.memref(), gi2.memref(), 2, 2, 2, 2,
                0, 0, 1, 1),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("indices has shape [1, 2, 3, 2], expected "
                                 "[1, 2, 3, 3] (grad_output's shape)"),
            std::string::npos)
      << ctx.lastError();
  IndexTensor indices({1, 2, 3, 3});
  EXPECT_EQ(_mlir_ciface_memfmt_max_pool2d_with_indices_backward_f32(
                ctx, 6, go.memref(), indices.memref(), gi2.memref(), 0, 2, 2, 2,
                0, 0, 1, 1),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("kernel_h is 0"), std::string::npos)
      << ctx.lastError();
  // grad_output aliasing grad_input.
  EXPECT_EQ(_mlir_ciface_memfmt_adaptive_avg_pool2d_backward_f32(
                ctx, 7, gi2.memref(), gi2.memref()),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("grad_input is the same buffer as "
                                 "grad_output"),
            std::string::npos)
      << ctx.lastError();
}

} // namespace
