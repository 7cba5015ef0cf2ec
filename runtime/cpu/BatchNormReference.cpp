//===- BatchNormReference.cpp - Training batch norm's reference kernels ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The reference kernels of native_batch_norm (training mode) and
// native_batch_norm_backward, for any rank >= 2 and any strides, in phases
// threaded over channels that the synchronised kernels (SyncBatchNorm.cpp)
// share, all-reducing between them. Every per-channel reduction is in double
// and two-pass: the forward sums x for the mean, then (x - mean)^2 for the
// biased variance, which stays accurate when |mean| is much larger than the
// spread (the one-pass sum of squares does not); the backward sums
// grad_out and grad_out * xhat and then writes
//   grad_input = weight * invstd * (grad_out - sum(grad_out) / n
//                                   - xhat * sum(grad_out * xhat) / n).
// writeBatchNormStatistics turns a channel's batch statistics into
// save_mean, save_invstd and the running statistics (momentum update, the
// running variance unbiased by n / (n - 1)) in double, as ATen does.
// The fast kernels are in BatchNormTraining.cpp.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Scratch.h"
#include "StridedLoop.h"
#include "lib/ElementwiseMath.h"
#include "lib/TrainingMath.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;

// Compiled without fused multiply-adds, as BatchNormTraining.cpp is, whose
// fast kernels are tested against these.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace {

/// One channel's elements of a tensor of rank >= 2: dim 1 fixed at c.
struct ChannelSlice {
  int64_t rank;
  int64_t sizes[kMaxRank];

  explicit ChannelSlice(const TensorView &t) : rank(t.rank) {
    std::copy(t.sizes, t.sizes + t.rank, sizes);
    sizes[1] = 1;
  }
};

/// Calls `body(offsets, count, steps)` over channel c of K tensors of one
/// shape on the calling thread (the caller threads over channels).
template <size_t K, typename Body>
void forChannel(const ChannelSlice &slice,
                const std::array<const int64_t *, K> &strides, Body &&body) {
  forEachStrided<K>(slice.rank, slice.sizes, strides,
                    std::numeric_limits<int64_t>::max(), body);
}

/// The sum in double of `term(x)` over channel c of the f32 tensor t.
template <typename Term>
double channelSum(const ChannelSlice &slice, const TensorView &t, int64_t c,
                  Term term) {
  const float *xc = t.as<float>() + c * t.strides[1];
  double sum = 0;
  forChannel<1>(slice, {t.strides},
                [&](const OperandOffsets<1> &o, int64_t count,
                    const OperandOffsets<1> &step) {
                  for (int64_t i = 0; i < count; ++i)
                    sum += term(double(xc[o[0] + i * step[0]]));
                });
  return sum;
}

} // namespace

void cpu::writeBatchNormStatistics(const args::native_batch_norm &a,
                                   const double *mean, const double *var,
                                   double n) {
  const int64_t channels = a.input.sizes[1];
  const double momentum = a.momentum, unbias = n / (n - 1);
  auto put = [](const TensorView &t, int64_t c, double v) {
    t.as<float>()[c * t.strides[0]] = static_cast<float>(v);
  };
  for (int64_t c = 0; c < channels; ++c) {
    // Read both running values before writing either output: running_*_out
    // may be running_* itself.
    double runningMean = channelValue(a.running_mean, c);
    double runningVar = channelValue(a.running_var, c);
    put(a.save_mean, c, mean[c]);
    put(a.save_invstd, c, 1.0 / std::sqrt(var[c] + a.eps));
    put(a.running_mean_out, c,
        (1 - momentum) * runningMean + momentum * mean[c]);
    put(a.running_var_out, c,
        (1 - momentum) * runningVar + momentum * var[c] * unbias);
  }
}

void cpu::channelSums(const TensorView &in, double *sums) {
  const ChannelSlice slice(in);
  parallelFor(in.sizes[1], 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c)
      sums[c] = channelSum(slice, in, c, [](double v) { return v; });
  });
}

void cpu::squaredDeviationSums(const TensorView &in, const double *mean,
                               double *sums) {
  const ChannelSlice slice(in);
  parallelFor(in.sizes[1], 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      const double m = mean[c];
      sums[c] = channelSum(slice, in, c,
                           [m](double v) { return (v - m) * (v - m); });
    }
  });
}

void cpu::normalizeChannels(const args::native_batch_norm &a,
                            const double *mean, const double *var) {
  const TensorView &in = a.input, &out = a.output;
  // Without a residual the input stands in for it, unread.
  const TensorView &res = a.has_residual ? a.residual : a.input;
  const ChannelSlice slice(in);
  const float *x = in.as<float>(), *r = res.as<float>();
  float *y = out.as<float>();
  const bool hasResidual = a.has_residual, relu = a.relu;
  parallelFor(in.sizes[1], 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      const double m = mean[c];
      const double scale =
          channelValue(a.weight, c) / std::sqrt(var[c] + a.eps);
      const double shift = channelValue(a.bias, c);
      const float *xc = x + c * in.strides[1], *rc = r + c * res.strides[1];
      float *yc = y + c * out.strides[1];
      forChannel<3>(slice, {out.strides, in.strides, res.strides},
                    [&](const OperandOffsets<3> &o, int64_t count,
                        const OperandOffsets<3> &step) {
                      for (int64_t i = 0; i < count; ++i) {
                        float v = static_cast<float>(
                            (xc[o[1] + i * step[1]] - m) * scale + shift);
                        if (hasResidual)
                          v += rc[o[2] + i * step[2]];
                        yc[o[0] + i * step[0]] = relu ? math::relu(v) : v;
                      }
                    });
    }
  });
}

void cpu::nativeBatchNormReference(const args::native_batch_norm &a) {
  const int64_t channels = a.input.sizes[1];
  const double n =
      double(a.input.numElements() / std::max<int64_t>(channels, 1));
  std::vector<double> &mean = scratchBuffer<double, 0>(channels);
  std::vector<double> &var = scratchBuffer<double, 1>(channels);
  channelSums(a.input, mean.data());
  for (double &m : mean)
    m /= n;
  squaredDeviationSums(a.input, mean.data(), var.data());
  for (double &v : var)
    v /= n;
  normalizeChannels(a, mean.data(), var.data());
  writeBatchNormStatistics(a, mean.data(), var.data(), n);
}

/// The output the relu mask of a backward call reads: the forward's output
/// with `relu`, else the input (unread).
static const TensorView &maskOf(const args::native_batch_norm_backward &a) {
  return a.relu ? a.output : a.input;
}

/// grad_out's element where the forward's output is `y`: relu's gradient
/// applied first when the forward was fused with relu.
static inline float incomingGrad(float g, float y, bool relu) {
  return relu ? math::thresholdGrad(g, y, 0.0f) : g;
}

void cpu::batchNormGradientSums(const args::native_batch_norm_backward &a,
                                double *sums) {
  const TensorView &in = a.input, &go = a.grad_out, &mask = maskOf(a);
  const int64_t channels = in.sizes[1];
  const ChannelSlice slice(in);
  const float *x = in.as<float>(), *g = go.as<float>(), *y = mask.as<float>();
  const bool relu = a.relu;
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      const double mean = channelValue(a.save_mean, c);
      const double invstd = channelValue(a.save_invstd, c);
      const float *xc = x + c * in.strides[1], *gc = g + c * go.strides[1];
      const float *yc = y + c * mask.strides[1];
      double sumGrad = 0, sumGradXhat = 0;
      forChannel<3>(slice, {in.strides, go.strides, mask.strides},
                    [&](const OperandOffsets<3> &o, int64_t count,
                        const OperandOffsets<3> &step) {
                      for (int64_t i = 0; i < count; ++i) {
                        double d = incomingGrad(gc[o[1] + i * step[1]],
                                                yc[o[2] + i * step[2]], relu);
                        sumGrad += d;
                        sumGradXhat +=
                            d * (xc[o[0] + i * step[0]] - mean) * invstd;
                      }
                    });
      if (a.has_grad_weight)
        a.grad_weight.as<float>()[c * a.grad_weight.strides[0]] =
            static_cast<float>(sumGradXhat);
      if (a.has_grad_bias)
        a.grad_bias.as<float>()[c * a.grad_bias.strides[0]] =
            static_cast<float>(sumGrad);
      sums[c] = sumGrad;
      sums[channels + c] = sumGradXhat;
    }
  });
}

void cpu::batchNormGradInput(const args::native_batch_norm_backward &a,
                             const double *sums, double n) {
  const TensorView &in = a.input, &go = a.grad_out, &gi = a.grad_input;
  const TensorView &mask = maskOf(a);
  const int64_t channels = in.sizes[1];
  const ChannelSlice slice(in);
  const float *x = in.as<float>(), *g = go.as<float>(), *y = mask.as<float>();
  const bool relu = a.relu;
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      const double mean = channelValue(a.save_mean, c);
      const double invstd = channelValue(a.save_invstd, c);
      const double scale = channelValue(a.weight, c) * invstd;
      const double meanGrad = sums[c] / n;
      const double meanGradXhat = sums[channels + c] / n;
      const float *xc = x + c * in.strides[1], *gc = g + c * go.strides[1];
      const float *yc = y + c * mask.strides[1];
      float *out = gi.as<float>() + c * gi.strides[1];
      forChannel<4>(slice, {gi.strides, in.strides, go.strides, mask.strides},
                    [&](const OperandOffsets<4> &o, int64_t count,
                        const OperandOffsets<4> &step) {
                      for (int64_t i = 0; i < count; ++i) {
                        double xhat = (xc[o[1] + i * step[1]] - mean) * invstd;
                        float d = incomingGrad(gc[o[2] + i * step[2]],
                                               yc[o[3] + i * step[3]], relu);
                        out[o[0] + i * step[0]] = static_cast<float>(
                            scale * (d - meanGrad - xhat * meanGradXhat));
                      }
                    });
    }
  });
}

void cpu::nativeBatchNormBackwardReference(
    const args::native_batch_norm_backward &a) {
  const int64_t channels = a.input.sizes[1];
  std::vector<double> &sums = scratchBuffer<double, 0>(2 * channels);
  batchNormGradientSums(a, sums.data());
  if (a.has_grad_input)
    batchNormGradInput(
        a, sums.data(),
        double(a.input.numElements() / std::max<int64_t>(channels, 1)));
}

