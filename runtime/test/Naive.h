//===- Naive.h - Naive kernels the runtime is tested against ----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Independent, deliberately simple implementations of every kernel of
// Kernels.def: nested loops over logical NCHW indices (TestTensor::at), in
// double, written from PyTorch's documented semantics and sharing no code
// with the runtime. Each returns the expected output in row-major logical
// order with, per element, the sum of the magnitudes of the terms that made
// it (for tolerances that scale with the reduction, see expectClose).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_TEST_NAIVE_H
#define MEMFMT_RUNTIME_TEST_NAIVE_H

#include "TestTensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace memfmt::test {

struct Expected {
  std::vector<double> value;
  /// Sum of |term| over the terms of each element.
  std::vector<double> magnitude;
  std::vector<int64_t> index; // max_pool2d_with_indices only.
};

struct ConvAttrs {
  int64_t strideH = 1, strideW = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int64_t dilationH = 1, dilationW = 1, groups = 1;
  bool bias = false, residual = false, relu = false;
};

inline int64_t convOutSize(int64_t in, int64_t kernel, int64_t stride,
                           int64_t padA, int64_t padB, int64_t dilation) {
  return (in + padA + padB - dilation * (kernel - 1) - 1) / stride + 1;
}

/// Calls fn(ic, iy, ix, icg, r, s) for every tap of output position (y, x)
/// of output channel `oc` that lands inside the input: input channel ic
/// (icg within its group), input row iy and column ix, kernel row r and
/// column s. out[n, oc, y, x] is the sum over these taps of in[n, ic, iy,
/// ix] * w[oc, icg, r, s].
template <typename Fn>
inline void forEachConvTap(const Tensor &in, const Tensor &w,
                           const ConvAttrs &c, int64_t oc, int64_t y,
                           int64_t x, Fn fn) {
  const int64_t h = in.sizes[2], wd = in.sizes[3];
  const int64_t cg = w.sizes[1], kh = w.sizes[2], kw = w.sizes[3];
  const int64_t og = w.sizes[0] / c.groups;
  for (int64_t icg = 0; icg < cg; ++icg)
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t s = 0; s < kw; ++s) {
        int64_t iy = y * c.strideH - c.padTop + r * c.dilationH;
        int64_t ix = x * c.strideW - c.padLeft + s * c.dilationW;
        if (iy < 0 || iy >= h || ix < 0 || ix >= wd)
          continue;
        fn((oc / og) * cg + icg, iy, ix, icg, r, s);
      }
}

inline Expected naiveConv(const Tensor &in, const Tensor &w, const Tensor *b,
                          const Tensor *res, const ConvAttrs &c) {
  int64_t n = in.sizes[0], h = in.sizes[2], wd = in.sizes[3];
  int64_t o = w.sizes[0], kh = w.sizes[2], kw = w.sizes[3];
  int64_t oh =
      convOutSize(h, kh, c.strideH, c.padTop, c.padBottom, c.dilationH);
  int64_t ow =
      convOutSize(wd, kw, c.strideW, c.padLeft, c.padRight, c.dilationW);
  Expected e;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double sum = 0, mag = 0;
          forEachConvTap(in, w, c, oc, y, x,
                         [&](int64_t ic, int64_t iy, int64_t ix, int64_t icg,
                             int64_t r, int64_t s) {
                           double t = double(in.at({i, ic, iy, ix})) *
                                      double(w.at({oc, icg, r, s}));
                           sum += t;
                           mag += std::fabs(t);
                         });
          if (b) {
            sum += b->at({oc});
            mag += std::fabs(b->at({oc}));
          }
          if (res) {
            sum += res->at({i, oc, y, x});
            mag += std::fabs(res->at({i, oc, y, x}));
          }
          if (c.relu)
            sum = std::max(sum, 0.0);
          e.value.push_back(sum);
          e.magnitude.push_back(mag);
        }
  return e;
}

inline Expected naiveBatchNorm(const Tensor &in, const Tensor &w,
                               const Tensor &b, const Tensor &mean,
                               const Tensor &var, double eps) {
  Expected e;
  for (int64_t i = 0; i < in.numElements(); ++i) {
    std::vector<int64_t> idx = in.indexOf(i);
    int64_t c = idx[1];
    double norm = (double(in.at(idx)) - mean.at({c})) /
                  std::sqrt(double(var.at({c})) + eps);
    e.value.push_back(norm * w.at({c}) + b.at({c}));
    e.magnitude.push_back(std::fabs(norm * w.at({c})) + std::fabs(b.at({c})));
  }
  return e;
}

/// Layer norm over the last dim: each row of D elements (rows in row-major
/// order of the other dims) normalized by its mean and biased variance,
/// times w and plus b (1 and 0 when null). The magnitude is
/// (|x| + |mean|) * rstd * |w| + |b|: rounding the mean or x - mean in f32
/// errs in proportion to |mean| too.
inline Expected naiveLayerNorm(const Tensor &in, const Tensor *w,
                               const Tensor *b, double eps) {
  Expected e;
  int64_t d = in.sizes.back();
  int64_t rows = d == 0 ? 0 : in.numElements() / d;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < d; ++c)
      sum += in.flat(r * d + c);
    double mean = sum / double(d);
    double squares = 0;
    for (int64_t c = 0; c < d; ++c)
      squares += (in.flat(r * d + c) - mean) * (in.flat(r * d + c) - mean);
    double rstd = 1.0 / std::sqrt(squares / double(d) + eps);
    for (int64_t c = 0; c < d; ++c) {
      double x = in.flat(r * d + c);
      double scale = rstd * (w ? double(w->at({c})) : 1.0);
      double shift = b ? double(b->at({c})) : 0.0;
      e.value.push_back((x - mean) * scale + shift);
      e.magnitude.push_back((std::fabs(x) + std::fabs(mean)) *
                                std::fabs(scale) +
                            std::fabs(shift));
    }
  }
  return e;
}

/// Softmax along `dim`: each row (the elements that differ only in their
/// index along `dim`) becomes exp(x - max) / sum(exp(x - max)). A row
/// holding NaN or only -inf gives NaN, as in PyTorch. The magnitude is
/// p * (1 + |x - max|): rounding x - max in f32 errs in proportion to
/// |x - max|, which exp turns into a relative error of the result, and
/// rounding the row's sum errs relative to p (the caller's factor carries
/// the row's length).
inline Expected naiveSoftmax(const Tensor &in, int64_t dim) {
  const int64_t count = in.numElements(), d = in.sizes[dim];
  // In row-major order, consecutive elements along `dim` are `inner` apart.
  int64_t inner = 1;
  for (int64_t k = dim + 1; k < in.rank(); ++k)
    inner *= in.sizes[k];
  Expected e;
  e.value.resize(count);
  e.magnitude.resize(count);
  for (int64_t first = 0; first < count; ++first) {
    if ((first / inner) % d != 0)
      continue; // Not the first element of its row.
    double max = -std::numeric_limits<double>::infinity();
    bool nan = false;
    for (int64_t k = 0; k < d; ++k) {
      double x = in.flat(first + k * inner);
      nan = nan || std::isnan(x);
      max = std::max(max, x);
    }
    double sum = 0;
    for (int64_t k = 0; k < d; ++k)
      sum += std::exp(in.flat(first + k * inner) - max);
    for (int64_t k = 0; k < d; ++k) {
      double x = in.flat(first + k * inner);
      double p = nan ? std::nan("") : std::exp(x - max) / sum;
      e.value[first + k * inner] = p;
      // An exact 0 (a -inf entry) has no error to bound.
      e.magnitude[first + k * inner] =
          p > 0 ? p * (1 + std::fabs(x - max)) : 0.0;
    }
  }
  return e;
}

inline double naiveRelu(double v) {
  return std::isnan(v) ? v : std::max(v, 0.0);
}

inline Expected naiveAdd(const Tensor &l, const Tensor &r,
                         const std::vector<int64_t> &outSizes) {
  Expected e;
  int64_t rank = outSizes.size();
  int64_t count = 1;
  for (int64_t s : outSizes)
    count *= s;
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int64_t> idx(rank);
    for (int64_t d = rank, rest = i; d-- > 0;) {
      idx[d] = rest % outSizes[d];
      rest /= outSizes[d];
    }
    auto pick = [&](const Tensor &t) {
      std::vector<int64_t> sub(t.rank());
      for (int64_t d = 0; d < t.rank(); ++d) {
        int64_t od = rank - t.rank() + d;
        sub[d] = t.sizes[d] == 1 ? 0 : idx[od];
      }
      return double(t.at(sub));
    };
    double a = pick(l), b = pick(r);
    e.value.push_back(a + b);
    e.magnitude.push_back(std::fabs(a) + std::fabs(b));
  }
  return e;
}

struct PoolAttrs {
  int64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int64_t dilationH = 1, dilationW = 1;
  bool countIncludePad = true;
};

/// PyTorch's pooling output size (symmetric-style: pads before and after).
inline int64_t poolOutSize(int64_t in, int64_t kernel, int64_t stride,
                           int64_t padA, int64_t padB, int64_t dilation,
                           bool ceil) {
  int64_t room = in + padA + padB - dilation * (kernel - 1) - 1;
  int64_t out = (ceil ? (room + stride - 1) / stride : room / stride) + 1;
  // The last window must start inside the input or its leading padding.
  if (ceil && (out - 1) * stride >= in + padA)
    --out;
  return out;
}

inline Expected naiveMaxPool(const Tensor &in, int64_t outH, int64_t outW,
                             const PoolAttrs &p) {
  Expected e;
  int64_t h = in.sizes[2], w = in.sizes[3];
  for (int64_t n = 0; n < in.sizes[0]; ++n)
    for (int64_t c = 0; c < in.sizes[1]; ++c)
      for (int64_t y = 0; y < outH; ++y)
        for (int64_t x = 0; x < outW; ++x) {
          double best = -std::numeric_limits<double>::infinity();
          int64_t bestIndex = -1;
          for (int64_t r = 0; r < p.kernelH; ++r)
            for (int64_t s = 0; s < p.kernelW; ++s) {
              int64_t iy = y * p.strideH - p.padTop + r * p.dilationH;
              int64_t ix = x * p.strideW - p.padLeft + s * p.dilationW;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                continue;
              double v = in.at({n, c, iy, ix});
              // PyTorch: `val > max || isnan(val)`; the first valid element
              // is the initial candidate.
              if (bestIndex < 0 || v > best || std::isnan(v)) {
                best = v;
                bestIndex = iy * w + ix;
              }
            }
          e.value.push_back(best);
          e.magnitude.push_back(std::fabs(best));
          e.index.push_back(bestIndex);
        }
  return e;
}

inline Expected naiveAvgPool(const Tensor &in, int64_t outH, int64_t outW,
                             const PoolAttrs &p) {
  Expected e;
  int64_t h = in.sizes[2], w = in.sizes[3];
  for (int64_t n = 0; n < in.sizes[0]; ++n)
    for (int64_t c = 0; c < in.sizes[1]; ++c)
      for (int64_t y = 0; y < outH; ++y)
        for (int64_t x = 0; x < outW; ++x) {
          double sum = 0, mag = 0;
          int64_t real = 0, padded = 0;
          for (int64_t r = 0; r < p.kernelH; ++r)
            for (int64_t s = 0; s < p.kernelW; ++s) {
              int64_t iy = y * p.strideH - p.padTop + r;
              int64_t ix = x * p.strideW - p.padLeft + s;
              // Positions inside the padded input count for
              // count_include_pad; positions inside the input are summed.
              if (iy >= -p.padTop && iy < h + p.padBottom && ix >= -p.padLeft &&
                  ix < w + p.padRight)
                ++padded;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                continue;
              sum += in.at({n, c, iy, ix});
              mag += std::fabs(in.at({n, c, iy, ix}));
              ++real;
            }
          int64_t divisor = p.countIncludePad ? padded : real;
          e.value.push_back(sum / divisor);
          e.magnitude.push_back(mag / divisor);
        }
  return e;
}

inline Expected naiveAdaptiveAvgPool(const Tensor &in, int64_t outH,
                                     int64_t outW) {
  Expected e;
  int64_t h = in.sizes[2], w = in.sizes[3];
  for (int64_t n = 0; n < in.sizes[0]; ++n)
    for (int64_t c = 0; c < in.sizes[1]; ++c)
      for (int64_t y = 0; y < outH; ++y)
        for (int64_t x = 0; x < outW; ++x) {
          int64_t y0 = static_cast<int64_t>(std::floor(double(y * h) / outH));
          int64_t y1 =
              static_cast<int64_t>(std::ceil(double((y + 1) * h) / outH));
          int64_t x0 = static_cast<int64_t>(std::floor(double(x * w) / outW));
          int64_t x1 =
              static_cast<int64_t>(std::ceil(double((x + 1) * w) / outW));
          double sum = 0, mag = 0;
          for (int64_t iy = y0; iy < y1; ++iy)
            for (int64_t ix = x0; ix < x1; ++ix) {
              sum += in.at({n, c, iy, ix});
              mag += std::fabs(in.at({n, c, iy, ix}));
            }
          double count = double((y1 - y0) * (x1 - x0));
          e.value.push_back(sum / count);
          e.magnitude.push_back(mag / count);
        }
  return e;
}

inline Expected naiveLinear(const Tensor &in, const Tensor &w,
                            const Tensor *b) {
  Expected e;
  for (int64_t n = 0; n < in.sizes[0]; ++n)
    for (int64_t m = 0; m < w.sizes[0]; ++m) {
      double sum = b ? double(b->at({m})) : 0.0;
      double mag = std::fabs(sum);
      for (int64_t k = 0; k < in.sizes[1]; ++k) {
        double t = double(in.at({n, k})) * double(w.at({m, k}));
        sum += t;
        mag += std::fabs(t);
      }
      e.value.push_back(sum);
      e.magnitude.push_back(mag);
    }
  return e;
}

/// Every element of `out` must match `want` within
///   1e-5 * |want| + magnitudeFactor * magnitude
/// (NaN must be NaN), and the gaps of a strided `out` must be untouched.
/// The relative part is the f32 target; the magnitude part bounds rounding
/// that depends on the summation order (see the callers for the factors).
inline void expectClose(const Tensor &out, const Expected &want,
                        double magnitudeFactor, const std::string &what) {
  ASSERT_EQ(static_cast<int64_t>(want.value.size()), out.numElements()) << what;
  int64_t failures = 0;
  for (int64_t i = 0; i < out.numElements() && failures < 5; ++i) {
    double got = out.flat(i), expected = want.value[i];
    if (std::isnan(expected)) {
      if (!std::isnan(got)) {
        ADD_FAILURE() << what << ": element " << i << " is " << got
                      << ", expected NaN";
        ++failures;
      }
      continue;
    }
    double tolerance =
        1e-5 * std::fabs(expected) + magnitudeFactor * want.magnitude[i];
    if (!(std::fabs(got - expected) <= tolerance) &&
        !(std::isinf(expected) && got == expected)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got
                    << ", expected " << expected << " (tolerance " << tolerance
                    << ")";
      ++failures;
    }
  }
  EXPECT_TRUE(out.gapsIntact()) << what << ": wrote outside the output";
}

} // namespace memfmt::test

#endif // MEMFMT_RUNTIME_TEST_NAIVE_H
