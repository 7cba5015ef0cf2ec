//===- MemFmtDialect.cpp - The memfmt dialect -----------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Registers the memfmt ops and attributes with the dialect.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

using namespace mlir;
using namespace mlir::memfmt;

#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.cpp.inc"

void MemFmtDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.cpp.inc"
      >();
  registerAttributes();
}
