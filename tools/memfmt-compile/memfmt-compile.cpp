//===- memfmt-compile.cpp - Ahead-of-time compiler driver -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-compile turns a model (a .mlir file of memfmt ops, or a model of
// the built-in zoo) into a directory the runtime loads:
//
//   DIR/input.mlir    the NCHW IR as loaded
//   DIR/model.mlir    the IR after the layout passes
//   DIR/report.txt    layout conversions left, plus the memory plan
//   DIR/report.json   the same, as JSON
//   DIR/model.so      the compiled entry point (calls the memfmt runtime)
//   DIR/manifest.json how to load and call it (format version 1)
//
// Six steps, each announced on stderr: load, check the weights, layout
// passes (the compile pipeline of the library, buildMemFmtCompilePipeline,
// which memfmt-opt runs as --memfmt-compile-pipeline), lower to runtime
// calls, emit the shared library, write the manifest. `--layout-only` stops
// after the layout passes (DIR then holds the .mlir files and the layout
// reports).
//
// With `--train` the model is a training step: step 3 runs the training
// pipeline (buildMemFmtTrainingPipeline, memfmt-opt's
// --memfmt-training-pipeline: forward with the cross-entropy loss,
// differentiation, SGD update, then the same layout passes, so the report
// covers forward and backward). The step takes the input and the class
// indices (`tensor<Nxi64>`) and returns the loss; parameters, momentum
// buffers and running statistics are model state it updates. An extra step
// compiles the inference model of the same network (same formats, batch
// and weight source, the normal inference path) into DIR/eval, for
// evaluating with the running statistics; its parameter names are the
// training step's. Options a target
// cannot serve are rejected before any work. Every file goes to a temporary
// directory next to DIR that is renamed into place at the end, so a failure
// never leaves partial output. Exit codes: 0 success, 1 a user error (bad
// option, input or weights; a model the lowering does not support), 2 an
// internal error (a pass, LLVM or the linker failed on a valid model).
//
// This file holds the option checks, steps 2 and 3, the order of the steps
// (Compiler::run) and main; Compiler.h says where the other steps are.
//
//===----------------------------------------------------------------------===//

#include "CompileOptions.h"
#include "Compiler.h"
#include "WeightsCheck.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Models/ResNet.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

using namespace mlir;
using namespace mlir::memfmt;
using namespace ::memfmt::compile;

namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// Messages and spellings
//===----------------------------------------------------------------------===//

namespace memfmt::compile {

Status userError(const Twine &message) {
  llvm::errs() << "memfmt-compile: error: " << message << "\n";
  return {kUserError};
}

Status internalError(const Twine &message) {
  llvm::errs() << "memfmt-compile: internal error: " << message << "\n";
  return {kInternalError};
}

} // namespace memfmt::compile

namespace {

constexpr llvm::StringLiteral kUsage =
    "usage: memfmt-compile (FILE.mlir | FILE.onnx | --model NAME) [options] "
    "-o DIR (see --help)";

/// The --model help text: "Build a model of the zoo: resnet18, ...".
const std::string &modelDescription() {
  static const std::string text = [] {
    std::string result = "Build a model of the zoo: ";
    llvm::raw_string_ostream os(result);
    llvm::interleave(resnetModelNames(), os, ", ");
    return result;
  }();
  return text;
}

/// The spelling of --memory-format and --input-format values (the
/// manifest's too).
StringRef formatName(MemoryFormat format) {
  return format == MemoryFormat::ChannelsLast ? "channels-last" : "contiguous";
}

} // namespace

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

void Compiler::setTrainingOptions(TrainingPipelineOptions &options) const {
  options.memoryFormat = memoryFormat;
  options.inputFormat = inputFormat;
  options.precision = precision;
  options.target = target;
  options.fusion = fusion;
  setTrainingFlags(options);
}

/// Rejects what no target can serve yet, before any work is done.
Status Compiler::checkOptions() {
  bool hasFile = !inputFile.empty(), hasModel = !modelName.empty();
  if (hasFile == hasModel)
    return userError(Twine(hasFile ? "give either FILE or --model, not both"
                                   : "no model given") +
                     "\n" + kUsage);
  // --target cuda: the same lowering (the runtime dispatches to its CUDA
  // backend). The CPU runs bf16 on oneDNN; it has no f16 kernels.
  if (!isPrecisionAvailable(target, precision))
    return userError("--precision f16 is not available on the cpu target "
                     "(its reduced-precision kernels are bf16); use "
                     "--precision bf16 or f32, or --target cuda");
  if (hasFile) {
    StringRef extension = llvm::sys::path::extension(inputFile);
    isONNX = extension == ".onnx";
#ifndef MEMFMT_HAVE_ONNX
    if (isONNX)
      return userError(inputFile + ": this memfmt-compile was built without "
                                   "the ONNX importer (install libonnx-dev "
                                   "and rebuild); give a .mlir file or "
                                   "--model NAME");
#endif
    if (!isONNX && extension != ".mlir" && extension != ".mlirbc")
      return userError(inputFile + ": unknown input type '" + extension +
                       "'; expected FILE.mlir or FILE.onnx");
    for (cl::opt<int64_t> *shapeOption :
         {&batchSize, &height, &width, &numClasses}) {
      if (!shapeOption->getNumOccurrences() ||
          (isONNX && shapeOption == &batchSize))
        continue;
      return userError("--" + shapeOption->ArgStr + " cannot be used with " +
                       inputFile +
                       ": the shapes come from the file; --height and "
                       "--width (and --num-classes) are for --model, "
                       "--batch for --model and an ONNX model's dynamic "
                       "batch");
    }
  }
  if (!inputShapes.empty() && !isONNX)
    return userError("--input-shape is for ONNX models (their dynamic "
                     "dimensions)");
  if (isONNX && batchSize < 1)
    return userError("--batch " + Twine(batchSize) +
                     ": expected a positive size");
  if (tileBatchBytes < 0)
    return userError("--tile-batch-bytes " + Twine(tileBatchBytes) +
                     ": expected a number of bytes (0 turns tiling off)");
  if (subBatch < 0)
    return userError("--sub-batch " + Twine(subBatch) +
                     ": expected a positive number of samples");
  for (cl::Option *tiling :
       std::initializer_list<cl::Option *>{&tileBatchBytes, &subBatch}) {
    if (!tiling->getNumOccurrences())
      continue;
    if (target != CompileTarget::Cpu)
      return userError("--" + tiling->ArgStr +
                       " is for the cpu target (batch tiling keeps "
                       "activations in a CPU's caches)");
    if (isTraining())
      return userError("--" + tiling->ArgStr +
                       " is for inference models: a training step runs the "
                       "whole batch (its batch norms reduce over it)");
  }
  if (std::string problem = checkTrainingFlags(precision); !problem.empty())
    return userError(problem);
  if (isTraining()) {
    // The training pipeline's own checks (f32, cpu, torch.optim.SGD's and
    // GradScaler's, the latter spelled as the pipeline's loss-scale options).
    TrainingPipelineOptions options;
    setTrainingOptions(options);
    std::string problem = checkTrainingPipelineOptions(options);
    if (!problem.empty())
      return userError("--train: " + problem);
  }
  std::string problem;
  llvm::raw_string_ostream problemStream(problem);
  FailureOr<::memfmt::loader::WeightsSource> source =
      parseWeightsOption(weightsOption, problemStream);
  if (failed(source))
    return userError(problem);
  weights = *source;

  settings.Model =
      hasModel ? modelName.getValue() : llvm::sys::path::stem(inputFile).str();
  settings.Target = target == CompileTarget::Cuda ? "cuda" : "cpu";
  settings.Precision = stringifyComputePrecision(precision).str();
  settings.MemoryFormat = formatName(memoryFormat).str();
  settings.InputFormat = formatName(inputFormat).str();
  settings.Library = "model.so";
  settings.Weights = weights;
  // An ONNX model brings its weights: unless --weights says otherwise they
  // go to DIR/weights.safetensors (the manifest's source is set once the
  // file is written).
  weightsFromModel = isONNX && !weightsOption.getNumOccurrences();
  return kContinue;
}

//===----------------------------------------------------------------------===//
// Step 2: weights
//===----------------------------------------------------------------------===//

Status Compiler::checkWeights() {
  size_t count = 0;
  module->walk([&](WeightOp) { ++count; });
  if (weightsFromModel) {
    progress(2, "weights: the ONNX model's (" + Twine(count) +
                    " parameters, written to weights.safetensors)");
    return kContinue;
  }
  if (weights.K == ::memfmt::loader::WeightsSource::Kind::Synthetic) {
    progress(2, "weights: synthetic, seed " + Twine(weights.Seed) + " (" +
                    Twine(count) + " parameters)");
    return kContinue;
  }
  progress(2, "checking " + weightsOption + " against " + Twine(count) +
                  " parameters");
  std::string message;
  llvm::raw_string_ostream os(message);
  FailureOr<::memfmt::io::SafeTensorsFile> file =
      openWeightsFile(weights.Path, os);
  if (failed(file) ||
      failed(::memfmt::compile::checkWeights(*module, *file, os)))
    return userError(message);
  return kContinue;
}

//===----------------------------------------------------------------------===//
// Step 3: layout
//===----------------------------------------------------------------------===//

/// Runs the compile pipeline (Passes.h) with the flags of the same names;
/// the reports go to DIR/report.txt and DIR/report.json.
Status Compiler::applyLayout() {
  PassManager pm(&context);
  if (isTraining() && !evalStep) {
    progress(3, "training step (loss, backward, SGD " +
                    describeTrainingFlags(precision) +
                    ") and layout: " + formatName(memoryFormat) + " model, " +
                    formatName(inputFormat) + " input");
    // The inference model of DIR/eval starts from the forward as loaded.
    evalModule = OwningOpRef<ModuleOp>(module->clone());
    TrainingPipelineOptions options;
    setTrainingOptions(options);
    options.reportText = file("report.txt");
    options.reportJson = file("report.json");
    buildMemFmtTrainingPipeline(pm, options);
    if (failed(pm.run(*module)))
      return userError("cannot build the training step of " + settings.Model +
                       " (see the errors above)");
    // --gradients: the outputs are named after what they are.
    if (returnsGradients())
      for (auto func : module->getOps<func::FuncOp>())
        if (func.isPublic() && !func.isExternal())
          for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
            auto name =
                func.getResultAttrOfType<StringAttr>(i, "memfmt.gradient_of");
            outputNames.push_back(name ? ("grad." + name.getValue()).str()
                                       : "loss");
          }
    return writeModule("model.mlir");
  }
  progress(3, "layout: " + formatName(memoryFormat) + " model, " +
                  formatName(inputFormat) + " input");
  // The batch is known now (an ONNX model's, or a .mlir model's).
  // The batch is known now (an ONNX model's, a .mlir model's): the largest
  // dim 0 of the arguments, as memfmt-tile-batch takes it.
  int64_t modelBatch = 0;
  for (auto func : module->getOps<func::FuncOp>())
    for (Type type : func.isPublic() ? func.getArgumentTypes() : TypeRange())
      if (auto tensor = dyn_cast<RankedTensorType>(type);
          tensor && tensor.hasStaticShape() && tensor.getRank() >= 1)
        modelBatch = std::max(modelBatch, tensor.getDimSize(0));
  if (subBatch > 0 && modelBatch > 1 && modelBatch % subBatch != 0)
    return userError("--sub-batch " + Twine(subBatch) +
                     " does not divide the model's batch, " +
                     Twine(modelBatch));
  CompilePipelineOptions options;
  options.memoryFormat = memoryFormat;
  options.inputFormat = inputFormat;
  options.precision = precision;
  options.fusion = fusion;
  options.tileBatchBytes = tileBatchBytes;
  options.subBatch = subBatch;
  options.target = target;
  options.reportText = file("report.txt");
  options.reportJson = file("report.json");
  buildMemFmtCompilePipeline(pm, options);
  if (failed(pm.run(*module)))
    return writingStepFailed("the layout passes failed (see the errors above)");
  batchTiling = batchTilingOf(*module);
  if (batchTiling)
    progress(3, "batch tiling: " + describe(*batchTiling));
  return writeModule("model.mlir");
}

//===----------------------------------------------------------------------===//
// The steps in order
//===----------------------------------------------------------------------===//

int Compiler::run() {
  using Step = Status (Compiler::*)();
  // The eval model (--train) is built first: it needs only the inference
  // lowering.
  SmallVector<Step> steps = {
      &Compiler::checkOptions, &Compiler::load,
      &Compiler::createOutput, &Compiler::checkWeights,
      &Compiler::applyLayout,  &Compiler::compileEvalModel};
  if (!layoutOnly)
    steps.append({&Compiler::lower, &Compiler::emitLibrary});
  steps.push_back(&Compiler::writeManifestAndCommit);
  for (Step step : steps) {
    Status status = (this->*step)();
    if (status.failed())
      return status.code;
  }
  return kSuccess;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  modelName.setDescription(modelDescription());
  cl::HideUnrelatedOptions({&toolCategory, &trainingCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "memfmt ahead-of-time compiler: a model (FILE.mlir, or --model NAME "
      "from the zoo) to DIR/model.so + DIR/manifest.json for the memfmt "
      "runtime\n\n"
      "  memfmt-compile (FILE.mlir | FILE.onnx | --model NAME)\n"
      "      [--memory-format channels-last|contiguous]\n"
      "      [--input-format contiguous|channels-last]\n"
      "      [--batch N] [--height H] [--width W] [--target cpu|cuda]\n"
      "      [--input-shape NAME=DIMS]...   (ONNX: dynamic dimensions)\n"
      "      [--precision f32|f16|bf16]\n"
      "      [--weights FILE.safetensors | --weights synthetic[:SEED]]\n"
      "      [--train [--lr F] [--momentum F] [--dampening F] "
      "[--weight-decay F]\n"
      "               [--nesterov] [--gradients] [--grad-scaler ...]]\n"
      "      [--layout-only]\n"
      "      -o DIR\n\n"
      "--train compiles a training step (input, class indices -> mean "
      "cross-entropy loss; SGD updates parameters, momentum buffers and "
      "batch-norm running statistics in place). Its SGD defaults are "
      "torchvision's ResNet recipe: --lr 0.1 --momentum 0.9 --weight-decay "
      "1e-4. DIR/eval gets the inference model of the same network.\n\n"
      "Exit codes: 0 success, 1 user error, 2 internal error.\n");

  DialectRegistry registry;
  registry.insert<MemFmtDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Errors point at the source; the generic form of the op adds nothing.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  Compiler compiler(context, sourceMgr);
  return compiler.run();
}
