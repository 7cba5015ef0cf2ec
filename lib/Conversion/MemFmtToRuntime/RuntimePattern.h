//===- RuntimePattern.h - Shared pieces of lowering patterns --*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What the lowering patterns of the forward ops (LoweringPatterns.cpp) and of
// the training ops (TrainingLoweringPatterns.cpp) share: the base of a
// pattern that emits kernel calls through a RuntimeCallBuilder, a value's
// element type and size, the window of a pooling op (the forward and the
// backward pooling kernels take the same window arguments) and the function
// code of an elementwise op (the eltwise kernel's and its gradient's,
// eltwise_backward's).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LIB_CONVERSION_MEMFMTTORUNTIME_RUNTIMEPATTERN_H
#define MEMFMT_LIB_CONVERSION_MEMFMTTORUNTIME_RUNTIMEPATTERN_H

#include "memfmt/Conversion/MemFmtToRuntime/MemoryPlan.h"
#include "memfmt/Conversion/MemFmtToRuntime/RuntimeCallBuilder.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"
#include "memfmt/runtime/elementwise_ops.h"

#include "mlir/IR/PatternMatch.h"

#include <limits>

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

/// The function (memfmt_eltwise_op_t) and parameters the eltwise kernel
/// computes for an elementwise op, and eltwise_backward for its gradient op.
struct EltwiseFunction {
  int64_t op;
  double alpha = 0.0, beta = 0.0;
};
inline EltwiseFunction eltwiseFunctionOf(SigmoidOp) {
  return {MEMFMT_ELTWISE_SIGMOID};
}
inline EltwiseFunction eltwiseFunctionOf(SigmoidBackwardOp) {
  return {MEMFMT_ELTWISE_SIGMOID};
}
inline EltwiseFunction eltwiseFunctionOf(SiluOp) {
  return {MEMFMT_ELTWISE_SILU};
}
inline EltwiseFunction eltwiseFunctionOf(SiluBackwardOp) {
  return {MEMFMT_ELTWISE_SILU};
}
inline EltwiseFunction eltwiseFunctionOf(HardswishOp) {
  return {MEMFMT_ELTWISE_HARDSWISH};
}
inline EltwiseFunction eltwiseFunctionOf(HardswishBackwardOp) {
  return {MEMFMT_ELTWISE_HARDSWISH};
}
/// hardsigmoid and its gradient: their alpha and beta.
template <typename OpTy> EltwiseFunction hardsigmoidFunctionOf(OpTy op) {
  return {MEMFMT_ELTWISE_HARDSIGMOID, op.getAlpha().convertToDouble(),
          op.getBeta().convertToDouble()};
}
inline EltwiseFunction eltwiseFunctionOf(HardsigmoidOp op) {
  return hardsigmoidFunctionOf(op);
}
inline EltwiseFunction eltwiseFunctionOf(HardsigmoidBackwardOp op) {
  return hardsigmoidFunctionOf(op);
}
/// clamp and its gradient: an absent bound is an infinite one.
template <typename OpTy> EltwiseFunction clampFunctionOf(OpTy op) {
  double inf = std::numeric_limits<double>::infinity();
  return {MEMFMT_ELTWISE_CLAMP,
          op.getMin() ? op.getMin()->convertToDouble() : -inf,
          op.getMax() ? op.getMax()->convertToDouble() : inf};
}
inline EltwiseFunction eltwiseFunctionOf(ClampOp op) {
  return clampFunctionOf(op);
}
inline EltwiseFunction eltwiseFunctionOf(ClampBackwardOp op) {
  return clampFunctionOf(op);
}
/// gelu and its gradient: exact (erf) or by tanh.
template <typename OpTy> EltwiseFunction geluFunctionOf(OpTy op) {
  return {op.getApproximate() == "tanh" ? MEMFMT_ELTWISE_GELU_TANH
                                        : MEMFMT_ELTWISE_GELU_ERF};
}
inline EltwiseFunction eltwiseFunctionOf(GeluOp op) {
  return geluFunctionOf(op);
}
inline EltwiseFunction eltwiseFunctionOf(GeluBackwardOp op) {
  return geluFunctionOf(op);
}

/// Adds the patterns of the training ops (TrainingLoweringPatterns.cpp).
void populateTrainingToRuntimePatterns(RewritePatternSet &patterns,
                                       RuntimeCallBuilder &calls);

} // namespace mlir::memfmt

#endif // MEMFMT_LIB_CONVERSION_MEMFMTTORUNTIME_RUNTIMEPATTERN_H
