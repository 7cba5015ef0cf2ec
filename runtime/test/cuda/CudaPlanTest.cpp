//===- CudaPlanTest.cpp - The CUDA backend's launch planning --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Everything the CUDA backend decides on the host, checked without a GPU
// (runtime/cuda/CudaPlan.h): dense same-layout operands of any format merge
// into one flat run, broadcasts keep zero strides, per-channel plans are
// recognised as NHWC rows or NCHW planes (and vectorised only when channel
// counts, strides and pointers allow 16-byte accesses), cuBLAS gets the
// right transposition flags and leading dimensions for row-major,
// column-major and padded matrices, convolutions pick the format of their
// output, pools take the NHWC kernel only with unit channel strides, layer
// norm walks the rows of any layout with a warp per row (a block per row
// beyond kLayerNormWarpLimit elements), and softmax walks the rows along
// any dim with a warp or a block per unit-stride row and a thread per row
// otherwise.
//
//===----------------------------------------------------------------------===//

#include "CudaPlan.h"

#include <gtest/gtest.h>

using namespace memfmt::runtime::cuda;

namespace {

constexpr int64_t kNchw[4] = {3 * 4 * 5, 4 * 5, 5, 1};
constexpr int64_t kNhwc[4] = {4 * 5 * 3, 1, 5 * 3, 3};
constexpr int64_t kSizes[4] = {2, 3, 4, 5};

TEST(StridedPlanTest, DenseSameLayoutIsOneFlatRun) {
  for (const int64_t *layout : {kNchw, kNhwc}) {
    const int64_t *strides[2] = {layout, layout};
    StridedPlan<2> plan = planStrided<2>(4, kSizes, strides);
    EXPECT_EQ(plan.total, 120);
    ASSERT_EQ(plan.rank, 1);
    EXPECT_EQ(plan.sizes[0], 120);
    EXPECT_TRUE(isFlat(plan));
  }
}

TEST(StridedPlanTest, TransposeKeepsBothOrders) {
  const int64_t *strides[2] = {kNhwc, kNchw};
  StridedPlan<2> plan = planStrided<2>(4, kSizes, strides);
  EXPECT_FALSE(isFlat(plan));
  EXPECT_EQ(plan.total, 120);
  // Outermost first by the output's (NHWC) strides: N, H, W, C; H and W
  // merge in both (W-stride * W == H-stride in NHWC and NCHW).
  ASSERT_EQ(plan.rank, 3);
  EXPECT_EQ(plan.sizes[0], 2);
  EXPECT_EQ(plan.sizes[1], 20);
  EXPECT_EQ(plan.sizes[2], 3);
  EXPECT_EQ(plan.strides[2][0], 1);  // Output C stride.
  EXPECT_EQ(plan.strides[2][1], 20); // Input C stride.
}

TEST(StridedPlanTest, BroadcastAndSizeOneDims) {
  // [2, 3, 1, 5] + a per-channel [1, 3, 1, 1] operand (strides 0 where
  // broadcast).
  int64_t sizes[4] = {2, 3, 1, 5};
  int64_t out[4] = {15, 5, 99, 1}, bias[4] = {0, 1, 0, 0};
  const int64_t *strides[3] = {out, out, bias};
  StridedPlan<3> plan = planStrided<3>(4, sizes, strides);
  EXPECT_EQ(plan.total, 30);
  ASSERT_EQ(plan.rank, 3); // N, C, W: the size-1 H is dropped.
  EXPECT_EQ(plan.strides[0][2], 0);
  EXPECT_EQ(plan.strides[1][2], 1);
  EXPECT_EQ(plan.strides[2][2], 0);
  EXPECT_FALSE(isFlat(plan));
}

TEST(StridedPlanTest, EmptyAndScalar) {
  int64_t sizes[2] = {3, 0}, strides0[2] = {1, 1};
  const int64_t *strides[2] = {strides0, strides0};
  EXPECT_EQ(planStrided<2>(2, sizes, strides).total, 0);
  int64_t ones[2] = {1, 1};
  StridedPlan<2> scalar = planStrided<2>(2, ones, strides);
  EXPECT_EQ(scalar.total, 1);
  EXPECT_EQ(scalar.rank, 0);
  EXPECT_TRUE(isFlat(scalar));
}

/// A per-channel plan over a 4-D tensor (channel dim 1).
StridedPlan<4> channelPlan(const int64_t *y, const int64_t *x, const int64_t *r,
                           const int64_t *sizes = kSizes) {
  static const int64_t zero[4] = {};
  int64_t channel[4] = {0, 1, 0, 0};
  const int64_t *strides[4] = {y, x, r ? r : zero, channel};
  return planStrided<4>(4, sizes, strides);
}

TEST(ChannelPlanTest, NhwcIsRowsAndNchwIsPlanes) {
  StridedPlan<4> rows = channelPlan(kNhwc, kNhwc, nullptr);
  EXPECT_EQ(classifyChannelPlan(rows, false), ChannelPattern::Rows);
  ASSERT_EQ(rows.rank, 2);
  EXPECT_EQ(rows.sizes[0], 40);
  EXPECT_EQ(rows.sizes[1], 3);
  StridedPlan<4> planes = channelPlan(kNchw, kNchw, kNchw);
  EXPECT_EQ(classifyChannelPlan(planes, true), ChannelPattern::Planes);
  ASSERT_EQ(planes.rank, 3);
  EXPECT_EQ(planes.sizes[2], 20);
  // Mixed layouts, or a residual in another layout: generic.
  EXPECT_EQ(classifyChannelPlan(channelPlan(kNhwc, kNchw, nullptr), false),
            ChannelPattern::Generic);
  EXPECT_EQ(classifyChannelPlan(channelPlan(kNhwc, kNhwc, kNchw), true),
            ChannelPattern::Generic);
  // A batch of one NCHW image is [C, HW] planes.
  int64_t one[4] = {1, 3, 4, 5};
  EXPECT_EQ(classifyChannelPlan(channelPlan(kNchw, kNchw, nullptr, one), false),
            ChannelPattern::Planes);
  // 2-D [N, M] (linear output): rows.
  int64_t sizes2[2] = {4, 6}, rowMajor[2] = {6, 1}, channel[2] = {0, 1},
          zero[2] = {};
  const int64_t *strides[4] = {rowMajor, rowMajor, zero, channel};
  EXPECT_EQ(classifyChannelPlan(planStrided<4>(2, sizes2, strides), false),
            ChannelPattern::Rows);
}

TEST(ChannelPlanTest, VectorWidthNeedsDivisibleChannelsAndAlignment) {
  int64_t sizes[4] = {2, 64, 7, 7};
  int64_t nhwc[4] = {7 * 7 * 64, 1, 7 * 64, 64};
  StridedPlan<4> plan = channelPlan(nhwc, nhwc, nullptr, sizes);
  ASSERT_EQ(classifyChannelPlan(plan, false), ChannelPattern::Rows);
  EXPECT_EQ(channelVectorWidth(plan, ChannelPattern::Rows, false, 8, true), 8);
  EXPECT_EQ(channelVectorWidth(plan, ChannelPattern::Rows, false, 8, false), 1);
  int64_t odd[4] = {2, 6, 7, 7};
  int64_t oddNhwc[4] = {7 * 7 * 6, 1, 7 * 6, 6};
  StridedPlan<4> oddPlan = channelPlan(oddNhwc, oddNhwc, nullptr, odd);
  EXPECT_EQ(channelVectorWidth(oddPlan, ChannelPattern::Rows, false, 4, true),
            1);
  // NCHW planes of 7 x 7 = 49 elements cannot be split in vectors of 4.
  int64_t nchw[4] = {64 * 49, 49, 7, 1};
  StridedPlan<4> planes = channelPlan(nchw, nchw, nullptr, sizes);
  ASSERT_EQ(classifyChannelPlan(planes, false), ChannelPattern::Planes);
  EXPECT_EQ(channelVectorWidth(planes, ChannelPattern::Planes, false, 4, true),
            1);
  int64_t big[4] = {2, 8, 8, 8};
  int64_t bigNchw[4] = {512, 64, 8, 1};
  StridedPlan<4> bigPlanes = channelPlan(bigNchw, bigNchw, nullptr, big);
  EXPECT_EQ(
      channelVectorWidth(bigPlanes, ChannelPattern::Planes, false, 4, true), 4);
}

TEST(GemmPlanTest, Operands) {
  // Row-major 3 x 5: column-major storage of its transpose, ld 5.
  GemmOperand rowMajor = gemmOperand(3, 5, 5, 1);
  EXPECT_TRUE(rowMajor.ok);
  EXPECT_TRUE(rowMajor.transposed);
  EXPECT_EQ(rowMajor.ld, 5);
  // Column-major with padding: ld 4.
  GemmOperand colMajor = gemmOperand(3, 5, 1, 4);
  EXPECT_TRUE(colMajor.ok);
  EXPECT_FALSE(colMajor.transposed);
  EXPECT_EQ(colMajor.ld, 4);
  // Row-padded: ld 8.
  EXPECT_EQ(gemmOperand(3, 5, 8, 1).ld, 8);
  // No unit stride, or a leading dimension too small: not representable.
  EXPECT_FALSE(gemmOperand(3, 5, 10, 2).ok);
  EXPECT_FALSE(gemmOperand(3, 5, 2, 1).ok);
  // Vectors: any stride of a size-1 dim is free.
  EXPECT_TRUE(gemmOperand(1, 5, 77, 1).ok);
  EXPECT_TRUE(gemmOperand(5, 1, 1, 77).ok);
}

TEST(GemmPlanTest, LinearRowMajorIsWeightTimesInputTransposed) {
  // input [4, 7], weight [6, 7], out [4, 6], all row-major.
  int64_t in[2] = {7, 1}, w[2] = {7, 1}, out[2] = {6, 1};
  GemmPlan p = planLinear(4, 7, 6, in, w, out);
  ASSERT_TRUE(p.ok);
  EXPECT_TRUE(p.swapped); // C = out^T = weight * input^T.
  EXPECT_EQ(p.m, 6);
  EXPECT_EQ(p.n, 4);
  EXPECT_EQ(p.k, 7);
  EXPECT_TRUE(p.transA);
  EXPECT_EQ(p.lda, 7);
  EXPECT_FALSE(p.transB);
  EXPECT_EQ(p.ldb, 7);
  EXPECT_EQ(p.ldc, 6);
}

TEST(GemmPlanTest, LinearColumnMajorOutputAndStridedInput) {
  // out column-major [4, 6] (strides [1, 4]): C = out = input * weight^T.
  int64_t in[2] = {1, 4}, w[2] = {7, 1}, out[2] = {1, 4};
  GemmPlan p = planLinear(4, 7, 6, in, w, out);
  ASSERT_TRUE(p.ok);
  EXPECT_FALSE(p.swapped);
  EXPECT_EQ(p.m, 4);
  EXPECT_EQ(p.n, 6);
  EXPECT_FALSE(p.transA);
  EXPECT_EQ(p.lda, 4);
  EXPECT_FALSE(p.transB);
  EXPECT_EQ(p.ldb, 7);
  EXPECT_EQ(p.ldc, 4);
  int64_t gapped[2] = {14, 2};
  EXPECT_FALSE(planLinear(4, 7, 6, gapped, w, out).ok);
}

TEST(ConvPlanTest, FormatFollowsTheOutput) {
  int64_t out[4] = {2, 8, 4, 4}, in[4] = {2, 3, 8, 8}, w[4] = {8, 3, 3, 3};
  int64_t outCl[4] = {128, 1, 32, 8}, outNchw[4] = {128, 16, 4, 1};
  int64_t inCl[4] = {192, 1, 24, 3}, inNchw[4] = {192, 64, 8, 1};
  int64_t wCl[4] = {27, 1, 9, 3}, wNchw[4] = {27, 9, 3, 1};
  EXPECT_EQ(chooseConvFormat(out, outCl, in, inNchw, w, wNchw),
            ConvFormat::Nhwc);
  EXPECT_EQ(chooseConvFormat(out, outNchw, in, inCl, w, wCl), ConvFormat::Nchw);
  // An output that is both formats (Nx2048x1x1, L3) follows the input.
  int64_t pooled[4] = {2, 8, 1, 1}, pooledStrides[4] = {8, 1, 1, 1};
  EXPECT_EQ(chooseConvFormat(pooled, pooledStrides, in, inCl, w, wCl),
            ConvFormat::Nhwc);
  EXPECT_EQ(chooseConvFormat(pooled, pooledStrides, in, inNchw, w, wNchw),
            ConvFormat::Nchw);
  EXPECT_TRUE(isPacked(ConvFormat::Nhwc, out, outCl));
  EXPECT_FALSE(isPacked(ConvFormat::Nchw, out, outCl));
  int64_t packed[4];
  packedStrides(ConvFormat::Nhwc, in, packed);
  EXPECT_EQ(std::vector<int64_t>(packed, packed + 4),
            std::vector<int64_t>(inCl, inCl + 4));
}

TEST(PoolPlanTest, NhwcNeedsUnitChannelStrides) {
  PoolArgs args;
  args.kind = PoolKind::Max;
  args.n = 2;
  args.c = 64;
  args.h = args.w = 8;
  args.oh = args.ow = 4;
  int64_t xs[4] = {8 * 8 * 64, 1, 8 * 64, 64}, ys[4] = {4 * 4 * 64, 1, 256, 64};
  std::copy(xs, xs + 4, args.xs);
  std::copy(ys, ys + 4, args.ys);
  EXPECT_TRUE(planPoolNhwc(args, 4, true));
  EXPECT_EQ(args.vec, 4);
  EXPECT_TRUE(planPoolNhwc(args, 4, false));
  EXPECT_EQ(args.vec, 1);
  args.c = 6; // Not a multiple of the vector width.
  EXPECT_TRUE(planPoolNhwc(args, 4, true));
  EXPECT_EQ(args.vec, 1);
  args.c = 64;
  args.xs[1] = 64; // NCHW input.
  args.xs[3] = 1;
  EXPECT_FALSE(planPoolNhwc(args, 4, true));

  // The generic kernel walks the output innermost-stride first: W, H, C, N
  // for NCHW; C, W, H, N for NHWC.
  int64_t nchw[4] = {64 * 16, 16, 4, 1};
  std::copy(nchw, nchw + 4, args.ys);
  planPoolGeneric(args);
  EXPECT_EQ(std::vector<int>(args.order, args.order + 4),
            (std::vector<int>{3, 2, 1, 0}));
  std::copy(ys, ys + 4, args.ys);
  planPoolGeneric(args);
  EXPECT_EQ(std::vector<int>(args.order, args.order + 4),
            (std::vector<int>{1, 3, 2, 0}));
  EXPECT_EQ(args.orderSizes[0], 64);
}

TEST(LayerNormPlanTest, RowsOfAnyLayout) {
  // [2, 3, 4, 5] row-major: 24 rows of 5, one merged row dim.
  LayerNormArgs dense;
  planLayerNorm(dense, 4, kSizes, kNchw, kNchw);
  EXPECT_EQ(dense.d, 5);
  EXPECT_EQ(dense.yStep, 1);
  EXPECT_EQ(dense.xStep, 1);
  EXPECT_EQ(dense.rows.total, 24);
  ASSERT_EQ(dense.rows.rank, 1);
  EXPECT_EQ(dense.rows.strides[0][0], 5);
  EXPECT_TRUE(dense.warpPerRow);

  // The input channels-last (its last dim has stride 3), the output dense.
  LayerNormArgs mixed;
  planLayerNorm(mixed, 4, kSizes, kNchw, kNhwc);
  EXPECT_EQ(mixed.yStep, 1);
  EXPECT_EQ(mixed.xStep, 3);
  EXPECT_EQ(mixed.rows.total, 24);

  // Rank 1: one row, a rank-0 walk.
  int64_t sizes1[1] = {7}, strides1[1] = {1};
  LayerNormArgs single;
  planLayerNorm(single, 1, sizes1, strides1, strides1);
  EXPECT_EQ(single.rows.total, 1);
  EXPECT_EQ(single.rows.rank, 0);
  EXPECT_EQ(single.d, 7);

  // Rows longer than a warp takes get a block each.
  int64_t sizes2[2] = {3, kLayerNormWarpLimit + 1};
  int64_t strides2[2] = {kLayerNormWarpLimit + 1, 1};
  LayerNormArgs wide;
  planLayerNorm(wide, 2, sizes2, strides2, strides2);
  EXPECT_FALSE(wide.warpPerRow);
  sizes2[1] = strides2[0] = kLayerNormWarpLimit;
  planLayerNorm(wide, 2, sizes2, strides2, strides2);
  EXPECT_TRUE(wide.warpPerRow);
}

TEST(SoftmaxPlanTest, RowsAlongAnyDim) {
  // [2, 3, 4, 5] row-major along W: 24 unit-stride rows of 5, one merged row
  // dim, a warp each.
  SoftmaxArgs last;
  planSoftmax(last, 4, kSizes, 3, kNchw, kNchw);
  EXPECT_EQ(last.d, 5);
  EXPECT_EQ(last.yStep, 1);
  EXPECT_EQ(last.xStep, 1);
  EXPECT_EQ(last.rows.total, 24);
  ASSERT_EQ(last.rows.rank, 1);
  EXPECT_EQ(last.rows.strides[0][0], 5);
  EXPECT_EQ(last.team, SoftmaxTeam::Warp);

  // NCHW along C (stride 20): a thread per row; the rows are N and the
  // merged H * W, whose unit stride gives consecutive threads neighbouring
  // addresses.
  SoftmaxArgs channels;
  planSoftmax(channels, 4, kSizes, 1, kNchw, kNchw);
  EXPECT_EQ(channels.d, 3);
  EXPECT_EQ(channels.xStep, 20);
  EXPECT_EQ(channels.team, SoftmaxTeam::Thread);
  EXPECT_EQ(channels.rows.total, 40);
  ASSERT_EQ(channels.rows.rank, 2);
  EXPECT_EQ(channels.rows.sizes[0], 2);
  EXPECT_EQ(channels.rows.sizes[1], 20);
  EXPECT_EQ(channels.rows.strides[0][0], 60);
  EXPECT_EQ(channels.rows.strides[1][0], 1);

  // Channels-last along C (stride 1): a warp per row; the rows N, H, W
  // merge into one dim of stride C.
  SoftmaxArgs nhwc;
  planSoftmax(nhwc, 4, kSizes, 1, kNhwc, kNhwc);
  EXPECT_EQ(nhwc.xStep, 1);
  EXPECT_EQ(nhwc.team, SoftmaxTeam::Warp);
  ASSERT_EQ(nhwc.rows.rank, 1);
  EXPECT_EQ(nhwc.rows.total, 40);
  EXPECT_EQ(nhwc.rows.strides[0][0], 3);
  EXPECT_EQ(nhwc.rows.strides[0][1], 3);

  // The input decides: along W, unit-stride in the NCHW output but stride 3
  // in the channels-last input.
  SoftmaxArgs mixed;
  planSoftmax(mixed, 4, kSizes, 3, kNchw, kNhwc);
  EXPECT_EQ(mixed.yStep, 1);
  EXPECT_EQ(mixed.xStep, 3);
  EXPECT_EQ(mixed.team, SoftmaxTeam::Thread);
  EXPECT_EQ(mixed.rows.total, 24);

  // Rank 1: one row, a rank-0 walk.
  int64_t sizes1[1] = {7}, strides1[1] = {1};
  SoftmaxArgs single;
  planSoftmax(single, 1, sizes1, 0, strides1, strides1);
  EXPECT_EQ(single.rows.total, 1);
  EXPECT_EQ(single.rows.rank, 0);
  EXPECT_EQ(single.d, 7);
  EXPECT_EQ(single.team, SoftmaxTeam::Warp);

  // Rows of one element need no team, whatever their stride.
  int64_t sizesC1[4] = {2, 1, 4, 5}, stridesC1[4] = {20, 20, 5, 1};
  SoftmaxArgs one;
  planSoftmax(one, 4, sizesC1, 1, stridesC1, stridesC1);
  EXPECT_EQ(one.d, 1);
  EXPECT_EQ(one.team, SoftmaxTeam::Thread);
  EXPECT_EQ(one.rows.total, 40);

  // Unit-stride rows longer than a warp takes get a block each.
  int64_t sizes2[2] = {3, kSoftmaxWarpLimit + 1};
  int64_t strides2[2] = {kSoftmaxWarpLimit + 1, 1};
  SoftmaxArgs wide;
  planSoftmax(wide, 2, sizes2, 1, strides2, strides2);
  EXPECT_EQ(wide.team, SoftmaxTeam::Block);
  sizes2[1] = strides2[0] = kSoftmaxWarpLimit;
  planSoftmax(wide, 2, sizes2, 1, strides2, strides2);
  EXPECT_EQ(wide.team, SoftmaxTeam::Warp);

  EXPECT_STREQ(toString(SoftmaxTeam::Warp), "warp_per_row");
  EXPECT_STREQ(toString(SoftmaxTeam::Block), "block_per_row");
  EXPECT_STREQ(toString(SoftmaxTeam::Thread), "thread_per_row");
}

} // namespace
