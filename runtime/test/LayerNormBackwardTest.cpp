//===- LayerNormBackwardTest.cpp - The gradients of layer norm ------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// layer_norm_backward on the reference and fast kernels:
//  * against ATen's formula evaluated in double (ranks 1, 2 and 4; D = 1,
//    odd D and D = 96; rows = 1; every test layout, the same for all
//    tensors and mixed; the [N, H, W, C] views of channels-last
//    activations; with and without weight; each gradient absent in turn,
//    its buffer untouched);
//  * against central differences of the naive forward (Naive.h's
//    naiveLayerNorm, in double): the formula is the forward's derivative;
//  * bf16: exactly the f32 kernel's result on the same (bf16) values,
//    rounded once;
//  * the weight and bias gradients do not depend on the thread count;
//  * no rows (zeros for grad_weight and grad_bias), and bad calls.
//
//===----------------------------------------------------------------------===//

#include "Gradients.h"
#include "RuntimeTest.h"

#include "memfmt/runtime/io/HalfFloat.h"

#include <cmath>

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

using Half = TestTensor<uint16_t>;

/// The three gradients by ATen's formula, in double, with the magnitudes
/// that bound f32 rounding (A_j = (|x_j| + |mean|) * rstd bounds |xhat_j|
/// and the error rounding the mean in f32 makes in it).
Gradients naiveLayerNormBackward(const Tensor &go, const Tensor &x,
                                 const Tensor *w, double eps) {
  const int64_t d = x.sizes.back(), rows = d ? x.numElements() / d : 0;
  Gradients g;
  g.input.value.assign(x.numElements(), 0.0);
  g.input.magnitude.assign(x.numElements(), 0.0);
  g.weight.value.assign(d, 0.0);
  g.weight.magnitude.assign(d, 0.0);
  g.bias.value.assign(d, 0.0);
  g.bias.magnitude.assign(d, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < d; ++c)
      sum += x.flat(r * d + c);
    const double mean = sum / double(d);
    double squares = 0;
    for (int64_t c = 0; c < d; ++c)
      squares += (x.flat(r * d + c) - mean) * (x.flat(r * d + c) - mean);
    const double rstd = 1.0 / std::sqrt(squares / double(d) + eps);
    double sumG = 0, sumGX = 0, sumAbsG = 0, sumAbsGA = 0;
    for (int64_t c = 0; c < d; ++c) {
      double xhat = (x.flat(r * d + c) - mean) * rstd;
      double a = (std::fabs(x.flat(r * d + c)) + std::fabs(mean)) * rstd;
      double o = go.flat(r * d + c);
      double gc = o * (w ? double(w->at({c})) : 1.0);
      sumG += gc;
      sumGX += gc * xhat;
      sumAbsG += std::fabs(gc);
      sumAbsGA += std::fabs(gc) * a;
      g.weight.value[c] += o * xhat;
      g.weight.magnitude[c] += std::fabs(o) * a;
      g.bias.value[c] += o;
      g.bias.magnitude[c] += std::fabs(o);
    }
    for (int64_t c = 0; c < d; ++c) {
      int64_t i = r * d + c;
      double xhat = (x.flat(i) - mean) * rstd;
      double a = (std::fabs(x.flat(i)) + std::fabs(mean)) * rstd;
      double gc = go.flat(i) * (w ? double(w->at({c})) : 1.0);
      g.input.value[i] = rstd * (gc - sumG / d - xhat * sumGX / d);
      g.input.magnitude[i] =
          rstd * (std::fabs(gc) + sumAbsG / d + a * sumAbsGA / d);
    }
  }
  return g;
}

/// A [d] weight with stride 2 and an offset, values in [0.5, 2).
Tensor weightOf(int64_t d) {
  Tensor t({d}, std::vector<int64_t>{2}, 1, 2 * d + 2);
  t.fillRandom(61, 0.5, 2);
  return t;
}

struct Call {
  Tensor go, x, weight, gi, gw, gb;
  bool hasWeight;
  const int64_t *flags;
};

int32_t run(TestContext &ctx, int64_t node, Call &c, double eps) {
  return _mlir_ciface_memfmt_layer_norm_backward_f32(
      ctx, node, c.go.memref(), c.x.memref(),
      c.hasWeight ? c.weight.memref() : c.x.memref(), c.gi.memref(),
      c.gw.memref(), c.gb.memref(), eps, c.hasWeight, c.flags[0], c.flags[1],
      c.flags[2]);
}

/// Checks the present gradients of `c` against the naive ones (the
/// reference to double rounding, the fast loop to f32 rounding over rows of
/// d) and the absent ones untouched.
void check(const Call &c, memfmt_kernels_t kernels, double eps,
           const std::string &what) {
  const int64_t d = c.x.sizes.back();
  Gradients want =
      naiveLayerNormBackward(c.go, c.x, c.hasWeight ? &c.weight : nullptr, eps);
  const double factor = kernels == MEMFMT_KERNELS_REFERENCE
                            ? kReferenceFactor
                            : floatSumFactor(d);
  const Tensor *outs[3] = {&c.gi, &c.gw, &c.gb};
  const Expected *wants[3] = {&want.input, &want.weight, &want.bias};
  for (int k = 0; k < 3; ++k) {
    if (c.flags[k])
      expectClose(*outs[k], *wants[k], factor, what);
    else
      EXPECT_TRUE(untouched(*outs[k])) << what << ": absent gradient " << k;
  }
}

Call makeCall(const std::vector<int64_t> &shape, Layout xLayout,
              Layout goLayout, Layout giLayout, bool hasWeight,
              const int64_t *flags) {
  const int64_t d = shape.back();
  Call c{Tensor(shape, goLayout), Tensor(shape, xLayout), weightOf(d),
         Tensor(shape, giLayout), Tensor({d}),
         Tensor({d}, std::vector<int64_t>{3}, 2, 3 * d + 3), hasWeight,
         flags};
  c.x.fillRandom(71, -3, 3);
  c.go.fillRandom(72, -1, 1);
  return c;
}

TEST(LayerNormBackwardTest, MatchesTheFormulaInEveryRankAndLayout) {
  const std::vector<std::vector<int64_t>> shapes = {
      {1},       {7},          {96},         {3, 1},       {5, 7},
      {4, 96},   {1, 97},      {2, 3, 4, 1}, {2, 3, 4, 7}, {2, 3, 5, 96},
      {1, 1, 1, 5}, {2, 1, 3, 96}};
  const Layout layouts[][3] = {{C, C, C},     {CL, CL, CL}, {CLS, CLS, CLS},
                               {S, S, S},    {C, S, CL},   {S, C, C},
                               {CLS, C, CLS}};
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const auto &shape : shapes)
      for (const auto &l : layouts)
        for (bool hasWeight : {false, true})
          for (const auto &flags : kGradientFlagSets) {
            Call c = makeCall(shape, l[0], l[1], l[2], hasWeight, flags);
            std::string what = std::string(toString(kernels)) + " x " +
                               c.x.describe() + " go " + c.go.describe() +
                               " gi " + c.gi.describe() +
                               (hasWeight ? " weight" : "") + " flags " +
                               std::to_string(flags[0]) +
                               std::to_string(flags[1]) +
                               std::to_string(flags[2]);
            ASSERT_KERNEL_OK(ctx, run(ctx, node, c, 1e-5)) << what;
            check(c, kernels, 1e-5, what);
            // Row-major rows (rank < 4 in the slice layouts too) take the
            // fast loop; a strided last dim the reference.
            std::string impl = ctx.implOf(node);
            bool rowMajor = true;
            for (Layout layout : l)
              rowMajor &= layout == C || shape.size() == 1 ||
                          (shape.size() < 4 && layout != S);
            if (kernels == MEMFMT_KERNELS_FAST && rowMajor)
              EXPECT_EQ(impl, "rows") << what;
            if (kernels == MEMFMT_KERNELS_REFERENCE)
              EXPECT_EQ(impl, "reference") << what;
            ++node;
          }
  }
}

/// The [N, H, W, C] permutation of a channels-last activation (dense rows,
/// the ConvNeXt case: the fast loop) and of an NCHW one (the reference).
TEST(LayerNormBackwardTest, ChannelsLastViews) {
  const int64_t n = 2, h = 3, w = 5;
  for (int64_t c : {6, 96})
    for (bool fromChannelsLast : {true, false}) {
      std::vector<int64_t> shape = {n, h, w, c};
      std::vector<int64_t> strides =
          fromChannelsLast ? std::vector<int64_t>{h * w * c, w * c, c, 1}
                           : std::vector<int64_t>{c * h * w, w, 1, h * w};
      for (memfmt_kernels_t kernels : kBothKernels) {
        TestContext ctx(kernels);
        const int64_t *flags = kGradientFlagSets[0];
        Call call{Tensor(shape, strides, 0, n * c * h * w),
                  Tensor(shape, strides, 0, n * c * h * w),
                  weightOf(c),
                  Tensor(shape, strides, 0, n * c * h * w),
                  Tensor({c}),
                  Tensor({c}),
                  true,
                  flags};
        call.x.fillRandom(81, -2, 2);
        call.go.fillRandom(82, -1, 1);
        std::string what = std::string(toString(kernels)) + " " +
                           call.x.describe();
        ASSERT_KERNEL_OK(ctx, run(ctx, 0, call, 1e-6)) << what;
        check(call, kernels, 1e-6, what);
        EXPECT_EQ(ctx.implOf(0),
                  kernels == MEMFMT_KERNELS_FAST && fromChannelsLast
                      ? "rows"
                      : "reference")
            << what;
      }
    }
}

/// sum(v * layer_norm(x, w, b)) differentiated by central differences of
/// the naive forward in double: grad_input, grad_weight and grad_bias with
/// grad_output = v are its partial derivatives.
TEST(LayerNormBackwardTest, IsTheDerivativeOfTheForward) {
  const std::vector<int64_t> shape = {3, 2, 7};
  const int64_t d = 7;
  const double eps = 1e-5, step = 1e-4;
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    Call c = makeCall(shape, C, C, C, true, kGradientFlagSets[0]);
    ASSERT_KERNEL_OK(ctx, run(ctx, 0, c, eps));
    Tensor bias({d});
    bias.fillRandom(91, -1, 1);
    auto objective = [&](const Tensor &x, const Tensor &w, const Tensor &b) {
      Expected y = naiveLayerNorm(x, &w, &b, eps);
      double sum = 0;
      for (int64_t i = 0; i < x.numElements(); ++i)
        sum += c.go.flat(i) * y.value[i];
      return sum;
    };
    // d objective / d t[i] for t one of x, weight, bias.
    auto derivative = [&](Tensor &t, int64_t i) {
      const float saved = t.flat(i);
      t.flat(i) = saved + float(step);
      double up = objective(c.x, c.weight, bias);
      t.flat(i) = saved - float(step);
      double down = objective(c.x, c.weight, bias);
      t.flat(i) = saved;
      return (up - down) / (2 * step);
    };
    const char *kernelName = toString(kernels);
    for (int64_t i = 0; i < c.x.numElements(); ++i)
      EXPECT_NEAR(c.gi.flat(i), derivative(c.x, i), 2e-3)
          << kernelName << " grad_input " << i;
    for (int64_t i = 0; i < d; ++i) {
      EXPECT_NEAR(c.gw.flat(i), derivative(c.weight, i), 2e-3)
          << kernelName << " grad_weight " << i;
      EXPECT_NEAR(c.gb.flat(i), derivative(bias, i), 2e-3)
          << kernelName << " grad_bias " << i;
    }
  }
}

/// bf16 activations (and weight): the f32 kernel's result on the same
/// values, rounded to bf16 once; the f32 weight and bias gradients equal.
TEST(LayerNormBackwardTest, Bf16IsTheF32KernelRoundedOnce) {
  namespace io = memfmt::io;
  for (memfmt_kernels_t kernels : kBothKernels)
    for (Layout layout : {C, S}) {
      TestContext ctx(kernels);
      const std::vector<int64_t> shape = {4, 3, 40};
      const int64_t d = 40;
      Call f = makeCall(shape, layout, layout, layout, true,
                        kGradientFlagSets[0]);
      Half x(shape, layout), go(shape, layout), gi(shape, layout), w({d});
      // Values representable in bf16, in both calls.
      for (int64_t i = 0; i < f.x.numElements(); ++i) {
        x.flat(i) = io::floatToBFloat16(f.x.flat(i));
        f.x.flat(i) = io::bfloat16ToFloat(x.flat(i));
        go.flat(i) = io::floatToBFloat16(f.go.flat(i));
        f.go.flat(i) = io::bfloat16ToFloat(go.flat(i));
      }
      for (int64_t i = 0; i < d; ++i) {
        w.flat(i) = io::floatToBFloat16(f.weight.flat(i));
        f.weight.flat(i) = io::bfloat16ToFloat(w.flat(i));
      }
      Tensor gw({d}), gb({d});
      ASSERT_KERNEL_OK(ctx, run(ctx, 0, f, 1e-5));
      ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_layer_norm_backward_bf16(
                                ctx, 1, go.memref(), x.memref(), w.memref(),
                                gi.memref(), gw.memref(), gb.memref(), 1e-5,
                                1, 1, 1, 1));
      std::string what =
          std::string(toString(kernels)) + " " + x.describe() + " " +
          ctx.implOf(0) + " / " + ctx.implOf(1);
      for (int64_t i = 0; i < gi.numElements(); ++i)
        ASSERT_EQ(gi.flat(i), io::floatToBFloat16(f.gi.flat(i)))
            << what << " grad_input " << i;
      for (int64_t i = 0; i < d; ++i) {
        EXPECT_EQ(gw.flat(i), f.gw.flat(i)) << what << " grad_weight " << i;
        EXPECT_EQ(gb.flat(i), f.gb.flat(i)) << what << " grad_bias " << i;
      }
    }
}

/// The column sums' order is fixed by the shape: one thread and two give
/// the same bits (rows enough for several chunks per thread).
TEST(LayerNormBackwardTest, WeightGradientsDoNotDependOnTheThreadCount) {
  const std::vector<int64_t> shape = {8, 7, 7, 96};
  Tensor results[2][2] = {{Tensor({96}), Tensor({96})},
                          {Tensor({96}), Tensor({96})}};
  for (int threads : {1, 2}) {
    TestContext ctx(MEMFMT_KERNELS_FAST, threads);
    Call c = makeCall(shape, C, C, C, true, kGradientFlagSets[0]);
    ASSERT_KERNEL_OK(ctx, run(ctx, 0, c, 1e-6));
    results[threads - 1][0] = c.gw;
    results[threads - 1][1] = c.gb;
  }
  for (int k = 0; k < 2; ++k)
    for (int64_t i = 0; i < 96; ++i)
      ASSERT_EQ(results[0][k].flat(i), results[1][k].flat(i))
          << (k ? "grad_bias " : "grad_weight ") << i;
}

/// No rows: grad_weight and grad_bias are zeros (written), grad_input
/// empty.
TEST(LayerNormBackwardTest, NoRows) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    Call c = makeCall({0, 3, 5}, C, C, C, true, kGradientFlagSets[0]);
    ASSERT_KERNEL_OK(ctx, run(ctx, 0, c, 1e-5)) << toString(kernels);
    for (int64_t i = 0; i < 5; ++i) {
      EXPECT_EQ(c.gw.flat(i), 0.0f) << toString(kernels);
      EXPECT_EQ(c.gb.flat(i), 0.0f) << toString(kernels);
    }
  }
}

TEST(LayerNormBackwardTest, RejectsBadCalls) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  const int64_t *all = kGradientFlagSets[0];
  {
    Call c = makeCall({2, 5}, C, C, C, true, all);
    c.go = Tensor({2, 4});
    expectInvalid(ctx, run(ctx, 0, c, 1e-5), "layer_norm_backward",
                  "grad_output has shape [2, 4]");
  }
  {
    Call c = makeCall({2, 5}, C, C, C, true, all);
    c.weight = Tensor({4});
    expectInvalid(ctx, run(ctx, 1, c, 1e-5), "layer_norm_backward",
                  "weight has shape [4]");
  }
  {
    Call c = makeCall({2, 5}, C, C, C, true, all);
    c.gw = Tensor({6});
    expectInvalid(ctx, run(ctx, 2, c, 1e-5), "layer_norm_backward",
                  "grad_weight has shape [6]");
  }
  {
    Call c = makeCall({2, 5}, C, C, C, true, all);
    expectInvalid(ctx, run(ctx, 3, c, std::nan("")), "layer_norm_backward",
                  "eps is nan");
  }
  {
    // grad_input in grad_output's buffer.
    Call c = makeCall({2, 5}, C, C, C, true, all);
    expectInvalid(ctx,
                  _mlir_ciface_memfmt_layer_norm_backward_f32(
                      ctx, 4, c.go.memref(), c.x.memref(), c.weight.memref(),
                      c.go.memref(), c.gw.memref(), c.gb.memref(), 1e-5, 1, 1,
                      1, 1),
                  "layer_norm_backward", "grad_input");
  }
}

} // namespace
