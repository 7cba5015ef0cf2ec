//===- ONNXOpRegistry.h - ONNX operator registry ----------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The one list of the ONNX operators the importer converts. Each operator
// family file registers its operators once, with everything the rest of the
// importer and its documentation need to know about them:
//
// * the ai.onnx op type and the attributes it accepts (any other attribute
//   makes a node unsupported);
// * its converters, each with the opset it applies from (`since`): a node is
//   converted by the one with the largest `since` not above the model's
//   opset;
// * its row of docs/onnx.md's operator table: the memfmt op(s) it becomes,
//   what is supported and what is not.
//
// The importer's dispatch, its "operator X is not supported" check and the
// opset range it accepts read this registry, and `memfmt-import
// --list-onnx-ops` prints the documentation table from it (a lit test
// compares that with docs/onnx.md), so adding an operator is one
// registration.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LIB_IMPORT_ONNX_ONNXOPREGISTRY_H
#define MEMFMT_LIB_IMPORT_ONNX_ONNXOPREGISTRY_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <vector>

namespace mlir::memfmt::onnx_import {

class GraphImporter;
struct Node;

/// Converts one node: builds its ops through `importer`, sets its outputs,
/// or records why it cannot (and fails).
using ConvertFn = LogicalResult (*)(GraphImporter &importer, Node &node);

/// A converter and the first opset it applies to.
struct OpConverter {
  int64_t since;
  ConvertFn convert;
};

/// An operator's row in docs/onnx.md's operator table (Markdown).
struct OpDoc {
  StringRef memfmtOps;
  StringRef supported;
  StringRef notSupported;
};

/// Everything the importer knows about one ai.onnx operator.
struct OpDefinition {
  StringRef name;
  /// The attributes the operator accepts, at any opset.
  std::vector<StringRef> attributes;
  /// Converters in increasing order of `since`.
  std::vector<OpConverter> converters;
  OpDoc doc;

  /// The converter for a model of `opset`, or null where the operator's
  /// first converter applies only from a later opset.
  ConvertFn converterFor(int64_t opset) const;
};

/// The registered operators, in registration (documentation) order.
class ONNXOpRegistry {
public:
  /// The oldest and newest ai.onnx opsets whose operators the importer
  /// knows; others are rejected when the model is loaded.
  static constexpr int64_t kMinOpset = 1;
  static constexpr int64_t kMaxOpset = 21;

  /// The registry with every operator family registered.
  static const ONNXOpRegistry &get();

  /// Adds `op`; its name must not be registered yet and its converters must
  /// be sorted by `since`.
  void add(OpDefinition op);

  /// The operator called `name`, or null.
  const OpDefinition *lookup(StringRef name) const;

  /// Every operator, in registration order.
  ArrayRef<OpDefinition> getOps() const { return ops; }

  /// Writes docs/onnx.md's operator section: the opset line and the table.
  void printMarkdown(llvm::raw_ostream &os) const;

private:
  std::vector<OpDefinition> ops;
  llvm::StringMap<size_t> index;
};

// The operator families, one per file.
void registerConvPoolOps(ONNXOpRegistry &registry);
void registerElementwiseOps(ONNXOpRegistry &registry);
void registerGemmMatMulOps(ONNXOpRegistry &registry);
void registerShapeOps(ONNXOpRegistry &registry);
void registerConstantOps(ONNXOpRegistry &registry);
void registerShapeArithmeticOps(ONNXOpRegistry &registry);
void registerConstantFoldOps(ONNXOpRegistry &registry);

} // namespace mlir::memfmt::onnx_import

#endif // MEMFMT_LIB_IMPORT_ONNX_ONNXOPREGISTRY_H
