//===- StridedLoop.h - Loops over arbitrary strides -------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// forEachStrided walks the index space of one shape over K operands that
// each have their own strides (an output and its inputs, with stride 0 for a
// broadcast dim), in 1-D runs along an innermost dimension. To keep the runs
// long and the accesses in memory order whatever the layout (NCHW,
// channels-last or a strided view), it drops size-1 dims, orders the others
// by the first operand's stride (largest outermost) and merges neighbours
// that are contiguous in every operand; a fully dense channels-last copy then
// becomes one run. The outer index space is split across threads.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_STRIDEDLOOP_H
#define MEMFMT_RUNTIME_CPU_STRIDEDLOOP_H

#include "lib/Parallel.h"
#include "lib/TensorView.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace memfmt::runtime::cpu {

/// Offsets or strides (in elements) of the K operands of a strided loop.
template <size_t K> using OperandOffsets = std::array<int64_t, K>;

/// Calls `body(offsets, count, steps)` for 1-D runs covering every index of
/// `sizes` (rank `rank`): operand k's elements of the run are at
/// `offsets[k] + i * steps[k]` for i in [0, count). Runs are split across
/// threads in chunks of at least `minPerThread` elements; `body` must not
/// throw. Runs nothing when some size is 0.
template <size_t K, typename Body>
void forEachStrided(int64_t rank, const int64_t *sizes,
                    const std::array<const int64_t *, K> &strides,
                    int64_t minPerThread, Body &&body) {
  int64_t dims[kMaxRank];
  int64_t count = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0)
      return;
    if (sizes[d] != 1)
      dims[count++] = d;
  }
  // Largest first-operand stride outermost (a stable insertion sort: at
  // most kMaxRank dims, and ties keep the logical order).
  auto magnitude = [&](int64_t d) {
    return strides[0][d] < 0 ? -strides[0][d] : strides[0][d];
  };
  for (int64_t i = 1; i < count; ++i)
    for (int64_t j = i; j > 0 && magnitude(dims[j - 1]) < magnitude(dims[j]);
         --j)
      std::swap(dims[j - 1], dims[j]);

  // The loop nest, outermost first, with neighbours merged where every
  // operand steps over the inner dim exactly.
  int64_t loopSizes[kMaxRank];
  int64_t loopStrides[K][kMaxRank];
  int64_t loops = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t d = dims[i];
    bool merge = loops > 0;
    for (size_t k = 0; k < K && merge; ++k)
      merge = loopStrides[k][loops - 1] == strides[k][d] * sizes[d];
    if (merge) {
      loopSizes[loops - 1] *= sizes[d];
      for (size_t k = 0; k < K; ++k)
        loopStrides[k][loops - 1] = strides[k][d];
      continue;
    }
    loopSizes[loops] = sizes[d];
    for (size_t k = 0; k < K; ++k)
      loopStrides[k][loops] = strides[k][d];
    ++loops;
  }

  OperandOffsets<K> steps{};
  int64_t inner = 1;
  if (loops > 0) {
    --loops;
    inner = loopSizes[loops];
    for (size_t k = 0; k < K; ++k)
      steps[k] = loopStrides[k][loops];
  }
  int64_t outer = 1;
  for (int64_t i = 0; i < loops; ++i)
    outer *= loopSizes[i];

  parallelFor(outer, std::max<int64_t>(1, minPerThread / inner),
              [&](int64_t begin, int64_t end, int) {
                int64_t index[kMaxRank];
                OperandOffsets<K> offsets{};
                int64_t rest = begin;
                for (int64_t i = loops; i-- > 0;) {
                  index[i] = rest % loopSizes[i];
                  rest /= loopSizes[i];
                  for (size_t k = 0; k < K; ++k)
                    offsets[k] += index[i] * loopStrides[k][i];
                }
                for (int64_t o = begin; o < end; ++o) {
                  body(offsets, inner, steps);
                  for (int64_t i = loops; i-- > 0;) {
                    for (size_t k = 0; k < K; ++k)
                      offsets[k] += loopStrides[k][i];
                    if (++index[i] < loopSizes[i])
                      break;
                    for (size_t k = 0; k < K; ++k)
                      offsets[k] -= loopStrides[k][i] * loopSizes[i];
                    index[i] = 0;
                  }
                }
              });
}

/// forEachStrided over the rows along dim `dim` of K operands of shape
/// `sizes`: the index space of the other dims (`dim` taken as size 1), so
/// each run is `count` rows, row r of operand k starting at offsets[k] + r *
/// steps[k], its elements strides[k][dim] apart. Rows are split across
/// threads in chunks of at least `minPerThread` elements (softmax and its
/// gradient).
template <size_t K, typename Body>
void forEachRowAlong(int64_t rank, const int64_t *sizes, int64_t dim,
                     const std::array<const int64_t *, K> &strides,
                     int64_t minPerThread, Body &&body) {
  int64_t rowSizes[kMaxRank];
  std::copy(sizes, sizes + rank, rowSizes);
  rowSizes[dim] = 1;
  const int64_t rowLength = std::max<int64_t>(sizes[dim], 1);
  forEachStrided<K>(rank, rowSizes, strides,
                    std::max<int64_t>(1, minPerThread / rowLength),
                    std::forward<Body>(body));
}

} // namespace memfmt::runtime::cpu

#endif // MEMFMT_RUNTIME_CPU_STRIDEDLOOP_H
