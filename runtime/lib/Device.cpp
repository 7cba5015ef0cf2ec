//===- Device.cpp - Device memory, copies, timers and graphs --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The device half of memfmt_runtime.h: allocation, copies, synchronisation,
// timers and CUDA graphs, each forwarded to the context's backend, plus the
// CPU defaults of those Backend methods (host memory, synchronous memcpy, a
// steady-clock timer, no graphs). Failures leave "<function>: <reason>" in
// the context's last error.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

using namespace memfmt::runtime;

struct memfmt_graph {
  memfmt_context_t *owner = nullptr;
  void *impl = nullptr;
};

namespace {

double nowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

memfmt_status_t fail(memfmt_context_t *ctx, const char *function,
                     memfmt_status_t status, const std::string &reason) {
  ctx->lastError = std::string(function) + ": " + reason;
  return status;
}

} // namespace

//===----------------------------------------------------------------------===//
// The CPU defaults of Backend's device methods
//===----------------------------------------------------------------------===//

memfmt_status_t Backend::allocate(int64_t bytes, void **out,
                                  std::string &error) {
  constexpr int64_t kAlign = 256;
  int64_t rounded =
      (std::max<int64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  void *p = std::aligned_alloc(kAlign, static_cast<size_t>(rounded));
  if (!p) {
    error = "cannot allocate " + std::to_string(bytes) + " bytes";
    return MEMFMT_STATUS_OUT_OF_MEMORY;
  }
  std::memset(p, 0, static_cast<size_t>(rounded));
  *out = p;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t Backend::deallocate(void *ptr, std::string &) {
  std::free(ptr);
  return MEMFMT_STATUS_OK;
}

memfmt_status_t Backend::copy(void *dst, const void *src, int64_t bytes,
                              memfmt_copy_kind_t, std::string &) {
  if (bytes > 0)
    std::memmove(dst, src, static_cast<size_t>(bytes));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t Backend::synchronize(std::string &) { return MEMFMT_STATUS_OK; }

memfmt_status_t Backend::timerStart(std::string &) {
  timerStartSeconds = nowSeconds();
  return MEMFMT_STATUS_OK;
}

memfmt_status_t Backend::timerStop(double &milliseconds, std::string &) {
  milliseconds = (nowSeconds() - timerStartSeconds) * 1e3;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t Backend::captureBegin(std::string &error) {
  error = "graphs need the CUDA backend; this context runs on the CPU";
  return MEMFMT_STATUS_UNSUPPORTED;
}

memfmt_status_t Backend::captureEnd(void **graph, std::string &error) {
  *graph = nullptr;
  error = "graphs need the CUDA backend; this context runs on the CPU";
  return MEMFMT_STATUS_UNSUPPORTED;
}

memfmt_status_t Backend::launchGraph(void *, std::string &error) {
  error = "graphs need the CUDA backend; this context runs on the CPU";
  return MEMFMT_STATUS_UNSUPPORTED;
}

void Backend::destroyGraph(void *) {}

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

extern "C" {

const char *memfmt_context_device_description(const memfmt_context_t *ctx) {
  return ctx ? ctx->description.c_str() : "";
}

memfmt_status_t memfmt_device_alloc(memfmt_context_t *ctx, int64_t bytes,
                                    void **out_ptr) {
  static const char *const Function = "memfmt_device_alloc";
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (!out_ptr)
    return fail(ctx, Function, MEMFMT_STATUS_INVALID_ARGUMENT,
                "out_ptr is null");
  *out_ptr = nullptr;
  if (bytes < 0)
    return fail(ctx, Function, MEMFMT_STATUS_INVALID_ARGUMENT,
                "bytes is " + std::to_string(bytes));
  std::string error;
  memfmt_status_t status = ctx->backend->allocate(bytes, out_ptr, error);
  return status ? fail(ctx, Function, status, error) : status;
}

memfmt_status_t memfmt_device_free(memfmt_context_t *ctx, void *ptr) {
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (!ptr)
    return MEMFMT_STATUS_OK;
  std::string error;
  memfmt_status_t status = ctx->backend->deallocate(ptr, error);
  return status ? fail(ctx, "memfmt_device_free", status, error) : status;
}

memfmt_status_t memfmt_device_copy(memfmt_context_t *ctx, void *dst,
                                   const void *src, int64_t bytes,
                                   memfmt_copy_kind_t kind) {
  static const char *const Function = "memfmt_device_copy";
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (bytes < 0 || (bytes > 0 && (!dst || !src)))
    return fail(ctx, Function, MEMFMT_STATUS_INVALID_ARGUMENT,
                "bytes is " + std::to_string(bytes) +
                    (bytes > 0 ? ", with a null pointer" : ""));
  if (kind != MEMFMT_COPY_HOST_TO_DEVICE &&
      kind != MEMFMT_COPY_DEVICE_TO_HOST &&
      kind != MEMFMT_COPY_DEVICE_TO_DEVICE)
    return fail(ctx, Function, MEMFMT_STATUS_INVALID_ARGUMENT,
                "unknown copy kind " + std::to_string(static_cast<int>(kind)));
  if (bytes == 0)
    return MEMFMT_STATUS_OK;
  std::string error;
  memfmt_status_t status = ctx->backend->copy(dst, src, bytes, kind, error);
  return status ? fail(ctx, Function, status, error) : status;
}

memfmt_status_t memfmt_context_synchronize(memfmt_context_t *ctx) {
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  std::string error;
  memfmt_status_t status = ctx->backend->synchronize(error);
  return status ? fail(ctx, "memfmt_context_synchronize", status, error)
                : status;
}

memfmt_status_t memfmt_context_timer_start(memfmt_context_t *ctx) {
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  std::string error;
  memfmt_status_t status = ctx->backend->timerStart(error);
  return status ? fail(ctx, "memfmt_context_timer_start", status, error)
                : status;
}

memfmt_status_t memfmt_context_timer_stop(memfmt_context_t *ctx,
                                          double *out_ms) {
  if (!ctx || !out_ms)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  std::string error;
  memfmt_status_t status = ctx->backend->timerStop(*out_ms, error);
  return status ? fail(ctx, "memfmt_context_timer_stop", status, error)
                : status;
}

memfmt_status_t memfmt_graph_capture_begin(memfmt_context_t *ctx) {
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  std::string error;
  memfmt_status_t status = ctx->backend->captureBegin(error);
  return status ? fail(ctx, "memfmt_graph_capture_begin", status, error)
                : status;
}

memfmt_status_t memfmt_graph_capture_end(memfmt_context_t *ctx,
                                         memfmt_graph_t **out_graph) {
  if (out_graph)
    *out_graph = nullptr;
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  void *impl = nullptr;
  std::string error;
  memfmt_status_t status = ctx->backend->captureEnd(&impl, error);
  if (status)
    return fail(ctx, "memfmt_graph_capture_end", status, error);
  if (!out_graph) {
    ctx->backend->destroyGraph(impl);
    return fail(ctx, "memfmt_graph_capture_end", MEMFMT_STATUS_INVALID_ARGUMENT,
                "out_graph is null");
  }
  *out_graph = new memfmt_graph{ctx, impl};
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_graph_launch(memfmt_context_t *ctx,
                                    memfmt_graph_t *graph) {
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (!graph || graph->owner != ctx)
    return fail(ctx, "memfmt_graph_launch", MEMFMT_STATUS_INVALID_ARGUMENT,
                graph ? "the graph belongs to another context"
                      : "graph is null");
  std::string error;
  memfmt_status_t status = ctx->backend->launchGraph(graph->impl, error);
  return status ? fail(ctx, "memfmt_graph_launch", status, error) : status;
}

void memfmt_graph_destroy(memfmt_context_t *ctx, memfmt_graph_t *graph) {
  if (!graph)
    return;
  if (ctx && graph->owner == ctx)
    ctx->backend->destroyGraph(graph->impl);
  delete graph;
}

int memfmt_runtime_has_cuda(void) {
#ifdef MEMFMT_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

} // extern "C"
