//===- CudaDeviceTest.cpp - Contexts, memory, graphs and models on CUDA ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA backend beyond single kernels:
//  * without a device (or driver) a CUDA context fails with NO_DEVICE and
//    the CUDA runtime's reason, and a CUDA model cannot be loaded into a CPU
//    context by accident (these run on every machine; on a GPU machine the
//    no-device checks are skipped);
//  * on a device: memory, copies, timers, the description; graph capture of
//    a kernel sequence and its replay; all_reduce through NCCL with one
//    replica (eagerly and captured), and the broadcast several need; and the
//    loader end to end on the hand-written fake model
//    (runtime/test/loader/FakeModel.c) compiled for target "cuda": host and
//    device runs, CUDA graphs, and recapture when the buffers change, all
//    against the same model on the CPU.
// Tests that need a device print "skipped: no CUDA device".
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include "../loader/LoaderTestUtil.h"

#include "memfmt/runtime/model.h"

#include <cstdlib>
#include <filesystem>

using namespace memfmt::test;
using memfmt::loader::test::fakeManifestJson;
using memfmt::loader::test::replaceOnce;
using memfmt::loader::test::TempDir;
using memfmt::loader::test::writeText;

namespace {

TEST(CudaNoDeviceTest, ContextCreationFailsWithTheRuntimesReason) {
  EXPECT_EQ(memfmt_runtime_has_cuda(), 1);
  memfmt_context_options_t options;
  memfmt_context_options_init(&options);
  options.backend = MEMFMT_BACKEND_CUDA;
  memfmt_context_t *ctx = nullptr;
  memfmt_status_t status = memfmt_context_create(&options, &ctx);
  if (status == MEMFMT_STATUS_OK) {
    memfmt_context_destroy(ctx);
    GTEST_SKIP() << "skipped: this machine has a CUDA device";
  }
  EXPECT_EQ(status, MEMFMT_STATUS_NO_DEVICE);
  EXPECT_EQ(ctx, nullptr);
  std::string error = memfmt_context_last_error(nullptr);
  EXPECT_EQ(error.rfind("memfmt_context_create: the CUDA backend failed to "
                        "start: no CUDA device: cudaGetDeviceCount ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("(cuda"), std::string::npos) << error;
}

/// A directory with the fake model, its manifest saying `target`.
class FakeModelDir {
public:
  explicit FakeModelDir(const std::string &target) {
    const char *library = std::getenv("MEMFMT_FAKE_MODEL");
    std::filesystem::copy_file(library && *library ? library
                                                   : MEMFMT_FAKE_MODEL_PATH,
                               dir.file("model.so"));
    writeText(dir.file("manifest.json"),
              replaceOnce(fakeManifestJson(), "\"target\": \"cpu\"",
                          "\"target\": \"" + target + "\""));
  }
  const std::string &path() const { return dir.path(); }

private:
  TempDir dir;
};

TEST(CudaNoDeviceTest, CudaModelsNeedACudaContextOrAnyTarget) {
  FakeModelDir dir("cuda");
  memfmt_context_t *cpu = nullptr;
  ASSERT_EQ(memfmt_context_create(nullptr, &cpu), MEMFMT_STATUS_OK);
  memfmt_model_t *model = nullptr;
  EXPECT_EQ(memfmt_model_load(cpu, dir.path().c_str(), nullptr, &model),
            MEMFMT_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(memfmt_context_last_error(cpu))
                .find("compiled for target 'cuda' but the context runs on "
                      "'cpu'"),
            std::string::npos);
  // The compiled code is target-independent: it runs on the CPU when asked.
  ASSERT_EQ(
      memfmt_model_load_any_target(cpu, dir.path().c_str(), nullptr, &model),
      MEMFMT_STATUS_OK)
      << memfmt_context_last_error(cpu);
  std::vector<float> in(120, -1.0f), out(120, 0.0f);
  const float *inputs[] = {in.data()};
  float *outputs[] = {out.data()};
  EXPECT_EQ(memfmt_model_run_logical(model, inputs, nullptr, outputs, nullptr),
            MEMFMT_STATUS_OK)
      << memfmt_context_last_error(cpu);
  memfmt_model_destroy(model);
  memfmt_context_destroy(cpu);
}

//===----------------------------------------------------------------------===//
// On a device
//===----------------------------------------------------------------------===//

CudaEnv &env() {
  static CudaEnv *instance = new CudaEnv();
  return *instance;
}

TEST(CudaDeviceTest, MemoryCopiesTimersAndDescription) {
  MEMFMT_REQUIRE_CUDA(env());
  memfmt_context_t *gpu = env().gpu;
  std::string description = memfmt_context_device_description(gpu);
  EXPECT_NE(description.find("sm_"), std::string::npos) << description;
  EXPECT_NE(description.find("cuDNN"), std::string::npos) << description;
  void *p = nullptr;
  ASSERT_EQ(memfmt_device_alloc(gpu, 4096, &p), MEMFMT_STATUS_OK);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  std::vector<uint8_t> zeros(4096, 1);
  ASSERT_EQ(memfmt_device_copy(gpu, zeros.data(), p, 4096,
                               MEMFMT_COPY_DEVICE_TO_HOST),
            MEMFMT_STATUS_OK);
  for (uint8_t b : zeros)
    ASSERT_EQ(b, 0) << "memfmt_device_alloc must zero the memory";
  std::vector<float> host(1024), back(1024);
  for (int i = 0; i < 1024; ++i)
    host[i] = float(i);
  void *q = nullptr;
  ASSERT_EQ(memfmt_device_alloc(gpu, 4096, &q), MEMFMT_STATUS_OK);
  EXPECT_EQ(memfmt_context_timer_start(gpu), MEMFMT_STATUS_OK);
  EXPECT_EQ(
      memfmt_device_copy(gpu, p, host.data(), 4096, MEMFMT_COPY_HOST_TO_DEVICE),
      MEMFMT_STATUS_OK);
  EXPECT_EQ(memfmt_device_copy(gpu, q, p, 4096, MEMFMT_COPY_DEVICE_TO_DEVICE),
            MEMFMT_STATUS_OK);
  double ms = -1;
  EXPECT_EQ(memfmt_context_timer_stop(gpu, &ms), MEMFMT_STATUS_OK);
  EXPECT_GE(ms, 0.0);
  EXPECT_EQ(
      memfmt_device_copy(gpu, back.data(), q, 4096, MEMFMT_COPY_DEVICE_TO_HOST),
      MEMFMT_STATUS_OK);
  EXPECT_EQ(host, back);
  EXPECT_EQ(memfmt_device_free(gpu, p), MEMFMT_STATUS_OK);
  EXPECT_EQ(memfmt_device_free(gpu, q), MEMFMT_STATUS_OK);
  // Too much memory is OUT_OF_MEMORY with cudaMalloc's message.
  EXPECT_EQ(memfmt_device_alloc(gpu, int64_t(1) << 50, &p),
            MEMFMT_STATUS_OUT_OF_MEMORY);
  EXPECT_NE(std::string(memfmt_context_last_error(gpu)).find("cudaMalloc"),
            std::string::npos)
      << memfmt_context_last_error(gpu);
}

TEST(CudaDeviceTest, GraphCaptureAndReplay) {
  MEMFMT_REQUIRE_CUDA(env());
  memfmt_context_t *gpu = env().gpu;
  Buf x(Kind::F32, {2, 8, 4, 4}, Layout::ChannelsLast);
  Buf y(Kind::F32, {2, 8, 4, 4}, Layout::Contiguous);
  x.fill(1, -1, 1);
  const memfmt_memref_t *dx = x.device(gpu);
  const memfmt_memref_t *dy = y.device(gpu);
  // Run once eagerly (plans are made), then capture relu + copy-back.
  ASSERT_EQ(_mlir_ciface_memfmt_relu_f32(gpu, 0, dx, dy), MEMFMT_STATUS_OK);
  ASSERT_EQ(memfmt_graph_capture_begin(gpu), MEMFMT_STATUS_OK)
      << memfmt_context_last_error(gpu);
  ASSERT_EQ(_mlir_ciface_memfmt_relu_f32(gpu, 0, dx, dy), MEMFMT_STATUS_OK);
  ASSERT_EQ(_mlir_ciface_memfmt_add_f32(gpu, 1, dy, dy, dy),
            MEMFMT_STATUS_OK);
  memfmt_graph_t *graph = nullptr;
  ASSERT_EQ(memfmt_graph_capture_end(gpu, &graph), MEMFMT_STATUS_OK)
      << memfmt_context_last_error(gpu);
  // Capturing ran nothing: y is still relu(x).
  std::vector<uint8_t> once = y.download();
  ASSERT_EQ(memfmt_graph_launch(gpu, graph), MEMFMT_STATUS_OK);
  std::vector<uint8_t> replayed = y.download();
  for (int64_t i = 0; i < 128; ++i)
    ASSERT_EQ(y.valueIn(replayed, i), 2 * y.valueIn(once, i)) << i;
  ASSERT_EQ(memfmt_graph_launch(gpu, graph), MEMFMT_STATUS_OK);
  std::vector<uint8_t> twice = y.download();
  for (int64_t i = 0; i < 128; ++i)
    ASSERT_EQ(y.valueIn(twice, i), 2 * y.valueIn(once, i)) << i;
  memfmt_graph_destroy(gpu, graph);
  // A capture may not allocate.
  ASSERT_EQ(memfmt_graph_capture_begin(gpu), MEMFMT_STATUS_OK);
  void *p = nullptr;
  EXPECT_EQ(memfmt_device_alloc(gpu, 64, &p), MEMFMT_STATUS_INVALID_ARGUMENT);
  ASSERT_EQ(memfmt_graph_capture_end(gpu, &graph), MEMFMT_STATUS_OK);
  memfmt_graph_destroy(gpu, graph);
}

/// A communicator of one replica (NCCL then runs, alone) or of `size`
/// replicas without a broadcast (the CUDA context must refuse it).
memfmt_communicator_t replicas(int64_t size) {
  memfmt_communicator_t comm{};
  comm.rank = 0;
  comm.size = size;
  comm.all_reduce_sum_f32 = [](void *, float *, int64_t, char *, size_t) {
    return 0; // One replica's sum; the CUDA backend never calls it.
  };
  return comm;
}

TEST(CudaDeviceTest, AllReduceRunsThroughNcclAndIsCaptured) {
  MEMFMT_REQUIRE_CUDA(env());
  memfmt_context_t *gpu = env().gpu;
  // Several replicas need a broadcast for NCCL's unique id.
  memfmt_communicator_t two = replicas(2);
  EXPECT_EQ(memfmt_context_set_communicator(gpu, &two),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memfmt_context_last_error(gpu)).find("broadcast"),
            std::string::npos)
      << memfmt_context_last_error(gpu);
  memfmt_communicator_t one = replicas(1);
  ASSERT_EQ(memfmt_context_set_communicator(gpu, &one), MEMFMT_STATUS_OK)
      << memfmt_context_last_error(gpu);
  for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast})
    for (int64_t average : {0, 1}) {
      Buf x(Kind::F32, {2, 3, 5, 7}, layout), y(Kind::F32, {2, 3, 5, 7});
      x.fill(3, -2, 2);
      const memfmt_memref_t *dx = x.device(gpu);
      const memfmt_memref_t *dy = y.device(gpu);
      // Out of place (a copy, then NCCL on the output) and in place.
      ASSERT_EQ(_mlir_ciface_memfmt_all_reduce_f32(gpu, 0, dx, dy, average),
                MEMFMT_STATUS_OK)
          << memfmt_context_last_error(gpu);
      EXPECT_EQ(env().implOf(0), "nccl");
      std::vector<uint8_t> out = y.download();
      for (int64_t i = 0; i < 210; ++i)
        ASSERT_EQ(y.valueIn(out, i), x.value(i)) << i;
      ASSERT_EQ(_mlir_ciface_memfmt_all_reduce_f32(gpu, 1, dx, dx, average),
                MEMFMT_STATUS_OK)
          << memfmt_context_last_error(gpu);
      std::vector<uint8_t> in = x.download();
      for (int64_t i = 0; i < 210; ++i)
        ASSERT_EQ(x.valueIn(in, i), x.value(i)) << i;
      // NCCL's call is captured in a CUDA graph like any kernel.
      ASSERT_EQ(memfmt_graph_capture_begin(gpu), MEMFMT_STATUS_OK);
      ASSERT_EQ(_mlir_ciface_memfmt_all_reduce_f32(gpu, 2, dx, dx, average),
                MEMFMT_STATUS_OK)
          << memfmt_context_last_error(gpu);
      memfmt_graph_t *graph = nullptr;
      ASSERT_EQ(memfmt_graph_capture_end(gpu, &graph), MEMFMT_STATUS_OK)
          << memfmt_context_last_error(gpu);
      ASSERT_EQ(memfmt_graph_launch(gpu, graph), MEMFMT_STATUS_OK)
          << memfmt_context_last_error(gpu);
      std::vector<uint8_t> replayed = x.download();
      memfmt_graph_destroy(gpu, graph);
      for (int64_t i = 0; i < 210; ++i)
        ASSERT_EQ(x.valueIn(replayed, i), x.value(i)) << i;
    }
  // Alone again: the kernel is a copy.
  ASSERT_EQ(memfmt_context_set_communicator(gpu, nullptr), MEMFMT_STATUS_OK);
  Buf z(Kind::F32, {4});
  const memfmt_memref_t *dz = z.device(gpu);
  ASSERT_EQ(_mlir_ciface_memfmt_all_reduce_f32(gpu, 3, dz, dz, 1),
            MEMFMT_STATUS_OK);
  EXPECT_EQ(env().implOf(3), "single_replica");
}

/// Runs the fake model in `ctx` on `in`, returning the logical output.
std::vector<float> runFake(memfmt_context_t *ctx, const std::string &dir,
                           const std::vector<float> &in, bool any = false) {
  memfmt_model_t *model = nullptr;
  memfmt_status_t s =
      any ? memfmt_model_load_any_target(ctx, dir.c_str(), nullptr, &model)
          : memfmt_model_load(ctx, dir.c_str(), nullptr, &model);
  EXPECT_EQ(s, MEMFMT_STATUS_OK) << memfmt_context_last_error(ctx);
  std::vector<float> out(120, 0.0f);
  if (!model)
    return out;
  const float *inputs[] = {in.data()};
  float *outputs[] = {out.data()};
  EXPECT_EQ(memfmt_model_run_logical(model, inputs, nullptr, outputs, nullptr),
            MEMFMT_STATUS_OK)
      << memfmt_context_last_error(ctx);
  memfmt_model_destroy(model);
  return out;
}

TEST(CudaModelTest, FakeModelMatchesTheCpuWithAndWithoutGraphs) {
  MEMFMT_REQUIRE_CUDA(env());
  FakeModelDir dir("cuda");
  std::vector<float> in(120);
  for (int i = 0; i < 120; ++i)
    in[i] = float(i % 13) - 6.0f;
  std::vector<float> want = runFake(env().cpu, dir.path(), in, /*any=*/true);
  EXPECT_EQ(runFake(env().gpu, dir.path(), in), want);
  CudaEnv graphs(/*cudaGraph=*/true);
  ASSERT_TRUE(graphs.available());
  EXPECT_EQ(runFake(graphs.gpu, dir.path(), in), want);
}

TEST(CudaModelTest, RunDeviceAndRecaptureWhenBuffersChange) {
  MEMFMT_REQUIRE_CUDA(env());
  FakeModelDir dir("cuda");
  CudaEnv graphs(/*cudaGraph=*/true);
  ASSERT_TRUE(graphs.available());
  memfmt_context_t *gpu = graphs.gpu;
  memfmt_model_t *model = nullptr;
  ASSERT_EQ(memfmt_model_load(gpu, dir.path().c_str(), nullptr, &model),
            MEMFMT_STATUS_OK)
      << memfmt_context_last_error(gpu);
  memfmt_model_tensor_info_t inInfo, outInfo;
  memfmt_model_input_info(model, 0, &inInfo);
  memfmt_model_output_info(model, 0, &outInfo);
  // Two pairs of device buffers; the input in the model's (NHWC) layout.
  std::vector<float> input(size_t(inInfo.buffer_bytes / 4));
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = float(int(i % 7) - 3);
  void *in[2] = {}, *out[2] = {};
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(memfmt_device_alloc(gpu, inInfo.buffer_bytes, &in[k]),
              MEMFMT_STATUS_OK);
    ASSERT_EQ(memfmt_device_alloc(gpu, outInfo.buffer_bytes, &out[k]),
              MEMFMT_STATUS_OK);
    ASSERT_EQ(memfmt_device_copy(gpu, in[k], input.data(), inInfo.buffer_bytes,
                                 MEMFMT_COPY_HOST_TO_DEVICE),
              MEMFMT_STATUS_OK);
  }
  std::vector<float> host(size_t(outInfo.buffer_bytes / 4));
  const void *hostIn[] = {input.data()};
  void *hostOut[] = {host.data()};
  ASSERT_EQ(memfmt_model_run(model, hostIn, hostOut), MEMFMT_STATUS_OK)
      << memfmt_context_last_error(gpu);
  for (int k = 0; k < 2; ++k) {
    const void *inputs[] = {in[k]};
    void *outputs[] = {out[k]};
    ASSERT_EQ(memfmt_model_run_device(model, inputs, outputs), MEMFMT_STATUS_OK)
        << memfmt_context_last_error(gpu);
    ASSERT_EQ(memfmt_context_synchronize(gpu), MEMFMT_STATUS_OK);
    std::vector<float> got(host.size());
    ASSERT_EQ(memfmt_device_copy(gpu, got.data(), out[k], outInfo.buffer_bytes,
                                 MEMFMT_COPY_DEVICE_TO_HOST),
              MEMFMT_STATUS_OK);
    EXPECT_EQ(got, host) << "buffer pair " << k;
  }
  memfmt_model_destroy(model);
  for (int k = 0; k < 2; ++k) {
    memfmt_device_free(gpu, in[k]);
    memfmt_device_free(gpu, out[k]);
  }
}

} // namespace
