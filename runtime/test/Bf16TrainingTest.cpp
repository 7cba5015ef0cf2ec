//===- Bf16TrainingTest.cpp - The kernels of a bf16 training step ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// A mixed-precision training step (memfmt-compile --train --precision bf16)
// calls the training kernels with bf16 activations and gradients and f32
// statistics and weight gradients (Kernels.def, MEMFMT_TRAINING_DTYPES).
// Here each of them in the fast context (the channels-last batch-norm rows
// loops and threshold_backward's dense loops in bf16, oneDNN's bf16
// convolution and matmul gradients) is compared with the widened f32
// reference (the oracle, Precision.cpp) on the same bf16 inputs, in the
// dense layouts and a strided one, on edge shapes (N = 1, C = 1, H = W = 1,
// odd sizes, stride 2, groups, pointwise). The elementwise kernels and max
// pooling (values and positions) give the reference's bits; reductions and products agree within a bf16 rounding of
// the result plus f32 summation. An absent gradient's stand-in (another
// tensor of its type, as the lowering passes it) is never written. Where
// the CPU multiplies bf16 natively, the fast context must not fall back to
// the widened reference in the dense layouts.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include "memfmt/runtime/io/HalfFloat.h"

#include <cmath>
#include <cstring>

using namespace memfmt::test;
namespace io = memfmt::io;

namespace {

using namespace memfmt::test::layout_names;

using Half = TestTensor<uint16_t>;

float widen(uint16_t v) { return io::bfloat16ToFloat(v); }

/// `values` rounded to bf16, in their layout.
Half toBf16(const Tensor &values) {
  Half t(values.sizes, values.layout);
  for (int64_t i = 0; i < values.numElements(); ++i)
    t.flat(i) = io::floatToBFloat16(values.flat(i));
  return t;
}

Half randomBf16(const std::vector<int64_t> &sizes, Layout layout,
                uint32_t seed, double lo = -2, double hi = 2) {
  Tensor t(sizes, layout);
  t.fillRandom(seed, lo, hi);
  return toBf16(t);
}

/// True where the CPU multiplies bf16 natively (AVX-512 BF16 or AMX): the
/// device line of a context allowed to use it says so.
bool nativeBf16() {
  memfmt_context_options_t options =
      TestContext::optionsFor(MEMFMT_KERNELS_FAST);
  options.allow_bf16 = MEMFMT_SWITCH_ON;
  TestContext ctx(options);
  return std::strstr(memfmt_context_device_description(ctx),
                     "f32 convolutions in bf16") != nullptr;
}

/// Bit for bit (NaNs equal).
::testing::AssertionResult sameBits(const Half &a, const Half &b) {
  for (int64_t i = 0; i < a.numElements(); ++i)
    if (a.flat(i) != b.flat(i) &&
        !(std::isnan(widen(a.flat(i))) && std::isnan(widen(b.flat(i)))))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << widen(a.flat(i)) << " against "
             << widen(b.flat(i));
  return ::testing::AssertionSuccess();
}

/// Within one bf16 rounding of the reference's value, plus `relative` of
/// the largest reference value (cancellation in sums computed in another
/// order).
::testing::AssertionResult nearBits(const Half &got, const Half &want,
                                    double relative = 1e-3) {
  double largest = 0;
  for (int64_t i = 0; i < want.numElements(); ++i)
    largest = std::max(largest, std::fabs(double(widen(want.flat(i)))));
  for (int64_t i = 0; i < got.numElements(); ++i) {
    double x = widen(got.flat(i)), y = widen(want.flat(i));
    if (!(std::fabs(x - y) <= std::fabs(y) / 128 + relative * largest))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << x << " against " << y
             << " (largest " << largest << ")";
  }
  return ::testing::AssertionSuccess();
}

/// f32 tensors within `relative` of the reference's largest value.
::testing::AssertionResult nearF32(const Tensor &got, const Tensor &want,
                                   double relative) {
  double largest = 0;
  for (int64_t i = 0; i < want.numElements(); ++i)
    largest = std::max(largest, std::fabs(double(want.flat(i))));
  for (int64_t i = 0; i < got.numElements(); ++i)
    if (!(std::fabs(double(got.flat(i)) - want.flat(i)) <=
          relative * largest + 1e-30))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got.flat(i) << " against "
             << want.flat(i) << " (largest " << largest << ")";
  return ::testing::AssertionSuccess();
}

/// A test name from a (case, layout) parameter: the case's name and the
/// layout's, with every other character an underscore.
template <typename Case>
std::string caseName(const std::tuple<Case, Layout> &param) {
  std::string name =
      std::string(std::get<0>(param).name) + "_" + toString(std::get<1>(param));
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

struct Shape {
  const char *name;
  std::vector<int64_t> sizes;
};

const Shape kBatchNormShapes[] = {
    {"odd", {2, 5, 3, 7}},    {"one image", {1, 6, 4, 4}},
    {"one channel", {3, 1, 5, 5}}, {"one pixel", {4, 8, 1, 1}},
    {"wide", {2, 64, 6, 6}},
};

class Bf16BatchNormTest
    : public ::testing::TestWithParam<std::tuple<Shape, Layout>> {};

TEST_P(Bf16BatchNormTest, ForwardAndBackwardMatchTheWidenedReference) {
  const auto &[shape, layout] = GetParam();
  const int64_t channels = shape.sizes[1];
  TestContext fast(MEMFMT_KERNELS_FAST), ref(MEMFMT_KERNELS_REFERENCE);
  const bool expectFast = layout == CL && nativeBf16();
  const Half x = randomBf16(shape.sizes, layout, 1, -3, 5),
             res = randomBf16(shape.sizes, layout, 2),
             go = randomBf16(shape.sizes, layout, 3);
  Tensor w({channels}), b({channels}), rm({channels}), rv({channels});
  w.fillRandom(4, 0.5, 2);
  b.fillRandom(5, -1, 1);
  rm.fillRandom(6, -1, 1);
  rv.fillRandom(7, 0.5, 2);
  const std::string what = std::string(shape.name) + " " + x.describe();
  int64_t node = 0;
  for (int64_t fused : {0, 1}) {
    // Forward: output (bf16), statistics (f32), running statistics updated
    // in place.
    struct Forward {
      Half out;
      Tensor mean, invstd, rm, rv;
    };
    auto forward = [&](TestContext &ctx, Forward &f) {
      return _mlir_ciface_memfmt_native_batch_norm_bf16(
          ctx, node, x.memref(), w.memref(), b.memref(), f.rm.memref(),
          f.rv.memref(), fused ? res.memref() : x.memref(), f.out.memref(),
          f.mean.memref(), f.invstd.memref(), f.rm.memref(), f.rv.memref(),
          1e-5, 0.1, fused, fused);
    };
    Forward got{Half(shape.sizes, layout), Tensor({channels}),
                Tensor({channels}), rm, rv};
    Forward want = got;
    EXPECT_KERNEL_OK(fast, forward(fast, got));
    EXPECT_KERNEL_OK(ref, forward(ref, want));
    EXPECT_EQ(ref.implOf(node), "reference_widened");
    if (expectFast)
      EXPECT_EQ(fast.implOf(node), "channels_last") << what;
    EXPECT_TRUE(nearBits(got.out, want.out)) << "output, fused " << fused
                                             << ", " << what;
    EXPECT_TRUE(got.out.gapsIntact()) << what;
    EXPECT_TRUE(nearF32(got.mean, want.mean, 1e-6)) << what;
    EXPECT_TRUE(nearF32(got.invstd, want.invstd, 1e-6)) << what;
    EXPECT_TRUE(nearF32(got.rm, want.rm, 1e-6)) << what;
    EXPECT_TRUE(nearF32(got.rv, want.rv, 1e-6)) << what;
    ++node;

    // Backward from the same statistics: grad_input (bf16), grad_weight and
    // grad_bias (f32); with relu (the fused forward) through its mask.
    for (int64_t hasGradInput : {1, 0}) {
      auto backward = [&](TestContext &ctx, Half &gi, Tensor &gw, Tensor &gb) {
        // Without grad_input its stand-in is grad_out (a bf16 tensor).
        return _mlir_ciface_memfmt_native_batch_norm_backward_bf16(
            ctx, node, go.memref(), x.memref(), w.memref(),
            want.mean.memref(), want.invstd.memref(),
            fused ? want.out.memref() : x.memref(),
            hasGradInput ? gi.memref() : go.memref(), gw.memref(),
            gb.memref(), hasGradInput, 1, 1, fused);
      };
      Half gi(shape.sizes, layout), giRef(shape.sizes, layout);
      Tensor gw({channels}), gb({channels}), gwRef({channels}),
          gbRef({channels});
      const Half goBefore = go;
      EXPECT_KERNEL_OK(fast, backward(fast, gi, gw, gb));
      EXPECT_KERNEL_OK(ref, backward(ref, giRef, gwRef, gbRef));
      EXPECT_TRUE(sameBits(go, goBefore)) << "the stand-in was written";
      if (expectFast)
        EXPECT_EQ(fast.implOf(node), "channels_last") << what;
      if (hasGradInput)
        EXPECT_TRUE(nearBits(gi, giRef, 2e-3))
            << "grad_input, relu " << fused << ", " << what;
      EXPECT_TRUE(nearF32(gw, gwRef, 1e-5)) << "grad_weight, " << what;
      EXPECT_TRUE(nearF32(gb, gbRef, 1e-5)) << "grad_bias, " << what;
      ++node;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Bf16BatchNormTest,
    ::testing::Combine(::testing::ValuesIn(kBatchNormShapes),
                       ::testing::Values(C, CL, S)),
    [](const auto &info) { return caseName(info.param); });

TEST(Bf16ThresholdBackwardTest, DenseLoopsGiveTheReferenceBits) {
  TestContext fast(MEMFMT_KERNELS_FAST), ref(MEMFMT_KERNELS_REFERENCE);
  int64_t node = 0;
  for (Layout layout : {C, CL, S}) {
    const std::vector<int64_t> sizes = {2, 6, 5, 3};
    Half g = randomBf16(sizes, layout, 11), self = randomBf16(sizes, layout, 12),
         addend = randomBf16(sizes, layout, 13);
    self.flat(3) = 0;      // The threshold itself: zeroed.
    self.flat(4) = 0x8000; // -0: zeroed too.
    self.flat(5) = 0x7fc0; // NaN lets the gradient through.
    for (int64_t hasAddend : {0, 1}) {
      Half got(sizes, layout), want(sizes, layout);
      auto call = [&](TestContext &ctx, Half &out) {
        return _mlir_ciface_memfmt_threshold_backward_bf16(
            ctx, node, g.memref(), self.memref(),
            hasAddend ? addend.memref() : g.memref(), out.memref(), 0.0,
            hasAddend);
      };
      EXPECT_KERNEL_OK(fast, call(fast, got));
      EXPECT_KERNEL_OK(ref, call(ref, want));
      EXPECT_TRUE(sameBits(got, want)) << got.describe();
      EXPECT_TRUE(got.gapsIntact());
      if (layout != S)
        EXPECT_EQ(fast.implOf(node), hasAddend ? "dense_sum" : "dense");
      ++node;
    }
  }
}

TEST(Bf16PoolTrainingTest, MaxAndAdaptiveMatchTheWidenedReference) {
  TestContext fast(MEMFMT_KERNELS_FAST), ref(MEMFMT_KERNELS_REFERENCE);
  int64_t node = 0;
  for (Layout layout : {C, CL, S}) {
    // The ResNet stem's 3x3 / 2 max pool with padding 1 (overlapping
    // windows, so a position several cells chose sums their gradients),
    // on an odd image.
    const std::vector<int64_t> in = {2, 5, 9, 7}, out = {2, 5, 5, 4};
    Half x = randomBf16(in, layout, 51);
    x.flat(10) = 0x7fc0; // A NaN wins its windows.
    Half y(out, layout), yRef(out, layout);
    TestTensor<int64_t> idx(out, layout), idxRef(out, layout);
    auto pool = [&](TestContext &ctx, Half &o, TestTensor<int64_t> &i) {
      return _mlir_ciface_memfmt_max_pool2d_with_indices_bf16(
          ctx, node, x.memref(), o.memref(), i.memref(), 3, 3, 2, 2, 1, 1, 1,
          1);
    };
    EXPECT_KERNEL_OK(fast, pool(fast, y, idx));
    EXPECT_KERNEL_OK(ref, pool(ref, yRef, idxRef));
    EXPECT_TRUE(sameBits(y, yRef)) << x.describe();
    for (int64_t i = 0; i < idx.numElements(); ++i)
      ASSERT_EQ(idx.flat(i), idxRef.flat(i)) << "index " << i;
    if (layout == CL)
      EXPECT_EQ(fast.implOf(node), "channels_last");
    ++node;

    const Half go = randomBf16(out, layout, 52);
    Half gi(in, layout), giRef(in, layout);
    auto back = [&](TestContext &ctx, Half &g) {
      return _mlir_ciface_memfmt_max_pool2d_with_indices_backward_bf16(
          ctx, node, go.memref(), idxRef.memref(), g.memref(), 3, 3, 2, 2, 1,
          1, 1, 1);
    };
    EXPECT_KERNEL_OK(fast, back(fast, gi));
    EXPECT_KERNEL_OK(ref, back(ref, giRef));
    EXPECT_TRUE(nearBits(gi, giRef, 0)) << "max pool gradient " << x.describe();
    if (layout != S)
      EXPECT_NE(fast.implOf(node), "reference_widened");
    ++node;

    // The global average pool's gradient, and overlapping adaptive windows.
    for (const std::vector<int64_t> &cells :
         {std::vector<int64_t>{2, 5, 1, 1}, std::vector<int64_t>{2, 5, 4, 3}}) {
      const Half g = randomBf16(cells, layout, 53);
      Half got(in, layout), want(in, layout);
      auto call = [&](TestContext &ctx, Half &o) {
        return _mlir_ciface_memfmt_adaptive_avg_pool2d_backward_bf16(
            ctx, node, g.memref(), o.memref());
      };
      EXPECT_KERNEL_OK(fast, call(fast, got));
      EXPECT_KERNEL_OK(ref, call(ref, want));
      EXPECT_TRUE(nearBits(got, want, 0)) << "adaptive " << got.describe();
      EXPECT_TRUE(got.gapsIntact());
      if (layout != S)
        EXPECT_NE(fast.implOf(node), "reference_widened");
      ++node;
    }
  }
}

struct ConvCase {
  const char *name;
  int64_t n, c, h, w, o, kh, kw, stride, pad, groups;
};

const ConvCase kConvCases[] = {
    {"3x3", 2, 8, 7, 7, 16, 3, 3, 1, 1, 1},
    {"stride 2", 2, 16, 9, 9, 8, 3, 3, 2, 1, 1},
    {"pointwise", 2, 32, 5, 5, 16, 1, 1, 1, 0, 1},
    {"stride-2 pointwise", 1, 16, 8, 8, 32, 1, 1, 2, 0, 1},
    {"grouped", 1, 8, 6, 6, 8, 3, 3, 1, 1, 4},
    {"depthwise", 2, 8, 7, 7, 8, 3, 3, 1, 1, 8},
    {"depthwise stride 2 multiplier 2", 1, 6, 9, 9, 12, 5, 5, 2, 2, 6},
    {"one pixel", 3, 4, 1, 1, 5, 1, 1, 1, 0, 1},
    {"stem", 2, 3, 16, 16, 8, 7, 7, 2, 3, 1},
};

class Bf16ConvBackwardTest
    : public ::testing::TestWithParam<std::tuple<ConvCase, Layout>> {};

TEST_P(Bf16ConvBackwardTest, MatchesTheWidenedReference) {
  if (!memfmt_runtime_has_onednn())
    GTEST_SKIP() << "no oneDNN in this build";
  // Named copies: a lambda below captures them (structured bindings cannot
  // be captured in C++17).
  const ConvCase cs = std::get<0>(GetParam());
  const Layout layout = std::get<1>(GetParam());
  TestContext fast(MEMFMT_KERNELS_FAST), ref(MEMFMT_KERNELS_REFERENCE);
  const int64_t oh = (cs.h + 2 * cs.pad - cs.kh) / cs.stride + 1,
                ow = (cs.w + 2 * cs.pad - cs.kw) / cs.stride + 1;
  const std::vector<int64_t> inSizes = {cs.n, cs.c, cs.h, cs.w},
                             outSizes = {cs.n, cs.o, oh, ow},
                             wSizes = {cs.o, cs.c / cs.groups, cs.kh, cs.kw};
  const Half x = randomBf16(inSizes, layout, 31),
             go = randomBf16(outSizes, layout, 32),
             w = randomBf16(wSizes, layout, 33);
  const std::string what = std::string(cs.name) + " " + x.describe();
  int64_t node = 0;
  // All three gradients, then the first layer's case: no grad_input, the
  // input standing in for it.
  for (int64_t hasGradInput : {1, 0}) {
    Half gi(inSizes, layout), giRef(inSizes, layout);
    Tensor gw(wSizes, layout), gb({cs.o}), gwRef(wSizes, layout),
        gbRef({cs.o});
    auto call = [&](TestContext &ctx, Half &giOut, Tensor &gwOut,
                    Tensor &gbOut) {
      return _mlir_ciface_memfmt_convolution_backward_bf16(
          ctx, node, go.memref(), x.memref(), w.memref(),
          hasGradInput ? giOut.memref() : x.memref(), gwOut.memref(),
          gbOut.memref(), cs.stride, cs.stride, cs.pad, cs.pad, cs.pad,
          cs.pad, 1, 1, cs.groups, hasGradInput, 1, 1);
    };
    const Half xBefore = x;
    EXPECT_KERNEL_OK(fast, call(fast, gi, gw, gb));
    EXPECT_KERNEL_OK(ref, call(ref, giRef, gwRef, gbRef));
    EXPECT_TRUE(sameBits(x, xBefore)) << "the stand-in was written, " << what;
    std::string impl = fast.implOf(node);
    if (nativeBf16() && layout != S)
      EXPECT_NE(impl, "reference_widened") << what;
    // A depthwise convolution's gradients multiply in f32 (oneDNN 2.6's
    // bf16 depthwise kernels are slower), its operands widened exactly.
    if (memfmt_runtime_has_onednn() && layout != S && cs.groups == cs.c)
      EXPECT_EQ(impl, "onednn_f32_math") << what;
    // Products of bf16 values are exact in f32: only the order of the f32
    // sums differs.
    if (hasGradInput)
      EXPECT_TRUE(nearBits(gi, giRef)) << "grad_input " << what << " (" << impl
                                       << ")";
    EXPECT_TRUE(nearF32(gw, gwRef, 1e-5))
        << "grad_weight " << what << " (" << impl << ")";
    EXPECT_TRUE(nearF32(gb, gbRef, 1e-5)) << "grad_bias " << what;
    ++node;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Bf16ConvBackwardTest,
    ::testing::Combine(::testing::ValuesIn(kConvCases),
                       ::testing::Values(C, CL, S)),
    [](const auto &info) { return caseName(info.param); });

TEST(Bf16LinearBackwardTest, MatchesTheWidenedReference) {
  TestContext fast(MEMFMT_KERNELS_FAST), ref(MEMFMT_KERNELS_REFERENCE);
  int64_t node = 0;
  for (int64_t n : {1, 7}) {
    const int64_t k = 33, m = 10;
    const Half x = randomBf16({n, k}, C, 41), go = randomBf16({n, m}, C, 42),
               w = randomBf16({m, k}, C, 43);
    Half gi({n, k}), giRef({n, k});
    Tensor gw({m, k}), gb({m}), gwRef({m, k}), gbRef({m});
    auto call = [&](TestContext &ctx, Half &giOut, Tensor &gwOut,
                    Tensor &gbOut) {
      return _mlir_ciface_memfmt_linear_backward_bf16(
          ctx, node, go.memref(), x.memref(), w.memref(), giOut.memref(),
          gwOut.memref(), gbOut.memref(), 1, 1, 1);
    };
    EXPECT_KERNEL_OK(fast, call(fast, gi, gw, gb));
    EXPECT_KERNEL_OK(ref, call(ref, giRef, gwRef, gbRef));
    if (memfmt_runtime_has_onednn() && nativeBf16())
      EXPECT_EQ(fast.implOf(node), "onednn");
    EXPECT_TRUE(nearBits(gi, giRef)) << "grad_input, batch " << n;
    EXPECT_TRUE(nearF32(gw, gwRef, 1e-5)) << "grad_weight, batch " << n;
    EXPECT_TRUE(nearF32(gb, gbRef, 1e-5)) << "grad_bias, batch " << n;
    ++node;
  }
}

} // namespace
