//===- RowSums.h - Sums over contiguous elements in double ------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The reductions batch norm's statistics (BatchNormTraining.cpp), layer
// norm's (LayerNorm.cpp, LayerNormBackward.cpp) and sum_to_size's contiguous
// runs (Reduce.cpp) are built from: the sum of a run of contiguous f32 or
// bf16 elements and the sum of their squared deviations from a mean, both
// in double with eight independent lanes, so that the compiler can
// vectorise them without reassociating; and the dot product of two runs
// (softmax's gradient, SoftmaxBackward.cpp), the same way. `addContiguous` adds
// a run into lanes the caller keeps (several runs summed as one); `laneSum`
// folds them.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_ROWSUMS_H
#define MEMFMT_RUNTIME_CPU_ROWSUMS_H

#include "Element.h"

#include <cstdint>

namespace memfmt::runtime::cpu {

/// Eight partial sums in double.
using Lanes = double[8];

/// Adds x[0, count) to `lane`, element i to lane i % 8.
template <typename T>
[[gnu::always_inline]] inline void addContiguous(Lanes &lane, const T *x,
                                                 int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int j = 0; j < 8; ++j)
      lane[j] += load(x[i + j]);
  for (; i < count; ++i)
    lane[i % 8] += load(x[i]);
}

/// The sum of the eight lanes.
[[gnu::always_inline]] inline double laneSum(const Lanes &lane) {
  double sum = 0;
  for (int j = 0; j < 8; ++j)
    sum += lane[j];
  return sum;
}

template <typename T>
[[gnu::always_inline]] inline double sumContiguous(const T *x, int64_t count) {
  double lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int j = 0; j < 8; ++j)
      lane[j] += load(x[i + j]);
  double sum = 0;
  for (; i < count; ++i)
    sum += load(x[i]);
  for (double v : lane)
    sum += v;
  return sum;
}

/// The sum of x[i] * y[i] over [0, count), each product and the sum in
/// double.
template <typename T>
[[gnu::always_inline]] inline double dotContiguous(const T *x, const T *y,
                                                   int64_t count) {
  double lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int j = 0; j < 8; ++j)
      lane[j] += double(load(x[i + j])) * double(load(y[i + j]));
  double sum = 0;
  for (; i < count; ++i)
    sum += double(load(x[i])) * double(load(y[i]));
  for (double v : lane)
    sum += v;
  return sum;
}

template <typename T>
[[gnu::always_inline]] inline double
squaredDeviations(const T *x, int64_t count, double mean) {
  double lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int j = 0; j < 8; ++j) {
      double d = load(x[i + j]) - mean;
      lane[j] += d * d;
    }
  double sum = 0;
  for (; i < count; ++i) {
    double d = load(x[i]) - mean;
    sum += d * d;
  }
  for (double v : lane)
    sum += v;
  return sum;
}

} // namespace memfmt::runtime::cpu

#endif // MEMFMT_RUNTIME_CPU_ROWSUMS_H
