//===- OpVerification.h - Checks shared by the op verifiers ----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The checks every memfmt op verifier builds on (static shapes, one element
// type, L4 result formats, attribute lists, expected shapes), the shape
// rules of convolution and pooling shared by the forward ops and their
// backward ops, and L9's gradient format check. Private to the dialect
// library: MemFmtOps.cpp (forward ops) and MemFmtTrainingOps.cpp (training
// and backward ops) both use it.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LIB_DIALECT_MEMFMT_IR_OPVERIFICATION_H
#define MEMFMT_LIB_DIALECT_MEMFMT_IR_OPVERIFICATION_H

#include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::memfmt::detail {

/// `[1, 2, 3]` for diagnostics.
std::string formatList(ArrayRef<int64_t> values);

/// The ranked tensor type of `value`.
RankedTensorType tensorType(Value value);

/// Checks every op shares: static shapes on every tensor, and one
/// floating-point element type across all floating-point operands and
/// results unless `mixedFloatTypes`.
LogicalResult verifyCommon(Operation *op, bool mixedFloatTypes = false);

/// L4: every result is contiguous or channels-last contiguous.
LogicalResult verifyResultFormats(Operation *op);

/// Expects `type` to have shape `expected`; `what` names it in the error.
LogicalResult verifyShape(Operation *op, RankedTensorType type,
                          ArrayRef<int64_t> expected, StringRef what);

/// A list attribute with `count` values (or `altCount`), each >= `minimum`.
LogicalResult verifyList(Operation *op, StringRef name,
                         ArrayRef<int64_t> values, size_t count,
                         int64_t minimum, size_t altCount = 0);

/// Normalises a possibly negative dimension index against `rank`.
FailureOr<int64_t> normalizeDim(Operation *op, StringRef name, int64_t dim,
                                int64_t rank);

/// The convolution rules of conv2d, fused_conv2d and convolution_backward:
/// attribute lists, channels and groups, bias, and the window fits. Returns
/// the output shape [N, O, OH, OW].
FailureOr<SmallVector<int64_t, 4>>
verifyConv2dShape(Operation *op, RankedTensorType inputType,
                  RankedTensorType weightType, Value bias,
                  ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                  ArrayRef<int64_t> dilation, int64_t groups);

/// The pooling rules of max/avg pooling and their backward ops: attribute
/// lists (an empty `stride` means `kernel`), every window sees an input
/// element. Returns the output shape [N, C, OH, OW].
FailureOr<SmallVector<int64_t, 4>>
verifyPool2dShape(Operation *op, RankedTensorType input,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                  ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                  bool ceilMode);

/// L9: `grad` is laid out densely in `format`, the memory format of its
/// primal, which `primalName` describes in the error.
LogicalResult verifyGradientFormat(Operation *op, Value grad,
                                   StringRef gradName, MemoryFormat format,
                                   StringRef primalName);

/// L9: `grad` has the L4 memory format of the operand `primal`.
LogicalResult verifyGradientFormat(Operation *op, Value grad,
                                   StringRef gradName, Value primal,
                                   StringRef primalName);

/// A layer norm's input and attributes (memfmt.layer_norm and its
/// gradient): `input` of rank >= 1, `normalized` its last dim [D], `eps`
/// finite and >= 0, `weight` (when present) [D].
LogicalResult verifyLayerNorm(Operation *op, RankedTensorType input,
                              ArrayRef<int64_t> normalized, double eps,
                              Value weight);

/// A softmax's dim (memfmt.softmax and its gradient): `shape`, the shape of
/// the operand named `name`, of rank >= 1 and `dim` in [0, rank).
LogicalResult verifySoftmaxDim(Operation *op, ArrayRef<int64_t> shape,
                               int64_t dim, StringRef name);

/// The attributes of an elementwise function (memfmt.clamp, gelu, ...) and
/// of its gradient: no NaN among `min`, `max`, `alpha`, `beta`, and
/// `approximate` "none" or "tanh".
LogicalResult verifyEltwiseAttributes(Operation *op);

/// The gradient of an elementwise function (sigmoid_backward, ...): its
/// attributes, grad_output and grad_input shaped like operand 1 (self, or
/// sigmoid's output) and in its format (L9).
LogicalResult verifyEltwiseBackward(Operation *op);

/// getGradientOperandFormat of those gradients: grad_output (operand 0)
/// takes operand 1's format.
std::optional<MemoryFormat> eltwiseBackwardGradientFormat(Operation *op,
                                                          unsigned index);

} // namespace mlir::memfmt::detail

#endif // MEMFMT_LIB_DIALECT_MEMFMT_IR_OPVERIFICATION_H
