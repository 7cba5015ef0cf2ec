//===- Load.cpp - memfmt-compile step 1: the model ------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Step 1 of memfmt-compile: the model as a module of memfmt ops, built from
// the zoo (--model NAME), parsed from FILE.mlir or imported from FILE.onnx
// (its parameters kept for DIR/weights.safetensors), then checked for what
// the runtime needs of it: exactly one public forward function, tensors in
// the requested precision (or f32, which --precision converts), at least
// one output, no tensor over 1 TiB, one shape per parameter name.
//
//===----------------------------------------------------------------------===//

#include "CompileOptions.h"
#include "Compiler.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Import/MLIR.h"
#ifdef MEMFMT_HAVE_ONNX
#include "memfmt/Import/ONNX.h"
#endif
#include "memfmt/Models/ResNet.h"

#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::memfmt;
using namespace ::memfmt::compile;

Status Compiler::load() {
  Status status = !modelName.empty() ? buildZooModel()
                  : isONNX           ? importONNXModel()
                                     : parseModelFile();
  if (status.failed())
    return status;
  return checkForwardFunction();
}

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
