//===- ElementwiseOps.cpp - ONNX elementwise ops --------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The converters of the elementwise, activation and normalisation family,
// each a memfmt op of ATen's name: BatchNormalization in inference,
// LayerNormalization, Relu, Add (NumPy
// broadcasting, and Add-1/6's `broadcast` and `axis`), Mul, Sub, Div,
// Sigmoid, HardSigmoid, HardSwish, Clip (clamp; ReLU6) and Gelu. Add, Mul,
// Sub and Div of two constants fold at import (ConstantFolds.h).
//
//===----------------------------------------------------------------------===//

#include "ConstantFolds.h"
#include "GraphImporter.h"
#include "ONNXOpRegistry.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

/// An ONNX float attribute as the shortest decimal that round-trips
/// through float (1e-3, not 0.0010000000474974513; 0.2, not
/// 0.20000000298023224), as the f64 attributes of the memfmt ops.
static double shortestDecimal(float value) {
  for (int digits = 1; digits <= 9; ++digits) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.*g", digits, double(value));
    if (std::strtof(text, nullptr) == value)
      return std::strtod(text, nullptr);
  }
  return value;
}

/// ATen's batch-norm momentum (the weight of the batch statistic in the
/// running one) from ONNX's (the weight of the running statistic, what
/// torch.onnx writes as 1 - momentum): 1 - m, as the decimal a user wrote
/// (0.99 gives 0.01, not 0.010000000000000009).
static double atenMomentum(float onnxMomentum) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g",
                1.0 - shortestDecimal(onnxMomentum));
  return std::strtod(text, nullptr);
}

/// BatchNormalization (inference): memfmt.batch_norm, with the running
/// statistics' momentum a training step compiled from the model uses.
static LogicalResult convertBatchNorm(GraphImporter &importer, Node &node) {
  OpBuilder &builder = importer.getBuilder();
  if (failed(importer.checkArity(node, 5, 5, 5)))
    return failure();
  for (unsigned i = 1; i < node.numOutputs(); ++i)
    if (node.hasOutput(i))
      return importer.unsupported(node,
                                  "training outputs (running or saved mean "
                                  "and variance) are not supported; memfmt "
                                  "compiles inference");
  FailureOr<float> epsilon = importer.floatAttr(node, "epsilon", 1e-5f);
  FailureOr<float> momentum = importer.floatAttr(node, "momentum", 0.9f);
  FailureOr<int64_t> training = importer.intAttr(node, "training_mode", 0);
  FailureOr<int64_t> isTest =
      importer.intAttr(node, "is_test", importer.getOpset() < 7 ? 0 : 1);
  FailureOr<int64_t> spatial = importer.intAttr(node, "spatial", 1);
  if (failed(epsilon) || failed(momentum) || failed(training) ||
      failed(isTest) || failed(spatial))
    return failure();
  if (*training != 0)
    return importer.unsupported(node,
                                "training_mode = 1 is not supported; memfmt "
                                "compiles inference");
  if (*isTest == 0)
    return importer.unsupported(node,
                                "is_test = 0 (training) is not supported; "
                                "memfmt compiles inference");
  if (*spatial != 1)
    return importer.unsupported(node,
                                "spatial = 0 (per-activation statistics) is "
                                "not supported");
  if (*epsilon < 0 || !std::isfinite(*epsilon))
    return importer.invalid(node, "epsilon must be finite and >= 0");
  if (!(*momentum >= 0 && *momentum <= 1))
    return importer.invalid(node, "momentum is " + std::to_string(*momentum) +
                                      ", expected a value in [0, 1] (the "
                                      "weight of the running statistics)");
  OnnxValue &x = *node.inputs[0];
  if (x.shape.size() < 2)
    return importer.invalid(node, "the input " + formatShape(x.shape) +
                                      " must have rank >= 2 ([N, C, ...])");
  int64_t channels = x.shape[1];
  static const char *const roles[] = {"X", "scale", "B", "input_mean",
                                      "input_var"};
  SmallVector<Value, 5> operands;
  for (unsigned i = 0; i < 5; ++i) {
    if (i > 0 && node.inputs[i]->shape != SmallVector<int64_t, 4>{channels})
      return importer.invalid(
          node, "the " + Twine(roles[i]) + " input " +
                    quote(node.inputName(i)) + " has shape " +
                    formatShape(node.inputs[i]->shape) + "; expected [" +
                    Twine(channels) + "] (one per channel of the input " +
                    formatShape(x.shape) + ")");
    FailureOr<Value> operand = importer.tensorOperand(node, i, roles[i]);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }
  // Leave eps and momentum unset at their defaults (1e-5, 0.1), as the zoo
  // does.
  double eps = shortestDecimal(*epsilon);
  FloatAttr epsAttr = eps == 1e-5 ? FloatAttr() : builder.getF64FloatAttr(eps);
  double runningMomentum = atenMomentum(*momentum);
  FloatAttr momentumAttr = runningMomentum == 0.1
                               ? FloatAttr()
                               : builder.getF64FloatAttr(runningMomentum);
  FailureOr<Value> y = importer.verified(
      node,
      BatchNormOp::create(builder, node.loc, importer.tensorType(x.shape),
                          operands[0], operands[1], operands[2], operands[3],
                          operands[4], epsAttr, momentumAttr, BoolAttr()));
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, x.shape));
  return success();
}

/// Relu: memfmt.relu.
static LogicalResult convertRelu(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  FailureOr<Value> x = importer.tensorOperand(node, 0, "X");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = node.inputs[0]->shape;
  FailureOr<Value> y =
      importer.verified(node, ReluOp::create(importer.getBuilder(), node.loc,
                                             importer.tensorType(shape), *x));
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// Add: memfmt.add with NumPy broadcasting (Add-1/6: `broadcast`, `axis`).
/// `OpTy` (add, mul, sub, div) of lhs and rhs with NumPy broadcasting.
template <typename OpTy>
static LogicalResult buildBroadcast(GraphImporter &importer, Node &node,
                                    Value lhs, ArrayRef<int64_t> lhsShape,
                                    Value rhs, ArrayRef<int64_t> rhsShape) {
  std::optional<SmallVector<int64_t, 4>> shape =
      broadcastShapes(lhsShape, rhsShape);
  if (!shape)
    return importer.invalid(node, "operand shapes " + formatShape(lhsShape) +
                                      " and " + formatShape(rhsShape) +
                                      " do not broadcast");
  FailureOr<Value> y = importer.verified(
      node, OpTy::create(importer.getBuilder(), node.loc,
                         importer.tensorType(*shape), lhs, rhs));
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, *shape));
  return success();
}

/// Add, Mul, Sub and Div: memfmt.add, mul, sub, div with NumPy
/// broadcasting (opset 7 on) or, before, the `broadcast` and `axis`
/// attributes; of two constants (opset 7 on), a constant: shape arithmetic.
template <typename OpTy, BinaryArithmetic Fold>
static LogicalResult convertArithmetic(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 2, 2, 1)))
    return failure();
  if (importer.getOpset() >= 7 && node.inputs[0]->isConstant() &&
      node.inputs[1]->isConstant())
    return foldBinary(importer, node, Fold);
  SmallVector<int64_t, 4> lhsShape = node.inputs[0]->shape;
  SmallVector<int64_t, 4> rhsShape = node.inputs[1]->shape;
  FailureOr<int64_t> broadcast = importer.intAttr(node, "broadcast", 0);
  if (failed(broadcast))
    return failure();
  bool legacyAxis = false;
  int64_t axis = 0;
  if (importer.getOpset() < 7) {
    // Add-1/6: no broadcasting unless `broadcast`; then B's shape matches a
    // contiguous run of A's dims, starting at `axis` (default: the suffix).
    if (*broadcast == 0 && lhsShape != rhsShape)
      return importer.invalid(node, "operand shapes " + formatShape(lhsShape) +
                                        " and " + formatShape(rhsShape) +
                                        " differ and broadcast = 0");
    if (importer.attribute(node, "axis")) {
      FailureOr<int64_t> a = importer.intAttr(node, "axis", 0);
      if (failed(a))
        return failure();
      axis = *a < 0 ? *a + lhsShape.size() : *a;
      if (axis < 0 ||
          axis + rhsShape.size() > static_cast<size_t>(lhsShape.size()))
        return importer.invalid(node, "axis " + Twine(*a) +
                                          " does not place B " +
                                          formatShape(rhsShape) + " inside A " +
                                          formatShape(lhsShape));
      legacyAxis = true;
    }
  } else if (importer.attribute(node, "broadcast") ||
             importer.attribute(node, "axis")) {
    return importer.invalid(node,
                            "attributes 'broadcast' and 'axis' exist only up "
                            "to opset 6");
  }
  FailureOr<Value> lhs = importer.tensorOperand(node, 0, "A");
  FailureOr<Value> rhs = importer.tensorOperand(node, 1, "B");
  if (failed(lhs) || failed(rhs))
    return failure();
  if (legacyAxis) {
    rhsShape.append(lhsShape.size() - axis - rhsShape.size(), 1);
    rhs = importer.reshape(node, *rhs, rhsShape);
    if (failed(rhs))
      return failure();
  }
  return buildBroadcast<OpTy>(importer, node, *lhs, lhsShape, *rhs, rhsShape);
}

/// A unary elementwise op `OpTy` on input 0, built with `attrs` after the
/// result type and the input.
template <typename OpTy, typename... Attrs>
static LogicalResult buildUnary(GraphImporter &importer, Node &node,
                                Attrs... attrs) {
  FailureOr<Value> x = importer.tensorOperand(node, 0, "X");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = node.inputs[0]->shape;
  FailureOr<Value> y = importer.verified(
      node, OpTy::create(importer.getBuilder(), node.loc,
                         importer.tensorType(shape), *x, attrs...));
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// Sigmoid, HardSwish: the op of the same name.
template <typename OpTy>
static LogicalResult convertUnary(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  return buildUnary<OpTy>(importer, node);
}

/// HardSigmoid: memfmt.hardsigmoid with ONNX's alpha (0.2) and beta (0.5).
static LogicalResult convertHardSigmoid(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  FailureOr<float> alpha = importer.floatAttr(node, "alpha", 0.2f);
  FailureOr<float> beta = importer.floatAttr(node, "beta", 0.5f);
  if (failed(alpha) || failed(beta))
    return failure();
  // torch exports 1/6 as the float nearest it: keep ATen's exact default.
  double a = *alpha == float(1.0 / 6.0) ? 1.0 / 6.0 : shortestDecimal(*alpha);
  OpBuilder &b = importer.getBuilder();
  return buildUnary<HardsigmoidOp>(importer, node, b.getF64FloatAttr(a),
                                   b.getF64FloatAttr(shortestDecimal(*beta)));
}

/// Clip: memfmt.clamp. The bounds are attributes before opset 11 and
/// optional constant inputs from 11.
static LogicalResult convertClip(GraphImporter &importer, Node &node) {
  bool inputs = importer.getOpset() >= 11;
  if (failed(importer.checkArity(node, 1, inputs ? 3 : 1, 1)))
    return failure();
  std::optional<double> bounds[2];
  const char *names[2] = {"min", "max"};
  for (int i = 0; i < 2; ++i) {
    if (inputs) {
      if (importer.attribute(node, names[i]))
        return importer.invalid(node, "attribute '" + Twine(names[i]) +
                                          "' exists only up to opset 10; "
                                          "the bounds are inputs #1 and #2");
      if (!node.hasInput(i + 1))
        continue;
      FailureOr<HostTensor> t = importer.constantOperand(node, i + 1, names[i]);
      if (failed(t))
        return failure();
      if (t->numElements() != 1 ||
          (!isFloatKind(t->kind) && t->kind != ElementKind::Double))
        return importer.invalid(node, "the " + Twine(names[i]) +
                                          " input must be one floating-point "
                                          "value");
      bounds[i] = shortestDecimal(t->toFloats()[0]);
    } else if (importer.attribute(node, names[i])) {
      FailureOr<float> v = importer.floatAttr(node, names[i], 0.0f);
      if (failed(v))
        return failure();
      bounds[i] = shortestDecimal(*v);
    }
  }
  OpBuilder &b = importer.getBuilder();
  auto attr = [&](std::optional<double> v) {
    return v ? b.getF64FloatAttr(*v) : FloatAttr();
  };
  return buildUnary<ClampOp>(importer, node, attr(bounds[0]),
                             attr(bounds[1]));
}

/// Gelu (opset 20): memfmt.gelu, exact or by tanh.
static LogicalResult convertGelu(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  FailureOr<std::string> approximate =
      importer.stringAttr(node, "approximate", "none");
  if (failed(approximate))
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return importer.invalid(node, "approximate must be 'none' or 'tanh', "
                                  "got '" +
                                      *approximate + "'");
  return buildUnary<GeluOp>(importer, node,
                            importer.getBuilder().getStringAttr(*approximate));
}

/// Input `i` of `node` (Scale or B of LayerNormalization) as a [D] tensor,
/// or a null value where the input is absent.
static FailureOr<Value> layerNormParameter(GraphImporter &importer, Node &node,
                                           unsigned i, StringRef role,
                                           ArrayRef<int64_t> normalized) {
  if (!node.hasInput(i))
    return Value();
  OnnxValue &p = *node.inputs[i];
  int64_t d = product(normalized);
  if (product(p.shape) != d) {
    std::optional<SmallVector<int64_t, 4>> b =
        broadcastShapes(p.shape, normalized);
    if (b && ArrayRef<int64_t>(*b) == normalized)
      return importer.unsupported(
          node, role + " " + formatShape(p.shape) +
                    " broadcast to the normalised shape " +
                    formatShape(normalized) + " is not supported");
    return importer.invalid(node, role + " " + formatShape(p.shape) +
                                      " does not fit the normalised shape " +
                                      formatShape(normalized));
  }
  FailureOr<Value> v = importer.tensorOperand(node, i, role);
  if (failed(v) || p.shape.size() == 1)
    return v;
  return importer.reshape(node, *v, {d});
}

/// Sets the node's output to the op `build` makes of `input` (of `shape`),
/// for the row ops (layer norm, softmax). With `asRows`, the op works on
/// `input` reshaped to [leading, trailing] rows - the trailing dimensions
/// from `first` on as one - and its result is reshaped back (L7 makes the
/// reshapes contiguous).
static LogicalResult
setRowOpOutput(GraphImporter &importer, Node &node, Value input,
               ArrayRef<int64_t> shape, int64_t first, bool asRows,
               function_ref<Operation *(Value, RankedTensorType)> build) {
  SmallVector<int64_t, 4> rows = {product(shape.take_front(first)),
                                  product(shape.drop_front(first))};
  FailureOr<Value> x =
      asRows ? importer.reshape(node, input, rows) : FailureOr<Value>(input);
  if (failed(x))
    return failure();
  FailureOr<Value> y = importer.verified(
      node, build(*x, importer.tensorType(asRows ? ArrayRef<int64_t>(rows)
                                                 : shape)));
  if (succeeded(y) && asRows)
    y = importer.reshape(node, *y, shape);
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// LayerNormalization (opset 17; torch's decomposition before, see
/// Decompositions.h): memfmt.layer_norm over the last axis. Normalising
/// from an earlier axis normalises the trailing dimensions as one: a
/// reshape to [leading, trailing] around the op (L7 makes it contiguous).
static LogicalResult convertLayerNorm(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 3, 3)))
    return failure();
  if (node.hasOutput(1) || node.hasOutput(2))
    return importer.unsupported(node, "the Mean and InvStdDev outputs are not "
                                      "supported; memfmt compiles inference");
  FailureOr<int64_t> axis = importer.intAttr(node, "axis", -1);
  FailureOr<float> epsilon = importer.floatAttr(node, "epsilon", 1e-5f);
  FailureOr<int64_t> stash = importer.intAttr(node, "stash_type", 1);
  if (failed(axis) || failed(epsilon) || failed(stash))
    return failure();
  if (*stash != 1)
    return importer.unsupported(node, "stash_type " + Twine(*stash) +
                                          " is not supported (memfmt "
                                          "computes the statistics in f32, "
                                          "stash_type 1)");
  if (!(*epsilon >= 0) || !std::isfinite(*epsilon))
    return importer.invalid(node, "epsilon must be finite and >= 0");
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  if (rank == 0 || *axis < -rank || *axis >= rank)
    return importer.invalid(node, "axis " + Twine(*axis) +
                                      " is out of range for the input " +
                                      formatShape(x.shape));
  int64_t first = *axis < 0 ? *axis + rank : *axis;
  ArrayRef<int64_t> shape = x.shape;
  ArrayRef<int64_t> normalized = shape.drop_front(first);
  int64_t d = product(normalized);
  FailureOr<Value> input = importer.tensorOperand(node, 0, "X");
  FailureOr<Value> weight =
      layerNormParameter(importer, node, 1, "Scale", normalized);
  FailureOr<Value> bias = layerNormParameter(importer, node, 2, "B", normalized);
  if (failed(input) || failed(weight) || failed(bias))
    return failure();
  // Several normalised dimensions: rows of their elements.
  OpBuilder &builder = importer.getBuilder();
  return setRowOpOutput(
      importer, node, *input, shape, first, first != rank - 1,
      [&](Value x, RankedTensorType type) {
        return LayerNormOp::create(
            builder, node.loc, type, x, *weight, *bias,
            builder.getDenseI64ArrayAttr({d}),
            builder.getF64FloatAttr(shortestDecimal(*epsilon)));
      });
}

/// Softmax: memfmt.softmax. From opset 13 along one axis (default -1);
/// before, over the input coerced to 2-D at `axis` (default 1): the
/// trailing dimensions from `axis` on are one row, which is one dimension
/// only when `axis` is the last (else a reshape to [leading, trailing]
/// around the op, as for LayerNormalization).
static LogicalResult convertSoftmax(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  bool coerced = importer.getOpset() < 13;
  FailureOr<int64_t> axis = importer.intAttr(node, "axis", coerced ? 1 : -1);
  if (failed(axis))
    return failure();
  OnnxValue &x = *node.inputs[0];
  ArrayRef<int64_t> shape = x.shape;
  int64_t rank = shape.size();
  if (rank == 0 || *axis < -rank || *axis >= rank)
    return importer.invalid(node, "axis " + Twine(*axis) +
                                      " is out of range for the input " +
                                      formatShape(shape));
  int64_t dim = *axis < 0 ? *axis + rank : *axis;
  FailureOr<Value> input = importer.tensorOperand(node, 0, "input");
  if (failed(input))
    return failure();
  bool asRows = coerced && dim != rank - 1;
  OpBuilder &builder = importer.getBuilder();
  return setRowOpOutput(importer, node, *input, shape, dim, asRows,
                        [&](Value x, RankedTensorType type) {
                          return SoftmaxOp::create(
                              builder, node.loc, type, x,
                              builder.getI64IntegerAttr(asRows ? 1 : dim));
                        });
}

void mlir::memfmt::onnx_import::registerElementwiseOps(
    ONNXOpRegistry &registry) {
  registry.add(
      {"BatchNormalization",
       {"epsilon", "momentum", "spatial", "is_test", "consumed_inputs",
        "training_mode"},
       {{1, convertBatchNorm}},
       {"`batch_norm`",
        "inference; `epsilon` (the shortest decimal of the float; 1e-5 is "
        "left at the default); `momentum` m becomes the running statistics' "
        "`momentum = 1 - m` of a training step; parameters constant or at "
        "run time",
        "`training_mode = 1`, the training outputs, `is_test = 0` (opset < "
        "7), `spatial = 0`"}});
  registry.add({"Relu",
                {"consumed_inputs"},
                {{1, convertRelu}},
                {"`relu`", "any rank", ""}});
  registry.add(
      {"Add",
       {"broadcast", "axis", "consumed_inputs"},
       {{1, convertArithmetic<AddOp, BinaryArithmetic::Add>}},
       {"`add`",
        "any two tensors that broadcast (NumPy), constants as weights as they "
        "are (`[C, 1, 1]`, `[1, C, 1, 1]` broadcast per channel); Add-1/6 "
        "`broadcast` and `axis`",
        ""}});
  constexpr StringRef binarySupported =
      "as Add (a squeeze-excite `[N, C, 1, 1]` scale keeps channels-last); "
      "two constants fold (integer division truncates)";
  registry.add({"Mul",
                {"broadcast", "axis", "consumed_inputs"},
                {{1, convertArithmetic<MulOp, BinaryArithmetic::Mul>}},
                {"`mul`", binarySupported, ""}});
  registry.add({"Sub",
                {"broadcast", "axis", "consumed_inputs"},
                {{1, convertArithmetic<SubOp, BinaryArithmetic::Sub>}},
                {"`sub`", binarySupported, ""}});
  registry.add({"Div",
                {"broadcast", "axis", "consumed_inputs"},
                {{1, convertArithmetic<DivOp, BinaryArithmetic::Div>}},
                {"`div`", binarySupported, ""}});
  registry.add({"Sigmoid",
                {"consumed_inputs"},
                {{1, convertUnary<SigmoidOp>}},
                {"`sigmoid`", "any rank", ""}});
  registry.add({"HardSigmoid",
                {"alpha", "beta", "consumed_inputs"},
                {{1, convertHardSigmoid}},
                {"`hardsigmoid`", "any rank; `alpha`, `beta`", ""}});
  registry.add({"HardSwish",
                {},
                {{14, convertUnary<HardswishOp>}},
                {"`hardswish`", "any rank", ""}});
  registry.add({"Clip",
                {"min", "max", "consumed_inputs"},
                {{1, convertClip}},
                {"`clamp` (ReLU6: min 0, max 6)",
                 "bounds as attributes (opset < 11) or constant inputs, "
                 "either absent",
                 "bounds given at run time"}});
  registry.add({"Gelu",
                {"approximate"},
                {{20, convertGelu}},
                {"`gelu`",
                 "`approximate` none (erf) or tanh; before opset 20 the exact "
                 "GELU torch writes as Div, Erf, Add, Mul, Mul "
                 "(Decompositions.h)",
                 ""}});
  registry.add({"LayerNormalization",
                {"axis", "epsilon", "stash_type"},
                {{17, convertLayerNorm}},
                {"`layer_norm` (+ `reshape`)",
                 "any axis (the trailing dimensions normalised as one); Scale "
                 "and B holding the normalised shape's elements; before opset "
                 "17 the chain torch writes for F.layer_norm (ReduceMean, "
                 "Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add; "
                 "Decompositions.h)",
                 "Scale and B that broadcast; the Mean and InvStdDev outputs; "
                 "stash_type other than 1"}});
  registry.add({"Softmax",
                {"axis"},
                {{1, convertSoftmax}},
                {"`softmax` (+ `reshape`)",
                 "any axis; before opset 13 the input coerced to 2-D at "
                 "`axis` (a reshape unless `axis` is the last)",
                 ""}});
}
