//===- TensorLayout.h - Memory formats of tensor types ----------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The bridge between MLIR tensor types and the stride library: the strides a
// tensor type stands for (its #memfmt.strides encoding, or the contiguous
// strides when it has none), its memory format under L4, and the type with
// other strides. Types built here are canonical: contiguous strides are
// written as "no encoding", every other layout as #memfmt.strides.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_IR_TENSORLAYOUT_H
#define MEMFMT_DIALECT_MEMFMT_IR_TENSORLAYOUT_H

#include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.h"
#include "memfmt/Layout/Strides.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::memfmt {

/// The strides of `type`: its #memfmt.strides encoding, or the contiguous
/// strides (L2) when it has none. `type` must have a static shape.
SmallVector<int64_t> getStrides(RankedTensorType type);

/// The L4 memory format of `type` (Contiguous or ChannelsLast).
MemoryFormat getMemoryFormat(RankedTensorType type);

/// True if `type` is channels-last and not also contiguous (L1, L3, L4).
bool isChannelsLast(RankedTensorType type);

/// True if `type` is contiguous (L2); L3 shapes in channels-last strides are.
bool isContiguous(RankedTensorType type);

/// True if the type's rank has a channels-last format (4-D or 5-D).
bool hasChannelsLastFormat(RankedTensorType type);

/// The type of `value` if it is a statically shaped 4-D or 5-D tensor (the
/// values that have a channels-last format), else null.
RankedTensorType getFormattedType(Value value);

/// `type` with `strides`; contiguous strides give no encoding.
RankedTensorType getTypeWithStrides(RankedTensorType type,
                                    ArrayRef<int64_t> strides);

/// `type` with the dense strides of `format` (Contiguous or ChannelsLast,
/// L2). Returns a null type for ChannelsLast on ranks other than 4 and 5.
RankedTensorType getTypeInFormat(RankedTensorType type, MemoryFormat format);

/// True if the two types have the same shape and element type and give
/// every element the same offset (L3).
bool haveSameBytes(RankedTensorType lhs, RankedTensorType rhs);

/// The stride library's enum for `format`.
::memfmt::layout::MemoryFormat toLayoutFormat(MemoryFormat format);
/// The dialect's enum for `format`.
MemoryFormat fromLayoutFormat(::memfmt::layout::MemoryFormat format);

} // namespace mlir::memfmt

#endif // MEMFMT_DIALECT_MEMFMT_IR_TENSORLAYOUT_H
