//===- SharedLibrary.h - LLVM dialect to a native shared library -*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Translates an LLVM-dialect module to LLVM IR, emits an object file for the
// host CPU in-process with LLVM's TargetMachine (-O3, PIC), and links it into
// a shared library with ld.lld against the memfmt runtime.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TARGET_SHAREDLIBRARY_H
#define MEMFMT_TARGET_SHAREDLIBRARY_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::memfmt {

/// Emits `objectPath` for `module` (LLVM dialect) for `cpu` (an LLVM CPU
/// name such as "x86-64-v2"), or for the host CPU when `cpu` is empty.
LogicalResult emitObjectFile(ModuleOp module, StringRef objectPath,
                             StringRef cpu = "");

/// Links `objectPath` into the shared library `libraryPath`, which records a
/// dependency on the runtime library `runtimeLibrary` (its directory becomes
/// the library's RUNPATH).
LogicalResult linkSharedLibrary(Location loc, StringRef objectPath,
                                StringRef libraryPath,
                                StringRef runtimeLibrary);

} // namespace mlir::memfmt

#endif // MEMFMT_TARGET_SHAREDLIBRARY_H
