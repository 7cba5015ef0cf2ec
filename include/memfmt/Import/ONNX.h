//===- ONNX.h - Import ONNX models as memfmt IR -----------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The ONNX importer: an ONNX model file (protobuf, read with Debian's
// libonnx) becomes a module with one public function in the memfmt dialect,
// NCHW as saved, in the same form as the built-in zoo's models, plus the
// parameters the function reads.
//
// * Graph inputs that have no initializer become the function's arguments,
//   in order; graph outputs its results. Shapes must be static.
// * Every initializer or Constant node output that an op uses as a tensor
//   operand becomes a `memfmt.weight "<ONNX name>"`; values the importer has
//   to compute from them (a Gemm/MatMul weight transposed to [out, in], one
//   scaled by alpha or beta) become parameters named `<ONNX name>.<what>`.
//   Shapes and axes an op needs at compile time (Reshape's shape, Split's
//   sizes) must be constants.
// * Every op has the location of its ONNX node: the node name and its output
//   names (a FusedLoc of NameLocs), so diagnostics and layout reports point
//   at the node; arguments and weights have their ONNX names.
//
// The supported operators and the ai.onnx opsets are those of the
// importer's operator registry (lib/Import/ONNX/ONNXOpRegistry.h);
// printONNXOperatorTable() writes docs/onnx.md's table of them, with their
// attributes and limits.
//
// Errors: a file that cannot be read or parsed, or a graph that is not
// well-formed (dangling names, cycles, duplicate outputs, initializers whose
// data does not match their shape) fails with one message naming what is
// wrong. Otherwise every node is converted, and all problems are collected
// before the import fails: every unsupported node (op type, node name, why)
// and every inconsistent one (shapes that do not fit), in one message. No
// module is returned on failure.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_IMPORT_ONNX_H
#define MEMFMT_IMPORT_ONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::memfmt {

/// A parameter of an imported model: its values as stored (or computed),
/// row-major and little-endian.
struct ImportedParameter {
  std::string name;
  /// The safetensors dtype of `data`: "F32", "F16" or "BF16". The loader
  /// converts it to the element type of the `memfmt.weight`.
  std::string dtype;
  SmallVector<int64_t, 4> shape;
  std::vector<uint8_t> data;
  /// True for a tensor the import computed from constants that are not
  /// model state (a Constant node's tensor, or shape logic folded to a
  /// non-splat tensor: Swin's attention masks). It is a weight only because
  /// memfmt has no other home for constant tensors: `memfmt-compile --train`
  /// refuses models that have one, since training would update it as a
  /// parameter, which PyTorch's training would not.
  bool computed = false;
};

struct ONNXImportOptions {
  /// The element type of the function's floating-point tensors (f32, f16 or
  /// bf16). Null keeps the model's. Parameters keep their stored dtype.
  Type elementType;
  /// Sizes for the graph inputs' dynamic dimensions, as trtexec's --shapes:
  /// `batch` is every input's dimension 0 where the model leaves it dynamic
  /// (where the model fixes it, the two must agree); `inputShapes` give
  /// named inputs their whole shape (the model's static dimensions must
  /// agree). Every other dynamic dimension is an error.
  std::optional<int64_t> batch;
  llvm::StringMap<SmallVector<int64_t, 4>> inputShapes;
};

/// Adds one `--input-shape` to `options`: `spec` is NAME=DIMS with DIMS
/// sizes separated by `x` or `,` (`x=8x3x224x224`). On failure writes why
/// to `errors`.
LogicalResult addInputShape(ONNXImportOptions &options, StringRef spec,
                            llvm::raw_ostream &errors);

/// The result of an import.
struct ONNXModel {
  OwningOpRef<ModuleOp> module;
  /// Every parameter a `memfmt.weight` of the module names, in the order of
  /// the weight ops.
  std::vector<ImportedParameter> parameters;
  /// The default-domain opset the model imports.
  int64_t opset = 0;

  /// The parameter called `name`, or null.
  const ImportedParameter *findParameter(StringRef name) const;
};

/// Imports the ONNX model at `path` (external data files are resolved next
/// to it). Loads the memfmt and func dialects into `context`. On failure
/// writes the message (one or more lines, without a trailing newline) to
/// `errors`.
FailureOr<ONNXModel> importONNXFile(MLIRContext *context, StringRef path,
                                    const ONNXImportOptions &options,
                                    llvm::raw_ostream &errors);

/// Imports a serialized ONNX model held in `bytes`. `displayName` names it
/// in messages and `baseDirectory` is where external data files are.
FailureOr<ONNXModel> importONNXBuffer(MLIRContext *context, StringRef bytes,
                                      StringRef displayName,
                                      StringRef baseDirectory,
                                      const ONNXImportOptions &options,
                                      llvm::raw_ostream &errors);

/// Writes `parameters` as a .safetensors file at `path`, encoded by the
/// runtime's writer (memfmt/runtime/io/SafeTensors.h; tensors in the given
/// order). The file is written next to `path` and renamed into place, so a
/// failure leaves no partial file. On failure writes one message to
/// `errors`.
LogicalResult writeSafeTensors(StringRef path,
                               ArrayRef<const ImportedParameter *> parameters,
                               llvm::raw_ostream &errors);

/// Writes docs/onnx.md's operator section (the opsets and the Markdown table
/// of every operator: the memfmt ops it becomes, what is and is not
/// supported), from the importer's registry.
void printONNXOperatorTable(llvm::raw_ostream &os);

} // namespace mlir::memfmt

#endif // MEMFMT_IMPORT_ONNX_H
