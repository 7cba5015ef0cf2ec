//===- MemFmtVjpInterface.h - Vector-Jacobian products ----------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Declares VjpOpInterface, through which each forward op builds its
// vector-Jacobian product from the backward ops (generated from
// MemFmtVjpInterface.td), and the small helpers its default methods and
// implementations share.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_IR_MEMFMTVJPINTERFACE_H
#define MEMFMT_DIALECT_MEMFMT_IR_MEMFMTVJPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::memfmt {

/// True if `type` is a ranked tensor of floating-point elements (the values
/// gradients flow through; integer targets and indices have none).
inline bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

} // namespace mlir::memfmt

#include "memfmt/Dialect/MemFmt/IR/MemFmtVjpInterface.h.inc"

#endif // MEMFMT_DIALECT_MEMFMT_IR_MEMFMTVJPINTERFACE_H
