//===- ShapeRules.cpp - Shape rules of conv, pooling and chunk ------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Implements the shape rules of ShapeRules.h that are the dialect's own:
// padding lists and aten::chunk's pieces. The conv and pooling output sizes
// are the layout library's (layout/lib/Windows.cpp).
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"

#include <algorithm>
#include <cassert>

using namespace mlir::memfmt;

Padding2d Padding2d::fromList(llvm::ArrayRef<int64_t> padding) {
  assert((padding.size() == 2 || padding.size() == 4) && "2 or 4 values");
  if (padding.size() == 2)
    return {padding[0], padding[1], padding[0], padding[1]};
  return {padding[0], padding[1], padding[2], padding[3]};
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
