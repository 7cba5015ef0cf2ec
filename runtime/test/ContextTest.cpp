//===- ContextTest.cpp - Contexts, options, environment, profiling --------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The context half of the C API: defaults, the MEMFMT_KERNELS,
// MEMFMT_NUM_THREADS and OMP_NUM_THREADS environment variables and their
// precedence, invalid options, the CUDA backend without a device, the
// profile (per node and kernel, with the implementation that ran), cache
// invalidation and that results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include <cstring>

using namespace memfmt::test;

namespace {

memfmt_context_options_t
resolvedOptions(const memfmt_context_options_t *opts,
                memfmt_status_t expected = MEMFMT_STATUS_OK) {
  memfmt_context_t *ctx = nullptr;
  memfmt_context_options_t resolved;
  memfmt_context_options_init(&resolved);
  EXPECT_EQ(memfmt_context_create(opts, &ctx), expected)
      << memfmt_context_last_error(nullptr);
  if (ctx) {
    EXPECT_EQ(memfmt_context_get_options(ctx, &resolved), MEMFMT_STATUS_OK);
    memfmt_context_destroy(ctx);
  } else {
    EXPECT_NE(expected, MEMFMT_STATUS_OK);
  }
  return resolved;
}

TEST(ContextTest, DefaultsWithoutEnvironment) {
  ScopedEnv kernels("MEMFMT_KERNELS", nullptr);
  ScopedEnv threads("MEMFMT_NUM_THREADS", nullptr);
  ScopedEnv omp("OMP_NUM_THREADS", nullptr);
  memfmt_context_options_t resolved = resolvedOptions(nullptr);
  EXPECT_EQ(resolved.backend, MEMFMT_BACKEND_CPU);
  EXPECT_EQ(resolved.kernels, MEMFMT_KERNELS_FAST);
  EXPECT_GE(resolved.num_threads, 1);
}

TEST(ContextTest, KernelsFromEnvironment) {
  ScopedEnv threads("MEMFMT_NUM_THREADS", nullptr);
  {
    ScopedEnv env("MEMFMT_KERNELS", "reference");
    EXPECT_EQ(resolvedOptions(nullptr).kernels, MEMFMT_KERNELS_REFERENCE);
    // An explicit option wins over the environment.
    memfmt_context_options_t opts;
    memfmt_context_options_init(&opts);
    opts.kernels = MEMFMT_KERNELS_FAST;
    EXPECT_EQ(resolvedOptions(&opts).kernels, MEMFMT_KERNELS_FAST);
  }
  {
    ScopedEnv env("MEMFMT_KERNELS", "fast");
    EXPECT_EQ(resolvedOptions(nullptr).kernels, MEMFMT_KERNELS_FAST);
  }
  {
    ScopedEnv env("MEMFMT_KERNELS", "quick");
    resolvedOptions(nullptr, MEMFMT_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(memfmt_context_last_error(nullptr),
                          "MEMFMT_KERNELS is 'quick'"),
              nullptr)
        << memfmt_context_last_error(nullptr);
  }
}

/// The environment's kernel family is what runs.
TEST(ContextTest, EnvironmentSelectsTheReferenceKernels) {
  ScopedEnv env("MEMFMT_KERNELS", "reference");
  memfmt_context_t *ctx = nullptr;
  ASSERT_EQ(memfmt_context_create(nullptr, &ctx), MEMFMT_STATUS_OK);
  memfmt_context_set_profiling(ctx, 1);
  Tensor in({2, 3, 4, 4}, Layout::ChannelsLast),
      out({2, 3, 4, 4}, Layout::ChannelsLast);
  in.fillRandom(1);
  EXPECT_EQ(_mlir_ciface_memfmt_relu_f32(ctx, 9, in.memref(), out.memref()),
            MEMFMT_STATUS_OK);
  memfmt_profile_entry_t entry;
  ASSERT_EQ(memfmt_context_profile_entry(ctx, 0, &entry), MEMFMT_STATUS_OK);
  EXPECT_STREQ(entry.impl, "reference");
  memfmt_context_destroy(ctx);
}

TEST(ContextTest, ThreadsFromOptionsAndEnvironment) {
  memfmt_context_options_t opts;
  memfmt_context_options_init(&opts);
  {
    ScopedEnv env("MEMFMT_NUM_THREADS", "3");
    ScopedEnv omp("OMP_NUM_THREADS", "5");
    EXPECT_EQ(resolvedOptions(nullptr).num_threads, 3);
    opts.num_threads = 2;
    EXPECT_EQ(resolvedOptions(&opts).num_threads, 2);
    opts.num_threads = 0;
  }
  {
    ScopedEnv env("MEMFMT_NUM_THREADS", nullptr);
    ScopedEnv omp("OMP_NUM_THREADS", "5,2");
    EXPECT_EQ(resolvedOptions(nullptr).num_threads, 5);
  }
  {
    ScopedEnv env("MEMFMT_NUM_THREADS", "two");
    resolvedOptions(nullptr, MEMFMT_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(
        std::strstr(memfmt_context_last_error(nullptr), "MEMFMT_NUM_THREADS"),
        nullptr);
  }
  opts.num_threads = -1;
  resolvedOptions(&opts, MEMFMT_STATUS_INVALID_ARGUMENT);
}

TEST(ContextTest, InvalidOptions) {
  memfmt_context_options_t opts;
  memfmt_context_options_init(&opts);
  opts.kernels = static_cast<memfmt_kernels_t>(7);
  resolvedOptions(&opts, MEMFMT_STATUS_INVALID_ARGUMENT);
  memfmt_context_options_init(&opts);
  opts.backend = static_cast<memfmt_backend_t>(9);
  resolvedOptions(&opts, MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(memfmt_context_create(nullptr, nullptr),
            MEMFMT_STATUS_INVALID_ARGUMENT);
}

TEST(ContextTest, CudaBackendNeedsTheToolkitAndADevice) {
  memfmt_context_options_t opts;
  memfmt_context_options_init(&opts);
  opts.backend = MEMFMT_BACKEND_CUDA;
  memfmt_context_t *ctx = reinterpret_cast<memfmt_context_t *>(1);
  memfmt_status_t status = memfmt_context_create(&opts, &ctx);
  if (status == MEMFMT_STATUS_OK) {
    memfmt_context_destroy(ctx);
    GTEST_SKIP() << "skipped: this machine has a CUDA device";
  }
  EXPECT_TRUE(status == MEMFMT_STATUS_UNSUPPORTED ||
              status == MEMFMT_STATUS_NO_DEVICE);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(std::strstr(memfmt_context_last_error(nullptr), "CUDA"), nullptr);
}

TEST(ContextTest, StatusStrings) {
  EXPECT_STREQ(memfmt_status_string(MEMFMT_STATUS_OK), "ok");
  EXPECT_STREQ(memfmt_status_string(MEMFMT_STATUS_INVALID_ARGUMENT),
               "invalid argument");
  EXPECT_STREQ(memfmt_status_string(MEMFMT_STATUS_UNSUPPORTED), "unsupported");
  EXPECT_STREQ(memfmt_status_string(static_cast<memfmt_status_t>(99)),
               "unknown status");
}

/// Layered libraries (the model loader) report through the same context.
TEST(ContextTest, SetAndClearErrors) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  EXPECT_STREQ(memfmt_context_last_error(ctx), "");
  memfmt_context_set_error(ctx, "loader: manifest.json is missing");
  EXPECT_STREQ(memfmt_context_last_error(ctx),
               "loader: manifest.json is missing");
  memfmt_context_set_error(ctx, nullptr);
  EXPECT_STREQ(memfmt_context_last_error(ctx), "");
  memfmt_context_set_error(nullptr, "thread error");
  EXPECT_STREQ(memfmt_context_last_error(nullptr), "thread error");
  memfmt_context_clear_error(nullptr);
  EXPECT_STREQ(memfmt_context_last_error(nullptr), "");
}

TEST(ContextTest, ProfilePerNode) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  memfmt_context_profile_reset(ctx);
  Tensor a({1, 8, 4, 4}, Layout::ChannelsLast),
      b({1, 8, 4, 4}, Layout::ChannelsLast);
  a.fillRandom(2);
  for (int i = 0; i < 3; ++i) {
    EXPECT_KERNEL_OK(
        ctx, _mlir_ciface_memfmt_relu_f32(ctx, 10, a.memref(), b.memref()));
    EXPECT_KERNEL_OK(
        ctx, _mlir_ciface_memfmt_copy_f32(ctx, 11, a.memref(), b.memref()));
  }
  int64_t count = 0;
  ASSERT_EQ(memfmt_context_profile_count(ctx, &count), MEMFMT_STATUS_OK);
  ASSERT_EQ(count, 2);
  memfmt_profile_entry_t entry;
  ASSERT_EQ(memfmt_context_profile_entry(ctx, 0, &entry), MEMFMT_STATUS_OK);
  EXPECT_EQ(entry.node, 10);
  EXPECT_STREQ(entry.kernel, "memfmt_relu_f32");
  EXPECT_STREQ(entry.impl, "dense");
  EXPECT_EQ(entry.calls, 3);
  EXPECT_GE(entry.total_seconds, 0.0);
  ASSERT_EQ(memfmt_context_profile_entry(ctx, 1, &entry), MEMFMT_STATUS_OK);
  EXPECT_EQ(entry.node, 11);
  EXPECT_STREQ(entry.kernel, "memfmt_copy_f32");
  EXPECT_EQ(memfmt_context_profile_entry(ctx, 2, &entry),
            MEMFMT_STATUS_NOT_FOUND);
  EXPECT_EQ(memfmt_context_profile_entry(ctx, -1, &entry),
            MEMFMT_STATUS_NOT_FOUND);

  // Off: nothing more is recorded; reset forgets.
  memfmt_context_set_profiling(ctx, 0);
  EXPECT_KERNEL_OK(
      ctx, _mlir_ciface_memfmt_relu_f32(ctx, 12, a.memref(), b.memref()));
  memfmt_context_profile_count(ctx, &count);
  EXPECT_EQ(count, 2);
  memfmt_context_profile_reset(ctx);
  memfmt_context_profile_count(ctx, &count);
  EXPECT_EQ(count, 0);
}

/// After invalidation, a node's prepacked weights are rebuilt from the
/// (overwritten) weight buffer.
TEST(ContextTest, InvalidateCachesRepacksWeights) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  ConvAttrs a;
  Tensor in({1, 4, 5, 5}, Layout::ChannelsLast),
      w({6, 4, 3, 3}, Layout::ChannelsLast);
  Tensor out({1, 6, 3, 3}, Layout::ChannelsLast);
  in.fillRandom(3);
  for (int round = 0; round < 2; ++round) {
    w.fillRandom(4 + round); // Same buffer, new values.
    if (round > 0) {
      ASSERT_EQ(memfmt_context_invalidate_caches(ctx), MEMFMT_STATUS_OK);
    }
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_conv2d_f32(
                              ctx, 1, in.memref(), w.memref(), out.memref(),
                              out.memref(), out.memref(), 1, 1, 0, 0, 0, 0, 1,
                              1, 1, 0, 0, 0, 0, 0.0, 0.0));
    expectClose(out, naiveConv(in, w, nullptr, nullptr, a), floatSumFactor(36),
                "round " + std::to_string(round));
  }
}

/// Results do not depend on the thread count (the reference kernels split
/// work, never a reduction).
TEST(ContextTest, ThreadCountDoesNotChangeResults) {
  Tensor in({4, 16, 9, 9}, Layout::ChannelsLast),
      w({8, 16, 3, 3}, Layout::Contiguous);
  in.fillRandom(5);
  w.fillRandom(6);
  std::vector<Tensor> outs;
  for (int32_t threads : {1, 2, 3}) {
    TestContext ctx(MEMFMT_KERNELS_REFERENCE, threads);
    memfmt_context_options_t resolved;
    memfmt_context_get_options(ctx, &resolved);
    EXPECT_EQ(resolved.num_threads, threads);
    outs.emplace_back(std::vector<int64_t>{4, 8, 7, 7}, Layout::ChannelsLast);
    EXPECT_KERNEL_OK(ctx,
                     _mlir_ciface_memfmt_conv2d_f32(
                         ctx, 0, in.memref(), w.memref(), outs.back().memref(),
                         outs.back().memref(), outs.back().memref(), 1, 1, 0, 0,
                         0, 0, 1, 1, 1, 0, 0, 1, 0, 0.0, 0.0));
  }
  EXPECT_EQ(outs[0].buffer, outs[1].buffer);
  EXPECT_EQ(outs[0].buffer, outs[2].buffer);
}

} // namespace
