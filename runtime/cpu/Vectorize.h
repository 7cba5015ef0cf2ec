//===- Vectorize.h - Vectorising the CPU loops -----------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The runtime is built for the compiler's baseline (SSE2 on x86-64) so that
// it runs on any x86-64 CPU (MEMFMT_RUNTIME_ARCH, runtime/CMakeLists.txt).
// A hot loop that is memory- or cache-bound still runs 2-4x faster with
// 256- or 512-bit vectors; MEMFMT_VECTOR_CLONES compiles a function for
// AVX-512, AVX2 and the baseline, and the dynamic loader binds the best one
// the CPU runs (an ifunc). What the function calls is inlined into each
// version, so its loops are vectorised for it. A marked function must not
// be a template or take a lambda: put it inside the parallelFor body, over
// a chunk of the work. MEMFMT_INDEPENDENT_ITERATIONS lets the compiler
// vectorise an elementwise loop that may run in place.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_VECTORIZE_H
#define MEMFMT_RUNTIME_CPU_VECTORIZE_H

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define MEMFMT_VECTOR_CLONES                                                   \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MEMFMT_VECTOR_CLONES
#endif

/// Before a loop whose iterations are independent although its output may
/// be one of its inputs (an in-place elementwise kernel writes element i
/// after reading element i only). The compiler cannot prove that of two
/// pointers and guards its vector loop with an overlap check, which an
/// in-place call fails: it then runs the scalar loop (found on
/// EfficientNet-B0's in-place squeeze-excite scales).
/// Not in sanitizer builds: their checks on every access keep the loops
/// scalar, and the compiler would warn that it could not follow the pragma.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) ||                                        \
    __has_feature(undefined_behavior_sanitizer)
#define MEMFMT_SANITIZED_BUILD
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MEMFMT_SANITIZED_BUILD
#endif
#if defined(MEMFMT_SANITIZED_BUILD)
#define MEMFMT_INDEPENDENT_ITERATIONS
#elif defined(__clang__)
#define MEMFMT_INDEPENDENT_ITERATIONS                                          \
  _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define MEMFMT_INDEPENDENT_ITERATIONS _Pragma("GCC ivdep")
#else
#define MEMFMT_INDEPENDENT_ITERATIONS
#endif

#endif // MEMFMT_RUNTIME_CPU_VECTORIZE_H
