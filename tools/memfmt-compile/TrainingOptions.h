//===- TrainingOptions.h - memfmt-compile's --train flags -------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The command-line flags of a training step (TrainingOptions.cpp): --train,
// torch.optim.SGD's flags, --gradients and --grad-scaler with GradScaler's
// options, and what memfmt-compile asks of them.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_COMPILE_TRAININGOPTIONS_H
#define MEMFMT_TOOLS_MEMFMT_COMPILE_TRAININGOPTIONS_H

#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include <string>

namespace llvm::cl {
class OptionCategory;
} // namespace llvm::cl

namespace memfmt::compile {

/// The --help category of the training flags.
llvm::cl::OptionCategory &trainingCategory();

/// --train: compile a training step.
bool isTraining();

/// --train --gradients: the step returns the gradients, no SGD update.
bool returnsGradients();

/// The SGD, --gradients and loss-scaling fields of `options` (whose
/// precision is set: an f16 step scales its loss unless --grad-scaler=false).
void setTrainingFlags(mlir::memfmt::TrainingPipelineOptions &options);

/// Why the training flags do not go together ("" when they do): an SGD or
/// loss scaling flag without --train, a GradScaler option without
/// --grad-scaler, --grad-scaler with --gradients. The values themselves are
/// checked by checkTrainingPipelineOptions.
std::string checkTrainingFlags(mlir::memfmt::ComputePrecision precision);

/// "lr 0.1 momentum 0.9 weight decay 0.0001" with dampening, nesterov and
/// the loss scale where set: the progress line's summary.
std::string describeTrainingFlags(mlir::memfmt::ComputePrecision precision);

} // namespace memfmt::compile

#endif // MEMFMT_TOOLS_MEMFMT_COMPILE_TRAININGOPTIONS_H
