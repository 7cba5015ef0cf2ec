//===- SafeTensorsWriter.cpp - Write imported parameters ------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Writes parameters in the safetensors format: an 8-byte little-endian
// header length N, N bytes of JSON ({"<name>": {"dtype", "shape",
// "data_offsets": [begin, end]}, ..., "__metadata__": {...}}, padded with
// spaces to a multiple of 8 so the data section is aligned), then the
// tensors back to back. The compiler writes it itself (the runtime's reader
// is not linked into it); the runtime's strict reader must accept it, which
// the tests check by loading every file the compiler writes.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Import/ONNX.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

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
  for (const ImportedParameter *parameter : parameters) {
    if (!llvm::json::isUTF8(parameter->name)) {
      errors << "cannot write '" << path << "': parameter name '"
             << parameter->name << "' is not valid UTF-8";
      return failure();
    }
  }

  // The header.
  std::string header;
  {
    llvm::raw_string_ostream os(header);
    llvm::json::OStream json(os);
    uint64_t offset = 0;
    json.object([&] {
      json.attributeObject("__metadata__", [&] {
        json.attribute("producer", "memfmt ONNX import");
      });
      for (const ImportedParameter *parameter : parameters) {
        json.attributeObject(parameter->name, [&] {
          json.attribute("dtype", parameter->dtype);
          json.attributeArray("shape", [&] {
            for (int64_t dim : parameter->shape)
              json.value(dim);
          });
          json.attributeArray("data_offsets", [&] {
            json.value(offset);
            json.value(offset + parameter->data.size());
          });
        });
        offset += parameter->data.size();
      }
    });
  }
  header.append((8 - header.size() % 8) % 8, ' ');

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
    char length[8];
    llvm::support::endian::write64le(length, header.size());
    os.write(length, sizeof(length));
    os << header;
    for (const ImportedParameter *parameter : parameters)
      os.write(reinterpret_cast<const char *>(parameter->data.data()),
               parameter->data.size());
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
