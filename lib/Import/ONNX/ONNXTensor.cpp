//===- ONNXTensor.cpp - Tensors of an ONNX model on the host --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Implements ONNXTensor.h. The element count comes from the dims first;
// then exactly one source of data must provide that many values: the
// external file, raw_data, or the typed field the ONNX spec assigns to the
// element type (float16 and bfloat16 travel as bit patterns in int32_data,
// the small integer types and bool widened to int32_data).
//
//===----------------------------------------------------------------------===//

#include "ONNXTensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"

#include <cmath>
#include <cstring>

using namespace mlir::memfmt::onnx_import;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

std::string mlir::memfmt::onnx_import::elementKindName(int32_t kind) {
  switch (static_cast<ElementKind>(kind)) {
  case ElementKind::Undefined:
    return "undefined";
  case ElementKind::Float:
    return "float";
  case ElementKind::UInt8:
    return "uint8";
  case ElementKind::Int8:
    return "int8";
  case ElementKind::UInt16:
    return "uint16";
  case ElementKind::Int16:
    return "int16";
  case ElementKind::Int32:
    return "int32";
  case ElementKind::Int64:
    return "int64";
  case ElementKind::String:
    return "string";
  case ElementKind::Bool:
    return "bool";
  case ElementKind::Float16:
    return "float16";
  case ElementKind::Double:
    return "double";
  case ElementKind::UInt32:
    return "uint32";
  case ElementKind::UInt64:
    return "uint64";
  case ElementKind::Complex64:
    return "complex64";
  case ElementKind::Complex128:
    return "complex128";
  case ElementKind::BFloat16:
    return "bfloat16";
  }
  return "type " + std::to_string(kind);
}

int64_t mlir::memfmt::onnx_import::elementKindSize(int32_t kind) {
  switch (static_cast<ElementKind>(kind)) {
  case ElementKind::Float:
  case ElementKind::Int32:
  case ElementKind::UInt32:
    return 4;
  case ElementKind::UInt8:
  case ElementKind::Int8:
  case ElementKind::Bool:
    return 1;
  case ElementKind::UInt16:
  case ElementKind::Int16:
  case ElementKind::Float16:
  case ElementKind::BFloat16:
    return 2;
  case ElementKind::Int64:
  case ElementKind::Double:
  case ElementKind::UInt64:
  case ElementKind::Complex64:
    return 8;
  case ElementKind::Complex128:
    return 16;
  case ElementKind::Undefined:
  case ElementKind::String:
    return 0;
  }
  return 0;
}

bool mlir::memfmt::onnx_import::isFloatKind(ElementKind kind) {
  return kind == ElementKind::Float || kind == ElementKind::Float16 ||
         kind == ElementKind::BFloat16;
}

std::string
mlir::memfmt::onnx_import::formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

/// A name from the file, for messages: control characters, and every byte
/// above 0x7f of a name that is not valid UTF-8, as \xNN.
std::string mlir::memfmt::onnx_import::printable(llvm::StringRef name) {
  bool utf8 = llvm::json::isUTF8(name);
  std::string text;
  for (char c : name) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || (!utf8 && byte >= 0x80)) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      text += escaped;
    } else {
      text += c;
    }
  }
  return text;
}

bool mlir::memfmt::onnx_import::countElements(llvm::ArrayRef<int64_t> shape,
                                              int64_t &count) {
  count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim > 0 && count > kMaxElements / dim))
      return false;
    count *= dim;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Half-precision conversions
//===----------------------------------------------------------------------===//

static float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {
      // Subnormal: normalise.
      int shift = 0;
      while (!(mantissa & 0x400)) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ff;
      bits = sign | uint32_t(127 - 15 - shift + 1) << 23 | mantissa << 13;
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | mantissa << 13;
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

static float bfloat16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

int64_t HostTensor::numElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

HostTensor HostTensor::withShape(llvm::ArrayRef<int64_t> newShape) const {
  HostTensor result = *this;
  result.shape.assign(newShape.begin(), newShape.end());
  return result;
}

std::vector<float> HostTensor::toFloats() const {
  int64_t count = numElements();
  std::vector<float> values(static_cast<size_t>(count));
  const uint8_t *data = bytes->data();
  for (int64_t i = 0; i < count; ++i) {
    switch (kind) {
    case ElementKind::Float: {
      uint32_t bits = llvm::support::endian::read32le(data + 4 * i);
      std::memcpy(&values[i], &bits, sizeof(float));
      break;
    }
    case ElementKind::Float16:
      values[i] = halfToFloat(llvm::support::endian::read16le(data + 2 * i));
      break;
    case ElementKind::BFloat16:
      values[i] =
          bfloat16ToFloat(llvm::support::endian::read16le(data + 2 * i));
      break;
    case ElementKind::Double: {
      uint64_t bits = llvm::support::endian::read64le(data + 8 * i);
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      values[i] = static_cast<float>(d);
      break;
    }
    default:
      values[i] = 0.0f;
      break;
    }
  }
  return values;
}

std::vector<int64_t> HostTensor::toInts() const {
  int64_t count = numElements();
  std::vector<int64_t> values(static_cast<size_t>(count));
  const uint8_t *data = bytes->data();
  for (int64_t i = 0; i < count; ++i) {
    switch (kind) {
    case ElementKind::Int64:
    case ElementKind::UInt64:
      values[i] =
          static_cast<int64_t>(llvm::support::endian::read64le(data + 8 * i));
      break;
    case ElementKind::Int32:
      values[i] =
          static_cast<int32_t>(llvm::support::endian::read32le(data + 4 * i));
      break;
    case ElementKind::UInt32:
      values[i] = llvm::support::endian::read32le(data + 4 * i);
      break;
    case ElementKind::Int16:
      values[i] =
          static_cast<int16_t>(llvm::support::endian::read16le(data + 2 * i));
      break;
    case ElementKind::UInt16:
      values[i] = llvm::support::endian::read16le(data + 2 * i);
      break;
    case ElementKind::Int8:
      values[i] = static_cast<int8_t>(data[i]);
      break;
    case ElementKind::UInt8:
    case ElementKind::Bool:
      values[i] = data[i];
      break;
    default:
      values[i] = 0;
      break;
    }
  }
  return values;
}

HostTensor HostTensor::toBools() const {
  std::vector<int64_t> values = toInts();
  auto bytes = std::make_shared<std::vector<uint8_t>>(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    (*bytes)[i] = values[i] != 0;
  HostTensor tensor;
  tensor.kind = ElementKind::Bool;
  tensor.shape = shape;
  tensor.bytes = std::move(bytes);
  return tensor;
}

HostTensor HostTensor::fromFloats(llvm::ArrayRef<int64_t> shape,
                                  std::vector<float> values) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof(bits));
    llvm::support::endian::write32le(bytes->data() + 4 * i, bits);
  }
  HostTensor tensor;
  tensor.kind = ElementKind::Float;
  tensor.shape.assign(shape.begin(), shape.end());
  tensor.bytes = std::move(bytes);
  return tensor;
}

HostTensor HostTensor::fromInts(llvm::ArrayRef<int64_t> shape,
                                llvm::ArrayRef<int64_t> values) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(values.size() * 8);
  for (size_t i = 0; i < values.size(); ++i)
    llvm::support::endian::write64le(bytes->data() + 8 * i,
                                     static_cast<uint64_t>(values[i]));
  HostTensor tensor;
  tensor.kind = ElementKind::Int64;
  tensor.shape.assign(shape.begin(), shape.end());
  tensor.bytes = std::move(bytes);
  return tensor;
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

namespace {

/// Parses a non-negative decimal integer of an external_data entry.
std::optional<uint64_t> parseUnsigned(llvm::StringRef text) {
  uint64_t value = 0;
  if (text.empty() || text.getAsInteger(10, value))
    return std::nullopt;
  return value;
}

/// Reads `count` elements of `size` bytes from the external file the
/// entries of `proto` describe.
std::optional<std::vector<uint8_t>> readExternal(const onnx::TensorProto &proto,
                                                 llvm::StringRef baseDirectory,
                                                 uint64_t expectedBytes,
                                                 std::string &error) {
  std::string location;
  std::optional<uint64_t> offset = 0, length;
  for (const onnx::StringStringEntryProto &entry : proto.external_data()) {
    llvm::StringRef key = entry.key();
    if (key == "location") {
      location = entry.value();
    } else if (key == "offset") {
      offset = parseUnsigned(entry.value());
      if (!offset) {
        error = "external data offset '" + printable(entry.value()) +
                "' is not a non-negative integer";
        return std::nullopt;
      }
    } else if (key == "length") {
      length = parseUnsigned(entry.value());
      if (!length) {
        error = "external data length '" + printable(entry.value()) +
                "' is not a non-negative integer";
        return std::nullopt;
      }
    } else if (key != "checksum") {
      error = "unknown external data key '" + printable(entry.key()) + "'";
      return std::nullopt;
    }
  }
  if (location.empty()) {
    error = "external data has no 'location'";
    return std::nullopt;
  }
  // The file must be inside the model's directory (as onnx.checker wants):
  // a relative path without `..`.
  if (llvm::sys::path::is_absolute(location) ||
      llvm::any_of(llvm::make_range(llvm::sys::path::begin(location),
                                    llvm::sys::path::end(location)),
                   [](llvm::StringRef part) { return part == ".."; })) {
    error = "external data location '" + printable(location) +
            "' must be a relative path inside the model's directory";
    return std::nullopt;
  }
  llvm::SmallString<256> path(baseDirectory);
  llvm::sys::path::append(path, location);
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, fileSize)) {
    error = "cannot read external data file '" + printable(path) +
            "': " + ec.message();
    return std::nullopt;
  }
  if (*offset > fileSize) {
    error = "external data offset " + std::to_string(*offset) +
            " is beyond the end of '" + printable(location) + "' (" +
            std::to_string(fileSize) + " bytes)";
    return std::nullopt;
  }
  uint64_t bytes = length ? *length : fileSize - *offset;
  if (bytes != expectedBytes) {
    error = "external data of " + std::to_string(bytes) + " bytes" +
            (length ? "" : " (to the end of '" + printable(location) + "')") +
            ", but the shape needs " + std::to_string(expectedBytes);
    return std::nullopt;
  }
  if (*offset + bytes > fileSize) {
    error = "external data file '" + printable(location) +
            "' is truncated: the " + "tensor's bytes [" +
            std::to_string(*offset) + ", " + std::to_string(*offset + bytes) +
            ") end past its " + std::to_string(fileSize) + " bytes";
    return std::nullopt;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileSlice(path, bytes, *offset);
  if (!buffer) {
    error = "cannot read external data file '" + printable(path) +
            "': " + buffer.getError().message();
    return std::nullopt;
  }
  const char *begin = (*buffer)->getBufferStart();
  return std::vector<uint8_t>(begin, begin + bytes);
}

/// "N values" for messages.
std::string values(int64_t count) {
  return std::to_string(count) + (count == 1 ? " value" : " values");
}

} // namespace

std::optional<HostTensor>
mlir::memfmt::onnx_import::decodeTensor(const onnx::TensorProto &proto,
                                        llvm::StringRef baseDirectory,
                                        std::string &error) {
  HostTensor tensor;
  int32_t type = proto.data_type();
  tensor.kind = static_cast<ElementKind>(type);
  int64_t elementSize = elementKindSize(type);
  if (type == int32_t(ElementKind::String)) {
    error = "string tensors are not supported";
    return std::nullopt;
  }
  if (elementSize == 0 || type == int32_t(ElementKind::Undefined)) {
    error = "unknown element type " + std::to_string(type);
    return std::nullopt;
  }
  if (proto.has_segment()) {
    error = "segmented tensors are not supported";
    return std::nullopt;
  }
  tensor.shape.assign(proto.dims().begin(), proto.dims().end());
  int64_t count = 0;
  if (!countElements(tensor.shape, count)) {
    error = "shape " + formatShape(tensor.shape) +
            " has a negative dimension or more than 2^40 elements";
    return std::nullopt;
  }
  uint64_t expectedBytes = uint64_t(count) * uint64_t(elementSize);

  auto bytes = std::make_shared<std::vector<uint8_t>>();
  if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    std::optional<std::vector<uint8_t>> data =
        readExternal(proto, baseDirectory, expectedBytes, error);
    if (!data)
      return std::nullopt;
    *bytes = std::move(*data);
  } else if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() != expectedBytes) {
      error = "raw_data has " + std::to_string(raw.size()) +
              " bytes, but shape " + formatShape(tensor.shape) + " of " +
              elementKindName(type) + " needs " + std::to_string(expectedBytes);
      return std::nullopt;
    }
    bytes->assign(raw.begin(), raw.end());
  } else {
    // The typed fields hold at most `present` values: a shape that needs
    // more is an error below, and must not allocate what it declares first
    // (up to 2^40 elements; found by memfmt-fuzz-onnx).
    int64_t present = proto.float_data_size() + proto.double_data_size() +
                      proto.int64_data_size() + proto.uint64_data_size() +
                      proto.int32_data_size();
    bytes->resize(count <= present ? expectedBytes : 0);
    uint8_t *out = bytes->data();
    int64_t found = 0;
    const char *field = "";
    switch (tensor.kind) {
    case ElementKind::Float:
      field = "float_data";
      found = proto.float_data_size();
      if (found == count)
        for (int64_t i = 0; i < count; ++i) {
          float value = proto.float_data(i);
          uint32_t bits;
          std::memcpy(&bits, &value, sizeof(bits));
          llvm::support::endian::write32le(out + 4 * i, bits);
        }
      break;
    case ElementKind::Complex64:
      error = "complex tensors are not supported";
      return std::nullopt;
    case ElementKind::Double:
      field = "double_data";
      found = proto.double_data_size();
      if (found == count)
        for (int64_t i = 0; i < count; ++i) {
          double value = proto.double_data(i);
          uint64_t bits;
          std::memcpy(&bits, &value, sizeof(bits));
          llvm::support::endian::write64le(out + 8 * i, bits);
        }
      break;
    case ElementKind::Int64:
      field = "int64_data";
      found = proto.int64_data_size();
      if (found == count)
        for (int64_t i = 0; i < count; ++i)
          llvm::support::endian::write64le(
              out + 8 * i, static_cast<uint64_t>(proto.int64_data(i)));
      break;
    case ElementKind::UInt32:
    case ElementKind::UInt64:
      field = "uint64_data";
      found = proto.uint64_data_size();
      if (found == count)
        for (int64_t i = 0; i < count; ++i) {
          uint64_t value = proto.uint64_data(i);
          if (elementSize == 8)
            llvm::support::endian::write64le(out + 8 * i, value);
          else
            llvm::support::endian::write32le(out + 4 * i,
                                             static_cast<uint32_t>(value));
        }
      break;
    case ElementKind::Complex128:
      error = "complex tensors are not supported";
      return std::nullopt;
    default:
      // int32, int16, int8, uint16, uint8, bool, float16, bfloat16: each
      // value (or bit pattern) widened to one int32_data entry.
      field = "int32_data";
      found = proto.int32_data_size();
      if (found == count)
        for (int64_t i = 0; i < count; ++i) {
          uint32_t value = static_cast<uint32_t>(proto.int32_data(i));
          switch (elementSize) {
          case 4:
            llvm::support::endian::write32le(out + 4 * i, value);
            break;
          case 2:
            llvm::support::endian::write16le(out + 2 * i,
                                             static_cast<uint16_t>(value));
            break;
          default:
            out[i] = static_cast<uint8_t>(value);
            break;
          }
        }
      break;
    }
    if (found != count) {
      if (found == 0)
        error = "has no data (no raw_data, " + std::string(field) +
                " or external data), but shape " + formatShape(tensor.shape) +
                " needs " + values(count);
      else
        error = std::string(field) + " has " + values(found) + ", but shape " +
                formatShape(tensor.shape) + " needs " + std::to_string(count);
      return std::nullopt;
    }
  }
  tensor.bytes = std::move(bytes);
  return tensor;
}
