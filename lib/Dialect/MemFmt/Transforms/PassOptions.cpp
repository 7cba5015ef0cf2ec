//===- PassOptions.cpp - The choices of pass and pipeline options ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The spelled values of every choice a memfmt pass, pipeline or
// memfmt-compile flag takes (`inputs=convert|channels-last|keep`,
// `precision=f32|f16|bf16`, ...), one `llvm::cl::values` list per enum of
// Passes.h, so that an invalid value gets LLVM's standard error and a value
// is spelled the same in every option that takes it; plus the facts the
// precision choice implies (its element type, the targets that have it).
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::memfmt;
namespace cl = llvm::cl;

cl::ValuesClass mlir::memfmt::inputsModeValues() {
  return cl::values(
      clEnumValN(InputsMode::Convert, "convert", "a conversion at entry"),
      clEnumValN(InputsMode::ChannelsLast, "channels-last",
                 "arguments are declared channels-last"),
      clEnumValN(InputsMode::Keep, "keep", "as declared"));
}

cl::ValuesClass mlir::memfmt::weightsModeValues() {
  return cl::values(clEnumValN(WeightsMode::ChannelsLast, "channels-last",
                               "re-laid channels-last once"),
                    clEnumValN(WeightsMode::Keep, "keep", "as declared"));
}

cl::ValuesClass mlir::memfmt::outputsModeValues() {
  return cl::values(clEnumValN(OutputsMode::Keep, "keep",
                               "converted back to the declared format"),
                    clEnumValN(OutputsMode::ChannelsLast, "channels-last",
                               "channels-last (the signature changes)"));
}

cl::ValuesClass mlir::memfmt::computePrecisionValues() {
  return cl::values(clEnumValN(ComputePrecision::F32, "f32", "float32"),
                    clEnumValN(ComputePrecision::F16, "f16", "float16"),
                    clEnumValN(ComputePrecision::BF16, "bf16", "bfloat16"));
}

cl::ValuesClass mlir::memfmt::reportFormatValues() {
  return cl::values(clEnumValN(ReportFormat::Text, "text", "text"),
                    clEnumValN(ReportFormat::Json, "json", "JSON"));
}

cl::ValuesClass mlir::memfmt::compileTargetValues() {
  return cl::values(clEnumValN(CompileTarget::Cpu, "cpu", "CPU"),
                    clEnumValN(CompileTarget::Cuda, "cuda", "NVIDIA GPU"));
}

cl::ValuesClass mlir::memfmt::modelMemoryFormatValues() {
  return cl::values(
      clEnumValN(MemoryFormat::ChannelsLast, "channels-last",
                 "channels-last (NHWC in memory)"),
      clEnumValN(MemoryFormat::Contiguous, "contiguous", "NCHW, as saved"));
}

Type mlir::memfmt::getComputeElementType(MLIRContext *context,
                                         ComputePrecision precision) {
  Builder builder(context);
  switch (precision) {
  case ComputePrecision::F32:
    return builder.getF32Type();
  case ComputePrecision::F16:
    return builder.getF16Type();
  case ComputePrecision::BF16:
    return builder.getBF16Type();
  }
  llvm_unreachable("unknown precision");
}

StringRef mlir::memfmt::stringifyComputePrecision(ComputePrecision precision) {
  switch (precision) {
  case ComputePrecision::F32:
    return "f32";
  case ComputePrecision::F16:
    return "f16";
  case ComputePrecision::BF16:
    return "bf16";
  }
  llvm_unreachable("unknown precision");
}

bool mlir::memfmt::isPrecisionAvailable(CompileTarget target,
                                        ComputePrecision precision) {
  // The CPU runs bf16 on oneDNN; it has no f16 kernels.
  return precision != ComputePrecision::F16 || target == CompileTarget::Cuda;
}
