//===- GraphImporter.cpp - Helpers of ONNX converters ---------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The helpers of GraphImporter.h that every converter uses: recording
// problems against a node, reading attributes with their types and ranges
// checked, turning inputs into SSA values or host constants (constants
// become `memfmt.weight` ops and parameters, once per name), and the small
// op sequences several converters share (reshape, a runtime transpose, an
// exact per-channel scale, a matrix product as a 1x1 convolution).
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

std::string mlir::memfmt::onnx_import::quote(StringRef name) {
  return "'" + printable(name) + "'";
}

std::optional<SmallVector<int64_t, 4>>
mlir::memfmt::onnx_import::broadcastShapes(ArrayRef<int64_t> a,
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

int64_t mlir::memfmt::onnx_import::product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

//===----------------------------------------------------------------------===//
// Problems
//===----------------------------------------------------------------------===//

void GraphImporter::problem(ProblemKind kind, const Twine &where,
                            const Twine &message, int64_t position) {
  problems.push_back(
      {kind, position, problems.size(), where.str(), message.str()});
}

LogicalResult GraphImporter::unsupported(Node &node, const Twine &message) {
  problem(ProblemKind::Unsupported, node.label, message, node.index);
  return failure();
}

LogicalResult GraphImporter::invalid(Node &node, const Twine &message) {
  problem(ProblemKind::Invalid, node.label, message, node.index);
  return failure();
}

LogicalResult GraphImporter::checkArity(Node &node, unsigned minInputs,
                                        unsigned maxInputs,
                                        unsigned maxOutputs) {
  unsigned inputs = 0;
  for (unsigned i = 0; i < node.numInputs(); ++i)
    if (node.hasInput(i))
      inputs = i + 1;
  if (inputs < minInputs || node.numInputs() > maxInputs)
    return invalid(
        node, "expects " +
                  (minInputs == maxInputs ? std::to_string(minInputs)
                                          : std::to_string(minInputs) + " to " +
                                                std::to_string(maxInputs)) +
                  " inputs, got " + std::to_string(node.numInputs()));
  for (unsigned i = 0; i < minInputs; ++i)
    if (!node.hasInput(i))
      return invalid(node,
                     "input #" + std::to_string(i) + " is required but empty");
  if (node.numOutputs() < 1 || !node.hasOutput(0))
    return invalid(node, "has no output");
  if (node.numOutputs() > maxOutputs)
    return invalid(node, "expects at most " + std::to_string(maxOutputs) +
                             " outputs, got " +
                             std::to_string(node.numOutputs()));
  return success();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *GraphImporter::attribute(Node &node,
                                                     StringRef name) {
  return node.attributes.lookup(name);
}

/// The attribute's type, inferred from the set field for old files that
/// leave `type` unset.
onnx::AttributeProto_AttributeType
mlir::memfmt::onnx_import::attributeType(const onnx::AttributeProto &attr) {
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

FailureOr<int64_t> GraphImporter::intAttr(Node &node, StringRef name,
                                          int64_t dflt) {
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

FailureOr<float> GraphImporter::floatAttr(Node &node, StringRef name,
                                          float dflt) {
  const onnx::AttributeProto *attr = attribute(node, name);
  if (!attr)
    return dflt;
  if (attributeType(*attr) != onnx::AttributeProto_AttributeType_FLOAT)
    return invalid(node, "attribute '" + name + "' must be a float");
  return attr->f();
}

FailureOr<std::string> GraphImporter::stringAttr(Node &node, StringRef name,
                                                 StringRef dflt) {
  const onnx::AttributeProto *attr = attribute(node, name);
  if (!attr)
    return dflt.str();
  if (attributeType(*attr) != onnx::AttributeProto_AttributeType_STRING)
    return invalid(node, "attribute '" + name + "' must be a string");
  return attr->s();
}

FailureOr<SmallVector<int64_t>>
GraphImporter::intsAttr(Node &node, StringRef name, ArrayRef<int64_t> dflt) {
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
GraphImporter::intValues(Node &node, const HostTensor &tensor, StringRef what) {
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

void GraphImporter::setOutput(Node &node, unsigned i, OnnxValue value) {
  if (value.value)
    temporaryReshapes.erase(value.value.getDefiningOp());
  if (node.hasOutput(i))
    values[node.proto.output(i)] = std::move(value);
}

/// The safetensors dtype a constant is stored with; doubles are narrowed
/// to f32 into `converted`. Nullopt for non-floating-point data.
std::optional<std::string>
GraphImporter::parameterDtype(const HostTensor &data, HostTensor &converted) {
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

FailureOr<Value> GraphImporter::weight(Node &node, StringRef name,
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

FailureOr<Value> GraphImporter::derivedWeight(Node &node, StringRef base,
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

FailureOr<Value> GraphImporter::tensorOperand(Node &node, unsigned i,
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
    if (!value.modelState) {
      std::vector<float> values = value.constant->toFloats();
      if (!values.empty() && llvm::all_of(values, [&](float v) {
            return llvm::bit_cast<uint32_t>(v) ==
                   llvm::bit_cast<uint32_t>(values[0]);
          }))
        return splatConstant(name, value.shape, values[0]);
      FailureOr<Value> w = weight(node, name, *value.constant);
      if (succeeded(w))
        for (ImportedParameter &p : parameters)
          if (p.name == name)
            p.computed = true;
      return w;
    }
    return weight(node, name, *value.constant);
  }
  if (!value.value || value.elementKind != ElementKind::Float)
    return unsupported(node, "the " + role + " input " + quote(name) + " is " +
                                 elementKindName(int32_t(value.elementKind)) +
                                 "; memfmt computes in floating point");
  return value.value;
}

Value GraphImporter::splatConstant(StringRef name, ArrayRef<int64_t> shape,
                                   double value) {
  RankedTensorType type = tensorType(shape);
  return arith::ConstantOp::create(
      builder, NameLoc::get(builder.getStringAttr(name)),
      DenseElementsAttr::get(
          type, builder.getFloatAttr(type.getElementType(), value)));
}

FailureOr<HostTensor> GraphImporter::constantOperand(Node &node, unsigned i,
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
FailureOr<Value> GraphImporter::verified(Node &node, Operation *op) {
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

FailureOr<Value> GraphImporter::reshape(Node &node, Value value,
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

FailureOr<Value> GraphImporter::slice(Node &node, Value value, int64_t dim,
                                      int64_t start, int64_t end,
                                      int64_t step) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t, 4> shape(type.getShape());
  shape[dim] = (end - start + step - 1) / step;
  return verified(
      node, SliceOp::create(builder, node.loc,
                            RankedTensorType::get(shape, type.getElementType()),
                            value, builder.getI64IntegerAttr(dim),
                            builder.getI64IntegerAttr(start),
                            builder.getI64IntegerAttr(end),
                            builder.getI64IntegerAttr(step)));
}

LogicalResult GraphImporter::setReshapedOutput(Node &node,
                                               ArrayRef<int64_t> shape,
                                               StringRef role) {
  OnnxValue &x = *node.inputs[0];
  if (x.isConstant()) {
    setOutput(node, 0, x.reshapedConstant(shape));
    return success();
  }
  FailureOr<Value> input = tensorOperand(node, 0, role);
  if (failed(input))
    return failure();
  FailureOr<Value> y = reshape(node, *input, shape);
  if (failed(y))
    return failure();
  setOutput(node, 0, OnnxValue::runtime(*y, shape, x.elementKind));
  return success();
}

/// [R, C] -> [C, R] at run time: chunk the columns, concatenate them along
/// dim 0 ([C * R, 1], column j at rows j * R ...), and reshape.
FailureOr<Value> GraphImporter::transpose2d(Node &node, Value value) {
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
FailureOr<Value> GraphImporter::scaleChannels(Node &node, Value value,
                                              float scale, StringRef what) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t channels = type.getDimSize(1);
  std::string base = node.baseName().str();
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
FailureOr<Value> GraphImporter::matmulAsConv(Node &node, Value lhs, Value rhs) {
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
