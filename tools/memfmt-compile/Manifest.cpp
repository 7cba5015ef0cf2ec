//===- Manifest.cpp - manifest.json and the report's memory plan ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Implements Manifest.h. The manifest is the runtime's (its writer owns the
// format); the report is parsed, extended and rewritten with llvm::json.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"
#include "memfmt/Support/OutputFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

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

/// The loader's spelling of a tensor the lowering placed. Fails on an
/// element type a manifest cannot describe (f32, f16, bf16 and i64 are
/// the ones a lowered model has).
LogicalResult toTensorSpec(const TensorPlacement &tensor,
                           ::memfmt::loader::TensorSpec &spec,
                           llvm::raw_ostream &errors) {
  std::optional<::memfmt::loader::ElementType> type =
      ::memfmt::loader::parseElementType(tensor.elementType);
  if (!type) {
    errors << "tensor '" << tensor.name << "' has element type '"
           << tensor.elementType << "', which a manifest cannot describe";
    return failure();
  }
  spec.Name = tensor.name;
  spec.Type = *type;
  spec.Shape = tensor.shape;
  spec.Strides = tensor.strides;
  spec.Offset = tensor.offset;
  spec.Bytes = tensor.bytes;
  spec.ZeroInit = tensor.zeroInit;
  spec.Updated = tensor.updated;
  return success();
}

LogicalResult toTensorSpecs(const std::vector<TensorPlacement> &tensors,
                            std::vector<::memfmt::loader::TensorSpec> &specs,
                            llvm::raw_ostream &errors) {
  specs.assign(tensors.size(), {});
  for (auto [tensor, spec] : llvm::zip_equal(tensors, specs))
    if (failed(toTensorSpec(tensor, spec, errors)))
      return failure();
  return success();
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
  std::optional<std::string> error = mlir::memfmt::closeOutput(os);
  if (!error)
    return success();
  errors << "cannot write '" << path << "': " << *error;
  return failure();
}

} // namespace

LogicalResult memfmt::compile::writeManifest(
    llvm::StringRef path, const ::memfmt::loader::Manifest &settings,
    const ModelManifest &manifest, llvm::raw_ostream &errors) {
  ::memfmt::loader::Manifest out = settings;
  out.Entry = mlir::memfmt::kEntryFunctionName.str();
  out.ArenaBytes = manifest.arenaBytes;
  out.PeakLiveBytes = manifest.peakLiveBytes;
  out.WeightsBytes = manifest.weightsBytes;
  out.Nodes = manifest.nodeNames;
  if (failed(toTensorSpecs(manifest.parameters, out.Parameters, errors)) ||
      failed(toTensorSpecs(manifest.inputs, out.Inputs, errors)) ||
      failed(toTensorSpecs(manifest.outputs, out.Outputs, errors)))
    return failure();
  ::memfmt::io::Status status =
      ::memfmt::loader::writeManifest(out, path.str());
  if (status.ok())
    return success();
  errors << status.error();
  return failure();
}

std::optional<memfmt::compile::BatchTiling>
memfmt::compile::batchTilingOf(mlir::ModuleOp module) {
  for (auto func : module.getOps<mlir::func::FuncOp>())
    if (auto tiling = func->getAttrOfType<mlir::DictionaryAttr>(
            mlir::memfmt::kBatchTilingAttrName)) {
      auto get = [&](llvm::StringRef key) {
        auto value = mlir::dyn_cast_or_null<mlir::IntegerAttr>(tiling.get(key));
        return value ? value.getInt() : int64_t(0);
      };
      return BatchTiling{get("batch"), get("ops"), get("sub_batch")};
    }
  return std::nullopt;
}

std::string memfmt::compile::describe(const BatchTiling &tiling) {
  return llvm::formatv("the first {0} ops run {1} of the {2} samples at a "
                       "time",
                       tiling.ops, tiling.subBatch, tiling.batch)
      .str();
}

LogicalResult memfmt::compile::addMemoryPlanToReports(
    llvm::StringRef jsonPath, llvm::StringRef textPath,
    const ModelManifest &manifest, std::optional<BatchTiling> tiling,
    llvm::raw_ostream &errors) {
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
  if (tiling)
    object["batch_tiling"] =
        llvm::json::Object{{"batch", tiling->batch},
                           {"ops", tiling->ops},
                           {"sub_batch", tiling->subBatch}};
  else
    object["batch_tiling"] = nullptr;

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
  if (tiling)
    *text << "batch tiling: " << describe(*tiling) << "\n";
  return closeText(*text, textPath, errors);
}
