//===- FuseConv.cpp - Batch-norm folding and conv epilogue fusion ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-fuse-conv prepares a model for fused convolution kernels, with the
// greedy rewrite driver:
//
//  * FoldBatchNormIntoConv: batch_norm(conv2d(x, w, b)) with an inference
//    batch norm, a convolution used only there, and w, b and the batch-norm
//    statistics all known at load time (parameters, or computed from
//    parameters only) becomes conv2d(x, w', b') with
//    w', b' = fold_batch_norm(w, b, gamma, beta, mean, var). The lowering
//    runs fold_batch_norm once when the model is loaded.
//  * FuseResidualAdd: add(conv, r) or add(r, conv) with equal shapes becomes
//    fused_conv2d(..., residual = r); the first operand is tried first, so
//    the rewrite is deterministic.
//  * FuseRelu: relu(conv) becomes fused_conv2d(..., relu = true), and
//    FuseActivation the other activations (sigmoid, silu, hardswish,
//    hardsigmoid, clamp as ReLU6, gelu): fused_conv2d(..., activation =
//    "<op>") with the op's parameters.
//  * FuseActivation also folds those activations of a linear (through the
//    reshape of an N-D MatMul) into its `activation`: ConvNeXt's and ViT's
//    Linear + GELU. (A 1-D bias added to a bias-free linear becomes its
//    bias by canonicalization, memfmt.add's, in training steps too.)
//
// A convolution or linear is absorbed only when the add or relu is its only
// user, so no value is computed twice. Epilogue order is conv, + bias, +
// residual, relu, which is the order of the patterns' sources.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_FUSECONV
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// True if `value` is known when the model is loaded: a parameter, or the
/// result of a side-effect-free op whose operands all are.
bool isLoadTimeValue(Value value, unsigned depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 8)
    return false;
  if (auto iface = dyn_cast<LayoutOpInterface>(def); iface && iface.isParameter())
    return true;
  return def->getNumOperands() > 0 && def->getNumRegions() == 0 &&
         isMemoryEffectFree(def) &&
         llvm::all_of(def->getOperands(), [&](Value operand) {
           return isLoadTimeValue(operand, depth + 1);
         });
}

/// The pieces of a conv2d or fused_conv2d that a fused op is built from.
struct ConvParts {
  Value input, weight, bias, residual;
  DenseI64ArrayAttr stride, padding, dilation;
  IntegerAttr groups;
  bool relu = false;
  StringAttr activation;
  FloatAttr activationAlpha, activationBeta;

  bool hasEpilogueActivation() const { return relu || activation; }
};

std::optional<ConvParts> getConvParts(Operation *op) {
  if (auto conv = dyn_cast_or_null<Conv2dOp>(op))
    return ConvParts{conv.getInput(),     conv.getWeight(),
                     conv.getBias(),      Value(),
                     conv.getStrideAttr(), conv.getPaddingAttr(),
                     conv.getDilationAttr(), conv.getGroupsAttr(),
                     /*relu=*/false, /*activation=*/{}, /*activationAlpha=*/{},
                     /*activationBeta=*/{}};
  if (auto conv = dyn_cast_or_null<FusedConv2dOp>(op))
    return ConvParts{conv.getInput(),     conv.getWeight(),
                     conv.getBias(),      conv.getResidual(),
                     conv.getStrideAttr(), conv.getPaddingAttr(),
                     conv.getDilationAttr(), conv.getGroupsAttr(),
                     conv.getRelu(),        conv.getActivationAttr(),
                     conv.getActivationAlphaAttr(),
                     conv.getActivationBetaAttr()};
  return std::nullopt;
}

/// Replaces `root` by a fused_conv2d of `parts` with result type `type`,
/// located at the convolution `conv` and `root` both.
void replaceWithFused(PatternRewriter &rewriter, Operation *root,
                      Operation *conv, Type type, const ConvParts &parts) {
  Location loc = rewriter.getFusedLoc({conv->getLoc(), root->getLoc()});
  auto fused = FusedConv2dOp::create(
      rewriter, loc, type, parts.input, parts.weight, parts.bias,
      parts.residual, parts.stride, parts.padding, parts.dilation,
      parts.groups, rewriter.getBoolAttr(parts.relu), parts.activation,
      parts.activationAlpha, parts.activationBeta);
  rewriter.replaceOp(root, fused.getResult());
}

struct FoldBatchNormIntoConv : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    if (bn.getTraining())
      return rewriter.notifyMatchFailure(bn, "training batch norm");
    auto conv = bn.getInput().getDefiningOp<Conv2dOp>();
    if (!conv || !conv->hasOneUse())
      return rewriter.notifyMatchFailure(bn, "input is not a conv used once");
    SmallVector<Value> params = {conv.getWeight(), bn.getWeight(),
                                 bn.getBias(), bn.getRunningMean(),
                                 bn.getRunningVar()};
    if (conv.getBias())
      params.push_back(conv.getBias());
    if (!llvm::all_of(params, [](Value v) { return isLoadTimeValue(v); }))
      return rewriter.notifyMatchFailure(
          bn, "weights or statistics are not known at load time");
    auto biasType = cast<RankedTensorType>(bn.getWeight().getType());
    auto fold = FoldBatchNormOp::create(
        rewriter, bn.getLoc(),
        TypeRange{conv.getWeight().getType(),
                  RankedTensorType::get(biasType.getShape(),
                                        biasType.getElementType())},
        conv.getWeight(), conv.getBias(), bn.getWeight(), bn.getBias(),
        bn.getRunningMean(), bn.getRunningVar(), bn.getEpsAttr());
    auto folded = Conv2dOp::create(
        rewriter, conv.getLoc(), bn.getType(), conv.getInput(),
        fold.getNewWeight(), fold.getNewBias(), conv.getStrideAttr(),
        conv.getPaddingAttr(), conv.getDilationAttr(), conv.getGroupsAttr());
    rewriter.replaceOp(bn, folded.getResult());
    rewriter.eraseOp(conv);
    return success();
  }
};

struct FuseResidualAdd : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [convSide, residual] :
         {std::pair{add.getSelf(), add.getOther()},
          std::pair{add.getOther(), add.getSelf()}}) {
      Operation *def = convSide.getDefiningOp();
      std::optional<ConvParts> parts = getConvParts(def);
      if (!parts || parts->residual || parts->hasEpilogueActivation() ||
          !def->hasOneUse())
        continue;
      // No broadcasting: the residual is added element by element.
      ArrayRef<int64_t> shape = add.getType().getShape();
      if (cast<RankedTensorType>(residual.getType()).getShape() != shape ||
          cast<RankedTensorType>(convSide.getType()).getShape() != shape)
        continue;
      parts->residual = residual;
      replaceWithFused(rewriter, add, def, add.getType(), *parts);
      rewriter.eraseOp(def);
      return success();
    }
    return rewriter.notifyMatchFailure(
        add, "no operand is a conv without epilogue used only here");
  }
};

struct FuseRelu : OpRewritePattern<ReluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReluOp relu,
                                PatternRewriter &rewriter) const override {
    Operation *def = relu.getInput().getDefiningOp();
    std::optional<ConvParts> parts = getConvParts(def);
    if (!parts || parts->hasEpilogueActivation() || !def->hasOneUse())
      return rewriter.notifyMatchFailure(
          relu, "input is not a conv without activation used only here");
    parts->relu = true;
    replaceWithFused(rewriter, relu, def, relu.getType(), *parts);
    rewriter.eraseOp(def);
    return success();
  }
};

/// An elementwise activation of a conv (sigmoid, silu, hardswish,
/// hardsigmoid, clamp - ReLU6 -, gelu) becomes the fused convolution's
/// `activation`, as FuseRelu does for relu: the op's name and parameters.
template <typename OpTy> struct FuseActivation : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  /// The fused op's activation attributes of `op`: a ConvActivation is
  /// named as the op it fuses.
  static void describe(OpTy op, Builder &b, ConvParts &parts) {
    parts.activation = b.getStringAttr(op->getName().stripDialect());
    if constexpr (std::is_same_v<OpTy, GeluOp>) {
      if (op.getApproximate() == "tanh")
        parts.activation =
            b.getStringAttr(stringifyConvActivation(ConvActivation::GeluTanh));
    } else if constexpr (std::is_same_v<OpTy, HardsigmoidOp>) {
      parts.activationAlpha = op.getAlphaAttr();
      parts.activationBeta = op.getBetaAttr();
    } else if constexpr (std::is_same_v<OpTy, ClampOp>) {
      parts.activationAlpha = op.getMinAttr();
      parts.activationBeta = op.getMaxAttr();
    }
  }

  /// The activation of a linear layer (possibly reshaped, as an N-D MatMul
  /// is): a linear without one, used only here.
  LogicalResult fuseIntoLinear(OpTy op, PatternRewriter &rewriter) const {
    std::optional<LinearEpilogueSite> site =
        LinearEpilogueSite::match(op.getInput());
    if (!site)
      return rewriter.notifyMatchFailure(
          op, "input is not a linear without activation used only here");
    ConvParts activation;
    describe(op, rewriter, activation);
    site->fold(rewriter, op, site->linear.getBias(), activation.activation,
               activation.activationAlpha, activation.activationBeta);
    return success();
  }

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Operation *def = op.getInput().getDefiningOp();
    if (succeeded(fuseIntoLinear(op, rewriter)))
      return success();
    std::optional<ConvParts> parts = getConvParts(def);
    if (!parts || parts->hasEpilogueActivation() || !def->hasOneUse())
      return rewriter.notifyMatchFailure(
          op, "input is not a conv without activation used only here");
    describe(op, rewriter, *parts);
    replaceWithFused(rewriter, op, def, op.getType(), *parts);
    rewriter.eraseOp(def);
    return success();
  }
};

class FuseConvPass
    : public ::mlir::memfmt::impl::FuseConvBase<FuseConvPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    if (foldBatchNorm)
      patterns.add<FoldBatchNormIntoConv>(&getContext());
    // The linear bias's canonicalization too, so that this pass alone
    // gives a linear its bias before its activation.
    if (fuseEpilogues)
      AddOp::getCanonicalizationPatterns(patterns, &getContext());
    if (fuseEpilogues)
      patterns.add<FuseResidualAdd, FuseRelu, FuseActivation<SigmoidOp>,
                   FuseActivation<SiluOp>, FuseActivation<HardswishOp>,
                   FuseActivation<HardsigmoidOp>, FuseActivation<ClampOp>,
                   FuseActivation<GeluOp>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
