//===- Training.cu - Elementwise kernels of the training step -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The training step's elementwise kernels on CUDA, over f32 or 16-bit
// activations (a mixed-precision step: read exactly, arithmetic in f32 or
// double as for f32, each result rounded once from f32; parameters,
// statistics and the SGD update stay f32): fill (splat constants,
// such as the loss gradient's seed), threshold_backward (relu's gradient),
// eltwise_backward (the other activations' gradients, by the CPU's
// lib/ElementwiseMath.h formulas), sum_to_size (a broadcast operand's
// gradient: one thread per output element, summing in double in the order
// of the reduced index space), layer_norm_backward (a thread per row for the
// statistics and grad_input, then a thread per column for the weight and
// bias sums, in row order), softmax_backward (a thread per row), sgd_update (one torch.optim.SGD step of a parameter and its momentum
// buffer), increment (the optimizer's step count, one thread) and the loss
// scaler's kernels (one thread each, but unscale_gradient's grid). Each thread
// walks elements of a StridedPlan (CudaPlan.h), so every layout works and
// in-place updates read an element before they write it; by L9 the operands of
// one call share a layout, and then the plan is one flat run. The formulas are
// the CPU kernels' (lib/TrainingMath.h), with the same fused multiply-adds, so
// a step gives the CPU's values bit for bit.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "DeviceTypes.cuh"
#include "lib/ElementwiseMath.h"
#include "lib/TrainingMath.h"

namespace memfmt::runtime::cuda {
namespace {

template <typename T>
__global__ void fillKernel(StridedPlan<1> plan, T *y, float value) {
  const T v = fromFloat<T>(value);
  for (int64_t i = globalThread(); i < plan.total; i += gridThreads()) {
    int64_t off[1];
    offsetsOf(plan, i, off);
    y[off[0]] = v;
  }
}

/// The row functions' element access (math::F32Elements) for any storage
/// type: widened exactly, results rounded from f32 once.
struct DeviceElements {
  template <typename T> __device__ float load(T v) const { return toFloat(v); }
  template <typename T> __device__ void store(T &out, float v) const {
    out = fromFloat<T>(v);
  }
};

template <typename T>
__global__ void thresholdBackwardKernel(StridedPlan<4> plan, T *gradInput,
                                        const T *gradOutput, const T *self,
                                        const T *addend, float threshold) {
  for (int64_t i = globalThread(); i < plan.total; i += gridThreads()) {
    int64_t off[4];
    offsetsOf(plan, i, off);
    float grad = toFloat(gradOutput[off[1]]);
    if (addend)
      grad = __fadd_rn(grad, toFloat(addend[off[3]]));
    gradInput[off[0]] = fromFloat<T>(
        math::thresholdGrad(grad, toFloat(self[off[2]]), threshold));
  }
}

template <typename T>
__global__ void eltwiseBackwardKernel(StridedPlan<3> plan, T *gradInput,
                                      const T *gradOutput, const T *self,
                                      int64_t op, float alpha, float beta) {
  for (int64_t i = globalThread(); i < plan.total; i += gridThreads()) {
    int64_t off[3];
    offsetsOf(plan, i, off);
    gradInput[off[0]] = fromFloat<T>(
        math::eltwiseBackward(op, toFloat(gradOutput[off[1]]),
                              toFloat(self[off[2]]), alpha, beta));
  }
}

template <typename T>
__global__ void sumToSizeKernel(StridedPlan<2> outputs,
                                StridedPlan<1> reduced, T *output,
                                const T *input) {
  for (int64_t i = globalThread(); i < outputs.total; i += gridThreads()) {
    int64_t off[2];
    offsetsOf(outputs, i, off);
    double sum = 0;
    for (int64_t j = 0; j < reduced.total; ++j) {
      int64_t r[1];
      offsetsOf(reduced, j, r);
      sum += toFloat(input[off[1] + r[0]]);
    }
    output[off[0]] = fromFloat<T>(static_cast<float>(sum));
  }
}

/// The rows of layer_norm_backward: statistics[2 r] and [2 r + 1] get row
/// r's mean and rstd (as the forward's, in double), grad_input its gradient.
template <typename T>
__global__ void layerNormBackwardRowsKernel(
    StridedPlan<3> rows, int64_t d, int64_t giStep, int64_t goStep,
    int64_t xStep, T *gradInput, const T *gradOutput, const T *input,
    const float *weight, int64_t weightStride, double eps,
    double *statistics) {
  for (int64_t r = globalThread(); r < rows.total; r += gridThreads()) {
    int64_t off[3];
    offsetsOf(rows, r, off);
    math::layerNormRowBackward(d, input + off[2], xStep, gradOutput + off[1],
                               goStep, weight, weightStride, eps,
                               gradInput ? gradInput + off[0] : nullptr,
                               giStep, statistics[2 * r],
                               statistics[2 * r + 1], DeviceElements());
  }
}

/// The rows of softmax_backward, one thread each.
template <typename T>
__global__ void softmaxBackwardKernel(StridedPlan<3> rows, int64_t d,
                                      int64_t giStep, int64_t goStep,
                                      int64_t yStep, T *gradInput,
                                      const T *gradOutput, const T *output) {
  for (int64_t r = globalThread(); r < rows.total; r += gridThreads()) {
    int64_t off[3];
    offsetsOf(rows, r, off);
    math::softmaxRowBackward(d, output + off[2], yStep, gradOutput + off[1],
                             goStep, gradInput + off[0], giStep,
                             DeviceElements());
  }
}

/// The columns of layer_norm_backward: grad_weight and grad_bias of column
/// i summed over the rows in plan order.
template <typename T>
__global__ void layerNormBackwardColumnsKernel(
    StridedPlan<3> rows, int64_t d, int64_t goStep, int64_t xStep,
    const T *gradOutput, const T *input, const double *statistics,
    float *gradWeight, int64_t gradWeightStride, float *gradBias,
    int64_t gradBiasStride) {
  for (int64_t i = globalThread(); i < d; i += gridThreads()) {
    double sumW = 0, sumB = 0;
    for (int64_t r = 0; r < rows.total; ++r) {
      int64_t off[3];
      offsetsOf(rows, r, off);
      double g = toFloat(gradOutput[off[1] + i * goStep]);
      double xhat = (toFloat(input[off[2] + i * xStep]) - statistics[2 * r]) *
                    statistics[2 * r + 1];
      sumW += g * xhat;
      sumB += g;
    }
    if (gradWeight)
      gradWeight[i * gradWeightStride] = static_cast<float>(sumW);
    if (gradBias)
      gradBias[i * gradBiasStride] = static_cast<float>(sumB);
  }
}

/// A multiply-add rounded once, as the CPU's std::fma.
struct DeviceFma {
  __device__ float operator()(float a, float b, float c) const {
    return __fmaf_rn(a, b, c);
  }
};

__global__ void sgdUpdateKernel(SgdUpdateArgs a) {
  const bool firstStep = a.step && *a.step == 0;
  const bool skipped = a.foundInf && *a.foundInf != 0.0f;
  for (int64_t i = globalThread(); i < a.plan.total; i += gridThreads()) {
    int64_t off[5];
    offsetsOf(a.plan, i, off);
    if (skipped) {
      a.paramOut[off[kSgdParamOut]] = a.param[off[kSgdParam]];
      if (a.scalars.useMomentum)
        a.bufferOut[off[kSgdBufferOut]] = a.bufferIn[off[kSgdBufferIn]];
      continue;
    }
    float buf = a.scalars.useMomentum ? a.bufferIn[off[kSgdBufferIn]] : 0.0f;
    a.paramOut[off[kSgdParamOut]] =
        a.scalars.apply(a.param[off[kSgdParam]], a.grad[off[kSgdGrad]], &buf,
                        firstStep, DeviceFma());
    if (a.scalars.useMomentum)
      a.bufferOut[off[kSgdBufferOut]] = buf;
  }
}

__global__ void incrementKernel(const int64_t *input, const float *foundInf,
                                int64_t *output) {
  *output = *input + (foundInf && *foundInf != 0.0f ? 0 : 1);
}

__global__ void lossScaleKernel(const float *scale, float *output,
                                double initScale) {
  *output = math::lossScale(*scale, initScale);
}

/// The flag before any element is seen (a separate launch, so that every
/// block of the unscaling kernel sees it set).
__global__ void foundInfStartKernel(const float *foundInf,
                                    float *foundInfOut) {
  *foundInfOut = foundInf && *foundInf != 0.0f ? 1.0f : 0.0f;
}

/// Threads that meet a non-finite element all store 1 (ATen's kernel
/// does the same).
__global__ void unscaleGradientKernel(StridedPlan<2> plan, float *gradOut,
                                      const float *grad, const float *scale,
                                      float *foundInfOut) {
  const float inverse = math::inverseLossScale(*scale);
  for (int64_t i = globalThread(); i < plan.total; i += gridThreads()) {
    int64_t off[2];
    offsetsOf(plan, i, off);
    float v = grad[off[1]];
    if (!math::isFinite(v))
      *foundInfOut = 1.0f;
    gradOut[off[0]] = math::unscaleElement(v, inverse);
  }
}

__global__ void updateLossScaleKernel(const float *scale,
                                      const int64_t *growthTracker,
                                      const float *foundInf, float *scaleOut,
                                      int64_t *growthTrackerOut,
                                      double growthFactor,
                                      double backoffFactor,
                                      int64_t growthInterval) {
  math::LossScaleUpdate next =
      math::updateLossScale(*scale, *growthTracker, *foundInf != 0.0f,
                            growthFactor, backoffFactor, growthInterval);
  *scaleOut = next.scale;
  *growthTrackerOut = next.growthTracker;
}

} // namespace

cudaError_t launchFill(Elem elem, const StridedPlan<1> &plan, void *y,
                       float value, cudaStream_t stream) {
  if (plan.total == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fillKernel<T><<<blocksFor(plan.total), kThreads, 0, stream>>>(
        plan, static_cast<T *>(y), value);
    return cudaGetLastError();
  });
}

cudaError_t launchThresholdBackward(Elem elem, const StridedPlan<4> &plan,
                                    void *gradInput, const void *gradOutput,
                                    const void *self, const void *addend,
                                    float threshold, cudaStream_t stream) {
  if (plan.total == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    thresholdBackwardKernel<T><<<blocksFor(plan.total), kThreads, 0, stream>>>(
        plan, static_cast<T *>(gradInput), static_cast<const T *>(gradOutput),
        static_cast<const T *>(self), static_cast<const T *>(addend),
        threshold);
    return cudaGetLastError();
  });
}

cudaError_t launchEltwiseBackward(Elem elem, const StridedPlan<3> &plan,
                                  void *gradInput, const void *gradOutput,
                                  const void *self, int64_t op, float alpha,
                                  float beta, cudaStream_t stream) {
  if (plan.total == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    eltwiseBackwardKernel<T><<<blocksFor(plan.total), kThreads, 0, stream>>>(
        plan, static_cast<T *>(gradInput), static_cast<const T *>(gradOutput),
        static_cast<const T *>(self), op, alpha, beta);
    return cudaGetLastError();
  });
}

cudaError_t launchSumToSize(Elem elem, const StridedPlan<2> &outputs,
                            const StridedPlan<1> &reduced, void *output,
                            const void *input, cudaStream_t stream) {
  if (outputs.total == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sumToSizeKernel<T><<<blocksFor(outputs.total), kThreads, 0, stream>>>(
        outputs, reduced, static_cast<T *>(output),
        static_cast<const T *>(input));
    return cudaGetLastError();
  });
}

cudaError_t launchLayerNormBackward(Elem elem, const StridedPlan<3> &rows,
                                    int64_t d,
                                    const int64_t (&steps)[3], void *gradInput,
                                    const void *gradOutput, const void *input,
                                    const void *weight, int64_t weightStride,
                                    void *gradWeight, int64_t gradWeightStride,
                                    void *gradBias, int64_t gradBiasStride,
                                    double eps, double *statistics,
                                    cudaStream_t stream) {
  if (d == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *go = static_cast<const T *>(gradOutput);
    const T *x = static_cast<const T *>(input);
    if (rows.total > 0) {
      layerNormBackwardRowsKernel<T>
          <<<blocksFor(rows.total), kThreads, 0, stream>>>(
              rows, d, steps[0], steps[1], steps[2],
              static_cast<T *>(gradInput), go, x,
              static_cast<const float *>(weight), weightStride, eps,
              statistics);
      if (cudaError_t error = cudaGetLastError(); error != cudaSuccess)
        return error;
    }
    if (!gradWeight && !gradBias)
      return cudaSuccess;
    layerNormBackwardColumnsKernel<T><<<blocksFor(d), kThreads, 0, stream>>>(
        rows, d, steps[1], steps[2], go, x, statistics,
        static_cast<float *>(gradWeight), gradWeightStride,
        static_cast<float *>(gradBias), gradBiasStride);
    return cudaGetLastError();
  });
}

cudaError_t launchSoftmaxBackward(Elem elem, const StridedPlan<3> &rows,
                                  int64_t d, const int64_t (&steps)[3],
                                  void *gradInput, const void *gradOutput,
                                  const void *output, cudaStream_t stream) {
  if (rows.total == 0 || d == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmaxBackwardKernel<T><<<blocksFor(rows.total), kThreads, 0, stream>>>(
        rows, d, steps[0], steps[1], steps[2], static_cast<T *>(gradInput),
        static_cast<const T *>(gradOutput), static_cast<const T *>(output));
    return cudaGetLastError();
  });
}

cudaError_t launchSgdUpdate(const SgdUpdateArgs &args, cudaStream_t stream) {
  if (args.plan.total == 0)
    return cudaSuccess;
  sgdUpdateKernel<<<blocksFor(args.plan.total), kThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

cudaError_t launchIncrement(const int64_t *input, const float *foundInf,
                            int64_t *output, cudaStream_t stream) {
  incrementKernel<<<1, 1, 0, stream>>>(input, foundInf, output);
  return cudaGetLastError();
}

cudaError_t launchLossScale(const float *scale, float *output,
                            double initScale, cudaStream_t stream) {
  lossScaleKernel<<<1, 1, 0, stream>>>(scale, output, initScale);
  return cudaGetLastError();
}

cudaError_t launchUnscaleGradient(const StridedPlan<2> &plan, float *gradOut,
                                  const float *grad, const float *scale,
                                  const float *foundInf, float *foundInfOut,
                                  cudaStream_t stream) {
  foundInfStartKernel<<<1, 1, 0, stream>>>(foundInf, foundInfOut);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess || plan.total == 0)
    return e;
  unscaleGradientKernel<<<blocksFor(plan.total), kThreads, 0, stream>>>(
      plan, gradOut, grad, scale, foundInfOut);
  return cudaGetLastError();
}

cudaError_t launchUpdateLossScale(const float *scale,
                                  const int64_t *growthTracker,
                                  const float *foundInf, float *scaleOut,
                                  int64_t *growthTrackerOut,
                                  double growthFactor, double backoffFactor,
                                  int64_t growthInterval, cudaStream_t stream) {
  updateLossScaleKernel<<<1, 1, 0, stream>>>(
      scale, growthTracker, foundInf, scaleOut, growthTrackerOut,
      growthFactor, backoffFactor, growthInterval);
  return cudaGetLastError();
}

} // namespace memfmt::runtime::cuda
