//===- Softmax.cu - Softmax along one dim ---------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Kernels.def's softmax: every row along `dim` (one per index of the other
// dims) becomes exp(x - max) / sum(exp(x - max)). The host plan
// (CudaPlan.h, planSoftmax) walks the rows in any layout and gives each row
// a team:
//  * a warp (rows of up to kSoftmaxWarpLimit elements with unit stride in
//    the input, eight rows per 256-thread block): lane i reads elements
//    i, i + 32, ..., so the warp's accesses are coalesced;
//  * a block of 256 threads (longer unit-stride rows);
//  * one thread (rows along a dim with another stride, such as the
//    channels of an NCHW tensor): consecutive threads own consecutive rows
//    of the output-ordered walk, whose elements are neighbours in memory,
//    so each step along the row is coalesced across the warp.
// The max and the sum are f32 reductions over the team (RowReduce.cuh). The
// last pass computes the exps again rather than keeping them from the sum's
// pass: the output is the only place to keep them, and for f16/bf16 it
// would round them. f16/bf16 are read and written through float and rounded
// once. Every element of a row is read by the reductions before any is
// written, and the last pass reads each element before writing it, so the
// output may be the input itself.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "DeviceTypes.cuh"
#include "RowReduce.cuh"

namespace memfmt::runtime::cuda {
namespace {

/// Runs the softmax of row `row` with `team` threads, this one being
/// `member`; `reduce` combines a value over the team.
template <typename T, typename Reduce>
__device__ void softmaxRow(const SoftmaxArgs &a, int64_t row, int member,
                           int team, const Reduce &reduce) {
  int64_t off[2];
  offsetsOf(a.rows, row, off);
  const T *x = static_cast<const T *>(a.x) + off[1];
  T *y = static_cast<T *>(a.y) + off[0];

  float max = MaxOp::identity();
  for (int64_t i = member; i < a.d; i += team)
    max = fmaxf(max, toFloat(x[i * a.xStep]));
  max = reduce(max, MaxOp());

  float sum = 0.0f;
  for (int64_t i = member; i < a.d; i += team)
    sum += expf(toFloat(x[i * a.xStep]) - max);
  const float scale = 1.0f / reduce(sum, SumOp());

  for (int64_t i = member; i < a.d; i += team)
    y[i * a.yStep] = fromFloat<T>(expf(toFloat(x[i * a.xStep]) - max) * scale);
}

/// One warp per row; blocks of kThreads threads hold kThreads / 32 rows.
template <typename T> __global__ void softmaxWarpKernel(SoftmaxArgs a) {
  const int64_t warpsPerBlock = blockDim.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  // Every lane of a warp has the same row, so the shuffles see full warps.
  for (int64_t row = blockIdx.x * warpsPerBlock + threadIdx.x / kWarp;
       row < a.rows.total; row += gridDim.x * warpsPerBlock)
    softmaxRow<T>(a, row, lane, kWarp, WarpReduce());
}

/// One block per row.
template <typename T> __global__ void softmaxBlockKernel(SoftmaxArgs a) {
  __shared__ float partial[kThreads / kWarp];
  for (int64_t row = blockIdx.x; row < a.rows.total; row += gridDim.x)
    softmaxRow<T>(a, row, threadIdx.x, blockDim.x, BlockReduce{partial});
}

/// One thread per row.
template <typename T> __global__ void softmaxThreadKernel(SoftmaxArgs a) {
  for (int64_t row = globalThread(); row < a.rows.total; row += gridThreads())
    softmaxRow<T>(a, row, 0, 1, ThreadReduce());
}

} // namespace

cudaError_t launchSoftmax(Elem elem, const SoftmaxArgs &args,
                          cudaStream_t stream) {
  if (args.rows.total == 0 || args.d == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (args.team) {
    case SoftmaxTeam::Warp:
      softmaxWarpKernel<T>
          <<<blocksFor(args.rows.total * kWarp), kThreads, 0, stream>>>(args);
      break;
    case SoftmaxTeam::Block: {
      int64_t blocks = args.rows.total < (1 << 20) ? args.rows.total : 1 << 20;
      softmaxBlockKernel<T>
          <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(args);
      break;
    }
    case SoftmaxTeam::Thread:
      softmaxThreadKernel<T>
          <<<blocksFor(args.rows.total), kThreads, 0, stream>>>(args);
      break;
    }
    return cudaGetLastError();
  });
}

} // namespace memfmt::runtime::cuda
