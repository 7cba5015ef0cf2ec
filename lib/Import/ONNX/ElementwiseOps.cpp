//===- ElementwiseOps.cpp - ONNX elementwise ops --------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The converters of the elementwise and activation family: Relu, Add (NumPy
// broadcasting, and Add-1/6's `broadcast` and `axis`) and BatchNormalization
// in inference, each a memfmt op of the same name.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "ONNXOpRegistry.h"
#include "ShapeArithmetic.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

/// BatchNormalization (inference): memfmt.batch_norm.
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
  FailureOr<int64_t> training = importer.intAttr(node, "training_mode", 0);
  FailureOr<int64_t> isTest =
      importer.intAttr(node, "is_test", importer.getOpset() < 7 ? 0 : 1);
  FailureOr<int64_t> spatial = importer.intAttr(node, "spatial", 1);
  if (failed(epsilon) || failed(training) || failed(isTest) || failed(spatial))
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
  FailureOr<Value> y = importer.verified(
      node,
      BatchNormOp::create(builder, node.loc, importer.tensorType(x.shape),
                          operands[0], operands[1], operands[2], operands[3],
                          operands[4], epsAttr, FloatAttr(), BoolAttr()));
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
static LogicalResult convertAdd(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 2, 2, 1)))
    return failure();
  // Shape arithmetic: the sum of two constants is a constant.
  if (importer.getOpset() >= 7 && node.inputs[0]->isConstant() &&
      node.inputs[1]->isConstant())
    return foldBinary(importer, node, BinaryArithmetic::Add);
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
  std::optional<SmallVector<int64_t, 4>> shape =
      broadcastShapes(lhsShape, rhsShape);
  if (!shape)
    return importer.invalid(node, "operand shapes " + formatShape(lhsShape) +
                                      " and " + formatShape(rhsShape) +
                                      " do not broadcast");
  FailureOr<Value> y = importer.verified(
      node, AddOp::create(importer.getBuilder(), node.loc,
                          importer.tensorType(*shape), *lhs, *rhs));
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, *shape));
  return success();
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
        "left at the default); parameters constant or at run time",
        "`training_mode = 1`, the training outputs, `is_test = 0` (opset < "
        "7), `spatial = 0`"}});
  registry.add({"Relu",
                {"consumed_inputs"},
                {{1, convertRelu}},
                {"`relu`", "any rank", ""}});
  registry.add(
      {"Add",
       {"broadcast", "axis", "consumed_inputs"},
       {{1, convertAdd}},
       {"`add`",
        "any two tensors that broadcast (NumPy), constants as weights as they "
        "are (`[C, 1, 1]`, `[1, C, 1, 1]` broadcast per channel); Add-1/6 "
        "`broadcast` and `axis`",
        ""}});
}
