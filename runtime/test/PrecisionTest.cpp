//===- PrecisionTest.cpp - f16/bf16 calls and dtype conversions on the CPU ===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CPU backend runs f16 and bf16 calls on the f32 reference over widened
// copies (cpu/Precision.cpp): the result must be the f32 reference's value
// of the rounded inputs, rounded once (so within half an ulp of the element
// type of a double-precision naive result), in any layout, in place where
// the kernel allows it, without touching the gaps of strided outputs. The
// conversion kernels (cast_f32_to, cast_to_f32_from) round to nearest even
// (f16 overflows to infinity, NaN stays NaN) between any two layouts. These
// are the oracles the CUDA backend's f16/bf16 kernels are tested against.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include "memfmt/runtime/elementwise_ops.h"
#include "memfmt/runtime/io/HalfFloat.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace memfmt::test;
namespace io = memfmt::io;

namespace {

using namespace memfmt::test::layout_names;

using Half = TestTensor<uint16_t>;

enum class Kind { F16, BF16 };

float widen(Kind k, uint16_t v) {
  return k == Kind::F16 ? io::halfToFloat(v) : io::bfloat16ToFloat(v);
}
uint16_t narrow(Kind k, float v) {
  return k == Kind::F16 ? io::floatToHalf(v) : io::floatToBFloat16(v);
}

/// A 16-bit tensor holding `values` (logical order) rounded to `k`, and the
/// f32 tensor of the rounded values in the same layout.
Half make16(Kind k, const Tensor &values) {
  Half t(values.sizes, values.layout);
  for (int64_t i = 0; i < values.numElements(); ++i)
    t.flat(i) = narrow(k, values.flat(i));
  return t;
}

Tensor widened(Kind k, const Half &t) {
  Tensor out(t.sizes, t.layout);
  for (int64_t i = 0; i < t.numElements(); ++i)
    out.flat(i) = widen(k, t.flat(i));
  return out;
}

/// Half an ulp of `k` at `v`, relative: 2^-11 (f16), 2^-8 (bf16).
double halfUlp(Kind k) { return k == Kind::F16 ? 1.0 / 2048 : 1.0 / 256; }

/// `sumFactor`: the relative error of the sums behind each element (of
/// its magnitude), before the rounding to `k`.
void expectRounded(Kind k, const Half &out, const Expected &want,
                   const std::string &what, double sumFactor = 1e-6) {
  int64_t failures = 0;
  for (int64_t i = 0; i < out.numElements() && failures < 5; ++i) {
    double got = widen(k, out.flat(i)), expected = want.value[i];
    double tolerance = 1.01 * halfUlp(k) * std::fabs(expected) +
                       sumFactor * want.magnitude[i] + 1e-7;
    if (!(std::fabs(got - expected) <= tolerance)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got
                    << ", expected " << expected << " (within " << tolerance
                    << ")";
      ++failures;
    }
  }
}

class WidenedTest : public ::testing::TestWithParam<
                        std::tuple<memfmt_kernels_t, Kind, Layout>> {};

TEST_P(WidenedTest, ReluAddBatchNormMatchNaive) {
  auto [kernels, kind, layout] = GetParam();
  TestContext ctx(kernels);
  Tensor xf({2, 5, 3, 4}, layout), yf({2, 5, 3, 4}, layout);
  xf.fillRandom(1, -4, 4);
  yf.fillRandom(2, -4, 4);
  Half x = make16(kind, xf), y = make16(kind, yf);
  Tensor xr = widened(kind, x), yr = widened(kind, y);
  bool f16 = kind == Kind::F16;
  std::string what = x.describe();

  Half out({2, 5, 3, 4}, layout);
  EXPECT_KERNEL_OK(
      ctx,
      f16 ? _mlir_ciface_memfmt_relu_f16(ctx, 0, x.memref(), out.memref())
          : _mlir_ciface_memfmt_relu_bf16(ctx, 0, x.memref(), out.memref()));
  Expected relu;
  for (int64_t i = 0; i < xr.numElements(); ++i) {
    relu.value.push_back(naiveRelu(xr.flat(i)));
    relu.magnitude.push_back(std::fabs(xr.flat(i)));
  }
  expectRounded(kind, out, relu, "relu " + what);
  EXPECT_TRUE(out.gapsIntact()) << what;
  // bf16 has the dense loops (Element.h); f16 is widened.
  EXPECT_EQ(ctx.implOf(0), kernels == MEMFMT_KERNELS_FAST &&
                                   kind == Kind::BF16 &&
                                   (layout == C || layout == CL)
                               ? "dense"
                               : "reference_widened");

  // add, in place on lhs.
  Half lhs = x;
  EXPECT_KERNEL_OK(
      ctx, f16 ? _mlir_ciface_memfmt_add_f16(ctx, 1, lhs.memref(), y.memref(),
                                             lhs.memref())
               : _mlir_ciface_memfmt_add_bf16(ctx, 1, lhs.memref(), y.memref(),
                                              lhs.memref()));
  expectRounded(kind, lhs, naiveAdd(xr, yr, {2, 5, 3, 4}), "add " + what);

  Tensor wf({5}), bf({5}), mf({5}), vf({5});
  wf.fillRandom(3, 0.5, 1.5);
  bf.fillRandom(4);
  mf.fillRandom(5);
  vf.fillRandom(6, 0.5, 1.5);
  Half w = make16(kind, wf), b = make16(kind, bf), m = make16(kind, mf),
       v = make16(kind, vf);
  EXPECT_KERNEL_OK(ctx, f16 ? _mlir_ciface_memfmt_batch_norm_f16(
                                  ctx, 2, x.memref(), w.memref(), b.memref(),
                                  m.memref(), v.memref(), out.memref(), 1e-5)
                            : _mlir_ciface_memfmt_batch_norm_bf16(
                                  ctx, 2, x.memref(), w.memref(), b.memref(),
                                  m.memref(), v.memref(), out.memref(), 1e-5));
  expectRounded(kind, out,
                naiveBatchNorm(xr, widened(kind, w), widened(kind, b),
                               widened(kind, m), widened(kind, v), 1e-5),
                "batch_norm " + what);
}

TEST_P(WidenedTest, LayerNormMatchesNaive) {
  auto [kernels, kind, layout] = GetParam();
  TestContext ctx(kernels);
  bool f16 = kind == Kind::F16;
  auto layerNorm = f16 ? _mlir_ciface_memfmt_layer_norm_f16
                       : _mlir_ciface_memfmt_layer_norm_bf16;
  // Rank 4 (in this layout) over D = 7, and rank 2 over D = 96.
  for (const std::vector<int64_t> &shape :
       {std::vector<int64_t>{2, 5, 3, 7}, std::vector<int64_t>{6, 96}}) {
    int64_t d = shape.back();
    Tensor xf(shape, layout), wf({d}), bf({d});
    xf.fillRandom(13, -4, 4);
    wf.fillRandom(14, 0.5, 1.5);
    bf.fillRandom(15);
    Half x = make16(kind, xf), w = make16(kind, wf), b = make16(kind, bf);
    Tensor xr = widened(kind, x), wr = widened(kind, w), br = widened(kind, b);
    std::string what = x.describe();
    for (bool affine : {false, true}) {
      Half out(shape, layout);
      EXPECT_KERNEL_OK(ctx, layerNorm(ctx, 3, x.memref(),
                                      affine ? w.memref() : out.memref(),
                                      affine ? b.memref() : out.memref(),
                                      out.memref(), 1e-5, affine, affine));
      expectRounded(kind, out,
                    naiveLayerNorm(xr, affine ? &wr : nullptr,
                                   affine ? &br : nullptr, 1e-5),
                    std::string("layer_norm ") + (affine ? "affine " : "") +
                        what);
      EXPECT_TRUE(out.gapsIntact()) << what;
      // bf16 runs oneDNN where the CPU has bf16 instructions and the rows
      // are dense (a contiguous tensor, or a rank-2 "channels-last" one,
      // which is the same; a 4-D channels-last tensor's last dim is W, not
      // unit-stride); f16 is widened.
      const char *desc = memfmt_context_device_description(ctx);
      bool onednn = kernels == MEMFMT_KERNELS_FAST && kind == Kind::BF16 &&
                    memfmt_runtime_has_onednn() &&
                    (std::strstr(desc, "avx512_core_bf16") ||
                     std::strstr(desc, "avx512_core_amx")) &&
                    (layout == C || (layout == CL && shape.size() == 2));
      EXPECT_EQ(ctx.implOf(3), onednn ? "onednn" : "reference_widened")
          << what;
    }
    // In place.
    Half t = x;
    EXPECT_KERNEL_OK(ctx, layerNorm(ctx, 4, t.memref(), w.memref(), b.memref(),
                                    t.memref(), 1e-5, 1, 1));
    expectRounded(kind, t, naiveLayerNorm(xr, &wr, &br, 1e-5),
                  "layer_norm in place " + what);
  }
}

TEST_P(WidenedTest, SoftmaxMatchesNaive) {
  auto [kernels, kind, layout] = GetParam();
  TestContext ctx(kernels);
  auto softmax = kind == Kind::F16 ? _mlir_ciface_memfmt_softmax_f16
                                   : _mlir_ciface_memfmt_softmax_bf16;
  // Rank 4 (in this layout) along C and W, rank 2 along both dims.
  const std::pair<std::vector<int64_t>, int64_t> calls[] = {
      {{2, 5, 3, 7}, 1}, {{2, 5, 3, 7}, 3}, {{6, 96}, 1}, {{6, 96}, 0}};
  for (const auto &[shape, dim] : calls) {
    Tensor xf(shape, layout);
    xf.fillRandom(16, -4, 4);
    Half x = make16(kind, xf);
    Tensor xr = widened(kind, x);
    std::string what = x.describe() + " dim " + std::to_string(dim);
    Half out(shape, layout);
    EXPECT_KERNEL_OK(ctx, softmax(ctx, 5, x.memref(), out.memref(), dim));
    expectRounded(kind, out, naiveSoftmax(xr, dim), "softmax " + what);
    EXPECT_TRUE(out.gapsIntact()) << what;
    // bf16 rows with unit stride along the dim run the row loop (f32
    // arithmetic, rounded once); the rest is widened.
    const bool unit =
        shape[dim] == 1 || (x.strides[dim] == 1 && out.strides[dim] == 1);
    EXPECT_EQ(ctx.implOf(5),
              kernels == MEMFMT_KERNELS_FAST && kind == Kind::BF16 && unit
                  ? "rows"
                  : "reference_widened")
        << what;
    // In place.
    Half t = x;
    EXPECT_KERNEL_OK(ctx, softmax(ctx, 6, t.memref(), t.memref(), dim));
    expectRounded(kind, t, naiveSoftmax(xr, dim), "softmax in place " + what);
  }
}

/// Sigmoid, SiLU and both GELUs: bf16 runs oneDNN's eltwise primitive in the
/// fast mode (f32 inside, rounded once), f16 the widened reference; either
/// is the exact value rounded once, within expectRounded's bound.
TEST_P(WidenedTest, EltwiseMatchesNaive) {
  auto [kernels, kind, layout] = GetParam();
  TestContext ctx(kernels);
  auto eltwise = kind == Kind::F16 ? _mlir_ciface_memfmt_eltwise_f16
                                   : _mlir_ciface_memfmt_eltwise_bf16;
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  const std::pair<int64_t, std::function<double(double)>> ops[] = {
      {MEMFMT_ELTWISE_SIGMOID, sigmoid},
      {MEMFMT_ELTWISE_SILU, [&](double v) { return v * sigmoid(v); }},
      {MEMFMT_ELTWISE_GELU_ERF,
       [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }},
      {MEMFMT_ELTWISE_GELU_TANH, [](double v) {
         const double c = std::sqrt(2.0 / M_PI);
         return 0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v)));
       }}};
  Tensor xf({2, 5, 3, 7}, layout);
  xf.fillRandom(17, -6, 6);
  Half x = make16(kind, xf);
  Tensor xr = widened(kind, x);
  int64_t node = 0;
  for (const auto &[op, f] : ops) {
    Expected want;
    for (int64_t i = 0; i < xr.numElements(); ++i) {
      want.value.push_back(f(xr.flat(i)));
      want.magnitude.push_back(std::fabs(want.value.back()));
    }
    Half out({2, 5, 3, 7}, layout);
    EXPECT_KERNEL_OK(ctx,
                     eltwise(ctx, node, x.memref(), out.memref(), op, 0, 0));
    std::string what = "eltwise " + std::to_string(op) + " " + x.describe() +
                       " (" + ctx.implOf(node) + ")";
    expectRounded(kind, out, want, what);
    EXPECT_TRUE(out.gapsIntact()) << what;
    // oneDNN 2.6 has bf16 eltwise kernels from AVX-512 on (on AVX2 the
    // widened reference runs).
    if (kernels == MEMFMT_KERNELS_FAST && kind == Kind::BF16 &&
        (layout == C || layout == CL) && memfmt_runtime_has_onednn() &&
        std::strstr(memfmt_context_device_description(ctx), "on avx512_core"))
      EXPECT_EQ(ctx.implOf(node), "onednn") << what;
    ++node;
  }
}

TEST_P(WidenedTest, ConvAndLinearMatchNaive) {
  auto [kernels, kind, layout] = GetParam();
  TestContext ctx(kernels);
  bool f16 = kind == Kind::F16;
  Tensor xf({1, 4, 6, 5}, layout), wf({3, 4, 3, 3}, layout), bf({3});
  xf.fillRandom(7);
  wf.fillRandom(8);
  bf.fillRandom(9);
  Half x = make16(kind, xf), w = make16(kind, wf), b = make16(kind, bf);
  Half out({1, 3, 6, 5}, layout);
  ConvAttrs attrs;
  attrs.padTop = attrs.padLeft = attrs.padBottom = attrs.padRight = 1;
  attrs.bias = true;
  attrs.relu = true;
  auto conv =
      f16 ? _mlir_ciface_memfmt_conv2d_f16 : _mlir_ciface_memfmt_conv2d_bf16;
  EXPECT_KERNEL_OK(ctx, conv(ctx, 0, x.memref(), w.memref(), b.memref(),
                             out.memref(), out.memref(), 1, 1, 1, 1, 1, 1, 1, 1,
                             1, 1, 0, 1, 0, 0.0, 0.0));
  Tensor br = widened(kind, b);
  expectRounded(
      kind, out,
      naiveConv(widened(kind, x), widened(kind, w), &br, nullptr, attrs),
      "conv2d " + x.describe());
  EXPECT_TRUE(out.gapsIntact());

  Tensor inf({3, 7}), lwf({4, 7}), lbf({4});
  inf.fillRandom(10);
  lwf.fillRandom(11);
  lbf.fillRandom(12);
  Half in = make16(kind, inf), lw = make16(kind, lwf), lb = make16(kind, lbf);
  Half lout({3, 4});
  auto linear =
      f16 ? _mlir_ciface_memfmt_linear_f16 : _mlir_ciface_memfmt_linear_bf16;
  EXPECT_KERNEL_OK(ctx, linear(ctx, 1, in.memref(), lw.memref(), lb.memref(),
                               lout.memref(), 1, 0, 0.0, 0.0));
  Tensor lbr = widened(kind, lb);
  expectRounded(kind, lout,
                naiveLinear(widened(kind, in), widened(kind, lw), &lbr),
                "linear");
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, WidenedTest,
    ::testing::Combine(::testing::Values(MEMFMT_KERNELS_FAST,
                                         MEMFMT_KERNELS_REFERENCE),
                       ::testing::Values(Kind::F16, Kind::BF16),
                       ::testing::Values(C, CL, CLS, S)));

class CastTest : public ::testing::TestWithParam<
                     std::tuple<memfmt_kernels_t, Layout, Layout>> {};

TEST_P(CastTest, RoundsToNearestEvenBetweenLayouts) {
  auto [kernels, from, to] = GetParam();
  TestContext ctx(kernels);
  Tensor x({2, 3, 4, 5}, from);
  x.fillRandom(21, -70000, 70000);
  // Special values: f16 overflow, NaN, ties, tiny values.
  x.flat(0) = 65520.0f;           // Rounds to f16 infinity.
  x.flat(1) = std::nanf("");      // Stays NaN.
  x.flat(2) = 1.0f + 1.0f / 2048; // An f16 tie: rounds to 1 (even).
  x.flat(3) = 1.0f + 3.0f / 2048; // An f16 tie: rounds up to even.
  x.flat(4) = 1e-9f;              // Underflows f16 to 0.
  x.flat(5) = -0.0f;
  for (Kind kind : {Kind::F16, Kind::BF16}) {
    bool f16 = kind == Kind::F16;
    Half out({2, 3, 4, 5}, to);
    EXPECT_KERNEL_OK(ctx, f16 ? _mlir_ciface_memfmt_cast_f32_to_f16(
                                    ctx, 0, x.memref(), out.memref())
                              : _mlir_ciface_memfmt_cast_f32_to_bf16(
                                    ctx, 0, x.memref(), out.memref()));
    for (int64_t i = 0; i < x.numElements(); ++i)
      ASSERT_EQ(out.flat(i), narrow(kind, x.flat(i)))
          << "element " << i << " (" << x.flat(i) << ") "
          << (f16 ? "f16 " : "bf16 ") << x.describe() << " -> "
          << out.describe();
    EXPECT_TRUE(out.gapsIntact());

    // And back, exactly.
    Tensor back({2, 3, 4, 5}, from);
    EXPECT_KERNEL_OK(ctx, f16 ? _mlir_ciface_memfmt_cast_to_f32_from_f16(
                                    ctx, 1, out.memref(), back.memref())
                              : _mlir_ciface_memfmt_cast_to_f32_from_bf16(
                                    ctx, 1, out.memref(), back.memref()));
    for (int64_t i = 0; i < x.numElements(); ++i) {
      float want = widen(kind, out.flat(i));
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(back.flat(i))) << "element " << i;
      else
        ASSERT_EQ(back.flat(i), want) << "element " << i;
    }
    EXPECT_TRUE(back.gapsIntact());
  }
  // f32 -> f32 is a copy.
  Tensor copy({2, 3, 4, 5}, to);
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_cast_f32_to_f32(ctx, 2, x.memref(),
                                                            copy.memref()));
  for (int64_t i = 2; i < x.numElements(); ++i)
    ASSERT_EQ(copy.flat(i), x.flat(i)) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, CastTest,
    ::testing::Combine(::testing::Values(MEMFMT_KERNELS_FAST,
                                         MEMFMT_KERNELS_REFERENCE),
                       ::testing::Values(C, CL, S),
                       ::testing::Values(C, CL, CLS)));

/// bf16 max pooling with windows far larger than the input: oneDNN visits
/// every tap of a window, so such calls go to the widened kernels, which
/// visit only the taps inside the input (a 2^30-tap window ran for minutes
/// on oneDNN; found by memfmt-fuzz-runtime, test/fuzz/regressions/runtime).
TEST(ReducedPrecisionPoolTest, HugeWindowsVisitOnlyTheInput) {
  const int64_t kernel = (int64_t(1) << 30) + 1, pad = int64_t(1) << 29;
  TestContext ctx(MEMFMT_KERNELS_FAST);
  for (Layout layout : {C, CL}) {
    Tensor values({2, 3, 3, 3}, layout);
    values.fillRandom(5);
    Half in = make16(Kind::BF16, values);
    Half out({2, 3, 3, 3}, layout);
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_max_pool2d_bf16(
                              ctx, 0, in.memref(), out.memref(), kernel, kernel,
                              1, 1, pad, pad, 1, 1));
    // Every window covers the whole plane: each output is its plane's max.
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 3; ++c) {
        uint16_t best = in.at({n, c, 0, 0});
        for (int64_t i = 1; i < 9; ++i) {
          uint16_t v = in.at({n, c, i / 3, i % 3});
          if (widen(Kind::BF16, v) > widen(Kind::BF16, best))
            best = v;
        }
        for (int64_t i = 0; i < 9; ++i)
          EXPECT_EQ(out.at({n, c, i / 3, i % 3}), best) << toString(layout);
      }
  }
}

/// True if `a` and `b` hold the same bf16 values bit for bit (any two NaNs
/// count as equal: which operand's payload an f32 operation keeps is the
/// compiler's choice).
::testing::AssertionResult sameBf16(const Half &a, const Half &b) {
  for (int64_t i = 0; i < a.numElements(); ++i) {
    uint16_t x = a.flat(i), y = b.flat(i);
    bool bothNaN = std::isnan(widen(Kind::BF16, x)) &&
                   std::isnan(widen(Kind::BF16, y));
    if (x != y && !bothNaN)
      return ::testing::AssertionFailure()
             << "element " << i << ": " << widen(Kind::BF16, x) << " (0x"
             << std::hex << x << ") against " << widen(Kind::BF16, y)
             << " (0x" << y << std::dec << ")";
  }
  return ::testing::AssertionSuccess();
}

/// Within one bf16 ulp of each other (sums in another order; NaNs and
/// infinities equal). With `anyNaN`, a NaN on either side matches anything:
/// oneDNN's max lets a number win over a NaN (OneDnnUnary.cpp).
::testing::AssertionResult nearBf16(const Half &a, const Half &b,
                                    bool anyNaN = false) {
  for (int64_t i = 0; i < a.numElements(); ++i) {
    double x = widen(Kind::BF16, a.flat(i)), y = widen(Kind::BF16, b.flat(i));
    if (x == y || (std::isnan(x) && std::isnan(y)) ||
        (anyNaN && (std::isnan(x) || std::isnan(y))))
      continue;
    if (!(std::fabs(x - y) <= std::fabs(y) / 128))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << x << " against " << y;
  }
  return ::testing::AssertionSuccess();
}

/// The CPU backend's own loops in bf16 (cpu/Element.h): relu, add, binary
/// (same shapes, and a per-channel operand on either side), the
/// piecewise-linear eltwise functions, copies and channels-last max pooling
/// give the widened reference's bits; average pooling sums in another order
/// (one ulp). Inputs include NaN, infinities, -0 and values that round to
/// infinity. In the dense layouts the fast context must not fall back to the
/// widened reference for these calls. (Layouts the own loops decline may
/// run oneDNN's pooling, which is compared within an ulp and may lose a
/// NaN.)
class Bf16FastTest : public ::testing::TestWithParam<Layout> {};

TEST_P(Bf16FastTest, OwnLoopsMatchTheWidenedReference) {
  const Layout layout = GetParam();
  const bool dense = layout == C || layout == CL;
  TestContext fast(MEMFMT_KERNELS_FAST), ref(MEMFMT_KERNELS_REFERENCE);
  const std::vector<int64_t> shape = {2, 6, 5, 7};
  Tensor xf(shape, layout), yf(shape, layout), sf({2, 6, 1, 1}, layout),
      s1f({1, 6, 1, 1}, layout);
  xf.fillRandom(21, -8, 8);
  yf.fillRandom(22, -8, 8);
  sf.fillRandom(23, -2, 2);
  s1f.fillRandom(24, 0.5, 2);
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {std::nanf(""), -0.0f, inf, -inf, 3.39e38f, 0.0f};
  for (int64_t i = 0; i < 6; ++i) {
    xf.flat(7 * i + 3) = specials[i];
    yf.flat(11 * i + 5) = specials[5 - i];
  }
  const Half x = make16(Kind::BF16, xf), y = make16(Kind::BF16, yf),
             scale = make16(Kind::BF16, sf), scale1 = make16(Kind::BF16, s1f);
  const std::string what = x.describe();
  int64_t node = 0;
  // Runs `call(ctx, node, out)` in both contexts and compares the outputs.
  auto check = [&](const std::string &name, const std::vector<int64_t> &sizes,
                   Layout outLayout, bool exact, auto call) {
    Half got(sizes, outLayout), want(sizes, outLayout);
    EXPECT_KERNEL_OK(fast, call(fast, node, got));
    EXPECT_KERNEL_OK(ref, call(ref, node, want));
    std::string impl = fast.implOf(node);
    bool onednn = impl == "onednn";
    EXPECT_TRUE(exact && !onednn ? sameBf16(got, want)
                                 : nearBf16(got, want, onednn))
        << name << " " << what << " (" << impl << ")";
    EXPECT_TRUE(got.gapsIntact()) << name << " " << what;
    EXPECT_EQ(ref.implOf(node), "reference_widened") << name;
    ++node;
    return impl;
  };
  auto notWidened = [&](const std::string &name, const std::string &impl) {
    if (dense)
      EXPECT_NE(impl, "reference_widened") << name << " " << what;
  };

  notWidened("relu",
             check("relu", shape, layout, true, [&](auto &ctx, int64_t n,
                                                     Half &out) {
               return _mlir_ciface_memfmt_relu_bf16(ctx, n, x.memref(),
                                                    out.memref());
             }));
  notWidened("add", check("add", shape, layout, true, [&](auto &ctx, int64_t n,
                                                          Half &out) {
               return _mlir_ciface_memfmt_add_bf16(ctx, n, x.memref(),
                                                   y.memref(), out.memref());
             }));
  for (int64_t op : {MEMFMT_BINARY_MUL, MEMFMT_BINARY_SUB, MEMFMT_BINARY_DIV}) {
    std::string name = "binary " + std::to_string(op);
    notWidened(name, check(name, shape, layout, true,
                           [&](auto &ctx, int64_t n, Half &out) {
                             return _mlir_ciface_memfmt_binary_bf16(
                                 ctx, n, x.memref(), y.memref(), out.memref(),
                                 op);
                           }));
    // A squeeze-excite scale on the right, a layer scale on the left.
    notWidened(name + " per-channel",
               check(name + " per-channel", shape, layout, true,
                     [&](auto &ctx, int64_t n, Half &out) {
                       return _mlir_ciface_memfmt_binary_bf16(
                           ctx, n, x.memref(), scale.memref(), out.memref(),
                           op);
                     }));
    notWidened(name + " scale on the left",
               check(name + " scale on the left", shape, layout, true,
                     [&](auto &ctx, int64_t n, Half &out) {
                       return _mlir_ciface_memfmt_binary_bf16(
                           ctx, n, scale1.memref(), x.memref(), out.memref(),
                           op);
                     }));
  }
  const std::tuple<int64_t, double, double> eltwises[] = {
      {MEMFMT_ELTWISE_CLAMP, 0.0, 6.0},
      {MEMFMT_ELTWISE_HARDSWISH, 0.0, 0.0},
      {MEMFMT_ELTWISE_HARDSIGMOID, 1.0 / 6, 0.5}};
  for (const auto &eltwise : eltwises) {
    const int64_t op = std::get<0>(eltwise);
    const double alpha = std::get<1>(eltwise), beta = std::get<2>(eltwise);
    std::string name = "eltwise " + std::to_string(op);
    notWidened(name, check(name, shape, layout, true,
                           [&](auto &ctx, int64_t n, Half &out) {
                             return _mlir_ciface_memfmt_eltwise_bf16(
                                 ctx, n, x.memref(), out.memref(), op, alpha,
                                 beta);
                           }));
  }
  // Copies into every layout never need the reference.
  for (Layout to : {C, CL, CLS, S}) {
    std::string name = std::string("copy to ") + toString(to);
    std::string impl = check(name, shape, to, true,
                             [&](auto &ctx, int64_t n, Half &out) {
                               return _mlir_ciface_memfmt_copy_bf16(
                                   ctx, n, x.memref(), out.memref());
                             });
    EXPECT_NE(impl, "reference_widened") << name << " " << what;
  }
  // 3x3 / 2 max pooling, padding 1: oneDNN where it has bf16 pooling, the
  // own channels-last loop where it declines (an NCHW one may be widened
  // on a CPU without bf16 instructions).
  std::string maxImpl =
      check("max_pool2d", {2, 6, 3, 4}, layout, true,
            [&](auto &ctx, int64_t n, Half &out) {
              return _mlir_ciface_memfmt_max_pool2d_bf16(
                  ctx, n, x.memref(), out.memref(), 3, 3, 2, 2, 1, 1, 1, 1);
            });
  if (layout == CL)
    EXPECT_NE(maxImpl, "reference_widened");
  // Average pooling (both divisors) and adaptive pooling (tiling and
  // overlapping windows, and the global pool of a squeeze-excite block).
  for (int64_t includePad : {0, 1}) {
    std::string name = "avg_pool2d " + std::to_string(includePad);
    notWidened(name, check(name, {2, 6, 3, 4}, layout, false,
                           [&](auto &ctx, int64_t n, Half &out) {
                             return _mlir_ciface_memfmt_avg_pool2d_bf16(
                                 ctx, n, x.memref(), out.memref(), 3, 3, 2, 2,
                                 1, 1, 1, 1, includePad);
                           }));
  }
  for (const std::vector<int64_t> &sizes :
       {std::vector<int64_t>{2, 6, 1, 1}, std::vector<int64_t>{2, 6, 2, 3}}) {
    std::string name = "adaptive_avg_pool2d to " + std::to_string(sizes[2]) +
                       "x" + std::to_string(sizes[3]);
    notWidened(name, check(name, sizes, layout, false,
                           [&](auto &ctx, int64_t n, Half &out) {
                             return _mlir_ciface_memfmt_adaptive_avg_pool2d_bf16(
                                 ctx, n, x.memref(), out.memref());
                           }));
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, Bf16FastTest,
                         ::testing::Values(C, CL, CLS, S));

/// bf16 grouped convolutions with few channels per group run on AMX with
/// adjacent groups merged into one, the weights block-diagonal
/// (OneDnnConv.cpp): the zeros between the groups must add nothing, so the
/// result is the naive convolution of the bf16 values, rounded once, within
/// f32 summation; on an AMX CPU the channels-last calls that merge must say
/// so, and those that must not (depthwise, 16 channels per group, no
/// divisor up to 16) must not. NaN stays out: finite inputs only.
TEST(Bf16GroupedConvTest, MergedGroupsMatchNaive) {
  struct Case {
    const char *name;
    int64_t n, c, h, w, o, k;
    ConvAttrs attrs;
    bool merges;
  };
  // attrs: stride h, w; pad top, left, bottom, right; dilation h, w;
  // groups; bias, residual, relu.
  const Case cases[] = {
      // 6 groups of 8 (RegNetY's first stage): merged by 2, 16 per group.
      {"SixGroupsOf8Stride2", 2, 48, 9, 9, 48, 3,
       {2, 2, 1, 1, 1, 1, 1, 1, 6, true, false, true},
       true},
      // 5 groups (prime): all merged into one dense convolution.
      {"FiveGroupsOf8", 1, 40, 5, 7, 40, 3,
       {1, 1, 1, 1, 1, 1, 1, 1, 5, true, true, true},
       true},
      // 4 input, 6 output channels per group; odd sizes, one image.
      {"TwoUnevenGroups", 1, 8, 5, 3, 12, 3, {1, 1, 1, 1, 1, 1, 1, 1, 2},
       true},
      {"OnePixel", 1, 16, 1, 1, 16, 1, {1, 1, 0, 0, 0, 0, 1, 1, 2}, true},
      {"SixteenPerGroup", 2, 32, 6, 6, 32, 3, {1, 1, 1, 1, 1, 1, 1, 1, 2},
       false},
      {"Depthwise", 2, 16, 6, 6, 16, 3, {1, 1, 1, 1, 1, 1, 1, 1, 16}, false},
      // 17 groups of 2: merging would need all 17 (more than 16).
      {"SeventeenGroupsOf2", 1, 34, 4, 4, 34, 3,
       {1, 1, 1, 1, 1, 1, 1, 1, 17},
       false},
  };
  TestContext ctx(MEMFMT_KERNELS_FAST);
  const bool amx = memfmt_runtime_has_onednn() &&
                   std::strstr(memfmt_context_device_description(ctx),
                               "avx512_core_amx") != nullptr;
  int64_t node = 0;
  for (const Case &cs : cases)
    for (Layout layout : {CL, C}) {
      const ConvAttrs &a = cs.attrs;
      int64_t oh = convOutSize(cs.h, cs.k, a.strideH, a.padTop, a.padBottom,
                               a.dilationH);
      int64_t ow = convOutSize(cs.w, cs.k, a.strideW, a.padLeft, a.padRight,
                               a.dilationW);
      Tensor xf({cs.n, cs.c, cs.h, cs.w}, layout),
          wf({cs.o, cs.c / a.groups, cs.k, cs.k}, layout), bf({cs.o}),
          rf({cs.n, cs.o, oh, ow}, layout);
      xf.fillRandom(21);
      wf.fillRandom(22);
      bf.fillRandom(23);
      rf.fillRandom(24);
      Half x = make16(Kind::BF16, xf), w = make16(Kind::BF16, wf),
           b = make16(Kind::BF16, bf), r = make16(Kind::BF16, rf),
           out({cs.n, cs.o, oh, ow}, layout);
      std::string what = std::string(cs.name) + " " + toString(layout);
      ASSERT_EQ(_mlir_ciface_memfmt_conv2d_bf16(
                    ctx, node, x.memref(), w.memref(),
                    a.bias ? b.memref() : out.memref(),
                    a.residual ? r.memref() : out.memref(), out.memref(),
                    a.strideH, a.strideW, a.padTop, a.padLeft, a.padBottom,
                    a.padRight, a.dilationH, a.dilationW, a.groups, a.bias,
                    a.residual, a.relu, 0, 0.0, 0.0),
                MEMFMT_STATUS_OK)
          << what << ": " << ctx.lastError();
      Tensor bw = widened(Kind::BF16, b), rw = widened(Kind::BF16, r);
      Expected want =
          naiveConv(widened(Kind::BF16, x), widened(Kind::BF16, w),
                    a.bias ? &bw : nullptr, a.residual ? &rw : nullptr, a);
      expectRounded(Kind::BF16, out, want, what,
                    floatSumFactor((cs.c / a.groups) * cs.k * cs.k + 2));
      const std::string impl = ctx.implOf(node);
      const bool merged = impl.find("merged_groups") != std::string::npos;
      // One pixel is both layouts (L3): it runs as channels-last.
      if (amx && (layout == CL || cs.h * cs.w == 1))
        EXPECT_EQ(merged, cs.merges) << what << " ran " << impl;
      else
        EXPECT_FALSE(merged) << what << " ran " << impl;
      ++node;
    }
}

TEST(CastErrorTest, ShapesMustMatchAndOutputsMustNotAlias) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor x({2, 3});
  Half y({3, 2});
  EXPECT_EQ(
      _mlir_ciface_memfmt_cast_f32_to_bf16(ctx, 3, x.memref(), y.memref()),
      MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("memfmt_cast_f32_to_bf16 (node 3): output "
                                 "has shape [3, 2], expected [2, 3]"),
            std::string::npos)
      << ctx.lastError();
}

} // namespace
