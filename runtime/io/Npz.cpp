//===- Npz.cpp - Reading NumPy .npz archives ------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The zip reader behind parseNpz (PKWARE APPNOTE 6.3, the subset numpy's
// zipfile writes): find the end of central directory record by scanning
// back from the end of the file (it may be followed by a comment), follow
// the zip64 locator when a field is saturated, walk the central directory,
// take each entry's sizes and local header offset from it (and from its
// zip64 extra field), skip the entry's local header (name and extra field
// lengths come from there), then copy (stored) or raw-inflate (deflate,
// zlib) the data, check its size and CRC-32, and parse it as .npy.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/io/Npz.h"

#include "memfmt/runtime/io/Npy.h"

#include <zlib.h>

#include <cstring>
#include <limits>
#include <optional>
#include <vector>

namespace memfmt::io {

namespace {

constexpr uint32_t EndOfCentralDirSig = 0x06054b50;
constexpr uint32_t Zip64EndLocatorSig = 0x07064b50;
constexpr uint32_t Zip64EndSig = 0x06064b50;
constexpr uint32_t CentralHeaderSig = 0x02014b50;
constexpr uint32_t LocalHeaderSig = 0x04034b50;
constexpr size_t EndOfCentralDirSize = 22;
constexpr size_t Zip64EndLocatorSize = 20;
constexpr size_t Zip64EndSize = 56;
constexpr size_t CentralHeaderSize = 46;
constexpr size_t LocalHeaderSize = 30;
constexpr uint16_t Zip64ExtraId = 0x0001;
constexpr uint16_t MethodStored = 0;
constexpr uint16_t MethodDeflate = 8;

/// Little-endian reads from a byte range checked by the caller.
uint16_t le16(const uint8_t *P) { return uint16_t(P[0] | (P[1] << 8)); }
uint32_t le32(const uint8_t *P) {
  return uint32_t(le16(P)) | uint32_t(le16(P + 2)) << 16;
}
uint64_t le64(const uint8_t *P) {
  return uint64_t(le32(P)) | uint64_t(le32(P + 4)) << 32;
}

/// An entry of the central directory.
struct Entry {
  std::string Name;
  uint16_t Flags = 0;
  uint16_t Method = 0;
  uint32_t Crc = 0;
  uint64_t CompressedSize = 0;
  uint64_t Size = 0;
  uint64_t LocalOffset = 0;
};

class ZipReader {
public:
  ZipReader(const uint8_t *Bytes, size_t Size, const std::string &Name)
      : Bytes(Bytes), Size(Size), Name(Name) {}

  Result<NpzArrays> read();

private:
  Failure fail(const std::string &Message) const {
    return Failure{Name + ": " + Message};
  }
  bool fits(uint64_t Offset, uint64_t Length) const {
    return Offset <= Size && Length <= Size - Offset;
  }
  /// The entries' count and the central directory's offset and size.
  Status findCentralDirectory(uint64_t &Count, uint64_t &Offset,
                              uint64_t &Bytes);
  Status readEntry(uint64_t &At, Entry &E);
  Result<std::vector<uint8_t>> extract(const Entry &E);

  const uint8_t *Bytes;
  size_t Size;
  const std::string &Name;
};

Status ZipReader::findCentralDirectory(uint64_t &Count, uint64_t &Offset,
                                       uint64_t &DirBytes) {
  if (Size < EndOfCentralDirSize)
    return fail("not an .npz file: " + std::to_string(Size) +
                " bytes is too short for a zip archive");
  // The record is the last thing in the file but for a comment of at most
  // 65535 bytes.
  size_t Last = Size - EndOfCentralDirSize;
  size_t First = Last > 0xFFFF ? Last - 0xFFFF : 0;
  std::optional<size_t> End;
  for (size_t At = Last + 1; At-- > First;)
    if (le32(Bytes + At) == EndOfCentralDirSig) {
      End = At;
      break;
    }
  if (!End)
    return fail("not an .npz file: no zip end of central directory record "
                "(not a zip archive, or truncated)");
  const uint8_t *R = Bytes + *End;
  if (le16(R + 4) != 0 || le16(R + 6) != 0 || le16(R + 8) != le16(R + 10))
    return fail("zip archives split over several disks are not supported");
  Count = le16(R + 10);
  DirBytes = le32(R + 12);
  Offset = le32(R + 16);
  if (Count == 0xFFFF || DirBytes == 0xFFFFFFFF || Offset == 0xFFFFFFFF) {
    // Zip64: the locator sits just before the record.
    if (*End < Zip64EndLocatorSize ||
        le32(Bytes + *End - Zip64EndLocatorSize) != Zip64EndLocatorSig)
      return fail("the zip64 end of central directory locator is missing");
    uint64_t Zip64End = le64(Bytes + *End - Zip64EndLocatorSize + 8);
    if (!fits(Zip64End, Zip64EndSize) || le32(Bytes + Zip64End) != Zip64EndSig)
      return fail("the zip64 end of central directory record is missing or "
                  "truncated");
    const uint8_t *Z = Bytes + Zip64End;
    Count = le64(Z + 32);
    DirBytes = le64(Z + 40);
    Offset = le64(Z + 48);
  }
  if (!fits(Offset, DirBytes))
    return fail("truncated: the central directory (" +
                std::to_string(DirBytes) + " bytes at offset " +
                std::to_string(Offset) + ") runs past the end of the file (" +
                std::to_string(Size) + " bytes)");
  return Status::success();
}

Status ZipReader::readEntry(uint64_t &At, Entry &E) {
  if (!fits(At, CentralHeaderSize) || le32(Bytes + At) != CentralHeaderSig)
    return fail("the central directory is corrupt (no entry header at "
                "offset " +
                std::to_string(At) + ")");
  const uint8_t *H = Bytes + At;
  E.Flags = le16(H + 8);
  E.Method = le16(H + 10);
  E.Crc = le32(H + 16);
  E.CompressedSize = le32(H + 20);
  E.Size = le32(H + 24);
  uint16_t NameLength = le16(H + 28), ExtraLength = le16(H + 30),
           CommentLength = le16(H + 32);
  E.LocalOffset = le32(H + 42);
  uint64_t Variable = uint64_t(NameLength) + ExtraLength + CommentLength;
  if (!fits(At + CentralHeaderSize, Variable))
    return fail("the central directory is corrupt (an entry at offset " +
                std::to_string(At) + " runs past its end)");
  const uint8_t *P = H + CentralHeaderSize;
  E.Name.assign(reinterpret_cast<const char *>(P), NameLength);
  // The zip64 extra field holds the saturated fields, in this order.
  const uint8_t *Extra = P + NameLength, *ExtraEnd = Extra + ExtraLength;
  while (ExtraEnd - Extra >= 4) {
    uint16_t Id = le16(Extra), Length = le16(Extra + 2);
    const uint8_t *Field = Extra + 4;
    if (ExtraEnd - Field < Length)
      break;
    if (Id == Zip64ExtraId) {
      const uint8_t *F = Field, *FieldEnd = Field + Length;
      for (uint64_t *Value : {&E.Size, &E.CompressedSize, &E.LocalOffset})
        if (*Value == 0xFFFFFFFF) {
          if (FieldEnd - F < 8)
            return fail("entry '" + E.Name + "': zip64 extra field too short");
          *Value = le64(F);
          F += 8;
        }
    }
    Extra = Field + Length;
  }
  At += CentralHeaderSize + Variable;
  return Status::success();
}

Result<std::vector<uint8_t>> ZipReader::extract(const Entry &E) {
  std::string What = "entry '" + E.Name + "'";
  if (E.Flags & 1)
    return fail(What + " is encrypted");
  if (!fits(E.LocalOffset, LocalHeaderSize) ||
      le32(Bytes + E.LocalOffset) != LocalHeaderSig)
    return fail(What + ": no local header at offset " +
                std::to_string(E.LocalOffset) + " (corrupt or truncated)");
  const uint8_t *L = Bytes + E.LocalOffset;
  uint64_t DataAt =
      E.LocalOffset + LocalHeaderSize + uint64_t(le16(L + 26)) + le16(L + 28);
  if (!fits(DataAt, E.CompressedSize))
    return fail("truncated: " + What + " (" + std::to_string(E.CompressedSize) +
                " bytes at offset " + std::to_string(DataAt) +
                ") runs past the end of the file (" + std::to_string(Size) +
                " bytes)");
  if (E.Size > std::numeric_limits<uint32_t>::max() * uint64_t(256) ||
      E.Size > std::vector<uint8_t>().max_size())
    return fail(What + ": implausible size " + std::to_string(E.Size));
  const uint8_t *Data = Bytes + DataAt;
  std::vector<uint8_t> Out;
  if (E.Method == MethodStored) {
    if (E.CompressedSize != E.Size)
      return fail(What + ": stored with " + std::to_string(E.CompressedSize) +
                  " bytes but its size is " + std::to_string(E.Size));
    Out.assign(Data, Data + E.Size);
  } else if (E.Method == MethodDeflate) {
    Out.resize(static_cast<size_t>(E.Size));
    z_stream Z{};
    if (inflateInit2(&Z, -MAX_WBITS) != Z_OK)
      return fail(What + ": zlib's inflateInit2 failed");
    // zlib counts in uInt: feed and drain in chunks of at most 1 GiB.
    constexpr uint64_t Chunk = uint64_t(1) << 30;
    uint64_t InLeft = E.CompressedSize, OutLeft = E.Size;
    Z.next_in = const_cast<Bytef *>(Data);
    Z.next_out = Out.data();
    int Code = Z_OK;
    while (Code == Z_OK) {
      if (Z.avail_in == 0 && InLeft > 0) {
        Z.avail_in = static_cast<uInt>(std::min(InLeft, Chunk));
        InLeft -= Z.avail_in;
      }
      if (Z.avail_out == 0 && OutLeft > 0) {
        Z.avail_out = static_cast<uInt>(std::min(OutLeft, Chunk));
        OutLeft -= Z.avail_out;
      }
      Code = inflate(&Z, Z_NO_FLUSH);
      if (Code == Z_BUF_ERROR && (Z.avail_in > 0 || InLeft > 0) &&
          (Z.avail_out > 0 || OutLeft > 0))
        Code = Z_OK;
    }
    uint64_t Produced = Z.total_out;
    std::string Message = Z.msg ? Z.msg : "";
    inflateEnd(&Z);
    if (Code != Z_STREAM_END)
      return fail(What + ": the deflate data is corrupt" +
                  (Message.empty() ? std::string(" or truncated")
                                   : " (zlib: " + Message + ")") +
                  (Code == Z_BUF_ERROR ? " (it inflates past its size " +
                                             std::to_string(E.Size) + ")"
                                       : ""));
    if (Produced != E.Size)
      return fail(What + ": inflates to " + std::to_string(Produced) +
                  " bytes, its size is " + std::to_string(E.Size));
  } else {
    return fail(What + ": compression method " + std::to_string(E.Method) +
                " is not supported (only stored and deflate)");
  }
  // crc32 counts in uInt too.
  uLong Crc = crc32(0L, Z_NULL, 0);
  for (uint64_t Done = 0; Done < Out.size();) {
    uInt N = static_cast<uInt>(std::min<uint64_t>(Out.size() - Done, 1u << 30));
    Crc = crc32(Crc, Out.data() + Done, N);
    Done += N;
  }
  if (Crc != E.Crc)
    return fail(What + ": CRC-32 mismatch (the data is corrupt)");
  return Out;
}

Result<NpzArrays> ZipReader::read() {
  uint64_t Count = 0, Offset = 0, DirBytes = 0;
  if (Status S = findCentralDirectory(Count, Offset, DirBytes); !S)
    return Failure{S.error()};
  NpzArrays Arrays;
  uint64_t At = Offset;
  for (uint64_t I = 0; I < Count; ++I) {
    Entry E;
    if (Status S = readEntry(At, E); !S)
      return Failure{S.error()};
    if (At > Offset + DirBytes)
      return fail("the central directory is corrupt (its entries run past "
                  "its size)");
    if (!E.Name.empty() && E.Name.back() == '/')
      continue; // A directory.
    Result<std::vector<uint8_t>> Data = extract(E);
    if (!Data)
      return Failure{Data.error()};
    std::string Key = E.Name;
    if (Key.size() > 4 && Key.compare(Key.size() - 4, 4, ".npy") == 0)
      Key.resize(Key.size() - 4);
    Result<Tensor> T =
        parseNpy(Data->data(), Data->size(), Name + ":" + E.Name);
    if (!T)
      return Failure{T.error()};
    if (!Arrays.emplace(Key, T.take()).second)
      return fail("the array '" + Key + "' occurs twice");
  }
  return Arrays;
}

} // namespace

Result<NpzArrays> parseNpz(const uint8_t *Bytes, size_t Size,
                           const std::string &Name) {
  return ZipReader(Bytes, Size, Name).read();
}

Result<NpzArrays> readNpz(const std::string &Path) {
  Result<std::vector<uint8_t>> Bytes = readFileBytes(Path);
  if (!Bytes)
    return Failure{Bytes.error()};
  return parseNpz(Bytes->data(), Bytes->size(), Path);
}

} // namespace memfmt::io
