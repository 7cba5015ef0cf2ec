//===- Decompositions.h - Ops exporters wrote as several nodes --*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Exporters write an op that the model's opset lacks as a chain of
// primitive nodes: torch.onnx.export writes F.layer_norm below opset 17 as
// ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div (then Mul and Add for
// the affine part), and the exact GELU below opset 20 as Div (or Mul),
// Erf, Add, Mul, Mul. Before conversion the importer finds those chains and
// converts each as the one op it stands for (LayerNormalization, Gelu), as
// ONNX Runtime's LayerNormFusion and GeluFusion do. A chain is taken only
// when it computes exactly that op: every constant has the op's value, and
// no intermediate value is used elsewhere or is a graph output. Anything
// else is converted node by node.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LIB_IMPORT_ONNX_DECOMPOSITIONS_H
#define MEMFMT_LIB_IMPORT_ONNX_DECOMPOSITIONS_H

#include "ONNXTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <vector>

namespace mlir::memfmt::onnx_import {

/// A chain of nodes to be converted as one: `node`, made here, of a standard
/// op type (converted with that op's newest converter), stands for the
/// nodes `members` (graph indices); it is converted in place of the last
/// of them in topological order, `last`.
struct RecognizedOp {
  onnx::NodeProto node;
  llvm::SmallVector<int64_t, 12> members;
  int64_t last = -1;
};

/// The decomposed ops of `graph`. `order` is a topological order of its
/// nodes, `initializers` its decoded initializers.
std::vector<RecognizedOp>
recognizeDecompositions(const onnx::GraphProto &graph,
                        llvm::ArrayRef<int64_t> order,
                        const llvm::StringMap<HostTensor> &initializers,
                        llvm::StringRef baseDirectory);

} // namespace mlir::memfmt::onnx_import

#endif // MEMFMT_LIB_IMPORT_ONNX_DECOMPOSITIONS_H
