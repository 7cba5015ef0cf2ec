//===- Passes.h - memfmt conversion passes ----------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Declares the conversion passes (generated from Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_CONVERSION_PASSES_H
#define MEMFMT_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace mlir::memfmt {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "memfmt/Conversion/Passes.h.inc"

} // namespace mlir::memfmt

#endif // MEMFMT_CONVERSION_PASSES_H
