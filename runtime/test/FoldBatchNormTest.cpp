//===- FoldBatchNormTest.cpp - Folding batch norm into conv weights -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// fold_batch_norm (run once at load by compiled models) against the formula
// of Kernels.def, with and without a conv bias, for NCHW, channels-last and
// strided weights (both kernel selections), plus its argument checks; and
// the property that matters: conv(x, folded weight) + folded bias equals
// batch_norm(conv(x, weight)).
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include <cmath>

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

struct BnParams {
  Tensor gamma, beta, mean, var;
  explicit BnParams(int64_t channels)
      : gamma({channels}, C), beta({channels}, C), mean({channels}, C),
        var({channels}, C) {
    gamma.fillRandom(1, 0.5, 1.5);
    beta.fillRandom(2, -0.2, 0.2);
    mean.fillRandom(3, -0.2, 0.2);
    var.fillRandom(4, 0.5, 1.5);
  }
};

TEST(FoldBatchNormTest, MatchesFormulaInEveryLayout) {
  const double eps = 1e-5;
  for (memfmt_kernels_t kernels :
       {MEMFMT_KERNELS_REFERENCE, MEMFMT_KERNELS_FAST}) {
    TestContext ctx(kernels);
    for (Layout layout : {C, CL, S}) {
      for (bool withBias : {false, true}) {
        std::vector<int64_t> shape = {6, 3, 3, 5};
        Tensor weight(shape, layout), newWeight(shape, layout);
        Tensor bias({6}, C), newBias({6}, C);
        weight.fillRandom(7);
        bias.fillRandom(8);
        BnParams bn(6);
        EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_fold_batch_norm_f32(
                                  ctx, 0, weight.memref(),
                                  withBias ? bias.memref() : newBias.memref(),
                                  bn.gamma.memref(), bn.beta.memref(),
                                  bn.mean.memref(), bn.var.memref(),
                                  newWeight.memref(), newBias.memref(), eps,
                                  withBias ? 1 : 0));
        for (int64_t o = 0; o < 6; ++o) {
          double scale = bn.gamma.flat(o) / std::sqrt(bn.var.flat(o) + eps);
          double b = withBias ? bias.flat(o) : 0.0;
          EXPECT_NEAR(newBias.flat(o),
                      (b - bn.mean.flat(o)) * scale + bn.beta.flat(o), 1e-6);
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t h = 0; h < 3; ++h)
              for (int64_t w = 0; w < 5; ++w)
                EXPECT_NEAR(newWeight.at({o, i, h, w}),
                            weight.at({o, i, h, w}) * scale, 1e-6);
        }
        EXPECT_TRUE(newWeight.gapsIntact());
      }
    }
  }
}

// conv(x, folded) + folded bias == batch_norm(conv(x, w)): the rewrite the
// compiler's memfmt-fuse-conv relies on.
TEST(FoldBatchNormTest, FoldedConvEqualsConvThenBatchNorm) {
  TestContext ctx(MEMFMT_KERNELS_REFERENCE);
  Tensor x({2, 3, 7, 7}, CL), w({4, 3, 3, 3}, C), wf({4, 3, 3, 3}, CL);
  Tensor bf({4}, C), y({2, 4, 5, 5}, CL), z({2, 4, 5, 5}, CL),
      yf({2, 4, 5, 5}, CL);
  x.fillRandom(11);
  w.fillRandom(12);
  BnParams bn(4);
  const double eps = 1e-3;
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_fold_batch_norm_f32(
                            ctx, 0, w.memref(), bf.memref(), bn.gamma.memref(),
                            bn.beta.memref(), bn.mean.memref(),
                            bn.var.memref(), wf.memref(), bf.memref(), eps, 0));
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_conv2d_f32(
                            ctx, 1, x.memref(), w.memref(), y.memref(),
                            y.memref(), y.memref(), 1, 1, 0, 0, 0, 0, 1, 1, 1,
                            0, 0, 0, 0, 0.0, 0.0));
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_batch_norm_f32(
                            ctx, 2, y.memref(), bn.gamma.memref(),
                            bn.beta.memref(), bn.mean.memref(),
                            bn.var.memref(), z.memref(), eps));
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_conv2d_f32(
                            ctx, 3, x.memref(), wf.memref(), bf.memref(),
                            yf.memref(), yf.memref(), 1, 1, 0, 0, 0, 0, 1, 1,
                            1, 1, 0, 0, 0, 0.0, 0.0));
  for (int64_t i = 0; i < z.numElements(); ++i)
    EXPECT_NEAR(yf.flat(i), z.flat(i), 1e-5 * (1 + std::fabs(z.flat(i))));
}

TEST(FoldBatchNormTest, RejectsBadArguments) {
  TestContext ctx(MEMFMT_KERNELS_REFERENCE);
  Tensor w({4, 3, 3, 3}, C), wf({4, 3, 3, 3}, C), bf({4}, C), wrong({5}, C);
  BnParams bn(4);
  EXPECT_EQ(_mlir_ciface_memfmt_fold_batch_norm_f32(
                ctx, 7, w.memref(), bf.memref(), wrong.memref(),
                bn.beta.memref(), bn.mean.memref(), bn.var.memref(),
                wf.memref(), bf.memref(), 1e-5, 0),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memfmt_context_last_error(ctx)).find("gamma"),
            std::string::npos)
      << memfmt_context_last_error(ctx);
  EXPECT_EQ(_mlir_ciface_memfmt_fold_batch_norm_f32(
                ctx, 7, w.memref(), bf.memref(), bn.gamma.memref(),
                bn.beta.memref(), bn.mean.memref(), bn.var.memref(),
                wf.memref(), bf.memref(), -1.0, 0),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memfmt_context_last_error(ctx)).find("eps"),
            std::string::npos);
}

} // namespace
