//===- ONNXTensor.h - Tensors of an ONNX model on the host ------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The importer's view of an ONNX TensorProto (an initializer or a Constant
// node's value): its element type, shape and little-endian bytes, decoded
// from whichever field holds them (raw_data, the typed fields float_data /
// int32_data / int64_data / ..., or an external data file). Decoding checks
// everything a malformed or truncated file can get wrong: unknown element
// types, negative or overflowing dimensions, a byte or value count that does
// not match the shape, external files that are missing, too short or outside
// the model's directory. Tensors share their bytes, so a reshape or an
// Identity of a constant copies nothing.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LIB_IMPORT_ONNX_ONNXTENSOR_H
#define MEMFMT_LIB_IMPORT_ONNX_ONNXTENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace mlir::memfmt::onnx_import {

/// The ONNX element types (TensorProto.DataType), by their proto numbers.
enum class ElementKind : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
};

/// "float", "int64", ... as ONNX spells the type; "type N" if unknown.
std::string elementKindName(int32_t kind);

/// Bytes per element, or 0 for types without a fixed size (string) and
/// unknown ones.
int64_t elementKindSize(int32_t kind);

/// True for float, float16 and bfloat16: the types memfmt computes in.
bool isFloatKind(ElementKind kind);

/// `[1, 2, 3]`.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// A name from the file, for messages: control characters, and every byte
/// above 0x7f of a name that is not valid UTF-8, as \xNN.
std::string printable(llvm::StringRef name);

/// A tensor's values on the host.
struct HostTensor {
  ElementKind kind = ElementKind::Undefined;
  llvm::SmallVector<int64_t, 4> shape;
  /// numElements() * elementKindSize(kind) little-endian bytes, shared.
  std::shared_ptr<const std::vector<uint8_t>> bytes;

  int64_t numElements() const;
  /// The same bytes with another shape (of as many elements).
  HostTensor withShape(llvm::ArrayRef<int64_t> newShape) const;
  /// The values as f32 (float, float16, bfloat16 and double).
  std::vector<float> toFloats() const;
  /// The values as int64 (int64, int32 and the smaller integer types).
  std::vector<int64_t> toInts() const;
  /// A float tensor of `shape` holding `values`.
  static HostTensor fromFloats(llvm::ArrayRef<int64_t> shape,
                               std::vector<float> values);
  static HostTensor fromInts(llvm::ArrayRef<int64_t> shape,
                             llvm::ArrayRef<int64_t> values);
  /// A bool tensor of this integer tensor's shape: true where it is nonzero.
  HostTensor toBools() const;
};

/// The largest number of elements a tensor may have (2^40).
inline constexpr int64_t kMaxElements = int64_t(1) << 40;

/// Multiplies the dimensions of `shape` into `count`; fails (returns false)
/// on a negative dimension or a product above kMaxElements.
bool countElements(llvm::ArrayRef<int64_t> shape, int64_t &count);

/// Decodes `proto`. External data files are looked up relative to
/// `baseDirectory`. On a problem returns nullopt and sets `error` to a
/// message without the tensor's name (the caller adds it).
std::optional<HostTensor> decodeTensor(const onnx::TensorProto &proto,
                                       llvm::StringRef baseDirectory,
                                       std::string &error);

} // namespace mlir::memfmt::onnx_import

#endif // MEMFMT_LIB_IMPORT_ONNX_ONNXTENSOR_H
