//===- ManifestTest.cpp - Tests of manifest.json reading and writing ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The manifest reader accepts the fake model's manifest and reads every
// field; each way a manifest can be wrong gives an error naming the file and
// the field. Weight-source strings are parsed here too. The writer's output
// reads back as the manifest it was given (encode, parse, compare), in the
// layout memfmt-compile has always written.
//
//===----------------------------------------------------------------------===//

#include "LoaderTestUtil.h"

#include "memfmt/runtime/loader/Manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

using namespace memfmt::loader;
using namespace memfmt::loader::test;
using ::testing::HasSubstr;

namespace {

const char *const ManifestPath = "/models/fake/manifest.json";

/// The error of parsing the fake manifest with \p From replaced by \p To.
std::string errorWith(const std::string &From, const std::string &To) {
  auto M =
      parseManifest(replaceOnce(fakeManifestJson(), From, To), ManifestPath);
  EXPECT_FALSE(M.ok()) << "accepted a manifest with " << To;
  return M.ok() ? "" : M.error();
}

// The fake manifest parses, with every field read.
TEST(Manifest, ReadsEveryField) {
  auto M = parseManifest(fakeManifestJson(), ManifestPath);
  ASSERT_TRUE(M.ok()) << M.error();
  EXPECT_EQ(M->Dir, "/models/fake");
  EXPECT_EQ(M->Model, "fake");
  EXPECT_EQ(M->Target, "cpu");
  EXPECT_EQ(M->Precision, "f32");
  EXPECT_EQ(M->MemoryFormat, "channels-last");
  EXPECT_EQ(M->InputFormat, "channels-last");
  EXPECT_EQ(M->LibraryPath, "/models/fake/model.so");
  EXPECT_EQ(M->Entry, "memfmt_forward_packed");
  EXPECT_EQ(M->ArenaBytes, 480);
  EXPECT_EQ(M->PeakLiveBytes, 480);
  EXPECT_EQ(M->WeightsBytes, 128);
  EXPECT_EQ(M->Weights.K, WeightsSource::Kind::Synthetic);
  EXPECT_EQ(M->Weights.Seed, 0u);
  ASSERT_EQ(M->Parameters.size(), 1u);
  EXPECT_EQ(M->Parameters[0].Name, "shift");
  EXPECT_EQ(M->Parameters[0].Offset, 64);
  EXPECT_EQ(M->Parameters[0].Bytes, 12);
  ASSERT_EQ(M->Inputs.size(), 1u);
  EXPECT_EQ(M->Inputs[0].Strides, (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_EQ(M->Inputs[0].Bytes, 480);
  EXPECT_EQ(M->Outputs[0].extentBytes(), 480);
  ASSERT_EQ(M->Nodes.size(), 2u);
  EXPECT_EQ(M->Nodes[1], "memfmt.add at loc(\"fake.mlir\":2:1)");
  EXPECT_EQ(M->findParameter("shift"), &M->Parameters[0]);
  EXPECT_EQ(M->findParameter("nope"), nullptr);
}

// peak_live_bytes is the one optional field; it defaults to arena_bytes.
TEST(Manifest, PeakLiveBytesIsOptional) {
  auto M = parseManifest(
      replaceOnce(fakeManifestJson(), "\"peak_live_bytes\": 480,", ""),
      ManifestPath);
  ASSERT_TRUE(M.ok()) << M.error();
  EXPECT_EQ(M->PeakLiveBytes, 480);
}

// A safetensors source relative to the manifest resolves against its
// directory; an absolute one stays.
TEST(Manifest, SafetensorsSourcePaths) {
  auto M = parseManifest(replaceOnce(fakeManifestJson(), "\"synthetic:0\"",
                                     "\"safetensors:w.safetensors\""),
                         ManifestPath);
  ASSERT_TRUE(M.ok()) << M.error();
  EXPECT_EQ(M->Weights.K, WeightsSource::Kind::SafeTensors);
  EXPECT_EQ(M->Weights.Path, "/models/fake/w.safetensors");
  M = parseManifest(replaceOnce(fakeManifestJson(), "\"synthetic:0\"",
                                "\"safetensors:/w/r.safetensors\""),
                    ManifestPath);
  ASSERT_TRUE(M.ok()) << M.error();
  EXPECT_EQ(M->Weights.Path, "/w/r.safetensors");
}

// Syntax errors and non-object documents.
TEST(Manifest, NotJson) {
  auto M = parseManifest("{\"format_version\": 2,}", ManifestPath);
  ASSERT_FALSE(M.ok());
  EXPECT_THAT(M.error(),
              HasSubstr(std::string(ManifestPath) +
                        ": not valid JSON: at byte 21: syntax error while "
                        "parsing object key - unexpected '}'"));
  M = parseManifest("[1]", ManifestPath);
  ASSERT_FALSE(M.ok());
  EXPECT_THAT(M.error(), HasSubstr("expected a JSON object, got an array"));
}

// A different format version is reported before anything else: a model
// compiled before the entry took its buffers as one array (version 1) must
// be recompiled, not called with the wrong arguments.
TEST(Manifest, FormatVersion) {
  EXPECT_THAT(errorWith("\"format_version\": 2", "\"format_version\": 1"),
              HasSubstr("'format_version' is 1; this loader reads 2 "
                        "(recompile the model with a matching "
                        "memfmt-compile)"));
  EXPECT_THAT(errorWith("\"format_version\": 2", "\"format_version\": 3"),
              HasSubstr("'format_version' is 3; this loader reads 2"));
  EXPECT_THAT(errorWith("\"format_version\": 2", "\"format_version\": \"1\""),
              HasSubstr("'format_version': expected an integer"));
  EXPECT_THAT(errorWith("\"format_version\": 2,", ""),
              HasSubstr("missing field 'format_version'"));
}

// Missing, unknown and duplicate fields.
TEST(Manifest, MissingUnknownDuplicateFields) {
  std::string Error = errorWith("\"entry\": \"memfmt_forward_packed\",", "");
  EXPECT_THAT(Error, HasSubstr(ManifestPath));
  EXPECT_THAT(Error, HasSubstr("missing field 'entry'"));
  EXPECT_THAT(
      errorWith("\"arena_bytes\": 480,", "\"arena_bytes\": 480, \"arena\": 1,"),
      HasSubstr("unknown field 'arena'"));
  EXPECT_THAT(errorWith("\"arena_bytes\": 480,",
                        "\"arena_bytes\": 480, \"arena_bytes\": 480,"),
              HasSubstr("duplicate field 'arena_bytes'"));
  EXPECT_THAT(errorWith("\"offset\": 64,", "\"offset\": 64, \"align\": 64,"),
              HasSubstr("parameters[0]: unknown field 'align'"));
  EXPECT_THAT(errorWith("\"strides\": [60, 1, 15, 3]", "\"stride\": [1]"),
              HasSubstr("inputs[0]: unknown field 'stride'"));
}

// Types and values of scalar fields.
TEST(Manifest, ScalarFields) {
  EXPECT_THAT(errorWith("\"arena_bytes\": 480", "\"arena_bytes\": \"480\""),
              HasSubstr("'arena_bytes': expected a non-negative integer, got "
                        "the string \"480\""));
  EXPECT_THAT(errorWith("\"weights_bytes\": 128", "\"weights_bytes\": -1"),
              HasSubstr("'weights_bytes': expected a non-negative integer"));
  EXPECT_THAT(errorWith("\"arena_bytes\": 480", "\"arena_bytes\": 1.5"),
              HasSubstr("got 1.5"));
  EXPECT_THAT(errorWith("\"target\": \"cpu\"", "\"target\": \"tpu\""),
              HasSubstr("'target': 'tpu' is not one of cpu, cuda"));
  EXPECT_THAT(errorWith("\"precision\": \"f32\"", "\"precision\": \"f64\""),
              HasSubstr("'precision': 'f64' is not one of f32, f16, bf16"));
  EXPECT_THAT(errorWith("\"memory_format\": \"channels-last\"",
                        "\"memory_format\": \"channels_last\""),
              HasSubstr("'memory_format': 'channels_last' is not one of"));
  EXPECT_THAT(errorWith("\"model\": \"fake\"", "\"model\": \"\""),
              HasSubstr("'model': must not be empty"));
  EXPECT_THAT(errorWith("\"model\": \"fake\"", "\"model\": 3"),
              HasSubstr("'model': expected a string, got 3"));
  EXPECT_THAT(errorWith("\"memfmt_forward_packed\"", "\"forward()\""),
              HasSubstr("'entry': 'forward()' is not a C identifier"));
  EXPECT_THAT(errorWith("\"peak_live_bytes\": 480", "\"peak_live_bytes\": 481"),
              HasSubstr("'peak_live_bytes' (481) is more than 'arena_bytes' "
                        "(480)"));
  EXPECT_THAT(errorWith("\"synthetic:0\"", "\"random:0\""),
              HasSubstr("'weights_source': unknown weights source 'random:0'"));
  EXPECT_THAT(errorWith("\"synthetic:0\"", "\"synthetic:x\""),
              HasSubstr("the seed must be a decimal integer"));
  EXPECT_THAT(errorWith("\"nodes\": [", "\"nodes\": [1, "),
              HasSubstr("'nodes': element 0 must be a string, got 1"));
}

// Tensor entries: names, dtypes, shapes and strides.
TEST(Manifest, TensorFields) {
  EXPECT_THAT(errorWith("\"dtype\": \"f32\", \"shape\": [1, 3, 1, 1]",
                        "\"dtype\": \"i8\", \"shape\": [1, 3, 1, 1]"),
              HasSubstr("parameters[0] (shift): 'dtype': 'i8' is not one of "
                        "f32, f16, bf16"));
  EXPECT_THAT(
      errorWith("\"strides\": [60, 1, 15, 3]", "\"strides\": [1, 15, 3]"),
      HasSubstr("inputs[0] (input_0): 'strides' [1,15,3] has 3 "
                "entries, 'shape' [2,3,4,5] has 4"));
  EXPECT_THAT(errorWith("\"shape\": [1, 3, 1, 1]", "\"shape\": [1, -3, 1, 1]"),
              HasSubstr("parameters[0] (shift): 'shape': element 1 must be a "
                        "non-negative integer, got -3"));
  EXPECT_THAT(
      errorWith("\"strides\": [60, 20, 5, 1]", "\"strides\": [60, 20, 5, 0]"),
      HasSubstr("outputs[0] (output_0): strides [60,20,5,0] map two "
                "elements of shape [2,3,4,5] to the same address"));
  EXPECT_THAT(
      errorWith("\"strides\": [60, 20, 5, 1]", "\"strides\": [60, 20, 4, 1]"),
      HasSubstr("map two elements"));
  EXPECT_THAT(errorWith("\"shape\": [2, 3, 4, 5],\n     \"strides\": [60, 1",
                        "\"shape\": [2, 3, 4, 5, 1, 1, 1, 1, 1],\n     "
                        "\"strides\": [60, 1"),
              HasSubstr("rank 9 is above the largest supported rank 8"));
  // Inputs and outputs are separate lists: the same name in both is fine.
  EXPECT_TRUE(
      parseManifest(replaceOnce(fakeManifestJson(), "{\"name\": \"output_0\"",
                                "{\"name\": \"input_0\""),
                    ManifestPath)
          .ok());
  EXPECT_THAT(errorWith("\"inputs\": [\n", "\"inputs\": [ 7, \n"),
              HasSubstr("inputs[0]: expected an object, got 7"));
}

// Inputs and outputs must not be empty; names are unique in each list.
TEST(Manifest, TensorLists) {
  std::string Input =
      R"({"name": "input_0", "dtype": "f32", "shape": [2, 3, 4, 5],
     "strides": [60, 1, 15, 3]})";
  auto M = parseManifest(
      replaceOnce(fakeManifestJson(), Input, Input + ", " + Input),
      ManifestPath);
  ASSERT_FALSE(M.ok());
  EXPECT_THAT(M.error(),
              HasSubstr("inputs[1]: duplicate name 'input_0' in 'inputs'"));
  // A model without inputs (an ONNX graph of constants) is valid.
  M = parseManifest(replaceOnce(fakeManifestJson(), Input, ""), ManifestPath);
  ASSERT_TRUE(M.ok()) << M.error();
  EXPECT_TRUE(M->Inputs.empty());
}

// Parameters lie inside the blob, cover their extent and do not overlap.
TEST(Manifest, ParameterPlacement) {
  EXPECT_THAT(errorWith("\"weights_bytes\": 128", "\"weights_bytes\": 70"),
              HasSubstr("parameters[0] (shift): bytes [64, 76) end past "
                        "'weights_bytes' (70)"));
  EXPECT_THAT(errorWith("\"bytes\": 12", "\"bytes\": 8"),
              HasSubstr("parameters[0] (shift): 'bytes': 8 is less than the "
                        "12 bytes that shape [1,3,1,1] with strides [3,1,1,1] "
                        "spans"));
  EXPECT_THAT(errorWith("\"offset\": 64", "\"offset\": 66"),
              HasSubstr("'offset': 66 is not a multiple of the element size "
                        "4"));
  std::string Shift =
      R"({"name": "shift", "dtype": "f32", "shape": [1, 3, 1, 1],
     "strides": [3, 1, 1, 1], "offset": 64, "bytes": 12})";
  std::string Other = R"({"name": "scale", "dtype": "f32", "shape": [3],
     "strides": [1], "offset": 72, "bytes": 12})";
  auto M = parseManifest(
      replaceOnce(fakeManifestJson(), Shift, Shift + ", " + Other),
      ManifestPath);
  ASSERT_FALSE(M.ok());
  EXPECT_THAT(M.error(), HasSubstr("parameters 'shift' (bytes [64, 76)) and "
                                   "'scale' (bytes [72, 84)) overlap"));
  M = parseManifest(
      replaceOnce(fakeManifestJson(), Shift, Shift + ", " + Shift),
      ManifestPath);
  ASSERT_FALSE(M.ok());
  EXPECT_THAT(M.error(), HasSubstr("duplicate name 'shift'"));
}

// readManifest says what is wrong with the directory.
TEST(Manifest, ReadFromDirectory) {
  TempDir Dir;
  auto M = readManifest(Dir.file("missing"));
  ASSERT_FALSE(M.ok());
  EXPECT_THAT(M.error(),
              HasSubstr(Dir.file("missing") + ": No such file or directory"));
  writeText(Dir.file("file"), "x");
  M = readManifest(Dir.file("file"));
  ASSERT_FALSE(M.ok());
  EXPECT_THAT(M.error(), HasSubstr("not a directory"));
  M = readManifest(Dir.path() + "/");
  ASSERT_FALSE(M.ok());
  EXPECT_THAT(M.error(),
              HasSubstr(Dir.file("manifest.json") + ": cannot open"));
  writeText(Dir.file("manifest.json"), fakeManifestJson());
  M = readManifest(Dir.path());
  ASSERT_TRUE(M.ok()) << M.error();
  EXPECT_EQ(M->LibraryPath, Dir.file("model.so"));
}

// Weight-source strings, as in manifests and as overrides.
TEST(Manifest, WeightsSources) {
  auto S = parseWeightsSource("synthetic", "", false);
  ASSERT_TRUE(S.ok());
  EXPECT_EQ(S->str(), "synthetic:0");
  S = parseWeightsSource("synthetic:18446744073709551615", "", false);
  ASSERT_TRUE(S.ok());
  EXPECT_EQ(S->Seed, 18446744073709551615ull);
  EXPECT_FALSE(
      parseWeightsSource("synthetic:18446744073709551616", "", false).ok());
  EXPECT_FALSE(parseWeightsSource("synthetic:-1", "", false).ok());
  S = parseWeightsSource("safetensors:a/b.safetensors", "/d", false);
  ASSERT_TRUE(S.ok());
  EXPECT_EQ(S->Path, "/d/a/b.safetensors");
  EXPECT_EQ(S->str(), "safetensors:/d/a/b.safetensors");
  S = parseWeightsSource("w.safetensors", "", true);
  ASSERT_TRUE(S.ok());
  EXPECT_EQ(S->K, WeightsSource::Kind::SafeTensors);
  EXPECT_EQ(S->Path, "w.safetensors");
  S = parseWeightsSource("w.safetensors", "", false);
  ASSERT_FALSE(S.ok());
  EXPECT_THAT(S.error(), HasSubstr("expected synthetic:SEED or "
                                   "safetensors:PATH"));
  S = parseWeightsSource("w.bin", "", true);
  ASSERT_FALSE(S.ok());
  EXPECT_THAT(S.error(), HasSubstr("or a .safetensors file"));
  EXPECT_FALSE(parseWeightsSource("safetensors:", "", true).ok());
}

//===----------------------------------------------------------------------===//
// The writer
//===----------------------------------------------------------------------===//

TensorSpec makeTensor(std::string Name, ElementType Type,
                      std::vector<int64_t> Shape, std::vector<int64_t> Strides,
                      int64_t Offset, int64_t Bytes) {
  TensorSpec T;
  T.Name = std::move(Name);
  T.Type = Type;
  T.Shape = std::move(Shape);
  T.Strides = std::move(Strides);
  T.Offset = Offset;
  T.Bytes = Bytes;
  return T;
}

void expectSameTensors(const std::vector<TensorSpec> &Got,
                       const std::vector<TensorSpec> &Want) {
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Got.size(); ++I) {
    SCOPED_TRACE(Want[I].Name);
    EXPECT_EQ(Got[I].Name, Want[I].Name);
    EXPECT_EQ(Got[I].Type, Want[I].Type);
    EXPECT_EQ(Got[I].Shape, Want[I].Shape);
    EXPECT_EQ(Got[I].Strides, Want[I].Strides);
    EXPECT_EQ(Got[I].Offset, Want[I].Offset);
    EXPECT_EQ(Got[I].Bytes, Want[I].Bytes);
    EXPECT_EQ(Got[I].ZeroInit, Want[I].ZeroInit);
  }
}

/// Every field the format holds (not Path, Dir or LibraryPath).
void expectSameManifest(const Manifest &Got, const Manifest &Want) {
  EXPECT_EQ(Got.FormatVersion, Want.FormatVersion);
  EXPECT_EQ(Got.Model, Want.Model);
  EXPECT_EQ(Got.Target, Want.Target);
  EXPECT_EQ(Got.Precision, Want.Precision);
  EXPECT_EQ(Got.MemoryFormat, Want.MemoryFormat);
  EXPECT_EQ(Got.InputFormat, Want.InputFormat);
  EXPECT_EQ(Got.Library, Want.Library);
  EXPECT_EQ(Got.Entry, Want.Entry);
  EXPECT_EQ(Got.ArenaBytes, Want.ArenaBytes);
  EXPECT_EQ(Got.PeakLiveBytes, Want.PeakLiveBytes);
  EXPECT_EQ(Got.WeightsBytes, Want.WeightsBytes);
  EXPECT_EQ(Got.Weights.K, Want.Weights.K);
  EXPECT_EQ(Got.Weights.Seed, Want.Weights.Seed);
  EXPECT_EQ(Got.Weights.Path, Want.Weights.Path);
  expectSameTensors(Got.Parameters, Want.Parameters);
  expectSameTensors(Got.Inputs, Want.Inputs);
  expectSameTensors(Got.Outputs, Want.Outputs);
  EXPECT_EQ(Got.Nodes, Want.Nodes);
}

/// A manifest of model \p Model with no tensors, no nodes and an empty
/// memory plan.
Manifest emptyManifest(std::string Model, std::string Target,
                       std::string Precision, std::string MemoryFormat) {
  Manifest M;
  M.Model = std::move(Model);
  M.Target = std::move(Target);
  M.Precision = std::move(Precision);
  M.MemoryFormat = std::move(MemoryFormat);
  M.InputFormat = "contiguous";
  M.Library = "model.so";
  M.Entry = "memfmt_forward_packed";
  return M;
}

/// A manifest with parameters of two element types, two inputs, an output,
/// nodes whose names need escaping and a safetensors source.
Manifest sampleManifest() {
  Manifest M =
      emptyManifest("resnet-\"sample\"", "cuda", "bf16", "channels-last");
  M.ArenaBytes = 4096;
  M.PeakLiveBytes = 3072;
  M.WeightsBytes = 1280;
  M.Weights.K = WeightsSource::Kind::SafeTensors;
  M.Weights.Path = "/data/w eights.safetensors";
  M.Parameters = {
      makeTensor("conv1.weight", ElementType::BF16, {8, 3, 3, 3}, {27, 1, 9, 3},
                 0, 432),
      makeTensor("bn1.bias", ElementType::F32, {8}, {1}, 448, 32),
      makeTensor("fc.weight", ElementType::F16, {10, 8}, {8, 1}, 512, 160)};
  M.Inputs = {makeTensor("input_0", ElementType::F32, {2, 3, 4, 5},
                         {60, 1, 15, 3}, 0, 480),
              makeTensor("input_1", ElementType::F32, {2, 10}, {10, 1}, 0, 80)};
  M.Outputs = {
      makeTensor("output_0", ElementType::BF16, {2, 10}, {10, 1}, 0, 40)};
  M.Nodes = {"memfmt.conv2d at loc(\"conv1\")",
             "memfmt.linear at loc(fused[\"fc\", \"relu\"])\ttab\\"};
  return M;
}

// What the writer writes, the reader reads back unchanged.
TEST(Manifest, WriteThenReadRoundTrips) {
  Manifest Want = sampleManifest();
  std::string Text = encodeManifest(Want);
  auto Got = parseManifest(Text, ManifestPath);
  ASSERT_TRUE(Got.ok()) << Got.error() << "\n" << Text;
  expectSameManifest(*Got, Want);
  EXPECT_EQ(Got->LibraryPath, "/models/fake/model.so");
  // Encoding what was read gives the same text again.
  EXPECT_EQ(encodeManifest(*Got), Text);
}

// The fake manifest (hand-written, in another layout) reads, writes and
// reads back as itself.
TEST(Manifest, FakeManifestRoundTrips) {
  auto Read = parseManifest(fakeManifestJson(), ManifestPath);
  ASSERT_TRUE(Read.ok()) << Read.error();
  auto Again = parseManifest(encodeManifest(*Read), ManifestPath);
  ASSERT_TRUE(Again.ok()) << Again.error();
  expectSameManifest(*Again, *Read);
}

// The layout memfmt-compile writes: keys in the documented order, two
// spaces per level, number lists on one line, empty lists as [], a final
// newline; parameters carry offset and bytes, inputs and outputs do not.
TEST(Manifest, WriterLayout) {
  Manifest M = emptyManifest("tiny", "cpu", "f32", "contiguous");
  M.ArenaBytes = 64;
  M.PeakLiveBytes = 16;
  M.Weights.Seed = 3;
  M.Inputs = {makeTensor("input_0", ElementType::F32, {4}, {1}, 0, 16)};
  M.Outputs = {makeTensor("output_0", ElementType::F32, {}, {}, 0, 4)};
  M.Nodes = {"func.return"};
  EXPECT_EQ(encodeManifest(M), R"json({
  "format_version": 2,
  "model": "tiny",
  "target": "cpu",
  "precision": "f32",
  "memory_format": "contiguous",
  "input_format": "contiguous",
  "library": "model.so",
  "entry": "memfmt_forward_packed",
  "arena_bytes": 64,
  "peak_live_bytes": 16,
  "weights_bytes": 0,
  "weights_source": "synthetic:3",
  "parameters": [],
  "inputs": [
    {
      "name": "input_0",
      "dtype": "f32",
      "shape": [4],
      "strides": [1]
    }
  ],
  "outputs": [
    {
      "name": "output_0",
      "dtype": "f32",
      "shape": [],
      "strides": []
    }
  ],
  "nodes": [
    "func.return"
  ]
}
)json");
  auto Back = parseManifest(encodeManifest(M), ManifestPath);
  ASSERT_TRUE(Back.ok()) << Back.error();
  expectSameManifest(*Back, M);
}

// A training step's manifest: an i64 input (the class indices, 8 bytes an
// element) and a zero-initialised momentum buffer ("init": "zeros", written
// after "bytes" and only where set) round-trip.
TEST(Manifest, TrainingStepTensors) {
  Manifest M = emptyManifest("step", "cpu", "f32", "channels-last");
  M.WeightsBytes = 128;
  M.Parameters = {
      makeTensor("fc.weight", ElementType::F32, {2, 4}, {4, 1}, 0, 32),
      makeTensor("fc.weight.momentum_buffer", ElementType::F32, {2, 4}, {4, 1},
                 64, 32)};
  M.Parameters[1].ZeroInit = true;
  M.Inputs = {makeTensor("input_0", ElementType::F32, {2, 4}, {4, 1}, 0, 32),
              makeTensor("input_1", ElementType::I64, {2}, {1}, 0, 16)};
  M.Outputs = {makeTensor("output_0", ElementType::F32, {}, {}, 0, 4)};
  std::string Text = encodeManifest(M);
  EXPECT_THAT(Text, HasSubstr("\"offset\": 64,\n      \"bytes\": 32,\n      "
                              "\"init\": \"zeros\"\n"));
  EXPECT_EQ(Text.find("\"init\""), Text.rfind("\"init\"")); // Only once.
  EXPECT_THAT(Text, HasSubstr("\"name\": \"input_1\",\n      \"dtype\": "
                              "\"i64\""));
  auto Back = parseManifest(Text, ManifestPath);
  ASSERT_TRUE(Back.ok()) << Back.error();
  expectSameManifest(*Back, M);
  EXPECT_FALSE(Back->Parameters[0].ZeroInit);
  EXPECT_TRUE(Back->Parameters[1].ZeroInit);
  EXPECT_EQ(Back->Inputs[1].Type, ElementType::I64);
  EXPECT_EQ(elementSize(ElementType::I64), 8u);
  EXPECT_EQ(Back->Inputs[1].extentBytes(), 16);
  EXPECT_EQ(parseElementType("i64"), ElementType::I64);
}

// "init" is a parameter's, and "zeros" is its one value.
TEST(Manifest, InitField) {
  const std::string Bytes = "\"bytes\": 12";
  EXPECT_THAT(
      errorWith(Bytes, Bytes + ", \"init\": \"ones\""),
      HasSubstr("parameters[0] (shift): 'init': 'ones' is not 'zeros'"));
  EXPECT_THAT(errorWith(Bytes, Bytes + ", \"init\": 0"),
              HasSubstr("parameters[0] (shift): 'init': expected a string"));
  EXPECT_THAT(errorWith("\"strides\": [60, 1, 15, 3]",
                        "\"strides\": [60, 1, 15, 3], \"init\": \"zeros\""),
              HasSubstr("inputs[0]: unknown field 'init'"));
  auto M = parseManifest(
      replaceOnce(fakeManifestJson(), Bytes, Bytes + ", \"init\": \"zeros\""),
      ManifestPath);
  ASSERT_TRUE(M.ok()) << M.error();
  EXPECT_TRUE(M->Parameters[0].ZeroInit);
}

// writeManifest puts encodeManifest's text in the file, and says so when it
// cannot.
TEST(Manifest, WriteManifestToFile) {
  std::string Dir = ::testing::TempDir();
  std::string Path = Dir + "/memfmt-manifest-test.json";
  Manifest M = sampleManifest();
  ASSERT_TRUE(writeManifest(M, Path).ok());
  auto Bytes = memfmt::io::readFileBytes(Path);
  ASSERT_TRUE(Bytes.ok()) << Bytes.error();
  EXPECT_EQ(std::string(Bytes->begin(), Bytes->end()), encodeManifest(M));
  std::remove(Path.c_str());
  memfmt::io::Status Failed =
      writeManifest(M, Dir + "/no-such-dir/manifest.json");
  ASSERT_FALSE(Failed.ok());
  EXPECT_THAT(Failed.error(), HasSubstr("no-such-dir/manifest.json"));
}

} // namespace
