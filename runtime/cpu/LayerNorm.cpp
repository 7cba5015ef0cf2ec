//===- LayerNorm.cpp - Layer norm over the last dim -----------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// aten::layer_norm with normalized_shape [D], D the last dim: every row of D
// elements (one per index of the dims before the last) becomes
// (x - mean) / sqrt(var + eps) * weight + bias with the biased variance;
// an absent weight is 1 and an absent bias 0. Rows are split across threads.
//
// Both kernels compute a row's statistics in double and in two passes (the
// sum of x for the mean, then of (x - mean)^2 for the variance), which stays
// accurate when |mean| is much larger than the spread, as batch norm's do
// (BatchNormTraining.cpp):
//  * the reference walks any strides (rows found from their multi-index,
//    elements along the last dim's stride) and computes everything in
//    double, rounding once;
//  * the fast loop takes tensors whose last dim has unit stride and whose
//    rows are evenly strided (layerNormRows; each tensor its own row
//    stride: dense row-major, a row-major slice with padded rows, the
//    [N, H, W, C] activations of a channels-last model), reduces each row in
//    double over eight independent lanes (vectorisable without
//    reassociation) and writes (x - mean) * rstd * weight + bias in f32.
// In FAST mode oneDNN's layer_normalization_forward (OneDnnLayerNorm.cpp)
// runs first: it is the faster of the two. Measured with
// LayerNormTest.DISABLED_TimeSwinBlock (the three variants interleaved in
// one process) on [8, 56, 56, 96] and [25088, 96] f32 with weight and bias,
// on a 2-vCPU AMD EPYC VM: oneDNN 0.79-0.82 ms per call on one thread and
// 0.43-0.56 ms on two, this loop 1.92-2.2 ms on either, the reference
// 7.1-7.4 ms. (With another process busy on the second vCPU, oneDNN on two
// threads fell to 5.8-8 ms while the loop stayed at 2.1-2.3 ms.) The loop
// runs what oneDNN declines: padded rows (oneDNN 2.6 computes them wrongly),
// input and output of different row strides, builds without oneDNN.
// A row is read completely before any of it is written, so the output may
// be the input itself.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "RowSums.h"
#include "Scratch.h"

#include "lib/Parallel.h"

#include <algorithm>
#include <cmath>

using namespace memfmt::runtime;

namespace {

/// Elements per thread below which the loops stay serial.
constexpr int64_t kMinPerThread = 1 << 15;

/// Rows per thread for rows of `d` elements.
int64_t minRowsPerThread(int64_t d) {
  return std::max<int64_t>(1, kMinPerThread / std::max<int64_t>(d, 1));
}

} // namespace

// Size-1 dims are skipped: their strides are free (L2).
bool cpu::layerNormRows(const TensorView &t, int64_t &rowStride) {
  const int64_t last = t.rank - 1;
  if (t.sizes[last] != 1 && t.strides[last] != 1)
    return false;
  rowStride = t.sizes[last];
  int64_t expected = 0;
  bool first = true;
  for (int64_t d = last; d-- > 0;) {
    if (t.sizes[d] == 1)
      continue;
    if (first) {
      rowStride = t.strides[d];
      first = false;
    } else if (t.strides[d] != expected) {
      return false;
    }
    expected = t.strides[d] * t.sizes[d];
  }
  return true;
}

void cpu::layerNormReference(const args::layer_norm &a) {
  const TensorView &in = a.input, &out = a.output;
  const int64_t last = in.rank - 1;
  const int64_t d = in.sizes[last];
  if (d == 0)
    return;
  const int64_t rows = in.numElements() / d;
  const int64_t xStep = in.strides[last], yStep = out.strides[last];
  const float *x = in.as<float>();
  float *y = out.as<float>();
  const float *w = a.has_weight ? a.weight.as<float>() : nullptr;
  const float *b = a.has_bias ? a.bias.as<float>() : nullptr;
  const int64_t wStep = a.weight.strides[0], bStep = a.bias.strides[0];
  parallelFor(rows, minRowsPerThread(d), [&](int64_t begin, int64_t end, int) {
    // The multi-index of row `begin` over the dims before the last.
    int64_t index[kMaxRank] = {};
    for (int64_t k = last, rest = begin; k-- > 0;) {
      index[k] = rest % in.sizes[k];
      rest /= in.sizes[k];
    }
    for (int64_t r = begin; r < end; ++r) {
      int64_t xo = 0, yo = 0;
      for (int64_t k = 0; k < last; ++k) {
        xo += index[k] * in.strides[k];
        yo += index[k] * out.strides[k];
      }
      double sum = 0;
      for (int64_t i = 0; i < d; ++i)
        sum += x[xo + i * xStep];
      const double mean = sum / double(d);
      double squares = 0;
      for (int64_t i = 0; i < d; ++i) {
        double dev = x[xo + i * xStep] - mean;
        squares += dev * dev;
      }
      const double rstd = 1.0 / std::sqrt(squares / double(d) + a.eps);
      for (int64_t i = 0; i < d; ++i) {
        double v = (x[xo + i * xStep] - mean) * rstd;
        if (w)
          v *= w[i * wStep];
        if (b)
          v += b[i * bStep];
        y[yo + i * yStep] = static_cast<float>(v);
      }
      for (int64_t k = last; k-- > 0;) {
        if (++index[k] < in.sizes[k])
          break;
        index[k] = 0;
      }
    }
  });
}

const char *cpu::layerNormFast(const args::layer_norm &a) {
  const TensorView &in = a.input, &out = a.output;
  int64_t xRow = 0, yRow = 0;
  if (!layerNormRows(in, xRow) || !layerNormRows(out, yRow))
    return nullptr;
  const int64_t d = in.sizes[in.rank - 1];
  const int64_t rows = in.numElements() / d; // d > 0: the output is not empty.
  // Dense weight and bias (1 and 0 when absent), so the inner loop is one
  // vectorisable expression.
  std::vector<float> &weight = scratchBuffer<float, 0>(d);
  std::vector<float> &bias = scratchBuffer<float, 1>(d);
  for (int64_t i = 0; i < d; ++i) {
    weight[i] =
        a.has_weight ? a.weight.as<float>()[i * a.weight.strides[0]] : 1.0f;
    bias[i] = a.has_bias ? a.bias.as<float>()[i * a.bias.strides[0]] : 0.0f;
  }
  const float *w = weight.data(), *b = bias.data();
  const float *x = in.as<float>();
  float *y = out.as<float>();
  const double eps = a.eps;
  parallelFor(rows, minRowsPerThread(d), [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      const float *xr = x + r * xRow;
      float *yr = y + r * yRow;
      const double mean = sumContiguous(xr, d) / double(d);
      const double var = squaredDeviations(xr, d, mean) / double(d);
      const float m = static_cast<float>(mean);
      const float rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
      for (int64_t i = 0; i < d; ++i)
        yr[i] = (xr[i] - m) * rstd * w[i] + b[i];
    }
  });
  return "rows";
}
