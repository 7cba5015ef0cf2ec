//===- Windows.h - Conv/pool output sizes and window taps -------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Window arithmetic along one spatial dimension of a convolution or pooling,
// written once for the compiler and the runtime:
//  * output sizes: how many windows a conv or pool has (floor mode, ATen's
//    ceil mode with its "the last window must start inside the input or the
//    begin padding" rule, asymmetric padding, dilation). The dialect's
//    verifiers and type inference, the model zoo and the runtime's argument
//    checks call the same functions, so they cannot disagree;
//  * taps: window `o` reads input index `o * stride - pad + k * dilation` for
//    each tap k in [0, kernel). The verifiers, the runtime's validators and
//    the CPU kernels all ask "which taps land in [low, high)" and "does some
//    window land nowhere"; they share these functions, which answer in
//    constant time per window whatever the kernel size (attributes reach
//    2^31, and walking the taps made single calls take seconds; found by the
//    fuzzers), and find an empty window without visiting every window.
//
// Callers guarantee stride >= 1, dilation >= 1, kernel >= 1, paddings >= 0
// and that the arithmetic does not overflow (windowArithmeticFits, or bounded
// attributes as in the runtime).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LAYOUT_WINDOWS_H
#define MEMFMT_LAYOUT_WINDOWS_H

#include <algorithm>
#include <cstdint>

namespace memfmt::layout {

/// The input rows one window spans: dilation * (kernel - 1) + 1.
inline int64_t dilatedExtent(int64_t kernel, int64_t dilation) {
  return dilation * (kernel - 1) + 1;
}

/// True if the output-size functions below cannot overflow int64 for these
/// values (all >= 0; kernel, stride and dilation >= 1): the dilated window
/// dilation * (kernel - 1) + 1 and in + padBegin + padEnd + stride fit. The
/// verifiers reject attributes for which it is false (found by
/// memfmt-fuzz-ir) before they compute any output size.
bool windowArithmeticFits(int64_t in, int64_t kernel, int64_t stride,
                          int64_t padBegin, int64_t padEnd, int64_t dilation);

/// How many windows of the dilated kernel fit in the padded input, stepping
/// by `stride`: (in + padBegin + padEnd - dilation * (kernel - 1) - 1) /
/// stride + 1, the division rounding down, or up when `roundUp` (ONNX's
/// ceil_mode, which keeps a last window that starts in the end padding).
/// May be <= 0 when the kernel does not fit.
int64_t windowCount(int64_t in, int64_t kernel, int64_t stride,
                    int64_t padBegin, int64_t padEnd, int64_t dilation,
                    bool roundUp);

/// Size of a convolution output along one spatial dimension: the windows
/// that fit, rounding down. May be <= 0 when the kernel does not fit.
int64_t convOutputSize(int64_t in, int64_t kernel, int64_t stride,
                       int64_t padBegin, int64_t padEnd, int64_t dilation);

/// Size of a pooling output along one spatial dimension, ATen's
/// pooling_output_shape_pad_lr: windowCount rounding up when `ceilMode`, and
/// then without a last window that would start in the end padding (at or
/// past in + padBegin). May be <= 0 when the kernel does not fit.
int64_t poolOutputSize(int64_t in, int64_t kernel, int64_t stride,
                       int64_t padBegin, int64_t padEnd, int64_t dilation,
                       bool ceilMode);

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

/// The first of `outSize` windows with no tap in [low, high), or -1, in
/// time logarithmic in the sizes (output sizes reach 2^40 in types the
/// verifiers see; a scan over the windows made single inputs take seconds,
/// found by memfmt-fuzz-ir).
int64_t findEmptyWindow(int64_t outSize, int64_t kernel, int64_t stride,
                        int64_t pad, int64_t dilation, int64_t low,
                        int64_t high);

} // namespace memfmt::layout

#endif // MEMFMT_LAYOUT_WINDOWS_H
