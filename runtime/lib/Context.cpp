//===- Context.cpp - Contexts, errors and profiles of the C API -----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The context half of memfmt_runtime.h: option defaults and their
// environment variables (MEMFMT_KERNELS, MEMFMT_NUM_THREADS,
// OMP_NUM_THREADS, MEMFMT_WINOGRAD, and for CUDA MEMFMT_CUDA_DEVICE, MEMFMT_ALLOW_TF32,
// MEMFMT_CUDA_GRAPH, MEMFMT_CUDNN_WORKSPACE_MB), backend creation, error
// messages and the per-node profile. The kernels' entry points are in
// EntryPoints.cpp, the device functions in Device.cpp.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "Parallel.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

using namespace memfmt::runtime;

std::string &memfmt::runtime::threadLastError() {
  static thread_local std::string message;
  return message;
}

Backend::~Backend() = default;

void memfmt_context::recordProfile(int64_t node, const char *kernel,
                                   const char *impl, double seconds) {
  auto [it, inserted] =
      profileIndex.try_emplace({node, kernel}, profile.size());
  if (inserted)
    profile.push_back({node, kernel, impl, 0, 0.0});
  memfmt_profile_entry_t &entry = profile[it->second];
  entry.impl = impl;
  entry.calls += 1;
  entry.total_seconds += seconds;
}

//===----------------------------------------------------------------------===//
// Options and the environment
//===----------------------------------------------------------------------===//

namespace {

/// The value of environment variable `name`, or null when unset or empty.
const char *getEnv(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

/// Parses a positive decimal int from the start of `text` up to `end` (a
/// character that may follow, such as ','). Returns 0 if there is none.
int parsePositive(const char *text, char end) {
  errno = 0;
  char *stop = nullptr;
  long value = std::strtol(text, &stop, 10);
  if (stop == text || errno || value <= 0 || value > 1 << 20 ||
      (*stop != '\0' && *stop != end))
    return 0;
  return static_cast<int>(value);
}

/// Resolves options.kernels. Returns false and sets `error` when the
/// environment variable has a bad value.
bool resolveKernels(memfmt_context_options_t &options, std::string &error) {
  if (options.kernels != MEMFMT_KERNELS_DEFAULT)
    return true;
  options.kernels = MEMFMT_KERNELS_FAST;
  const char *value = getEnv("MEMFMT_KERNELS");
  if (!value)
    return true;
  if (std::strcmp(value, "fast") == 0)
    return true;
  if (std::strcmp(value, "reference") == 0) {
    options.kernels = MEMFMT_KERNELS_REFERENCE;
    return true;
  }
  error = std::string("MEMFMT_KERNELS is '") + value +
          "'; expected 'fast' or 'reference'";
  return false;
}

/// Resolves options.num_threads. Returns false and sets `error` when
/// MEMFMT_NUM_THREADS has a bad value. (A bad OMP_NUM_THREADS is ignored,
/// as OpenMP itself ignores it.)
bool resolveThreads(memfmt_context_options_t &options, std::string &error) {
  if (options.num_threads > 0)
    return true;
  if (const char *value = getEnv("MEMFMT_NUM_THREADS")) {
    options.num_threads = parsePositive(value, '\0');
    if (options.num_threads > 0)
      return true;
    error = std::string("MEMFMT_NUM_THREADS is '") + value +
            "'; expected a positive integer";
    return false;
  }
  if (const char *value = getEnv("OMP_NUM_THREADS"))
    options.num_threads = parsePositive(value, ',');
  if (options.num_threads <= 0)
    options.num_threads = hardwareThreads();
  return true;
}

/// Resolves a memfmt_switch_t from environment variable `name`. Returns
/// false and sets `error` for a value that is neither on nor off.
bool resolveSwitch(memfmt_switch_t &value, const char *name,
                   std::string &error,
                   memfmt_switch_t unset = MEMFMT_SWITCH_OFF) {
  if (value == MEMFMT_SWITCH_ON || value == MEMFMT_SWITCH_OFF)
    return true;
  if (value != MEMFMT_SWITCH_DEFAULT) {
    error = std::string("unknown value ") +
            std::to_string(static_cast<int>(value)) + " for the option of " +
            name;
    return false;
  }
  value = unset;
  const char *text = getEnv(name);
  if (!text)
    return true;
  for (const char *on : {"1", "on", "true", "yes"})
    if (std::strcmp(text, on) == 0) {
      value = MEMFMT_SWITCH_ON;
      return true;
    }
  for (const char *off : {"0", "off", "false", "no"})
    if (std::strcmp(text, off) == 0) {
      value = MEMFMT_SWITCH_OFF;
      return true;
    }
  error = std::string(name) + " is '" + text + "'; expected 1 or 0";
  return false;
}

/// Resolves the CUDA options (device, TF32, graphs, workspace limit).
bool resolveCudaOptions(memfmt_context_options_t &options, std::string &error) {
  if (options.device < 0) {
    error = "device is " + std::to_string(options.device) +
            "; expected a device ordinal >= 0";
    return false;
  }
  if (options.device == 0)
    if (const char *value = getEnv("MEMFMT_CUDA_DEVICE")) {
      if (std::strcmp(value, "0") != 0 &&
          (options.device = parsePositive(value, '\0')) <= 0) {
        error = std::string("MEMFMT_CUDA_DEVICE is '") + value +
                "'; expected a device ordinal";
        return false;
      }
    }
  if (options.workspace_limit < 0) {
    error = "workspace_limit is " + std::to_string(options.workspace_limit) +
            "; expected 0 (default) or a byte count";
    return false;
  }
  if (options.workspace_limit == 0) {
    options.workspace_limit = int64_t(1) << 30;
    if (const char *value = getEnv("MEMFMT_CUDNN_WORKSPACE_MB")) {
      int megabytes =
          std::strcmp(value, "0") == 0 ? 0 : parsePositive(value, '\0');
      if (megabytes <= 0 && std::strcmp(value, "0") != 0) {
        error = std::string("MEMFMT_CUDNN_WORKSPACE_MB is '") + value +
                "'; expected a number of MiB";
        return false;
      }
      options.workspace_limit = int64_t(megabytes) << 20;
    }
  }
  return resolveSwitch(options.allow_tf32, "MEMFMT_ALLOW_TF32", error) &&
         resolveSwitch(options.cuda_graph, "MEMFMT_CUDA_GRAPH", error);
}

memfmt_status_t failCreate(memfmt_status_t status, const std::string &message,
                           memfmt_context_t **outCtx) {
  if (outCtx)
    *outCtx = nullptr;
  threadLastError() = "memfmt_context_create: " + message;
  return status;
}

} // namespace

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

bool memfmt_context::isConstant(const void *begin, int64_t bytes) const {
  const char *first = static_cast<const char *>(begin);
  for (const auto &[start, size] : constants)
    if (first >= start && bytes <= size && first - start <= size - bytes)
      return true;
  return false;
}

extern "C" {

const char *memfmt_status_string(memfmt_status_t status) {
  switch (status) {
  case MEMFMT_STATUS_OK:
    return "ok";
  case MEMFMT_STATUS_INVALID_ARGUMENT:
    return "invalid argument";
  case MEMFMT_STATUS_UNSUPPORTED:
    return "unsupported";
  case MEMFMT_STATUS_OUT_OF_MEMORY:
    return "out of memory";
  case MEMFMT_STATUS_BACKEND_ERROR:
    return "backend error";
  case MEMFMT_STATUS_IO_ERROR:
    return "I/O error";
  case MEMFMT_STATUS_NO_DEVICE:
    return "no device";
  case MEMFMT_STATUS_NOT_FOUND:
    return "not found";
  case MEMFMT_STATUS_INTERNAL:
    return "internal error";
  case MEMFMT_STATUS_MAX_ENUM:
    break;
  }
  return "unknown status";
}

void memfmt_context_options_init(memfmt_context_options_t *opts) {
  if (!opts)
    return;
  std::memset(opts, 0, sizeof(*opts));
  opts->backend = MEMFMT_BACKEND_CPU;
  opts->kernels = MEMFMT_KERNELS_DEFAULT;
  opts->num_threads = 0;
  opts->device = 0;
  opts->allow_tf32 = MEMFMT_SWITCH_DEFAULT;
  opts->cuda_graph = MEMFMT_SWITCH_DEFAULT;
  opts->workspace_limit = 0;
  opts->winograd = MEMFMT_SWITCH_DEFAULT;
  opts->allow_bf16 = MEMFMT_SWITCH_DEFAULT;
}

memfmt_status_t memfmt_context_create(const memfmt_context_options_t *opts,
                                      memfmt_context_t **out_ctx) {
  if (!out_ctx)
    return failCreate(MEMFMT_STATUS_INVALID_ARGUMENT, "out_ctx is null",
                      out_ctx);
  *out_ctx = nullptr;
  memfmt_context_options_t options;
  memfmt_context_options_init(&options);
  if (opts)
    options = *opts;

  if (options.kernels != MEMFMT_KERNELS_DEFAULT &&
      options.kernels != MEMFMT_KERNELS_FAST &&
      options.kernels != MEMFMT_KERNELS_REFERENCE)
    return failCreate(MEMFMT_STATUS_INVALID_ARGUMENT,
                      "unknown kernels option " +
                          std::to_string(static_cast<int>(options.kernels)),
                      out_ctx);
  if (options.num_threads < 0)
    return failCreate(MEMFMT_STATUS_INVALID_ARGUMENT,
                      "num_threads is " + std::to_string(options.num_threads) +
                          "; expected 0 (default) or a positive count",
                      out_ctx);
  std::string error;
  // Testing only, so not an option: the CPU's own pooling and copy loops
  // run where oneDNN's would (BackendOptions::ownLoops).
  memfmt_switch_t ownLoops = MEMFMT_SWITCH_DEFAULT;
  if (!resolveKernels(options, error) || !resolveThreads(options, error) ||
      !resolveCudaOptions(options, error) ||
      !resolveSwitch(options.winograd, "MEMFMT_WINOGRAD", error,
                     MEMFMT_SWITCH_ON) ||
      !resolveSwitch(options.allow_bf16, "MEMFMT_ALLOW_BF16", error) ||
      !resolveSwitch(ownLoops, "MEMFMT_CPU_OWN_LOOPS", error))
    return failCreate(MEMFMT_STATUS_INVALID_ARGUMENT, error, out_ctx);

  BackendOptions backendOptions;
  backendOptions.kernels = options.kernels;
  backendOptions.device = options.device;
  backendOptions.allowTf32 = options.allow_tf32 == MEMFMT_SWITCH_ON;
  backendOptions.workspaceLimit = options.workspace_limit;
  backendOptions.winograd = options.winograd == MEMFMT_SWITCH_ON;
  backendOptions.allowBf16 = options.allow_bf16 == MEMFMT_SWITCH_ON;
  backendOptions.numThreads = options.num_threads;
  backendOptions.ownLoops = ownLoops == MEMFMT_SWITCH_ON;
  try {
    auto ctx = std::make_unique<memfmt_context>();
    ctx->options = options;
    switch (options.backend) {
    case MEMFMT_BACKEND_CPU:
      ctx->backend = createCpuBackend(backendOptions, error);
      if (!ctx->backend)
        return failCreate(MEMFMT_STATUS_BACKEND_ERROR,
                          "the CPU backend failed to start: " + error, out_ctx);
      break;
    case MEMFMT_BACKEND_CUDA: {
#ifdef MEMFMT_HAVE_CUDA
      memfmt_status_t status = MEMFMT_STATUS_BACKEND_ERROR;
      ctx->backend = createCudaBackend(backendOptions, error, status);
      if (!ctx->backend)
        return failCreate(status, "the CUDA backend failed to start: " + error,
                          out_ctx);
      break;
#else
      return failCreate(MEMFMT_STATUS_UNSUPPORTED,
                        "this runtime was built without the CUDA backend "
                        "(no CUDA toolkit at build time)",
                        out_ctx);
#endif
    }
    default:
      return failCreate(MEMFMT_STATUS_INVALID_ARGUMENT,
                        "unknown backend " +
                            std::to_string(static_cast<int>(options.backend)),
                        out_ctx);
    }
    ctx->description = ctx->backend->description();
    *out_ctx = ctx.release();
    return MEMFMT_STATUS_OK;
  } catch (const std::bad_alloc &) {
    return failCreate(MEMFMT_STATUS_OUT_OF_MEMORY, "out of memory", out_ctx);
  } catch (const std::exception &e) {
    return failCreate(MEMFMT_STATUS_BACKEND_ERROR, e.what(), out_ctx);
  }
}

void memfmt_context_destroy(memfmt_context_t *ctx) { delete ctx; }

memfmt_status_t memfmt_context_get_options(const memfmt_context_t *ctx,
                                           memfmt_context_options_t *out_opts) {
  if (!ctx || !out_opts)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  *out_opts = ctx->options;
  return MEMFMT_STATUS_OK;
}

const char *memfmt_context_last_error(const memfmt_context_t *ctx) {
  return ctx ? ctx->lastError.c_str() : threadLastError().c_str();
}

void memfmt_context_clear_error(memfmt_context_t *ctx) {
  (ctx ? ctx->lastError : threadLastError()).clear();
}

void memfmt_context_set_error(memfmt_context_t *ctx, const char *message) {
  (ctx ? ctx->lastError : threadLastError()) = message ? message : "";
}

memfmt_status_t memfmt_context_invalidate_caches(memfmt_context_t *ctx) {
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  ctx->backend->invalidateCaches();
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_context_declare_constant(memfmt_context_t *ctx,
                                                const void *data,
                                                int64_t bytes) {
  if (!ctx || (!data && bytes > 0) || bytes < 0)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  ctx->constants.emplace_back(static_cast<const char *>(data), bytes);
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_context_forget_constant(memfmt_context_t *ctx,
                                               const void *data) {
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  auto found =
      std::find_if(ctx->constants.begin(), ctx->constants.end(),
                   [&](const auto &range) { return range.first == data; });
  if (found == ctx->constants.end())
    return MEMFMT_STATUS_NOT_FOUND;
  ctx->constants.erase(found);
  ctx->backend->invalidateCaches();
  return MEMFMT_STATUS_OK;
}

memfmt_status_t
memfmt_context_set_communicator(memfmt_context_t *ctx,
                                const memfmt_communicator_t *communicator) {
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  std::string error;
  if (!communicator) {
    ctx->communicator.reset();
    memfmt_status_t status = ctx->backend->setCommunicator(nullptr, error);
    if (status != MEMFMT_STATUS_OK)
      ctx->lastError = "memfmt_context_set_communicator: " + error;
    return status;
  }
  const char *missing =
      !communicator->all_reduce_sum_f32 ? "all_reduce_sum_f32"
      : communicator->sync_batch_norm && !communicator->all_reduce_sum_f64
          ? "all_reduce_sum_f64 (sync_batch_norm needs it)"
          : nullptr;
  if (communicator->size < 1 || communicator->rank < 0 ||
      communicator->rank >= communicator->size || missing) {
    ctx->lastError = "memfmt_context_set_communicator: rank " +
                     std::to_string(communicator->rank) + " of size " +
                     std::to_string(communicator->size) +
                     (missing ? std::string(" without ") + missing : "") +
                     " (expected 0 <= rank < size and the functions)";
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  }
  ctx->communicator.reset();
  if (memfmt_status_t status =
          ctx->backend->setCommunicator(communicator, error)) {
    ctx->lastError = "memfmt_context_set_communicator: " + error;
    return status;
  }
  ctx->communicator = *communicator;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_context_set_profiling(memfmt_context_t *ctx,
                                             int enable) {
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  ctx->profiling = enable != 0;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_context_profile_reset(memfmt_context_t *ctx) {
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  ctx->profile.clear();
  ctx->profileIndex.clear();
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_context_profile_count(const memfmt_context_t *ctx,
                                             int64_t *out_count) {
  if (!ctx || !out_count)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  *out_count = static_cast<int64_t>(ctx->profile.size());
  return MEMFMT_STATUS_OK;
}

memfmt_status_t
memfmt_context_profile_entry(const memfmt_context_t *ctx, int64_t index,
                             memfmt_profile_entry_t *out_entry) {
  if (!ctx || !out_entry)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (index < 0 || index >= static_cast<int64_t>(ctx->profile.size()))
    return MEMFMT_STATUS_NOT_FOUND;
  *out_entry = ctx->profile[index];
  return MEMFMT_STATUS_OK;
}

memfmt_status_t
memfmt_context_get_counters(const memfmt_context_t *ctx,
                            memfmt_context_counters_t *out_counters) {
  if (!ctx || !out_counters)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  *out_counters = ctx->counters;
  return MEMFMT_STATUS_OK;
}

int memfmt_runtime_has_onednn(void) {
#ifdef MEMFMT_HAVE_ONEDNN
  return 1;
#else
  return 0;
#endif
}

} // extern "C"
