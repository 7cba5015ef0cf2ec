//===- CountRunWork.cpp - Counting what one run of a model allocates ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-count-run-work MODEL_DIR [RUNS]: loads a compiled model (an
// inference model or a training step), runs it RUNS times (default 3) on
// fixed inputs (class indices 0 for a training step) and prints, for the load
// and for each run, the heap allocations made in the process and the context's
// counters (weights packed, primitives built, library calls):
//
//   load: memfmt allocations 1234, oneDNN execute allocations 90, ...
//   run 1: memfmt allocations 0, oneDNN execute allocations 87, ...
//
// The allocations are counted by replacing malloc, calloc, realloc and the
// aligned allocators of the C library in this executable: the runtime, the
// loader, oneDNN and libstdc++'s operator new all call them through the
// dynamic linker, so every heap allocation in the process is seen. Those
// made while oneDNN executes a primitive (dnnl_primitive_execute, also
// replaced here) are counted apart: oneDNN 2.x builds a map of the
// arguments on every execution, which no caller can avoid. The lit test
// test/E2E/no-per-run-work.test checks that a run packs nothing and that
// memfmt itself allocates nothing; test/E2E/no-per-step-work.test checks
// the same of a training step.
// A sanitizer build replaces the allocator itself, so there the tool says
// so and exits 77 (the test is then unsupported).
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/memfmt_runtime.h"
#include "memfmt/runtime/model.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <malloc.h>

#ifdef MEMFMT_HAVE_ONEDNN
#include <dnnl.h>
#endif

extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);
}

namespace {
/// Heap allocations so far, in every thread, and those of them made while
/// some thread was inside dnnl_primitive_execute.
std::atomic<long> allocations{0};
std::atomic<long> libraryAllocations{0};
/// Threads inside dnnl_primitive_execute now.
std::atomic<int> insideLibrary{0};

void countAllocation() {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (insideLibrary.load(std::memory_order_relaxed) > 0)
    libraryAllocations.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define MEMFMT_SANITIZED_ALLOCATOR 1
#endif
#endif
#if !defined(MEMFMT_SANITIZED_ALLOCATOR) && !defined(__SANITIZE_ADDRESS__)
#define MEMFMT_COUNT_ALLOCATIONS 1
extern "C" {
void *malloc(size_t size) {
  countAllocation();
  return __libc_malloc(size);
}
void *calloc(size_t count, size_t size) {
  countAllocation();
  return __libc_calloc(count, size);
}
void *realloc(void *pointer, size_t size) {
  countAllocation();
  return __libc_realloc(pointer, size);
}
void *memalign(size_t alignment, size_t size) {
  countAllocation();
  return __libc_memalign(alignment, size);
}
void *aligned_alloc(size_t alignment, size_t size) {
  return memalign(alignment, size);
}
int posix_memalign(void **out, size_t alignment, size_t size) {
  void *pointer = memalign(alignment, size);
  if (!pointer && size)
    return ENOMEM;
  *out = pointer;
  return 0;
}
void free(void *pointer) { __libc_free(pointer); }

#ifdef MEMFMT_HAVE_ONEDNN
/// oneDNN's entry point, wrapped to mark its allocations; the runtime calls
/// it through the dynamic linker, so this definition is the one it reaches.
dnnl_status_t dnnl_primitive_execute(const_dnnl_primitive_t primitive,
                                     dnnl_stream_t stream, int nargs,
                                     const dnnl_exec_arg_t *args) {
  using Execute = dnnl_status_t (*)(const_dnnl_primitive_t, dnnl_stream_t, int,
                                    const dnnl_exec_arg_t *);
  static Execute real =
      reinterpret_cast<Execute>(::dlsym(RTLD_NEXT, "dnnl_primitive_execute"));
  insideLibrary.fetch_add(1);
  dnnl_status_t status = real(primitive, stream, nargs, args);
  insideLibrary.fetch_sub(1);
  return status;
}
#endif
}
#endif

namespace {

struct Snapshot {
  long allocations;
  long libraryAllocations;
  memfmt_context_counters_t counters;
};

Snapshot take(memfmt_context_t *ctx) {
  Snapshot s{allocations.load(), libraryAllocations.load(), {}};
  memfmt_context_get_counters(ctx, &s.counters);
  return s;
}

void print(const char *what, const Snapshot &before, const Snapshot &after) {
  long library = after.libraryAllocations - before.libraryAllocations;
  std::printf("%s: memfmt allocations %ld, oneDNN execute allocations %ld, "
              "weight packs %lld, primitives built %lld, library calls %lld\n",
              what, after.allocations - before.allocations - library, library,
              static_cast<long long>(after.counters.weight_packs -
                                     before.counters.weight_packs),
              static_cast<long long>(after.counters.primitives_built -
                                     before.counters.primitives_built),
              static_cast<long long>(after.counters.library_calls -
                                     before.counters.library_calls));
}

int fail(const char *what, memfmt_context_t *ctx) {
  std::fprintf(stderr, "memfmt-count-run-work: %s: %s\n", what,
               memfmt_context_last_error(ctx));
  return 1;
}

} // namespace

int main(int argc, char **argv) {
#ifndef MEMFMT_COUNT_ALLOCATIONS
  std::fprintf(stderr, "memfmt-count-run-work: a sanitizer replaces the "
                       "allocator in this build; nothing to count\n");
  return 77;
#else
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: memfmt-count-run-work MODEL_DIR [RUNS]\n");
    return 2;
  }
  int runs = argc == 3 ? std::atoi(argv[2]) : 3;
  memfmt_context_options_t options;
  memfmt_context_options_init(&options);
  memfmt_context_t *ctx = nullptr;
  if (memfmt_context_create(&options, &ctx) != MEMFMT_STATUS_OK)
    return fail("memfmt_context_create", ctx);

  Snapshot start = take(ctx);
  memfmt_model_t *model = nullptr;
  if (memfmt_model_load(ctx, argv[1], nullptr, &model) != MEMFMT_STATUS_OK)
    return fail("memfmt_model_load", ctx);
  memfmt_model_info_t info;
  memfmt_model_get_info(model, &info);
  // The buffers are the caller's: made before the runs, outside the count.
  std::vector<std::vector<char>> inputs(info.num_inputs),
      outputs(info.num_outputs);
  std::vector<const void *> in;
  std::vector<void *> out;
  for (int64_t i = 0; i < info.num_inputs; ++i) {
    memfmt_model_tensor_info_t t;
    memfmt_model_input_info(model, i, &t);
    inputs[i].assign(t.buffer_bytes, 0);
    // Floats 0.5-ish, not all zero; integers (a training step's class
    // indices) zero, a valid class.
    if (std::strcmp(t.dtype, "i64") != 0)
      for (size_t b = 0; b + 3 < inputs[i].size(); b += 4)
        inputs[i][b + 3] = 0x3f;
    in.push_back(inputs[i].data());
  }
  for (int64_t i = 0; i < info.num_outputs; ++i) {
    memfmt_model_tensor_info_t t;
    memfmt_model_output_info(model, i, &t);
    outputs[i].assign(t.buffer_bytes, 0);
    out.push_back(outputs[i].data());
  }
  Snapshot loaded = take(ctx);
  print("load", start, loaded);

  for (int r = 1; r <= runs; ++r) {
    Snapshot before = take(ctx);
    if (memfmt_model_run(model, in.data(), out.data()) != MEMFMT_STATUS_OK)
      return fail("memfmt_model_run", ctx);
    Snapshot after = take(ctx);
    print(("run " + std::to_string(r)).c_str(), before, after);
  }
  memfmt_model_destroy(model);
  memfmt_context_destroy(ctx);
  return 0;
#endif
}
