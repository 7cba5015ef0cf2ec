//===- ConvTest.cpp - conv2d against a naive convolution ------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Runs memfmt_conv2d_f32 on the reference and the fast kernels for shapes
// that cover PyTorch's conv2d (odd sizes, asymmetric padding, stride,
// dilation, groups, depthwise, 1x1, the 7x7 stem, one-pixel tensors) and the
// fused bias/residual/relu epilogue, with input, weight, bias, residual and
// output each laid out NCHW, channels-last, as a channels-last slice or as a
// general strided view, and compares with naiveConv. In the fast mode a
// dense (NCHW or NHWC) output must go to oneDNN when the build has it.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

using namespace memfmt::test;

namespace {

struct ConvCase {
  const char *name;
  int64_t n, c, h, w, o, kh, kw;
  ConvAttrs attrs;
};

/// gtest prints a case by its name.
void PrintTo(const ConvCase &c, std::ostream *os) { *os << c.name; }

// attrs: stride h, w; pad top, left, bottom, right; dilation h, w; groups;
// bias, residual, relu.
const ConvCase kConvCases[] = {
    // Output rows whose window sees only padding, with bias + residual +
    // relu: oneDNN 2.6 drops the bias there under a sum post-op, so the
    // fast path adds the residual itself (found by the random graphs).
    {"PaddingOnlyWindowsWithResidual",
     1,
     1,
     1,
     5,
     3,
     2,
     3,
     {1, 2, 2, 1, 2, 1, 1, 2, 1, true, true, true}},
    {"Basic3x3",
     2,
     4,
     6,
     6,
     8,
     3,
     3,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false}},
    {"OddSizesAsymmetricPadding",
     3,
     5,
     7,
     9,
     4,
     3,
     2,
     {2, 1, 1, 0, 2, 1, 1, 1, 1, true, false, false}},
    {"Dilation",
     2,
     3,
     11,
     13,
     4,
     3,
     3,
     {2, 2, 2, 1, 2, 1, 2, 3, 1, false, false, true}},
    {"Groups",
     2,
     4,
     5,
     5,
     6,
     3,
     3,
     {1, 1, 1, 1, 1, 1, 1, 1, 2, true, true, true}},
    {"Depthwise",
     2,
     8,
     7,
     7,
     8,
     3,
     3,
     {1, 1, 1, 1, 1, 1, 1, 1, 8, true, false, true}},
    {"DepthwiseMultiplier",
     1,
     4,
     6,
     5,
     8,
     3,
     3,
     {2, 2, 1, 1, 1, 1, 1, 1, 4, false, true, false}},
    {"PointwiseStride2",
     2,
     16,
     8,
     8,
     12,
     1,
     1,
     {2, 2, 0, 0, 0, 0, 1, 1, 1, true, true, true}},
    {"Stem7x7",
     1,
     3,
     17,
     15,
     8,
     7,
     7,
     {2, 2, 3, 3, 3, 3, 1, 1, 1, false, false, true}},
    {"AllOnes",
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     {1, 1, 0, 0, 0, 0, 1, 1, 1, false, false, false}},
    {"SingleInputChannel",
     2,
     1,
     5,
     6,
     3,
     3,
     3,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false}},
    {"OnePixelOutput",
     2,
     32,
     3,
     3,
     16,
     3,
     3,
     {1, 1, 0, 0, 0, 0, 1, 1, 1, true, true, true}},
    {"PaddingOnlyBottomRight",
     1,
     2,
     4,
     4,
     3,
     2,
     2,
     {3, 3, 0, 0, 3, 3, 1, 1, 1, false, false, false}},
};

struct ConvLayouts {
  Layout input, weight, bias, residual, output;
};

using namespace memfmt::test::layout_names;

const ConvLayouts kConvLayouts[] = {
    {C, C, C, C, C},    {CL, CL, C, CL, CL}, {CL, C, S, CL, CL},
    {C, CL, C, C, CL}, // The stem: NCHW image, channels-last weight.
    {CL, CL, C, C, C},  {S, S, S, S, S},     {CLS, C, C, S, CLS},
    {S, CL, C, CL, CL}, {C, C, C, CL, S},    {CL, S, S, CLS, CL},
};

class ConvTest
    : public ::testing::TestWithParam<std::tuple<ConvCase, memfmt_kernels_t>> {
};

TEST_P(ConvTest, MatchesNaiveInEveryLayout) {
  const auto &[cs, kernels] = GetParam();
  const ConvAttrs &a = cs.attrs;
  TestContext ctx(kernels);
  int64_t oh =
      convOutSize(cs.h, cs.kh, a.strideH, a.padTop, a.padBottom, a.dilationH);
  int64_t ow =
      convOutSize(cs.w, cs.kw, a.strideW, a.padLeft, a.padRight, a.dilationW);
  int64_t node = 0;
  for (const ConvLayouts &l : kConvLayouts) {
    Tensor in({cs.n, cs.c, cs.h, cs.w}, l.input);
    Tensor w({cs.o, cs.c / a.groups, cs.kh, cs.kw}, l.weight);
    Tensor b({cs.o}, l.bias);
    Tensor res({cs.n, cs.o, oh, ow}, l.residual);
    Tensor out({cs.n, cs.o, oh, ow}, l.output);
    in.fillRandom(1);
    w.fillRandom(2);
    b.fillRandom(3);
    res.fillRandom(4);
    std::string what = std::string(cs.name) + " input " + in.describe() +
                       " weight " + w.describe() + " output " + out.describe();
    Expected want =
        naiveConv(in, w, a.bias ? &b : nullptr, a.residual ? &res : nullptr, a);
    EXPECT_KERNEL_OK(ctx,
                     _mlir_ciface_memfmt_conv2d_f32(
                         ctx, node, in.memref(), w.memref(),
                         a.bias ? b.memref() : out.memref(),
                         a.residual ? res.memref() : out.memref(), out.memref(),
                         a.strideH, a.strideW, a.padTop, a.padLeft, a.padBottom,
                         a.padRight, a.dilationH, a.dilationW, a.groups, a.bias,
                         a.residual, a.relu, 0, 0.0, 0.0))
        << what;
    bool reference = kernels == MEMFMT_KERNELS_REFERENCE;
    int64_t terms = (cs.c / a.groups) * cs.kh * cs.kw;
    expectClose(out, want, reference ? kReferenceFactor : floatSumFactor(terms),
                what);
    std::string impl = ctx.implOf(node);
    if (reference) {
      EXPECT_EQ(impl, "reference") << what;
    } else if (memfmt_runtime_has_onednn() &&
               (l.output == C || l.output == CL)) {
      EXPECT_EQ(impl.rfind("onednn", 0), 0u) << what << ": ran " << impl;
    }
    ++node;
  }
}

/// The residual may be the output itself (the compiler reuses the buffer).
TEST_P(ConvTest, ResidualInPlace) {
  const auto &[cs, kernels] = GetParam();
  const ConvAttrs &a = cs.attrs;
  TestContext ctx(kernels);
  int64_t oh =
      convOutSize(cs.h, cs.kh, a.strideH, a.padTop, a.padBottom, a.dilationH);
  int64_t ow =
      convOutSize(cs.w, cs.kw, a.strideW, a.padLeft, a.padRight, a.dilationW);
  for (Layout layout : {C, CL, S}) {
    Tensor in({cs.n, cs.c, cs.h, cs.w}, layout);
    Tensor w({cs.o, cs.c / a.groups, cs.kh, cs.kw}, layout);
    Tensor b({cs.o});
    Tensor out({cs.n, cs.o, oh, ow}, layout);
    in.fillRandom(5);
    w.fillRandom(6);
    b.fillRandom(7);
    out.fillRandom(8);
    Tensor residual = out;
    ConvAttrs withResidual = a;
    withResidual.residual = true;
    Expected want =
        naiveConv(in, w, a.bias ? &b : nullptr, &residual, withResidual);
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_conv2d_f32(
                              ctx, 0, in.memref(), w.memref(),
                              a.bias ? b.memref() : out.memref(), out.memref(),
                              out.memref(), a.strideH, a.strideW, a.padTop,
                              a.padLeft, a.padBottom, a.padRight, a.dilationH,
                              a.dilationW, a.groups, a.bias, 1, a.relu, 0, 0.0, 0.0));
    int64_t terms = (cs.c / a.groups) * cs.kh * cs.kw;
    expectClose(out, want,
                kernels == MEMFMT_KERNELS_REFERENCE ? kReferenceFactor
                                                    : floatSumFactor(terms),
                std::string(cs.name) + " in-place residual " + out.describe());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvTest,
    ::testing::Combine(::testing::ValuesIn(kConvCases),
                       ::testing::Values(MEMFMT_KERNELS_REFERENCE,
                                         MEMFMT_KERNELS_FAST)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) +
             toString(std::get<1>(info.param));
    });

/// A node called again with the same shapes reuses its primitive; a call
/// with other shapes, or other weights, on the same node must still be
/// right.
TEST(ConvCacheTest, NodeReusedWithOtherShapesAndWeights) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  ConvAttrs a{1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, true};
  for (int round = 0; round < 3; ++round) {
    int64_t h = round == 1 ? 7 : 5;
    Tensor in({2, 3, h, h}, CL), w({4, 3, 3, 3}, CL), b({4});
    Tensor out({2, 4, h, h}, CL);
    in.fillRandom(10 + round);
    w.fillRandom(20 + round);
    b.fillRandom(30 + round);
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_conv2d_f32(
                              ctx, 7, in.memref(), w.memref(), b.memref(),
                              out.memref(), out.memref(), 1, 1, 1, 1, 1, 1, 1,
                              1, 1, 1, 0, 1, 0, 0.0, 0.0));
    expectClose(out, naiveConv(in, w, &b, nullptr, a), floatSumFactor(27),
                "round " + std::to_string(round));
  }
}

/// Weights are packed once only where the context was told they are
/// constant. Weights elsewhere (a model input) may change between calls at
/// the same address: each call packs them again and sees the new values.
TEST(ConvCacheTest, ConstantWeightsPackedOnceOthersEveryCall) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  ConvAttrs a{1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false};
  Tensor in({1, 3, 6, 6}, CL), w({4, 3, 3, 3}, CL), b({4});
  Tensor out({1, 4, 6, 6}, CL);
  in.fillRandom(1);
  b.fillRandom(2);
  auto run = [&] {
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_conv2d_f32(
                              ctx, 3, in.memref(), w.memref(), b.memref(),
                              out.memref(), out.memref(), 1, 1, 1, 1, 1, 1, 1,
                              1, 1, 1, 0, 0, 0, 0.0, 0.0));
  };
  auto packs = [&] {
    memfmt_context_counters_t counters;
    EXPECT_EQ(memfmt_context_get_counters(ctx, &counters), MEMFMT_STATUS_OK);
    return counters.weight_packs;
  };
  // Not declared: new values at the same address are used, every call packs.
  for (uint64_t seed : {3, 4}) {
    w.fillRandom(seed);
    int64_t before = packs();
    run();
    EXPECT_EQ(packs(), before + 1);
    expectClose(out, naiveConv(in, w, &b, nullptr, a), floatSumFactor(27),
                "undeclared weights, seed " + std::to_string(seed));
  }
  // Declared constant: packed once, then reused.
  ASSERT_EQ(memfmt_context_declare_constant(
                ctx, w.buffer.data(),
                static_cast<int64_t>(w.buffer.size() * sizeof(float))),
            MEMFMT_STATUS_OK);
  w.fillRandom(5);
  int64_t before = packs();
  run();
  run();
  EXPECT_EQ(packs(), before + 1);
  expectClose(out, naiveConv(in, w, &b, nullptr, a), floatSumFactor(27),
              "constant weights");
  // Forgetting the range drops the packed weights with it.
  EXPECT_EQ(memfmt_context_forget_constant(ctx, w.buffer.data()),
            MEMFMT_STATUS_OK);
  EXPECT_EQ(memfmt_context_forget_constant(ctx, w.buffer.data()),
            MEMFMT_STATUS_NOT_FOUND);
  w.fillRandom(6);
  run();
  expectClose(out, naiveConv(in, w, &b, nullptr, a), floatSumFactor(27),
              "after forgetting");
}

/// NCHW convolutions run in the layouts oneDNN prefers, through reorders
/// (its plain-NCHW kernels are GEMM-based and 2-3x slower), with and without
/// an in-place residual; odd sizes.
TEST(ConvPreferredLayoutTest, NchwRunsInOneDnnsLayout) {
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  TestContext ctx(MEMFMT_KERNELS_FAST);
  for (int64_t residual : {0, 1}) {
    ConvAttrs a;
    a.bias = true;
    a.residual = residual != 0;
    a.relu = true;
    Tensor in({2, 24, 7, 9}, C), w({40, 24, 1, 1}, C), b({40});
    Tensor out({2, 40, 7, 9}, C);
    in.fillRandom(21);
    w.fillRandom(22);
    b.fillRandom(23);
    out.fillRandom(24);
    Tensor saved = out;
    Expected want = naiveConv(in, w, &b, residual ? &saved : nullptr, a);
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_conv2d_f32(
                              ctx, residual, in.memref(), w.memref(),
                              b.memref(), out.memref(), out.memref(), 1, 1, 0,
                              0, 0, 0, 1, 1, 1, 1, residual, 1, 0, 0.0, 0.0));
    std::string what = std::string("NCHW 1x1") +
                       (residual ? " with an in-place residual" : "");
    expectClose(out, want, floatSumFactor(24), what);
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
      EXPECT_EQ(ctx.implOf(residual), "onednn_preferred_layout") << what;
#endif
  }
}

/// Where a case's residual is: none, a buffer of its own, or the output
/// itself (the compiler's in-place residual).
enum class Residual { None, Separate, InPlace };

/// Declares a tensor's buffer constant while in scope, as the model loader
/// declares a model's weights.
struct ConstantScope {
  ConstantScope(memfmt_context_t *ctx, const Tensor &t) : ctx(ctx), t(t) {
    memfmt_context_declare_constant(
        ctx, t.buffer.data(),
        static_cast<int64_t>(t.buffer.size() * sizeof(float)));
  }
  ~ConstantScope() { memfmt_context_forget_constant(ctx, t.buffer.data()); }
  memfmt_context_t *ctx;
  const Tensor &t;
};

/// On a CPU where oneDNN's best instruction set is AVX2, channels-last
/// convolutions with a spatial window and constant weights (an inference
/// model's) run in oneDNN's blocked layout too (faster there, reorders
/// included); 1x1 and grouped ones, those whose weights may change (a
/// training step's), and every convolution on other CPUs stay on NHWC.
/// Values as the naive convolution's either way: odd sizes, stride 2, and
/// a residual that is a buffer of its own or the output itself.
TEST(ConvPreferredLayoutTest, ChannelsLastSpatialBlockedOnAvx2) {
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  TestContext ctx(MEMFMT_KERNELS_FAST);
  const bool avx2 =
      std::string(memfmt_context_device_description(ctx)).find(" on avx2") !=
      std::string::npos;
  struct Case {
    const char *name;
    int64_t kernel, stride, groups;
    Residual residual;
    bool constantWeights = true;
  };
  const Case cases[] = {
      {"3x3", 3, 1, 1, Residual::None},
      {"3x3 stride 2", 3, 2, 1, Residual::None},
      {"3x3 residual", 3, 1, 1, Residual::Separate},
      {"3x3 in-place residual", 3, 1, 1, Residual::InPlace},
      {"1x1", 1, 1, 1, Residual::None},
      {"3x3 grouped", 3, 1, 4, Residual::None},
      {"3x3 with weights that may change", 3, 1, 1, Residual::None, false},
  };
  int64_t node = 0;
  for (const Case &cs : cases) {
    ConvAttrs a;
    a.strideH = a.strideW = cs.stride;
    a.padTop = a.padLeft = a.padBottom = a.padRight = cs.kernel / 2;
    a.groups = cs.groups;
    a.bias = true;
    a.residual = cs.residual != Residual::None;
    a.relu = true;
    const int64_t oh = (9 + 2 * a.padTop - cs.kernel) / cs.stride + 1;
    const int64_t ow = (11 + 2 * a.padLeft - cs.kernel) / cs.stride + 1;
    Tensor in({2, 16, 9, 11}, CL),
        w({24, 16 / cs.groups, cs.kernel, cs.kernel}, C), b({24}),
        out({2, 24, oh, ow}, CL), res({2, 24, oh, ow}, CL);
    in.fillRandom(31);
    w.fillRandom(32);
    b.fillRandom(33);
    out.fillRandom(34);
    res.fillRandom(35);
    Tensor &residual = cs.residual == Residual::InPlace ? out : res;
    Tensor saved = residual;
    Expected want = naiveConv(in, w, &b, a.residual ? &saved : nullptr, a);
    std::optional<ConstantScope> constant;
    if (cs.constantWeights)
      constant.emplace(ctx, w);
    EXPECT_KERNEL_OK(ctx,
                     _mlir_ciface_memfmt_conv2d_f32(
                         ctx, node, in.memref(), w.memref(), b.memref(),
                         residual.memref(), out.memref(), a.strideH, a.strideW,
                         a.padTop, a.padLeft, a.padBottom, a.padRight, 1, 1,
                         a.groups, 1, a.residual, 1, 0, 0.0, 0.0));
    const std::string what = std::string("channels-last ") + cs.name;
    expectClose(out, want,
                floatSumFactor((16 / cs.groups) * cs.kernel * cs.kernel), what);
    const bool blocked =
        avx2 && cs.kernel > 1 && cs.groups == 1 && cs.constantWeights;
    EXPECT_EQ(ctx.implOf(node), blocked ? "onednn_preferred_layout" : "onednn")
        << what;
    ++node;
  }
}

//===----------------------------------------------------------------------===//
// Winograd
//===----------------------------------------------------------------------===//

struct WinogradCase {
  const char *name;
  int64_t n, c, h, w, o;
  int64_t padTop, padLeft, padBottom, padRight;
  bool bias, relu;
  Residual residual = Residual::None;
};

/// 3x3 convolutions with unit stride and dilation and one group, the
/// convolutions Winograd may compute: ResNet-like, odd, one-pixel and
/// unpadded planes, asymmetric padding, few channels (which oneDNN pads to
/// its vector width), and the residual sums of ResNet-18/34's basic blocks
/// (summed in oneDNN's blocked layout).
const WinogradCase kWinogradCases[] = {
    {"ResNetLike", 2, 32, 14, 14, 32, 1, 1, 1, 1, true, true},
    {"OddPlaneWideOutput", 1, 16, 9, 13, 48, 1, 1, 1, 1, true, false},
    {"Unpadded", 3, 16, 6, 7, 16, 0, 0, 0, 0, false, true},
    {"OnePixel", 2, 64, 1, 1, 16, 1, 1, 1, 1, true, true},
    {"AsymmetricPadding", 1, 16, 5, 8, 32, 1, 0, 0, 1, false, false},
    {"ThreeChannels", 2, 3, 8, 8, 16, 1, 1, 1, 1, true, true},
    {"BasicBlockResidual", 2, 32, 14, 14, 32, 1, 1, 1, 1, true, true,
     Residual::Separate},
    {"BasicBlockResidualInPlace", 2, 32, 14, 14, 32, 1, 1, 1, 1, true, true,
     Residual::InPlace},
    {"OddResidualNoBiasNoRelu", 1, 16, 9, 13, 16, 1, 1, 1, 1, false, false,
     Residual::Separate},
    {"OnePixelResidualInPlace", 2, 64, 1, 1, 64, 1, 1, 1, 1, true, true,
     Residual::InPlace},
};

/// Winograd's F(4x4, 3x3) transforms input tiles, weights and products
/// with coefficients up to 4 and down to 1/24, so its rounding differs from
/// direct summation's; on these cases it stays within the same bound
/// (floatSumFactor), which the test holds it to.
TEST(ConvWinogradTest, MatchesNaiveAndCanBeTurnedOff) {
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  for (memfmt_switch_t winograd : {MEMFMT_SWITCH_ON, MEMFMT_SWITCH_OFF}) {
    memfmt_context_options_t options =
        TestContext::optionsFor(MEMFMT_KERNELS_FAST);
    options.winograd = winograd;
    TestContext ctx(options);
    int64_t node = 0, winogradRuns = 0, residualWinogradRuns = 0;
    for (const WinogradCase &cs : kWinogradCases) {
      bool hasResidual = cs.residual != Residual::None;
      ConvAttrs a{1, 1, cs.padTop, cs.padLeft, cs.padBottom, cs.padRight,
                  1, 1, 1,         cs.bias,    hasResidual,  cs.relu};
      int64_t oh = convOutSize(cs.h, 3, 1, cs.padTop, cs.padBottom, 1);
      int64_t ow = convOutSize(cs.w, 3, 1, cs.padLeft, cs.padRight, 1);
      for (Layout layout : {C, CL, S}) {
        Layout outLayout = layout == S ? CL : layout;
        Tensor in({cs.n, cs.c, cs.h, cs.w}, layout);
        Tensor w({cs.o, cs.c, 3, 3}, layout), b({cs.o});
        Tensor out({cs.n, cs.o, oh, ow}, outLayout);
        Tensor residual({cs.n, cs.o, oh, ow}, layout);
        in.fillRandom(11);
        w.fillRandom(12);
        b.fillRandom(13);
        residual.fillRandom(14);
        if (cs.residual == Residual::InPlace) {
          out.fillRandom(14);
          residual = out;
        }
        std::string what =
            std::string(cs.name) + " input " + in.describe() + " output " +
            out.describe() +
            (winograd == MEMFMT_SWITCH_ON ? ", Winograd on" : ", Winograd off");
        Expected want = naiveConv(in, w, cs.bias ? &b : nullptr,
                                  hasResidual ? &residual : nullptr, a);
        const memfmt_memref_t *residualRef = cs.residual == Residual::Separate
                                                 ? residual.memref()
                                                 : out.memref();
        // A model's weights: declared constant, so packed once.
        ConstantScope constant(ctx, w);
        ASSERT_EQ(_mlir_ciface_memfmt_conv2d_f32(
                      ctx, node, in.memref(), w.memref(),
                      cs.bias ? b.memref() : out.memref(), residualRef,
                      out.memref(), 1, 1, cs.padTop, cs.padLeft, cs.padBottom,
                      cs.padRight, 1, 1, 1, cs.bias, hasResidual, cs.relu, 0, 0.0, 0.0),
                  MEMFMT_STATUS_OK)
            << what << ": " << ctx.lastError();
        std::string impl = ctx.implOf(node);
        bool ranWinograd = impl == "onednn_winograd";
        winogradRuns += ranWinograd;
        residualWinogradRuns += ranWinograd && hasResidual;
        if (winograd == MEMFMT_SWITCH_OFF)
          EXPECT_FALSE(ranWinograd) << what;
        EXPECT_EQ(impl.rfind("onednn", 0), 0u) << what << ": ran " << impl;
        int64_t terms = cs.c * 9;
        expectClose(out, want, floatSumFactor(terms), what + " (" + impl + ")");
        ++node;
      }
    }
#if defined(__x86_64__) && defined(__GNUC__)
    // oneDNN 2.6 has Winograd kernels for AVX-512 (avx512_core).
    if (winograd == MEMFMT_SWITCH_ON && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl")) {
      EXPECT_GT(winogradRuns, 0) << "no case ran Winograd on an AVX-512 CPU";
      EXPECT_GT(residualWinogradRuns, 0)
          << "no residual case ran Winograd on an AVX-512 CPU";
    }
#endif
  }
}

/// Weights that may change between calls (a training step's parameters)
/// are packed on every call, and oneDNN 2.6's Winograd weight transform is
/// slow: such convolutions run Winograd only on large outputs (at least
/// 16384 output positions N*OH*OW), and compute the same values either way.
TEST(ConvWinogradTest, RepackedWeightsOnlyOnLargeOutputs) {
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  TestContext ctx(TestContext::optionsFor(MEMFMT_KERNELS_FAST));
  ConvAttrs a{1, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false};
  int64_t node = 0;
  // 2*14*14 = 392 positions, then 4*64*64 = 16384.
  for (int64_t n : {2, 4}) {
    int64_t hw = n == 2 ? 14 : 64;
    Tensor in({n, 16, hw, hw}, CL), w({16, 16, 3, 3}, CL);
    Tensor out({n, 16, hw, hw}, CL);
    in.fillRandom(21);
    w.fillRandom(22);
    Expected want = naiveConv(in, w, nullptr, nullptr, a);
    for (int call = 0; call < 2; ++call) {
      // The weights change between calls, as SGD changes them.
      if (call == 1) {
        w.fillRandom(23);
        want = naiveConv(in, w, nullptr, nullptr, a);
      }
      ASSERT_EQ(_mlir_ciface_memfmt_conv2d_f32(
                    ctx, node, in.memref(), w.memref(), out.memref(),
                    out.memref(), out.memref(), 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
                    0, 0, 0, 0.0, 0.0),
                MEMFMT_STATUS_OK)
          << ctx.lastError();
      std::string what = "batch " + std::to_string(n) + " call " +
                         std::to_string(call) + " (" + ctx.implOf(node) + ")";
      expectClose(out, want, floatSumFactor(16 * 9), what);
      if (n == 2)
        EXPECT_NE(ctx.implOf(node), "onednn_winograd") << what;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (n == 4 && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
      EXPECT_EQ(ctx.implOf(node), "onednn_winograd");
#endif
    ++node;
  }
}

/// MEMFMT_WINOGRAD=0 turns it off by default; a bad value is an error.
TEST(ConvWinogradTest, EnvironmentVariable) {
  for (const char *value : {"0", "off"}) {
    setenv("MEMFMT_WINOGRAD", value, 1);
    memfmt_context_options_t options;
    memfmt_context_options_init(&options);
    memfmt_context_t *ctx = nullptr;
    ASSERT_EQ(memfmt_context_create(&options, &ctx), MEMFMT_STATUS_OK);
    memfmt_context_options_t resolved;
    memfmt_context_get_options(ctx, &resolved);
    EXPECT_EQ(resolved.winograd, MEMFMT_SWITCH_OFF) << value;
    memfmt_context_destroy(ctx);
  }
  setenv("MEMFMT_WINOGRAD", "maybe", 1);
  memfmt_context_t *ctx = nullptr;
  EXPECT_EQ(memfmt_context_create(nullptr, &ctx),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memfmt_context_last_error(nullptr))
                .find("MEMFMT_WINOGRAD is 'maybe'"),
            std::string::npos);
  unsetenv("MEMFMT_WINOGRAD");
  memfmt_context_options_t options;
  memfmt_context_options_init(&options);
  ASSERT_EQ(memfmt_context_create(&options, &ctx), MEMFMT_STATUS_OK);
  memfmt_context_options_t resolved;
  memfmt_context_get_options(ctx, &resolved);
  EXPECT_EQ(resolved.winograd, MEMFMT_SWITCH_ON);
  memfmt_context_destroy(ctx);
}

} // namespace
