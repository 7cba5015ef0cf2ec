//===- CudaPlan.cpp - Host-side planning of CUDA kernel launches ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The planning functions of CudaPlan.h. No CUDA here: these are the decisions
// the unit tests check on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#include "CudaPlan.h"

#include <algorithm>
#include <cstdlib>

using namespace memfmt::runtime::cuda;

namespace {

int64_t magnitude(int64_t v) { return v < 0 ? -v : v; }

/// Fills args.rows, d, yStep and xStep (LayerNormArgs, SoftmaxArgs) for
/// rows along `dim`: the walk of the other dims over the output and the
/// input, and the row's length and strides.
template <typename RowArgs>
void planRowsAlong(RowArgs &args, int rank, const int64_t *sizes, int dim,
                   const int64_t *outStrides, const int64_t *inStrides) {
  int64_t otherSizes[kMaxDims], otherOut[kMaxDims], otherIn[kMaxDims];
  int others = 0;
  for (int k = 0; k < rank; ++k) {
    if (k == dim)
      continue;
    otherSizes[others] = sizes[k];
    otherOut[others] = outStrides[k];
    otherIn[others] = inStrides[k];
    ++others;
  }
  const int64_t *strides[2] = {otherOut, otherIn};
  args.rows = planStrided<2>(others, otherSizes, strides);
  args.d = sizes[dim];
  args.yStep = outStrides[dim];
  args.xStep = inStrides[dim];
}

} // namespace

template <int K>
StridedPlan<K>
memfmt::runtime::cuda::planStrided(int rank, const int64_t *sizes,
                                   const int64_t *const (&strides)[K]) {
  StridedPlan<K> plan;
  int dims[kMaxDims];
  int count = 0;
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    total *= sizes[d];
    if (sizes[d] != 1)
      dims[count++] = d;
  }
  plan.total = total;
  if (total == 0)
    return plan;
  // Largest output stride outermost; a stable insertion sort keeps the
  // logical order among ties.
  for (int i = 1; i < count; ++i)
    for (int j = i; j > 0 && magnitude(strides[0][dims[j - 1]]) <
                                 magnitude(strides[0][dims[j]]);
         --j)
      std::swap(dims[j - 1], dims[j]);
  for (int i = 0; i < count; ++i) {
    int d = dims[i];
    if (plan.rank > 0) {
      int last = plan.rank - 1;
      bool merge = true;
      for (int k = 0; k < K && merge; ++k)
        merge = plan.strides[last][k] == strides[k][d] * sizes[d];
      if (merge) {
        plan.sizes[last] *= sizes[d];
        for (int k = 0; k < K; ++k)
          plan.strides[last][k] = strides[k][d];
        continue;
      }
    }
    plan.sizes[plan.rank] = sizes[d];
    for (int k = 0; k < K; ++k)
      plan.strides[plan.rank][k] = strides[k][d];
    ++plan.rank;
  }
  return plan;
}

template <int K>
bool memfmt::runtime::cuda::isFlat(const StridedPlan<K> &plan) {
  if (plan.rank == 0)
    return true;
  if (plan.rank > 1)
    return false;
  for (int k = 0; k < K; ++k)
    if (plan.strides[0][k] != 1)
      return false;
  return true;
}

#define MEMFMT_INSTANTIATE_PLAN(K)                                             \
  template StridedPlan<K> memfmt::runtime::cuda::planStrided<K>(               \
      int, const int64_t *, const int64_t *const(&)[K]);                       \
  template bool memfmt::runtime::cuda::isFlat<K>(const StridedPlan<K> &);
MEMFMT_INSTANTIATE_PLAN(1)
MEMFMT_INSTANTIATE_PLAN(2)
MEMFMT_INSTANTIATE_PLAN(3)
MEMFMT_INSTANTIATE_PLAN(4)
MEMFMT_INSTANTIATE_PLAN(5)
#undef MEMFMT_INSTANTIATE_PLAN

ChannelPattern
memfmt::runtime::cuda::classifyChannelPlan(const StridedPlan<4> &plan,
                                           bool hasResidual) {
  auto unitInner = [&](int d) {
    return plan.strides[d][kChanY] == 1 && plan.strides[d][kChanX] == 1 &&
           (!hasResidual || plan.strides[d][kChanR] == 1);
  };
  if (plan.rank == 2 && plan.strides[0][kChanIndex] == 0 &&
      plan.strides[1][kChanIndex] == 1 && unitInner(1))
    return ChannelPattern::Rows;
  if ((plan.rank == 2 || plan.rank == 3) &&
      plan.strides[plan.rank - 1][kChanIndex] == 0 &&
      plan.strides[plan.rank - 2][kChanIndex] == 1 &&
      (plan.rank == 2 || plan.strides[0][kChanIndex] == 0) &&
      unitInner(plan.rank - 1))
    return ChannelPattern::Planes;
  return ChannelPattern::Generic;
}

int memfmt::runtime::cuda::channelVectorWidth(const StridedPlan<4> &plan,
                                              ChannelPattern pattern,
                                              bool hasResidual, int width,
                                              bool alignedPointers) {
  if (pattern == ChannelPattern::Generic || width <= 1 || !alignedPointers)
    return 1;
  int inner = plan.rank - 1;
  if (plan.sizes[inner] % width != 0)
    return 1;
  for (int d = 0; d < inner; ++d)
    for (int k : {int(kChanY), int(kChanX), int(kChanR)}) {
      if (k == kChanR && !hasResidual)
        continue;
      if (plan.strides[d][k] % width != 0)
        return 1;
    }
  return width;
}

void memfmt::runtime::cuda::planLayerNorm(LayerNormArgs &args, int rank,
                                          const int64_t *sizes,
                                          const int64_t *outStrides,
                                          const int64_t *inStrides) {
  planRowsAlong(args, rank, sizes, rank - 1, outStrides, inStrides);
  args.warpPerRow = args.d <= kLayerNormWarpLimit;
}

const char *memfmt::runtime::cuda::toString(SoftmaxTeam team) {
  switch (team) {
  case SoftmaxTeam::Warp:
    return "warp_per_row";
  case SoftmaxTeam::Block:
    return "block_per_row";
  case SoftmaxTeam::Thread:
    return "thread_per_row";
  }
  return "?";
}

void memfmt::runtime::cuda::planSoftmax(SoftmaxArgs &args, int rank,
                                        const int64_t *sizes, int dim,
                                        const int64_t *outStrides,
                                        const int64_t *inStrides) {
  planRowsAlong(args, rank, sizes, dim, outStrides, inStrides);
  if (args.d == 1 || args.xStep != 1)
    args.team = SoftmaxTeam::Thread;
  else
    args.team =
        args.d <= kSoftmaxWarpLimit ? SoftmaxTeam::Warp : SoftmaxTeam::Block;
}

GemmOperand memfmt::runtime::cuda::gemmOperand(int64_t rows, int64_t cols,
                                               int64_t rowStride,
                                               int64_t colStride) {
  GemmOperand op;
  // Column-major as itself: unit row stride, ld = column stride >= rows.
  if (rows == 1 || rowStride == 1) {
    int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : colStride;
    if (ld >= std::max<int64_t>(rows, 1)) {
      op.ok = true;
      op.ld = ld;
      return op;
    }
  }
  // Its transpose column-major: unit column stride, ld = row stride >= cols.
  if (cols == 1 || colStride == 1) {
    int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : rowStride;
    if (ld >= std::max<int64_t>(cols, 1)) {
      op.ok = true;
      op.transposed = true;
      op.ld = ld;
      return op;
    }
  }
  return op;
}

GemmPlan memfmt::runtime::cuda::planLinear(int64_t n, int64_t k, int64_t m,
                                           const int64_t *inStrides,
                                           const int64_t *weightStrides,
                                           const int64_t *outStrides) {
  GemmPlan plan;
  plan.k = k;
  GemmOperand out = gemmOperand(n, m, outStrides[0], outStrides[1]);
  if (!out.ok)
    return plan;
  if (out.transposed) {
    // out row-major: C = out^T (M x N) = weight (M x K) * input^T (K x N).
    plan.swapped = true;
    plan.m = m;
    plan.n = n;
    plan.ldc = out.ld;
    GemmOperand a = gemmOperand(m, k, weightStrides[0], weightStrides[1]);
    // B = input^T (K x N): input^T's (i, j) is input's (j, i).
    GemmOperand b = gemmOperand(k, n, inStrides[1], inStrides[0]);
    if (!a.ok || !b.ok)
      return plan;
    plan.transA = a.transposed;
    plan.lda = a.ld;
    plan.transB = b.transposed;
    plan.ldb = b.ld;
  } else {
    // out column-major: C = out (N x M) = input (N x K) * weight^T (K x M).
    plan.m = n;
    plan.n = m;
    plan.ldc = out.ld;
    GemmOperand a = gemmOperand(n, k, inStrides[0], inStrides[1]);
    GemmOperand b = gemmOperand(k, m, weightStrides[1], weightStrides[0]);
    if (!a.ok || !b.ok)
      return plan;
    plan.transA = a.transposed;
    plan.lda = a.ld;
    plan.transB = b.transposed;
    plan.ldb = b.ld;
  }
  plan.ok = true;
  return plan;
}

void memfmt::runtime::cuda::packedStrides(ConvFormat format,
                                          const int64_t *sizes,
                                          int64_t *strides) {
  int64_t c = sizes[1], h = sizes[2], w = sizes[3];
  if (format == ConvFormat::Nchw) {
    strides[3] = 1;
    strides[2] = w;
    strides[1] = h * w;
    strides[0] = c * h * w;
  } else {
    strides[1] = 1;
    strides[3] = c;
    strides[2] = w * c;
    strides[0] = h * w * c;
  }
}

bool memfmt::runtime::cuda::isPacked(ConvFormat format, const int64_t *sizes,
                                     const int64_t *strides) {
  int64_t packed[4];
  packedStrides(format, sizes, packed);
  for (int d = 0; d < 4; ++d)
    if (sizes[d] != 1 && strides[d] != packed[d])
      return false;
  return true;
}

ConvFormat memfmt::runtime::cuda::chooseConvFormat(
    const int64_t *outSizes, const int64_t *outStrides, const int64_t *inSizes,
    const int64_t *inStrides, const int64_t *weightSizes,
    const int64_t *weightStrides) {
  auto channelsLast = [](const int64_t *sizes, const int64_t *strides) {
    return isPacked(ConvFormat::Nhwc, sizes, strides) &&
           !isPacked(ConvFormat::Nchw, sizes, strides);
  };
  if (channelsLast(outSizes, outStrides))
    return ConvFormat::Nhwc;
  if (isPacked(ConvFormat::Nhwc, outSizes, outStrides) &&
      isPacked(ConvFormat::Nchw, outSizes, outStrides) &&
      (channelsLast(inSizes, inStrides) ||
       channelsLast(weightSizes, weightStrides)))
    return ConvFormat::Nhwc;
  // A strided output that is closer to channels-last (unit channel stride).
  if (!isPacked(ConvFormat::Nchw, outSizes, outStrides) && outStrides[1] == 1 &&
      outSizes[1] > 1)
    return ConvFormat::Nhwc;
  return ConvFormat::Nchw;
}

bool memfmt::runtime::cuda::planPoolNhwc(PoolArgs &args, int vectorWidth,
                                         bool alignedPointers) {
  args.vec = 1;
  auto unitChannels = [&](const int64_t *s) {
    return args.c == 1 || s[1] == 1;
  };
  if (!unitChannels(args.xs) || !unitChannels(args.ys))
    return false;
  bool hasIndices = args.indices != nullptr;
  if (hasIndices && !unitChannels(args.is))
    return false;
  if (args.c < 2)
    return false; // Nothing to gain over the generic kernel.
  if (!alignedPointers || vectorWidth <= 1 || args.c % vectorWidth != 0)
    return true;
  for (const int64_t *s : {args.xs, args.ys})
    for (int d : {0, 2, 3})
      if (s[d] % vectorWidth != 0)
        return true;
  args.vec = vectorWidth;
  return true;
}

void memfmt::runtime::cuda::planPoolGeneric(PoolArgs &args) {
  bool backward = isBackward(args.kind);
  const int64_t *strides = backward ? args.xs : args.ys;
  int64_t sizes[4] = {args.n, args.c, backward ? args.h : args.oh,
                      backward ? args.w : args.ow};
  int order[4] = {3, 2, 1, 0};
  // Increasing stride, size-1 dims last (their stride is meaningless).
  auto key = [&](int d) {
    return sizes[d] == 1 ? INT64_MAX : magnitude(strides[d]);
  };
  for (int i = 1; i < 4; ++i)
    for (int j = i; j > 0 && key(order[j]) < key(order[j - 1]); --j)
      std::swap(order[j - 1], order[j]);
  for (int i = 0; i < 4; ++i) {
    args.order[i] = order[i];
    args.orderSizes[i] = sizes[order[i]];
  }
}
