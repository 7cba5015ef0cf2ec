//===- MemFmtOps.h - memfmt ops ---------------------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Declares the memfmt ops (generated from MemFmtOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_IR_MEMFMTOPS_H
#define MEMFMT_DIALECT_MEMFMT_IR_MEMFMTOPS_H

#include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtInterfaces.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtVjpInterface.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h.inc"

#endif // MEMFMT_DIALECT_MEMFMT_IR_MEMFMTOPS_H
