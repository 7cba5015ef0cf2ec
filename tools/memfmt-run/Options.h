//===- Options.h - memfmt-run's command line --------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The options memfmt-run takes (its --help text is in Options.cpp) and the
// parser that reads them. A bad command line is a ToolError with exit
// status 2 and a message that ends "(see memfmt-run --help)".
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_RUN_OPTIONS_H
#define MEMFMT_TOOLS_MEMFMT_RUN_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memfmt::run {

/// An input as given on the command line: a .npy file or seeded noise.
struct InputSource {
  bool Random = true;
  uint64_t Seed = 0;
  std::string Path;

  /// "random:SEED" or the path, for the summary.
  std::string describe() const {
    return Random ? "random:" + std::to_string(Seed) : Path;
  }
};

/// Everything the command line says.
struct Options {
  std::string Dir;
  std::vector<InputSource> Inputs;
  std::optional<std::string> Output;
  bool Check = false;
  std::optional<int64_t> Bench;
  bool Profile = false;
  bool Json = false;
  std::optional<std::string> Weights;
  int32_t Threads = 0;
  bool CudaGraph = false;
  bool Tf32 = false;
  bool NoWinograd = false;
  bool AllowBf16 = false;
  bool Cpu = false;
};

/// Parses the command line; prints the help and exits 0 for -h/--help.
Options parseArgs(int Argc, char **Argv);

} // namespace memfmt::run

#endif // MEMFMT_TOOLS_MEMFMT_RUN_OPTIONS_H
