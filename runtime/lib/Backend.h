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
// The CPU backend lives in runtime/cpu/, the CUDA backend in runtime/cuda/
// (created by the context for MEMFMT_BACKEND_CUDA when the runtime is built
// with the CUDA toolkit). Besides the kernels, a backend owns its device's
// memory, copies, ordering, timers and graphs (the device functions of
// memfmt_runtime.h); the defaults here are the CPU's: host memory,
// synchronous copies, a steady-clock timer and no graphs.
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
  /// CUDA: the device ordinal, TF32 for f32 convolutions and linear layers,
  /// and the workspace limit of one convolution in bytes.
  int device = 0;
  bool allowTf32 = false;
  int64_t workspaceLimit = int64_t(1) << 30;
  /// CPU: f32 3x3 convolutions may use Winograd's algorithm; f32
  /// convolutions and their gradients may multiply in bf16 (where the CPU
  /// has bf16 instructions); the number of threads the kernels run on
  /// (resolved, >= 1).
  bool winograd = true;
  bool allowBf16 = false;
  int numThreads = 1;
  /// CPU: pooling and copies run memfmt's own loops even where oneDNN has
  /// the kernel (MEMFMT_CPU_OWN_LOOPS=on), so that tests reach those loops
  /// on a oneDNN build; oneDNN's are faster (CpuBackend.cpp).
  bool ownLoops = false;
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

  // The device functions of memfmt_runtime.h. Each failure returns a status
  // and sets `error` (without the C function's name).

  /// A description of the device for memfmt_context_device_description.
  virtual std::string description() = 0;
  /// `bytes` of zeroed memory aligned to at least 256 bytes.
  virtual memfmt_status_t allocate(int64_t bytes, void **out,
                                   std::string &error);
  virtual memfmt_status_t deallocate(void *ptr, std::string &error);
  virtual memfmt_status_t copy(void *dst, const void *src, int64_t bytes,
                               memfmt_copy_kind_t kind, std::string &error);
  virtual memfmt_status_t synchronize(std::string &error);
  virtual memfmt_status_t timerStart(std::string &error);
  virtual memfmt_status_t timerStop(double &milliseconds, std::string &error);
  virtual memfmt_status_t captureBegin(std::string &error);
  virtual memfmt_status_t captureEnd(void **graph, std::string &error);
  virtual memfmt_status_t launchGraph(void *graph, std::string &error);
  virtual void destroyGraph(void *graph);
  /// The context joins the replicas of `communicator` (null: it is the
  /// only one again); a collective call on every replica. The CPU needs
  /// nothing here (its kernels call the communicator's functions).
  virtual memfmt_status_t setCommunicator(const memfmt_communicator_t *,
                                          std::string &) {
    return MEMFMT_STATUS_OK;
  }
  /// Called after each kernel call while profiling, before its time is
  /// taken (the CUDA backend waits for the kernel there, so that a fault on
  /// the device is reported by the call that caused it).
  virtual memfmt_status_t finishProfiledCall(std::string &) {
    return MEMFMT_STATUS_OK;
  }

private:
  double timerStartSeconds = 0;
};

/// Creates the CPU backend. Returns null and sets `error` on failure.
std::unique_ptr<Backend> createCpuBackend(const BackendOptions &options,
                                          std::string &error);

/// Creates the CUDA backend (defined only in runtimes built with the CUDA
/// toolkit). Returns null and sets `error` and `status` on failure:
/// NO_DEVICE without a usable device or driver, INVALID_ARGUMENT for a
/// device ordinal out of range, BACKEND_ERROR when a library fails to start.
std::unique_ptr<Backend> createCudaBackend(const BackendOptions &options,
                                           std::string &error,
                                           memfmt_status_t &status);

} // namespace memfmt::runtime

#endif // MEMFMT_RUNTIME_LIB_BACKEND_H
