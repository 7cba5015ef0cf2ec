//===- TestTensor.h - Strided test tensors and memrefs ----------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// A tensor for the runtime's tests: a buffer, sizes, strides, an offset and
// the MLIR memref descriptor the kernels take, built for one of several
// layouts (NCHW, channels-last, a channels-last slice with padded channels,
// and a general strided view in an unusual dim order with gaps). Elements
// are read and written by logical (NCHW) index, so the tests' naive kernels
// never look at strides. The gaps of a strided buffer hold a sentinel, so a
// test can check that a kernel wrote nothing outside its output.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_TEST_TESTTENSOR_H
#define MEMFMT_RUNTIME_TEST_TESTTENSOR_H

#include "memfmt/runtime/kernel_abi.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace memfmt::test {

enum class Layout {
  /// Dense row-major (NCHW for rank 4).
  Contiguous,
  /// Dense channels-last (rank 4 and 5; row-major for other ranks).
  ChannelsLast,
  /// Channels-last order with 3 spare channels per pixel and an offset: a
  /// slice of a wider channels-last tensor (row-major with padding for ranks
  /// other than 4 and 5).
  ChannelsLastSlice,
  /// An order that is no memory format (column-major for rank 2; C, N, H, W
  /// innermost first for rank 4) with a gap after every dim and an offset.
  Strided,
};

/// Short names of the layouts for tables of test cases (`using namespace
/// memfmt::test::layout_names;`).
namespace layout_names {
constexpr Layout C = Layout::Contiguous, CL = Layout::ChannelsLast,
                 CLS = Layout::ChannelsLastSlice, S = Layout::Strided;
} // namespace layout_names

inline const char *toString(Layout layout) {
  switch (layout) {
  case Layout::Contiguous:
    return "Contiguous";
  case Layout::ChannelsLast:
    return "ChannelsLast";
  case Layout::ChannelsLastSlice:
    return "ChannelsLastSlice";
  case Layout::Strided:
    return "Strided";
  }
  return "?";
}

constexpr Layout kAllLayouts[] = {Layout::Contiguous, Layout::ChannelsLast,
                                  Layout::ChannelsLastSlice, Layout::Strided};

/// Dim order of `layout` for `rank`, innermost first.
inline std::vector<int64_t> innermostFirst(Layout layout, int64_t rank) {
  std::vector<int64_t> order(rank);
  for (int64_t i = 0; i < rank; ++i)
    order[i] = rank - 1 - i; // Row-major.
  bool channelsLast = rank == 4 || rank == 5;
  if ((layout == Layout::ChannelsLast || layout == Layout::ChannelsLastSlice) &&
      channelsLast) {
    order = rank == 4 ? std::vector<int64_t>{1, 3, 2, 0}
                      : std::vector<int64_t>{1, 4, 3, 2, 0};
  } else if (layout == Layout::Strided) {
    // Dim 0 innermost (column-major for rank 2), and for rank >= 3 dim 1
    // innermost before dim 0: C, N, H, W for rank 4.
    std::reverse(order.begin(), order.end());
    if (rank >= 3)
      std::swap(order[0], order[1]);
  }
  return order;
}

template <typename T> class TestTensor {
public:
  static constexpr T kSentinel = static_cast<T>(-12345);

  TestTensor(std::vector<int64_t> sizes, Layout layout = Layout::Contiguous)
      : sizes(std::move(sizes)), layout(layout) {
    int64_t rank = this->sizes.size();
    strides.assign(rank, 0);
    int64_t running = 1;
    bool padded = layout == Layout::Strided;
    bool slice = layout == Layout::ChannelsLastSlice;
    for (int64_t d : innermostFirst(layout, rank)) {
      strides[d] = running;
      int64_t extent = std::max<int64_t>(this->sizes[d], 1);
      if (padded)
        extent += 1;
      if (slice && running == 1)
        extent += 3; // Spare channels (or columns) after the innermost dim.
      running *= extent;
    }
    offset = layout == Layout::Strided || slice ? 3 : 0;
    buffer.assign(offset + running + 1, kSentinel);
    rebuildDescriptor();
  }

  /// Tensor with explicit strides (and offset), for odd cases.
  TestTensor(std::vector<int64_t> sizes, std::vector<int64_t> strides,
             int64_t offset, int64_t bufferSize)
      : sizes(std::move(sizes)), strides(std::move(strides)), offset(offset),
        layout(Layout::Strided) {
    buffer.assign(bufferSize, kSentinel);
    rebuildDescriptor();
  }

  TestTensor(const TestTensor &other) { *this = other; }
  TestTensor &operator=(const TestTensor &other) {
    sizes = other.sizes;
    strides = other.strides;
    offset = other.offset;
    layout = other.layout;
    buffer = other.buffer;
    rebuildDescriptor();
    return *this;
  }

  int64_t rank() const { return sizes.size(); }
  int64_t numElements() const {
    return std::accumulate(sizes.begin(), sizes.end(), int64_t(1),
                           std::multiplies<int64_t>());
  }

  /// Element at a logical index.
  T &at(const std::vector<int64_t> &index) {
    return buffer[offset + linearOffset(index)];
  }
  const T &at(const std::vector<int64_t> &index) const {
    return buffer[offset + linearOffset(index)];
  }

  /// The logical index of element number `i` in row-major order.
  std::vector<int64_t> indexOf(int64_t i) const {
    std::vector<int64_t> index(sizes.size());
    for (int64_t d = rank(); d-- > 0;) {
      index[d] = i % sizes[d];
      i /= sizes[d];
    }
    return index;
  }
  /// Element number `i` in row-major (logical) order.
  T &flat(int64_t i) { return at(indexOf(i)); }
  const T &flat(int64_t i) const { return at(indexOf(i)); }

  /// Fills every element with uniform values in [lo, hi) from `seed`.
  void fillRandom(uint32_t seed, double lo = -1.0, double hi = 1.0) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < numElements(); ++i)
      flat(i) = static_cast<T>(dist(rng));
  }

  /// True if every buffer slot that is no element still holds the sentinel.
  bool gapsIntact() const {
    std::vector<bool> used(buffer.size(), false);
    for (int64_t i = 0; i < numElements(); ++i)
      used[offset + linearOffset(indexOf(i))] = true;
    for (size_t i = 0; i < buffer.size(); ++i)
      if (!used[i] && !(buffer[i] == kSentinel))
        return false;
    return true;
  }

  /// The memref a kernel takes.
  const memfmt_memref_t *memref() const { return &ref; }

  std::string describe() const {
    std::string text = std::string(toString(layout)) + " [";
    for (size_t i = 0; i < sizes.size(); ++i)
      text += (i ? ", " : "") + std::to_string(sizes[i]);
    text += "] strides [";
    for (size_t i = 0; i < strides.size(); ++i)
      text += (i ? ", " : "") + std::to_string(strides[i]);
    return text + "]";
  }

  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  Layout layout;
  std::vector<T> buffer;

private:
  int64_t linearOffset(const std::vector<int64_t> &index) const {
    int64_t at = 0;
    for (size_t d = 0; d < index.size(); ++d)
      at += index[d] * strides[d];
    return at;
  }

  /// {allocated, aligned, offset, sizes[rank], strides[rank]}.
  void rebuildDescriptor() {
    descriptor.assign(3 + 2 * sizes.size(), 0);
    T *base = buffer.data();
    std::memcpy(&descriptor[0], &base, sizeof(base));
    std::memcpy(&descriptor[1], &base, sizeof(base));
    descriptor[2] = offset;
    std::copy(sizes.begin(), sizes.end(), descriptor.begin() + 3);
    std::copy(strides.begin(), strides.end(),
              descriptor.begin() + 3 + sizes.size());
    ref.rank = static_cast<int64_t>(sizes.size());
    ref.descriptor = descriptor.data();
  }

  std::vector<int64_t> descriptor;
  memfmt_memref_t ref{};
};

using Tensor = TestTensor<float>;
using IndexTensor = TestTensor<int64_t>;

} // namespace memfmt::test

#endif // MEMFMT_RUNTIME_TEST_TESTTENSOR_H
