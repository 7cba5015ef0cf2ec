//===- ParametersTest.cpp - Reading and writing a model's parameters ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt_model_parameter_info / read_parameter / write_parameter on models
// compiled in the test by memfmt-compile from test/Tools/memfmt-compile/
// Inputs/tiny.mlir (conv, batch norm, relu, pool, linear): channels-last and
// contiguous builds with the batch norm folded at load (memfmt_prepare, whose
// result overwrites the convolution weight's slot), a build without load-time
// ops (--fusion=false) and a bf16 build. Reads give the weight source's
// logical values (never the folded ones), writes round-trip, and writing
// every parameter makes the model compute what the same model loaded with
// those weights computes. Skipped where memfmt-compile is not built
// (-DMEMFMT_RUNTIME_ONLY=ON).
//
//===----------------------------------------------------------------------===//

#include "LoaderTestUtil.h"

#include "memfmt/runtime/io/SafeTensors.h"
#include "memfmt/runtime/loader/Manifest.h"
#include "memfmt/runtime/loader/Weights.h"
#include "memfmt/runtime/model.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

using namespace memfmt::loader;
using namespace memfmt::loader::test;
using ::testing::HasSubstr;
namespace io = memfmt::io;

namespace {

/// The builds of tiny.mlir the tests run on: the batch norm folded at load
/// (into the convolution weight's slot) in both formats, no load-time
/// folding, and bf16 parameters.
const char *const AllBuilds[] = {"--memory-format channels-last",
                                 "--memory-format contiguous", "--fusion=false",
                                 "--precision bf16"};

/// The seven parameters of tiny.mlir and their shapes.
const std::map<std::string, std::vector<int64_t>> TinyParameters = {
    {"conv.weight", {8, 3, 3, 3}},
    {"bn.weight", {8}},
    {"bn.bias", {8}},
    {"bn.running_mean", {8}},
    {"bn.running_var", {8}},
    {"fc.weight", {10, 8}},
    {"fc.bias", {10}}};

/// Compiles tiny.mlir into a fresh directory with \p Flags.
class CompiledTiny {
public:
  explicit CompiledTiny(const std::string &Flags) {
#ifdef MEMFMT_COMPILE_PATH
    Dir = Tmp.file("tiny");
    std::string Command = std::string(MEMFMT_COMPILE_PATH) + " " +
                          MEMFMT_TINY_MLIR_PATH + " " + Flags + " -o " + Dir +
                          " > " + Tmp.file("log") + " 2>&1";
    Compiled = std::system(Command.c_str()) == 0;
#endif
  }
  bool ok() const { return Compiled; }
  const std::string &path() const { return Dir; }
  std::string file(const std::string &Name) const { return Tmp.file(Name); }

private:
  TempDir Tmp;
  std::string Dir;
  bool Compiled = false;
};

#ifdef MEMFMT_COMPILE_PATH
#define REQUIRE_COMPILER()
#else
#define REQUIRE_COMPILER() GTEST_SKIP() << "memfmt-compile is not built"
#endif

memfmt_context_t *makeContext() {
  memfmt_context_options_t Options;
  memfmt_context_options_init(&Options);
  Options.num_threads = 1;
  memfmt_context_t *Ctx = nullptr;
  EXPECT_EQ(memfmt_context_create(&Options, &Ctx), MEMFMT_STATUS_OK);
  return Ctx;
}

/// A context and a model loaded into it, destroyed together.
struct Loaded {
  memfmt_context_t *Ctx = makeContext();
  memfmt_model_t *Model = nullptr;
  Loaded(const std::string &Dir, const char *Weights = nullptr) {
    EXPECT_EQ(memfmt_model_load(Ctx, Dir.c_str(), Weights, &Model),
              MEMFMT_STATUS_OK)
        << memfmt_context_last_error(Ctx);
  }
  ~Loaded() {
    memfmt_model_destroy(Model);
    memfmt_context_destroy(Ctx);
  }

  std::vector<float> read(const std::string &Name, int64_t Elements) {
    std::vector<float> V(static_cast<size_t>(Elements), -7.0f);
    EXPECT_EQ(
        memfmt_model_read_parameter(Model, Name.c_str(), V.data(), Elements),
        MEMFMT_STATUS_OK)
        << memfmt_context_last_error(Ctx);
    return V;
  }

  void write(const std::string &Name, const std::vector<float> &V) {
    EXPECT_EQ(memfmt_model_write_parameter(Model, Name.c_str(), V.data(),
                                           static_cast<int64_t>(V.size())),
              MEMFMT_STATUS_OK)
        << memfmt_context_last_error(Ctx);
  }

  /// The logits for a fixed input.
  std::vector<float> run() {
    std::vector<float> In(2 * 3 * 8 * 8), Out(2 * 10, 0.0f);
    for (size_t I = 0; I < In.size(); ++I)
      In[I] = std::sin(0.37f * static_cast<float>(I));
    const float *Inputs[] = {In.data()};
    float *Outputs[] = {Out.data()};
    EXPECT_EQ(
        memfmt_model_run_logical(Model, Inputs, nullptr, Outputs, nullptr),
        MEMFMT_STATUS_OK)
        << memfmt_context_last_error(Ctx);
    return Out;
  }
};

int64_t count(const std::vector<int64_t> &Shape) {
  int64_t N = 1;
  for (int64_t D : Shape)
    N *= D;
  return N;
}

/// Values exactly representable in bf16 (8 significant bits), distinct per
/// element and per \p Salt, positive for running variances.
std::vector<float> pattern(int64_t Elements, int Salt) {
  std::vector<float> V(static_cast<size_t>(Elements));
  for (int64_t I = 0; I < Elements; ++I)
    V[static_cast<size_t>(I)] =
        static_cast<float>((I * 7 + Salt * 13) % 61 + 1) / 64.0f;
  return V;
}

/// One pattern() per parameter of TinyParameters, in its order.
std::vector<std::vector<float>> patterns() {
  std::vector<std::vector<float>> Values;
  int Salt = 0;
  for (const auto &[Name, Shape] : TinyParameters)
    Values.push_back(pattern(count(Shape), ++Salt));
  return Values;
}

/// Writes \p Values (in TinyParameters' order) as a .safetensors file.
void writeWeights(const std::string &Path,
                  const std::vector<std::vector<float>> &Values) {
  std::vector<io::TensorView> Views;
  size_t I = 0;
  for (const auto &[Name, Shape] : TinyParameters) {
    io::TensorView V;
    V.Name = Name;
    V.Shape = Shape;
    V.Data = reinterpret_cast<const uint8_t *>(Values[I].data());
    V.NumBytes = Values[I].size() * sizeof(float);
    Views.push_back(V);
    ++I;
  }
  io::Status Written = io::writeSafeTensors(Path, Views);
  ASSERT_TRUE(Written) << Written.error();
}

float maxAbs(const std::vector<float> &A) {
  float M = 0.0f;
  for (float V : A)
    M = std::max(M, std::fabs(V));
  return M;
}

float maxDiff(const std::vector<float> &A, const std::vector<float> &B) {
  float M = 0.0f;
  for (size_t I = 0; I < A.size() && I < B.size(); ++I)
    M = std::max(M, std::fabs(A[I] - B[I]));
  return A.size() == B.size() ? M : INFINITY;
}

// Every build lists the seven parameters with their shapes and the strides
// the compiler chose, and reads give the synthetic:0 values of the weight
// source — the logical values, also for the convolution weight whose slot
// holds the folded weight after memfmt_prepare.
TEST(Parameters, InfoAndReadGiveTheSourceValues) {
  REQUIRE_COMPILER();
  for (const char *Flags : AllBuilds) {
    SCOPED_TRACE(Flags);
    CompiledTiny Tiny(Flags);
    ASSERT_TRUE(Tiny.ok()) << "memfmt-compile failed, see " << Tiny.file("log");
    io::Result<Manifest> M = readManifest(Tiny.path());
    ASSERT_TRUE(M) << M.error();
    Loaded L(Tiny.path());
    memfmt_model_info_t Info;
    ASSERT_EQ(memfmt_model_get_info(L.Model, &Info), MEMFMT_STATUS_OK);
    ASSERT_EQ(Info.num_parameters, 7);
    for (int64_t I = 0; I < Info.num_parameters; ++I) {
      memfmt_model_tensor_info_t P;
      ASSERT_EQ(memfmt_model_parameter_info(L.Model, I, &P), MEMFMT_STATUS_OK);
      ASSERT_TRUE(TinyParameters.count(P.name)) << P.name;
      std::vector<int64_t> Shape(P.shape, P.shape + P.rank);
      EXPECT_EQ(Shape, TinyParameters.at(P.name)) << P.name;
      EXPECT_EQ(P.num_elements, count(Shape));
      EXPECT_EQ(P.zero_init, 0);
      const TensorSpec &T = M->Parameters[static_cast<size_t>(I)];
      EXPECT_EQ(std::vector<int64_t>(P.strides, P.strides + P.rank), T.Strides);
      EXPECT_STREQ(P.dtype, toString(T.Type));
      // What the loader put in the blob before memfmt_prepare, i.e. the
      // synthetic values rounded to the parameter's element type.
      std::vector<float> Expected(static_cast<size_t>(P.num_elements));
      {
        std::vector<uint8_t> Blob(static_cast<size_t>(M->WeightsBytes));
        fillSynthetic(*M, 0, Blob.data());
        gatherToRowMajor(Blob.data() + T.Offset, T, Expected.data());
      }
      EXPECT_EQ(L.read(P.name, P.num_elements), Expected) << P.name;
    }
    memfmt_model_tensor_info_t P;
    EXPECT_EQ(memfmt_model_parameter_info(L.Model, 7, &P),
              MEMFMT_STATUS_NOT_FOUND);
    EXPECT_EQ(memfmt_model_parameter_info(L.Model, -1, &P),
              MEMFMT_STATUS_NOT_FOUND);
  }
}

// A write is read back exactly (the values are bf16-representable, so the
// bf16 build rounds nothing) in every build, and changes the output.
TEST(Parameters, WriteThenReadRoundTrips) {
  REQUIRE_COMPILER();
  for (const char *Flags : AllBuilds) {
    SCOPED_TRACE(Flags);
    CompiledTiny Tiny(Flags);
    ASSERT_TRUE(Tiny.ok()) << "memfmt-compile failed, see " << Tiny.file("log");
    Loaded L(Tiny.path());
    std::vector<float> Before = L.run();
    int Salt = 0;
    for (const auto &[Name, Shape] : TinyParameters)
      L.write(Name, pattern(count(Shape), ++Salt));
    Salt = 0;
    for (const auto &[Name, Shape] : TinyParameters)
      EXPECT_EQ(L.read(Name, count(Shape)), pattern(count(Shape), ++Salt))
          << Name;
    EXPECT_NE(L.run(), Before);
  }
}

// Writing every parameter gives the output of the same model loaded with
// those values as its weights (what a recompile with --weights gives: the
// compiled code does not depend on the values). Same kernels, same blob
// after memfmt_prepare, one thread: the results agree to f32 rounding of a
// different packing at most (1e-5 relative to the largest logit).
TEST(Parameters, WriteMatchesLoadingTheWeights) {
  REQUIRE_COMPILER();
  for (const char *Flags : {"--memory-format channels-last",
                            "--memory-format contiguous", "--fusion=false"}) {
    SCOPED_TRACE(Flags);
    CompiledTiny Tiny(Flags);
    ASSERT_TRUE(Tiny.ok()) << "memfmt-compile failed, see " << Tiny.file("log");
    std::vector<std::vector<float>> Values = patterns();
    std::string Weights = Tiny.file("w.safetensors");
    writeWeights(Weights, Values);

    Loaded Reference(Tiny.path(), Weights.c_str());
    std::vector<float> Expected = Reference.run();

    Loaded L(Tiny.path());
    std::vector<float> Before = L.run();
    size_t I = 0;
    for (const auto &[Name, Shape] : TinyParameters)
      L.write(Name, Values[I++]);
    std::vector<float> Got = L.run();
    float Max = maxAbs(Expected);
    EXPECT_LE(maxDiff(Got, Expected), 1e-5f * Max);
    // The test could fail: the weights written do change the logits.
    EXPECT_GT(maxDiff(Before, Expected), 1e-3f * Max);
  }
}

// A convolution weight of zeros is a fixed point of the batch-norm fold, so
// loading cannot see that memfmt_prepare overwrites its slot; once a write
// gives it other values, the fold before the next run does, and from then
// on the parameter is read from its own values: the output is the one of
// loading those weights, and a read gives the written values, not folded
// ones.
TEST(Parameters, FoldedWeightThatStartsAsZeros) {
  REQUIRE_COMPILER();
  CompiledTiny Tiny("--memory-format channels-last");
  ASSERT_TRUE(Tiny.ok()) << "memfmt-compile failed, see " << Tiny.file("log");
  std::vector<std::vector<float>> Values = patterns();
  std::string Weights = Tiny.file("w.safetensors");
  writeWeights(Weights, Values);
  // TinyParameters is ordered by name: conv.weight is entry 4.
  ASSERT_EQ(std::next(TinyParameters.begin(), 4)->first, "conv.weight");
  std::vector<std::vector<float>> Zeroed = Values;
  std::fill(Zeroed[4].begin(), Zeroed[4].end(), 0.0f);
  std::string ZeroWeights = Tiny.file("zero.safetensors");
  writeWeights(ZeroWeights, Zeroed);

  Loaded Reference(Tiny.path(), Weights.c_str());
  std::vector<float> Expected = Reference.run();
  Loaded L(Tiny.path(), ZeroWeights.c_str());
  std::vector<float> Before = L.run();
  L.write("conv.weight", Values[4]);
  std::vector<float> Got = L.run();
  float Max = maxAbs(Expected);
  EXPECT_LE(maxDiff(Got, Expected), 1e-5f * Max);
  EXPECT_GT(maxDiff(Before, Expected), 1e-3f * Max);
  EXPECT_EQ(L.read("conv.weight", 216), Values[4]);
  // Another write (bn.bias, entry 0, to the same values) folds again from
  // the written convolution weight, not from the folded one.
  L.write("bn.bias", Values[0]);
  EXPECT_LE(maxDiff(L.run(), Expected), 1e-5f * Max);
}

// Unknown names, wrong element counts and null arguments fail with a status
// and a message naming the parameter.
TEST(Parameters, Errors) {
  REQUIRE_COMPILER();
  CompiledTiny Tiny("");
  ASSERT_TRUE(Tiny.ok()) << "memfmt-compile failed, see " << Tiny.file("log");
  Loaded L(Tiny.path());
  std::vector<float> V(216);
  EXPECT_EQ(memfmt_model_read_parameter(L.Model, "conv.bias", V.data(), 8),
            MEMFMT_STATUS_NOT_FOUND);
  EXPECT_THAT(memfmt_context_last_error(L.Ctx),
              HasSubstr("memfmt_model_read_parameter (tiny): the model has no "
                        "parameter 'conv.bias'"));
  EXPECT_EQ(memfmt_model_write_parameter(L.Model, "conv.weight", V.data(), 215),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(memfmt_context_last_error(L.Ctx),
              HasSubstr("parameter 'conv.weight' has shape [8,3,3,3] = 216 "
                        "elements, not 215"));
  EXPECT_EQ(memfmt_model_read_parameter(L.Model, nullptr, V.data(), 8),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(memfmt_model_write_parameter(L.Model, "fc.bias", nullptr, 10),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(memfmt_model_read_parameter(nullptr, "fc.bias", V.data(), 10),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  memfmt_model_tensor_info_t P;
  EXPECT_EQ(memfmt_model_parameter_info(L.Model, 0, nullptr),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(memfmt_model_parameter_info(nullptr, 0, &P),
            MEMFMT_STATUS_INVALID_ARGUMENT);
}

} // namespace

//===----------------------------------------------------------------------===//
// A training step (FakeTrainModel.c) updates its state in place
//===----------------------------------------------------------------------===//

namespace {

/// The manifest of FakeTrainModel.c's training step (see its comment).
std::string fakeTrainManifest() {
  return R"json({
  "format_version": 2, "model": "fake_train", "target": "cpu",
  "precision": "f32", "memory_format": "contiguous",
  "input_format": "contiguous", "library": "model.so",
  "entry": "memfmt_forward_packed", "arena_bytes": 64,
  "peak_live_bytes": 64, "weights_bytes": 448,
  "weights_source": "synthetic:3",
  "parameters": [
    {"name": "fc.weight", "dtype": "f32", "shape": [3, 8],
     "strides": [8, 1], "offset": 0, "bytes": 96, "updated": true},
    {"name": "fc.bias", "dtype": "f32", "shape": [3], "strides": [1],
     "offset": 128, "bytes": 12, "updated": true},
    {"name": "bn.running_mean", "dtype": "f32", "shape": [2],
     "strides": [1], "offset": 192, "bytes": 8, "updated": true},
    {"name": "fc.weight.momentum_buffer", "dtype": "f32", "shape": [3, 8],
     "strides": [8, 1], "offset": 256, "bytes": 96, "init": "zeros",
     "updated": true},
    {"name": "fc.bias.momentum_buffer", "dtype": "f32", "shape": [3],
     "strides": [1], "offset": 384, "bytes": 12, "init": "zeros",
     "updated": true}
  ],
  "inputs": [
    {"name": "x", "dtype": "f32", "shape": [4, 2, 2, 2],
     "strides": [8, 4, 2, 1]},
    {"name": "y", "dtype": "i64", "shape": [4], "strides": [1]}
  ],
  "outputs": [{"name": "loss", "dtype": "f32", "shape": [], "strides": []}],
  "nodes": ["memfmt.cross_entropy_loss at loc(\"fake.mlir\":1:1)"]
})json";
}

} // namespace

// Loading does not let the warm-up run take a step (the parameters are the
// weight source's, the momentum buffers zeros), reads after a run see the
// run's in-place update (SGD with momentum 0.9, lr 0.1: buf = grad, param -=
// 0.1 buf on the first step), and a write is what the next step starts from.
TEST(Parameters, TrainingStepStateIsReadAndWritten) {
  TempDir Dir;
  std::filesystem::copy_file(MEMFMT_FAKE_TRAIN_MODEL_PATH,
                             Dir.file("model.so"));
  writeText(Dir.file("manifest.json"), fakeTrainManifest());
  io::Result<Manifest> M = readManifest(Dir.path());
  ASSERT_TRUE(M) << M.error();
  Loaded L(Dir.path());
  ASSERT_TRUE(L.Model);
  memfmt_model_tensor_info_t P;
  ASSERT_EQ(memfmt_model_parameter_info(L.Model, 3, &P), MEMFMT_STATUS_OK);
  EXPECT_STREQ(P.name, "fc.weight.momentum_buffer");
  EXPECT_EQ(P.zero_init, 1);
  ASSERT_EQ(memfmt_model_parameter_info(L.Model, 1, &P), MEMFMT_STATUS_OK);
  EXPECT_EQ(P.zero_init, 0);

  std::vector<float> Bias = L.read("fc.bias", 3);
  EXPECT_EQ(Bias, syntheticValues(*M, 1, 3));
  EXPECT_EQ(L.read("fc.bias.momentum_buffer", 3), std::vector<float>(3, 0.0f));

  std::vector<float> X(32);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = std::cos(0.5f * static_cast<float>(I));
  std::vector<int64_t> Y = {0, 2, 1, 2};
  float Loss = 0.0f;
  auto Step = [&] {
    const void *Inputs[] = {X.data(), Y.data()};
    void *Outputs[] = {&Loss};
    ASSERT_EQ(memfmt_model_run(L.Model, Inputs, Outputs), MEMFMT_STATUS_OK)
        << memfmt_context_last_error(L.Ctx);
  };
  Step();
  std::vector<float> Buf = L.read("fc.bias.momentum_buffer", 3);
  std::vector<float> After = L.read("fc.bias", 3);
  float Changed = 0.0f;
  for (size_t K = 0; K < 3; ++K) {
    // f32 rounding of one multiply-subtract.
    EXPECT_NEAR(After[K], Bias[K] - 0.1f * Buf[K], 1e-6f);
    Changed = std::max(Changed, std::fabs(Buf[K]));
  }
  EXPECT_GT(Changed, 1e-3f);

  // Written values are where the next step starts: zero momentum and bias
  // give the same update as the first step from a zero bias.
  L.write("fc.bias", {0.0f, 0.0f, 0.0f});
  L.write("fc.bias.momentum_buffer", {0.0f, 0.0f, 0.0f});
  std::vector<float> W = L.read("fc.weight", 24);
  Step();
  std::vector<float> Buf2 = L.read("fc.bias.momentum_buffer", 3);
  std::vector<float> After2 = L.read("fc.bias", 3);
  for (size_t K = 0; K < 3; ++K)
    EXPECT_NEAR(After2[K], -0.1f * Buf2[K], 1e-6f);
  EXPECT_NE(L.read("fc.weight", 24), W);
}
