//===- Profile.cpp - memfmt-run --profile: per-node kernel times ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The profiled runs of --profile and the table of their entries; see
// Profile.h.
//
//===----------------------------------------------------------------------===//

#include "Profile.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace memfmt::run {

ProfileResult profile(memfmt_model_t *Model, const ModelBuffers &B,
                      int64_t Runs) {
  memfmt_context_t *Ctx = memfmt_model_context(Model);
  memfmt_context_profile_reset(Ctx);
  memfmt_context_set_profiling(Ctx, 1);
  auto Start = std::chrono::steady_clock::now();
  for (int64_t I = 0; I < Runs; ++I)
    runRaw(Model, B);
  if (B.DeviceCtx)
    synchronize(Model);
  auto End = std::chrono::steady_clock::now();
  memfmt_context_set_profiling(Ctx, 0);

  ProfileResult R;
  R.Runs = Runs;
  R.WallMsPerRun =
      std::chrono::duration<double, std::milli>(End - Start).count() /
      static_cast<double>(Runs);
  int64_t Count = 0;
  memfmt_context_profile_count(Ctx, &Count);
  double Total = 0;
  for (int64_t I = 0; I < Count; ++I) {
    ProfileRow Row;
    if (memfmt_context_profile_entry(Ctx, I, &Row.Entry) != MEMFMT_STATUS_OK)
      continue;
    const char *Name = nullptr;
    Row.Name =
        memfmt_model_node_name(Model, Row.Entry.node, &Name) == MEMFMT_STATUS_OK
            ? Name
            : "?";
    Total += Row.Entry.total_seconds;
    R.Rows.push_back(std::move(Row));
  }
  // Largest total first; ties in node order (std::stable_sort would do, but
  // libstdc++ 12's uses a helper that Clang flags as deprecated).
  std::sort(R.Rows.begin(), R.Rows.end(),
            [](const ProfileRow &A, const ProfileRow &B) {
              if (A.Entry.total_seconds != B.Entry.total_seconds)
                return A.Entry.total_seconds > B.Entry.total_seconds;
              if (A.Entry.node != B.Entry.node)
                return A.Entry.node < B.Entry.node;
              return std::strcmp(A.Entry.kernel, B.Entry.kernel) < 0;
            });
  R.KernelMsPerRun = Total * 1000.0 / static_cast<double>(Runs);
  return R;
}

} // namespace memfmt::run
