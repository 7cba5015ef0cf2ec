//===- Emit.cpp - memfmt-compile's output: steps 4-6 and the eval model ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What memfmt-compile writes: the temporary output directory (renamed into
// place by the last step, so a failure leaves no partial output) and the
// modules in it; step 4, the lowering to runtime calls and the memory plan
// in the reports; step 5, the shared library (object file + link against
// the runtime); step 6, DIR/weights.safetensors of an ONNX model and the
// manifest. With --train, the inference model of the same network built
// into DIR/eval by the same steps. A write that fails on a full disk is a
// user error that says so (writingStepFailed).
//
//===----------------------------------------------------------------------===//

#include "CompileOptions.h"
#include "Compiler.h"

#include "memfmt/Support/OutputFile.h"
#include "memfmt/Target/SharedLibrary.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

#ifndef MEMFMT_RUNTIME_LIBRARY
#define MEMFMT_RUNTIME_LIBRARY ""
#endif

using namespace mlir;
using namespace mlir::memfmt;
using namespace ::memfmt::compile;

//===----------------------------------------------------------------------===//
// The output directory
//===----------------------------------------------------------------------===//

/// Creates the temporary output directory and writes input.mlir to it.
Status Compiler::createOutput() {
  std::string message;
  llvm::raw_string_ostream os(message);
  FailureOr<std::unique_ptr<OutputDirectory>> dir =
      OutputDirectory::create(outputDir, os);
  if (failed(dir))
    return userError(message);
  output = std::move(*dir);
  return writeModule("input.mlir");
}

/// Writes the module, with its locations, to `fileName` in the output.
Status Compiler::writeModule(StringRef fileName) {
  std::string path = file(fileName);
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &message);
  if (!file)
    return userError("cannot write " + path + ": " + message);
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(file->os(), flags);
  if (std::optional<std::string> error = mlir::memfmt::keepOutput(*file))
    return userError("cannot write " + path + ": " + *error);
  return kContinue;
}

Status Compiler::writingStepFailed(const Twine &message) const {
  // Less than this is left only on a disk that is full for any purpose.
  constexpr uint64_t kFullDiskBytes = 1 << 20;
  llvm::ErrorOr<llvm::sys::fs::space_info> space =
      llvm::sys::fs::disk_space(output->temporaryPath());
  if (space && space->available < kFullDiskBytes)
    return userError(message + ": the disk that holds " + outputDir +
                     " is full (" + Twine(space->available) + " bytes free)");
  return internalError(message);
}

//===----------------------------------------------------------------------===//
// Steps 4-6: lower, emit, manifest
//===----------------------------------------------------------------------===//

Status Compiler::lower() {
  progress(4, "lowering to runtime calls");
  if (failed(lowerToRuntimeCalls(*module, manifest)))
    return userError("cannot lower " + settings.Model +
                     " to runtime calls (see the errors above)");
  if (!evalStep && outputNames.size() == manifest.outputs.size())
    for (auto [output, name] : llvm::zip(manifest.outputs, outputNames))
      output.name = name;
  std::string message;
  llvm::raw_string_ostream os(message);
  if (failed(addMemoryPlanToReports(file("report.json"), file("report.txt"),
                                    manifest, batchTiling, os)))
    return userError(message);
  if (failed(lowerToLLVMDialect(*module)))
    return internalError("lowering to the LLVM dialect failed");
  return kContinue;
}

Status Compiler::emitLibrary() {
  progress(5, "generating " + settings.Library);
  StringRef runtimeLibrary = MEMFMT_RUNTIME_LIBRARY;
  if (runtimeLibrary.empty())
    return internalError("memfmt-compile was built without the memfmt "
                         "runtime library (target MemFmtRuntime)");
  std::string object = file("model.o");
  // A CUDA model runs on another machine (a GPU server): its host code is
  // compiled for any x86-64-v2 CPU rather than for this one.
  StringRef cpu = target == CompileTarget::Cuda ? "x86-64-v2" : "";
  if (failed(emitObjectFile(*module, object, cpu)))
    return writingStepFailed("emitting the object file failed");
  if (failed(linkSharedLibrary(module->getLoc(), object, file(settings.Library),
                               runtimeLibrary)))
    return writingStepFailed("linking " + settings.Library + " failed");
  if (std::error_code ec = llvm::sys::fs::remove(object))
    return userError("cannot remove " + object + ": " + ec.message());
  return kContinue;
}

/// Writes the parameters the lowered model reads, from the ONNX model, to
/// DIR/weights.safetensors, and points the manifest at the file's final
/// path (DIR is renamed into place by the commit).
Status Compiler::writeONNXWeights() {
#ifdef MEMFMT_HAVE_ONNX
  std::vector<const mlir::memfmt::ImportedParameter *> parameters;
  for (const TensorPlacement &placement : manifest.parameters) {
    const mlir::memfmt::ImportedParameter *found = nullptr;
    for (const mlir::memfmt::ImportedParameter &parameter : onnxParameters)
      if (parameter.name == placement.name)
        found = &parameter;
    if (!found || ArrayRef<int64_t>(found->shape) !=
                      ArrayRef<int64_t>(placement.shape))
      return internalError("parameter '" + placement.name +
                           "' of the lowered model is not a parameter of "
                           "the imported ONNX model");
    if (!llvm::is_contained(parameters, found))
      parameters.push_back(found);
  }
  std::string message;
  llvm::raw_string_ostream os(message);
  if (failed(mlir::memfmt::writeSafeTensors(
          output->file("weights.safetensors"), parameters, os)))
    return userError(message);
  llvm::SmallString<256> finalFile(output->finalPath());
  llvm::sys::path::append(finalFile, "weights.safetensors");
  settings.Weights.K = ::memfmt::loader::WeightsSource::Kind::SafeTensors;
  settings.Weights.Path = finalFile.str().str();
  return kContinue;
#else
  return internalError("built without the ONNX importer");
#endif
}

Status Compiler::writeManifestAndCommit() {
  if (weightsFromModel && !layoutOnly)
    if (Status status = writeONNXWeights(); status.failed())
      return status;
  std::string message;
  llvm::raw_string_ostream os(message);
  if (!layoutOnly) {
    progress(kNumSteps, "writing manifest.json");
    if (failed(writeManifest(output->file("manifest.json"), settings, manifest,
                             os)))
      return userError(message);
  }
  if (failed(output->commit(os)))
    return userError(message);
  llvm::errs() << "memfmt-compile: wrote " << output->finalPath() << "\n";
  return kContinue;
}

//===----------------------------------------------------------------------===//
// --train: the eval model
//===----------------------------------------------------------------------===//

/// --train: compiles the loaded forward by the normal inference path into
/// DIR/eval, with the weight source of the training step (for an ONNX model
/// DIR/weights.safetensors, written from the eval model's parameters, which
/// are the training step's less its optimizer state).
Status Compiler::compileEvalModel() {
  if (!isTraining())
    return kContinue;
  if (std::error_code ec =
          llvm::sys::fs::create_directory(output->file("eval")))
    return userError("cannot create " + output->file("eval") + ": " +
                     ec.message());
  // Build the eval model in place of the training step, then put the
  // training step back.
  evalStep = kEvalStep;
  subdirectory = "eval/";
  std::swap(module, evalModule);
  ModelManifest trainingManifest = std::move(manifest);
  manifest = ModelManifest();
  Status status = writeModule("input.mlir");
  using Step = Status (Compiler::*)();
  SmallVector<Step> steps = {&Compiler::applyLayout};
  if (!layoutOnly)
    steps.append({&Compiler::lower, &Compiler::emitLibrary,
                  &Compiler::writeEvalManifest});
  for (Step step : steps)
    if (!status.failed())
      status = (this->*step)();
  std::swap(module, evalModule);
  manifest = std::move(trainingManifest);
  subdirectory.clear();
  evalStep = 0;
  return status;
}

Status Compiler::writeEvalManifest() {
  if (weightsFromModel) {
    if (Status status = writeONNXWeights(); status.failed())
      return status;
    weightsFromModel = false; // written: writeManifestAndCommit skips it
  }
  progress(kEvalStep, "writing eval/manifest.json");
  std::string message;
  llvm::raw_string_ostream os(message);
  if (failed(writeManifest(file("manifest.json"), settings, manifest, os)))
    return userError(message);
  return kContinue;
}
