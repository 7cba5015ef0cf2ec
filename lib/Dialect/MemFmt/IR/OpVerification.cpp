//===- OpVerification.cpp - Checks shared by the op verifiers -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The checks every memfmt op verifier builds on, the convolution and
// pooling shape rules shared by forward and backward ops, and L9's gradient
// format check (declared in OpVerification.h).
//
//===----------------------------------------------------------------------===//

#include "OpVerification.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtInterfaces.h"
#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Layout/Windows.h"

#include "mlir/IR/Diagnostics.h"

namespace layout = ::memfmt::layout;

namespace mlir::memfmt::detail {

/// `[1, 2, 3]` for diagnostics.
std::string formatList(ArrayRef<int64_t> values) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(values, os);
  os << "]";
  return text;
}

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Checks every op shares: static shapes on every tensor (strides of a
/// dynamic shape are unknown), and one floating-point element type across
/// all floating-point operands and results unless `mixedFloatTypes`. The
/// tensors a MixedPrecisionOpInterface op declares f32 must be f32 and are
/// left out of that one type.
LogicalResult verifyCommon(Operation *op, bool mixedFloatTypes) {
  auto mixed = dyn_cast<MixedPrecisionOpInterface>(op);
  Type floatType;
  auto check = [&](Value value, StringRef kind, unsigned index,
                   bool f32) -> LogicalResult {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return success();
    if (!type.hasStaticShape())
      return op->emitOpError() << kind << " #" << index
                               << " must have a static shape, got " << type;
    if (mixedFloatTypes || !isa<FloatType>(type.getElementType()))
      return success();
    if (f32) {
      if (!type.getElementType().isF32())
        return op->emitOpError()
               << kind << " #" << index << " must be f32 whatever the op "
               << "computes in (mixed precision keeps it f32), got "
               << type.getElementType();
      return success();
    }
    if (!floatType)
      floatType = type.getElementType();
    else if (floatType != type.getElementType())
      return op->emitOpError()
             << "expects one element type for all floating-point tensors, "
                "but "
             << kind << " #" << index << " has " << type.getElementType()
             << " and an earlier tensor has " << floatType;
    return success();
  };
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (failed(check(operand, "operand", i, mixed && mixed.isF32Operand(i))))
      return failure();
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (failed(check(result, "result", i, mixed && mixed.isF32Result(i))))
      return failure();
  return success();
}

/// L4: a tensor an op produces is contiguous or channels-last contiguous.
LogicalResult verifyResultFormats(Operation *op) {
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = tensorType(result);
    SmallVector<int64_t> strides = getStrides(type);
    if (!layout::hasSupportedFormat(type.getShape(), strides))
      return op->emitOpError()
             << "result #" << i << " has strides " << formatList(strides)
             << ", which are neither contiguous nor channels-last "
                "contiguous; only those formats can be produced (L4)";
  }
  return success();
}

/// Expects `type` to have shape `expected`.
LogicalResult verifyShape(Operation *op, RankedTensorType type,
                          ArrayRef<int64_t> expected, StringRef what) {
  if (type.getShape() == expected)
    return success();
  return op->emitOpError() << "expected " << what << " shape "
                           << formatList(expected) << ", got "
                           << formatList(type.getShape());
}

/// A list attribute with `count` values (or one of `altCount`), each at least
/// `minimum`.
LogicalResult verifyList(Operation *op, StringRef name,
                         ArrayRef<int64_t> values, size_t count,
                         int64_t minimum, size_t altCount) {
  if (values.size() != count && (altCount == 0 || values.size() != altCount)) {
    auto diag = op->emitOpError()
                << "expects '" << name << "' to have " << count;
    if (altCount)
      diag << " or " << altCount;
    return diag << " values, got " << values.size();
  }
  for (int64_t value : values)
    if (value < minimum)
      return op->emitOpError() << "expects every '" << name << "' value to be "
                               << (minimum == 0 ? "non-negative" : "positive")
                               << ", got " << formatList(values);
  return success();
}

/// Normalises a possibly negative dimension index against `rank`.
FailureOr<int64_t> normalizeDim(Operation *op, StringRef name, int64_t dim,
                                int64_t rank) {
  int64_t bound = std::max<int64_t>(rank, 1);
  if (dim < -bound || dim >= bound)
    return op->emitOpError() << "'" << name << "' = " << dim
                             << " is out of range for rank " << rank;
  return dim < 0 ? dim + bound : dim;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling shapes
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t, 4>>
verifyConv2dShape(Operation *op, RankedTensorType inputType,
                  RankedTensorType weightType, Value bias,
                  ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                  ArrayRef<int64_t> dilation, int64_t groups) {
  if (failed(verifyList(op, "stride", stride, 2, 1)) ||
      failed(verifyList(op, "padding", padding, 2, 0, 4)) ||
      failed(verifyList(op, "dilation", dilation, 2, 1)))
    return failure();
  ArrayRef<int64_t> in = inputType.getShape();
  ArrayRef<int64_t> w = weightType.getShape();
  if (groups < 1)
    return op->emitOpError() << "expects 'groups' >= 1, got " << groups;
  if (in[1] % groups != 0)
    return op->emitOpError()
           << "input channels (" << in[1] << ") must be divisible by groups ("
           << groups << ")";
  if (w[0] % groups != 0)
    return op->emitOpError()
           << "output channels (" << w[0] << ") must be divisible by groups ("
           << groups << ")";
  if (w[1] != in[1] / groups)
    return op->emitOpError()
           << "weight " << formatList(w) << " expects " << w[1]
           << " input channels per group, but the input has " << in[1]
           << " channels in " << groups << " group(s)";
  if (bias && failed(verifyShape(op, tensorType(bias), {w[0]}, "bias")))
    return failure();
  Padding2d pad = Padding2d::fromList(padding);
  if (!windowArithmeticFits(in[2], w[2], stride[0], pad.top, pad.bottom,
                            dilation[0]) ||
      !windowArithmeticFits(in[3], w[3], stride[1], pad.left, pad.right,
                            dilation[1]))
    return op->emitOpError()
           << "kernel " << formatList(w.drop_front(2)) << ", dilation "
           << formatList(dilation) << " and padding " << formatList(padding)
           << " on input " << formatList(in.drop_front(2))
           << " overflow 64-bit sizes";
  int64_t oh =
      convOutputSize(in[2], w[2], stride[0], pad.top, pad.bottom, dilation[0]);
  int64_t ow =
      convOutputSize(in[3], w[3], stride[1], pad.left, pad.right, dilation[1]);
  if (oh < 1 || ow < 1)
    return op->emitOpError()
           << "kernel " << formatList(w.drop_front(2))
           << " (dilated, with padding) does not fit the input "
           << formatList(in.drop_front(2));
  return SmallVector<int64_t, 4>{in[0], w[0], oh, ow};
}

FailureOr<SmallVector<int64_t, 4>>
verifyPool2dShape(Operation *op, RankedTensorType input,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                  ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                  bool ceilMode) {
  if (failed(verifyList(op, "kernel_size", kernel, 2, 1)) ||
      (!stride.empty() && failed(verifyList(op, "stride", stride, 2, 1))) ||
      failed(verifyList(op, "padding", padding, 2, 0, 4)) ||
      failed(verifyList(op, "dilation", dilation, 2, 1)))
    return failure();
  if (stride.empty())
    stride = kernel; // ATen: an empty stride means the kernel size.
  ArrayRef<int64_t> in = input.getShape();
  Padding2d pad = Padding2d::fromList(padding);
  if (!windowArithmeticFits(in[2], kernel[0], stride[0], pad.top, pad.bottom,
                            dilation[0]) ||
      !windowArithmeticFits(in[3], kernel[1], stride[1], pad.left, pad.right,
                            dilation[1]))
    return op->emitOpError()
           << "kernel_size " << formatList(kernel) << ", dilation "
           << formatList(dilation) << " and padding " << formatList(padding)
           << " on input " << formatList(in.drop_front(2))
           << " overflow 64-bit sizes";
  // Every window must see an input element (else max has no candidate and
  // an average without padding divides by zero).
  int64_t windowH = layout::dilatedExtent(kernel[0], dilation[0]);
  int64_t windowW = layout::dilatedExtent(kernel[1], dilation[1]);
  if (std::max(pad.top, pad.bottom) >= windowH ||
      std::max(pad.left, pad.right) >= windowW)
    return op->emitOpError() << "padding " << formatList(padding)
                             << " must be smaller than the (dilated) window "
                             << formatList({windowH, windowW})
                             << " so that every window sees an input element";
  int64_t oh = poolOutputSize(in[2], kernel[0], stride[0], pad.top, pad.bottom,
                              dilation[0], ceilMode);
  int64_t ow = poolOutputSize(in[3], kernel[1], stride[1], pad.left, pad.right,
                              dilation[1], ceilMode);
  if (oh < 1 || ow < 1)
    return op->emitOpError()
           << "window " << formatList(kernel)
           << " (dilated, with padding) does not fit the input "
           << formatList(in.drop_front(2));
  // With dilation a window can also fall between input elements (taps at
  // -1 and 1 of a 1-high input): check every window, as the runtime does
  // (constant time per window, whatever the kernel size).
  int64_t outSizes[2] = {oh, ow}, padBegin[2] = {pad.top, pad.left};
  for (int d = 0; d < 2; ++d) {
    int64_t o = layout::findEmptyWindow(outSizes[d], kernel[d], stride[d],
                                        padBegin[d], dilation[d], 0, in[2 + d]);
    if (o >= 0)
      return op->emitOpError()
             << "the window of output " << (d == 0 ? "row " : "column ") << o
             << " sees no input element (kernel " << formatList(kernel)
             << ", dilation " << formatList(dilation) << ", padding "
             << formatList(padding) << ", input "
             << formatList(in.drop_front(2)) << ")";
  }
  return SmallVector<int64_t, 4>{in[0], in[1], oh, ow};
}

//===----------------------------------------------------------------------===//
// L9
//===----------------------------------------------------------------------===//

LogicalResult verifyGradientFormat(Operation *op, Value grad,
                                   StringRef gradName, MemoryFormat format,
                                   StringRef primalName) {
  auto type = tensorType(grad);
  SmallVector<int64_t> strides = getStrides(type);
  if (layout::isContiguousInFormat(toLayoutFormat(format), type.getShape(),
                                   strides))
    return success();
  return op->emitOpError()
         << "expects '" << gradName << "' in the memory format of "
         << primalName << " (" << stringifyMemoryFormat(format)
         << "; L9: a gradient has its primal's memory format), got strides "
         << formatList(strides);
}

LogicalResult verifyGradientFormat(Operation *op, Value grad,
                                   StringRef gradName, Value primal,
                                   StringRef primalName) {
  return verifyGradientFormat(op, grad, gradName,
                              getMemoryFormat(tensorType(primal)),
                              ("'" + primalName + "'").str());
}

} // namespace mlir::memfmt::detail
