//===- Bf16MathTest.cpp - f32 convolutions multiplying in bf16 ------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The context's allow_bf16 option lets f32 convolutions (conv2d) and their
// gradients (convolution_backward) multiply in bf16 with f32 accumulation
// where the CPU has bf16 instructions. These tests run both kernels with the
// option on, on shapes that cover the edges (one image, one channel, one
// pixel, odd sizes, stride 2, groups, pointwise, the 7x7 stem, bias,
// residual and relu) in NCHW and channels-last, and compare with the naive
// loops under the bound bf16 allows: every product of two values rounded to
// bf16 (unit roundoff u = 2^-8) errs by at most 2u + u^2 of its magnitude,
// then f32 accumulation adds floatSumFactor. On a CPU with bf16 instructions
// the device description says so and the dense calls must have run the
// bf16 kernels ("onednn_bf16_math", "..._matmul" for pointwise gradients),
// and must differ from the f32 kernels
// somewhere (else the option did nothing); elsewhere the description says
// that f32 stays and the results are f32's. A second call builds nothing.
//
//===----------------------------------------------------------------------===//

#include "Gradients.h"

#include <cmath>
#include <cstring>

using namespace memfmt::test;

namespace {

constexpr double kBf16Roundoff = 1.0 / 256;

/// The bound of a bf16 product (2u + u^2), with room for the f32 sum.
double bf16Factor(int64_t terms) {
  return 2.0 * kBf16Roundoff + kBf16Roundoff * kBf16Roundoff +
         floatSumFactor(terms);
}

memfmt_context_options_t bf16Options() {
  memfmt_context_options_t options =
      TestContext::optionsFor(MEMFMT_KERNELS_FAST);
  options.allow_bf16 = MEMFMT_SWITCH_ON;
  return options;
}

/// True if the context's f32 convolutions multiply in bf16 (its device
/// description says which).
bool multipliesInBf16(const TestContext &ctx) {
  return std::strstr(memfmt_context_device_description(ctx),
                     "f32 convolutions in bf16") != nullptr;
}

struct Case {
  const char *name;
  int64_t n, c, h, w, o, kh, kw;
  ConvAttrs attrs;
};

// attrs: stride h, w; pad top, left, bottom, right; dilation h, w; groups;
// bias, residual, relu.
const Case kCases[] = {
    {"Basic3x3", 2, 16, 6, 6, 16, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"OddSizesStride2", 3, 5, 7, 9, 4, 3, 3, {2, 2, 1, 1, 1, 1, 1, 1, 1}},
    {"Groups", 2, 8, 5, 5, 12, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 2}},
    {"Pointwise", 2, 32, 5, 7, 24, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 1}},
    {"PointwiseStride2", 2, 16, 8, 8, 32, 1, 1, {2, 2, 0, 0, 0, 0, 1, 1, 1}},
    {"Stem7x7", 1, 3, 17, 15, 8, 7, 7, {2, 2, 3, 3, 3, 3, 1, 1, 1}},
    {"OnePixel", 1, 1, 1, 1, 1, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 1}},
    {"SingleChannel", 1, 1, 5, 6, 3, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"BiasResidualRelu",
     2,
     64,
     7,
     7,
     64,
     3,
     3,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true}},
    {"ResNetExpand1x1", 2, 64, 7, 7, 256, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 1}},
};

class Bf16MathTest : public ::testing::TestWithParam<std::tuple<Case, Layout>> {
};

TEST_P(Bf16MathTest, ForwardWithinBf16RoundingOfNaive) {
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  const auto &[cs, layout] = GetParam();
  const ConvAttrs &a = cs.attrs;
  TestContext ctx(bf16Options()), f32(MEMFMT_KERNELS_FAST);
  const bool bf16 = multipliesInBf16(ctx);
  int64_t oh =
      convOutSize(cs.h, cs.kh, a.strideH, a.padTop, a.padBottom, a.dilationH);
  int64_t ow =
      convOutSize(cs.w, cs.kw, a.strideW, a.padLeft, a.padRight, a.dilationW);
  Tensor in({cs.n, cs.c, cs.h, cs.w}, layout),
      w({cs.o, cs.c / a.groups, cs.kh, cs.kw}, layout), b({cs.o}),
      res({cs.n, cs.o, oh, ow}, layout), out({cs.n, cs.o, oh, ow}, layout);
  in.fillRandom(1);
  w.fillRandom(2);
  b.fillRandom(3);
  res.fillRandom(4);
  Tensor exact = out;
  auto run = [&](const TestContext &c, Tensor &o) {
    return _mlir_ciface_memfmt_conv2d_f32(
        c, 0, in.memref(), w.memref(), a.bias ? b.memref() : o.memref(),
        a.residual ? res.memref() : o.memref(), o.memref(), a.strideH,
        a.strideW, a.padTop, a.padLeft, a.padBottom, a.padRight, a.dilationH,
        a.dilationW, a.groups, a.bias, a.residual, a.relu, 0, 0.0, 0.0);
  };
  for (int call = 0; call < 2; ++call) {
    memfmt_context_counters_t before, after;
    memfmt_context_get_counters(ctx, &before);
    ASSERT_EQ(run(ctx, out), MEMFMT_STATUS_OK) << ctx.lastError();
    memfmt_context_get_counters(ctx, &after);
    if (call == 1)
      EXPECT_EQ(after.primitives_built, before.primitives_built)
          << "the second call built primitives";
  }
  ASSERT_EQ(run(f32, exact), MEMFMT_STATUS_OK) << f32.lastError();
  int64_t terms = (cs.c / a.groups) * cs.kh * cs.kw + 2;
  Expected want =
      naiveConv(in, w, a.bias ? &b : nullptr, a.residual ? &res : nullptr, a);
  std::string impl = ctx.implOf(0);
  expectClose(out, want, bf16 ? bf16Factor(terms) : floatSumFactor(terms),
              std::string(cs.name) + " " + toString(layout) + " (" + impl +
                  ")");
  // Groups may run merged on AMX: "onednn_bf16_math_merged_groups".
  if (bf16 && layout != Layout::Strided)
    EXPECT_EQ(impl.rfind("onednn_bf16_math", 0), 0u) << impl;
  if (!bf16)
    EXPECT_EQ(impl.find("bf16"), std::string::npos) << impl;
}

TEST_P(Bf16MathTest, GradientsWithinBf16RoundingOfNaive) {
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  const auto &[cs, layout] = GetParam();
  const ConvAttrs &a = cs.attrs;
  TestContext ctx(bf16Options());
  const bool bf16 = multipliesInBf16(ctx);
  int64_t oh =
      convOutSize(cs.h, cs.kh, a.strideH, a.padTop, a.padBottom, a.dilationH);
  int64_t ow =
      convOutSize(cs.w, cs.kw, a.strideW, a.padLeft, a.padRight, a.dilationW);
  Tensor dy({cs.n, cs.o, oh, ow}, layout), in({cs.n, cs.c, cs.h, cs.w}, layout),
      w({cs.o, cs.c / a.groups, cs.kh, cs.kw}, layout);
  dy.fillRandom(11);
  in.fillRandom(12);
  w.fillRandom(13);
  Gradients want = naiveGradients(dy, in, w, a);
  for (const int64_t *flags : kGradientFlagSets) {
    Tensor dx({cs.n, cs.c, cs.h, cs.w}, layout),
        dw({cs.o, cs.c / a.groups, cs.kh, cs.kw}, layout), db({cs.o});
    for (int call = 0; call < 2; ++call) {
      memfmt_context_counters_t before, after;
      memfmt_context_get_counters(ctx, &before);
      ASSERT_EQ(_mlir_ciface_memfmt_convolution_backward_f32(
                    ctx, 1, dy.memref(), in.memref(), w.memref(), dx.memref(),
                    dw.memref(), db.memref(), a.strideH, a.strideW, a.padTop,
                    a.padLeft, a.padBottom, a.padRight, a.dilationH,
                    a.dilationW, a.groups, flags[0], flags[1], flags[2]),
                MEMFMT_STATUS_OK)
          << ctx.lastError();
      memfmt_context_get_counters(ctx, &after);
      if (call == 1)
        EXPECT_EQ(after.primitives_built, before.primitives_built)
            << "the second call built primitives";
    }
    std::string impl = ctx.implOf(1);
    int64_t inputTerms = (cs.o / a.groups) * cs.kh * cs.kw;
    int64_t weightTerms = cs.n * oh * ow;
    expectGradients(
        dx, dw, db, flags, want,
        bf16 ? bf16Factor(inputTerms) : floatSumFactor(inputTerms),
        bf16 ? bf16Factor(weightTerms) : floatSumFactor(weightTerms),
        std::string(cs.name) + " " + toString(layout) + " (" + impl + ")");
    // Pointwise gradients run as bf16 matmuls ("onednn_bf16_math_matmul").
    if (bf16 && layout != Layout::Strided)
      EXPECT_EQ(impl.rfind("onednn_bf16_math", 0), 0u) << impl;
    if (!bf16)
      EXPECT_EQ(impl.find("bf16"), std::string::npos) << impl;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Bf16MathTest,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(Layout::ChannelsLast,
                                         Layout::Contiguous, Layout::Strided)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) +
             toString(std::get<1>(info.param));
    });

/// On a CPU with bf16 instructions the option must change results (a
/// ResNet-sized layer differs from the f32 kernels' by more than f32
/// rounding), and without the option nothing runs in bf16.
TEST(Bf16MathOptionTest, ChangesResultsOnlyWhereOn) {
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  TestContext on(bf16Options()), off(MEMFMT_KERNELS_FAST);
  EXPECT_FALSE(multipliesInBf16(off));
  Tensor in({2, 64, 8, 8}, Layout::ChannelsLast),
      w({64, 64, 3, 3}, Layout::ChannelsLast);
  in.fillRandom(21);
  w.fillRandom(22);
  Tensor a({2, 64, 8, 8}, Layout::ChannelsLast), b = a;
  for (auto [ctx, out] : {std::pair{&on, &a}, std::pair{&off, &b}})
    ASSERT_EQ(_mlir_ciface_memfmt_conv2d_f32(*ctx, 0, in.memref(), w.memref(),
                                             out->memref(), out->memref(),
                                             out->memref(), 1, 1, 1, 1, 1, 1, 1,
                                             1, 1, 0, 0, 0, 0, 0.0, 0.0),
              MEMFMT_STATUS_OK)
        << ctx->lastError();
  EXPECT_NE(off.implOf(0), "onednn_bf16_math");
  double largest = 0;
  for (int64_t i = 0; i < a.numElements(); ++i)
    largest = std::max(largest, std::fabs(double(a.flat(i)) - b.flat(i)));
  if (multipliesInBf16(on))
    EXPECT_GT(largest, 1e-4) << "allow_bf16 computed f32's results";
  else
    EXPECT_EQ(largest, 0.0) << "without bf16 instructions f32 must stay";
}

/// MEMFMT_ALLOW_BF16 sets the default; a bad value is refused by name.
TEST(Bf16MathOptionTest, EnvironmentVariable) {
  {
    ScopedEnv env("MEMFMT_ALLOW_BF16", "1");
    TestContext ctx(MEMFMT_KERNELS_FAST);
    memfmt_context_options_t options;
    ASSERT_EQ(memfmt_context_get_options(ctx, &options), MEMFMT_STATUS_OK);
    EXPECT_EQ(options.allow_bf16, MEMFMT_SWITCH_ON);
  }
  expectEnvironmentRefused("MEMFMT_ALLOW_BF16", "maybe");
}

} // namespace
