//===- memfmt-import.cpp - Translate ONNX models to memfmt IR -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-import translates an ONNX model to the memfmt dialect:
//
//   memfmt-import FILE.onnx [-o FILE.mlir] [--weights-out FILE.safetensors]
//                 [--precision model|f32|f16|bf16] [--batch N]
//                 [--input-shape NAME=DIMS]...
//   memfmt-import --list-onnx-ops
//
// The IR is the NCHW function memfmt-compile starts from (as in its
// DIR/input.mlir), printed with its locations (the ONNX node and value
// names). --weights-out writes the parameters the IR names, as stored in
// the model (plus the ones the importer computed), so that memfmt-compile
// FILE.mlir --weights FILE.safetensors builds the same model. --batch and
// --input-shape give the inputs' dynamic dimensions their sizes. Errors (an
// unreadable or malformed file, unsupported or inconsistent nodes, all
// listed) exit with 1 and write nothing. --list-onnx-ops prints the
// operator section of docs/onnx.md (the opsets and the table of operators)
// from the importer's registry; a lit test compares the two.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Import/ONNX.h"
#include "memfmt/Support/OutputFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

#include <string>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory toolCategory("memfmt-import options");

// Optional for --list-onnx-ops; main() requires it otherwise.
cl::opt<std::string> inputFile(cl::Positional, cl::desc("FILE.onnx"),
                               cl::cat(toolCategory));

cl::opt<bool> listOps("list-onnx-ops",
                      cl::desc("Print the supported ONNX operators as "
                               "docs/onnx.md's Markdown table, and exit"),
                      cl::cat(toolCategory));

cl::opt<std::string> outputFile("o", cl::init("-"), cl::value_desc("FILE.mlir"),
                                cl::desc("Output file (default: stdout)"),
                                cl::cat(toolCategory));

cl::opt<std::string>
    weightsOut("weights-out", cl::value_desc("FILE.safetensors"),
               cl::desc("Also write the parameters the IR names"),
               cl::cat(toolCategory));

cl::opt<int64_t> batch("batch", cl::value_desc("N"),
                       cl::desc("Size of the inputs' dynamic dimension 0"),
                       cl::cat(toolCategory));

cl::list<std::string>
    inputShapes("input-shape", cl::value_desc("NAME=DIMS"),
                cl::desc("Shape of the input NAME, as 1x3x224x224"),
                cl::cat(toolCategory));

cl::opt<std::string>
    precision("precision", cl::init("model"),
              cl::value_desc("model|f32|f16|bf16"),
              cl::desc("Element type of the function's tensors (default: the "
                       "model's)"),
              cl::cat(toolCategory));

int fail(const Twine &message) {
  llvm::errs() << "memfmt-import: error: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(
      argc, argv,
      "memfmt ONNX importer: an ONNX model to memfmt IR (NCHW, as saved)\n\n"
      "  memfmt-import FILE.onnx [-o FILE.mlir] "
      "[--weights-out FILE.safetensors]\n"
      "                [--precision model|f32|f16|bf16]\n"
      "  memfmt-import --list-onnx-ops\n\n"
      "Exit codes: 0 success, 1 error (nothing is written).\n");

  if (listOps) {
    memfmt::printONNXOperatorTable(llvm::outs());
    return 0;
  }
  if (inputFile.empty()) {
    // What the command line library says for a missing required positional.
    llvm::errs() << "memfmt-import: Not enough positional command line "
                    "arguments specified!\nMust specify at least 1 "
                    "positional argument: See: "
                 << argv[0] << " --help\n";
    return 1;
  }

  MLIRContext context;
  Builder builder(&context);
  memfmt::ONNXImportOptions options;
  if (precision == "f32")
    options.elementType = builder.getF32Type();
  else if (precision == "f16")
    options.elementType = builder.getF16Type();
  else if (precision == "bf16")
    options.elementType = builder.getBF16Type();
  else if (precision != "model")
    return fail("--precision " + precision +
                ": expected model, f32, f16 or bf16");
  if (batch.getNumOccurrences()) {
    if (batch < 1)
      return fail("--batch " + std::to_string(batch) +
                  ": expected a positive size");
    options.batch = batch;
  }
  for (const std::string &spec : inputShapes) {
    std::string problem;
    llvm::raw_string_ostream os(problem);
    if (failed(memfmt::addInputShape(options, spec, os)))
      return fail(problem);
  }

  std::string message;
  llvm::raw_string_ostream os(message);
  FailureOr<memfmt::ONNXModel> model =
      memfmt::importONNXFile(&context, inputFile, options, os);
  if (failed(model))
    return fail(message);

  // The IR file is removed again unless everything succeeds.
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &message);
  if (!output)
    return fail(message);
  if (!weightsOut.empty()) {
    std::vector<const memfmt::ImportedParameter *> parameters;
    for (const memfmt::ImportedParameter &parameter : model->parameters)
      parameters.push_back(&parameter);
    if (failed(memfmt::writeSafeTensors(weightsOut, parameters, os)))
      return fail(message);
  }
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  model->module->print(output->os(), flags);
  if (std::optional<std::string> error = mlir::memfmt::keepOutput(*output))
    return fail("cannot write " + outputFile + ": " + *error);
  return 0;
}
