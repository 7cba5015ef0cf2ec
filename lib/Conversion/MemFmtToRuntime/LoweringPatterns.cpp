//===- LoweringPatterns.cpp - memfmt ops to runtime kernel calls ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// One pattern per op family turns a planned memfmt op into calls of the
// runtime's kernels (convolution, with fused convolution and the load-time
// batch norm fold; batch norm; elementwise; pooling; linear; element copies
// and conversions, permutes; cat/chunk, slice, channel shuffle; layer norm;
// parameters). The training ops' patterns are in
// TrainingLoweringPatterns.cpp. Each fills the typed argument
// struct that Kernels.def generates (RuntimeCallBuilder.h) from the op's
// operands' views and attributes, so the kernel signature is checked by
// the C++ compiler. A pattern that cannot lower its op says why through
// notifyMatchFailure; the driver (MemFmtToRuntime.cpp) reports that reason
// as the op's error.
//
// The patterns emit into the function the RuntimeCallBuilder is writing;
// they leave the source op as it is (the driver erases the whole source
// function once every op is lowered).
//
//===----------------------------------------------------------------------===//

#include "RuntimePattern.h"
#include "memfmt/Conversion/MemFmtToRuntime/MemFmtToRuntime.h"
#include "memfmt/Conversion/MemFmtToRuntime/MemoryPlan.h"
#include "memfmt/Conversion/MemFmtToRuntime/RuntimeCallBuilder.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"

#include "memfmt/runtime/elementwise_ops.h"

#include <limits>
#include <type_traits>

using namespace mlir;
using namespace mlir::memfmt;

namespace {

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// The activation of a fused_conv2d or linear (its `activation` names a
/// ConvActivation, which the op's verifier checked), or {0} for none.
template <typename OpTy> EltwiseFunction activationOf(OpTy conv) {
  if (!conv.getActivation())
    return {0};
  double inf = std::numeric_limits<double>::infinity();
  auto value = [](std::optional<APFloat> v, double otherwise) {
    return v ? v->convertToDouble() : otherwise;
  };
  switch (*symbolizeConvActivation(*conv.getActivation())) {
  case ConvActivation::Sigmoid:
    return {MEMFMT_ELTWISE_SIGMOID};
  case ConvActivation::Silu:
    return {MEMFMT_ELTWISE_SILU};
  case ConvActivation::Hardswish:
    return {MEMFMT_ELTWISE_HARDSWISH};
  case ConvActivation::Hardsigmoid:
    return {MEMFMT_ELTWISE_HARDSIGMOID,
            value(conv.getActivationAlpha(), 1.0 / 6.0),
            value(conv.getActivationBeta(), 0.5)};
  case ConvActivation::Clamp:
    return {MEMFMT_ELTWISE_CLAMP, value(conv.getActivationAlpha(), -inf),
            value(conv.getActivationBeta(), inf)};
  case ConvActivation::Gelu:
    return {MEMFMT_ELTWISE_GELU_ERF};
  case ConvActivation::GeluTanh:
    return {MEMFMT_ELTWISE_GELU_TANH};
  }
  llvm_unreachable("unknown ConvActivation");
}

/// conv2d and fused_conv2d: the conv2d kernel, an absent bias or residual
/// passed as the output with its flag 0.
template <typename OpTy> struct ConvLowering : RuntimePattern<OpTy> {
  using RuntimePattern<OpTy>::RuntimePattern;

  LogicalResult matchAndRewrite(OpTy conv, PatternRewriter &) const override {
    RuntimeCallBuilder &b = this->calls;
    Padding2d pad = Padding2d::fromList(conv.getPadding());
    Value out = b.view(conv.getOutput());
    Value bias = conv.getBias() ? b.view(conv.getBias()) : out;
    Value residual = out;
    bool hasResidual = false, relu = false;
    EltwiseFunction activation{0};
    if constexpr (std::is_same_v<OpTy, FusedConv2dOp>) {
      hasResidual = static_cast<bool>(conv.getResidual());
      if (hasResidual)
        residual = b.view(conv.getResidual());
      relu = conv.getRelu();
      activation = activationOf(conv);
    }
    return b.call(conv, elementTypeOf(conv.getInput()),
                  kernels::conv2d{
                      .input = b.view(conv.getInput()),
                      .weight = b.view(conv.getWeight()),
                      .bias = bias,
                      .residual = residual,
                      .output = out,
                      .stride_h = conv.getStride()[0],
                      .stride_w = conv.getStride()[1],
                      .pad_top = pad.top,
                      .pad_left = pad.left,
                      .pad_bottom = pad.bottom,
                      .pad_right = pad.right,
                      .dilation_h = conv.getDilation()[0],
                      .dilation_w = conv.getDilation()[1],
                      .groups = static_cast<int64_t>(conv.getGroups()),
                      .has_bias = conv.getBias() ? 1 : 0,
                      .has_residual = hasResidual ? 1 : 0,
                      .relu = relu ? 1 : 0,
                      .activation = activation.op,
                      .activation_alpha = activation.alpha,
                      .activation_beta = activation.beta,
                  });
  }
};

/// fold_batch_norm (run at load): an absent bias is passed as the new bias.
struct FoldBatchNormLowering : RuntimePattern<FoldBatchNormOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(FoldBatchNormOp fold,
                                PatternRewriter &) const override {
    Value newBias = calls.view(fold.getNewBias());
    return calls.call(
        fold, elementTypeOf(fold.getWeight()),
        kernels::fold_batch_norm{
            .weight = calls.view(fold.getWeight()),
            .bias = fold.getBias() ? calls.view(fold.getBias()) : newBias,
            .gamma = calls.view(fold.getGamma()),
            .beta = calls.view(fold.getBeta()),
            .running_mean = calls.view(fold.getRunningMean()),
            .running_var = calls.view(fold.getRunningVar()),
            .out_weight = calls.view(fold.getNewWeight()),
            .out_bias = newBias,
            .eps = fold.getEps().convertToDouble(),
            .has_bias = fold.getBias() ? 1 : 0,
        });
  }
};

//===----------------------------------------------------------------------===//
// Batch norm and elementwise
//===----------------------------------------------------------------------===//

struct BatchNormLowering : RuntimePattern<BatchNormOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    if (bn.getTraining())
      return rewriter.notifyMatchFailure(
          bn, "training batch norm cannot be lowered; memfmt compiles "
              "inference");
    return calls.call(bn, elementTypeOf(bn.getInput()),
                      kernels::batch_norm{
                          .input = calls.view(bn.getInput()),
                          .weight = calls.view(bn.getWeight()),
                          .bias = calls.view(bn.getBias()),
                          .running_mean = calls.view(bn.getRunningMean()),
                          .running_var = calls.view(bn.getRunningVar()),
                          .output = calls.view(bn.getOutput()),
                          .eps = bn.getEps().convertToDouble(),
                      });
  }
};

struct ReluLowering : RuntimePattern<ReluOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(ReluOp relu, PatternRewriter &) const override {
    return calls.call(relu, elementTypeOf(relu.getInput()),
                      kernels::relu{
                          .input = calls.view(relu.getInput()),
                          .output = calls.view(relu.getOutput()),
                      });
  }
};

struct AddLowering : RuntimePattern<AddOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(AddOp add, PatternRewriter &) const override {
    return calls.call(add, elementTypeOf(add.getSelf()),
                      kernels::add{
                          .lhs = calls.view(add.getSelf()),
                          .rhs = calls.view(add.getOther()),
                          .output = calls.view(add.getOutput()),
                      });
  }
};

template <typename OpTy> struct EltwiseLowering : RuntimePattern<OpTy> {
  using RuntimePattern<OpTy>::RuntimePattern;

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &) const override {
    EltwiseFunction f = eltwiseFunctionOf(op);
    return this->calls.call(op, elementTypeOf(op.getInput()),
                            kernels::eltwise{
                                .input = this->calls.view(op.getInput()),
                                .output = this->calls.view(op.getOutput()),
                                .op = f.op,
                                .alpha = f.alpha,
                                .beta = f.beta,
                            });
  }
};

/// The binary kernel's function (memfmt_binary_op_t) of each op.
template <typename OpTy> constexpr int64_t kBinaryFunction = 0;
template <> constexpr int64_t kBinaryFunction<MulOp> = MEMFMT_BINARY_MUL;
template <> constexpr int64_t kBinaryFunction<SubOp> = MEMFMT_BINARY_SUB;
template <> constexpr int64_t kBinaryFunction<DivOp> = MEMFMT_BINARY_DIV;

template <typename OpTy> struct BinaryLowering : RuntimePattern<OpTy> {
  using RuntimePattern<OpTy>::RuntimePattern;

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &) const override {
    return this->calls.call(op, elementTypeOf(op.getSelf()),
                            kernels::binary{
                                .lhs = this->calls.view(op.getSelf()),
                                .rhs = this->calls.view(op.getOther()),
                                .output = this->calls.view(op.getOutput()),
                                .op = kBinaryFunction<OpTy>,
                            });
  }
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct MaxPoolLowering : RuntimePattern<MaxPool2dOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(MaxPool2dOp pool,
                                PatternRewriter &) const override {
    PoolWindow w = PoolWindow::of(pool);
    return calls.call(pool, elementTypeOf(pool.getInput()),
                      kernels::max_pool2d{
                          .input = calls.view(pool.getInput()),
                          .output = calls.view(pool.getOutput()),
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

struct MaxPoolWithIndicesLowering : RuntimePattern<MaxPool2dWithIndicesOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(MaxPool2dWithIndicesOp pool,
                                PatternRewriter &) const override {
    PoolWindow w = PoolWindow::of(pool);
    return calls.call(pool, elementTypeOf(pool.getInput()),
                      kernels::max_pool2d_with_indices{
                          .input = calls.view(pool.getInput()),
                          .output = calls.view(pool.getOutput()),
                          .indices = calls.view(pool.getIndices()),
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

struct AvgPoolLowering : RuntimePattern<AvgPool2dOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(AvgPool2dOp pool,
                                PatternRewriter &) const override {
    PoolWindow w = PoolWindow::of(pool);
    return calls.call(
        pool, elementTypeOf(pool.getInput()),
        kernels::avg_pool2d{
            .input = calls.view(pool.getInput()),
            .output = calls.view(pool.getOutput()),
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

struct AdaptiveAvgPoolLowering : RuntimePattern<AdaptiveAvgPool2dOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(AdaptiveAvgPool2dOp pool,
                                PatternRewriter &) const override {
    return calls.call(pool, elementTypeOf(pool.getInput()),
                      kernels::adaptive_avg_pool2d{
                          .input = calls.view(pool.getInput()),
                          .output = calls.view(pool.getOutput()),
                      });
  }
};

//===----------------------------------------------------------------------===//
// Linear
//===----------------------------------------------------------------------===//

/// An absent bias is passed as the output with has_bias 0; the activation
/// as conv2d's.
struct LinearLowering : RuntimePattern<LinearOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(LinearOp linear,
                                PatternRewriter &) const override {
    Value out = calls.view(linear.getOutput());
    Value bias = linear.getBias() ? calls.view(linear.getBias()) : out;
    EltwiseFunction activation = activationOf(linear);
    return calls.call(linear, elementTypeOf(linear.getInput()),
                      kernels::linear{
                          .input = calls.view(linear.getInput()),
                          .weight = calls.view(linear.getWeight()),
                          .bias = bias,
                          .output = out,
                          .has_bias = linear.getBias() ? 1 : 0,
                          .activation = activation.op,
                          .activation_alpha = activation.alpha,
                          .activation_beta = activation.beta,
                      });
  }
};

//===----------------------------------------------------------------------===//
// Element copies and conversions; parameters and uninitialised tensors
//===----------------------------------------------------------------------===//

/// An op that only moves operand 0's elements: nothing where the plan put
/// the result in its operand's bytes (ElementCopyOpInterface::isBufferAlias),
/// else the copy kernel, or a cast kernel through f32 for a
/// change of element type (which may change the layout at the same time).
struct ElementCopyLowering
    : public OpInterfaceRewritePattern<ElementCopyOpInterface> {
  ElementCopyLowering(MLIRContext *context, RuntimeCallBuilder &calls)
      : OpInterfaceRewritePattern(context), calls(calls) {}

  LogicalResult matchAndRewrite(ElementCopyOpInterface copy,
                                PatternRewriter &rewriter) const override {
    Operation *op = copy;
    Value input = op->getOperand(0), output = op->getResult(0);
    BufferAttr from = getPlannedBuffer(input), to = getPlannedBuffer(output);
    if (from.getKind() == to.getKind() && from.getIndex() == to.getIndex() &&
        from.getOffset() == to.getOffset())
      return success(); // The plan gave the result its operand's bytes.
    Type source = elementTypeOf(input), into = elementTypeOf(output);
    if (source != into && !source.isF32() && !into.isF32())
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << op->getName() << " from " << source << " to " << into
             << " is not lowered; convert through f32 (two " << op->getName()
             << " ops)";
      });
    // The source as a tensor of the result's shape and logical order: the
    // operand itself, or (permute) a view of its buffer.
    RankedTensorType view = copy.getSourceView();
    Value in = view == input.getType() ? calls.view(input)
                                       : calls.viewAt(from, 0, view);
    Value out = calls.view(output);
    if (source == into)
      return calls.call(op, source, kernels::copy{.input = in, .output = out});
    if (source.isF32())
      return calls.call(op, into,
                        kernels::cast_f32_to{.input = in, .output = out});
    return calls.call(op, source,
                      kernels::cast_to_f32_from{.input = in, .output = out});
  }

private:
  RuntimeCallBuilder &calls;
};

/// A parameter is placed in the weights blob: no work.
struct WeightLowering : RuntimePattern<WeightOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(WeightOp, PatternRewriter &) const override {
    return success();
  }
};

/// An uninitialised tensor has a buffer and nothing to compute.
struct EmptyLikeLowering : RuntimePattern<EmptyLikeOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(EmptyLikeOp, PatternRewriter &) const override {
    return success();
  }
};

/// No runtime kernel resizes yet.
struct ResizeAsLowering : RuntimePattern<ResizeAsOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(ResizeAsOp op,
                                PatternRewriter &rewriter) const override {
    return rewriter.notifyMatchFailure(op,
                                       "memfmt.resize_as is not lowered yet");
  }
};

//===----------------------------------------------------------------------===//
// Concatenation and chunking
//===----------------------------------------------------------------------===//

/// Each input is copied into its slice of the output (a view with the
/// output's strides, shifted along `dim`).
struct CatLowering : RuntimePattern<CatOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(CatOp cat, PatternRewriter &) const override {
    auto outType = cast<RankedTensorType>(cat.getType());
    int64_t dim =
        cat.getDim() < 0 ? cat.getDim() + outType.getRank() : cat.getDim();
    SmallVector<int64_t> strides = getStrides(outType);
    BufferAttr buffer = getPlannedBuffer(cat.getResult());
    int64_t start = 0;
    for (Value input : cat.getTensors()) {
      auto inType = cast<RankedTensorType>(input.getType());
      Value dst =
          calls.viewAt(buffer, start * strides[dim] * elementBytes(outType),
                       getTypeWithStrides(inType, strides));
      if (failed(calls.call(
              cat, inType.getElementType(),
              kernels::copy{.input = calls.view(input), .output = dst})))
        return failure();
      start += inType.getDimSize(dim);
    }
    return success();
  }
};

/// Each piece is copied out of its slice of the input.
struct ChunkLowering : RuntimePattern<ChunkOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(ChunkOp chunk,
                                PatternRewriter &) const override {
    auto inType = cast<RankedTensorType>(chunk.getInput().getType());
    int64_t dim =
        chunk.getDim() < 0 ? chunk.getDim() + inType.getRank() : chunk.getDim();
    SmallVector<int64_t> strides = getStrides(inType);
    BufferAttr buffer = getPlannedBuffer(chunk.getInput());
    int64_t start = 0;
    for (Value piece : chunk.getOutputs()) {
      auto pieceType = cast<RankedTensorType>(piece.getType());
      Value src =
          calls.viewAt(buffer, start * strides[dim] * elementBytes(inType),
                       getTypeWithStrides(pieceType, strides));
      if (failed(calls.call(
              chunk, pieceType.getElementType(),
              kernels::copy{.input = src, .output = calls.view(piece)})))
        return failure();
      start += pieceType.getDimSize(dim);
    }
    return success();
  }
};

/// The slice's elements are a strided view of the input (start along
/// `dim`, the stride there times `step`), copied; nothing where the plan
/// placed the result inside the input (SliceOp::getViewElementOffset).
struct SliceLowering : RuntimePattern<SliceOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(SliceOp slice,
                                PatternRewriter &) const override {
    BufferAttr from = getPlannedBuffer(slice.getInput()),
               to = getPlannedBuffer(slice.getOutput());
    if (std::optional<int64_t> elements = slice.getViewElementOffset();
        elements && from.getKind() == to.getKind() &&
        from.getIndex() == to.getIndex() &&
        to.getOffset() ==
            from.getOffset() +
                *elements * elementBytes(slice.getInput().getType()))
      return success();
    auto inType = cast<RankedTensorType>(slice.getInput().getType());
    int64_t dim =
        slice.getDim() < 0 ? slice.getDim() + inType.getRank() : slice.getDim();
    SmallVector<int64_t> strides = getStrides(inType);
    int64_t offset = slice.getStart() * strides[dim] * elementBytes(inType);
    strides[dim] *= slice.getStep();
    Value src =
        calls.viewAt(getPlannedBuffer(slice.getInput()), offset,
                     getTypeWithStrides(slice.getOutput().getType(), strides));
    return calls.call(
        slice, inType.getElementType(),
        kernels::copy{.input = src, .output = calls.view(slice.getOutput())});
  }
};

/// A channel shuffle with g groups of C / g channels is a copy between two
/// [N, C/g, g, *] views: the output's channel j * g + i and the input's
/// channel i * (C / g) + j sit at index (j, i) of both.
struct ChannelShuffleLowering : RuntimePattern<ChannelShuffleOp> {
  using RuntimePattern::RuntimePattern;

  /// `type` [N, C, *] viewed as [N, C/g, g, *]: channel c = j * jStride +
  /// i * iStride (in units of the channel stride).
  static RankedTensorType splitChannels(RankedTensorType type, int64_t groups,
                                        int64_t jStride, int64_t iStride) {
    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<int64_t> strides = getStrides(type);
    SmallVector<int64_t> viewShape = {shape[0], shape[1] / groups, groups};
    SmallVector<int64_t> viewStrides = {strides[0], strides[1] * jStride,
                                        strides[1] * iStride};
    viewShape.append(shape.begin() + 2, shape.end());
    viewStrides.append(strides.begin() + 2, strides.end());
    return getTypeWithStrides(
        RankedTensorType::get(viewShape, type.getElementType()), viewStrides);
  }

  LogicalResult matchAndRewrite(ChannelShuffleOp op,
                                PatternRewriter &) const override {
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    int64_t g = op.getGroups(), perGroup = inType.getDimSize(1) / g;
    Value src = calls.viewAt(getPlannedBuffer(op.getInput()), 0,
                             splitChannels(inType, g, 1, perGroup));
    Value dst = calls.viewAt(getPlannedBuffer(op.getOutput()), 0,
                             splitChannels(outType, g, g, 1));
    return calls.call(op, inType.getElementType(),
                      kernels::copy{.input = src, .output = dst});
  }
};

struct LayerNormLowering : RuntimePattern<LayerNormOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &) const override {
    Value out = calls.view(op.getOutput());
    return calls.call(
        op, elementTypeOf(op.getInput()),
        kernels::layer_norm{
            .input = calls.view(op.getInput()),
            .weight = op.getWeight() ? calls.view(op.getWeight()) : out,
            .bias = op.getBias() ? calls.view(op.getBias()) : out,
            .output = out,
            .eps = op.getEps().convertToDouble(),
            .has_weight = op.getWeight() ? 1 : 0,
            .has_bias = op.getBias() ? 1 : 0,
        });
  }
};

struct SoftmaxLowering : RuntimePattern<SoftmaxOp> {
  using RuntimePattern::RuntimePattern;

  LogicalResult matchAndRewrite(SoftmaxOp op, PatternRewriter &) const override {
    return calls.call(op, elementTypeOf(op.getInput()),
                      kernels::softmax{.input = calls.view(op.getInput()),
                                       .output = calls.view(op.getOutput()),
                                       .dim = op.getDim()});
  }
};

} // namespace

void mlir::memfmt::populateMemFmtToRuntimePatterns(RewritePatternSet &patterns,
                                                   RuntimeCallBuilder &calls) {
  patterns.add<ConvLowering<Conv2dOp>, ConvLowering<FusedConv2dOp>,
               FoldBatchNormLowering, BatchNormLowering, ReluLowering,
               AddLowering, EltwiseLowering<SigmoidOp>, EltwiseLowering<SiluOp>,
               EltwiseLowering<HardswishOp>, EltwiseLowering<HardsigmoidOp>,
               EltwiseLowering<ClampOp>, EltwiseLowering<GeluOp>,
               BinaryLowering<MulOp>, BinaryLowering<SubOp>,
               BinaryLowering<DivOp>, MaxPoolLowering, MaxPoolWithIndicesLowering,
               AvgPoolLowering, AdaptiveAvgPoolLowering, LinearLowering,
               ElementCopyLowering, WeightLowering, EmptyLikeLowering,
               ResizeAsLowering, CatLowering, ChunkLowering, SliceLowering,
               ChannelShuffleLowering, LayerNormLowering, SoftmaxLowering>(
      patterns.getContext(), calls);
  populateTrainingToRuntimePatterns(patterns, calls);
}
