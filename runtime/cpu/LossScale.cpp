//===- LossScale.cpp - Dynamic loss scaling on the CPU --------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The loss scaler's three kernels (Kernels.def: loss_scale,
// unscale_gradient, update_loss_scale) on host memory, with the arithmetic
// of lib/TrainingMath.h that the CUDA kernels share. unscale_gradient walks
// a dense gradient as one flat array (vectorized) and any other strides
// run by run, split across threads; a thread that meets a non-finite
// element raises the shared flag, which is written once at the end, so
// the gradient and the flag may each be updated in place.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "StridedLoop.h"

#include "lib/TrainingMath.h"

#include <atomic>
#include <cmath>

using namespace memfmt::runtime;

void cpu::lossScale(const args::loss_scale &a) {
  *a.output.as<float>() = math::lossScale(*a.scale.as<float>(), a.init_scale);
}

namespace {

constexpr int64_t kMinPerThread = 1 << 15;

/// Elements [0, count) of a run `step` apart, unscaled; whether one was not
/// finite. With unit steps the loop vectorizes (math::isFinite is a
/// compare).
inline bool unscaleRun(const float *g, int64_t gStep, float *o, int64_t oStep,
                       int64_t count, float inverse) {
  bool nonFinite = false;
  for (int64_t i = 0; i < count; ++i) {
    float v = g[i * gStep];
    nonFinite |= !math::isFinite(v);
    o[i * oStep] = math::unscaleElement(v, inverse);
  }
  return nonFinite;
}

} // namespace

const char *cpu::unscaleGradient(const args::unscale_gradient &a,
                                 bool allowDense) {
  const float inverse = math::inverseLossScale(*a.scale.as<float>());
  const bool foundBefore = a.has_found_inf && *a.found_inf.as<float>() != 0;
  std::atomic<bool> found{false};
  const TensorView &out = a.grad_out;
  const float *g = a.grad.as<float>();
  float *o = out.as<float>();
  const char *impl = "dense";
  if (allowDense && out.isDense() && out.sameLayoutAs(a.grad)) {
    parallelFor(
        out.numElements(), kMinPerThread, [&](int64_t begin, int64_t end, int) {
          if (unscaleRun(g + begin, 1, o + begin, 1, end - begin, inverse))
            found.store(true, std::memory_order_relaxed);
        });
  } else {
    impl = "strided";
    forEachStrided<2>(out.rank, out.sizes, {out.strides, a.grad.strides},
                      kMinPerThread,
                      [&](const OperandOffsets<2> &at, int64_t count,
                          const OperandOffsets<2> &step) {
                        if (unscaleRun(g + at[1], step[1], o + at[0], step[0],
                                       count, inverse))
                          found.store(true, std::memory_order_relaxed);
                      });
  }
  *a.found_inf_out.as<float>() = foundBefore || found.load() ? 1.0f : 0.0f;
  return impl;
}

void cpu::updateLossScale(const args::update_loss_scale &a) {
  math::LossScaleUpdate next = math::updateLossScale(
      *a.scale.as<float>(), *a.growth_tracker.as<int64_t>(),
      *a.found_inf.as<float>() != 0, a.growth_factor, a.backoff_factor,
      a.growth_interval);
  *a.scale_out.as<float>() = next.scale;
  *a.growth_tracker_out.as<int64_t>() = next.growthTracker;
}
