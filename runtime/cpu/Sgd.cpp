//===- Sgd.cpp - One torch.optim.SGD step ---------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// sgd_update, element by element in f32 with torch.optim.SGD's operations in
// its order (torch 1.13, single-tensor path), so parameters agree with
// PyTorch's to the last bit:
//   g = grad.add(param, alpha=weight_decay)         if weight_decay != 0
//   buf = clone(g)                                   first step, or
//   buf = buf.mul_(momentum).add_(g, alpha=1 - dampening)
//   g = g.add(buf, alpha=momentum) if nesterov else buf
//   param.add_(g, alpha=-lr)
// ATen's vectorised `add(a, b, alpha)` is fmadd(b, alpha, a), one rounding,
// and the scalars are rounded to f32 first (`1 - dampening` in double), so
// every step here is a fused multiply-add of f32 values (measured against
// torch 1.13 on this machine: add with alpha matches the fused result
// bitwise, the unfused one on 91% of elements only).
//
// A step GradScaler skips (found_inf set) keeps the parameter and the
// buffer: nothing is written where they are updated in place, else each is
// copied to its output.
//
// The reference walks any strides (forEachStrided) with std::fma; the fast
// variant takes dense tensors of one layout as flat arrays split across
// threads, with the CPU's FMA instruction when it has one (the default
// build targets baseline x86-64, where std::fma is a library call). Both
// give identical results: a fused multiply-add is exactly rounded.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "StridedLoop.h"

#include "lib/TrainingMath.h"

#include <cmath>

using namespace memfmt::runtime;

namespace {

constexpr int64_t kMinPerThread = 1 << 15;

/// The scalars of one call (TrainingMath.h, shared with the CUDA kernel)
/// and whether it is the first step.
struct SgdStep : math::SgdScalars {
  bool firstStep;

  explicit SgdStep(const args::sgd_update &a)
      : math::SgdScalars(math::SgdScalars::of(a.lr, a.momentum, a.dampening,
                                              a.weight_decay, a.nesterov)),
        firstStep(a.has_step && *a.step.as<int64_t>() == 0) {}

  template <typename Fma>
  inline float apply(float param, float grad, float *buf, Fma fma) const {
    return SgdScalars::apply(param, grad, buf, firstStep, fma);
  }
};

/// The momentum buffer's views, or the parameter's when there is no
/// momentum (then neither is read nor written; the loops only need strides).
const TensorView &bufferIn(const args::sgd_update &a) {
  return a.momentum != 0 ? a.momentum_buffer : a.param;
}
const TensorView &bufferOut(const args::sgd_update &a) {
  return a.momentum != 0 ? a.momentum_buffer_out : a.param_out;
}

/// Elements [begin, end) of dense tensors sharing one layout. The new
/// buffer value is kept in a local and stored to buf_out, so in place
/// (buf_out == buf) and out of place both work.
template <typename Fma>
inline void denseRange(const SgdStep &s, const float *param, const float *grad,
                       const float *bufIn, float *bufOut, float *paramOut,
                       int64_t begin, int64_t end, Fma fma) {
  for (int64_t i = begin; i < end; ++i) {
    float b = s.useMomentum ? bufIn[i] : 0.0f;
    paramOut[i] = s.apply(param[i], grad[i], &b, fma);
    if (s.useMomentum)
      bufOut[i] = b;
  }
}

float libraryFma(float a, float b, float c) { return std::fma(a, b, c); }

__attribute__((target("fma"))) void
denseRangeFma(const SgdStep &s, const float *param, const float *grad,
              const float *bufIn, float *bufOut, float *paramOut, int64_t begin,
              int64_t end) {
  denseRange(s, param, grad, bufIn, bufOut, paramOut, begin, end,
             [](float a, float b, float c) { return __builtin_fmaf(a, b, c); });
}

} // namespace

bool cpu::sgdStepSkipped(const args::sgd_update &a) {
  return a.has_found_inf && *a.found_inf.as<float>() != 0;
}

void cpu::sgdKeepState(const args::sgd_update &a) {
  auto keep = [](const TensorView &in, const TensorView &out) {
    if (out.sameViewAs(in))
      return;
    const float *i = in.as<float>();
    float *o = out.as<float>();
    forEachStrided<2>(out.rank, out.sizes, {out.strides, in.strides},
                      kMinPerThread,
                      [&](const OperandOffsets<2> &at, int64_t count,
                          const OperandOffsets<2> &step) {
                        for (int64_t k = 0; k < count; ++k)
                          o[at[0] + k * step[0]] = i[at[1] + k * step[1]];
                      });
  };
  keep(a.param, a.param_out);
  if (a.momentum != 0)
    keep(a.momentum_buffer, a.momentum_buffer_out);
}

void cpu::sgdUpdateReference(const args::sgd_update &a) {
  const SgdStep s(a);
  const TensorView &out = a.param_out, &bin = bufferIn(a), &bout = bufferOut(a);
  const float *p = a.param.as<float>(), *g = a.grad.as<float>(),
              *bi = bin.as<float>();
  float *po = out.as<float>(), *bo = bout.as<float>();
  forEachStrided<5>(
      out.rank, out.sizes,
      {out.strides, a.param.strides, a.grad.strides, bin.strides, bout.strides},
      kMinPerThread,
      [&](const OperandOffsets<5> &at, int64_t count,
          const OperandOffsets<5> &step) {
        for (int64_t i = 0; i < count; ++i) {
          float b = s.useMomentum ? bi[at[3] + i * step[3]] : 0.0f;
          po[at[0] + i * step[0]] = s.apply(
              p[at[1] + i * step[1]], g[at[2] + i * step[2]], &b, libraryFma);
          if (s.useMomentum)
            bo[at[4] + i * step[4]] = b;
        }
      });
}

const char *cpu::sgdUpdateFast(const args::sgd_update &a) {
  const TensorView &out = a.param_out, &bin = bufferIn(a), &bout = bufferOut(a);
  for (const TensorView *t : {&a.param, &a.grad, &bin, &bout})
    if (!t->sameLayoutAs(out))
      return nullptr;
  if (!out.isDense())
    return nullptr;
  const SgdStep s(a);
  const float *p = a.param.as<float>(), *g = a.grad.as<float>(),
              *bi = bin.as<float>();
  float *po = out.as<float>(), *bo = bout.as<float>();
  const bool hardwareFma = __builtin_cpu_supports("fma");
  parallelFor(out.numElements(), kMinPerThread,
              [&](int64_t begin, int64_t end, int) {
                if (hardwareFma)
                  denseRangeFma(s, p, g, bi, bo, po, begin, end);
                else
                  denseRange(s, p, g, bi, bo, po, begin, end, libraryFma);
              });
  return hardwareFma ? "dense_fma" : "dense";
}
