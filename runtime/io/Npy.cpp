//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The .npy reader validates the preamble, then parses the header with a small
// parser for the subset of Python literal syntax that numpy writes (a dict of
// strings, booleans and tuples of integers), then checks the data size. The
// writer reproduces numpy.lib.format._write_array_header: sorted keys, the
// repr of the shape tuple, spare spaces for growing the first axis, and
// padding so the data starts at a multiple of 64 bytes.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/io/Npy.h"

#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

namespace memfmt::io {

namespace {

constexpr char Magic[] = "\x93NUMPY";
constexpr size_t MagicSize = 6;
constexpr size_t ArrayAlign = 64;       // numpy's ARRAY_ALIGN.
constexpr size_t GrowthAxisDigits = 21; // numpy's GROWTH_AXIS_MAX_DIGITS.

struct DescrEntry {
  const char *Descr;
  DType Type;
};

constexpr DescrEntry DescrTable[] = {
    {"<f8", DType::F64}, {"<f4", DType::F32}, {"<f2", DType::F16},
    {"<i8", DType::I64}, {"<i4", DType::I32}, {"<i2", DType::I16},
    {"|i1", DType::I8},  {"<u8", DType::U64}, {"<u4", DType::U32},
    {"<u2", DType::U16}, {"|u1", DType::U8},  {"|b1", DType::Bool},
};

/// The parsed header dict; each field is set once its key has been seen.
struct NpyHeader {
  std::optional<std::string> Descr;
  std::optional<bool> FortranOrder;
  std::optional<std::vector<int64_t>> Shape;
};

/// Parses the header dict of a .npy file: the subset of Python literal
/// syntax numpy writes. Errors are "header ...: what" without the file name.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view Text) : Text(Text) {}

  bool parse(NpyHeader &Out, std::string &Error) {
    bool Ok = parseDict(Out);
    if (!Ok)
      Error = Message;
    return Ok;
  }

private:
  std::string_view Text;
  size_t Pos = 0;
  std::string Message;

  bool fail(const std::string &What) {
    Message = "malformed header at byte " + std::to_string(Pos) + ": " + What;
    return false;
  }

  char peek() const { return Pos < Text.size() ? Text[Pos] : '\0'; }

  void skipSpace() {
    while (Pos < Text.size() && (Text[Pos] == ' ' || Text[Pos] == '\t' ||
                                 Text[Pos] == '\n' || Text[Pos] == '\r'))
      ++Pos;
  }

  bool expect(char C, const char *What) {
    skipSpace();
    if (peek() != C)
      return fail(std::string("expected ") + What);
    ++Pos;
    return true;
  }

  bool parseString(std::string &Out) {
    skipSpace();
    char Quote = peek();
    if (Quote != '\'' && Quote != '"')
      return fail("expected a quoted string");
    ++Pos;
    size_t Start = Pos;
    while (Pos < Text.size() && Text[Pos] != Quote) {
      if (Text[Pos] == '\n')
        break;
      if (Text[Pos] == '\\')
        return fail("escapes in strings are not supported");
      ++Pos;
    }
    if (Pos >= Text.size() || Text[Pos] != Quote)
      return fail("unterminated string");
    Out = std::string(Text.substr(Start, Pos - Start));
    ++Pos;
    return true;
  }

  bool parseBool(bool &Out) {
    skipSpace();
    if (Text.substr(Pos, 4) == "True") {
      Pos += 4;
      Out = true;
    } else if (Text.substr(Pos, 5) == "False") {
      Pos += 5;
      Out = false;
    } else {
      return fail("'fortran_order' must be True or False");
    }
    return true;
  }

  bool parseInt(int64_t &Out) {
    skipSpace();
    bool Negative = peek() == '-';
    if (Negative)
      ++Pos;
    size_t Start = Pos;
    uint64_t Value = 0;
    while (peek() >= '0' && peek() <= '9') {
      auto D = static_cast<uint64_t>(peek() - '0');
      if (Value >
          (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - D) / 10)
        return fail("dimension does not fit in 64 bits");
      Value = Value * 10 + D;
      ++Pos;
    }
    if (Pos == Start)
      return fail("expected an integer dimension");
    if (Pos - Start > 1 && Text[Start] == '0')
      return fail("leading zero in a dimension");
    Out = Negative ? -static_cast<int64_t>(Value) : static_cast<int64_t>(Value);
    return true;
  }

  /// A tuple of integers: "()", "(3,)", "(2, 3)" or "(2, 3,)".
  bool parseShape(std::vector<int64_t> &Out) {
    if (!expect('(', "'(' to start the shape tuple"))
      return false;
    skipSpace();
    if (peek() == ')') {
      ++Pos;
      return true;
    }
    while (true) {
      int64_t Dim;
      if (!parseInt(Dim))
        return false;
      Out.push_back(Dim);
      skipSpace();
      if (peek() == ')') {
        if (Out.size() == 1)
          return fail("'(N)' is not a tuple; a 1-d shape is written '(N,)'");
        ++Pos;
        return true;
      }
      if (!expect(',', "',' or ')' in the shape tuple"))
        return false;
      skipSpace();
      if (peek() == ')') {
        ++Pos;
        return true;
      }
    }
  }

  bool parseDict(NpyHeader &Out) {
    if (!expect('{', "'{' to start the header dict"))
      return false;
    while (true) {
      skipSpace();
      if (peek() == '}') {
        ++Pos;
        break;
      }
      std::string Key;
      if (!parseString(Key))
        return false;
      if (!expect(':', "':' after a key"))
        return false;
      if (Key == "descr") {
        if (Out.Descr)
          return fail("duplicate key 'descr'");
        skipSpace();
        if (peek() == '[')
          return fail("structured dtypes (a list 'descr') are not supported");
        std::string Descr;
        if (!parseString(Descr))
          return false;
        Out.Descr = Descr;
      } else if (Key == "fortran_order") {
        if (Out.FortranOrder)
          return fail("duplicate key 'fortran_order'");
        bool Value;
        if (!parseBool(Value))
          return false;
        Out.FortranOrder = Value;
      } else if (Key == "shape") {
        if (Out.Shape)
          return fail("duplicate key 'shape'");
        std::vector<int64_t> Shape;
        if (!parseShape(Shape))
          return false;
        Out.Shape = std::move(Shape);
      } else {
        return fail("unexpected key '" + Key + "'");
      }
      skipSpace();
      if (peek() == ',') {
        ++Pos;
        continue;
      }
      if (peek() == '}') {
        ++Pos;
        break;
      }
      return fail("expected ',' or '}' in the header dict");
    }
    skipSpace();
    if (Pos != Text.size())
      return fail("unexpected text after the header dict");
    if (!Out.Descr)
      return fail("missing key 'descr'");
    if (!Out.FortranOrder)
      return fail("missing key 'fortran_order'");
    if (!Out.Shape)
      return fail("missing key 'shape'");
    return true;
  }
};

uint32_t readLE(const uint8_t *P, size_t Size) {
  uint32_t Value = 0;
  for (size_t I = 0; I < Size; ++I)
    Value |= static_cast<uint32_t>(P[I]) << (8 * I);
  return Value;
}

/// Python's repr of a shape tuple: "()", "(5,)", "(2, 3)".
std::string pythonShapeRepr(const std::vector<int64_t> &Shape) {
  std::string Out = "(";
  for (size_t I = 0; I < Shape.size(); ++I) {
    if (I)
      Out += ", ";
    Out += std::to_string(Shape[I]);
  }
  if (Shape.size() == 1)
    Out += ',';
  return Out + ")";
}

} // namespace

const char *npyDescr(DType Type) {
  for (const DescrEntry &E : DescrTable)
    if (E.Type == Type)
      return E.Descr;
  return nullptr;
}

Result<Tensor> parseNpy(const uint8_t *Bytes, size_t Size,
                        const std::string &Name) {
  auto fail = [&](const std::string &What) {
    return Failure{Name + ": " + What};
  };
  if (Size < MagicSize || std::memcmp(Bytes, Magic, MagicSize) != 0)
    return fail("not a .npy file (bad magic; expected \"\\x93NUMPY\")");
  if (Size < MagicSize + 2)
    return fail("truncated .npy preamble");
  unsigned Major = Bytes[MagicSize], Minor = Bytes[MagicSize + 1];
  if ((Major != 1 && Major != 2 && Major != 3) || Minor != 0)
    return fail("unsupported .npy format version " + std::to_string(Major) +
                "." + std::to_string(Minor) + " (expected 1.0, 2.0 or 3.0)");
  size_t LengthSize = Major == 1 ? 2 : 4;
  size_t Prefix = MagicSize + 2 + LengthSize;
  if (Size < Prefix)
    return fail("truncated .npy preamble");
  size_t HeaderLength = readLE(Bytes + MagicSize + 2, LengthSize);
  size_t DataStart = Prefix + HeaderLength;
  if (HeaderLength > Size - Prefix)
    return fail("header length " + std::to_string(HeaderLength) +
                " runs past the end of the file (" + std::to_string(Size) +
                " bytes)");
  std::string_view Header(reinterpret_cast<const char *>(Bytes + Prefix),
                          HeaderLength);
  if (Header.empty() || Header.back() != '\n')
    return fail("malformed header: it does not end with a newline");

  NpyHeader Dict;
  std::string Error;
  if (!HeaderParser(Header).parse(Dict, Error))
    return fail(Error);

  const std::string &Descr = *Dict.Descr;
  std::optional<DType> Type;
  for (const DescrEntry &E : DescrTable)
    if (Descr == E.Descr)
      Type = E.Type;
  if (!Type) {
    if (!Descr.empty() && Descr[0] == '>')
      return fail("big-endian data ('" + Descr +
                  "') is not supported; save a little-endian array "
                  "(a.astype(a.dtype.newbyteorder('<')))");
    return fail("unsupported dtype '" + Descr + "'");
  }
  if (*Dict.FortranOrder)
    return fail("Fortran-order (column-major) arrays are not supported; "
                "save np.ascontiguousarray(a)");

  Tensor T;
  T.Type = *Type;
  T.Shape = std::move(*Dict.Shape);
  for (int64_t Dim : T.Shape)
    if (Dim < 0)
      return fail("negative dimension in shape " + formatShape(T.Shape));
  std::optional<int64_t> Expected = byteSize(T.Type, T.Shape);
  if (!Expected)
    return fail("shape " + formatShape(T.Shape) + " x " + dtypeName(T.Type) +
                " overflows 64 bits");
  size_t Available = Size - DataStart;
  std::string Declared = "shape " + formatShape(T.Shape) + " x " +
                         dtypeName(T.Type) + " = " + std::to_string(*Expected) +
                         " bytes";
  if (static_cast<uint64_t>(*Expected) > Available)
    return fail("truncated: " + Declared + " but the file has " +
                std::to_string(Available) + " bytes of data");
  if (static_cast<uint64_t>(*Expected) < Available)
    return fail(std::to_string(Available - static_cast<size_t>(*Expected)) +
                " unexpected bytes after the data (" + Declared + ")");
  T.Data.assign(Bytes + DataStart, Bytes + Size);
  return T;
}

Result<Tensor> readNpy(const std::string &Path) {
  Result<std::vector<uint8_t>> Bytes = readFileBytes(Path);
  if (!Bytes)
    return Failure{Bytes.error()};
  return parseNpy(Bytes->data(), Bytes->size(), Path);
}

Result<std::vector<uint8_t>> encodeNpy(DType Type,
                                       const std::vector<int64_t> &Shape,
                                       const void *Data, size_t NumBytes) {
  const char *Descr = npyDescr(Type);
  if (!Descr)
    return Failure{std::string("cannot write ") + dtypeName(Type) +
                   " to .npy: NumPy has no such type"};
  std::optional<int64_t> Expected = byteSize(Type, Shape);
  if (!Expected)
    return Failure{"cannot write shape " + formatShape(Shape) +
                   " to .npy: negative dimension or size overflow"};
  if (static_cast<uint64_t>(*Expected) != NumBytes)
    return Failure{"cannot write to .npy: shape " + formatShape(Shape) + " x " +
                   dtypeName(Type) + " = " + std::to_string(*Expected) +
                   " bytes, but " + std::to_string(NumBytes) +
                   " bytes were given"};

  // As numpy.lib.format._write_array_header.
  std::string Header =
      std::string("{'descr': '") + Descr +
      "', 'fortran_order': False, 'shape': " + pythonShapeRepr(Shape) + ", }";
  if (!Shape.empty()) {
    size_t Digits = std::to_string(Shape[0]).size();
    if (Digits < GrowthAxisDigits)
      Header.append(GrowthAxisDigits - Digits, ' ');
  }
  // As numpy.lib.format._wrap_header: version 1.0 unless the length does not
  // fit in 16 bits. The padding is never empty.
  size_t HeaderLength = Header.size() + 1; // With the final '\n'.
  unsigned Major = 1;
  size_t LengthSize = 2;
  size_t Pad =
      ArrayAlign - (MagicSize + 2 + LengthSize + HeaderLength) % ArrayAlign;
  if (HeaderLength + Pad > 0xFFFF) {
    Major = 2;
    LengthSize = 4;
    Pad = ArrayAlign - (MagicSize + 2 + LengthSize + HeaderLength) % ArrayAlign;
  }
  Header.append(Pad, ' ');
  Header += '\n';

  std::vector<uint8_t> Out(Magic, Magic + MagicSize);
  Out.push_back(static_cast<uint8_t>(Major));
  Out.push_back(0);
  for (size_t I = 0; I < LengthSize; ++I)
    Out.push_back(static_cast<uint8_t>(Header.size() >> (8 * I)));
  Out.insert(Out.end(), Header.begin(), Header.end());
  const auto *Bytes = static_cast<const uint8_t *>(Data);
  if (NumBytes)
    Out.insert(Out.end(), Bytes, Bytes + NumBytes);
  return Out;
}

Status writeNpy(const std::string &Path, const Tensor &T) {
  Result<std::vector<uint8_t>> Bytes =
      encodeNpy(T.Type, T.Shape, T.Data.data(), T.Data.size());
  if (!Bytes)
    return Failure{Path + ": " + Bytes.error()};
  return writeFileBytes(Path, Bytes->data(), Bytes->size());
}

} // namespace memfmt::io
