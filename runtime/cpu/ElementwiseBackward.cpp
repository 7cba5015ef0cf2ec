//===- ElementwiseBackward.cpp - fill and the elementwise gradients -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The elementwise training kernels:
//  * fill writes one value into every element (the loss gradient's seed);
//  * threshold_backward passes grad_output (or grad_output + addend, the
//    fused gradient sum of a value with two uses) where self is above the
//    threshold and writes 0 elsewhere (relu's gradient). Like ATen's
//    threshold kernel it tests `self <= threshold` and zeroes those
//    elements, so a NaN in self lets its gradient through;
//  * eltwise_backward is the gradient of each eltwise function (sigmoid,
//    SiLU, hardswish, hardsigmoid, clamp, GELU), by ElementwiseMath.h's
//    formulas, which the CUDA kernel shares.
// The references walk any strides with forEachStrided; the fast variants
// take tensors that are dense in one common layout (NCHW, channels-last or
// any other order) as flat arrays split across threads, in loops the
// compiler vectorises, in f32 or bf16 (Element.h). There is nothing to
// accumulate, so both families give identical results.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Element.h"
#include "StridedLoop.h"
#include "Vectorize.h"

#include "lib/ElementwiseMath.h"
#include "lib/TrainingMath.h"

#include <algorithm>
#include <type_traits>

using namespace memfmt::runtime;

namespace {

constexpr int64_t kMinPerThread = 1 << 16;

/// grad_input for one element: ATen's `self <= threshold ? 0 : grad`.
using math::thresholdGrad;

} // namespace

void cpu::fillReference(const args::fill &a) {
  const float value = static_cast<float>(a.value);
  float *y = a.output.as<float>();
  forEachStrided<1>(a.output.rank, a.output.sizes, {a.output.strides},
                    kMinPerThread,
                    [&](const OperandOffsets<1> &at, int64_t count,
                        const OperandOffsets<1> &step) {
                      for (int64_t i = 0; i < count; ++i)
                        y[at[0] + i * step[0]] = value;
                    });
}

const char *cpu::fillFast(const args::fill &a) {
  if (!a.output.isDense())
    return nullptr;
  const float value = static_cast<float>(a.value);
  float *y = a.output.as<float>();
  parallelFor(a.output.numElements(), kMinPerThread,
              [&](int64_t begin, int64_t end, int) {
                std::fill(y + begin, y + end, value);
              });
  return "dense";
}

void cpu::thresholdBackwardReference(const args::threshold_backward &a) {
  const float threshold = static_cast<float>(a.threshold);
  const TensorView &gi = a.grad_input;
  const TensorView &addend = a.has_addend ? a.addend : a.grad_output;
  const float *g = a.grad_output.as<float>(), *s = a.self.as<float>();
  const float *r = a.has_addend ? addend.as<float>() : nullptr;
  float *y = gi.as<float>();
  forEachStrided<4>(
      gi.rank, gi.sizes,
      {gi.strides, a.grad_output.strides, a.self.strides, addend.strides},
      kMinPerThread,
      [&](const OperandOffsets<4> &at, int64_t count,
          const OperandOffsets<4> &step) {
        for (int64_t i = 0; i < count; ++i) {
          float grad = g[at[1] + i * step[1]];
          if (r)
            grad += r[at[3] + i * step[3]];
          y[at[0] + i * step[0]] =
              thresholdGrad(grad, s[at[2] + i * step[2]], threshold);
        }
      });
}

namespace {

/// thresholdBackwardFast's loops over dense tensors of storage type T
/// (Element.h): the sum and the test in f32, rounded to T once, as the
/// widened reference rounds.
template <typename T>
const char *thresholdBackwardDense(const args::threshold_backward &a) {
  const TensorView &gi = a.grad_input;
  const float threshold = static_cast<float>(a.threshold);
  const T *g = a.grad_output.as<T>(), *s = a.self.as<T>();
  T *y = gi.as<T>();
  if (a.has_addend) {
    const T *r = a.addend.as<T>();
    parallelFor(gi.numElements(), kMinPerThread,
                [&](int64_t begin, int64_t end, int) {
                  MEMFMT_INDEPENDENT_ITERATIONS
                  for (int64_t i = begin; i < end; ++i)
                    y[i] = cpu::store<T>(thresholdGrad(
                        cpu::load(g[i]) + cpu::load(r[i]), cpu::load(s[i]),
                        threshold));
                });
    return "dense_sum";
  }
  parallelFor(gi.numElements(), kMinPerThread,
              [&](int64_t begin, int64_t end, int) {
                MEMFMT_INDEPENDENT_ITERATIONS
                for (int64_t i = begin; i < end; ++i)
                  y[i] = cpu::store<T>(thresholdGrad(
                      cpu::load(g[i]), cpu::load(s[i]), threshold));
              });
  return "dense";
}

} // namespace

const char *cpu::thresholdBackwardFast(const args::threshold_backward &a,
                                       DType dtype) {
  const TensorView &gi = a.grad_input;
  if (!gi.isDense() || !a.grad_output.sameLayoutAs(gi) ||
      !a.self.sameLayoutAs(gi) || (a.has_addend && !a.addend.sameLayoutAs(gi)))
    return nullptr;
  return visitFloatElement(dtype, [&](auto element) {
    return thresholdBackwardDense<decltype(element)>(a);
  });
}

void cpu::eltwiseBackwardReference(const args::eltwise_backward &a) {
  const TensorView &gi = a.grad_input;
  const float *g = a.grad_output.as<float>(), *s = a.self.as<float>();
  float *y = gi.as<float>();
  const int64_t op = a.op;
  const float alpha = static_cast<float>(a.alpha),
              beta = static_cast<float>(a.beta);
  forEachStrided<3>(
      gi.rank, gi.sizes, {gi.strides, a.grad_output.strides, a.self.strides},
      kMinPerThread,
      [&](const OperandOffsets<3> &at, int64_t count,
          const OperandOffsets<3> &step) {
        for (int64_t i = 0; i < count; ++i)
          y[at[0] + i * step[0]] = math::eltwiseBackward(
              op, g[at[1] + i * step[1]], s[at[2] + i * step[2]], alpha, beta);
      });
}

namespace {

/// grad_input[i] = fn(grad_output[i], self[i]) over dense tensors of storage
/// type T in one layout, computed in f32 and rounded once (the widened
/// reference's bits); `Vector` where fn is plain arithmetic (no libm call).
template <typename T, bool Vector, typename Fn>
void denseGradient(const args::eltwise_backward &a, Fn fn) {
  const T *g = a.grad_output.as<T>(), *s = a.self.as<T>();
  T *y = a.grad_input.as<T>();
  parallelFor(a.grad_input.numElements(), kMinPerThread / 4,
              [&](int64_t begin, int64_t end, int) {
                if constexpr (Vector) {
                  MEMFMT_INDEPENDENT_ITERATIONS
                  for (int64_t i = begin; i < end; ++i)
                    y[i] = cpu::store<T>(fn(cpu::load(g[i]), cpu::load(s[i])));
                } else {
                  for (int64_t i = begin; i < end; ++i)
                    y[i] = cpu::store<T>(fn(cpu::load(g[i]), cpu::load(s[i])));
                }
              });
}

template <typename T>
const char *eltwiseBackwardDense(const args::eltwise_backward &a) {
  const float alpha = static_cast<float>(a.alpha),
              beta = static_cast<float>(a.beta);
  // The function's code as a constant, so that its switch folds away and the
  // loop vectorises where the gradient is plain arithmetic (the
  // piecewise-linear ones and sigmoid's, from its output); the others call
  // libm per element.
  auto run = [&](auto op, auto vector) {
    denseGradient<T, decltype(vector)::value>(a, [=](float g, float s) {
      return math::eltwiseBackward(decltype(op)::value, g, s, alpha, beta);
    });
  };
  using Vector = std::true_type;
  using Scalar = std::false_type;
  switch (a.op) {
  case MEMFMT_ELTWISE_SIGMOID:
    run(std::integral_constant<int64_t, MEMFMT_ELTWISE_SIGMOID>(), Vector());
    break;
  case MEMFMT_ELTWISE_HARDSIGMOID:
    run(std::integral_constant<int64_t, MEMFMT_ELTWISE_HARDSIGMOID>(),
        Vector());
    break;
  case MEMFMT_ELTWISE_HARDSWISH:
    run(std::integral_constant<int64_t, MEMFMT_ELTWISE_HARDSWISH>(), Vector());
    break;
  case MEMFMT_ELTWISE_CLAMP:
    run(std::integral_constant<int64_t, MEMFMT_ELTWISE_CLAMP>(), Vector());
    break;
  case MEMFMT_ELTWISE_GELU_ERF:
    run(std::integral_constant<int64_t, MEMFMT_ELTWISE_GELU_ERF>(), Scalar());
    break;
  case MEMFMT_ELTWISE_GELU_TANH:
    run(std::integral_constant<int64_t, MEMFMT_ELTWISE_GELU_TANH>(), Scalar());
    break;
  default:
    run(std::integral_constant<int64_t, MEMFMT_ELTWISE_SILU>(), Scalar());
  }
  return "dense";
}

} // namespace

const char *cpu::eltwiseBackwardFast(const args::eltwise_backward &a,
                                     DType dtype) {
  const TensorView &gi = a.grad_input;
  if (!gi.isDense() || !a.grad_output.sameLayoutAs(gi) ||
      !a.self.sameLayoutAs(gi))
    return nullptr;
  return visitFloatElement(dtype, [&](auto element) {
    return eltwiseBackwardDense<decltype(element)>(a);
  });
}
