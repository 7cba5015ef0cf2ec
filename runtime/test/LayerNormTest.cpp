//===- LayerNormTest.cpp - Layer norm over the last dim -------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// layer_norm on the reference and fast kernels against Naive.h's formula:
// ranks 1, 2 and 4; D = 1, odd D (7, 97) and D = 96; every test layout for
// input and output (same and mixed); the [N, H, W, C] views of a
// channels-last model's activations (a permuted NCHW buffer, whose last dim
// is not unit-stride, and NHWC buffers dense, with padded channels or with
// padded rows); with and without weight and bias (strided parameters);
// in place; rows whose mean dwarfs their spread, constant rows, and empty
// tensors. A fast kernel (oneDNN, or the loop where oneDNN declines) must
// run where the last dim has unit stride and the rows are evenly strided.
// f16/bf16 are in PrecisionTest.cpp, bad calls in ErrorTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include <algorithm>
#include <cstdio>

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

/// Which of weight and bias a call passes.
struct Affine {
  bool weight, bias;
};
const Affine kAffines[] = {
    {false, false}, {true, false}, {false, true}, {true, true}};

/// A [d] parameter with stride 2 and an offset, values in [lo, hi).
Tensor parameter(int64_t d, uint32_t seed, double lo, double hi) {
  Tensor t({d}, std::vector<int64_t>{2}, 1, 2 * d + 2);
  t.fillRandom(seed, lo, hi);
  return t;
}

/// The magnitude factor of the kernels' rounding for rows of `d`: the
/// reference computes in double and rounds once; the fast kernels sum the
/// row in f32 (oneDNN; the loop sums in double) and then round the mean,
/// x - mean, the scaling and the bias' addition in f32, errors bounded by
/// the naive magnitude times floatSumFactor(d).
double factorOf(memfmt_kernels_t kernels, int64_t d) {
  return kernels == MEMFMT_KERNELS_REFERENCE ? kReferenceFactor
                                             : floatSumFactor(d);
}

/// Runs layer_norm from `in` into `out` (not `in`) with `affine`'s
/// parameters, checks it against the naive formula and returns the
/// implementation that ran.
std::string runAndCheck(TestContext &ctx, memfmt_kernels_t kernels,
                        int64_t node, const Tensor &in, Tensor &out,
                        Affine affine, double eps, const std::string &what) {
  int64_t d = in.sizes.back();
  Tensor weight = parameter(d, 51, 0.5, 2), bias = parameter(d, 52, -1, 1);
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_layer_norm_f32(
                            ctx, node, in.memref(),
                            affine.weight ? weight.memref() : out.memref(),
                            affine.bias ? bias.memref() : out.memref(),
                            out.memref(), eps, affine.weight, affine.bias))
      << what;
  expectClose(out,
              naiveLayerNorm(in, affine.weight ? &weight : nullptr,
                             affine.bias ? &bias : nullptr, eps),
              factorOf(kernels, d), what);
  return ctx.implOf(node);
}

std::string describeCall(memfmt_kernels_t kernels, const Tensor &in,
                         const Tensor &out, Affine affine) {
  return std::string(toString(kernels)) + " " + in.describe() + " -> " +
         out.describe() + (affine.weight ? " weight" : "") +
         (affine.bias ? " bias" : "");
}

TEST(LayerNormTest, MatchesNaiveInEveryRankAndLayout) {
  const std::vector<std::vector<int64_t>> shapes = {
      {1},           {7},           {96},         {97},         {3, 1},
      {5, 7},        {4, 96},       {3, 97},      {2, 3, 4, 1}, {2, 3, 4, 7},
      {2, 3, 5, 96}, {1, 2, 2, 97}, {2, 1, 3, 96}};
  const std::pair<Layout, Layout> layoutPairs[] = {
      {C, C}, {CL, CL}, {CLS, CLS}, {S, S}, {C, S}, {S, C}, {CLS, C}};
  // Layouts whose last dim has unit stride and whose rows are evenly
  // strided: row-major, padded row-major (the slice below rank 4), and
  // rank 1, whose one row is always unit-stride in these layouts.
  auto evenRows = [](Layout layout, size_t rank) {
    return layout == C || rank == 1 || (rank < 4 && layout != S);
  };
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const auto &shape : shapes)
      for (auto [inLayout, outLayout] : layoutPairs)
        for (Affine affine : kAffines) {
          Tensor in(shape, inLayout), out(shape, outLayout);
          in.fillRandom(31, -3, 3);
          std::string what = describeCall(kernels, in, out, affine);
          std::string impl =
              runAndCheck(ctx, kernels, node, in, out, affine, 1e-5, what);
          size_t rank = shape.size();
          if (kernels == MEMFMT_KERNELS_REFERENCE)
            EXPECT_EQ(impl, "reference") << what;
          else if (inLayout == CLS && rank == 2 && shape[0] > 1)
            // Padded rows (row stride D + 3): oneDNN, which takes dense rows
            // only, declines and the loop runs.
            EXPECT_EQ(impl, "rows") << what;
          else if (evenRows(inLayout, rank) && evenRows(outLayout, rank))
            EXPECT_NE(impl, "reference") << what;
          else if (inLayout == S && rank > 1 && shape.back() > 1)
            EXPECT_EQ(impl, "reference") << what;
          ++node;
        }
  }
}

/// [N, H, W, C] = [2, 3, 5, C] views of a channels-last model's activations
/// (normalizing over C), by the strides of the underlying buffer.
struct View {
  const char *name;
  std::vector<int64_t> strides;
  int64_t offset, bufferSize;
  /// Whether the fast path takes it.
  bool fast;
};

std::vector<View> viewsFor(int64_t c) {
  const int64_t n = 2, h = 3, w = 5;
  return {
      // x.permute(0, 2, 3, 1) of an NCHW tensor: C is the outermost but one.
      {"permuted NCHW", {c * h * w, w, 1, h * w}, 0, n * c * h * w, false},
      // The same permutation of a channels-last tensor: dense rows.
      {"permuted NHWC", {h * w * c, w * c, c, 1}, 0, n * h * w * c, true},
      // A channels-last slice: 3 spare channels per pixel, an offset.
      {"NHWC slice",
       {h * w * (c + 3), w * (c + 3), c + 3, 1},
       3,
       3 + n * h * w * (c + 3),
       true},
      // Rows padded at the end of each image row: not evenly strided.
      {"NHWC padded rows",
       {h * (w + 2) * c, (w + 2) * c, c, 1},
       0,
       n * h * (w + 2) * c,
       false},
  };
}

TEST(LayerNormTest, ChannelsLastViews) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (int64_t c : {6, 96})
      for (const View &view : viewsFor(c))
        for (bool denseOut : {false, true})
          for (Affine affine : {Affine{false, false}, Affine{true, true}}) {
            std::vector<int64_t> shape = {2, 3, 5, c};
            Tensor in(shape, view.strides, view.offset, view.bufferSize);
            Tensor out = denseOut ? Tensor(shape, C)
                                  : Tensor(shape, view.strides, view.offset,
                                           view.bufferSize);
            in.fillRandom(41, -2, 2);
            std::string what = std::string(view.name) + " " +
                               describeCall(kernels, in, out, affine);
            std::string impl =
                runAndCheck(ctx, kernels, node, in, out, affine, 1e-5, what);
            if (kernels == MEMFMT_KERNELS_FAST && view.fast)
              EXPECT_NE(impl, "reference") << what;
            else
              EXPECT_EQ(impl, "reference") << what;
            ++node;
          }
  }
}

TEST(LayerNormTest, InPlace) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    // Every view: the reference, oneDNN (dense rows), the loop (a slice).
    const std::vector<View> views = viewsFor(96);
    for (const View &view : views) {
      Tensor t({2, 3, 5, 96}, view.strides, view.offset, view.bufferSize);
      t.fillRandom(42, -2, 2);
      Tensor weight = parameter(96, 43, 0.5, 2),
             bias = parameter(96, 44, -1, 1);
      Expected want = naiveLayerNorm(t, &weight, &bias, 1e-5);
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_layer_norm_f32(
                                ctx, 0, t.memref(), weight.memref(),
                                bias.memref(), t.memref(), 1e-5, 1, 1));
      expectClose(t, want, factorOf(kernels, 96),
                  std::string(toString(kernels)) + " in place " + view.name);
    }
  }
}

TEST(LayerNormTest, LargeMeansAndConstantRows) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    // Rows near 1000 with a spread of 0.01: two-pass statistics keep the
    // variance (a sum of squares minus the squared sum would cancel).
    Tensor in({4, 97}), out({4, 97});
    in.fillRandom(45, 999.99, 1000.01);
    runAndCheck(ctx, kernels, 0, in, out, {true, true}, 1e-5,
                std::string(toString(kernels)) + " large mean");

    // Constant rows: x - mean is 0 (exactly so with the statistics in
    // double), the output the bias, and nothing divides by zero (eps > 0).
    Tensor flat({3, 7}), y({3, 7});
    for (int64_t i = 0; i < flat.numElements(); ++i)
      flat.flat(i) = 0.1f * float(i / 7 + 1);
    runAndCheck(ctx, kernels, 1, flat, y, {true, true}, 1e-5,
                std::string(toString(kernels)) + " constant rows");
  }
}

TEST(LayerNormTest, EmptyTensors) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const std::vector<int64_t> &shape :
         {std::vector<int64_t>{0}, std::vector<int64_t>{3, 0},
          std::vector<int64_t>{0, 5}, std::vector<int64_t>{2, 0, 4, 8}}) {
      Tensor in(shape), out(shape);
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_layer_norm_f32(
                                ctx, node, in.memref(), out.memref(),
                                out.memref(), out.memref(), 1e-5, 0, 0));
      EXPECT_EQ(ctx.implOf(node), "empty");
      ++node;
    }
  }
}

/// The activations of a Swin-T stage-1 block ([8, 56, 56, 96]) and the same
/// rows as a matrix ([25088, 96]), with weight and bias: run with
/// --gtest_also_run_disabled_tests to time, interleaved in one process, the
/// fast kernel on dense tensors (oneDNN when the build has it), the fast
/// kernel into an output with padded rows (which oneDNN, with one layout for
/// both tensors, declines: the loop) and the reference.
TEST(LayerNormTest, DISABLED_TimeSwinBlock) {
  TestContext fast(MEMFMT_KERNELS_FAST), reference(MEMFMT_KERNELS_REFERENCE);
  for (const std::vector<int64_t> &shape :
       {std::vector<int64_t>{8, 56, 56, 96},
        std::vector<int64_t>{8 * 56 * 56, 96}}) {
    Tensor x(shape), y(shape), weight({96}), bias({96});
    // Rows of 96 in a buffer with 97 floats per row.
    std::vector<int64_t> padded(shape.size(), 0);
    padded.back() = 1;
    for (int64_t d = int64_t(shape.size()) - 1, stride = 97; d-- > 0;) {
      padded[d] = stride;
      stride *= shape[d];
    }
    Tensor yPadded(shape, padded, 0, padded[0] * shape[0]);
    x.fillRandom(1, -2, 2);
    weight.fillRandom(2, 0.5, 2);
    bias.fillRandom(3);
    struct Variant {
      const char *name;
      TestContext *ctx;
      Tensor *out;
      std::vector<double> ms;
    };
    Variant variants[] = {{"fast, dense", &fast, &y, {}},
                          {"fast, padded output", &fast, &yPadded, {}},
                          {"reference", &reference, &y, {}}};
    std::string impls[3];
    for (int round = 0; round < 5; ++round)
      for (int v = 0; v < 3; ++v) {
        Variant &variant = variants[v];
        auto call = [&] {
          return _mlir_ciface_memfmt_layer_norm_f32(
              *variant.ctx, v, x.memref(), weight.memref(), bias.memref(),
              variant.out->memref(), 1e-5, 1, 1);
        };
        variant.ms.push_back(millisecondsPerCall(call, 20));
        impls[v] = variant.ctx->implOf(v);
      }
    for (int v = 0; v < 3; ++v) {
      std::vector<double> &ms = variants[v].ms;
      std::sort(ms.begin(), ms.end());
      std::printf("layer_norm rank %zu %s (%s): min %.3f, median %.3f ms per "
                  "call\n",
                  shape.size(), variants[v].name, impls[v].c_str(), ms.front(),
                  ms[ms.size() / 2]);
    }
  }
}

} // namespace
