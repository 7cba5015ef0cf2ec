//===- OutputDirectory.h - All-or-nothing output directory ------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-compile writes every file into a fresh directory next to the one
// the user named (`DIR.partial-XXXXXX`) and renames it into place only once
// everything succeeded, so a failure never leaves partial output: the
// temporary directory is removed when the object dies uncommitted. An
// existing DIR is replaced only if it is empty or a previous output (it has
// a manifest.json); anything else is left alone with an error.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_COMPILE_OUTPUTDIRECTORY_H
#define MEMFMT_TOOLS_MEMFMT_COMPILE_OUTPUTDIRECTORY_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace memfmt::compile {

class OutputDirectory {
public:
  /// Checks that `path` may be written (its parent exists; it does not
  /// exist, or is empty, or holds a previous output) without creating
  /// anything. On a problem writes one message to `errors`.
  static mlir::LogicalResult checkTarget(llvm::StringRef path,
                                         llvm::raw_ostream &errors);

  /// Creates the temporary directory next to `path`.
  static mlir::FailureOr<std::unique_ptr<OutputDirectory>>
  create(llvm::StringRef path, llvm::raw_ostream &errors);

  OutputDirectory(const OutputDirectory &) = delete;
  OutputDirectory &operator=(const OutputDirectory &) = delete;
  /// Removes the temporary directory unless commit() succeeded.
  ~OutputDirectory();

  /// The path of `fileName` in the temporary directory.
  std::string file(llvm::StringRef fileName) const;
  /// The temporary directory, where every file is written until commit().
  llvm::StringRef temporaryPath() const { return temporary; }
  /// The directory the user named (absolute).
  llvm::StringRef finalPath() const { return target; }

  /// Moves the temporary directory to the final path, replacing a previous
  /// output there.
  mlir::LogicalResult commit(llvm::raw_ostream &errors);

private:
  OutputDirectory(std::string target, std::string temporary)
      : target(std::move(target)), temporary(std::move(temporary)) {}

  std::string target;
  std::string temporary;
  bool committed = false;
};

} // namespace memfmt::compile

#endif // MEMFMT_TOOLS_MEMFMT_COMPILE_OUTPUTDIRECTORY_H
