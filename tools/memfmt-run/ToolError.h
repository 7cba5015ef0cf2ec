//===- ToolError.h - How memfmt-run stops on an error -----------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Every part of memfmt-run reports a problem the same way: it throws a
// ToolError with the message and the exit status (1 for a run-time
// problem, 2 for a bad command line), and main prints it once, as text on
// stderr and, with --json, as a JSON object on stdout.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_RUN_TOOLERROR_H
#define MEMFMT_TOOLS_MEMFMT_RUN_TOOLERROR_H

#include <string>
#include <utility>

namespace memfmt::run {

/// A failure that ends the tool: the message and the exit status.
struct ToolError {
  std::string Message;
  int ExitCode = 1;
};

/// Ends the tool with \p Message and exit status \p ExitCode.
[[noreturn]] inline void fail(std::string Message, int ExitCode = 1) {
  throw ToolError{std::move(Message), ExitCode};
}

} // namespace memfmt::run

#endif // MEMFMT_TOOLS_MEMFMT_RUN_TOOLERROR_H
