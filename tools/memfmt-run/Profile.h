//===- Profile.h - memfmt-run --profile: per-node kernel times --*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// --profile: the context's per-node profile (memfmt_context_set_profiling)
// over N runs on staged buffers (StagedRun.h), one row per node and kernel
// with the model's node name, sorted by total time (ties in node order),
// and the kernels' and the whole model's time per run.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_RUN_PROFILE_H
#define MEMFMT_TOOLS_MEMFMT_RUN_PROFILE_H

#include "StagedRun.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memfmt::run {

struct ProfileRow {
  memfmt_profile_entry_t Entry;
  std::string Name;
};

struct ProfileResult {
  int64_t Runs = 0;
  double WallMsPerRun = 0;
  double KernelMsPerRun = 0;
  std::vector<ProfileRow> Rows;
};

/// Profiles \p Runs runs of \p Model on \p B.
ProfileResult profile(memfmt_model_t *Model, const ModelBuffers &B,
                      int64_t Runs);

} // namespace memfmt::run

#endif // MEMFMT_TOOLS_MEMFMT_RUN_PROFILE_H
