//===- WeightsCheck.cpp - Check a weight file against a model -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Reads a .safetensors header (8-byte little-endian length N, N bytes of
// JSON {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the
// data section) and checks it as strictly as the runtime's reader does, so
// that a file that passes here also loads there. The comparison with the
// model collects every missing, extra, mis-shaped or mistyped tensor before
// it reports, so one run shows everything that is wrong.
//
//===----------------------------------------------------------------------===//

#include "WeightsCheck.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <optional>

using namespace memfmt::compile;
using mlir::failure;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::success;

namespace {

/// Bytes per element of the dtypes the runtime's reader knows.
std::optional<uint64_t> dtypeSize(llvm::StringRef dtype) {
  return llvm::StringSwitch<std::optional<uint64_t>>(dtype)
      .Cases({"F64", "I64", "U64"}, 8)
      .Cases({"F32", "I32", "U32"}, 4)
      .Cases({"F16", "BF16", "I16", "U16"}, 2)
      .Cases({"I8", "U8", "BOOL"}, 1)
      .Default(std::nullopt);
}

/// The dtypes a parameter may have: the loader converts them.
bool isParameterDtype(llvm::StringRef dtype) {
  return dtype == "F32" || dtype == "F16" || dtype == "BF16";
}

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

/// A non-negative integer of a JSON value, if it is one.
std::optional<uint64_t> getUnsigned(const llvm::json::Value &value) {
  std::optional<int64_t> number = value.getAsInteger();
  if (!number || *number < 0)
    return std::nullopt;
  return static_cast<uint64_t>(*number);
}

/// Parses one header entry; on a problem returns a message.
std::optional<std::string> parseEntry(const llvm::json::Object &object,
                                      SafeTensorsEntry &entry) {
  for (const auto &field : object)
    if (field.first != "dtype" && field.first != "shape" &&
        field.first != "data_offsets")
      return "unknown key \"" + field.first.str() + "\"";
  std::optional<llvm::StringRef> dtype = object.getString("dtype");
  if (!dtype)
    return std::string("\"dtype\" is missing or not a string");
  entry.dtype = dtype->str();
  std::optional<uint64_t> elementSize = dtypeSize(*dtype);
  if (!elementSize)
    return "unknown dtype \"" + entry.dtype + "\"";

  const llvm::json::Array *shape = object.getArray("shape");
  if (!shape)
    return std::string("\"shape\" is missing or not an array");
  uint64_t elements = 1;
  for (const llvm::json::Value &dim : *shape) {
    std::optional<uint64_t> size = getUnsigned(dim);
    if (!size || (*size && elements > UINT64_MAX / 16 / *size))
      return std::string("\"shape\" must be a list of small non-negative "
                         "integers");
    entry.shape.push_back(static_cast<int64_t>(*size));
    elements *= *size;
  }

  const llvm::json::Array *offsets = object.getArray("data_offsets");
  std::optional<uint64_t> begin, end;
  if (offsets && offsets->size() == 2) {
    begin = getUnsigned((*offsets)[0]);
    end = getUnsigned((*offsets)[1]);
  }
  if (!begin || !end || *begin > *end)
    return std::string("\"data_offsets\" must be [begin, end] with 0 <= "
                       "begin <= end");
  entry.begin = *begin;
  entry.end = *end;
  uint64_t expected = elements * *elementSize;
  if (entry.end - entry.begin != expected)
    return "data_offsets span " + std::to_string(entry.end - entry.begin) +
           " bytes, but shape " + formatShape(entry.shape) + " x " +
           entry.dtype + " needs " + std::to_string(expected);
  return std::nullopt;
}

/// Checks that the tensors tile the data section [0, dataBytes) exactly.
std::optional<std::string> checkTiling(std::vector<SafeTensorsEntry> entries,
                                       uint64_t dataBytes) {
  llvm::sort(entries, [](const SafeTensorsEntry &a, const SafeTensorsEntry &b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t position = 0;
  const SafeTensorsEntry *previous = nullptr;
  for (const SafeTensorsEntry &entry : entries) {
    if (entry.end > dataBytes)
      return "truncated: tensor '" + entry.name + "' ends at byte " +
             std::to_string(entry.end) + " of the data section, which has " +
             "only " + std::to_string(dataBytes) + " bytes";
    if (entry.begin < position)
      return "tensors '" + previous->name + "' and '" + entry.name +
             "' overlap";
    if (entry.begin > position)
      return "a gap of " + std::to_string(entry.begin - position) +
             " bytes before tensor '" + entry.name + "'";
    position = entry.end;
    previous = &entry;
  }
  if (position != dataBytes)
    return std::to_string(dataBytes - position) +
           " bytes of data after the last tensor";
  return std::nullopt;
}

/// Parses the JSON header text into entries; on a problem returns a
/// message.
std::optional<std::string> parseHeader(llvm::StringRef text,
                                       std::vector<SafeTensorsEntry> &entries) {
  llvm::Expected<llvm::json::Value> header = llvm::json::parse(text);
  if (!header)
    return "the header is not valid JSON: " +
           llvm::toString(header.takeError());
  const llvm::json::Object *root = header->getAsObject();
  if (!root)
    return std::string("the header is not a JSON object");
  for (const auto &[key, value] : *root) {
    if (key == "__metadata__") {
      if (!value.getAsObject())
        return std::string("\"__metadata__\" is not an object");
      continue;
    }
    SafeTensorsEntry entry;
    entry.name = key.str();
    const llvm::json::Object *object = value.getAsObject();
    if (!object)
      return "tensor '" + entry.name + "': expected an object {\"dtype\", " +
             "\"shape\", \"data_offsets\"}";
    if (std::optional<std::string> problem = parseEntry(*object, entry))
      return "tensor '" + entry.name + "': " + *problem;
    entries.push_back(std::move(entry));
  }
  // json::Object is unordered; give the entries a stable order.
  llvm::sort(entries, [](const SafeTensorsEntry &a, const SafeTensorsEntry &b) {
    return a.name < b.name;
  });
  return std::nullopt;
}

/// The parameters `module` declares, by name, with their logical shapes.
llvm::StringMap<llvm::SmallVector<int64_t, 4>>
collectParameters(mlir::ModuleOp module,
                  std::vector<std::string> &orderedNames) {
  llvm::StringMap<llvm::SmallVector<int64_t, 4>> parameters;
  module.walk([&](mlir::memfmt::WeightOp op) {
    auto [it, inserted] = parameters.try_emplace(
        op.getName(), llvm::to_vector_of<int64_t, 4>(op.getType().getShape()));
    if (inserted)
      orderedNames.push_back(op.getName().str());
  });
  return parameters;
}

} // namespace

FailureOr<std::vector<SafeTensorsEntry>>
memfmt::compile::readSafeTensorsHeader(llvm::StringRef path,
                                       llvm::raw_ostream &errors) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file) {
    errors << "cannot open weights file '" << path
           << "': " << file.getError().message();
    return failure();
  }
  llvm::StringRef bytes = (*file)->getBuffer();
  auto fail = [&](const llvm::Twine &message) {
    errors << "weights file '" << path
           << "' is not a valid safetensors file: " << message;
    return failure();
  };
  if (bytes.size() < 8)
    return fail("it has " + llvm::Twine(bytes.size()) +
                " bytes, too few for the 8-byte header length");
  uint64_t headerBytes = llvm::support::endian::read64le(bytes.data());
  if (headerBytes > bytes.size() - 8)
    return fail("truncated: the header length is " + llvm::Twine(headerBytes) +
                " bytes but only " + llvm::Twine(bytes.size() - 8) +
                " bytes follow it");
  std::vector<SafeTensorsEntry> entries;
  if (std::optional<std::string> problem =
          parseHeader(bytes.substr(8, headerBytes), entries))
    return fail(*problem);
  uint64_t dataBytes = bytes.size() - 8 - headerBytes;
  if (std::optional<std::string> problem = checkTiling(entries, dataBytes))
    return fail(*problem);
  return entries;
}

LogicalResult
memfmt::compile::checkWeights(mlir::ModuleOp module,
                              llvm::ArrayRef<SafeTensorsEntry> tensors,
                              llvm::StringRef path, llvm::raw_ostream &errors) {
  std::vector<std::string> parameterNames;
  llvm::StringMap<llvm::SmallVector<int64_t, 4>> parameters =
      collectParameters(module, parameterNames);
  llvm::StringMap<const SafeTensorsEntry *> byName;
  for (const SafeTensorsEntry &tensor : tensors)
    byName[tensor.name] = &tensor;

  std::vector<std::string> problems;
  for (const std::string &name : parameterNames) {
    llvm::ArrayRef<int64_t> shape = parameters[name];
    const SafeTensorsEntry *tensor = byName.lookup(name);
    if (!tensor) {
      problems.push_back("missing: " + name + " " + formatShape(shape));
      continue;
    }
    if (llvm::ArrayRef<int64_t>(tensor->shape) != shape)
      problems.push_back(
          "mis-shaped: " + name + " is " + formatShape(tensor->shape) +
          " in the file, the model expects " + formatShape(shape));
    if (!isParameterDtype(tensor->dtype))
      problems.push_back("unsupported dtype: " + name + " is " + tensor->dtype +
                         "; parameters must be F32, F16 or BF16");
  }
  for (const SafeTensorsEntry &tensor : tensors)
    if (!parameters.count(tensor.name) &&
        !llvm::StringRef(tensor.name).ends_with(".num_batches_tracked"))
      problems.push_back("extra: " + tensor.name + " " +
                         formatShape(tensor.shape) +
                         " is not a parameter of the model");
  if (problems.empty())
    return success();
  errors << "weights file '" << path << "' does not match the model ("
         << problems.size() << " problem(s)):";
  for (const std::string &problem : problems)
    errors << "\n  " << problem;
  return failure();
}
