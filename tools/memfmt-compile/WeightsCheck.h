//===- WeightsCheck.h - Check a weight file against a model -----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-compile's --weights: the source it names, and the check of a
// .safetensors file against the parameters of the model at compile time, so that a wrong file fails here, with every
// problem listed by tensor name, and not when the runtime loads it. The
// file is read by the runtime's own reader (memfmt::io::SafeTensorsFile,
// runtime/io), the one the model loader uses, so a file that passes here
// also loads there.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_COMPILE_WEIGHTSCHECK_H
#define MEMFMT_TOOLS_MEMFMT_COMPILE_WEIGHTSCHECK_H

#include "memfmt/runtime/io/SafeTensors.h"
#include "memfmt/runtime/loader/Manifest.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace memfmt::compile {

/// Parses --weights with the loader's grammar (synthetic[:SEED],
/// safetensors:PATH or a bare FILE.safetensors), a path made absolute (the
/// manifest records it). On a problem writes one message to `errors`.
mlir::FailureOr<::memfmt::loader::WeightsSource>
parseWeightsOption(llvm::StringRef text, llvm::raw_ostream &errors);

/// Opens and validates the .safetensors file at `path` with the runtime's
/// reader. On a problem writes one message naming `path` (without a
/// trailing newline) to `errors`.
mlir::FailureOr<memfmt::io::SafeTensorsFile>
openWeightsFile(llvm::StringRef path, llvm::raw_ostream &errors);

/// Checks the tensors of `file` against the `memfmt.weight` ops of `module`:
/// every parameter is present with its shape and a dtype of F32, F16 or
/// BF16, and no tensor is extra (except `*.num_batches_tracked`, which
/// inference does not use). Writes every problem, one per line, after a
/// header line naming the file, to `errors`.
mlir::LogicalResult checkWeights(mlir::ModuleOp module,
                                 const memfmt::io::SafeTensorsFile &file,
                                 llvm::raw_ostream &errors);

} // namespace memfmt::compile

#endif // MEMFMT_TOOLS_MEMFMT_COMPILE_WEIGHTSCHECK_H
