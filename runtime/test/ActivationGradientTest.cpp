//===- ActivationGradientTest.cpp - eltwise_backward and sum_to_size ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The gradients that make the CNNs beyond ResNet trainable, on both kernel
// families and in every test layout:
//  * eltwise_backward for each eltwise function (oneDNN's eltwise_backward
//    for the smooth ones, the dense loops for the piecewise-linear ones)
//    against ATen's backward formulas written out here in double (values at
//    each function's kinks included: clamp's bounds pass the gradient,
//    hardswish's -3 and 3, hardsigmoid's open interval, a NaN), and against a
//    central difference of the forward kernel itself away from the kinks, so
//    that the formula and the function agree; bf16 in the dense loops against
//    the f32 kernel on the same values;
//  * sum_to_size against a naive double sum, for the shapes VJPs reduce to
//    (a squeeze-excite scale [N, C, 1, 1], a layer scale [C, 1, 1] that
//    also drops the batch dim, a bias [C], everything to a 0-d tensor, a
//    1x1 plane, one channel), with the fast path's impl named.
// Bad calls fail with a message.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include "memfmt/runtime/elementwise_ops.h"
#include "memfmt/runtime/io/HalfFloat.h"

#include <cmath>
#include <limits>

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

const memfmt_kernels_t kFamilies[] = {MEMFMT_KERNELS_FAST,
                                      MEMFMT_KERNELS_REFERENCE};

using Half = TestTensor<uint16_t>;

//===----------------------------------------------------------------------===//
// eltwise_backward
//===----------------------------------------------------------------------===//

struct Function {
  const char *name;
  int64_t op;
  double alpha, beta;
};

const Function kFunctions[] = {
    {"sigmoid", MEMFMT_ELTWISE_SIGMOID, 0, 0},
    {"hardsigmoid", MEMFMT_ELTWISE_HARDSIGMOID, 1.0 / 6.0, 0.5},
    {"hardsigmoid (ONNX alpha 0.2)", MEMFMT_ELTWISE_HARDSIGMOID, 0.2, 0.5},
    {"hardswish", MEMFMT_ELTWISE_HARDSWISH, 0, 0},
    {"clamp (ReLU6)", MEMFMT_ELTWISE_CLAMP, 0.0, 6.0},
    {"clamp (min only)", MEMFMT_ELTWISE_CLAMP, -1.0,
     std::numeric_limits<double>::infinity()},
    {"gelu", MEMFMT_ELTWISE_GELU_ERF, 0, 0},
    {"gelu (tanh)", MEMFMT_ELTWISE_GELU_TANH, 0, 0},
    {"silu", MEMFMT_ELTWISE_SILU, 0, 0},
};

/// ATen's backward formulas in double; `x` is the forward's input (the
/// kernel's `self` is sigmoid's output, the caller passes that).
double derivative(const Function &f, double x) {
  switch (f.op) {
  case MEMFMT_ELTWISE_SIGMOID: {
    double y = 1.0 / (1.0 + std::exp(-x));
    return (1.0 - y) * y;
  }
  case MEMFMT_ELTWISE_HARDSIGMOID: {
    double t = f.alpha * x + f.beta;
    return t > 0.0 && t < 1.0 ? f.alpha : 0.0;
  }
  case MEMFMT_ELTWISE_HARDSWISH:
    return x < -3.0 ? 0.0 : x <= 3.0 ? x / 3.0 + 0.5 : 1.0;
  case MEMFMT_ELTWISE_CLAMP:
    return x >= f.alpha && x <= f.beta ? 1.0 : 0.0;
  case MEMFMT_ELTWISE_GELU_ERF:
    return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) +
           x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
  case MEMFMT_ELTWISE_GELU_TANH: {
    double k = std::sqrt(2.0 / M_PI);
    double t = std::tanh(k * (x + 0.044715 * x * x * x));
    return 0.5 * (1.0 + t) +
           0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x);
  }
  default: {
    double s = 1.0 / (1.0 + std::exp(-x));
    return s * (1.0 + x * (1.0 - s));
  }
  }
}

/// Runs eltwise_backward (f32) with `x` as the forward's input: `self` is
/// sigmoid's output (computed here in f32 from x), else x.
int32_t runBackward(const TestContext &ctx, int64_t node, const Function &f,
                    const Tensor &go, const Tensor &x, Tensor &gi) {
  Tensor self = x;
  if (f.op == MEMFMT_ELTWISE_SIGMOID)
    for (int64_t i = 0; i < x.numElements(); ++i)
      self.flat(i) = 1.0f / (1.0f + std::exp(-x.flat(i)));
  return _mlir_ciface_memfmt_eltwise_backward_f32(ctx, node, go.memref(),
                                                  self.memref(), gi.memref(),
                                                  f.op, f.alpha, f.beta);
}

TEST(EltwiseBackwardTest, MatchesATenFormulasInEveryLayout) {
  const std::pair<Layout, Layout> layouts[] = {
      {C, C}, {CL, CL}, {S, S}, {C, CL}, {CL, S}};
  for (const Function &f : kFunctions)
    for (memfmt_kernels_t kernels : kFamilies)
      for (auto [inLayout, outLayout] : layouts) {
        TestContext ctx(kernels);
        Tensor go({2, 5, 3, 7}, inLayout), x({2, 5, 3, 7}, inLayout),
            gi({2, 5, 3, 7}, outLayout);
        go.fillRandom(1);
        x.fillRandom(2, -8.0, 8.0);
        // The kinks: ATen's choices there are part of the formula.
        const float kinks[] = {-3.0f, 3.0f, 0.0f, 6.0f, -1.0f, 2.5f};
        for (int i = 0; i < 6; ++i)
          x.flat(3 + i) = kinks[i];
        std::string what =
            std::string(f.name) + " " + x.describe() + " -> " + gi.describe();
        ASSERT_KERNEL_OK(ctx, runBackward(ctx, 0, f, go, x, gi)) << what;
        for (int64_t i = 0; i < gi.numElements(); ++i) {
          double want = go.flat(i) * derivative(f, x.flat(i));
          ASSERT_NEAR(gi.flat(i), want, 2e-6 * (1 + std::fabs(want)))
              << what << " element " << i << " at x = " << x.flat(i);
        }
        EXPECT_TRUE(gi.gapsIntact()) << what;
        // oneDNN's eltwise_backward where it has the function (the smooth
        // ones), else the dense loop.
        bool piecewise = f.op == MEMFMT_ELTWISE_CLAMP ||
                         f.op == MEMFMT_ELTWISE_HARDSIGMOID ||
                         f.op == MEMFMT_ELTWISE_HARDSWISH;
        if (kernels == MEMFMT_KERNELS_FAST && inLayout == outLayout &&
            inLayout != S)
          EXPECT_EQ(ctx.implOf(0), memfmt_runtime_has_onednn() && !piecewise
                                       ? "onednn"
                                       : "dense")
              << what;
      }
}

/// The formulas are the derivatives of the forward kernel: a central
/// difference of memfmt_eltwise_f32 (in double around f32 points away from
/// the kinks) matches the gradient of a unit grad_output.
TEST(EltwiseBackwardTest, IsTheDerivativeOfTheForwardKernel) {
  for (const Function &f : kFunctions) {
    TestContext ctx(MEMFMT_KERNELS_FAST);
    const int64_t n = 64;
    Tensor x({n}), plus({n}), minus({n}), yPlus({n}), yMinus({n}), go({n}),
        gi({n});
    const double h = 1e-2;
    for (int64_t i = 0; i < n; ++i) {
      // -7.9 .. 7.9, avoiding the kinks at -3, 0, 3 and 6 by > h.
      x.flat(i) = -7.9f + 0.25f * i + 0.05f;
      plus.flat(i) = x.flat(i) + float(h);
      minus.flat(i) = x.flat(i) - float(h);
      go.flat(i) = 1.0f;
    }
    ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_eltwise_f32(ctx, 0, plus.memref(),
                                                          yPlus.memref(), f.op,
                                                          f.alpha, f.beta));
    ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_eltwise_f32(
                              ctx, 1, minus.memref(), yMinus.memref(), f.op,
                              f.alpha, f.beta));
    ASSERT_KERNEL_OK(ctx, runBackward(ctx, 2, f, go, x, gi));
    for (int64_t i = 0; i < n; ++i) {
      double step = double(plus.flat(i)) - double(minus.flat(i));
      double slope = (double(yPlus.flat(i)) - double(yMinus.flat(i))) / step;
      // The forward's own curvature over the step, plus f32 rounding.
      EXPECT_NEAR(gi.flat(i), slope, 2e-3 + 1e-3 * std::fabs(slope))
          << f.name << " at x = " << x.flat(i);
    }
  }
}

/// NaN in self, as ATen's formulas treat it: clamp and hardsigmoid pass no
/// gradient (their range tests fail), hardswish passes it whole (its `x <
/// -3` and `x <= 3` tests fail), the smooth functions give NaN.
TEST(EltwiseBackwardTest, NaNInput) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Function &f : kFunctions)
    for (memfmt_kernels_t kernels : kFamilies) {
      TestContext ctx(kernels);
      Tensor go({1, 1, 1, 16}), x({1, 1, 1, 16}), gi({1, 1, 1, 16});
      go.fillRandom(1);
      x.fillRandom(2);
      x.flat(5) = nan;
      ASSERT_KERNEL_OK(ctx, runBackward(ctx, 0, f, go, x, gi)) << f.name;
      if (f.op == MEMFMT_ELTWISE_CLAMP || f.op == MEMFMT_ELTWISE_HARDSIGMOID)
        EXPECT_EQ(gi.flat(5), 0.0f) << f.name;
      else if (f.op == MEMFMT_ELTWISE_HARDSWISH)
        EXPECT_EQ(gi.flat(5), go.flat(5)) << f.name;
      else
        EXPECT_TRUE(std::isnan(gi.flat(5))) << f.name;
    }
}

/// bf16 gradients (a mixed-precision step): each implementation computes in
/// f32 and rounds once, so its bits are those of the same implementation's
/// f32 gradient rounded. Where the CPU has no bf16 instructions oneDNN's
/// bf16 primitive is not used and the bf16 gradient is the dense loop's
/// (the reference's formula) while the f32 one is oneDNN's polynomial: the
/// two f32 formulas differ in the last bits, which matter where a gradient
/// cancels to near zero (GELU's at x = -0.75), so there the bf16 gradient
/// is the f32 reference's rounded.
TEST(EltwiseBackwardTest, Bf16MatchesTheF32KernelRoundedOnce) {
  namespace io = memfmt::io;
  for (const Function &f : kFunctions)
    for (memfmt_kernels_t kernels : kFamilies)
      for (Layout layout : {C, CL}) {
        TestContext ctx(kernels);
        Tensor go({2, 4, 3, 5}, layout), x({2, 4, 3, 5}, layout),
            gi({2, 4, 3, 5}, layout);
        go.fillRandom(3);
        x.fillRandom(4, -6.0, 6.0);
        Half goH({2, 4, 3, 5}, layout), xH({2, 4, 3, 5}, layout),
            giH({2, 4, 3, 5}, layout);
        for (int64_t i = 0; i < x.numElements(); ++i) {
          goH.flat(i) = io::floatToBFloat16(go.flat(i));
          xH.flat(i) = io::floatToBFloat16(x.flat(i));
          go.flat(i) = io::bfloat16ToFloat(goH.flat(i));
          x.flat(i) = io::bfloat16ToFloat(xH.flat(i));
        }
        ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_eltwise_backward_bf16(
                                  ctx, 0, goH.memref(), xH.memref(),
                                  giH.memref(), f.op, f.alpha, f.beta));
        ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_eltwise_backward_f32(
                                  ctx, 1, go.memref(), x.memref(), gi.memref(),
                                  f.op, f.alpha, f.beta));
        if (ctx.implOf(1) == "onednn" && ctx.implOf(0) != "onednn") {
          TestContext reference(MEMFMT_KERNELS_REFERENCE);
          ASSERT_KERNEL_OK(reference, _mlir_ciface_memfmt_eltwise_backward_f32(
                                          reference, 0, go.memref(), x.memref(),
                                          gi.memref(), f.op, f.alpha, f.beta));
        }
        for (int64_t i = 0; i < gi.numElements(); ++i)
          ASSERT_EQ(giH.flat(i), io::floatToBFloat16(gi.flat(i)))
              << f.name << " " << x.describe() << " element " << i;
      }
}

TEST(EltwiseBackwardTest, RejectsBadCalls) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor go({2, 3}), x({2, 3}), gi({2, 3}), small({2, 2});
  EXPECT_EQ(_mlir_ciface_memfmt_eltwise_backward_f32(
                ctx, 0, go.memref(), x.memref(), gi.memref(), 99, 0, 0),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("not a memfmt_eltwise_op_t"),
            std::string::npos)
      << ctx.lastError();
  EXPECT_EQ(_mlir_ciface_memfmt_eltwise_backward_f32(ctx, 1, go.memref(),
                                                     x.memref(), small.memref(),
                                                     MEMFMT_ELTWISE_SILU, 0, 0),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("grad_input has shape"), std::string::npos)
      << ctx.lastError();
  EXPECT_EQ(_mlir_ciface_memfmt_eltwise_backward_f32(ctx, 2, go.memref(),
                                                     x.memref(), x.memref(),
                                                     MEMFMT_ELTWISE_SILU, 0, 0),
            MEMFMT_STATUS_INVALID_ARGUMENT);
}

//===----------------------------------------------------------------------===//
// sum_to_size
//===----------------------------------------------------------------------===//

struct SumCase {
  const char *name;
  std::vector<int64_t> input, output;
};

const SumCase kSumCases[] = {
    {"squeeze-excite scale", {3, 24, 5, 7}, {3, 24, 1, 1}},
    {"squeeze-excite scale, 100 channels", {2, 100, 4, 3}, {2, 100, 1, 1}},
    {"layer scale", {3, 24, 5, 7}, {24, 1, 1}},
    {"bias-like, batch kept", {3, 24, 5, 7}, {3, 1, 1, 7}},
    {"everything", {3, 24, 5, 7}, {}},
    {"to [1, C, 1, 1]", {2, 9, 6, 6}, {1, 9, 1, 1}},
    {"one channel", {2, 1, 5, 5}, {2, 1, 1, 1}},
    {"1x1 plane (nothing summed)", {4, 16, 1, 1}, {4, 16, 1, 1}},
    {"odd", {1, 3, 7, 5}, {3, 7, 1}},
};

/// The naive sum in double of input over the dims output broadcasts along.
std::vector<double> naiveSumToSize(const Tensor &x,
                                   const std::vector<int64_t> &out) {
  int64_t rank = x.rank(), lead = rank - int64_t(out.size());
  int64_t count = 1;
  for (int64_t s : out)
    count *= s;
  std::vector<double> sum(count, 0.0);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    std::vector<int64_t> index = x.indexOf(i);
    int64_t o = 0;
    for (int64_t d = lead; d < rank; ++d)
      o = o * out[d - lead] + (out[d - lead] == 1 ? 0 : index[d]);
    sum[o] += x.flat(i);
  }
  return sum;
}

TEST(SumToSizeTest, MatchesADoubleSumInEveryLayout) {
  for (const SumCase &cs : kSumCases)
    for (memfmt_kernels_t kernels : kFamilies)
      for (Layout inLayout : {C, CL, S})
        for (Layout outLayout : {C, CL, S}) {
          TestContext ctx(kernels);
          Tensor x(cs.input, inLayout), y(cs.output, outLayout);
          x.fillRandom(7);
          std::string what =
              std::string(cs.name) + " " + x.describe() + " -> " + y.describe();
          ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_sum_to_size_f32(
                                    ctx, 0, x.memref(), y.memref()))
              << what;
          std::vector<double> want = naiveSumToSize(x, cs.output);
          for (int64_t i = 0; i < y.numElements(); ++i)
            ASSERT_NEAR(y.flat(i), want[i], 1e-6 * (1 + std::fabs(want[i])))
                << what << " element " << i;
          EXPECT_TRUE(y.gapsIntact()) << what;
          // The fast variants need a unit-stride input dim (not Strided's).
          if (kernels == MEMFMT_KERNELS_FAST && inLayout != S &&
              x.numElements() > 1)
            EXPECT_NE(ctx.implOf(0), "reference") << what;
        }
}

/// The channels-last squeeze-excite case takes the column blocks and NCHW
/// the contiguous runs: the impl says which loop ran.
TEST(SumToSizeTest, FastPathsByLayout) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor nchw({2, 64, 6, 6}, C), cl({2, 64, 6, 6}, CL), y({2, 64, 1, 1});
  nchw.fillRandom(1);
  cl.fillRandom(1);
  ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_sum_to_size_f32(
                            ctx, 0, nchw.memref(), y.memref()));
  ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_sum_to_size_f32(ctx, 1, cl.memref(),
                                                            y.memref()));
  EXPECT_EQ(ctx.implOf(0), "contiguous_runs");
  EXPECT_EQ(ctx.implOf(1), "column_blocks");
}

TEST(SumToSizeTest, Bf16SumsInDoubleAndRoundsOnce) {
  namespace io = memfmt::io;
  for (memfmt_kernels_t kernels : kFamilies)
    for (Layout layout : {C, CL}) {
      TestContext ctx(kernels);
      Half x({2, 32, 9, 9}, layout), y({2, 32, 1, 1});
      Tensor xf({2, 32, 9, 9}, layout);
      xf.fillRandom(5);
      for (int64_t i = 0; i < x.numElements(); ++i) {
        x.flat(i) = io::floatToBFloat16(xf.flat(i));
        xf.flat(i) = io::bfloat16ToFloat(x.flat(i));
      }
      ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_sum_to_size_bf16(
                                ctx, 0, x.memref(), y.memref()));
      std::vector<double> want = naiveSumToSize(xf, {2, 32, 1, 1});
      for (int64_t i = 0; i < y.numElements(); ++i)
        ASSERT_EQ(y.flat(i), io::floatToBFloat16(float(want[i])))
            << x.describe() << " element " << i;
    }
}

/// An empty input sums to zeros, whatever its strides: they describe no
/// element, so any value is valid and no offset may be formed from them
/// (the runtime fuzzer's INT64_MIN strides overflowed the reference's
/// offsets).
TEST(SumToSizeTest, EmptyInputSumsToZerosWhateverItsStrides) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (memfmt_kernels_t kernels : kFamilies)
    for (std::vector<int64_t> strides :
         {std::vector<int64_t>{12, 3, 1}, std::vector<int64_t>{1, 1, 4},
          std::vector<int64_t>{kMin, kMin, kMin}}) {
      TestContext ctx(kernels);
      Tensor x({0, 4, 3}, strides, 0, 1), y({1, 4, 1}, CL);
      ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_sum_to_size_f32(
                                ctx, 0, x.memref(), y.memref()))
          << x.describe();
      for (int64_t i = 0; i < y.numElements(); ++i)
        EXPECT_EQ(y.flat(i), 0.0f) << x.describe() << " element " << i;
      Half xh({0, 4, 3}, strides, 0, 1), yh({4, 1});
      ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_sum_to_size_bf16(
                                ctx, 1, xh.memref(), yh.memref()))
          << xh.describe();
      for (int64_t i = 0; i < yh.numElements(); ++i)
        EXPECT_EQ(yh.flat(i), 0) << xh.describe() << " element " << i;
    }
}

/// A summed dim of size 1 may have any stride, and the last element of a
/// dim may sit next to INT64_MAX: the sums step only between elements (the
/// runtime fuzzer's [2, 7, 5, 1] with stride INT64_MAX - 1 overflowed the
/// odometer's step past a dim's end).
TEST(SumToSizeTest, HugeStridesOfSize1DimsAreNeverStepped) {
  constexpr int64_t kHuge = std::numeric_limits<int64_t>::max() - 1;
  for (memfmt_kernels_t kernels : kFamilies) {
    TestContext ctx(kernels);
    // [2, 3, 1] with its size-1 dim's stride huge, summed to a scalar and
    // to [3, 1].
    Tensor x({2, 3, 1}, std::vector<int64_t>{3, 1, kHuge}, 0, 6);
    x.fillRandom(3);
    double want = 0;
    for (int64_t i = 0; i < 6; ++i)
      want += x.buffer[i];
    Tensor all({}), columns({3, 1});
    ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_sum_to_size_f32(
                              ctx, 0, x.memref(), all.memref()));
    EXPECT_NEAR(all.flat(0), want, 1e-6);
    ASSERT_KERNEL_OK(ctx, _mlir_ciface_memfmt_sum_to_size_f32(
                              ctx, 1, x.memref(), columns.memref()));
    for (int64_t c = 0; c < 3; ++c)
      EXPECT_NEAR(columns.flat(c), x.buffer[c] + x.buffer[3 + c], 1e-6);
  }
}

TEST(SumToSizeTest, RejectsShapesTheInputDoesNotBroadcastFrom) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor x({2, 3, 4, 5}), wrong({2, 2, 1, 1}), tooLong({1, 2, 3, 4, 5});
  EXPECT_EQ(
      _mlir_ciface_memfmt_sum_to_size_f32(ctx, 0, x.memref(), wrong.memref()),
      MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("is not a shape input [2, 3, 4, 5] "
                                 "broadcasts from"),
            std::string::npos)
      << ctx.lastError();
  EXPECT_EQ(
      _mlir_ciface_memfmt_sum_to_size_f32(ctx, 1, x.memref(), tooLong.memref()),
      MEMFMT_STATUS_INVALID_ARGUMENT);
}

} // namespace
