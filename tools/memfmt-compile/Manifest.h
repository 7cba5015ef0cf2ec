//===- Manifest.h - manifest.json and the report's memory plan --*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Writes the manifest.json a compiled model is loaded with: fills the
// runtime's memfmt::loader::Manifest from what the command line chose and
// what the lowering planned, and writes it with the runtime's writer, so the
// format is defined once (runtime/loader/Manifest.cpp). Also adds the
// lowering's memory plan and the batch tiling to the layout report
// (report.json, report.txt) that memfmt-report wrote.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_COMPILE_MANIFEST_H
#define MEMFMT_TOOLS_MEMFMT_COMPILE_MANIFEST_H

#include "memfmt/Conversion/MemFmtToRuntime/MemFmtToRuntime.h"
#include "memfmt/runtime/loader/Manifest.h"

#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace memfmt::compile {

/// Writes manifest.json to `path`: `settings` holds what the command line
/// chose (model, target, precision, memory and input format, library,
/// weights source); the entry point, the memory plan and the tensors come
/// from the lowering's `manifest`.
mlir::LogicalResult writeManifest(llvm::StringRef path,
                                  const ::memfmt::loader::Manifest &settings,
                                  const mlir::memfmt::ModelManifest &manifest,
                                  llvm::raw_ostream &errors);

/// What memfmt-tile-batch did to a function (its memfmt.batch_tiling): the
/// first `ops` ops run `subBatch` of the `batch` samples at a time.
struct BatchTiling {
  int64_t batch = 0, ops = 0, subBatch = 0;
};

/// The batch tiling of the first function of `module` that has one.
std::optional<BatchTiling> batchTilingOf(mlir::ModuleOp module);

/// "the first 30 ops run 2 of the 8 samples at a time".
std::string describe(const BatchTiling &tiling);

/// Adds "arena_bytes", "peak_live_bytes", "weights_bytes" and "batch_tiling"
/// ({"batch", "ops", "sub_batch"}, or null) to the JSON report at
/// `jsonPath` and lines with them to the text report at `textPath`.
mlir::LogicalResult
addMemoryPlanToReports(llvm::StringRef jsonPath, llvm::StringRef textPath,
                       const mlir::memfmt::ModelManifest &manifest,
                       std::optional<BatchTiling> tiling,
                       llvm::raw_ostream &errors);

} // namespace memfmt::compile

#endif // MEMFMT_TOOLS_MEMFMT_COMPILE_MANIFEST_H
