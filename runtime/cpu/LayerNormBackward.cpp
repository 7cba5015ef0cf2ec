//===- LayerNormBackward.cpp - The gradients of layer norm ----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// layer_norm_backward (aten::native_layer_norm_backward over the last dim
// D): each row's mean and rstd are recomputed from the input as the forward
// computes them (LayerNorm.cpp: double, two passes), then with xhat = (x -
// mean) * rstd and g = grad_output * weight
//   grad_input  = rstd * (g - mean(g) - xhat * mean(g * xhat))  per row,
//   grad_weight = sum over rows of grad_output * xhat,
//   grad_bias   = sum over rows of grad_output.
// Recomputing the two statistics costs one pass over a row that is read
// anyway, and spares the forward two saved tensors per layer norm.
//
// The weight and bias gradients are column sums over every row. Both
// kernels sum them in an order fixed by the shape alone, never by the
// split across threads, so a step's result does not depend on the thread
// count:
//  * the reference (any strides, f32; bf16 widened by the backend) computes
//    the rows' statistics and grad_input in double, row-parallel, then each
//    column's sums over the rows in order, column-parallel;
//  * the fast loop (f32 or bf16, rows with a unit-stride last dim, evenly
//    strided: layerNormRows, so the [N, H, W, C] view of a channels-last
//    activation too) takes chunks of kChunkRows rows: each chunk's rows
//    get their statistics and row sums in double over eight lanes
//    (RowSums.h), grad_input in f32 arithmetic, and the chunk's column sums
//    in double; the chunks' sums are added in chunk order at the end.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Element.h"
#include "RowSums.h"
#include "Scratch.h"

#include "lib/Parallel.h"
#include "lib/TrainingMath.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace memfmt::runtime;

namespace {

/// Elements per thread below which the loops stay serial.
constexpr int64_t kMinPerThread = 1 << 14;

/// Rows per chunk of the fast loop's column sums.
constexpr int64_t kChunkRows = 64;

int64_t minRowsPerThread(int64_t d) {
  return std::max<int64_t>(1, kMinPerThread / std::max<int64_t>(d, 1));
}

/// The offset of row `row` of `t` (rows: the indices of the dims before the
/// last, row-major).
int64_t rowOffset(const TensorView &t, int64_t row) {
  int64_t offset = 0;
  for (int64_t k = t.rank - 1; k-- > 0;) {
    offset += row % t.sizes[k] * t.strides[k];
    row /= t.sizes[k];
  }
  return offset;
}

/// A row's mean and rstd, as the forward computes them.
struct RowStatistics {
  double mean = 0, rstd = 0;
};

} // namespace

void cpu::layerNormBackwardReference(const args::layer_norm_backward &a) {
  const TensorView &x = a.input, &go = a.grad_output, &gi = a.grad_input;
  const int64_t last = x.rank - 1;
  const int64_t d = x.sizes[last];
  // An empty row dim leaves nothing to compute: the [0] gradients are empty.
  if (d == 0)
    return;
  const int64_t rows = x.numElements() / d;
  const int64_t xStep = x.strides[last], goStep = go.strides[last],
                giStep = gi.strides[last];
  const float *xs = x.as<float>(), *gos = go.as<float>();
  const float *w = a.has_weight ? a.weight.as<float>() : nullptr;
  const int64_t wStep = a.weight.strides[0];
  std::vector<RowStatistics> statistics(rows);
  float *gis = a.has_grad_input ? gi.as<float>() : nullptr;
  parallelFor(rows, minRowsPerThread(d), [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r)
      math::layerNormRowBackward(
          d, xs + rowOffset(x, r), xStep, gos + rowOffset(go, r), goStep, w,
          wStep, a.eps, gis ? gis + rowOffset(gi, r) : nullptr, giStep,
          statistics[r].mean, statistics[r].rstd);
  });
  if (!a.has_grad_weight && !a.has_grad_bias)
    return;
  parallelFor(d, std::max<int64_t>(1, kMinPerThread / std::max<int64_t>(rows, 1)),
              [&](int64_t begin, int64_t end, int) {
                for (int64_t i = begin; i < end; ++i) {
                  double sumW = 0, sumB = 0;
                  for (int64_t r = 0; r < rows; ++r) {
                    double g = gos[rowOffset(go, r) + i * goStep];
                    double xhat = (xs[rowOffset(x, r) + i * xStep] -
                                   statistics[r].mean) *
                                  statistics[r].rstd;
                    sumW += g * xhat;
                    sumB += g;
                  }
                  if (a.has_grad_weight)
                    a.grad_weight.as<float>()[i * a.grad_weight.strides[0]] =
                        static_cast<float>(sumW);
                  if (a.has_grad_bias)
                    a.grad_bias.as<float>()[i * a.grad_bias.strides[0]] =
                        static_cast<float>(sumB);
                }
              });
}

namespace {

template <typename T>
const char *layerNormBackwardRows(const args::layer_norm_backward &a) {
  const TensorView &x = a.input, &go = a.grad_output, &gi = a.grad_input;
  int64_t xRow = 0, goRow = 0, giRow = 0;
  if (!cpu::layerNormRows(x, xRow) || !cpu::layerNormRows(go, goRow) ||
      (a.has_grad_input && !cpu::layerNormRows(gi, giRow)))
    return nullptr;
  const int64_t d = x.sizes[x.rank - 1];
  if (d == 0)
    return "empty";
  const int64_t rows = x.numElements() / d;
  const int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;
  const bool sums = a.has_grad_weight || a.has_grad_bias;
  // A dense weight (1 when absent); the chunks' column sums of grad_output
  // * xhat and of grad_output.
  std::vector<float> &weight = cpu::scratchBuffer<float, 0>(d);
  for (int64_t i = 0; i < d; ++i)
    weight[i] = a.has_weight
                    ? cpu::load(a.weight.as<T>()[i * a.weight.strides[0]])
                    : 1.0f;
  std::vector<double> &partial =
      cpu::scratchBuffer<double, 1>(sums ? 2 * chunks * d : 0);
  const float *w = weight.data();
  const T *xs = x.as<T>(), *gos = go.as<T>();
  T *gis = a.has_grad_input ? gi.as<T>() : nullptr;
  const double eps = a.eps;
  parallelFor(
      chunks, std::max<int64_t>(1, minRowsPerThread(d) / kChunkRows),
      [&](int64_t begin, int64_t end, int) {
        for (int64_t c = begin; c < end; ++c) {
          double *sumW = sums ? partial.data() + 2 * c * d : nullptr;
          double *sumB = sums ? sumW + d : nullptr;
          if (sums)
            std::fill(sumW, sumW + 2 * d, 0.0);
          const int64_t last = std::min(rows, (c + 1) * kChunkRows);
          for (int64_t r = c * kChunkRows; r < last; ++r) {
            const T *xr = xs + r * xRow;
            const T *gor = gos + r * goRow;
            const double mean = cpu::sumContiguous(xr, d) / double(d);
            const double var =
                cpu::squaredDeviations(xr, d, mean) / double(d);
            const float m = static_cast<float>(mean);
            const float rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
            if (sums)
              for (int64_t i = 0; i < d; ++i) {
                const float g = cpu::load(gor[i]);
                sumW[i] += g * ((cpu::load(xr[i]) - m) * rstd);
                sumB[i] += g;
              }
            if (!gis)
              continue;
            double laneG[8] = {}, laneGX[8] = {};
            int64_t i = 0;
            for (; i + 8 <= d; i += 8)
              for (int j = 0; j < 8; ++j) {
                const float g = cpu::load(gor[i + j]) * w[i + j];
                laneG[j] += g;
                laneGX[j] += g * ((cpu::load(xr[i + j]) - m) * rstd);
              }
            for (; i < d; ++i) {
              const float g = cpu::load(gor[i]) * w[i];
              laneG[i % 8] += g;
              laneGX[i % 8] += g * ((cpu::load(xr[i]) - m) * rstd);
            }
            const float meanG = static_cast<float>(cpu::laneSum(laneG) / d);
            const float meanGX = static_cast<float>(cpu::laneSum(laneGX) / d);
            T *gir = gis + r * giRow;
            for (int64_t k = 0; k < d; ++k) {
              const float xhat = (cpu::load(xr[k]) - m) * rstd;
              const float g = cpu::load(gor[k]) * w[k];
              gir[k] = cpu::store<T>(rstd * (g - meanG - xhat * meanGX));
            }
          }
        }
      });
  if (!sums)
    return "rows";
  float *gw = a.grad_weight.as<float>(), *gb = a.grad_bias.as<float>();
  for (int64_t i = 0; i < d; ++i) {
    double sw = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      sw += partial[2 * c * d + i];
      sb += partial[2 * c * d + d + i];
    }
    if (a.has_grad_weight)
      gw[i * a.grad_weight.strides[0]] = static_cast<float>(sw);
    if (a.has_grad_bias)
      gb[i * a.grad_bias.strides[0]] = static_cast<float>(sb);
  }
  return "rows";
}

} // namespace

const char *cpu::layerNormBackwardFast(const args::layer_norm_backward &a,
                                       DType dtype) {
  return visitFloatElement(dtype, [&](auto element) {
    return layerNormBackwardRows<decltype(element)>(a);
  });
}
