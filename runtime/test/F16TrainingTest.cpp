//===- F16TrainingTest.cpp - The training kernels' f16 entry points -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// An f16 training step (memfmt-compile --train --precision f16, CUDA only)
// calls the training kernels with f16 activations and gradients. The CUDA
// kernel tests compare them with the CPU reference's f16 entry points, so
// those must be right: here, in both kernel families, each f16 call on f16
// inputs gives the f32 reference kernel's result on the same (widened)
// values, rounded once to f16 where the output is f16 and f32 as it is
// where Kernels.def keeps it f32 (statistics, weight and bias gradients):
// convolution_backward, native_batch_norm (training, running statistics
// updated in place) and its backward, threshold_backward; channels-last and
// strided, an odd shape.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include "memfmt/runtime/io/HalfFloat.h"

using namespace memfmt::test;
namespace io = memfmt::io;

namespace {

using namespace memfmt::test::layout_names;

using Half = TestTensor<uint16_t>;

const memfmt_kernels_t kFamilies[] = {MEMFMT_KERNELS_FAST,
                                      MEMFMT_KERNELS_REFERENCE};

/// Random f16 values and the same values in f32.
struct Pair {
  Half half;
  Tensor wide;
  Pair(const std::vector<int64_t> &sizes, Layout layout, uint32_t seed)
      : half(sizes, layout), wide(sizes, layout) {
    Tensor t(sizes, layout);
    t.fillRandom(seed, -2, 2);
    for (int64_t i = 0; i < t.numElements(); ++i) {
      half.flat(i) = io::floatToHalf(t.flat(i));
      wide.flat(i) = io::halfToFloat(half.flat(i));
    }
  }
};

/// `got` (f16) is `want` (f32) rounded to f16, bit for bit.
::testing::AssertionResult roundedOnce(const Half &got, const Tensor &want) {
  for (int64_t i = 0; i < want.numElements(); ++i)
    if (got.flat(i) != io::floatToHalf(want.flat(i)))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << io::halfToFloat(got.flat(i))
             << " against " << want.flat(i);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult sameF32(const Tensor &got, const Tensor &want) {
  for (int64_t i = 0; i < want.numElements(); ++i)
    if (got.flat(i) != want.flat(i))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got.flat(i) << " against "
             << want.flat(i);
  return ::testing::AssertionSuccess();
}

TEST(F16TrainingTest, EntryPointsAreTheReferenceRoundedOnce) {
  const int64_t n = 2, c = 5, h = 7, w = 6, o = 4;
  const std::vector<int64_t> in = {n, c, h, w}, out = {n, o, h, w},
                             wt = {o, c, 3, 3};
  for (memfmt_kernels_t kernels : kFamilies)
    for (Layout layout : {CL, S}) {
      // The f32 reference is the oracle of every f16 call.
      TestContext ctx(kernels), ref(MEMFMT_KERNELS_REFERENCE);
      const std::string what =
          std::string(toString(layout)) + " " +
          (kernels == MEMFMT_KERNELS_FAST ? "fast" : "reference");
      Pair x(in, layout, 1), gy(out, layout, 2), weight(wt, layout, 3);

      Half gx(in, layout);
      Tensor gw(wt, layout), gb({o}), gxRef(in, layout), gwRef(wt, layout),
          gbRef({o});
      EXPECT_KERNEL_OK(ctx,
                       _mlir_ciface_memfmt_convolution_backward_f16(
                           ctx, 0, gy.half.memref(), x.half.memref(),
                           weight.half.memref(), gx.memref(), gw.memref(),
                           gb.memref(), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
      EXPECT_KERNEL_OK(ref,
                       _mlir_ciface_memfmt_convolution_backward_f32(
                           ref, 0, gy.wide.memref(), x.wide.memref(),
                           weight.wide.memref(), gxRef.memref(), gwRef.memref(),
                           gbRef.memref(), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
      EXPECT_TRUE(roundedOnce(gx, gxRef)) << "conv grad_input " << what;
      EXPECT_TRUE(sameF32(gw, gwRef)) << "conv grad_weight " << what;
      EXPECT_TRUE(sameF32(gb, gbRef)) << "conv grad_bias " << what;

      Tensor gamma({c}), beta({c});
      gamma.fillRandom(4, 0.5, 1.5);
      beta.fillRandom(5);
      Tensor mean({c}), var({c}), meanRef({c}), varRef({c});
      for (int64_t i = 0; i < c; ++i) {
        mean.flat(i) = meanRef.flat(i) = 0.1f * i;
        var.flat(i) = varRef.flat(i) = 1.0f + i;
      }
      Half y(in, layout);
      Tensor yRef(in, layout), saveMean({c}), saveInvstd({c}), saveMeanRef({c}),
          saveInvstdRef({c});
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_native_batch_norm_f16(
                                ctx, 1, x.half.memref(), gamma.memref(),
                                beta.memref(), mean.memref(), var.memref(),
                                x.half.memref(), y.memref(), saveMean.memref(),
                                saveInvstd.memref(), mean.memref(),
                                var.memref(), 1e-5, 0.1, 0, 0));
      EXPECT_KERNEL_OK(
          ref, _mlir_ciface_memfmt_native_batch_norm_f32(
                   ref, 1, x.wide.memref(), gamma.memref(), beta.memref(),
                   meanRef.memref(), varRef.memref(), x.wide.memref(),
                   yRef.memref(), saveMeanRef.memref(), saveInvstdRef.memref(),
                   meanRef.memref(), varRef.memref(), 1e-5, 0.1, 0, 0));
      EXPECT_TRUE(roundedOnce(y, yRef)) << "batch norm output " << what;
      EXPECT_TRUE(sameF32(saveMean, saveMeanRef)) << "save_mean " << what;
      EXPECT_TRUE(sameF32(saveInvstd, saveInvstdRef)) << "invstd " << what;
      EXPECT_TRUE(sameF32(mean, meanRef)) << "running_mean " << what;
      EXPECT_TRUE(sameF32(var, varRef)) << "running_var " << what;

      Pair gyBn(in, layout, 6);
      Half gxBn(in, layout);
      Tensor gxBnRef(in, layout), gGamma({c}), gBeta({c}), gGammaRef({c}),
          gBetaRef({c});
      EXPECT_KERNEL_OK(
          ctx, _mlir_ciface_memfmt_native_batch_norm_backward_f16(
                   ctx, 2, gyBn.half.memref(), x.half.memref(), gamma.memref(),
                   saveMean.memref(), saveInvstd.memref(), x.half.memref(),
                   gxBn.memref(), gGamma.memref(), gBeta.memref(), 1, 1, 1, 0));
      EXPECT_KERNEL_OK(ref, _mlir_ciface_memfmt_native_batch_norm_backward_f32(
                                ref, 2, gyBn.wide.memref(), x.wide.memref(),
                                gamma.memref(), saveMeanRef.memref(),
                                saveInvstdRef.memref(), x.wide.memref(),
                                gxBnRef.memref(), gGammaRef.memref(),
                                gBetaRef.memref(), 1, 1, 1, 0));
      EXPECT_TRUE(roundedOnce(gxBn, gxBnRef)) << "bn grad_input " << what;
      EXPECT_TRUE(sameF32(gGamma, gGammaRef)) << "bn grad_weight " << what;
      EXPECT_TRUE(sameF32(gBeta, gBetaRef)) << "bn grad_bias " << what;

      Half gRelu(in, layout);
      Tensor gReluRef(in, layout);
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_threshold_backward_f16(
                                ctx, 3, gyBn.half.memref(), x.half.memref(),
                                x.half.memref(), gRelu.memref(), 0.0, 0));
      EXPECT_KERNEL_OK(ref, _mlir_ciface_memfmt_threshold_backward_f32(
                                ref, 3, gyBn.wide.memref(), x.wide.memref(),
                                x.wide.memref(), gReluRef.memref(), 0.0, 0));
      EXPECT_TRUE(roundedOnce(gRelu, gReluRef)) << "relu gradient " << what;
    }
}

} // namespace
