//===- MemFmtVjp.cpp - Vector-Jacobian products of the memfmt ops ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// VjpOpInterface (MemFmtVjpInterface.td) for every op a ResNet / ResNeXt /
// wide-ResNet training forward contains, and for the activations and
// broadcasting arithmetic of the CNNs beyond them (MobileNet's ReLU6 and
// hardswish, EfficientNet's SiLU and squeeze-excite scales, ConvNeXt's layer
// norms, a vision transformer's softmax): one function per
// op, with the formula it implements in its doc comment, as PyTorch's
// derivatives.yaml writes them. Each builds its operands' gradients from its
// results' gradients out of the backward ops of MemFmtTrainingOps.td, computes
// only the gradients asked for (`output_mask`), and gives every gradient its
// primal's memory format (L9): where a gradient arrives in another format
// (the inverse of a conversion, an `add` of mixed formats) it is converted
// back with `memfmt.contiguous`, which L3 makes free where both formats
// describe the same bytes.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::memfmt;

#include "memfmt/Dialect/MemFmt/IR/MemFmtVjpInterface.cpp.inc"

/// One null gradient per operand of `op`.
static SmallVector<Value> noGradients(Operation *op) {
  return SmallVector<Value>(op->getNumOperands(), Value());
}

/// True if any operand needs a gradient.
static bool anyNeeded(ArrayRef<bool> operandNeedsGrad) {
  return llvm::is_contained(operandNeedsGrad, true);
}

/// The VJP of an op whose gradient flows to operand 0 only: `buildGrad`
/// makes operand 0's gradient from result 0's, if both exist and operand 0
/// needs one.
static SmallVector<Value>
firstOperandVjp(Operation *op, ArrayRef<Value> resultGrads,
                ArrayRef<bool> operandNeedsGrad,
                function_ref<Value(Value grad)> buildGrad) {
  SmallVector<Value> grads = noGradients(op);
  if (resultGrads[0] && operandNeedsGrad[0])
    grads[0] = buildGrad(resultGrads[0]);
  return grads;
}

/// `grad` in the L4 memory format of `primal` (L9). A gradient already in
/// that format (also where L3 makes both formats the same bytes) is
/// returned as is; otherwise the inverse conversion is built.
static Value toPrimalFormat(OpBuilder &b, Location loc, Value grad,
                            Value primal) {
  auto gradType = cast<RankedTensorType>(grad.getType());
  auto primalType = cast<RankedTensorType>(primal.getType());
  MemoryFormat format = getMemoryFormat(primalType);
  if (getMemoryFormat(gradType) == format)
    return grad;
  return ContiguousOp::create(b, loc, grad,
                              MemoryFormatAttr::get(b.getContext(), format));
}

/// The 1-D type `[size]` of `like`'s element type, for a bias gradient
/// whose forward had no bias (never used: its mask bit is false).
static RankedTensorType vectorType(RankedTensorType like, int64_t size) {
  return RankedTensorType::get({size}, like.getElementType());
}

/// The gradients of `conv2d(input, weight) + bias` from `gradOutput`, for
/// conv2d and fused_conv2d (the epilogue already undone):
/// `convolution_backward` with `output_mask = [needs input, needs weight,
/// needs bias]`. Returns (grad_input, grad_weight, grad_bias), null where
/// not asked for.
static std::array<Value, 3> buildConvolutionBackward(
    OpBuilder &b, Location loc, Value gradOutput, Value input, Value weight,
    Value bias, ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
    ArrayRef<int64_t> dilation, int64_t groups, std::array<bool, 3> mask) {
  auto weightType = cast<RankedTensorType>(weight.getType());
  Type biasType =
      bias ? bias.getType() : vectorType(weightType, weightType.getShape()[0]);
  auto op = ConvolutionBackwardOp::create(
      b, loc, input.getType(), weightType, biasType, gradOutput, input, weight,
      stride, padding, dilation, groups, mask);
  return {mask[0] ? op.getGradInput() : Value(),
          mask[1] ? op.getGradWeight() : Value(),
          mask[2] ? op.getGradBias() : Value()};
}

//===----------------------------------------------------------------------===//
// Convolution, linear
//===----------------------------------------------------------------------===//

/// conv2d: `(grad_input, grad_weight, grad_bias) =
/// convolution_backward(grad, input, weight)`, masked by which operands
/// need a gradient (the stem's input needs none).
FailureOr<SmallVector<Value>>
Conv2dOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                   ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  if (!resultGrads[0] || !anyNeeded(operandNeedsGrad))
    return grads;
  bool hasBias = static_cast<bool>(getBias());
  std::array<Value, 3> g = buildConvolutionBackward(
      b, getLoc(), resultGrads[0], getInput(), getWeight(), getBias(),
      getStride(), getPadding(), getDilation(), getGroups(),
      {operandNeedsGrad[0], operandNeedsGrad[1],
       hasBias && operandNeedsGrad[2]});
  grads[0] = g[0];
  grads[1] = g[1];
  if (hasBias)
    grads[2] = g[2];
  return grads;
}

/// fused_conv2d, `act(conv2d(input, weight) + bias + residual)`: with
/// `relu`, `g = threshold_backward(grad, output)`, else `g = grad`; then
/// conv2d's gradients of `g`, and `grad_residual = g`.
FailureOr<SmallVector<Value>>
FusedConv2dOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                        ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  if (!resultGrads[0] || !anyNeeded(operandNeedsGrad))
    return grads;
  if (getActivation())
    return emitOpError() << "has no vector-Jacobian product for its '"
                         << *getActivation()
                         << "' activation (training compiles without "
                            "fusion)";
  Value g = resultGrads[0];
  if (getRelu())
    g = ThresholdBackwardOp::create(b, getLoc(), getOutput().getType(), g,
                                    getOutput(), /*addend=*/Value(),
                                    b.getF64FloatAttr(0.0));
  unsigned biasIndex = 2;
  unsigned residualIndex = biasIndex + (getBias() ? 1 : 0);
  bool needsBias = getBias() && operandNeedsGrad[biasIndex];
  std::array<Value, 3> conv = {};
  if (operandNeedsGrad[0] || operandNeedsGrad[1] || needsBias)
    conv = buildConvolutionBackward(
        b, getLoc(), g, getInput(), getWeight(), getBias(), getStride(),
        getPadding(), getDilation(), getGroups(),
        {operandNeedsGrad[0], operandNeedsGrad[1], needsBias});
  grads[0] = conv[0];
  grads[1] = conv[1];
  if (getBias())
    grads[biasIndex] = conv[2];
  if (getResidual() && operandNeedsGrad[residualIndex])
    grads[residualIndex] = toPrimalFormat(b, getLoc(), g, getResidual());
  return grads;
}

/// linear, `input @ weight^T + bias`: `(grad_input, grad_weight,
/// grad_bias) = linear_backward(input, grad, weight)` with grad_input =
/// grad @ weight, grad_weight = grad^T @ input, grad_bias = sum(grad).
FailureOr<SmallVector<Value>>
LinearOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                   ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  if (!resultGrads[0] || !anyNeeded(operandNeedsGrad))
    return grads;
  if (getActivation())
    return emitOpError() << "has no vector-Jacobian product for its '"
                         << *getActivation()
                         << "' activation (training compiles without "
                            "fusion)";
  auto weightType = cast<RankedTensorType>(getWeight().getType());
  bool hasBias = static_cast<bool>(getBias());
  Type biasType = hasBias ? getBias().getType()
                          : vectorType(weightType, weightType.getShape()[0]);
  std::array<bool, 3> mask = {operandNeedsGrad[0], operandNeedsGrad[1],
                              hasBias && operandNeedsGrad[2]};
  auto op = LinearBackwardOp::create(b, getLoc(), getInput().getType(),
                                     weightType, biasType, getInput(),
                                     resultGrads[0], getWeight(), mask);
  grads[0] = mask[0] ? op.getGradInput() : Value();
  grads[1] = mask[1] ? op.getGradWeight() : Value();
  if (hasBias)
    grads[2] = mask[2] ? op.getGradBias() : Value();
  return grads;
}

//===----------------------------------------------------------------------===//
// Layer normalisation, softmax
//===----------------------------------------------------------------------===//

/// layer_norm over the last dim D: `(grad_input, grad_weight, grad_bias) =
/// layer_norm_backward(grad, input, weight)` with, per row, xhat = (input -
/// mean) * rstd, g = grad * weight, grad_input = rstd * (g - mean(g) - xhat
/// * mean(g * xhat)); grad_weight = sum(grad * xhat) and grad_bias =
/// sum(grad) over the rows (native_layer_norm_backward; the statistics are
/// recomputed from input).
FailureOr<SmallVector<Value>>
LayerNormOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                      ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  if (!resultGrads[0] || !anyNeeded(operandNeedsGrad))
    return grads;
  std::optional<unsigned> weightIndex, biasIndex;
  if (getWeight())
    weightIndex = getWeightMutable()[0].getOperandNumber();
  if (getBias())
    biasIndex = getBiasMutable()[0].getOperandNumber();
  std::array<bool, 3> mask = {operandNeedsGrad[0],
                              weightIndex && operandNeedsGrad[*weightIndex],
                              biasIndex && operandNeedsGrad[*biasIndex]};
  if (!anyNeeded(mask))
    return grads;
  RankedTensorType input = getInput().getType();
  RankedTensorType vector = vectorType(input, input.getShape().back());
  auto op = LayerNormBackwardOp::create(
      b, getLoc(), input, getWeight() ? getWeight().getType() : vector,
      getBias() ? getBias().getType() : vector, resultGrads[0], getInput(),
      getWeight(), getNormalizedShapeAttr(), getEpsAttr(),
      b.getDenseBoolArrayAttr(mask));
  if (mask[0])
    grads[0] = op.getGradInput();
  if (mask[1])
    grads[*weightIndex] = op.getGradWeight();
  if (mask[2])
    grads[*biasIndex] = op.getGradBias();
  return grads;
}

/// softmax along `dim`: `grad_input = softmax_backward(grad, output)`, i.e.
/// output * (grad - sum(grad * output)) per row along `dim`
/// (_softmax_backward_data, which takes the forward's result).
FailureOr<SmallVector<Value>>
SoftmaxOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                    ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(
      *this, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        return SoftmaxBackwardOp::create(b, getLoc(), getInput().getType(),
                                         grad, getOutput(), getDimAttr());
      });
}

//===----------------------------------------------------------------------===//
// Batch normalisation
//===----------------------------------------------------------------------===//

/// Only input, weight, bias and a fused residual carry gradients; the
/// running statistics are state, not parameters.
bool NativeBatchNormOp::isDifferentiableOperand(unsigned index) {
  return index <= getBiasMutable().getOperandNumber() ||
         (getResidual() && index == getResidualMutable()[0].getOperandNumber());
}

/// Only `output`: save_mean / save_invstd are saved for the backward op and
/// running_*_out are state updates.
bool NativeBatchNormOp::isDifferentiableResult(unsigned index) {
  return index == 0;
}

/// native_batch_norm: `(grad_input, grad_weight, grad_bias) =
/// native_batch_norm_backward(grad, input, weight, save_mean, save_invstd)`
/// with grad_input = weight * invstd * (grad - mean(grad) - xhat *
/// mean(grad * xhat)), grad_weight = sum(grad * xhat), grad_bias =
/// sum(grad); the running statistics get none. With the training fusion's
/// epilogue (relu(bn(input) + residual)), grad is first relu's gradient,
/// threshold_backward(grad, output, 0), which is also the residual's.
FailureOr<SmallVector<Value>>
NativeBatchNormOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                            ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  Value grad = resultGrads[0];
  bool residualNeedsGrad =
      getResidual() &&
      operandNeedsGrad[getResidualMutable()[0].getOperandNumber()];
  if (!grad ||
      (!anyNeeded(operandNeedsGrad.take_front(3)) && !residualNeedsGrad))
    return grads;
  if (getRelu())
    grad = ThresholdBackwardOp::create(b, getLoc(), getOutput().getType(), grad,
                                       getOutput(), /*addend=*/Value(),
                                       b.getF64FloatAttr(0.0));
  if (residualNeedsGrad)
    grads[getResidualMutable()[0].getOperandNumber()] = grad;
  std::array<bool, 3> mask = {operandNeedsGrad[0], operandNeedsGrad[1],
                              operandNeedsGrad[2]};
  if (!anyNeeded(mask))
    return grads;
  auto op = NativeBatchNormBackwardOp::create(
      b, getLoc(), getInput().getType(), getWeight().getType(),
      getBias().getType(), grad, getInput(), getWeight(), getSaveMean(),
      getSaveInvstd(), /*output=*/Value(), getEpsAttr(),
      b.getDenseBoolArrayAttr(mask), /*relu=*/BoolAttr());
  for (unsigned i = 0; i < 3; ++i)
    grads[i] = mask[i] ? op->getResult(i) : Value();
  return grads;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// relu: `grad_input = threshold_backward(grad, output, 0)`, i.e. grad
/// where the result is > 0, else 0 (torch passes relu's result as `self`).
FailureOr<SmallVector<Value>>
ReluOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                 ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(
      *this, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        return ThresholdBackwardOp::create(
            b, getLoc(), getInput().getType(), grad, getOutput(),
            /*addend=*/Value(), b.getF64FloatAttr(0.0));
      });
}

/// `grad`, of a broadcasting op's result shape, as the gradient of its
/// operand `primal`: summed over the dims the op broadcast `primal` along
/// (`sum_to_size`, as autograd sums a broadcast input's gradient), in
/// primal's format (L9).
static Value sumToPrimal(OpBuilder &b, Location loc, Value grad, Value primal) {
  auto gradType = cast<RankedTensorType>(grad.getType());
  auto primalType = cast<RankedTensorType>(primal.getType());
  if (gradType.getShape() != primalType.getShape())
    grad = SumToSizeOp::create(
        b, loc,
        RankedTensorType::get(primalType.getShape(), gradType.getElementType()),
        grad);
  return toPrimalFormat(b, loc, grad, primal);
}

/// `grad * factor` of `grad`'s type (factor broadcast).
static Value multiply(OpBuilder &b, Location loc, Value grad, Value factor) {
  return MulOp::create(b, loc, grad.getType(), grad, factor);
}

/// `-grad`: `grad` times a splat -1 (a 0-d constant, broadcast).
static Value negate(OpBuilder &b, Location loc, Value grad) {
  auto scalarType = RankedTensorType::get(
      {}, cast<RankedTensorType>(grad.getType()).getElementType());
  Value minusOne = arith::ConstantOp::create(
      b, loc, scalarType, DenseElementsAttr::get(scalarType, -1.0f));
  return multiply(b, loc, grad, minusOne);
}

/// add: `grad_self = grad_other = grad`, each summed to its operand's shape
/// where add broadcast it and in its operand's format (L9).
FailureOr<SmallVector<Value>> AddOp::buildVjp(OpBuilder &b,
                                              ArrayRef<Value> resultGrads,
                                              ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  if (!resultGrads[0])
    return grads;
  for (unsigned i = 0; i < 2; ++i)
    if (operandNeedsGrad[i])
      grads[i] = sumToPrimal(b, getLoc(), resultGrads[0], getOperand(i));
  return grads;
}

/// mul: `grad_self = grad * other`, `grad_other = grad * self`, each summed
/// to its operand's shape (a squeeze-excite scale's gradient sums over H
/// and W).
FailureOr<SmallVector<Value>> MulOp::buildVjp(OpBuilder &b,
                                              ArrayRef<Value> resultGrads,
                                              ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  Value grad = resultGrads[0];
  if (!grad)
    return grads;
  for (unsigned i = 0; i < 2; ++i)
    if (operandNeedsGrad[i])
      grads[i] = sumToPrimal(b, getLoc(),
                             multiply(b, getLoc(), grad, getOperand(1 - i)),
                             getOperand(i));
  return grads;
}

/// sub: `grad_self = grad`, `grad_other = -grad`, summed to their shapes.
FailureOr<SmallVector<Value>> SubOp::buildVjp(OpBuilder &b,
                                              ArrayRef<Value> resultGrads,
                                              ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  Value grad = resultGrads[0];
  if (!grad)
    return grads;
  if (operandNeedsGrad[0])
    grads[0] = sumToPrimal(b, getLoc(), grad, getSelf());
  if (operandNeedsGrad[1])
    grads[1] = sumToPrimal(b, getLoc(), negate(b, getLoc(), grad), getOther());
  return grads;
}

/// div: `grad_self = grad / other`, `grad_other = -grad * self / (other *
/// other)` (ATen's div_tensor_other_backward), summed to their shapes.
FailureOr<SmallVector<Value>> DivOp::buildVjp(OpBuilder &b,
                                              ArrayRef<Value> resultGrads,
                                              ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  Value grad = resultGrads[0];
  if (!grad)
    return grads;
  Location loc = getLoc();
  if (operandNeedsGrad[0])
    grads[0] = sumToPrimal(
        b, loc, DivOp::create(b, loc, grad.getType(), grad, getOther()),
        getSelf());
  if (operandNeedsGrad[1]) {
    Value numerator = multiply(b, loc, negate(b, loc, grad), getSelf());
    Value square =
        MulOp::create(b, loc, getOther().getType(), getOther(), getOther());
    grads[1] = sumToPrimal(
        b, loc, DivOp::create(b, loc, grad.getType(), numerator, square),
        getOther());
  }
  return grads;
}

/// The VJP of an eltwise function: `grad_input = <op>_backward(grad, x)`
/// with the forward's attributes (sigmoid's takes its output instead).
template <typename BackwardOp, typename ForwardOp, typename... Attributes>
static SmallVector<Value> eltwiseVjp(ForwardOp op, OpBuilder &b,
                                     ArrayRef<Value> resultGrads,
                                     ArrayRef<bool> operandNeedsGrad,
                                     Value self, Attributes... attributes) {
  return firstOperandVjp(
      op, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        return BackwardOp::create(b, op.getLoc(), op.getInput().getType(), grad,
                                  self, attributes...);
      });
}

/// sigmoid: `grad_input = sigmoid_backward(grad, output)` = grad * (1 - y)
/// * y.
FailureOr<SmallVector<Value>>
SigmoidOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                    ArrayRef<bool> operandNeedsGrad) {
  return eltwiseVjp<SigmoidBackwardOp>(*this, b, resultGrads, operandNeedsGrad,
                                       getOutput());
}

/// silu: `grad_input = silu_backward(grad, input)`.
FailureOr<SmallVector<Value>>
SiluOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                 ArrayRef<bool> operandNeedsGrad) {
  return eltwiseVjp<SiluBackwardOp>(*this, b, resultGrads, operandNeedsGrad,
                                    getInput());
}

/// hardswish: `grad_input = hardswish_backward(grad, input)`.
FailureOr<SmallVector<Value>>
HardswishOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                      ArrayRef<bool> operandNeedsGrad) {
  return eltwiseVjp<HardswishBackwardOp>(*this, b, resultGrads,
                                         operandNeedsGrad, getInput());
}

/// hardsigmoid: `grad_input = hardsigmoid_backward(grad, input)` with the
/// forward's alpha and beta.
FailureOr<SmallVector<Value>>
HardsigmoidOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                        ArrayRef<bool> operandNeedsGrad) {
  return eltwiseVjp<HardsigmoidBackwardOp>(*this, b, resultGrads,
                                           operandNeedsGrad, getInput(),
                                           getAlphaAttr(), getBetaAttr());
}

/// clamp: `grad_input = clamp_backward(grad, input)`, grad where min <=
/// input <= max, as autograd's clamp_backward (ReLU6's gradient).
FailureOr<SmallVector<Value>>
ClampOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                  ArrayRef<bool> operandNeedsGrad) {
  return eltwiseVjp<ClampBackwardOp>(*this, b, resultGrads, operandNeedsGrad,
                                     getInput(), getMinAttr(), getMaxAttr());
}

/// gelu: `grad_input = gelu_backward(grad, input)`, same approximation.
FailureOr<SmallVector<Value>>
GeluOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                 ArrayRef<bool> operandNeedsGrad) {
  return eltwiseVjp<GeluBackwardOp>(*this, b, resultGrads, operandNeedsGrad,
                                    getInput(), getApproximateAttr());
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// max_pool2d keeps no argmax, so its gradient cannot be scattered.
FailureOr<SmallVector<Value>>
MaxPool2dOp::buildVjp(OpBuilder &, ArrayRef<Value>, ArrayRef<bool>) {
  return emitOpError() << "has no VJP (it keeps no indices of its maxima): "
                          "use memfmt.max_pool2d_with_indices, which "
                          "memfmt-training-forward converts it to";
}

/// max_pool2d_with_indices: `grad_input =
/// max_pool2d_with_indices_backward(grad, input, indices)`, each gradient
/// added at its window's argmax; the indices get none.
FailureOr<SmallVector<Value>>
MaxPool2dWithIndicesOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                                 ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(
      *this, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        return MaxPool2dWithIndicesBackwardOp::create(
            b, getLoc(), getInput().getType(), grad, getInput(), getIndices(),
            getKernelSizeAttr(), getStrideAttr(), getPaddingAttr(),
            getDilationAttr(), getCeilModeAttr());
      });
}

/// avg_pool2d: `grad_input = avg_pool2d_backward(grad, input)`, each
/// gradient spread over its window by the forward's divisor.
FailureOr<SmallVector<Value>>
AvgPool2dOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                      ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(
      *this, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        return AvgPool2dBackwardOp::create(
            b, getLoc(), getInput().getType(), grad, getInput(),
            getKernelSizeAttr(), getStrideAttr(), getPaddingAttr(),
            getCeilModeAttr(), getCountIncludePadAttr());
      });
}

/// adaptive_avg_pool2d: `grad_input = adaptive_avg_pool2d_backward(grad,
/// input)`, each gradient spread evenly over its adaptive window.
FailureOr<SmallVector<Value>>
AdaptiveAvgPool2dOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                              ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(
      *this, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        return AdaptiveAvgPool2dBackwardOp::create(
            b, getLoc(), getInput().getType(), grad, getInput());
      });
}

//===----------------------------------------------------------------------===//
// Reshapes and conversions (L7, L9)
//===----------------------------------------------------------------------===//

/// The gradient of a reshape of `input` (flatten, reshape; L7 keeps NCHW
/// order): the inverse reshape of `grad` to input's shape, contiguous, then
/// in input's format (L9; free under L3, as for ResNet's `Nx2048x1x1`).
static Value buildInverseReshape(OpBuilder &b, Location loc, Value grad,
                                 Value input) {
  auto inputType = cast<RankedTensorType>(input.getType());
  auto contiguousType =
      RankedTensorType::get(inputType.getShape(), inputType.getElementType());
  Value reshaped = ReshapeOp::create(b, loc, contiguousType, grad);
  return toPrimalFormat(b, loc, reshaped, input);
}

/// flatten: `grad_input = reshape(grad, input.shape)`.
FailureOr<SmallVector<Value>>
FlattenOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                    ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(
      *this, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        return buildInverseReshape(b, getLoc(), grad, getInput());
      });
}

/// reshape: `grad_input = reshape(grad, input.shape)`.
FailureOr<SmallVector<Value>>
ReshapeOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                    ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(
      *this, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        return buildInverseReshape(b, getLoc(), grad, getInput());
      });
}

/// contiguous (a conversion): the inverse conversion, `grad_input = grad`
/// in input's format (L9; no op at all where L3 holds).
FailureOr<SmallVector<Value>>
ContiguousOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                       ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(*this, resultGrads, operandNeedsGrad,
                         [&](Value grad) -> Value {
                           return toPrimalFormat(b, getLoc(), grad, getInput());
                         });
}

/// clone (a copy): `grad_input = grad` in input's format.
FailureOr<SmallVector<Value>>
CloneOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                  ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(*this, resultGrads, operandNeedsGrad,
                         [&](Value grad) -> Value {
                           return toPrimalFormat(b, getLoc(), grad, getInput());
                         });
}

//===----------------------------------------------------------------------===//
// Data movement: permute, channel_shuffle, cat, chunk, slice
//===----------------------------------------------------------------------===//

/// The contiguous type of `like`'s shape and element type: what a VJP
/// gives a result whose layout the layout passes choose afterwards (they
/// run over the whole step, L9).
static RankedTensorType contiguousType(Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  return RankedTensorType::get(type.getShape(), type.getElementType());
}

/// `dim` of a `rank`-D tensor, negative dims counted from the end.
static int64_t normalizedDim(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

/// A splat 0 of `shape`: the gradient of elements nothing reads (filled once
/// at load, as every splat constant).
static Value zeros(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type elementType) {
  auto type = RankedTensorType::get(shape, elementType);
  return arith::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type, b.getFloatAttr(elementType, 0.0)));
}

/// permute: `grad_input = permute(grad, inverse(dims))`.
FailureOr<SmallVector<Value>>
PermuteOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                    ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(
      *this, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        ArrayRef<int64_t> dims = getDims();
        SmallVector<int64_t> inverse(dims.size());
        for (auto [k, dim] : llvm::enumerate(dims))
          inverse[dim] = k;
        Value permuted =
            PermuteOp::create(b, getLoc(), contiguousType(getInput()), grad,
                              b.getDenseI64ArrayAttr(inverse));
        return toPrimalFormat(b, getLoc(), permuted, getInput());
      });
}

/// channel_shuffle with g groups sends input channel i * (C / g) + j to
/// output channel j * g + i; its inverse is the shuffle with C / g groups.
FailureOr<SmallVector<Value>>
ChannelShuffleOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                           ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(
      *this, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        int64_t channels = getInput().getType().getShape()[1];
        Value shuffled = ChannelShuffleOp::create(
            b, getLoc(), contiguousType(getInput()), grad,
            b.getI64IntegerAttr(channels / getGroups()));
        return toPrimalFormat(b, getLoc(), shuffled, getInput());
      });
}

/// cat: each operand's gradient is its slice of `grad` along `dim`.
FailureOr<SmallVector<Value>> CatOp::buildVjp(OpBuilder &b,
                                              ArrayRef<Value> resultGrads,
                                              ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  Value grad = resultGrads[0];
  if (!grad)
    return grads;
  int64_t dim = normalizedDim(getDim(), getOutput().getType().getRank());
  int64_t offset = 0;
  for (auto [i, operand] : llvm::enumerate(getTensors())) {
    int64_t size = cast<RankedTensorType>(operand.getType()).getShape()[dim];
    if (operandNeedsGrad[i]) {
      Value piece =
          SliceOp::create(b, getLoc(), contiguousType(operand), grad,
                          b.getI64IntegerAttr(dim), b.getI64IntegerAttr(offset),
                          b.getI64IntegerAttr(offset + size), IntegerAttr());
      grads[i] = toPrimalFormat(b, getLoc(), piece, operand);
    }
    offset += size;
  }
  return grads;
}

/// chunk: `grad_input = cat(grad of each piece)`, zeros for a piece whose
/// result has no gradient.
FailureOr<SmallVector<Value>>
ChunkOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                  ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  if (!operandNeedsGrad[0] ||
      llvm::all_of(resultGrads, [](Value grad) { return !grad; }))
    return grads;
  SmallVector<Value> pieces;
  for (auto [grad, piece] : llvm::zip(resultGrads, getOutputs())) {
    auto type = cast<RankedTensorType>(piece.getType());
    pieces.push_back(
        grad ? grad
             : zeros(b, getLoc(), type.getShape(), type.getElementType()));
  }
  int64_t dim = normalizedDim(getDim(), getInput().getType().getRank());
  Value whole = CatOp::create(b, getLoc(), contiguousType(getInput()), pieces,
                              b.getI64IntegerAttr(dim));
  grads[0] = toPrimalFormat(b, getLoc(), whole, getInput());
  return grads;
}

/// slice: `grad_input` is `grad` at start, start + step, ... along `dim`
/// and 0 elsewhere (ATen's slice_backward). With unit step that is
/// `cat(zeros, grad, zeros)`; with a larger step each element of `grad` is
/// first followed by step - 1 zeros along `dim` (a unit dim inserted after
/// `dim`, a cat with zeros along it, the two dims merged, cut where the
/// input ends).
FailureOr<SmallVector<Value>>
SliceOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                  ArrayRef<bool> operandNeedsGrad) {
  SmallVector<Value> grads = noGradients(*this);
  Value grad = resultGrads[0];
  if (!grad || !operandNeedsGrad[0])
    return grads;
  RankedTensorType inputType = getInput().getType();
  Type elementType = inputType.getElementType();
  int64_t dim = normalizedDim(getDim(), inputType.getRank());
  // 0 <= start < end <= size, step >= 1 (verifier).
  int64_t start = getStart(), step = getStep();
  int64_t size = inputType.getShape()[dim];
  auto typeOf = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elementType);
  };
  Value placed = grad;
  SmallVector<int64_t> shape(getOutput().getType().getShape());
  if (step != 1) {
    const int64_t count = shape[dim];
    SmallVector<int64_t> split(shape);
    split.insert(split.begin() + dim + 1, 1);
    Value column = ReshapeOp::create(b, getLoc(), typeOf(split), grad);
    SmallVector<int64_t> gap(split), spread(split);
    gap[dim + 1] = step - 1;
    spread[dim + 1] = step;
    Value interleaved =
        CatOp::create(b, getLoc(), typeOf(spread),
                      ValueRange{column, zeros(b, getLoc(), gap, elementType)},
                      b.getI64IntegerAttr(dim + 1));
    shape[dim] = count * step;
    placed = ReshapeOp::create(b, getLoc(), typeOf(shape), interleaved);
    if (start + shape[dim] > size) {
      shape[dim] = size - start;
      placed = SliceOp::create(b, getLoc(), typeOf(shape), placed,
                               b.getI64IntegerAttr(dim), b.getI64IntegerAttr(0),
                               b.getI64IntegerAttr(shape[dim]), IntegerAttr());
    }
  }
  const int64_t placedEnd = start + shape[dim];
  SmallVector<Value> parts;
  auto zerosAlong = [&](int64_t length) {
    SmallVector<int64_t> zeroShape(inputType.getShape());
    zeroShape[dim] = length;
    parts.push_back(zeros(b, getLoc(), zeroShape, elementType));
  };
  if (start > 0)
    zerosAlong(start);
  parts.push_back(placed);
  if (placedEnd < size)
    zerosAlong(size - placedEnd);
  Value whole = parts.size() == 1
                    ? placed
                    : CatOp::create(b, getLoc(), contiguousType(getInput()),
                                    parts, b.getI64IntegerAttr(dim));
  grads[0] = toPrimalFormat(b, getLoc(), whole, getInput());
  return grads;
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

/// cross_entropy_loss (mean): `grad_self = cross_entropy_loss_backward(grad,
/// self, target)` = grad * (softmax(self) - onehot(target)) / N; the
/// integer targets get none.
FailureOr<SmallVector<Value>>
CrossEntropyLossOp::buildVjp(OpBuilder &b, ArrayRef<Value> resultGrads,
                             ArrayRef<bool> operandNeedsGrad) {
  return firstOperandVjp(
      *this, resultGrads, operandNeedsGrad, [&](Value grad) -> Value {
        return CrossEntropyLossBackwardOp::create(
            b, getLoc(), getSelf().getType(), grad, getSelf(), getTarget());
      });
}
