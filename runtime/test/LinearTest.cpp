//===- LinearTest.cpp - linear against a naive matrix product -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt_linear_f32 on the reference and fast kernels, with and without bias
// and relu, for row-major, transposed (column-major) and padded strided
// operands, single rows and single features, against naiveLinear. The fast
// mode must use oneDNN when the build has it.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

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
                                    out.memref(), bias))
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
