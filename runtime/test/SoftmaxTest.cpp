//===- SoftmaxTest.cpp - Softmax along one dim ----------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// softmax on the reference and fast kernels against Naive.h's formula:
// every rank from 1 to 5 along every dim, with N = 1, C = 1, H = W = 1 and
// odd sizes; every test layout for input and output (same and mixed); the
// [N, H, W, C] views of a channels-last model's activations (a permuted
// NCHW buffer, NHWC buffers dense, with padded channels or padded rows);
// in place; rows of large values (1e4, which only the max subtraction keeps
// from overflowing exp) and a 1000-class classifier; -inf (masked) entries,
// rows holding NaN or only -inf; empty tensors. The fast kernel (the row
// loop) must run where the dim has unit stride in both tensors. f16/bf16
// are in PrecisionTest.cpp, bad calls in ErrorTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include "memfmt/runtime/io/HalfFloat.h"

#include <algorithm>
#include <cstdio>
#include <limits>

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

/// The magnitude factor of the kernels' rounding for rows of `d`: the
/// reference computes in double and rounds once; the fast kernels round
/// x - max, the exps, the sum (oneDNN sums in f32) and the scaling in f32,
/// errors bounded by the naive magnitude times floatSumFactor(d).
double factorOf(memfmt_kernels_t kernels, int64_t d) {
  return kernels == MEMFMT_KERNELS_REFERENCE ? kReferenceFactor
                                             : floatSumFactor(d);
}

/// Runs softmax along `dim` from `in` into `out` (which may be `in`),
/// checks it against `want` and returns the implementation that ran.
std::string runAndCheck(TestContext &ctx, memfmt_kernels_t kernels,
                        int64_t node, const Tensor &in, Tensor &out,
                        int64_t dim, const Expected &want,
                        const std::string &what) {
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_softmax_f32(ctx, node, in.memref(),
                                                        out.memref(), dim))
      << what;
  expectClose(out, want, factorOf(kernels, in.sizes[dim]), what);
  return ctx.implOf(node);
}

std::string describeCall(memfmt_kernels_t kernels, const Tensor &in,
                         const Tensor &out, int64_t dim) {
  return std::string(toString(kernels)) + " " + in.describe() + " -> " +
         out.describe() + " dim " + std::to_string(dim);
}

/// True if `t`'s elements along `dim` are adjacent (a size-1 dim's stride
/// is free, L2).
bool unitAlong(const Tensor &t, int64_t dim) {
  return t.sizes[dim] == 1 || t.strides[dim] == 1;
}

/// The implementation a call must run: the row loop for FAST calls whose
/// rows are unit-stride in both tensors, else the reference.
const char *expectedImpl(memfmt_kernels_t kernels, const Tensor &in,
                         const Tensor &out, int64_t dim) {
  return kernels == MEMFMT_KERNELS_FAST && unitAlong(in, dim) &&
                 unitAlong(out, dim)
             ? "rows"
             : "reference";
}

TEST(SoftmaxTest, MatchesNaiveForEveryRankDimAndLayout) {
  // Ranks 1 to 3; ranks 4 and 5 with N = 1, C = 1 and H = W = 1.
  const std::vector<std::vector<int64_t>> lowRanks = {
      {1},    {7},     {100},     {3, 1},    {1, 5},
      {5, 7}, {4, 96}, {2, 3, 5}, {1, 1, 7}, {3, 1, 2}};
  const std::vector<std::vector<int64_t>> highRanks = {
      {2, 3, 4, 5},    {1, 3, 2, 2},    {2, 1, 3, 5},
      {2, 5, 1, 1},    {1, 1, 1, 1},    {2, 13, 3, 3},
      {2, 3, 2, 3, 4}, {1, 2, 1, 3, 1}, {2, 1, 3, 1, 5}};
  const std::pair<Layout, Layout> layoutPairs[] = {
      {C, C}, {CL, CL}, {CLS, CLS}, {S, S}, {C, CL}, {C, S}, {S, C}, {CLS, C}};
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const auto &shapes : {lowRanks, highRanks})
      for (const auto &shape : shapes)
        for (int64_t dim = 0; dim < int64_t(shape.size()); ++dim)
          for (auto [inLayout, outLayout] : layoutPairs) {
            Tensor in(shape, inLayout), out(shape, outLayout);
            in.fillRandom(31, -3, 3);
            std::string what = describeCall(kernels, in, out, dim);
            std::string impl = runAndCheck(ctx, kernels, node, in, out, dim,
                                           naiveSoftmax(in, dim), what);
            EXPECT_EQ(impl, expectedImpl(kernels, in, out, dim)) << what;
            ++node;
          }
  }
}

/// [N, H, W, C] = [2, 3, 5, C] views of a channels-last model's activations,
/// by the strides of the underlying buffer.
struct View {
  const char *name;
  std::vector<int64_t> strides;
  int64_t offset, bufferSize;
};

std::vector<View> viewsFor(int64_t c) {
  const int64_t n = 2, h = 3, w = 5;
  return {
      // x.permute(0, 2, 3, 1) of an NCHW tensor: C has stride H * W, W is
      // the unit-stride dim.
      {"permuted NCHW", {c * h * w, w, 1, h * w}, 0, n * c * h * w},
      // The same permutation of a channels-last tensor: dense rows of C.
      {"permuted NHWC", {h * w * c, w * c, c, 1}, 0, n * h * w * c},
      // A channels-last slice: 3 spare channels per pixel, an offset.
      {"NHWC slice",
       {h * w * (c + 3), w * (c + 3), c + 3, 1},
       3,
       3 + n * h * w * (c + 3)},
      // Rows padded at the end of each image row.
      {"NHWC padded rows",
       {h * (w + 2) * c, (w + 2) * c, c, 1},
       0,
       n * h * (w + 2) * c},
  };
}

TEST(SoftmaxTest, PermutedAndPaddedViews) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (int64_t c : {6, 96})
      for (const View &view : viewsFor(c))
        for (bool denseOut : {false, true})
          for (int64_t dim = 0; dim < 4; ++dim) {
            std::vector<int64_t> shape = {2, 3, 5, c};
            Tensor in(shape, view.strides, view.offset, view.bufferSize);
            Tensor out = denseOut ? Tensor(shape, C)
                                  : Tensor(shape, view.strides, view.offset,
                                           view.bufferSize);
            in.fillRandom(41, -2, 2);
            std::string what = std::string(view.name) + " " +
                               describeCall(kernels, in, out, dim);
            std::string impl = runAndCheck(ctx, kernels, node, in, out, dim,
                                           naiveSoftmax(in, dim), what);
            EXPECT_EQ(impl, expectedImpl(kernels, in, out, dim)) << what;
            ++node;
          }
  }
}

TEST(SoftmaxTest, InPlace) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const std::vector<int64_t> &shape :
         {std::vector<int64_t>{2, 3, 4, 5}, std::vector<int64_t>{4, 96}})
      for (Layout layout : kAllLayouts)
        for (int64_t dim = 0; dim < int64_t(shape.size()); ++dim) {
          Tensor t(shape, layout);
          t.fillRandom(42, -2, 2);
          std::string what = "in place " + describeCall(kernels, t, t, dim);
          std::string impl = runAndCheck(ctx, kernels, node, t, t, dim,
                                         naiveSoftmax(t, dim), what);
          EXPECT_EQ(impl, expectedImpl(kernels, t, t, dim)) << what;
          ++node;
        }
  }
}

TEST(SoftmaxTest, LargeValuesDoNotOverflow) {
  struct Case {
    const char *name;
    std::vector<int64_t> shape;
    double lo, hi;
  };
  // exp(1e4) overflows even in double: only exp(x - max) stays finite.
  const Case cases[] = {{"near 1e4", {3, 50}, 1e4 - 10, 1e4 + 10},
                        {"near -1e4", {3, 50}, -1e4 - 10, -1e4 + 10},
                        {"classifier logits", {2, 1000}, -20, 20}};
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    auto check = [&](const Tensor &in, Tensor &out, const std::string &name) {
      std::string what = name + " " + describeCall(kernels, in, out, 1);
      runAndCheck(ctx, kernels, node++, in, out, 1, naiveSoftmax(in, 1), what);
      for (int64_t i = 0; i < out.numElements(); ++i)
        ASSERT_TRUE(std::isfinite(out.flat(i))) << what << " element " << i;
    };
    for (Layout layout : {C, CLS, S}) {
      for (const Case &c : cases) {
        Tensor in(c.shape, layout), out(c.shape, layout);
        in.fillRandom(43, c.lo, c.hi);
        check(in, out, c.name);
      }
      // Rows spanning [-1e4, 1e4] in steps of 800, so that each row's
      // maximum takes everything: exp(-800) is 0 even in double.
      Tensor in({3, 26}, layout), out({3, 26}, layout);
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t k = 0; k < 26; ++k)
          in.at({r, k}) = -1e4f + 800.0f * float((k * 7 + r * 5) % 26);
      check(in, out, "spanning +-1e4");
    }
  }
}

TEST(SoftmaxTest, InfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    // Rows of 9 (a vector and a tail in the row loop) along dim 1, and
    // transposed along dim 0 (the reference).
    for (Layout layout : {C, CLS})
      for (bool transposed : {false, true}) {
        std::vector<int64_t> shape = transposed ? std::vector<int64_t>{9, 4}
                                                : std::vector<int64_t>{4, 9};
        const int64_t dim = transposed ? 0 : 1;
        Tensor in(shape, layout), out(shape, layout);
        in.fillRandom(44, -3, 3);
        auto element = [&](Tensor &t, int64_t row, int64_t k) -> float & {
          return transposed ? t.at({k, row}) : t.at({row, k});
        };
        // Row 0: masked (-inf) entries get probability 0. Row 1: a NaN
        // makes the whole row NaN. Row 2: only -inf is NaN, as in PyTorch
        // (x - max is -inf - -inf). Row 3: finite.
        for (int64_t k : {0, 4, 8})
          element(in, 0, k) = -inf;
        element(in, 1, 5) = nan;
        for (int64_t k = 0; k < 9; ++k)
          element(in, 2, k) = -inf;
        std::string what = "infinities " + describeCall(kernels, in, out, dim);
        runAndCheck(ctx, kernels, node++, in, out, dim, naiveSoftmax(in, dim),
                    what);
        for (int64_t k : {0, 4, 8})
          EXPECT_EQ(element(out, 0, k), 0.0f) << what;
        for (int64_t k = 0; k < 9; ++k)
          EXPECT_TRUE(std::isnan(element(out, 1, k)) &&
                      std::isnan(element(out, 2, k)))
              << what << " element " << k;
      }
  }
}

/// The bf16 row loop keeps the same special values: masked (-inf) entries
/// get exactly 0, a NaN or an all -inf row becomes NaN, finite rows are the
/// exact softmax rounded once (PrecisionTest.cpp checks more shapes).
TEST(SoftmaxTest, Bf16RowsKeepInfinitiesAndNaN) {
  namespace io = memfmt::io;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor in({4, 9});
  in.fillRandom(45, -3, 3);
  for (int64_t k : {0, 4, 8})
    in.at({0, k}) = -inf;
  in.at({1, 5}) = nan;
  for (int64_t k = 0; k < 9; ++k)
    in.at({2, k}) = -inf;
  TestTensor<uint16_t> x({4, 9}), y({4, 9});
  for (int64_t i = 0; i < in.numElements(); ++i) {
    x.flat(i) = io::floatToBFloat16(in.flat(i));
    in.flat(i) = io::bfloat16ToFloat(x.flat(i));
  }
  EXPECT_KERNEL_OK(
      ctx, _mlir_ciface_memfmt_softmax_bf16(ctx, 0, x.memref(), y.memref(), 1));
  EXPECT_EQ(ctx.implOf(0), "rows");
  const Expected want = naiveSoftmax(in, 1);
  for (int64_t k = 0; k < 9; ++k) {
    const float masked = io::bfloat16ToFloat(y.at({0, k}));
    if (k % 4 == 0)
      EXPECT_EQ(masked, 0.0f) << "masked element " << k;
    EXPECT_TRUE(std::isnan(io::bfloat16ToFloat(y.at({1, k}))) &&
                std::isnan(io::bfloat16ToFloat(y.at({2, k}))))
        << "element " << k;
    const double finite = io::bfloat16ToFloat(y.at({3, k}));
    const double exact = want.value[3 * 9 + k];
    EXPECT_NEAR(finite, exact, std::fabs(exact) * 0x1p-8) << "element " << k;
  }
}

TEST(SoftmaxTest, EmptyTensors) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const std::vector<int64_t> &shape :
         {std::vector<int64_t>{0}, std::vector<int64_t>{3, 0},
          std::vector<int64_t>{0, 5}, std::vector<int64_t>{2, 0, 4, 8}})
      for (int64_t dim = 0; dim < int64_t(shape.size()); ++dim) {
        Tensor in(shape), out(shape);
        EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_softmax_f32(
                                  ctx, node, in.memref(), out.memref(), dim));
        EXPECT_EQ(ctx.implOf(node), "empty");
        ++node;
      }
  }
}

/// Attention scores along their last dim: a Swin-T stage-1 window
/// attention at batch 8 ([8 * 64 windows, 3 heads, 49, 49]) and ViT-B/16's
/// at batch 8 ([8, 12, 197, 197]). Run with --gtest_also_run_disabled_tests
/// to time, interleaved in one process, on one thread and on every thread:
/// the fast kernel (the row loop), the fast kernel in place and the
/// reference.
TEST(SoftmaxTest, DISABLED_TimeAttention) {
  for (int32_t threads : {1, 0})
    for (const std::vector<int64_t> &shape :
         {std::vector<int64_t>{8 * 64, 3, 49, 49},
          std::vector<int64_t>{8, 12, 197, 197}}) {
      TestContext fast(MEMFMT_KERNELS_FAST, threads),
          reference(MEMFMT_KERNELS_REFERENCE, threads);
      Tensor x(shape), y(shape);
      x.fillRandom(1, -4, 4);
      // In place from the second call on, the rows hold probabilities,
      // which cost the same.
      Tensor inPlace = x;
      struct Variant {
        const char *name;
        TestContext *ctx;
        Tensor *in, *out;
        std::vector<double> ms;
      };
      Variant variants[] = {{"fast", &fast, &x, &y, {}},
                            {"fast, in place", &fast, &inPlace, &inPlace, {}},
                            {"reference", &reference, &x, &y, {}}};
      std::string impls[3];
      for (int round = 0; round < 5; ++round)
        for (int v = 0; v < 3; ++v) {
          Variant &variant = variants[v];
          auto call = [&] {
            return _mlir_ciface_memfmt_softmax_f32(*variant.ctx, v,
                                                   variant.in->memref(),
                                                   variant.out->memref(), 3);
          };
          variant.ms.push_back(millisecondsPerCall(call, 10));
          impls[v] = variant.ctx->implOf(v);
        }
      for (int v = 0; v < 3; ++v) {
        std::vector<double> &ms = variants[v].ms;
        std::sort(ms.begin(), ms.end());
        std::printf(
            "softmax [%lld, %lld, %lld, %lld] on %s %s (%s): min "
            "%.3f, median %.3f ms per call\n",
            (long long)shape[0], (long long)shape[1], (long long)shape[2],
            (long long)shape[3], threads == 1 ? "1 thread" : "every thread",
            variants[v].name, impls[v].c_str(), ms.front(), ms[ms.size() / 2]);
      }
    }
}

} // namespace
