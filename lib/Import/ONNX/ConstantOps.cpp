//===- ConstantOps.cpp - ONNX constants -----------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The converter of Constant nodes: the value (`value`, `value_float(s)`,
// `value_int(s)`) becomes a constant on the host, as an initializer is; it
// turns into a `memfmt.weight` only where an op takes it as a tensor operand,
// and shapes and sizes are read from it directly.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "ONNXOpRegistry.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

/// Constant: a host constant (a weight only where an op takes it as a
/// tensor).
static LogicalResult convertConstant(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 0, 0, 1)))
    return failure();
  if (node.attributes.size() != 1)
    return importer.invalid(node, "expects exactly one value attribute, got " +
                                      Twine(node.attributes.size()));
  const onnx::AttributeProto &attr = *node.attributes.begin()->second;
  StringRef name = attr.name();
  std::optional<HostTensor> value;
  if (name == "value") {
    if (attributeType(attr) != onnx::AttributeProto_AttributeType_TENSOR)
      return importer.invalid(node, "attribute 'value' must be a tensor");
    std::string error;
    value = decodeTensor(attr.t(), importer.getBaseDirectory(), error);
    if (!value)
      return importer.invalid(node, "value: " + error);
  } else if (name == "value_float") {
    FailureOr<float> v = importer.floatAttr(node, name, 0.0f);
    if (failed(v))
      return failure();
    value = HostTensor::fromFloats({}, {*v});
  } else if (name == "value_floats") {
    if (attributeType(attr) != onnx::AttributeProto_AttributeType_FLOATS)
      return importer.invalid(node,
                              "attribute 'value_floats' must be a list of "
                              "floats");
    std::vector<float> v(attr.floats().begin(), attr.floats().end());
    value = HostTensor::fromFloats({int64_t(v.size())}, std::move(v));
  } else if (name == "value_int") {
    FailureOr<int64_t> v = importer.intAttr(node, name, 0);
    if (failed(v))
      return failure();
    value = HostTensor::fromInts({}, {*v});
  } else if (name == "value_ints") {
    FailureOr<SmallVector<int64_t>> v = importer.intsAttr(node, name, {});
    if (failed(v))
      return failure();
    value = HostTensor::fromInts({int64_t(v->size())}, *v);
  } else {
    return importer.unsupported(node,
                                "attribute '" + name + "' is not supported");
  }
  importer.setOutput(node, 0, OnnxValue::ofConstant(std::move(*value)));
  return success();
}

void mlir::memfmt::onnx_import::registerConstantOps(ONNXOpRegistry &registry) {
  registry.add({"Constant",
                {"value", "value_float", "value_floats", "value_int",
                 "value_ints", "sparse_value", "value_string", "value_strings"},
                {{1, convertConstant}},
                {"`weight`, or a splat `arith.constant` for one repeated "
                 "value",
                 "`value`, `value_float(s)`, `value_int(s)`",
                 "`sparse_value`, strings"}});
}
