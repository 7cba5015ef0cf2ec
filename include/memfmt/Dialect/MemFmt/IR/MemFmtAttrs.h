//===- MemFmtAttrs.h - memfmt attributes ------------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Declares #memfmt.strides (the tensor encoding) and #memfmt.memory_format.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_IR_MEMFMTATTRS_H
#define MEMFMT_DIALECT_MEMFMT_IR_MEMFMTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TensorEncoding.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.h.inc"

#endif // MEMFMT_DIALECT_MEMFMT_IR_MEMFMTATTRS_H
