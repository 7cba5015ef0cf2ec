//===- Windows.cpp - Conv and pooling output sizes ------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the output-size rules of Windows.h: the overflow
// guard, the window count that convolution (floor) and ONNX's ceil_mode use,
// and ATen's pooling output size. They are the one copy of these formulas:
// the dialect's verifiers and type inference, the model zoo and the
// runtime's argument checks all call them.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Layout/Windows.h"

using namespace memfmt::layout;

namespace {

/// Division that rounds towards negative infinity (b > 0).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
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
