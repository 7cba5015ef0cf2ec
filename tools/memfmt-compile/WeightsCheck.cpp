//===- WeightsCheck.cpp - Check a weight file against a model -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Parses --weights (the loader's grammar), and opens a
// .safetensors file with the runtime's reader (which validates the
// header and the data section when it opens the file) and compares its
// tensors with the model's parameters (zero-initialised optimizer state,
// `memfmt.weight {zero_init}`, may be absent). The comparison collects every
// missing, extra, mis-shaped or mistyped tensor before it reports, so one
// run shows everything that is wrong.
//
//===----------------------------------------------------------------------===//

#include "WeightsCheck.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <string>
#include <vector>

using namespace memfmt::compile;
namespace io = memfmt::io;
using mlir::failure;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::success;

namespace {

/// The dtypes a parameter may have: the loader converts them.
bool isParameterDtype(io::DType dtype) {
  return dtype == io::DType::F32 || dtype == io::DType::F16 ||
         dtype == io::DType::BF16;
}

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

/// The parameters `module` declares, by name, with their logical shapes;
/// the names of those a file may leave out (zero-initialised optimizer
/// state) go to `optional`.
llvm::StringMap<llvm::SmallVector<int64_t, 4>>
collectParameters(mlir::ModuleOp module, std::vector<std::string> &orderedNames,
                  llvm::StringSet<> &optional) {
  llvm::StringMap<llvm::SmallVector<int64_t, 4>> parameters;
  module.walk([&](mlir::memfmt::WeightOp op) {
    auto [it, inserted] = parameters.try_emplace(
        op.getName(), llvm::to_vector_of<int64_t, 4>(op.getType().getShape()));
    if (inserted)
      orderedNames.push_back(op.getName().str());
    if (op.getZeroInit())
      optional.insert(op.getName());
  });
  return parameters;
}

} // namespace

FailureOr<::memfmt::loader::WeightsSource>
memfmt::compile::parseWeightsOption(llvm::StringRef text,
                                    llvm::raw_ostream &errors) {
  io::Result<::memfmt::loader::WeightsSource> source =
      ::memfmt::loader::parseWeightsSource(text.str(), /*BaseDir=*/"",
                                           /*AllowBarePath=*/true);
  if (!source) {
    errors << "--weights: " << source.error();
    return failure();
  }
  if (source->K == ::memfmt::loader::WeightsSource::Kind::SafeTensors) {
    llvm::SmallString<256> path(source->Path);
    llvm::sys::fs::make_absolute(path);
    llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
    source->Path = std::string(path);
  }
  return *source;
}

FailureOr<io::SafeTensorsFile>
memfmt::compile::openWeightsFile(llvm::StringRef path,
                                 llvm::raw_ostream &errors) {
  // A file that cannot be opened at all is not an invalid file: say so the
  // way the other input files are reported.
  llvm::Expected<llvm::sys::fs::file_t> handle =
      llvm::sys::fs::openNativeFileForRead(path);
  if (!handle) {
    errors << "cannot open weights file '" << path
           << "': " << llvm::toString(handle.takeError());
    return failure();
  }
  llvm::sys::fs::closeFile(*handle);
  io::Result<io::SafeTensorsFile> file = io::SafeTensorsFile::open(path.str());
  if (!file) {
    // The reader's messages start with the path it was given.
    llvm::StringRef problem = file.error();
    (void)problem.consume_front((path + ": ").str());
    errors << "weights file '" << path
           << "' is not a valid safetensors file: " << problem;
    return failure();
  }
  return file.take();
}

LogicalResult memfmt::compile::checkWeights(mlir::ModuleOp module,
                                            const io::SafeTensorsFile &file,
                                            llvm::raw_ostream &errors) {
  std::vector<std::string> parameterNames;
  llvm::StringSet<> zeroInit;
  llvm::StringMap<llvm::SmallVector<int64_t, 4>> parameters =
      collectParameters(module, parameterNames, zeroInit);

  std::vector<std::string> problems;
  for (const std::string &name : parameterNames) {
    llvm::ArrayRef<int64_t> shape = parameters[name];
    const io::TensorView *tensor = file.find(name);
    if (!tensor) {
      if (!zeroInit.contains(name)) // Optimizer state starts as zeros.
        problems.push_back("missing: " + name + " " + formatShape(shape));
      continue;
    }
    if (llvm::ArrayRef<int64_t>(tensor->Shape) != shape)
      problems.push_back(
          "mis-shaped: " + name + " is " + formatShape(tensor->Shape) +
          " in the file, the model expects " + formatShape(shape));
    if (!isParameterDtype(tensor->Type))
      problems.push_back("unsupported dtype: " + name + " is " +
                         io::dtypeName(tensor->Type) +
                         "; parameters must be F32, F16 or BF16");
  }
  for (const io::TensorView &tensor : file.tensors())
    if (!parameters.count(tensor.Name) &&
        !::memfmt::loader::isTrainingOnlyState(tensor.Name))
      problems.push_back("extra: " + tensor.Name + " " +
                         formatShape(tensor.Shape) +
                         " is not a parameter of the model");
  if (problems.empty())
    return success();
  errors << "weights file '" << file.path() << "' does not match the model ("
         << problems.size() << " problem(s)):";
  for (const std::string &problem : problems)
    errors << "\n  " << problem;
  return failure();
}
