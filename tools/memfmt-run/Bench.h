//===- Bench.h - memfmt-run --bench: timing runs ----------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// --bench N: 3 warm-up runs, then N timed runs on staged buffers
// (StagedRun.h). On the CPU each run is timed with the steady clock; on a
// GPU with CUDA events around each run (the device's own clock). The
// result has the median, p10 and p90 ms per batch (linear interpolation
// between ranks) and images per second (batch = dim 0 of input 0).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_RUN_BENCH_H
#define MEMFMT_TOOLS_MEMFMT_RUN_BENCH_H

#include "StagedRun.h"

#include <cstdint>

namespace memfmt::run {

/// The warm-up runs before the timed ones.
constexpr int64_t BenchWarmupRuns = 3;

struct BenchResult {
  int64_t Runs = 0;
  int64_t Batch = 1;
  double MedianMs = 0, P10Ms = 0, P90Ms = 0, MeanMs = 0, MinMs = 0;
  double ImagesPerSecond = 0;
};

/// Times \p Runs runs of \p Model on \p B after the warm-up runs.
BenchResult bench(memfmt_model_t *Model, const Tensors &T,
                  const ModelBuffers &B, int64_t Runs);

} // namespace memfmt::run

#endif // MEMFMT_TOOLS_MEMFMT_RUN_BENCH_H
