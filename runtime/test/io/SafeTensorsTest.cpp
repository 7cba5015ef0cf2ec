//===- SafeTensorsTest.cpp - Tests of .safetensors, JSON and half floats --===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The safetensors reader against files built by hand from the format's
// specification (the reference Python package is not available here), the
// writer against the reference writer's byte layout and by round trips, and
// every validation error. Also tests the private strict JSON reader the
// reader uses (nlohmann/json underneath, with this project's limits and
// messages), and the f16/bf16 conversions of HalfFloat.h against an
// independent rounding oracle, exhaustively where the space is 16 bits.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/io/SafeTensors.h"
#include "Json.h"
#include "memfmt/runtime/io/HalfFloat.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

using namespace memfmt::io;
using ::testing::StartsWith;

namespace {

std::vector<uint8_t> bytesOf(const std::string &S) {
  return std::vector<uint8_t>(S.begin(), S.end());
}

std::string le64(uint64_t V) {
  std::string Out;
  for (int I = 0; I < 8; ++I)
    Out += static_cast<char>(V >> (8 * I));
  return Out;
}

/// A .safetensors file: the header size, \p Header (padded with spaces to a
/// multiple of 8 when \p Pad), then \p Data.
std::vector<uint8_t> makeFile(std::string Header, const std::string &Data = "",
                              bool Pad = true) {
  if (Pad)
    Header.append((8 - Header.size() % 8) % 8, ' ');
  return bytesOf(le64(Header.size()) + Header + Data);
}

Result<SafeTensorsFile> parseFile(std::vector<uint8_t> Bytes,
                                  std::string Name = "w.safetensors") {
  return SafeTensorsFile::parse(std::move(Bytes), std::move(Name));
}

/// Expects \p R to have failed with a message containing each of \p Parts.
template <typename R>
void expectError(const R &Res, std::initializer_list<std::string> Parts) {
  ASSERT_FALSE(Res.ok()) << "expected an error";
  for (const std::string &Part : Parts)
    EXPECT_NE(Res.error().find(Part), std::string::npos)
        << "message: " << Res.error() << "\nmissing: " << Part;
}

std::string tempPath(const std::string &Leaf) {
  return ::testing::TempDir() + "memfmt_st_" + Leaf;
}

template <typename T> std::vector<T> elements(const TensorView &V) {
  std::vector<T> Out(V.NumBytes / sizeof(T));
  if (!Out.empty())
    std::memcpy(Out.data(), V.Data, V.NumBytes);
  return Out;
}

template <typename T>
TensorView viewOf(std::string Name, DType Type, std::vector<int64_t> Shape,
                  const std::vector<T> &Values) {
  TensorView V;
  V.Name = std::move(Name);
  V.Type = Type;
  V.Shape = std::move(Shape);
  V.Data = reinterpret_cast<const uint8_t *>(Values.data());
  V.NumBytes = Values.size() * sizeof(T);
  return V;
}

// What safetensors.torch.save_file writes for
//   {"weight": torch.tensor([[1., 2.], [3., 4.]]),
//    "bias": torch.tensor([0.5, -0.5], dtype=torch.float16)},
//   metadata={"format": "pt"}
// following the specification and the reference writer (serde_json compact
// output, "__metadata__" first, tensors sorted by dtype then name, the header
// padded with spaces to a multiple of 8 bytes): a 151-byte header + 1 space.
const char ReferenceFile[] =
    "\x98\x00\x00\x00\x00\x00\x00\x00"
    "{\"__metadata__\":{\"format\":\"pt\"},"
    "\"weight\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
    "\"bias\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[16,20]}} "
    "\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40"
    "\x00\x38\x00\xb8";

std::vector<uint8_t> referenceBytes() {
  return bytesOf(std::string(ReferenceFile, sizeof(ReferenceFile) - 1));
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

TEST(SafeTensorsReadTest, ReferenceFile) {
  Result<SafeTensorsFile> F = parseFile(referenceBytes());
  ASSERT_TRUE(F.ok()) << F.error();
  EXPECT_EQ(F->names(), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(F->size(), 2u);
  EXPECT_EQ(F->metadata(), (SafeTensorsMetadata{{"format", "pt"}}));

  Result<TensorView> W = F->get("weight");
  ASSERT_TRUE(W.ok()) << W.error();
  EXPECT_EQ(W->Name, "weight");
  EXPECT_EQ(W->Type, DType::F32);
  EXPECT_EQ(W->Shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(W->NumBytes, 16u);
  EXPECT_EQ(elements<float>(*W), (std::vector<float>{1, 2, 3, 4}));

  const TensorView *B = F->find("bias");
  ASSERT_NE(B, nullptr);
  EXPECT_EQ(B->Type, DType::F16);
  EXPECT_EQ(B->Data, W->Data + 16);
  Result<std::vector<float>> BF = convertToF32(B->Type, B->Data, B->NumBytes);
  ASSERT_TRUE(BF.ok()) << BF.error();
  EXPECT_EQ(*BF, (std::vector<float>{0.5f, -0.5f}));

  EXPECT_EQ(F->find("nope"), nullptr);
  expectError(F->get("layer1.0.conv1.weight"),
              {"w.safetensors: no tensor named 'layer1.0.conv1.weight' "
               "(the file has 2 tensors)"});
}

TEST(SafeTensorsReadTest, OpenMapsTheFileAndMoves) {
  std::string Path = tempPath("ref.safetensors");
  std::vector<uint8_t> Bytes = referenceBytes();
  ASSERT_TRUE(writeFileBytes(Path, Bytes.data(), Bytes.size()).ok());
  Result<SafeTensorsFile> F = SafeTensorsFile::open(Path);
  ASSERT_TRUE(F.ok()) << F.error();
  EXPECT_EQ(F->path(), Path);
  SafeTensorsFile Moved = F.take();
  EXPECT_EQ(F->size(), 0u); // NOLINT: the moved-from file is empty.
  const TensorView *W = Moved.find("weight");
  ASSERT_NE(W, nullptr);
  EXPECT_EQ(elements<float>(*W), (std::vector<float>{1, 2, 3, 4}));
  SafeTensorsFile Other = std::move(Moved);
  W = Other.find("weight");
  ASSERT_NE(W, nullptr);
  EXPECT_EQ(elements<float>(*W), (std::vector<float>{1, 2, 3, 4}));
  // Move-assigning over an open file unmaps the old one.
  Result<SafeTensorsFile> G = SafeTensorsFile::open(Path);
  ASSERT_TRUE(G.ok()) << G.error();
  Other = G.take();
  EXPECT_EQ(Other.names(), (std::vector<std::string>{"weight", "bias"}));
  std::remove(Path.c_str());
}

TEST(SafeTensorsReadTest, InMemoryBufferSurvivesMoves) {
  Result<SafeTensorsFile> F = parseFile(referenceBytes());
  ASSERT_TRUE(F.ok()) << F.error();
  SafeTensorsFile A = F.take();
  SafeTensorsFile B = std::move(A);
  const TensorView *W = B.find("weight");
  ASSERT_NE(W, nullptr);
  EXPECT_EQ(elements<float>(*W), (std::vector<float>{1, 2, 3, 4}));
}

TEST(SafeTensorsReadTest, ScalarsEmptyTensorsAndEmptyFiles) {
  std::string Data(4, '\0');
  float Pi = 3.25f;
  std::memcpy(&Data[0], &Pi, 4);
  Result<SafeTensorsFile> F = parseFile(makeFile(
      "{\"empty\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[0,0]},"
      "\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},"
      "\"tail\":{\"dtype\":\"I64\",\"shape\":[2,0],\"data_offsets\":[4,4]}}",
      Data));
  ASSERT_TRUE(F.ok()) << F.error();
  Result<TensorView> S = F->get("s");
  ASSERT_TRUE(S.ok()) << S.error();
  EXPECT_TRUE(S->Shape.empty());
  EXPECT_EQ(elements<float>(*S), (std::vector<float>{3.25f}));
  EXPECT_EQ(F->find("empty")->NumBytes, 0u);
  EXPECT_EQ(F->find("tail")->Shape, (std::vector<int64_t>{2, 0}));

  for (const char *Header :
       {"{}", "{\"__metadata__\":{}}", "{\"__metadata__\":null}", "{ }"}) {
    Result<SafeTensorsFile> E = parseFile(makeFile(Header));
    ASSERT_TRUE(E.ok()) << Header << ": " << E.error();
    EXPECT_EQ(E->size(), 0u);
    EXPECT_TRUE(E->metadata().empty());
  }
}

TEST(SafeTensorsReadTest, WhitespaceEscapesAndUnpaddedHeaders) {
  // Any JSON layout, escaped names, members in any order, and a header that
  // is not padded (so the data is misaligned: read through memcpy).
  std::string Data(7, '\0');
  Data[0] = 1;
  uint16_t Bf = floatToBFloat16(-2.0f);
  std::memcpy(&Data[1], &Bf, 2);
  float Q = 0.75f;
  std::memcpy(&Data[3], &Q, 4);
  std::string Header =
      "{\n  \"caf\\u00e9\\ud83d\\ude00\" : {\"shape\" : [1], \"data_offsets\""
      " : [1, 3], \"dtype\" : \"BF16\"},\n"
      "  \"a\\\"b\\\\c\\/d\": {\"dtype\": \"F32\", \"data_offsets\": [3, 7],"
      " \"shape\": [1]},\r\n\t\"__metadata__\": {\"k\\n\": \"\xc3\xa9\"},"
      "  \"flag\": {\"dtype\": \"BOOL\", \"shape\": [1], \"data_offsets\":"
      " [0, 1]}\n}\n";
  ASSERT_NE(Header.size() % 8, 0u);
  Result<SafeTensorsFile> F = parseFile(makeFile(Header, Data, false));
  ASSERT_TRUE(F.ok()) << F.error();
  EXPECT_EQ(F->names(), (std::vector<std::string>{"caf\xc3\xa9\xf0\x9f\x98\x80",
                                                  "a\"b\\c/d", "flag"}));
  EXPECT_EQ(F->metadata(), (SafeTensorsMetadata{{"k\n", "\xc3\xa9"}}));
  const TensorView *Cafe = F->find("caf\xc3\xa9\xf0\x9f\x98\x80");
  ASSERT_NE(Cafe, nullptr);
  Result<std::vector<float>> V =
      convertToF32(Cafe->Type, Cafe->Data, Cafe->NumBytes);
  ASSERT_TRUE(V.ok()) << V.error();
  EXPECT_EQ(*V, (std::vector<float>{-2.0f}));
  const TensorView *AB = F->find("a\"b\\c/d");
  ASSERT_NE(AB, nullptr);
  V = convertToF32(AB->Type, AB->Data, AB->NumBytes);
  ASSERT_TRUE(V.ok()) << V.error();
  EXPECT_EQ(*V, (std::vector<float>{0.75f}));
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

TEST(SafeTensorsWriteTest, ReproducesTheReferenceLayout) {
  std::vector<float> Weight = {1, 2, 3, 4};
  std::vector<uint16_t> Bias = {floatToHalf(0.5f), floatToHalf(-0.5f)};
  Result<std::vector<uint8_t>> Out =
      encodeSafeTensors({viewOf("weight", DType::F32, {2, 2}, Weight),
                         viewOf("bias", DType::F16, {2}, Bias)},
                        {{"format", "pt"}});
  ASSERT_TRUE(Out.ok()) << Out.error();
  EXPECT_EQ(*Out, referenceBytes());
}

TEST(SafeTensorsWriteTest, HeaderIsPaddedTo8Bytes) {
  std::vector<uint8_t> One = {7};
  for (size_t Length = 1; Length <= 16; ++Length) {
    Result<std::vector<uint8_t>> Out = encodeSafeTensors(
        {viewOf(std::string(Length, 'n'), DType::U8, {1}, One)});
    ASSERT_TRUE(Out.ok()) << Out.error();
    uint64_t HeaderSize = 0;
    std::memcpy(&HeaderSize, Out->data(), 8);
    EXPECT_EQ(HeaderSize % 8, 0u);
    EXPECT_EQ(Out->size(), 8 + HeaderSize + 1);
    EXPECT_EQ(Out->back(), 7);
    uint8_t Last = (*Out)[8 + HeaderSize - 1];
    EXPECT_TRUE(Last == ' ' || Last == '}') << Last;
  }
}

TEST(SafeTensorsWriteTest, RoundTripEveryTypeThroughAFile) {
  std::vector<std::vector<uint8_t>> Storage;
  std::vector<TensorView> Views;
  int I = 0;
  for (DType Type : AllDTypes) {
    std::vector<int64_t> Shape = {2, I % 3 + 1, 3};
    std::vector<uint8_t> Bytes(static_cast<size_t>(*byteSize(Type, Shape)));
    for (size_t J = 0; J < Bytes.size(); ++J)
      Bytes[J] = static_cast<uint8_t>(Type == DType::Bool ? J % 2 : J * 31 + I);
    Storage.push_back(std::move(Bytes));
    TensorView V;
    V.Name = std::string("layer") + std::to_string(I) + "." + dtypeName(Type) +
             ".weight";
    V.Type = Type;
    V.Shape = Shape;
    V.Data = Storage.back().data();
    V.NumBytes = Storage.back().size();
    Views.push_back(V);
    ++I;
  }
  std::string Path = tempPath("all.safetensors");
  SafeTensorsMetadata Meta = {{"format", "pt"}, {"producer", "memfmt \"t\""}};
  Status S = writeSafeTensors(Path, Views, Meta);
  ASSERT_TRUE(S.ok()) << S.error();
  Result<SafeTensorsFile> F = SafeTensorsFile::open(Path);
  ASSERT_TRUE(F.ok()) << F.error();
  EXPECT_EQ(F->metadata(), Meta);
  ASSERT_EQ(F->size(), Views.size());
  for (size_t J = 0; J < Views.size(); ++J) {
    const TensorView &Got = F->tensors()[J];
    EXPECT_EQ(Got.Name, Views[J].Name);
    EXPECT_EQ(Got.Type, Views[J].Type);
    EXPECT_EQ(Got.Shape, Views[J].Shape);
    ASSERT_EQ(Got.NumBytes, Views[J].NumBytes);
    EXPECT_EQ(std::memcmp(Got.Data, Views[J].Data, Got.NumBytes), 0);
  }
  std::remove(Path.c_str());
}

TEST(SafeTensorsWriteTest, Errors) {
  std::vector<float> Four = {1, 2, 3, 4};
  expectError(encodeSafeTensors({viewOf("a", DType::F32, {4}, Four),
                                 viewOf("a", DType::F32, {2, 2}, Four)}),
              {"duplicate tensor name 'a'"});
  expectError(
      encodeSafeTensors({viewOf("__metadata__", DType::F32, {4}, Four)}),
      {"tensor '__metadata__': the name is reserved"});
  expectError(encodeSafeTensors({viewOf("w", DType::F32, {5}, Four)}),
              {"tensor 'w': shape [5] x F32 = 20 bytes, but 16 bytes were "
               "given"});
  expectError(encodeSafeTensors({viewOf("w", DType::F32, {-4}, Four)}),
              {"tensor 'w': shape [-4] has a negative dimension"});
  expectError(encodeSafeTensors({viewOf("\xff", DType::F32, {4}, Four)}),
              {"not valid UTF-8"});
  expectError(encodeSafeTensors({}, {{"k", "\xc0\x80"}}),
              {"metadata entry 'k' is not valid UTF-8"});
  expectError(encodeSafeTensors({}, {{"k", "1"}, {"k", "2"}}),
              {"duplicate metadata entry 'k'"});
  TensorView Null = viewOf("n", DType::F32, {4}, Four);
  Null.Data = nullptr;
  expectError(encodeSafeTensors({Null}), {"tensor 'n': no data"});
  expectError(writeSafeTensors("/nonexistent-dir/w.safetensors",
                               {viewOf("w", DType::F32, {4}, Four)}),
              {"/nonexistent-dir/w.safetensors: cannot create"});
  expectError(writeSafeTensors(tempPath("bad.safetensors"),
                               {viewOf("w", DType::F32, {3}, Four)}),
              {"memfmt_st_bad.safetensors: tensor 'w': shape [3]"});
}

//===----------------------------------------------------------------------===//
// Reader errors
//===----------------------------------------------------------------------===//

/// A file with one F32 tensor entry \p Entry for "t" and \p DataSize zero
/// bytes of data.
std::vector<uint8_t> oneTensor(const std::string &Entry, size_t DataSize) {
  return makeFile("{\"t\":" + Entry + "}", std::string(DataSize, '\0'));
}

TEST(SafeTensorsErrorTest, TruncatedFilesAndHeaderSize) {
  expectError(parseFile({}), {"w.safetensors: too short to be a .safetensors "
                              "file (0 bytes"});
  expectError(parseFile(bytesOf(std::string("\x10\x00\x00", 3))),
              {"too short", "(3 bytes"});
  std::vector<uint8_t> Ref = referenceBytes();
  expectError(parseFile(std::vector<uint8_t>(Ref.begin(), Ref.begin() + 100)),
              {"w.safetensors: header size 152 runs past the end of the file "
               "(100 bytes)"});
  std::vector<uint8_t> Huge = Ref;
  Huge[7] = 0x80;
  expectError(parseFile(Huge), {"header size 9223372036854775960 runs past"});
  // Truncated in the data: the last tensor no longer fits.
  expectError(parseFile(std::vector<uint8_t>(Ref.begin(), Ref.end() - 1)),
              {"w.safetensors: tensor 'bias': data_offsets [16, 20] run past "
               "the end of the data section (19 bytes)"});
  // The header does not start with '{'.
  expectError(parseFile(makeFile(" {}")),
              {"the header does not start with '{'"});
  expectError(parseFile(makeFile("")), {"the header does not start with '{'"});
}

#if defined(__unix__) || defined(__APPLE__)
TEST(SafeTensorsErrorTest, HeaderSizeLimit) {
  // A sparse file whose header is one byte over the reference's 100 MB limit.
  std::string Path = tempPath("huge.safetensors");
  std::string Size = le64(100000001);
  ASSERT_TRUE(writeFileBytes(Path, Size.data(), Size.size()).ok());
  ASSERT_EQ(::truncate(Path.c_str(), 8 + 100000001), 0);
  expectError(SafeTensorsFile::open(Path),
              {Path + ": header size 100000001 exceeds the format's limit"});
  std::remove(Path.c_str());
}
#endif

TEST(SafeTensorsErrorTest, Files) {
  expectError(SafeTensorsFile::open("/nonexistent-dir/w.safetensors"),
              {"/nonexistent-dir/w.safetensors: cannot open"});
  expectError(SafeTensorsFile::open(::testing::TempDir()),
              {"not a regular file"});
  std::string Path = tempPath("short.safetensors");
  ASSERT_TRUE(writeFileBytes(Path, "", 0).ok());
  expectError(SafeTensorsFile::open(Path), {Path + ": too short"});
  std::vector<uint8_t> Bad =
      oneTensor("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}", 4);
  ASSERT_TRUE(writeFileBytes(Path, Bad.data(), Bad.size()).ok());
  expectError(SafeTensorsFile::open(Path),
              {Path + ": tensor 't': data_offsets [0, 4] do not match"});
  std::remove(Path.c_str());
}

TEST(SafeTensorsErrorTest, BadJson) {
  // nlohmann/json's reason, at the byte where it stopped (offsets into the
  // header, which makeFile pads with spaces to a multiple of 8).
  const std::string Value = "syntax error while parsing value - ";
  const std::string BadString = Value + "invalid string: ";
  struct Case {
    std::string Header;
    std::string Error;
  } Cases[] = {
      {"{\"a\":1,}", "at byte 7: syntax error while parsing object key - "
                     "unexpected '}'; expected string literal"},
      {"{'a':1}", "at byte 1: syntax error while parsing object key - "
                  "invalid literal"},
      {"{\"a\" 1}", "at byte 5: syntax error while parsing object separator - "
                    "unexpected number literal; expected ':'"},
      {"{\"a\":1 \"b\":2}", "at byte 9: syntax error while parsing object - "
                            "unexpected string literal; expected '}'"},
      {"{\"a\":[1,]}", "at byte 8: " + Value + "unexpected ']'"},
      {"{\"a\":[1 2]}", "at byte 8: syntax error while parsing array - "
                        "unexpected number literal; expected ']'"},
      {"{\"a\":01}", "at byte 6: syntax error while parsing object - "
                     "unexpected number literal; expected '}'"},
      {"{\"a\":1.}",
       "at byte 7: " + Value + "invalid number; expected digit after '.'"},
      {"{\"a\":1e}", "at byte 7: " + Value +
                         "invalid number; expected '+', '-', or digit after "
                         "exponent"},
      {"{\"a\":-}",
       "at byte 6: " + Value + "invalid number; expected digit after '-'"},
      {"{\"a\":NaN}", "at byte 5: " + Value + "invalid literal"},
      {"{\"a\":tru}", "at byte 8: " + Value + "invalid literal"},
      {"{\"a\":\"x", "at byte 8: " + BadString + "missing closing quote"},
      {"{\"a\":\"x\ty\"}", "at byte 7: " + BadString +
                               "control character U+0009 (HT) must be "
                               "escaped"},
      {"{\"a\":\"\\x\"}",
       "at byte 7: " + BadString + "forbidden character after backslash"},
      {"{\"a\":\"\\u12g4\"}",
       "at byte 10: " + BadString + "'\\u' must be followed by 4 hex digits"},
      {"{\"a\":\"\\ud800\"}", "at byte 12: " + BadString +
                                  "surrogate U+D800..U+DBFF must be followed "
                                  "by U+DC00..U+DFFF"},
      {"{\"a\":\"\\udc00\"}",
       "at byte 11: " + BadString +
           "surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF"},
      {"{\"a\":\"\xff\"}", "at byte 6: " + BadString + "ill-formed UTF-8"},
      {"{\"a\":\"\xc0\xaf\"}", // Overlong.
       "at byte 6: " + BadString + "ill-formed UTF-8"},
      {"{\"a\":\"\xe0\x80\xaf\"}", // Overlong.
       "at byte 7: " + BadString + "ill-formed UTF-8"},
      {"{\"a\":\"\xed\xa0\x80\"}", // A surrogate.
       "at byte 7: " + BadString + "ill-formed UTF-8"},
      {"{\"a\":\"\xe2\x82\"}", // Truncated.
       "at byte 8: " + BadString + "ill-formed UTF-8"},
      {"{} {}",
       "at byte 3: " + Value + "unexpected '{'; expected end of input"},
      {"{}/* c */", "at byte 2: " + Value + "invalid literal"},
      {"{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}",
       "at byte 68: nesting deeper than 64"},
      {"{", "at byte 8: syntax error while parsing object key - unexpected "
            "end of input; expected string literal"},
  };
  for (const Case &C : Cases)
    expectError(parseFile(makeFile(C.Header)),
                {"w.safetensors: invalid JSON header: " + C.Error});
  expectError(
      parseFile(bytesOf(le64(8) + std::string("{\"a\":1}\0", 8))),
      {"invalid JSON header: at byte 7: NUL byte after the JSON value"});
}

TEST(SafeTensorsErrorTest, BadEntries) {
  struct Case {
    std::string Entry;
    std::string Error;
  } Cases[] = {
      {"[]", "tensor 't': expected an object {\"dtype\", \"shape\", "
             "\"data_offsets\"}, found an array"},
      {"{\"shape\":[1],\"data_offsets\":[0,4]}",
       "tensor 't': missing \"dtype\""},
      {"{\"dtype\":\"F32\",\"data_offsets\":[0,4]}", "missing \"shape\""},
      {"{\"dtype\":\"F32\",\"shape\":[1]}", "missing \"data_offsets\""},
      {"{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":0}",
       "tensor 't': unexpected key 'x'"},
      {"{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],"
       "\"data_offsets\":[0,4]}",
       "tensor 't': duplicate key 'dtype'"},
      {"{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}",
       "\"dtype\" must be a string, found a number"},
      {"{\"dtype\":\"F8_E4M3\",\"shape\":[4],\"data_offsets\":[0,4]}",
       "tensor 't': unknown dtype 'F8_E4M3'"},
      {"{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}",
       "unknown dtype 'f32'"},
      {"{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}",
       "\"shape\" must be an array of non-negative integers"},
      {"{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}",
       "\"shape\" must be an array of non-negative integers, found -1"},
      {"{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}",
       "found 1.0"},
      {"{\"dtype\":\"F32\",\"shape\":[1e0],\"data_offsets\":[0,4]}",
       "found 1e0"},
      {"{\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]}",
       "found a string"},
      {"{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}",
       "\"data_offsets\" must be an array of two non-negative integers"},
      {"{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":{\"a\":0}}",
       "\"data_offsets\" must be an array of two"},
      {"{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}",
       "\"data_offsets\" must be an array of two non-negative integers"},
      {"{\"dtype\":\"F32\",\"shape\":[1],"
       "\"data_offsets\":[0,99999999999999999999]}",
       "(that fit in 64 bits)"},
      {"{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}",
       "tensor 't': data_offsets [4, 0] are reversed (begin > end)"},
      {"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}",
       "tensor 't': data_offsets [0, 8] run past the end of the data section "
       "(4 bytes)"},
      {"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}",
       "tensor 't': data_offsets [0, 4] do not match shape [2] x F32 = 8 "
       "bytes"},
      {"{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
       "\"data_offsets\":[0,4]}",
       "tensor 't': shape [4294967296,4294967296] x F32 overflows 64 bits"},
  };
  for (const Case &C : Cases)
    expectError(parseFile(oneTensor(C.Entry, 4), "e.safetensors"),
                {"e.safetensors: ", C.Error});
}

TEST(SafeTensorsErrorTest, SizeMismatchMessage) {
  expectError(
      parseFile(makeFile("{\"layer1.0.conv1.weight\":{\"dtype\":\"F32\","
                         "\"shape\":[64,3,7,7],\"data_offsets\":[0,100]}}",
                         std::string(100, '\0')),
                "weights.safetensors"),
      {"weights.safetensors: tensor 'layer1.0.conv1.weight': data_offsets "
       "[0, 100] do not match shape [64,3,7,7] x F32 = 37632 bytes"});
}

TEST(SafeTensorsErrorTest, TilingOfTheDataSection) {
  auto entry = [](const char *Name, int Begin, int End) {
    return std::string("\"") + Name + "\":{\"dtype\":\"U8\",\"shape\":[" +
           std::to_string(End - Begin) + "],\"data_offsets\":[" +
           std::to_string(Begin) + "," + std::to_string(End) + "]}";
  };
  // Overlap.
  expectError(parseFile(makeFile("{" + entry("a", 0, 16) + "," +
                                     entry("b", 8, 24) + "}",
                                 std::string(24, 'x'))),
              {"w.safetensors: tensor 'b': data_offsets [8, 24] overlap "
               "tensor 'a' (data_offsets [0, 16])"});
  // The same range twice, listed in either order.
  expectError(
      parseFile(makeFile("{" + entry("b", 0, 8) + "," + entry("a", 0, 8) + "}",
                         std::string(8, 'x'))),
      {"tensor 'a': data_offsets [0, 8] overlap tensor 'b'"});
  // A tensor inside another, and an empty one inside another.
  expectError(parseFile(makeFile("{" + entry("big", 0, 16) + "," +
                                     entry("small", 4, 8) + "," +
                                     entry("rest", 16, 20) + "}",
                                 std::string(20, 'x'))),
              {"tensor 'small': data_offsets [4, 8] overlap tensor 'big'"});
  expectError(parseFile(makeFile("{" + entry("big", 0, 16) + "," +
                                     entry("none", 4, 4) + "}",
                                 std::string(16, 'x'))),
              {"tensor 'none': data_offsets [4, 4] overlap tensor 'big'"});
  // A gap, a hole at the start, trailing bytes.
  expectError(parseFile(makeFile("{" + entry("a", 0, 8) + "," +
                                     entry("b", 12, 16) + "}",
                                 std::string(16, 'x'))),
              {"w.safetensors: bytes [8, 12) of the data section belong to "
               "no tensor"});
  expectError(
      parseFile(makeFile("{" + entry("a", 4, 8) + "}", std::string(8, 'x'))),
      {"bytes [0, 4) of the data section belong to no tensor"});
  expectError(
      parseFile(makeFile("{" + entry("a", 0, 8) + "}", std::string(11, 'x'))),
      {"bytes [8, 11) of the data section belong to no tensor"});
  expectError(parseFile(makeFile("{}", "x")),
              {"bytes [0, 1) of the data section belong to no tensor"});
  // Out of order in the header but tiling: fine.
  Result<SafeTensorsFile> F = parseFile(
      makeFile("{" + entry("c", 8, 12) + "," + entry("a", 0, 4) + "," +
                   entry("e", 4, 4) + "," + entry("b", 4, 8) + "}",
               "0123456789ab"));
  ASSERT_TRUE(F.ok()) << F.error();
  EXPECT_EQ(F->names(), (std::vector<std::string>{"c", "a", "e", "b"}));
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(F->find("c")->Data), 4),
            "89ab");
}

TEST(SafeTensorsErrorTest, DuplicatesAndMetadata) {
  std::string T = "{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}";
  expectError(parseFile(makeFile("{\"w\":" + T + ",\"w\":" + T + "}")),
              {"w.safetensors: duplicate tensor name 'w'"});
  expectError(parseFile(makeFile("{\"__metadata__\":{},\"__metadata__\":{}}")),
              {"duplicate \"__metadata__\""});
  expectError(
      parseFile(makeFile("{\"__metadata__\":[]}")),
      {"\"__metadata__\" must be an object of strings, found an array"});
  expectError(parseFile(makeFile("{\"__metadata__\":{\"n\":1}}")),
              {"\"__metadata__\" entry 'n' must be a string, found a number"});
  expectError(
      parseFile(makeFile("{\"__metadata__\":{\"n\":\"1\",\"n\":\"2\"}}")),
      {"duplicate \"__metadata__\" entry 'n'"});
  // Control characters in names are shown escaped.
  expectError(parseFile(makeFile("{\"a\\nb\":[]}")),
              {"tensor 'a\\x0ab': expected an object"});
}

TEST(SafeTensorsErrorTest, EveryTruncationAndByteFlipIsHandled) {
  // Every proper prefix is an error; flipping any byte gives an error or a
  // file whose tensors lie inside it, never a crash (run under sanitizers to
  // see the point).
  std::vector<uint8_t> Full = referenceBytes();
  for (size_t Length = 0; Length < Full.size(); ++Length)
    EXPECT_FALSE(
        parseFile(std::vector<uint8_t>(Full.begin(), Full.begin() + Length))
            .ok())
        << Length;
  for (size_t I = 0; I < Full.size(); ++I)
    for (int Flip : {0x01, 0x02, 0x08, 0x20, 0x80, 0xFF}) {
      std::vector<uint8_t> Bytes = Full;
      Bytes[I] = static_cast<uint8_t>(Bytes[I] ^ Flip);
      Result<SafeTensorsFile> F = parseFile(Bytes);
      if (!F.ok()) {
        EXPECT_EQ(F.error().rfind("w.safetensors: ", 0), 0u) << F.error();
        continue;
      }
      size_t Total = 0;
      for (const TensorView &T : F->tensors()) {
        EXPECT_EQ(static_cast<int64_t>(T.NumBytes), byteSize(T.Type, T.Shape));
        std::vector<uint8_t> Copy(T.Data, T.Data + T.NumBytes); // ASan checks.
        Total += Copy.size();
      }
      EXPECT_LE(Total, 20u); // The data section has 20 bytes.
    }
}

//===----------------------------------------------------------------------===//
// The JSON reader
//===----------------------------------------------------------------------===//

TEST(JsonTest, ParsesValues) {
  std::string Error;
  std::optional<json::Value> V = json::parse(
      " {\"a\": [1, -2.5e+3, true, false, null, \"s\\u0041\\/\"], \"b\": {},"
      " \"a\": 0, \"\": []} ",
      Error);
  ASSERT_TRUE(V) << Error;
  ASSERT_TRUE(V->isObject());
  ASSERT_EQ(V->Members.size(), 4u); // Duplicates are kept.
  const json::Value &A = V->Members[0].second;
  ASSERT_TRUE(A.isArray());
  ASSERT_EQ(A.Elements.size(), 6u);
  EXPECT_EQ(json::asInt64(A.Elements[0]), 1);
  EXPECT_EQ(A.Elements[1].Text, "-2.5e+3");
  EXPECT_FALSE(json::asInt64(A.Elements[1]));
  EXPECT_TRUE(A.Elements[2].Bool);
  EXPECT_EQ(A.Elements[3].K, json::Value::Kind::Bool);
  EXPECT_FALSE(A.Elements[3].Bool);
  EXPECT_TRUE(A.Elements[4].isNull());
  EXPECT_EQ(A.Elements[5].Text, "sA/");
  EXPECT_EQ(V->Members[2].first, "a");
  EXPECT_EQ(V->Members[3].first, "");
  EXPECT_TRUE(json::parse("\"\\ud83d\\ude00\"", Error));
  EXPECT_EQ(json::parse("\"\\ud83d\\ude00\"", Error)->Text, "\xf0\x9f\x98\x80");
  EXPECT_TRUE(json::parse("-0", Error));
  EXPECT_TRUE(json::parse(std::string(64, '[') + std::string(64, ']'), Error));
  EXPECT_FALSE(json::parse(std::string(65, '[') + std::string(65, ']'), Error));
  EXPECT_FALSE(json::parse("", Error));
  EXPECT_FALSE(json::parse("  ", Error));
}

TEST(JsonTest, Int64Bounds) {
  std::string Error;
  auto intOf = [&](const char *Text) {
    std::optional<json::Value> V = json::parse(Text, Error);
    EXPECT_TRUE(V) << Text << ": " << Error;
    return V ? json::asInt64(*V) : std::nullopt;
  };
  EXPECT_EQ(intOf("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(intOf("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(intOf("9223372036854775808"));
  EXPECT_FALSE(intOf("-9223372036854775809"));
  EXPECT_FALSE(intOf("18446744073709551616"));
  EXPECT_EQ(intOf("0"), 0);
  EXPECT_EQ(intOf("-0"), 0);
  EXPECT_FALSE(intOf("1.5"));
  EXPECT_FALSE(intOf("1E2"));
}

TEST(JsonTest, WriterQuotesLikeSerdeJson) {
  // The writer's header escapes '"', '\\' and control characters and keeps
  // other UTF-8, as serde_json does; the reader decodes it back.
  std::string Key("a\"b\\c\n\x01\x1f\t/\xc3\xa9", 12);
  Result<std::vector<uint8_t>> Bytes = encodeSafeTensors({}, {{Key, "v"}});
  ASSERT_TRUE(Bytes.ok()) << Bytes.error();
  std::string Header(Bytes->begin() + 8, Bytes->end());
  Header.erase(Header.find_last_not_of(' ') + 1); // The padding.
  EXPECT_EQ(Header, "{\"__metadata__\":{\"a\\\"b\\\\c\\n\\u0001\\u001f\\t/"
                    "\xc3\xa9\":\"v\"}}");
  Result<SafeTensorsFile> F = parseFile(*Bytes);
  ASSERT_TRUE(F.ok()) << F.error();
  EXPECT_EQ(F->metadata(), (SafeTensorsMetadata{{Key, "v"}}));
}

TEST(JsonTest, Utf8) {
  EXPECT_TRUE(
      json::isValidUtf8("plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(json::isValidUtf8("\x80"));
  EXPECT_FALSE(json::isValidUtf8("\xc3"));
  EXPECT_FALSE(json::isValidUtf8("\xf4\x90\x80\x80")); // Past U+10FFFF.
  EXPECT_FALSE(json::isValidUtf8("\xf0\x80\x80\x80")); // Overlong.
  EXPECT_FALSE(json::isValidUtf8("a\xed\xa0\x80"));    // A surrogate.
  // What nlohmann's dump escapes or replaces is still valid UTF-8: a
  // U+FFFD of the text itself, quotes, backslashes and control characters.
  EXPECT_TRUE(json::isValidUtf8("\xef\xbf\xbd"));
  EXPECT_TRUE(json::isValidUtf8(std::string("\"\\\n\x01\0", 5)));
}

TEST(JsonTest, StricterThanNlohmannAlone) {
  // nlohmann/json skips a byte-order mark, stops at a NUL byte and has no
  // depth limit; the reader has neither gap. Errors name the byte.
  std::string Error;
  EXPECT_FALSE(json::parse("\xef\xbb\xbf{}", Error));
  EXPECT_EQ(Error, "at byte 0: byte-order mark before the JSON value");
  EXPECT_FALSE(json::parse(std::string("[1]\0[2]", 7), Error));
  EXPECT_EQ(Error, "at byte 3: NUL byte after the JSON value");
  EXPECT_FALSE(json::parse(std::string("[1,\0]", 5), Error));
  EXPECT_EQ(Error, "at byte 3: syntax error while parsing value - unexpected "
                   "end of input; expected '[', '{', or a literal");
  EXPECT_FALSE(json::parse(std::string("[\"a\0\"]", 5), Error));
  EXPECT_THAT(Error, StartsWith("at byte 3: syntax error while parsing value "
                                "- invalid string: control character U+0000 "
                                "(NUL) must be escaped"));
  EXPECT_FALSE(json::parse("{\"a\": " + std::string(64, '[') + "]", Error));
  EXPECT_EQ(Error, "at byte 69: nesting deeper than 64");
  EXPECT_FALSE(json::parse("[1, 1e999]", Error));
  EXPECT_EQ(Error, "at byte 8: number overflow parsing '1e999'");
}

TEST(JsonTest, ErrorOffsets) {
  // The offset is where nlohmann's reader stopped: the last byte of the
  // refused token, the offending byte, or the end of the text. The reason is
  // nlohmann's, without the "; last read: '...'" that may follow.
  struct Case {
    const char *Text;
    const char *Error;
  } Cases[] = {
      {"{\"a\":1 \"b\":2}", "at byte 9: syntax error while parsing object - "
                            "unexpected string literal; expected '}'"},
      {"[1 true]", "at byte 6: syntax error while parsing array - unexpected "
                   "true literal; expected ']'"},
      {"{\"a\" \"b\"}", "at byte 7: syntax error while parsing object "
                        "separator - unexpected string literal; expected ':'"},
      {"{1:2}", "at byte 1: syntax error while parsing object key - "
                "unexpected number literal; expected string literal"},
      {"[1, tru]", "at byte 7: syntax error while parsing value - invalid "
                   "literal"},
      {"[-01]", "at byte 3: syntax error while parsing array - unexpected "
                "number literal; expected ']'"},
      {"[\"\\u12\"]", "at byte 6: syntax error while parsing value - invalid "
                      "string: '\\u' must be followed by 4 hex digits"},
      {"[\"\\u12", "at byte 6: syntax error while parsing value - invalid "
                   "string: '\\u' must be followed by 4 hex digits"},
      {"[truex]", "at byte 5: syntax error while parsing array - invalid "
                  "literal"},
      {"truenul", "at byte 7: syntax error while parsing value - invalid "
                  "literal"},
      {"[\"\xe2\x82", "at byte 4: syntax error while parsing value - invalid "
                      "string: ill-formed UTF-8 byte"},
      {"[\"\xc3\xa9\x80\"]", "at byte 4: syntax error while parsing value - "
                             "invalid string: ill-formed UTF-8 byte"},
      {"{\"\\q\":1}", "at byte 3: syntax error while parsing object key - "
                      "invalid string: forbidden character after backslash"},
      {"[1] x", "at byte 4: syntax error while parsing value - invalid "
                "literal"},
      {"", "at byte 0: syntax error while parsing value - unexpected end of "
           "input; expected '[', '{', or a literal"},
  };
  for (const Case &C : Cases) {
    std::string Error;
    EXPECT_FALSE(json::parse(C.Text, Error)) << C.Text;
    EXPECT_THAT(Error, StartsWith(C.Error)) << C.Text;
  }
}

//===----------------------------------------------------------------------===//
// Half and bfloat16 conversions
//===----------------------------------------------------------------------===//

/// The oracle: rounds \p X (a float, held exactly in a double) to nearest,
/// ties to even, in a binary format with \p MantBits stored mantissa bits,
/// smallest normal exponent \p MinExp and largest finite value \p MaxFinite.
double roundToFormat(double X, int MantBits, int MinExp, double MaxFinite) {
  if (X == 0 || std::isinf(X))
    return X;
  double A = std::fabs(X);
  int E;
  std::frexp(A, &E); // A = M * 2^E, M in [0.5, 1).
  int Lead = std::max(E - 1, MinExp);
  double Ulp = std::ldexp(1.0, Lead - MantBits);
  double Q = std::nearbyint(A / Ulp) * Ulp; // A / Ulp is exact.
  if (Q > MaxFinite)
    Q = std::numeric_limits<double>::infinity();
  return std::copysign(Q, X);
}

constexpr double HalfMax = 65504.0;
const double BFloat16Max = std::ldexp(255.0, 120); // (2 - 2^-7) * 2^127

/// Checks floatToHalf and floatToBFloat16 of \p F against the oracle;
/// counts failures in \p Failures and keeps the first.
void checkNarrowing(float F, int &Failures, std::string &First) {
  if (std::isnan(F))
    return;
  auto check = [&](const char *What, float Got, double Want) {
    if (floatBits(Got) == floatBits(static_cast<float>(Want)))
      return;
    if (Failures++ == 0) {
      char Buffer[160];
      std::snprintf(Buffer, sizeof(Buffer), "%s(%a [0x%08x]) = %a, expected %a",
                    What, static_cast<double>(F), floatBits(F),
                    static_cast<double>(Got), Want);
      First = Buffer;
    }
  };
  check("floatToHalf", halfToFloat(floatToHalf(F)),
        roundToFormat(F, 10, -14, HalfMax));
  check("floatToBFloat16", bfloat16ToFloat(floatToBFloat16(F)),
        roundToFormat(F, 7, -126, BFloat16Max));
}

TEST(HalfFloatTest, WidensEveryHalfExactlyAndNarrowsItBack) {
  int Failures = 0;
  for (uint32_t H = 0; H <= 0xFFFF; ++H) {
    auto Bits = static_cast<uint16_t>(H);
    float F = halfToFloat(Bits);
    bool Negative = H & 0x8000;
    uint32_t Exp = (H >> 10) & 0x1F, Mant = H & 0x3FF;
    bool Ok;
    if (Exp == 0x1F && Mant != 0) {
      // NaN: same sign, payload kept; narrowing makes it quiet.
      Ok = std::isnan(F) && std::signbit(F) == Negative &&
           ((floatBits(F) >> 13) & 0x3FF) == Mant &&
           floatToHalf(F) == (Bits | 0x200);
    } else {
      double Want = Exp == 0x1F ? std::numeric_limits<double>::infinity()
                    : Exp == 0  ? std::ldexp(Mant, -24)
                                : std::ldexp(1024 + Mant, int(Exp) - 25);
      if (Negative)
        Want = -Want;
      Ok = static_cast<double>(F) == Want && std::signbit(F) == Negative &&
           floatToHalf(F) == Bits;
    }
    if (!Ok && Failures++ == 0)
      ADD_FAILURE() << "half 0x" << std::hex << H;
  }
  EXPECT_EQ(Failures, 0);
}

TEST(HalfFloatTest, WidensEveryBFloat16ExactlyAndNarrowsItBack) {
  int Failures = 0;
  for (uint32_t B = 0; B <= 0xFFFF; ++B) {
    auto Bits = static_cast<uint16_t>(B);
    float F = bfloat16ToFloat(Bits);
    bool Ok = floatBits(F) == B << 16;
    if (std::isnan(F))
      Ok = Ok && floatToBFloat16(F) == (Bits | 0x40);
    else
      Ok = Ok && floatToBFloat16(F) == Bits;
    if (!Ok && Failures++ == 0)
      ADD_FAILURE() << "bfloat16 0x" << std::hex << B;
  }
  EXPECT_EQ(Failures, 0);
}

TEST(HalfFloatTest, RoundsToNearestEvenAtEveryMidpoint) {
  // The midpoint between each pair of neighbouring finite values (exact in
  // f32), and the floats just either side of it.
  int Failures = 0;
  std::string First;
  for (uint32_t H = 0; H < 0x7C00; ++H) {
    // Past the largest finite half, 65504, the next step would be 65536.
    double Next =
        H + 1 == 0x7C00 ? 65536.0 : halfToFloat(static_cast<uint16_t>(H + 1));
    float Mid = static_cast<float>(
        (static_cast<double>(halfToFloat(static_cast<uint16_t>(H))) + Next) /
        2);
    for (float F :
         {Mid, std::nextafter(Mid, 0.0f), std::nextafter(Mid, 1e30f)}) {
      checkNarrowing(F, Failures, First);
      checkNarrowing(-F, Failures, First);
    }
  }
  for (uint32_t B = 0; B < 0x7F80; ++B) {
    uint32_t MidBits = (B << 16) | 0x8000;
    for (uint32_t Bits : {MidBits, MidBits - 1, MidBits + 1}) {
      checkNarrowing(floatFromBits(Bits), Failures, First);
      checkNarrowing(floatFromBits(Bits | 0x80000000u), Failures, First);
    }
  }
  EXPECT_EQ(Failures, 0) << First;
}

TEST(HalfFloatTest, RoundsRandomFloatsLikeTheOracle) {
  std::mt19937 Rng(12345);
  int Failures = 0;
  std::string First;
  for (int I = 0; I < 2000000; ++I) {
    uint32_t Bits = Rng();
    if (I % 2) // Half of them in or near the f16 range.
      Bits = (Bits & 0x807FFFFFu) | ((100 + Rng() % 50) << 23);
    checkNarrowing(floatFromBits(Bits), Failures, First);
  }
  EXPECT_EQ(Failures, 0) << First;
}

TEST(HalfFloatTest, SpecialValues) {
  const float Inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(65519.99f), 0x7BFF);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // The tie rounds to even: inf.
  EXPECT_EQ(floatToHalf(1e10f), 0x7C00);
  EXPECT_EQ(floatToHalf(Inf), 0x7C00);
  EXPECT_EQ(floatToHalf(-Inf), 0xFC00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400); // Smallest normal.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001); // Smallest subnormal.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000); // Tie to even: 0.
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);    // Tie to even: 2.
  EXPECT_EQ(floatToHalf(std::ldexp(5.0f, -25)), 0x0002);    // Tie to even: 2.
  EXPECT_EQ(floatToHalf(std::ldexp(1023.5f, -24)), 0x0400); // Carries.
  EXPECT_EQ(floatToHalf(-std::ldexp(1.0f, -30)), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00); // Tie: even.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3C02); // Tie: even.
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(halfToFloat(0xFC00), -Inf);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));

  // NaNs stay NaNs, keep their sign and become quiet.
  EXPECT_EQ(floatToHalf(floatFromBits(0x7FC00000u)), 0x7E00);
  EXPECT_EQ(floatToHalf(floatFromBits(0xFFC00000u)), 0xFE00);
  EXPECT_EQ(floatToHalf(floatFromBits(0x7F800001u)), 0x7E00); // Signalling.
  EXPECT_EQ(floatToHalf(floatFromBits(0x7FA02000u)), 0x7F01);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7C01)));
  EXPECT_TRUE(std::isnan(halfToFloat(0xFE00)));

  EXPECT_EQ(floatToBFloat16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBFloat16(-0.0f), 0x8000);
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(3.0f, -8)), 0x3F82);
  EXPECT_EQ(floatToBFloat16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(floatToBFloat16(BFloat16Max), 0x7F7F);
  EXPECT_EQ(floatToBFloat16(-Inf), 0xFF80);
  EXPECT_EQ(floatToBFloat16(floatFromBits(0x00010000u)), 0x0001); // Subnormal.
  EXPECT_EQ(floatToBFloat16(floatFromBits(0x00008000u)), 0x0000); // Tie: even.
  EXPECT_EQ(floatToBFloat16(floatFromBits(0x00018000u)), 0x0002); // Tie: even.
  EXPECT_EQ(floatToBFloat16(floatFromBits(0x7F800001u)), 0x7FC0);
  EXPECT_EQ(floatToBFloat16(floatFromBits(0xFFC00000u)), 0xFFC0);
  EXPECT_EQ(bfloat16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(bfloat16ToFloat(0xC040), -3.0f);
}

TEST(HalfFloatTest, ArrayConversionsAcceptUnalignedBuffers) {
  const float Values[5] = {1.0f, -0.5f, 65504.0f, std::ldexp(1.0f, -24), 3.0f};
  alignas(8) uint8_t Half[11], BF[11];
  convertF32ToF16(Values, Half + 1, 5);
  convertF32ToBF16(Values, BF + 1, 5);
  float Out[5];
  convertF16ToF32(Half + 1, Out, 5);
  for (int I = 0; I < 5; ++I)
    EXPECT_EQ(Out[I], Values[I]) << I;
  float FromBF[5];
  convertBF16ToF32(BF + 1, FromBF, 5);
  EXPECT_EQ(FromBF[0], 1.0f);
  EXPECT_EQ(FromBF[1], -0.5f);
  EXPECT_EQ(FromBF[2], 65536.0f); // 65504 needs more than 8 bits.
  EXPECT_EQ(FromBF[4], 3.0f);
  Result<std::vector<float>> Conv = convertToF32(DType::BF16, BF + 1, 10);
  ASSERT_TRUE(Conv.ok()) << Conv.error();
  EXPECT_EQ(*Conv, std::vector<float>(FromBF, FromBF + 5));
}

} // namespace
