//===- MemFmtDialect.h - The memfmt dialect ---------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Declares the memfmt dialect class (generated from MemFmtDialect.td).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_IR_MEMFMTDIALECT_H
#define MEMFMT_DIALECT_MEMFMT_IR_MEMFMTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h.inc"

#endif // MEMFMT_DIALECT_MEMFMT_IR_MEMFMTDIALECT_H
