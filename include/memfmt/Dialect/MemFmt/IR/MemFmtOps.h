//===- MemFmtOps.h - memfmt ops ---------------------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Declares the memfmt ops (generated from MemFmtOps.td) and the one piece
// of op matching that both a canonicalization and memfmt-fuse-conv use.
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
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h.inc"

namespace mlir::memfmt {

/// A linear layer an epilogue (a bias, an activation) can fold into: one
/// without activation whose only user reads it directly or through the
/// single-use reshape that restores an N-D MatMul's batch dims. The bias
/// canonicalization of AddOp and memfmt-fuse-conv's activations share it.
struct LinearEpilogueSite {
  LinearOp linear;
  ReshapeOp reshape; ///< null where the user reads the linear directly

  /// The site whose result `value` is, if it is one.
  static std::optional<LinearEpilogueSite> match(Value value);

  /// Replaces `user`, which reads the site's result and has its type, with
  /// the linear computing `bias` and the activation in its epilogue (then
  /// the reshape, if any), and erases the old linear and reshape.
  void fold(PatternRewriter &rewriter, Operation *user, Value bias,
            StringAttr activation, FloatAttr activationAlpha,
            FloatAttr activationBeta);
};

} // namespace mlir::memfmt

#endif // MEMFMT_DIALECT_MEMFMT_IR_MEMFMTOPS_H
