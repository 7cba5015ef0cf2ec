//===- LinearBackwardTest.cpp - linear_backward against naive loops -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt_linear_backward_f32 on the reference and fast kernels against a
// naive triple loop written here (grad_input = grad_output @ weight,
// grad_weight = grad_output^T @ input, grad_bias = column sums of
// grad_output), for row-major, padded and column-major operands, one row,
// one feature, one output and a ResNet head, with each has_* flag off in
// turn (the absent gradient, a buffer of sentinels, must stay untouched).
// The fast mode must use oneDNN when the build has it; the validator's
// messages for a wrong grad_weight shape and aliasing are checked too.
//
//===----------------------------------------------------------------------===//

#include "Gradients.h"

using namespace memfmt::test;

namespace {

constexpr Layout kMatrixLayouts[] = {
    Layout::Contiguous, Layout::ChannelsLastSlice, Layout::Strided};

struct LinearBackwardCase {
  const char *name;
  int64_t n, k, m;
};

/// gtest prints a case by its name.
void PrintTo(const LinearBackwardCase &c, std::ostream *os) { *os << c.name; }

const LinearBackwardCase kCases[] = {
    {"Small", 3, 17, 5},         {"OneRow", 1, 64, 10},
    {"OneFeature", 4, 1, 3},     {"OneOutput", 5, 9, 1},
    {"ResNetHead", 8, 512, 100},
};

Gradients naiveGradients(const Tensor &dy, const Tensor &in, const Tensor &w) {
  const int64_t n = in.sizes[0], k = in.sizes[1], m = w.sizes[0];
  Gradients g;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      double sum = 0, mag = 0;
      for (int64_t j = 0; j < m; ++j) {
        double t = double(dy.at({r, j})) * w.at({j, c});
        sum += t;
        mag += std::fabs(t);
      }
      g.input.value.push_back(sum);
      g.input.magnitude.push_back(mag);
    }
  for (int64_t j = 0; j < m; ++j)
    for (int64_t c = 0; c < k; ++c) {
      double sum = 0, mag = 0;
      for (int64_t r = 0; r < n; ++r) {
        double t = double(dy.at({r, j})) * in.at({r, c});
        sum += t;
        mag += std::fabs(t);
      }
      g.weight.value.push_back(sum);
      g.weight.magnitude.push_back(mag);
    }
  for (int64_t j = 0; j < m; ++j) {
    double sum = 0, mag = 0;
    for (int64_t r = 0; r < n; ++r) {
      sum += dy.at({r, j});
      mag += std::fabs(dy.at({r, j}));
    }
    g.bias.value.push_back(sum);
    g.bias.magnitude.push_back(mag);
  }
  return g;
}

class LinearBackwardTest
    : public ::testing::TestWithParam<
          std::tuple<LinearBackwardCase, memfmt_kernels_t>> {};

TEST_P(LinearBackwardTest, MatchesNaiveForEveryLayoutAndFlagSet) {
  const auto &[lc, kernels] = GetParam();
  const bool reference = kernels == MEMFMT_KERNELS_REFERENCE;
  TestContext ctx(kernels);
  int64_t node = 0;
  for (Layout inputs : kMatrixLayouts) {
    for (Layout outputs : kMatrixLayouts) {
      Tensor dy({lc.n, lc.m}, inputs), in({lc.n, lc.k}, inputs);
      Tensor w({lc.m, lc.k}, outputs == Layout::Strided ? Layout::Contiguous
                                                        : Layout::Strided);
      dy.fillRandom(61);
      in.fillRandom(62);
      w.fillRandom(63);
      Gradients want = naiveGradients(dy, in, w);
      for (const int64_t *flags : kGradientFlagSets) {
        Tensor dx({lc.n, lc.k}, outputs), dw({lc.m, lc.k}, outputs);
        Tensor db({lc.m}, outputs);
        std::string what = std::string(lc.name) + " grad_output " +
                           dy.describe() + " weight " + w.describe() +
                           " grad_input " + dx.describe() + " flags " +
                           std::to_string(flags[0]) + std::to_string(flags[1]) +
                           std::to_string(flags[2]);
        ASSERT_EQ(_mlir_ciface_memfmt_linear_backward_f32(
                      ctx, node, dy.memref(), in.memref(), w.memref(),
                      dx.memref(), dw.memref(), db.memref(), flags[0], flags[1],
                      flags[2]),
                  MEMFMT_STATUS_OK)
            << what << ": " << ctx.lastError();
        // A grad_input element sums M products, a grad_weight or
        // grad_bias element N.
        expectGradients(dx, dw, db, flags, want,
                        reference ? kReferenceFactor : floatSumFactor(lc.m),
                        reference ? kReferenceFactor : floatSumFactor(lc.n),
                        what);
        std::string impl = ctx.implOf(node);
        if (reference)
          EXPECT_EQ(impl, "reference") << what;
        else if (memfmt_runtime_has_onednn())
          EXPECT_EQ(impl, "onednn") << what;
        ++node;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, LinearBackwardTest,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(MEMFMT_KERNELS_REFERENCE,
                                         MEMFMT_KERNELS_FAST)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) +
             toString(std::get<1>(info.param));
    });

/// With no rows grad_weight and grad_bias are zeros; with no features
/// grad_input has nothing to sum either. Both modes must write those zeros.
TEST(LinearBackwardEmptyTest, EmptyDimsGiveZeros) {
  for (memfmt_kernels_t kernels :
       {MEMFMT_KERNELS_REFERENCE, MEMFMT_KERNELS_FAST}) {
    TestContext ctx(kernels);
    for (auto [n, k, m] : {std::tuple<int64_t, int64_t, int64_t>{0, 5, 3},
                           std::tuple<int64_t, int64_t, int64_t>{4, 5, 0}}) {
      Tensor dy({n, m}), in({n, k}), w({m, k}), dx({n, k}), dw({m, k});
      Tensor db({m});
      in.fillRandom(1);
      w.fillRandom(2);
      ASSERT_EQ(_mlir_ciface_memfmt_linear_backward_f32(
                    ctx, 0, dy.memref(), in.memref(), w.memref(), dx.memref(),
                    dw.memref(), db.memref(), 1, 1, 1),
                MEMFMT_STATUS_OK)
          << ctx.lastError();
      for (const Tensor *t : {&dx, &dw, &db})
        for (int64_t i = 0; i < t->numElements(); ++i)
          ASSERT_EQ(t->flat(i), 0.0f)
              << toString(kernels) << " N=" << n << " M=" << m;
    }
  }
}

TEST(LinearBackwardValidationTest, ShapesAndAliasing) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor dy({4, 3}), in({4, 5}), w({3, 5}), dx({4, 5}), dw({3, 5}), db({3});
  Tensor badWeight({5, 3});
  auto run = [&](const Tensor &gradInput, const Tensor &gradWeight) {
    return _mlir_ciface_memfmt_linear_backward_f32(
        ctx, 2, dy.memref(), in.memref(), w.memref(), gradInput.memref(),
        gradWeight.memref(), db.memref(), 1, 1, 1);
  };
  auto expectInvalid = [&](int32_t status, const std::string &text) {
    memfmt::test::expectInvalid(ctx, status, "memfmt_linear_backward_f32",
                                text);
  };
  expectInvalid(run(dx, badWeight), "grad_weight has shape [5, 3], expected "
                                    "[3, 5] (the weight's shape)");
  expectInvalid(run(dx, w), "grad_weight is the same buffer as weight");
  Tensor wrongOutput({4, 2});
  expectInvalid(_mlir_ciface_memfmt_linear_backward_f32(
                    ctx, 2, wrongOutput.memref(), in.memref(), w.memref(),
                    dx.memref(), dw.memref(), db.memref(), 1, 1, 1),
                "grad_output has shape [4, 2], expected [4, 3]");
}

} // namespace
