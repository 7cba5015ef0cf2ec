//===- CompileOptions.h - memfmt-compile's flags ----------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The command-line flags of memfmt-compile other than the training ones
// (TrainingOptions.h): the model and its shapes, the memory formats, the
// target and precision, the weight source, the pipeline's switches and the
// output directory. CompileOptions.cpp defines them with their help texts;
// the driver's steps (Compiler.h) read them as LLVM tools read their
// cl::opts.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_COMPILE_COMPILEOPTIONS_H
#define MEMFMT_TOOLS_MEMFMT_COMPILE_COMPILEOPTIONS_H

#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace memfmt::compile {

/// The --help category of these flags.
extern llvm::cl::OptionCategory toolCategory;

/// The model: FILE.mlir or FILE.onnx, or --model NAME of the zoo.
extern llvm::cl::opt<std::string> inputFile;
extern llvm::cl::opt<std::string> modelName;

/// --memory-format (the model's) and --input-format (the caller's input).
extern llvm::cl::opt<mlir::memfmt::MemoryFormat> memoryFormat;
extern llvm::cl::opt<mlir::memfmt::MemoryFormat> inputFormat;

/// Shapes: --batch (a zoo model's, or an ONNX model's dynamic batch),
/// --input-shape NAME=DIMS (ONNX), --height, --width and --num-classes (a
/// zoo model's).
extern llvm::cl::opt<int64_t> batchSize;
extern llvm::cl::list<std::string> inputShapes;
extern llvm::cl::opt<int64_t> height;
extern llvm::cl::opt<int64_t> width;
extern llvm::cl::opt<int64_t> numClasses;

extern llvm::cl::opt<mlir::memfmt::CompileTarget> target;
extern llvm::cl::opt<mlir::memfmt::ComputePrecision> precision;

/// --weights FILE.safetensors | synthetic[:SEED].
extern llvm::cl::opt<std::string> weightsOption;

/// The compile pipeline's switches: --fusion, --tile-batch-bytes,
/// --sub-batch.
extern llvm::cl::opt<bool> fusion;
extern llvm::cl::opt<int64_t> tileBatchBytes;
extern llvm::cl::opt<int64_t> subBatch;

/// -o DIR, and --layout-only (stop after the layout passes).
extern llvm::cl::opt<std::string> outputDir;
extern llvm::cl::opt<bool> layoutOnly;

} // namespace memfmt::compile

#endif // MEMFMT_TOOLS_MEMFMT_COMPILE_COMPILEOPTIONS_H
