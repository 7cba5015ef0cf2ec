//===- ImportONNX.cpp - Import ONNX models as memfmt IR -------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The importer of ONNX.h, in four phases:
//
//  1. Load. The file is parsed with protobuf (libonnx's generated classes);
//     a file that does not parse, has no graph, or imports no ai.onnx opset
//     (or one newer than 17) is rejected.
//  2. Check the graph. Names must be defined once (graph inputs,
//     initializers, node outputs), every name a node or the graph output
//     reads must be defined, and the nodes are sorted topologically; a
//     cycle is reported with the nodes on it. Initializers are decoded
//     (ONNXTensor.h), which checks their sizes. Every problem of this phase
//     is listed, and the import stops.
//  3. Convert. Nodes are converted in topological order into one function
//     body. Each ONNX value is either a runtime value (an MLIR SSA value), a
//     constant on the host (an initializer, a Constant node, or a constant
//     folded through Identity, Dropout, Reshape or Flatten), or failed.
//     Constants become `memfmt.weight` ops where an op takes them as a
//     tensor, once per name; shapes and sizes are read from them directly.
//     A node that cannot be converted is recorded with the reason - as
//     unsupported (a valid model memfmt cannot run) or as invalid (shapes
//     or attributes that do not fit) - its outputs become failed, and the
//     conversion goes on, so one run lists every such node. Each op is
//     verified as soon as it is built, so a verifier error names the node.
//  4. Finish. Graph outputs become the results; declared output shapes are
//     compared with the computed ones. Any recorded problem fails the import
//     with one message listing all of them.
//
// Mapping notes (see docs/onnx.md for the full table):
//  * 1-D convolution and pooling (rank-3 inputs) run as 2-D with a height
//    of 1 (memfmt.reshape around the op). 3-D ones are unsupported.
//  * ceil_mode: ONNX's output size agrees with ATen's (memfmt's) except
//    where ONNX keeps a last window that lies entirely in the end padding,
//    past the input; ATen drops it, and such a node is unsupported.
//  * ONNX pooling's default stride is 1 (ATen's is the kernel), so the
//    stride is always written out.
//  * Gemm and MatMul with a constant right-hand side become memfmt.linear
//    with the weight laid out [out, in] (transposed at import when needed,
//    and scaled by alpha). With a runtime right-hand side, A x B is a 1x1
//    convolution: B as the input [1, K, M, 1] and A as the weight
//    [N, K, 1, 1] (grouped for batched MatMul); a runtime transpose (Gemm's
//    transA) is chunk + cat + reshape. Runtime scaling (alpha, beta) is a
//    batch_norm with unit variance and eps 0, an exact per-channel scale.
//  * Split with unequal sizes is a chunk into pieces of the sizes' greatest
//    common divisor and a cat of consecutive pieces.
//  * Beyond the core set, two operators torch exports around it: Pad with
//    zeros on H and W (a depthwise 1x1 convolution with weight 1 and that
//    padding) and ReduceMean over H and W (global average pooling).
//
//===----------------------------------------------------------------------===//

#include "memfmt/Import/ONNX.h"

#include "ONNXTensor.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <numeric>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

namespace {

/// The newest ai.onnx opset whose operators this importer knows.
constexpr int64_t kMaxOpset = 17;
/// The largest magnitude of an integer attribute or of a shape or size
/// value (sizes, strides, pads, axes), so that shape arithmetic never
/// overflows.
constexpr int64_t kMaxAttribute = int64_t(1) << 31;

//===----------------------------------------------------------------------===//
// Values and problems
//===----------------------------------------------------------------------===//

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
};

/// `a` and `b` padded to the same rank and broadcast (NumPy); nullopt if
/// they do not broadcast.
std::optional<SmallVector<int64_t, 4>> broadcastShapes(ArrayRef<int64_t> a,
                                                       ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t, 4> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t r = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (l != r && l != 1 && r != 1)
      return std::nullopt;
    shape[i] = l == 1 ? r : l;
  }
  return shape;
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// The attributes each supported operator accepts (at any opset). Others
/// make the node unsupported.
const llvm::StringMap<std::vector<StringRef>> &supportedAttributes() {
  static const llvm::StringMap<std::vector<StringRef>> table = {
      {"Conv",
       {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}},
      {"BatchNormalization",
       {"epsilon", "momentum", "spatial", "is_test", "consumed_inputs",
        "training_mode"}},
      {"Relu", {"consumed_inputs"}},
      {"Add", {"broadcast", "axis", "consumed_inputs"}},
      {"MaxPool",
       {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
        "storage_order", "strides"}},
      {"AveragePool",
       {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads",
        "strides"}},
      {"GlobalAveragePool", {}},
      {"Flatten", {"axis"}},
      {"Reshape", {"allowzero", "shape", "consumed_inputs"}},
      {"Gemm", {"alpha", "beta", "broadcast", "transA", "transB"}},
      {"MatMul", {}},
      {"Identity", {}},
      {"Dropout", {"ratio", "is_test", "seed", "consumed_inputs"}},
      {"Constant",
       {"value", "value_float", "value_floats", "value_int", "value_ints",
        "sparse_value", "value_string", "value_strings"}},
      {"Concat", {"axis"}},
      {"Split", {"axis", "split"}},
      // Beyond the core set, for what torch exports around it: the zero Pad
      // in front of AveragePool (count_include_pad) and a spatial
      // ReduceMean (global average pooling written as a mean).
      {"Pad", {"mode", "pads", "value"}},
      {"ReduceMean", {"axes", "keepdims"}},
  };
  return table;
}

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

class Importer {
public:
  Importer(MLIRContext *context, const onnx::ModelProto &model,
           StringRef displayName, StringRef baseDirectory,
           const ONNXImportOptions &options, llvm::raw_ostream &errors)
      : context(context), builder(context), model(model), graph(model.graph()),
        displayName(displayName.str()), baseDirectory(baseDirectory.str()),
        options(options), errors(errors) {}

  FailureOr<ONNXModel> run();

private:
  // Phases.
  LogicalResult checkModel();
  LogicalResult checkGraph();
  LogicalResult decodeInitializers();
  void chooseElementType();
  void createFunction();
  void convertNode(const onnx::NodeProto &proto, int64_t index);
  void finish();
  LogicalResult report();

  // Problems.
  LogicalResult unsupported(Node &node, const Twine &message);
  LogicalResult invalid(Node &node, const Twine &message);
  void problem(ProblemKind kind, const Twine &where, const Twine &message,
               int64_t position);
  std::string nodeLabel(const onnx::NodeProto &proto, int64_t index);
  Location nodeLocation(const onnx::NodeProto &proto);
  static std::string quote(StringRef name);

  // Attributes.
  const onnx::AttributeProto *attribute(Node &node, StringRef name);
  FailureOr<int64_t> intAttr(Node &node, StringRef name, int64_t dflt);
  FailureOr<float> floatAttr(Node &node, StringRef name, float dflt);
  FailureOr<std::string> stringAttr(Node &node, StringRef name, StringRef dflt);
  FailureOr<SmallVector<int64_t>> intsAttr(Node &node, StringRef name,
                                           ArrayRef<int64_t> dflt);
  FailureOr<SmallVector<int64_t>>
  intValues(Node &node, const HostTensor &tensor, StringRef what);

  // Operands.
  RankedTensorType tensorType(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elementType);
  }
  FailureOr<Value> tensorOperand(Node &node, unsigned i, StringRef role);
  FailureOr<HostTensor> constantOperand(Node &node, unsigned i, StringRef role);
  FailureOr<Value> weight(Node &node, StringRef name, const HostTensor &data);
  FailureOr<Value> derivedWeight(Node &node, StringRef base, StringRef what,
                                 const HostTensor &data);
  std::optional<std::string> parameterDtype(const HostTensor &data,
                                            HostTensor &converted);
  FailureOr<Value> verified(Node &node, Operation *op);
  FailureOr<Value> reshape(Node &node, Value value, ArrayRef<int64_t> shape);
  FailureOr<Value> transpose2d(Node &node, Value value);
  FailureOr<Value> scaleChannels(Node &node, Value value, float scale,
                                 StringRef what);
  FailureOr<Value> matmulAsConv(Node &node, Value lhs, Value rhs);
  void setOutput(Node &node, unsigned i, OnnxValue value);

  // Converters.
  LogicalResult convertConv(Node &node);
  LogicalResult convertBatchNorm(Node &node);
  LogicalResult convertRelu(Node &node);
  LogicalResult convertAdd(Node &node);
  LogicalResult convertPool(Node &node, bool isMax);
  LogicalResult convertGlobalAveragePool(Node &node);
  LogicalResult convertFlatten(Node &node);
  LogicalResult convertReshape(Node &node);
  LogicalResult convertGemm(Node &node);
  LogicalResult convertMatMul(Node &node);
  LogicalResult convertIdentity(Node &node);
  LogicalResult convertDropout(Node &node);
  LogicalResult convertConstant(Node &node);
  LogicalResult convertConcat(Node &node);
  LogicalResult convertSplit(Node &node);
  LogicalResult convertPad(Node &node);
  LogicalResult convertReduceMean(Node &node);

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

//===----------------------------------------------------------------------===//
// Problems and labels
//===----------------------------------------------------------------------===//

std::string Importer::quote(StringRef name) {
  return "'" + printable(name) + "'";
}

void Importer::problem(ProblemKind kind, const Twine &where,
                       const Twine &message, int64_t position) {
  problems.push_back(
      {kind, position, problems.size(), where.str(), message.str()});
}

LogicalResult Importer::unsupported(Node &node, const Twine &message) {
  problem(ProblemKind::Unsupported, node.label, message, node.index);
  return failure();
}

LogicalResult Importer::invalid(Node &node, const Twine &message) {
  problem(ProblemKind::Invalid, node.label, message, node.index);
  return failure();
}

/// "Conv 'conv1'", or "Conv #3 (output 'y')" for a node without a name.
std::string Importer::nodeLabel(const onnx::NodeProto &proto, int64_t index) {
  std::string op =
      proto.op_type().empty() ? "<no op_type>" : printable(proto.op_type());
  if (!proto.domain().empty() && proto.domain() != "ai.onnx")
    op = printable(proto.domain()) + "." + op;
  if (!proto.name().empty())
    return op + " " + quote(proto.name());
  std::string label = op + " #" + std::to_string(index);
  if (proto.output_size() > 0 && !proto.output(0).empty())
    label += " (output " + quote(proto.output(0)) + ")";
  return label;
}

/// The node name and the names of its outputs, as a FusedLoc of NameLocs.
Location Importer::nodeLocation(const onnx::NodeProto &proto) {
  SmallVector<Location> parts;
  if (!proto.name().empty())
    parts.push_back(NameLoc::get(builder.getStringAttr(proto.name())));
  for (const std::string &output : proto.output())
    if (!output.empty() && output != proto.name())
      parts.push_back(NameLoc::get(builder.getStringAttr(output)));
  if (parts.empty())
    parts.push_back(NameLoc::get(builder.getStringAttr(proto.op_type())));
  return FusedLoc::get(context, parts);
}

//===----------------------------------------------------------------------===//
// Phase 1 and 2: the model and the graph
//===----------------------------------------------------------------------===//

LogicalResult Importer::checkModel() {
  if (!model.has_graph()) {
    errors << displayName << ": not an ONNX model: it has no graph";
    return failure();
  }
  bool found = false;
  for (const onnx::OperatorSetIdProto &entry : model.opset_import()) {
    if (!entry.domain().empty() && entry.domain() != "ai.onnx")
      continue;
    found = true;
    opset = entry.version();
  }
  if (!found) {
    // IR version 1 and 2 models have no opset_import; they use opset 1.
    if (model.ir_version() >= 3) {
      errors << displayName
             << ": the model imports no opset of the ai.onnx domain";
      return failure();
    }
    opset = 1;
  }
  if (opset < 1 || opset > kMaxOpset) {
    errors << displayName << ": ai.onnx opset " << opset
           << " is not supported; the importer knows opsets 1 to " << kMaxOpset;
    return failure();
  }
  return success();
}

LogicalResult Importer::checkGraph() {
  std::vector<std::string> messages;
  llvm::StringMap<int64_t> producer; // name -> node index (-1: graph input,
                                     // -2: initializer)
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (init.name().empty()) {
      messages.push_back("an initializer has no name");
      continue;
    }
    if (!producer.try_emplace(init.name(), -2).second)
      messages.push_back("initializer " + quote(init.name()) +
                         " is defined twice");
  }
  if (graph.sparse_initializer_size() > 0)
    messages.push_back("sparse initializers are not supported");
  llvm::StringSet<> inputNames;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (input.name().empty()) {
      messages.push_back("a graph input has no name");
      continue;
    }
    if (!inputNames.insert(input.name()).second)
      messages.push_back("graph input " + quote(input.name()) +
                         " is listed twice");
    producer.try_emplace(input.name(), -1);
  }
  for (int64_t i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      auto [it, inserted] = producer.try_emplace(output, i);
      if (inserted)
        continue;
      std::string previous =
          it->second == -1 ? "a graph input"
          : it->second == -2
              ? "an initializer"
              : "node " + nodeLabel(graph.node(it->second), it->second);
      messages.push_back("node " + nodeLabel(node, i) + " defines " +
                         quote(output) + ", which is already " +
                         (it->second >= 0 ? "defined by " : "") + previous);
    }
  }
  // Dangling names.
  for (int64_t i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    for (const std::string &input : node.input())
      if (!input.empty() && !producer.count(input))
        messages.push_back("node " + nodeLabel(node, i) + " reads " +
                           quote(input) +
                           ", which no node, graph input or initializer "
                           "defines");
  }
  for (const onnx::ValueInfoProto &output : graph.output()) {
    if (output.name().empty())
      messages.push_back("a graph output has no name");
    else if (!producer.count(output.name()))
      messages.push_back("graph output " + quote(output.name()) +
                         " is not defined by any node, graph input or "
                         "initializer");
  }
  if (graph.output_size() == 0)
    messages.push_back("the graph has no outputs");
  if (!messages.empty()) {
    errors << displayName << ": the ONNX graph is malformed ("
           << messages.size() << " problem" << (messages.size() == 1 ? "" : "s")
           << "):";
    for (const std::string &message : messages)
      errors << "\n  " << message;
    return failure();
  }

  // Topological order (Kahn); what is left over lies on or behind a cycle.
  int64_t n = graph.node_size();
  std::vector<int64_t> pending(n, 0);
  std::vector<std::vector<int64_t>> users(n);
  for (int64_t i = 0; i < n; ++i) {
    llvm::StringSet<> seen;
    for (const std::string &input : graph.node(i).input()) {
      if (input.empty() || !seen.insert(input).second)
        continue;
      int64_t from = producer.lookup(input);
      if (from >= 0) {
        ++pending[i];
        users[from].push_back(i);
      }
    }
  }
  std::deque<int64_t> ready;
  for (int64_t i = 0; i < n; ++i)
    if (pending[i] == 0)
      ready.push_back(i);
  while (!ready.empty()) {
    int64_t i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (int64_t user : users[i])
      if (--pending[user] == 0)
        ready.push_back(user);
  }
  if (static_cast<int64_t>(order.size()) != n) {
    // Report the nodes of one cycle: walk back along unresolved inputs.
    std::vector<int64_t> onPath;
    std::vector<int64_t> position(n, -1);
    int64_t current = 0;
    while (pending[current] == 0)
      ++current;
    while (position[current] < 0) {
      position[current] = onPath.size();
      onPath.push_back(current);
      for (const std::string &input : graph.node(current).input()) {
        int64_t from = input.empty() ? -1 : producer.lookup(input);
        if (from >= 0 && pending[from] > 0) {
          current = from;
          break;
        }
      }
      // Every unordered node has an unordered producer; stop regardless.
      if (position[current] >= 0 || onPath.size() > order.size() + n)
        break;
    }
    std::vector<int64_t> cycle(onPath.begin() + position[current],
                               onPath.end());
    std::reverse(cycle.begin(), cycle.end());
    errors << displayName << ": the ONNX graph has a cycle through "
           << cycle.size() << " node" << (cycle.size() == 1 ? "" : "s") << ": ";
    llvm::interleave(
        cycle, errors,
        [&](int64_t i) { errors << nodeLabel(graph.node(i), i); }, " -> ");
    return failure();
  }
  for (const auto &entry : producer)
    onnxNames.insert(entry.getKey());
  return success();
}

LogicalResult Importer::decodeInitializers() {
  std::vector<std::string> messages;
  for (const onnx::TensorProto &init : graph.initializer()) {
    std::string error;
    std::optional<HostTensor> tensor = decodeTensor(init, baseDirectory, error);
    if (!tensor) {
      messages.push_back("initializer " + quote(init.name()) + ": " + error);
      continue;
    }
    initializers[init.name()] = std::move(*tensor);
  }
  if (messages.empty())
    return success();
  errors << displayName << ": " << messages.size() << " initializer"
         << (messages.size() == 1 ? " is" : "s are") << " malformed:";
  for (const std::string &message : messages)
    errors << "\n  " << message;
  return failure();
}

/// The model's compute type: the options', else that of the first
/// floating-point graph input or initializer, else f32.
void Importer::chooseElementType() {
  if (options.elementType) {
    elementType = options.elementType;
    return;
  }
  auto fromKind = [&](int32_t kind) -> Type {
    switch (static_cast<ElementKind>(kind)) {
    case ElementKind::Float:
      return builder.getF32Type();
    case ElementKind::Float16:
      return builder.getF16Type();
    case ElementKind::BFloat16:
      return builder.getBF16Type();
    default:
      return {};
    }
  };
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!initializers.count(input.name()) && input.type().has_tensor_type())
      if (Type type = fromKind(input.type().tensor_type().elem_type())) {
        elementType = type;
        return;
      }
  for (const onnx::TensorProto &init : graph.initializer())
    if (Type type = fromKind(init.data_type())) {
      elementType = type;
      return;
    }
  elementType = builder.getF32Type();
}

/// Creates the module and the function with one argument per graph input
/// that has no initializer. Inputs memfmt cannot take (not a tensor, not
/// floating point, dynamic or empty shapes) are recorded as problems.
void Importer::createFunction() {
  Location moduleLoc = NameLoc::get(
      builder.getStringAttr(llvm::sys::path::filename(displayName)));
  module = ModuleOp::create(moduleLoc);
  builder.setInsertionPointToEnd(module->getBody());
  std::string name = graph.name().empty() ? "main_graph" : graph.name();
  function = func::FuncOp::create(builder, moduleLoc, name,
                                  builder.getFunctionType({}, {}));
  Block *body = function.addEntryBlock();
  SmallVector<Type> argumentTypes;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    const std::string &inputName = input.name();
    if (initializers.count(inputName))
      continue; // A constant with a default value (IR < 4 lists all).
    std::string where = "graph input " + quote(inputName);
    auto fail = [&](const Twine &message) {
      problem(ProblemKind::Unsupported, where, message, -1);
      values[inputName] = OnnxValue();
    };
    if (!input.type().has_tensor_type()) {
      fail("only tensor inputs are supported (this one is a sequence, map "
           "or optional)");
      continue;
    }
    const onnx::TypeProto_Tensor &tensor = input.type().tensor_type();
    if (!tensor.has_shape()) {
      fail("it has no shape; memfmt compiles static shapes");
      continue;
    }
    SmallVector<int64_t, 4> shape;
    std::string dynamic;
    for (auto [d, dim] : llvm::enumerate(tensor.shape().dim())) {
      if (dim.has_dim_value() && dim.dim_value() > 0) {
        shape.push_back(dim.dim_value());
        continue;
      }
      if (dim.has_dim_value()) {
        dynamic = "dimension " + std::to_string(d) + " is " +
                  std::to_string(dim.dim_value()) +
                  "; empty tensors are not supported";
      } else {
        dynamic = "dimension " + std::to_string(d) + " is dynamic" +
                  (dim.has_dim_param() ? " ('" + dim.dim_param() + "')"
                                       : std::string()) +
                  "; memfmt compiles static shapes (export the model with "
                  "fixed input sizes, without dynamic_axes)";
      }
      break;
    }
    int64_t count = 0;
    if (dynamic.empty() && !countElements(shape, count))
      dynamic = "shape " + formatShape(shape) + " is too large";
    auto kind = static_cast<ElementKind>(tensor.elem_type());
    OnnxValue value;
    value.kind = OnnxValue::Kind::Runtime;
    value.elementKind = kind;
    value.shape = shape;
    if (!dynamic.empty()) {
      fail(dynamic);
      continue;
    }
    if (!isFloatKind(kind) && kind != ElementKind::Double) {
      // Kept as a runtime value without SSA value, so that a node that
      // needs it as a constant says so; the input itself is unsupported.
      problem(ProblemKind::Unsupported, where,
              "its element type is " + elementKindName(tensor.elem_type()) +
                  "; memfmt models take floating-point inputs",
              -1);
      values[inputName] = value;
      continue;
    }
    value.elementKind = ElementKind::Float;
    BlockArgument arg = body->addArgument(
        tensorType(shape), NameLoc::get(builder.getStringAttr(inputName)));
    argumentTypes.push_back(arg.getType());
    value.value = arg;
    values[inputName] = value;
  }
  function.setFunctionType(builder.getFunctionType(argumentTypes, {}));
  builder.setInsertionPointToEnd(body);
  for (auto &entry : initializers)
    values[entry.getKey()] = OnnxValue::ofConstant(entry.getValue());
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *Importer::attribute(Node &node, StringRef name) {
  return node.attributes.lookup(name);
}

/// The attribute's type, inferred from the set field for old files that
/// leave `type` unset.
static onnx::AttributeProto_AttributeType
attributeType(const onnx::AttributeProto &attr) {
  if (attr.type() != onnx::AttributeProto_AttributeType_UNDEFINED)
    return attr.type();
  if (attr.has_f())
    return onnx::AttributeProto_AttributeType_FLOAT;
  if (attr.has_i())
    return onnx::AttributeProto_AttributeType_INT;
  if (attr.has_s())
    return onnx::AttributeProto_AttributeType_STRING;
  if (attr.has_t())
    return onnx::AttributeProto_AttributeType_TENSOR;
  if (attr.ints_size())
    return onnx::AttributeProto_AttributeType_INTS;
  if (attr.floats_size())
    return onnx::AttributeProto_AttributeType_FLOATS;
  if (attr.strings_size())
    return onnx::AttributeProto_AttributeType_STRINGS;
  return onnx::AttributeProto_AttributeType_UNDEFINED;
}

FailureOr<int64_t> Importer::intAttr(Node &node, StringRef name, int64_t dflt) {
  const onnx::AttributeProto *attr = attribute(node, name);
  if (!attr)
    return dflt;
  if (attributeType(*attr) != onnx::AttributeProto_AttributeType_INT)
    return invalid(node, "attribute '" + name + "' must be an int");
  if (attr->i() > kMaxAttribute || attr->i() < -kMaxAttribute)
    return invalid(node, "attribute '" + name + "' has the value " +
                             Twine(attr->i()) +
                             "; values must lie within +-2^31");
  return attr->i();
}

FailureOr<float> Importer::floatAttr(Node &node, StringRef name, float dflt) {
  const onnx::AttributeProto *attr = attribute(node, name);
  if (!attr)
    return dflt;
  if (attributeType(*attr) != onnx::AttributeProto_AttributeType_FLOAT)
    return invalid(node, "attribute '" + name + "' must be a float");
  return attr->f();
}

FailureOr<std::string> Importer::stringAttr(Node &node, StringRef name,
                                            StringRef dflt) {
  const onnx::AttributeProto *attr = attribute(node, name);
  if (!attr)
    return dflt.str();
  if (attributeType(*attr) != onnx::AttributeProto_AttributeType_STRING)
    return invalid(node, "attribute '" + name + "' must be a string");
  return attr->s();
}

FailureOr<SmallVector<int64_t>> Importer::intsAttr(Node &node, StringRef name,
                                                   ArrayRef<int64_t> dflt) {
  const onnx::AttributeProto *attr = attribute(node, name);
  if (!attr)
    return SmallVector<int64_t>(dflt);
  onnx::AttributeProto_AttributeType type = attributeType(*attr);
  // An empty list has no field set in old files.
  if (type != onnx::AttributeProto_AttributeType_INTS &&
      type != onnx::AttributeProto_AttributeType_UNDEFINED)
    return invalid(node, "attribute '" + name + "' must be a list of ints");
  // Sizes, strides, pads and axes: far from int64 overflow.
  for (int64_t value : attr->ints())
    if (value > kMaxAttribute || value < -kMaxAttribute)
      return invalid(node, "attribute '" + name + "' has the value " +
                               Twine(value) + "; values must lie within " +
                               "+-2^31");
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

/// The values of a constant int tensor (a shape, sizes, pads), each within
/// +-kMaxAttribute.
FailureOr<SmallVector<int64_t>>
Importer::intValues(Node &node, const HostTensor &tensor, StringRef what) {
  SmallVector<int64_t> values;
  for (int64_t value : tensor.toInts()) {
    if (value > kMaxAttribute || value < -kMaxAttribute)
      return invalid(node, what + " has the value " + Twine(value) +
                               "; values must lie within +-2^31");
    values.push_back(value);
  }
  return values;
}

//===----------------------------------------------------------------------===//
// Operands and helpers
//===----------------------------------------------------------------------===//

void Importer::setOutput(Node &node, unsigned i, OnnxValue value) {
  if (value.value)
    temporaryReshapes.erase(value.value.getDefiningOp());
  if (node.hasOutput(i))
    values[node.proto.output(i)] = std::move(value);
}

/// The safetensors dtype a constant is stored with; doubles are narrowed
/// to f32 into `converted`. Nullopt for non-floating-point data.
std::optional<std::string> Importer::parameterDtype(const HostTensor &data,
                                                    HostTensor &converted) {
  switch (data.kind) {
  case ElementKind::Float:
    return std::string("F32");
  case ElementKind::Float16:
    return std::string("F16");
  case ElementKind::BFloat16:
    return std::string("BF16");
  case ElementKind::Double:
    converted = HostTensor::fromFloats(data.shape, data.toFloats());
    return std::string("F32");
  default:
    return std::nullopt;
  }
}

FailureOr<Value> Importer::weight(Node &node, StringRef name,
                                  const HostTensor &data) {
  if (Value existing = weights.lookup(name))
    return existing;
  HostTensor converted;
  std::optional<std::string> dtype = parameterDtype(data, converted);
  if (!dtype)
    return unsupported(node, "constant " + quote(name) + " is " +
                                 elementKindName(int32_t(data.kind)) +
                                 "; only floating-point constants can be "
                                 "tensor operands");
  if (data.numElements() == 0)
    return unsupported(node, "constant " + quote(name) + " " +
                                 formatShape(data.shape) +
                                 " is empty; empty tensors are not supported");
  const HostTensor &stored = converted.bytes ? converted : data;
  // Weight ops go where they are first used; later uses reuse them (one
  // block, so the first use dominates the others).
  auto op = WeightOp::create(builder, NameLoc::get(builder.getStringAttr(name)),
                             tensorType(data.shape), name);
  ImportedParameter parameter;
  parameter.name = name.str();
  parameter.dtype = *dtype;
  parameter.shape.assign(data.shape.begin(), data.shape.end());
  parameter.data = *stored.bytes;
  parameters.push_back(std::move(parameter));
  weights[name] = op.getResult();
  return op.getResult();
}

FailureOr<Value> Importer::derivedWeight(Node &node, StringRef base,
                                         StringRef what,
                                         const HostTensor &data) {
  // `<base>.<what>`, or `<base>.<what>.<i>` where that name is an ONNX
  // name or another parameter with other values; the same values reuse
  // their parameter.
  std::string name = (base + "." + what).str();
  for (int i = 1;; ++i) {
    if (!onnxNames.count(name)) {
      if (!weights.count(name))
        return weight(node, name, data);
      const ImportedParameter *existing = nullptr;
      for (const ImportedParameter &p : parameters)
        if (p.name == name)
          existing = &p;
      if (existing && existing->dtype == "F32" &&
          data.kind == ElementKind::Float &&
          ArrayRef<int64_t>(existing->shape) == ArrayRef<int64_t>(data.shape) &&
          existing->data == *data.bytes)
        return weights.lookup(name);
    }
    name = (base + "." + what + "." + Twine(i)).str();
  }
}

FailureOr<Value> Importer::tensorOperand(Node &node, unsigned i,
                                         StringRef role) {
  if (!node.hasInput(i))
    return invalid(node,
                   "the " + role + " input (#" + Twine(i) + ") is missing");
  OnnxValue &value = *node.inputs[i];
  StringRef name = node.inputName(i);
  if (value.isConstant()) {
    if (!isFloatKind(value.constant->kind) &&
        value.constant->kind != ElementKind::Double)
      return unsupported(node,
                         "the " + role + " input " + quote(name) + " is " +
                             elementKindName(int32_t(value.constant->kind)) +
                             "; memfmt computes in floating point");
    return weight(node, name, *value.constant);
  }
  if (!value.value || value.elementKind != ElementKind::Float)
    return unsupported(node, "the " + role + " input " + quote(name) + " is " +
                                 elementKindName(int32_t(value.elementKind)) +
                                 "; memfmt computes in floating point");
  return value.value;
}

FailureOr<HostTensor> Importer::constantOperand(Node &node, unsigned i,
                                                StringRef role) {
  if (!node.hasInput(i))
    return invalid(node,
                   "the " + role + " input (#" + Twine(i) + ") is missing");
  OnnxValue &value = *node.inputs[i];
  if (!value.isConstant())
    return unsupported(node, "the " + role + " input " +
                                 quote(node.inputName(i)) +
                                 " must be a constant (an initializer or a "
                                 "Constant node): memfmt compiles static "
                                 "shapes");
  return *value.constant;
}

/// Verifies `op` at once, so that a verifier error names the ONNX node; on
/// failure erases it.
FailureOr<Value> Importer::verified(Node &node, Operation *op) {
  std::string message;
  {
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      if (!message.empty())
        message += "; ";
      llvm::raw_string_ostream(message) << diag;
      return success();
    });
    if (succeeded(mlir::verify(op)))
      return op->getNumResults() ? op->getResult(0) : Value();
  }
  op->erase();
  return invalid(node, message);
}

FailureOr<Value> Importer::reshape(Node &node, Value value,
                                   ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  // reshape(reshape(x)) is reshape(x): look through a temporary (erased
  // at the end if nothing else uses it).
  if (auto producer = value.getDefiningOp<ReshapeOp>();
      producer && temporaryReshapes.count(producer))
    return reshape(node, producer.getInput(), shape);
  FailureOr<Value> result = verified(
      node, ReshapeOp::create(
                builder, node.loc,
                RankedTensorType::get(shape, type.getElementType()), value));
  if (succeeded(result))
    temporaryReshapes.insert(result->getDefiningOp());
  return result;
}

/// [R, C] -> [C, R] at run time: chunk the columns, concatenate them along
/// dim 0 ([C * R, 1], column j at rows j * R ...), and reshape.
FailureOr<Value> Importer::transpose2d(Node &node, Value value) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(value.getType()).getShape();
  int64_t rows = shape[0], cols = shape[1];
  if (rows == 1 || cols == 1)
    return reshape(node, value, {cols, rows});
  SmallVector<Type> pieceTypes(cols, tensorType({rows, 1}));
  auto chunk = ChunkOp::create(builder, node.loc, pieceTypes, value,
                               builder.getI64IntegerAttr(cols),
                               builder.getI64IntegerAttr(1));
  if (failed(verified(node, chunk)))
    return failure();
  FailureOr<Value> column = verified(
      node, CatOp::create(builder, node.loc, tensorType({cols * rows, 1}),
                          chunk.getResults(), IntegerAttr()));
  if (failed(column))
    return failure();
  return reshape(node, *column, {cols, rows});
}

/// value * scale, per channel of dim 1, as an inference batch norm with
/// mean 0, variance 1 and eps 0 (exact: x * scale + 0).
FailureOr<Value> Importer::scaleChannels(Node &node, Value value, float scale,
                                         StringRef what) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t channels = type.getDimSize(1);
  std::string base =
      node.proto.name().empty() ? node.proto.output(0) : node.proto.name();
  auto constant = [&](StringRef suffix, float v) {
    return derivedWeight(
        node, base, (what + "." + suffix).str(),
        HostTensor::fromFloats({channels}, std::vector<float>(channels, v)));
  };
  FailureOr<Value> gamma = constant("scale", scale);
  FailureOr<Value> beta = constant("shift", 0.0f);
  FailureOr<Value> mean = constant("mean", 0.0f);
  FailureOr<Value> var = constant("var", 1.0f);
  if (failed(gamma) || failed(beta) || failed(mean) || failed(var))
    return failure();
  return verified(node, BatchNormOp::create(builder, node.loc, type, value,
                                            *gamma, *beta, *mean, *var,
                                            builder.getF64FloatAttr(0.0),
                                            FloatAttr(), BoolAttr()));
}

/// lhs [G, N, K] x rhs [B, G, K, M] for B, G >= 1 as a 1x1 convolution:
/// rhs is the input [B, G * K, M, 1], lhs the weight [G * N, K, 1, 1] with
/// G groups; the result is [B, G * N, M, 1]. `lhs` is passed as [G, N, K],
/// `rhs` as [B, G, K, M].
FailureOr<Value> Importer::matmulAsConv(Node &node, Value lhs, Value rhs) {
  ArrayRef<int64_t> l = cast<RankedTensorType>(lhs.getType()).getShape();
  ArrayRef<int64_t> r = cast<RankedTensorType>(rhs.getType()).getShape();
  int64_t groups = l[0], n = l[1], k = l[2], batch = r[0], m = r[3];
  FailureOr<Value> weightValue = reshape(node, lhs, {groups * n, k, 1, 1});
  FailureOr<Value> input = reshape(node, rhs, {batch, groups * k, m, 1});
  if (failed(weightValue) || failed(input))
    return failure();
  return verified(
      node,
      Conv2dOp::create(builder, node.loc, tensorType({batch, groups * n, m, 1}),
                       *input, *weightValue, Value(), DenseI64ArrayAttr(),
                       DenseI64ArrayAttr(), DenseI64ArrayAttr(),
                       groups == 1 ? IntegerAttr()
                                   : builder.getI64IntegerAttr(groups)));
}

//===----------------------------------------------------------------------===//
// Phase 3: converting nodes
//===----------------------------------------------------------------------===//

void Importer::convertNode(const onnx::NodeProto &proto, int64_t index) {
  Node node{proto, index, nodeLabel(proto, index), nodeLocation(proto), {}, {}};
  auto failOutputs = [&] {
    for (const std::string &output : proto.output())
      if (!output.empty())
        values[output] = OnnxValue();
  };
  if (!proto.domain().empty() && proto.domain() != "ai.onnx") {
    problem(ProblemKind::Unsupported, node.label,
            "operators of domain " + quote(proto.domain()) +
                " are not supported",
            index);
    return failOutputs();
  }
  const auto &table = supportedAttributes();
  auto known = table.find(proto.op_type());
  if (known == table.end()) {
    problem(ProblemKind::Unsupported, node.label,
            "operator " + printable(proto.op_type()) + " is not supported",
            index);
    return failOutputs();
  }
  bool ok = true;
  for (const onnx::AttributeProto &attr : proto.attribute()) {
    if (!llvm::is_contained(known->second, StringRef(attr.name()))) {
      problem(ProblemKind::Unsupported, node.label,
              "attribute " + quote(attr.name()) + " is not supported", index);
      ok = false;
    }
    if (attr.has_ref_attr_name()) {
      problem(ProblemKind::Unsupported, node.label,
              "attribute references (ref_attr_name) are not supported", index);
      ok = false;
    }
    node.attributes[attr.name()] = &attr;
  }
  bool inputFailed = false;
  for (const std::string &input : proto.input()) {
    if (input.empty()) {
      node.inputs.push_back(nullptr);
      continue;
    }
    OnnxValue &value = values[input];
    inputFailed |= value.isFailed();
    node.inputs.push_back(&value);
  }
  // A node behind a failed one is not converted (its input shapes are
  // unknown); its own problems above are still listed.
  if (!ok || inputFailed)
    return failOutputs();

  StringRef op = proto.op_type();
  LogicalResult result = failure();
  if (op == "Conv")
    result = convertConv(node);
  else if (op == "BatchNormalization")
    result = convertBatchNorm(node);
  else if (op == "Relu")
    result = convertRelu(node);
  else if (op == "Add")
    result = convertAdd(node);
  else if (op == "MaxPool")
    result = convertPool(node, /*isMax=*/true);
  else if (op == "AveragePool")
    result = convertPool(node, /*isMax=*/false);
  else if (op == "GlobalAveragePool")
    result = convertGlobalAveragePool(node);
  else if (op == "Flatten")
    result = convertFlatten(node);
  else if (op == "Reshape")
    result = convertReshape(node);
  else if (op == "Gemm")
    result = convertGemm(node);
  else if (op == "MatMul")
    result = convertMatMul(node);
  else if (op == "Identity")
    result = convertIdentity(node);
  else if (op == "Dropout")
    result = convertDropout(node);
  else if (op == "Constant")
    result = convertConstant(node);
  else if (op == "Concat")
    result = convertConcat(node);
  else if (op == "Split")
    result = convertSplit(node);
  else if (op == "Pad")
    result = convertPad(node);
  else if (op == "ReduceMean")
    result = convertReduceMean(node);
  if (failed(result))
    failOutputs();
}

/// Checks the number of inputs and outputs of `node`.
static std::optional<std::string> checkArity(Node &node, unsigned minInputs,
                                             unsigned maxInputs,
                                             unsigned maxOutputs) {
  unsigned inputs = 0;
  for (unsigned i = 0; i < node.numInputs(); ++i)
    if (node.hasInput(i))
      inputs = i + 1;
  if (inputs < minInputs || node.numInputs() > maxInputs)
    return "expects " +
           (minInputs == maxInputs ? std::to_string(minInputs)
                                   : std::to_string(minInputs) + " to " +
                                         std::to_string(maxInputs)) +
           " inputs, got " + std::to_string(node.numInputs());
  for (unsigned i = 0; i < minInputs; ++i)
    if (!node.hasInput(i))
      return "input #" + std::to_string(i) + " is required but empty";
  if (node.numOutputs() < 1 || !node.hasOutput(0))
    return std::string("has no output");
  if (node.numOutputs() > maxOutputs)
    return "expects at most " + std::to_string(maxOutputs) + " outputs, got " +
           std::to_string(node.numOutputs());
  return std::nullopt;
}

#define CHECK_ARITY(MIN, MAX, OUTS)                                            \
  if (std::optional<std::string> problem = checkArity(node, MIN, MAX, OUTS))   \
    return invalid(node, *problem);

LogicalResult Importer::convertConv(Node &node) {
  CHECK_ARITY(2, 3, 1);
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  if (rank == 5)
    return unsupported(node, "3-D convolution (input " + formatShape(x.shape) +
                                 ") is not supported; only 1-D and 2-D");
  if (rank != 3 && rank != 4)
    return invalid(node, "the input " + formatShape(x.shape) +
                             " must have rank 3 or 4 ([N, C, ...])");
  int64_t spatial = rank - 2;
  OnnxValue &w = *node.inputs[1];
  if (static_cast<int64_t>(w.shape.size()) != rank)
    return invalid(node, "the weight " + formatShape(w.shape) +
                             " must have the input's rank " +
                             std::to_string(rank));
  FailureOr<int64_t> group = intAttr(node, "group", 1);
  FailureOr<std::string> autoPad = stringAttr(node, "auto_pad", "NOTSET");
  FailureOr<SmallVector<int64_t>> kernelShape =
      intsAttr(node, "kernel_shape", {});
  FailureOr<SmallVector<int64_t>> strides =
      intsAttr(node, "strides", SmallVector<int64_t>(spatial, 1));
  FailureOr<SmallVector<int64_t>> dilations =
      intsAttr(node, "dilations", SmallVector<int64_t>(spatial, 1));
  FailureOr<SmallVector<int64_t>> pads =
      intsAttr(node, "pads", SmallVector<int64_t>(2 * spatial, 0));
  if (failed(group) || failed(autoPad) || failed(kernelShape) ||
      failed(strides) || failed(dilations) || failed(pads))
    return failure();
  ArrayRef<int64_t> weightSpatial = ArrayRef<int64_t>(w.shape).drop_front(2);
  if (!kernelShape->empty() && ArrayRef<int64_t>(*kernelShape) != weightSpatial)
    return invalid(node, "kernel_shape " + formatShape(*kernelShape) +
                             " does not match the weight " +
                             formatShape(w.shape));
  if (static_cast<int64_t>(strides->size()) != spatial ||
      static_cast<int64_t>(dilations->size()) != spatial ||
      static_cast<int64_t>(pads->size()) != 2 * spatial)
    return invalid(node, "strides, dilations and pads must have " +
                             std::to_string(spatial) + ", " +
                             std::to_string(spatial) + " and " +
                             std::to_string(2 * spatial) + " values");
  if (llvm::any_of(*strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(*dilations, [](int64_t d) { return d < 1; }) ||
      llvm::any_of(*pads, [](int64_t p) { return p < 0; }) || *group < 1)
    return invalid(node, "strides, dilations and group must be positive and "
                         "pads non-negative");
  // Expand 1-D to 2-D: height 1.
  SmallVector<int64_t, 2> in(ArrayRef<int64_t>(x.shape).drop_front(2));
  SmallVector<int64_t, 2> kernel(weightSpatial);
  SmallVector<int64_t, 2> stride(strides->begin(), strides->end());
  SmallVector<int64_t, 2> dilation(dilations->begin(), dilations->end());
  SmallVector<int64_t, 4> pad(pads->begin(), pads->end()); // begin, end
  if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    for (int64_t d = 0; d < spatial; ++d) {
      int64_t out = (in[d] + stride[d] - 1) / stride[d];
      int64_t extent = dilation[d] * (kernel[d] - 1) + 1;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * stride[d] + extent - in[d]);
      int64_t small = total / 2;
      pad[d] = *autoPad == "SAME_UPPER" ? small : total - small;
      pad[d + spatial] = total - pad[d];
    }
  } else if (*autoPad == "VALID") {
    pad.assign(2 * spatial, 0);
  } else if (*autoPad != "NOTSET" && !autoPad->empty()) {
    return invalid(node, "auto_pad '" + *autoPad +
                             "' is not one of NOTSET, "
                             "SAME_UPPER, SAME_LOWER, "
                             "VALID");
  }
  if (spatial == 1) {
    in.insert(in.begin(), 1);
    kernel.insert(kernel.begin(), 1);
    stride.insert(stride.begin(), 1);
    dilation.insert(dilation.begin(), 1);
    pad = {0, pad[0], 0, pad[1]};
  }
  Padding2d padding{pad[0], pad[1], pad[2], pad[3]};
  int64_t oh = convOutputSize(in[0], kernel[0], stride[0], padding.top,
                              padding.bottom, dilation[0]);
  int64_t ow = convOutputSize(in[1], kernel[1], stride[1], padding.left,
                              padding.right, dilation[1]);
  if (oh < 1 || ow < 1)
    return invalid(node, "the kernel " + formatShape(weightSpatial) +
                             " (dilated, with padding) does not fit the "
                             "input " +
                             formatShape(x.shape));

  FailureOr<Value> input = tensorOperand(node, 0, "X");
  FailureOr<Value> weightValue = tensorOperand(node, 1, "W");
  if (failed(input) || failed(weightValue))
    return failure();
  Value bias;
  if (node.hasInput(2)) {
    FailureOr<Value> b = tensorOperand(node, 2, "B");
    if (failed(b))
      return failure();
    bias = *b;
  }
  int64_t n = x.shape[0], outChannels = w.shape[0];
  if (spatial == 1) {
    input = reshape(node, *input, {n, x.shape[1], 1, x.shape[2]});
    weightValue =
        reshape(node, *weightValue, {w.shape[0], w.shape[1], 1, w.shape[2]});
    if (failed(input) || failed(weightValue))
      return failure();
  }
  auto pair = [&](ArrayRef<int64_t> values) -> DenseI64ArrayAttr {
    if (llvm::all_of(values, [](int64_t v) { return v == 1; }))
      return {};
    return builder.getDenseI64ArrayAttr(values);
  };
  DenseI64ArrayAttr paddingAttr;
  if (padding.top == padding.bottom && padding.left == padding.right) {
    if (padding.top || padding.left)
      paddingAttr = builder.getDenseI64ArrayAttr({padding.top, padding.left});
  } else {
    paddingAttr = builder.getDenseI64ArrayAttr(
        {padding.top, padding.left, padding.bottom, padding.right});
  }
  FailureOr<Value> y = verified(
      node,
      Conv2dOp::create(
          builder, node.loc, tensorType({n, outChannels, oh, ow}), *input,
          *weightValue, bias, pair(stride), paddingAttr, pair(dilation),
          *group == 1 ? IntegerAttr() : builder.getI64IntegerAttr(*group)));
  if (failed(y))
    return failure();
  SmallVector<int64_t, 4> shape = {n, outChannels, oh, ow};
  if (spatial == 1) {
    shape = {n, outChannels, ow};
    y = reshape(node, *y, shape);
    if (failed(y))
      return failure();
  }
  setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

LogicalResult Importer::convertBatchNorm(Node &node) {
  CHECK_ARITY(5, 5, 5);
  for (unsigned i = 1; i < node.numOutputs(); ++i)
    if (node.hasOutput(i))
      return unsupported(node, "training outputs (running or saved mean "
                               "and variance) are not supported; memfmt "
                               "compiles inference");
  FailureOr<float> epsilon = floatAttr(node, "epsilon", 1e-5f);
  FailureOr<int64_t> training = intAttr(node, "training_mode", 0);
  FailureOr<int64_t> isTest = intAttr(node, "is_test", opset < 7 ? 0 : 1);
  FailureOr<int64_t> spatial = intAttr(node, "spatial", 1);
  if (failed(epsilon) || failed(training) || failed(isTest) || failed(spatial))
    return failure();
  if (*training != 0)
    return unsupported(node, "training_mode = 1 is not supported; memfmt "
                             "compiles inference");
  if (*isTest == 0)
    return unsupported(node, "is_test = 0 (training) is not supported; "
                             "memfmt compiles inference");
  if (*spatial != 1)
    return unsupported(node, "spatial = 0 (per-activation statistics) is "
                             "not supported");
  if (*epsilon < 0 || !std::isfinite(*epsilon))
    return invalid(node, "epsilon must be finite and >= 0");
  OnnxValue &x = *node.inputs[0];
  if (x.shape.size() < 2)
    return invalid(node, "the input " + formatShape(x.shape) +
                             " must have rank >= 2 ([N, C, ...])");
  int64_t channels = x.shape[1];
  static const char *const roles[] = {"X", "scale", "B", "input_mean",
                                      "input_var"};
  SmallVector<Value, 5> operands;
  for (unsigned i = 0; i < 5; ++i) {
    if (i > 0 && node.inputs[i]->shape != SmallVector<int64_t, 4>{channels})
      return invalid(node, "the " + Twine(roles[i]) + " input " +
                               quote(node.inputName(i)) + " has shape " +
                               formatShape(node.inputs[i]->shape) +
                               "; expected [" + Twine(channels) +
                               "] (one per channel of the input " +
                               formatShape(x.shape) + ")");
    FailureOr<Value> operand = tensorOperand(node, i, roles[i]);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }
  // ONNX's epsilon is a float: take the shortest decimal that round-trips
  // (1e-3, not 0.0010000000474974513), and leave eps unset when that is the
  // default 1e-5, as the zoo does.
  double eps = *epsilon;
  for (int digits = 1; digits <= 9; ++digits) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.*g", digits, double(*epsilon));
    if (std::strtof(text, nullptr) == *epsilon) {
      eps = std::strtod(text, nullptr);
      break;
    }
  }
  FloatAttr epsAttr = eps == 1e-5 ? FloatAttr() : builder.getF64FloatAttr(eps);
  FailureOr<Value> y =
      verified(node, BatchNormOp::create(builder, node.loc, tensorType(x.shape),
                                         operands[0], operands[1], operands[2],
                                         operands[3], operands[4], epsAttr,
                                         FloatAttr(), BoolAttr()));
  if (failed(y))
    return failure();
  setOutput(node, 0, OnnxValue::runtime(*y, x.shape));
  return success();
}

LogicalResult Importer::convertRelu(Node &node) {
  CHECK_ARITY(1, 1, 1);
  FailureOr<Value> x = tensorOperand(node, 0, "X");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = node.inputs[0]->shape;
  FailureOr<Value> y =
      verified(node, ReluOp::create(builder, node.loc, tensorType(shape), *x));
  if (failed(y))
    return failure();
  setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

LogicalResult Importer::convertAdd(Node &node) {
  CHECK_ARITY(2, 2, 1);
  SmallVector<int64_t, 4> lhsShape = node.inputs[0]->shape;
  SmallVector<int64_t, 4> rhsShape = node.inputs[1]->shape;
  FailureOr<int64_t> broadcast = intAttr(node, "broadcast", 0);
  if (failed(broadcast))
    return failure();
  bool legacyAxis = false;
  int64_t axis = 0;
  if (opset < 7) {
    // Add-1/6: no broadcasting unless `broadcast`; then B's shape matches a
    // contiguous run of A's dims, starting at `axis` (default: the suffix).
    if (*broadcast == 0 && lhsShape != rhsShape)
      return invalid(node, "operand shapes " + formatShape(lhsShape) + " and " +
                               formatShape(rhsShape) +
                               " differ and broadcast = 0");
    if (attribute(node, "axis")) {
      FailureOr<int64_t> a = intAttr(node, "axis", 0);
      if (failed(a))
        return failure();
      axis = *a < 0 ? *a + lhsShape.size() : *a;
      if (axis < 0 ||
          axis + rhsShape.size() > static_cast<size_t>(lhsShape.size()))
        return invalid(node, "axis " + Twine(*a) + " does not place B " +
                                 formatShape(rhsShape) + " inside A " +
                                 formatShape(lhsShape));
      legacyAxis = true;
    }
  } else if (attribute(node, "broadcast") || attribute(node, "axis")) {
    return invalid(node, "attributes 'broadcast' and 'axis' exist only up "
                         "to opset 6");
  }
  FailureOr<Value> lhs = tensorOperand(node, 0, "A");
  FailureOr<Value> rhs = tensorOperand(node, 1, "B");
  if (failed(lhs) || failed(rhs))
    return failure();
  if (legacyAxis) {
    rhsShape.append(lhsShape.size() - axis - rhsShape.size(), 1);
    rhs = reshape(node, *rhs, rhsShape);
    if (failed(rhs))
      return failure();
  }
  std::optional<SmallVector<int64_t, 4>> shape =
      broadcastShapes(lhsShape, rhsShape);
  if (!shape)
    return invalid(node, "operand shapes " + formatShape(lhsShape) + " and " +
                             formatShape(rhsShape) + " do not broadcast");
  FailureOr<Value> y = verified(
      node, AddOp::create(builder, node.loc, tensorType(*shape), *lhs, *rhs));
  if (failed(y))
    return failure();
  setOutput(node, 0, OnnxValue::runtime(*y, *shape));
  return success();
}

LogicalResult Importer::convertPool(Node &node, bool isMax) {
  CHECK_ARITY(1, 1, isMax ? 2 : 1);
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  if (rank == 5)
    return unsupported(node, "3-D pooling (input " + formatShape(x.shape) +
                                 ") is not supported; only 1-D and 2-D");
  if (rank != 3 && rank != 4)
    return invalid(node, "the input " + formatShape(x.shape) +
                             " must have rank 3 or 4 ([N, C, ...])");
  int64_t spatial = rank - 2;
  bool withIndices = isMax && node.hasOutput(1);
  FailureOr<SmallVector<int64_t>> kernel = intsAttr(node, "kernel_shape", {});
  FailureOr<SmallVector<int64_t>> strides =
      intsAttr(node, "strides", SmallVector<int64_t>(spatial, 1));
  FailureOr<SmallVector<int64_t>> dilations =
      intsAttr(node, "dilations", SmallVector<int64_t>(spatial, 1));
  FailureOr<SmallVector<int64_t>> pads =
      intsAttr(node, "pads", SmallVector<int64_t>(2 * spatial, 0));
  FailureOr<std::string> autoPad = stringAttr(node, "auto_pad", "NOTSET");
  FailureOr<int64_t> ceilMode = intAttr(node, "ceil_mode", 0);
  FailureOr<int64_t> countIncludePad = intAttr(node, "count_include_pad", 0);
  FailureOr<int64_t> storageOrder = intAttr(node, "storage_order", 0);
  if (failed(kernel) || failed(strides) || failed(dilations) || failed(pads) ||
      failed(autoPad) || failed(ceilMode) || failed(countIncludePad) ||
      failed(storageOrder))
    return failure();
  if (kernel->empty())
    return invalid(node, "attribute 'kernel_shape' is required");
  if (static_cast<int64_t>(kernel->size()) != spatial ||
      static_cast<int64_t>(strides->size()) != spatial ||
      static_cast<int64_t>(dilations->size()) != spatial ||
      static_cast<int64_t>(pads->size()) != 2 * spatial)
    return invalid(node, "kernel_shape, strides, dilations and pads must "
                         "have " +
                             Twine(spatial) + ", " + Twine(spatial) + ", " +
                             Twine(spatial) + " and " + Twine(2 * spatial) +
                             " values for the input " + formatShape(x.shape));
  if (llvm::any_of(*kernel, [](int64_t k) { return k < 1; }) ||
      llvm::any_of(*strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(*dilations, [](int64_t d) { return d < 1; }) ||
      llvm::any_of(*pads, [](int64_t p) { return p < 0; }))
    return invalid(node, "kernel_shape, strides and dilations must be "
                         "positive and pads non-negative");
  if (*storageOrder != 0 && *storageOrder != 1)
    return invalid(node, "storage_order must be 0 or 1");
  SmallVector<int64_t, 2> in(ArrayRef<int64_t>(x.shape).drop_front(2));
  SmallVector<int64_t, 4> pad(pads->begin(), pads->end());
  SmallVector<int64_t, 2> out(spatial);
  bool ceil = *ceilMode != 0;
  bool explicitPads = *autoPad == "NOTSET" || autoPad->empty();
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t k = (*kernel)[d], s = (*strides)[d];
    int64_t extent = (*dilations)[d] * (k - 1) + 1;
    if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
      out[d] = (in[d] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out[d] - 1) * s + extent - in[d]);
      int64_t small = total / 2;
      pad[d] = *autoPad == "SAME_UPPER" ? small : total - small;
      pad[d + spatial] = total - pad[d];
    } else if (*autoPad == "VALID") {
      pad[d] = pad[d + spatial] = 0;
      out[d] = in[d] >= extent ? (in[d] - extent) / s + 1 : 0;
    } else if (explicitPads) {
      int64_t span = in[d] + pad[d] + pad[d + spatial] - extent;
      out[d] = span < 0 ? 0 : (ceil ? (span + s - 1) / s : span / s) + 1;
    } else {
      return invalid(node, "auto_pad '" + *autoPad +
                               "' is not one of NOTSET, SAME_UPPER, "
                               "SAME_LOWER, VALID");
    }
    if (out[d] < 1)
      return invalid(node, "the window " + formatShape(*kernel) +
                               " (dilated, with padding) does not fit the "
                               "input " +
                               formatShape(x.shape));
  }
  // ONNX's output size against ATen's (memfmt's): in ceil mode ATen drops
  // a last window that starts past the input (in the end padding); ONNX
  // keeps it, although it sees no input element.
  bool useCeil = false;
  if (ceil && explicitPads) {
    for (int64_t d = 0; d < spatial; ++d) {
      int64_t aten = poolOutputSize(in[d], (*kernel)[d], (*strides)[d], pad[d],
                                    pad[d + spatial], (*dilations)[d], true);
      if (aten != out[d])
        return unsupported(node, "ceil_mode adds a last window that lies in "
                                 "the end padding, past the input (ONNX "
                                 "keeps it, memfmt follows ATen and drops "
                                 "it)");
    }
    useCeil = true;
  }
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t extent = (*dilations)[d] * ((*kernel)[d] - 1) + 1;
    if (pad[d] >= extent || pad[d + spatial] >= extent)
      return unsupported(node, "pads " + formatShape(pad) +
                                   " are not smaller than the (dilated) "
                                   "window " +
                                   formatShape(*kernel) +
                                   "; memfmt needs every window to see an "
                                   "input element");
  }
  if (withIndices) {
    // memfmt's indices are h * W + w within each (n, c) plane; ONNX's
    // count from the start of the tensor, row-major (storage_order 0) or
    // column-major (1). They agree on a single plane.
    if (spatial != 2 || x.shape[0] * x.shape[1] != 1)
      return unsupported(node, "the Indices output is supported for a "
                               "single 2-D plane (N = C = 1) only: memfmt's "
                               "indices count within each plane");
    if (*storageOrder == 1 && x.shape[2] != 1 && x.shape[3] != 1)
      return unsupported(node, "the Indices output with storage_order = 1 "
                               "(column-major) is not supported");
  }

  FailureOr<Value> input = tensorOperand(node, 0, "X");
  if (failed(input))
    return failure();
  SmallVector<int64_t, 2> k2(kernel->begin(), kernel->end());
  SmallVector<int64_t, 2> s2(strides->begin(), strides->end());
  SmallVector<int64_t, 2> d2(dilations->begin(), dilations->end());
  if (spatial == 1) {
    input = reshape(node, *input, {x.shape[0], x.shape[1], 1, x.shape[2]});
    if (failed(input))
      return failure();
    in.insert(in.begin(), 1);
    out.insert(out.begin(), 1);
    k2.insert(k2.begin(), 1);
    s2.insert(s2.begin(), 1);
    d2.insert(d2.begin(), 1);
    pad = {0, pad[0], 0, pad[1]};
  }
  SmallVector<int64_t, 4> shape = {x.shape[0], x.shape[1], out[0], out[1]};
  DenseI64ArrayAttr paddingAttr;
  if (pad[0] == pad[2] && pad[1] == pad[3]) {
    if (pad[0] || pad[1])
      paddingAttr = builder.getDenseI64ArrayAttr({pad[0], pad[1]});
  } else {
    paddingAttr = builder.getDenseI64ArrayAttr(pad);
  }
  DenseI64ArrayAttr kernelAttr = builder.getDenseI64ArrayAttr(k2);
  // ONNX's default stride is 1, ATen's the kernel: always spell it out.
  DenseI64ArrayAttr strideAttr = builder.getDenseI64ArrayAttr(s2);
  DenseI64ArrayAttr dilationAttr =
      llvm::all_of(d2, [](int64_t d) { return d == 1; })
          ? DenseI64ArrayAttr()
          : builder.getDenseI64ArrayAttr(d2);
  BoolAttr ceilAttr = useCeil ? builder.getBoolAttr(true) : BoolAttr();
  Operation *op;
  if (withIndices)
    op = MaxPool2dWithIndicesOp::create(
        builder, node.loc, tensorType(shape),
        RankedTensorType::get(shape, builder.getI64Type()), *input, kernelAttr,
        strideAttr, paddingAttr, dilationAttr, ceilAttr);
  else if (isMax)
    op = MaxPool2dOp::create(builder, node.loc, tensorType(shape), *input,
                             kernelAttr, strideAttr, paddingAttr, dilationAttr,
                             ceilAttr);
  else
    op = AvgPool2dOp::create(builder, node.loc, tensorType(shape), *input,
                             kernelAttr, strideAttr, paddingAttr, ceilAttr,
                             *countIncludePad ? BoolAttr()
                                              : builder.getBoolAttr(false));
  FailureOr<Value> y = verified(node, op);
  if (failed(y))
    return failure();
  if (spatial == 1) {
    shape = {x.shape[0], x.shape[1], out[1]};
    y = reshape(node, *y, shape);
    if (failed(y))
      return failure();
  }
  setOutput(node, 0, OnnxValue::runtime(*y, shape));
  if (withIndices)
    setOutput(node, 1,
              OnnxValue::runtime(op->getResult(1), shape, ElementKind::Int64));
  return success();
}

LogicalResult Importer::convertGlobalAveragePool(Node &node) {
  CHECK_ARITY(1, 1, 1);
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  if (rank == 5)
    return unsupported(node, "3-D global pooling (input " +
                                 formatShape(x.shape) +
                                 ") is not supported; only 1-D and 2-D");
  if (rank != 3 && rank != 4)
    return invalid(node, "the input " + formatShape(x.shape) +
                             " must have rank 3 or 4 ([N, C, ...])");
  FailureOr<Value> input = tensorOperand(node, 0, "X");
  if (failed(input))
    return failure();
  int64_t n = x.shape[0], c = x.shape[1];
  if (rank == 3) {
    input = reshape(node, *input, {n, c, 1, x.shape[2]});
    if (failed(input))
      return failure();
  }
  FailureOr<Value> y =
      verified(node, AdaptiveAvgPool2dOp::create(
                         builder, node.loc, tensorType({n, c, 1, 1}), *input,
                         builder.getDenseI64ArrayAttr({1, 1})));
  if (failed(y))
    return failure();
  SmallVector<int64_t, 4> shape = {n, c, 1, 1};
  if (rank == 3) {
    shape = {n, c, 1};
    y = reshape(node, *y, shape);
    if (failed(y))
      return failure();
  }
  setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

LogicalResult Importer::convertFlatten(Node &node) {
  CHECK_ARITY(1, 1, 1);
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  FailureOr<int64_t> axis = intAttr(node, "axis", 1);
  if (failed(axis))
    return failure();
  if (*axis < -rank || *axis > rank)
    return invalid(node, "axis " + Twine(*axis) +
                             " is out of range for the "
                             "input " +
                             formatShape(x.shape));
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  ArrayRef<int64_t> dims = x.shape;
  SmallVector<int64_t, 4> shape = {product(dims.take_front(a)),
                                   product(dims.drop_front(a))};
  if (x.isConstant()) {
    setOutput(node, 0, OnnxValue::ofConstant(x.constant->withShape(shape)));
    return success();
  }
  FailureOr<Value> input = tensorOperand(node, 0, "input");
  if (failed(input))
    return failure();
  FailureOr<Value> y;
  if (a == 1 && rank >= 2)
    // torch.flatten(x, 1), as the zoo writes it.
    y = verified(node, FlattenOp::create(builder, node.loc, tensorType(shape),
                                         *input, builder.getI64IntegerAttr(1),
                                         IntegerAttr()));
  else
    y = reshape(node, *input, shape);
  if (failed(y))
    return failure();
  setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

LogicalResult Importer::convertReshape(Node &node) {
  SmallVector<int64_t> target;
  FailureOr<int64_t> allowZero = intAttr(node, "allowzero", 0);
  if (failed(allowZero))
    return failure();
  if (opset < 5) {
    CHECK_ARITY(1, 1, 1);
    FailureOr<SmallVector<int64_t>> shape = intsAttr(node, "shape", {});
    if (failed(shape))
      return failure();
    target = *shape;
  } else {
    CHECK_ARITY(2, 2, 1);
    if (attribute(node, "shape"))
      return invalid(node, "attribute 'shape' exists only up to opset 4; "
                           "the shape is input #1");
    FailureOr<HostTensor> shape = constantOperand(node, 1, "shape");
    if (failed(shape))
      return failure();
    if (shape->kind != ElementKind::Int64 || shape->shape.size() != 1)
      return invalid(node, "the shape input " + quote(node.inputName(1)) +
                               " must be a 1-D int64 tensor, got " +
                               elementKindName(int32_t(shape->kind)) + " " +
                               formatShape(shape->shape));
    FailureOr<SmallVector<int64_t>> dims = intValues(node, *shape, "shape");
    if (failed(dims))
      return failure();
    target = *dims;
  }
  OnnxValue &x = *node.inputs[0];
  SmallVector<int64_t, 4> shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, dim] : llvm::enumerate(target)) {
    if (dim == 0 && *allowZero == 0) {
      if (i >= x.shape.size())
        return invalid(node, "shape " + formatShape(target) +
                                 " copies dimension " + Twine(i) +
                                 " (a 0), but the input " +
                                 formatShape(x.shape) + " has rank " +
                                 Twine(x.shape.size()));
      dim = x.shape[i];
    } else if (dim == -1) {
      if (inferred >= 0)
        return invalid(node, "shape " + formatShape(target) +
                                 " has more than one -1");
      inferred = i;
      shape.push_back(1);
      continue;
    } else if (dim < 0) {
      return invalid(node, "shape " + formatShape(target) +
                               " has a negative dimension other than -1");
    } else if (dim == 0) {
      return unsupported(node, "shape " + formatShape(target) +
                                   " with allowzero = 1 makes an empty "
                                   "tensor; empty tensors are not supported");
    }
    shape.push_back(dim);
    if (known > kMaxElements / dim)
      return invalid(node, "shape " + formatShape(target) +
                               " has more than 2^40 elements");
    known *= dim;
  }
  int64_t count = product(x.shape);
  if (inferred >= 0) {
    if (known == 0 || count % known != 0)
      return invalid(node, "cannot reshape " + formatShape(x.shape) + " to " +
                               formatShape(target) +
                               ": the -1 cannot be inferred");
    shape[inferred] = count / known;
  } else if (known != count) {
    return invalid(node, "cannot reshape " + formatShape(x.shape) + " (" +
                             Twine(count) + " elements) to " +
                             formatShape(shape));
  }
  if (x.isConstant()) {
    setOutput(node, 0, OnnxValue::ofConstant(x.constant->withShape(shape)));
    return success();
  }
  FailureOr<Value> input = tensorOperand(node, 0, "data");
  if (failed(input))
    return failure();
  FailureOr<Value> y = reshape(node, *input, shape);
  if (failed(y))
    return failure();
  setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// Transposes a 2-D host tensor.
static HostTensor transposeHost(const HostTensor &tensor) {
  int64_t rows = tensor.shape[0], cols = tensor.shape[1];
  std::vector<float> in = tensor.toFloats();
  std::vector<float> out(in.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[c * rows + r] = in[r * cols + c];
  return HostTensor::fromFloats({cols, rows}, std::move(out));
}

static HostTensor scaleHost(const HostTensor &tensor, float scale) {
  std::vector<float> values = tensor.toFloats();
  for (float &v : values)
    v *= scale;
  return HostTensor::fromFloats(tensor.shape, std::move(values));
}

LogicalResult Importer::convertGemm(Node &node) {
  CHECK_ARITY(opset < 11 ? 3 : 2, 3, 1);
  FailureOr<float> alpha = floatAttr(node, "alpha", 1.0f);
  FailureOr<float> beta = floatAttr(node, "beta", 1.0f);
  FailureOr<int64_t> transA = intAttr(node, "transA", 0);
  FailureOr<int64_t> transB = intAttr(node, "transB", 0);
  FailureOr<int64_t> broadcast = intAttr(node, "broadcast", 0);
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB) ||
      failed(broadcast))
    return failure();
  OnnxValue &a = *node.inputs[0];
  OnnxValue &b = *node.inputs[1];
  if (a.shape.size() != 2 || b.shape.size() != 2)
    return invalid(node, "A " + formatShape(a.shape) + " and B " +
                             formatShape(b.shape) + " must be 2-D");
  int64_t n = *transA ? a.shape[1] : a.shape[0];
  int64_t k = *transA ? a.shape[0] : a.shape[1];
  int64_t kb = *transB ? b.shape[1] : b.shape[0];
  int64_t m = *transB ? b.shape[0] : b.shape[1];
  if (k != kb)
    return invalid(node, "A " + formatShape(a.shape) +
                             (*transA ? " (transposed)" : "") + " and B " +
                             formatShape(b.shape) +
                             (*transB ? " (transposed)" : "") +
                             " do not multiply: " + Twine(k) + " vs " +
                             Twine(kb) + " inner elements");
  bool hasC = node.hasInput(2) && *beta != 0.0f;
  SmallVector<int64_t, 4> cShape;
  if (hasC) {
    cShape = node.inputs[2]->shape;
    if (cShape.size() > 2 ||
        broadcastShapes(cShape, {n, m}) != SmallVector<int64_t, 4>{n, m})
      return invalid(node, "C " + formatShape(cShape) +
                               " does not broadcast to the result [" +
                               Twine(n) + ", " + Twine(m) + "]");
  }
  StringRef aName = node.inputName(0), bName = node.inputName(1);

  // A as [N, K], alpha folded into a constant operand where there is one.
  bool alphaDone = *alpha == 1.0f;
  Value lhs;
  if (a.isConstant() && (*transA || (!alphaDone && !b.isConstant()))) {
    HostTensor value = *a.constant;
    std::string what;
    if (*transA) {
      value = transposeHost(value);
      what = "transposed";
    }
    if (!alphaDone && !b.isConstant()) {
      value = scaleHost(value, *alpha);
      what += what.empty() ? "scaled" : ".scaled";
      alphaDone = true;
    }
    FailureOr<Value> w = derivedWeight(node, aName, what, value);
    if (failed(w))
      return failure();
    lhs = *w;
  } else {
    FailureOr<Value> value = tensorOperand(node, 0, "A");
    if (failed(value))
      return failure();
    lhs = *value;
    if (*transA) {
      FailureOr<Value> t = transpose2d(node, lhs);
      if (failed(t))
        return failure();
      lhs = *t;
    }
  }

  // The product [N, M].
  Value result;
  bool viaLinear = b.isConstant() || *transB;
  Value bias;
  if (viaLinear) {
    Value rhs;
    if (b.isConstant()) {
      // memfmt.linear wants [M, K].
      HostTensor value = *b.constant;
      std::string what;
      if (!*transB) {
        value = transposeHost(value);
        what = "transposed";
      }
      if (!alphaDone) {
        value = scaleHost(value, *alpha);
        what += what.empty() ? "scaled" : ".scaled";
        alphaDone = true;
      }
      FailureOr<Value> w = what.empty()
                               ? weight(node, bName, *b.constant)
                               : derivedWeight(node, bName, what, value);
      if (failed(w))
        return failure();
      rhs = *w;
    } else {
      FailureOr<Value> value = tensorOperand(node, 1, "B");
      if (failed(value))
        return failure();
      rhs = *value;
    }
    // A bias of M values goes into the linear op.
    SmallVector<int64_t, 4> c2 = cShape;
    while (c2.size() < 2)
      c2.insert(c2.begin(), 1);
    if (hasC && alphaDone && c2[0] == 1 && c2[1] == m) {
      OnnxValue &c = *node.inputs[2];
      FailureOr<Value> cv;
      if (c.isConstant() && *beta != 1.0f)
        cv = derivedWeight(node, node.inputName(2), "scaled",
                           scaleHost(*c.constant, *beta));
      else
        cv = tensorOperand(node, 2, "C");
      if (failed(cv))
        return failure();
      if (!c.isConstant() && *beta != 1.0f) {
        FailureOr<Value> c2 = reshape(node, *cv, {1, m});
        if (failed(c2))
          return failure();
        cv = scaleChannels(node, *c2, *beta, "beta");
        if (failed(cv))
          return failure();
      }
      cv = reshape(node, *cv, {m});
      if (failed(cv))
        return failure();
      bias = *cv;
      hasC = false;
    }
    FailureOr<Value> y =
        verified(node, LinearOp::create(builder, node.loc, tensorType({n, m}),
                                        lhs, rhs, bias));
    if (failed(y))
      return failure();
    result = *y;
  } else {
    // B at run time: A x B as a 1x1 convolution.
    FailureOr<Value> rhs = tensorOperand(node, 1, "B");
    if (failed(rhs))
      return failure();
    FailureOr<Value> l3 = reshape(node, lhs, {1, n, k});
    FailureOr<Value> r4 = reshape(node, *rhs, {1, 1, k, m});
    if (failed(l3) || failed(r4))
      return failure();
    FailureOr<Value> y = matmulAsConv(node, *l3, *r4);
    if (failed(y))
      return failure();
    FailureOr<Value> y2 = reshape(node, *y, {n, m});
    if (failed(y2))
      return failure();
    result = *y2;
  }
  if (!alphaDone) {
    FailureOr<Value> scaled = scaleChannels(node, result, *alpha, "alpha");
    if (failed(scaled))
      return failure();
    result = *scaled;
  }
  if (hasC) {
    OnnxValue &c = *node.inputs[2];
    SmallVector<int64_t, 4> c2 = cShape;
    while (c2.size() < 2)
      c2.insert(c2.begin(), 1);
    FailureOr<Value> cv;
    if (c.isConstant() && *beta != 1.0f) {
      cv = derivedWeight(node, node.inputName(2), "scaled",
                         scaleHost(*c.constant, *beta).withShape(c2));
    } else {
      cv = tensorOperand(node, 2, "C");
      if (succeeded(cv))
        cv = reshape(node, *cv, c2);
      if (succeeded(cv) && *beta != 1.0f)
        cv = scaleChannels(node, *cv, *beta, "beta");
    }
    if (failed(cv))
      return failure();
    FailureOr<Value> y =
        verified(node, AddOp::create(builder, node.loc, tensorType({n, m}),
                                     result, *cv));
    if (failed(y))
      return failure();
    result = *y;
  }
  setOutput(node, 0, OnnxValue::runtime(result, {n, m}));
  return success();
}

LogicalResult Importer::convertMatMul(Node &node) {
  CHECK_ARITY(2, 2, 1);
  OnnxValue &a = *node.inputs[0];
  OnnxValue &b = *node.inputs[1];
  if (a.shape.empty() || b.shape.empty())
    return invalid(node, "MatMul operands must have rank >= 1, got " +
                             formatShape(a.shape) + " and " +
                             formatShape(b.shape));
  // NumPy: a 1-D A is a row [1, K], a 1-D B a column [K, 1]; those dims are
  // dropped from the result.
  SmallVector<int64_t, 4> aShape = a.shape, bShape = b.shape;
  bool rowVector = aShape.size() == 1, columnVector = bShape.size() == 1;
  if (rowVector)
    aShape.insert(aShape.begin(), 1);
  if (columnVector)
    bShape.push_back(1);
  int64_t n = aShape[aShape.size() - 2], k = aShape.back();
  int64_t kb = bShape[bShape.size() - 2], m = bShape.back();
  if (k != kb)
    return invalid(node, "A " + formatShape(a.shape) + " and B " +
                             formatShape(b.shape) + " do not multiply: " +
                             Twine(k) + " vs " + Twine(kb) + " inner elements");
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(aShape).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bShape).drop_back(2);
  std::optional<SmallVector<int64_t, 4>> batch =
      broadcastShapes(aBatch, bBatch);
  if (!batch)
    return invalid(node, "the batch dimensions of A " + formatShape(a.shape) +
                             " and B " + formatShape(b.shape) +
                             " do not broadcast");
  SmallVector<int64_t, 4> resultShape(*batch);
  if (!rowVector)
    resultShape.push_back(n);
  if (!columnVector)
    resultShape.push_back(m);
  SmallVector<int64_t, 4> fullShape(*batch);
  fullShape.append({n, m});

  FailureOr<Value> y;
  if (bBatch.empty() && b.isConstant()) {
    // x @ W with a constant W [K, M]: memfmt.linear on W^T [M, K].
    HostTensor w = b.constant->withShape({k, m});
    FailureOr<Value> wt =
        derivedWeight(node, node.inputName(1), "transposed", transposeHost(w));
    FailureOr<Value> x = tensorOperand(node, 0, "A");
    if (failed(wt) || failed(x))
      return failure();
    int64_t rows = product(aBatch) * n;
    FailureOr<Value> x2 = reshape(node, *x, {rows, k});
    if (failed(x2))
      return failure();
    y = verified(node,
                 LinearOp::create(builder, node.loc, tensorType({rows, m}), *x2,
                                  *wt, Value()));
  } else {
    FailureOr<Value> x = tensorOperand(node, 0, "A");
    FailureOr<Value> w = tensorOperand(node, 1, "B");
    if (failed(x) || failed(w))
      return failure();
    int64_t aCount = product(aBatch), bCount = product(bBatch);
    if (bCount == 1) {
      // [..., N, K] x [K, M]: the rows of all batches at once.
      FailureOr<Value> l = reshape(node, *x, {1, aCount * n, k});
      FailureOr<Value> r = reshape(node, *w, {1, 1, k, m});
      if (failed(l) || failed(r))
        return failure();
      y = matmulAsConv(node, *l, *r);
    } else if (aCount == 1) {
      // [N, K] x [..., K, M]: the batches of B are the convolution's batch.
      FailureOr<Value> l = reshape(node, *x, {1, n, k});
      FailureOr<Value> r = reshape(node, *w, {bCount, 1, k, m});
      if (failed(l) || failed(r))
        return failure();
      y = matmulAsConv(node, *l, *r);
    } else {
      // Matching batches: one group per batch.
      SmallVector<int64_t, 4> aFull(batch->size() - aBatch.size(), 1);
      aFull.append(aBatch.begin(), aBatch.end());
      SmallVector<int64_t, 4> bFull(batch->size() - bBatch.size(), 1);
      bFull.append(bBatch.begin(), bBatch.end());
      if (aFull != bFull)
        return unsupported(node, "batched MatMul with broadcast batch "
                                 "dimensions (A " +
                                     formatShape(a.shape) + ", B " +
                                     formatShape(b.shape) +
                                     ") is not supported");
      FailureOr<Value> l = reshape(node, *x, {aCount, n, k});
      FailureOr<Value> r = reshape(node, *w, {1, aCount, k, m});
      if (failed(l) || failed(r))
        return failure();
      y = matmulAsConv(node, *l, *r);
    }
  }
  if (failed(y))
    return failure();
  FailureOr<Value> result = reshape(node, *y, resultShape);
  if (failed(result))
    return failure();
  setOutput(node, 0, OnnxValue::runtime(*result, resultShape));
  return success();
}

LogicalResult Importer::convertIdentity(Node &node) {
  CHECK_ARITY(1, 1, 1);
  setOutput(node, 0, *node.inputs[0]);
  return success();
}

LogicalResult Importer::convertDropout(Node &node) {
  CHECK_ARITY(1, 3, 2);
  if (node.hasOutput(1))
    return unsupported(node, "the mask output is not supported (memfmt "
                             "compiles inference, where it is all true)");
  FailureOr<int64_t> isTest = intAttr(node, "is_test", opset < 7 ? 0 : 1);
  FailureOr<float> ratio = floatAttr(node, "ratio", 0.5f);
  if (failed(isTest) || failed(ratio))
    return failure();
  if (*isTest == 0)
    return unsupported(node, "is_test = 0 (training) is not supported; "
                             "memfmt compiles inference");
  if (node.hasInput(2)) {
    OnnxValue &mode = *node.inputs[2];
    if (!mode.isConstant())
      return unsupported(node, "training_mode " + quote(node.inputName(2)) +
                                   " is given at run time; memfmt compiles "
                                   "inference (make it a constant false)");
    std::vector<int64_t> flags = mode.constant->toInts();
    if (llvm::any_of(flags, [](int64_t f) { return f != 0; }))
      return unsupported(node, "training_mode = true is not supported; "
                               "memfmt compiles inference");
  }
  // Inference: the identity (the ratio is not used).
  setOutput(node, 0, *node.inputs[0]);
  return success();
}

LogicalResult Importer::convertConstant(Node &node) {
  CHECK_ARITY(0, 0, 1);
  if (node.attributes.size() != 1)
    return invalid(node, "expects exactly one value attribute, got " +
                             Twine(node.attributes.size()));
  const onnx::AttributeProto &attr = *node.attributes.begin()->second;
  StringRef name = attr.name();
  std::optional<HostTensor> value;
  if (name == "value") {
    if (attributeType(attr) != onnx::AttributeProto_AttributeType_TENSOR)
      return invalid(node, "attribute 'value' must be a tensor");
    std::string error;
    value = decodeTensor(attr.t(), baseDirectory, error);
    if (!value)
      return invalid(node, "value: " + error);
  } else if (name == "value_float") {
    FailureOr<float> v = floatAttr(node, name, 0.0f);
    if (failed(v))
      return failure();
    value = HostTensor::fromFloats({}, {*v});
  } else if (name == "value_floats") {
    if (attributeType(attr) != onnx::AttributeProto_AttributeType_FLOATS)
      return invalid(node, "attribute 'value_floats' must be a list of "
                           "floats");
    std::vector<float> v(attr.floats().begin(), attr.floats().end());
    value = HostTensor::fromFloats({int64_t(v.size())}, std::move(v));
  } else if (name == "value_int") {
    FailureOr<int64_t> v = intAttr(node, name, 0);
    if (failed(v))
      return failure();
    value = HostTensor::fromInts({}, {*v});
  } else if (name == "value_ints") {
    FailureOr<SmallVector<int64_t>> v = intsAttr(node, name, {});
    if (failed(v))
      return failure();
    value = HostTensor::fromInts({int64_t(v->size())}, *v);
  } else {
    return unsupported(node, "attribute '" + name + "' is not supported");
  }
  setOutput(node, 0, OnnxValue::ofConstant(std::move(*value)));
  return success();
}

LogicalResult Importer::convertConcat(Node &node) {
  if (node.numInputs() < 1 ||
      llvm::any_of(node.inputs, [](OnnxValue *v) { return !v; }))
    return invalid(node, "expects one or more inputs, none of them empty");
  if (!node.hasOutput(0) || node.numOutputs() != 1)
    return invalid(node, "expects one output");
  FailureOr<int64_t> axis = intAttr(node, "axis", 1);
  if (failed(axis))
    return failure();
  if (opset >= 4 && !attribute(node, "axis"))
    return invalid(node, "attribute 'axis' is required");
  ArrayRef<int64_t> first = node.inputs[0]->shape;
  int64_t rank = first.size();
  if (rank == 0)
    return invalid(node, "cannot concatenate 0-D tensors");
  if (*axis < -rank || *axis >= rank)
    return invalid(node, "axis " + Twine(*axis) + " is out of range for rank " +
                             Twine(rank));
  int64_t dim = *axis < 0 ? *axis + rank : *axis;
  SmallVector<int64_t, 4> shape(first);
  shape[dim] = 0;
  SmallVector<Value> operands;
  for (unsigned i = 0; i < node.numInputs(); ++i) {
    ArrayRef<int64_t> s = node.inputs[i]->shape;
    bool matches = static_cast<int64_t>(s.size()) == rank;
    for (int64_t d = 0; matches && d < rank; ++d)
      matches = d == dim || s[d] == first[d];
    if (!matches)
      return invalid(node, "input " + quote(node.inputName(i)) + " " +
                               formatShape(s) + " differs from " +
                               formatShape(first) + " outside axis " +
                               Twine(dim));
    shape[dim] += s[dim];
    FailureOr<Value> v = tensorOperand(node, i, "input");
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  FailureOr<Value> y;
  if (operands.size() == 1)
    y = operands[0];
  else
    y = verified(node,
                 CatOp::create(builder, node.loc, tensorType(shape), operands,
                               dim == 0 ? IntegerAttr()
                                        : builder.getI64IntegerAttr(dim)));
  if (failed(y))
    return failure();
  setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

LogicalResult Importer::convertSplit(Node &node) {
  if (node.numInputs() < 1 || !node.hasInput(0) || node.numInputs() > 2)
    return invalid(node,
                   "expects 1 or 2 inputs, got " + Twine(node.numInputs()));
  unsigned pieces = node.numOutputs();
  if (pieces < 1)
    return invalid(node, "has no output");
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  FailureOr<int64_t> axis = intAttr(node, "axis", 0);
  if (failed(axis))
    return failure();
  if (*axis < -rank || *axis >= rank)
    return invalid(node, "axis " + Twine(*axis) +
                             " is out of range for the "
                             "input " +
                             formatShape(x.shape));
  int64_t dim = *axis < 0 ? *axis + rank : *axis;
  int64_t size = x.shape[dim];
  SmallVector<int64_t> sizes;
  if (opset >= 13 && attribute(node, "split"))
    return invalid(node, "attribute 'split' exists only up to opset 12; the "
                         "sizes are input #1");
  if (node.hasInput(1)) {
    FailureOr<HostTensor> split = constantOperand(node, 1, "split");
    if (failed(split))
      return failure();
    if (split->kind != ElementKind::Int64 || split->shape.size() != 1)
      return invalid(node, "the split input must be a 1-D int64 tensor");
    FailureOr<SmallVector<int64_t>> v = intValues(node, *split, "split");
    if (failed(v))
      return failure();
    sizes = *v;
  } else if (attribute(node, "split")) {
    FailureOr<SmallVector<int64_t>> v = intsAttr(node, "split", {});
    if (failed(v))
      return failure();
    sizes = *v;
  } else {
    if (size % pieces != 0)
      return invalid(node, "cannot split dimension " + Twine(dim) + " of " +
                               formatShape(x.shape) + " into " + Twine(pieces) +
                               " equal parts");
    sizes.assign(pieces, size / pieces);
  }
  if (sizes.size() != pieces)
    return invalid(node, "split " + formatShape(sizes) + " has " +
                             Twine(sizes.size()) + " sizes for " +
                             Twine(pieces) + " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return invalid(node,
                     "split " + formatShape(sizes) + " has a negative size");
    total += s;
  }
  if (total != size)
    return invalid(node, "split " + formatShape(sizes) + " adds up to " +
                             Twine(total) + ", but dimension " + Twine(dim) +
                             " of " + formatShape(x.shape) + " is " +
                             Twine(size));
  if (llvm::is_contained(sizes, 0))
    return unsupported(node, "split " + formatShape(sizes) +
                                 " makes an empty tensor; empty tensors are "
                                 "not supported");
  auto pieceShape = [&](int64_t s) {
    SmallVector<int64_t, 4> shape(x.shape);
    shape[dim] = s;
    return shape;
  };
  if (pieces == 1) {
    setOutput(node, 0, x);
    return success();
  }
  FailureOr<Value> input = tensorOperand(node, 0, "input");
  if (failed(input))
    return failure();
  // Chunk into pieces of gcd(sizes), then concatenate neighbours.
  int64_t unit = 0;
  for (int64_t s : sizes)
    unit = std::gcd(unit, s);
  int64_t chunks = size / unit;
  SmallVector<Type> chunkTypes(chunks, tensorType(pieceShape(unit)));
  auto chunk = ChunkOp::create(
      builder, node.loc, chunkTypes, *input, builder.getI64IntegerAttr(chunks),
      dim == 0 ? IntegerAttr() : builder.getI64IntegerAttr(dim));
  if (failed(verified(node, chunk)))
    return failure();
  int64_t next = 0;
  for (auto [i, s] : llvm::enumerate(sizes)) {
    int64_t count = s / unit;
    ValueRange parts = chunk.getResults().slice(next, count);
    next += count;
    FailureOr<Value> piece;
    if (count == 1)
      piece = parts[0];
    else
      piece = verified(
          node, CatOp::create(
                    builder, node.loc, tensorType(pieceShape(s)), parts,
                    dim == 0 ? IntegerAttr() : builder.getI64IntegerAttr(dim)));
    if (failed(piece))
      return failure();
    setOutput(node, i, OnnxValue::runtime(*piece, pieceShape(s)));
  }
  return success();
}

/// Pad with zeros (mode "constant", value 0) on the spatial dims of a 4-D
/// tensor: a depthwise 1x1 convolution with weight 1 and that padding (x * 1
/// + 0, exact). No padding is the identity.
LogicalResult Importer::convertPad(Node &node) {
  SmallVector<int64_t> pads;
  float value = 0.0f;
  FailureOr<std::string> mode = stringAttr(node, "mode", "constant");
  if (failed(mode))
    return failure();
  if (opset < 11) {
    CHECK_ARITY(1, 1, 1);
    FailureOr<SmallVector<int64_t>> p = intsAttr(node, "pads", {});
    FailureOr<float> v = floatAttr(node, "value", 0.0f);
    if (failed(p) || failed(v))
      return failure();
    pads = *p;
    value = *v;
  } else {
    CHECK_ARITY(2, 3, 1);
    if (attribute(node, "pads") || attribute(node, "value"))
      return invalid(node, "attributes 'pads' and 'value' exist only up to "
                           "opset 10; they are inputs #1 and #2");
    FailureOr<HostTensor> p = constantOperand(node, 1, "pads");
    if (failed(p))
      return failure();
    if (p->kind != ElementKind::Int64 || p->shape.size() != 1)
      return invalid(node, "the pads input must be a 1-D int64 tensor");
    FailureOr<SmallVector<int64_t>> v = intValues(node, *p, "pads");
    if (failed(v))
      return failure();
    pads = *v;
    if (node.hasInput(2)) {
      FailureOr<HostTensor> c = constantOperand(node, 2, "constant_value");
      if (failed(c))
        return failure();
      if (c->numElements() != 1 || !isFloatKind(c->kind))
        return invalid(node, "constant_value must be one floating-point "
                             "value");
      value = c->toFloats()[0];
    }
  }
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return invalid(node, "pads " + formatShape(pads) + " must have " +
                             Twine(2 * rank) + " values for the input " +
                             formatShape(x.shape));
  if (*mode != "constant" || value != 0.0f)
    return unsupported(node, "only zero padding (mode 'constant', value 0) "
                             "is supported, got mode '" +
                                 *mode + "', value " + std::to_string(value));
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; })) {
    setOutput(node, 0, x);
    return success();
  }
  if (rank != 4 || pads[0] || pads[1] || pads[4] || pads[5] ||
      llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return unsupported(node, "only non-negative padding of the spatial "
                             "dimensions of a 4-D tensor is supported, got "
                             "pads " +
                                 formatShape(pads) + " for " +
                                 formatShape(x.shape));
  FailureOr<Value> input = tensorOperand(node, 0, "data");
  if (failed(input))
    return failure();
  int64_t channels = x.shape[1];
  std::string base =
      node.proto.name().empty() ? node.proto.output(0) : node.proto.name();
  FailureOr<Value> ones =
      derivedWeight(node, base, "ones",
                    HostTensor::fromFloats({channels, 1, 1, 1},
                                           std::vector<float>(channels, 1.0f)));
  if (failed(ones))
    return failure();
  SmallVector<int64_t, 4> shape = {x.shape[0], channels,
                                   x.shape[2] + pads[2] + pads[6],
                                   x.shape[3] + pads[3] + pads[7]};
  FailureOr<Value> y = verified(
      node,
      Conv2dOp::create(
          builder, node.loc, tensorType(shape), *input, *ones, Value(),
          DenseI64ArrayAttr(),
          builder.getDenseI64ArrayAttr({pads[2], pads[3], pads[6], pads[7]}),
          DenseI64ArrayAttr(),
          channels == 1 ? IntegerAttr() : builder.getI64IntegerAttr(channels)));
  if (failed(y))
    return failure();
  setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// The mean over the spatial dims of a 4-D tensor: adaptive average pooling
/// to 1x1 (and a reshape without keepdims).
LogicalResult Importer::convertReduceMean(Node &node) {
  CHECK_ARITY(1, 1, 1);
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  FailureOr<SmallVector<int64_t>> axes = intsAttr(node, "axes", {});
  FailureOr<int64_t> keepDims = intAttr(node, "keepdims", 1);
  if (failed(axes) || failed(keepDims))
    return failure();
  SmallVector<int64_t> normalized;
  for (int64_t axis : *axes) {
    if (axis < -rank || axis >= rank)
      return invalid(node, "axis " + Twine(axis) +
                               " is out of range for the "
                               "input " +
                               formatShape(x.shape));
    normalized.push_back(axis < 0 ? axis + rank : axis);
  }
  llvm::sort(normalized);
  if (rank != 4 || normalized != SmallVector<int64_t>{2, 3})
    return unsupported(node, "only the mean over the spatial axes (2, 3) of "
                             "a 4-D tensor is supported, got axes " +
                                 formatShape(*axes) + " for " +
                                 formatShape(x.shape));
  FailureOr<Value> input = tensorOperand(node, 0, "data");
  if (failed(input))
    return failure();
  SmallVector<int64_t, 4> shape = {x.shape[0], x.shape[1], 1, 1};
  FailureOr<Value> y = verified(
      node,
      AdaptiveAvgPool2dOp::create(builder, node.loc, tensorType(shape), *input,
                                  builder.getDenseI64ArrayAttr({1, 1})));
  if (failed(y))
    return failure();
  if (!*keepDims) {
    shape = {x.shape[0], x.shape[1]};
    y = reshape(node, *y, shape);
    if (failed(y))
      return failure();
  }
  setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

#undef CHECK_ARITY

//===----------------------------------------------------------------------===//
// Phase 4: results and the report
//===----------------------------------------------------------------------===//

void Importer::finish() {
  // Temporaries that a reshape looked through and nothing else uses.
  for (bool changed = true; changed;) {
    changed = false;
    SmallVector<Operation *> unused;
    for (Operation *op : temporaryReshapes)
      if (op->use_empty())
        unused.push_back(op);
    for (Operation *op : unused) {
      temporaryReshapes.erase(op);
      op->erase();
      changed = true;
    }
  }
  SmallVector<Value> results;
  bool ok = true;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    std::string where = "graph output " + quote(output.name());
    OnnxValue &value = values[output.name()];
    if (value.isFailed()) {
      ok = false; // The producing node's problem is recorded.
      continue;
    }
    Value result;
    if (value.isConstant()) {
      Node node{onnx::NodeProto::default_instance(),
                graph.node_size(),
                where,
                NameLoc::get(builder.getStringAttr(output.name())),
                {},
                {}};
      FailureOr<Value> w = weight(node, output.name(), *value.constant);
      if (failed(w)) {
        ok = false;
        continue;
      }
      result = *w;
    } else if (!value.value) {
      ok = false; // An unsupported graph input, already recorded.
      continue;
    } else {
      result = value.value;
    }
    // The declared type, where it is static, must be what was computed.
    if (output.type().has_tensor_type() &&
        output.type().tensor_type().has_shape()) {
      const auto &dims = output.type().tensor_type().shape().dim();
      bool mismatch = dims.size() != static_cast<int>(value.shape.size());
      for (int d = 0; !mismatch && d < dims.size(); ++d)
        mismatch = dims[d].has_dim_value() && dims[d].dim_value() > 0 &&
                   dims[d].dim_value() != value.shape[d];
      if (mismatch) {
        SmallVector<int64_t> declared;
        for (const auto &dim : dims)
          declared.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
        problem(ProblemKind::Invalid, where,
                "is declared " + formatShape(declared) +
                    " (-1: unknown), but the graph computes " +
                    formatShape(value.shape),
                graph.node_size());
        ok = false;
        continue;
      }
    }
    results.push_back(result);
  }
  if (!ok)
    return;
  func::ReturnOp::create(builder,
                         graph.output_size()
                             ? Location(NameLoc::get(builder.getStringAttr(
                                   graph.output(0).name())))
                             : function.getLoc(),
                         results);
  function.setFunctionType(builder.getFunctionType(
      function.getArgumentTypes(), ValueRange(results).getTypes()));
}

LogicalResult Importer::report() {
  if (problems.empty())
    return success();
  llvm::sort(problems, [](const Problem &a, const Problem &b) {
    return std::tie(a.position, a.sequence) < std::tie(b.position, b.sequence);
  });
  bool written = false;
  auto write = [&](ProblemKind kind, StringRef what) {
    size_t count = llvm::count_if(
        problems, [&](const Problem &p) { return p.kind == kind; });
    if (!count)
      return;
    if (written)
      errors << "\n";
    written = true;
    errors << displayName << ": " << count << " " << what << ":";
    for (const Problem &p : problems)
      if (p.kind == kind)
        errors << "\n  " << p.where << ": " << p.message;
  };
  auto plural = [&](ProblemKind kind, StringRef one, StringRef many) {
    return llvm::count_if(problems,
                          [&](const Problem &p) { return p.kind == kind; }) == 1
               ? one
               : many;
  };
  write(ProblemKind::Unsupported,
        plural(ProblemKind::Unsupported, "unsupported node or input",
               "unsupported nodes or inputs"));
  write(ProblemKind::Invalid,
        plural(ProblemKind::Invalid, "invalid node or value",
               "invalid nodes or values"));
  return failure();
}

FailureOr<ONNXModel> Importer::run() {
  if (failed(checkModel()) || failed(checkGraph()) ||
      failed(decodeInitializers()))
    return failure();
  chooseElementType();
  createFunction();
  for (int64_t index : order)
    convertNode(graph.node(index), index);
  finish();
  if (failed(report()))
    return failure();
  // Every op was verified as it was built; the whole module must verify too.
  std::string message;
  {
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      llvm::raw_string_ostream(message) << diag << "; ";
      return success();
    });
    if (failed(mlir::verify(*module))) {
      errors << displayName << ": internal error: the imported module does "
             << "not verify: " << message;
      return failure();
    }
  }
  ONNXModel result;
  result.module = std::move(module);
  result.parameters = std::move(parameters);
  result.opset = opset;
  return result;
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

FailureOr<ONNXModel>
mlir::memfmt::importONNXBuffer(MLIRContext *context, StringRef bytes,
                               StringRef displayName, StringRef baseDirectory,
                               const ONNXImportOptions &options,
                               llvm::raw_ostream &errors) {
  context->getOrLoadDialect<MemFmtDialect>();
  context->getOrLoadDialect<func::FuncDialect>();
  if (options.elementType && !options.elementType.isF32() &&
      !options.elementType.isF16() && !options.elementType.isBF16()) {
    errors << displayName << ": the element type must be f32, f16 or bf16";
    return failure();
  }
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    errors << displayName << ": the file has " << bytes.size()
           << " bytes; ONNX files are at most 2 GiB (larger models keep their "
              "weights in external data files)";
    return failure();
  }
  onnx::ModelProto model;
  if (bytes.empty() ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    errors << displayName
           << ": not a valid ONNX model: the protobuf data does not parse"
           << (bytes.empty() ? " (the file is empty)"
                             : " (the file is truncated or not an ONNX "
                               "file)");
    return failure();
  }
  Importer importer(context, model, displayName, baseDirectory, options,
                    errors);
  return importer.run();
}

FailureOr<ONNXModel>
mlir::memfmt::importONNXFile(MLIRContext *context, StringRef path,
                             const ONNXImportOptions &options,
                             llvm::raw_ostream &errors) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file) {
    errors << "cannot open '" << path << "': " << file.getError().message();
    return failure();
  }
  StringRef directory = llvm::sys::path::parent_path(path);
  return importONNXBuffer(context, (*file)->getBuffer(), path,
                          directory.empty() ? "." : directory, options, errors);
}
