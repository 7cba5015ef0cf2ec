//===- Manifest.h - manifest.json and the report's memory plan --*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Writes the manifest.json a compiled model is loaded with (format version
// 1, read by the runtime), and adds the lowering's memory plan to the
// layout report (report.json, report.txt) that memfmt-report wrote.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_COMPILE_MANIFEST_H
#define MEMFMT_TOOLS_MEMFMT_COMPILE_MANIFEST_H

#include "memfmt/Conversion/MemFmtToRuntime/MemFmtToRuntime.h"
#include "memfmt/runtime/loader/model_abi.h"

#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace memfmt::compile {

/// The manifest version this tool writes (model_abi.h).
inline constexpr int kManifestFormatVersion = MEMFMT_MANIFEST_FORMAT_VERSION;

/// What the command line chose, as the manifest spells it.
struct CompileSettings {
  std::string model;         ///< "resnet50", or the stem of the input file
  std::string target;        ///< "cpu"
  std::string precision;     ///< "f32"
  std::string memoryFormat;  ///< "channels-last" or "contiguous"
  std::string inputFormat;   ///< "contiguous" or "channels-last"
  std::string weightsSource; ///< "synthetic:<SEED>" or "safetensors:<path>"
  std::string library = "model.so";
};

/// Writes manifest.json to `path`.
mlir::LogicalResult writeManifest(llvm::StringRef path,
                                  const CompileSettings &settings,
                                  const mlir::memfmt::ModelManifest &manifest,
                                  llvm::raw_ostream &errors);

/// Adds "arena_bytes", "peak_live_bytes" and "weights_bytes" to the JSON
/// report at `jsonPath` and a line with them to the text report at
/// `textPath`.
mlir::LogicalResult
addMemoryPlanToReports(llvm::StringRef jsonPath, llvm::StringRef textPath,
                       const mlir::memfmt::ModelManifest &manifest,
                       llvm::raw_ostream &errors);

} // namespace memfmt::compile

#endif // MEMFMT_TOOLS_MEMFMT_COMPILE_MANIFEST_H
