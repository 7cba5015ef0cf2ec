//===- ShapeRules.cpp - Output shapes of conv and pooling -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Implements the output-size formulas of ShapeRules.h.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"

#include "llvm/Support/MathExtras.h"

#include <cassert>

using namespace mlir::memfmt;

Padding2d Padding2d::fromList(llvm::ArrayRef<int64_t> padding) {
  assert((padding.size() == 2 || padding.size() == 4) && "2 or 4 values");
  if (padding.size() == 2)
    return {padding[0], padding[1], padding[0], padding[1]};
  return {padding[0], padding[1], padding[2], padding[3]};
}

/// Floor division that rounds towards negative infinity.
static int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

bool mlir::memfmt::windowArithmeticFits(int64_t in, int64_t kernel,
                                        int64_t stride, int64_t padBegin,
                                        int64_t padEnd, int64_t dilation) {
  int64_t window, padded;
  return !llvm::MulOverflow(dilation, kernel - 1, window) &&
         !llvm::AddOverflow(window, int64_t(1), window) &&
         !llvm::AddOverflow(in, padBegin, padded) &&
         !llvm::AddOverflow(padded, padEnd, padded) &&
         !llvm::AddOverflow(padded, stride, padded);
}

int64_t mlir::memfmt::convOutputSize(int64_t in, int64_t kernel,
                                     int64_t stride, int64_t padBegin,
                                     int64_t padEnd, int64_t dilation) {
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1;
  return floorDiv(span, stride) + 1;
}

int64_t mlir::memfmt::poolOutputSize(int64_t in, int64_t kernel,
                                     int64_t stride, int64_t padBegin,
                                     int64_t padEnd, int64_t dilation,
                                     bool ceilMode) {
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1 +
                 (ceilMode ? stride - 1 : 0);
  int64_t out = floorDiv(span, stride) + 1;
  // ATen: the last window must start inside the input or the begin padding.
  if (ceilMode && out > 0 && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

llvm::SmallVector<int64_t> mlir::memfmt::chunkSizes(int64_t size,
                                                    int64_t chunks) {
  llvm::SmallVector<int64_t> sizes;
  if (chunks <= 0)
    return sizes;
  // ceil(size / chunks), without the overflow of size + chunks - 1 for a
  // huge `chunks` (found by memfmt-fuzz-ir).
  int64_t step = size / chunks + (size % chunks != 0 ? 1 : 0);
  if (step == 0) {
    // aten::chunk of an empty dimension gives `chunks` empty pieces.
    sizes.assign(chunks, 0);
    return sizes;
  }
  for (int64_t begin = 0; begin < size; begin += step)
    sizes.push_back(std::min(step, size - begin));
  return sizes;
}
