//===- Passes.h - memfmt layout passes --------------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Declares the layout passes and the `memfmt-channels-last` pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_TRANSFORMS_PASSES_H
#define MEMFMT_DIALECT_MEMFMT_TRANSFORMS_PASSES_H

#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>
#include <string>

namespace mlir::memfmt {

#define GEN_PASS_DECL
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"

/// Options of the `memfmt-channels-last` pipeline, passed through to
/// memfmt-propagate-channels-last.
struct ChannelsLastPipelineOptions
    : public PassPipelineOptions<ChannelsLastPipelineOptions> {
  Option<std::string> inputs{*this, "inputs",
                             llvm::cl::desc("convert | channels-last | keep"),
                             llvm::cl::init("convert")};
  Option<std::string> weights{*this, "weights",
                              llvm::cl::desc("channels-last | keep"),
                              llvm::cl::init("channels-last")};
  Option<std::string> outputs{*this, "outputs",
                              llvm::cl::desc("keep | channels-last"),
                              llvm::cl::init("keep")};
};

/// propagate-channels-last, materialize-contiguous, fold-conversions,
/// canonicalize and cse, on every function of the module.
void buildChannelsLastPipeline(OpPassManager &pm,
                               const ChannelsLastPipelineOptions &options);

#define GEN_PASS_REGISTRATION
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"

/// Registers the `memfmt-channels-last` pipeline (the passes themselves are
/// registered by the generated registerMemFmtPasses()).
void registerChannelsLastPipeline();

} // namespace mlir::memfmt

#endif // MEMFMT_DIALECT_MEMFMT_TRANSFORMS_PASSES_H
