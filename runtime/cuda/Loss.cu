//===- Loss.cu - Mean cross-entropy loss and its gradient -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// cross_entropy_loss and cross_entropy_loss_backward on logits [N, C] (any
// strides) and class indices [N], with the CPU kernels' formulas
// (runtime/cpu/Loss.cpp): a block per row takes the row's maximum, then
// log(sum(exp(x - max))) (max + log of the f32 sum; a row of -inf gives
// -inf, as on the CPU); the loss writes each row's term to a scratch array
// of doubles and one thread sums it in row order (so the mean does not
// depend on scheduling); the gradient is softmax minus the one-hot target,
// scaled by grad_output / N.
//
// The CPU backend rejects a target outside [0, C) before running, since it
// can read the targets; on the GPU that would need a synchronisation in the
// middle of a step (and of a CUDA graph), so an out-of-range target makes
// its row's loss and gradient NaN instead (PyTorch's CUDA kernel stops the
// process with a device assertion).
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "DeviceTypes.cuh"
#include "RowReduce.cuh"

#include <math_constants.h>

namespace memfmt::runtime::cuda {
namespace {

constexpr int kLossThreads = 256;

/// log(sum_c exp(row[c * stride])) over the block, in every thread.
__device__ double blockLogSumExp(const float *row, int64_t stride,
                                 int64_t classes, BlockReduce reduce) {
  float max = MaxOp::identity();
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    max = fmaxf(max, row[c * stride]);
  max = reduce(max, MaxOp());
  if (isinf(max) && max < 0)
    return -CUDART_INF;
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    sum += expf(row[c * stride] - max);
  sum = reduce(sum, SumOp());
  return static_cast<double>(max) + log(static_cast<double>(sum));
}

__global__ void rowLossKernel(LossArgs a, double *rowLoss) {
  __shared__ float partial[kLossThreads / kWarp];
  const int64_t n = blockIdx.x;
  const float *row = a.logits + n * a.logitStrides[0];
  double lse =
      blockLogSumExp(row, a.logitStrides[1], a.classes, BlockReduce{partial});
  if (threadIdx.x == 0) {
    int64_t target = a.targets[n * a.targetStride];
    rowLoss[n] =
        target < 0 || target >= a.classes
            ? CUDART_NAN
            : lse - static_cast<double>(row[target * a.logitStrides[1]]);
  }
}

__global__ void meanKernel(const double *rowLoss, int64_t rows, float *out) {
  double total = 0;
  for (int64_t n = 0; n < rows; ++n)
    total += rowLoss[n];
  *out = static_cast<float>(total / static_cast<double>(rows));
}

__global__ void gradientKernel(LossArgs a) {
  __shared__ float partial[kLossThreads / kWarp];
  const int64_t n = blockIdx.x;
  const float *row = a.logits + n * a.logitStrides[0];
  double lse =
      blockLogSumExp(row, a.logitStrides[1], a.classes, BlockReduce{partial});
  const double scale =
      static_cast<double>(*a.gradOutput) / static_cast<double>(a.rows);
  const int64_t target = a.targets[n * a.targetStride];
  const bool valid = target >= 0 && target < a.classes;
  float *grad = a.gradInput + n * a.gradStrides[0];
  for (int64_t c = threadIdx.x; c < a.classes; c += blockDim.x) {
    double p = exp(static_cast<double>(row[c * a.logitStrides[1]]) - lse);
    grad[c * a.gradStrides[1]] =
        valid ? static_cast<float>((p - (c == target ? 1.0 : 0.0)) * scale)
              : CUDART_NAN_F;
  }
}

} // namespace

cudaError_t launchCrossEntropyLoss(const LossArgs &args, double *rowLoss,
                                   cudaStream_t stream) {
  if (args.rows > 0)
    rowLossKernel<<<static_cast<unsigned>(args.rows), kLossThreads, 0,
                    stream>>>(args, rowLoss);
  meanKernel<<<1, 1, 0, stream>>>(rowLoss, args.rows, args.loss);
  return cudaGetLastError();
}

cudaError_t launchCrossEntropyLossBackward(const LossArgs &args,
                                           cudaStream_t stream) {
  if (args.rows == 0 || args.classes == 0)
    return cudaSuccess;
  gradientKernel<<<static_cast<unsigned>(args.rows), kLossThreads, 0, stream>>>(
      args);
  return cudaGetLastError();
}

} // namespace memfmt::runtime::cuda
