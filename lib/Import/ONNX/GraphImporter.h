//===- GraphImporter.h - Shared ONNX converter state ------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The state of one ONNX import and the helpers every operator converter
// uses; the converters themselves live in one file per operator family
// (ConvPoolOps.cpp, ElementwiseOps.cpp, GemmMatMulOps.cpp, ShapeOps.cpp,
// ConstantOps.cpp) and reach the import only through GraphImporter's public
// interface:
//
// * the values: each ONNX name maps to an OnnxValue - a runtime SSA value,
//   a constant on the host, or failed;
// * the problems: `unsupported` and `invalid` record one against a node
//   (and return failure, so a converter can `return importer.invalid(...)`);
// * attribute readers that check the type and range of an attribute;
// * operand helpers: a tensor operand as an SSA value (constants become
//   `memfmt.weight` ops, once per name), a constant operand, derived
//   parameters, reshape/transpose/scale building blocks, and `verified`,
//   which verifies an op as soon as it is built so that a verifier error
//   names the node.
//
// The phases of the import (checking the graph, creating the function,
// dispatching nodes through the registry, finishing) are in ImportONNX.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LIB_IMPORT_ONNX_GRAPHIMPORTER_H
#define MEMFMT_LIB_IMPORT_ONNX_GRAPHIMPORTER_H

#include "ONNXTensor.h"

#include "memfmt/Import/ONNX.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::memfmt::onnx_import {

/// The largest magnitude of an integer attribute or of a shape or size
/// value (sizes, strides, pads, axes), so that shape arithmetic never
/// overflows.
constexpr int64_t kMaxAttribute = int64_t(1) << 31;

/// An ONNX value during the import.
struct OnnxValue {
  enum class Kind { Failed, Runtime, Constant };
  Kind kind = Kind::Failed;
  /// Runtime: the SSA value (null for a graph input memfmt cannot take).
  Value value;
  /// Runtime: the element kind (the compute type is Float; MaxPool indices
  /// are Int64). Constant: in `constant`.
  ElementKind elementKind = ElementKind::Float;
  SmallVector<int64_t, 4> shape;
  /// Constant: the values.
  std::optional<HostTensor> constant;
  /// Constant: when it is the 2-D transpose of the constant named here (a
  /// Transpose of an initializer: how torch.onnx exports nn.Linear applied
  /// to a tensor of rank > 2), so that MatMul can use that constant as
  /// memfmt.linear's weight under its own name, the name a checkpoint has.
  std::string transposeOf;
  /// Constant: model state, i.e. an initializer, or one passed on unchanged
  /// (Identity, Dropout: torch.onnx's aliases of initializers it
  /// deduplicated; Reshape, Flatten, Squeeze, Unsqueeze). Other constants
  /// (Constant nodes, shape arithmetic) are not parameters.
  bool modelState = false;

  bool isFailed() const { return kind == Kind::Failed; }
  bool isConstant() const { return kind == Kind::Constant; }

  static OnnxValue runtime(Value value, ArrayRef<int64_t> shape,
                           ElementKind kind = ElementKind::Float) {
    OnnxValue v;
    v.kind = Kind::Runtime;
    v.value = value;
    v.elementKind = kind;
    v.shape.assign(shape.begin(), shape.end());
    return v;
  }
  /// This constant's values in `shape`, still model state if this is.
  OnnxValue reshapedConstant(ArrayRef<int64_t> newShape) const {
    OnnxValue v = ofConstant(constant->withShape(newShape));
    v.modelState = modelState;
    return v;
  }
  static OnnxValue ofConstant(HostTensor tensor) {
    OnnxValue v;
    v.kind = Kind::Constant;
    v.shape = tensor.shape;
    v.constant = std::move(tensor);
    return v;
  }
};

enum class ProblemKind { Unsupported, Invalid };

struct Problem {
  ProblemKind kind;
  /// Where the problem is in the file, for sorting: graph inputs, then
  /// nodes in file order, then graph outputs.
  int64_t position;
  /// The order problems were found in, to keep it among equal positions.
  size_t sequence;
  std::string where;
  std::string message;
};

/// A node being converted.
struct Node {
  const onnx::NodeProto &proto;
  int64_t index;
  std::string label;
  Location loc;
  /// The values of the inputs; null for an absent optional input ("").
  SmallVector<OnnxValue *, 4> inputs;
  llvm::StringMap<const onnx::AttributeProto *> attributes;

  StringRef opType() const { return proto.op_type(); }
  unsigned numInputs() const { return inputs.size(); }
  bool hasInput(unsigned i) const { return i < inputs.size() && inputs[i]; }
  StringRef inputName(unsigned i) const { return proto.input(i); }
  unsigned numOutputs() const { return proto.output_size(); }
  /// True if output `i` exists and has a name (is used).
  bool hasOutput(unsigned i) const {
    return i < numOutputs() && !proto.output(i).empty();
  }
  /// The node's name, or its first output's for an unnamed node (the base
  /// of the parameters a converter derives).
  StringRef baseName() const {
    return proto.name().empty() ? StringRef(proto.output(0))
                                : StringRef(proto.name());
  }
};

/// `'name'` with unprintable characters escaped, as messages quote names.
std::string quote(StringRef name);

/// `a` and `b` padded to the same rank and broadcast (NumPy); nullopt if
/// they do not broadcast.
std::optional<SmallVector<int64_t, 4>> broadcastShapes(ArrayRef<int64_t> a,
                                                       ArrayRef<int64_t> b);

/// The product of `dims` (1 for none).
int64_t product(ArrayRef<int64_t> dims);

/// The attribute's type, inferred from the set field for old files that
/// leave `type` unset.
onnx::AttributeProto_AttributeType
attributeType(const onnx::AttributeProto &attr);

/// One ONNX import: the graph's values, the function being built, the
/// parameters and the problems found so far.
class GraphImporter {
public:
  GraphImporter(MLIRContext *context, const onnx::ModelProto &model,
                StringRef displayName, StringRef baseDirectory,
                const ONNXImportOptions &options, llvm::raw_ostream &errors)
      : context(context), builder(context), model(model), graph(model.graph()),
        displayName(displayName.str()), baseDirectory(baseDirectory.str()),
        options(options), errors(errors) {}

  /// Runs every phase (ImportONNX.cpp).
  FailureOr<ONNXModel> run();

  //===--------------------------------------------------------------------===//
  // What converters use
  //===--------------------------------------------------------------------===//

  /// The builder, positioned at the end of the function body.
  OpBuilder &getBuilder() { return builder; }
  /// The default-domain opset the model imports.
  int64_t getOpset() const { return opset; }
  /// The directory external data files are resolved against.
  StringRef getBaseDirectory() const { return baseDirectory; }
  /// A tensor of `shape` with the model's compute type.
  RankedTensorType tensorType(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elementType);
  }

  /// Records that `node` is a valid model memfmt cannot run; returns
  /// failure.
  LogicalResult unsupported(Node &node, const Twine &message);
  /// Records that `node` has shapes or attributes that do not fit; returns
  /// failure.
  LogicalResult invalid(Node &node, const Twine &message);
  /// Checks the number of inputs and outputs of `node`; records an invalid
  /// node and fails when they are out of range.
  LogicalResult checkArity(Node &node, unsigned minInputs, unsigned maxInputs,
                           unsigned maxOutputs);

  /// The attribute `name` of `node`, or null.
  const onnx::AttributeProto *attribute(Node &node, StringRef name);
  /// Typed attribute readers: `dflt` when absent; an invalid node when the
  /// type is wrong or an integer lies outside +-kMaxAttribute.
  FailureOr<int64_t> intAttr(Node &node, StringRef name, int64_t dflt);
  FailureOr<float> floatAttr(Node &node, StringRef name, float dflt);
  FailureOr<std::string> stringAttr(Node &node, StringRef name, StringRef dflt);
  FailureOr<SmallVector<int64_t>> intsAttr(Node &node, StringRef name,
                                           ArrayRef<int64_t> dflt);
  /// The values of a constant int tensor (a shape, sizes, pads), each within
  /// +-kMaxAttribute.
  FailureOr<SmallVector<int64_t>>
  intValues(Node &node, const HostTensor &tensor, StringRef what);

  /// Input `i` as an SSA value in the compute type; a constant becomes its
  /// `memfmt.weight`, except one that is no model state (a Constant node's,
  /// or computed at import: OnnxValue::modelState) and holds a single value
  /// repeated: that becomes a splat `arith.constant` (filled at load), which
  /// training does not take for a parameter (ViT's attention scale).
  /// `role` names the input in messages.
  FailureOr<Value> tensorOperand(Node &node, unsigned i, StringRef role);
  /// The splat `arith.constant` of `shape` in the compute type holding
  /// `value`, located at the ONNX name `name`.
  Value splatConstant(StringRef name, ArrayRef<int64_t> shape, double value);
  /// Input `i`, which must be a constant.
  FailureOr<HostTensor> constantOperand(Node &node, unsigned i, StringRef role);
  /// The `memfmt.weight "<name>"` holding `data`, created on first use.
  FailureOr<Value> weight(Node &node, StringRef name, const HostTensor &data);
  /// A parameter the importer computes, named `<base>.<what>` (made unique
  /// against ONNX names and other parameters with other values).
  FailureOr<Value> derivedWeight(Node &node, StringRef base, StringRef what,
                                 const HostTensor &data);
  /// Verifies `op` at once, so that a verifier error names the ONNX node; on
  /// failure erases it.
  FailureOr<Value> verified(Node &node, Operation *op);
  /// `value` reshaped to `shape` (looking through temporary reshapes).
  FailureOr<Value> reshape(Node &node, Value value, ArrayRef<int64_t> shape);
  /// Elements start, start + step, ... (< end) of dimension `dim` of the
  /// run-time `value` (a memfmt.slice; positive `step`).
  FailureOr<Value> slice(Node &node, Value value, int64_t dim, int64_t start,
                         int64_t end, int64_t step = 1);
  /// Sets output 0 to input 0 (in role `role`) with `shape`: the same
  /// constant with the new shape, or a reshape of the run-time tensor.
  LogicalResult setReshapedOutput(Node &node, ArrayRef<int64_t> shape,
                                  StringRef role);
  /// [R, C] -> [C, R] at run time.
  FailureOr<Value> transpose2d(Node &node, Value value);
  /// value * scale per channel of dim 1, as an exact inference batch norm.
  FailureOr<Value> scaleChannels(Node &node, Value value, float scale,
                                 StringRef what);
  /// lhs [G, N, K] x rhs [B, G, K, M] as a (grouped) 1x1 convolution.
  FailureOr<Value> matmulAsConv(Node &node, Value lhs, Value rhs);
  /// Makes `value` the ONNX value of output `i` (if the node names it).
  void setOutput(Node &node, unsigned i, OnnxValue value);

private:
  // Phases (ImportONNX.cpp).
  LogicalResult checkModel();
  LogicalResult checkGraph();
  LogicalResult decodeInitializers();
  void chooseElementType();
  void createFunction();
  std::string inputShape(StringRef name, const onnx::TensorShapeProto &declared,
                         SmallVectorImpl<int64_t> &shape);
  /// Converts `proto` (at `index` in the graph); a `recognized` node stands
  /// for a chain of nodes (Decompositions.h).
  void convertNode(const onnx::NodeProto &proto, int64_t index,
                   bool recognized = false);
  void finish();
  LogicalResult report();

  void problem(ProblemKind kind, const Twine &where, const Twine &message,
               int64_t position);
  std::string nodeLabel(const onnx::NodeProto &proto, int64_t index);
  Location nodeLocation(const onnx::NodeProto &proto);
  std::optional<std::string> parameterDtype(const HostTensor &data,
                                            HostTensor &converted);

  MLIRContext *context;
  OpBuilder builder;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  std::string displayName;
  std::string baseDirectory;
  const ONNXImportOptions &options;
  llvm::raw_ostream &errors;

  int64_t opset = 0;
  Type elementType;
  OwningOpRef<ModuleOp> module;
  func::FuncOp function;

  /// Node indices in topological order.
  std::vector<int64_t> order;
  llvm::StringMap<HostTensor> initializers;
  llvm::StringMap<OnnxValue> values;
  /// Every ONNX name (to keep derived parameter names unique).
  llvm::StringSet<> onnxNames;
  /// Weight ops by parameter name, and their parameters.
  llvm::StringMap<Value> weights;
  std::vector<ImportedParameter> parameters;
  std::vector<Problem> problems;
  /// Reshapes the helpers made that no ONNX value holds: a reshape of one
  /// of them reshapes its input instead, and unused ones are erased once
  /// every node is converted.
  llvm::SmallPtrSet<Operation *, 16> temporaryReshapes;
};

} // namespace mlir::memfmt::onnx_import

#endif // MEMFMT_LIB_IMPORT_ONNX_GRAPHIMPORTER_H
