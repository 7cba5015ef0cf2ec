//===- SafeTensors.cpp - Reading and writing .safetensors files -----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The reader maps the file (POSIX mmap; elsewhere it reads it into memory),
// parses the JSON header with the io library's strict reader (Json.h, over
// nlohmann/json), checks every entry, then sorts the tensors by offset to
// check that they tile the data section. The writer builds the compact
// header the reference writer emits, with nlohmann's ordered_json.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/io/SafeTensors.h"
#include "Json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <tuple>
#include <unordered_set>

#if defined(__unix__) || defined(__APPLE__)
#define MEMFMT_IO_HAVE_MMAP 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace memfmt::io {

namespace {

constexpr char MetadataKey[] = "__metadata__";
/// The reference implementation's limit on the header size.
constexpr uint64_t MaxHeaderSize = 100000000;

/// \p Name in quotes for messages, with unprintable bytes as \xNN.
std::string quotedName(std::string_view Name) {
  static const char Hex[] = "0123456789abcdef";
  std::string Out = "'";
  for (char C : Name) {
    auto U = static_cast<unsigned char>(C);
    if (U < 0x20 || U == 0x7F) {
      Out += "\\x";
      Out += Hex[U >> 4];
      Out += Hex[U & 15];
    } else {
      Out += C;
    }
  }
  return Out + "'";
}

/// "an object", "a string", ... for "found ..." in messages.
std::string describe(json::Value::Kind K) {
  std::string Name = json::kindName(K);
  if (K == json::Value::Kind::Null)
    return Name;
  return (K == json::Value::Kind::Array || K == json::Value::Kind::Object
              ? "an "
              : "a ") +
         Name;
}

std::string formatOffsets(int64_t Begin, int64_t End) {
  return "[" + std::to_string(Begin) + ", " + std::to_string(End) + "]";
}

/// A tensor entry of the header while the file is validated.
struct Entry {
  TensorView View;
  int64_t Begin = 0;
  int64_t End = 0;
};

/// Checks the header entry \p Info of tensor \p Name against a data section
/// of \p DataSize bytes; fills \p Out or returns the problem (without the
/// file and tensor prefix).
std::string checkEntry(const json::Value &Info, int64_t DataSize, Entry &Out) {
  if (!Info.isObject())
    return std::string("expected an object {\"dtype\", \"shape\", "
                       "\"data_offsets\"}, found ") +
           describe(Info.K);
  const json::Value *DTypeValue = nullptr, *ShapeValue = nullptr,
                    *OffsetsValue = nullptr;
  for (const auto &[Key, Value] : Info.Members) {
    const json::Value **Slot = Key == "dtype"          ? &DTypeValue
                               : Key == "shape"        ? &ShapeValue
                               : Key == "data_offsets" ? &OffsetsValue
                                                       : nullptr;
    if (!Slot)
      return "unexpected key " + quotedName(Key);
    if (*Slot)
      return "duplicate key " + quotedName(Key);
    *Slot = &Value;
  }
  if (!DTypeValue)
    return "missing \"dtype\"";
  if (!ShapeValue)
    return "missing \"shape\"";
  if (!OffsetsValue)
    return "missing \"data_offsets\"";

  if (!DTypeValue->isString())
    return "\"dtype\" must be a string, found " + describe(DTypeValue->K);
  std::optional<DType> Type = parseDTypeName(DTypeValue->Text);
  if (!Type)
    return "unknown dtype " + quotedName(DTypeValue->Text);
  Out.View.Type = *Type;

  if (!ShapeValue->isArray())
    return "\"shape\" must be an array of non-negative integers";
  for (const json::Value &Dim : ShapeValue->Elements) {
    std::optional<int64_t> D = json::asInt64(Dim);
    if (!D || *D < 0)
      return "\"shape\" must be an array of non-negative integers, found " +
             (Dim.isNumber() ? Dim.Text : describe(Dim.K));
    Out.View.Shape.push_back(*D);
  }

  if (!OffsetsValue->isArray() || OffsetsValue->Elements.size() != 2)
    return "\"data_offsets\" must be an array of two non-negative integers "
           "[begin, end]";
  std::optional<int64_t> Begin = json::asInt64(OffsetsValue->Elements[0]);
  std::optional<int64_t> End = json::asInt64(OffsetsValue->Elements[1]);
  if (!Begin || !End || *Begin < 0 || *End < 0)
    return "\"data_offsets\" must be an array of two non-negative integers "
           "[begin, end] (that fit in 64 bits)";
  Out.Begin = *Begin;
  Out.End = *End;
  std::string Offsets = "data_offsets " + formatOffsets(*Begin, *End);
  if (*Begin > *End)
    return Offsets + " are reversed (begin > end)";
  if (*End > DataSize)
    return Offsets + " run past the end of the data section (" +
           std::to_string(DataSize) + " bytes)";
  std::string Declared =
      "shape " + formatShape(Out.View.Shape) + " x " + dtypeName(*Type);
  std::optional<int64_t> Expected = byteSize(*Type, Out.View.Shape);
  if (!Expected)
    return Declared + " overflows 64 bits";
  if (*Expected != *End - *Begin)
    return Offsets + " do not match " + Declared + " = " +
           std::to_string(*Expected) + " bytes";
  Out.View.NumBytes = static_cast<size_t>(*End - *Begin);
  return {};
}

} // namespace

//===----------------------------------------------------------------------===//
// SafeTensorsFile
//===----------------------------------------------------------------------===//

Result<SafeTensorsFile> SafeTensorsFile::open(const std::string &Path) {
#ifdef MEMFMT_IO_HAVE_MMAP
  SafeTensorsFile File;
  File.Path = Path;
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return Failure{Path + ": cannot open: " + std::strerror(errno)};
  struct stat St;
  if (::fstat(Fd, &St) != 0) {
    int SavedErrno = errno;
    ::close(Fd);
    return Failure{Path + ": cannot stat: " + std::strerror(SavedErrno)};
  }
  if (!S_ISREG(St.st_mode)) {
    ::close(Fd);
    return Failure{Path + ": not a regular file"};
  }
  File.Size = static_cast<size_t>(St.st_size);
  if (File.Size > 0) {
    void *Map = ::mmap(nullptr, File.Size, PROT_READ, MAP_PRIVATE, Fd, 0);
    if (Map == MAP_FAILED) {
      int SavedErrno = errno;
      ::close(Fd);
      return Failure{Path + ": cannot map: " + std::strerror(SavedErrno)};
    }
    File.Base = static_cast<const uint8_t *>(Map);
    File.Mapped = true;
  }
  ::close(Fd);
  if (Status S = File.init(); !S)
    return Failure{S.error()};
  return File;
#else
  Result<std::vector<uint8_t>> Bytes = readFileBytes(Path);
  if (!Bytes)
    return Failure{Bytes.error()};
  return parse(Bytes.take(), Path);
#endif
}

Result<SafeTensorsFile> SafeTensorsFile::parse(std::vector<uint8_t> Bytes,
                                               std::string Name) {
  SafeTensorsFile File;
  File.Path = std::move(Name);
  File.Owned = std::move(Bytes);
  File.Base = File.Owned.data();
  File.Size = File.Owned.size();
  if (Status S = File.init(); !S)
    return Failure{S.error()};
  return File;
}

SafeTensorsFile::SafeTensorsFile(SafeTensorsFile &&Other) noexcept {
  *this = std::move(Other);
}

SafeTensorsFile &SafeTensorsFile::operator=(SafeTensorsFile &&Other) noexcept {
  if (this == &Other)
    return *this;
  release();
  Path = std::move(Other.Path);
  Base = Other.Base;
  Size = Other.Size;
  Mapped = Other.Mapped;
  Owned = std::move(Other.Owned); // Moving keeps the buffer, so Base holds.
  Tensors = std::move(Other.Tensors);
  Index = std::move(Other.Index);
  Metadata = std::move(Other.Metadata);
  Other.Base = nullptr;
  Other.Size = 0;
  Other.Mapped = false;
  Other.Tensors.clear();
  Other.Index.clear();
  return *this;
}

SafeTensorsFile::~SafeTensorsFile() { release(); }

void SafeTensorsFile::release() {
#ifdef MEMFMT_IO_HAVE_MMAP
  if (Mapped && Base)
    ::munmap(const_cast<uint8_t *>(Base), Size);
#endif
  Base = nullptr;
  Size = 0;
  Mapped = false;
}

std::vector<std::string> SafeTensorsFile::names() const {
  std::vector<std::string> Names;
  Names.reserve(Tensors.size());
  for (const TensorView &T : Tensors)
    Names.push_back(T.Name);
  return Names;
}

const TensorView *SafeTensorsFile::find(std::string_view Name) const {
  auto It = Index.find(std::string(Name));
  return It == Index.end() ? nullptr : &Tensors[It->second];
}

Result<TensorView> SafeTensorsFile::get(std::string_view Name) const {
  if (const TensorView *T = find(Name))
    return *T;
  return Failure{Path + ": no tensor named " + quotedName(Name) +
                 " (the file has " + std::to_string(Tensors.size()) +
                 " tensors)"};
}

Status SafeTensorsFile::init() {
  auto fail = [&](const std::string &What) {
    return Failure{Path + ": " + What};
  };
  if (Size < 8)
    return fail("too short to be a .safetensors file (" + std::to_string(Size) +
                " bytes; the header size alone takes 8)");
  uint64_t HeaderSize = 0;
  for (int I = 0; I < 8; ++I)
    HeaderSize |= static_cast<uint64_t>(Base[I]) << (8 * I);
  if (HeaderSize > Size - 8)
    return fail("header size " + std::to_string(HeaderSize) +
                " runs past the end of the file (" + std::to_string(Size) +
                " bytes)");
  if (HeaderSize > MaxHeaderSize)
    return fail("header size " + std::to_string(HeaderSize) +
                " exceeds the format's limit of " +
                std::to_string(MaxHeaderSize) + " bytes");
  std::string_view HeaderText(reinterpret_cast<const char *>(Base + 8),
                              static_cast<size_t>(HeaderSize));
  if (HeaderText.empty() || HeaderText.front() != '{')
    return fail("the header does not start with '{'");
  std::string JsonError;
  std::optional<json::Value> Header = json::parse(HeaderText, JsonError);
  if (!Header)
    return fail("invalid JSON header: " + JsonError);
  if (!Header->isObject())
    return fail("the header is not a JSON object");

  const uint8_t *Data = Base + 8 + HeaderSize;
  auto DataSize = static_cast<int64_t>(Size - 8 - HeaderSize);
  bool SawMetadata = false;
  std::vector<Entry> Entries;
  for (const auto &[Key, Value] : Header->Members) {
    if (Key == MetadataKey) {
      if (SawMetadata)
        return fail("duplicate \"__metadata__\"");
      SawMetadata = true;
      if (Value.isNull())
        continue;
      if (!Value.isObject())
        return fail("\"__metadata__\" must be an object of strings, found " +
                    describe(Value.K));
      std::unordered_set<std::string> Seen;
      for (const auto &[MetaKey, MetaValue] : Value.Members) {
        if (!MetaValue.isString())
          return fail("\"__metadata__\" entry " + quotedName(MetaKey) +
                      " must be a string, found " + describe(MetaValue.K));
        if (!Seen.insert(MetaKey).second)
          return fail("duplicate \"__metadata__\" entry " +
                      quotedName(MetaKey));
        Metadata.emplace_back(MetaKey, MetaValue.Text);
      }
      continue;
    }
    if (Index.count(Key))
      return fail("duplicate tensor name " + quotedName(Key));
    Entry E;
    E.View.Name = Key;
    std::string Problem = checkEntry(Value, DataSize, E);
    if (!Problem.empty())
      return fail("tensor " + quotedName(Key) + ": " + Problem);
    E.View.Data = Data + E.Begin;
    Index.emplace(Key, Entries.size());
    Entries.push_back(std::move(E));
  }

  // The tensors must tile the data section: sorted by offsets, each begins
  // where the previous one ends and the last one ends at the end.
  std::vector<size_t> Order(Entries.size());
  std::iota(Order.begin(), Order.end(), size_t{0});
  // Ties keep header order (std::stable_sort would draw a deprecation
  // warning from libstdc++ 12 under recent clang).
  std::sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    return std::make_tuple(Entries[A].Begin, Entries[A].End, A) <
           std::make_tuple(Entries[B].Begin, Entries[B].End, B);
  });
  int64_t Covered = 0;
  const Entry *Last = nullptr; // The entry that ends at Covered.
  for (size_t I : Order) {
    const Entry &E = Entries[I];
    if (E.Begin < Covered)
      return fail("tensor " + quotedName(E.View.Name) + ": data_offsets " +
                  formatOffsets(E.Begin, E.End) + " overlap tensor " +
                  quotedName(Last->View.Name) + " (data_offsets " +
                  formatOffsets(Last->Begin, Last->End) + ")");
    if (E.Begin > Covered)
      return fail("bytes [" + std::to_string(Covered) + ", " +
                  std::to_string(E.Begin) +
                  ") of the data section belong to no tensor");
    if (E.End > Covered || !Last) {
      Covered = E.End;
      Last = &E;
    }
  }
  if (Covered != DataSize)
    return fail("bytes [" + std::to_string(Covered) + ", " +
                std::to_string(DataSize) +
                ") of the data section belong to no tensor");

  Tensors.reserve(Entries.size());
  for (Entry &E : Entries)
    Tensors.push_back(std::move(E.View));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

Result<std::vector<uint8_t>>
encodeSafeTensors(const std::vector<TensorView> &Tensors,
                  const SafeTensorsMetadata &Metadata) {
  // The header is "{" key:entry, ... "}" with the metadata first; nlohmann
  // writes each key and entry (compact, strings escaped as serde_json does).
  // The strings were checked to be UTF-8 first, so no dump can meet invalid
  // UTF-8 (and throw).
  std::string Header = "{";
  auto append = [&](const std::string &Key, const nlohmann::ordered_json &V) {
    if (Header.size() > 1)
      Header += ',';
    Header += nlohmann::ordered_json(Key).dump(-1, ' ', /*ensure_ascii=*/false);
    Header += ':';
    Header += V.dump(-1, ' ', /*ensure_ascii=*/false);
  };
  if (!Metadata.empty()) {
    nlohmann::ordered_json Meta = nlohmann::ordered_json::object();
    std::unordered_set<std::string> Seen;
    for (const auto &[Key, Value] : Metadata) {
      if (!json::isValidUtf8(Key) || !json::isValidUtf8(Value))
        return Failure{"metadata entry " + quotedName(Key) +
                       " is not valid UTF-8"};
      if (!Seen.insert(Key).second)
        return Failure{"duplicate metadata entry " + quotedName(Key)};
      Meta[Key] = Value;
    }
    append(MetadataKey, Meta);
  }
  std::unordered_set<std::string> Names;
  uint64_t Offset = 0;
  for (const TensorView &T : Tensors) {
    std::string Prefix = "tensor " + quotedName(T.Name) + ": ";
    if (T.Name == MetadataKey)
      return Failure{Prefix + "the name is reserved for metadata"};
    if (!json::isValidUtf8(T.Name))
      return Failure{Prefix + "the name is not valid UTF-8"};
    if (!Names.insert(T.Name).second)
      return Failure{"duplicate tensor name " + quotedName(T.Name)};
    std::optional<int64_t> Expected = byteSize(T.Type, T.Shape);
    if (!Expected)
      return Failure{Prefix + "shape " + formatShape(T.Shape) +
                     " has a negative dimension or overflows"};
    if (static_cast<uint64_t>(*Expected) != T.NumBytes)
      return Failure{Prefix + "shape " + formatShape(T.Shape) + " x " +
                     dtypeName(T.Type) + " = " + std::to_string(*Expected) +
                     " bytes, but " + std::to_string(T.NumBytes) +
                     " bytes were given"};
    if (T.NumBytes && !T.Data)
      return Failure{Prefix + "no data"};
    nlohmann::ordered_json Entry = nlohmann::ordered_json::object();
    Entry["dtype"] = dtypeName(T.Type);
    Entry["shape"] = T.Shape;
    Entry["data_offsets"] = {Offset, Offset + T.NumBytes};
    append(T.Name, Entry);
    Offset += T.NumBytes;
  }
  Header += '}';
  Header.append((8 - Header.size() % 8) % 8, ' ');

  std::vector<uint8_t> Out;
  Out.reserve(8 + Header.size() + Offset);
  for (int I = 0; I < 8; ++I)
    Out.push_back(static_cast<uint8_t>(uint64_t{Header.size()} >> (8 * I)));
  Out.insert(Out.end(), Header.begin(), Header.end());
  for (const TensorView &T : Tensors)
    if (T.NumBytes)
      Out.insert(Out.end(), T.Data, T.Data + T.NumBytes);
  return Out;
}

Status writeSafeTensors(const std::string &Path,
                        const std::vector<TensorView> &Tensors,
                        const SafeTensorsMetadata &Metadata) {
  Result<std::vector<uint8_t>> Bytes = encodeSafeTensors(Tensors, Metadata);
  if (!Bytes)
    return Failure{Path + ": " + Bytes.error()};
  return writeFileBytes(Path, Bytes->data(), Bytes->size());
}

} // namespace memfmt::io
