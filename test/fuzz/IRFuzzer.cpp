//===- IRFuzzer.cpp - Fuzz parsing, verification and the layout passes ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target for what memfmt-compile does with a .mlir file, short of
// code generation. The bytes are parsed as MLIR source with the dialects
// memfmt-compile registers (memfmt, func, arith, tensor) and verified. A
// module that loads then goes through:
//
//  1. a round trip: it is printed (generic and custom form) and parsed
//     again, which must succeed (the printer and parser of every memfmt
//     attribute and op agree);
//  2. the layout passes, picked by a hash of the input: memfmt-compile's
//     own (buildMemFmtCompilePipeline without fusion, the channels-last or
//     the NCHW build, with the JSON report), or the memfmt-channels-last
//     pipeline with channels-last inputs and outputs followed by the same
//     check and report. A pass that fails on a verified module is an
//     internal error of memfmt-compile (exit code 2), so the target aborts
//     on it;
//  3. for a module memfmt-compile would accept (one public function with a
//     body, f32 tensors), the lowering to runtime calls and to the LLVM
//     dialect, which may reject the model with a diagnostic but not crash.
//
// Every failure must come with an error diagnostic; a silent failure
// aborts. Diagnostics are otherwise discarded (MEMFMT_FUZZ_DIAGNOSTICS=1
// prints them). The MLIRContext is reused
// and rebuilt every 512 inputs so that uniqued attributes do not grow
// without bound over millions of runs.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Conversion/MemFmtToRuntime/MemFmtToRuntime.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"
#include "memfmt/Import/MLIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// The context and the count of error diagnostics since the last reset.
struct Session {
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  int errors = 0;
  int uses = 0;
  /// MEMFMT_FUZZ_DIAGNOSTICS=1 prints every diagnostic (to debug an input).
  bool verbose = std::getenv("MEMFMT_FUZZ_DIAGNOSTICS") != nullptr;

  void renew() {
    handler.reset();
    DialectRegistry registry;
    registry.insert<MemFmtDialect, func::FuncDialect, arith::ArithDialect,
                    tensor::TensorDialect>();
    context = std::make_unique<MLIRContext>(registry);
    context->disableMultithreading();
    context->loadAllAvailableDialects();
    context->printOpOnDiagnostic(false);
    context->printStackTraceOnDiagnostic(false);
    handler = std::make_unique<ScopedDiagnosticHandler>(
        context.get(), [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error)
            ++errors;
          if (verbose)
            llvm::errs() << diag.getLocation() << ": " << diag << "\n";
          return success();
        });
    uses = 0;
  }

  MLIRContext &get() {
    if (!context || ++uses > 512)
      renew();
    errors = 0;
    return *context;
  }
};

[[noreturn]] void bug(const char *what, ModuleOp module = nullptr) {
  std::fprintf(stderr, "memfmt-fuzz-ir: %s\n", what);
  if (module) {
    OpPrintingFlags flags;
    flags.printGenericOpForm();
    module->print(llvm::errs(), flags);
    llvm::errs() << "\n";
  }
  std::abort();
}

/// memfmt-compile's checks before lowering (checkForwardFunction and
/// checkModelLimits): exactly one public function with a body, at least one
/// argument and one result, f32 floating-point tensors, no tensor above
/// 1 TiB, one shape per parameter name.
bool compilerWouldLower(ModuleOp module) {
  func::FuncOp forward;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    if (forward)
      return false;
    forward = func;
  }
  if (!forward || forward.getNumArguments() == 0 ||
      forward.getNumResults() == 0)
    return false;
  for (Type type : llvm::concat<const Type>(forward.getArgumentTypes(),
                                            forward.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && isa<FloatType>(tensor.getElementType()) &&
        !tensor.getElementType().isF32())
      return false;
  }
  auto tooLarge = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return false;
    int64_t bytes = 8;
    for (int64_t size : tensor.getShape())
      if (llvm::MulOverflow(bytes, size, bytes) || bytes > (int64_t(1) << 40))
        return true;
    return false;
  };
  if (llvm::any_of(forward.getArgumentTypes(), tooLarge))
    return false;
  llvm::StringMap<Type> parameters;
  WalkResult walk = module.walk([&](Operation *op) {
    if (llvm::any_of(op->getResultTypes(), tooLarge))
      return WalkResult::interrupt();
    if (auto weight = dyn_cast<WeightOp>(op)) {
      auto [it, inserted] =
          parameters.try_emplace(weight.getName(), weight.getType());
      auto first = cast<RankedTensorType>(it->second);
      if (!inserted &&
          (first.getShape() != weight.getType().getShape() ||
           first.getElementType() != weight.getType().getElementType()))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// The layout passes: memfmt-compile's channels-last (0) or NCHW (2)
/// build, or (1) memfmt-channels-last with channels-last inputs and outputs.
void buildLayoutPasses(PassManager &pm, unsigned variant) {
  if (variant != 1) {
    CompilePipelineOptions options;
    options.memoryFormat =
        variant == 0 ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
    options.fusion = false;
    options.reportJson = "/dev/null";
    buildMemFmtCompilePipeline(pm, options);
    return;
  }
  ChannelsLastPipelineOptions options;
  options.inputs = InputsMode::ChannelsLast;
  options.weights = WeightsMode::ChannelsLast;
  options.outputs = OutputsMode::ChannelsLast;
  buildChannelsLastPipeline(pm, options);
  pm.addPass(createVerifyLayouts(VerifyLayoutsOptions{true}));
  pm.addPass(createReport(ReportOptions{ReportFormat::Json, "/dev/null"}));
}

/// Prints `module` and parses the text again; both forms must load.
void checkRoundTrip(MLIRContext &context, ModuleOp module, bool generic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  module->print(os, flags);
  OwningOpRef<ModuleOp> again = parseSourceString<ModuleOp>(text, &context);
  if (!again) {
    std::fprintf(stderr, "%s\n", text.c_str());
    bug(generic ? "the generic form of a valid module does not parse"
                : "the printed form of a valid module does not parse");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Session session;
  MLIRContext &context = session.get();

  // MLIR's lexer reads source buffers up to a terminating NUL, as files are
  // loaded (memfmt-compile's MemoryBuffer has one); libFuzzer's bytes have
  // none, so parse a copy.
  // Parsed as memfmt-compile parses a file (parseMLIRModule: the nesting
  // check, then MLIR's parser).
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(
                                   llvm::StringRef(
                                       reinterpret_cast<const char *>(data),
                                       size),
                                   "input.mlir"),
                               llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseMLIRModule(sourceMgr, ParserConfig(&context));
  if (!module) {
    if (session.errors == 0)
      bug("parsing failed without an error");
    return 0;
  }

  checkRoundTrip(context, *module, /*generic=*/false);
  checkRoundTrip(context, *module, /*generic=*/true);

  unsigned hash = 0;
  for (size_t i = 0; i < size; ++i)
    hash = hash * 31 + data[i];
  PassManager pm(&context);
  buildLayoutPasses(pm, hash % 3);
  if (failed(pm.run(*module))) {
    // memfmt-compile reports this as an internal error (exit code 2).
    bug(session.errors ? "a layout pass failed on a verified module"
                       : "a layout pass failed without an error",
        *module);
  }

  if (!compilerWouldLower(*module))
    return 0;
  session.errors = 0;
  ModelManifest manifest;
  if (failed(lowerToRuntimeCalls(*module, manifest))) {
    if (session.errors == 0)
      bug("the lowering failed without an error");
    return 0;
  }
  if (failed(lowerToLLVMDialect(*module)))
    bug("the lowering to the LLVM dialect failed on a lowered module",
        *module);
  return 0;
}
