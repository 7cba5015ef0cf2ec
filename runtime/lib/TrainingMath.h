//===- TrainingMath.h - Per-element formulas of the training kernels -*- C++
//-*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The scalar functions of the elementwise training kernels, written once for
// the CPU kernels and the CUDA ones (compiled as __host__ __device__ by
// nvcc), so both backends compute the same operations in the same order:
//  * threshold_backward's element (relu's gradient): 0 where
//    self <= threshold, else the incoming gradient (a NaN self lets it
//    through, as in ATen);
//  * one torch.optim.SGD step of one element, in f32 with a fused
//    multiply-add for each of ATen's `add(a, b, alpha)` (runtime/cpu/Sgd.cpp
//    says why this matches torch 1.13 bitwise);
//  * one row of layer_norm_backward and one of softmax_backward in double
//    (the CPU references' and the CUDA kernels');
//  * the loss scaler's arithmetic (GradScaler's: the scale, unscaling, the
//    next scale).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_TRAININGMATH_H
#define MEMFMT_RUNTIME_LIB_TRAININGMATH_H

#include "HostDevice.h"

#include <cfloat>
#include <cmath>
#include <cstdint>

namespace memfmt::runtime::math {

MEMFMT_HOST_DEVICE inline float thresholdGrad(float grad, float self,
                                              float threshold) {
  return self <= threshold ? 0.0f : grad;
}

/// The f32 scalars of one sgd_update call and which of its steps apply.
struct SgdScalars {
  float negativeLr, momentum, dampeningComplement, weightDecay;
  bool decay, useMomentum, nesterov;

  /// `1 - dampening` is taken in double and rounded once, as ATen's alpha.
  static SgdScalars of(double lr, double momentum, double dampening,
                       double weightDecay, bool nesterov) {
    return {static_cast<float>(-lr),
            static_cast<float>(momentum),
            static_cast<float>(1.0 - dampening),
            static_cast<float>(weightDecay),
            weightDecay != 0,
            momentum != 0,
            nesterov};
  }

  /// One element: reads param, grad and (with momentum) *buf, writes the
  /// new *buf (with momentum) and returns the new param. `firstStep`: the
  /// buffer starts as the gradient (torch has none yet).
  template <typename Fma>
  MEMFMT_HOST_DEVICE float apply(float param, float grad, float *buf,
                                 bool firstStep, Fma fma) const {
    float g = decay ? fma(param, weightDecay, grad) : grad;
    if (useMomentum) {
      float b = firstStep ? g : fma(g, dampeningComplement, *buf * momentum);
      *buf = b;
      g = nesterov ? fma(b, momentum, g) : b;
    }
    return fma(g, negativeLr, param);
  }
};

/// Whether `v` is finite, as a compare of |v| with the largest float (false
/// for NaN): the same test on the host and the device, and one a loop over
/// a gradient vectorizes.
MEMFMT_HOST_DEVICE inline bool isFinite(float v) {
  return fabsf(v) <= FLT_MAX;
}

/// Dynamic loss scaling (torch.cuda.amp.GradScaler), ATen's arithmetic:
/// the scale a step uses (an unset, zero, state scale is `initScale`), the
/// factor that unscales a gradient (1 / scale in double, rounded once to
/// f32, as GradScaler.unscale_ computes it), one element unscaled (left as
/// it is where that factor is 1, as _amp_foreach_non_finite_check_and_
/// unscale_), and the next scale and growth tracker (_amp_update_scale_).
MEMFMT_HOST_DEVICE inline float lossScale(float scale, double initScale) {
  return scale != 0.0f ? scale : static_cast<float>(initScale);
}
MEMFMT_HOST_DEVICE inline float inverseLossScale(float scale) {
  return static_cast<float>(1.0 / static_cast<double>(scale));
}
MEMFMT_HOST_DEVICE inline float unscaleElement(float grad, float inverse) {
  return inverse == 1.0f ? grad : grad * inverse;
}
struct LossScaleUpdate {
  float scale;
  int64_t growthTracker;
};
MEMFMT_HOST_DEVICE inline LossScaleUpdate
updateLossScale(float scale, int64_t growthTracker, bool foundInf,
                double growthFactor, double backoffFactor,
                int64_t growthInterval) {
  if (foundInf)
    return {static_cast<float>(scale * backoffFactor), 0};
  int64_t successful = growthTracker + 1;
  if (successful != growthInterval)
    return {scale, successful};
  float grown = static_cast<float>(scale * growthFactor);
  return {isFinite(grown) ? grown : scale, 0};
}

/// How the row functions below read and write elements: f32 as it is. A
/// backend with 16-bit activations passes its own (`load` widens exactly;
/// `store` rounds the f32 result to the storage type, so each element is
/// rounded as the widened reference kernels round it: double to f32, then
/// to the storage type).
struct F32Elements {
  MEMFMT_HOST_DEVICE float load(float v) const { return v; }
  MEMFMT_HOST_DEVICE void store(float &out, float v) const { out = v; }
};

/// One row of softmax_backward in double (the reference kernels'): the
/// row's D elements of the forward's output `y` and `gradOutput` read at
/// their steps; writes y * (grad_output - sum(grad_output * y)) to
/// `gradInput`, each element rounded once to f32 (then stored through
/// `io`).
template <typename T = float, typename Io = F32Elements>
MEMFMT_HOST_DEVICE inline void
softmaxRowBackward(int64_t d, const T *y, int64_t yStep, const T *gradOutput,
                   int64_t goStep, T *gradInput, int64_t giStep, Io io = {}) {
  double dot = 0;
  for (int64_t i = 0; i < d; ++i)
    dot +=
        double(io.load(gradOutput[i * goStep])) * double(io.load(y[i * yStep]));
  for (int64_t i = 0; i < d; ++i)
    io.store(
        gradInput[i * giStep],
        static_cast<float>(double(io.load(y[i * yStep])) *
                           (double(io.load(gradOutput[i * goStep])) - dot)));
}

/// One row of layer_norm_backward in double (the reference kernels'): the
/// row's D elements of input `x`, `gradOutput` and `weight` (f32; null: 1)
/// read at their steps. Sets the row's mean and rstd = 1 / sqrt(var + eps),
/// as the forward computes them, and, when `gradInput` is not null, writes
/// rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = grad_output *
/// weight and xhat = (x - mean) * rstd, rounded once to f32 (then stored
/// through `io`).
template <typename T = float, typename Io = F32Elements>
MEMFMT_HOST_DEVICE inline void
layerNormRowBackward(int64_t d, const T *x, int64_t xStep, const T *gradOutput,
                     int64_t goStep, const float *weight, int64_t weightStep,
                     double eps, T *gradInput, int64_t giStep, double &mean,
                     double &rstd, Io io = {}) {
  auto xAt = [&](int64_t i) { return double(io.load(x[i * xStep])); };
  double sum = 0;
  for (int64_t i = 0; i < d; ++i)
    sum += xAt(i);
  mean = sum / double(d);
  double squares = 0;
  for (int64_t i = 0; i < d; ++i) {
    double dev = xAt(i) - mean;
    squares += dev * dev;
  }
  rstd = 1.0 / sqrt(squares / double(d) + eps);
  if (!gradInput)
    return;
  auto g = [&](int64_t i) {
    return double(io.load(gradOutput[i * goStep])) *
           (weight ? double(weight[i * weightStep]) : 1.0);
  };
  double sumG = 0, sumGX = 0;
  for (int64_t i = 0; i < d; ++i) {
    sumG += g(i);
    sumGX += g(i) * (xAt(i) - mean) * rstd;
  }
  for (int64_t i = 0; i < d; ++i) {
    double xhat = (xAt(i) - mean) * rstd;
    io.store(gradInput[i * giStep],
             static_cast<float>(
                 rstd * (g(i) - sumG / double(d) - xhat * sumGX / double(d))));
  }
}

} // namespace memfmt::runtime::math

#endif // MEMFMT_RUNTIME_LIB_TRAININGMATH_H
