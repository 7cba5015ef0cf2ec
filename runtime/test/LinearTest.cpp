//===- LinearTest.cpp - linear against a naive matrix product -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt_linear_f32 on the reference and fast kernels, with and without bias,
// for row-major, transposed (column-major) and padded strided operands,
// single rows and single features, against naiveLinear; and with each fused
// activation (the linear + GELU epilogue) against naiveLinear followed by
// the function in double. The fast mode must use oneDNN when the build has
// it.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include "memfmt/runtime/elementwise_ops.h"

#include <algorithm>
#include <cmath>

using namespace memfmt::test;

namespace {

/// Operand layouts for rank 2: row-major, row-major with padding (a slice),
/// and column-major with padding (Layout::Strided is column-major for 2-D).
constexpr Layout kMatrixLayouts[] = {
    Layout::Contiguous, Layout::ChannelsLastSlice, Layout::Strided};

struct LinearCase {
  const char *name;
  int64_t n, k, m;
};

/// gtest prints a case by its name.
void PrintTo(const LinearCase &c, std::ostream *os) { *os << c.name; }

const LinearCase kLinearCases[] = {
    {"Small", 3, 17, 5},
    {"OneRow", 1, 64, 10},
    {"OneFeature", 4, 1, 3},
    {"OneOutput", 5, 9, 1},
    {"ResNetHeadSlice", 2, 256, 40},
};

class LinearTest : public ::testing::TestWithParam<
                       std::tuple<LinearCase, memfmt_kernels_t>> {};

TEST_P(LinearTest, MatchesNaiveForEveryLayout) {
  const auto &[lc, kernels] = GetParam();
  TestContext ctx(kernels);
  int64_t node = 0;
  for (Layout inLayout : kMatrixLayouts) {
    for (Layout weightLayout : kMatrixLayouts) {
      for (Layout outLayout : kMatrixLayouts) {
        for (bool bias : {false, true}) {
          Tensor in({lc.n, lc.k}, inLayout), w({lc.m, lc.k}, weightLayout);
          Tensor b({lc.m}, outLayout), out({lc.n, lc.m}, outLayout);
          in.fillRandom(51);
          w.fillRandom(52);
          b.fillRandom(53);
          std::string what = std::string(lc.name) + " input " + in.describe() +
                             " weight " + w.describe() + " output " +
                             out.describe() + (bias ? " bias" : "");
          EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_linear_f32(
                                    ctx, node, in.memref(), w.memref(),
                                    bias ? b.memref() : out.memref(),
                                    out.memref(), bias, 0, 0.0, 0.0))
              << what;
          expectClose(out, naiveLinear(in, w, bias ? &b : nullptr),
                      kernels == MEMFMT_KERNELS_REFERENCE
                          ? kReferenceFactor
                          : floatSumFactor(lc.k + 1),
                      what);
          if (kernels == MEMFMT_KERNELS_REFERENCE) {
            EXPECT_EQ(ctx.implOf(node), "reference");
          } else if (memfmt_runtime_has_onednn() &&
                     inLayout == Layout::Contiguous &&
                     outLayout == Layout::Contiguous) {
            EXPECT_EQ(ctx.implOf(node), "onednn") << what;
          }
          ++node;
        }
      }
    }
  }
}

/// Each activation a linear layer's epilogue takes, as a function of double,
/// with its parameters.
struct LinearActivation {
  const char *name;
  int64_t op;
  double alpha, beta;
  double (*f)(double, double, double);
};

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

const LinearActivation kActivations[] = {
    {"sigmoid", MEMFMT_ELTWISE_SIGMOID, 0, 0,
     [](double v, double, double) { return sigmoid(v); }},
    {"silu", MEMFMT_ELTWISE_SILU, 0, 0,
     [](double v, double, double) { return v * sigmoid(v); }},
    {"hardswish", MEMFMT_ELTWISE_HARDSWISH, 0, 0,
     [](double v, double, double) {
       return v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0;
     }},
    {"hardsigmoid", MEMFMT_ELTWISE_HARDSIGMOID, 1.0 / 6, 0.5,
     [](double v, double a, double b) {
       return std::min(std::max(a * v + b, 0.0), 1.0);
     }},
    {"relu6", MEMFMT_ELTWISE_CLAMP, 0.0, 6.0,
     [](double v, double lo, double hi) { return std::min(std::max(v, lo), hi); }},
    {"gelu", MEMFMT_ELTWISE_GELU_ERF, 0, 0,
     [](double v, double, double) {
       return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
     }},
    {"gelu_tanh", MEMFMT_ELTWISE_GELU_TANH, 0, 0,
     [](double v, double, double) {
       const double c = std::sqrt(2.0 / M_PI);
       return 0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v)));
     }},
};

TEST_P(LinearTest, AppliesTheFusedActivation) {
  const auto &[lc, kernels] = GetParam();
  TestContext ctx(kernels);
  int64_t node = 0;
  for (const LinearActivation &act : kActivations) {
    for (Layout outLayout : {Layout::Contiguous, Layout::Strided}) {
      Tensor in({lc.n, lc.k}), w({lc.m, lc.k}), b({lc.m});
      Tensor out({lc.n, lc.m}, outLayout);
      in.fillRandom(61, -2, 2);
      w.fillRandom(62);
      b.fillRandom(63);
      std::string what = std::string(lc.name) + " " + act.name + " output " +
                         out.describe();
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_linear_f32(
                                ctx, node, in.memref(), w.memref(), b.memref(),
                                out.memref(), 1, act.op, act.alpha, act.beta))
          << what;
      // The function of the exact product: the product's rounding moves it
      // by at most 1.5x (the largest slope: hardswish at 3), and evaluating
      // the function in f32 adds a few ulps of its argument (GELU's tail
      // is 0.5 * x * (1 + tanh(...)), where 1 + tanh cancels).
      Expected want = naiveLinear(in, w, &b);
      const double factor = kernels == MEMFMT_KERNELS_REFERENCE
                                ? kReferenceFactor
                                : floatSumFactor(lc.k + 1);
      int64_t failures = 0;
      for (int64_t i = 0; i < out.numElements() && failures < 5; ++i) {
        double x = want.value[i], expected = act.f(x, act.alpha, act.beta);
        double tolerance = 1e-5 * std::fabs(expected) +
                           1.5 * factor * want.magnitude[i] +
                           1e-6 * std::fabs(x);
        if (!(std::fabs(out.flat(i) - expected) <= tolerance)) {
          ADD_FAILURE() << what << ": element " << i << " is " << out.flat(i)
                        << ", expected " << expected << " (within "
                        << tolerance << ")";
          ++failures;
        }
      }
      EXPECT_TRUE(out.gapsIntact()) << what;
      if (kernels == MEMFMT_KERNELS_FAST && memfmt_runtime_has_onednn() &&
          outLayout == Layout::Contiguous)
        EXPECT_EQ(ctx.implOf(node), "onednn") << what;
      ++node;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, LinearTest,
    ::testing::Combine(::testing::ValuesIn(kLinearCases),
                       ::testing::Values(MEMFMT_KERNELS_REFERENCE,
                                         MEMFMT_KERNELS_FAST)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) +
             toString(std::get<1>(info.param));
    });

} // namespace
