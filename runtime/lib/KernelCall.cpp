//===- KernelCall.cpp - One call of a runtime kernel ----------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The non-template half of KernelCall: error recording, argument decoding
// and profiling.
//
//===----------------------------------------------------------------------===//

#include "KernelCall.h"

#include "Context.h"
#include "Parallel.h"

#include "memfmt/Layout/Strides.h"

using namespace memfmt::runtime;

KernelCall::KernelCall(memfmt_context_t *ctx, int64_t node, const char *kernel,
                       DType dtype)
    : ctx(ctx), nodeId(node), kernelName(kernel), elementType(dtype) {
  if (!ctx) {
    fail(MEMFMT_STATUS_INVALID_ARGUMENT, "context is null");
    return;
  }
  profiling = ctx->profiling;
  if (profiling)
    start = std::chrono::steady_clock::now();
}

Backend &KernelCall::backend() const { return *ctx->backend; }

const memfmt_communicator_t *KernelCall::communicator() const {
  return ctx && ctx->communicator ? &*ctx->communicator : nullptr;
}

bool KernelCall::isConstant(const TensorView &view) const {
  if (!ctx || ctx->constants.empty())
    return false;
  // The bytes from the lowest to the highest element.
  memfmt::layout::IntSpan sizes(view.sizes, view.rank),
      strides(view.strides, view.rank);
  int64_t span = memfmt::layout::spanElements(sizes, strides);
  if (span == 0)
    return false;
  const int64_t size = static_cast<int64_t>(elementSize(elementType));
  return ctx->isConstant(static_cast<const char *>(view.data) +
                             memfmt::layout::reachOf(sizes, strides).low * size,
                         span * size);
}

memfmt_context_counters_t &KernelCall::counters() {
  static thread_local memfmt_context_counters_t withoutContext;
  return ctx ? ctx->counters : withoutContext;
}

int KernelCall::numThreads() const { return ctx->options.num_threads; }

memfmt_status_t KernelCall::fail(memfmt_status_t failure,
                                 const std::string &message) {
  if (status != MEMFMT_STATUS_OK)
    return status;
  status = failure;
  std::string text = std::string(kernelName) + " (node " +
                     std::to_string(nodeId) + "): " + message;
  (ctx ? ctx->lastError : threadLastError()) = std::move(text);
  return status;
}

void KernelCall::decode(TensorView &view, const memfmt_memref_t *memref,
                        const char *name, DType dtype) {
  if (status != MEMFMT_STATUS_OK)
    return;
  std::string reason;
  memfmt_status_t result =
      decodeMemref(memref, elementSize(dtype), view, reason);
  if (result != MEMFMT_STATUS_OK)
    fail(result, std::string(name) + " " + reason);
}

void KernelCall::finish() {
  if (!ctx || !profiling)
    return;
  std::string error;
  if (memfmt_status_t finished = ctx->backend->finishProfiledCall(error))
    fail(finished, "the kernel failed on the device: " + error);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ctx->recordProfile(nodeId, kernelName, implName, seconds);
}
