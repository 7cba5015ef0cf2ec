//===- MLIR.h - Reading memfmt IR from text, with a depth guard -*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Textual IR is the other model format memfmt-compile reads (beside ONNX).
// MLIR's parser recurses once per nested bracket and has no depth limit, so
// a file of a few thousand nested `[` overflows the stack (found by
// memfmt-fuzz-ir). parseMLIRModule first scans the buffer's brackets --
// outside string literals and comments -- and reports the first one nested
// deeper than kMaxMLIRNesting as a located error; only then does it parse.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_IMPORT_MLIR_H
#define MEMFMT_IMPORT_MLIR_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::memfmt {

/// The deepest bracket nesting accepted: far above what real IR uses (a
/// ResNet stays under 10), far below what overflows a thread's stack.
constexpr unsigned kMaxMLIRNesting = 256;

/// The byte offset in `text` of the first bracket ((, [, {, <) nested
/// deeper than `maxDepth`, or -1. Brackets inside string literals and `//`
/// comments do not count; `->` is not a closing bracket.
int64_t findExcessiveNesting(llvm::StringRef text, unsigned maxDepth);

/// Parses the main buffer of `sourceMgr` as a module, after the nesting
/// check; a failure is reported through the context's diagnostics, located
/// in the buffer, and returns null.
OwningOpRef<ModuleOp> parseMLIRModule(llvm::SourceMgr &sourceMgr,
                                      const ParserConfig &config);

} // namespace mlir::memfmt

#endif // MEMFMT_IMPORT_MLIR_H
