//===- ONNXOpRegistry.cpp - ONNX operator registry ------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Builds the registry of ONNXOpRegistry.h once, from the families' register
// functions (called explicitly, not from static initializers, which a
// static library would drop), and prints docs/onnx.md's operator section
// from it (printONNXOperatorTable of ONNX.h).
//
//===----------------------------------------------------------------------===//

#include "ONNXOpRegistry.h"

#include "memfmt/Import/ONNX.h"

#include <cassert>
#include <string>

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

ConvertFn OpDefinition::converterFor(int64_t opset) const {
  ConvertFn convert = nullptr;
  for (const OpConverter &converter : converters)
    if (converter.since <= opset)
      convert = converter.convert;
  return convert;
}

const ONNXOpRegistry &ONNXOpRegistry::get() {
  static const ONNXOpRegistry registry = [] {
    ONNXOpRegistry r;
    // The order of these calls is the order of docs/onnx.md's table.
    registerConvPoolOps(r);
    registerElementwiseOps(r);
    registerGemmMatMulOps(r);
    registerShapeOps(r);
    registerConstantOps(r);
    registerShapeArithmeticOps(r);
    registerConstantFoldOps(r);
    return r;
  }();
  return registry;
}

void ONNXOpRegistry::add(OpDefinition op) {
  assert(!op.converters.empty() && "an operator needs a converter");
  assert(llvm::is_sorted(op.converters,
                         [](const OpConverter &a, const OpConverter &b) {
                           return a.since < b.since;
                         }) &&
         "converters must be sorted by opset");
  [[maybe_unused]] bool inserted =
      index.try_emplace(op.name, ops.size()).second;
  assert(inserted && "operator registered twice");
  ops.push_back(std::move(op));
}

const OpDefinition *ONNXOpRegistry::lookup(StringRef name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &ops[it->second];
}

void ONNXOpRegistry::printMarkdown(llvm::raw_ostream &os) const {
  os << "ai.onnx opsets " << kMinOpset << " to " << kMaxOpset << " (opset "
     << kMaxOpset + 1
     << " and later are rejected: some of these operators changed there).\n"
     << "\n"
     << "| ONNX | memfmt | Supported | Not supported |\n"
     << "|---|---|---|---|\n";
  for (const OpDefinition &op : ops) {
    // Opsets before the first converter are listed as not supported.
    std::string notSupported;
    if (int64_t since = op.converters.front().since; since > kMinOpset)
      notSupported = "opsets before " + std::to_string(since);
    if (!op.doc.notSupported.empty())
      notSupported +=
          (notSupported.empty() ? "" : "; ") + op.doc.notSupported.str();
    os << "| " << op.name << " | " << op.doc.memfmtOps << " | "
       << op.doc.supported << " | ";
    if (!notSupported.empty())
      os << notSupported << " ";
    os << "|\n";
  }
}

//===----------------------------------------------------------------------===//
// ONNX.h entry point
//===----------------------------------------------------------------------===//

void mlir::memfmt::printONNXOperatorTable(llvm::raw_ostream &os) {
  ONNXOpRegistry::get().printMarkdown(os);
}
