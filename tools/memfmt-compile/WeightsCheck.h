//===- WeightsCheck.h - Check a weight file against a model -----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-compile checks a .safetensors file against the parameters of the
// model at compile time, so that a wrong file fails here, with every
// problem listed by tensor name, and not when the runtime loads it. Only
// the header is read (llvm::MemoryBuffer + llvm::json); the runtime's weight
// reader is not linked into the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_COMPILE_WEIGHTSCHECK_H
#define MEMFMT_TOOLS_MEMFMT_COMPILE_WEIGHTSCHECK_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memfmt::compile {

/// One tensor of a .safetensors header.
struct SafeTensorsEntry {
  std::string name;
  std::string dtype; ///< "F32", "F16", "BF16", "I64", ...
  llvm::SmallVector<int64_t, 4> shape;
  uint64_t begin = 0; ///< data_offsets, relative to the data section
  uint64_t end = 0;
};

/// Reads the header of the .safetensors file at `path` and checks it: it
/// fits the file, is a JSON object of well-formed entries with known
/// dtypes, each entry's byte count equals shape x dtype, and the tensors
/// tile the data section exactly (so a truncated file is caught). On a
/// problem writes one message (without a trailing newline) to `errors`.
mlir::FailureOr<std::vector<SafeTensorsEntry>>
readSafeTensorsHeader(llvm::StringRef path, llvm::raw_ostream &errors);

/// Checks `tensors` against the `memfmt.weight` ops of `module`: every
/// parameter is present with its shape and a dtype of F32, F16 or BF16, and
/// no tensor is extra (except `*.num_batches_tracked`, which inference does
/// not use). Writes every problem, one per line, after a header line naming
/// `path`, to `errors`.
mlir::LogicalResult checkWeights(mlir::ModuleOp module,
                                 llvm::ArrayRef<SafeTensorsEntry> tensors,
                                 llvm::StringRef path,
                                 llvm::raw_ostream &errors);

} // namespace memfmt::compile

#endif // MEMFMT_TOOLS_MEMFMT_COMPILE_WEIGHTSCHECK_H
