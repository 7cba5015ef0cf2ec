//===- OutputDirectory.cpp - All-or-nothing output directory --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Implements OutputDirectory.h with llvm::sys::fs: a uniquely named sibling
// directory, and renames at the end. Replacing a previous output moves it
// aside first and deletes it only after the new one is in place. Signal
// handlers remove the temporary directory when the process is killed.
//
//===----------------------------------------------------------------------===//

#include "OutputDirectory.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

#include <csignal>
#include <cstring>

#ifdef __linux__
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace memfmt::compile;
using mlir::failure;
using mlir::LogicalResult;
using mlir::success;

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

//===----------------------------------------------------------------------===//
// Removal on signals
//===----------------------------------------------------------------------===//

// The temporary directory of the live OutputDirectory, for the signal
// handlers: a failed write to stderr (`memfmt-compile ... 2>&1 | head`),
// Ctrl-C or a crash must not leave it behind either. The tool has one
// OutputDirectory at a time. A handler may interrupt malloc, so removal uses
// only system calls on static storage: the directory holds plain files
// only, listed with getdents64 and unlinked, then the directory is removed.
static char activeTemporary[4096];

static void removeActiveTemporary() {
  if (!activeTemporary[0])
    return;
#ifdef __linux__
  int dir = ::open(activeTemporary, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    alignas(8) static char entries[8192];
    long bytes;
    while ((bytes = ::syscall(SYS_getdents64, dir, entries, sizeof(entries))) >
           0) {
      for (long offset = 0; offset < bytes;) {
        // struct linux_dirent64: ino (8), off (8), reclen (2), type (1),
        // name (NUL-terminated).
        unsigned short length;
        std::memcpy(&length, entries + offset + 16, sizeof(length));
        const char *name = entries + offset + 19;
        if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0)
          ::unlinkat(dir, name, 0);
        offset += length;
      }
    }
    ::close(dir);
  }
  ::rmdir(activeTemporary);
#endif
  activeTemporary[0] = '\0';
}

static void removeOnCrash(void *) { removeActiveTemporary(); }

/// Removes the directory, then lets the signal do what it would have done
/// (it is blocked while this runs and delivered on return).
static void removeOnTermination(int signal) {
  removeActiveTemporary();
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

static void installSignalHandlers(llvm::StringRef temporary) {
  if (temporary.size() >= sizeof(activeTemporary))
    return;
  llvm::copy(temporary, activeTemporary);
  activeTemporary[temporary.size()] = '\0';
  static bool installed = false;
  if (installed)
    return;
  installed = true;
  // Crashes go through LLVM's handlers (stack trace, then this callback);
  // termination signals come here directly.
  llvm::sys::AddSignalHandler(removeOnCrash, nullptr);
  for (int signal : {SIGHUP, SIGINT, SIGPIPE, SIGTERM})
    ::signal(signal, removeOnTermination);
}

//===----------------------------------------------------------------------===//
// OutputDirectory
//===----------------------------------------------------------------------===//

/// `p` made absolute, without `.` and `..` and without a trailing slash.
static std::string absolutePath(llvm::StringRef p) {
  llvm::SmallString<256> result(p);
  fs::make_absolute(result);
  path::remove_dots(result, /*remove_dot_dot=*/true);
  while (result.size() > 1 && path::is_separator(result.back()))
    result.pop_back();
  return std::string(result);
}

/// True if the directory `dir` has no entries.
static bool isEmptyDirectory(llvm::StringRef dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  return !ec && it == fs::directory_iterator();
}

LogicalResult OutputDirectory::checkTarget(llvm::StringRef p,
                                           llvm::raw_ostream &errors) {
  std::string target = absolutePath(p);
  llvm::StringRef parent = path::parent_path(target);
  if (!parent.empty() && !fs::is_directory(parent)) {
    errors << "cannot write '" << p << "': the directory '" << parent
           << "' does not exist";
    return failure();
  }
  if (!fs::exists(target))
    return success();
  if (!fs::is_directory(target)) {
    errors << "cannot write '" << p << "': it exists and is not a directory";
    return failure();
  }
  if (isEmptyDirectory(target) ||
      fs::exists(llvm::Twine(target) + "/manifest.json"))
    return success();
  errors << "'" << p << "' exists and is not an output of memfmt-compile "
         << "(it has no manifest.json); choose another -o or remove it";
  return failure();
}

mlir::FailureOr<std::unique_ptr<OutputDirectory>>
OutputDirectory::create(llvm::StringRef p, llvm::raw_ostream &errors) {
  if (failed(checkTarget(p, errors)))
    return failure();
  std::string target = absolutePath(p);
  llvm::SmallString<256> temporary;
  if (std::error_code ec = fs::createUniqueDirectory(
          llvm::Twine(target) + ".partial", temporary)) {
    errors << "cannot create a directory next to '" << p
           << "': " << ec.message();
    return failure();
  }
  installSignalHandlers(temporary);
  return std::unique_ptr<OutputDirectory>(
      new OutputDirectory(target, std::string(temporary)));
}

OutputDirectory::~OutputDirectory() {
  activeTemporary[0] = '\0';
  if (!committed)
    fs::remove_directories(temporary, /*IgnoreErrors=*/true);
}

std::string OutputDirectory::file(llvm::StringRef fileName) const {
  llvm::SmallString<256> result(temporary);
  path::append(result, fileName);
  return std::string(result);
}

LogicalResult OutputDirectory::commit(llvm::raw_ostream &errors) {
  // Move a previous output aside; delete it once the new one is in place.
  std::string previous;
  if (fs::exists(target)) {
    llvm::SmallString<256> aside;
    if (std::error_code ec =
            fs::createUniqueDirectory(llvm::Twine(target) + ".old", aside)) {
      errors << "cannot replace '" << target << "': " << ec.message();
      return failure();
    }
    previous = std::string(aside);
    // rename() replaces the empty directory just made.
    if (std::error_code ec = fs::rename(target, previous)) {
      fs::remove_directories(previous, /*IgnoreErrors=*/true);
      errors << "cannot replace '" << target << "': " << ec.message();
      return failure();
    }
  }
  if (std::error_code ec = fs::rename(temporary, target)) {
    if (!previous.empty())
      (void)fs::rename(previous, target);
    errors << "cannot move the output to '" << target << "': " << ec.message();
    return failure();
  }
  committed = true;
  activeTemporary[0] = '\0';
  if (!previous.empty())
    fs::remove_directories(previous, /*IgnoreErrors=*/true);
  return success();
}
