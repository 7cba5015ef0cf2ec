//===- ChannelLoops.h - Loops over one channel of a tensor ------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The per-channel loops of the batch-norm kernels (BatchNormTraining.cpp,
// SyncBatchNorm.cpp): the elements of channel c (dim 1) of tensors of one
// shape and any strides, visited on the calling thread (the callers thread
// over channels), and a channel's parameters read from 1-D tensors.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_CHANNELLOOPS_H
#define MEMFMT_RUNTIME_CPU_CHANNELLOOPS_H

#include "StridedLoop.h"

#include "lib/TensorView.h"

#include <algorithm>
#include <array>
#include <limits>

namespace memfmt::runtime::cpu {

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

/// Element c of the 1-D f32 tensor t, widened.
inline double channelValue(const TensorView &t, int64_t c) {
  return static_cast<double>(t.as<float>()[c * t.strides[0]]);
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

} // namespace memfmt::runtime::cpu

#endif // MEMFMT_RUNTIME_CPU_CHANNELLOOPS_H
