//===- MemFmtPerSample.cpp - Which ops compute each sample alone ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// PerSampleOpInterface for the ops whose attributes decide whether they
// compute each sample (index of dim 0) on its own, as memfmt-tile-batch
// needs to know before it runs them one sub-batch at a time. The ops that
// always do (convolutions, inference batch norm, elementwise ops, pooling,
// linear, layout copies) take the interface's default; the ones here do
// when they leave dim 0 alone: a softmax, layer norm, slice, concatenation
// or split along another dimension, a permute that keeps dim 0 first, and a
// flatten or reshape that keeps dim 0 (both keep NCHW order, L7, so each
// sample's elements stay together). The elementwise binary ops, the
// concatenation and a fused convolution's residual also read more than
// their operand 0 by sample.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

using namespace mlir;
using namespace mlir::memfmt;

/// `dim` counted from the front of a tensor of `rank` (ATen's negative
/// dims count from the back).
static int64_t fromFront(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

static int64_t rankOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

static int64_t leadingSize(Value value) {
  return cast<RankedTensorType>(value.getType()).getDimSize(0);
}

bool SoftmaxOp::computesPerSample() {
  return fromFront(getDim(), rankOf(getInput())) != 0;
}

bool LayerNormOp::computesPerSample() {
  return static_cast<int64_t>(getNormalizedShape().size()) < rankOf(getInput());
}

bool FlattenOp::computesPerSample() {
  int64_t rank = rankOf(getInput());
  return fromFront(getStartDim(), rank) >= 1 ||
         fromFront(getEndDim(), rank) == 0;
}

bool ReshapeOp::computesPerSample() {
  return rankOf(getOutput()) >= 1 &&
         leadingSize(getInput()) == leadingSize(getOutput());
}

bool PermuteOp::computesPerSample() {
  return !getDims().empty() && getDims().front() == 0;
}

bool SliceOp::computesPerSample() {
  return fromFront(getDim(), rankOf(getInput())) != 0;
}

bool CatOp::computesPerSample() {
  return getTensors().empty() ||
         fromFront(getDim(), rankOf(getTensors().front())) != 0;
}

bool ChunkOp::computesPerSample() {
  return fromFront(getDim(), rankOf(getInput())) != 0;
}

bool CatOp::isSampleOperand(unsigned) { return true; }

bool AddOp::isSampleOperand(unsigned) { return true; }

bool MulOp::isSampleOperand(unsigned) { return true; }

bool SubOp::isSampleOperand(unsigned) { return true; }

bool DivOp::isSampleOperand(unsigned) { return true; }

bool FusedConv2dOp::isSampleOperand(unsigned index) {
  return index == 0 ||
         (getResidual() && getOperation()->getOperand(index) == getResidual());
}
