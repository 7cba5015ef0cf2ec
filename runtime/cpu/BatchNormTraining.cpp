//===- BatchNormTraining.cpp - Training batch norm and its gradient -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The reference kernels of native_batch_norm (training mode) and
// native_batch_norm_backward, for any rank >= 2 and any strides, one channel
// per task across threads. Every per-channel reduction is in double and
// two-pass: the forward sums x for the mean, then (x - mean)^2 for the
// biased variance, which stays accurate when |mean| is much larger than the
// spread (the one-pass sum of squares does not); the backward sums
// grad_out and grad_out * xhat and then writes
//   grad_input = weight * invstd * (grad_out - sum(grad_out) / n
//                                   - xhat * sum(grad_out * xhat) / n).
// writeBatchNormStatistics turns a channel's batch statistics into
// save_mean, save_invstd and the running statistics (momentum update, the
// running variance unbiased by n / (n - 1)) in double, as ATen does; the
// oneDNN fast path (OneDnnBatchNorm.cpp) shares it.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Scratch.h"
#include "StridedLoop.h"

#include <cmath>
#include <limits>

using namespace memfmt::runtime;

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
  cpu::forEachStrided<K>(slice.rank, slice.sizes, strides,
                         std::numeric_limits<int64_t>::max(), body);
}

/// Element c of the 1-D tensor t, widened.
double at(const TensorView &t, int64_t c) {
  return static_cast<double>(t.as<float>()[c * t.strides[0]]);
}

} // namespace

void cpu::writeBatchNormStatistics(const args::native_batch_norm &a,
                                   const double *mean, const double *var) {
  const int64_t channels = a.input.sizes[1];
  const double n =
      double(a.input.numElements() / std::max<int64_t>(channels, 1));
  const double momentum = a.momentum, unbias = n / (n - 1);
  auto put = [](const TensorView &t, int64_t c, double v) {
    t.as<float>()[c * t.strides[0]] = static_cast<float>(v);
  };
  for (int64_t c = 0; c < channels; ++c) {
    // Read both running values before writing either output: running_*_out
    // may be running_* itself.
    double runningMean = at(a.running_mean, c);
    double runningVar = at(a.running_var, c);
    put(a.save_mean, c, mean[c]);
    put(a.save_invstd, c, 1.0 / std::sqrt(var[c] + a.eps));
    put(a.running_mean_out, c,
        (1 - momentum) * runningMean + momentum * mean[c]);
    put(a.running_var_out, c,
        (1 - momentum) * runningVar + momentum * var[c] * unbias);
  }
}

void cpu::nativeBatchNormReference(const args::native_batch_norm &a) {
  const TensorView &in = a.input, &out = a.output;
  const int64_t channels = in.sizes[1];
  const ChannelSlice slice(in);
  const double n = double(in.numElements() / std::max<int64_t>(channels, 1));
  std::vector<double> &mean = scratchBuffer<double, 0>(channels);
  std::vector<double> &var = scratchBuffer<double, 1>(channels);
  const float *x = in.as<float>();
  float *y = out.as<float>();
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      const float *xc = x + c * in.strides[1];
      double sum = 0;
      forChannel<1>(slice, {in.strides},
                    [&](const OperandOffsets<1> &o, int64_t count,
                        const OperandOffsets<1> &step) {
                      for (int64_t i = 0; i < count; ++i)
                        sum += xc[o[0] + i * step[0]];
                    });
      const double m = sum / n;
      double squares = 0;
      forChannel<1>(slice, {in.strides},
                    [&](const OperandOffsets<1> &o, int64_t count,
                        const OperandOffsets<1> &step) {
                      for (int64_t i = 0; i < count; ++i) {
                        double d = xc[o[0] + i * step[0]] - m;
                        squares += d * d;
                      }
                    });
      mean[c] = m;
      var[c] = squares / n;
      const double scale = at(a.weight, c) / std::sqrt(var[c] + a.eps);
      const double shift = at(a.bias, c);
      float *yc = y + c * out.strides[1];
      forChannel<2>(slice, {out.strides, in.strides},
                    [&](const OperandOffsets<2> &o, int64_t count,
                        const OperandOffsets<2> &step) {
                      for (int64_t i = 0; i < count; ++i)
                        yc[o[0] + i * step[0]] = static_cast<float>(
                            (xc[o[1] + i * step[1]] - m) * scale + shift);
                    });
    }
  });
  writeBatchNormStatistics(a, mean.data(), var.data());
}

void cpu::nativeBatchNormBackwardReference(
    const args::native_batch_norm_backward &a) {
  const TensorView &in = a.input, &go = a.grad_out, &gi = a.grad_input;
  const int64_t channels = in.sizes[1];
  const ChannelSlice slice(in);
  const double n = double(in.numElements() / std::max<int64_t>(channels, 1));
  const float *x = in.as<float>(), *g = go.as<float>();
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      const double mean = at(a.save_mean, c), invstd = at(a.save_invstd, c);
      const float *xc = x + c * in.strides[1], *gc = g + c * go.strides[1];
      double sumGrad = 0, sumGradXhat = 0;
      forChannel<2>(slice, {in.strides, go.strides},
                    [&](const OperandOffsets<2> &o, int64_t count,
                        const OperandOffsets<2> &step) {
                      for (int64_t i = 0; i < count; ++i) {
                        double d = gc[o[1] + i * step[1]];
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
      if (!a.has_grad_input)
        continue;
      const double scale = at(a.weight, c) * invstd;
      const double meanGrad = sumGrad / n, meanGradXhat = sumGradXhat / n;
      float *out = gi.as<float>() + c * gi.strides[1];
      forChannel<3>(slice, {gi.strides, in.strides, go.strides},
                    [&](const OperandOffsets<3> &o, int64_t count,
                        const OperandOffsets<3> &step) {
                      for (int64_t i = 0; i < count; ++i) {
                        double xhat = (xc[o[1] + i * step[1]] - mean) * invstd;
                        out[o[0] + i * step[0]] = static_cast<float>(
                            scale * (gc[o[2] + i * step[2]] - meanGrad -
                                     xhat * meanGradXhat));
                      }
                    });
    }
  });
}
