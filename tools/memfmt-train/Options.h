//===- Options.h - memfmt-train's command line ------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The options memfmt-train takes (its --help text, which documents the
// shuffle order, is in Options.cpp) and their parser. A bad command line is
// a ToolError with exit status 2 and a message that ends "(see memfmt-train
// --help)".
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_TRAIN_OPTIONS_H
#define MEMFMT_TOOLS_MEMFMT_TRAIN_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>

namespace memfmt::train {

/// The memory format of the `x` array of a data file.
enum class DataFormat { Contiguous, ChannelsLast };

/// Everything the command line says.
struct Options {
  std::string Dir;
  std::string Data;
  DataFormat Format = DataFormat::Contiguous;
  /// At most one of the two; neither means one epoch.
  std::optional<int64_t> Steps;
  std::optional<int64_t> Epochs;
  /// The shuffle seed; none for the data order of the file.
  std::optional<uint64_t> ShuffleSeed;
  int64_t LogEvery = 1;
  std::optional<std::string> Eval;
  std::optional<std::string> Save;
  std::optional<std::string> Resume;
  bool Json = false;
  /// Per-kernel times of every step after the first (--profile).
  bool Profile = false;
  int32_t Threads = 0;
  /// f32 convolutions multiply in bf16 where the CPU has it (allow_bf16).
  bool AllowBf16 = false;
  /// Seconds a collective of data-parallel training may wait for the other
  /// replicas before the job ends with an error.
  double CollectiveTimeout = 300;
  /// Batch-norm statistics over every replica's batch (SyncBatchNorm).
  bool SyncBatchNorm = false;
};

/// Parses the command line; prints the help and exits 0 for -h/--help.
Options parseArgs(int Argc, char **Argv);

} // namespace memfmt::train

#endif // MEMFMT_TOOLS_MEMFMT_TRAIN_OPTIONS_H
