//===- LayerNorm.cu - Layer norm over the last dim ------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Kernels.def's layer_norm: every row of D elements (one per index of the
// dims before the last) becomes (x - mean) / sqrt(var + eps) * weight + bias
// with the biased variance. A team of threads owns one row at a time:
//  * a warp (rows of up to kLayerNormWarpLimit elements, eight rows per
//    256-thread block), reducing with shuffles;
//  * a block of 256 threads (longer rows), reducing through shared memory
//    (both RowReduce.cuh's).
// The team's threads stride over the row (lane i reads elements i, i + 32,
// ...: coalesced when the last dim has unit stride, any stride works), the
// row's offsets come from the host plan's walk of the other dims
// (CudaPlan.h, any layout). Statistics are two-pass in f32 (the sum for the
// mean, then the squared deviations from it), as stable as the CPU
// reference's double passes up to f32 rounding; f16/bf16 are read and
// written through float and rounded once. Both reductions finish before any
// element is written, so the output may be the input itself.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "DeviceTypes.cuh"
#include "RowReduce.cuh"

namespace memfmt::runtime::cuda {
namespace {

/// Normalizes row `row` with `team` threads, this one being `member`;
/// `reduce` combines a value over the team (RowReduce.cuh).
template <typename T, typename Reduce>
__device__ void normalizeRow(const LayerNormArgs &a, int64_t row, int member,
                             int team, const Reduce &reduce) {
  int64_t off[2];
  offsetsOf(a.rows, row, off);
  const T *x = static_cast<const T *>(a.x) + off[1];
  T *y = static_cast<T *>(a.y) + off[0];
  const float n = static_cast<float>(a.d);

  float sum = 0.0f;
  for (int64_t i = member; i < a.d; i += team)
    sum += toFloat(x[i * a.xStep]);
  const float mean = reduce(sum, SumOp()) / n;

  float squares = 0.0f;
  for (int64_t i = member; i < a.d; i += team) {
    float dev = toFloat(x[i * a.xStep]) - mean;
    squares += dev * dev;
  }
  const float rstd = 1.0f / sqrtf(reduce(squares, SumOp()) / n + a.eps);

  const T *w = static_cast<const T *>(a.weight);
  const T *b = static_cast<const T *>(a.bias);
  for (int64_t i = member; i < a.d; i += team) {
    float v = (toFloat(x[i * a.xStep]) - mean) * rstd;
    if (w)
      v *= toFloat(w[i * a.weightStride]);
    if (b)
      v += toFloat(b[i * a.biasStride]);
    y[i * a.yStep] = fromFloat<T>(v);
  }
}

/// One warp per row; blocks of kThreads threads hold kThreads / 32 rows.
template <typename T> __global__ void layerNormWarpKernel(LayerNormArgs a) {
  const int64_t warpsPerBlock = blockDim.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  // Every lane of a warp has the same row, so the shuffles see full warps.
  for (int64_t row = blockIdx.x * warpsPerBlock + threadIdx.x / kWarp;
       row < a.rows.total; row += gridDim.x * warpsPerBlock)
    normalizeRow<T>(a, row, lane, kWarp, WarpReduce());
}

/// One block per row.
template <typename T> __global__ void layerNormBlockKernel(LayerNormArgs a) {
  __shared__ float partial[kThreads / kWarp];
  for (int64_t row = blockIdx.x; row < a.rows.total; row += gridDim.x)
    normalizeRow<T>(a, row, threadIdx.x, blockDim.x, BlockReduce{partial});
}

} // namespace

cudaError_t launchLayerNorm(Elem elem, const LayerNormArgs &args,
                            cudaStream_t stream) {
  if (args.rows.total == 0 || args.d == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (args.warpPerRow) {
      layerNormWarpKernel<T>
          <<<blocksFor(args.rows.total * kWarp), kThreads, 0, stream>>>(args);
    } else {
      int64_t blocks = args.rows.total < (1 << 20) ? args.rows.total : 1 << 20;
      layerNormBlockKernel<T>
          <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(args);
    }
    return cudaGetLastError();
  });
}

} // namespace memfmt::runtime::cuda
