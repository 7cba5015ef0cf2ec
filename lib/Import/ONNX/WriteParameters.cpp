//===- WriteParameters.cpp - Write parameters as safetensors --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Writes an import's parameters as a .safetensors file through the
// runtime's encoder (memfmt/runtime/io/SafeTensors.h, the same code that
// reads the file back at load time), so the format is written in one place.
// This file only adapts ImportedParameter to io::TensorView and writes the
// encoded bytes next to the destination and renames them into place, so a
// failure leaves no partial file.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Import/ONNX.h"

#include "memfmt/runtime/io/SafeTensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir;
using namespace mlir::memfmt;

const ImportedParameter *ONNXModel::findParameter(StringRef name) const {
  for (const ImportedParameter &parameter : parameters)
    if (parameter.name == name)
      return &parameter;
  return nullptr;
}

LogicalResult
mlir::memfmt::writeSafeTensors(StringRef path,
                               ArrayRef<const ImportedParameter *> parameters,
                               llvm::raw_ostream &errors) {
  std::vector<::memfmt::io::TensorView> views;
  views.reserve(parameters.size());
  for (const ImportedParameter *parameter : parameters) {
    std::optional<::memfmt::io::DType> type =
        ::memfmt::io::parseDTypeName(parameter->dtype);
    if (!type) {
      errors << "cannot write '" << path << "': internal error: parameter '"
             << parameter->name << "' has no safetensors dtype ('"
             << parameter->dtype << "')";
      return failure();
    }
    views.push_back(
        {parameter->name, *type,
         std::vector<int64_t>(parameter->shape.begin(), parameter->shape.end()),
         parameter->data.data(), parameter->data.size()});
  }
  ::memfmt::io::Result<std::vector<uint8_t>> bytes =
      ::memfmt::io::encodeSafeTensors(views,
                                      {{"producer", "memfmt ONNX import"}});
  if (!bytes) {
    errors << "cannot write '" << path << "': " << bytes.error();
    return failure();
  }

  // Write next to `path`, then rename into place.
  llvm::SmallString<256> temporary;
  int fd = -1;
  llvm::SmallString<256> model(path);
  model += ".partial-%%%%%%";
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(model, fd, temporary)) {
    errors << "cannot write '" << path << "': " << ec.message();
    return failure();
  }
  bool ok;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(reinterpret_cast<const char *>(bytes->data()), bytes->size());
    os.close();
    ok = !os.has_error();
    if (!ok) {
      errors << "cannot write '" << path << "': " << os.error().message();
      os.clear_error();
    }
  }
  if (ok) {
    if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
      errors << "cannot write '" << path << "': " << ec.message();
      ok = false;
    }
  }
  if (!ok)
    (void)llvm::sys::fs::remove(temporary);
  return success(ok);
}
