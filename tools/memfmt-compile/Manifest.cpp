//===- Manifest.cpp - manifest.json and the report's memory plan ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Implements Manifest.h with llvm::json. The manifest is streamed with
// json::OStream so its keys keep the documented order; the report is parsed,
// extended and rewritten.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace memfmt::compile;
using mlir::failure;
using mlir::LogicalResult;
using mlir::success;
using mlir::memfmt::ModelManifest;
using mlir::memfmt::TensorPlacement;

namespace {

/// An integer list on one line (`[64, 3, 7, 7]`), which keeps the manifest
/// readable; the JSON is the same.
void writeIntegers(llvm::json::OStream &json, llvm::StringRef key,
                   const std::vector<int64_t> &values) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(values, os, ", ");
  os << "]";
  json.attributeBegin(key);
  json.rawValue(text);
  json.attributeEnd();
}

/// {"name", "dtype", "shape", "strides"} and, for parameters, "offset" and
/// "bytes".
void writeTensor(llvm::json::OStream &json, const TensorPlacement &tensor,
                 bool withPlacement) {
  json.object([&] {
    json.attribute("name", tensor.name);
    json.attribute("dtype", tensor.elementType);
    writeIntegers(json, "shape", tensor.shape);
    writeIntegers(json, "strides", tensor.strides);
    if (withPlacement) {
      json.attribute("offset", tensor.offset);
      json.attribute("bytes", tensor.bytes);
    }
  });
}

void writeTensors(llvm::json::OStream &json, llvm::StringRef key,
                  const std::vector<TensorPlacement> &tensors,
                  bool withPlacement) {
  json.attributeArray(key, [&] {
    for (const TensorPlacement &tensor : tensors)
      writeTensor(json, tensor, withPlacement);
  });
}

/// Opens `path` for writing text; reports a failure to `errors`.
std::unique_ptr<llvm::raw_fd_ostream> openText(llvm::StringRef path,
                                               llvm::sys::fs::OpenFlags flags,
                                               llvm::raw_ostream &errors) {
  std::error_code ec;
  auto os = std::make_unique<llvm::raw_fd_ostream>(path, ec, flags);
  if (!ec)
    return os;
  errors << "cannot write '" << path << "': " << ec.message();
  return nullptr;
}

LogicalResult closeText(llvm::raw_fd_ostream &os, llvm::StringRef path,
                        llvm::raw_ostream &errors) {
  os.close();
  if (!os.has_error())
    return success();
  errors << "cannot write '" << path << "': " << os.error().message();
  os.clear_error();
  return failure();
}

} // namespace

LogicalResult memfmt::compile::writeManifest(llvm::StringRef path,
                                             const CompileSettings &settings,
                                             const ModelManifest &manifest,
                                             llvm::raw_ostream &errors) {
  std::unique_ptr<llvm::raw_fd_ostream> os =
      openText(path, llvm::sys::fs::OF_Text, errors);
  if (!os)
    return failure();
  {
    llvm::json::OStream json(*os, /*IndentSize=*/2);
    json.object([&] {
      json.attribute("format_version", kManifestFormatVersion);
      json.attribute("model", settings.model);
      json.attribute("target", settings.target);
      json.attribute("precision", settings.precision);
      json.attribute("memory_format", settings.memoryFormat);
      json.attribute("input_format", settings.inputFormat);
      json.attribute("library", settings.library);
      json.attribute(
          "entry",
          (MEMFMT_MODEL_CIFACE_PREFIX + mlir::memfmt::kForwardFunctionName).str());
      json.attribute("arena_bytes", manifest.arenaBytes);
      json.attribute("peak_live_bytes", manifest.peakLiveBytes);
      json.attribute("weights_bytes", manifest.weightsBytes);
      json.attribute("weights_source", settings.weightsSource);
      writeTensors(json, "parameters", manifest.parameters, true);
      writeTensors(json, "inputs", manifest.inputs, false);
      writeTensors(json, "outputs", manifest.outputs, false);
      json.attributeArray("nodes", [&] {
        for (const std::string &node : manifest.nodeNames)
          json.value(node);
      });
    });
  }
  *os << "\n";
  return closeText(*os, path, errors);
}

LogicalResult memfmt::compile::addMemoryPlanToReports(
    llvm::StringRef jsonPath, llvm::StringRef textPath,
    const ModelManifest &manifest, llvm::raw_ostream &errors) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(jsonPath, /*IsText=*/true);
  if (!buffer) {
    errors << "cannot read '" << jsonPath
           << "': " << buffer.getError().message();
    return failure();
  }
  llvm::Expected<llvm::json::Value> report =
      llvm::json::parse((*buffer)->getBuffer());
  if (!report || !report->getAsObject()) {
    errors << "'" << jsonPath << "' is not a JSON object: "
           << (report ? "" : llvm::toString(report.takeError()));
    return failure();
  }
  llvm::json::Object &object = *report->getAsObject();
  object["arena_bytes"] = manifest.arenaBytes;
  object["peak_live_bytes"] = manifest.peakLiveBytes;
  object["weights_bytes"] = manifest.weightsBytes;

  std::unique_ptr<llvm::raw_fd_ostream> json =
      openText(jsonPath, llvm::sys::fs::OF_Text, errors);
  if (!json)
    return failure();
  *json << llvm::formatv("{0:2}", *report) << "\n";
  if (failed(closeText(*json, jsonPath, errors)))
    return failure();

  std::unique_ptr<llvm::raw_fd_ostream> text = openText(
      textPath, llvm::sys::fs::OF_Append | llvm::sys::fs::OF_Text, errors);
  if (!text)
    return failure();
  *text << "memory plan: arena " << manifest.arenaBytes << " bytes, peak live "
        << manifest.peakLiveBytes << " bytes, weights " << manifest.weightsBytes
        << " bytes\n";
  return closeText(*text, textPath, errors);
}
