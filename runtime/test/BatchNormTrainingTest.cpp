//===- BatchNormTrainingTest.cpp - Training batch norm and its gradient ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// native_batch_norm and native_batch_norm_backward on both kernel families
// (in FAST mode the channels-last rows and NCHW planes kernels, else the
// double reference) in
// every test layout, against a naive double implementation written from
// ATen's definitions (biased batch variance, running variance unbiased by
// n / (n - 1)); the naive backward's closed form is itself checked against
// central finite differences of the naive forward on a tiny case. Edge
// shapes: N = 1 with H = W > 1, C = 1, H = W = 1 with N > 1, odd sizes,
// rank 2. Running statistics update in place; absent gradients are not
// written; bad calls fail with a message. With a communicator that asks for
// synchronised statistics (SyncBatchNorm), a group of identical replicas
// (each sum over them is R times the local one) gives the local results
// except the running variance, unbiased by the global count. The training
// fusion's epilogues (a residual and relu forward, relu's gradient
// backward) give the bits of the separate kernels, plain and synchronised. A
// disabled test times the ResNet-stem shape in NCHW and NHWC.
//
//===----------------------------------------------------------------------===//

#include "BatchNormCalls.h"
#include "RawView.h"
#include "RuntimeTest.h"

#include <cstring>
#include <functional>

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

/// The batch statistics and outputs of a training batch norm, in double.
struct NaiveForward {
  std::vector<double> mean, var; // Biased variance.
  Expected output, saveMean, saveInvstd, runningMean, runningVar;
};

/// Values per channel of `in` (every dim but 1).
int64_t perChannel(const Tensor &in) { return in.numElements() / in.sizes[1]; }

/// Calls `f(index)` for every index of `in` with dim 1 equal to `c`.
template <typename F> void forChannel(const Tensor &in, int64_t c, F f) {
  for (int64_t i = 0; i < in.numElements(); ++i) {
    std::vector<int64_t> index = in.indexOf(i);
    if (index[1] == c)
      f(index);
  }
}

NaiveForward naiveForward(const Tensor &in, const Tensor &w, const Tensor &b,
                          const Tensor &rm, const Tensor &rv, double eps,
                          double momentum) {
  const int64_t channels = in.sizes[1];
  const double n = double(perChannel(in));
  NaiveForward r;
  std::vector<double> meanAbs(channels, 0.0);
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0, squares = 0, abs = 0;
    forChannel(in, c, [&](const std::vector<int64_t> &i) {
      sum += in.at(i);
      abs += std::fabs(in.at(i));
    });
    double mean = sum / n;
    forChannel(in, c, [&](const std::vector<int64_t> &i) {
      squares += (in.at(i) - mean) * (in.at(i) - mean);
    });
    r.mean.push_back(mean);
    r.var.push_back(squares / n);
    meanAbs[c] = abs / n;
    double invstd = 1 / std::sqrt(squares / n + eps);
    r.saveMean.value.push_back(mean);
    r.saveMean.magnitude.push_back(meanAbs[c]);
    r.saveInvstd.value.push_back(invstd);
    r.saveInvstd.magnitude.push_back(invstd);
    double runningMean = (1 - momentum) * rm.at({c}) + momentum * r.mean.back();
    double runningVar =
        (1 - momentum) * rv.at({c}) + momentum * r.var.back() * n / (n - 1);
    r.runningMean.value.push_back(runningMean);
    r.runningMean.magnitude.push_back(std::fabs(rm.at({c})) + meanAbs[c]);
    r.runningVar.value.push_back(runningVar);
    r.runningVar.magnitude.push_back(std::fabs(rv.at({c})) + r.var.back());
  }
  for (int64_t i = 0; i < in.numElements(); ++i) {
    std::vector<int64_t> index = in.indexOf(i);
    int64_t c = index[1];
    double invstd = 1 / std::sqrt(r.var[c] + eps);
    double x = in.at(index);
    r.output.value.push_back((x - r.mean[c]) * invstd * w.at({c}) + b.at({c}));
    // An f32 mean and variance err by up to ~n u of the values' magnitude.
    r.output.magnitude.push_back((std::fabs(x - r.mean[c]) + meanAbs[c]) *
                                     invstd * std::fabs(w.at({c})) +
                                 std::fabs(b.at({c})));
  }
  return r;
}

/// grad_input, grad_weight and grad_bias of a training batch norm, in
/// double from the naive forward's statistics.
struct NaiveBackward {
  Expected gradInput, gradWeight, gradBias;
};

NaiveBackward naiveBackward(const Tensor &go, const Tensor &in, const Tensor &w,
                            const NaiveForward &f, double eps) {
  const int64_t channels = in.sizes[1];
  const double n = double(perChannel(in));
  NaiveBackward r;
  std::vector<double> sumGo(channels), sumGoXhat(channels), sumAbs(channels);
  for (int64_t c = 0; c < channels; ++c) {
    double invstd = 1 / std::sqrt(f.var[c] + eps);
    double abs = 0, absXhat = 0;
    forChannel(in, c, [&](const std::vector<int64_t> &i) {
      double xhat = (in.at(i) - f.mean[c]) * invstd;
      sumGo[c] += go.at(i);
      sumGoXhat[c] += go.at(i) * xhat;
      abs += std::fabs(go.at(i));
      absXhat += std::fabs(go.at(i) * xhat);
    });
    sumAbs[c] = abs + absXhat;
    r.gradWeight.value.push_back(sumGoXhat[c]);
    r.gradWeight.magnitude.push_back(absXhat + abs);
    r.gradBias.value.push_back(sumGo[c]);
    r.gradBias.magnitude.push_back(abs);
  }
  for (int64_t i = 0; i < in.numElements(); ++i) {
    std::vector<int64_t> index = in.indexOf(i);
    int64_t c = index[1];
    double invstd = 1 / std::sqrt(f.var[c] + eps);
    double xhat = (in.at(index) - f.mean[c]) * invstd;
    double scale = w.at({c}) * invstd;
    r.gradInput.value.push_back(
        scale * (go.at(index) - sumGo[c] / n - xhat * sumGoXhat[c] / n));
    r.gradInput.magnitude.push_back(
        std::fabs(scale) *
        (std::fabs(go.at(index)) + (1 + std::fabs(xhat)) * sumAbs[c] / n));
  }
  return r;
}

/// Per-channel test tensors [C].
struct Params {
  Tensor weight, bias, runningMean, runningVar;
  explicit Params(int64_t channels)
      : weight({channels}), bias({channels}), runningMean({channels}),
        runningVar({channels}) {
    weight.fillRandom(21, 0.5, 1.5);
    bias.fillRandom(22);
    runningMean.fillRandom(23);
    runningVar.fillRandom(24, 0.5, 2.0);
  }
};

struct Shape {
  const char *name;
  std::vector<int64_t> sizes;
};

void PrintTo(const Shape &s, std::ostream *os) { *os << s.name; }

const Shape kShapes[] = {
    {"ResNetLike", {2, 8, 5, 5}}, {"OneImage", {1, 3, 4, 4}},
    {"OneChannel", {4, 1, 3, 3}}, {"OnePixel", {5, 6, 1, 1}},
    {"Odd", {3, 5, 7, 3}},        {"Rank2", {6, 4}},
};

const std::pair<Layout, Layout> kLayouts[] = {{C, C}, {CL, CL}, {CLS, CLS},
                                              {S, S}, {C, CL},  {CL, S}};

constexpr double kEps = 1e-5, kMomentum = 0.1;

/// Tolerance factor: the reference works in double; the fast kernels reduce
/// in double too but normalise in f32 from f32-rounded statistics, a few
/// roundings per element, which floatSumFactor(n) bounds with room.
double factorFor(memfmt_kernels_t kernels, int64_t n) {
  return kernels == MEMFMT_KERNELS_REFERENCE ? kReferenceFactor
                                             : floatSumFactor(n);
}

/// The implementation FAST mode must pick, or "" where it is the reference:
/// the rows kernel for channels-last tensors (also NCHW ones with C = 1 or
/// H = W = 1, which are both, L2) and rank 2, the planes kernel for the
/// other NCHW ones.
std::string expectedImpl(memfmt_kernels_t kernels, const Tensor &a,
                         const Tensor &b) {
  auto dense = [](const Tensor &t) { return t.layout == C || t.layout == CL; };
  bool sameStrides = true; // Size-1 dims' strides do not matter (L2).
  for (int64_t d = 0; d < a.rank(); ++d)
    sameStrides &= a.sizes[d] == 1 || a.strides[d] == b.strides[d];
  if (kernels != MEMFMT_KERNELS_FAST || !dense(a) || !dense(b) || !sameStrides)
    return "";
  bool rows = a.rank() != 4 || a.layout == CL || a.sizes[1] == 1 ||
              a.sizes[2] * a.sizes[3] == 1;
  return rows ? "channels_last" : "contiguous";
}

/// What a training batch norm writes besides its output: [C] each.
struct Statistics {
  Tensor saveMean, saveInvstd, runningMean, runningVar;
  explicit Statistics(int64_t channels)
      : saveMean({channels}), saveInvstd({channels}), runningMean({channels}),
        runningVar({channels}) {}
};

/// native_batch_norm of `x` into `y` and `s` with `p`'s parameters, kEps
/// and kMomentum, no fusion.
int32_t runForward(TestContext &ctx, int64_t node, const Tensor &x,
                   const Params &p, const Tensor &y, const Statistics &s) {
  return batchNormForward(ctx, node, x.memref(), p.weight.memref(),
                          p.bias.memref(), p.runningMean.memref(),
                          p.runningVar.memref(), y.memref(),
                          s.saveMean.memref(), s.saveInvstd.memref(),
                          s.runningMean.memref(), s.runningVar.memref(), kEps,
                          kMomentum);
}

/// Expects a forward's `y` and `s` to be `want`'s within `factor`.
void expectForward(const Tensor &y, const Statistics &s,
                   const NaiveForward &want, double factor,
                   const std::string &what) {
  expectClose(y, want.output, factor, what + " output");
  expectClose(s.saveMean, want.saveMean, factor, what + " save_mean");
  expectClose(s.saveInvstd, want.saveInvstd, factor, what + " save_invstd");
  expectClose(s.runningMean, want.runningMean, factor, what);
  expectClose(s.runningVar, want.runningVar, factor, what);
}

class BatchNormTrainingTest
    : public ::testing::TestWithParam<std::tuple<memfmt_kernels_t, Shape>> {};

TEST_P(BatchNormTrainingTest, ForwardMatchesNaive) {
  auto [kernels, shape] = GetParam();
  TestContext ctx(kernels);
  const int64_t channels = shape.sizes[1];
  for (auto [inLayout, outLayout] : kLayouts) {
    Tensor x(shape.sizes, inLayout), y(shape.sizes, outLayout);
    x.fillRandom(5, -2.0, 3.0);
    Params p(channels);
    Statistics stats(channels);
    std::string what = x.describe() + " -> " + y.describe();
    EXPECT_KERNEL_OK(ctx, runForward(ctx, 1, x, p, y, stats));
    NaiveForward want = naiveForward(x, p.weight, p.bias, p.runningMean,
                                     p.runningVar, kEps, kMomentum);
    expectForward(y, stats, want, factorFor(kernels, perChannel(x)), what);
    std::string impl = expectedImpl(kernels, x, y);
    EXPECT_EQ(ctx.implOf(1), impl.empty() ? "reference" : impl) << what;
  }
}

/// The channels-last statistics read the input once, in cache-sized blocks
/// merged across blocks and threads (rowsMoments): on many rows (several
/// blocks per thread) of values whose mean is 10^5 times their spread they
/// stay as accurate as the naive two-pass double computation, to f32's
/// rounding of save_mean and save_invstd (a one-pass sum of squares, even
/// in double, is off by ~1e-6 here).
TEST(BatchNormTrainingStatisticsTest, ManyRowsLargeOffset) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  const std::vector<int64_t> sizes = {8, 4, 48, 48};
  const int64_t channels = sizes[1];
  Tensor x(sizes, CL), y(sizes, CL);
  x.fillRandom(9, 1e5 - 1.0, 1e5 + 1.0);
  Params p(channels);
  Statistics stats(channels);
  EXPECT_KERNEL_OK(ctx, runForward(ctx, 1, x, p, y, stats));
  EXPECT_EQ(ctx.implOf(1), "channels_last");
  NaiveForward want = naiveForward(x, p.weight, p.bias, p.runningMean,
                                   p.runningVar, kEps, kMomentum);
  for (int64_t c = 0; c < channels; ++c) {
    EXPECT_NEAR(stats.saveMean.at({c}), want.saveMean.value[c],
                2.5e-7 * want.saveMean.value[c])
        << "channel " << c;
    EXPECT_NEAR(stats.saveInvstd.at({c}), want.saveInvstd.value[c],
                2.5e-7 * want.saveInvstd.value[c])
        << "channel " << c;
  }
}

TEST_P(BatchNormTrainingTest, BackwardMatchesNaive) {
  auto [kernels, shape] = GetParam();
  TestContext ctx(kernels);
  const int64_t channels = shape.sizes[1];
  for (auto [inLayout, outLayout] : kLayouts) {
    Tensor x(shape.sizes, inLayout), go(shape.sizes, inLayout),
        gi(shape.sizes, outLayout);
    x.fillRandom(6, -1.0, 2.0);
    go.fillRandom(7);
    Params p(channels);
    NaiveForward f = naiveForward(x, p.weight, p.bias, p.runningMean,
                                  p.runningVar, kEps, kMomentum);
    // The saved statistics as the forward kernel writes them (f32).
    Tensor saveMean({channels}, S), saveInvstd({channels}, S);
    for (int64_t c = 0; c < channels; ++c) {
      saveMean.at({c}) = static_cast<float>(f.mean[c]);
      saveInvstd.at({c}) = static_cast<float>(1 / std::sqrt(f.var[c] + kEps));
    }
    Tensor gw({channels}, S), gb({channels});
    std::string what = x.describe() + " -> " + gi.describe();
    EXPECT_KERNEL_OK(ctx,
                     batchNormBackward(ctx, 2, go.memref(), x.memref(),
                                       p.weight.memref(), saveMean.memref(),
                                       saveInvstd.memref(), gi.memref(),
                                       gw.memref(), gb.memref(), 1, 1, 1));
    NaiveBackward want = naiveBackward(go, x, p.weight, f, kEps);
    // The saved statistics are rounded to f32 (a relative 2^-24 each); the
    // terms' magnitudes carry that through, scaled by the reduction's size.
    double factor =
        std::max(factorFor(kernels, perChannel(x)), 4 * kUnitRoundoff);
    expectClose(gi, want.gradInput, factor, what + " grad_input");
    expectClose(gw, want.gradWeight, factor, what + " grad_weight");
    expectClose(gb, want.gradBias, factor, what + " grad_bias");
    std::string impl = expectedImpl(kernels, x, gi);
    EXPECT_EQ(ctx.implOf(2), impl.empty() ? "reference" : impl) << what;
  }
}

/// R replicas holding this one's tensors: every sum over them is R times
/// the local sum.
struct IdenticalReplicas {
  template <typename T>
  static int sum(void *user, T *data, int64_t count, char *, size_t) {
    const auto replicas = static_cast<T>(*static_cast<int64_t *>(user));
    for (int64_t i = 0; i < count; ++i)
      data[i] *= replicas;
    return 0;
  }
  static memfmt_communicator_t communicator(int64_t &replicas) {
    return {0, replicas, &replicas, &sum<float>, &sum<double>, 1, nullptr};
  }
};

TEST_P(BatchNormTrainingTest, SynchronisedOverIdenticalReplicas) {
  auto [kernels, shape] = GetParam();
  TestContext ctx(kernels);
  int64_t replicas = 3;
  memfmt_communicator_t comm = IdenticalReplicas::communicator(replicas);
  ASSERT_EQ(memfmt_context_set_communicator(ctx, &comm), MEMFMT_STATUS_OK);
  const int64_t channels = shape.sizes[1];
  for (auto [inLayout, outLayout] : kLayouts) {
    Tensor x(shape.sizes, inLayout), y(shape.sizes, outLayout);
    x.fillRandom(5, -2.0, 3.0);
    Params p(channels);
    Statistics stats(channels);
    std::string what = x.describe() + " -> " + y.describe();
    EXPECT_KERNEL_OK(ctx, runForward(ctx, 1, x, p, y, stats));
    EXPECT_EQ(ctx.implOf(1), "synchronised") << what;
    NaiveForward want = naiveForward(x, p.weight, p.bias, p.runningMean,
                                     p.runningVar, kEps, kMomentum);
    // The running variance is unbiased by the global count R * n.
    const double n = double(perChannel(x)), global = n * double(replicas);
    for (int64_t c = 0; c < channels; ++c)
      want.runningVar.value[static_cast<size_t>(c)] =
          (1 - kMomentum) * p.runningVar.at({c}) +
          kMomentum * want.var[static_cast<size_t>(c)] * global / (global - 1);
    double factor = factorFor(MEMFMT_KERNELS_REFERENCE, perChannel(x));
    expectForward(y, stats, want, factor, what);

    // The gradients: grad_input from the global sums (R times the local
    // ones, over R times the values) equals the local one, and grad_weight
    // and grad_bias are this replica's sums.
    Tensor go(shape.sizes, inLayout), gi(shape.sizes, outLayout);
    go.fillRandom(7);
    Tensor gw({channels}, S), gb({channels});
    EXPECT_KERNEL_OK(ctx,
                     batchNormBackward(ctx, 2, go.memref(), x.memref(),
                                       p.weight.memref(),
                                       stats.saveMean.memref(),
                                       stats.saveInvstd.memref(), gi.memref(),
                                       gw.memref(), gb.memref(), 1, 1, 1));
    EXPECT_EQ(ctx.implOf(2), "synchronised") << what;
    NaiveBackward back = naiveBackward(go, x, p.weight, want, kEps);
    double backFactor = std::max(factor, 4 * kUnitRoundoff);
    expectClose(gi, back.gradInput, backFactor, what + " grad_input");
    expectClose(gw, back.gradWeight, backFactor, what + " grad_weight");
    expectClose(gb, back.gradBias, backFactor, what + " grad_bias");
  }
}

/// Expects `got` to hold `want`'s bits at every index.
void expectSameBits(const Tensor &got, const Tensor &want,
                    const std::string &what) {
  for (int64_t i = 0; i < want.numElements(); ++i) {
    float a = got.flat(i), b = want.flat(i);
    ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0)
        << what << " at " << i << ": " << a << " vs " << b;
  }
}

/// The training fusion (memfmt-fuse-training) computes the bits of the
/// separate kernels: native_batch_norm with a residual and/or relu against
/// native_batch_norm, add, relu; its relu backward against
/// threshold_backward then native_batch_norm_backward. In every layout
/// pair, plain and synchronised (identical replicas).
TEST_P(BatchNormTrainingTest, FusedEpiloguesMatchSeparateKernels) {
  auto [kernels, shape] = GetParam();
  TestContext ctx(kernels);
  const int64_t channels = shape.sizes[1];
  int64_t replicas = 2;
  memfmt_communicator_t comm = IdenticalReplicas::communicator(replicas);
  for (bool synchronised : {false, true}) {
    if (synchronised)
      ASSERT_EQ(memfmt_context_set_communicator(ctx, &comm), MEMFMT_STATUS_OK);
    for (auto [inLayout, outLayout] : kLayouts)
      for (auto [hasResidual, relu] :
           {std::pair{1, 0}, std::pair{0, 1}, std::pair{1, 1}}) {
        Tensor x(shape.sizes, inLayout), r(shape.sizes, outLayout),
            bn(shape.sizes, outLayout), sum(shape.sizes, outLayout),
            want(shape.sizes, outLayout), got(shape.sizes, outLayout);
        x.fillRandom(5, -2.0, 3.0);
        r.fillRandom(8, -1.5, 1.0);
        Params p(channels);
        Statistics separate(channels), fused(channels);
        std::string what = std::string(synchronised ? "synchronised " : "") +
                           x.describe() + " -> " + got.describe() +
                           (hasResidual ? " residual" : "") +
                           (relu ? " relu" : "");
        EXPECT_KERNEL_OK(ctx, runForward(ctx, 1, x, p, bn, separate));
        const Tensor *last = &bn;
        if (hasResidual) {
          EXPECT_KERNEL_OK(
              ctx, _mlir_ciface_memfmt_add_f32(ctx, 2, bn.memref(), r.memref(),
                                               (relu ? sum : want).memref()));
          last = relu ? &sum : &want;
        }
        if (relu)
          EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_relu_f32(
                                    ctx, 3, last->memref(), want.memref()));
        EXPECT_KERNEL_OK(
            ctx, _mlir_ciface_memfmt_native_batch_norm_f32(
                     ctx, 4, x.memref(), p.weight.memref(), p.bias.memref(),
                     p.runningMean.memref(), p.runningVar.memref(), r.memref(),
                     got.memref(), fused.saveMean.memref(),
                     fused.saveInvstd.memref(), fused.runningMean.memref(),
                     fused.runningVar.memref(), kEps, kMomentum, hasResidual,
                     relu));
        expectSameBits(got, want, what + " output");
        expectSameBits(fused.saveMean, separate.saveMean, what + " save_mean");
        expectSameBits(fused.saveInvstd, separate.saveInvstd,
                       what + " save_invstd");
        expectSameBits(fused.runningMean, separate.runningMean,
                       what + " running_mean_out");
        expectSameBits(fused.runningVar, separate.runningVar,
                       what + " running_var_out");
        // The residual has the output's layout.
        std::string impl =
            synchronised ? "synchronised" : expectedImpl(kernels, x, got);
        EXPECT_EQ(ctx.implOf(4), impl.empty() ? "reference" : impl) << what;
        if (!relu)
          continue;

        // relu's gradient: threshold_backward, then the backward, against
        // the backward reading the forward's output.
        Tensor go(shape.sizes, outLayout), masked(shape.sizes, outLayout),
            gi(shape.sizes, inLayout), gi2(shape.sizes, inLayout);
        go.fillRandom(7);
        Tensor gw({channels}), gb({channels}), gw2({channels}), gb2({channels});
        EXPECT_KERNEL_OK(ctx,
                         _mlir_ciface_memfmt_threshold_backward_f32(
                             ctx, 5, go.memref(), got.memref(), go.memref(),
                             masked.memref(), 0.0, /*has_addend=*/0));
        EXPECT_KERNEL_OK(ctx,
                         batchNormBackward(ctx, 6, masked.memref(), x.memref(),
                                           p.weight.memref(),
                                           separate.saveMean.memref(),
                                           separate.saveInvstd.memref(),
                                           gi.memref(), gw.memref(),
                                           gb.memref(), 1, 1, 1));
        EXPECT_KERNEL_OK(
            ctx, _mlir_ciface_memfmt_native_batch_norm_backward_f32(
                     ctx, 7, go.memref(), x.memref(), p.weight.memref(),
                     separate.saveMean.memref(), separate.saveInvstd.memref(),
                     got.memref(), gi2.memref(),
                     gw2.memref(), gb2.memref(), 1, 1, 1, 1));
        expectSameBits(gi2, gi, what + " grad_input");
        expectSameBits(gw2, gw, what + " grad_weight");
        expectSameBits(gb2, gb, what + " grad_bias");
        EXPECT_EQ(ctx.implOf(7), ctx.implOf(6)) << what;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, BatchNormTrainingTest,
    ::testing::Combine(::testing::Values(MEMFMT_KERNELS_FAST,
                                         MEMFMT_KERNELS_REFERENCE),
                       ::testing::ValuesIn(kShapes)));

/// The naive backward's closed form against central differences of
/// L = sum(r * forward(x, w, b)) in double, on a 2x2x2x3 case.
TEST(BatchNormTrainingTest, NaiveBackwardMatchesFiniteDifferences) {
  Tensor x({2, 2, 2, 3}), r({2, 2, 2, 3});
  x.fillRandom(8);
  r.fillRandom(9);
  Params p(2);
  auto loss = [&](const Tensor &xs, const Tensor &w, const Tensor &b) {
    NaiveForward f =
        naiveForward(xs, w, b, p.runningMean, p.runningVar, kEps, kMomentum);
    double sum = 0;
    for (int64_t i = 0; i < xs.numElements(); ++i)
      sum += r.flat(i) * f.output.value[i];
    return sum;
  };
  NaiveForward f = naiveForward(x, p.weight, p.bias, p.runningMean,
                                p.runningVar, kEps, kMomentum);
  NaiveBackward g = naiveBackward(r, x, p.weight, f, kEps);
  // Perturbations of 1e-3 on f32 values: the central difference errs by
  // O(h^2) ~ 1e-6 times the third derivative plus f32 rounding of the
  // perturbed inputs (~1e-7 / h = 1e-4 relative), hence 1e-3 absolute on
  // gradients of order 1.
  const float h = 1e-3f;
  auto difference = [&](Tensor &t, int64_t i, const Tensor &w,
                        const Tensor &b) {
    float saved = t.flat(i);
    t.flat(i) = saved + h;
    double up = loss(x, w, b);
    float upStep = t.flat(i) - saved;
    t.flat(i) = saved - h;
    double down = loss(x, w, b);
    float downStep = saved - t.flat(i);
    t.flat(i) = saved;
    return (up - down) / double(upStep + downStep);
  };
  for (int64_t i = 0; i < x.numElements(); ++i)
    EXPECT_NEAR(g.gradInput.value[i], difference(x, i, p.weight, p.bias), 1e-3)
        << "grad_input element " << i;
  for (int64_t c = 0; c < 2; ++c) {
    EXPECT_NEAR(g.gradWeight.value[c],
                difference(p.weight, c, p.weight, p.bias), 1e-3)
        << "grad_weight " << c;
    EXPECT_NEAR(g.gradBias.value[c], difference(p.bias, c, p.weight, p.bias),
                1e-3)
        << "grad_bias " << c;
  }
}

/// running_*_out may be running_* itself; the update reads before writing.
TEST(BatchNormTrainingTest, RunningStatisticsUpdateInPlace) {
  for (memfmt_kernels_t kernels :
       {MEMFMT_KERNELS_FAST, MEMFMT_KERNELS_REFERENCE}) {
    TestContext ctx(kernels);
    Tensor x({3, 4, 2, 2}, CL), y({3, 4, 2, 2}, CL);
    x.fillRandom(10);
    Params p(4);
    NaiveForward want = naiveForward(x, p.weight, p.bias, p.runningMean,
                                     p.runningVar, kEps, 0.25);
    Tensor saveMean({4}), saveInvstd({4});
    EXPECT_KERNEL_OK(
        ctx, batchNormForward(
                 ctx, 1, x.memref(), p.weight.memref(), p.bias.memref(),
                 p.runningMean.memref(), p.runningVar.memref(), y.memref(),
                 saveMean.memref(), saveInvstd.memref(), p.runningMean.memref(),
                 p.runningVar.memref(), kEps, 0.25));
    double factor = factorFor(kernels, 12);
    expectClose(p.runningMean, want.runningMean, factor, toString(kernels));
    expectClose(p.runningVar, want.runningVar, factor, toString(kernels));
  }
}

/// has_grad_* = 0: that output is another one passed again and is not
/// written; the others are right.
TEST(BatchNormTrainingTest, AbsentGradientsAreNotWritten) {
  for (memfmt_kernels_t kernels :
       {MEMFMT_KERNELS_FAST, MEMFMT_KERNELS_REFERENCE}) {
    TestContext ctx(kernels);
    Tensor x({2, 3, 3, 3}), go({2, 3, 3, 3}), gi({2, 3, 3, 3});
    x.fillRandom(11);
    go.fillRandom(12);
    Params p(3);
    NaiveForward f = naiveForward(x, p.weight, p.bias, p.runningMean,
                                  p.runningVar, kEps, kMomentum);
    Tensor saveMean({3}), saveInvstd({3}), gb({3});
    for (int64_t c = 0; c < 3; ++c) {
      saveMean.at({c}) = static_cast<float>(f.mean[c]);
      saveInvstd.at({c}) = static_cast<float>(1 / std::sqrt(f.var[c] + kEps));
    }
    NaiveBackward want = naiveBackward(go, x, p.weight, f, kEps);
    // Only grad_bias: grad_input and grad_weight are grad_bias again.
    EXPECT_KERNEL_OK(ctx,
                     batchNormBackward(ctx, 3, go.memref(), x.memref(),
                                       p.weight.memref(), saveMean.memref(),
                                       saveInvstd.memref(), gb.memref(),
                                       gb.memref(), gb.memref(), 0, 0, 1));
    expectClose(gb, want.gradBias, 1e-6, toString(kernels));
    // Only grad_input: grad_weight and grad_bias are grad_input again.
    EXPECT_KERNEL_OK(ctx,
                     batchNormBackward(ctx, 4, go.memref(), x.memref(),
                                       p.weight.memref(), saveMean.memref(),
                                       saveInvstd.memref(), gi.memref(),
                                       gi.memref(), gi.memref(), 1, 0, 0));
    expectClose(gi, want.gradInput, 1e-5, toString(kernels));
  }
}

TEST(BatchNormTrainingErrorTest, BadCallsFailWithAMessage) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor x({2, 3, 2, 2}), y({2, 3, 2, 2});
  Params p(3);
  Tensor saveMean({3}), saveInvstd({3}), rmOut({3}), rvOut({3});
  auto forward = [&](const Tensor &in, const Tensor &out, const Tensor &sm,
                     const Tensor &rm, const Tensor &rmo, double eps) {
    return batchNormForward(ctx, 9, in.memref(), p.weight.memref(),
                            p.bias.memref(), rm.memref(), p.runningVar.memref(),
                            out.memref(), sm.memref(), saveInvstd.memref(),
                            rmo.memref(), rvOut.memref(), eps, kMomentum);
  };
  auto expectError = [&](int32_t status, const std::string &message) {
    EXPECT_EQ(status, MEMFMT_STATUS_INVALID_ARGUMENT) << message;
    EXPECT_NE(ctx.lastError().find(message), std::string::npos)
        << ctx.lastError();
  };
  expectError(forward(x, y, saveMean, p.runningMean, rmOut, 0.0),
              "memfmt_native_batch_norm_f32 (node 9): eps is 0.000000, "
              "expected a finite value > 0");
  expectError(batchNormForward(ctx, 9, x.memref(), p.weight.memref(),
                               p.bias.memref(), p.runningMean.memref(),
                               p.runningVar.memref(), y.memref(),
                               saveMean.memref(), saveInvstd.memref(),
                               rmOut.memref(), rvOut.memref(), kEps, -0.1),
              "momentum is -0.100000, expected a finite value >= 0");
  Tensor flat({3});
  expectError(forward(flat, flat, saveMean, p.runningMean, rmOut, kEps),
              "input has rank 1 (shape [3]), expected at least 2 (channels "
              "in dim 1)");
  Tensor wrong({4});
  expectError(forward(x, y, wrong, p.runningMean, rmOut, kEps),
              "save_mean has shape [4], expected [3] (one per channel of "
              "input [2, 3, 2, 2])");
  Tensor single({1, 3, 1, 1}), singleOut({1, 3, 1, 1});
  expectError(forward(single, singleOut, saveMean, p.runningMean, rmOut, kEps),
              "input [1, 3, 1, 1] has fewer than 2 values per channel");
  // running_mean_out may be running_mean exactly, but not another view of
  // its buffer, and no other output may overlap an input.
  Tensor buffer({5});
  RawView inner(buffer, 0, {3}, {1}), shifted(buffer, 1, {3}, {1});
  auto forwardViews = [&](const RawView &rm, const RawView &rmo) {
    return batchNormForward(ctx, 9, x.memref(), p.weight.memref(),
                            p.bias.memref(), rm.memref(), p.runningVar.memref(),
                            y.memref(), saveMean.memref(), saveInvstd.memref(),
                            rmo.memref(), rvOut.memref(), kEps, kMomentum);
  };
  expectError(forwardViews(inner, shifted),
              "running_mean_out [3] (strides [1]) overlaps running_mean [3] "
              "(strides [1]); in place it must be exactly running_mean");
  expectError(forward(x, x, saveMean, p.runningMean, rmOut, kEps),
              "output [2, 3, 2, 2] (strides [12, 4, 2, 1]) overlaps input");
  // Backward: grad_input over grad_out.
  Tensor go({2, 3, 2, 2});
  EXPECT_EQ(batchNormBackward(ctx, 10, go.memref(), x.memref(),
                              p.weight.memref(), saveMean.memref(),
                              saveInvstd.memref(), go.memref(), rmOut.memref(),
                              rvOut.memref(), 1, 1, 1),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("grad_input [2, 3, 2, 2] (strides [12, 4, "
                                 "2, 1]) overlaps grad_out"),
            std::string::npos)
      << ctx.lastError();
  EXPECT_EQ(batchNormBackward(ctx, 11, go.memref(), x.memref(),
                              p.weight.memref(), saveMean.memref(),
                              saveInvstd.memref(), y.memref(), rmOut.memref(),
                              rvOut.memref(), 2, 1, 1),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("has_grad_input is 2, expected 0 or 1"),
            std::string::npos)
      << ctx.lastError();
  // The fusion epilogue: flags, a residual and an output of the input's
  // shape, a residual apart from the output.
  auto fused = [&](const Tensor &residual, const Tensor &out,
                   int64_t hasResidual, int64_t relu) {
    return _mlir_ciface_memfmt_native_batch_norm_f32(
        ctx, 12, x.memref(), p.weight.memref(), p.bias.memref(),
        p.runningMean.memref(), p.runningVar.memref(), residual.memref(),
        out.memref(), saveMean.memref(), saveInvstd.memref(), rmOut.memref(),
        rvOut.memref(), kEps, kMomentum, hasResidual, relu);
  };
  Tensor r({2, 3, 2, 2}), small({2, 3, 2, 1});
  expectError(fused(r, y, 2, 0), "has_residual is 2, expected 0 or 1");
  expectError(fused(r, y, 1, 3), "relu is 3, expected 0 or 1");
  expectError(fused(small, y, 1, 1),
              "residual has shape [2, 3, 2, 1], expected [2, 3, 2, 2] (the "
              "input's shape)");
  expectError(fused(y, y, 1, 1), "output [2, 3, 2, 2] (strides [12, 4, 2, "
                                 "1]) overlaps residual");
  EXPECT_KERNEL_OK(ctx, fused(small, y, 0, 1)); // An absent residual: unread.
  auto fusedBackward = [&](const Tensor &out, int64_t relu) {
    return _mlir_ciface_memfmt_native_batch_norm_backward_f32(
        ctx, 13, go.memref(), x.memref(), p.weight.memref(), saveMean.memref(),
        saveInvstd.memref(), out.memref(), r.memref(), rmOut.memref(),
        rvOut.memref(), 1, 1, 1, relu);
  };
  expectError(fusedBackward(y, 2), "relu is 2, expected 0 or 1");
  expectError(fusedBackward(small, 1),
              "output has shape [2, 3, 2, 1], expected [2, 3, 2, 2] (the "
              "input's shape)");
  expectError(fusedBackward(r, 1), "grad_input [2, 3, 2, 2] (strides [12, 4, "
                                   "2, 1]) overlaps output");
}

/// Times the ResNet stem's batch norm (N=8, C=64, 112x112) forward and
/// backward in NCHW and NHWC. Run with --gtest_also_run_disabled_tests.
TEST(BatchNormTrainingTest, DISABLED_TimeResNetStem) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  const std::vector<int64_t> shape = {8, 64, 112, 112};
  for (Layout layout : {C, CL}) {
    Tensor x(shape, layout), y(shape, layout), go(shape, layout),
        gi(shape, layout);
    x.fillRandom(1);
    go.fillRandom(2);
    Params p(64);
    Tensor saveMean({64}), saveInvstd({64}), gw({64}), gb({64});
    auto forward = [&] {
      return batchNormForward(
          ctx, 1, x.memref(), p.weight.memref(), p.bias.memref(),
          p.runningMean.memref(), p.runningVar.memref(), y.memref(),
          saveMean.memref(), saveInvstd.memref(), p.runningMean.memref(),
          p.runningVar.memref(), kEps, kMomentum);
    };
    auto backward = [&] {
      return batchNormBackward(
          ctx, 2, go.memref(), x.memref(), p.weight.memref(), saveMean.memref(),
          saveInvstd.memref(), gi.memref(), gw.memref(), gb.memref(), 1, 1, 1);
    };
    for (auto [name, call] :
         {std::pair<const char *, std::function<int32_t()>>{"forward", forward},
          {"backward", backward}}) {
      double ms = millisecondsPerCall(call, 10);
      std::printf("batch norm %s %s [8, 64, 112, 112]: %.2f ms per call (%s)\n",
                  name, toString(layout), ms,
                  ctx.implOf(name[0] == 'f' ? 1 : 2).c_str());
    }
  }
}

} // namespace
