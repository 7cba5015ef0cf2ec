//===- RowSums.h - Sums over contiguous floats in double --------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The two reductions batch norm's statistics (BatchNormTraining.cpp) and
// layer norm's (LayerNorm.cpp) are built from: the sum of a run of
// contiguous floats and the sum of their squared deviations from a mean,
// both in double with eight independent lanes, so that the compiler can
// vectorise them without reassociating.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_ROWSUMS_H
#define MEMFMT_RUNTIME_CPU_ROWSUMS_H

#include <cstdint>

namespace memfmt::runtime::cpu {

/// The sum of `count` contiguous floats.
[[gnu::always_inline]] inline double sumContiguous(const float *x,
                                                   int64_t count) {
  double lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int j = 0; j < 8; ++j)
      lane[j] += x[i + j];
  double sum = 0;
  for (; i < count; ++i)
    sum += x[i];
  for (double v : lane)
    sum += v;
  return sum;
}

/// The sum of (x - mean)^2 over `count` contiguous floats.
[[gnu::always_inline]] inline double
squaredDeviations(const float *x, int64_t count, double mean) {
  double lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int j = 0; j < 8; ++j) {
      double d = x[i + j] - mean;
      lane[j] += d * d;
    }
  double sum = 0;
  for (; i < count; ++i)
    sum += (x[i] - mean) * (x[i] - mean);
  for (double v : lane)
    sum += v;
  return sum;
}

} // namespace memfmt::runtime::cpu

#endif // MEMFMT_RUNTIME_CPU_ROWSUMS_H
