//===- Tensor.cpp - Element types, tensors and conversions ----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Shape arithmetic with overflow checks (a hostile file may declare a shape
// whose size does not fit in 64 bits) and the conversion of weight tensors to
// f32 used when loading f16/bf16 weights.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/io/Tensor.h"
#include "memfmt/runtime/io/HalfFloat.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "memfmt's io library reads little-endian files with a little-endian host"
#endif

namespace memfmt::io {

namespace {
/// \p A * \p B for non-negative operands, or std::nullopt on overflow.
std::optional<int64_t> checkedMul(int64_t A, int64_t B) {
  if (A != 0 && B > std::numeric_limits<int64_t>::max() / A)
    return std::nullopt;
  return A * B;
}
} // namespace

std::optional<int64_t> numElements(const std::vector<int64_t> &Shape) {
  int64_t Count = 1;
  for (int64_t Dim : Shape) {
    if (Dim < 0)
      return std::nullopt;
    std::optional<int64_t> Next = checkedMul(Count, Dim);
    if (!Next)
      return std::nullopt;
    Count = *Next;
  }
  return Count;
}

std::optional<int64_t> byteSize(DType Type, const std::vector<int64_t> &Shape) {
  std::optional<int64_t> Count = numElements(Shape);
  if (!Count)
    return std::nullopt;
  return checkedMul(*Count, static_cast<int64_t>(dtypeSize(Type)));
}

std::string formatShape(const std::vector<int64_t> &Shape) {
  std::string Out = "[";
  for (size_t I = 0; I < Shape.size(); ++I) {
    if (I)
      Out += ',';
    Out += std::to_string(Shape[I]);
  }
  return Out + "]";
}

Result<std::vector<float>> convertToF32(DType Type, const void *Data,
                                        size_t NumBytes) {
  size_t Size = dtypeSize(Type);
  if (NumBytes % Size != 0)
    return Failure{std::to_string(NumBytes) + " bytes is not a whole number " +
                   "of " + dtypeName(Type) + " elements"};
  size_t Count = NumBytes / Size;
  std::vector<float> Out(Count);
  const auto *Bytes = static_cast<const unsigned char *>(Data);
  switch (Type) {
  case DType::F32:
    if (Count)
      std::memcpy(Out.data(), Bytes, NumBytes);
    return Out;
  case DType::F16:
    convertF16ToF32(Bytes, Out.data(), Count);
    return Out;
  case DType::BF16:
    convertBF16ToF32(Bytes, Out.data(), Count);
    return Out;
  case DType::F64:
    for (size_t I = 0; I < Count; ++I) {
      double D;
      std::memcpy(&D, Bytes + 8 * I, 8);
      Out[I] = static_cast<float>(D);
    }
    return Out;
  default:
    return Failure{std::string("cannot convert ") + dtypeName(Type) +
                   " elements to F32 (only floating-point types convert)"};
  }
}

Result<std::vector<uint8_t>> readFileBytes(const std::string &Path) {
  std::FILE *File = std::fopen(Path.c_str(), "rb");
  if (!File)
    return Failure{Path + ": cannot open: " + std::strerror(errno)};
  std::vector<uint8_t> Bytes;
  uint8_t Chunk[1 << 16];
  while (true) {
    size_t Got = std::fread(Chunk, 1, sizeof(Chunk), File);
    Bytes.insert(Bytes.end(), Chunk, Chunk + Got);
    if (Got < sizeof(Chunk))
      break;
  }
  bool ReadError = std::ferror(File) != 0;
  int SavedErrno = errno;
  std::fclose(File);
  if (ReadError)
    return Failure{Path + ": read error: " + std::strerror(SavedErrno)};
  return Bytes;
}

Status writeFileBytes(const std::string &Path, const void *Data,
                      size_t NumBytes) {
  std::FILE *File = std::fopen(Path.c_str(), "wb");
  if (!File)
    return Failure{Path + ": cannot create: " + std::strerror(errno)};
  bool Ok = NumBytes == 0 || std::fwrite(Data, 1, NumBytes, File) == NumBytes;
  int SavedErrno = errno;
  if (std::fclose(File) != 0 && Ok) {
    Ok = false;
    SavedErrno = errno;
  }
  if (!Ok)
    return Failure{Path + ": write error: " + std::strerror(SavedErrno)};
  return Status::success();
}

} // namespace memfmt::io
