//===- MemoryPlan.h - Where each value of a compiled model lives -*- C++
//-*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The memory plan of the function a module compiles (memfmt-plan-memory):
// which buffer holds each tensor value (a caller input, the weights blob or
// the activation arena), at which byte offset, and which ops run once at
// load time. planMemory() decides it and records it in the IR, where the
// lowering to runtime calls reads it back through the accessors below:
//
//   * every op result: the op's `memfmt.buffers` array of #memfmt.buffer,
//     one per result; every argument: its `memfmt.buffer` argument
//     attribute;
//   * a result its op does not compute (isAbsentResult): `unit` in place
//     of its #memfmt.buffer;
//   * every op run once at load (memfmt_prepare): `memfmt.load_time`;
//   * every memfmt.assign_weight: `memfmt.state_buffer`, the weights-blob
//     slot it stores into (its value's own buffer when it was computed
//     there in place);
//   * the module: `memfmt.arena_bytes`, `memfmt.peak_live_bytes` and
//     `memfmt.weights_bytes`.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_CONVERSION_MEMFMTTORUNTIME_MEMORYPLAN_H
#define MEMFMT_CONVERSION_MEMFMTTORUNTIME_MEMORYPLAN_H

#include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir::memfmt {

/// Discardable attribute of an op: its results' #memfmt.buffer array.
inline constexpr llvm::StringLiteral kBuffersAttrName = "memfmt.buffers";
/// Argument attribute: the argument's #memfmt.buffer.
inline constexpr llvm::StringLiteral kBufferArgAttrName = "memfmt.buffer";
/// Unit attribute of an op computed once at load time (memfmt_prepare).
inline constexpr llvm::StringLiteral kLoadTimeAttrName = "memfmt.load_time";
/// Attribute of a memfmt.assign_weight: the #memfmt.buffer it stores into.
inline constexpr llvm::StringLiteral kStateBufferAttrName =
    "memfmt.state_buffer";
/// The attribute through which a backward op says which of its results are
/// wanted (ATen's `output_mask`).
inline constexpr llvm::StringLiteral kOutputMaskAttrName = "output_mask";
/// Module attributes: the plan's totals in bytes.
inline constexpr llvm::StringLiteral kArenaBytesAttrName = "memfmt.arena_bytes";
inline constexpr llvm::StringLiteral kPeakLiveBytesAttrName =
    "memfmt.peak_live_bytes";
inline constexpr llvm::StringLiteral kWeightsBytesAttrName =
    "memfmt.weights_bytes";

/// The function `module` compiles: its one public function with a body.
/// Emits a located error (and fails) when there is not exactly one.
FailureOr<func::FuncOp> getCompiledFunction(ModuleOp module);

/// Plans the memory of `func` and records the plan in the IR (see above).
/// Fails with a located error on a function it cannot plan (several
/// blocks, dynamic shapes, non-tensor values).
LogicalResult planMemory(func::FuncOp func);

/// True if `module` carries a memory plan (planMemory ran on it).
bool hasMemoryPlan(ModuleOp module);

/// The planned buffer of `value`, or null if it has none.
BufferAttr getPlannedBuffer(Value value);

/// True if the plan runs `op` once, at load time.
bool isLoadTime(Operation *op);

/// True if `value` is a result its op does not compute: masked off in the
/// op's `output_mask` and unused. It has no buffer, and the kernel is told
/// (its `has_*` flag 0) not to write it.
bool isAbsentResult(Value value);

/// The weights-blob slot `assign` stores into, or null before planning.
BufferAttr getAssignedBuffer(AssignWeightOp assign);

/// Byte size of one element of `type`.
inline int64_t elementBytes(RankedTensorType type) {
  return (type.getElementTypeBitWidth() + 7) / 8;
}

/// Bytes the strided tensor `type` spans (the layout library's span rule
/// times the element size).
int64_t spanBytes(RankedTensorType type);

} // namespace mlir::memfmt

#endif // MEMFMT_CONVERSION_MEMFMTTORUNTIME_MEMORYPLAN_H
