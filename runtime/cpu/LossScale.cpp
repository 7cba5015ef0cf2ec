//===- LossScale.cpp - Dynamic loss scaling on the CPU --------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The loss scaler's three kernels (Kernels.def: loss_scale,
// unscale_gradient, update_loss_scale) on host memory, with the arithmetic
// of lib/TrainingMath.h that the CUDA kernels share. unscale_gradient walks
// any strides split across threads; a thread that meets a non-finite
// element raises the shared flag, which is written once at the end, so
// the gradient and the flag may each be updated in place.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "StridedLoop.h"

#include "lib/TrainingMath.h"

#include <atomic>

using namespace memfmt::runtime;

void cpu::lossScale(const args::loss_scale &a) {
  *a.output.as<float>() = math::lossScale(*a.scale.as<float>(), a.init_scale);
}

void cpu::unscaleGradient(const args::unscale_gradient &a) {
  const float inverse = math::inverseLossScale(*a.scale.as<float>());
  const bool foundBefore = a.has_found_inf && *a.found_inf.as<float>() != 0;
  std::atomic<bool> found{false};
  const TensorView &out = a.grad_out;
  const float *g = a.grad.as<float>();
  float *o = out.as<float>();
  forEachStrided<2>(out.rank, out.sizes, {out.strides, a.grad.strides},
                    /*minPerThread=*/1 << 15,
                    [&](const OperandOffsets<2> &at, int64_t count,
                        const OperandOffsets<2> &step) {
                      bool nonFinite = false;
                      for (int64_t i = 0; i < count; ++i) {
                        float v = g[at[1] + i * step[1]];
                        nonFinite |= !math::isFinite(v);
                        o[at[0] + i * step[0]] =
                            math::unscaleElement(v, inverse);
                      }
                      if (nonFinite)
                        found.store(true, std::memory_order_relaxed);
                    });
  *a.found_inf_out.as<float>() = foundBefore || found.load() ? 1.0f : 0.0f;
}

void cpu::updateLossScale(const args::update_loss_scale &a) {
  math::LossScaleUpdate next = math::updateLossScale(
      *a.scale.as<float>(), *a.growth_tracker.as<int64_t>(),
      *a.found_inf.as<float>() != 0, a.growth_factor, a.backoff_factor,
      a.growth_interval);
  *a.scale_out.as<float>() = next.scale;
  *a.growth_tracker_out.as<int64_t>() = next.growthTracker;
}
