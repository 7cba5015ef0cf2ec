//===- ShapeRules.h - Shape rules of conv, pooling and chunk ----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The shape rules of the dialect's ops, shared by the verifiers, the model
// builders and the importers, so that "verification and type inference
// share one function": padding lists as (top, left, bottom, right), the
// output sizes of convolution and pooling (ATen's, generalised to ONNX's
// asymmetric padding; defined once in the layout library, which the runtime
// calls too) and the pieces of aten::chunk.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_IR_SHAPERULES_H
#define MEMFMT_DIALECT_MEMFMT_IR_SHAPERULES_H

#include "memfmt/Layout/Windows.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::memfmt {

/// Padding as (top, left, bottom, right) from 2 values (symmetric, ATen) or
/// 4 values (ONNX order top, left, bottom, right). Requires 2 or 4 values.
struct Padding2d {
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  static Padding2d fromList(llvm::ArrayRef<int64_t> padding);
};

// The output-size rules of convolution and pooling are the layout library's
// (memfmt/Layout/Windows.h), shared with the runtime's argument checks; the
// dialect's verifiers, the model builders and the importers reach them under
// these names.
using ::memfmt::layout::convOutputSize;
using ::memfmt::layout::poolOutputSize;
using ::memfmt::layout::windowArithmeticFits;

/// The shapes of aten::chunk's pieces along a dimension of `size`.
llvm::SmallVector<int64_t> chunkSizes(int64_t size, int64_t chunks);

} // namespace mlir::memfmt

#endif // MEMFMT_DIALECT_MEMFMT_IR_SHAPERULES_H
