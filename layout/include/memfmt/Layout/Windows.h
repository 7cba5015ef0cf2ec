//===- Windows.h - Which taps of a conv/pool window land in the input
//------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Window arithmetic along one spatial dimension of a convolution or pooling:
// window `o` reads input index `o * stride - pad + k * dilation` for each tap
// k in [0, kernel). The dialect's verifiers, the runtime's validators and the
// CPU kernels all ask "which taps land in [low, high)" and "does some window
// land nowhere"; they share these functions, which answer in constant time
// per window whatever the kernel size (attributes reach 2^31, and walking the
// taps made single calls take seconds; found by the fuzzers).
//
// Callers guarantee stride >= 1, dilation >= 1, kernel >= 1 and that the
// window positions do not overflow (the output sizes were derived from the
// same attributes).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LAYOUT_WINDOWS_H
#define MEMFMT_LAYOUT_WINDOWS_H

#include <algorithm>
#include <cstdint>

namespace memfmt::layout {

/// The taps [begin, end) of one window that land in [low, high); empty
/// (begin == end) when none does.
struct TapRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  bool empty() const { return begin == end; }
};

/// The taps of window `o` whose input index lies in [low, high).
inline TapRange windowTaps(int64_t o, int64_t kernel, int64_t stride,
                           int64_t pad, int64_t dilation, int64_t low,
                           int64_t high) {
  int64_t first = o * stride - pad;
  // The first tap at or above `bound`: ceil((bound - first) / dilation),
  // clamped to [0, kernel].
  auto firstTapAtOrAbove = [&](int64_t bound) -> int64_t {
    if (first >= bound)
      return 0;
    return std::min(kernel, (bound - first + dilation - 1) / dilation);
  };
  int64_t begin = firstTapAtOrAbove(low);
  return {begin, std::max(begin, firstTapAtOrAbove(high))};
}

/// The first of `outSize` windows with no tap in [low, high), or -1.
inline int64_t findEmptyWindow(int64_t outSize, int64_t kernel, int64_t stride,
                               int64_t pad, int64_t dilation, int64_t low,
                               int64_t high) {
  for (int64_t o = 0; o < outSize; ++o)
    if (windowTaps(o, kernel, stride, pad, dilation, low, high).empty())
      return o;
  return -1;
}

} // namespace memfmt::layout

#endif // MEMFMT_LAYOUT_WINDOWS_H
