//===- Windows.cpp - Conv and pooling output sizes ------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the output-size rules of Windows.h: the overflow
// guard, the window count that convolution (floor) and ONNX's ceil_mode use,
// ATen's pooling output size, and the search for a window that sees no
// input element. They are the one copy of these formulas: the dialect's
// verifiers and type inference, the model zoo and the runtime's argument
// checks all call them.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Layout/Windows.h"

#include <algorithm>

using namespace memfmt::layout;

namespace {

/// Division that rounds towards negative infinity (b > 0).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/// Division that rounds towards positive infinity (b > 0).
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

using Wide = __int128;

/// The smallest x >= 0 with lo <= (a * x) mod m <= hi, or -1 if there is
/// none (0 <= a < m, 0 <= lo <= hi < m). Euclid's algorithm on (m, a): when
/// no multiple of a reaches [lo, hi] before the first wrap, the wraps y that
/// lead into it are themselves the solutions of the same problem modulo a,
/// so the recursion depth is logarithmic in m.
Wide firstMultipleInRange(Wide a, Wide m, Wide lo, Wide hi) {
  if (lo == 0)
    return 0;
  if (a == 0)
    return -1;
  // Without wrapping: the first multiple of a at or above lo.
  Wide x = (lo + a - 1) / a;
  if (a * x <= hi)
    return x;
  // [lo, hi] lies strictly between two multiples of a (so hi - lo < a - 1 and
  // lo mod a > 0). a * x - m * y lands in it iff (-m * y) mod a lies in
  // [lo mod a, hi mod a], i.e. (m * y) mod a in [a - hi mod a, a - lo mod a];
  // the smallest such y gives the smallest x.
  Wide y = firstMultipleInRange(m % a, a, a - hi % a, a - lo % a);
  if (y < 0)
    return -1;
  return (lo + m * y + a - 1) / a;
}

/// The smallest x >= 0 with (a * x + b) mod m >= lo (0 <= a, b < m,
/// 0 < lo < m), or -1.
Wide firstResidueAtLeast(Wide a, Wide b, Wide m, Wide lo) {
  if (b >= lo)
    return 0;
  // (a * x) mod m must lie in [lo - b, m - 1 - b]: no wrap since b < lo.
  return firstMultipleInRange(a, m, lo - b, m - 1 - b);
}

} // namespace

bool memfmt::layout::windowArithmeticFits(int64_t in, int64_t kernel,
                                          int64_t stride, int64_t padBegin,
                                          int64_t padEnd, int64_t dilation) {
  int64_t window, padded;
  return !__builtin_mul_overflow(dilation, kernel - 1, &window) &&
         !__builtin_add_overflow(window, int64_t(1), &window) &&
         !__builtin_add_overflow(in, padBegin, &padded) &&
         !__builtin_add_overflow(padded, padEnd, &padded) &&
         !__builtin_add_overflow(padded, stride, &padded);
}

int64_t memfmt::layout::windowCount(int64_t in, int64_t kernel, int64_t stride,
                                    int64_t padBegin, int64_t padEnd,
                                    int64_t dilation, bool roundUp) {
  int64_t room = in + padBegin + padEnd - dilatedExtent(kernel, dilation);
  return floorDiv(room + (roundUp ? stride - 1 : 0), stride) + 1;
}

int64_t memfmt::layout::convOutputSize(int64_t in, int64_t kernel,
                                       int64_t stride, int64_t padBegin,
                                       int64_t padEnd, int64_t dilation) {
  return windowCount(in, kernel, stride, padBegin, padEnd, dilation,
                     /*roundUp=*/false);
}

int64_t memfmt::layout::poolOutputSize(int64_t in, int64_t kernel,
                                       int64_t stride, int64_t padBegin,
                                       int64_t padEnd, int64_t dilation,
                                       bool ceilMode) {
  int64_t out =
      windowCount(in, kernel, stride, padBegin, padEnd, dilation, ceilMode);
  // ATen: the last window must start inside the input or the begin padding.
  if (ceilMode && out > 0 && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

int64_t memfmt::layout::findEmptyWindow(int64_t outSize, int64_t kernel,
                                        int64_t stride, int64_t pad,
                                        int64_t dilation, int64_t low,
                                        int64_t high) {
  if (outSize <= 0)
    return -1;
  if (low >= high)
    return 0;
  // Window o spans [o * stride - pad, o * stride - pad + extent - 1], its taps
  // `dilation` apart. The windows that end before `low` are a prefix, those
  // that start at or after `high` a suffix (from `after`); one that starts
  // inside [low, high) sees its first tap.
  int64_t extent = dilatedExtent(kernel, dilation);
  if (-pad + extent - 1 < low)
    return 0;
  int64_t after = std::max<int64_t>(0, ceilDiv(high + pad, stride));
  int64_t inside = std::max<int64_t>(0, ceilDiv(low + pad, stride));
  // A window that starts before `low` and reaches it sees no element only if
  // its taps step over all of [low, high), which needs high - low < dilation.
  // Its first tap at or above `low` is low + ((o * stride - pad - low) mod
  // dilation); the window is empty iff that offset is >= high - low.
  int64_t width = high - low;
  int64_t candidates = std::min({inside, after, outSize});
  if (width < dilation && candidates > 0) {
    auto mod = [&](Wide v) { return ((v % dilation) + dilation) % dilation; };
    Wide o = firstResidueAtLeast(mod(stride), mod(Wide(-pad) - low), dilation,
                                 width);
    if (o >= 0 && o < candidates)
      return static_cast<int64_t>(o);
  }
  return after < outSize ? after : -1;
}
