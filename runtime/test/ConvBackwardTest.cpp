//===- ConvBackwardTest.cpp - convolution_backward against naive loops ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Runs memfmt_convolution_backward_f32 on the reference and the fast
// kernels and compares grad_input, grad_weight and grad_bias with a naive
// loop written here from the forward convolution's definition (every
// product grad_output * weight goes to grad_input, every grad_output *
// input to grad_weight). The shapes cover what PyTorch's conv2d allows (one
// image, one channel, one pixel, odd sizes, stride 2, dilation 2, asymmetric
// padding, groups, depthwise, 1x1, the 7x7 stem, ResNet-50-like layers) with
// activations and weights NCHW/OIHW, channels-last/OHWI, channels-last
// slices and general strided views, and each has_* flag off in turn: an
// absent gradient is passed as its own buffer holding a sentinel, which must
// come back untouched. In the fast mode dense activations must go to oneDNN
// when the build has it, and a second call of a node must build nothing.
// The validator's messages for bad shapes, groups and aliasing are checked
// at the end.
//
//===----------------------------------------------------------------------===//

#include "Gradients.h"

using namespace memfmt::test;

namespace {

struct ConvBackwardCase {
  const char *name;
  int64_t n, c, h, w, o, kh, kw;
  ConvAttrs attrs;
};

/// gtest prints a case by its name.
void PrintTo(const ConvBackwardCase &c, std::ostream *os) { *os << c.name; }

// attrs: stride h, w; pad top, left, bottom, right; dilation h, w; groups.
const ConvBackwardCase kCases[] = {
    {"Basic3x3", 2, 4, 6, 6, 8, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"OddSizesAsymmetricPadding",
     3,
     5,
     7,
     9,
     4,
     3,
     2,
     {2, 1, 1, 0, 2, 1, 1, 1, 1}},
    {"Stride2", 2, 6, 9, 8, 5, 3, 3, {2, 2, 1, 1, 1, 1, 1, 1, 1}},
    {"Dilation2", 2, 3, 11, 13, 4, 3, 3, {1, 2, 2, 1, 2, 1, 2, 2, 1}},
    {"Groups", 2, 4, 5, 5, 6, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 2}},
    {"Depthwise", 2, 8, 7, 7, 8, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 8}},
    {"DepthwiseStride2", 1, 16, 9, 9, 16, 3, 3, {2, 2, 1, 1, 1, 1, 1, 1, 16}},
    {"Pointwise", 2, 16, 5, 7, 12, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 1}},
    {"PointwiseStride2", 2, 16, 8, 8, 12, 1, 1, {2, 2, 0, 0, 0, 0, 1, 1, 1}},
    {"Stem7x7", 1, 3, 17, 15, 8, 7, 7, {2, 2, 3, 3, 3, 3, 1, 1, 1}},
    {"OnePixel", 1, 1, 1, 1, 1, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 1}},
    {"OnePixelPadded", 2, 32, 1, 1, 16, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"SingleChannel", 1, 1, 5, 6, 3, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"StrideSkipsInput", 1, 2, 7, 7, 3, 2, 2, {3, 3, 0, 0, 0, 0, 1, 1, 1}},
    {"ResNetBottleneck3x3", 2, 64, 7, 7, 64, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"ResNetReduce1x1", 2, 256, 5, 5, 64, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 1}},
};

struct Layouts {
  Layout gradOutput, input, weight, gradInput, gradWeight, gradBias;
};

using namespace memfmt::test::layout_names;

const Layouts kLayouts[] = {
    {C, C, C, C, C, C},        // NCHW activations, OIHW weights.
    {CL, CL, CL, CL, CL, C},   // Channels-last activations, OHWI weights.
    {CL, CL, C, CL, C, C},     // Channels-last activations, OIHW weights.
    {C, C, CL, C, CL, C},      // NCHW activations, OHWI weights.
    {CL, C, CL, CL, C, S},     // Mixed formats, strided bias.
    {S, S, S, S, S, S},        // Strided views everywhere.
    {CLS, CLS, CL, CLS, S, C}, // Channels-last slices.
};

class ConvBackwardTest : public ::testing::TestWithParam<
                             std::tuple<ConvBackwardCase, memfmt_kernels_t>> {};

TEST_P(ConvBackwardTest, MatchesNaiveInEveryLayoutAndFlagSet) {
  const auto &[cs, kernels] = GetParam();
  const ConvAttrs &a = cs.attrs;
  TestContext ctx(kernels);
  const bool reference = kernels == MEMFMT_KERNELS_REFERENCE;
  int64_t oh =
      convOutSize(cs.h, cs.kh, a.strideH, a.padTop, a.padBottom, a.dilationH);
  int64_t ow =
      convOutSize(cs.w, cs.kw, a.strideW, a.padLeft, a.padRight, a.dilationW);
  int64_t node = 0;
  for (const Layouts &l : kLayouts) {
    Tensor dy({cs.n, cs.o, oh, ow}, l.gradOutput);
    Tensor in({cs.n, cs.c, cs.h, cs.w}, l.input);
    Tensor w({cs.o, cs.c / a.groups, cs.kh, cs.kw}, l.weight);
    dy.fillRandom(1);
    in.fillRandom(2);
    w.fillRandom(3);
    Gradients want = naiveGradients(dy, in, w, a);
    for (const int64_t *flags : kGradientFlagSets) {
      Tensor dx({cs.n, cs.c, cs.h, cs.w}, l.gradInput);
      Tensor dw({cs.o, cs.c / a.groups, cs.kh, cs.kw}, l.gradWeight);
      Tensor db({cs.o}, l.gradBias);
      std::string what = std::string(cs.name) + " grad_output " +
                         dy.describe() + " input " + in.describe() +
                         " weight " + w.describe() + " grad_input " +
                         dx.describe() + " grad_weight " + dw.describe() +
                         " flags " + std::to_string(flags[0]) +
                         std::to_string(flags[1]) + std::to_string(flags[2]);
      ASSERT_EQ(_mlir_ciface_memfmt_convolution_backward_f32(
                    ctx, node, dy.memref(), in.memref(), w.memref(),
                    dx.memref(), dw.memref(), db.memref(), a.strideH, a.strideW,
                    a.padTop, a.padLeft, a.padBottom, a.padRight, a.dilationH,
                    a.dilationW, a.groups, flags[0], flags[1], flags[2]),
                MEMFMT_STATUS_OK)
          << what << ": " << ctx.lastError();
      // A grad_input element sums up to (O / groups) * KH * KW terms; a
      // grad_weight or grad_bias element N * OH * OW.
      int64_t inputTerms = (cs.o / a.groups) * cs.kh * cs.kw;
      int64_t weightTerms = cs.n * oh * ow;
      auto factor = [&](int64_t terms) {
        return reference ? kReferenceFactor : floatSumFactor(terms);
      };
      std::string impl = ctx.implOf(node);
      expectGradients(dx, dw, db, flags, want, factor(inputTerms),
                      factor(weightTerms), what + " (" + impl + ")");
      if (reference) {
        EXPECT_EQ(impl, "reference") << what;
      } else if (memfmt_runtime_has_onednn() &&
                 (l.gradOutput == C || l.gradOutput == CL)) {
        EXPECT_EQ(impl.rfind("onednn", 0), 0u) << what << ": ran " << impl;
      }
      ++node;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvBackwardTest,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(MEMFMT_KERNELS_REFERENCE,
                                         MEMFMT_KERNELS_FAST)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) +
             toString(std::get<1>(info.param));
    });

/// One call of a small channels-last convolution's gradients on `node`.
struct SmallCall {
  Tensor dy{{2, 8, 6, 6}, CL}, in{{2, 4, 6, 6}, CL}, w{{8, 4, 3, 3}, CL};
  Tensor dx{{2, 4, 6, 6}, CL}, dw{{8, 4, 3, 3}, CL}, db{{8}};
  int64_t groups = 1;

  SmallCall() {
    dy.fillRandom(4);
    in.fillRandom(5);
    w.fillRandom(6);
  }
  int32_t run(memfmt_context_t *ctx, int64_t node,
              const memfmt_memref_t *gradInput,
              const memfmt_memref_t *gradWeight,
              const memfmt_memref_t *gradBias, int64_t hasGradBias = 1) const {
    return _mlir_ciface_memfmt_convolution_backward_f32(
        ctx, node, dy.memref(), in.memref(), w.memref(), gradInput, gradWeight,
        gradBias, 1, 1, 1, 1, 1, 1, 1, 1, groups, 1, 1, hasGradBias);
  }
};

/// A second call of a node with the same key creates nothing; an absent
/// gradient may be another output passed in its place (as the lowering
/// does), and the result is the same.
TEST(ConvBackwardCacheTest, SecondCallBuildsNothing) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  SmallCall call;
  ConvAttrs attrs{1, 1, 1, 1, 1, 1, 1, 1, 1};
  Gradients want = naiveGradients(call.dy, call.in, call.w, attrs);
  memfmt_context_counters_t before, after;
  for (int round = 0; round < 3; ++round) {
    EXPECT_KERNEL_OK(ctx, call.run(ctx, 9, call.dx.memref(), call.dw.memref(),
                                   call.dx.memref(), /*hasGradBias=*/0));
    if (round == 0)
      memfmt_context_get_counters(ctx, &before);
  }
  memfmt_context_get_counters(ctx, &after);
  EXPECT_EQ(after.primitives_built, before.primitives_built);
  // The weights may be packed for the backward-data primitive, once a call
  // (they change every step).
  EXPECT_LE(after.weight_packs, before.weight_packs + 2);
  if (memfmt_runtime_has_onednn())
    EXPECT_GT(after.library_calls, before.library_calls);
  expectClose(call.dx, want.input, floatSumFactor(8 * 9), "grad_input");
  expectClose(call.dw, want.weight, floatSumFactor(2 * 36), "grad_weight");
}

/// 3x3 convolutions with unit stride and dilation, one group and at least
/// 1024 output positions may run Winograd's F(4x4, 3x3) (the context's
/// winograd option, as for the forward): ResNet-sized channels, an odd
/// plane, no padding, and asymmetric paddings (which oneDNN 2.6's Winograd
/// backward-data gets wrong, so they must run the direct algorithm), with
/// enough images to pass the positions rule, and one case below it. Its
/// rounding differs from direct summation's; the test holds it to the same
/// worst-case bound (floatSumFactor). With the option off it must not run.
TEST(ConvBackwardWinogradTest, MatchesNaiveAndCanBeTurnedOff) {
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  struct Case {
    int64_t n, c, h, w, o, padTop, padLeft, padBottom, padRight;
  };
  const Case cases[] = {
      {6, 64, 14, 14, 64, 1, 1, 1, 1}, {9, 16, 9, 13, 48, 1, 1, 1, 1},
      {52, 16, 6, 7, 16, 0, 0, 0, 0},  {9, 16, 9, 13, 48, 1, 0, 0, 1},
      {26, 16, 5, 8, 32, 0, 1, 1, 0},  {29, 16, 6, 6, 16, 2, 2, 0, 0},
      {2, 64, 14, 14, 64, 1, 1, 1, 1}};
  for (memfmt_switch_t option : {MEMFMT_SWITCH_ON, MEMFMT_SWITCH_OFF}) {
    memfmt_context_options_t options =
        TestContext::optionsFor(MEMFMT_KERNELS_FAST);
    options.winograd = option;
    TestContext ctx(options);
    int64_t node = 0, winogradRuns = 0;
    for (const Case &cs : cases) {
      ConvAttrs a{1,           1, cs.padTop, cs.padLeft, cs.padBottom,
                  cs.padRight, 1, 1,         1};
      int64_t oh = convOutSize(cs.h, 3, 1, cs.padTop, cs.padBottom, 1);
      int64_t ow = convOutSize(cs.w, 3, 1, cs.padLeft, cs.padRight, 1);
      for (Layout layout : {CL, C}) {
        Tensor dy({cs.n, cs.o, oh, ow}, layout),
            in({cs.n, cs.c, cs.h, cs.w}, layout);
        Tensor w({cs.o, cs.c, 3, 3}, layout);
        Tensor dx({cs.n, cs.c, cs.h, cs.w}, layout),
            dw({cs.o, cs.c, 3, 3}, layout), db({cs.o});
        dy.fillRandom(31);
        in.fillRandom(32);
        w.fillRandom(33);
        ASSERT_EQ(_mlir_ciface_memfmt_convolution_backward_f32(
                      ctx, node, dy.memref(), in.memref(), w.memref(),
                      dx.memref(), dw.memref(), db.memref(), 1, 1, cs.padTop,
                      cs.padLeft, cs.padBottom, cs.padRight, 1, 1, 1, 1, 1, 1),
                  MEMFMT_STATUS_OK)
            << ctx.lastError();
        std::string impl = ctx.implOf(node);
        winogradRuns += impl == "onednn_winograd";
        if (option == MEMFMT_SWITCH_OFF || cs.n * oh * ow < 1024)
          EXPECT_NE(impl, "onednn_winograd") << dy.describe();
        const int64_t flags[3] = {1, 1, 1};
        expectGradients(dx, dw, db, flags, naiveGradients(dy, in, w, a),
                        floatSumFactor(cs.o * 9),
                        floatSumFactor(cs.n * oh * ow),
                        "Winograd case " + std::to_string(node) + " " +
                            dy.describe() + " (" + impl + ")");
        ++node;
      }
    }
#if defined(__x86_64__) && defined(__GNUC__)
    // oneDNN 2.6 has Winograd kernels for AVX-512 (avx512_core).
    if (option == MEMFMT_SWITCH_ON && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
      EXPECT_GT(winogradRuns, 0) << "no case ran Winograd on an AVX-512 CPU";
#endif
  }
}

/// Pointwise convolutions whose activations are [positions, channels]
/// matrices (channels-last, or NCHW of one pixel) run as matmuls on the
/// tensors as they lie: no weight is packed, a second call builds nothing,
/// and the gradients match the naive loops. NCHW with several pixels is not
/// a matrix of positions and takes the convolution primitives.
TEST(ConvBackwardPointwiseTest, MatricesRunAsMatmulsWithoutPacking) {
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  struct Case {
    std::vector<int64_t> input;
    int64_t outChannels;
    Layout layout;
    bool matmul;
  };
  const Case cases[] = {{{2, 16, 5, 7}, 12, CL, true},
                        {{1, 1, 3, 3}, 1, CL, true},
                        {{3, 16, 1, 1}, 24, C, true},
                        {{2, 16, 5, 7}, 12, C, false}};
  ConvAttrs attrs{1, 1, 0, 0, 0, 0, 1, 1, 1};
  int64_t node = 0;
  for (const Case &c : cases) {
    TestContext ctx(MEMFMT_KERNELS_FAST);
    const int64_t n = c.input[0], ch = c.input[1], h = c.input[2],
                  w = c.input[3], o = c.outChannels;
    Tensor dy({n, o, h, w}, c.layout), in(c.input, c.layout),
        wt({o, ch, 1, 1}, CL), dx(c.input, c.layout), dw({o, ch, 1, 1}, C),
        db({o});
    dy.fillRandom(11);
    in.fillRandom(12);
    wt.fillRandom(13);
    Gradients want = naiveGradients(dy, in, wt, attrs);
    std::string what = "input " + in.describe();
    memfmt_context_counters_t before, after;
    for (int round = 0; round < 2; ++round) {
      EXPECT_KERNEL_OK(ctx,
                       _mlir_ciface_memfmt_convolution_backward_f32(
                           ctx, node, dy.memref(), in.memref(), wt.memref(),
                           dx.memref(), dw.memref(), db.memref(), 1, 1, 0, 0, 0,
                           0, 1, 1, 1, 1, 1, 1));
      if (round == 0)
        memfmt_context_get_counters(ctx, &before);
    }
    memfmt_context_get_counters(ctx, &after);
    std::string impl = ctx.implOf(node);
    ++node;
    if (!c.matmul) {
      EXPECT_NE(impl, "onednn_matmul") << what;
      continue;
    }
    EXPECT_EQ(impl, "onednn_matmul") << what;
    EXPECT_EQ(after.weight_packs, 0) << what;
    EXPECT_EQ(after.primitives_built, before.primitives_built) << what;
    const int64_t flags[3] = {1, 1, 1};
    expectGradients(dx, dw, db, flags, want, floatSumFactor(o),
                    floatSumFactor(n * h * w), what);
  }
}

/// With no images the weight and bias gradients are sums of nothing: zeros,
/// which both modes must write (the buffers start as sentinels).
TEST(ConvBackwardEmptyTest, NoImagesGiveZeroWeightGradients) {
  for (memfmt_kernels_t kernels :
       {MEMFMT_KERNELS_REFERENCE, MEMFMT_KERNELS_FAST}) {
    TestContext ctx(kernels);
    Tensor dy({0, 8, 6, 6}, CL), in({0, 4, 6, 6}, CL), w({8, 4, 3, 3}, CL);
    Tensor dx({0, 4, 6, 6}, CL), dw({8, 4, 3, 3}, CL), db({8});
    w.fillRandom(7);
    ASSERT_EQ(_mlir_ciface_memfmt_convolution_backward_f32(
                  ctx, 0, dy.memref(), in.memref(), w.memref(), dx.memref(),
                  dw.memref(), db.memref(), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
              MEMFMT_STATUS_OK)
        << ctx.lastError();
    for (int64_t i = 0; i < dw.numElements(); ++i)
      ASSERT_EQ(dw.flat(i), 0.0f) << toString(kernels) << " grad_weight " << i;
    for (int64_t i = 0; i < db.numElements(); ++i)
      ASSERT_EQ(db.flat(i), 0.0f) << toString(kernels) << " grad_bias " << i;
  }
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

/// The validator's error for `status`.
void expectInvalid(const TestContext &ctx, int32_t status,
                   const std::string &text) {
  memfmt::test::expectInvalid(ctx, status, "memfmt_convolution_backward_f32",
                              text);
}

TEST(ConvBackwardValidationTest, WrongGradientShapes) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  SmallCall call;
  Tensor badWeight({8, 4, 3, 2}, CL), badInput({2, 4, 6, 5}, CL), badBias({4});
  expectInvalid(
      ctx,
      call.run(ctx, 0, call.dx.memref(), badWeight.memref(), call.db.memref()),
      "grad_weight has shape [8, 4, 3, 2], expected [8, 4, 3, 3] "
      "(the weight's shape)");
  expectInvalid(
      ctx,
      call.run(ctx, 0, badInput.memref(), call.dw.memref(), call.db.memref()),
      "grad_input has shape [2, 4, 6, 5], expected [2, 4, 6, 6]");
  expectInvalid(
      ctx,
      call.run(ctx, 0, call.dx.memref(), call.dw.memref(), badBias.memref()),
      "grad_bias has shape [4], expected [8] (one per output "
      "channel)");
  // grad_output must be the forward's output shape.
  SmallCall wrongOutput;
  wrongOutput.dy = Tensor({2, 8, 5, 6}, CL);
  expectInvalid(ctx,
                wrongOutput.run(ctx, 0, call.dx.memref(), call.dw.memref(),
                                call.db.memref()),
                "grad_output has shape [2, 8, 5, 6], expected [2, 8, 6, 6]");
}

TEST(ConvBackwardValidationTest, GroupsMustDivideChannels) {
  TestContext ctx(MEMFMT_KERNELS_REFERENCE);
  SmallCall call;
  call.groups = 3;
  expectInvalid(
      ctx,
      call.run(ctx, 0, call.dx.memref(), call.dw.memref(), call.db.memref()),
      "groups is 3, which must divide the input channels (4)");
}

TEST(ConvBackwardValidationTest, GradientsMustNotAlias) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  SmallCall call;
  // grad_input written over the input it is computed from.
  expectInvalid(
      ctx,
      call.run(ctx, 0, call.in.memref(), call.dw.memref(), call.db.memref()),
      "grad_input is the same buffer as input; this kernel cannot "
      "run in place");
  // Two present gradients starting at one address: grad_bias as a
  // [8] view of grad_input's buffer.
  float *start = call.dx.buffer.data() + call.dx.offset;
  int64_t descriptor[5] = {0, 0, 0, 8, 1};
  std::memcpy(&descriptor[0], &start, sizeof start);
  std::memcpy(&descriptor[1], &start, sizeof start);
  memfmt_memref_t biasInGradInput{1, descriptor};
  expectInvalid(
      ctx,
      call.run(ctx, 0, call.dx.memref(), call.dw.memref(), &biasInGradInput),
      "grad_bias is the same buffer as grad_input");
  // A flag that is no flag.
  expectInvalid(ctx,
                _mlir_ciface_memfmt_convolution_backward_f32(
                    ctx, 0, call.dy.memref(), call.in.memref(), call.w.memref(),
                    call.dx.memref(), call.dw.memref(), call.db.memref(), 1, 1,
                    1, 1, 1, 1, 1, 1, 1, 1, 2, 1),
                "has_grad_weight is 2, expected 0 or 1");
}

} // namespace
