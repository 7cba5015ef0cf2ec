//===- DeviceTest.cpp - The device functions on the CPU backend -----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The backend-neutral device API of memfmt_runtime.h on the CPU, where device
// memory is zeroed host memory, copies are synchronous, the timer is a
// steady clock and graphs are UNSUPPORTED with a message; the CUDA options
// (device, TF32, graphs, workspace limit) and their environment variables
// resolve the same on every backend; memfmt_context_device_description
// describes the CPU.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include <gmock/gmock.h>

#include <cstring>

using namespace memfmt::test;

namespace {

TEST(DeviceTest, CpuMemoryCopiesAndTimer) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  void *p = nullptr;
  ASSERT_EQ(memfmt_device_alloc(ctx, 100, &p), MEMFMT_STATUS_OK);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  const unsigned char *bytes = static_cast<const unsigned char *>(p);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(bytes[i], 0) << "byte " << i;
  float host[4] = {1, 2, 3, 4}, back[4] = {};
  EXPECT_EQ(memfmt_device_copy(ctx, p, host, sizeof(host),
                               MEMFMT_COPY_HOST_TO_DEVICE),
            MEMFMT_STATUS_OK);
  EXPECT_EQ(memfmt_device_copy(ctx, back, p, sizeof(back),
                               MEMFMT_COPY_DEVICE_TO_HOST),
            MEMFMT_STATUS_OK);
  EXPECT_EQ(std::memcmp(host, back, sizeof(host)), 0);
  EXPECT_EQ(memfmt_context_synchronize(ctx), MEMFMT_STATUS_OK);
  EXPECT_EQ(memfmt_context_timer_start(ctx), MEMFMT_STATUS_OK);
  double ms = -1;
  EXPECT_EQ(memfmt_context_timer_stop(ctx, &ms), MEMFMT_STATUS_OK);
  EXPECT_GE(ms, 0.0);
  EXPECT_EQ(memfmt_device_free(ctx, p), MEMFMT_STATUS_OK);
  EXPECT_EQ(memfmt_device_free(ctx, nullptr), MEMFMT_STATUS_OK);
}

TEST(DeviceTest, BadArgumentsFailWithAMessage) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  void *p = nullptr;
  EXPECT_EQ(memfmt_device_alloc(ctx, -1, &p), MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.lastError(), "memfmt_device_alloc: bytes is -1");
  EXPECT_EQ(memfmt_device_copy(ctx, nullptr, &p, 8, MEMFMT_COPY_HOST_TO_DEVICE),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      memfmt_device_copy(ctx, &p, &p, 8, static_cast<memfmt_copy_kind_t>(7)),
      MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(ctx.lastError().find("unknown copy kind 7"), std::string::npos);
  EXPECT_EQ(memfmt_device_alloc(nullptr, 8, &p),
            MEMFMT_STATUS_INVALID_ARGUMENT);
}

TEST(DeviceTest, GraphsNeedTheCudaBackend) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  EXPECT_EQ(memfmt_graph_capture_begin(ctx), MEMFMT_STATUS_UNSUPPORTED);
  EXPECT_NE(ctx.lastError().find("memfmt_graph_capture_begin: graphs need "
                                 "the CUDA backend"),
            std::string::npos)
      << ctx.lastError();
  memfmt_graph_t *graph = reinterpret_cast<memfmt_graph_t *>(1);
  EXPECT_EQ(memfmt_graph_capture_end(ctx, &graph), MEMFMT_STATUS_UNSUPPORTED);
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(memfmt_graph_launch(ctx, nullptr), MEMFMT_STATUS_INVALID_ARGUMENT);
  memfmt_graph_destroy(ctx, nullptr);
}

TEST(DeviceTest, DescriptionNamesTheCpu) {
  TestContext ctx(MEMFMT_KERNELS_FAST, 3);
  std::string text = memfmt_context_device_description(ctx);
  EXPECT_EQ(text.rfind("CPU (3 threads", 0), 0u) << text;
  // The fast kernels name oneDNN's version and the instruction set it
  // dispatches to ("oneDNN 2.6.3 on avx512_core_bf16").
  if (memfmt_runtime_has_onednn())
    EXPECT_THAT(text, ::testing::MatchesRegex(
                          "CPU \\(3 threads, oneDNN [0-9.]+ on [a-z0-9_]+\\)"));
  else
    EXPECT_EQ(text, "CPU (3 threads)");
}

TEST(DeviceTest, ReferenceKernelsDescribeNoLibrary) {
  TestContext ctx(MEMFMT_KERNELS_REFERENCE, 1);
  EXPECT_STREQ(memfmt_context_device_description(ctx), "CPU (1 thread)");
}

memfmt_context_options_t resolve(const memfmt_context_options_t &options,
                                 memfmt_status_t expected = MEMFMT_STATUS_OK) {
  memfmt_context_t *ctx = nullptr;
  memfmt_status_t status = memfmt_context_create(&options, &ctx);
  EXPECT_EQ(status, expected) << memfmt_context_last_error(nullptr);
  memfmt_context_options_t resolved;
  memfmt_context_options_init(&resolved);
  if (ctx)
    memfmt_context_get_options(ctx, &resolved);
  memfmt_context_destroy(ctx);
  return resolved;
}

TEST(DeviceTest, CudaOptionsAndEnvironment) {
  memfmt_context_options_t opts;
  memfmt_context_options_init(&opts);
  EXPECT_EQ(opts.allow_tf32, MEMFMT_SWITCH_DEFAULT);
  EXPECT_EQ(opts.cuda_graph, MEMFMT_SWITCH_DEFAULT);
  {
    ScopedEnv tf32("MEMFMT_ALLOW_TF32", nullptr);
    ScopedEnv graph("MEMFMT_CUDA_GRAPH", nullptr);
    ScopedEnv workspace("MEMFMT_CUDNN_WORKSPACE_MB", nullptr);
    memfmt_context_options_t r = resolve(opts);
    EXPECT_EQ(r.allow_tf32, MEMFMT_SWITCH_OFF);
    EXPECT_EQ(r.cuda_graph, MEMFMT_SWITCH_OFF);
    EXPECT_EQ(r.workspace_limit, int64_t(1) << 30);
    EXPECT_EQ(r.device, 0);
  }
  {
    ScopedEnv tf32("MEMFMT_ALLOW_TF32", "1");
    ScopedEnv graph("MEMFMT_CUDA_GRAPH", "on");
    ScopedEnv workspace("MEMFMT_CUDNN_WORKSPACE_MB", "64");
    ScopedEnv device("MEMFMT_CUDA_DEVICE", "2");
    memfmt_context_options_t r = resolve(opts);
    EXPECT_EQ(r.allow_tf32, MEMFMT_SWITCH_ON);
    EXPECT_EQ(r.cuda_graph, MEMFMT_SWITCH_ON);
    EXPECT_EQ(r.workspace_limit, int64_t(64) << 20);
    EXPECT_EQ(r.device, 2);
    // An explicit option wins over the environment.
    memfmt_context_options_t explicitOff = opts;
    explicitOff.allow_tf32 = MEMFMT_SWITCH_OFF;
    EXPECT_EQ(resolve(explicitOff).allow_tf32, MEMFMT_SWITCH_OFF);
  }
  {
    ScopedEnv tf32("MEMFMT_ALLOW_TF32", "maybe");
    resolve(opts, MEMFMT_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(memfmt_context_last_error(nullptr),
                          "MEMFMT_ALLOW_TF32 is 'maybe'; expected 1 or 0"),
              nullptr);
  }
  memfmt_context_options_t bad = opts;
  bad.device = -1;
  resolve(bad, MEMFMT_STATUS_INVALID_ARGUMENT);
  bad = opts;
  bad.cuda_graph = static_cast<memfmt_switch_t>(5);
  resolve(bad, MEMFMT_STATUS_INVALID_ARGUMENT);
  bad = opts;
  bad.workspace_limit = -5;
  resolve(bad, MEMFMT_STATUS_INVALID_ARGUMENT);
}

} // namespace
