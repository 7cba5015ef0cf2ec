//===- BatchNormTraining.cpp - Training batch norm's fast kernels ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The fast kernels of native_batch_norm (training mode) and
// native_batch_norm_backward (the reference kernels, and the phases the
// synchronised kernels share, are in BatchNormReference.cpp).
//
// The fast kernels take input, output and gradients dense in one layout:
//  * rows (channels-last, or rank 2): every reduction keeps C double
//    accumulators per thread, filled row by row in a loop over the channels
//    the compiler vectorises, and added up at the end; the forward reads
//    the input once for its statistics (two passes over each cache-sized
//    block of rows, the blocks merged by Chan et al.'s update), the
//    backward once for both of its sums;
//  * planes (NCHW): each (n, c) plane is a run of H * W floats, reduced in
//    double over eight independent lanes (vectorisable without
//    reassociation).
// Both reduce in double, so the statistics are as accurate as the
// reference's; the elementwise passes (normalise, grad_input) run in f32.
// The rows loops also take bf16 activations and gradients (a
// mixed-precision step; Element.h: read exactly, each output rounded once)
// with the parameters and statistics in f32; a bf16 call in NCHW goes to
// the widened reference. bf16 rows compute in f32 throughout: each
// cache-sized block's sums in f32 (at most 2^14 / C rows, so they err far
// below the bf16 rounding of the data), the blocks merged in double, and
// the elementwise passes with the per-channel factors folded (x * scale +
// shift). In double, the bf16 batch norms of a ResNet-50 step took 222 ms
// of its 521 (batch 8, AMX machine, 2 threads); in f32, 136 of 440.
// The rows and planes loops are compiled per vector width (Vectorize.h):
// on ResNet-50's batch-8 training step (AMD Zen 5, 2 threads) that took the
// forward from 106 to 54 ms and the backward from 118 to 58 ms per step in
// channels-last, 98 -> 63 and 224 -> 73 ms in NCHW, against the baseline
// (SSE2) build's two doubles per instruction. The file compiles without
// fused multiply-adds, so every version rounds alike.
//
// Every kernel here takes the training fusion (memfmt-fuse-training): the
// forward adds a residual and applies relu in its output pass, the
// backward applies relu's gradient to grad_out as it reads it, each with
// the rounding of the separate add, relu and threshold_backward kernels, so
// a fused step computes the bits of the unfused one without the passes over
// memory those kernels cost.
// They replace oneDNN 2.6's batch_normalization, which this file's first
// version used (see the commit history): for [8, 64, 112, 112] on 2 threads
// its generic NCHW kernel took 230-700 ms per forward call and its jitted
// NHWC one 46-87 ms forward and 27-60 ms backward, against 7-16 ms (NCHW)
// and 13-19 ms (NHWC) forward and 9-23 ms backward here, measured back to
// back on a loaded machine (BatchNormTrainingTest.DISABLED_TimeResNetStem).
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Element.h"
#include "RowSums.h"
#include "Scratch.h"
#include "StridedLoop.h"
#include "Vectorize.h"
#include "lib/ElementwiseMath.h"
#include "lib/TrainingMath.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;

// No fused multiply-adds: the loops compiled per vector width (Vectorize.h)
// must round as the baseline version, which has none, so that a step's
// values do not depend on the CPU.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

//===----------------------------------------------------------------------===//
// NCHW fast kernels
//===----------------------------------------------------------------------===//

namespace {

/// Calls `body(flag)` with `flag` a std::bool_constant of `value`, so that
/// the fused epilogues of the fast loops are compiled out when off.
template <typename Body> void withFlag(bool value, Body &&body) {
  if (value)
    body(std::true_type{});
  else
    body(std::false_type{});
}

/// The forward's output element from the normalised value `v` (already
/// f32) and the residual's element `r`: `v + r` with a residual, then relu
/// with `relu`, as the separate add and relu kernels round them.
template <bool Residual, bool Relu, typename T = float>
[[gnu::always_inline]] inline float epilogue(float v, const T *r, int64_t i) {
  if constexpr (Residual)
    v += load(r[i]);
  if constexpr (Relu)
    v = math::relu(v);
  return v;
}

/// grad_out's element i, through relu's gradient where the forward had relu.
template <bool Relu, typename T = float>
[[gnu::always_inline]] inline float gradAt(const T *g, const T *y, int64_t i) {
  if constexpr (Relu)
    return math::thresholdGrad(load(g[i]), load(y[i]), 0.0f);
  return load(g[i]);
}

/// Sums of g and of g * (x - mean) over `count` contiguous floats (g seen
/// through relu's gradient of the output y with `Relu`).
template <bool Relu>
[[gnu::always_inline]] inline void
gradientSums(const float *g, const float *y, const float *x, int64_t count,
             double mean, double &sumGrad, double &sumGradCentered) {
  double lane[8] = {}, centered[8] = {};
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int j = 0; j < 8; ++j) {
      const float d = gradAt<Relu>(g, y, i + j);
      lane[j] += d;
      centered[j] += d * (x[i + j] - mean);
    }
  for (; i < count; ++i) {
    const float d = gradAt<Relu>(g, y, i);
    sumGrad += d;
    sumGradCentered += d * (x[i] - mean);
  }
  for (int j = 0; j < 8; ++j) {
    sumGrad += lane[j];
    sumGradCentered += centered[j];
  }
}

// The loops over one channel's planes, compiled per vector width
// (Vectorize.h) as the rows loops below are.

/// Channel c's mean and biased variance over the batch's H x W planes,
/// two passes.
MEMFMT_VECTOR_CLONES
void channelMoments(const float *x, int64_t batch, int64_t channels,
                    int64_t plane, int64_t c, double &mean, double &var) {
  const double n = double(batch * plane);
  double sum = 0, squares = 0;
  for (int64_t b = 0; b < batch; ++b)
    sum += sumContiguous(x + (b * channels + c) * plane, plane);
  mean = sum / n;
  for (int64_t b = 0; b < batch; ++b)
    squares += squaredDeviations(x + (b * channels + c) * plane, plane, mean);
  var = squares / n;
}

/// Channel c's output planes: (x - mean) * scale + shift in double (as in
/// rowsForward), rounded, then the epilogue.
template <bool Residual, bool Relu>
[[gnu::always_inline]] inline void
normalizePlanesWith(const float *x, const float *r, float *y, int64_t batch,
                    int64_t channels, int64_t plane, int64_t c, double mean,
                    double scale, double shift) {
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t offset = (b * channels + c) * plane;
    const float *xp = x + offset, *rp = Residual ? r + offset : nullptr;
    float *yp = y + offset;
    for (int64_t i = 0; i < plane; ++i)
      yp[i] = epilogue<Residual, Relu>(
          static_cast<float>((double(xp[i]) - mean) * scale + shift), rp, i);
  }
}

MEMFMT_VECTOR_CLONES
void normalizePlanes(bool residual, bool relu, const float *x, const float *r,
                     float *y, int64_t batch, int64_t channels, int64_t plane,
                     int64_t c, double mean, double scale, double shift) {
  if (residual && relu)
    normalizePlanesWith<true, true>(x, r, y, batch, channels, plane, c, mean,
                                    scale, shift);
  else if (residual)
    normalizePlanesWith<true, false>(x, r, y, batch, channels, plane, c, mean,
                                     scale, shift);
  else if (relu)
    normalizePlanesWith<false, true>(x, r, y, batch, channels, plane, c, mean,
                                     scale, shift);
  else
    normalizePlanesWith<false, false>(x, r, y, batch, channels, plane, c, mean,
                                      scale, shift);
}

/// Channel c's gradient sums over the batch's planes (gradientSums).
MEMFMT_VECTOR_CLONES
void gradientSumPlanes(bool relu, const float *x, const float *g,
                       const float *y, int64_t batch, int64_t channels,
                       int64_t plane, int64_t c, double mean, double &sumGrad,
                       double &sumGradCentered) {
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t offset = (b * channels + c) * plane;
    if (relu)
      gradientSums<true>(g + offset, y + offset, x + offset, plane, mean,
                         sumGrad, sumGradCentered);
    else
      gradientSums<false>(g + offset, nullptr, x + offset, plane, mean, sumGrad,
                          sumGradCentered);
  }
}

/// Channel c's grad_input planes: scale * (g - meanGrad - (x - mean) * k).
template <bool Relu>
[[gnu::always_inline]] inline void
gradientPlanesWith(const float *x, const float *g, const float *y, float *out,
                   int64_t batch, int64_t channels, int64_t plane, int64_t c,
                   double mean, double k, float meanGrad, float scale) {
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t offset = (b * channels + c) * plane;
    const float *xp = x + offset, *gp = g + offset;
    const float *yp = Relu ? y + offset : nullptr;
    float *o = out + offset;
    for (int64_t i = 0; i < plane; ++i)
      o[i] = (gradAt<Relu>(gp, yp, i) - meanGrad -
              static_cast<float>((double(xp[i]) - mean) * k)) *
             scale;
  }
}

MEMFMT_VECTOR_CLONES
void gradientPlanes(bool relu, const float *x, const float *g, const float *y,
                    float *out, int64_t batch, int64_t channels, int64_t plane,
                    int64_t c, double mean, double k, float meanGrad,
                    float scale) {
  if (relu)
    gradientPlanesWith<true>(x, g, y, out, batch, channels, plane, c, mean, k,
                             meanGrad, scale);
  else
    gradientPlanesWith<false>(x, g, y, out, batch, channels, plane, c, mean, k,
                              meanGrad, scale);
}

/// The training batch norm of contiguous (NCHW) tensors.
template <bool Residual, bool Relu>
void planesForward(const args::native_batch_norm &a) {
  const TensorView &in = a.input, &out = a.output;
  const int64_t batch = in.sizes[0], channels = in.sizes[1];
  const int64_t plane = in.numElements() / (batch * channels);
  const double n = double(batch * plane);
  std::vector<double> &mean = scratchBuffer<double, 0>(channels);
  std::vector<double> &var = scratchBuffer<double, 1>(channels);
  const float *x = in.as<float>();
  const float *r = Residual ? a.residual.as<float>() : nullptr;
  float *y = out.as<float>();
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      channelMoments(x, batch, channels, plane, c, mean[c], var[c]);
      const double scale = channelValue(a.weight, c) / std::sqrt(var[c] + a.eps);
      normalizePlanes(Residual, Relu, x, r, y, batch, channels, plane, c,
                      mean[c], scale, channelValue(a.bias, c));
    }
  });
  cpu::writeBatchNormStatistics(a, mean.data(), var.data(), n);
}

/// The gradients of contiguous (NCHW) tensors.
template <bool Relu>
void planesBackward(const args::native_batch_norm_backward &a) {
  const TensorView &in = a.input, &go = a.grad_out, &gi = a.grad_input;
  const int64_t batch = in.sizes[0], channels = in.sizes[1];
  const int64_t plane = in.numElements() / (batch * channels);
  const double n = double(batch * plane);
  const float *x = in.as<float>(), *g = go.as<float>();
  const float *y = Relu ? a.output.as<float>() : nullptr;
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      const double mean = channelValue(a.save_mean, c), invstd = channelValue(a.save_invstd, c);
      double sumGrad = 0, sumGradCentered = 0;
      gradientSumPlanes(Relu, x, g, y, batch, channels, plane, c, mean, sumGrad,
                        sumGradCentered);
      if (a.has_grad_weight)
        a.grad_weight.as<float>()[c * a.grad_weight.strides[0]] =
            static_cast<float>(sumGradCentered * invstd);
      if (a.has_grad_bias)
        a.grad_bias.as<float>()[c * a.grad_bias.strides[0]] =
            static_cast<float>(sumGrad);
      if (!a.has_grad_input)
        continue;
      // grad_input = scale * (g - meanGrad - (x - mean) * k) with
      // k = invstd^2 * sum(g * (x - mean)) / n.
      const float scale = static_cast<float>(channelValue(a.weight, c) * invstd);
      const float meanGrad = static_cast<float>(sumGrad / n);
      const double k = invstd * invstd * sumGradCentered / n;
      gradientPlanes(Relu, x, g, y, gi.as<float>(), batch, channels, plane, c,
                     mean, k, meanGrad, scale);
    }
  });
}

/// Per-channel sums over rows [begin, end) of C channels, accumulated in
/// double into `acc` (C values): `term(x, c)` of each element.
template <typename T, typename Term>
[[gnu::always_inline]] inline void sumRows(const T *x, int64_t channels,
                                           int64_t begin, int64_t end,
                                           double *acc, Term term) {
  for (int64_t r = begin; r < end; ++r) {
    const T *row = x + r * channels;
    for (int64_t c = 0; c < channels; ++c)
      acc[c] += term(load(row[c]), c);
  }
}

// The loops over the channels of each row, compiled per vector width
// (Vectorize.h) as functions over a chunk of rows; the flags pick a loop
// inside each version. As baseline SSE2 loops they worked on two doubles
// at a time. Each is written once over the activations' storage type T
// (Element.h: f32, or bf16 in a mixed-precision step, computed in f32 and
// double as the f32 loops and rounded to bf16 once) and compiled for both.

/// rowsMoments' block [first, last): its mean into bm and its squared
/// deviations from that mean into bm2 (C values each).
template <typename T>
[[gnu::always_inline]] inline void
blockMomentsWith(const T *x, int64_t channels, int64_t first, int64_t last,
                 double *bm, double *bm2) {
  std::fill(bm, bm + 2 * channels, 0.0);
  sumRows(x, channels, first, last, bm,
          [](float v, int64_t) { return double(v); });
  const double nb = double(last - first);
  for (int64_t c = 0; c < channels; ++c)
    bm[c] /= nb;
  sumRows(x, channels, first, last, bm2, [bm](float v, int64_t c) {
    double d = v - bm[c];
    return d * d;
  });
}

MEMFMT_VECTOR_CLONES
void blockMoments(const float *x, int64_t channels, int64_t first, int64_t last,
                  double *bm, double *bm2, float *) {
  blockMomentsWith(x, channels, first, last, bm, bm2);
}

/// blockMomentsWith for bf16 activations, summed in f32 (in `work`, 2C
/// floats): a block has at most 2^14 / C rows, so a channel's sums err by
/// at most about 2^14 / C * 2^-24 of the block's magnitude, far below the
/// bf16 rounding of the activations they describe; the blocks are merged in
/// double as for f32. At f32's vector width this halved the statistics'
/// time in a ResNet-50 bf16 training step.
MEMFMT_VECTOR_CLONES
void blockMoments(const Bf16 *x, int64_t channels, int64_t first, int64_t last,
                  double *bm, double *bm2, float *work) {
  float *sum = work, *squares = work + channels;
  std::fill(work, work + 2 * channels, 0.0f);
  for (int64_t r = first; r < last; ++r) {
    const Bf16 *row = x + r * channels;
    for (int64_t c = 0; c < channels; ++c)
      sum[c] += load(row[c]);
  }
  const float nb = static_cast<float>(last - first);
  for (int64_t c = 0; c < channels; ++c)
    sum[c] /= nb;
  for (int64_t r = first; r < last; ++r) {
    const Bf16 *row = x + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      const float d = load(row[c]) - sum[c];
      squares[c] += d * d;
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    bm[c] = sum[c];
    bm2[c] = squares[c];
  }
}

/// rowsForward's output rows [begin, end): (x - mean) * scale + shift in
/// double, rounded, then the epilogue.
template <bool Residual, bool Relu, typename T>
[[gnu::always_inline]] inline void
normalizeRowsWith(const T *x, const T *res, T *y, const double *mc,
                  const double *s, const double *b, int64_t channels,
                  int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const T *xr = x + r * channels;
    const T *rr = Residual ? res + r * channels : nullptr;
    T *yr = y + r * channels;
    for (int64_t c = 0; c < channels; ++c)
      yr[c] = store<T>(epilogue<Residual, Relu>(
          static_cast<float>((double(load(xr[c])) - mc[c]) * s[c] + b[c]), rr,
          c));
  }
}

/// normalizeRowsWith for bf16 activations in f32 arithmetic: x * scale +
/// shift with shift = bias - mean * scale folded in double. Against the
/// double loop it errs by about 2^-24 of |mean| * scale, far below the
/// bf16 rounding of the output; it runs at f32's vector width.
template <bool Residual, bool Relu>
[[gnu::always_inline]] inline void
normalizeBf16RowsWith(const Bf16 *x, const Bf16 *res, Bf16 *y, const float *s,
                      const float *b, int64_t channels, int64_t begin,
                      int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const Bf16 *xr = x + r * channels;
    const Bf16 *rr = Residual ? res + r * channels : nullptr;
    Bf16 *yr = y + r * channels;
    for (int64_t c = 0; c < channels; ++c)
      yr[c] = store<Bf16>(
          epilogue<Residual, Relu>(load(xr[c]) * s[c] + b[c], rr, c));
  }
}

MEMFMT_VECTOR_CLONES
void normalizeBf16Rows(bool residual, bool relu, const Bf16 *x,
                       const Bf16 *res, Bf16 *y, const float *s,
                       const float *b, int64_t channels, int64_t begin,
                       int64_t end) {
  if (residual && relu)
    normalizeBf16RowsWith<true, true>(x, res, y, s, b, channels, begin, end);
  else if (residual)
    normalizeBf16RowsWith<true, false>(x, res, y, s, b, channels, begin, end);
  else if (relu)
    normalizeBf16RowsWith<false, true>(x, res, y, s, b, channels, begin, end);
  else
    normalizeBf16RowsWith<false, false>(x, res, y, s, b, channels, begin, end);
}

template <typename T>
[[gnu::always_inline]] inline void
normalizeRowsOf(bool residual, bool relu, const T *x, const T *res, T *y,
                const double *mc, const double *s, const double *b,
                int64_t channels, int64_t begin, int64_t end) {
  if (residual && relu)
    normalizeRowsWith<true, true>(x, res, y, mc, s, b, channels, begin, end);
  else if (residual)
    normalizeRowsWith<true, false>(x, res, y, mc, s, b, channels, begin, end);
  else if (relu)
    normalizeRowsWith<false, true>(x, res, y, mc, s, b, channels, begin, end);
  else
    normalizeRowsWith<false, false>(x, res, y, mc, s, b, channels, begin, end);
}

MEMFMT_VECTOR_CLONES
void normalizeRows(bool residual, bool relu, const float *x, const float *res,
                   float *y, const double *mc, const double *s, const double *b,
                   int64_t channels, int64_t begin, int64_t end) {
  normalizeRowsOf(residual, relu, x, res, y, mc, s, b, channels, begin, end);
}

/// rowsBackward's sums over rows [begin, end), in A (double; float for
/// the blocks of bf16 rows): sum(g) into acc[0, C) and sum(g * (x - mean))
/// into acc[C, 2C) (g through relu's gradient of y with `Relu`).
template <bool Relu, typename T, typename A>
[[gnu::always_inline]] inline void
gradientSumRowsWith(const T *x, const T *g, const T *y, const A *m,
                    int64_t channels, int64_t begin, int64_t end, A *acc) {
  A *centered = acc + channels;
  for (int64_t r = begin; r < end; ++r) {
    const T *xr = x + r * channels, *gr = g + r * channels;
    const T *yr = Relu ? y + r * channels : nullptr;
    for (int64_t c = 0; c < channels; ++c) {
      const A d = gradAt<Relu>(gr, yr, c);
      acc[c] += d;
      centered[c] += d * (A(load(xr[c])) - m[c]);
    }
  }
}

template <typename T>
[[gnu::always_inline]] inline void
gradientSumRowsOf(bool relu, const T *x, const T *g, const T *y,
                  const double *m, int64_t channels, int64_t begin,
                  int64_t end, double *acc) {
  if (relu)
    gradientSumRowsWith<true>(x, g, y, m, channels, begin, end, acc);
  else
    gradientSumRowsWith<false>(x, g, y, m, channels, begin, end, acc);
}

MEMFMT_VECTOR_CLONES
void gradientSumRows(bool relu, const float *x, const float *g, const float *y,
                     const double *m, int64_t channels, int64_t begin,
                     int64_t end, double *acc) {
  gradientSumRowsOf(relu, x, g, y, m, channels, begin, end, acc);
}

/// gradientSumRowsWith for bf16 activations in f32 arithmetic: blocks of
/// at most 2^14 / C rows summed in f32 (in `work`, 2C floats; `mf` is the
/// mean in f32) and added to the double accumulators, as blockMoments.
template <bool Relu>
[[gnu::always_inline]] inline void
gradientSumBf16RowsWith(const Bf16 *x, const Bf16 *g, const Bf16 *y,
                        const float *mf, int64_t channels, int64_t begin,
                        int64_t end, double *acc, float *work) {
  const int64_t blockRows = std::max<int64_t>(1, (1 << 14) / channels);
  for (int64_t first = begin; first < end; first += blockRows) {
    const int64_t last = std::min(end, first + blockRows);
    std::fill(work, work + 2 * channels, 0.0f);
    gradientSumRowsWith<Relu>(x, g, y, mf, channels, first, last, work);
    for (int64_t c = 0; c < 2 * channels; ++c)
      acc[c] += work[c];
  }
}

MEMFMT_VECTOR_CLONES
void gradientSumRows(bool relu, const Bf16 *x, const Bf16 *g, const Bf16 *y,
                     const float *mf, int64_t channels, int64_t begin,
                     int64_t end, double *acc, float *work) {
  if (relu)
    gradientSumBf16RowsWith<true>(x, g, y, mf, channels, begin, end, acc, work);
  else
    gradientSumBf16RowsWith<false>(x, g, y, mf, channels, begin, end, acc,
                                   work);
}

/// rowsBackward's grad_input rows [begin, end):
/// (g - meanGrad - (x - mean) * k) * scale.
template <bool Relu, typename T>
[[gnu::always_inline]] inline void
gradientRowsWith(const T *x, const T *g, const T *y, const double *m,
                 const double *kc, const float *mg, const float *s, T *out,
                 int64_t channels, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const T *xr = x + r * channels, *gr = g + r * channels;
    const T *yr = Relu ? y + r * channels : nullptr;
    T *o = out + r * channels;
    for (int64_t c = 0; c < channels; ++c)
      o[c] = store<T>((gradAt<Relu>(gr, yr, c) - mg[c] -
                       static_cast<float>((double(load(xr[c])) - m[c]) *
                                          kc[c])) *
                      s[c]);
  }
}

template <typename T>
[[gnu::always_inline]] inline void
gradientRowsOf(bool relu, const T *x, const T *g, const T *y, const double *m,
               const double *kc, const float *mg, const float *s, T *out,
               int64_t channels, int64_t begin, int64_t end) {
  if (relu)
    gradientRowsWith<true>(x, g, y, m, kc, mg, s, out, channels, begin, end);
  else
    gradientRowsWith<false>(x, g, y, m, kc, mg, s, out, channels, begin, end);
}

MEMFMT_VECTOR_CLONES
void gradientRows(bool relu, const float *x, const float *g, const float *y,
                  const double *m, const double *kc, const float *mg,
                  const float *s, float *out, int64_t channels, int64_t begin,
                  int64_t end) {
  gradientRowsOf(relu, x, g, y, m, kc, mg, s, out, channels, begin, end);
}

/// gradientRowsWith for bf16 activations in f32 arithmetic:
/// (g - x * k - c0) * scale with c0 = meanGrad - mean * k folded in double
/// (as normalizeBf16RowsWith).
template <bool Relu>
[[gnu::always_inline]] inline void
gradientBf16RowsWith(const Bf16 *x, const Bf16 *g, const Bf16 *y,
                     const float *k, const float *c0, const float *s,
                     Bf16 *out, int64_t channels, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const Bf16 *xr = x + r * channels, *gr = g + r * channels;
    const Bf16 *yr = Relu ? y + r * channels : nullptr;
    Bf16 *o = out + r * channels;
    for (int64_t c = 0; c < channels; ++c)
      o[c] = store<Bf16>(
          (gradAt<Relu>(gr, yr, c) - load(xr[c]) * k[c] - c0[c]) * s[c]);
  }
}

MEMFMT_VECTOR_CLONES
void gradientRows(bool relu, const Bf16 *x, const Bf16 *g, const Bf16 *y,
                  const float *k, const float *c0, const float *s, Bf16 *out,
                  int64_t channels, int64_t begin, int64_t end) {
  if (relu)
    gradientBf16RowsWith<true>(x, g, y, k, c0, s, out, channels, begin, end);
  else
    gradientBf16RowsWith<false>(x, g, y, k, c0, s, out, channels, begin, end);
}

/// Runs `body(begin, end, acc)` over the rows on every thread, each with
/// its own C zeroed double accumulators, and adds them up into `total`.
template <typename Body>
void reduceRows(int64_t rows, int64_t channels, std::vector<double> &total,
                Body body) {
  const int64_t threads = maxThreads();
  std::vector<double> &partial =
      scratchBuffer<double, 2>(static_cast<size_t>(threads * channels));
  std::fill(partial.begin(), partial.end(), 0.0);
  parallelFor(rows, std::max<int64_t>(1, (1 << 14) / channels),
              [&](int64_t begin, int64_t end, int thread) {
                body(begin, end, partial.data() + thread * channels);
              });
  std::fill(total.begin(), total.end(), 0.0);
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t c = 0; c < channels; ++c)
      total[c] += partial[t * channels + c];
}

/// The per-channel mean and biased variance of `rows` rows of C channels
/// read once: each thread takes blocks of rows small enough to stay in
/// cache (64 KiB), sums a block for its mean and then its squared
/// deviations from that mean (two passes over cached data, as accurate as
/// the reference's two passes over all of it), and merges the blocks, then
/// the threads, with Chan et al.'s pairwise update (count n, mean m, sum of
/// squared deviations M2): for parts a and b, delta = m_b - m_a,
/// m = m_a + delta * n_b / n, M2 = M2_a + M2_b + delta^2 * n_a * n_b / n.
template <typename T>
void rowsMoments(const T *x, int64_t rows, int64_t channels,
                 std::vector<double> &mean, std::vector<double> &var) {
  const int64_t threads = maxThreads();
  const size_t perThread = static_cast<size_t>(threads * channels);
  std::vector<double> &means = scratchBuffer<double, 5>(perThread);
  std::vector<double> &squares = scratchBuffer<double, 6>(perThread);
  std::vector<double> &block = scratchBuffer<double, 7>(2 * perThread);
  std::vector<float> &work = scratchBuffer<float, 5>(2 * perThread);
  std::vector<int64_t> &counts =
      scratchBuffer<int64_t, 0>(static_cast<size_t>(threads));
  std::fill(counts.begin(), counts.end(), 0);
  const int64_t blockRows = std::max<int64_t>(1, (1 << 14) / channels);
  parallelFor(rows, blockRows, [&](int64_t begin, int64_t end, int thread) {
    double *m = means.data() + thread * channels;
    double *m2 = squares.data() + thread * channels;
    double *bm = block.data() + 2 * thread * channels, *bm2 = bm + channels;
    int64_t count = 0;
    for (int64_t first = begin; first < end; first += blockRows) {
      const int64_t last = std::min(end, first + blockRows);
      const double nb = double(last - first);
      blockMoments(x, channels, first, last, bm, bm2,
                   work.data() + 2 * thread * channels);
      if (count == 0) {
        std::copy(bm, bm + channels, m);
        std::copy(bm2, bm2 + channels, m2);
      } else {
        const double na = double(count), n = na + nb;
        for (int64_t c = 0; c < channels; ++c) {
          const double delta = bm[c] - m[c];
          m[c] += delta * nb / n;
          m2[c] += bm2[c] + delta * delta * na * nb / n;
        }
      }
      count += last - first;
    }
    counts[static_cast<size_t>(thread)] = count;
  });
  std::fill(mean.begin(), mean.end(), 0.0);
  std::fill(var.begin(), var.end(), 0.0);
  int64_t count = 0;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t nt = counts[static_cast<size_t>(t)];
    if (nt == 0)
      continue;
    const double na = double(count), nb = double(nt), n = na + nb;
    for (int64_t c = 0; c < channels; ++c) {
      const double tm = means[t * channels + c];
      const double delta = tm - mean[c];
      mean[c] = count == 0 ? tm : mean[c] + delta * nb / n;
      var[c] += squares[t * channels + c] + delta * delta * na * nb / n;
    }
    count += nt;
  }
  for (double &v : var)
    v /= double(rows);
}

/// The training batch norm of tensors whose rows of C channels are
/// contiguous (channels-last): the statistics in one read of the input
/// (rowsMoments), then the output.
template <typename T, bool Residual, bool Relu>
void rowsForward(const args::native_batch_norm &a) {
  const TensorView &in = a.input;
  const int64_t channels = in.sizes[1], rows = in.numElements() / channels;
  std::vector<double> &mean = scratchBuffer<double, 0>(channels);
  std::vector<double> &var = scratchBuffer<double, 1>(channels);
  std::vector<double> &shift = scratchBuffer<double, 3>(channels);
  std::vector<double> &scale = scratchBuffer<double, 4>(channels);
  const T *x = in.as<T>();
  rowsMoments(x, rows, channels, mean, var);
  for (int64_t c = 0; c < channels; ++c) {
    scale[c] = channelValue(a.weight, c) / std::sqrt(var[c] + a.eps);
    shift[c] = channelValue(a.bias, c);
  }
  // Centred in double: x - mean cancels where a channel barely varies, and
  // invstd then magnifies the rounding of an f32 difference.
  const double *s = scale.data(), *b = shift.data(), *mc = mean.data();
  T *y = a.output.as<T>();
  const T *res = Residual ? a.residual.as<T>() : nullptr;
  if constexpr (std::is_same_v<T, Bf16>) {
    std::vector<float> &scaleF = scratchBuffer<float, 3>(channels);
    std::vector<float> &shiftF = scratchBuffer<float, 4>(channels);
    for (int64_t c = 0; c < channels; ++c) {
      scaleF[c] = static_cast<float>(s[c]);
      shiftF[c] = static_cast<float>(b[c] - mc[c] * s[c]);
    }
    parallelFor(rows, std::max<int64_t>(1, (1 << 14) / channels),
                [&](int64_t begin, int64_t end, int) {
                  normalizeBf16Rows(Residual, Relu, x, res, y, scaleF.data(),
                                    shiftF.data(), channels, begin, end);
                });
  } else {
    parallelFor(rows, std::max<int64_t>(1, (1 << 14) / channels),
                [&](int64_t begin, int64_t end, int) {
                  normalizeRows(Residual, Relu, x, res, y, mc, s, b, channels,
                                begin, end);
                });
  }
  cpu::writeBatchNormStatistics(a, mean.data(), var.data(), double(rows));
}

/// The gradients of channels-last tensors.
template <typename T, bool Relu>
void rowsBackward(const args::native_batch_norm_backward &a) {
  const TensorView &in = a.input;
  const int64_t channels = in.sizes[1], rows = in.numElements() / channels;
  const double n = double(rows);
  std::vector<double> &mean = scratchBuffer<double, 3>(channels);
  std::vector<double> &sumGrad = scratchBuffer<double, 0>(channels);
  std::vector<double> &sumGradCentered = scratchBuffer<double, 1>(channels);
  for (int64_t c = 0; c < channels; ++c)
    mean[c] = channelValue(a.save_mean, c);
  const T *x = in.as<T>(), *g = a.grad_out.as<T>();
  const T *y = Relu ? a.output.as<T>() : nullptr;
  const double *m = mean.data();
  // Both sums in one pass over grad_out and the input: 2C accumulators
  // per thread, sum(g) in the first C and sum(g * (x - mean)) in the rest.
  std::vector<double> &sums = scratchBuffer<double, 5>(2 * channels);
  if constexpr (std::is_same_v<T, Bf16>) {
    std::vector<float> &meanF = scratchBuffer<float, 3>(channels);
    std::vector<float> &work =
        scratchBuffer<float, 4>(static_cast<size_t>(maxThreads() * 2 * channels));
    for (int64_t c = 0; c < channels; ++c)
      meanF[c] = static_cast<float>(m[c]);
    reduceRows(rows, 2 * channels, sums,
               [&](int64_t begin, int64_t end, double *acc) {
                 gradientSumRows(Relu, x, g, y, meanF.data(), channels, begin,
                                 end, acc,
                                 work.data() + 2 * channels * threadIndex());
               });
  } else {
    reduceRows(rows, 2 * channels, sums,
               [&](int64_t begin, int64_t end, double *acc) {
                 gradientSumRows(Relu, x, g, y, m, channels, begin, end, acc);
               });
  }
  std::copy(sums.begin(), sums.begin() + channels, sumGrad.begin());
  std::copy(sums.begin() + channels, sums.end(), sumGradCentered.begin());
  std::vector<float> &scale = scratchBuffer<float, 1>(channels);
  std::vector<float> &meanGrad = scratchBuffer<float, 2>(channels);
  std::vector<double> &k = scratchBuffer<double, 4>(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double invstd = channelValue(a.save_invstd, c);
    if (a.has_grad_weight)
      a.grad_weight.as<float>()[c * a.grad_weight.strides[0]] =
          static_cast<float>(sumGradCentered[c] * invstd);
    if (a.has_grad_bias)
      a.grad_bias.as<float>()[c * a.grad_bias.strides[0]] =
          static_cast<float>(sumGrad[c]);
    scale[c] = static_cast<float>(channelValue(a.weight, c) * invstd);
    meanGrad[c] = static_cast<float>(sumGrad[c] / n);
    k[c] = invstd * invstd * sumGradCentered[c] / n;
  }
  if (!a.has_grad_input)
    return;
  const float *s = scale.data(), *mg = meanGrad.data();
  const double *kc = k.data();
  T *out = a.grad_input.as<T>();
  if constexpr (std::is_same_v<T, Bf16>) {
    std::vector<float> &kF = scratchBuffer<float, 3>(channels);
    std::vector<float> &c0 = scratchBuffer<float, 5>(channels);
    for (int64_t c = 0; c < channels; ++c) {
      kF[c] = static_cast<float>(kc[c]);
      c0[c] = static_cast<float>(double(mg[c]) - m[c] * kc[c]);
    }
    parallelFor(rows, std::max<int64_t>(1, (1 << 14) / channels),
                [&](int64_t begin, int64_t end, int) {
                  gradientRows(Relu, x, g, y, kF.data(), c0.data(), s, out,
                               channels, begin, end);
                });
  } else {
    parallelFor(rows, std::max<int64_t>(1, (1 << 14) / channels),
                [&](int64_t begin, int64_t end, int) {
                  gradientRows(Relu, x, g, y, m, kc, mg, s, out, channels,
                               begin, end);
                });
  }
}

/// The dense layouts of the fast kernels: rows of C channels
/// (channels-last, or rank 2), NCHW planes, or neither.
enum class Dense { Rows, Planes, None };

Dense denseLayoutOf(const TensorView &t) {
  if (t.numElements() == 0)
    return Dense::None;
  if (t.isChannelsLastContiguous() || (t.rank == 2 && t.isContiguous()))
    return Dense::Rows;
  return t.isContiguous() ? Dense::Planes : Dense::None;
}

/// Runs `rows` or `planes` by the dense layout of `a.input` (which every
/// data tensor shares when `sameLayouts`): the name of what ran, or null
/// (also for planes when `planes` is null: bf16 has rows loops only).
template <typename Args>
const char *runDense(const Args &a, bool sameLayouts,
                     void (*rows)(const Args &), void (*planes)(const Args &)) {
  if (!sameLayouts)
    return nullptr;
  switch (denseLayoutOf(a.input)) {
  case Dense::Rows:
    rows(a);
    return "channels_last";
  case Dense::Planes:
    if (!planes)
      return nullptr;
    planes(a);
    return "contiguous";
  case Dense::None:
    break;
  }
  return nullptr;
}

} // namespace

const char *cpu::nativeBatchNormFast(const args::native_batch_norm &a,
                                     DType dtype) {
  bool sameLayouts = a.output.sameLayoutAs(a.input) &&
                     (!a.has_residual || a.residual.sameLayoutAs(a.input));
  return visitFloatElement(dtype, [&](auto element) {
    using T = decltype(element);
    const char *impl = nullptr;
    withFlag(a.has_residual, [&](auto residual) {
      withFlag(a.relu, [&](auto relu) {
        using R = decltype(residual);
        using F = decltype(relu);
        void (*planes)(const args::native_batch_norm &) = nullptr;
        if constexpr (std::is_same_v<T, float>)
          planes = planesForward<R::value, F::value>;
        impl = runDense(a, sameLayouts, rowsForward<T, R::value, F::value>,
                        planes);
      });
    });
    return impl;
  });
}

const char *
cpu::nativeBatchNormBackwardFast(const args::native_batch_norm_backward &a,
                                 DType dtype) {
  bool sameLayouts =
      a.grad_out.sameLayoutAs(a.input) &&
      (!a.has_grad_input || a.grad_input.sameLayoutAs(a.input)) &&
      (!a.relu || a.output.sameLayoutAs(a.input));
  return visitFloatElement(dtype, [&](auto element) {
    using T = decltype(element);
    const char *impl = nullptr;
    withFlag(a.relu, [&](auto relu) {
      using F = decltype(relu);
      void (*planes)(const args::native_batch_norm_backward &) = nullptr;
      if constexpr (std::is_same_v<T, float>)
        planes = planesBackward<F::value>;
      impl = runDense(a, sameLayouts, rowsBackward<T, F::value>, planes);
    });
    return impl;
  });
}
