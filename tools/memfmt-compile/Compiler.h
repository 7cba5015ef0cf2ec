//===- Compiler.h - memfmt-compile's steps ----------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The driver as a sequence of steps (Compiler::run), each a method that
// returns a Status: go on, or stop with an exit code after saying why on
// stderr. The steps live in the files of what they do:
//  * memfmt-compile.cpp: the option checks, step 2 (the weights), step 3
//    (the layout or training pipeline), run() and main;
//  * Load.cpp: step 1, the model from the zoo, a .mlir file or an ONNX
//    file, and the checks of its forward function;
//  * Emit.cpp: the output directory and its files, steps 4-6 (lowering,
//    the shared library, the manifest) and --train's eval model.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_COMPILE_COMPILER_H
#define MEMFMT_TOOLS_MEMFMT_COMPILE_COMPILER_H

#include "Manifest.h"
#include "OutputDirectory.h"
#include "TrainingOptions.h"

#include "memfmt/Conversion/MemFmtToRuntime/MemFmtToRuntime.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"
#include "memfmt/Import/ONNX.h"
#include "memfmt/runtime/loader/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memfmt::compile {

using mlir::func::FuncOp;
using mlir::memfmt::ModelManifest;
using llvm::StringRef;
using llvm::Twine;

enum ExitCode : int { kSuccess = 0, kUserError = 1, kInternalError = 2 };

/// The outcome of a step: go on, or stop with an exit code.
struct [[nodiscard]] Status {
  int code = kSuccess;
  bool failed() const { return code != kSuccess; }
};

constexpr Status kContinue{kSuccess};

/// Prints "memfmt-compile: error: MESSAGE" and returns a user error.
Status userError(const Twine &message);
/// Prints "memfmt-compile: internal error: MESSAGE" and returns an internal
/// error.
Status internalError(const Twine &message);

constexpr int kNumSteps = 6;
/// --train: the step the eval model is built in (the later ones shift by
/// one).
constexpr int kEvalStep = 4;

class Compiler {
public:
  Compiler(mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr)
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
  void setTrainingOptions(mlir::memfmt::TrainingPipelineOptions &options) const;

  mlir::MLIRContext &context;
  llvm::SourceMgr &sourceMgr;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  FuncOp forward;
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
  mlir::OwningOpRef<mlir::ModuleOp> evalModule;
  std::string subdirectory;
  int evalStep = 0;
  /// --train --gradients: the names of the step's outputs ("loss",
  /// "grad.NAME"), in the manifest in place of the lowering's.
  std::vector<std::string> outputNames;
  /// What memfmt-tile-batch did, for the progress line and the reports.
  std::optional<BatchTiling> batchTiling;
};

} // namespace memfmt::compile

#endif // MEMFMT_TOOLS_MEMFMT_COMPILE_COMPILER_H
