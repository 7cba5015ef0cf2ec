//===- DeviceModelTest.cpp - The loader's device paths on the CPU ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The parts of model.h added for device targets that also hold on the CPU:
// memfmt_model_run_device is memfmt_model_run when "device memory" is host
// memory (buffers from memfmt_device_alloc); memfmt_model_load_any_target
// runs a model compiled for "cuda" in a CPU context (the compiled code does
// not depend on the target), with the same results as the CPU build; the
// cuda_graph option is ignored by CPU contexts. (runtime/test/cuda covers
// the same paths on a GPU.)
//
//===----------------------------------------------------------------------===//

#include "LoaderTestUtil.h"

#include "memfmt/runtime/model.h"

#include <filesystem>
#include <vector>

using namespace memfmt::loader::test;

namespace {

class ModelDir {
public:
  explicit ModelDir(const std::string &Manifest) {
    std::filesystem::copy_file(MEMFMT_FAKE_MODEL_PATH, Dir.file("model.so"));
    writeText(Dir.file("manifest.json"), Manifest);
  }
  const std::string &path() const { return Dir.path(); }

private:
  TempDir Dir;
};

memfmt_context_t *cpuContext(bool Graph = false) {
  memfmt_context_options_t Options;
  memfmt_context_options_init(&Options);
  Options.num_threads = 1;
  if (Graph)
    Options.cuda_graph = MEMFMT_SWITCH_ON;
  memfmt_context_t *Ctx = nullptr;
  EXPECT_EQ(memfmt_context_create(&Options, &Ctx), MEMFMT_STATUS_OK);
  return Ctx;
}

/// Runs the model at `Dir` on `In` (the model's input layout) with
/// memfmt_model_run or, on buffers from memfmt_device_alloc,
/// memfmt_model_run_device.
std::vector<float> run(memfmt_context_t *Ctx, const std::string &Dir,
                       const std::vector<float> &In, bool Device, bool Any) {
  memfmt_model_t *Model = nullptr;
  memfmt_status_t S =
      Any ? memfmt_model_load_any_target(Ctx, Dir.c_str(), nullptr, &Model)
          : memfmt_model_load(Ctx, Dir.c_str(), nullptr, &Model);
  EXPECT_EQ(S, MEMFMT_STATUS_OK) << memfmt_context_last_error(Ctx);
  std::vector<float> Out(120, -1.0f);
  if (!Model)
    return Out;
  if (Device) {
    void *DIn = nullptr, *DOut = nullptr;
    EXPECT_EQ(memfmt_device_alloc(Ctx, 480, &DIn), MEMFMT_STATUS_OK);
    EXPECT_EQ(memfmt_device_alloc(Ctx, 480, &DOut), MEMFMT_STATUS_OK);
    EXPECT_EQ(memfmt_device_copy(Ctx, DIn, In.data(), 480,
                                 MEMFMT_COPY_HOST_TO_DEVICE),
              MEMFMT_STATUS_OK);
    const void *Inputs[] = {DIn};
    void *Outputs[] = {DOut};
    EXPECT_EQ(memfmt_model_run_device(Model, Inputs, Outputs), MEMFMT_STATUS_OK)
        << memfmt_context_last_error(Ctx);
    EXPECT_EQ(memfmt_context_synchronize(Ctx), MEMFMT_STATUS_OK);
    EXPECT_EQ(memfmt_device_copy(Ctx, Out.data(), DOut, 480,
                                 MEMFMT_COPY_DEVICE_TO_HOST),
              MEMFMT_STATUS_OK);
    memfmt_device_free(Ctx, DIn);
    memfmt_device_free(Ctx, DOut);
  } else {
    const void *Inputs[] = {In.data()};
    void *Outputs[] = {Out.data()};
    EXPECT_EQ(memfmt_model_run(Model, Inputs, Outputs), MEMFMT_STATUS_OK)
        << memfmt_context_last_error(Ctx);
  }
  memfmt_model_destroy(Model);
  return Out;
}

TEST(DeviceModelTest, RunDeviceOnTheCpuIsRun) {
  ModelDir Dir(fakeManifestJson());
  std::vector<float> In(120);
  for (int I = 0; I < 120; ++I)
    In[I] = float(I % 11) - 5.0f;
  memfmt_context_t *Ctx = cpuContext();
  std::vector<float> Host = run(Ctx, Dir.path(), In, false, false);
  EXPECT_EQ(run(Ctx, Dir.path(), In, true, false), Host);
  memfmt_context_destroy(Ctx);
  // CPU contexts ignore the CUDA graph option.
  memfmt_context_t *Graph = cpuContext(/*Graph=*/true);
  EXPECT_EQ(run(Graph, Dir.path(), In, false, false), Host);
  memfmt_context_destroy(Graph);
}

TEST(DeviceModelTest, AnyTargetRunsACudaModelOnTheCpu) {
  ModelDir Cpu(fakeManifestJson());
  ModelDir Cuda(replaceOnce(fakeManifestJson(), "\"target\": \"cpu\"",
                            "\"target\": \"cuda\""));
  std::vector<float> In(120);
  for (int I = 0; I < 120; ++I)
    In[I] = float(I % 7) - 3.0f;
  memfmt_context_t *Ctx = cpuContext();
  std::vector<float> Want = run(Ctx, Cpu.path(), In, false, false);
  EXPECT_EQ(run(Ctx, Cuda.path(), In, false, /*Any=*/true), Want);
  EXPECT_EQ(run(Ctx, Cuda.path(), In, true, /*Any=*/true), Want);
  memfmt_model_t *Model = nullptr;
  EXPECT_EQ(memfmt_model_load_any_target(Ctx, "", nullptr, &Model),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(memfmt_model_load_any_target(nullptr, Cuda.path().c_str(), nullptr,
                                         &Model),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  memfmt_context_destroy(Ctx);
}

} // namespace
