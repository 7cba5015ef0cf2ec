//===- ONNXFuzzer.cpp - Fuzz the ONNX importer ----------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target for `memfmt-compile FILE.onnx`'s first step: the bytes
// are a serialized ONNX model given to mlir::memfmt::importONNXBuffer
// (protobuf parsing, graph checks, initializers, shape inference of the
// imported ops). The importer must either fail with a message or return a
// module that verifies and whose parameters match its memfmt.weight ops
// (name, shape, byte count); the module then goes through memfmt-compile's
// layout passes, which must not fail on it (that would be the compiler's
// internal error, exit code 2). External data files are looked up in an
// empty directory, so a model that names one must fail cleanly.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"
#include "memfmt/Import/ONNX.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using namespace mlir;
using namespace mlir::memfmt;

namespace {

[[noreturn]] void bug(const std::string &what) {
  std::fprintf(stderr, "memfmt-fuzz-onnx: %s\n", what.c_str());
  std::abort();
}

/// Bytes per element of a parameter dtype, or 0.
int64_t dtypeBytes(StringRef dtype) {
  return dtype == "F32" ? 4 : (dtype == "F16" || dtype == "BF16") ? 2 : 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input: imports create many attributes.
  DialectRegistry registry;
  registry.insert<MemFmtDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect>();
  MLIRContext context(registry);
  context.disableMultithreading();
  context.loadAllAvailableDialects();
  int errors = 0;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    if (std::getenv("MEMFMT_FUZZ_DIAGNOSTICS"))
      llvm::errs() << diag << "\n";
    return success();
  });

  std::string message;
  llvm::raw_string_ostream os(message);
  FailureOr<ONNXModel> model = importONNXBuffer(
      &context,
      StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx",
      "/nonexistent-memfmt-fuzz-dir", ONNXImportOptions(), os);
  if (failed(model)) {
    if (message.empty() && errors == 0)
      bug("the import failed without a message");
    return 0;
  }
  if (!model->module || failed(verify(*model->module)))
    bug("the import returned a module that does not verify");

  // Every weight op has its parameter, with a matching size.
  llvm::StringMap<const ImportedParameter *> parameters;
  for (const ImportedParameter &p : model->parameters)
    parameters[p.name] = &p;
  model->module->walk([&](WeightOp weight) {
    const ImportedParameter *p = parameters.lookup(weight.getName());
    if (!p)
      bug("memfmt.weight \"" + weight.getName().str() +
          "\" has no imported parameter");
    int64_t bytes = dtypeBytes(p->dtype);
    if (!bytes)
      bug("parameter " + p->name + " has dtype " + p->dtype);
    for (int64_t d : p->shape)
      bytes *= d;
    if (llvm::ArrayRef<int64_t>(p->shape) != weight.getType().getShape() ||
        bytes != static_cast<int64_t>(p->data.size()))
      bug("parameter " + p->name + " does not match its memfmt.weight");
  });

  PassManager pm(&context);
  CompilePipelineOptions options;
  options.fusion = false;
  buildMemFmtCompilePipeline(pm, options);
  if (failed(pm.run(*model->module)))
    bug("the layout passes failed on an imported model");
  return 0;
}
