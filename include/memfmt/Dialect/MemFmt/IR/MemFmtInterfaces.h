//===- MemFmtInterfaces.h - Layout and in-place op interfaces ---*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Declares LayoutOpInterface, through which every op says how it treats
// memory formats (L5, L6, L7), InPlaceOpInterface, through which an op says
// which operand buffers its lowered kernel may write its results into, and
// ElementCopyOpInterface, through which an op says it only moves its
// operand's elements (and when it moves no bytes). Generated from
// MemFmtInterfaces.td.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_IR_MEMFMTINTERFACES_H
#define MEMFMT_DIALECT_MEMFMT_IR_MEMFMTINTERFACES_H

#include "memfmt/Layout/Strides.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

#include "memfmt/Dialect/MemFmt/IR/MemFmtInterfaces.h.inc"

#endif // MEMFMT_DIALECT_MEMFMT_IR_MEMFMTINTERFACES_H
