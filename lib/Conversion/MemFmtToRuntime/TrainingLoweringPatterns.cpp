//===- TrainingLoweringPatterns.cpp - Training ops to kernel calls --------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The lowering of the training ops (MemFmtTrainingOps.td) to the training
// kernels at the end of Kernels.def: training batch norm and the backward
// ops, the loss and its gradient, the all-reduce over replicas, the SGD
// update and its step count, the assignment of a model
// state tensor (memfmt.assign_weight) and splat constants (the loss
// gradient's seed, filled once at load).
//
// Backward ops with an `output_mask` (batch norm, convolution, linear,
// layer norm): a
// result masked off and unused is absent (MemoryPlan.h isAbsentResult). It
// has no buffer; the kernel gets another output of the call in its place
// with its `has_*` flag 0 and neither computes nor writes it. A result
// masked off but used would have to be zeros, which no kernel computes:
// that is an error. A masked-on result without a use is still computed.
//
//===----------------------------------------------------------------------===//

#include "RuntimePattern.h"
#include "memfmt/Conversion/MemFmtToRuntime/MemoryPlan.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"

#include <array>

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// The three gradient outputs of a backward op with an `output_mask`: each
/// one's view (a present output's view in place of an absent one) and its
/// `has_*` flag.
struct GradientOutputs {
  std::array<Value, 3> views;
  std::array<int64_t, 3> present = {0, 0, 0};

  bool any() const { return present[0] || present[1] || present[2]; }
};

/// The outputs of `op`'s three results `grad_input`, `grad_weight`,
/// `grad_bias`; fails (notifyMatchFailure) on a masked-off result with uses.
/// An absent output is passed as a present output of its element type, or
/// else (a bf16 step's first convolution, whose only gradient is its f32
/// weight's) as an operand of its type: the kernel neither reads nor writes
/// it.
FailureOr<GradientOutputs> gradientOutputs(Operation *op,
                                           PatternRewriter &rewriter,
                                           RuntimeCallBuilder &calls) {
  static const char *const names[] = {"grad_input", "grad_weight", "grad_bias"};
  GradientOutputs out;
  for (unsigned i = 0; i < 3; ++i) {
    Value result = op->getResult(i);
    if (isAbsentResult(result))
      continue;
    auto mask = op->getAttrOfType<DenseBoolArrayAttr>(kOutputMaskAttrName);
    if (mask && !mask[i])
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "result #" << i << " (" << names[i]
             << ") is masked off in output_mask but has uses; a masked-off "
                "gradient is zeros, which no kernel computes: set its "
                "output_mask entry to true";
      });
    out.views[i] = calls.view(result);
    out.present[i] = 1;
  }
  // Absent: never read or written (has_* = 0). A present view or an operand
  // of its element type stands in; where none has it (a bf16 step's absent
  // f32 weight gradient beside a bf16 grad_input), an empty view of its rank
  // at the start of the first operand's buffer, an input nothing writes.
  auto standIn = [&](RankedTensorType type) -> Value {
    Type element = type.getElementType();
    for (unsigned i = 0; i < 3; ++i)
      if (out.present[i] &&
          getElementTypeOrSelf(op->getResult(i).getType()) == element)
        return out.views[i];
    for (Value operand : op->getOperands())
      if (getElementTypeOrSelf(operand.getType()) == element)
        return calls.view(operand);
    return calls.viewAt(
        getPlannedBuffer(op->getOperand(0)), 0,
        RankedTensorType::get(SmallVector<int64_t>(type.getRank(), 0),
                              element));
  };
  for (unsigned i = 0; i < 3; ++i)
    if (!out.views[i] && out.any())
      out.views[i] =
          standIn(cast<RankedTensorType>(op->getResult(i).getType()));
  return out;
}

/// A backward op with an `output_mask`: `emit` calls its kernel with the
/// outputs gradientOutputs gives, unless none is wanted.
template <typename OpTy> struct GradientPattern : RuntimePattern<OpTy> {
  using RuntimePattern<OpTy>::RuntimePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    FailureOr<GradientOutputs> out = gradientOutputs(op, rewriter, this->calls);
    if (failed(out))
      return failure();
    if (!out->any())
      return success(); // Nothing wanted: no call.
    return emit(op, *out);
  }

  virtual LogicalResult emit(OpTy op, const GradientOutputs &out) const = 0;
};

//===----------------------------------------------------------------------===//
// Batch norm
//===----------------------------------------------------------------------===//

/// The running statistics' outputs may be their inputs' buffers (the plan
/// updates model state in place); the kernel allows it. An absent residual
/// is passed as the input with has_residual 0.
struct NativeBatchNormLowering : RuntimePattern<NativeBatchNormOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(NativeBatchNormOp bn,
                                PatternRewriter &) const override {
    Value input = calls.view(bn.getInput());
    return calls.call(
        bn, elementTypeOf(bn.getInput()),
        kernels::native_batch_norm{
            .input = input,
            .weight = calls.view(bn.getWeight()),
            .bias = calls.view(bn.getBias()),
            .running_mean = calls.view(bn.getRunningMean()),
            .running_var = calls.view(bn.getRunningVar()),
            .residual = bn.getResidual() ? calls.view(bn.getResidual()) : input,
            .output = calls.view(bn.getOutput()),
            .save_mean = calls.view(bn.getSaveMean()),
            .save_invstd = calls.view(bn.getSaveInvstd()),
            .running_mean_out = calls.view(bn.getRunningMeanOut()),
            .running_var_out = calls.view(bn.getRunningVarOut()),
            .eps = bn.getEps().convertToDouble(),
            .momentum = bn.getMomentum().convertToDouble(),
            .has_residual = bn.getResidual() ? 1 : 0,
            .relu = bn.getRelu() ? 1 : 0,
        });
  }
};

/// Without relu the forward's output is absent: the input stands in for
/// it, unread.
struct NativeBatchNormBackwardLowering
    : GradientPattern<NativeBatchNormBackwardOp> {
  using GradientPattern::GradientPattern;

  LogicalResult emit(NativeBatchNormBackwardOp bn,
                     const GradientOutputs &out) const override {
    Value input = calls.view(bn.getInput());
    return calls.call(
        bn, elementTypeOf(bn.getInput()),
        kernels::native_batch_norm_backward{
            .grad_out = calls.view(bn.getGradOut()),
            .input = input,
            .weight = calls.view(bn.getWeight()),
            .save_mean = calls.view(bn.getSaveMean()),
            .save_invstd = calls.view(bn.getSaveInvstd()),
            .output = bn.getOutput() ? calls.view(bn.getOutput()) : input,
            .grad_input = out.views[0],
            .grad_weight = out.views[1],
            .grad_bias = out.views[2],
            .has_grad_input = out.present[0],
            .has_grad_weight = out.present[1],
            .has_grad_bias = out.present[2],
            .relu = bn.getRelu() ? 1 : 0,
        });
  }
};

//===----------------------------------------------------------------------===//
// Convolution and linear
//===----------------------------------------------------------------------===//

/// The padding may have 2 (symmetric) or 4 values, as conv2d's.
struct ConvolutionBackwardLowering : GradientPattern<ConvolutionBackwardOp> {
  using GradientPattern::GradientPattern;

  LogicalResult emit(ConvolutionBackwardOp conv,
                     const GradientOutputs &out) const override {
    Padding2d pad = Padding2d::fromList(conv.getPadding());
    return calls.call(conv, elementTypeOf(conv.getInput()),
                      kernels::convolution_backward{
                          .grad_output = calls.view(conv.getGradOutput()),
                          .input = calls.view(conv.getInput()),
                          .weight = calls.view(conv.getWeight()),
                          .grad_input = out.views[0],
                          .grad_weight = out.views[1],
                          .grad_bias = out.views[2],
                          .stride_h = conv.getStride()[0],
                          .stride_w = conv.getStride()[1],
                          .pad_top = pad.top,
                          .pad_left = pad.left,
                          .pad_bottom = pad.bottom,
                          .pad_right = pad.right,
                          .dilation_h = conv.getDilation()[0],
                          .dilation_w = conv.getDilation()[1],
                          .groups = static_cast<int64_t>(conv.getGroups()),
                          .has_grad_input = out.present[0],
                          .has_grad_weight = out.present[1],
                          .has_grad_bias = out.present[2],
                      });
  }
};

struct LinearBackwardLowering : GradientPattern<LinearBackwardOp> {
  using GradientPattern::GradientPattern;

  LogicalResult emit(LinearBackwardOp linear,
                     const GradientOutputs &out) const override {
    return calls.call(linear, elementTypeOf(linear.getInput()),
                      kernels::linear_backward{
                          .grad_output = calls.view(linear.getGradOutput()),
                          .input = calls.view(linear.getInput()),
                          .weight = calls.view(linear.getWeight()),
                          .grad_input = out.views[0],
                          .grad_weight = out.views[1],
                          .grad_bias = out.views[2],
                          .has_grad_input = out.present[0],
                          .has_grad_weight = out.present[1],
                          .has_grad_bias = out.present[2],
                      });
  }
};

/// An absent weight is passed as the input with has_weight 0.
struct LayerNormBackwardLowering : GradientPattern<LayerNormBackwardOp> {
  using GradientPattern::GradientPattern;

  LogicalResult emit(LayerNormBackwardOp norm,
                     const GradientOutputs &out) const override {
    Value input = calls.view(norm.getInput());
    return calls.call(
        norm, elementTypeOf(norm.getInput()),
        kernels::layer_norm_backward{
            .grad_output = calls.view(norm.getGradOutput()),
            .input = input,
            .weight = norm.getWeight() ? calls.view(norm.getWeight()) : input,
            .grad_input = out.views[0],
            .grad_weight = out.views[1],
            .grad_bias = out.views[2],
            .eps = norm.getEps().convertToDouble(),
            .has_weight = norm.getWeight() ? 1 : 0,
            .has_grad_input = out.present[0],
            .has_grad_weight = out.present[1],
            .has_grad_bias = out.present[2],
        });
  }
};

struct SoftmaxBackwardLowering : RuntimePattern<SoftmaxBackwardOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(SoftmaxBackwardOp op,
                                PatternRewriter &) const override {
    return calls.call(op, elementTypeOf(op.getOutput()),
                      kernels::softmax_backward{
                          .grad_output = calls.view(op.getGradOutput()),
                          .output = calls.view(op.getOutput()),
                          .grad_input = calls.view(op.getGradInput()),
                          .dim = op.getDim(),
                      });
  }
};

//===----------------------------------------------------------------------===//
// Elementwise and pooling backward
//===----------------------------------------------------------------------===//

struct ThresholdBackwardLowering : RuntimePattern<ThresholdBackwardOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(ThresholdBackwardOp op,
                                PatternRewriter &) const override {
    return calls.call(
        op, elementTypeOf(op.getSelf()),
        kernels::threshold_backward{
            .grad_output = calls.view(op.getGradOutput()),
            .self = calls.view(op.getSelf()),
            .addend = calls.view(op.getAddend() ? op.getAddend()
                                                : op.getGradOutput()),
            .grad_input = calls.view(op.getGradInput()),
            .threshold = op.getThreshold().convertToDouble(),
            .has_addend = op.getAddend() ? 1 : 0,
        });
  }
};

/// sigmoid_backward, ..., gelu_backward: the eltwise_backward kernel with
/// the forward function's code and parameters.
template <typename OpTy> struct EltwiseBackwardLowering : RuntimePattern<OpTy> {
  using RuntimePattern<OpTy>::RuntimePattern;

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &) const override {
    EltwiseFunction f = eltwiseFunctionOf(op);
    Value self = op->getOperand(1);
    return this->calls.call(
        op, elementTypeOf(self),
        kernels::eltwise_backward{
            .grad_output = this->calls.view(op.getGradOutput()),
            .self = this->calls.view(self),
            .grad_input = this->calls.view(op.getGradInput()),
            .op = f.op,
            .alpha = f.alpha,
            .beta = f.beta,
        });
  }
};

struct SumToSizeLowering : RuntimePattern<SumToSizeOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(SumToSizeOp op,
                                PatternRewriter &) const override {
    return calls.call(op, elementTypeOf(op.getInput()),
                      kernels::sum_to_size{
                          .input = calls.view(op.getInput()),
                          .output = calls.view(op.getOutput()),
                      });
  }
};

struct MaxPoolWithIndicesBackwardLowering
    : RuntimePattern<MaxPool2dWithIndicesBackwardOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(MaxPool2dWithIndicesBackwardOp pool,
                                PatternRewriter &) const override {
    PoolWindow w = PoolWindow::of(pool);
    return calls.call(pool, elementTypeOf(pool.getSelf()),
                      kernels::max_pool2d_with_indices_backward{
                          .grad_output = calls.view(pool.getGradOutput()),
                          .indices = calls.view(pool.getIndices()),
                          .grad_input = calls.view(pool.getGradInput()),
                          .kernel_h = w.kernel[0],
                          .kernel_w = w.kernel[1],
                          .stride_h = w.stride[0],
                          .stride_w = w.stride[1],
                          .pad_top = w.pad.top,
                          .pad_left = w.pad.left,
                          .dilation_h = pool.getDilation()[0],
                          .dilation_w = pool.getDilation()[1],
                      });
  }
};

/// As the forward avg_pool2d: the window's padding, with ceil_mode already
/// in the shapes (the kernel's divisor rule clips to the padded input).
struct AvgPoolBackwardLowering : RuntimePattern<AvgPool2dBackwardOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(AvgPool2dBackwardOp pool,
                                PatternRewriter &) const override {
    PoolWindow w = PoolWindow::of(pool);
    return calls.call(
        pool, elementTypeOf(pool.getSelf()),
        kernels::avg_pool2d_backward{
            .grad_output = calls.view(pool.getGradOutput()),
            .grad_input = calls.view(pool.getGradInput()),
            .kernel_h = w.kernel[0],
            .kernel_w = w.kernel[1],
            .stride_h = w.stride[0],
            .stride_w = w.stride[1],
            .pad_top = w.pad.top,
            .pad_left = w.pad.left,
            .pad_bottom = w.pad.bottom,
            .pad_right = w.pad.right,
            .count_include_pad = pool.getCountIncludePad() ? 1 : 0,
        });
  }
};

struct AdaptiveAvgPoolBackwardLowering
    : RuntimePattern<AdaptiveAvgPool2dBackwardOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(AdaptiveAvgPool2dBackwardOp pool,
                                PatternRewriter &) const override {
    return calls.call(pool, elementTypeOf(pool.getSelf()),
                      kernels::adaptive_avg_pool2d_backward{
                          .grad_output = calls.view(pool.getGradOutput()),
                          .grad_input = calls.view(pool.getGradInput()),
                      });
  }
};

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

struct CrossEntropyLossLowering : RuntimePattern<CrossEntropyLossOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(CrossEntropyLossOp loss,
                                PatternRewriter &) const override {
    return calls.call(loss, elementTypeOf(loss.getSelf()),
                      kernels::cross_entropy_loss{
                          .self = calls.view(loss.getSelf()),
                          .target = calls.view(loss.getTarget()),
                          .output = calls.view(loss.getOutput()),
                      });
  }
};

struct CrossEntropyLossBackwardLowering
    : RuntimePattern<CrossEntropyLossBackwardOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(CrossEntropyLossBackwardOp loss,
                                PatternRewriter &) const override {
    return calls.call(loss, elementTypeOf(loss.getSelf()),
                      kernels::cross_entropy_loss_backward{
                          .grad_output = calls.view(loss.getGradOutput()),
                          .self = calls.view(loss.getSelf()),
                          .target = calls.view(loss.getTarget()),
                          .grad_input = calls.view(loss.getGradInput()),
                      });
  }
};

//===----------------------------------------------------------------------===//
// Optimizer and model state
//===----------------------------------------------------------------------===//

/// Without `step` the kernel gets a 0-d i64 view of `grad`'s buffer (an
/// input, so no output overlaps it), which it does not read (has_step 0). With
/// momentum 0 the kernel leaves momentum_buffer_out unwritten: where the plan
/// did not put it in momentum_buffer's own buffer and it is used,
/// momentum_buffer is copied into it.
struct SgdUpdateLowering : RuntimePattern<SgdUpdateOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(SgdUpdateOp sgd,
                                PatternRewriter &rewriter) const override {
    Type f32 = elementTypeOf(sgd.getParam());
    Value step = sgd.getStep();
    Value stepView =
        step ? calls.view(step)
             : calls.viewAt(getPlannedBuffer(sgd.getGrad()), 0,
                            RankedTensorType::get({}, rewriter.getI64Type()));
    Value foundInf = sgd.getFoundInf();
    Value foundInfView = foundInf
                             ? calls.view(foundInf)
                             : calls.viewAt(getPlannedBuffer(sgd.getGrad()), 0,
                                            RankedTensorType::get({}, f32));
    double momentum = sgd.getMomentum().convertToDouble();
    if (failed(calls.call(
            sgd, f32,
            kernels::sgd_update{
                .param = calls.view(sgd.getParam()),
                .grad = calls.view(sgd.getGrad()),
                .momentum_buffer = calls.view(sgd.getMomentumBuffer()),
                .step = stepView,
                .found_inf = foundInfView,
                .param_out = calls.view(sgd.getParamOut()),
                .momentum_buffer_out = calls.view(sgd.getMomentumBufferOut()),
                .lr = sgd.getLr().convertToDouble(),
                .momentum = momentum,
                .dampening = sgd.getDampening().convertToDouble(),
                .weight_decay = sgd.getWeightDecay().convertToDouble(),
                .nesterov = sgd.getNesterov() ? 1 : 0,
                .has_step = step ? 1 : 0,
                .has_found_inf = foundInf ? 1 : 0,
            })))
      return failure();
    if (momentum != 0 || sgd.getMomentumBufferOut().use_empty() ||
        getPlannedBuffer(sgd.getMomentumBufferOut()) ==
            getPlannedBuffer(sgd.getMomentumBuffer()))
      return success();
    return calls.call(
        sgd, f32,
        kernels::copy{.input = calls.view(sgd.getMomentumBuffer()),
                      .output = calls.view(sgd.getMomentumBufferOut())});
  }
};

/// The all_reduce kernel, in place where the plan shares the buffer.
struct AllReduceLowering : RuntimePattern<AllReduceOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(AllReduceOp op,
                                PatternRewriter &) const override {
    return calls.call(op, elementTypeOf(op.getInput()),
                      kernels::all_reduce{
                          .input = calls.view(op.getInput()),
                          .output = calls.view(op.getOutput()),
                          .average = op.getReduceOp() == "avg" ? 1 : 0,
                      });
  }
};

/// The increment kernel, in place where the plan shares the buffer (the step
/// count's model-state slot). Without `found_inf` the kernel gets an f32
/// view of the count's buffer, which it does not read.
struct IncrementLowering : RuntimePattern<IncrementOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(IncrementOp op,
                                PatternRewriter &rewriter) const override {
    Value foundInf = op.getFoundInf();
    return calls.call(
        op, elementTypeOf(op.getInput()),
        kernels::increment{
            .input = calls.view(op.getInput()),
            .found_inf = foundInf
                             ? calls.view(foundInf)
                             : calls.viewAt(getPlannedBuffer(op.getInput()), 0,
                                            RankedTensorType::get(
                                                {}, rewriter.getF32Type())),
            .output = calls.view(op.getOutput()),
            .has_found_inf = foundInf ? 1 : 0,
        });
  }
};

/// The loss scaler's kernels (f32; the tracker i64), in place where the
/// plan shares the buffers. Without `found_inf` unscale_gradient gets the
/// scale's view in its place, which it does not read.
struct LossScaleLowering : RuntimePattern<LossScaleOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(LossScaleOp op,
                                PatternRewriter &) const override {
    return calls.call(op, elementTypeOf(op.getState()),
                      kernels::loss_scale{
                          .scale = calls.view(op.getState()),
                          .output = calls.view(op.getOutput()),
                          .init_scale = op.getInitScale().convertToDouble(),
                      });
  }
};

struct UnscaleGradientLowering : RuntimePattern<UnscaleGradientOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(UnscaleGradientOp op,
                                PatternRewriter &) const override {
    Value foundInf = op.getFoundInf();
    Value scale = calls.view(op.getScale());
    return calls.call(op, elementTypeOf(op.getGrad()),
                      kernels::unscale_gradient{
                          .grad = calls.view(op.getGrad()),
                          .scale = scale,
                          .found_inf = foundInf ? calls.view(foundInf) : scale,
                          .grad_out = calls.view(op.getGradOut()),
                          .found_inf_out = calls.view(op.getFoundInfOut()),
                          .has_found_inf = foundInf ? 1 : 0,
                      });
  }
};

struct UpdateLossScaleLowering : RuntimePattern<UpdateLossScaleOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(UpdateLossScaleOp op,
                                PatternRewriter &) const override {
    return calls.call(
        op, elementTypeOf(op.getScale()),
        kernels::update_loss_scale{
            .scale = calls.view(op.getScale()),
            .growth_tracker = calls.view(op.getGrowthTracker()),
            .found_inf = calls.view(op.getFoundInf()),
            .scale_out = calls.view(op.getScaleOut()),
            .growth_tracker_out = calls.view(op.getGrowthTrackerOut()),
            .growth_factor = op.getGrowthFactor().convertToDouble(),
            .backoff_factor = op.getBackoffFactor().convertToDouble(),
            .growth_interval = op.getGrowthInterval(),
        });
  }
};

/// Nothing where the plan computed the value in the state's slot, else one
/// copy into the slot (the plan put the assignment after every read). The
/// copy kernel moves floats: an i64 state (a step count) must be computed in
/// its slot.
struct AssignWeightLowering : RuntimePattern<AssignWeightOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(AssignWeightOp assign,
                                PatternRewriter &rewriter) const override {
    BufferAttr slot = getAssignedBuffer(assign);
    if (!slot)
      return rewriter.notifyMatchFailure(
          assign, "the memory plan gave this assignment no slot; plan the "
                  "whole function (memfmt-plan-memory) after changing it");
    if (getPlannedBuffer(assign.getValue()) == slot)
      return success(); // Computed in place.
    auto type = cast<RankedTensorType>(assign.getValue().getType());
    if (!isa<FloatType>(type.getElementType()))
      return rewriter.notifyMatchFailure(
          assign, "an integer state tensor is assigned only in place");
    return calls.call(assign, type.getElementType(),
                      kernels::copy{.input = calls.view(assign.getValue()),
                                    .output = calls.viewAt(slot, 0, type)});
  }
};

/// A splat floating-point constant: its weights-blob slot filled once at
/// load by the fill kernel. Other constants are not lowered.
struct ConstantLowering : RuntimePattern<arith::ConstantOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(arith::ConstantOp constant,
                                PatternRewriter &rewriter) const override {
    auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!value || !value.isSplat() || !isa<FloatType>(value.getElementType()))
      return rewriter.notifyMatchFailure(
          constant, "only splat floating-point tensor constants are lowered "
                    "(filled once at load); make other constants weights");
    return calls.call(
        constant, value.getElementType(),
        kernels::fill{.output = calls.view(constant.getResult()),
                      .value =
                          value.getSplatValue<APFloat>().convertToDouble()});
  }
};

} // namespace

void mlir::memfmt::populateTrainingToRuntimePatterns(
    RewritePatternSet &patterns, RuntimeCallBuilder &calls) {
  patterns.add<
      NativeBatchNormLowering, NativeBatchNormBackwardLowering,
      ConvolutionBackwardLowering, LinearBackwardLowering,
      LayerNormBackwardLowering, SoftmaxBackwardLowering,
      ThresholdBackwardLowering, EltwiseBackwardLowering<SigmoidBackwardOp>,
      EltwiseBackwardLowering<SiluBackwardOp>,
      EltwiseBackwardLowering<HardswishBackwardOp>,
      EltwiseBackwardLowering<HardsigmoidBackwardOp>,
      EltwiseBackwardLowering<ClampBackwardOp>,
      EltwiseBackwardLowering<GeluBackwardOp>, SumToSizeLowering,
      MaxPoolWithIndicesBackwardLowering, AvgPoolBackwardLowering,
      AdaptiveAvgPoolBackwardLowering, CrossEntropyLossLowering,
      CrossEntropyLossBackwardLowering, SgdUpdateLowering, AllReduceLowering,
      IncrementLowering, LossScaleLowering, UnscaleGradientLowering,
      UpdateLossScaleLowering, AssignWeightLowering, ConstantLowering>(
      patterns.getContext(), calls);
}
