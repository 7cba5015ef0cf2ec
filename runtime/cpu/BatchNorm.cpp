//===- BatchNorm.cpp - Inference batch norm -------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// out = (x - mean) * weight / sqrt(var + eps) + bias over dim 1, for inputs
// of rank >= 2. The per-channel scale
// weight / sqrt(var + eps) is computed once per call in double. The
// reference walks each channel's sub-tensor with forEachStrided in double;
// the fast path needs input and output in the same dense layout and runs
// either rows of C channels (channels-last, or any layout whose innermost
// dim is C) with a vectorisable loop over per-channel arrays, or NCHW planes
// with per-plane scalars. Subtracting the mean before scaling (rather than
// folding it into a shift) keeps the result accurate when x is close to the
// mean.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Scratch.h"
#include "StridedLoop.h"
#include "Vectorize.h"

#include <cmath>
#include <vector>

using namespace memfmt::runtime;

namespace {

constexpr int64_t kMinPerThread = 1 << 15;

/// Per-channel parameters: mean, scale = weight / sqrt(var + eps), bias.
/// In this thread's scratch buffers (Scratch.h).
struct ChannelParams {
  std::vector<double> &mean, &scale, &bias;

  explicit ChannelParams(const args::batch_norm &a)
      : mean(cpu::scratchBuffer<double, 0>(a.input.sizes[1])),
        scale(cpu::scratchBuffer<double, 1>(a.input.sizes[1])),
        bias(cpu::scratchBuffer<double, 2>(a.input.sizes[1])) {
    int64_t channels = a.input.sizes[1];
    auto at = [](const TensorView &t, int64_t c) {
      return static_cast<double>(t.as<float>()[c * t.strides[0]]);
    };
    for (int64_t c = 0; c < channels; ++c) {
      mean[c] = at(a.running_mean, c);
      scale[c] = at(a.weight, c) / std::sqrt(at(a.running_var, c) + a.eps);
      bias[c] = at(a.bias, c);
    }
  }
};

} // namespace

void cpu::batchNormReference(const args::batch_norm &a) {
  ChannelParams params(a);
  const TensorView &in = a.input, &out = a.output;
  // Each channel's sub-tensor: dim 1 shrunk to size 1.
  int64_t sizes[kMaxRank];
  std::copy(out.sizes, out.sizes + out.rank, sizes);
  sizes[1] = 1;
  for (int64_t c = 0; c < in.sizes[1]; ++c) {
    const float *x = in.as<float>() + c * in.strides[1];
    float *y = out.as<float>() + c * out.strides[1];
    double mean = params.mean[c], scale = params.scale[c],
           bias = params.bias[c];
    forEachStrided<2>(out.rank, sizes, {out.strides, in.strides}, kMinPerThread,
                      [&](const OperandOffsets<2> &at, int64_t count,
                          const OperandOffsets<2> &step) {
                        for (int64_t i = 0; i < count; ++i) {
                          double v =
                              (x[at[1] + i * step[1]] - mean) * scale + bias;
                          y[at[0] + i * step[0]] = static_cast<float>(v);
                        }
                      });
  }
}

const char *cpu::batchNormFast(const args::batch_norm &a) {
  const TensorView &in = a.input, &out = a.output;
  if (!in.isDense() || !out.sameLayoutAs(in) || in.numElements() == 0)
    return nullptr;
  const int64_t channels = in.sizes[1];
  const int64_t planes = in.sizes[0] * channels;
  const int64_t planeSize = in.numElements() / planes;
  // Channel-innermost layouts: channels-last, or NCHW with 1-element planes.
  bool rows =
      in.isChannelsLastContiguous() || (planeSize == 1 && in.isContiguous());
  if (!rows && !in.isContiguous())
    return nullptr;

  ChannelParams params(a);
  auto narrow = [](const std::vector<double> &wide, std::vector<float> &to) {
    std::copy(wide.begin(), wide.end(), to.begin());
  };
  std::vector<float> &mean = scratchBuffer<float, 0>(params.mean.size());
  std::vector<float> &scale = scratchBuffer<float, 1>(params.scale.size());
  std::vector<float> &bias = scratchBuffer<float, 2>(params.bias.size());
  narrow(params.mean, mean);
  narrow(params.scale, scale);
  narrow(params.bias, bias);
  const float *m = mean.data(), *s = scale.data(), *b = bias.data();
  const float *x = in.as<float>();
  float *y = out.as<float>();

  if (rows) {
    int64_t rowCount = in.numElements() / channels;
    parallelFor(rowCount, std::max<int64_t>(1, kMinPerThread / channels),
                [&](int64_t begin, int64_t end, int) {
                  for (int64_t r = begin; r < end; ++r) {
                    const float *xr = x + r * channels;
                    float *yr = y + r * channels;
                    MEMFMT_INDEPENDENT_ITERATIONS
                    for (int64_t c = 0; c < channels; ++c)
                      yr[c] = (xr[c] - m[c]) * s[c] + b[c];
                  }
                });
    return "channels_last";
  }
  parallelFor(planes, std::max<int64_t>(1, kMinPerThread / planeSize),
              [&](int64_t begin, int64_t end, int) {
                for (int64_t p = begin; p < end; ++p) {
                  int64_t c = p % channels;
                  float mc = m[c], sc = s[c], bc = b[c];
                  const float *xp = x + p * planeSize;
                  float *yp = y + p * planeSize;
                  MEMFMT_INDEPENDENT_ITERATIONS
                  for (int64_t i = 0; i < planeSize; ++i)
                    yp[i] = (xp[i] - mc) * sc + bc;
                }
              });
  return "contiguous";
}

void cpu::foldBatchNormReference(const args::fold_batch_norm &a) {
  auto at = [](const TensorView &t, int64_t c) {
    return static_cast<double>(t.as<float>()[c * t.strides[0]]);
  };
  const TensorView &w = a.weight, &out = a.out_weight;
  for (int64_t o = 0; o < w.sizes[0]; ++o) {
    double scale = at(a.gamma, o) / std::sqrt(at(a.running_var, o) + a.eps);
    double bias = a.has_bias ? at(a.bias, o) : 0.0;
    a.out_bias.as<float>()[o * a.out_bias.strides[0]] = static_cast<float>(
        (bias - at(a.running_mean, o)) * scale + at(a.beta, o));
    for (int64_t i = 0; i < w.sizes[1]; ++i)
      for (int64_t kh = 0; kh < w.sizes[2]; ++kh)
        for (int64_t kw = 0; kw < w.sizes[3]; ++kw) {
          int64_t src = o * w.strides[0] + i * w.strides[1] +
                        kh * w.strides[2] + kw * w.strides[3];
          int64_t dst = o * out.strides[0] + i * out.strides[1] +
                        kh * out.strides[2] + kw * out.strides[3];
          out.as<float>()[dst] = static_cast<float>(w.as<float>()[src] * scale);
        }
  }
}
