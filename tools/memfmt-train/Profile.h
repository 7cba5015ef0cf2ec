//===- Profile.h - memfmt-train --profile: kernel times per step -*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The summary of the runtime's per-node profile over the profiled training
// steps: milliseconds per step for each kernel entry point (summed over its
// nodes, which shows where a training step's time goes: the convolution
// backward passes, batch norm, the SGD updates) and for each node.
// The text table goes to stdout; the same numbers go into --json's
// "profile".
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_TRAIN_PROFILE_H
#define MEMFMT_TOOLS_MEMFMT_TRAIN_PROFILE_H

#include "memfmt/runtime/model.h"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace memfmt::train {

/// Summarises the profile that \p Model's context recorded over \p Steps
/// steps (kernels per entry point, then every node, slowest first) and the
/// wall time \p StepMs per step, for comparison with the kernels' sum.
nlohmann::json summariseProfile(memfmt_model_t *Model, int64_t Steps,
                                double StepMs);

/// Prints what summariseProfile returned as two tables, the second with
/// the \p TopNodes slowest nodes.
void printProfile(const nlohmann::json &Profile, size_t TopNodes = 15);

} // namespace memfmt::train

#endif // MEMFMT_TOOLS_MEMFMT_TRAIN_PROFILE_H
