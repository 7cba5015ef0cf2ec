//===- TrainingForward.cpp - Inference forward to training forward --------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-training-forward turns the inference forward of a model (what the
// importers and the zoo build: `func.func @resnet18(%x) -> tensor<NxCxf32>`)
// into the forward half of a training step, the function that
// memfmt-differentiate then differentiates. On each public function with a
// body (memfmt-compile's rule for the model's function):
//
//  1. Check, before changing anything, that it is an inference forward: one
//     result, a ranked `[N, C]` tensor (the logits); no op of a training
//     step yet (a `memfmt.assign_weight` or a loss); no batch norm folded
//     into a convolution for inference; every `memfmt.batch_norm` in
//     inference mode, reading its running statistics from `memfmt.weight`s
//     that no other batch norm updates, with more than one value per
//     channel (training divides by n - 1, as torch refuses it too).
//  2. Each `memfmt.batch_norm` becomes `memfmt.native_batch_norm` with the
//     same `eps` and `momentum`; its `running_mean_out` and
//     `running_var_out` are stored with `memfmt.assign_weight` under the
//     running statistics' names (torch's `train()` mode updates them in
//     place).
//  3. Each `memfmt.max_pool2d` becomes `memfmt.max_pool2d_with_indices`
//     (the backward scatters through the indices); its indices have the
//     output's shape and layout.
//  4. A last argument `%target: tensor<Nxi64>` is appended and the function
//     returns `memfmt.cross_entropy_loss(logits, target)` (0-d, mean
//     reduction) instead of the logits.
//
// Every error is located at the op or function it is about; on an error the
// function is left as it was.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_TRAININGFORWARD
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// The parameter a batch norm's running statistic is read from, or an error
/// at the batch norm.
FailureOr<WeightOp> getRunningStatistic(BatchNormOp batchNorm, Value value,
                                        StringRef role) {
  if (auto weight = value.getDefiningOp<WeightOp>())
    return weight;
  return batchNorm.emitError()
         << "memfmt-training-forward: the batch norm's " << role
         << " is not a memfmt.weight; training updates the running "
            "statistics in the model state, so they must be parameters";
}

/// Step 1 for one batch norm: records its running statistics' names in
/// `updated` (two batch norms may not update one statistic).
LogicalResult checkBatchNorm(BatchNormOp batchNorm,
                             llvm::StringMap<Operation *> &updated) {
  if (batchNorm.getTraining())
    return batchNorm.emitError()
           << "memfmt-training-forward: the batch norm is already in "
              "training mode (training = true); the pass expects an "
              "inference forward";
  RankedTensorType input = batchNorm.getInput().getType();
  int64_t channels = input.getRank() > 1 ? input.getDimSize(1) : 0;
  if (input.hasStaticShape() && channels > 0 &&
      input.getNumElements() / channels <= 1)
    return batchNorm.emitError()
           << "memfmt-training-forward: the batch norm sees 1 value per "
              "channel (input "
           << input << "); training needs more (the running variance "
           << "divides by n - 1): use a larger batch or input";
  for (auto [value, role] :
       {std::pair<Value, StringRef>{batchNorm.getRunningMean(), "running_mean"},
        {batchNorm.getRunningVar(), "running_var"}}) {
    FailureOr<WeightOp> weight = getRunningStatistic(batchNorm, value, role);
    if (failed(weight))
      return failure();
    auto [it, inserted] =
        updated.try_emplace(weight->getName(), batchNorm.getOperation());
    if (!inserted) {
      InFlightDiagnostic diag =
          batchNorm.emitError()
          << "memfmt-training-forward: running statistic '" << weight->getName()
          << "' is also updated by another batch norm; each running "
             "statistic is assigned once per step";
      diag.attachNote(it->second->getLoc()) << "the other batch norm";
      return diag;
    }
  }
  return success();
}

/// Step 1: whether `func` is an inference forward this pass can turn into a
/// training forward. Returns the logits' type.
FailureOr<RankedTensorType> checkForward(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "memfmt-training-forward: @" << func.getName()
                            << " has more than one block; a model's forward "
                               "is one block of ops";
  if (func.getNumResults() != 1)
    return func.emitError()
           << "memfmt-training-forward: @" << func.getName() << " returns "
           << func.getNumResults()
           << " values; a model's forward for training returns exactly one, "
              "the logits [N, C]";
  auto logits = dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
  if (!logits || logits.getRank() != 2 ||
      !isa<FloatType>(logits.getElementType()))
    return func.emitError()
           << "memfmt-training-forward: @" << func.getName() << " returns "
           << func.getResultTypes()[0]
           << "; the cross-entropy loss needs logits of shape [N, C] "
              "(batch, classes)";
  llvm::StringMap<Operation *> updated;
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<AssignWeightOp, CrossEntropyLossOp>(op)) {
      op->emitError() << "memfmt-training-forward: @" << func.getName()
                      << " is already a training step (it has a loss or "
                         "updates model state)";
      return WalkResult::interrupt();
    }
    if (isa<FoldBatchNormOp>(op)) {
      op->emitError() << "memfmt-training-forward: a batch norm was folded "
                         "into a convolution for inference (memfmt-fuse-"
                         "conv); run the pass on the unfused model";
      return WalkResult::interrupt();
    }
    if (auto batchNorm = dyn_cast<BatchNormOp>(op))
      if (failed(checkBatchNorm(batchNorm, updated)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return logits;
}

/// Step 2: `memfmt.native_batch_norm` in place of `batchNorm`, with the
/// running statistics assigned after it.
void convertBatchNorm(RewriterBase &rewriter, BatchNormOp batchNorm) {
  rewriter.setInsertionPoint(batchNorm);
  auto runningMean = batchNorm.getRunningMean().getDefiningOp<WeightOp>();
  auto runningVar = batchNorm.getRunningVar().getDefiningOp<WeightOp>();
  // save_mean and save_invstd: [C] in the input's element type.
  auto statistics =
      RankedTensorType::get(batchNorm.getRunningMean().getType().getShape(),
                            batchNorm.getInput().getType().getElementType());
  auto training = NativeBatchNormOp::create(
      rewriter, batchNorm.getLoc(), batchNorm.getOutput().getType(), statistics,
      statistics, runningMean.getType(), runningVar.getType(),
      batchNorm.getInput(), batchNorm.getWeight(), batchNorm.getBias(),
      runningMean, runningVar, /*residual=*/Value(), batchNorm.getEpsAttr(),
      batchNorm.getMomentumAttr(), /*relu=*/BoolAttr());
  AssignWeightOp::create(rewriter, batchNorm.getLoc(), runningMean.getName(),
                         training.getRunningMeanOut());
  AssignWeightOp::create(rewriter, batchNorm.getLoc(), runningVar.getName(),
                         training.getRunningVarOut());
  rewriter.replaceOp(batchNorm, training.getOutput());
}

/// Step 3: `memfmt.max_pool2d_with_indices` in place of `pool`.
void convertMaxPool(RewriterBase &rewriter, MaxPool2dOp pool) {
  rewriter.setInsertionPoint(pool);
  RankedTensorType output = pool.getOutput().getType();
  auto indices = RankedTensorType::get(output.getShape(), rewriter.getI64Type(),
                                       output.getEncoding());
  auto withIndices = MaxPool2dWithIndicesOp::create(
      rewriter, pool.getLoc(), TypeRange{output, indices}, pool->getOperands(),
      pool->getAttrs());
  rewriter.replaceOp(pool, withIndices.getOutput());
}

/// Step 4: the target argument and the loss as the only result.
LogicalResult appendLoss(RewriterBase &rewriter, func::FuncOp func,
                         RankedTensorType logits) {
  Block &entry = func.getBody().front();
  auto targetType =
      RankedTensorType::get({logits.getDimSize(0)}, rewriter.getI64Type());
  Location targetLoc =
      NameLoc::get(rewriter.getStringAttr("target"), func.getLoc());
  if (failed(func.insertArgument(func.getNumArguments(), targetType,
                                 DictionaryAttr(), targetLoc)))
    return func.emitError()
           << "memfmt-training-forward: cannot add the target argument";
  BlockArgument target = entry.getArguments().back();
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  rewriter.setInsertionPoint(ret);
  auto lossType = RankedTensorType::get({}, logits.getElementType());
  auto loss = CrossEntropyLossOp::create(rewriter, ret.getLoc(), lossType,
                                         ret.getOperand(0), target);
  rewriter.modifyOpInPlace(
      ret, [&] { ret.getOperandsMutable().assign(loss.getOutput()); });
  rewriter.modifyOpInPlace(func, [&] {
    func.setFunctionType(FunctionType::get(
        func.getContext(), entry.getArgumentTypes(), {lossType}));
    func.removeResAttrsAttr();
  });
  return success();
}

class TrainingForwardPass
    : public ::mlir::memfmt::impl::TrainingForwardBase<TrainingForwardPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.isPublic())
      return;
    FailureOr<RankedTensorType> logits = checkForward(func);
    if (failed(logits))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    SmallVector<BatchNormOp> batchNorms;
    SmallVector<MaxPool2dOp> pools;
    func.walk([&](Operation *op) {
      if (auto batchNorm = dyn_cast<BatchNormOp>(op))
        batchNorms.push_back(batchNorm);
      else if (auto pool = dyn_cast<MaxPool2dOp>(op))
        pools.push_back(pool);
    });
    for (BatchNormOp batchNorm : batchNorms)
      convertBatchNorm(rewriter, batchNorm);
    for (MaxPool2dOp pool : pools)
      convertMaxPool(rewriter, pool);
    if (failed(appendLoss(rewriter, func, *logits)))
      return signalPassFailure();
  }
};

} // namespace
