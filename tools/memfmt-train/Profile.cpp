//===- Profile.cpp - memfmt-train --profile: kernel times per step --------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Reads the context's profile entries and sums them per kernel entry point;
// see Profile.h.
//
//===----------------------------------------------------------------------===//

#include "Profile.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace memfmt::train {

nlohmann::json summariseProfile(memfmt_model_t *Model, int64_t Steps,
                                double StepMs) {
  memfmt_context_t *Ctx = memfmt_model_context(Model);
  int64_t Count = 0;
  memfmt_context_profile_count(Ctx, &Count);
  struct Kernel {
    double Seconds = 0;
    int64_t Calls = 0;
    std::set<std::string> Impls;
  };
  std::map<std::string, Kernel> Kernels;
  std::vector<memfmt_profile_entry_t> Entries;
  double Total = 0;
  for (int64_t I = 0; I < Count; ++I) {
    memfmt_profile_entry_t E;
    if (memfmt_context_profile_entry(Ctx, I, &E) != MEMFMT_STATUS_OK)
      continue;
    Kernel &K = Kernels[E.kernel];
    K.Seconds += E.total_seconds;
    K.Calls += E.calls;
    K.Impls.insert(E.impl);
    Total += E.total_seconds;
    Entries.push_back(E);
  }
  const double PerStep = Steps > 0 ? 1000.0 / double(Steps) : 0.0;
  nlohmann::json ByKernel = nlohmann::json::array();
  for (const auto &[Name, K] : Kernels) {
    std::string Impl;
    for (const std::string &I : K.Impls)
      Impl += (Impl.empty() ? "" : ",") + I;
    ByKernel.push_back({{"kernel", Name},
                        {"impl", Impl},
                        {"ms_per_step", K.Seconds * PerStep},
                        {"calls_per_step", Steps ? double(K.Calls) / Steps : 0},
                        {"percent", Total > 0 ? 100 * K.Seconds / Total : 0}});
  }
  std::sort(ByKernel.begin(), ByKernel.end(),
            [](const nlohmann::json &A, const nlohmann::json &B) {
              return A["ms_per_step"].get<double>() >
                     B["ms_per_step"].get<double>();
            });
  std::sort(
      Entries.begin(), Entries.end(),
      [](const memfmt_profile_entry_t &A, const memfmt_profile_entry_t &B) {
        if (A.total_seconds != B.total_seconds)
          return A.total_seconds > B.total_seconds;
        return A.node < B.node;
      });
  nlohmann::json Nodes = nlohmann::json::array();
  for (size_t I = 0; I < Entries.size(); ++I) {
    const char *Name = nullptr;
    if (memfmt_model_node_name(Model, Entries[I].node, &Name) !=
        MEMFMT_STATUS_OK)
      Name = "?";
    Nodes.push_back({{"node", Entries[I].node},
                     {"name", Name},
                     {"kernel", Entries[I].kernel},
                     {"impl", Entries[I].impl},
                     {"ms_per_step", Entries[I].total_seconds * PerStep}});
  }
  return {{"steps", Steps},
          {"kernels_ms_per_step", Total * PerStep},
          {"step_ms", StepMs},
          {"kernels", ByKernel},
          {"nodes", Nodes}};
}

void printProfile(const nlohmann::json &P, size_t TopNodes) {
  std::printf("profile over %lld steps: kernels %.1f ms per step, step %.1f "
              "ms\n",
              static_cast<long long>(P["steps"].get<int64_t>()),
              P["kernels_ms_per_step"].get<double>(),
              P["step_ms"].get<double>());
  std::printf("  %10s %6s %7s  %-36s %s\n", "ms/step", "%", "calls", "kernel",
              "impl");
  for (const nlohmann::json &K : P["kernels"])
    std::printf("  %10.2f %5.1f%% %7.4g  %-36s %s\n",
                K["ms_per_step"].get<double>(), K["percent"].get<double>(),
                K["calls_per_step"].get<double>(),
                K["kernel"].get<std::string>().c_str(),
                K["impl"].get<std::string>().c_str());
  std::printf("slowest nodes:\n  %10s %5s  %-36s %-14s %s\n", "ms/step", "node",
              "kernel", "impl", "node name");
  for (size_t I = 0; I < P["nodes"].size() && I < TopNodes; ++I) {
    const nlohmann::json &N = P["nodes"][I];
    std::printf("  %10.2f %5lld  %-36s %-14s %s\n",
                N["ms_per_step"].get<double>(),
                static_cast<long long>(N["node"].get<int64_t>()),
                N["kernel"].get<std::string>().c_str(),
                N["impl"].get<std::string>().c_str(),
                N["name"].get<std::string>().c_str());
  }
}

} // namespace memfmt::train
