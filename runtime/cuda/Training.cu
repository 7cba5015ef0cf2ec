//===- Training.cu - Elementwise kernels of the training step -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The training step's elementwise kernels on CUDA: fill (splat constants,
// such as the loss gradient's seed), threshold_backward (relu's gradient)
// sgd_update (one torch.optim.SGD step of a parameter and its momentum
// buffer) and increment (the optimizer's step count, one thread). Each thread
// walks elements of a StridedPlan (CudaPlan.h), so every layout works and
// in-place updates read an element before they write it; by L9 the operands of
// one call share a layout, and then the plan is one flat run. The formulas are
// the CPU kernels' (lib/TrainingMath.h), with the same fused multiply-adds, so
// a step gives the CPU's values bit for bit.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "DeviceTypes.cuh"
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

__global__ void thresholdBackwardKernel(StridedPlan<4> plan, float *gradInput,
                                        const float *gradOutput,
                                        const float *self, const float *addend,
                                        float threshold) {
  for (int64_t i = globalThread(); i < plan.total; i += gridThreads()) {
    int64_t off[4];
    offsetsOf(plan, i, off);
    float grad = gradOutput[off[1]];
    if (addend)
      grad = __fadd_rn(grad, addend[off[3]]);
    gradInput[off[0]] = math::thresholdGrad(grad, self[off[2]], threshold);
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
  for (int64_t i = globalThread(); i < a.plan.total; i += gridThreads()) {
    int64_t off[5];
    offsetsOf(a.plan, i, off);
    float buf = a.scalars.useMomentum ? a.bufferIn[off[kSgdBufferIn]] : 0.0f;
    a.paramOut[off[kSgdParamOut]] =
        a.scalars.apply(a.param[off[kSgdParam]], a.grad[off[kSgdGrad]], &buf,
                        firstStep, DeviceFma());
    if (a.scalars.useMomentum)
      a.bufferOut[off[kSgdBufferOut]] = buf;
  }
}

__global__ void incrementKernel(const int64_t *input, int64_t *output) {
  *output = *input + 1;
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

cudaError_t launchThresholdBackward(const StridedPlan<4> &plan, void *gradInput,
                                    const void *gradOutput, const void *self,
                                    const void *addend, float threshold,
                                    cudaStream_t stream) {
  if (plan.total == 0)
    return cudaSuccess;
  thresholdBackwardKernel<<<blocksFor(plan.total), kThreads, 0, stream>>>(
      plan, static_cast<float *>(gradInput),
      static_cast<const float *>(gradOutput), static_cast<const float *>(self),
      static_cast<const float *>(addend), threshold);
  return cudaGetLastError();
}

cudaError_t launchSgdUpdate(const SgdUpdateArgs &args, cudaStream_t stream) {
  if (args.plan.total == 0)
    return cudaSuccess;
  sgdUpdateKernel<<<blocksFor(args.plan.total), kThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

cudaError_t launchIncrement(const int64_t *input, int64_t *output,
                            cudaStream_t stream) {
  incrementKernel<<<1, 1, 0, stream>>>(input, output);
  return cudaGetLastError();
}

} // namespace memfmt::runtime::cuda
