//===- ConstantFolds.cpp - Broadcasting arithmetic on constants -----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The NumPy-broadcasting folds of constants at import: Add, Mul, Sub and
// Div of two constants (foldBinary, which ElementwiseOps.cpp calls; integer
// division truncates toward zero, as ONNX Runtime's), Concat of constants
// (foldConcat, for ShapeOps.cpp), and the shape logic torch writes around
// `expand` -- Equal, Less, Greater and Where of constants, and Expand -- and
// around shifted windows (Swin): Mod, Pow, Not and ScatterND of constants. An
// Expand that grows model state (ViT's class token) is no fold: it becomes
// `memfmt.add` of the parameter and zeros, so that training updates the
// parameter itself.
//
//===----------------------------------------------------------------------===//

#include "ConstantFolds.h"

#include "GraphImporter.h"
#include "HostValues.h"
#include "ONNXOpRegistry.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

namespace {

/// A binary node's two constant operands (A, B) as host values, and their
/// NumPy broadcast: what every fold of two constants reads.
struct ConstantPair {
  HostValues lhs, rhs;
  SmallVector<int64_t, 4> shape;
  std::array<SmallVector<int64_t, 4>, 2> strides;
};

FailureOr<ConstantPair> constantPair(GraphImporter &importer, Node &node) {
  FailureOr<HostTensor> a = importer.constantOperand(node, 0, "A");
  FailureOr<HostTensor> b = importer.constantOperand(node, 1, "B");
  if (failed(a) || failed(b))
    return failure();
  FailureOr<HostValues> lhs = HostValues::of(importer, node, *a, "A");
  FailureOr<HostValues> rhs = HostValues::of(importer, node, *b, "B");
  if (failed(lhs) || failed(rhs))
    return failure();
  auto broadcast = broadcastOperands<2>(importer, node, {&*lhs, &*rhs});
  if (failed(broadcast))
    return failure();
  return ConstantPair{std::move(*lhs), std::move(*rhs), broadcast->first,
                      broadcast->second};
}

} // namespace

//===----------------------------------------------------------------------===//
// Folding entry points for other families
//===----------------------------------------------------------------------===//

LogicalResult mlir::memfmt::onnx_import::foldBinary(GraphImporter &importer,
                                                    Node &node,
                                                    BinaryArithmetic op) {
  FailureOr<ConstantPair> pair = constantPair(importer, node);
  if (failed(pair))
    return failure();
  const HostValues *lhs = &pair->lhs, *rhs = &pair->rhs;
  if (lhs->integer != rhs->integer)
    return importer.invalid(node, "the operands' element types differ");
  HostValues out;
  out.integer = lhs->integer;
  out.shape = pair->shape;
  bool divideByZero = false;
  forEachIndex<2>(out.shape, pair->strides, [&](std::array<int64_t, 2> at) {
    if (out.integer) {
      int64_t a = lhs->ints[at[0]], b = rhs->ints[at[1]];
      switch (op) {
      case BinaryArithmetic::Add:
        out.ints.push_back(a + b);
        break;
      case BinaryArithmetic::Sub:
        out.ints.push_back(a - b);
        break;
      case BinaryArithmetic::Mul:
        out.ints.push_back(a * b);
        break;
      case BinaryArithmetic::Div:
        divideByZero |= b == 0;
        out.ints.push_back(b == 0 ? 0 : a / b);
        break;
      }
      return;
    }
    float a = lhs->floats[at[0]], b = rhs->floats[at[1]];
    out.floats.push_back(op == BinaryArithmetic::Add   ? a + b
                         : op == BinaryArithmetic::Sub ? a - b
                         : op == BinaryArithmetic::Mul ? a * b
                                                       : a / b);
  });
  if (divideByZero)
    return importer.invalid(node, "integer division by zero");
  importer.setOutput(node, 0, OnnxValue::ofConstant(out.tensor()));
  return success();
}

LogicalResult mlir::memfmt::onnx_import::foldConcat(GraphImporter &importer,
                                                    Node &node, int64_t axis) {
  SmallVector<HostValues> parts;
  for (unsigned i = 0; i < node.numInputs(); ++i) {
    FailureOr<HostValues> v =
        HostValues::of(importer, node, *node.inputs[i]->constant, "input");
    if (failed(v))
      return failure();
    if (!parts.empty() && v->integer != parts.front().integer)
      return importer.invalid(node, "the inputs' element types differ");
    parts.push_back(*v);
  }
  HostValues out;
  out.integer = parts.front().integer;
  out.shape = parts.front().shape;
  out.shape[axis] = 0;
  for (const HostValues &p : parts)
    out.shape[axis] += p.shape[axis];
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= out.shape[d];
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostValues &p : parts) {
      int64_t row = p.size() / std::max<int64_t>(1, outer);
      for (int64_t i = o * row; i < (o + 1) * row; ++i) {
        if (out.integer)
          out.ints.push_back(p.ints[i]);
        else
          out.floats.push_back(p.floats[i]);
      }
    }
  }
  importer.setOutput(node, 0, OnnxValue::ofConstant(out.tensor()));
  return success();
}

namespace {

enum class Comparison { Equal, Less, Greater };

/// Equal, Less and Greater of two constants (the shape logic around
/// torch's `expand`): a bool tensor.
template <Comparison op>
LogicalResult convertComparison(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 2, 2, 1)))
    return failure();
  FailureOr<ConstantPair> pair = constantPair(importer, node);
  if (failed(pair))
    return failure();
  const HostValues *lhs = &pair->lhs, *rhs = &pair->rhs;
  HostValues out;
  out.boolean = true;
  out.shape = pair->shape;
  forEachIndex<2>(out.shape, pair->strides, [&](std::array<int64_t, 2> at) {
    double x = lhs->at(at[0]), y = rhs->at(at[1]);
    out.ints.push_back(op == Comparison::Equal  ? x == y
                       : op == Comparison::Less ? x < y
                                                : x > y);
  });
  importer.setOutput(node, 0, OnnxValue::ofConstant(out.tensor()));
  return success();
}

/// Where of constants: X where the condition holds, else Y (broadcast).
LogicalResult convertWhere(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 3, 3, 1)))
    return failure();
  if (!llvm::all_of(node.inputs, [](OnnxValue *v) { return v->isConstant(); }))
    return importer.unsupported(node, "Where of run-time tensors is not "
                                      "supported (only of constants, as in "
                                      "shape arithmetic)");
  FailureOr<HostTensor> c = importer.constantOperand(node, 0, "condition");
  FailureOr<HostTensor> a = importer.constantOperand(node, 1, "X");
  FailureOr<HostTensor> b = importer.constantOperand(node, 2, "Y");
  if (failed(c) || failed(a) || failed(b))
    return failure();
  FailureOr<HostValues> cond = HostValues::of(importer, node, *c, "condition");
  FailureOr<HostValues> x = HostValues::of(importer, node, *a, "X");
  FailureOr<HostValues> y = HostValues::of(importer, node, *b, "Y");
  if (failed(cond) || failed(x) || failed(y))
    return failure();
  if (!cond->integer)
    return importer.invalid(node, "the condition must be bool");
  if (x->integer != y->integer)
    return importer.invalid(node, "X and Y have different element types");
  auto broadcast = broadcastOperands<3>(importer, node, {&*cond, &*x, &*y});
  if (failed(broadcast))
    return failure();
  HostValues out;
  out.integer = x->integer;
  out.boolean = x->boolean && y->boolean;
  out.shape = broadcast->first;
  forEachIndex<3>(out.shape, broadcast->second, [&](std::array<int64_t, 3> at) {
    const HostValues &pick = cond->ints[at[0]] ? *x : *y;
    int64_t i = cond->ints[at[0]] ? at[1] : at[2];
    if (out.integer)
      out.ints.push_back(pick.ints[i]);
    else
      out.floats.push_back(pick.floats[i]);
  });
  importer.setOutput(node, 0, OnnxValue::ofConstant(out.tensor()));
  return success();
}

/// Expand (opset 8): the input broadcast with a constant shape, both ways
/// (NumPy). A constant folds, but model state the shape grows (ViT's class
/// token, an initializer expanded to the batch) becomes `memfmt.add` of its
/// weight and zeros of the result's shape, which broadcasts it (computed
/// once at load in inference; in training the parameter's gradient is the
/// sum over the broadcast dims). A run-time tensor passes through where the
/// shape does not grow it.
LogicalResult convertExpand(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 2, 2, 1)))
    return failure();
  FailureOr<SmallVector<int64_t>> target =
      intsInput(importer, node, 1, "shape");
  if (failed(target))
    return failure();
  if (llvm::any_of(*target, [](int64_t d) { return d < 0; }))
    return importer.invalid(node, "the shape " + formatShape(*target) +
                                      " has a negative dimension");
  OnnxValue &x = *node.inputs[0];
  std::optional<SmallVector<int64_t, 4>> shape =
      broadcastShapes(x.shape, *target);
  if (!shape)
    return importer.invalid(node, "the input " + formatShape(x.shape) +
                                      " does not broadcast to " +
                                      formatShape(*target));
  if (llvm::is_contained(*shape, 0))
    return importer.unsupported(node, "the result is empty; empty tensors "
                                      "are not supported");
  if (!x.isConstant()) {
    if (product(*shape) != product(x.shape))
      return importer.unsupported(
          node, "Expand of a run-time tensor " + formatShape(x.shape) + " to " +
                    formatShape(*shape) +
                    " is not supported (only of constants, or to as many "
                    "elements)");
    return importer.setReshapedOutput(node, *shape, "input");
  }
  if (x.modelState && ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(x.shape)) {
    FailureOr<Value> parameter = importer.tensorOperand(node, 0, "input");
    if (failed(parameter))
      return failure();
    Value zeros = importer.splatConstant(node.proto.output(0), *shape, 0.0);
    FailureOr<Value> sum = importer.verified(
        node, AddOp::create(importer.getBuilder(), node.loc,
                            importer.tensorType(*shape), zeros, *parameter));
    if (failed(sum))
      return failure();
    importer.setOutput(node, 0, OnnxValue::runtime(*sum, *shape));
    return success();
  }
  FailureOr<HostValues> data =
      HostValues::of(importer, node, *x.constant, "input");
  if (failed(data))
    return failure();
  HostValues shapeOnly;
  shapeOnly.shape = *shape;
  auto broadcast = broadcastOperands<2>(importer, node, {&*data, &shapeOnly});
  if (failed(broadcast))
    return failure();
  std::vector<int64_t> picks;
  forEachIndex<2>(*shape, broadcast->second,
                  [&](std::array<int64_t, 2> at) { picks.push_back(at[0]); });
  importer.setOutput(
      node, 0, OnnxValue::ofConstant(data->gather(*shape, picks).tensor()));
  return success();
}

} // namespace

namespace {

/// Mod and Pow of constants (NumPy broadcasting): Mod's result takes the
/// divisor's sign (Python's %) unless `fmod` = 1 (C's fmod, the dividend's);
/// an integer Pow raises to a non-negative integer power. What torch writes
/// around shifted windows (Swin's padding `(w - W % w) % w`) and the
/// attention scale `head_dim ** -0.5`.
template <bool IsMod>
LogicalResult convertModOrPow(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 2, 2, 1)))
    return failure();
  if (!node.inputs[0]->isConstant() || !node.inputs[1]->isConstant())
    return importer.unsupported(
        node, Twine(IsMod ? "Mod" : "Pow") +
                  " of run-time tensors is not supported (memfmt folds it "
                  "on constants" +
                  (IsMod ? ")" : "; x ^ 2 inside a layer norm is matched)"));
  FailureOr<ConstantPair> pair = constantPair(importer, node);
  if (failed(pair))
    return failure();
  const HostValues *lhs = &pair->lhs, *rhs = &pair->rhs;
  FailureOr<int64_t> fmod = importer.intAttr(node, "fmod", 0);
  if (failed(fmod))
    return failure();
  if (IsMod && lhs->integer != rhs->integer)
    return importer.invalid(node, "the operands' element types differ");
  if (IsMod && lhs->integer && *fmod != 0 && *fmod != 1)
    return importer.invalid(node, "fmod must be 0 or 1");
  if (IsMod && !lhs->integer && *fmod != 1)
    return importer.invalid(node, "a floating-point Mod needs fmod = 1");
  HostValues out;
  out.integer = lhs->integer;
  out.shape = pair->shape;
  bool bad = false;
  forEachIndex<2>(out.shape, pair->strides, [&](std::array<int64_t, 2> at) {
    if (!out.integer) {
      float x = lhs->floats[at[0]];
      double y = rhs->at(at[1]);
      out.floats.push_back(static_cast<float>(IsMod ? std::fmod(double(x), y)
                                                    : std::pow(double(x), y)));
      return;
    }
    int64_t x = lhs->ints[at[0]];
    if (IsMod) {
      int64_t y = rhs->ints[at[1]];
      bad |= y == 0;
      int64_t r = y == 0 ? 0 : x % y;
      if (*fmod == 0 && r != 0 && ((r < 0) != (y < 0)))
        r += y;
      out.ints.push_back(r);
      return;
    }
    double y = rhs->at(at[1]);
    bad |= y < 0 || y != std::floor(y);
    int64_t r = 1;
    for (int64_t i = 0; i < int64_t(y) && !bad; ++i)
      r *= x;
    out.ints.push_back(r);
  });
  if (bad)
    return importer.invalid(node, IsMod ? "integer Mod by zero"
                                        : "an integer Pow needs a "
                                          "non-negative integer exponent");
  importer.setOutput(node, 0, OnnxValue::ofConstant(out.tensor()));
  return success();
}

/// Not of a constant bool tensor (Swin's attention mask logic).
LogicalResult convertNot(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  FailureOr<HostTensor> x = importer.constantOperand(node, 0, "X");
  if (failed(x))
    return failure();
  if (x->kind != ElementKind::Bool)
    return importer.invalid(node, "the input must be bool");
  FailureOr<HostValues> v = HostValues::of(importer, node, *x, "X");
  if (failed(v))
    return failure();
  for (int64_t &b : v->ints)
    b = !b;
  importer.setOutput(node, 0, OnnxValue::ofConstant(v->tensor()));
  return success();
}

/// ScatterND of constants (reduction "none"): a copy of `data` with the
/// slices that `indices` names (its last dim, k, indexes data's first k
/// dims) replaced by `updates` -- the slice assignments torch exports for
/// an in-place `mask[a:b, c:d] = v` on a constant (Swin's attention mask).
LogicalResult convertScatterND(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 3, 3, 1)))
    return failure();
  FailureOr<HostTensor> d = importer.constantOperand(node, 0, "data");
  FailureOr<HostTensor> i = importer.constantOperand(node, 1, "indices");
  FailureOr<HostTensor> u = importer.constantOperand(node, 2, "updates");
  if (failed(d) || failed(i) || failed(u))
    return failure();
  const onnx::AttributeProto *reduction = importer.attribute(node, "reduction");
  if (reduction && reduction->s() != "none")
    return importer.unsupported(node, "reduction '" + reduction->s() +
                                          "' (only 'none')");
  FailureOr<HostValues> data = HostValues::of(importer, node, *d, "data");
  FailureOr<HostValues> indices = HostValues::of(importer, node, *i, "indices");
  FailureOr<HostValues> updates = HostValues::of(importer, node, *u, "updates");
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  if (!indices->integer || indices->boolean || indices->shape.empty())
    return importer.invalid(node, "indices must be integers of rank >= 1");
  if (updates->integer != data->integer)
    return importer.invalid(node, "data and updates' element types differ");
  const int64_t rank = data->shape.size();
  const int64_t k = indices->shape.back();
  if (k < 1 || k > rank)
    return importer.invalid(
        node, "indices' last dim " + Twine(k) +
                  " must be in [1, rank of data = " + Twine(rank) + "]");
  // updates' shape: indices.shape[:-1] + data.shape[k:].
  SmallVector<int64_t, 4> expected(indices->shape.begin(),
                                   indices->shape.end() - 1);
  expected.append(data->shape.begin() + k, data->shape.end());
  if (ArrayRef<int64_t>(updates->shape) != ArrayRef<int64_t>(expected))
    return importer.invalid(node, "updates have shape " +
                                      formatShape(updates->shape) +
                                      ", expected " + formatShape(expected));
  int64_t slice = 1;
  for (int64_t dim = k; dim < rank; ++dim)
    slice *= data->shape[dim];
  const int64_t tuples = indices->size() / k;
  HostValues out = *data;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t size = data->shape[j], at = indices->ints[t * k + j];
      if (at < -size || at >= size)
        return importer.invalid(node, "index " + Twine(at) +
                                          " is out of range for a dim of " +
                                          Twine(size));
      offset = offset * size + (at < 0 ? at + size : at);
    }
    for (int64_t e = 0; e < slice; ++e) {
      if (out.integer)
        out.ints[offset * slice + e] = updates->ints[t * slice + e];
      else
        out.floats[offset * slice + e] = updates->floats[t * slice + e];
    }
  }
  importer.setOutput(node, 0, OnnxValue::ofConstant(out.tensor()));
  return success();
}

} // namespace

void mlir::memfmt::onnx_import::registerConstantFoldOps(
    ONNXOpRegistry &registry) {
  constexpr StringRef folded = "(folded at import)";
  constexpr StringRef comparison = "constants, NumPy broadcasting";
  registry.add({"Equal",
                {},
                {{1, convertComparison<Comparison::Equal>}},
                {folded, comparison, "run-time tensors"}});
  registry.add({"Less",
                {},
                {{1, convertComparison<Comparison::Less>}},
                {folded, comparison, "run-time tensors"}});
  registry.add({"Greater",
                {},
                {{1, convertComparison<Comparison::Greater>}},
                {folded, comparison, "run-time tensors"}});
  registry.add({"Where",
                {},
                {{9, convertWhere}},
                {folded, "constants, NumPy broadcasting", "run-time tensors"}});
  registry.add({"Mod",
                {"fmod"},
                {{10, convertModOrPow<true>}},
                {folded, "constants, NumPy broadcasting, fmod 0 and 1",
                 "run-time tensors"}});
  registry.add({"Pow",
                {},
                {{7, convertModOrPow<false>}},
                {folded,
                 "constants, NumPy broadcasting (x * x over the last axis in "
                 "a layer norm is matched as layer_norm)",
                 "run-time tensors"}});
  registry.add({"Not",
                {},
                {{1, convertNot}},
                {folded, "constant bools", "run-time tensors"}});
  registry.add({"ScatterND",
                {"reduction"},
                {{11, convertScatterND}},
                {folded, "constants, reduction 'none'",
                 "run-time tensors; reductions"}});
  registry.add({"Expand",
                {},
                {{8, convertExpand}},
                {"(folded, `add` of an initializer and zeros, or `reshape`)",
                 "a constant input (any broadcast); a run-time input where "
                 "the shape only adds or drops size-1 dimensions",
                 "run-time inputs that grow"}});
}
