//===- Checkpoint.h - memfmt-train's safetensors checkpoints ----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Saving and resuming training state through the parameter C API
// (model.h). A checkpoint is two .safetensors files:
//
//  * FILE.safetensors: a torchvision state_dict — every parameter and
//    running statistic (the parameters not marked zero_init), f32 and
//    logical (NCHW), plus `<module>.num_batches_tracked` (I64, shape []) for
//    every batch-norm module (each prefix of a `*.running_mean`): its value
//    in the weight source the model was loaded from (0 when it has none)
//    plus the steps taken, as torch counts them. load_state_dict(strict=
//    True) accepts it, and so do memfmt-compile --weights and --resume.
//  * FILE.optimizer.safetensors: the zero_init parameters (the momentum
//    buffers, `<param>.momentum_buffer`, f32; with dampening the step count
//    `optimizer.step`, I64), with metadata {"step": "<steps>"}.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_TRAIN_CHECKPOINT_H
#define MEMFMT_TOOLS_MEMFMT_TRAIN_CHECKPOINT_H

#include "memfmt/runtime/model.h"

#include <cstdint>
#include <string>

namespace memfmt::train {

/// FILE.safetensors -> FILE.optimizer.safetensors.
std::string optimizerPath(const std::string &WeightsPath);

/// Fails unless \p Path can be created or overwritten (checked before
/// training, so a bad --save path costs no training time).
void checkWritable(const std::string &Path);

/// The step count a model's weight source records: its first
/// `*.num_batches_tracked`, or 0 (synthetic weights, or none in the file).
int64_t initialStep(memfmt_model_t *Model);

/// Writes the checkpoint of \p Model after \p Steps steps in all.
void saveCheckpoint(memfmt_model_t *Model, const std::string &Path,
                    int64_t Steps);

/// Loads the momentum buffers of the checkpoint \p Path (the weights were
/// loaded with the model, as its weight source) into \p Model, and returns
/// the step count.
int64_t resumeOptimizer(memfmt_model_t *Model, const std::string &Path);

/// Copies every parameter of \p To from the parameter of the same name of
/// \p From (the eval model from the training model).
void copyParameters(memfmt_model_t *From, memfmt_model_t *To,
                    const std::string &ToName);

} // namespace memfmt::train

#endif // MEMFMT_TOOLS_MEMFMT_TRAIN_CHECKPOINT_H
