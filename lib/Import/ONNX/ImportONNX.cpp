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
//     (or one outside the opsets ONNXOpRegistry.h knows) is rejected.
//  2. Check the graph. Names must be defined once (graph inputs,
//     initializers, node outputs), every name a node or the graph output
//     reads must be defined, and the nodes are sorted topologically; a
//     cycle is reported with the nodes on it. Initializers are decoded
//     (ONNXTensor.h), which checks their sizes. Every problem of this phase
//     is listed, and the import stops.
//  3. Convert. Nodes are converted in topological order into one function
//     body; a chain that stands for one op (torch's layer norm and exact
//     GELU below the opsets that have them, Decompositions.h) is converted
//     as that op. Each ONNX value is either a runtime value (an MLIR SSA value), a
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
// Each node is converted by the converter its operator registered in
// ONNXOpRegistry.h (one file per operator family, which also states the
// family's mapping notes); the helpers they share are GraphImporter.h's.
// Operators, their attributes and the opset range all come from that
// registry, as does docs/onnx.md's operator table.
//
//===----------------------------------------------------------------------===//

#include "Decompositions.h"
#include "GraphImporter.h"
#include "ONNXOpRegistry.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <deque>
#include <tuple>

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

//===----------------------------------------------------------------------===//
// Labels
//===----------------------------------------------------------------------===//

/// "Conv 'conv1'", or "Conv #3 (output 'y')" for a node without a name.
std::string GraphImporter::nodeLabel(const onnx::NodeProto &proto,
                                     int64_t index) {
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
Location GraphImporter::nodeLocation(const onnx::NodeProto &proto) {
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

LogicalResult GraphImporter::checkModel() {
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
  constexpr int64_t minOpset = ONNXOpRegistry::kMinOpset;
  constexpr int64_t maxOpset = ONNXOpRegistry::kMaxOpset;
  if (opset < minOpset || opset > maxOpset) {
    errors << displayName << ": ai.onnx opset " << opset
           << " is not supported; the importer knows opsets " << minOpset
           << " to " << maxOpset;
    return failure();
  }
  return success();
}

LogicalResult GraphImporter::checkGraph() {
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

LogicalResult GraphImporter::decodeInitializers() {
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
void GraphImporter::chooseElementType() {
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
/// The static shape of the graph input `name` whose declared shape is
/// `declared`, its dynamic dimensions pinned by the options; or why there
/// is none.
std::string GraphImporter::inputShape(StringRef name,
                                      const onnx::TensorShapeProto &declared,
                                      SmallVectorImpl<int64_t> &shape) {
  auto pinned = options.inputShapes.find(name);
  bool hasPinned = pinned != options.inputShapes.end();
  int64_t rank = declared.dim_size();
  if (hasPinned && static_cast<int64_t>(pinned->second.size()) != rank)
    return "--input-shape gives it " + std::to_string(pinned->second.size()) +
           " dimensions " + formatShape(pinned->second) + ", but it has " +
           std::to_string(rank);
  for (auto [d, dim] : llvm::enumerate(declared.dim())) {
    std::string which = "dimension " + std::to_string(d);
    if (dim.has_dim_value()) {
      int64_t size = dim.dim_value();
      if (size < 1)
        return which + " is " + std::to_string(size) +
               "; empty tensors are not supported";
      if (hasPinned && pinned->second[d] != size)
        return which + " is " + std::to_string(size) +
               " in the model, but --input-shape gives " +
               std::to_string(pinned->second[d]);
      if (d == 0 && options.batch && !hasPinned && *options.batch != size)
        return "its batch (dimension 0) is fixed at " + std::to_string(size) +
               " by the model, but --batch gives " +
               std::to_string(*options.batch) +
               " (--batch pins a dynamic batch: export with a dynamic first "
               "dimension)";
      shape.push_back(size);
      continue;
    }
    if (hasPinned) {
      shape.push_back(pinned->second[d]);
      continue;
    }
    if (d == 0 && options.batch) {
      shape.push_back(*options.batch);
      continue;
    }
    return which + " is dynamic" +
           (dim.has_dim_param() ? " ('" + dim.dim_param() + "')"
                                : std::string()) +
           "; give its size at compile time with " +
           (d == 0 ? "--batch N or " : "") + "--input-shape " + name.str() +
           "=DIMS";
  }
  return "";
}

void GraphImporter::createFunction() {
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
    std::string dynamic = inputShape(inputName, tensor.shape(), shape);
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
  for (const auto &entry : options.inputShapes)
    if (!values.count(entry.getKey()) || initializers.count(entry.getKey()))
      problem(ProblemKind::Invalid, "--input-shape " + entry.getKey().str(),
              "the model has no graph input called " +
                  quote(entry.getKey()),
              -1);
  function.setFunctionType(builder.getFunctionType(argumentTypes, {}));
  builder.setInsertionPointToEnd(body);
  for (auto &entry : initializers) {
    OnnxValue value = OnnxValue::ofConstant(entry.getValue());
    value.modelState = true;
    values[entry.getKey()] = std::move(value);
  }
}

//===----------------------------------------------------------------------===//
// Phase 3: converting nodes
//===----------------------------------------------------------------------===//

/// Converts one node through the registry: an operator the registry does
/// not know, an attribute its definition does not list, or an input that
/// failed earlier fails the node's outputs.
void GraphImporter::convertNode(const onnx::NodeProto &proto, int64_t index,
                                bool recognized) {
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
  const OpDefinition *op = ONNXOpRegistry::get().lookup(proto.op_type());
  if (!op) {
    problem(ProblemKind::Unsupported, node.label,
            "operator " + printable(proto.op_type()) + " is not supported",
            index);
    return failOutputs();
  }
  // A recognised chain is the op of its newest version, whatever the
  // model's opset (Decompositions.h).
  ConvertFn convert =
      recognized ? op->converters.back().convert : op->converterFor(opset);
  if (!convert) {
    problem(ProblemKind::Unsupported, node.label,
            "operator " + printable(proto.op_type()) +
                " is not supported at ai.onnx opset " + Twine(opset) +
                " (memfmt converts it from opset " +
                Twine(op->converters.front().since) + ")",
            index);
    return failOutputs();
  }
  bool ok = true;
  for (const onnx::AttributeProto &attr : proto.attribute()) {
    if (!llvm::is_contained(op->attributes, StringRef(attr.name()))) {
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

  if (failed(convert(*this, node)))
    failOutputs();
}

//===----------------------------------------------------------------------===//
// Phase 4: results and the report
//===----------------------------------------------------------------------===//

void GraphImporter::finish() {
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

LogicalResult GraphImporter::report() {
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

FailureOr<ONNXModel> GraphImporter::run() {
  if (failed(checkModel()) || failed(checkGraph()) ||
      failed(decodeInitializers()))
    return failure();
  chooseElementType();
  createFunction();
  // Chains that stand for one op are converted as that op, in place of
  // their last node; their other nodes are skipped.
  std::vector<RecognizedOp> recognized =
      recognizeDecompositions(graph, order, initializers, baseDirectory);
  llvm::DenseMap<int64_t, const RecognizedOp *> byLast;
  llvm::DenseSet<int64_t> absorbed;
  for (const RecognizedOp &op : recognized) {
    byLast[op.last] = &op;
    absorbed.insert(op.members.begin(), op.members.end());
  }
  for (int64_t index : order) {
    if (const RecognizedOp *op = byLast.lookup(index))
      convertNode(op->node, index, /*recognized=*/true);
    else if (!absorbed.contains(index))
      convertNode(graph.node(index), index);
  }
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
  context->getOrLoadDialect<arith::ArithDialect>();
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
  GraphImporter importer(context, model, displayName, baseDirectory, options,
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

LogicalResult mlir::memfmt::addInputShape(ONNXImportOptions &options,
                                          StringRef spec,
                                          llvm::raw_ostream &errors) {
  auto [name, dims] = spec.rsplit('=');
  if (name.empty() || dims.empty() || !spec.contains('=')) {
    errors << "--input-shape " << spec << ": expected NAME=DIMS (x=1x3x224x224)";
    return failure();
  }
  SmallVector<StringRef> parts;
  dims.split(parts, dims.contains(',') ? ',' : 'x');
  SmallVector<int64_t, 4> shape;
  for (StringRef part : parts) {
    int64_t size;
    if (part.trim().getAsInteger(10, size) || size < 1) {
      errors << "--input-shape " << spec << ": '" << part
             << "' is not a positive size";
      return failure();
    }
    shape.push_back(size);
  }
  if (!options.inputShapes.try_emplace(name, shape).second) {
    errors << "--input-shape " << spec << ": input '" << name
           << "' is given twice";
    return failure();
  }
  return success();
}
