//===- TrainingKernelTest.cpp - fill, gradients, loss and SGD -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The training kernels other than batch norm, on both kernel families and in
// every test layout, against naive implementations written from PyTorch's
// definitions:
//  * fill and threshold_backward (ATen's `self <= threshold ? 0 : grad`, so
//    a NaN self passes its gradient; with and without the fused addend),
//    exact;
//  * avg_pool2d_backward: each grad_output cell spread over its window with
//    avg_pool2d's divisor, with and without count_include_pad, ceil mode;
//  * cross_entropy_loss(+backward) in double, including a logit of 1e4
//    (a naive exp overflows) and a target out of range (an error naming the
//    row and value);
//  * sgd_update against a scalar re-implementation of torch.optim.SGD's
//    loop (torch 1.13) in f32 with fused multiply-adds, compared bitwise:
//    every option (no momentum, momentum, dampening on the first and a later
//    step, nesterov, weight decay), in place and out of place;
//  * all_reduce (sum and mean) without a communicator (a copy) and with a
//  simulated
//    group of replicas (its sum adds the other replicas' values), dense,
//    strided, in place; a failing communicator's message reaches the
//    context; memfmt_context_set_communicator checks its argument.
//  * increment (the optimizer's step count), in place or not.
// Bad calls fail with a message (aliasing, nesterov with dampening, a step
// count that is not 0-d).
//
//===----------------------------------------------------------------------===//

#include "RawView.h"
#include "RuntimeTest.h"

#include "memfmt/runtime/io/HalfFloat.h"

#include <functional>

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

const memfmt_kernels_t kFamilies[] = {MEMFMT_KERNELS_FAST,
                                      MEMFMT_KERNELS_REFERENCE};

void expectError(const TestContext &ctx, int32_t status,
                 const std::string &message) {
  EXPECT_EQ(status, MEMFMT_STATUS_INVALID_ARGUMENT) << message;
  EXPECT_NE(ctx.lastError().find(message), std::string::npos)
      << ctx.lastError();
}

//===----------------------------------------------------------------------===//
// fill, threshold_backward
//===----------------------------------------------------------------------===//

TEST(FillTest, WritesEveryElementAndNothingElse) {
  for (memfmt_kernels_t kernels : kFamilies)
    for (Layout layout : kAllLayouts) {
      TestContext ctx(kernels);
      Tensor t({2, 3, 4, 5}, layout);
      EXPECT_KERNEL_OK(ctx,
                       _mlir_ciface_memfmt_fill_f32(ctx, 0, t.memref(), 0.1));
      for (int64_t i = 0; i < t.numElements(); ++i)
        ASSERT_EQ(t.flat(i), 0.1f) << t.describe() << " element " << i;
      EXPECT_TRUE(t.gapsIntact()) << t.describe();
      Tensor scalar({});
      EXPECT_KERNEL_OK(
          ctx, _mlir_ciface_memfmt_fill_f32(ctx, 1, scalar.memref(), 1.0));
      EXPECT_EQ(scalar.flat(0), 1.0f);
    }
}

/// f16 and bf16 get `value` rounded to nearest even (0.1 is inexact in
/// both), in every layout.
TEST(FillTest, ReducedPrecisionRoundsTheValue) {
  namespace io = memfmt::io;
  for (memfmt_kernels_t kernels : kFamilies)
    for (Layout layout : kAllLayouts) {
      TestContext ctx(kernels);
      TestTensor<uint16_t> half({2, 3, 4, 5}, layout),
          brain({2, 3, 4, 5}, layout);
      EXPECT_KERNEL_OK(
          ctx, _mlir_ciface_memfmt_fill_f16(ctx, 0, half.memref(), 0.1));
      EXPECT_KERNEL_OK(
          ctx, _mlir_ciface_memfmt_fill_bf16(ctx, 1, brain.memref(), 0.1));
      for (int64_t i = 0; i < half.numElements(); ++i) {
        ASSERT_EQ(half.flat(i), io::floatToHalf(0.1f)) << half.describe();
        ASSERT_EQ(brain.flat(i), io::floatToBFloat16(0.1f)) << brain.describe();
      }
      EXPECT_TRUE(half.gapsIntact() && brain.gapsIntact()) << half.describe();
    }
}

TEST(ThresholdBackwardTest, MatchesATen) {
  const std::pair<Layout, Layout> layouts[] = {{C, C}, {CL, CL}, {CLS, CLS},
                                               {S, S}, {C, CL},  {CL, S}};
  for (memfmt_kernels_t kernels : kFamilies)
    for (auto [inLayout, outLayout] : layouts)
      for (double threshold : {0.0, 0.25})
        for (int64_t hasAddend : {0, 1}) {
          TestContext ctx(kernels);
          // The addend (the fused gradient sum) in the output's layout.
          Tensor go({2, 5, 3, 7}, inLayout), self({2, 5, 3, 7}, inLayout),
              addend({2, 5, 3, 7}, outLayout), gi({2, 5, 3, 7}, outLayout);
          go.fillRandom(1);
          self.fillRandom(2);
          addend.fillRandom(3);
          self.flat(3) = 0.0f;
          self.flat(4) = 0.25f;
          self.flat(5) = std::numeric_limits<float>::quiet_NaN();
          std::string what = self.describe() + " -> " + gi.describe() +
                             (hasAddend ? " with addend" : "");
          EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_threshold_backward_f32(
                                    ctx, 0, go.memref(), self.memref(),
                                    addend.memref(), gi.memref(), threshold,
                                    hasAddend));
          for (int64_t i = 0; i < gi.numElements(); ++i) {
            float s = self.flat(i);
            // The add kernel's rounding: one f32 sum.
            float grad = hasAddend ? go.flat(i) + addend.flat(i) : go.flat(i);
            // ATen: self <= threshold ? 0 : grad (NaN compares false).
            float want = s <= float(threshold) ? 0.0f : grad;
            ASSERT_EQ(gi.flat(i), want) << what << " element " << i;
          }
          EXPECT_TRUE(gi.gapsIntact()) << what;
          if (kernels == MEMFMT_KERNELS_FAST && inLayout == outLayout &&
              inLayout != S && inLayout != CLS)
            EXPECT_EQ(ctx.implOf(0), hasAddend ? "dense_sum" : "dense") << what;
        }
}

//===----------------------------------------------------------------------===//
// avg_pool2d_backward
//===----------------------------------------------------------------------===//

struct AvgCase {
  const char *name;
  int64_t n, c, h, w;
  PoolAttrs p;
  bool ceilMode;
};

void PrintTo(const AvgCase &c, std::ostream *os) { *os << c.name; }

/// The naive gradient: each grad_output cell adds go / divisor to the real
/// input positions of its window (the divisor as in naiveAvgPool).
Expected naiveAvgBackward(const Tensor &go, int64_t h, int64_t w,
                          const PoolAttrs &p) {
  int64_t n = go.sizes[0], c = go.sizes[1], oh = go.sizes[2], ow = go.sizes[3];
  Expected e;
  e.value.assign(n * c * h * w, 0.0);
  e.magnitude.assign(n * c * h * w, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          int64_t real = 0, padded = 0;
          for (int pass = 0; pass < 2; ++pass)
            for (int64_t r = 0; r < p.kernelH; ++r)
              for (int64_t s = 0; s < p.kernelW; ++s) {
                int64_t iy = y * p.strideH - p.padTop + r;
                int64_t ix = x * p.strideW - p.padLeft + s;
                bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
                if (pass == 0) {
                  padded += iy >= -p.padTop && iy < h + p.padBottom &&
                            ix >= -p.padLeft && ix < w + p.padRight;
                  real += inside;
                  continue;
                }
                if (!inside)
                  continue;
                double share = go.at({i, ch, y, x}) /
                               double(p.countIncludePad ? padded : real);
                int64_t at = ((i * c + ch) * h + iy) * w + ix;
                e.value[at] += share;
                e.magnitude[at] += std::fabs(share);
              }
        }
  return e;
}

const AvgCase kAvgCases[] = {
    {"ResNetDownsample",
     2,
     4,
     8,
     8,
     {2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false},
     false},
    {"Overlapping3x3Pad",
     1,
     3,
     7,
     6,
     {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true},
     false},
    {"ExcludePad", 2, 2, 5, 5, {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false}, false},
    {"CeilMode", 1, 5, 6, 6, {3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true}, true},
    {"OnePixel", 3, 2, 1, 1, {1, 1, 1, 1, 0, 0, 0, 0, 1, 1, false}, false},
};

class AvgPoolBackwardTest
    : public ::testing::TestWithParam<std::tuple<memfmt_kernels_t, AvgCase>> {};

TEST_P(AvgPoolBackwardTest, MatchesNaive) {
  auto [kernels, cs] = GetParam();
  TestContext ctx(kernels);
  const PoolAttrs &p = cs.p;
  int64_t oh = poolOutSize(cs.h, p.kernelH, p.strideH, p.padTop, p.padBottom, 1,
                           cs.ceilMode);
  int64_t ow = poolOutSize(cs.w, p.kernelW, p.strideW, p.padLeft, p.padRight, 1,
                           cs.ceilMode);
  const std::pair<Layout, Layout> layouts[] = {{C, C}, {CL, CL}, {CLS, CLS},
                                               {S, S}, {C, CL},  {CL, S}};
  for (auto [inLayout, outLayout] : layouts) {
    Tensor go({cs.n, cs.c, oh, ow}, inLayout);
    go.fillRandom(7);
    Tensor gi({cs.n, cs.c, cs.h, cs.w}, outLayout);
    std::string what = go.describe() + " -> " + gi.describe();
    EXPECT_KERNEL_OK(ctx,
                     _mlir_ciface_memfmt_avg_pool2d_backward_f32(
                         ctx, 1, go.memref(), gi.memref(), p.kernelH, p.kernelW,
                         p.strideH, p.strideW, p.padTop, p.padLeft, p.padBottom,
                         p.padRight, p.countIncludePad));
    // The channels-last kernel adds at most kernel_h * kernel_w shares in
    // f32 per position.
    double factor = kernels == MEMFMT_KERNELS_FAST
                        ? floatSumFactor(p.kernelH * p.kernelW)
                        : kReferenceFactor;
    expectClose(gi, naiveAvgBackward(go, cs.h, cs.w, p), factor, what);
    if (kernels == MEMFMT_KERNELS_FAST && inLayout == CL && outLayout == CL)
      EXPECT_EQ(ctx.implOf(1), "channels_last") << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, AvgPoolBackwardTest,
                         ::testing::Combine(::testing::ValuesIn(kFamilies),
                                            ::testing::ValuesIn(kAvgCases)));

//===----------------------------------------------------------------------===//
// cross_entropy_loss
//===----------------------------------------------------------------------===//

/// Mean cross-entropy and its gradient (grad_output `scale`), in double.
struct NaiveLoss {
  double loss = 0;
  Expected grad;
};

NaiveLoss naiveLoss(const Tensor &x, const IndexTensor &t, double scale) {
  int64_t n = x.sizes[0], c = x.sizes[1];
  NaiveLoss r;
  for (int64_t i = 0; i < n; ++i) {
    double max = -INFINITY;
    for (int64_t j = 0; j < c; ++j)
      max = std::max(max, double(x.at({i, j})));
    double sum = 0;
    for (int64_t j = 0; j < c; ++j)
      sum += std::exp(double(x.at({i, j})) - max);
    double lse = max + std::log(sum);
    r.loss += (lse - x.at({i, t.at({i})})) / double(n);
    for (int64_t j = 0; j < c; ++j) {
      double g = (std::exp(x.at({i, j}) - lse) - (j == t.at({i}) ? 1 : 0)) *
                 scale / double(n);
      r.grad.value.push_back(g);
      r.grad.magnitude.push_back(std::fabs(g));
    }
  }
  return r;
}

TEST(CrossEntropyLossTest, MatchesNaive) {
  for (memfmt_kernels_t kernels : kFamilies)
    for (Layout layout : {C, S, CLS}) {
      TestContext ctx(kernels);
      Tensor x({5, 7}, layout), loss({}), gradOut({}), gi({5, 7}, layout);
      x.fillRandom(3, -4.0, 4.0);
      x.at({2, 3}) = 1e4f; // exp(1e4) overflows even a double.
      x.at({4, 0}) = -1e4f;
      IndexTensor t({5}, layout);
      const int64_t targets[] = {0, 6, 3, 2, 0};
      for (int64_t i = 0; i < 5; ++i)
        t.at({i}) = targets[i];
      gradOut.flat(0) = 0.5f;
      std::string what = std::string(toString(kernels)) + " " + x.describe();
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_cross_entropy_loss_f32(
                                ctx, 0, x.memref(), t.memref(), loss.memref()));
      NaiveLoss want = naiveLoss(x, t, 0.5);
      ASSERT_TRUE(std::isfinite(loss.flat(0))) << what;
      // One rounding of a double result.
      EXPECT_NEAR(loss.flat(0), want.loss, 1e-6 * std::fabs(want.loss)) << what;
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_cross_entropy_loss_backward_f32(
                                ctx, 1, gradOut.memref(), x.memref(),
                                t.memref(), gi.memref()));
      expectClose(gi, want.grad, kReferenceFactor, what);
    }
}

TEST(CrossEntropyLossTest, TargetOutOfRangeIsAnError) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor x({3, 5}), loss({}), gradOut({}), gi({3, 5});
  x.fillRandom(4);
  IndexTensor t({3});
  t.at({0}) = 1;
  t.at({1}) = 5;
  t.at({2}) = 0;
  expectError(ctx,
              _mlir_ciface_memfmt_cross_entropy_loss_f32(
                  ctx, 6, x.memref(), t.memref(), loss.memref()),
              "memfmt_cross_entropy_loss_f32 (node 6): target[1] is 5, "
              "expected a class index in [0, 5)");
  t.at({1}) = 2;
  t.at({2}) = -1;
  expectError(
      ctx,
      _mlir_ciface_memfmt_cross_entropy_loss_backward_f32(
          ctx, 7, gradOut.memref(), x.memref(), t.memref(), gi.memref()),
      "target[2] is -1, expected a class index in [0, 5)");
  IndexTensor wrong({4});
  expectError(ctx,
              _mlir_ciface_memfmt_cross_entropy_loss_f32(
                  ctx, 8, x.memref(), wrong.memref(), loss.memref()),
              "target has shape [4], expected [3] (one class index per row "
              "of self [3, 5])");
  expectError(ctx,
              _mlir_ciface_memfmt_cross_entropy_loss_f32(
                  ctx, 9, x.memref(), t.memref(), gi.memref()),
              "output has rank 2 (shape [3, 5]), expected 0");
  expectError(ctx,
              _mlir_ciface_memfmt_cross_entropy_loss_backward_f32(
                  ctx, 10, x.memref(), x.memref(), t.memref(), gi.memref()),
              "grad_output has rank 2 (shape [3, 5]), expected 0");
  expectError(
      ctx,
      _mlir_ciface_memfmt_cross_entropy_loss_backward_f32(
          ctx, 10, gradOut.memref(), x.memref(), t.memref(), x.memref()),
      "grad_input [3, 5] (strides [5, 1]) overlaps self");
}

//===----------------------------------------------------------------------===//
// sgd_update
//===----------------------------------------------------------------------===//

struct SgdOptions {
  const char *name;
  double lr, momentum, dampening, weightDecay;
  bool nesterov, hasStep;
  int64_t step;
};

void PrintTo(const SgdOptions &o, std::ostream *os) { *os << o.name; }

/// torch.optim.SGD's single-tensor loop for one element, written from
/// torch/optim/sgd.py (1.13) with ATen's f32 arithmetic: `a.add(b, alpha)`
/// is fma(b, float(alpha), a), mul_ one f32 product; the buffer is None on
/// the first step.
float torchSgd(float param, float grad, float &buf, bool bufferIsNone,
               const SgdOptions &o) {
  float dp = grad;
  if (o.weightDecay != 0)
    dp = std::fma(param, float(o.weightDecay), dp);
  if (o.momentum != 0) {
    if (bufferIsNone)
      buf = dp;
    else
      buf = std::fma(dp, float(1 - o.dampening), buf * float(o.momentum));
    dp = o.nesterov ? std::fma(buf, float(o.momentum), dp) : buf;
  }
  return std::fma(dp, float(-o.lr), param);
}

const SgdOptions kSgdOptions[] = {
    {"Plain", 0.1, 0, 0, 0, false, false, 0},
    {"MomentumNoStep", 0.05, 0.9, 0, 0, false, false, 0},
    {"MomentumFirstStep", 0.05, 0.9, 0, 0, false, true, 0},
    {"DampeningFirstStep", 0.1, 0.9, 0.3, 0, false, true, 0},
    {"DampeningLaterStep", 0.1, 0.9, 0.3, 0, false, true, 4},
    {"Nesterov", 0.01, 0.9, 0, 0, true, true, 2},
    {"WeightDecay", 0.1, 0.9, 0, 1e-4, false, true, 1},
    {"WeightDecayNoMomentum", 0.3, 0, 0, 5e-2, false, false, 0},
};

class SgdTest : public ::testing::TestWithParam<
                    std::tuple<memfmt_kernels_t, SgdOptions>> {};

TEST_P(SgdTest, MatchesTorchBitwise) {
  auto [kernels, o] = GetParam();
  const std::vector<int64_t> shape = {4, 3, 5, 2};
  for (Layout layout : {C, CL, S})
    for (bool inPlace : {true, false}) {
      TestContext ctx(kernels);
      Tensor param(shape, layout), grad(shape, layout), buf(shape, layout);
      param.fillRandom(1);
      grad.fillRandom(2, -3.0, 3.0);
      buf.fillRandom(3);
      Tensor paramOut(shape, inPlace ? layout : S),
          bufOut(shape, inPlace ? layout : C);
      const Tensor param0 = param, buf0 = buf;
      IndexTensor step({});
      step.flat(0) = o.step;
      std::string what = param.describe() + (inPlace ? " in place" : "");
      const Tensor &pOut = inPlace ? param : paramOut;
      const Tensor &bOut = inPlace ? buf : bufOut;
      EXPECT_KERNEL_OK(ctx,
                       _mlir_ciface_memfmt_sgd_update_f32(
                           ctx, 0, param.memref(), grad.memref(), buf.memref(),
                           step.memref(), grad.memref(), pOut.memref(),
                           bOut.memref(), o.lr, o.momentum, o.dampening,
                           o.weightDecay, o.nesterov, o.hasStep, 0));
      bool first = o.hasStep && o.step == 0;
      for (int64_t i = 0; i < param.numElements(); ++i) {
        float b = buf0.flat(i);
        float want = torchSgd(param0.flat(i), grad.flat(i), b, first, o);
        ASSERT_EQ(pOut.flat(i), want) << what << " param element " << i;
        if (o.momentum != 0)
          ASSERT_EQ(bOut.flat(i), b) << what << " buffer element " << i;
      }
      if (o.momentum == 0 && !inPlace)
        EXPECT_TRUE(bufOut.gapsIntact() && bufOut.flat(0) == Tensor::kSentinel)
            << what << ": wrote the buffer without momentum";
      EXPECT_TRUE(pOut.gapsIntact() && bOut.gapsIntact()) << what;
      if (kernels == MEMFMT_KERNELS_FAST && inPlace && layout != S)
        EXPECT_EQ(ctx.implOf(0).rfind("dense", 0), 0u) << what;
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, SgdTest,
                         ::testing::Combine(::testing::ValuesIn(kFamilies),
                                            ::testing::ValuesIn(kSgdOptions)));

// The step count sgd_update reads: one more, in place (as the memory plan
// runs it, in the model state's slot) or into another tensor; a step count
// that is not 0-d fails with a message.
TEST(IncrementTest, CountsStepsInPlaceAndNot) {
  for (memfmt_kernels_t kernels : kFamilies) {
    TestContext ctx(kernels);
    IndexTensor count({}), other({}), wrong({2});
    count.flat(0) = 0;
    for (int64_t step = 1; step <= 3; ++step) {
      EXPECT_KERNEL_OK(
          ctx, _mlir_ciface_memfmt_increment_i64(
                   ctx, 0, count.memref(), count.memref(), count.memref(), 0));
      EXPECT_EQ(count.flat(0), step);
    }
    count.flat(0) = int64_t(1) << 40; // Beyond f32's exact integers.
    EXPECT_KERNEL_OK(
        ctx, _mlir_ciface_memfmt_increment_i64(
                 ctx, 1, count.memref(), count.memref(), other.memref(), 0));
    EXPECT_EQ(other.flat(0), (int64_t(1) << 40) + 1);
    EXPECT_EQ(count.flat(0), int64_t(1) << 40);
    expectError(ctx,
                _mlir_ciface_memfmt_increment_i64(
                    ctx, 2, wrong.memref(), wrong.memref(), count.memref(), 0),
                "input");
  }
}

TEST(SgdErrorTest, BadCallsFailWithAMessage) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor param({6}), grad({6}), buf({6}), out({6}), bufOut({6});
  IndexTensor step({});
  auto sgd = [&](const memfmt_memref_t *paramOut,
                 const memfmt_memref_t *bufferOut, double momentum,
                 double dampening, int64_t nesterov) {
    return _mlir_ciface_memfmt_sgd_update_f32(
        ctx, 3, param.memref(), grad.memref(), buf.memref(), step.memref(),
        grad.memref(), paramOut, bufferOut, 0.1, momentum, dampening, 0.0,
        nesterov, 1, 0);
  };
  expectError(ctx, sgd(out.memref(), bufOut.memref(), 0.9, 0.1, 1),
              "memfmt_sgd_update_f32 (node 3): nesterov needs momentum > 0 "
              "and dampening 0, got momentum 0.900000 and dampening "
              "0.100000");
  expectError(ctx, sgd(out.memref(), bufOut.memref(), 0.0, 0.0, 1),
              "nesterov needs momentum > 0");
  expectError(ctx, sgd(grad.memref(), bufOut.memref(), 0.9, 0.0, 0),
              "param_out [6] (strides [1]) overlaps grad [6] (strides [1]); "
              "outputs must not overlap other tensors");
  RawView shifted(buf, 1, {5}, {1});
  Tensor shortParam({5}), shortGrad({5}), shortOut({5});
  EXPECT_EQ(_mlir_ciface_memfmt_sgd_update_f32(
                ctx, 4, shortParam.memref(), shortGrad.memref(), buf.memref(),
                step.memref(), shortGrad.memref(), shortOut.memref(),
                shifted.memref(), 0.1, 0.9, 0.0, 0.0, 0, 0, 0),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("momentum_buffer has shape [6], expected "
                                 "[5] (the parameter's shape)"),
            std::string::npos)
      << ctx.lastError();
  RawView head(buf, 0, {5}, {1});
  EXPECT_EQ(_mlir_ciface_memfmt_sgd_update_f32(
                ctx, 5, shortParam.memref(), shortGrad.memref(), head.memref(),
                step.memref(), shortGrad.memref(), shortOut.memref(),
                shifted.memref(), 0.1, 0.9, 0.0, 0.0, 0, 0, 0),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("momentum_buffer_out [5] (strides [1]) "
                                 "overlaps momentum_buffer [5] (strides [1]); "
                                 "in place it must be exactly "
                                 "momentum_buffer"),
            std::string::npos)
      << ctx.lastError();
  expectError(ctx,
              _mlir_ciface_memfmt_sgd_update_f32(
                  ctx, 6, param.memref(), grad.memref(), buf.memref(),
                  step.memref(), grad.memref(), out.memref(), bufOut.memref(),
                  -0.1, 0.9, 0.0, 0.0, 0, 0, 0),
              "lr is -0.100000, expected a finite value >= 0");
  expectError(ctx,
              _mlir_ciface_memfmt_sgd_update_f32(
                  ctx, 6, param.memref(), grad.memref(), buf.memref(),
                  step.memref(), grad.memref(), out.memref(), bufOut.memref(),
                  0.1, 0.9, INFINITY, 0.0, 0, 0, 0),
              "dampening is inf, expected a finite value");
  IndexTensor steps({2});
  expectError(ctx,
              _mlir_ciface_memfmt_sgd_update_f32(
                  ctx, 6, param.memref(), grad.memref(), buf.memref(),
                  steps.memref(), grad.memref(), out.memref(), bufOut.memref(),
                  0.1, 0.9, 0.0, 0.0, 0, 1, 0),
              "step has rank 1 (shape [2]), expected 0");
  // Without momentum the buffers are not used: the buffer out may be
  // anything of the parameter's shape, here the parameter itself.
  EXPECT_KERNEL_OK(ctx,
                   _mlir_ciface_memfmt_sgd_update_f32(
                       ctx, 7, param.memref(), grad.memref(), param.memref(),
                       step.memref(), grad.memref(), param.memref(),
                       param.memref(), 0.1, 0.0, 0.0, 0.0, 0, 0, 0));
}

TEST(TrainingErrorTest, OverlapsFailWithAMessage) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor go({2, 3}), self({2, 3});
  expectError(
      ctx,
      _mlir_ciface_memfmt_threshold_backward_f32(
          ctx, 1, go.memref(), self.memref(), go.memref(), go.memref(), 0.0, 0),
      "memfmt_threshold_backward_f32 (node 1): grad_input [2, 3] "
      "(strides [3, 1]) overlaps grad_output");
  Tensor gi({2, 4}), out({2, 3}), wide({2, 4});
  expectError(
      ctx,
      _mlir_ciface_memfmt_threshold_backward_f32(
          ctx, 2, go.memref(), self.memref(), go.memref(), gi.memref(), 0.0, 0),
      "grad_input has shape [2, 4], expected [2, 3] (self's shape)");
  expectError(ctx,
              _mlir_ciface_memfmt_threshold_backward_f32(
                  ctx, 4, go.memref(), self.memref(), out.memref(),
                  out.memref(), 0.0, 1),
              "grad_input [2, 3] (strides [3, 1]) overlaps addend");
  expectError(ctx,
              _mlir_ciface_memfmt_threshold_backward_f32(
                  ctx, 5, go.memref(), self.memref(), wide.memref(),
                  out.memref(), 0.0, 1),
              "addend has shape [2, 4], expected [2, 3] (self's shape)");
  // Without has_addend the addend is not looked at.
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_threshold_backward_f32(
                            ctx, 6, go.memref(), self.memref(), wide.memref(),
                            out.memref(), 0.0, 0));
  Tensor pooled({1, 1, 3, 3}), input({1, 1, 4, 4});
  expectError(
      ctx,
      _mlir_ciface_memfmt_avg_pool2d_backward_f32(
          ctx, 3, pooled.memref(), input.memref(), 3, 3, 2, 2, 0, 0, 0, 0, 0),
      "output height is 3, expected 1 (floor mode) or 2 (ceil mode)");
}

/// Times threshold_backward on the ResNet stem's activation (alone, and
/// with a gradient sum as two kernels and fused) and sgd_update on
/// ResNet-18's 11.7M parameters as one tensor, both kernel families.
/// Run with --gtest_also_run_disabled_tests.
TEST(TrainingKernelTiming, DISABLED_TimeLargeCalls) {
  for (memfmt_kernels_t kernels : kFamilies) {
    TestContext ctx(kernels);
    Tensor go({8, 64, 112, 112}, CL), self({8, 64, 112, 112}, CL),
        gi({8, 64, 112, 112}, CL);
    go.fillRandom(1);
    self.fillRandom(2);
    double relu = millisecondsPerCall([&] {
      return _mlir_ciface_memfmt_threshold_backward_f32(
          ctx, 0, go.memref(), self.memref(), go.memref(), gi.memref(), 0.0, 0);
    });
    // A residual block input's gradient at ResNet-50's layer 1: the sum of
    // its two gradients then relu's mask, as two kernels and fused.
    Tensor a({8, 256, 56, 56}, CL), b({8, 256, 56, 56}, CL),
        y({8, 256, 56, 56}, CL), sum({8, 256, 56, 56}, CL),
        masked({8, 256, 56, 56}, CL);
    a.fillRandom(3);
    b.fillRandom(4);
    y.fillRandom(5);
    double separate = millisecondsPerCall([&] {
      if (int32_t s = _mlir_ciface_memfmt_add_f32(ctx, 2, a.memref(),
                                                  b.memref(), sum.memref()))
        return s;
      return _mlir_ciface_memfmt_threshold_backward_f32(
          ctx, 3, sum.memref(), y.memref(), sum.memref(), masked.memref(), 0.0,
          0);
    });
    double fused = millisecondsPerCall([&] {
      return _mlir_ciface_memfmt_threshold_backward_f32(
          ctx, 4, a.memref(), y.memref(), b.memref(), masked.memref(), 0.0, 1);
    });
    std::printf("%s: add + threshold_backward [8, 256, 56, 56] %.2f ms, fused "
                "%.2f ms (%s)\n",
                toString(kernels), separate, fused, ctx.implOf(4).c_str());
    Tensor param({11689512}), grad({11689512}), buf({11689512});
    IndexTensor step({});
    step.flat(0) = 1;
    double sgd = millisecondsPerCall([&] {
      return _mlir_ciface_memfmt_sgd_update_f32(
          ctx, 1, param.memref(), grad.memref(), buf.memref(), step.memref(),
          grad.memref(), param.memref(), buf.memref(), 0.1, 0.9, 0.0, 1e-4, 0,
          1, 0);
    });
    std::printf("%s: threshold_backward [8, 64, 112, 112] %.2f ms (%s), "
                "sgd_update 11.7M momentum + weight decay %.2f ms (%s)\n",
                toString(kernels), relu, ctx.implOf(0).c_str(), sgd,
                ctx.implOf(1).c_str());
  }
}

} // namespace

namespace {

/// A group of replicas in one process: the other replicas hold the
/// constants `others` in every element, so this context's sum adds them;
/// or the sum fails.
struct SimulatedReplicas {
  std::vector<float> others;
  bool failing = false;
  int64_t calls = 0;

  static int sum(void *user, float *data, int64_t count, char *error,
                 size_t size) {
    auto *self = static_cast<SimulatedReplicas *>(user);
    ++self->calls;
    if (self->failing) {
      std::snprintf(error, size, "replica 1 went away");
      return 1;
    }
    for (float other : self->others)
      for (int64_t i = 0; i < count; ++i)
        data[i] += other;
    return 0;
  }

  memfmt_communicator_t communicator() {
    return {
        0,      static_cast<int64_t>(others.size()) + 1, this, &sum, nullptr, 0,
        nullptr};
  }
};

class AllReduceTest : public ::testing::TestWithParam<memfmt_kernels_t> {};

TEST_P(AllReduceTest, MeanOverReplicasInEveryLayout) {
  const std::vector<int64_t> shape = {2, 3, 4, 5};
  for (Layout layout : {C, CL, CLS, S})
    for (bool inPlace : {true, false}) {
      TestContext ctx(GetParam());
      Tensor in(shape, layout), out(shape, inPlace ? layout : CLS);
      in.fillRandom(1);
      const Tensor original = in;
      const Tensor &result = inPlace ? in : out;
      std::string what = in.describe() + (inPlace ? " in place" : "");
      // Alone: the values themselves.
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_all_reduce_f32(
                                ctx, 0, in.memref(), result.memref(), 1));
      for (int64_t i = 0; i < in.numElements(); ++i)
        ASSERT_EQ(result.flat(i), original.flat(i)) << what << " alone, " << i;
      EXPECT_EQ(ctx.implOf(0), "single_replica") << what;
      // Three replicas: the mean of each element.
      SimulatedReplicas group;
      group.others = {0.75f, -2.5f};
      memfmt_communicator_t comm = group.communicator();
      ASSERT_EQ(memfmt_context_set_communicator(ctx, &comm), MEMFMT_STATUS_OK);
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_all_reduce_f32(
                                ctx, 1, in.memref(), result.memref(), 1));
      EXPECT_EQ(group.calls, 1) << what;
      for (int64_t i = 0; i < in.numElements(); ++i) {
        float sum = original.flat(i) + 0.75f;
        sum += -2.5f;
        ASSERT_EQ(result.flat(i), sum / 3.0f) << what << ", element " << i;
      }
      EXPECT_TRUE(result.gapsIntact()) << what;
      EXPECT_EQ(ctx.implOf(1), "communicator") << what;
      // The sum ("sum"), from the original values again.
      Tensor again(shape, layout);
      again.fillRandom(1);
      const Tensor &summed = inPlace ? again : out;
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_all_reduce_f32(
                                ctx, 2, again.memref(), summed.memref(), 0));
      for (int64_t i = 0; i < in.numElements(); ++i) {
        float sum = original.flat(i) + 0.75f;
        sum += -2.5f;
        ASSERT_EQ(summed.flat(i), sum) << what << " sum, element " << i;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, AllReduceTest,
                         ::testing::ValuesIn(kFamilies));

TEST(AllReduceErrorTest, FailuresReachTheContext) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor grad({6}), other({5});
  SimulatedReplicas group;
  group.others = {1.0f};
  group.failing = true;
  memfmt_communicator_t comm = group.communicator();
  ASSERT_EQ(memfmt_context_set_communicator(ctx, &comm), MEMFMT_STATUS_OK);
  EXPECT_EQ(_mlir_ciface_memfmt_all_reduce_f32(ctx, 4, grad.memref(),
                                                grad.memref(), 1),
            MEMFMT_STATUS_BACKEND_ERROR);
  EXPECT_NE(ctx.lastError().find("memfmt_all_reduce_f32 (node 4): the "
                                 "all-reduce over 2 replicas failed: replica "
                                 "1 went away"),
            std::string::npos)
      << ctx.lastError();
  expectError(ctx,
              _mlir_ciface_memfmt_all_reduce_f32(ctx, 5, grad.memref(),
                                                 other.memref(), 1),
              "output");
  expectError(ctx,
              _mlir_ciface_memfmt_all_reduce_f32(ctx, 7, grad.memref(),
                                                 grad.memref(), 2),
              "average");
  // Bad communicators are refused, and null makes the context alone again.
  memfmt_communicator_t bad = comm;
  bad.rank = 2;
  EXPECT_EQ(memfmt_context_set_communicator(ctx, &bad),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("rank 2 of size 2"), std::string::npos)
      << ctx.lastError();
  bad = comm;
  bad.all_reduce_sum_f32 = nullptr;
  EXPECT_EQ(memfmt_context_set_communicator(ctx, &bad),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  bad = comm;
  bad.sync_batch_norm = 1;
  EXPECT_EQ(memfmt_context_set_communicator(ctx, &bad),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("without all_reduce_sum_f64"),
            std::string::npos)
      << ctx.lastError();
  EXPECT_EQ(memfmt_context_set_communicator(ctx, nullptr), MEMFMT_STATUS_OK);
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_all_reduce_f32(
                            ctx, 6, grad.memref(), grad.memref(), 1));
  EXPECT_EQ(ctx.implOf(6), "single_replica");
}

} // namespace
