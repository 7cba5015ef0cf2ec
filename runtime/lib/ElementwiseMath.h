//===- ElementwiseMath.h - The eltwise and binary functions -----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The scalar functions of the `eltwise` and `binary` kernels
// (memfmt/runtime/elementwise_ops.h), in f32, written once for the CPU
// kernels and the CUDA ones (compiled as __host__ __device__ by nvcc), so
// both backends compute the same formulas: ATen's.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_ELEMENTWISEMATH_H
#define MEMFMT_RUNTIME_LIB_ELEMENTWISEMATH_H

#include "HostDevice.h"

#include "memfmt/runtime/elementwise_ops.h"

#include <cmath>
#include <cstdint>

namespace memfmt::runtime::math {

/// relu keeping NaN, as PyTorch: only x < 0 becomes 0.
MEMFMT_HOST_DEVICE inline float relu(float x) { return x < 0.0f ? 0.0f : x; }

/// min(max(x, lo), hi) keeping NaN; `hi` wins where lo > hi (as ATen).
MEMFMT_HOST_DEVICE inline float clampKeepNaN(float x, float lo, float hi) {
  float y = x < lo ? lo : x;
  return y > hi ? hi : y;
}

MEMFMT_HOST_DEVICE inline float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

MEMFMT_HOST_DEVICE inline float hardsigmoid(float x, float alpha, float beta) {
  return clampKeepNaN(alpha * x + beta, 0.0f, 1.0f);
}

MEMFMT_HOST_DEVICE inline float hardswish(float x) {
  return x * clampKeepNaN(x + 3.0f, 0.0f, 6.0f) / 6.0f;
}

/// `op` (a memfmt_eltwise_op_t) of `x` with its parameters.
MEMFMT_HOST_DEVICE inline float eltwise(int64_t op, float x, float alpha,
                                        float beta) {
  switch (op) {
  case MEMFMT_ELTWISE_SIGMOID:
    return sigmoid(x);
  case MEMFMT_ELTWISE_HARDSIGMOID:
    return hardsigmoid(x, alpha, beta);
  case MEMFMT_ELTWISE_HARDSWISH:
    return hardswish(x);
  case MEMFMT_ELTWISE_CLAMP:
    return clampKeepNaN(x, alpha, beta);
  case MEMFMT_ELTWISE_GELU_ERF:
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  case MEMFMT_ELTWISE_GELU_TANH:
    return 0.5f * x *
           (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  case MEMFMT_ELTWISE_SILU:
    return x * sigmoid(x);
  default:
    return x;
  }
}

/// The gradient of `eltwise(op, x, alpha, beta)` (eltwise_backward): `grad`
/// times the derivative at `self`, which is sigmoid's output y and every
/// other op's input x, in ATen's formulas and order of operations
/// (sigmoid_backward, silu_backward, hardswish_backward,
/// hardsigmoid_backward, gelu_backward; clamp passes grad where alpha <= x
/// <= beta, as torch's clamp_backward, so a NaN x gets 0).
MEMFMT_HOST_DEVICE inline float
eltwiseBackward(int64_t op, float grad, float self, float alpha, float beta) {
  switch (op) {
  case MEMFMT_ELTWISE_SIGMOID:
    return grad * (1.0f - self) * self;
  case MEMFMT_ELTWISE_HARDSIGMOID: {
    // ATen's -3 < x < 3 for its alpha = 1/6, beta = 1/2: the linear piece.
    float t = alpha * self + beta;
    return t > 0.0f && t < 1.0f ? grad * alpha : 0.0f;
  }
  case MEMFMT_ELTWISE_HARDSWISH:
    if (self < -3.0f)
      return 0.0f;
    return self <= 3.0f ? grad * (self / 3.0f + 0.5f) : grad;
  case MEMFMT_ELTWISE_CLAMP:
    return self >= alpha && self <= beta ? grad : 0.0f;
  case MEMFMT_ELTWISE_GELU_ERF: {
    float cdf = 0.5f * (1.0f + erff(self * 0.70710678118654752f));
    float pdf = 0.39894228040143268f * expf(self * self * -0.5f);
    return grad * (cdf + self * pdf);
  }
  case MEMFMT_ELTWISE_GELU_TANH: {
    const float beta2 = 0.79788456080286536f, kappa = 0.044715f;
    float square = self * self;
    float inner = beta2 * (self + kappa * (square * self));
    float t = tanhf(inner);
    float left = 0.5f * self;
    float leftDerivative = 0.5f * (1.0f + t);
    float rightDerivative =
        left * (1.0f - t * t) * (beta2 * (1.0f + 3.0f * kappa * square));
    return grad * (leftDerivative + rightDerivative);
  }
  case MEMFMT_ELTWISE_SILU: {
    float s = sigmoid(self);
    return grad * s * (1.0f + self * (1.0f - s));
  }
  default:
    return grad;
  }
}

/// `op` (a memfmt_binary_op_t) of `a` and `b`.
MEMFMT_HOST_DEVICE inline float binary(int64_t op, float a, float b) {
  switch (op) {
  case MEMFMT_BINARY_MUL:
    return a * b;
  case MEMFMT_BINARY_SUB:
    return a - b;
  default:
    return a / b;
  }
}

/// True for the codes the kernels know (validation).
inline bool isEltwiseOp(int64_t op) {
  return op >= MEMFMT_ELTWISE_SIGMOID && op <= MEMFMT_ELTWISE_SILU;
}
inline bool isBinaryOp(int64_t op) {
  return op >= MEMFMT_BINARY_MUL && op <= MEMFMT_BINARY_DIV;
}

} // namespace memfmt::runtime::math

#endif // MEMFMT_RUNTIME_LIB_ELEMENTWISEMATH_H
