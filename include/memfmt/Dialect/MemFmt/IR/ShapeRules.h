//===- ShapeRules.h - Output shapes of conv and pooling ---------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The output-size formulas of convolution and pooling (ATen's, generalised
// to ONNX's asymmetric padding), written once and shared by the verifiers,
// the model builders and the importers, so that "verification and type
// inference share one function".
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_IR_SHAPERULES_H
#define MEMFMT_DIALECT_MEMFMT_IR_SHAPERULES_H

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

/// True if the output-size formulas below cannot overflow int64 for these
/// values (all >= 0, kernel, stride and dilation >= 1): the dilated window
/// dilation * (kernel - 1) + 1 and in + padBegin + padEnd + stride fit. The
/// verifiers reject attributes for which it is false (found by
/// memfmt-fuzz-ir) before they compute any output size.
bool windowArithmeticFits(int64_t in, int64_t kernel, int64_t stride,
                          int64_t padBegin, int64_t padEnd, int64_t dilation);

/// Size of a convolution output along one spatial dimension:
/// floor((in + padBegin + padEnd - dilation * (kernel - 1) - 1) / stride) + 1.
/// May be <= 0 when the kernel does not fit.
int64_t convOutputSize(int64_t in, int64_t kernel, int64_t stride,
                       int64_t padBegin, int64_t padEnd, int64_t dilation);

/// Size of a pooling output along one spatial dimension (ATen's
/// pooling_output_shape with asymmetric padding): like convOutputSize, but
/// rounding up when `ceilMode`, and then dropping a last window that would
/// start in the end padding.
int64_t poolOutputSize(int64_t in, int64_t kernel, int64_t stride,
                       int64_t padBegin, int64_t padEnd, int64_t dilation,
                       bool ceilMode);

/// The shapes of aten::chunk's pieces along a dimension of `size`.
llvm::SmallVector<int64_t> chunkSizes(int64_t size, int64_t chunks);

} // namespace mlir::memfmt

#endif // MEMFMT_DIALECT_MEMFMT_IR_SHAPERULES_H
