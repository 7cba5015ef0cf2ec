//===- LossScaleTest.cpp - The loss scaler's kernels ----------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Dynamic loss scaling (Kernels.def: loss_scale, unscale_gradient,
// update_loss_scale, and found_inf on sgd_update and increment) on both
// kernel families, against GradScaler's semantics written out here from
// ATen's kernels (_amp_foreach_non_finite_check_and_unscale_,
// _amp_update_scale_):
//  * loss_scale: the state's scale, or init_scale where it is 0 (unset);
//  * unscale_gradient in every test layout, in place and not: each element
//    times (float)(1 / (double)scale), bitwise; the flag raised by an inf, a
//    -inf or a NaN anywhere (or carried in from found_inf) and 0 otherwise;
//    dense tensors of one layout take the flat loop in the fast family;
//  * update_loss_scale: backoff on a non-finite step, growth after
//    growth_interval finite steps, a growth that would overflow kept out,
//    in place;
//  * a skipped sgd_update keeps the parameter and the buffer (in place and
//    copied out), a skipped increment keeps the count;
//  * bad calls (a scale that is not 0-d, a gradient of another shape, a
//    backoff >= 1) fail with a message.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include <cmath>
#include <cstdio>
#include <limits>

using namespace memfmt::test;

namespace {

const memfmt_kernels_t kFamilies[] = {MEMFMT_KERNELS_FAST,
                                      MEMFMT_KERNELS_REFERENCE};

Tensor scalar(float value) {
  Tensor t({});
  t.flat(0) = value;
  return t;
}

TEST(LossScaleTest, UnsetScaleIsTheInitialOne) {
  for (memfmt_kernels_t kernels : kFamilies) {
    TestContext ctx(kernels);
    Tensor state = scalar(0.0f), out = scalar(-1.0f);
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_loss_scale_f32(
                              ctx, 0, state.memref(), out.memref(), 65536.0));
    EXPECT_EQ(out.flat(0), 65536.0f);
    state.flat(0) = 1024.0f;
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_loss_scale_f32(
                              ctx, 1, state.memref(), out.memref(), 65536.0));
    EXPECT_EQ(out.flat(0), 1024.0f);
  }
}

TEST(UnscaleGradientTest, MultipliesByTheRoundedInverseAndFlags) {
  const std::vector<int64_t> shape = {3, 5, 2, 4};
  const float kInf = std::numeric_limits<float>::infinity();
  for (memfmt_kernels_t kernels : kFamilies)
    for (Layout layout : kAllLayouts)
      for (bool inPlace : {true, false})
        for (float bad : {0.0f, kInf, -kInf, std::nanf("")}) {
          TestContext ctx(kernels);
          Tensor grad(shape, layout), out(shape, Layout::Strided);
          grad.fillRandom(4, -1e4, 1e4);
          if (bad != 0.0f)
            grad.flat(grad.numElements() - 7) = bad;
          const Tensor grad0 = grad;
          // 3 has no exact inverse: the factor is 1/3 rounded once.
          Tensor scale = scalar(3.0f), flag = scalar(0.0f);
          const Tensor &gOut = inPlace ? grad : out;
          EXPECT_KERNEL_OK(ctx,
                           _mlir_ciface_memfmt_unscale_gradient_f32(
                               ctx, 0, grad.memref(), scale.memref(),
                               flag.memref(), gOut.memref(), flag.memref(), 1));
          const float inverse = static_cast<float>(1.0 / 3.0);
          std::string what = grad.describe() + (inPlace ? " in place" : "") +
                             " with " + std::to_string(bad);
          for (int64_t i = 0; i < grad.numElements(); ++i) {
            float want = grad0.flat(i) * inverse;
            if (std::isnan(want))
              ASSERT_TRUE(std::isnan(gOut.flat(i))) << what << " " << i;
            else
              ASSERT_EQ(gOut.flat(i), want) << what << " element " << i;
          }
          EXPECT_EQ(flag.flat(0), bad != 0.0f ? 1.0f : 0.0f) << what;
          EXPECT_TRUE(gOut.gapsIntact()) << what;
          bool dense = inPlace && (layout == Layout::Contiguous ||
                                   layout == Layout::ChannelsLast);
          EXPECT_EQ(ctx.implOf(0), dense && kernels == MEMFMT_KERNELS_FAST
                                       ? "dense"
                                       : "strided")
              << what;
        }
}

TEST(UnscaleGradientTest, CarriesTheFlagOfEarlierGradients) {
  for (memfmt_kernels_t kernels : kFamilies) {
    TestContext ctx(kernels);
    Tensor grad({6}), out({6});
    grad.fillRandom(1);
    Tensor scale = scalar(1.0f), before = scalar(1.0f), after = scalar(-1.0f);
    EXPECT_KERNEL_OK(ctx,
                     _mlir_ciface_memfmt_unscale_gradient_f32(
                         ctx, 0, grad.memref(), scale.memref(), before.memref(),
                         out.memref(), after.memref(), 1));
    EXPECT_EQ(after.flat(0), 1.0f);
    // A scale of 1 leaves the gradient as it is.
    for (int64_t i = 0; i < 6; ++i)
      EXPECT_EQ(out.flat(i), grad.flat(i));
    // Without found_inf (has_found_inf 0) only this gradient counts.
    EXPECT_KERNEL_OK(ctx,
                     _mlir_ciface_memfmt_unscale_gradient_f32(
                         ctx, 1, grad.memref(), scale.memref(), before.memref(),
                         out.memref(), after.memref(), 0));
    EXPECT_EQ(after.flat(0), 0.0f);
  }
}

TEST(UpdateLossScaleTest, BacksOffAndGrowsAsGradScaler) {
  for (memfmt_kernels_t kernels : kFamilies) {
    TestContext ctx(kernels);
    Tensor scale = scalar(65536.0f), flag = scalar(0.0f);
    IndexTensor tracker({});
    tracker.flat(0) = 0;
    auto update = [&] {
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_update_loss_scale_f32(
                                ctx, 0, scale.memref(), tracker.memref(),
                                flag.memref(), scale.memref(), tracker.memref(),
                                2.0, 0.5, 3));
    };
    update();
    update();
    EXPECT_EQ(scale.flat(0), 65536.0f);
    EXPECT_EQ(tracker.flat(0), 2);
    update(); // The third finite step grows the scale.
    EXPECT_EQ(scale.flat(0), 131072.0f);
    EXPECT_EQ(tracker.flat(0), 0);
    update();
    flag.flat(0) = 1.0f;
    update(); // A non-finite step backs off and restarts the count.
    EXPECT_EQ(scale.flat(0), 65536.0f);
    EXPECT_EQ(tracker.flat(0), 0);
    // A growth past f32's range is not taken; the count restarts anyway.
    flag.flat(0) = 0.0f;
    scale.flat(0) = 3e38f;
    tracker.flat(0) = 2;
    update();
    EXPECT_EQ(scale.flat(0), 3e38f);
    EXPECT_EQ(tracker.flat(0), 0);
  }
}

TEST(SkippedStepTest, KeepsTheParameterBufferAndCount) {
  using namespace memfmt::test::layout_names;
  const std::vector<int64_t> shape = {4, 3, 2, 2};
  for (memfmt_kernels_t kernels : kFamilies)
    for (bool inPlace : {true, false}) {
      TestContext ctx(kernels);
      Tensor param(shape, CL), grad(shape, CL), buf(shape, CL);
      param.fillRandom(1);
      grad.fillRandom(2);
      buf.fillRandom(3);
      Tensor paramOut(shape, S), bufOut(shape, C);
      const Tensor param0 = param, buf0 = buf;
      IndexTensor step({});
      step.flat(0) = 5;
      Tensor flag = scalar(1.0f);
      const Tensor &pOut = inPlace ? param : paramOut;
      const Tensor &bOut = inPlace ? buf : bufOut;
      EXPECT_KERNEL_OK(ctx,
                       _mlir_ciface_memfmt_sgd_update_f32(
                           ctx, 0, param.memref(), grad.memref(), buf.memref(),
                           step.memref(), flag.memref(), pOut.memref(),
                           bOut.memref(), 0.1, 0.9, 0.0, 1e-4, 0, 1, 1));
      for (int64_t i = 0; i < param.numElements(); ++i) {
        ASSERT_EQ(pOut.flat(i), param0.flat(i)) << i;
        ASSERT_EQ(bOut.flat(i), buf0.flat(i)) << i;
      }
      EXPECT_TRUE(pOut.gapsIntact() && bOut.gapsIntact());
      EXPECT_KERNEL_OK(
          ctx, _mlir_ciface_memfmt_increment_i64(
                   ctx, 1, step.memref(), flag.memref(), step.memref(), 1));
      EXPECT_EQ(step.flat(0), 5);
      flag.flat(0) = 0.0f;
      EXPECT_KERNEL_OK(
          ctx, _mlir_ciface_memfmt_increment_i64(
                   ctx, 2, step.memref(), flag.memref(), step.memref(), 1));
      EXPECT_EQ(step.flat(0), 6);
    }
}

TEST(LossScaleErrorTest, BadCallsFailWithAMessage) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor grad({6}), out({6}), shortOut({5}), vector({2});
  Tensor scale = scalar(2.0f), flag = scalar(0.0f);
  IndexTensor tracker({});
  auto expectError = [&](int32_t status, const std::string &message) {
    EXPECT_EQ(status, MEMFMT_STATUS_INVALID_ARGUMENT) << message;
    EXPECT_NE(ctx.lastError().find(message), std::string::npos)
        << ctx.lastError();
  };
  expectError(_mlir_ciface_memfmt_unscale_gradient_f32(
                  ctx, 0, grad.memref(), vector.memref(), flag.memref(),
                  out.memref(), flag.memref(), 0),
              "scale has rank 1 (shape [2]), expected 0");
  expectError(_mlir_ciface_memfmt_unscale_gradient_f32(
                  ctx, 1, grad.memref(), scale.memref(), flag.memref(),
                  shortOut.memref(), flag.memref(), 0),
              "grad_out has shape [5], expected [6] (the gradient's shape)");
  expectError(_mlir_ciface_memfmt_update_loss_scale_f32(
                  ctx, 2, scale.memref(), tracker.memref(), flag.memref(),
                  scale.memref(), tracker.memref(), 2.0, 1.0, 10),
              "backoff_factor is 1.000000, expected a value < 1");
  expectError(_mlir_ciface_memfmt_update_loss_scale_f32(
                  ctx, 3, scale.memref(), tracker.memref(), flag.memref(),
                  scale.memref(), tracker.memref(), 2.0, 0.5, 0),
              "growth_interval");
  expectError(_mlir_ciface_memfmt_loss_scale_f32(ctx, 4, scale.memref(),
                                                 out.memref(), 65536.0),
              "output has rank 1 (shape [6]), expected 0");
}

// ResNet-50's 25.6M gradient elements unscaled in place, the fast family's
// flat loop against the reference family's strided walk, interleaved
// (--gtest_also_run_disabled_tests; prints, checks nothing).
TEST(LossScaleTiming, DISABLED_TimeUnscale) {
  TestContext fast(MEMFMT_KERNELS_FAST), ref(MEMFMT_KERNELS_REFERENCE);
  Tensor grad({25557032}), scale = scalar(65536.0f), flag = scalar(0.0f);
  grad.fillRandom(1);
  for (int round = 0; round < 3; ++round)
    for (TestContext *ctx : {&fast, &ref}) {
      double ms = millisecondsPerCall([&] {
        return _mlir_ciface_memfmt_unscale_gradient_f32(
            *ctx, 0, grad.memref(), scale.memref(), flag.memref(),
            grad.memref(), flag.memref(), 0);
      });
      std::printf("unscale_gradient 25.6M (%s): %.2f ms\n",
                  ctx->implOf(0).c_str(), ms);
    }
}

} // namespace
