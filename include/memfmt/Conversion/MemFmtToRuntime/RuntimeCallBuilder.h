//===- RuntimeCallBuilder.h - Typed calls of runtime kernels ----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Emits the calls of a compiled model into the runtime's kernels, typed by
// the kernel ABI itself: runtime/include/memfmt/runtime/Kernels.def
// generates, for each kernel NAME, a struct `kernels::NAME` with one field
// per argument under Kernels.def's name (a strided view for a tensor, an
// int64_t or a double for a scalar) and one `RuntimeCallBuilder::call`
// overload that declares the callee `memfmt_NAME_<dtype>` and calls it. The
// fields have no default, and the lowering fills them with designated
// initializers, so adding, removing, renaming or reordering an argument in
// Kernels.def is a compile error at every call site (as Backend.h makes it
// one in every backend), never a mismatched call.
//
// A RuntimeCallBuilder writes one function at a time (memfmt_prepare or
// memfmt_forward: a context pointer and byte buffers): it gives each planned
// tensor value a strided memref view of its buffer (MemoryPlan.h), numbers
// the calls (the `node` argument of every kernel, named in the manifest),
// and returns a failing kernel's status at once.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_CONVERSION_MEMFMTTORUNTIME_RUNTIMECALLBUILDER_H
#define MEMFMT_CONVERSION_MEMFMTTORUNTIME_RUNTIMECALLBUILDER_H

#include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace mlir::memfmt {

/// The runtime ABI's name of an element type ("f32", "f16", "bf16", "i64"),
/// or "" for any other type.
std::string dtypeName(Type type);

namespace kernels {

/// An argument every call must give: it has no default, so a designated
/// initializer that leaves it out does not compile.
template <typename T> class Required {
public:
  Required(T value) : value(value) {}
  T get() const { return value; }

private:
  T value;
};

// struct NAME { Required<Value> input; ...; Required<int64_t> stride_h; ... }
#define MEMFMT_DTYPE(T)
#define MEMFMT_IN(N) Required<Value> N;
#define MEMFMT_OUT(N) Required<Value> N;
#define MEMFMT_OUT_I64(N) Required<Value> N;
#define MEMFMT_IN_I64(N) Required<Value> N;
#define MEMFMT_IN_F32(N) Required<Value> N;
#define MEMFMT_OUT_F32(N) Required<Value> N;
#define MEMFMT_I64(N) Required<int64_t> N;
#define MEMFMT_F64(N) Required<double> N;
#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  struct NAME {                                                                \
    ARGS                                                                       \
  };
#include "memfmt/runtime/Kernels.def"
#undef MEMFMT_DTYPE
#undef MEMFMT_IN
#undef MEMFMT_OUT
#undef MEMFMT_OUT_I64
#undef MEMFMT_IN_I64
#undef MEMFMT_IN_F32
#undef MEMFMT_OUT_F32
#undef MEMFMT_I64
#undef MEMFMT_F64

} // namespace kernels

/// Writes kernel calls on planned buffers into one function at a time.
class RuntimeCallBuilder {
public:
  /// Emits through `rewriter`; `loc` is the compiled function's location;
  /// the name of each call site (op name and location, by node id) is
  /// appended to `nodeNames`.
  RuntimeCallBuilder(RewriterBase &rewriter, Location loc,
                     std::vector<std::string> &nodeNames);

  /// Creates `int32_t name(ptr ctx, memref<?xi8> x numBuffers)` before
  /// `anchor`, with `llvm.emit_c_interface`, and emits into its body.
  func::FuncOp beginFunction(Operation *anchor, StringRef name,
                             unsigned numBuffers);
  /// The buffers of the function being written (null where it has none).
  void setBuffers(Value arena, Value weights, ValueRange inputs);
  /// Returns 0 and ends the function.
  void endFunction();

  /// The strided view of planned tensor `value` in its buffer (made once per
  /// function).
  Value view(Value value);
  /// A view of `type` at `byteOffset` in the buffer of `buffer`.
  Value viewAt(BufferAttr buffer, int64_t byteOffset, RankedTensorType type);
  /// A view of `type` at `byteOffset` in byte buffer `bytes`.
  Value viewAt(Value bytes, int64_t byteOffset, RankedTensorType type);

  // One call per kernel of Kernels.def, for element type `elementType` (the
  // kernel's T). Each fails with a located error when the kernel has no
  // entry point for that type.
#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  LogicalResult call(Operation *op, Type elementType,                          \
                     const kernels::NAME &args);
#include "memfmt/runtime/Kernels.def"

  /// Calls emitted so far (the next node id).
  int64_t numCalls() const { return nextNode; }

private:
  /// One argument of a kernel call, as the generated overloads pass it.
  struct Argument {
    enum class Kind { Tensor, I64, F64 } kind;
    Value view;       ///< Tensor: the strided view
    Type elementType; ///< Tensor: the element type of the callee's parameter
    int64_t i64 = 0;
    double f64 = 0;
  };

  /// Declares `memfmt_<kernel>_<dtype>` once and calls it on `args`, or
  /// fails with a located error if `dtypes` lacks the element type.
  LogicalResult emitCall(Operation *op, StringRef kernel,
                         ArrayRef<StringRef> dtypes, Type elementType,
                         ArrayRef<Argument> args);

  RewriterBase &rewriter;
  Location loc;
  std::vector<std::string> &nodeNames;

  func::FuncOp current;
  Value ctx, arena, weights;
  SmallVector<Value> inputs;
  Block *failBlock = nullptr;
  llvm::DenseMap<Value, Value> views;
  llvm::StringMap<func::FuncOp> declared;
  int64_t nextNode = 0;
};

} // namespace mlir::memfmt

#endif // MEMFMT_CONVERSION_MEMFMTTORUNTIME_RUNTIMECALLBUILDER_H
