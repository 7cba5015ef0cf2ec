//===- RuntimeTest.h - Shared helpers of the runtime's tests ----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// A context holder for tests (kernels family and thread count chosen per
// test, profiling on so a test can see which implementation ran), status
// assertions that print the context's last error, the tolerance factors
// of expectClose with their justification, and the timer of the disabled
// timing tests.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_TEST_RUNTIMETEST_H
#define MEMFMT_RUNTIME_TEST_RUNTIMETEST_H

#include "Naive.h"

#include "memfmt/runtime/kernel_abi.h"
#include "memfmt/runtime/memfmt_runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

namespace memfmt::test {

/// f32's unit roundoff, 2^-24.
constexpr double kUnitRoundoff = 1.0 / (1 << 24);

/// Magnitude factor for the reference kernels: they accumulate in double and
/// round once, so beyond the 1e-5 relative bound only double rounding over
/// the terms remains (about 1e-16 per term; 1e-12 leaves room for 10^4
/// terms).
constexpr double kReferenceFactor = 1e-12;

/// Magnitude factor for f32 computations that accumulate `terms` values in
/// float in any order (oneDNN's convolutions and matmuls, the fast
/// batch norm): recursive summation of n terms errs by at most
/// (n - 1) * u * sum |term| (Higham, Accuracy and Stability of Numerical
/// Algorithms, eq. 4.4), plus one rounding per product and the final one;
/// 2 * (n + 2) * u covers that with room, and for this suite's reductions
/// (n <= ~200) stays below ~3e-5 of the terms' magnitude. It is the
/// worst-case bound, so it holds for any blocking oneDNN picks.
inline double floatSumFactor(int64_t terms) {
  return 2.0 * double(terms + 2) * kUnitRoundoff;
}

/// Owns a context; profiling is on.
class TestContext {
public:
  explicit TestContext(memfmt_kernels_t kernels, int32_t threads = 0)
      : TestContext(optionsFor(kernels, threads)) {}
  explicit TestContext(const memfmt_context_options_t &options) {
    memfmt_status_t status = memfmt_context_create(&options, &ctx);
    EXPECT_EQ(status, MEMFMT_STATUS_OK) << memfmt_context_last_error(nullptr);
    if (ctx)
      memfmt_context_set_profiling(ctx, 1);
  }
  ~TestContext() { memfmt_context_destroy(ctx); }

  /// The default options with `kernels` and `threads`.
  static memfmt_context_options_t optionsFor(memfmt_kernels_t kernels,
                                             int32_t threads = 0) {
    memfmt_context_options_t options;
    memfmt_context_options_init(&options);
    options.kernels = kernels;
    options.num_threads = threads;
    return options;
  }
  TestContext(const TestContext &) = delete;
  TestContext &operator=(const TestContext &) = delete;

  memfmt_context_t *get() const { return ctx; }
  operator memfmt_context_t *() const { return ctx; }
  std::string lastError() const { return memfmt_context_last_error(ctx); }

  /// The implementation of the last call of `node`, or "" if none.
  std::string implOf(int64_t node) const {
    int64_t count = 0;
    memfmt_context_profile_count(ctx, &count);
    for (int64_t i = 0; i < count; ++i) {
      memfmt_profile_entry_t entry;
      memfmt_context_profile_entry(ctx, i, &entry);
      if (entry.node == node)
        return entry.impl;
    }
    return "";
  }

private:
  memfmt_context_t *ctx = nullptr;
};

/// Both kernel families, for tests that check each case on each.
inline constexpr memfmt_kernels_t kBothKernels[] = {MEMFMT_KERNELS_REFERENCE,
                                                    MEMFMT_KERNELS_FAST};

inline const char *toString(memfmt_kernels_t kernels) {
  return kernels == MEMFMT_KERNELS_REFERENCE ? "Reference" : "Fast";
}

/// Sets (or unsets, for null) an environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      previous = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (previous)
      setenv(name, previous->c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> previous;
};

/// Set to 1, the CPU backend keeps its own loops where it would run
/// oneDNN's first (copies and pooling): the tests of those loops set
/// it, the tests of the oneDNN routing leave it unset.
constexpr const char *kOwnLoops = "MEMFMT_CPU_OWN_LOOPS";

/// memfmt_context_create refuses environment variable `name` set to `value`
/// with an error that names it ("NAME is 'value'").
inline void expectEnvironmentRefused(const char *name, const char *value) {
  ScopedEnv env(name, value);
  memfmt_context_t *ctx = nullptr;
  EXPECT_EQ(memfmt_context_create(nullptr, &ctx),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  const std::string expected = std::string(name) + " is '" + value + "'";
  EXPECT_NE(std::string(memfmt_context_last_error(nullptr)).find(expected),
            std::string::npos)
      << memfmt_context_last_error(nullptr);
}


#define EXPECT_KERNEL_OK(ctx, expr)                                            \
  EXPECT_EQ(static_cast<memfmt_status_t>(expr), MEMFMT_STATUS_OK)              \
      << memfmt_context_last_error(ctx)
#define ASSERT_KERNEL_OK(ctx, expr)                                            \
  ASSERT_EQ(static_cast<memfmt_status_t>(expr), MEMFMT_STATUS_OK)              \
      << memfmt_context_last_error(ctx)

/// For the DISABLED_Time* tests (run with --gtest_also_run_disabled_tests):
/// milliseconds per call of `call` over `runs` calls, after one warm-up call
/// that must succeed.
inline double millisecondsPerCall(const std::function<int32_t()> &call,
                                  int runs = 5) {
  EXPECT_EQ(call(), 0) << "the warm-up call failed";
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i)
    call();
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
             .count() /
         runs;
}

} // namespace memfmt::test

#endif // MEMFMT_RUNTIME_TEST_RUNTIMETEST_H
