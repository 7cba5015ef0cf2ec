//===- Manifest.cpp - Reading, validating and writing manifest.json -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The one home of the manifest.json format (Manifest.h): its keys are
// spelled once, at the top, for both directions.
//
// The reader is strict. It parses with the io library's JSON reader
// (Json.h), then walks the document once, recording the first problem with
// the manifest's path and the field it is in. Checks that need the whole
// document (names unique, parameters inside the blob and apart from each
// other) run after every field has been read.
//
// The writer (what memfmt-compile writes) builds the document as
// nlohmann::ordered_json, so the keys keep the order documented in
// Manifest.h, and prints it with two-space indents and lists of numbers on
// one line.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/loader/Manifest.h"

#include "Json.h"
#include "memfmt/Layout/Strides.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <sys/stat.h>

namespace memfmt::loader {

using io::Failure;
using io::json::Value;

//===----------------------------------------------------------------------===//
// Element types, tensors and weight sources
//===----------------------------------------------------------------------===//

const char *toString(ElementType Type) {
  switch (Type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::BF16:
    return "bf16";
  case ElementType::I64:
    return "i64";
  }
  return "?";
}

size_t elementSize(ElementType Type) {
  switch (Type) {
  case ElementType::F32:
    return 4;
  case ElementType::F16:
  case ElementType::BF16:
    return 2;
  case ElementType::I64:
    return 8;
  }
  return 0;
}

std::optional<ElementType> parseElementType(std::string_view Name) {
  for (ElementType Type : {ElementType::F32, ElementType::F16,
                           ElementType::BF16, ElementType::I64})
    if (Name == toString(Type))
      return Type;
  return std::nullopt;
}

int64_t TensorSpec::numElements() const {
  int64_t Count = 1;
  for (int64_t Dim : Shape)
    Count *= Dim;
  return Count;
}

int64_t TensorSpec::extentBytes() const {
  return layout::spanElements(Shape, Strides) *
         static_cast<int64_t>(elementSize(Type));
}

std::string formatDims(const std::vector<int64_t> &Dims) {
  return io::formatShape(Dims);
}

std::string WeightsSource::str() const {
  if (K == Kind::Synthetic)
    return "synthetic:" + std::to_string(Seed);
  return "safetensors:" + Path;
}

namespace {

bool startsWith(std::string_view Text, std::string_view Prefix) {
  return Text.substr(0, Prefix.size()) == Prefix;
}

bool endsWith(std::string_view Text, std::string_view Suffix) {
  return Text.size() >= Suffix.size() &&
         Text.substr(Text.size() - Suffix.size()) == Suffix;
}

/// Parses a decimal uint64 (digits only).
std::optional<uint64_t> parseUInt64(std::string_view Text) {
  if (Text.empty() || Text.size() > 20)
    return std::nullopt;
  uint64_t Value = 0;
  for (char C : Text) {
    if (C < '0' || C > '9')
      return std::nullopt;
    uint64_t Digit = static_cast<uint64_t>(C - '0');
    if (Value > (UINT64_MAX - Digit) / 10)
      return std::nullopt;
    Value = Value * 10 + Digit;
  }
  return Value;
}

std::string joinPath(const std::string &Dir, const std::string &Path) {
  if (Path.empty() || Path.front() == '/' || Dir.empty())
    return Path;
  return Dir.back() == '/' ? Dir + Path : Dir + "/" + Path;
}

} // namespace

io::Result<WeightsSource> parseWeightsSource(std::string_view Text,
                                             const std::string &BaseDir,
                                             bool AllowBarePath) {
  WeightsSource Source;
  std::string Quoted = "'" + std::string(Text) + "'";
  if (Text == "synthetic")
    return Source;
  if (startsWith(Text, "synthetic:")) {
    std::optional<uint64_t> Seed = parseUInt64(Text.substr(10));
    if (!Seed)
      return Failure{"weights source " + Quoted +
                     ": the seed must be a decimal integer in [0, 2^64)"};
    Source.Seed = *Seed;
    return Source;
  }
  std::string_view Path;
  if (startsWith(Text, "safetensors:"))
    Path = Text.substr(12);
  else if (AllowBarePath && endsWith(Text, ".safetensors"))
    Path = Text;
  else
    return Failure{"unknown weights source " + Quoted +
                   "; expected synthetic:SEED" +
                   (AllowBarePath ? ", safetensors:PATH or a .safetensors file"
                                  : " or safetensors:PATH")};
  if (Path.empty())
    return Failure{"weights source " + Quoted + " has no path"};
  Source.K = WeightsSource::Kind::SafeTensors;
  Source.Path = joinPath(BaseDir, std::string(Path));
  return Source;
}

bool isTrainingOnlyState(std::string_view Name) {
  return endsWith(Name, ".num_batches_tracked") ||
         endsWith(Name, ".momentum_buffer") || Name == "optimizer.step";
}

const TensorSpec *Manifest::findParameter(std::string_view Name) const {
  for (const TensorSpec &P : Parameters)
    if (P.Name == Name)
      return &P;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// The keys
//===----------------------------------------------------------------------===//

namespace {

/// The manifest's keys, spelled once for the reader and the writer below,
/// in the order the writer puts them.
namespace key {
constexpr const char *FormatVersion = "format_version";
constexpr const char *Model = "model";
constexpr const char *Target = "target";
constexpr const char *Precision = "precision";
constexpr const char *MemoryFormat = "memory_format";
constexpr const char *InputFormat = "input_format";
constexpr const char *Library = "library";
constexpr const char *Entry = "entry";
constexpr const char *ArenaBytes = "arena_bytes";
constexpr const char *PeakLiveBytes = "peak_live_bytes";
constexpr const char *WeightsBytes = "weights_bytes";
constexpr const char *WeightsSource = "weights_source";
constexpr const char *Parameters = "parameters";
constexpr const char *Inputs = "inputs";
constexpr const char *Outputs = "outputs";
constexpr const char *Nodes = "nodes";
// The keys of a tensor; "offset" and "bytes" for parameters only.
constexpr const char *Name = "name";
constexpr const char *DType = "dtype";
constexpr const char *Shape = "shape";
constexpr const char *Strides = "strides";
constexpr const char *Offset = "offset";
constexpr const char *Bytes = "bytes";
constexpr const char *Init = "init";
constexpr const char *Updated = "updated";
/// The one value of "init".
constexpr const char *InitZeros = "zeros";
} // namespace key

} // namespace

//===----------------------------------------------------------------------===//
// The reader
//===----------------------------------------------------------------------===//

namespace {

/// The members of one JSON object, checked against the keys it may have.
using Members = std::map<std::string, const Value *>;

/// Walks a manifest document, keeping the first error.
class ManifestReader {
public:
  explicit ManifestReader(const std::string &Path) : Path(Path) {}

  /// The first error, with the path in front; empty when none.
  const std::string &error() const { return Error; }

  /// Records "<path>: <where>: <what>" unless an error is already recorded.
  /// Returns false so callers can `return fail(...)`.
  bool fail(const std::string &Where, const std::string &What) {
    if (Error.empty())
      Error = Path + ": " + (Where.empty() ? "" : Where + ": ") + What;
    return false;
  }

  /// Collects the members of object \p V into \p Out. Every key of
  /// \p Required must be present; other keys must be in \p Optional.
  bool members(const Value &V, const std::string &Where,
               std::initializer_list<const char *> Required,
               std::initializer_list<const char *> Optional, Members &Out);

  std::optional<std::string> string(const Members &M, const char *Key,
                                    const std::string &Where);
  std::optional<int64_t> integer(const Members &M, const char *Key,
                                 const std::string &Where, int64_t Min);
  std::optional<std::vector<int64_t>>
  integers(const Members &M, const char *Key, const std::string &Where);
  std::optional<std::string> oneOf(const Members &M, const char *Key,
                                   const std::string &Where,
                                   std::initializer_list<const char *> Allowed);

  std::optional<TensorSpec> tensor(const Value &V, const std::string &Where,
                                   bool IsParameter);
  bool tensors(const Members &M, const char *Key, bool IsParameter,
               bool NonEmpty, std::vector<TensorSpec> &Out);

private:
  std::string Path;
  std::string Error;
};

std::string inQuotes(const std::string &Text) { return "'" + Text + "'"; }

std::string describe(const Value &V) {
  if (V.isString())
    return "the string \"" + V.Text + "\"";
  if (V.isNumber())
    return V.Text;
  return std::string("a") + (V.isArray() || V.isObject() ? "n " : " ") +
         io::json::kindName(V.K);
}

bool ManifestReader::members(const Value &V, const std::string &Where,
                             std::initializer_list<const char *> Required,
                             std::initializer_list<const char *> Optional,
                             Members &Out) {
  if (!V.isObject())
    return fail(Where, "expected an object, got " + describe(V));
  auto Known = [&](const std::string &Key) {
    for (const char *K : Required)
      if (Key == K)
        return true;
    for (const char *K : Optional)
      if (Key == K)
        return true;
    return false;
  };
  for (const auto &[Key, Member] : V.Members) {
    if (!Known(Key)) {
      std::string List;
      for (const char *K : Required)
        List += (List.empty() ? "" : ", ") + std::string(K);
      for (const char *K : Optional)
        List += (List.empty() ? "" : ", ") + std::string(K);
      return fail(Where, "unknown field " + inQuotes(Key) + " (expected " +
                             List + ")");
    }
    if (!Out.emplace(Key, &Member).second)
      return fail(Where, "duplicate field " + inQuotes(Key));
  }
  for (const char *Key : Required)
    if (!Out.count(Key))
      return fail(Where, "missing field " + inQuotes(Key));
  return true;
}

std::string fieldWhere(const std::string &Where, const char *Key) {
  return Where.empty() ? inQuotes(Key) : Where + ": " + inQuotes(Key);
}

std::optional<std::string> ManifestReader::string(const Members &M,
                                                  const char *Key,
                                                  const std::string &Where) {
  const Value &V = *M.at(Key);
  if (!V.isString()) {
    fail(fieldWhere(Where, Key), "expected a string, got " + describe(V));
    return std::nullopt;
  }
  if (V.Text.empty()) {
    fail(fieldWhere(Where, Key), "must not be empty");
    return std::nullopt;
  }
  return V.Text;
}

std::optional<int64_t> ManifestReader::integer(const Members &M,
                                               const char *Key,
                                               const std::string &Where,
                                               int64_t Min) {
  const Value &V = *M.at(Key);
  std::optional<int64_t> N = io::json::asInt64(V);
  if (!N || *N < Min) {
    fail(fieldWhere(Where, Key),
         std::string("expected ") +
             (Min == 0 ? "a non-negative integer" : "an integer") + ", got " +
             describe(V));
    return std::nullopt;
  }
  return N;
}

std::optional<std::vector<int64_t>>
ManifestReader::integers(const Members &M, const char *Key,
                         const std::string &Where) {
  const Value &V = *M.at(Key);
  if (!V.isArray()) {
    fail(fieldWhere(Where, Key),
         "expected an array of non-negative integers, got " + describe(V));
    return std::nullopt;
  }
  std::vector<int64_t> Out;
  for (size_t I = 0; I < V.Elements.size(); ++I) {
    std::optional<int64_t> N = io::json::asInt64(V.Elements[I]);
    if (!N || *N < 0) {
      fail(fieldWhere(Where, Key), "element " + std::to_string(I) +
                                       " must be a non-negative integer, got " +
                                       describe(V.Elements[I]));
      return std::nullopt;
    }
    Out.push_back(*N);
  }
  return Out;
}

std::optional<std::string>
ManifestReader::oneOf(const Members &M, const char *Key,
                      const std::string &Where,
                      std::initializer_list<const char *> Allowed) {
  std::optional<std::string> Text = string(M, Key, Where);
  if (!Text)
    return std::nullopt;
  std::string List;
  for (const char *A : Allowed) {
    if (*Text == A)
      return Text;
    List += (List.empty() ? "" : ", ") + std::string(A);
  }
  fail(fieldWhere(Where, Key), inQuotes(*Text) + " is not one of " + List);
  return std::nullopt;
}

/// a * b + c for non-negative operands, or std::nullopt on overflow.
std::optional<int64_t> mulAdd(int64_t A, int64_t B, int64_t C) {
  int64_t Product = 0, Sum = 0;
  if (__builtin_mul_overflow(A, B, &Product) ||
      __builtin_add_overflow(Product, C, &Sum))
    return std::nullopt;
  return Sum;
}

std::optional<TensorSpec> ManifestReader::tensor(const Value &V,
                                                 const std::string &Index,
                                                 bool IsParameter) {
  Members M;
  bool Ok =
      IsParameter
          ? members(V, Index,
                    {key::Name, key::DType, key::Shape, key::Strides,
                     key::Offset, key::Bytes},
                    {key::Init, key::Updated}, M)
          : members(V, Index, {key::Name, key::DType, key::Shape, key::Strides},
                    {}, M);
  if (!Ok)
    return std::nullopt;
  TensorSpec T;
  std::optional<std::string> Name = string(M, key::Name, Index);
  if (!Name)
    return std::nullopt;
  T.Name = *Name;
  std::string Where = Index + " (" + T.Name + ")";

  std::optional<std::string> DTypeName = string(M, key::DType, Where);
  if (!DTypeName)
    return std::nullopt;
  std::optional<ElementType> Type = parseElementType(*DTypeName);
  if (!Type) {
    fail(fieldWhere(Where, key::DType),
         inQuotes(*DTypeName) + " is not one of f32, f16, bf16, i64");
    return std::nullopt;
  }
  T.Type = *Type;
  int64_t ElementBytes = static_cast<int64_t>(elementSize(T.Type));

  std::optional<std::vector<int64_t>> Shape = integers(M, key::Shape, Where);
  if (!Shape)
    return std::nullopt;
  std::optional<std::vector<int64_t>> Strides =
      integers(M, key::Strides, Where);
  if (!Strides)
    return std::nullopt;
  T.Shape = *Shape;
  T.Strides = *Strides;
  if (T.Shape.size() > MaxTensorRank) {
    fail(fieldWhere(Where, key::Shape),
         "rank " + std::to_string(T.Shape.size()) +
             " is above the largest supported rank " +
             std::to_string(MaxTensorRank));
    return std::nullopt;
  }
  if (T.Strides.size() != T.Shape.size()) {
    fail(Where, inQuotes(key::Strides) + " " + formatDims(T.Strides) + " has " +
                    std::to_string(T.Strides.size()) + " entries, " +
                    inQuotes(key::Shape) + " " + formatDims(T.Shape) + " has " +
                    std::to_string(T.Shape.size()));
    return std::nullopt;
  }
  if (!io::numElements(T.Shape)) {
    fail(fieldWhere(Where, key::Shape),
         formatDims(T.Shape) + " has more elements than fit in 64 bits");
    return std::nullopt;
  }

  // The extent, with overflow checks, and no two elements at one address:
  // sorted by stride, each dimension must step over everything spanned by
  // the dimensions with smaller strides (size-1 dimensions do not count).
  std::vector<std::pair<int64_t, int64_t>> Dims; // (stride, size)
  bool Empty = false;
  for (size_t D = 0; D < T.Shape.size(); ++D) {
    if (T.Shape[D] == 0)
      Empty = true;
    else if (T.Shape[D] > 1)
      Dims.push_back({T.Strides[D], T.Shape[D]});
  }
  int64_t Last = 0; // The largest element offset, in elements.
  if (!Empty) {
    std::sort(Dims.begin(), Dims.end());
    for (auto [Stride, Size] : Dims) {
      if (Stride <= Last) {
        fail(Where, "strides " + formatDims(T.Strides) +
                        " map two elements "
                        "of shape " +
                        formatDims(T.Shape) + " to the same address");
        return std::nullopt;
      }
      std::optional<int64_t> Next = mulAdd(Size - 1, Stride, Last);
      if (!Next) {
        fail(Where, "strides " + formatDims(T.Strides) +
                        " span more bytes than fit in 64 bits");
        return std::nullopt;
      }
      Last = *Next;
    }
    if (!mulAdd(Last + 1, ElementBytes, 0)) {
      fail(Where, "strides " + formatDims(T.Strides) +
                      " span more bytes than fit in 64 bits");
      return std::nullopt;
    }
  }
  int64_t Extent = T.extentBytes();

  if (!IsParameter) {
    T.Bytes = Extent;
    return T;
  }
  std::optional<int64_t> Offset = integer(M, key::Offset, Where, 0);
  if (!Offset)
    return std::nullopt;
  std::optional<int64_t> Bytes = integer(M, key::Bytes, Where, 0);
  if (!Bytes)
    return std::nullopt;
  T.Offset = *Offset;
  T.Bytes = *Bytes;
  if (T.Offset % ElementBytes != 0) {
    fail(fieldWhere(Where, key::Offset),
         std::to_string(T.Offset) + " is not a multiple of the element size " +
             std::to_string(ElementBytes));
    return std::nullopt;
  }
  if (T.Bytes < Extent) {
    fail(fieldWhere(Where, key::Bytes),
         std::to_string(T.Bytes) + " is less than the " +
             std::to_string(Extent) + " bytes that shape " +
             formatDims(T.Shape) + " with strides " + formatDims(T.Strides) +
             " spans");
    return std::nullopt;
  }
  if (!mulAdd(1, T.Offset, T.Bytes)) {
    fail(Where, "offset + bytes overflows");
    return std::nullopt;
  }
  if (M.count(key::Init)) {
    std::optional<std::string> Init = string(M, key::Init, Where);
    if (!Init)
      return std::nullopt;
    if (*Init != key::InitZeros) {
      fail(fieldWhere(Where, key::Init),
           inQuotes(*Init) + " is not " + inQuotes(key::InitZeros) +
               " (the only initialisation a manifest names)");
      return std::nullopt;
    }
    T.ZeroInit = true;
  }
  if (M.count(key::Updated)) {
    const Value &Flag = *M.at(key::Updated);
    if (Flag.K != Value::Kind::Bool) {
      fail(fieldWhere(Where, key::Updated),
           "expected true or false, got " + describe(Flag));
      return std::nullopt;
    }
    T.Updated = Flag.Bool;
  }
  return T;
}

bool ManifestReader::tensors(const Members &M, const char *Key,
                             bool IsParameter, bool NonEmpty,
                             std::vector<TensorSpec> &Out) {
  const Value &V = *M.at(Key);
  if (!V.isArray())
    return fail(inQuotes(Key), "expected an array, got " + describe(V));
  if (NonEmpty && V.Elements.empty())
    return fail(inQuotes(Key), "must not be empty");
  std::set<std::string> Names;
  for (size_t I = 0; I < V.Elements.size(); ++I) {
    std::string Where = std::string(Key) + "[" + std::to_string(I) + "]";
    std::optional<TensorSpec> T = tensor(V.Elements[I], Where, IsParameter);
    if (!T)
      return false;
    if (!Names.insert(T->Name).second)
      return fail(Where, "duplicate name " + inQuotes(T->Name) + " in '" +
                             std::string(Key) + "'");
    Out.push_back(std::move(*T));
  }
  return true;
}

bool isIdentifier(const std::string &Name) {
  if (Name.empty() || (Name[0] >= '0' && Name[0] <= '9'))
    return false;
  for (char C : Name)
    if (!(C == '_' || (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
          (C >= '0' && C <= '9')))
      return false;
  return true;
}

std::string directoryOf(const std::string &Path) {
  size_t Slash = Path.find_last_of('/');
  if (Slash == std::string::npos)
    return ".";
  if (Slash == 0)
    return "/";
  return Path.substr(0, Slash);
}

} // namespace

io::Result<Manifest> parseManifest(std::string_view Text,
                                   const std::string &Path) {
  Manifest Out;
  Out.Path = Path;
  Out.Dir = directoryOf(Path);
  ManifestReader R(Path);

  std::string JsonError;
  std::optional<Value> Doc = io::json::parse(Text, JsonError);
  if (!Doc)
    return Failure{Path + ": not valid JSON: " + JsonError};
  if (!Doc->isObject())
    return Failure{Path + ": expected a JSON object, got " + describe(*Doc)};

  // The version first: a newer manifest should say so, not fail on a field
  // this reader has never heard of.
  const Value *Version = nullptr;
  for (const auto &[Key, V] : Doc->Members)
    if (Key == key::FormatVersion)
      Version = &V;
  if (!Version)
    return Failure{Path + ": missing field " + inQuotes(key::FormatVersion)};
  std::optional<int64_t> VersionNumber = io::json::asInt64(*Version);
  if (!VersionNumber)
    return Failure{Path + ": " + inQuotes(key::FormatVersion) +
                   ": expected an integer, got " + describe(*Version)};
  if (*VersionNumber != ManifestFormatVersion)
    return Failure{Path + ": " + inQuotes(key::FormatVersion) + " is " +
                   std::to_string(*VersionNumber) + "; this loader reads " +
                   std::to_string(ManifestFormatVersion) +
                   " (recompile the model with a matching memfmt-compile)"};

  Members M;
  if (!R.members(*Doc, "",
                 {key::FormatVersion, key::Model, key::Target, key::Precision,
                  key::MemoryFormat, key::InputFormat, key::Library, key::Entry,
                  key::ArenaBytes, key::WeightsBytes, key::WeightsSource,
                  key::Parameters, key::Inputs, key::Outputs, key::Nodes},
                 {key::PeakLiveBytes}, M))
    return Failure{R.error()};

  auto Check = [&](auto &&Opt, auto &Field) {
    if (!Opt)
      return false;
    Field = *Opt;
    return true;
  };
  bool Ok =
      Check(R.string(M, key::Model, ""), Out.Model) &&
      Check(R.oneOf(M, key::Target, "", {"cpu", "cuda"}), Out.Target) &&
      Check(R.oneOf(M, key::Precision, "", {"f32", "f16", "bf16"}),
            Out.Precision) &&
      Check(R.oneOf(M, key::MemoryFormat, "", {"channels-last", "contiguous"}),
            Out.MemoryFormat) &&
      Check(R.oneOf(M, key::InputFormat, "", {"contiguous", "channels-last"}),
            Out.InputFormat) &&
      Check(R.string(M, key::Library, ""), Out.Library) &&
      Check(R.string(M, key::Entry, ""), Out.Entry) &&
      Check(R.integer(M, key::ArenaBytes, "", 0), Out.ArenaBytes) &&
      Check(R.integer(M, key::WeightsBytes, "", 0), Out.WeightsBytes);
  if (!Ok)
    return Failure{R.error()};
  if (!isIdentifier(Out.Entry))
    return Failure{Path + ": " + inQuotes(key::Entry) + ": " +
                   inQuotes(Out.Entry) + " is not a C identifier"};
  Out.LibraryPath = joinPath(Out.Dir, Out.Library);

  Out.PeakLiveBytes = Out.ArenaBytes;
  if (M.count(key::PeakLiveBytes)) {
    std::optional<int64_t> Peak = R.integer(M, key::PeakLiveBytes, "", 0);
    if (!Peak)
      return Failure{R.error()};
    if (*Peak > Out.ArenaBytes)
      return Failure{Path + ": " + inQuotes(key::PeakLiveBytes) + " (" +
                     std::to_string(*Peak) + ") is more than " +
                     inQuotes(key::ArenaBytes) + " (" +
                     std::to_string(Out.ArenaBytes) + ")"};
    Out.PeakLiveBytes = *Peak;
  }

  std::optional<std::string> SourceText = R.string(M, key::WeightsSource, "");
  if (!SourceText)
    return Failure{R.error()};
  io::Result<WeightsSource> Source =
      parseWeightsSource(*SourceText, Out.Dir, /*AllowBarePath=*/false);
  if (!Source)
    return Failure{Path + ": " + inQuotes(key::WeightsSource) + ": " +
                   Source.error()};
  Out.Weights = *Source;

  if (!R.tensors(M, key::Parameters, /*IsParameter=*/true, /*NonEmpty=*/false,
                 Out.Parameters) ||
      // A model may have no inputs (an ONNX graph of constants).
      !R.tensors(M, key::Inputs, false, /*NonEmpty=*/false, Out.Inputs) ||
      !R.tensors(M, key::Outputs, false, /*NonEmpty=*/true, Out.Outputs))
    return Failure{R.error()};

  const Value &Nodes = *M.at(key::Nodes);
  if (!Nodes.isArray())
    return Failure{Path + ": " + inQuotes(key::Nodes) +
                   ": expected an array of strings, got " + describe(Nodes)};
  for (size_t I = 0; I < Nodes.Elements.size(); ++I) {
    if (!Nodes.Elements[I].isString())
      return Failure{Path + ": " + inQuotes(key::Nodes) + ": element " +
                     std::to_string(I) + " must be a string, got " +
                     describe(Nodes.Elements[I])};
    Out.Nodes.push_back(Nodes.Elements[I].Text);
  }

  // Parameters lie inside the blob and do not overlap.
  std::vector<const TensorSpec *> ByOffset;
  for (size_t I = 0; I < Out.Parameters.size(); ++I) {
    const TensorSpec &P = Out.Parameters[I];
    if (P.Offset + P.Bytes > Out.WeightsBytes)
      return Failure{Path + ": parameters[" + std::to_string(I) + "] (" +
                     P.Name + "): bytes [" + std::to_string(P.Offset) + ", " +
                     std::to_string(P.Offset + P.Bytes) + ") end past " +
                     inQuotes(key::WeightsBytes) + " (" +
                     std::to_string(Out.WeightsBytes) + ")"};
    if (P.Bytes > 0)
      ByOffset.push_back(&P);
  }
  std::sort(ByOffset.begin(), ByOffset.end(),
            [](const TensorSpec *A, const TensorSpec *B) {
              return A->Offset < B->Offset;
            });
  for (size_t I = 1; I < ByOffset.size(); ++I) {
    const TensorSpec &A = *ByOffset[I - 1], &B = *ByOffset[I];
    if (A.Offset + A.Bytes > B.Offset)
      return Failure{Path + ": parameters " + inQuotes(A.Name) + " (bytes [" +
                     std::to_string(A.Offset) + ", " +
                     std::to_string(A.Offset + A.Bytes) + ")) and " +
                     inQuotes(B.Name) + " (bytes [" + std::to_string(B.Offset) +
                     ", " + std::to_string(B.Offset + B.Bytes) +
                     ")) overlap in the weights blob"};
  }
  return Out;
}

io::Result<Manifest> readManifest(const std::string &Dir) {
  std::string Clean = Dir;
  while (Clean.size() > 1 && Clean.back() == '/')
    Clean.pop_back();
  struct stat Info;
  if (::stat(Clean.c_str(), &Info) != 0)
    return Failure{Clean + ": " + std::strerror(errno) +
                   " (expected a model directory written by memfmt-compile)"};
  if (!S_ISDIR(Info.st_mode))
    return Failure{Clean + ": not a directory (expected a model directory "
                           "written by memfmt-compile)"};
  std::string Path = joinPath(Clean, "manifest.json");
  io::Result<std::vector<uint8_t>> Bytes = io::readFileBytes(Path);
  if (!Bytes)
    return Failure{Bytes.error() + " (is " + Clean +
                   " a model directory written by memfmt-compile?)"};
  return parseManifest(
      std::string_view(reinterpret_cast<const char *>(Bytes->data()),
                       Bytes->size()),
      Path);
}

//===----------------------------------------------------------------------===//
// The writer
//===----------------------------------------------------------------------===//

namespace {

using OrderedJson = nlohmann::ordered_json;

/// A scalar (or an empty container) as compact JSON; invalid UTF-8 in a
/// string becomes U+FFFD rather than an exception.
std::string scalarText(const OrderedJson &V) {
  return V.dump(/*indent=*/-1, ' ', /*ensure_ascii=*/false,
                OrderedJson::error_handler_t::replace);
}

bool isNumberList(const OrderedJson &V) {
  return std::all_of(V.begin(), V.end(),
                     [](const OrderedJson &E) { return E.is_number(); });
}

/// Appends \p V to \p Out indented by two spaces per level, one member or
/// element per line, except that a list of numbers stays on one line
/// ("shape": [64, 3, 7, 7]) so the file reads well.
void appendPretty(const OrderedJson &V, size_t Indent, std::string &Out) {
  if (V.empty() || !(V.is_object() || V.is_array())) {
    Out += scalarText(V);
    return;
  }
  if (V.is_array() && isNumberList(V)) {
    Out += "[";
    for (size_t I = 0; I < V.size(); ++I)
      Out += (I ? ", " : "") + scalarText(V[I]);
    Out += "]";
    return;
  }
  Out += V.is_object() ? "{\n" : "[\n";
  bool First = true;
  for (auto It = V.begin(); It != V.end(); ++It) {
    Out += First ? "" : ",\n";
    First = false;
    Out.append(Indent + 2, ' ');
    if (V.is_object())
      Out += scalarText(It.key()) + ": ";
    appendPretty(*It, Indent + 2, Out);
  }
  Out += "\n";
  Out.append(Indent, ' ');
  Out += V.is_object() ? "}" : "]";
}

OrderedJson encodeTensors(const std::vector<TensorSpec> &Tensors,
                          bool IsParameter) {
  OrderedJson List = OrderedJson::array();
  for (const TensorSpec &T : Tensors) {
    OrderedJson Tensor;
    Tensor[key::Name] = T.Name;
    Tensor[key::DType] = toString(T.Type);
    Tensor[key::Shape] = T.Shape;
    Tensor[key::Strides] = T.Strides;
    if (IsParameter) {
      Tensor[key::Offset] = T.Offset;
      Tensor[key::Bytes] = T.Bytes;
      if (T.ZeroInit)
        Tensor[key::Init] = key::InitZeros;
      if (T.Updated)
        Tensor[key::Updated] = true;
    }
    List.push_back(std::move(Tensor));
  }
  return List;
}

} // namespace

std::string encodeManifest(const Manifest &M) {
  OrderedJson Doc;
  Doc[key::FormatVersion] = M.FormatVersion;
  Doc[key::Model] = M.Model;
  Doc[key::Target] = M.Target;
  Doc[key::Precision] = M.Precision;
  Doc[key::MemoryFormat] = M.MemoryFormat;
  Doc[key::InputFormat] = M.InputFormat;
  Doc[key::Library] = M.Library;
  Doc[key::Entry] = M.Entry;
  Doc[key::ArenaBytes] = M.ArenaBytes;
  Doc[key::PeakLiveBytes] = M.PeakLiveBytes;
  Doc[key::WeightsBytes] = M.WeightsBytes;
  Doc[key::WeightsSource] = M.Weights.str();
  Doc[key::Parameters] = encodeTensors(M.Parameters, /*IsParameter=*/true);
  Doc[key::Inputs] = encodeTensors(M.Inputs, /*IsParameter=*/false);
  Doc[key::Outputs] = encodeTensors(M.Outputs, /*IsParameter=*/false);
  Doc[key::Nodes] = M.Nodes;
  std::string Text;
  appendPretty(Doc, 0, Text);
  return Text + "\n";
}

io::Status writeManifest(const Manifest &M, const std::string &Path) {
  std::string Text = encodeManifest(M);
  return io::writeFileBytes(Path, Text.data(), Text.size());
}

} // namespace memfmt::loader
