//===- ApplySgd.cpp - Gradients to in-place SGD updates -------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-apply-sgd finishes a training step: memfmt-differentiate leaves a
// function that returns the loss followed by the parameters' gradients, each
// gradient result marked `memfmt.gradient_of = "<weight name>"`. For each
// function that has such results:
//
//  1. The options are checked as torch.optim.SGD checks its arguments
//     (lr, momentum and weight_decay >= 0; nesterov needs momentum > 0 and
//     dampening 0).
//  2. Each marked result is matched with the `memfmt.weight` of its name
//     (same type); a name marked twice, or one no weight of the function
//     reads, is an error at the function.
//  3. Before the return, so after every other op and hence after every read
//     of the parameter, in result order: `memfmt.all_reduce` ("avg") of
//     the gradient (the mean over data-parallel replicas, as
//     DistributedDataParallel averages gradients; the identity when the
//     step runs alone), the momentum buffer
//     `memfmt.weight "<name>.momentum_buffer" {zero_init}` (momentum != 0
//     only; with momentum 0 torch keeps no buffer and sgd_update ignores
//     the operand, so the gradient stands in for it), `memfmt.sgd_update`,
//     and `memfmt.assign_weight` of the new parameter and the new buffer.
//  4. The marked results leave the function; the others (the loss) stay.
//  5. Where the loss was scaled (memfmt-differentiate's `loss-scale`: the
//     function has a `memfmt.loss_scale`), GradScaler's step: each
//     averaged gradient is unscaled by `memfmt.unscale_gradient`, whose
//     `found_inf` flag is chained through all of them before the first
//     update; every sgd_update (and the step count's increment) is
//     skipped where the flag is set; and `memfmt.update_loss_scale` of the
//     scale and `memfmt.weight "grad_scaler.growth_tracker" {zero_init}`
//     is assigned back to both states.
//
// With `dampening` 0 a zero-initialised buffer makes the first step exact
// without a step count (`momentum * 0 + g == g`), which is why the buffer
// is `zero_init` and sgd_update gets no `step`. With `dampening` != 0 and
// momentum it does not (torch's first step sets the buffer to the undamped
// gradient), so the step count becomes model state too:
// `memfmt.weight "optimizer.step" {zero_init} : tensor<i64>` (the steps
// taken before this one) is every sgd_update's `step`, and after the last
// update `memfmt.increment` of it is assigned back. It is optimizer state
// like the buffers: checkpoints save it beside them.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <cmath>

namespace mlir::memfmt {
#define GEN_PASS_DEF_APPLYSGD
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

std::string mlir::memfmt::checkSgdOptions(double lr, double momentum,
                                          double dampening, double weightDecay,
                                          bool nesterov) {
  std::string problem;
  llvm::raw_string_ostream os(problem);
  // Numbers as the user typed them (-1, 0.0001), not in %e form.
  auto number = [](double value) { return llvm::format("%g", value); };
  if (!(lr >= 0))
    os << "lr=" << number(lr) << " must be >= 0 (torch.optim.SGD's check)";
  else if (!(momentum >= 0))
    os << "momentum=" << number(momentum)
       << " must be >= 0 (torch.optim.SGD's check)";
  else if (!(weightDecay >= 0))
    os << "weight-decay=" << number(weightDecay)
       << " must be >= 0 (torch.optim.SGD's check)";
  else if (nesterov && (momentum <= 0 || dampening != 0))
    os << "nesterov requires momentum > 0 and dampening = 0 "
          "(torch.optim.SGD's check), got momentum="
       << number(momentum) << " dampening=" << number(dampening);
  return problem;
}

std::string mlir::memfmt::checkInitialLossScale(double initScale) {
  if (initScale == 0 ||
      (initScale > 0 && std::isfinite(static_cast<float>(initScale))))
    return "";
  std::string problem;
  llvm::raw_string_ostream(problem)
      << "loss-scale=" << llvm::format("%g", initScale)
      << " must be 0 (none) or a positive f32 value";
  return problem;
}

std::string mlir::memfmt::checkLossScaleOptions(std::optional<double> initScale,
                                                double growthFactor,
                                                double backoffFactor,
                                                int64_t growthInterval) {
  if (initScale)
    if (std::string problem = checkInitialLossScale(*initScale);
        !problem.empty())
      return problem;
  std::string problem;
  llvm::raw_string_ostream os(problem);
  auto number = [](double value) { return llvm::format("%g", value); };
  if (!(growthFactor > 1) || !std::isfinite(growthFactor))
    os << "loss-scale-growth-factor=" << number(growthFactor)
       << " must be > 1 (GradScaler's check)";
  else if (!(backoffFactor > 0 && backoffFactor < 1))
    os << "loss-scale-backoff-factor=" << number(backoffFactor)
       << " must lie in (0, 1) (GradScaler checks < 1)";
  else if (growthInterval < 1)
    os << "loss-scale-growth-interval=" << growthInterval
       << " must be >= 1 (GradScaler's check)";
  return problem;
}

namespace {

/// The result attribute memfmt-differentiate puts on gradient results.
constexpr llvm::StringLiteral kGradientOf = "memfmt.gradient_of";

/// A gradient result and the parameter it updates.
struct GradientResult {
  unsigned index;
  WeightOp parameter;
};

class ApplySgdPass : public ::mlir::memfmt::impl::ApplySgdBase<ApplySgdPass> {
public:
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult checkOptions(func::FuncOp func);
  FailureOr<SmallVector<GradientResult>> findGradients(func::FuncOp func);
  FailureOr<LossScaleOp> findLossScale(func::FuncOp func);
  void update(RewriterBase &rewriter, Value gradient, WeightOp parameter,
              Value step, Value foundInf);
  void updateLossScale(RewriterBase &rewriter, Location loc, Value scale,
                       Value foundInf);
};

/// Step 1: torch.optim.SGD's argument checks, plus what is not supported.
LogicalResult ApplySgdPass::checkOptions(func::FuncOp func) {
  std::string problem =
      checkSgdOptions(lr, momentum, dampening, weightDecay, nesterov);
  if (problem.empty())
    problem = checkLossScaleOptions(std::nullopt, growthFactor, backoffFactor,
                                    growthInterval);
  if (problem.empty())
    return success();
  return func.emitError() << "memfmt-apply-sgd: " << problem;
}

/// The loss scale of a step differentiated from a scaled loss (null when
/// the loss is not scaled); two are an error.
FailureOr<LossScaleOp> ApplySgdPass::findLossScale(func::FuncOp func) {
  LossScaleOp found;
  WalkResult walk = func.walk([&](LossScaleOp scale) {
    if (found) {
      scale.emitError() << "memfmt-apply-sgd: a second memfmt.loss_scale; a "
                           "training step has one loss scale";
      return WalkResult::interrupt();
    }
    found = scale;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (found && func.walk([](WeightOp weight) {
                     return weight.getName() == kGrowthTrackerName
                                ? WalkResult::interrupt()
                                : WalkResult::advance();
                   })
                   .wasInterrupted())
    return func.emitError() << "memfmt-apply-sgd: the model has a weight "
                               "named '"
                            << kGrowthTrackerName
                            << "', the name of the loss scale's growth tracker";
  return found;
}

/// Step 2: the marked results and their parameters, in result order.
FailureOr<SmallVector<GradientResult>>
ApplySgdPass::findGradients(func::FuncOp func) {
  llvm::StringMap<WeightOp> parameters;
  func.walk([&](WeightOp weight) {
    parameters.try_emplace(weight.getName(), weight);
  });
  if (WeightOp taken = parameters.lookup(kStepCountName);
      taken && momentum != 0 && dampening != 0)
    return taken.emitError()
           << "memfmt-apply-sgd: the model has a weight named '"
           << kStepCountName << "', the name of the optimizer's step count";
  SmallVector<GradientResult> gradients;
  llvm::StringMap<unsigned> seen;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    Attribute mark = func.getResultAttr(i, kGradientOf);
    if (!mark)
      continue;
    auto name = dyn_cast<StringAttr>(mark);
    if (!name || name.getValue().empty())
      return func.emitError()
             << "memfmt-apply-sgd: result " << i << " has " << kGradientOf
             << " = " << mark << "; expected the name of a parameter";
    auto [it, inserted] = seen.try_emplace(name.getValue(), i);
    if (!inserted)
      return func.emitError()
             << "memfmt-apply-sgd: results " << it->second << " and " << i
             << " are both the gradient of '" << name.getValue() << "'";
    WeightOp parameter = parameters.lookup(name.getValue());
    if (!parameter)
      return func.emitError()
             << "memfmt-apply-sgd: result " << i << " is the gradient of '"
             << name.getValue() << "', which no memfmt.weight of @"
             << func.getName() << " reads";
    if (parameter.getZeroInit())
      return func.emitError()
             << "memfmt-apply-sgd: result " << i << " is the gradient of '"
             << name.getValue()
             << "', which is optimizer state (zero_init), not a parameter";
    Type type = func.getResultTypes()[i];
    if (type != parameter.getType())
      return func.emitError()
             << "memfmt-apply-sgd: result " << i << " (the gradient of '"
             << name.getValue() << "') has type " << type
             << " but the parameter has type " << parameter.getType();
    gradients.push_back({i, parameter});
  }
  return gradients;
}

/// Step 3 for one parameter, at the rewriter's insertion point, from its
/// gradient averaged over the replicas (and unscaled).
void ApplySgdPass::update(RewriterBase &rewriter, Value gradient,
                          WeightOp parameter, Value step, Value foundInf) {
  Location loc = parameter.getLoc();
  Type type = parameter.getType();
  Value buffer = gradient;
  std::string bufferName = (parameter.getName() + ".momentum_buffer").str();
  if (momentum != 0)
    buffer = WeightOp::create(rewriter, loc, type, bufferName,
                              /*zero_init=*/true);
  auto sgd = SgdUpdateOp::create(
      rewriter, loc, TypeRange{type, type}, parameter, gradient, buffer, step,
      foundInf, rewriter.getF64FloatAttr(lr),
      rewriter.getF64FloatAttr(momentum), rewriter.getF64FloatAttr(dampening),
      rewriter.getF64FloatAttr(weightDecay), rewriter.getBoolAttr(nesterov));
  AssignWeightOp::create(rewriter, loc, parameter.getName(), sgd.getParamOut());
  if (momentum != 0)
    AssignWeightOp::create(rewriter, loc, bufferName,
                           sgd.getMomentumBufferOut());
}

/// Step 5: GradScaler.update, after the updates.
void ApplySgdPass::updateLossScale(RewriterBase &rewriter, Location loc,
                                   Value scale, Value foundInf) {
  Value tracker = WeightOp::create(
      rewriter, loc, RankedTensorType::get({}, rewriter.getI64Type()),
      kGrowthTrackerName, /*zero_init=*/true);
  auto next = UpdateLossScaleOp::create(
      rewriter, loc, TypeRange{scale.getType(), tracker.getType()}, scale,
      tracker, foundInf, rewriter.getF64FloatAttr(growthFactor),
      rewriter.getF64FloatAttr(backoffFactor),
      rewriter.getI64IntegerAttr(growthInterval));
  AssignWeightOp::create(rewriter, loc, kLossScaleName, next.getScaleOut());
  AssignWeightOp::create(rewriter, loc, kGrowthTrackerName,
                         next.getGrowthTrackerOut());
}

void ApplySgdPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (func.isExternal())
    return;
  bool hasGradients = false;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    hasGradients |= bool(func.getResultAttr(i, kGradientOf));
  if (!hasGradients)
    return;
  if (!func.getBody().hasOneBlock()) {
    func.emitError() << "memfmt-apply-sgd: @" << func.getName()
                     << " has more than one block; the updates go at the end "
                        "of a training step of one block";
    return signalPassFailure();
  }
  if (failed(checkOptions(func)))
    return signalPassFailure();
  FailureOr<SmallVector<GradientResult>> gradients = findGradients(func);
  if (failed(gradients))
    return signalPassFailure();
  FailureOr<LossScaleOp> lossScale = findLossScale(func);
  if (failed(lossScale))
    return signalPassFailure();

  IRRewriter rewriter(&getContext());
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  rewriter.setInsertionPoint(ret);
  // The steps taken before this one, where the first step is special.
  Value step;
  if (momentum != 0 && dampening != 0)
    step = WeightOp::create(rewriter, func.getLoc(),
                            RankedTensorType::get({}, rewriter.getI64Type()),
                            kStepCountName, /*zero_init=*/true);
  // The replicas' mean gradients (the gradients themselves with one
  // replica), unscaled and checked where the loss was scaled: every
  // gradient is known before the first update reads the flag.
  SmallVector<Value> averaged;
  Value foundInf;
  for (GradientResult &gradient : *gradients) {
    Location loc = gradient.parameter.getLoc();
    Value value = ret.getOperand(gradient.index);
    value = AllReduceOp::create(rewriter, loc, value.getType(), value,
                                rewriter.getStringAttr("avg"));
    if (*lossScale) {
      auto unscaled = UnscaleGradientOp::create(
          rewriter, loc, TypeRange{value.getType(), (*lossScale).getType()},
          value, *lossScale, foundInf);
      value = unscaled.getGradOut();
      foundInf = unscaled.getFoundInfOut();
    }
    averaged.push_back(value);
  }
  llvm::BitVector erased(func.getNumResults());
  for (auto [gradient, value] : llvm::zip_equal(*gradients, averaged)) {
    update(rewriter, value, gradient.parameter, step, foundInf);
    erased.set(gradient.index);
  }
  if (step)
    AssignWeightOp::create(
        rewriter, func.getLoc(), kStepCountName,
        IncrementOp::create(rewriter, func.getLoc(), step, foundInf));
  if (*lossScale)
    updateLossScale(rewriter, func.getLoc(), *lossScale, foundInf);
  rewriter.modifyOpInPlace(ret, [&] { ret->eraseOperands(erased); });
  rewriter.modifyOpInPlace(func, [&] {
    if (failed(func.eraseResults(erased)))
      llvm_unreachable("func.func results can always be erased");
  });
}

} // namespace
