//===- ConstantFolds.h - Broadcasting folds other families use --*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The folds of ConstantFolds.cpp that other operator families use when
// every input of a node is a constant: Add, Mul, Sub, Div
// (ElementwiseOps.cpp) and Concat (ShapeOps.cpp) of constants are computed
// at import.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LIB_IMPORT_ONNX_CONSTANTFOLDS_H
#define MEMFMT_LIB_IMPORT_ONNX_CONSTANTFOLDS_H

#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace mlir::memfmt::onnx_import {

class GraphImporter;
struct Node;

enum class BinaryArithmetic { Add, Sub, Mul, Div };

/// Sets the node's output to `op` of its two constant inputs (NumPy
/// broadcasting; int64 or float; integer division truncates).
LogicalResult foldBinary(GraphImporter &importer, Node &node,
                         BinaryArithmetic op);

/// Sets the node's output to the concatenation of its constant inputs along
/// `axis` (in range; the shapes already checked).
LogicalResult foldConcat(GraphImporter &importer, Node &node, int64_t axis);

} // namespace mlir::memfmt::onnx_import

#endif // MEMFMT_LIB_IMPORT_ONNX_CONSTANTFOLDS_H
