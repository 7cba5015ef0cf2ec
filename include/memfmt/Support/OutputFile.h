//===- OutputFile.h - Finish a written file, report its errors -*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// An llvm::raw_fd_ostream reports a failed write (a full disk, an I/O error)
// only through has_error(), and aborts the process in its destructor if the
// error was never looked at ("IO failure on output stream"). Every file the
// compiler writes is therefore finished here: closed, its error turned into
// a message for the caller's diagnostic, and for an llvm::ToolOutputFile kept
// only when all of it was written (otherwise ToolOutputFile removes it).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_SUPPORT_OUTPUTFILE_H
#define MEMFMT_SUPPORT_OUTPUTFILE_H

#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::memfmt {

/// Closes `os`. Returns the error its writes met, as a message, with the
/// stream's error cleared; std::nullopt if everything reached the file.
inline std::optional<std::string> closeOutput(llvm::raw_fd_ostream &os) {
  os.close();
  if (!os.has_error())
    return std::nullopt;
  std::string message = os.error().message();
  os.clear_error();
  return message;
}

/// Closes `file` and keeps it if everything was written; otherwise returns
/// the error's message and the file is removed when `file` is destroyed.
inline std::optional<std::string> keepOutput(llvm::ToolOutputFile &file) {
  std::optional<std::string> error = closeOutput(file.os());
  if (!error)
    file.keep();
  return error;
}

} // namespace mlir::memfmt

#endif // MEMFMT_SUPPORT_OUTPUTFILE_H
