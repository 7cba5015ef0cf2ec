//===- CommandLine.h - Command lines of the model tools ---------*- C++ -*-===//
//-*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What the command-line tools that run compiled models (memfmt-run,
// memfmt-train) share about their command lines and their exit: options in
// --name VALUE or --name=VALUE form, -h/--help printing the usage, one
// positional model directory, decimal numbers checked against their range,
// usage errors with exit status 2 ending "(see TOOL --help)", and a main
// that prints a ToolError once, as text on stderr and, with --json, as a
// JSON object on stdout.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_RUN_COMMANDLINE_H
#define MEMFMT_TOOLS_MEMFMT_RUN_COMMANDLINE_H

#include "ToolError.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace memfmt::run {

/// Walks a tool's command line option by option.
class CommandLine {
public:
  CommandLine(const char *Tool, const char *Usage, int Argc, char **Argv)
      : Tool(Tool), Usage(Usage), Argc(Argc), Argv(Argv) {}

  /// Moves to the next option, keeping positional arguments on the way;
  /// false at the end. Prints the usage and exits 0 for -h/--help.
  bool next() {
    while (++I < Argc) {
      std::string Arg = Argv[I];
      if (Arg == "-h" || Arg == "--help") {
        std::fputs(Usage, stdout);
        std::exit(0);
      }
      if (Arg == "--")
        usageError("unexpected '--'");
      if (Arg.size() < 2 || Arg.compare(0, 2, "--") != 0) {
        if (Arg.size() > 1 && Arg[0] == '-')
          usageError("unknown option '" + Arg + "'");
        Positional.push_back(Arg);
        continue;
      }
      size_t Eq = Arg.find('=');
      HasValue = Eq != std::string::npos;
      Name = Arg.substr(0, Eq);
      Value = HasValue ? Arg.substr(Eq + 1) : "";
      return true;
    }
    return false;
  }

  /// The current option's name ("--steps").
  const std::string &name() const { return Name; }

  /// The current option's value: after '=', else the next argument.
  std::string value() {
    if (HasValue)
      return Value;
    if (I + 1 >= Argc)
      usageError(Name + " needs a value");
    return Argv[++I];
  }

  /// Fails when the current option was given before.
  void once() {
    if (std::find(Seen.begin(), Seen.end(), Name) != Seen.end())
      usageError(Name + " given twice");
    Seen.push_back(Name);
  }

  /// once(), and fails when the current option has a value.
  void flag() {
    if (HasValue)
      usageError(Name + " takes no value");
    once();
  }

  /// The current option's value as a decimal integer in [Min, Max].
  int64_t integer(int64_t Min, int64_t Max) {
    std::string Text = value();
    char *End = nullptr;
    errno = 0;
    long long V = std::strtoll(Text.c_str(), &End, 10);
    if (Text.empty() || *End != '\0' || errno || V < Min || V > Max ||
        !(Text[0] >= '0' && Text[0] <= '9'))
      usageError(Name + " expects an integer from " + std::to_string(Min) +
                 " to " + std::to_string(Max) + ", got '" + Text + "'");
    return V;
  }

  /// \p Digits as a decimal uint64; a usage error \p Message when it is not.
  uint64_t seed(const std::string &Digits, const std::string &Message) const {
    char *End = nullptr;
    errno = 0;
    unsigned long long V = std::strtoull(Digits.c_str(), &End, 10);
    if (Digits.empty() || *End != '\0' || errno || Digits[0] < '0' ||
        Digits[0] > '9')
      usageError(Message);
    return V;
  }

  /// The one positional argument, the model directory.
  std::string modelDirectory() const {
    if (Positional.empty())
      usageError("no model directory given");
    if (Positional.size() > 1)
      usageError("one model directory expected, got '" + Positional[0] +
                 "' and '" + Positional[1] + "'");
    return Positional[0];
  }

  /// Ends the tool with exit status 2: "MESSAGE (see TOOL --help)".
  [[noreturn]] void usageError(const std::string &Message) const {
    fail(Message + " (see " + Tool + " --help)", 2);
  }

private:
  const char *Tool;
  const char *Usage;
  int Argc;
  char **Argv;
  int I = 0;
  std::string Name, Value;
  bool HasValue = false;
  std::vector<std::string> Positional, Seen;
};

/// Runs \p Body as a tool's main: a ToolError is printed once, as "TOOL:
/// error: MESSAGE" on stderr and, when --json is on the command line,
/// through \p PrintJsonError on stdout, and its exit status returned.
inline int runTool(const char *Tool, int Argc, char **Argv,
                   const std::function<int()> &Body,
                   void (*PrintJsonError)(const std::string &, int)) {
  bool Json = false;
  for (int I = 1; I < Argc; ++I)
    Json |= std::strcmp(Argv[I], "--json") == 0;
  try {
    return Body();
  } catch (const ToolError &E) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", Tool, E.Message.c_str());
    if (Json)
      PrintJsonError(E.Message, E.ExitCode);
    return E.ExitCode;
  } catch (const std::exception &E) {
    std::fprintf(stderr, "%s: error: %s\n", Tool, E.what());
    return 1;
  }
}

} // namespace memfmt::run

#endif // MEMFMT_TOOLS_MEMFMT_RUN_COMMANDLINE_H
