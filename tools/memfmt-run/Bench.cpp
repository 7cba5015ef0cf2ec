//===- Bench.cpp - memfmt-run --bench: timing runs ------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The timed runs of --bench and their statistics; see Bench.h.
//
//===----------------------------------------------------------------------===//

#include "Bench.h"

#include "ToolError.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <vector>

namespace memfmt::run {

namespace {

/// The \p Q quantile of sorted \p V, interpolating linearly.
double quantile(const std::vector<double> &V, double Q) {
  double Pos = Q * static_cast<double>(V.size() - 1);
  size_t Lo = static_cast<size_t>(std::floor(Pos));
  size_t Hi = std::min(Lo + 1, V.size() - 1);
  return V[Lo] + (V[Hi] - V[Lo]) * (Pos - static_cast<double>(Lo));
}

} // namespace

BenchResult bench(memfmt_model_t *Model, const Tensors &T,
                  const ModelBuffers &B, int64_t Runs) {
  for (int64_t I = 0; I < BenchWarmupRuns; ++I)
    runRaw(Model, B);
  std::vector<double> Ms;
  if (B.DeviceCtx) {
    // The device's own clock: CUDA events around each run.
    memfmt_context_t *Ctx = B.DeviceCtx;
    synchronize(Model);
    for (int64_t I = 0; I < Runs; ++I) {
      double Elapsed = 0;
      if (memfmt_context_timer_start(Ctx) != MEMFMT_STATUS_OK)
        fail(memfmt_context_last_error(Ctx));
      runRaw(Model, B);
      if (memfmt_context_timer_stop(Ctx, &Elapsed) != MEMFMT_STATUS_OK)
        fail(memfmt_context_last_error(Ctx));
      Ms.push_back(Elapsed);
    }
  } else {
    for (int64_t I = 0; I < Runs; ++I) {
      auto Start = std::chrono::steady_clock::now();
      runRaw(Model, B);
      auto End = std::chrono::steady_clock::now();
      Ms.push_back(
          std::chrono::duration<double, std::milli>(End - Start).count());
    }
  }
  BenchResult R;
  R.Runs = Runs;
  R.Batch =
      !T.Inputs.empty() && T.Inputs[0].rank > 0 ? T.Inputs[0].shape[0] : 1;
  R.MeanMs = std::accumulate(Ms.begin(), Ms.end(), 0.0) /
             static_cast<double>(Ms.size());
  std::sort(Ms.begin(), Ms.end());
  R.MinMs = Ms.front();
  R.MedianMs = quantile(Ms, 0.5);
  R.P10Ms = quantile(Ms, 0.1);
  R.P90Ms = quantile(Ms, 0.9);
  R.ImagesPerSecond =
      R.MedianMs > 0 ? static_cast<double>(R.Batch) * 1000.0 / R.MedianMs : 0;
  return R;
}

} // namespace memfmt::run
