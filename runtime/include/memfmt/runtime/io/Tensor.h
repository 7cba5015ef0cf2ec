//===- Tensor.h - Element types, tensors and results for weight files -----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The vocabulary shared by the runtime's file readers and writers (Npy.h,
// SafeTensors.h): the element types a weight file can hold (DType), an owning
// row-major tensor (Tensor) and a non-owning one (TensorView), and the error
// convention of the io library. No function of the library throws across its
// API or aborts on bad input: each returns a Result<T> (a value or an error
// message) or a Status (success or an error message), and every message names
// the file it is about.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_IO_TENSOR_H
#define MEMFMT_RUNTIME_IO_TENSOR_H

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memfmt::io {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// An error message on its way into a Result or a Status:
/// `return Failure{Path + ": truncated"};`.
struct Failure {
  std::string Message;
};

/// Either a value of type T or an error message (like llvm::Expected, without
/// the obligation to check). Converts to true when it holds a value.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T Value) : Value(std::move(Value)) {}
  Result(Failure F) : Error(std::move(F.Message)) {}

  /// True when this holds a value.
  bool ok() const { return Value.has_value(); }
  explicit operator bool() const { return ok(); }

  /// The error message; empty when ok().
  const std::string &error() const { return Error; }

  T &operator*() {
    assert(ok() && "dereferencing a failed Result");
    return *Value;
  }
  const T &operator*() const {
    assert(ok() && "dereferencing a failed Result");
    return *Value;
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }

  /// Moves the value out; requires ok().
  T take() { return std::move(**this); }

private:
  std::optional<T> Value;
  std::string Error;
};

/// Success, or an error message. Converts to true on success.
class [[nodiscard]] Status {
public:
  Status(Failure F) : Error(std::move(F.Message)), Failed(true) {}
  static Status success() { return Status(); }

  bool ok() const { return !Failed; }
  explicit operator bool() const { return ok(); }
  /// The error message; empty when ok().
  const std::string &error() const { return Error; }

private:
  Status() = default;
  std::string Error;
  bool Failed = false;
};

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// The element types of weight files. Names follow safetensors ("F32").
enum class DType : uint8_t {
  F64,
  F32,
  F16,
  BF16,
  I64,
  I32,
  I16,
  I8,
  U64,
  U32,
  U16,
  U8,
  Bool,
};

/// All element types, in declaration order.
inline constexpr DType AllDTypes[] = {
    DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
    DType::I32, DType::I16, DType::I8,  DType::U64,  DType::U32,
    DType::U16, DType::U8,  DType::Bool};

/// The size of one element in bytes (Bool is one byte, 0 or 1).
constexpr size_t dtypeSize(DType Type) {
  switch (Type) {
  case DType::F64:
  case DType::I64:
  case DType::U64:
    return 8;
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 0;
}

/// The safetensors name of \p Type: "F32", "BF16", "BOOL", ...
constexpr const char *dtypeName(DType Type) {
  switch (Type) {
  case DType::F64:
    return "F64";
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I16:
    return "I16";
  case DType::I8:
    return "I8";
  case DType::U64:
    return "U64";
  case DType::U32:
    return "U32";
  case DType::U16:
    return "U16";
  case DType::U8:
    return "U8";
  case DType::Bool:
    return "BOOL";
  }
  return "?";
}

/// The element type whose safetensors name is \p Name (case-sensitive), or
/// std::nullopt.
inline std::optional<DType> parseDTypeName(std::string_view Name) {
  for (DType Type : AllDTypes)
    if (Name == dtypeName(Type))
      return Type;
  return std::nullopt;
}

/// The number of elements of \p Shape (1 for a scalar, shape []), or
/// std::nullopt when a dimension is negative or the product overflows int64.
std::optional<int64_t> numElements(const std::vector<int64_t> &Shape);

/// The number of bytes of a row-major tensor of \p Shape and \p Type, or
/// std::nullopt when a dimension is negative or the size overflows int64.
std::optional<int64_t> byteSize(DType Type, const std::vector<int64_t> &Shape);

/// "[64,3,7,7]", the form used in error messages.
std::string formatShape(const std::vector<int64_t> &Shape);

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// An owning tensor: row-major (C order), little-endian element bytes.
struct Tensor {
  DType Type = DType::F32;
  std::vector<int64_t> Shape;
  std::vector<uint8_t> Data;
};

/// A non-owning tensor, e.g. one inside a memory-mapped safetensors file.
/// Data is row-major and little-endian, and NOT necessarily aligned to the
/// element size (the safetensors format does not promise it): read elements
/// with std::memcpy, or use convertToF32.
struct TensorView {
  std::string Name;
  DType Type = DType::F32;
  std::vector<int64_t> Shape;
  const uint8_t *Data = nullptr;
  size_t NumBytes = 0;
};

/// Converts \p NumBytes bytes of elements of \p Type at \p Data (any
/// alignment) to f32. F32 is copied, F16 and BF16 are widened exactly, F64 is
/// rounded to nearest. Fails for integer types and when NumBytes is not a
/// multiple of the element size.
Result<std::vector<float>> convertToF32(DType Type, const void *Data,
                                        size_t NumBytes);

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

/// Reads the whole file at \p Path. Errors read "<Path>: cannot open: ...".
Result<std::vector<uint8_t>> readFileBytes(const std::string &Path);

/// Creates or truncates \p Path and writes \p NumBytes bytes from \p Data.
Status writeFileBytes(const std::string &Path, const void *Data,
                      size_t NumBytes);

} // namespace memfmt::io

#endif // MEMFMT_RUNTIME_IO_TENSOR_H
