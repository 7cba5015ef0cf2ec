//===- SoftmaxBackwardTest.cpp - The gradient of softmax ------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// softmax_backward on the reference and fast kernels:
//  * against ATen's formula y * (g - sum(g * y)) in double, every rank from
//    1 to 5 along every dim (N = 1, C = 1, H = W = 1, odd sizes), every test
//    layout for the three tensors (the same and mixed), y a real softmax;
//    the fast kernel (the row loop) must run where the dim has unit stride
//    in all three;
//  * against central differences of the naive softmax (Naive.h): the
//    formula is the forward's derivative;
//  * the [N, H, W, C] view of a channels-last activation (ViT-style rows of
//    dense channels: the fast loop) and of an NCHW one (the reference);
//  * bf16: within bf16 rounding of the f32 kernel on the same values;
//  * empty tensors, and bad calls.
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

/// grad_input by ATen's formula in double, with the magnitude that bounds
/// f32 rounding: |y_i| * (|g_i| + sum_j |g_j * y_j|).
Expected naiveSoftmaxBackward(const Tensor &go, const Tensor &y, int64_t dim) {
  const int64_t count = y.numElements(), d = y.sizes[dim];
  int64_t inner = 1; // consecutive elements along dim, row-major
  for (int64_t k = dim + 1; k < y.rank(); ++k)
    inner *= y.sizes[k];
  Expected e;
  e.value.assign(count, 0.0);
  e.magnitude.assign(count, 0.0);
  for (int64_t first = 0; first < count; ++first) {
    if ((first / inner) % d != 0)
      continue; // Not the first element of its row.
    double dot = 0, absDot = 0;
    for (int64_t k = 0; k < d; ++k) {
      const int64_t i = first + k * inner;
      dot += double(go.flat(i)) * double(y.flat(i));
      absDot += std::fabs(double(go.flat(i)) * double(y.flat(i)));
    }
    for (int64_t k = 0; k < d; ++k) {
      const int64_t i = first + k * inner;
      e.value[i] = double(y.flat(i)) * (double(go.flat(i)) - dot);
      e.magnitude[i] = std::fabs(y.flat(i)) * (std::fabs(go.flat(i)) + absDot);
    }
  }
  return e;
}

/// A softmax output along `dim` of random logits, in `layout`.
Tensor softmaxOutput(const std::vector<int64_t> &shape, Layout layout,
                     int64_t dim, uint32_t seed) {
  Tensor logits(shape), y(shape, layout);
  logits.fillRandom(seed, -3, 3);
  Expected p = naiveSoftmax(logits, dim);
  for (int64_t i = 0; i < y.numElements(); ++i)
    y.flat(i) = static_cast<float>(p.value[i]);
  return y;
}

int32_t run(TestContext &ctx, int64_t node, const Tensor &go, const Tensor &y,
            Tensor &gi, int64_t dim) {
  return _mlir_ciface_memfmt_softmax_backward_f32(ctx, node, go.memref(),
                                                  y.memref(), gi.memref(), dim);
}

double factorOf(memfmt_kernels_t kernels, int64_t d) {
  return kernels == MEMFMT_KERNELS_REFERENCE ? kReferenceFactor
                                             : floatSumFactor(d);
}

/// True if `t`'s elements along `dim` are adjacent (a size-1 dim's stride
/// is free, L2).
bool unitAlong(const Tensor &t, int64_t dim) {
  return t.sizes[dim] == 1 || t.strides[dim] == 1;
}

TEST(SoftmaxBackwardTest, MatchesTheFormulaForEveryRankDimAndLayout) {
  const std::vector<std::vector<int64_t>> shapes = {{1},
                                                    {7},
                                                    {100},
                                                    {3, 1},
                                                    {1, 5},
                                                    {5, 7},
                                                    {4, 96},
                                                    {2, 3, 5},
                                                    {1, 1, 7},
                                                    {2, 3, 4, 5},
                                                    {1, 3, 2, 2},
                                                    {2, 1, 3, 5},
                                                    {2, 5, 1, 1},
                                                    {1, 1, 1, 1},
                                                    {2, 13, 3, 3},
                                                    {2, 3, 2, 3, 4},
                                                    {1, 2, 1, 3, 1}};
  const Layout layouts[][3] = {{C, C, C},    {CL, CL, CL}, {CLS, CLS, CLS},
                               {S, S, S},    {C, CL, C},   {S, C, CL},
                               {CLS, C, CLS}};
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const auto &shape : shapes)
      for (int64_t dim = 0; dim < int64_t(shape.size()); ++dim)
        for (const auto &l : layouts) {
          Tensor go(shape, l[0]), gi(shape, l[2]);
          const Tensor y = softmaxOutput(shape, l[1], dim, 41);
          go.fillRandom(42, -1, 1);
          const std::string what = std::string(toString(kernels)) + " go " +
                                   go.describe() + " y " + y.describe() +
                                   " gi " + gi.describe() + " dim " +
                                   std::to_string(dim);
          ASSERT_KERNEL_OK(ctx, run(ctx, node, go, y, gi, dim)) << what;
          expectClose(gi, naiveSoftmaxBackward(go, y, dim),
                      factorOf(kernels, shape[dim]), what);
          const bool rows = kernels == MEMFMT_KERNELS_FAST &&
                            unitAlong(go, dim) && unitAlong(y, dim) &&
                            unitAlong(gi, dim);
          EXPECT_EQ(ctx.implOf(node), rows ? "rows" : "reference") << what;
          ++node;
        }
  }
}

/// sum(v * softmax(x)) differentiated by central differences of the naive
/// softmax in double: softmax_backward(v, softmax(x)) is its gradient.
TEST(SoftmaxBackwardTest, IsTheDerivativeOfTheForward) {
  const std::vector<int64_t> shape = {3, 2, 7};
  const double step = 1e-3;
  for (int64_t dim = 0; dim < 3; ++dim)
    for (memfmt_kernels_t kernels : kBothKernels) {
      TestContext ctx(kernels);
      Tensor x(shape), v(shape), gi(shape);
      x.fillRandom(51, -2, 2);
      v.fillRandom(52, -1, 1);
      Tensor y(shape);
      Expected p = naiveSoftmax(x, dim);
      for (int64_t i = 0; i < y.numElements(); ++i)
        y.flat(i) = static_cast<float>(p.value[i]);
      ASSERT_KERNEL_OK(ctx, run(ctx, 0, v, y, gi, dim));
      auto objective = [&] {
        Expected q = naiveSoftmax(x, dim);
        double sum = 0;
        for (int64_t i = 0; i < x.numElements(); ++i)
          sum += v.flat(i) * q.value[i];
        return sum;
      };
      for (int64_t i = 0; i < x.numElements(); ++i) {
        const float saved = x.flat(i);
        x.flat(i) = saved + float(step);
        const double up = objective();
        x.flat(i) = saved - float(step);
        const double down = objective();
        x.flat(i) = saved;
        EXPECT_NEAR(gi.flat(i), (up - down) / (2 * step), 1e-4)
            << toString(kernels) << " dim " << dim << " element " << i;
      }
    }
}

/// The [N, H, W, C] permutation of a channels-last activation (dense rows
/// of C: the fast loop) and of an NCHW one (C strided: the reference),
/// softmax along C.
TEST(SoftmaxBackwardTest, ChannelsLastViews) {
  const int64_t n = 2, h = 3, w = 5;
  for (int64_t c : {6, 197})
    for (bool fromChannelsLast : {true, false}) {
      const std::vector<int64_t> shape = {n, h, w, c};
      const std::vector<int64_t> strides =
          fromChannelsLast ? std::vector<int64_t>{h * w * c, w * c, c, 1}
                           : std::vector<int64_t>{c * h * w, w, 1, h * w};
      for (memfmt_kernels_t kernels : kBothKernels) {
        TestContext ctx(kernels);
        Tensor go(shape, strides, 0, n * c * h * w),
            y(shape, strides, 0, n * c * h * w),
            gi(shape, strides, 0, n * c * h * w);
        const Tensor p = softmaxOutput(shape, C, 3, 61);
        for (int64_t i = 0; i < y.numElements(); ++i)
          y.flat(i) = p.flat(i);
        go.fillRandom(62, -1, 1);
        const std::string what =
            std::string(toString(kernels)) + " " + y.describe();
        ASSERT_KERNEL_OK(ctx, run(ctx, 0, go, y, gi, 3)) << what;
        expectClose(gi, naiveSoftmaxBackward(go, y, 3), factorOf(kernels, c),
                    what);
        EXPECT_EQ(ctx.implOf(0),
                  kernels == MEMFMT_KERNELS_FAST && fromChannelsLast
                      ? "rows"
                      : "reference")
            << what;
      }
    }
}

/// bf16 operands: within one bf16 rounding (and the f32 kernel's own error)
/// of the f32 kernel on the same values.
TEST(SoftmaxBackwardTest, Bf16IsWithinOneRoundingOfF32) {
  namespace io = memfmt::io;
  const std::vector<int64_t> shape = {4, 3, 40};
  for (memfmt_kernels_t kernels : kBothKernels)
    for (Layout layout : {C, CL, S})
      for (int64_t dim : {1, 2}) {
        TestContext ctx(kernels);
        Tensor go(shape, layout), gi(shape, layout);
        Tensor y = softmaxOutput(shape, layout, dim, 71);
        go.fillRandom(72, -1, 1);
        Half goH(shape, layout), yH(shape, layout), giH(shape, layout);
        for (int64_t i = 0; i < go.numElements(); ++i) {
          goH.flat(i) = io::floatToBFloat16(go.flat(i));
          go.flat(i) = io::bfloat16ToFloat(goH.flat(i));
          yH.flat(i) = io::floatToBFloat16(y.flat(i));
          y.flat(i) = io::bfloat16ToFloat(yH.flat(i));
        }
        ASSERT_KERNEL_OK(ctx, run(ctx, 0, go, y, gi, dim));
        ASSERT_KERNEL_OK(
            ctx, _mlir_ciface_memfmt_softmax_backward_bf16(
                     ctx, 1, goH.memref(), yH.memref(), giH.memref(), dim));
        const Expected want = naiveSoftmaxBackward(go, y, dim);
        const std::string what = std::string(toString(kernels)) + " " +
                                 y.describe() + " dim " + std::to_string(dim) +
                                 " " + ctx.implOf(1);
        for (int64_t i = 0; i < gi.numElements(); ++i) {
          const double got = io::bfloat16ToFloat(giH.flat(i));
          ASSERT_NEAR(got, gi.flat(i),
                      std::fabs(gi.flat(i)) * 0x1p-8 +
                          want.magnitude[i] * floatSumFactor(shape[dim]))
              << what << " element " << i;
        }
        if (kernels == MEMFMT_KERNELS_FAST && layout == C && dim == 2)
          EXPECT_EQ(ctx.implOf(1), "rows") << what;
      }
}

TEST(SoftmaxBackwardTest, EmptyTensors) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    for (const std::vector<int64_t> &shape :
         {std::vector<int64_t>{0, 5}, std::vector<int64_t>{3, 0}})
      for (int64_t dim : {0, 1}) {
        Tensor go(shape), y(shape), gi(shape);
        EXPECT_KERNEL_OK(ctx, run(ctx, 0, go, y, gi, dim)) << toString(kernels);
      }
  }
}

TEST(SoftmaxBackwardTest, RejectsBadCalls) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor go({2, 5}), y({2, 5}), gi({2, 5});
  expectInvalid(ctx, run(ctx, 0, go, y, gi, 2), "softmax_backward",
                "dim is 2, expected a dim of output [2, 5] in [0, 2)");
  expectInvalid(ctx, run(ctx, 1, go, y, gi, -1), "softmax_backward",
                "dim is -1");
  Tensor wrong({2, 4});
  expectInvalid(ctx, run(ctx, 2, wrong, y, gi, 1), "softmax_backward",
                "grad_output has shape [2, 4]");
  expectInvalid(ctx, run(ctx, 3, go, y, wrong, 1), "softmax_backward",
                "grad_input has shape [2, 4]");
  Tensor scalar({});
  expectInvalid(ctx, run(ctx, 4, scalar, scalar, gi, 0), "softmax_backward",
                "output has rank 0");
  // grad_input in grad_output's buffer.
  expectInvalid(ctx, run(ctx, 5, go, y, go, 1), "softmax_backward",
                "grad_input");
}

} // namespace
