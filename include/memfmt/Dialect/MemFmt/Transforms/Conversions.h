//===- Conversions.h - Creating and classifying layout conversions -*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Helpers the layout passes share to create `memfmt.contiguous` conversions
// that say why they exist (the `memfmt.reason` attribute the report prints),
// and to classify a conversion: free by L3, a parameter re-layout, or real
// work at run time.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_TRANSFORMS_CONVERSIONS_H
#define MEMFMT_DIALECT_MEMFMT_TRANSFORMS_CONVERSIONS_H

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::memfmt {

/// Name of the discardable attribute that records why a pass inserted a
/// conversion.
inline constexpr llvm::StringLiteral kReasonAttrName = "memfmt.reason";

/// Creates `memfmt.contiguous {memory_format = format}` of `value` at the
/// builder's insertion point, tagged with `reason`.
ContiguousOp createConversion(OpBuilder &builder, Location loc, Value value,
                              MemoryFormat format, StringRef reason);

/// The kinds of conversions the report tells apart.
enum class ConversionKind {
  /// Moves bytes at run time.
  Runtime,
  /// Source and result give every element the same offset (L3): no work.
  Free,
  /// Converts a parameter: done once when weights are loaded.
  Parameter,
};

/// Classifies `op`.
ConversionKind classifyConversion(ContiguousOp op);

/// Bytes a copy into a tensor of `type` reads and writes.
int64_t copyBytes(RankedTensorType type);

/// Bytes a runtime conversion reads and writes per run.
int64_t conversionBytes(ContiguousOp op);

/// The memory-format name of `type` ("contiguous", "channels_last" or
/// "strided" for layouts that are neither).
StringRef formatName(RankedTensorType type);

} // namespace mlir::memfmt

#endif // MEMFMT_DIALECT_MEMFMT_TRANSFORMS_CONVERSIONS_H
