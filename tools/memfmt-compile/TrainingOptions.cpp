//===- TrainingOptions.cpp - memfmt-compile's --train flags ---------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The flags of a training step (--train): torch.optim.SGD's (defaults
// torchvision's ResNet recipe), --gradients, and torch.cuda.amp.GradScaler's
// (--grad-scaler and its options, GradScaler's defaults; on by default in
// an f16 step), in a --help
// category of their own; what they set in the training pipeline's options,
// the checks among the flags themselves (the pipeline checks the values),
// and their one-line summary for the progress output.
//
//===----------------------------------------------------------------------===//

#include "TrainingOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <initializer_list>

using namespace ::memfmt::compile;
namespace cl = llvm::cl;

llvm::cl::OptionCategory &memfmt::compile::trainingCategory() {
  static cl::OptionCategory category("memfmt-compile training options");
  return category;
}

namespace {

cl::opt<bool> train(
    "train", cl::init(false),
    cl::desc("Compile a training step: forward, mean cross-entropy loss, "
             "backward and an SGD update of the model state, in f32 on the "
             "cpu; DIR/eval gets the inference model of the same network"),
    cl::cat(trainingCategory()));
cl::opt<double> learningRate(
    "lr", cl::init(0.1), cl::value_desc("F"),
    cl::desc("--train: SGD learning rate (default 0.1, torchvision's ResNet "
             "recipe)"),
    cl::cat(trainingCategory()));
cl::opt<double> sgdMomentum(
    "momentum", cl::init(0.9), cl::value_desc("F"),
    cl::desc("--train: SGD momentum (default 0.9, torchvision's ResNet "
             "recipe; 0 keeps no momentum buffers)"),
    cl::cat(trainingCategory()));
cl::opt<double>
    sgdDampening("dampening", cl::init(0.0), cl::value_desc("F"),
                 cl::desc("--train: SGD dampening for momentum (default 0)"),
                 cl::cat(trainingCategory()));
cl::opt<double> weightDecay(
    "weight-decay", cl::init(1e-4), cl::value_desc("F"),
    cl::desc("--train: SGD weight decay (default 1e-4, torchvision's ResNet "
             "recipe)"),
    cl::cat(trainingCategory()));
cl::opt<bool> nesterov("nesterov", cl::init(false),
                       cl::desc("--train: Nesterov momentum (default off)"),
                       cl::cat(trainingCategory()));
cl::opt<bool> gradients(
    "gradients", cl::init(false),
    cl::desc("--train: no SGD update; the step returns the loss (output "
             "'loss') and every parameter's gradient (outputs 'grad.NAME'), "
             "to check them"),
    cl::cat(trainingCategory()));
// --train --grad-scaler: dynamic loss scaling, torch.cuda.amp.GradScaler's
// options and defaults.
cl::opt<bool> gradScaler(
    "grad-scaler", cl::init(false),
    cl::desc("--train: dynamic loss scaling as torch.cuda.amp.GradScaler "
             "(the loss scaled, gradients unscaled, steps with a non-finite "
             "gradient skipped, the scale adapted; state saved with the "
             "optimizer's)"),
    cl::cat(trainingCategory()));
cl::opt<double> gradScalerInitScale(
    "grad-scaler-init-scale", cl::init(65536.0), cl::value_desc("F"),
    cl::desc("--grad-scaler: the first step's scale (default 65536)"),
    cl::cat(trainingCategory()));
cl::opt<double> gradScalerGrowthFactor(
    "grad-scaler-growth-factor", cl::init(2.0), cl::value_desc("F"),
    cl::desc("--grad-scaler: the scale's growth (default 2)"),
    cl::cat(trainingCategory()));
cl::opt<double> gradScalerBackoffFactor(
    "grad-scaler-backoff-factor", cl::init(0.5), cl::value_desc("F"),
    cl::desc("--grad-scaler: the scale's backoff after a skipped step "
             "(default 0.5)"),
    cl::cat(trainingCategory()));
cl::opt<int64_t> gradScalerGrowthInterval(
    "grad-scaler-growth-interval", cl::init(2000), cl::value_desc("N"),
    cl::desc("--grad-scaler: finite steps before the scale grows (default "
             "2000)"),
    cl::cat(trainingCategory()));

} // namespace

bool memfmt::compile::isTraining() { return train; }

bool memfmt::compile::returnsGradients() { return gradients; }

/// --grad-scaler as given, else on for f16 (whose small gradients need it,
/// as PyTorch's f16 autocast needs a GradScaler).
static bool scalesLoss(mlir::memfmt::ComputePrecision precision) {
  if (gradScaler.getNumOccurrences())
    return gradScaler;
  return precision == mlir::memfmt::ComputePrecision::F16;
}

void memfmt::compile::setTrainingFlags(
    mlir::memfmt::TrainingPipelineOptions &options) {
  options.lr = learningRate;
  options.momentum = sgdMomentum;
  options.dampening = sgdDampening;
  options.weightDecay = weightDecay;
  options.nesterov = nesterov;
  options.gradients = gradients;
  options.lossScale = scalesLoss(options.precision) ? gradScalerInitScale : 0.0;
  options.lossScaleGrowthFactor = gradScalerGrowthFactor;
  options.lossScaleBackoffFactor = gradScalerBackoffFactor;
  options.lossScaleGrowthInterval = gradScalerGrowthInterval;
}

std::string
memfmt::compile::checkTrainingFlags(mlir::memfmt::ComputePrecision precision) {
  const std::initializer_list<cl::Option *> sgdOptions = {
      &learningRate, &sgdMomentum, &sgdDampening,
      &weightDecay,  &nesterov,    &gradients};
  const std::initializer_list<cl::Option *> scalerOptions = {
      &gradScalerInitScale, &gradScalerGrowthFactor, &gradScalerBackoffFactor,
      &gradScalerGrowthInterval};
  if (!train) {
    for (cl::Option *option : sgdOptions)
      if (option->getNumOccurrences())
        return "--" + option->ArgStr.str() +
               " is an SGD option: it needs "
               "--train";
    if (gradScaler.getNumOccurrences())
      return "--grad-scaler is a loss scaling option: it needs --train";
    for (cl::Option *option : scalerOptions)
      if (option->getNumOccurrences())
        return "--" + option->ArgStr.str() +
               " is a loss scaling option: it needs --train";
    return "";
  }
  for (cl::Option *option : scalerOptions)
    if (option->getNumOccurrences() && !scalesLoss(precision))
      return "--" + option->ArgStr.str() +
             " is a loss scaling option: it needs --grad-scaler";
  if (scalesLoss(precision) && gradients)
    return "--grad-scaler (on by default in f16) needs the SGD update: "
           "--gradients returns the gradients of the unscaled loss";
  return "";
}

std::string memfmt::compile::describeTrainingFlags(
    mlir::memfmt::ComputePrecision precision) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("lr %g momentum %g weight decay %g",
                     learningRate.getValue(), sgdMomentum.getValue(),
                     weightDecay.getValue());
  if (sgdDampening != 0)
    os << llvm::format(" dampening %g", sgdDampening.getValue());
  if (nesterov)
    os << " nesterov";
  if (scalesLoss(precision))
    os << llvm::format(", loss scale from %g", gradScalerInitScale.getValue());
  return text;
}
