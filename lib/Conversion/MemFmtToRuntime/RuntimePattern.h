//===- RuntimePattern.h - Shared pieces of lowering patterns --*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What the lowering patterns of the forward ops (LoweringPatterns.cpp) and of
// the training ops (TrainingLoweringPatterns.cpp) share: the base of a
// pattern that emits kernel calls through a RuntimeCallBuilder, a value's
// element type and size, and the window of a pooling op (the forward and
// the backward pooling kernels take the same window arguments).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LIB_CONVERSION_MEMFMTTORUNTIME_RUNTIMEPATTERN_H
#define MEMFMT_LIB_CONVERSION_MEMFMTTORUNTIME_RUNTIMEPATTERN_H

#include "memfmt/Conversion/MemFmtToRuntime/MemoryPlan.h"
#include "memfmt/Conversion/MemFmtToRuntime/RuntimeCallBuilder.h"
#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::memfmt {

/// The element type of tensor `value`.
inline Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

/// A pattern that lowers ops of type OpTy through `calls`.
template <typename OpTy> class RuntimePattern : public OpRewritePattern<OpTy> {
public:
  RuntimePattern(MLIRContext *context, RuntimeCallBuilder &calls)
      : OpRewritePattern<OpTy>(context), calls(calls) {}

protected:
  RuntimeCallBuilder &calls;
};

/// The window of a pooling op: an empty stride means the kernel size.
struct PoolWindow {
  ArrayRef<int64_t> kernel, stride;
  Padding2d pad;

  template <typename OpTy> static PoolWindow of(OpTy pool) {
    ArrayRef<int64_t> stride = pool.getStride();
    if (stride.empty())
      stride = pool.getKernelSize();
    return {pool.getKernelSize(), stride,
            Padding2d::fromList(pool.getPadding())};
  }
};

/// Adds the patterns of the training ops (TrainingLoweringPatterns.cpp).
void populateTrainingToRuntimePatterns(RewritePatternSet &patterns,
                                       RuntimeCallBuilder &calls);

} // namespace mlir::memfmt

#endif // MEMFMT_LIB_CONVERSION_MEMFMTTORUNTIME_RUNTIMEPATTERN_H
