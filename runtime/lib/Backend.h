//===- Backend.h - The interface of device backends -------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// A backend runs the kernels of Kernels.def on one device family. It gets
// arguments that EntryPoints.cpp has decoded and Validate.cpp has checked
// (ranks, shapes, attribute ranges, aliasing), so it only chooses an
// implementation and runs it. There is one `run` overload per kernel,
// generated from Kernels.def, so a kernel added there is a compile error in
// every backend until it is implemented.
//
// The CPU backend lives in runtime/cpu/. A CUDA backend will live in
// runtime/cuda/ behind the same interface, created by the context for
// MEMFMT_BACKEND_CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_BACKEND_H
#define MEMFMT_RUNTIME_LIB_BACKEND_H

#include "KernelArgs.h"

#include "memfmt/runtime/memfmt_runtime.h"

#include <memory>
#include <string>

namespace memfmt::runtime {

class KernelCall;

/// Resolved context options a backend is created with.
struct BackendOptions {
  /// MEMFMT_KERNELS_FAST or MEMFMT_KERNELS_REFERENCE (never DEFAULT).
  memfmt_kernels_t kernels = MEMFMT_KERNELS_FAST;
};

/// Runs kernels on one device family. Not thread-safe (one per context).
class Backend {
public:
  virtual ~Backend();

#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  virtual memfmt_status_t run(KernelCall &call, const args::NAME &a) = 0;
#include "memfmt/runtime/Kernels.def"

  /// Drops per-node caches (primitives, prepacked weights).
  virtual void invalidateCaches() = 0;
};

/// Creates the CPU backend. Returns null and sets `error` on failure.
std::unique_ptr<Backend> createCpuBackend(const BackendOptions &options,
                                          std::string &error);

} // namespace memfmt::runtime

#endif // MEMFMT_RUNTIME_LIB_BACKEND_H
