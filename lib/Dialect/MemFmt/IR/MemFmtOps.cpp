//===- MemFmtOps.cpp - memfmt ops -----------------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, result-type inference and layout declarations of the memfmt
// ops. Every op checks element types, ranks, static shapes and its result
// shape (ShapeRules.h computes the shapes of conv and pooling, so
// verification and inference share one function). Results an op produces
// must be in a supported memory format (L4); ops whose result layout the
// rules fix (contiguous, clone, empty_like, to, resize_as) infer it from L2
// or L6 and reject any other. Errors cite the rule they enforce.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "OpVerification.h"
#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Layout/Windows.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <string>

using namespace mlir;
using namespace mlir::memfmt;
namespace layout = ::memfmt::layout;
using namespace mlir::memfmt::detail;

#include "memfmt/Dialect/MemFmt/IR/MemFmtInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Conv2dOp
//===----------------------------------------------------------------------===//

/// The checks of conv2d and fused_conv2d: the convolution rules and the
/// result shape.
static LogicalResult verifyConv2d(Operation *op, RankedTensorType inputType,
                                  RankedTensorType weightType, Value bias,
                                  RankedTensorType outputType,
                                  ArrayRef<int64_t> stride,
                                  ArrayRef<int64_t> padding,
                                  ArrayRef<int64_t> dilation, int64_t groups) {
  if (failed(verifyCommon(op)))
    return failure();
  FailureOr<SmallVector<int64_t, 4>> shape = verifyConv2dShape(
      op, inputType, weightType, bias, stride, padding, dilation, groups);
  if (failed(shape) || failed(verifyShape(op, outputType, *shape, "result")))
    return failure();
  return verifyResultFormats(op);
}

LogicalResult Conv2dOp::verify() {
  return verifyConv2d(*this, getInput().getType(), getWeight().getType(),
                      getBias(), getOutput().getType(), getStride(),
                      getPadding(), getDilation(), getGroups());
}

bool Conv2dOp::propagatesChannelsLast() { return true; }

//===----------------------------------------------------------------------===//
// FusedConv2dOp, FoldBatchNormOp
//===----------------------------------------------------------------------===//

/// The fusion epilogue's activation of fused_conv2d and linear: a known
/// name, hardsigmoid's two parameters, no NaN, parameters only for
/// hardsigmoid and clamp, and never beside relu.
template <typename OpTy>
static LogicalResult verifyActivation(OpTy op, bool relu) {
  if (std::optional<StringRef> activation = op.getActivation()) {
    std::optional<ConvActivation> kind = symbolizeConvActivation(*activation);
    if (!kind) {
      InFlightDiagnostic diag = op.emitOpError() << "unknown activation '"
                                                 << *activation << "' (";
      const uint32_t last = getMaxEnumValForConvActivation();
      for (uint32_t i = 0; i <= last; ++i)
        diag << (i == 0      ? ""
                 : i == last ? " or "
                             : ", ")
             << stringifyConvActivation(static_cast<ConvActivation>(i));
      return diag << ")";
    }
    if (relu)
      return op.emitOpError()
             << "has both relu and activation '" << *activation << "'";
    if (*kind == ConvActivation::Hardsigmoid &&
        (!op.getActivationAlpha() || !op.getActivationBeta()))
      return op.emitOpError() << "hardsigmoid needs activation_alpha and "
                                 "activation_beta";
  }
  for (std::optional<APFloat> value :
       {op.getActivationAlpha(), op.getActivationBeta()})
    if (value && value->isNaN())
      return op.emitOpError() << "activation_alpha and activation_beta must "
                                 "not be NaN";
  if ((op.getActivationAlpha() || op.getActivationBeta()) &&
      (!op.getActivation() || (*op.getActivation() != "hardsigmoid" &&
                               *op.getActivation() != "clamp")))
    return op.emitOpError() << "activation_alpha and activation_beta belong "
                               "to a hardsigmoid or clamp activation";
  return success();
}

LogicalResult FusedConv2dOp::verify() {
  if (failed(verifyConv2d(*this, getInput().getType(), getWeight().getType(),
                          getBias(), getOutput().getType(), getStride(),
                          getPadding(), getDilation(), getGroups())))
    return failure();
  if (getResidual() &&
      failed(verifyShape(*this, getResidual().getType(),
                         getOutput().getType().getShape(), "residual")))
    return failure();
  return verifyActivation(*this, getRelu());
}

bool FusedConv2dOp::propagatesChannelsLast() { return true; }

/// The residual is summed into the output (oneDNN's sum post-op, cuDNN's
/// beta = 1); the input is read around each output element, never in place.
SmallVector<OpOperand *> FusedConv2dOp::getInPlaceOperands(unsigned) {
  if (!getResidual())
    return {};
  return {&getResidualMutable()[0]};
}

bool FusedConv2dOp::readsOperandsElementwise() { return false; }

LogicalResult FoldBatchNormOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> w = getWeight().getType().getShape();
  for (auto [value, name] :
       {std::pair{getGamma(), "gamma"}, std::pair{getBeta(), "beta"},
        std::pair{getRunningMean(), "running_mean"},
        std::pair{getRunningVar(), "running_var"}})
    if (failed(verifyShape(*this, tensorType(value), {w[0]}, name)))
      return failure();
  if (getBias() &&
      failed(verifyShape(*this, getBias().getType(), {w[0]}, "bias")))
    return failure();
  if (getEps().convertToDouble() < 0)
    return emitOpError() << "expects 'eps' >= 0";
  if (failed(verifyShape(*this, getNewWeight().getType(), w, "new_weight")) ||
      failed(verifyShape(*this, getNewBias().getType(), {w[0]}, "new_bias")))
    return failure();
  return verifyResultFormats(*this);
}

bool FoldBatchNormOp::propagatesChannelsLast() { return true; }

/// The folded weight may overwrite the weight it replaces (the fold scales
/// each element on its own); the folded bias always takes a slot of its own.
SmallVector<OpOperand *>
FoldBatchNormOp::getInPlaceOperands(unsigned resultIndex) {
  if (resultIndex != 0)
    return {};
  return {&getWeightMutable()};
}

bool FoldBatchNormOp::readsOperandsElementwise() { return true; }

//===----------------------------------------------------------------------===//
// BatchNormOp
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  if (in.size() < 2)
    return emitOpError() << "expects an input of rank >= 2 (N, C, ...), got "
                            "rank "
                         << in.size();
  for (auto [value, name] :
       {std::pair{getWeight(), "weight"}, std::pair{getBias(), "bias"},
        std::pair{getRunningMean(), "running_mean"},
        std::pair{getRunningVar(), "running_var"}})
    if (failed(verifyShape(*this, tensorType(value), {in[1]}, name)))
      return failure();
  if (getEps().convertToDouble() < 0)
    return emitOpError() << "expects 'eps' >= 0";
  if (failed(verifyShape(*this, getOutput().getType(), in, "result")))
    return failure();
  return verifyResultFormats(*this);
}

bool BatchNormOp::propagatesChannelsLast() { return true; }

SmallVector<OpOperand *> BatchNormOp::getInPlaceOperands(unsigned) {
  return {&getInputMutable()};
}

bool BatchNormOp::readsOperandsElementwise() { return true; }

//===----------------------------------------------------------------------===//
// Elementwise: relu, add and the MemFmt_Unary/BinaryElementwiseOp classes
//===----------------------------------------------------------------------===//

LogicalResult ReluOp::verify() {
  if (failed(verifyCommon(*this)) ||
      failed(verifyShape(*this, getOutput().getType(),
                         getInput().getType().getShape(), "result")))
    return failure();
  return verifyResultFormats(*this);
}

bool ReluOp::propagatesChannelsLast() { return true; }

SmallVector<OpOperand *> ReluOp::getInPlaceOperands(unsigned) {
  return {&getInputMutable()};
}

bool ReluOp::readsOperandsElementwise() { return true; }

/// The unary elementwise ops (sigmoid, clamp, ...): the result has the
/// input's shape; the attributes are in range.
static LogicalResult verifyUnaryElementwise(Operation *op) {
  Value input = op->getOperand(0);
  if (failed(verifyCommon(op)) ||
      failed(verifyShape(op, tensorType(op->getResult(0)),
                         tensorType(input).getShape(), "result")))
    return failure();
  if (failed(verifyEltwiseAttributes(op)))
    return failure();
  return verifyResultFormats(op);
}

LogicalResult mlir::memfmt::detail::verifyEltwiseAttributes(Operation *op) {
  for (StringRef name : {"min", "max", "alpha", "beta"})
    if (auto value = op->getAttrOfType<FloatAttr>(name))
      if (std::isnan(value.getValueAsDouble()))
        return op->emitOpError() << "'" << name << "' is NaN";
  if (auto approximate = op->getAttrOfType<StringAttr>("approximate"))
    if (approximate.getValue() != "none" && approximate.getValue() != "tanh")
      return op->emitOpError()
             << "approximate must be \"none\" or \"tanh\", got \""
             << approximate.getValue() << "\"";
  return success();
}

/// The binary elementwise ops (add, mul, ...): NumPy broadcasting, aligned
/// to the right; sizes equal or one of them 1.
static LogicalResult verifyBroadcastElementwise(Operation *op) {
  if (failed(verifyCommon(op)))
    return failure();
  ArrayRef<int64_t> lhs = tensorType(op->getOperand(0)).getShape();
  ArrayRef<int64_t> rhs = tensorType(op->getOperand(1)).getShape();
  // NumPy broadcasting: align to the right; sizes equal or one of them 1.
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return op->emitOpError() << "operand shapes " << formatList(lhs)
                               << " and " << formatList(rhs)
                               << " do not broadcast";
    shape[i] = l == 1 ? r : l;
  }
  if (failed(verifyShape(op, tensorType(op->getResult(0)), shape, "result")))
    return failure();
  return verifyResultFormats(op);
}

LogicalResult AddOp::verify() { return verifyBroadcastElementwise(*this); }

bool AddOp::propagatesChannelsLast() { return true; }

/// Either addend; a broadcast one never has the result's type, so the
/// memory plan passes it over.
SmallVector<OpOperand *> AddOp::getInPlaceOperands(unsigned) {
  return {&getSelfMutable(), &getOtherMutable()};
}

bool AddOp::readsOperandsElementwise() { return true; }

namespace {
/// x * sigmoid(x) (either order, no broadcasting) is silu(x).
struct MulOfSigmoidIsSilu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (auto [x, gate] : {std::pair(mul.getSelf(), mul.getOther()),
                           std::pair(mul.getOther(), mul.getSelf())}) {
      auto sigmoid = gate.getDefiningOp<SigmoidOp>();
      if (!sigmoid || sigmoid.getInput() != x || x.getType() != mul.getType())
        continue;
      rewriter.replaceOpWithNewOp<SiluOp>(mul, mul.getType(), x);
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not x * sigmoid(x)");
  }
};

/// add(linear(x, w), b) or add(b, reshape(linear(x, w))) with a 1-D b of
/// the linear's out_features, where the linear has no bias and the add (via
/// the reshape that restores the batch dims of an N-D MatMul) is its only
/// user, becomes linear(x, w, b) (and the reshape): the bias is added in
/// the matmul's epilogue, and a training step's bias gradient is the
/// linear's (a row sum) instead of a broadcast add's sum_to_size. ONNX
/// exports Linear on N-D input (ConvNeXt, transformers) as MatMul then Add.
struct LinearThenBiasIsLinearWithBias : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [product, bias] : {std::pair(add.getSelf(), add.getOther()),
                                 std::pair(add.getOther(), add.getSelf())}) {
      std::optional<LinearEpilogueSite> site =
          LinearEpilogueSite::match(product);
      auto biasType = cast<RankedTensorType>(bias.getType());
      if (!site || site->linear.getBias() || biasType.getRank() != 1 ||
          biasType.getDimSize(0) !=
              site->linear.getWeight().getType().getDimSize(0) ||
          product.getType() != add.getType())
        continue;
      site->fold(rewriter, add, bias, /*activation=*/{}, /*alpha=*/{},
                 /*beta=*/{});
      return success();
    }
    return rewriter.notifyMatchFailure(add, "no bias-free linear and 1-D bias");
  }
};
/// add(cat(a...), cat(b...)) of one type along one dim, where every piece is
/// a value or a splat zero and no two values overlap, is the cat of the
/// values with zero pieces in the gaps: the sum of the gradients of
/// disjoint slices of one tensor (slice_backward pads each with zeros, so a
/// ViT's q, k and v split summed its gradient as three full-size cats and
/// two adds). A gap takes a zero piece of either cat that spans it exactly;
/// where none does, the add stays.
struct SumOfDisjointCatsIsOneCat : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  /// A stretch [begin, end) along the cat dim, and its value.
  struct Piece {
    int64_t begin, end;
    Value value;
  };

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    auto lhs = add.getSelf().getDefiningOp<CatOp>();
    auto rhs = add.getOther().getDefiningOp<CatOp>();
    if (!lhs || !rhs || lhs.getType() != add.getType() ||
        rhs.getType() != add.getType())
      return rewriter.notifyMatchFailure(add, "not a sum of two cats of its "
                                              "type");
    const int64_t rank = add.getType().getRank();
    auto dimOf = [&](CatOp cat) {
      int64_t dim = cat.getDimAttr().getInt();
      return dim < 0 ? dim + rank : dim;
    };
    const int64_t dim = dimOf(lhs);
    if (dimOf(rhs) != dim)
      return rewriter.notifyMatchFailure(add, "cats along different dims");
    SmallVector<Piece> values, zeros;
    for (CatOp cat : {lhs, rhs}) {
      int64_t offset = 0;
      for (Value piece : cat.getTensors()) {
        int64_t size = cast<RankedTensorType>(piece.getType()).getShape()[dim];
        Piece stretch{offset, offset + size, piece};
        (matchPattern(piece, m_AnyZeroFloat()) ? zeros : values)
            .push_back(stretch);
        offset += size;
      }
    }
    llvm::sort(values, [](const Piece &a, const Piece &b) {
      return a.begin < b.begin;
    });
    SmallVector<Value> pieces;
    int64_t covered = 0;
    // Fills [covered, until) with a zero piece spanning it exactly.
    auto fillGap = [&](int64_t until) {
      if (covered == until)
        return true;
      for (const Piece &zero : zeros)
        if (zero.begin == covered && zero.end == until) {
          pieces.push_back(zero.value);
          covered = until;
          return true;
        }
      return false;
    };
    for (const Piece &value : values) {
      if (value.begin < covered || !fillGap(value.begin))
        return rewriter.notifyMatchFailure(
            add, "values overlap, or a gap has no zero piece of its size");
      pieces.push_back(value.value);
      covered = value.end;
    }
    if (!fillGap(add.getType().getShape()[dim]) || pieces.size() < 2)
      return rewriter.notifyMatchFailure(add, "no cat of two pieces or more");
    rewriter.replaceOpWithNewOp<CatOp>(add, add.getType(), pieces,
                                       rewriter.getI64IntegerAttr(dim));
    return success();
  }
};
} // namespace

std::optional<LinearEpilogueSite> LinearEpilogueSite::match(Value value) {
  auto reshape = value.getDefiningOp<ReshapeOp>();
  Value source = reshape ? reshape.getInput() : value;
  auto linear = source.getDefiningOp<LinearOp>();
  if (!linear || linear.getActivation() || !linear->hasOneUse() ||
      (reshape && !reshape->hasOneUse()))
    return std::nullopt;
  return LinearEpilogueSite{linear, reshape};
}

void LinearEpilogueSite::fold(PatternRewriter &rewriter, Operation *user,
                              Value bias, StringAttr activation,
                              FloatAttr activationAlpha,
                              FloatAttr activationBeta) {
  // At the user, where the bias and the linear's operands are all defined.
  rewriter.setInsertionPoint(user);
  Value fused = LinearOp::create(rewriter, linear.getLoc(), linear.getType(),
                                 linear.getInput(), linear.getWeight(), bias,
                                 activation, activationAlpha, activationBeta);
  if (reshape)
    fused = ReshapeOp::create(rewriter, reshape.getLoc(),
                              user->getResult(0).getType(), fused);
  rewriter.replaceOp(user, fused);
  if (reshape)
    rewriter.eraseOp(reshape);
  rewriter.eraseOp(linear);
}

void AddOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<LinearThenBiasIsLinearWithBias, SumOfDisjointCatsIsOneCat>(
      context);
}

void MulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<MulOfSigmoidIsSilu>(context);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// The checks of max and average pooling: the pooling rules, and every
/// result has shape [N, C, OH, OW].
static LogicalResult verifyPool2d(Operation *op, RankedTensorType input,
                                  ArrayRef<int64_t> kernel,
                                  ArrayRef<int64_t> stride,
                                  ArrayRef<int64_t> padding,
                                  ArrayRef<int64_t> dilation, bool ceilMode) {
  if (failed(verifyCommon(op)))
    return failure();
  FailureOr<SmallVector<int64_t, 4>> shape = verifyPool2dShape(
      op, input, kernel, stride, padding, dilation, ceilMode);
  if (failed(shape))
    return failure();
  for (Value result : op->getResults())
    if (failed(verifyShape(op, tensorType(result), *shape, "result")))
      return failure();
  return verifyResultFormats(op);
}

LogicalResult MaxPool2dOp::verify() {
  return verifyPool2d(*this, getInput().getType(), getKernelSize(),
                      getStride(), getPadding(), getDilation(), getCeilMode());
}

bool MaxPool2dOp::propagatesChannelsLast() { return true; }

LogicalResult MaxPool2dWithIndicesOp::verify() {
  return verifyPool2d(*this, getInput().getType(), getKernelSize(),
                      getStride(), getPadding(), getDilation(), getCeilMode());
}

bool MaxPool2dWithIndicesOp::propagatesChannelsLast() { return true; }

LogicalResult AvgPool2dOp::verify() {
  return verifyPool2d(*this, getInput().getType(), getKernelSize(),
                      getStride(), getPadding(), {1, 1}, getCeilMode());
}

bool AvgPool2dOp::propagatesChannelsLast() { return true; }

LogicalResult AdaptiveAvgPool2dOp::verify() {
  if (failed(verifyCommon(*this)) ||
      failed(verifyList(*this, "output_size", getOutputSize(), 2, 1)))
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  if (failed(verifyShape(*this, getOutput().getType(),
                         {in[0], in[1], getOutputSize()[0],
                          getOutputSize()[1]},
                         "result")))
    return failure();
  return verifyResultFormats(*this);
}

bool AdaptiveAvgPool2dOp::propagatesChannelsLast() { return true; }

//===----------------------------------------------------------------------===//
// FlattenOp, ReshapeOp, LinearOp
//===----------------------------------------------------------------------===//

/// L7: reshapes keep NCHW meaning and produce a contiguous tensor.
static LogicalResult verifyContiguousResult(Operation *op) {
  auto type = tensorType(op->getResult(0));
  if (isContiguous(type))
    return success();
  return op->emitOpError() << "result must be contiguous (L7: reshapes keep "
                              "NCHW meaning), got strides "
                           << formatList(getStrides(type));
}

LogicalResult FlattenOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  int64_t rank = in.size();
  FailureOr<int64_t> start = normalizeDim(*this, "start_dim", getStartDim(), rank);
  FailureOr<int64_t> end = normalizeDim(*this, "end_dim", getEndDim(), rank);
  if (failed(start) || failed(end))
    return failure();
  if (*start > *end)
    return emitOpError() << "'start_dim' (" << *start
                         << ") must not come after 'end_dim' (" << *end << ")";
  SmallVector<int64_t> shape;
  if (rank == 0) {
    shape.push_back(1);
  } else {
    shape.append(in.begin(), in.begin() + *start);
    int64_t product = 1;
    for (int64_t d = *start; d <= *end; ++d)
      product *= in[d];
    shape.push_back(product);
    shape.append(in.begin() + *end + 1, in.end());
  }
  if (failed(verifyShape(*this, getOutput().getType(), shape, "result")))
    return failure();
  return verifyContiguousResult(*this);
}

bool FlattenOp::requiresContiguousOperand(unsigned index) {
  return index == 0;
}

/// Flattening a contiguous tensor re-describes its bytes.
bool FlattenOp::isBufferAlias() { return isContiguous(getInput().getType()); }

LogicalResult ReshapeOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  auto in = getInput().getType();
  auto out = getOutput().getType();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << formatList(in.getShape())
                         << " (" << in.getNumElements() << " elements) to "
                         << formatList(out.getShape()) << " ("
                         << out.getNumElements() << " elements)";
  return verifyContiguousResult(*this);
}

bool ReshapeOp::requiresContiguousOperand(unsigned index) {
  return index == 0;
}

/// Reshaping a contiguous tensor re-describes its bytes.
bool ReshapeOp::isBufferAlias() { return isContiguous(getInput().getType()); }

LogicalResult LinearOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> w = getWeight().getType().getShape();
  if (in.empty())
    return emitOpError() << "expects an input of rank >= 1";
  if (w.size() != 2)
    return emitOpError() << "expects a 2-D weight [out_features, "
                            "in_features], got "
                         << formatList(w);
  if (in.back() != w[1])
    return emitOpError() << "input features (" << in.back()
                         << ") do not match the weight's in_features (" << w[1]
                         << ")";
  if (getBias() &&
      failed(verifyShape(*this, getBias().getType(), {w[0]}, "bias")))
    return failure();
  SmallVector<int64_t> shape(in.drop_back());
  shape.push_back(w[0]);
  if (failed(verifyShape(*this, getOutput().getType(), shape, "result")) ||
      failed(verifyActivation(*this, /*relu=*/false)))
    return failure();
  return verifyResultFormats(*this);
}

//===----------------------------------------------------------------------===//
// Ops whose result layout the rules fix (L2, L6)
//===----------------------------------------------------------------------===//

/// The result type of contiguous/clone/empty_like/to/resize_as: the shape of
/// `source`, element type `elementType`, and the layout of `format` (L2), or
/// with `Preserve` the preserve_format strides of `source` (L6).
static FailureOr<RankedTensorType>
inferFixedLayoutType(RankedTensorType source, Type elementType,
                     MemoryFormat format,
                     function_ref<InFlightDiagnostic()> emitError) {
  if (!source.hasStaticShape())
    return emitError() << "expects a static shape, got " << source;
  auto shaped = RankedTensorType::get(source.getShape(), elementType);
  switch (format) {
  case MemoryFormat::Contiguous:
    return getTypeInFormat(shaped, format);
  case MemoryFormat::ChannelsLast:
    if (!hasChannelsLastFormat(source))
      return emitError() << "memory_format channels_last needs a 4-D or 5-D "
                            "tensor (L1), got rank "
                         << source.getRank();
    return getTypeInFormat(shaped, format);
  case MemoryFormat::Preserve:
    return getTypeWithStrides(
        shaped, layout::preserveFormatStrides(source.getShape(),
                                              getStrides(source)));
  }
  llvm_unreachable("unknown memory format");
}

/// Checks that `op`'s result has the layout inferFixedLayoutType gives:
/// the same bytes (L3), and no zero stride (L6).
static LogicalResult verifyFixedLayoutResult(Operation *op,
                                             RankedTensorType source,
                                             Type elementType,
                                             MemoryFormat format) {
  FailureOr<RankedTensorType> expected = inferFixedLayoutType(
      source, elementType, format, [&] { return op->emitOpError(); });
  if (failed(expected))
    return failure();
  auto actual = tensorType(op->getResult(0));
  if (actual.getShape() != expected->getShape() ||
      actual.getElementType() != expected->getElementType())
    return op->emitOpError() << "expected result type " << *expected
                             << ", got " << actual;
  SmallVector<int64_t> strides = getStrides(actual);
  bool hasZeroStride = llvm::is_contained(strides, 0);
  if (haveSameBytes(actual, *expected) && !hasZeroStride)
    return success();
  StringRef rule = format == MemoryFormat::Preserve
                       ? "L6: preserve_format keeps the strides of a dense, "
                         "non-overlapping input, never zero strides, and "
                         "otherwise takes its L4 format"
                       : "L2: the dense strides of the requested format";
  return op->emitOpError() << "result strides " << formatList(strides)
                           << " are not " << formatList(getStrides(*expected))
                           << " (" << rule << ")";
}

/// Infers a fixed-layout op's result in the custom syntax and for builders.
static LogicalResult
inferFixedLayoutReturnType(StringRef opName, std::optional<Location> location,
                           RankedTensorType source, Type elementType,
                           MemoryFormat format,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  FailureOr<RankedTensorType> type =
      inferFixedLayoutType(source, elementType, format, [&] {
        auto diag = location ? mlir::emitError(*location)
                             : mlir::emitError(UnknownLoc::get(
                                   source.getContext()));
        return std::move(diag << "'" << opName << "' op ");
      });
  if (failed(type))
    return failure();
  inferredReturnTypes.push_back(*type);
  return success();
}

/// The memory_format of an op being inferred: from its properties, or, while
/// the custom syntax is parsed, from its attribute dictionary; else
/// `defaultFormat`.
template <typename AdaptorT>
static MemoryFormat inferredFormat(AdaptorT &adaptor, DictionaryAttr attributes,
                                   MemoryFormat defaultFormat) {
  if (MemoryFormatAttr attr = adaptor.getMemoryFormatAttr())
    return attr.getValue();
  if (attributes)
    if (auto attr = attributes.getAs<MemoryFormatAttr>("memory_format"))
      return attr.getValue();
  return defaultFormat;
}

LogicalResult ContiguousOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties,
    RegionRange regions, SmallVectorImpl<Type> &inferredReturnTypes) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto source = cast<RankedTensorType>(adaptor.getInput().getType());
  MemoryFormat format =
      inferredFormat(adaptor, attributes, MemoryFormat::Contiguous);
  if (format == MemoryFormat::Preserve) {
    if (location)
      mlir::emitError(*location)
          << "'memfmt.contiguous' op memory_format must be contiguous or "
             "channels_last; preserve is only for clone, empty_like, to and "
             "resize_as (L6)";
    return failure();
  }
  return inferFixedLayoutReturnType(getOperationName(), location, source,
                                    source.getElementType(), format,
                                    inferredReturnTypes);
}

bool ContiguousOp::isCompatibleReturnTypes(TypeRange, TypeRange) {
  return true;
}

LogicalResult ContiguousOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  return verifyFixedLayoutResult(*this, getInput().getType(),
                                 getInput().getType().getElementType(),
                                 getMemoryFormat());
}

OpFoldResult ContiguousOp::fold(FoldAdaptor) {
  // Converting to the type the value already has is the identity.
  if (getInput().getType() == getType())
    return getInput();
  // A round trip (x -> y -> x's type) or a chain gives back the original
  // value: values never change (L8), only strides.
  if (auto inner = getInput().getDefiningOp<ContiguousOp>())
    if (inner.getInput().getType() == getType())
      return inner.getInput();
  return {};
}

bool ContiguousOp::isLayoutConversion() { return true; }

/// L3: a conversion between two stride vectors that give every element the
/// same offset moves no bytes.
std::optional<MemoryFormat> ContiguousOp::getLayoutCopyFormat() {
  return getMemoryFormat();
}

bool ContiguousOp::isBufferAlias() {
  return haveSameBytes(getInput().getType(), getOutput().getType());
}

/// The L6 layout rule of the preserve_format ops: result 0 preserves
/// operand `operandIndex` when the format is `preserve`.
static std::optional<unsigned> preservedOperand(MemoryFormat format,
                                                unsigned resultIndex,
                                                unsigned operandIndex) {
  if (format == MemoryFormat::Preserve && resultIndex == 0)
    return operandIndex;
  return std::nullopt;
}

/// The element type of a memfmt.to result: `dtype` (from properties, or from
/// the attribute dictionary while parsing) or the input's.
static Type inferredDtype(ToOp::Adaptor &adaptor, DictionaryAttr attributes) {
  if (TypeAttr dtype = adaptor.getDtypeAttr())
    return dtype.getValue();
  if (attributes)
    if (auto dtype = attributes.getAs<TypeAttr>("dtype"))
      return dtype.getValue();
  return cast<RankedTensorType>(adaptor.getInput().getType()).getElementType();
}

#define MEMFMT_DEFINE_LIKE_OP(OP, SOURCE, ELEMENT, PRESERVED)                   \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> location, ValueRange operands,    \
      DictionaryAttr attributes, OpaqueProperties properties,                  \
      RegionRange regions, SmallVectorImpl<Type> &inferredReturnTypes) {       \
    Adaptor adaptor(operands, attributes, properties, regions);                \
    return inferFixedLayoutReturnType(                                         \
        getOperationName(), location,                                          \
        cast<RankedTensorType>(adaptor.SOURCE().getType()), ELEMENT,           \
        inferredFormat(adaptor, attributes, MemoryFormat::Preserve),           \
        inferredReturnTypes);                                                  \
  }                                                                            \
  bool OP::isCompatibleReturnTypes(TypeRange, TypeRange) { return true; }      \
  LogicalResult OP::verify() {                                                 \
    Adaptor adaptor(*this);                                                    \
    if (failed(verifyCommon(*this, /*mixedFloatTypes=*/true)))                 \
      return failure();                                                        \
    DictionaryAttr attributes; /* all properties are set once verified */      \
    (void)attributes;                                                          \
    return verifyFixedLayoutResult(                                            \
        *this, cast<RankedTensorType>(adaptor.SOURCE().getType()), ELEMENT,    \
        getMemoryFormat());                                                    \
  }                                                                            \
  std::optional<unsigned> OP::getPreservedOperand(unsigned resultIndex) {      \
    return preservedOperand(getMemoryFormat(), resultIndex, PRESERVED);        \
  }

#define INPUT_ELEMENT                                                          \
  cast<RankedTensorType>(adaptor.getInput().getType()).getElementType()
#define TO_ELEMENT inferredDtype(adaptor, attributes)

MEMFMT_DEFINE_LIKE_OP(CloneOp, getInput, INPUT_ELEMENT, 0)
MEMFMT_DEFINE_LIKE_OP(EmptyLikeOp, getInput, INPUT_ELEMENT, 0)
MEMFMT_DEFINE_LIKE_OP(ToOp, getInput, TO_ELEMENT, 0)
MEMFMT_DEFINE_LIKE_OP(ResizeAsOp, getTheTemplate, INPUT_ELEMENT, 1)

/// L3: a copy into strides that give every element the same offset (and the
/// same element type) moves no bytes.
std::optional<MemoryFormat> CloneOp::getLayoutCopyFormat() {
  return getMemoryFormat();
}

bool CloneOp::isBufferAlias() {
  return haveSameBytes(getInput().getType(), getOutput().getType());
}

/// As for clone; a change of element type always moves bytes.
bool ToOp::isBufferAlias() {
  return haveSameBytes(getInput().getType(), getOutput().getType());
}

#undef TO_ELEMENT
#undef INPUT_ELEMENT
#undef MEMFMT_DEFINE_LIKE_OP

//===----------------------------------------------------------------------===//
// CatOp, ChunkOp
//===----------------------------------------------------------------------===//

LogicalResult CatOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  if (getTensors().empty())
    return emitOpError() << "expects at least one tensor";
  ArrayRef<int64_t> first = tensorType(getTensors()[0]).getShape();
  if (first.empty())
    return emitOpError() << "expects tensors of rank >= 1; a zero-dimensional "
                            "tensor cannot be concatenated";
  FailureOr<int64_t> dim = normalizeDim(*this, "dim", getDim(), first.size());
  if (failed(dim))
    return failure();
  SmallVector<int64_t> shape(first);
  shape[*dim] = 0;
  for (auto [i, tensor] : llvm::enumerate(getTensors())) {
    ArrayRef<int64_t> s = tensorType(tensor).getShape();
    bool matches = s.size() == first.size();
    for (size_t d = 0; matches && d < s.size(); ++d)
      matches = d == static_cast<size_t>(*dim) || s[d] == first[d];
    if (!matches)
      return emitOpError() << "operand #" << i << " has shape "
                           << formatList(s) << ", which differs from "
                           << formatList(first) << " outside dim " << *dim;
    shape[*dim] += s[*dim];
  }
  if (failed(verifyShape(*this, getOutput().getType(), shape, "result")))
    return failure();
  return verifyResultFormats(*this);
}

bool CatOp::propagatesChannelsLast() { return true; }

LogicalResult ChunkOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  if (in.empty())
    return emitOpError() << "expects an input of rank >= 1";
  if (getChunks() < 1)
    return emitOpError() << "expects 'chunks' >= 1, got " << getChunks();
  FailureOr<int64_t> dim = normalizeDim(*this, "dim", getDim(), in.size());
  if (failed(dim))
    return failure();
  // An empty dim gives `chunks` empty pieces: compare the counts before
  // making the pieces, so that a huge `chunks` allocates nothing.
  if (in[*dim] == 0 &&
      getChunks() != static_cast<uint64_t>(getOutputs().size()))
    return emitOpError() << "splitting size 0 into " << getChunks()
                         << " chunks gives " << getChunks()
                         << " empty pieces, but the op has "
                         << getOutputs().size() << " results";
  SmallVector<int64_t> sizes = chunkSizes(in[*dim], getChunks());
  if (sizes.size() != getOutputs().size())
    return emitOpError() << "splitting size " << in[*dim] << " into "
                         << getChunks() << " chunks gives " << sizes.size()
                         << " pieces " << formatList(sizes) << ", but the op "
                         << "has " << getOutputs().size() << " results";
  for (auto [i, result] : llvm::enumerate(getOutputs())) {
    SmallVector<int64_t> shape(in);
    shape[*dim] = sizes[i];
    if (failed(verifyShape(*this, tensorType(result), shape, "result")))
      return failure();
  }
  return verifyResultFormats(*this);
}

bool ChunkOp::propagatesChannelsLast() { return true; }

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError() << "expects a non-empty parameter name";
  if (failed(verifyCommon(*this)))
    return failure();
  return verifyResultFormats(*this);
}

bool WeightOp::isParameter() { return true; }

#define GET_OP_CLASSES
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.cpp.inc"
