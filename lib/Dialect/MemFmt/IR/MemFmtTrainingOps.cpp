//===- MemFmtTrainingOps.cpp - memfmt training ops ------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers and layout declarations of the training ops
// (MemFmtTrainingOps.td): training batch norm, the backward ops (layer
// norm's among them), the loss and the SGD update. Shapes follow the forward ops' rules (OpVerification.h
// shares the convolution and pooling ones). Every gradient and every
// `grad_output` must have its primal's memory format (L9), and each
// gradient result declares the operand whose format it takes
// (`getPreservedOperand`), which is how memfmt-propagate-channels-last
// carries formats through a training graph.
//
// Mixed precision (MixedPrecisionOpInterface): in a bf16 training step the
// activations and their gradients are bf16 while a batch norm's parameters
// and statistics, the weight and bias gradients, the loss and the SGD
// update stay f32, as PyTorch's autocast keeps them.
//
//===----------------------------------------------------------------------===//

#include "OpVerification.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cmath>

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::detail;
namespace layout = ::memfmt::layout;

/// Expects every value of `values` to have the 1-D shape `[size]`.
static LogicalResult
verifyChannelVectors(Operation *op, int64_t size,
                     ArrayRef<std::pair<Value, StringRef>> values) {
  for (auto [value, name] : values)
    if (failed(verifyShape(op, tensorType(value), {size}, name)))
      return failure();
  return success();
}

/// True if `type` is dense in both formats (L3: one channel, or a 1x1
/// plane), so propagation may have treated it as either.
static bool inBothFormats(RankedTensorType type) {
  return isContiguous(type) &&
         layout::isChannelsLastContiguous(type.getShape(), getStrides(type));
}

/// L9: the format of a gradient whose primal is `primal` (the primal's),
/// or none when the primal is in both formats: the forward result it
/// stands for may then be in either.
static std::optional<MemoryFormat> gradientFormatOf(Value primal) {
  RankedTensorType type = tensorType(primal);
  if (inBothFormats(type))
    return std::nullopt;
  return getMemoryFormat(type);
}

/// Verifies that gradient operand `index` of `op` has the format
/// getGradientOperandFormat requires of it.
static LogicalResult verifyGradientOperand(LayoutOpInterface op, unsigned index,
                                           StringRef name,
                                           StringRef primalName) {
  std::optional<MemoryFormat> format = op.getGradientOperandFormat(index);
  if (!format)
    return success();
  return verifyGradientFormat(op, op->getOperand(index), name, *format,
                              primalName);
}

/// The checks of an op whose gradient `grad` is laid out like its primal
/// `self` (same shape, L9), as is its incoming gradient `gradOutput` (the
/// gradient of the forward result, whose format is `self`'s by L5/L6;
/// either format when `self` is in both).
static LogicalResult verifyGradientsOf(Operation *op, Value self,
                                       StringRef selfName,
                                       OpOperand &gradOutput,
                                       StringRef gradOutputName, Value grad,
                                       StringRef gradName) {
  if (failed(verifyShape(op, tensorType(grad), tensorType(self).getShape(),
                         gradName)) ||
      failed(verifyGradientOperand(
          cast<LayoutOpInterface>(op), gradOutput.getOperandNumber(),
          gradOutputName, ("'" + selfName + "'").str())) ||
      failed(verifyGradientFormat(op, grad, gradName, self, selfName)))
    return failure();
  return verifyResultFormats(op);
}

/// getGradientOperandFormat of an op whose incoming gradient `gradOutput`
/// takes `self`'s format.
static std::optional<MemoryFormat>
gradientOperandFormat(unsigned index, OpOperand &gradOutput, Value self) {
  if (index != gradOutput.getOperandNumber())
    return std::nullopt;
  return gradientFormatOf(self);
}

//===----------------------------------------------------------------------===//
// NativeBatchNormOp, NativeBatchNormBackwardOp
//===----------------------------------------------------------------------===//

/// The input of a batch norm: rank >= 2 (N, C, ...). Returns C.
static FailureOr<int64_t> verifyBatchNormInput(Operation *op,
                                               RankedTensorType input) {
  if (input.getRank() < 2)
    return op->emitOpError()
           << "expects an input of rank >= 2 (N, C, ...), got rank "
           << input.getRank();
  return input.getShape()[1];
}

LogicalResult NativeBatchNormOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  RankedTensorType input = getInput().getType();
  FailureOr<int64_t> channels = verifyBatchNormInput(*this, input);
  if (failed(channels) ||
      failed(verifyChannelVectors(*this, *channels,
                                  {{getWeight(), "weight"},
                                   {getBias(), "bias"},
                                   {getRunningMean(), "running_mean"},
                                   {getRunningVar(), "running_var"},
                                   {getSaveMean(), "save_mean"},
                                   {getSaveInvstd(), "save_invstd"},
                                   {getRunningMeanOut(), "running_mean_out"},
                                   {getRunningVarOut(), "running_var_out"}})))
    return failure();
  if (getEps().convertToDouble() < 0)
    return emitOpError() << "expects 'eps' >= 0";
  // ATen: the unbiased running variance divides by n - 1 (no channels, no
  // statistics).
  if (*channels > 0 && input.getNumElements() / *channels <= 1)
    return emitOpError() << "expects more than 1 value per channel in "
                            "training mode (the unbiased variance divides by "
                            "n - 1), got input shape "
                         << formatList(input.getShape());
  if (failed(verifyShape(*this, getOutput().getType(), input.getShape(),
                         "result")) ||
      (getResidual() && failed(verifyShape(*this, tensorType(getResidual()),
                                           input.getShape(), "residual"))))
    return failure();
  return verifyResultFormats(*this);
}

bool NativeBatchNormOp::propagatesChannelsLast() { return true; }

/// The running statistics may be updated in place (Kernels.def: each
/// running_*_out may be its running_*).
SmallVector<OpOperand *>
NativeBatchNormOp::getInPlaceOperands(unsigned resultIndex) {
  if (resultIndex == cast<OpResult>(getRunningMeanOut()).getResultNumber())
    return {&getRunningMeanMutable()};
  if (resultIndex == cast<OpResult>(getRunningVarOut()).getResultNumber())
    return {&getRunningVarMutable()};
  return {};
}

/// The statistics are reductions over the input: no operand but the one
/// updated in place may share its buffer.
bool NativeBatchNormOp::readsOperandsElementwise() { return false; }

LogicalResult NativeBatchNormBackwardOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  RankedTensorType input = getInput().getType();
  FailureOr<int64_t> channels = verifyBatchNormInput(*this, input);
  if (failed(channels) ||
      failed(verifyChannelVectors(*this, *channels,
                                  {{getWeight(), "weight"},
                                   {getSaveMean(), "save_mean"},
                                   {getSaveInvstd(), "save_invstd"},
                                   {getGradWeight(), "grad_weight"},
                                   {getGradBias(), "grad_bias"}})) ||
      failed(verifyShape(*this, getGradOut().getType(), input.getShape(),
                         "grad_out")))
    return failure();
  if (getEps().convertToDouble() < 0)
    return emitOpError() << "expects 'eps' >= 0";
  // relu's gradient needs the forward's output, and nothing else reads it.
  if (getRelu() != static_cast<bool>(getOutput()))
    return emitOpError() << "expects the forward's 'output' operand exactly "
                            "when 'relu' is set (relu's gradient reads it)";
  if (getOutput() && failed(verifyShape(*this, tensorType(getOutput()),
                                        input.getShape(), "output")))
    return failure();
  return verifyGradientsOf(*this, getInput(), "input", getGradOutMutable(),
                           "grad_out", getGradInput(), "grad_input");
}

std::optional<MemoryFormat>
NativeBatchNormBackwardOp::getGradientOperandFormat(unsigned index) {
  return gradientOperandFormat(index, getGradOutMutable(), getInput());
}

/// L9: grad_input takes input's format (grad_weight and grad_bias are 1-D).
std::optional<unsigned>
NativeBatchNormBackwardOp::getPreservedOperand(unsigned resultIndex) {
  if (resultIndex == 0)
    return getInputMutable().getOperandNumber();
  return std::nullopt;
}

bool NativeBatchNormOp::isF32Operand(unsigned index) {
  // The input and the residual are activations.
  return index != getInputMutable().getOperandNumber() &&
         !(getResidual() &&
           index == getResidualMutable()[0].getOperandNumber());
}

bool NativeBatchNormOp::isF32Result(unsigned index) {
  return index != cast<OpResult>(getOutput()).getResultNumber();
}

bool NativeBatchNormBackwardOp::isF32Operand(unsigned index) {
  return index == getWeightMutable().getOperandNumber() ||
         index == getSaveMeanMutable().getOperandNumber() ||
         index == getSaveInvstdMutable().getOperandNumber();
}

bool NativeBatchNormBackwardOp::isF32Result(unsigned index) {
  return index != cast<OpResult>(getGradInput()).getResultNumber();
}

//===----------------------------------------------------------------------===//
// ConvolutionBackwardOp, LinearBackwardOp
//===----------------------------------------------------------------------===//

// The weight is read in the compute type (a bf16 step reads a bf16 copy of
// its f32 weight); the weight and bias gradients are f32 for the update.

bool ConvolutionBackwardOp::isF32Operand(unsigned) { return false; }

bool ConvolutionBackwardOp::isF32Result(unsigned index) {
  return index != cast<OpResult>(getGradInput()).getResultNumber();
}

bool LinearBackwardOp::isF32Operand(unsigned) { return false; }

bool LinearBackwardOp::isF32Result(unsigned index) {
  return index != cast<OpResult>(getGradInput()).getResultNumber();
}

LogicalResult ConvolutionBackwardOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  RankedTensorType input = getInput().getType();
  RankedTensorType weight = getWeight().getType();
  FailureOr<SmallVector<int64_t, 4>> shape =
      verifyConv2dShape(*this, input, weight, /*bias=*/nullptr, getStride(),
                        getPadding(), getDilation(), getGroups());
  if (failed(shape) ||
      failed(verifyShape(*this, getGradOutput().getType(), *shape,
                         "grad_output")) ||
      failed(verifyShape(*this, getGradInput().getType(), input.getShape(),
                         "grad_input")) ||
      failed(verifyShape(*this, getGradWeight().getType(), weight.getShape(),
                         "grad_weight")) ||
      failed(verifyShape(*this, getGradBias().getType(), {weight.getShape()[0]},
                         "grad_bias")))
    return failure();
  if (failed(verifyGradientOperand(
          *this, getGradOutputMutable().getOperandNumber(), "grad_output",
          "the forward result (L5 of input and weight)")))
    return failure();
  if (failed(verifyGradientFormat(*this, getGradInput(), "grad_input",
                                  getInput(), "input")) ||
      failed(verifyGradientFormat(*this, getGradWeight(), "grad_weight",
                                  getWeight(), "weight")))
    return failure();
  return verifyResultFormats(*this);
}

/// L9: grad_output has the forward result's format, channels-last if the
/// input or the weight is (L5); an operand in both formats (L3: one input
/// channel, a 1x1 kernel) may have made it either, as propagation may have
/// treated it as either.
std::optional<MemoryFormat>
ConvolutionBackwardOp::getGradientOperandFormat(unsigned index) {
  if (index != getGradOutputMutable().getOperandNumber())
    return std::nullopt;
  RankedTensorType input = getInput().getType();
  RankedTensorType weight = getWeight().getType();
  if (isChannelsLast(input) || isChannelsLast(weight))
    return MemoryFormat::ChannelsLast;
  if (inBothFormats(input) || inBothFormats(weight))
    return std::nullopt;
  return MemoryFormat::Contiguous;
}

/// L9: grad_input takes input's format, grad_weight the weight's.
std::optional<unsigned>
ConvolutionBackwardOp::getPreservedOperand(unsigned resultIndex) {
  if (resultIndex == 0)
    return getInputMutable().getOperandNumber();
  if (resultIndex == 1)
    return getWeightMutable().getOperandNumber();
  return std::nullopt;
}

LogicalResult LinearBackwardOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> w = getWeight().getType().getShape();
  if (in.empty() || in.back() != w[1])
    return emitOpError() << "input " << formatList(in) << " must have weight's "
                         << w[1] << " features in its last dim";
  SmallVector<int64_t> outShape(in);
  outShape.back() = w[0];
  if (failed(verifyShape(*this, getGradOutput().getType(), outShape,
                         "grad_output")) ||
      failed(verifyShape(*this, getGradWeight().getType(), w, "grad_weight")) ||
      failed(
          verifyShape(*this, getGradBias().getType(), {w[0]}, "grad_bias")) ||
      failed(verifyGradientFormat(*this, getGradWeight(), "grad_weight",
                                  getWeight(), "weight")))
    return failure();
  return verifyGradientsOf(*this, getInput(), "input", getGradOutputMutable(),
                           "grad_output", getGradInput(), "grad_input");
}

/// 2-D tensors have one format.
std::optional<MemoryFormat>
LinearBackwardOp::getGradientOperandFormat(unsigned) {
  return std::nullopt;
}

/// L9: grad_input takes input's format, grad_weight the weight's.
std::optional<unsigned>
LinearBackwardOp::getPreservedOperand(unsigned resultIndex) {
  if (resultIndex == 0)
    return getInputMutable().getOperandNumber();
  if (resultIndex == 1)
    return getWeightMutable().getOperandNumber();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// LayerNormBackwardOp
//===----------------------------------------------------------------------===//

LogicalResult LayerNormBackwardOp::verify() {
  RankedTensorType input = getInput().getType();
  if (failed(verifyCommon(*this)) ||
      failed(verifyLayerNorm(*this, input, getNormalizedShape(),
                             getEps().convertToDouble(), getWeight())))
    return failure();
  if (failed(verifyShape(*this, getGradOutput().getType(), input.getShape(),
                         "grad_output")) ||
      failed(verifyChannelVectors(*this, input.getShape().back(),
                                  {{getGradWeight(), "grad_weight"},
                                   {getGradBias(), "grad_bias"}})))
    return failure();
  return verifyGradientsOf(*this, getInput(), "input", getGradOutputMutable(),
                           "grad_output", getGradInput(), "grad_input");
}

std::optional<MemoryFormat>
LayerNormBackwardOp::getGradientOperandFormat(unsigned index) {
  return gradientOperandFormat(index, getGradOutputMutable(), getInput());
}

/// L9: grad_input takes input's format; the [D] gradients have one.
std::optional<unsigned>
LayerNormBackwardOp::getPreservedOperand(unsigned resultIndex) {
  if (resultIndex == 0)
    return getInputMutable().getOperandNumber();
  return std::nullopt;
}

/// The weight is read in the compute type, as the forward reads it; the
/// weight and bias gradients are f32 for the update.
bool LayerNormBackwardOp::isF32Operand(unsigned) { return false; }

bool LayerNormBackwardOp::isF32Result(unsigned index) {
  return index != cast<OpResult>(getGradInput()).getResultNumber();
}

//===----------------------------------------------------------------------===//
// SoftmaxBackwardOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxBackwardOp::verify() {
  ArrayRef<int64_t> shape = getOutput().getType().getShape();
  if (failed(verifyCommon(*this)) ||
      failed(verifySoftmaxDim(*this, shape, getDimAttr().getInt(), "output")) ||
      failed(
          verifyShape(*this, getGradOutput().getType(), shape, "grad_output")))
    return failure();
  return verifyGradientsOf(*this, getOutput(), "output", getGradOutputMutable(),
                           "grad_output", getGradInput(), "grad_input");
}

std::optional<MemoryFormat>
SoftmaxBackwardOp::getGradientOperandFormat(unsigned index) {
  return gradientOperandFormat(index, getGradOutputMutable(), getOutput());
}

/// L9: grad_input takes the output's format, which is the input's (L5).
std::optional<unsigned> SoftmaxBackwardOp::getPreservedOperand(unsigned) {
  return getOutputMutable().getOperandNumber();
}

//===----------------------------------------------------------------------===//
// ThresholdBackwardOp, pooling backward
//===----------------------------------------------------------------------===//

LogicalResult ThresholdBackwardOp::verify() {
  if (failed(verifyCommon(*this)) ||
      failed(verifyShape(*this, getGradOutput().getType(),
                         getSelf().getType().getShape(), "grad_output")))
    return failure();
  // The addend is a gradient of self's shape and element type in self's
  // format (L9), like grad_output; where self is in both formats (C = 1,
  // H = W = 1) the two may carry either one's strides.
  MutableOperandRange addend = getAddendMutable();
  if (!addend.empty()) {
    auto type = cast<RankedTensorType>(addend.begin()->get().getType());
    if (failed(
            verifyShape(*this, type, getSelf().getType().getShape(), "addend")))
      return failure();
    if (type.getElementType() != getGradOutput().getType().getElementType())
      return emitOpError() << "expects 'addend' of grad_output's element type "
                           << getGradOutput().getType().getElementType()
                           << ", got " << type.getElementType();
    if (failed(verifyGradientOperand(cast<LayoutOpInterface>(getOperation()),
                                     addend.begin()->getOperandNumber(),
                                     "addend", "'self'")))
      return failure();
  }
  return verifyGradientsOf(*this, getSelf(), "self", getGradOutputMutable(),
                           "grad_output", getGradInput(), "grad_input");
}

std::optional<unsigned> ThresholdBackwardOp::getPreservedOperand(unsigned) {
  return getSelfMutable().getOperandNumber();
}

/// L9: grad_output and the addend summed with it take self's format.
std::optional<MemoryFormat>
ThresholdBackwardOp::getGradientOperandFormat(unsigned index) {
  MutableOperandRange addend = getAddendMutable();
  if (!addend.empty() && index == addend.begin()->getOperandNumber())
    return gradientFormatOf(getSelf());
  return gradientOperandFormat(index, getGradOutputMutable(), getSelf());
}

LogicalResult mlir::memfmt::detail::verifyEltwiseBackward(Operation *op) {
  OpOperand &gradOutput = op->getOpOperand(0);
  Value self = op->getOperand(1);
  if (failed(verifyCommon(op)) || failed(verifyEltwiseAttributes(op)) ||
      failed(verifyShape(op, tensorType(gradOutput.get()),
                         tensorType(self).getShape(), "grad_output")))
    return failure();
  StringRef selfName = isa<SigmoidBackwardOp>(op) ? "output" : "self";
  return verifyGradientsOf(op, self, selfName, gradOutput, "grad_output",
                           op->getResult(0), "grad_input");
}

std::optional<MemoryFormat>
mlir::memfmt::detail::eltwiseBackwardGradientFormat(Operation *op,
                                                    unsigned index) {
  return gradientOperandFormat(index, op->getOpOperand(0), op->getOperand(1));
}

//===----------------------------------------------------------------------===//
// SumToSizeOp
//===----------------------------------------------------------------------===//

LogicalResult SumToSizeOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> output = getOutput().getType().getShape();
  bool broadcasts = output.size() <= input.size();
  for (size_t d = 0; broadcasts && d < output.size(); ++d) {
    int64_t size = output[d],
            inputSize = input[input.size() - output.size() + d];
    broadcasts = size == inputSize || size == 1;
  }
  if (!broadcasts)
    return emitOpError() << "result shape " << formatList(output)
                         << " is not a shape the input " << formatList(input)
                         << " broadcasts from (each dim, aligned to the "
                            "right, the input's size or 1)";
  return verifyResultFormats(*this);
}

LogicalResult MaxPool2dWithIndicesBackwardOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  FailureOr<SmallVector<int64_t, 4>> shape = verifyPool2dShape(
      *this, getSelf().getType(), getKernelSize(), getStride(), getPadding(),
      getDilation(), getCeilMode());
  if (failed(shape) ||
      failed(verifyShape(*this, getGradOutput().getType(), *shape,
                         "grad_output")) ||
      failed(verifyShape(*this, getIndices().getType(), *shape, "indices")))
    return failure();
  return verifyGradientsOf(*this, getSelf(), "self", getGradOutputMutable(),
                           "grad_output", getGradInput(), "grad_input");
}

std::optional<unsigned>
MaxPool2dWithIndicesBackwardOp::getPreservedOperand(unsigned) {
  return getSelfMutable().getOperandNumber();
}

std::optional<MemoryFormat>
MaxPool2dWithIndicesBackwardOp::getGradientOperandFormat(unsigned index) {
  return gradientOperandFormat(index, getGradOutputMutable(), getSelf());
}

LogicalResult AvgPool2dBackwardOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  FailureOr<SmallVector<int64_t, 4>> shape =
      verifyPool2dShape(*this, getSelf().getType(), getKernelSize(),
                        getStride(), getPadding(), {1, 1}, getCeilMode());
  if (failed(shape) || failed(verifyShape(*this, getGradOutput().getType(),
                                          *shape, "grad_output")))
    return failure();
  return verifyGradientsOf(*this, getSelf(), "self", getGradOutputMutable(),
                           "grad_output", getGradInput(), "grad_input");
}

std::optional<unsigned> AvgPool2dBackwardOp::getPreservedOperand(unsigned) {
  return getSelfMutable().getOperandNumber();
}

std::optional<MemoryFormat>
AvgPool2dBackwardOp::getGradientOperandFormat(unsigned index) {
  return gradientOperandFormat(index, getGradOutputMutable(), getSelf());
}

LogicalResult AdaptiveAvgPool2dBackwardOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> in = getSelf().getType().getShape();
  ArrayRef<int64_t> out = getGradOutput().getType().getShape();
  if (out[0] != in[0] || out[1] != in[1] || out[2] < 1 || out[3] < 1)
    return emitOpError() << "expects grad_output shape [" << in[0] << ", "
                         << in[1] << ", OH >= 1, OW >= 1], got "
                         << formatList(out);
  return verifyGradientsOf(*this, getSelf(), "self", getGradOutputMutable(),
                           "grad_output", getGradInput(), "grad_input");
}

std::optional<unsigned>
AdaptiveAvgPool2dBackwardOp::getPreservedOperand(unsigned) {
  return getSelfMutable().getOperandNumber();
}

std::optional<MemoryFormat>
AdaptiveAvgPool2dBackwardOp::getGradientOperandFormat(unsigned index) {
  return gradientOperandFormat(index, getGradOutputMutable(), getSelf());
}

//===----------------------------------------------------------------------===//
// CrossEntropyLossOp, CrossEntropyLossBackwardOp
//===----------------------------------------------------------------------===//

/// Logits [N, C] and targets [N].
static LogicalResult verifyLossOperands(Operation *op, Value self,
                                        Value target) {
  int64_t batch = tensorType(self).getShape()[0];
  return verifyShape(op, tensorType(target), {batch}, "target");
}

LogicalResult CrossEntropyLossOp::verify() {
  if (failed(verifyCommon(*this)) ||
      failed(verifyLossOperands(*this, getSelf(), getTarget())))
    return failure();
  if (getSelf().getType().getShape()[0] == 0)
    return emitOpError() << "expects a non-empty batch (the mean of no "
                            "losses is undefined)";
  return success();
}

LogicalResult CrossEntropyLossBackwardOp::verify() {
  if (failed(verifyCommon(*this)) ||
      failed(verifyLossOperands(*this, getSelf(), getTarget())) ||
      failed(verifyShape(*this, getGradInput().getType(),
                         getSelf().getType().getShape(), "grad_input")) ||
      failed(verifyGradientFormat(*this, getGradInput(), "grad_input",
                                  getSelf(), "self")))
    return failure();
  return verifyResultFormats(*this);
}

/// 2-D tensors have one format.
std::optional<MemoryFormat>
CrossEntropyLossBackwardOp::getGradientOperandFormat(unsigned) {
  return std::nullopt;
}

std::optional<unsigned>
CrossEntropyLossBackwardOp::getPreservedOperand(unsigned) {
  return getSelfMutable().getOperandNumber();
}

// The loss is computed in f32 from f32 logits (autocast's rule for
// log_softmax and nll_loss).
bool CrossEntropyLossOp::isF32Operand(unsigned) { return true; }
bool CrossEntropyLossOp::isF32Result(unsigned) { return true; }
bool CrossEntropyLossBackwardOp::isF32Operand(unsigned) { return true; }
bool CrossEntropyLossBackwardOp::isF32Result(unsigned) { return true; }

//===----------------------------------------------------------------------===//
// SgdUpdateOp
//===----------------------------------------------------------------------===//

// The update and the averaging of gradients run on f32 master weights.
bool SgdUpdateOp::isF32Operand(unsigned) { return true; }
bool SgdUpdateOp::isF32Result(unsigned) { return true; }

LogicalResult SgdUpdateOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  double lr = getLr().convertToDouble();
  double momentum = getMomentum().convertToDouble();
  double dampening = getDampening().convertToDouble();
  double weightDecay = getWeightDecay().convertToDouble();
  // torch.optim.SGD's own argument checks.
  if (lr < 0 || momentum < 0 || weightDecay < 0)
    return emitOpError() << "expects 'lr', 'momentum' and 'weight_decay' >= 0 "
                            "(as torch.optim.SGD), got "
                         << lr << ", " << momentum << ", " << weightDecay;
  if (getNesterov() && (momentum <= 0 || dampening != 0))
    return emitOpError() << "'nesterov' requires 'momentum' > 0 and "
                            "'dampening' == 0 (as torch.optim.SGD), got "
                         << momentum << " and " << dampening;
  if (momentum != 0 && dampening != 0 && !getStep())
    return emitOpError() << "'dampening' != 0 with momentum needs the 'step' "
                            "operand: torch's first step sets the buffer to "
                            "the gradient, undamped";
  ArrayRef<int64_t> shape = getParam().getType().getShape();
  for (auto [value, name] : {std::pair<Value, StringRef>{getGrad(), "grad"},
                             {getMomentumBuffer(), "momentum_buffer"},
                             {getParamOut(), "param_out"},
                             {getMomentumBufferOut(), "momentum_buffer_out"}})
    if (failed(verifyShape(*this, tensorType(value), shape, name)) ||
        failed(verifyGradientFormat(*this, value, name, getParam(), "param")))
      return failure();
  return verifyResultFormats(*this);
}

/// L9: the gradient and the momentum buffer take the parameter's format.
std::optional<MemoryFormat>
SgdUpdateOp::getGradientOperandFormat(unsigned index) {
  if (index != getGradMutable().getOperandNumber() &&
      index != getMomentumBufferMutable().getOperandNumber())
    return std::nullopt;
  return gradientFormatOf(getParam());
}

/// L9: the new parameter keeps the parameter's layout, the new buffer the
/// buffer's (which the verifier ties to the parameter's).
std::optional<unsigned> SgdUpdateOp::getPreservedOperand(unsigned resultIndex) {
  if (resultIndex == 0)
    return getParamMutable().getOperandNumber();
  return getMomentumBufferMutable().getOperandNumber();
}

/// The parameter and its momentum buffer are updated in place, element by
/// element (Kernels.def: param_out may be param, momentum_buffer_out
/// momentum_buffer).
SmallVector<OpOperand *> SgdUpdateOp::getInPlaceOperands(unsigned resultIndex) {
  if (resultIndex == 0)
    return {&getParamMutable()};
  return {&getMomentumBufferMutable()};
}

bool SgdUpdateOp::readsOperandsElementwise() { return true; }

//===----------------------------------------------------------------------===//
// Dynamic loss scaling
//===----------------------------------------------------------------------===//

// The scaler's arithmetic is f32 in every step, as GradScaler's.
bool LossScaleOp::isF32Operand(unsigned) { return true; }
bool LossScaleOp::isF32Result(unsigned) { return true; }
bool UnscaleGradientOp::isF32Operand(unsigned) { return true; }
bool UnscaleGradientOp::isF32Result(unsigned) { return true; }
bool UpdateLossScaleOp::isF32Operand(unsigned) { return true; }
bool UpdateLossScaleOp::isF32Result(unsigned) { return true; }

LogicalResult LossScaleOp::verify() {
  double init = getInitScale().convertToDouble();
  if (!(init > 0) || !std::isfinite(static_cast<float>(init)))
    return emitOpError() << "expects a finite 'init_scale' > 0 (in f32), got "
                         << init;
  return success();
}

LogicalResult UnscaleGradientOp::verify() {
  if (getGradOut().getType() != getGrad().getType())
    return emitOpError() << "expects 'grad_out' of the gradient's type "
                         << getGrad().getType() << ", got "
                         << getGradOut().getType();
  if (!tensorType(getGrad()).getElementType().isF32())
    return emitOpError() << "expects an f32 gradient (a master weight's), got "
                         << getGrad().getType();
  return verifyResultFormats(*this);
}

/// L9: the unscaled gradient keeps the gradient's layout.
std::optional<unsigned>
UnscaleGradientOp::getPreservedOperand(unsigned resultIndex) {
  if (resultIndex != 0)
    return std::nullopt;
  return getGradMutable().getOperandNumber();
}

/// Both results in place (Kernels.def); the flag reads every element of
/// the gradient, so the operands are not read elementwise.
SmallVector<OpOperand *>
UnscaleGradientOp::getInPlaceOperands(unsigned resultIndex) {
  if (resultIndex == 0)
    return {&getGradMutable()};
  if (getFoundInf())
    return {&getFoundInfMutable()[0]};
  return {};
}

bool UnscaleGradientOp::readsOperandsElementwise() { return false; }

/// GradScaler's constructor checks (growth_factor > 1, backoff_factor < 1,
/// growth_interval > 0), and a positive backoff.
LogicalResult UpdateLossScaleOp::verify() {
  double growth = getGrowthFactor().convertToDouble();
  double backoff = getBackoffFactor().convertToDouble();
  if (!(growth > 1) || !std::isfinite(growth))
    return emitOpError() << "expects a finite 'growth_factor' > 1 (as "
                            "GradScaler), got "
                         << growth;
  if (!(backoff > 0 && backoff < 1))
    return emitOpError() << "expects 0 < 'backoff_factor' < 1 (as "
                            "GradScaler), got "
                         << backoff;
  if (getGrowthInterval() < 1)
    return emitOpError() << "expects 'growth_interval' >= 1 (as GradScaler), "
                            "got "
                         << getGrowthInterval();
  return success();
}

/// The scale and the tracker are updated in place; the one-thread kernel
/// reads every operand before it writes.
SmallVector<OpOperand *>
UpdateLossScaleOp::getInPlaceOperands(unsigned resultIndex) {
  if (resultIndex == 0)
    return {&getScaleMutable()};
  return {&getGrowthTrackerMutable()};
}

bool UpdateLossScaleOp::readsOperandsElementwise() { return true; }

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

bool AllReduceOp::isF32Operand(unsigned) { return true; }
bool AllReduceOp::isF32Result(unsigned) { return true; }

LogicalResult AllReduceOp::verify() {
  if (getReduceOp() != "sum" && getReduceOp() != "avg")
    return emitOpError() << "expects 'reduce_op' \"sum\" or \"avg\", got \""
                         << getReduceOp() << "\"";
  return success();
}

/// The result keeps the input's layout (every replica lays it out alike).
std::optional<unsigned>
AllReduceOp::getPreservedOperand(unsigned resultIndex) {
  return getInputMutable().getOperandNumber();
}

/// The replicas' sum is formed in place (Kernels.def: output may be input).
SmallVector<OpOperand *> AllReduceOp::getInPlaceOperands(unsigned resultIndex) {
  return {&getInputMutable()};
}

bool AllReduceOp::readsOperandsElementwise() { return true; }

//===----------------------------------------------------------------------===//
// IncrementOp
//===----------------------------------------------------------------------===//

/// The count is incremented in place (Kernels.def: output may be input).
SmallVector<OpOperand *> IncrementOp::getInPlaceOperands(unsigned resultIndex) {
  return {&getInputMutable()};
}

bool IncrementOp::readsOperandsElementwise() { return true; }

//===----------------------------------------------------------------------===//
// AssignWeightOp
//===----------------------------------------------------------------------===//

LogicalResult AssignWeightOp::verify() {
  if (getName().empty())
    return emitOpError() << "expects a non-empty weight name";
  auto func = (*this)->getParentOfType<FunctionOpInterface>();
  if (!func)
    return success();
  WeightOp weight;
  unsigned assignments = 0;
  func->walk([&](Operation *op) {
    if (auto w = dyn_cast<WeightOp>(op); w && w.getName() == getName())
      weight = w;
    else if (auto a = dyn_cast<AssignWeightOp>(op);
             a && a.getName() == getName())
      ++assignments;
  });
  if (assignments > 1)
    return emitOpError() << "assigns \"" << getName()
                         << "\" more than once in one function";
  // A state that no memfmt.weight reads is declared by its assignment: its
  // old value does not matter (the lowering gives it a zero_init slot). The
  // layout passes may also erase the read of a state whose value became
  // unused, which must leave a valid module.
  if (!weight)
    return success();
  // A state that is read keeps the very type (shape, element type and
  // strides) the read has. While the layout passes re-lay the parameter (a
  // conversion of the weight, which memfmt-fold-conversions turns into the
  // re-laid weight), the assigned value may already have the new layout.
  auto isRelaidAs = [&](Type type) {
    return llvm::any_of(weight->getUsers(), [&](Operation *user) {
      auto conversion = dyn_cast<LayoutOpInterface>(user);
      return conversion && conversion.isLayoutConversion() &&
             user->getResult(0).getType() == type;
    });
  };
  if (weight.getType() != getValue().getType() &&
      !isRelaidAs(getValue().getType()))
    return emitOpError() << "assigns a value of type " << getValue().getType()
                         << " to \"" << getName() << "\" of type "
                         << weight.getType()
                         << "; a state tensor keeps its type and layout";
  return success();
}
