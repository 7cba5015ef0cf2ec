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
//===----------------------------------------------------------------------===//

#include "Manifest.h"
#include "OutputDirectory.h"
#include "TrainingOptions.h"
#include "WeightsCheck.h"

#include "memfmt/Conversion/MemFmtToRuntime/MemFmtToRuntime.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"
#include "memfmt/Import/MLIR.h"
#ifdef MEMFMT_HAVE_ONNX
#include "memfmt/Import/ONNX.h"
#endif
#include "memfmt/Models/ResNet.h"
#include "memfmt/Support/OutputFile.h"
#include "memfmt/Target/SharedLibrary.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <optional>
#include <string>

#ifndef MEMFMT_RUNTIME_LIBRARY
#define MEMFMT_RUNTIME_LIBRARY ""
#endif

using namespace mlir;
using namespace mlir::memfmt;
using namespace ::memfmt::compile;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

namespace {

cl::OptionCategory toolCategory("memfmt-compile options");

cl::opt<std::string> inputFile(cl::Positional, cl::init(""),
                               cl::desc("[FILE.mlir | FILE.onnx]"),
                               cl::cat(toolCategory));

// The description names the zoo (resnetModelNames()); main sets it.
cl::opt<std::string> modelName("model", cl::value_desc("NAME"),
                               cl::cat(toolCategory));

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

// The flags the compile pipeline takes spell their values as its options do
// (the value lists of Passes.h).
cl::opt<MemoryFormat> memoryFormat(
    "memory-format",
    cl::desc("Memory format the model runs in (default channels-last)"),
    modelMemoryFormatValues(), cl::init(MemoryFormat::ChannelsLast),
    cl::cat(toolCategory));

cl::opt<MemoryFormat> inputFormat(
    "input-format",
    cl::desc("Memory format of the input the caller passes (default "
             "contiguous)"),
    modelMemoryFormatValues(), cl::init(MemoryFormat::Contiguous),
    cl::cat(toolCategory));

cl::opt<int64_t> batchSize("batch", cl::init(1), cl::value_desc("N"),
                           cl::desc("Batch size of a zoo model (default 1), "
                                    "or of an ONNX model's dynamic batch"),
                           cl::cat(toolCategory));
cl::list<std::string>
    inputShapes("input-shape", cl::value_desc("NAME=DIMS"),
                cl::desc("Shape of an ONNX model's input NAME (its dynamic "
                         "dimensions), as 1x3x224x224"),
                cl::cat(toolCategory));
cl::opt<int64_t> height("height", cl::init(224), cl::value_desc("H"),
                        cl::desc("Input height of a zoo model (default 224)"),
                        cl::cat(toolCategory));
cl::opt<int64_t> width("width", cl::init(224), cl::value_desc("W"),
                       cl::desc("Input width of a zoo model (default 224)"),
                       cl::cat(toolCategory));
cl::opt<int64_t>
    numClasses("num-classes", cl::init(1000), cl::value_desc("N"),
               cl::desc("Classes of a zoo model's fc layer (torchvision's "
                        "num_classes; default 1000)"),
               cl::cat(toolCategory));

cl::opt<CompileTarget>
    target("target", cl::desc("Device the model runs on (default cpu)"),
           compileTargetValues(), cl::init(CompileTarget::Cpu),
           cl::cat(toolCategory));

cl::opt<ComputePrecision> precision(
    "precision",
    cl::desc("Element type of activations and parameters (default f32)"),
    computePrecisionValues(), cl::init(ComputePrecision::F32),
    cl::cat(toolCategory));

cl::opt<std::string>
    weightsOption("weights", cl::init("synthetic:0"),
                  cl::value_desc("FILE.safetensors | synthetic[:SEED]"),
                  cl::desc("Weight source: a safetensors file with "
                           "torchvision state_dict keys, or seeded "
                           "synthetic values (default synthetic:0)"),
                  cl::cat(toolCategory));

cl::opt<bool> fusion("fusion", cl::init(true),
                     cl::desc("Fold batch norms into convolutions and fuse "
                              "residual adds and relus into them "
                              "(memfmt-fuse-conv; with --train, into the "
                              "training batch norms on the CPU, "
                              "memfmt-fuse-training; default on, "
                              "--fusion=false to turn off)"),
                     cl::cat(toolCategory));

cl::opt<int64_t> tileBatchBytes(
    "tile-batch-bytes", cl::init(16 << 20), cl::value_desc("BYTES"),
    cl::desc("CPU inference: run the first layers one sub-batch at a time "
             "while their activations span more than BYTES, so that they "
             "stay in cache (memfmt-tile-batch; default 16 MiB, 0 turns it "
             "off)"),
    cl::cat(toolCategory));

cl::opt<int64_t> subBatch(
    "sub-batch", cl::init(0), cl::value_desc("N"),
    cl::desc("CPU inference: run every layer that computes each sample "
             "alone N samples at a time, whatever the sizes (N must divide "
             "the batch; default: chosen by --tile-batch-bytes)"),
    cl::cat(toolCategory));

cl::opt<std::string> outputDir("o", cl::Required, cl::value_desc("DIR"),
                               cl::desc("Output directory"),
                               cl::cat(toolCategory));

cl::opt<bool> layoutOnly(
    "layout-only", cl::init(false),
    cl::desc("Stop after the layout passes: DIR gets input.mlir, model.mlir "
             "and the layout reports, no library or manifest"),
    cl::cat(toolCategory));

constexpr int kNumSteps = 6;
/// --train: the step the eval model is built in (the later ones shift by
/// one).
constexpr int kEvalStep = 4;
constexpr llvm::StringLiteral kUsage =
    "usage: memfmt-compile (FILE.mlir | FILE.onnx | --model NAME) [options] "
    "-o DIR (see --help)";

/// The spelling of --memory-format and --input-format values (the
/// manifest's too).
StringRef formatName(MemoryFormat format) {
  return format == MemoryFormat::ChannelsLast ? "channels-last" : "contiguous";
}

//===----------------------------------------------------------------------===//
// Outcomes and messages
//===----------------------------------------------------------------------===//

enum ExitCode : int { kSuccess = 0, kUserError = 1, kInternalError = 2 };

/// The outcome of a step: go on, or stop with an exit code.
struct [[nodiscard]] Status {
  int code = kSuccess;
  bool failed() const { return code != kSuccess; }
};

constexpr Status kContinue{kSuccess};

Status userError(const Twine &message) {
  llvm::errs() << "memfmt-compile: error: " << message << "\n";
  return {kUserError};
}

Status internalError(const Twine &message) {
  llvm::errs() << "memfmt-compile: internal error: " << message << "\n";
  return {kInternalError};
}


//===----------------------------------------------------------------------===//
// The compiler
//===----------------------------------------------------------------------===//

class Compiler {
public:
  Compiler(MLIRContext &context, llvm::SourceMgr &sourceMgr)
      : context(context), sourceMgr(sourceMgr) {}

  /// Runs every step; returns the exit code.
  int run();

private:
  Status checkOptions();
  Status load();
  Status buildZooModel();
  Status parseModelFile();
  Status importONNXModel();
  Status writeONNXWeights();
  Status checkForwardFunction();
  Status checkModelLimits();
  Status createOutput();
  Status checkWeights();
  Status applyLayout();
  Status lower();
  Status emitLibrary();
  Status writeManifestAndCommit();

  Status compileEvalModel();
  Status writeEvalManifest();

  Status writeModule(StringRef fileName);
  /// The path of `fileName` in the output directory of the model being
  /// built (DIR, or DIR/eval for the eval model).
  std::string file(StringRef fileName) const {
    return output->file((Twine(subdirectory) + fileName).str());
  }
  /// A step that writes into the output directory failed (the errors above
  /// name the file): where the disk that holds it is full, the disk is the
  /// cause, not memfmt, and the exit code is a user error's. (ld.lld, which
  /// writes its output through a memory mapping, dies of SIGBUS there.)
  Status writingStepFailed(const Twine &message) const;
  /// Announces a step on stderr; the eval model's steps are announced as
  /// its one step, after the layout step (--train).
  void progress(int step, const Twine &message) const {
    int total = kNumSteps + (isTraining() ? 1 : 0);
    if (evalStep)
      llvm::errs() << "[" << evalStep << "/" << total
                   << "] eval model: " << message << "\n";
    else
      llvm::errs() << "["
                   << (isTraining() && step >= kEvalStep ? step + 1 : step)
                   << "/" << total << "] " << message << "\n";
  }
  /// Sets the options of the training pipeline from the flags.
  void setTrainingOptions(TrainingPipelineOptions &options) const;

  MLIRContext &context;
  llvm::SourceMgr &sourceMgr;
  OwningOpRef<ModuleOp> module;
  func::FuncOp forward;
  std::unique_ptr<OutputDirectory> output;
  ::memfmt::loader::WeightsSource weights;
  /// What the command line chose, as the manifest spells it; writeManifest
  /// adds what the lowering planned.
  ::memfmt::loader::Manifest settings;
  ModelManifest manifest;
  /// ONNX input: the parameters the import produced, and whether they are
  /// the weights (no --weights given): then the compiler writes them to
  /// DIR/weights.safetensors.
  std::vector<mlir::memfmt::ImportedParameter> onnxParameters;
  bool isONNX = false;
  bool weightsFromModel = false;
  /// --train: the inference forward as loaded (compiled to DIR/eval), and
  /// the state of the build in progress: "" or "eval/", and the step the
  /// eval model is announced as (0 while building the training step).
  OwningOpRef<ModuleOp> evalModule;
  std::string subdirectory;
  int evalStep = 0;
  /// --train --gradients: the names of the step's outputs ("loss",
  /// "grad.NAME"), in the manifest in place of the lowering's.
  std::vector<std::string> outputNames;
  /// What memfmt-tile-batch did, for the progress line and the reports.
  std::optional<BatchTiling> batchTiling;
};

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
// Step 1: load
//===----------------------------------------------------------------------===//

Status Compiler::buildZooModel() {
  progress(1, "building " + modelName + " (batch " + Twine(batchSize) + ", " +
                  Twine(height) + "x" + Twine(width) + ")");
  std::string message;
  llvm::raw_string_ostream os(message);
  FailureOr<OwningOpRef<ModuleOp>> built =
      buildResNet(&context, modelName, batchSize, height, width,
                  Builder(&context).getF32Type(), os, numClasses);
  if (failed(built))
    return userError(message);
  module = std::move(*built);
  return kContinue;
}

Status Compiler::parseModelFile() {
  progress(1, "loading " + inputFile);
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(inputFile, &message);
  if (!file)
    return userError(message);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  ParserConfig config(&context);
  module = parseMLIRModule(sourceMgr, config);
  if (!module)
    return userError("cannot load " + inputFile + " (see the errors above)");
  return kContinue;
}

/// The module must have exactly one public function with a body, whose
/// floating-point tensors are in the requested precision.
Status Compiler::checkForwardFunction() {
  SmallVector<func::FuncOp> candidates;
  for (auto func : module->getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      candidates.push_back(func);
  if (candidates.empty())
    return userError(inputFile + ": there is no public func.func with a "
                                 "body (the model's forward function)");
  if (candidates.size() > 1) {
    InFlightDiagnostic diag =
        candidates[1].emitError()
        << "expected exactly one public func.func (the model's forward "
           "function), found "
        << candidates.size() << "; make the others private";
    diag.attachNote(candidates[0].getLoc())
        << "public function @" << candidates[0].getName();
    return {kUserError};
  }
  forward = candidates.front();
  // An f32 model is converted to --precision (memfmt-convert-precision);
  // a model already in the precision is taken as it is.
  Type expected = getComputeElementType(&context, precision);
  for (Type type : llvm::concat<const Type>(forward.getArgumentTypes(),
                                            forward.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && isa<FloatType>(tensor.getElementType()) &&
        tensor.getElementType() != expected &&
        !tensor.getElementType().isF32()) {
      forward.emitError() << "the model's tensors are "
                          << tensor.getElementType() << " but --precision is "
                          << expected
                          << "; converting precision is not available yet "
                             "from "
                          << tensor.getElementType()
                          << " (f32 models are converted to --precision)";
      return {kUserError};
    }
  }
  return checkModelLimits();
}

/// What the runtime cannot load although the IR is valid: a model without
/// outputs, a tensor whose byte size the memory plan cannot hold, one
/// parameter name with two shapes. (A model without inputs is valid: an
/// ONNX graph of constants.)
Status Compiler::checkModelLimits() {
  if (forward.getNumResults() == 0) {
    forward.emitError() << "the model's forward function @"
                        << forward.getName()
                        << " has no results; a model needs at least one "
                           "output tensor";
    return {kUserError};
  }
  constexpr int64_t kMaxTensorBytes = int64_t(1) << 40;
  auto checkSize = [&](Type type, Location loc) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return success();
    int64_t bytes = std::max<int64_t>(
        1, llvm::divideCeil(tensor.getElementTypeBitWidth(), 8));
    for (int64_t size : tensor.getShape())
      if (llvm::MulOverflow(bytes, size, bytes) || bytes > kMaxTensorBytes)
        return emitError(loc) << tensor << " is too large: a tensor of a "
                              << "model may take at most 1 TiB";
    return success();
  };
  for (BlockArgument arg : forward.getArguments())
    if (failed(checkSize(arg.getType(), arg.getLoc())))
      return {kUserError};
  llvm::StringMap<WeightOp> parameters;
  WalkResult walk = module->walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (failed(checkSize(type, op->getLoc())))
        return WalkResult::interrupt();
    auto weight = dyn_cast<WeightOp>(op);
    if (!weight)
      return WalkResult::advance();
    auto [it, inserted] = parameters.try_emplace(weight.getName(), weight);
    RankedTensorType first = it->second.getType(), type = weight.getType();
    if (!inserted && (first.getShape() != type.getShape() ||
                      first.getElementType() != type.getElementType())) {
      InFlightDiagnostic diag =
          weight.emitError()
          << "parameter '" << weight.getName() << "' is declared as " << type
          << " but also as " << first
          << "; one name is one tensor of the weights";
      diag.attachNote(it->second.getLoc()) << "first declared here";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return walk.wasInterrupted() ? Status{kUserError} : kContinue;
}

/// Imports the ONNX file (in f32); the parameters are kept for
/// DIR/weights.safetensors.
Status Compiler::importONNXModel() {
#ifdef MEMFMT_HAVE_ONNX
  progress(1, "importing " + inputFile);
  mlir::memfmt::ONNXImportOptions options;
  // Imported in f32; --precision converts after the layout passes.
  options.elementType = Builder(&context).getF32Type();
  if (batchSize.getNumOccurrences())
    options.batch = batchSize;
  for (const std::string &spec : inputShapes) {
    std::string problem;
    llvm::raw_string_ostream os(problem);
    if (failed(mlir::memfmt::addInputShape(options, spec, os)))
      return userError(problem);
  }
  std::string message;
  llvm::raw_string_ostream os(message);
  FailureOr<mlir::memfmt::ONNXModel> model =
      mlir::memfmt::importONNXFile(&context, inputFile, options, os);
  if (failed(model))
    return userError(message);
  module = std::move(model->module);
  onnxParameters = std::move(model->parameters);
  if (isTraining()) {
    // A tensor the import computed from non-parameters would become a
    // trainable weight: refuse rather than train what PyTorch would not.
    std::string computed;
    int count = 0;
    for (const mlir::memfmt::ImportedParameter &p : onnxParameters)
      if (p.computed && ++count <= 3)
        computed += (computed.empty() ? "'" : ", '") + p.name + "'";
    if (count)
      return userError(
          "--train: " + inputFile + ": " + std::to_string(count) +
          " tensor(s) the import computed from constants that are no "
          "initializers (" +
          computed + (count > 3 ? ", ..." : "") +
          ") would be trained as parameters; training such a model is not "
          "supported yet (its inference compiles without --train)");
  }
  return kContinue;
#else
  return internalError("built without the ONNX importer");
#endif
}

Status Compiler::writingStepFailed(const Twine &message) const {
  // Less than this is left only on a disk that is full for any purpose.
  constexpr uint64_t kFullDiskBytes = 1 << 20;
  std::string directory = llvm::sys::path::parent_path(file("x")).str();
  llvm::ErrorOr<llvm::sys::fs::space_info> space =
      llvm::sys::fs::disk_space(directory);
  if (space && space->available < kFullDiskBytes)
    return userError(message + ": the disk that holds " + outputDir +
                     " is full (" + Twine(space->available) + " bytes free)");
  return internalError(message);
}

Status Compiler::load() {
  Status status = !modelName.empty() ? buildZooModel()
                  : isONNX           ? importONNXModel()
                                     : parseModelFile();
  if (status.failed())
    return status;
  return checkForwardFunction();
}

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

} // namespace

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
