//===- ModelTest.cpp - End-to-end tests of the model C API ----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Loads the fake model (FakeModel.c, built by CMake as a loadable module
// linked against the runtime) from a directory the test assembles -
// model.so plus manifest.json - and runs it through model.h, with no
// compiler involved: results, the channels-last input re-layout, weights
// from synthetic seeds and from .safetensors, the queries, and every error
// path (missing files, dlopen and dlsym failures, wrong targets, wrong
// sizes, kernel failures inside the model).
//
//===----------------------------------------------------------------------===//

#include "LoaderTestUtil.h"

#include "memfmt/runtime/io/SafeTensors.h"
#include "memfmt/runtime/loader/Random.h"
#include "memfmt/runtime/loader/Weights.h"
#include "memfmt/runtime/model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

using namespace memfmt;
using namespace memfmt::loader;
using namespace memfmt::loader::test;
using ::testing::HasSubstr;

namespace {

constexpr int64_t N = 2, C = 3, H = 4, W = 5, Count = N * C * H * W;

/// A model directory: the fake model as model.so and a manifest.
class FakeModelDir {
public:
  explicit FakeModelDir(const std::string &Manifest = fakeManifestJson()) {
    std::filesystem::copy_file(MEMFMT_FAKE_MODEL_PATH, Dir.file("model.so"));
    writeText(Dir.file("manifest.json"), Manifest);
  }
  const std::string &path() const { return Dir.path(); }
  std::string file(const std::string &Name) const { return Dir.file(Name); }

private:
  TempDir Dir;
};

/// A CPU context with the given kernels, destroyed with the fixture.
class ModelTest : public ::testing::Test {
protected:
  void SetUp() override { Ctx = makeContext(MEMFMT_KERNELS_FAST); }
  void TearDown() override {
    for (memfmt_model_t *M : Models)
      memfmt_model_destroy(M);
    for (memfmt_context_t *X : Contexts)
      memfmt_context_destroy(X);
  }

  memfmt_context_t *makeContext(memfmt_kernels_t Kernels) {
    memfmt_context_options_t Options;
    memfmt_context_options_init(&Options);
    Options.kernels = Kernels;
    Options.num_threads = 1;
    memfmt_context_t *X = nullptr;
    EXPECT_EQ(memfmt_context_create(&Options, &X), MEMFMT_STATUS_OK)
        << memfmt_context_last_error(nullptr);
    Contexts.push_back(X);
    return X;
  }

  /// Loads \p Dir into \p Into (Ctx by default); fails the test on error.
  memfmt_model_t *load(const std::string &Dir, const char *Weights = nullptr,
                       memfmt_context_t *Into = nullptr) {
    memfmt_context_t *X = Into ? Into : Ctx;
    memfmt_model_t *M = nullptr;
    memfmt_status_t S = memfmt_model_load(X, Dir.c_str(), Weights, &M);
    EXPECT_EQ(S, MEMFMT_STATUS_OK) << memfmt_context_last_error(X);
    if (M)
      Models.push_back(M);
    return M;
  }

  /// The status and message of a load that must fail.
  std::pair<memfmt_status_t, std::string>
  loadError(const std::string &Dir, const char *Weights = nullptr) {
    memfmt_model_t *M = reinterpret_cast<memfmt_model_t *>(1);
    memfmt_status_t S = memfmt_model_load(Ctx, Dir.c_str(), Weights, &M);
    EXPECT_NE(S, MEMFMT_STATUS_OK);
    EXPECT_EQ(M, nullptr);
    if (S == MEMFMT_STATUS_OK && M)
      Models.push_back(M);
    return {S, memfmt_context_last_error(Ctx)};
  }

  memfmt_context_t *Ctx = nullptr;
  std::vector<memfmt_context_t *> Contexts;
  std::vector<memfmt_model_t *> Models;
};

/// Logical input values: a mix of signs so relu matters.
std::vector<float> logicalInput(uint64_t Seed = 1) {
  NormalGenerator G(streamKey(Seed, "input"));
  std::vector<float> X(Count);
  for (float &V : X)
    V = static_cast<float>(G.next());
  return X;
}

/// relu(x) + shift[c], logical.
std::vector<float> expected(const std::vector<float> &X,
                            const std::vector<float> &Shift) {
  std::vector<float> Y(Count);
  for (int64_t I = 0; I < Count; ++I) {
    int64_t Channel = (I / (H * W)) % C;
    Y[I] = std::max(X[I], 0.0f) + Shift[Channel];
  }
  return Y;
}

/// Writes a safetensors file holding "shift".
std::string writeShift(const std::string &Path, std::vector<float> Shift) {
  io::TensorView V;
  V.Name = "shift";
  V.Type = io::DType::F32;
  V.Shape = {1, 3, 1, 1};
  V.Data = reinterpret_cast<const uint8_t *>(Shift.data());
  V.NumBytes = 12;
  io::Status S = io::writeSafeTensors(Path, {V});
  EXPECT_TRUE(S.ok()) << S.error();
  return Path;
}

// With all-zero weights the model is relu(x), through the logical API.
TEST_F(ModelTest, RunsRelu) {
  FakeModelDir Dir;
  std::string Weights = writeShift(Dir.file("zero.safetensors"), {0, 0, 0});
  memfmt_model_t *M = load(Dir.path(), Weights.c_str());
  ASSERT_NE(M, nullptr);
  std::vector<float> X = logicalInput(), Y(Count, -1.0f);
  const float *In[] = {X.data()};
  float *Out[] = {Y.data()};
  int64_t Elements[] = {Count};
  ASSERT_EQ(memfmt_model_run_logical(M, In, Elements, Out, Elements),
            MEMFMT_STATUS_OK)
      << memfmt_context_last_error(Ctx);
  for (int64_t I = 0; I < Count; ++I)
    ASSERT_EQ(Y[I], std::max(X[I], 0.0f)) << "element " << I;
}

// Safetensors weights: relu(x) + shift, on the fast and reference kernels,
// through both run functions (the model-layout input is channels-last).
TEST_F(ModelTest, RunsWithSafetensorsWeights) {
  FakeModelDir Dir;
  std::vector<float> Shift = {0.5f, -1.0f, 2.0f};
  std::string Weights = writeShift(Dir.file("w.safetensors"), Shift);
  std::vector<float> X = logicalInput(), Want = expected(X, Shift);
  for (memfmt_kernels_t Kernels :
       {MEMFMT_KERNELS_FAST, MEMFMT_KERNELS_REFERENCE}) {
    memfmt_context_t *X2 = makeContext(Kernels);
    memfmt_model_t *M = load(Dir.path(), Weights.c_str(), X2);
    ASSERT_NE(M, nullptr);
    std::vector<float> Y(Count);
    const float *In[] = {X.data()};
    float *Out[] = {Y.data()};
    ASSERT_EQ(memfmt_model_run_logical(M, In, nullptr, Out, nullptr),
              MEMFMT_STATUS_OK)
        << memfmt_context_last_error(X2);
    EXPECT_EQ(Y, Want);

    // The same through memfmt_model_run with a channels-last input buffer.
    std::vector<float> ChannelsLast(Count), Y2(Count);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w)
            ChannelsLast[n * 60 + c + h * 15 + w * 3] =
                X[((n * C + c) * H + h) * W + w];
    const void *RawIn[] = {ChannelsLast.data()};
    void *RawOut[] = {Y2.data()};
    ASSERT_EQ(memfmt_model_run(M, RawIn, RawOut), MEMFMT_STATUS_OK)
        << memfmt_context_last_error(X2);
    EXPECT_EQ(Y2, Want);
  }
}

// Synthetic weights: the same seed loads the same blob, another seed
// another; the blob holds the synthetic values at the manifest's offset.
TEST_F(ModelTest, SyntheticWeights) {
  FakeModelDir Dir;
  memfmt_model_t *A = load(Dir.path());
  memfmt_model_t *B = load(Dir.path(), "synthetic:0");
  memfmt_model_t *D = load(Dir.path(), "synthetic:9");
  ASSERT_TRUE(A && B && D);
  const void *WA, *WB, *WD;
  int64_t Bytes = 0;
  ASSERT_EQ(memfmt_model_weights(A, &WA, &Bytes), MEMFMT_STATUS_OK);
  EXPECT_EQ(Bytes, 128);
  ASSERT_EQ(memfmt_model_weights(B, &WB, &Bytes), MEMFMT_STATUS_OK);
  ASSERT_EQ(memfmt_model_weights(D, &WD, &Bytes), MEMFMT_STATUS_OK);
  EXPECT_EQ(std::memcmp(WA, WB, 128), 0);
  EXPECT_NE(std::memcmp(WA, WD, 128), 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(WA) % 64, 0u);

  auto Man = parseManifest(fakeManifestJson(), "/x/manifest.json");
  ASSERT_TRUE(Man.ok()) << Man.error();
  std::vector<float> Shift = syntheticValues(*Man, 0, 0);
  std::vector<float> Stored(3);
  std::memcpy(Stored.data(), static_cast<const uint8_t *>(WA) + 64, 12);
  EXPECT_EQ(Stored, Shift);

  std::vector<float> X = logicalInput(), Y(Count);
  const float *In[] = {X.data()};
  float *Out[] = {Y.data()};
  ASSERT_EQ(memfmt_model_run_logical(A, In, nullptr, Out, nullptr),
            MEMFMT_STATUS_OK)
      << memfmt_context_last_error(Ctx);
  EXPECT_EQ(Y, expected(X, Shift));
}

// The queries describe the manifest.
TEST_F(ModelTest, Queries) {
  FakeModelDir Dir;
  memfmt_model_t *M = load(Dir.path(), "synthetic:3");
  ASSERT_NE(M, nullptr);
  EXPECT_EQ(memfmt_model_context(M), Ctx);
  memfmt_model_info_t Info;
  ASSERT_EQ(memfmt_model_get_info(M, &Info), MEMFMT_STATUS_OK);
  EXPECT_STREQ(Info.name, "fake");
  EXPECT_STREQ(Info.target, "cpu");
  EXPECT_STREQ(Info.precision, "f32");
  EXPECT_STREQ(Info.memory_format, "channels-last");
  EXPECT_STREQ(Info.input_format, "channels-last");
  EXPECT_STREQ(Info.weights_source, "synthetic:3");
  EXPECT_EQ(std::string(Info.library_path), Dir.file("model.so"));
  EXPECT_EQ(Info.num_inputs, 1);
  EXPECT_EQ(Info.num_outputs, 1);
  EXPECT_EQ(Info.num_parameters, 1);
  EXPECT_EQ(Info.num_nodes, 2);
  EXPECT_EQ(Info.arena_bytes, 480);
  EXPECT_EQ(Info.peak_live_bytes, 480);
  EXPECT_EQ(Info.weights_bytes, 128);

  memfmt_model_tensor_info_t T;
  ASSERT_EQ(memfmt_model_input_info(M, 0, &T), MEMFMT_STATUS_OK);
  EXPECT_STREQ(T.name, "input_0");
  EXPECT_STREQ(T.dtype, "f32");
  EXPECT_EQ(T.element_size, 4);
  ASSERT_EQ(T.rank, 4);
  EXPECT_EQ(std::vector<int64_t>(T.shape, T.shape + 4),
            (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(std::vector<int64_t>(T.strides, T.strides + 4),
            (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_EQ(T.num_elements, 120);
  EXPECT_EQ(T.buffer_bytes, 480);
  ASSERT_EQ(memfmt_model_output_info(M, 0, &T), MEMFMT_STATUS_OK);
  EXPECT_STREQ(T.name, "output_0");
  EXPECT_EQ(memfmt_model_input_info(M, 1, &T), MEMFMT_STATUS_NOT_FOUND);
  EXPECT_EQ(memfmt_model_output_info(M, -1, &T), MEMFMT_STATUS_NOT_FOUND);

  const char *Name = nullptr;
  ASSERT_EQ(memfmt_model_node_name(M, 1, &Name), MEMFMT_STATUS_OK);
  EXPECT_STREQ(Name, "memfmt.add at loc(\"fake.mlir\":2:1)");
  EXPECT_EQ(memfmt_model_node_name(M, 2, &Name), MEMFMT_STATUS_NOT_FOUND);
}

// Profiling attributes kernel time to the model's node ids.
TEST_F(ModelTest, ProfileNodes) {
  FakeModelDir Dir;
  memfmt_model_t *M = load(Dir.path());
  ASSERT_NE(M, nullptr);
  ASSERT_EQ(memfmt_context_set_profiling(Ctx, 1), MEMFMT_STATUS_OK);
  std::vector<float> X = logicalInput(), Y(Count);
  const float *In[] = {X.data()};
  float *Out[] = {Y.data()};
  for (int I = 0; I < 3; ++I)
    ASSERT_EQ(memfmt_model_run_logical(M, In, nullptr, Out, nullptr),
              MEMFMT_STATUS_OK);
  int64_t Entries = 0;
  ASSERT_EQ(memfmt_context_profile_count(Ctx, &Entries), MEMFMT_STATUS_OK);
  ASSERT_EQ(Entries, 2);
  memfmt_profile_entry_t E;
  ASSERT_EQ(memfmt_context_profile_entry(Ctx, 0, &E), MEMFMT_STATUS_OK);
  EXPECT_EQ(E.node, 0);
  EXPECT_STREQ(E.kernel, "memfmt_relu_f32");
  EXPECT_EQ(E.calls, 3);
  ASSERT_EQ(memfmt_context_profile_entry(Ctx, 1, &E), MEMFMT_STATUS_OK);
  EXPECT_EQ(E.node, 1);
  EXPECT_STREQ(E.kernel, "memfmt_add_f32");
}

// Wrong sizes and null buffers are rejected before the model runs.
TEST_F(ModelTest, RunArgumentErrors) {
  FakeModelDir Dir;
  memfmt_model_t *M = load(Dir.path());
  ASSERT_NE(M, nullptr);
  std::vector<float> X(Count), Y(Count);
  const float *In[] = {X.data()};
  float *Out[] = {Y.data()};
  int64_t Wrong[] = {60}, Right[] = {Count};
  EXPECT_EQ(memfmt_model_run_logical(M, In, Wrong, Out, nullptr),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(memfmt_context_last_error(Ctx),
              HasSubstr("memfmt_model_run_logical (fake): input 0 (input_0) "
                        "has 60 elements; the model expects shape [2,3,4,5] = "
                        "120 elements"));
  EXPECT_EQ(memfmt_model_run_logical(M, In, Right, Out, Wrong),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(memfmt_context_last_error(Ctx), HasSubstr("output 0 (output_0)"));
  const float *NullIn[] = {nullptr};
  EXPECT_EQ(memfmt_model_run_logical(M, NullIn, nullptr, Out, nullptr),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(memfmt_context_last_error(Ctx),
              HasSubstr("input 0 (input_0) is null"));
  EXPECT_EQ(memfmt_model_run(M, nullptr, nullptr),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  const void *Misaligned[] = {reinterpret_cast<const char *>(X.data()) + 1};
  void *RawOut[] = {Y.data()};
  EXPECT_EQ(memfmt_model_run(M, Misaligned, RawOut),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(memfmt_context_last_error(Ctx),
              HasSubstr("not aligned to its element size 4"));
  EXPECT_EQ(memfmt_model_run(nullptr, nullptr, nullptr),
            MEMFMT_STATUS_INVALID_ARGUMENT);
}

// A kernel failing inside the model fails the load, in its warm-up run,
// with the kernel's status and message and the model's name in front: a
// model that cannot run is never handed out.
TEST_F(ModelTest, KernelErrorInsideTheModel) {
  FakeModelDir Dir(replaceOnce(fakeManifestJson(), "\"memfmt_forward_packed\"",
                               "\"fake_forward_bad\""));
  auto [S, E] = loadError(Dir.path());
  EXPECT_EQ(S, MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(E, HasSubstr("memfmt_model_load (warm-up run) (fake): "
                           "memfmt_add_f32 (node 1): "));
}

// Load errors: each says what is wrong, with the right status.
TEST_F(ModelTest, LoadErrors) {
  TempDir Empty;
  auto [S, E] = loadError(Empty.file("nope"));
  EXPECT_EQ(S, MEMFMT_STATUS_IO_ERROR);
  EXPECT_THAT(E, HasSubstr("memfmt_model_load: " + Empty.file("nope") +
                           ": No such file or directory"));

  std::tie(S, E) = loadError(Empty.path());
  EXPECT_EQ(S, MEMFMT_STATUS_IO_ERROR);
  EXPECT_THAT(E, HasSubstr(Empty.file("manifest.json") + ": cannot open"));

  FakeModelDir Bad(replaceOnce(fakeManifestJson(), "\"arena_bytes\": 480",
                               "\"arena_bytes\": -480"));
  std::tie(S, E) = loadError(Bad.path());
  EXPECT_EQ(S, MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(E, HasSubstr(Bad.file("manifest.json") + ": 'arena_bytes'"));

  FakeModelDir NoLib(
      replaceOnce(fakeManifestJson(), "\"model.so\"", "\"missing.so\""));
  std::tie(S, E) = loadError(NoLib.path());
  EXPECT_EQ(S, MEMFMT_STATUS_IO_ERROR);
  EXPECT_THAT(E, HasSubstr(NoLib.file("missing.so") +
                           ": No such file or directory (the 'library' of"));

  FakeModelDir Garbage;
  writeText(Garbage.file("model.so"), "not an ELF file");
  std::tie(S, E) = loadError(Garbage.path());
  EXPECT_EQ(S, MEMFMT_STATUS_IO_ERROR);
  EXPECT_THAT(E, HasSubstr("dlopen failed: " + Garbage.file("model.so")));

  FakeModelDir NoEntry(replaceOnce(
      fakeManifestJson(), "\"memfmt_forward_packed\"", "\"no_such_entry\""));
  std::tie(S, E) = loadError(NoEntry.path());
  EXPECT_EQ(S, MEMFMT_STATUS_NOT_FOUND);
  EXPECT_THAT(E, HasSubstr("has no entry point 'no_such_entry'"));
  EXPECT_THAT(E, HasSubstr("undefined symbol: no_such_entry"));

  FakeModelDir Cuda(replaceOnce(fakeManifestJson(), "\"target\": \"cpu\"",
                                "\"target\": \"cuda\""));
  std::tie(S, E) = loadError(Cuda.path());
  EXPECT_EQ(S, MEMFMT_STATUS_UNSUPPORTED);
  EXPECT_THAT(E, HasSubstr("compiled for target 'cuda' but the context runs "
                           "on 'cpu'"));

  FakeModelDir Dir;
  std::tie(S, E) = loadError(Dir.path(), "random:1");
  EXPECT_EQ(S, MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(E, HasSubstr("unknown weights source 'random:1'"));

  std::tie(S, E) = loadError(Dir.path(), "/no/such.safetensors");
  EXPECT_EQ(S, MEMFMT_STATUS_IO_ERROR);
  EXPECT_THAT(E, HasSubstr("/no/such.safetensors: No such file or directory"));

  std::string Wrong = Dir.file("wrong.safetensors");
  io::TensorView V;
  float Four[4] = {};
  V.Name = "shift";
  V.Shape = {4};
  V.Data = reinterpret_cast<const uint8_t *>(Four);
  V.NumBytes = 16;
  ASSERT_TRUE(io::writeSafeTensors(Wrong, {V}).ok());
  std::tie(S, E) = loadError(Dir.path(), Wrong.c_str());
  EXPECT_EQ(S, MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(E, HasSubstr("shift is [4], the model expects [1,3,1,1]"));

  memfmt_model_t *M = nullptr;
  EXPECT_EQ(memfmt_model_load(nullptr, Dir.path().c_str(), nullptr, &M),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(memfmt_model_load(Ctx, nullptr, nullptr, &M),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(memfmt_context_last_error(Ctx), HasSubstr("directory is null"));
  EXPECT_EQ(memfmt_model_load(Ctx, Dir.path().c_str(), nullptr, nullptr),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  memfmt_model_destroy(nullptr);
}

} // namespace
