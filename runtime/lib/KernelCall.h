//===- KernelCall.h - One call of a runtime kernel --------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// A KernelCall carries one call of a kernel entry point from the C boundary
// to the backend: the context, the node id, the kernel's name and element
// type. It decodes the tensor arguments, records the first failure with a
// message of the form "memfmt_conv2d_f32 (node 3): <what is wrong>" in the
// context, and `run` validates, sets the thread count, calls the backend,
// turns C++ exceptions into statuses (nothing escapes into compiled code)
// and adds the call to the context's profile.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_KERNELCALL_H
#define MEMFMT_RUNTIME_LIB_KERNELCALL_H

#include "Backend.h"
#include "Parallel.h"
#include "TensorView.h"
#include "Validate.h"

#include "memfmt/runtime/memfmt_runtime.h"

#include <chrono>
#include <exception>
#include <new>
#include <string>

namespace memfmt::runtime {

class KernelCall {
public:
  KernelCall(memfmt_context_t *ctx, int64_t node, const char *kernel,
             DType dtype);

  int64_t node() const { return nodeId; }
  /// The element type of the entry point.
  DType dtype() const { return elementType; }

  /// Records the first failure: `status` and "<kernel> (node <n>): <message>"
  /// as the context's last error. Returns `status`.
  memfmt_status_t fail(memfmt_status_t status, const std::string &message);

  /// The context's counters (memfmt_context_get_counters); a call without a
  /// context counts into a thread-local sink.
  memfmt_context_counters_t &counters();

  /// True if every element of `view` (of the call's element type) lies in
  /// memory the context was told is constant
  /// (memfmt_context_declare_constant); false without a context.
  bool isConstant(const TensorView &view) const;

  /// The replicas of a data-parallel step (memfmt_context_set_communicator),
  /// or null when the context is the only one.
  const memfmt_communicator_t *communicator() const;

  /// Names the implementation that ran, for the profile (a string literal).
  void setImpl(const char *impl) { implName = impl; }

  /// Decodes tensor argument `name` into `view`; on failure records it (the
  /// call then fails in run()).
  void decode(TensorView &view, const memfmt_memref_t *memref, const char *name,
              DType dtype);

  /// Validates `args` and runs them on the context's backend. Returns the
  /// status of the call (the first failure if decoding failed).
  template <typename Args> int32_t run(const Args &args);

private:
  Backend &backend() const;
  int numThreads() const;
  void finish();

  memfmt_context_t *ctx;
  int64_t nodeId;
  const char *kernelName;
  DType elementType;
  const char *implName = "none";
  memfmt_status_t status = MEMFMT_STATUS_OK;
  bool profiling = false;
  std::chrono::steady_clock::time_point start;
};

template <typename Args> int32_t KernelCall::run(const Args &args) {
  if (status == MEMFMT_STATUS_OK) {
    try {
      memfmt_status_t result = validate(*this, args);
      if (result == MEMFMT_STATUS_OK) {
        ThreadScope threads(numThreads());
        result = backend().run(*this, args);
      }
      // A backend that fails must say why; keep the first status either way.
      if (result != MEMFMT_STATUS_OK && status == MEMFMT_STATUS_OK)
        fail(result, "failed without a message");
    } catch (const std::bad_alloc &) {
      fail(MEMFMT_STATUS_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception &error) {
      fail(MEMFMT_STATUS_INTERNAL,
           std::string("internal error: ") + error.what());
    } catch (...) {
      fail(MEMFMT_STATUS_INTERNAL, "internal error: unknown exception");
    }
  }
  finish();
  return status;
}

} // namespace memfmt::runtime

#endif // MEMFMT_RUNTIME_LIB_KERNELCALL_H
