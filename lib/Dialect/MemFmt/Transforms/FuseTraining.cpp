//===- FuseTraining.cpp - Fusion into training batch norm -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-fuse-training removes memory-bound passes from a training step, as
// torch.compile's fusion of batch norm, relu and the residual add does. On
// the CPU a ResNet training step spends a third of its time in passes over
// activations (bench/RESULTS.md), and the batch norm kernels already read
// and write every element: they take the add, the relu and relu's gradient
// into those passes. With the greedy rewrite driver:
//
//  * FuseResidualIntoBatchNorm: add(bn#0, r) or add(r, bn#0), equal shapes,
//    bn a `native_batch_norm` with no epilogue and no other use of its
//    output, becomes bn with `residual r`. The fused op is built at the add
//    (r may be computed after bn: torchvision computes the downsample
//    after the main branch); users of bn's other results standing between
//    the two (the running statistics' assign_weight) move after it, which
//    needs them to have no used results.
//  * FuseReluIntoBatchNorm: relu(bn#0), bn without relu and with no other
//    use of its output, becomes bn with `relu` set, in bn's place.
//  * FuseReluGradIntoBatchNormBackward: native_batch_norm_backward(
//    threshold_backward(g, y, 0), x, ...) where y is the output of a
//    relu-fused bn of x with the same saved statistics and the
//    threshold_backward has no other use, becomes the backward of g with
//    `output y` and `relu` set. Where the masked gradient has other uses
//    (it is also the residual's gradient) the threshold_backward stays:
//    fusing would then add reads, not remove a pass.
//  * FuseGradientSumIntoThresholdBackward: threshold_backward(add(a, b), y),
//    a, b and the sum of one type and the sum used only here, becomes
//    threshold_backward(a, y) with `addend b`: the gradient of a value with
//    two uses (a residual block's input: its first convolution's and the
//    residual's) is summed and masked by the previous block's relu in one
//    pass. It runs after the patterns above have finished: where a mask
//    moved into a batch norm backward (one pass for the mask either way) the
//    add stays, and a threshold_backward with an addend is not fused into a
//    batch norm backward (whose kernel has no addend).
//
// Values never change (L8): the fused kernels round each step as the
// separate add, relu and threshold_backward kernels do.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_FUSETRAINING
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// The training batch norm whose output `value` is, if nothing else uses
/// that output; null otherwise.
NativeBatchNormOp soleOutputUse(Value value) {
  auto bn = value.getDefiningOp<NativeBatchNormOp>();
  if (!bn || value != bn.getOutput() || !value.hasOneUse())
    return {};
  return bn;
}

/// A copy of `bn` at the rewriter's insertion point with `residual` and
/// `relu`, replacing bn (its output by the copy's).
NativeBatchNormOp rebuild(PatternRewriter &rewriter, NativeBatchNormOp bn,
                          Value residual, bool relu) {
  auto fused = NativeBatchNormOp::create(
      rewriter, bn.getLoc(), bn->getResultTypes(), bn.getInput(),
      bn.getWeight(), bn.getBias(), bn.getRunningMean(), bn.getRunningVar(),
      residual, bn.getEpsAttr(), bn.getMomentumAttr(),
      relu ? rewriter.getBoolAttr(true) : BoolAttr());
  rewriter.replaceOp(bn, fused->getResults());
  return fused;
}

struct FuseResidualIntoBatchNorm : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> shape = add.getOutput().getType().getShape();
    if (add.getSelf().getType().getShape() != shape ||
        add.getOther().getType().getShape() != shape)
      return rewriter.notifyMatchFailure(add, "broadcasting add");
    for (auto [operand, residual] :
         {std::pair{add.getSelf(), add.getOther()},
          std::pair{add.getOther(), add.getSelf()}}) {
      NativeBatchNormOp bn = soleOutputUse(operand);
      if (!bn || bn.getResidual() || bn.getRelu() ||
          bn->getBlock() != add->getBlock() ||
          residual.getType() != bn.getInput().getType())
        continue;
      FailureOr<SmallVector<Operation *>> early = usersBefore(bn, add);
      if (failed(early))
        continue;
      rewriter.setInsertionPoint(add);
      NativeBatchNormOp fused = rebuild(rewriter, bn, residual, false);
      // After the fused op (just before the add), in their order.
      for (Operation *user : *early)
        rewriter.moveOpBefore(user, add);
      rewriter.replaceOp(add, fused.getOutput());
      return success();
    }
    return rewriter.notifyMatchFailure(
        add, "no operand is a fusable training batch norm's sole use");
  }

  /// The users of `bn`'s results other than its output that stand before
  /// `add`, in block order; fails if one of them has a used result (it
  /// could not move after the fused op alone) or is in another block.
  static FailureOr<SmallVector<Operation *>> usersBefore(NativeBatchNormOp bn,
                                                         AddOp add) {
    SmallVector<Operation *> early;
    for (Value result : bn->getResults().drop_front())
      for (Operation *user : result.getUsers()) {
        if (user->getBlock() != add->getBlock())
          return failure();
        if (!user->isBeforeInBlock(add))
          continue;
        if (!user->use_empty())
          return failure();
        early.push_back(user);
      }
    llvm::sort(early, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    early.erase(llvm::unique(early), early.end());
    return early;
  }
};

struct FuseReluIntoBatchNorm : OpRewritePattern<ReluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReluOp relu,
                                PatternRewriter &rewriter) const override {
    NativeBatchNormOp bn = soleOutputUse(relu.getInput());
    if (!bn || bn.getRelu() ||
        bn.getOutput().getType() != relu.getOutput().getType())
      return rewriter.notifyMatchFailure(
          relu, "input is not a training batch norm without relu used only "
                "here");
    rewriter.setInsertionPoint(bn);
    NativeBatchNormOp fused = rebuild(rewriter, bn, bn.getResidual(), true);
    rewriter.replaceOp(relu, fused.getOutput());
    return success();
  }
};

struct FuseReluGradIntoBatchNormBackward
    : OpRewritePattern<NativeBatchNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(NativeBatchNormBackwardOp backward,
                                PatternRewriter &rewriter) const override {
    auto threshold = backward.getGradOut().getDefiningOp<ThresholdBackwardOp>();
    if (backward.getRelu() || !threshold || threshold.getAddend() ||
        !threshold.getThreshold().isZero() ||
        !threshold.getGradInput().hasOneUse())
      return rewriter.notifyMatchFailure(
          backward, "grad_out is not relu's gradient used only here");
    auto bn = threshold.getSelf().getDefiningOp<NativeBatchNormOp>();
    if (!bn || !bn.getRelu() || threshold.getSelf() != bn.getOutput() ||
        bn.getInput() != backward.getInput() ||
        bn.getSaveMean() != backward.getSaveMean() ||
        bn.getSaveInvstd() != backward.getSaveInvstd() ||
        threshold.getGradOutput().getType() != backward.getGradOut().getType())
      return rewriter.notifyMatchFailure(
          backward, "relu's gradient is not of this batch norm's fused relu");
    rewriter.replaceOpWithNewOp<NativeBatchNormBackwardOp>(
        backward, backward->getResultTypes(), threshold.getGradOutput(),
        backward.getInput(), backward.getWeight(), backward.getSaveMean(),
        backward.getSaveInvstd(), bn.getOutput(), backward.getEpsAttr(),
        backward.getOutputMaskAttr(), rewriter.getBoolAttr(true));
    rewriter.eraseOp(threshold);
    return success();
  }
};

struct FuseGradientSumIntoThresholdBackward
    : OpRewritePattern<ThresholdBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ThresholdBackwardOp threshold,
                                PatternRewriter &rewriter) const override {
    auto add = threshold.getGradOutput().getDefiningOp<AddOp>();
    Type type = threshold.getGradOutput().getType();
    if (threshold.getAddend() || !add || !add.getOutput().hasOneUse() ||
        add.getSelf().getType() != type || add.getOther().getType() != type)
      return rewriter.notifyMatchFailure(
          threshold, "grad_output is not a sum of two gradients of its type "
                     "used only here");
    rewriter.replaceOpWithNewOp<ThresholdBackwardOp>(
        threshold, threshold.getGradInput().getType(), add.getSelf(),
        threshold.getSelf(), add.getOther(), threshold.getThresholdAttr());
    rewriter.eraseOp(add);
    return success();
  }
};

class FuseTrainingPass
    : public ::mlir::memfmt::impl::FuseTrainingBase<FuseTrainingPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    // The batch norm fusions first, then the gradient sums into the masks
    // that are left (a mask a batch norm backward takes over needs no sum).
    RewritePatternSet batchNorm(&getContext()), sums(&getContext());
    batchNorm.add<FuseResidualIntoBatchNorm, FuseReluIntoBatchNorm,
                  FuseReluGradIntoBatchNormBackward>(&getContext());
    sums.add<FuseGradientSumIntoThresholdBackward>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(batchNorm))) ||
        failed(applyPatternsGreedily(getOperation(), std::move(sums))))
      return signalPassFailure();
  }
};

} // namespace
