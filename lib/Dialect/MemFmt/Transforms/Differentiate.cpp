//===- Differentiate.cpp - Reverse-mode differentiation of a loss ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-differentiate turns a forward function that returns a loss into
// one that also returns the gradient of the loss with respect to every
// trainable weight. It reads nothing but VjpOpInterface (which operands and
// results carry gradients, and how to build an op's VJP):
//
//   1. The loss: the function's single result, a 0-d float tensor.
//   2. Activity analysis over the function's one block. A value is *varied*
//      if it is a trainable-weight candidate (a `memfmt.weight` without
//      `zero_init`) or a differentiable result of an op with a varied
//      differentiable operand (forward sweep); it is *useful* if it is the
//      loss or a differentiable operand of an op with a useful
//      differentiable result (backward sweep). Only *active* values
//      (varied and useful) get gradients, so running statistics, integer
//      targets and the input image get none, and no op computes them.
//   3. The reverse sweep, in reverse program order from the seed
//      `arith.constant dense<1.0>` for the loss (with `loss-scale`, the
//      dynamic loss scale, `memfmt.loss_scale` of the model state
//      `grad_scaler.scale`, so that every gradient is scaled): each op with
//      a result gradient and an active differentiable operand builds its
//      VJP for
//      those operands only, right before the return. An op on such a path
//      without a VJP is an error that names it. A value with several uses
//      sums its gradients with `memfmt.add` (the VJPs return each gradient
//      in its primal's format, so the sum is in that format too, L9).
//   4. The result: the loss, then one gradient per trainable weight (the
//      weights whose gradient the VJPs produced, by name, in the order they
//      are first read), each marked `memfmt.gradient_of = "<name>"`.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_DIFFERENTIATE
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

/// The result attribute that names the weight a returned gradient is of.
static constexpr StringLiteral kGradientOfAttr = "memfmt.gradient_of";

/// True if a gradient flows through operand `index` of `op`: as the op's
/// VJP declares, or, for an op without one, if it is a float tensor (so
/// that such an op on a weight-to-loss path is found and reported).
static bool isDifferentiableOperand(Operation *op, unsigned index) {
  if (auto vjp = dyn_cast<VjpOpInterface>(op))
    return vjp.isDifferentiableOperand(index);
  return isFloatTensor(op->getOperand(index).getType());
}

/// True if result `index` of `op` carries a gradient (as above).
static bool isDifferentiableResult(Operation *op, unsigned index) {
  if (auto vjp = dyn_cast<VjpOpInterface>(op))
    return vjp.isDifferentiableResult(index);
  return isFloatTensor(op->getResult(index).getType());
}

/// A trainable-weight candidate: a parameter read, not optimizer state.
static bool isTrainableCandidate(Operation *op) {
  auto weight = dyn_cast<WeightOp>(op);
  return weight && !weight.getZeroInit() &&
         isFloatTensor(weight.getOutput().getType());
}

namespace {

/// The values that need a gradient (step 2 of the file comment).
class ActivityAnalysis {
public:
  ActivityAnalysis(ArrayRef<Operation *> ops, Value loss) {
    for (Operation *op : ops) {
      bool variedOperand = isTrainableCandidate(op);
      for (OpOperand &operand : op->getOpOperands())
        variedOperand |=
            varied.contains(operand.get()) &&
            isDifferentiableOperand(op, operand.getOperandNumber());
      if (!variedOperand)
        continue;
      for (OpResult result : op->getResults())
        if (isDifferentiableResult(op, result.getResultNumber()))
          varied.insert(result);
    }
    useful.insert(loss);
    for (Operation *op : llvm::reverse(ops)) {
      bool usefulResult = llvm::any_of(op->getResults(), [&](OpResult r) {
        return useful.contains(r) &&
               isDifferentiableResult(op, r.getResultNumber());
      });
      if (!usefulResult)
        continue;
      for (OpOperand &operand : op->getOpOperands())
        if (isDifferentiableOperand(op, operand.getOperandNumber()))
          useful.insert(operand.get());
    }
  }

  /// True if `value` lies on a path from a trainable weight to the loss.
  bool isActive(Value value) const {
    return varied.contains(value) && useful.contains(value);
  }

private:
  llvm::DenseSet<Value> varied;
  llvm::DenseSet<Value> useful;
};

class DifferentiatePass
    : public ::mlir::memfmt::impl::DifferentiateBase<DifferentiatePass> {
public:
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (failed(differentiate(func)))
      signalPassFailure();
  }

private:
  /// Steps 1-4 of the file comment on `func`.
  LogicalResult differentiate(func::FuncOp func);

  /// Adds `grad` to the gradient of `value` (step 3).
  void accumulate(OpBuilder &b, Value value, Value grad);

  llvm::DenseMap<Value, Value> gradients;
};

} // namespace

void DifferentiatePass::accumulate(OpBuilder &b, Value value, Value grad) {
  Value &sum = gradients[value];
  if (!sum) {
    sum = grad;
    return;
  }
  // L9: both addends are in value's format, so the sum is too.
  sum = AddOp::create(b, value.getLoc(), sum.getType(), sum, grad);
}

LogicalResult DifferentiatePass::differentiate(func::FuncOp func) {
  gradients.clear();
  // 1. The loss.
  FunctionType type = func.getFunctionType();
  if (type.getNumResults() != 1)
    return func.emitOpError()
           << "memfmt-differentiate expects a single result, the loss (a 0-d "
              "float tensor), but the function has "
           << type.getNumResults() << " results";
  auto lossType = dyn_cast<RankedTensorType>(type.getResult(0));
  if (!lossType || lossType.getRank() != 0 || !isFloatTensor(lossType))
    return func.emitOpError()
           << "memfmt-differentiate expects the result to be the loss, a 0-d "
              "float tensor, got "
           << type.getResult(0);
  if (!func.getBody().hasOneBlock())
    return func.emitOpError()
           << "memfmt-differentiate expects a body of one block";
  Block &block = func.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
  if (!ret)
    return func.emitOpError()
           << "memfmt-differentiate expects the body to end in func.return";
  Value loss = ret.getOperand(0);

  // 2. Activity analysis.
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  ActivityAnalysis activity(ops, loss);

  // 3. The reverse sweep, built before the return, from 1 or the scale.
  OpBuilder b(ret);
  if (std::string problem = checkInitialLossScale(lossScale); !problem.empty())
    return func.emitOpError() << "memfmt-differentiate: " << problem;
  if (lossScale > 0) {
    if (!lossType.getElementType().isF32())
      return func.emitOpError()
             << "memfmt-differentiate scales an f32 loss (loss-scale), got "
             << lossType;
    WeightOp taken;
    func.walk([&](WeightOp weight) {
      if (weight.getName() == kLossScaleName)
        taken = weight;
    });
    if (taken)
      return taken.emitError()
             << "memfmt-differentiate: the model has a weight named '"
             << kLossScaleName << "', the name of the loss scale";
    Value state = WeightOp::create(b, ret.getLoc(), lossType, kLossScaleName,
                                   /*zero_init=*/true);
    gradients[loss] = LossScaleOp::create(b, ret.getLoc(), state,
                                          b.getF64FloatAttr(lossScale));
  } else {
    gradients[loss] = arith::ConstantOp::create(
        b, ret.getLoc(),
        DenseElementsAttr::get(lossType,
                               b.getFloatAttr(lossType.getElementType(), 1.0)));
  }
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultGrads;
    bool anyResultGrad = false;
    for (OpResult result : op->getResults()) {
      Value grad = isDifferentiableResult(op, result.getResultNumber())
                       ? gradients.lookup(result)
                       : Value();
      anyResultGrad |= static_cast<bool>(grad);
      resultGrads.push_back(grad);
    }
    if (!anyResultGrad)
      continue;
    SmallVector<bool> needsGrad;
    for (OpOperand &operand : op->getOpOperands())
      needsGrad.push_back(
          activity.isActive(operand.get()) &&
          isDifferentiableOperand(op, operand.getOperandNumber()));
    if (!llvm::is_contained(needsGrad, true))
      continue;
    auto vjp = dyn_cast<VjpOpInterface>(op);
    if (!vjp)
      return op->emitOpError()
             << "lies on a path from a trainable weight to the loss but has "
                "no vector-Jacobian product (VjpOpInterface), so "
                "memfmt-differentiate cannot build its gradient";
    FailureOr<SmallVector<Value>> operandGrads =
        vjp.buildVjp(b, resultGrads, needsGrad);
    if (failed(operandGrads))
      return failure();
    for (OpOperand &operand : op->getOpOperands()) {
      unsigned index = operand.getOperandNumber();
      if (needsGrad[index] && (*operandGrads)[index])
        accumulate(b, operand.get(), (*operandGrads)[index]);
    }
  }

  // 4. The loss and one gradient per trainable weight, by name.
  llvm::MapVector<StringRef, Value> weightGrads;
  for (Operation *op : ops) {
    auto weight = dyn_cast<WeightOp>(op);
    Value grad = weight && isTrainableCandidate(op)
                     ? gradients.lookup(weight.getOutput())
                     : Value();
    if (!grad)
      continue;
    Value &sum = weightGrads[weight.getName()];
    sum = sum ? AddOp::create(b, weight.getLoc(), sum.getType(), sum, grad)
                    .getResult()
              : grad;
  }
  if (weightGrads.empty())
    return func.emitOpError()
           << "has no trainable weight: no memfmt.weight without zero_init "
              "reaches the loss through differentiable operands";

  SmallVector<Value> results = {loss};
  SmallVector<Type> resultTypes = {loss.getType()};
  SmallVector<Attribute> resultAttrs = {func.getResultAttrDict(0)
                                            ? func.getResultAttrDict(0)
                                            : b.getDictionaryAttr({})};
  for (auto [name, grad] : weightGrads) {
    results.push_back(grad);
    resultTypes.push_back(grad.getType());
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(kGradientOfAttr, b.getStringAttr(name))));
  }
  ret->setOperands(results);
  func.setFunctionType(
      FunctionType::get(func.getContext(), type.getInputs(), resultTypes));
  func.setAllResultAttrs(resultAttrs);
  return success();
}
