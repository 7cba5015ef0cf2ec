//===- Report.h - memfmt-run's summary, as text or JSON ---------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Everything one memfmt-run invocation found (the model, the context, the
// inputs, a summary of each output, and the check, bench and profile when
// asked for), and its two printed forms: the text summary and, for --json,
// one JSON object (nlohmann/json, keys in a fixed order). An error under
// --json is printed as {"error": ..., "exit_code": ...}.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_RUN_REPORT_H
#define MEMFMT_TOOLS_MEMFMT_RUN_REPORT_H

#include "Bench.h"
#include "Check.h"
#include "ModelIO.h"
#include "Profile.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace memfmt::run {

/// The range of one output's values and, for a 2-D [N, classes] output, the
/// top-5 classes of the first image.
struct OutputSummary {
  double Min = 0, Max = 0, Mean = 0;
  int64_t NonFinite = 0;
  /// (class, value) of the first image, for a 2-D output.
  std::vector<std::pair<int64_t, float>> Top5;
  /// Where --output wrote it, if anywhere.
  std::string File;
};

/// Summarizes the logical values \p V of output \p Info. NaN and infinities
/// are counted, not ranged; NaN ranks last in the top-5, ties by class.
OutputSummary summarize(const memfmt_model_tensor_info_t &Info,
                        const std::vector<float> &V);

/// Everything a run produced, for printing.
struct Report {
  std::string Dir;
  memfmt_model_info_t Info{};
  Tensors T;
  memfmt_context_options_t Context{};
  std::vector<std::string> InputSources;
  /// (rows given, batch) where the inputs gave fewer rows than the batch
  /// (padded with zeros; outputs cut to those rows).
  std::optional<std::pair<int64_t, int64_t>> Rows;
  std::vector<OutputSummary> Outputs;
  std::optional<CheckReport> Check;
  std::optional<BenchResult> Bench;
  std::optional<ProfileResult> Profile;
  /// The device (memfmt_context_device_description); on a GPU, whether
  /// graphs and TF32 are on; on the CPU, whether f32 convolutions may
  /// multiply in bf16 (the device says whether they do).
  std::string Device;
  bool OnDevice = false, CudaGraph = false, Tf32 = false, AllowBf16 = false;

  /// Whether the run passed: no check, or a check that passed.
  bool passed() const { return !Check || Check->Passed; }
};

/// Prints \p R as the text summary on stdout.
void printText(const Report &R);

/// Prints \p R as one JSON object on stdout.
void printJson(const Report &R);

/// Prints a failure as the JSON object {"error", "exit_code"} on stdout.
void printJsonError(const std::string &Message, int ExitCode);

} // namespace memfmt::run

#endif // MEMFMT_TOOLS_MEMFMT_RUN_REPORT_H
