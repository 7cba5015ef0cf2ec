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
//    (the CPU references' and the CUDA kernels').
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_TRAININGMATH_H
#define MEMFMT_RUNTIME_LIB_TRAININGMATH_H

#include "HostDevice.h"

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

/// One row of softmax_backward in double (the reference kernels'): the
/// row's D elements of the forward's output `y` and `gradOutput` read at
/// their steps; writes y * (grad_output - sum(grad_output * y)) to
/// `gradInput`, each element rounded once.
MEMFMT_HOST_DEVICE inline void
softmaxRowBackward(int64_t d, const float *y, int64_t yStep,
                   const float *gradOutput, int64_t goStep, float *gradInput,
                   int64_t giStep) {
  double dot = 0;
  for (int64_t i = 0; i < d; ++i)
    dot += double(gradOutput[i * goStep]) * double(y[i * yStep]);
  for (int64_t i = 0; i < d; ++i)
    gradInput[i * giStep] = static_cast<float>(
        double(y[i * yStep]) * (double(gradOutput[i * goStep]) - dot));
}

/// One row of layer_norm_backward in double (the reference kernels'): the
/// row's D elements of input `x`, `gradOutput` and `weight` (null: 1) read
/// at their steps. Sets the row's mean and rstd = 1 / sqrt(var + eps), as
/// the forward computes them, and, when `gradInput` is not null, writes
/// rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = grad_output *
/// weight and xhat = (x - mean) * rstd, rounded once.
MEMFMT_HOST_DEVICE inline void layerNormRowBackward(
    int64_t d, const float *x, int64_t xStep, const float *gradOutput,
    int64_t goStep, const float *weight, int64_t weightStep, double eps,
    float *gradInput, int64_t giStep, double &mean, double &rstd) {
  double sum = 0;
  for (int64_t i = 0; i < d; ++i)
    sum += x[i * xStep];
  mean = sum / double(d);
  double squares = 0;
  for (int64_t i = 0; i < d; ++i) {
    double dev = x[i * xStep] - mean;
    squares += dev * dev;
  }
  rstd = 1.0 / sqrt(squares / double(d) + eps);
  if (!gradInput)
    return;
  auto g = [&](int64_t i) {
    return double(gradOutput[i * goStep]) *
           (weight ? double(weight[i * weightStep]) : 1.0);
  };
  double sumG = 0, sumGX = 0;
  for (int64_t i = 0; i < d; ++i) {
    sumG += g(i);
    sumGX += g(i) * (x[i * xStep] - mean) * rstd;
  }
  for (int64_t i = 0; i < d; ++i) {
    double xhat = (x[i * xStep] - mean) * rstd;
    gradInput[i * giStep] = static_cast<float>(
        rstd * (g(i) - sumG / double(d) - xhat * sumGX / double(d)));
  }
}

} // namespace memfmt::runtime::math

#endif // MEMFMT_RUNTIME_LIB_TRAININGMATH_H
