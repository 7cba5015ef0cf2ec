//===- Decompositions.cpp - Ops exporters wrote as several nodes ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Finds the layer norm and exact-GELU chains of Decompositions.h on the
// ONNX graph, before any node is converted: the chains are matched on
// names, op types and constant values (initializers and Constant nodes,
// looked up through Identity), never on shapes, which are known only during
// conversion. The op each chain becomes checks the shapes when it is
// converted, as any node's converter does.
//
//===----------------------------------------------------------------------===//

#include "Decompositions.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <optional>

using namespace mlir::memfmt::onnx_import;
using llvm::StringRef;

namespace {

/// The graph's def-use structure and constants, by value name.
class GraphIndex {
public:
  GraphIndex(const onnx::GraphProto &graph,
             const llvm::StringMap<HostTensor> &initializers,
             StringRef baseDirectory)
      : graph(graph), initializers(initializers),
        baseDirectory(baseDirectory) {
    for (int i = 0; i < graph.node_size(); ++i) {
      for (const std::string &output : graph.node(i).output())
        if (!output.empty())
          producers[output] = i;
      for (const std::string &input : graph.node(i).input())
        if (!input.empty())
          users[input].push_back(i);
    }
    for (const onnx::ValueInfoProto &output : graph.output())
      graphOutputs.insert(output.name());
  }

  const onnx::NodeProto &node(int64_t i) const { return graph.node(i); }

  /// The one node that reads `name`, if exactly one does and `name` is not
  /// a graph output.
  std::optional<int64_t> soleUser(StringRef name) const {
    auto it = users.find(name);
    if (graphOutputs.contains(name) || it == users.end() ||
        it->second.size() != 1)
      return std::nullopt;
    return it->second.front();
  }

  /// The nodes that read `name` (each once per input it is), or none if
  /// `name` is a graph output.
  llvm::ArrayRef<int64_t> usersOf(StringRef name) const {
    auto it = users.find(name);
    if (graphOutputs.contains(name) || it == users.end())
      return {};
    return it->second;
  }

  /// The node that writes `name`, if a node does.
  std::optional<int64_t> producer(StringRef name) const {
    auto it = producers.find(name);
    if (it == producers.end())
      return std::nullopt;
    return it->second;
  }

  /// The constant `name` holds: an initializer or a Constant node's
  /// `value`, `value_float` or `value_floats`, through Identity nodes.
  std::optional<HostTensor> constant(StringRef name) const {
    for (int depth = 0; depth < 16; ++depth) {
      if (auto it = initializers.find(name); it != initializers.end())
        return it->second;
      std::optional<int64_t> p = producer(name);
      if (!p)
        return std::nullopt;
      const onnx::NodeProto &n = node(*p);
      if (!n.domain().empty() && n.domain() != "ai.onnx")
        return std::nullopt;
      if (n.op_type() == "Identity" && n.input_size() == 1) {
        name = n.input(0);
        continue;
      }
      if (n.op_type() != "Constant" || n.attribute_size() != 1)
        return std::nullopt;
      const onnx::AttributeProto &attr = n.attribute(0);
      if (attr.name() == "value") {
        std::string error;
        return decodeTensor(attr.t(), baseDirectory, error);
      }
      if (attr.name() == "value_float")
        return HostTensor::fromFloats({}, {attr.f()});
      return std::nullopt;
    }
    return std::nullopt;
  }

  /// The value of a one-element floating-point constant `name`.
  std::optional<float> scalar(StringRef name) const {
    std::optional<HostTensor> t = constant(name);
    if (!t || !isFloatKind(t->kind) || t->numElements() != 1)
      return std::nullopt;
    return t->toFloats().front();
  }

  /// True if `name` is a 1-D floating-point constant (a layer norm's
  /// weight or bias).
  bool isVector(StringRef name) const {
    std::optional<HostTensor> t = constant(name);
    return t && isFloatKind(t->kind) && t->shape.size() == 1;
  }

private:
  const onnx::GraphProto &graph;
  const llvm::StringMap<HostTensor> &initializers;
  StringRef baseDirectory;
  llvm::StringMap<int64_t> producers;
  llvm::StringMap<llvm::SmallVector<int64_t, 2>> users;
  llvm::StringSet<> graphOutputs;
};

bool isOp(const onnx::NodeProto &node, StringRef type, int inputs) {
  return (node.domain().empty() || node.domain() == "ai.onnx") &&
         node.op_type() == type && node.input_size() == inputs &&
         node.output_size() >= 1;
}

bool near(std::optional<float> value, double expected) {
  return value && std::fabs(*value - expected) <= 1e-6 * std::fabs(expected);
}

/// The input of `node` other than `name` (for commutative Add and Mul), or
/// nullopt if neither input is `name`.
std::optional<std::string> otherInput(const onnx::NodeProto &node,
                                      StringRef name) {
  if (node.input(0) == name)
    return node.input(1);
  if (node.input(1) == name)
    return node.input(0);
  return std::nullopt;
}

/// A ReduceMean over the last axis that keeps it (`axes` [-1] as an
/// attribute, or from opset 18 as a constant input).
bool isLastAxisMean(const GraphIndex &index, const onnx::NodeProto &node) {
  if ((!node.domain().empty() && node.domain() != "ai.onnx") ||
      node.op_type() != "ReduceMean" || node.input_size() < 1 ||
      node.input_size() > 2 || node.output_size() != 1)
    return false;
  std::vector<int64_t> axes;
  for (const onnx::AttributeProto &attr : node.attribute()) {
    if (attr.name() == "axes")
      axes.assign(attr.ints().begin(), attr.ints().end());
    else if (attr.name() == "keepdims" && attr.i() != 1)
      return false;
    else if (attr.name() != "keepdims")
      return false;
  }
  if (node.input_size() == 2) {
    std::optional<HostTensor> t = index.constant(node.input(1));
    if (!t || !axes.empty() || isFloatKind(t->kind))
      return false;
    axes = t->toInts();
  }
  return axes.size() == 1 && axes[0] == -1;
}

/// A node made from `from`'s name, with `inputs` and one output.
onnx::NodeProto makeNode(StringRef type, const onnx::NodeProto &from,
                         llvm::ArrayRef<std::string> inputs,
                         const std::string &output) {
  onnx::NodeProto node;
  node.set_op_type(type.str());
  node.set_name(from.name());
  for (const std::string &input : inputs)
    node.add_input(input);
  node.add_output(output);
  return node;
}

/// ReduceMean(x) -> Sub(x, mean) -> Pow(d, 2) -> ReduceMean -> Add(eps) ->
/// Sqrt -> Div(d, std) [-> Mul(gamma) [-> Add(beta)]], every mean over the
/// last axis.
std::optional<RecognizedOp> matchLayerNorm(const GraphIndex &index,
                                           int64_t first) {
  const onnx::NodeProto &mean = index.node(first);
  if (!isLastAxisMean(index, mean))
    return std::nullopt;
  const std::string &x = mean.input(0);
  RecognizedOp op;
  op.members.push_back(first);
  auto next = [&](StringRef value, StringRef type,
                  int inputs) -> const onnx::NodeProto * {
    std::optional<int64_t> user = index.soleUser(value);
    if (!user || !isOp(index.node(*user), type, inputs))
      return nullptr;
    op.members.push_back(*user);
    return &index.node(*user);
  };
  const onnx::NodeProto *sub = next(mean.output(0), "Sub", 2);
  if (!sub || sub->input(0) != x || sub->input(1) != mean.output(0))
    return std::nullopt;
  // The centred value feeds the square and the final division.
  const std::string &centred = sub->output(0);
  llvm::ArrayRef<int64_t> centredUsers = index.usersOf(centred);
  if (centredUsers.size() != 2)
    return std::nullopt;
  const onnx::NodeProto *pow = nullptr;
  for (int64_t user : centredUsers)
    if (isOp(index.node(user), "Pow", 2) &&
        index.node(user).input(0) == centred) {
      pow = &index.node(user);
      op.members.push_back(user);
    }
  if (!pow || !near(index.scalar(pow->input(1)), 2.0))
    return std::nullopt;
  std::optional<int64_t> varianceNode = index.soleUser(pow->output(0));
  if (!varianceNode || !isLastAxisMean(index, index.node(*varianceNode)) ||
      index.node(*varianceNode).input(0) != pow->output(0))
    return std::nullopt;
  op.members.push_back(*varianceNode);
  const std::string &variance = index.node(*varianceNode).output(0);
  const onnx::NodeProto *addEps = next(variance, "Add", 2);
  std::optional<std::string> epsName =
      addEps ? otherInput(*addEps, variance) : std::nullopt;
  std::optional<float> eps = epsName ? index.scalar(*epsName) : std::nullopt;
  if (!eps || !(*eps >= 0) || !std::isfinite(*eps))
    return std::nullopt;
  const onnx::NodeProto *sqrt = next(addEps->output(0), "Sqrt", 1);
  if (!sqrt)
    return std::nullopt;
  const onnx::NodeProto *div = next(sqrt->output(0), "Div", 2);
  if (!div || div->input(0) != centred || div->input(1) != sqrt->output(0))
    return std::nullopt;
  std::string output = div->output(0), weight, bias;
  const onnx::NodeProto *last = div;
  // The affine part: a Mul by a 1-D constant, then an Add of one.
  if (std::optional<int64_t> user = index.soleUser(output);
      user && isOp(index.node(*user), "Mul", 2)) {
    std::optional<std::string> w = otherInput(index.node(*user), output);
    if (w && index.isVector(*w)) {
      weight = *w;
      last = &index.node(*user);
      op.members.push_back(*user);
      output = last->output(0);
      if (std::optional<int64_t> add = index.soleUser(output);
          add && isOp(index.node(*add), "Add", 2)) {
        std::optional<std::string> b = otherInput(index.node(*add), output);
        if (b && index.isVector(*b)) {
          bias = *b;
          last = &index.node(*add);
          op.members.push_back(*add);
          output = last->output(0);
        }
      }
    }
  }
  op.node = makeNode("LayerNormalization", mean, {x, weight, bias}, output);
  onnx::AttributeProto *axis = op.node.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(-1);
  onnx::AttributeProto *epsilon = op.node.add_attribute();
  epsilon->set_name("epsilon");
  epsilon->set_type(onnx::AttributeProto::FLOAT);
  epsilon->set_f(*eps);
  return op;
}

/// x / sqrt(2) (or x * (1 / sqrt(2))) -> Erf -> Add(1) -> then either
/// Mul(x, .) -> Mul(0.5), or Mul(Mul(x, 0.5), .): the exact GELU.
std::optional<RecognizedOp> matchGelu(const GraphIndex &index, int64_t erfIndex) {
  const onnx::NodeProto &erf = index.node(erfIndex);
  if (!isOp(erf, "Erf", 1))
    return std::nullopt;
  std::optional<int64_t> scaleIndex = index.producer(erf.input(0));
  if (!scaleIndex || index.soleUser(erf.input(0)) != erfIndex)
    return std::nullopt;
  const onnx::NodeProto &scale = index.node(*scaleIndex);
  std::string x;
  if (isOp(scale, "Div", 2) && near(index.scalar(scale.input(1)), M_SQRT2)) {
    x = scale.input(0);
  } else if (isOp(scale, "Mul", 2)) {
    if (near(index.scalar(scale.input(1)), M_SQRT1_2))
      x = scale.input(0);
    else if (near(index.scalar(scale.input(0)), M_SQRT1_2))
      x = scale.input(1);
  }
  if (x.empty())
    return std::nullopt;
  RecognizedOp op;
  op.members = {*scaleIndex, erfIndex};
  std::optional<int64_t> addIndex = index.soleUser(erf.output(0));
  if (!addIndex || !isOp(index.node(*addIndex), "Add", 2))
    return std::nullopt;
  const onnx::NodeProto &add = index.node(*addIndex);
  std::optional<std::string> one = otherInput(add, erf.output(0));
  if (!one || !near(index.scalar(*one), 1.0))
    return std::nullopt;
  op.members.push_back(*addIndex);
  std::optional<int64_t> mulIndex = index.soleUser(add.output(0));
  if (!mulIndex || !isOp(index.node(*mulIndex), "Mul", 2))
    return std::nullopt;
  const onnx::NodeProto &mul = index.node(*mulIndex);
  std::optional<std::string> other = otherInput(mul, add.output(0));
  if (!other)
    return std::nullopt;
  op.members.push_back(*mulIndex);
  const onnx::NodeProto *last = nullptr;
  if (*other == x) {
    // x * (1 + erf) * 0.5
    std::optional<int64_t> halfIndex = index.soleUser(mul.output(0));
    if (!halfIndex || !isOp(index.node(*halfIndex), "Mul", 2))
      return std::nullopt;
    std::optional<std::string> half =
        otherInput(index.node(*halfIndex), mul.output(0));
    if (!half || !near(index.scalar(*half), 0.5))
      return std::nullopt;
    op.members.push_back(*halfIndex);
    last = &index.node(*halfIndex);
  } else {
    // (x * 0.5) * (1 + erf)
    std::optional<int64_t> halfIndex = index.producer(*other);
    if (!halfIndex || index.soleUser(*other) != *mulIndex ||
        !isOp(index.node(*halfIndex), "Mul", 2))
      return std::nullopt;
    std::optional<std::string> half = otherInput(index.node(*halfIndex), x);
    if (!half || !near(index.scalar(*half), 0.5))
      return std::nullopt;
    op.members.push_back(*halfIndex);
    last = &mul;
  }
  op.node = makeNode("Gelu", *last, {x}, last->output(0));
  return op;
}

} // namespace

std::vector<RecognizedOp> mlir::memfmt::onnx_import::recognizeDecompositions(
    const onnx::GraphProto &graph, llvm::ArrayRef<int64_t> order,
    const llvm::StringMap<HostTensor> &initializers, StringRef baseDirectory) {
  GraphIndex index(graph, initializers, baseDirectory);
  llvm::DenseMap<int64_t, int64_t> position;
  for (auto [i, node] : llvm::enumerate(order))
    position[node] = i;
  llvm::DenseSet<int64_t> taken;
  std::vector<RecognizedOp> found;
  for (int64_t i : order) {
    if (taken.contains(i))
      continue;
    std::optional<RecognizedOp> op = matchLayerNorm(index, i);
    if (!op)
      op = matchGelu(index, i);
    if (!op || llvm::any_of(op->members,
                            [&](int64_t m) { return taken.contains(m); }))
      continue;
    for (int64_t m : op->members) {
      taken.insert(m);
      if (op->last < 0 || position[m] > position[op->last])
        op->last = m;
    }
    found.push_back(std::move(*op));
  }
  return found;
}
