//===- ShapeOps.cpp - ONNX shape and tensor ops ---------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The converters of the shape and tensor family: Flatten, Reshape, Identity,
// Dropout (inference: the identity), Concat, Split and a zero Pad.
//
// * Flatten, Reshape, Identity and Dropout of a constant fold at import (the
//   result is a constant named after their output), and so does a Concat of
//   constants (shape arithmetic, ConstantFolds.h).
// * Split with unequal sizes is a chunk into pieces of the sizes' greatest
//   common divisor and a cat of consecutive pieces.
// * Pad with zeros on H and W (as torch exports it in front of AveragePool)
//   is a depthwise 1x1 convolution with weight 1 and that padding.
//
//===----------------------------------------------------------------------===//

#include "ConstantFolds.h"
#include "GraphImporter.h"
#include "ONNXOpRegistry.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

/// Flatten: memfmt.flatten for axis 1, else a reshape; a constant folds.
static LogicalResult convertFlatten(GraphImporter &importer, Node &node) {
  OpBuilder &builder = importer.getBuilder();
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  FailureOr<int64_t> axis = importer.intAttr(node, "axis", 1);
  if (failed(axis))
    return failure();
  if (*axis < -rank || *axis > rank)
    return importer.invalid(node, "axis " + Twine(*axis) +
                                      " is out of range for the "
                                      "input " +
                                      formatShape(x.shape));
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  ArrayRef<int64_t> dims = x.shape;
  SmallVector<int64_t, 4> shape = {product(dims.take_front(a)),
                                   product(dims.drop_front(a))};
  if (x.isConstant()) {
    importer.setOutput(node, 0, x.reshapedConstant(shape));
    return success();
  }
  FailureOr<Value> input = importer.tensorOperand(node, 0, "input");
  if (failed(input))
    return failure();
  FailureOr<Value> y;
  if (a == 1 && rank >= 2)
    // torch.flatten(x, 1), as the zoo writes it.
    y = importer.verified(
        node,
        FlattenOp::create(builder, node.loc, importer.tensorType(shape), *input,
                          builder.getI64IntegerAttr(1), IntegerAttr()));
  else
    y = importer.reshape(node, *input, shape);
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// Reshapes input 0 to `target` (ONNX's shape: 0 copies a dimension unless
/// `allowZero`, -1 is inferred); a constant input folds.
static LogicalResult reshapeTo(GraphImporter &importer, Node &node,
                               ArrayRef<int64_t> target, int64_t allowZero) {
  OnnxValue &x = *node.inputs[0];
  SmallVector<int64_t, 4> shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, requested] : llvm::enumerate(target)) {
    int64_t dim = requested;
    if (dim == 0 && allowZero == 0) {
      if (i >= x.shape.size())
        return importer.invalid(node, "shape " + formatShape(target) +
                                          " copies dimension " + Twine(i) +
                                          " (a 0), but the input " +
                                          formatShape(x.shape) + " has rank " +
                                          Twine(x.shape.size()));
      dim = x.shape[i];
    } else if (dim == -1) {
      if (inferred >= 0)
        return importer.invalid(node, "shape " + formatShape(target) +
                                          " has more than one -1");
      inferred = i;
      shape.push_back(1);
      continue;
    } else if (dim < 0) {
      return importer.invalid(node,
                              "shape " + formatShape(target) +
                                  " has a negative dimension other than -1");
    } else if (dim == 0) {
      return importer.unsupported(
          node, "shape " + formatShape(target) +
                    " with allowzero = 1 makes an empty "
                    "tensor; empty tensors are not supported");
    }
    shape.push_back(dim);
    if (known > kMaxElements / dim)
      return importer.invalid(node, "shape " + formatShape(target) +
                                        " has more than 2^40 elements");
    known *= dim;
  }
  int64_t count = product(x.shape);
  if (inferred >= 0) {
    if (known == 0 || count % known != 0)
      return importer.invalid(node, "cannot reshape " + formatShape(x.shape) +
                                        " to " + formatShape(target) +
                                        ": the -1 cannot be inferred");
    shape[inferred] = count / known;
  } else if (known != count) {
    return importer.invalid(node, "cannot reshape " + formatShape(x.shape) +
                                      " (" + Twine(count) + " elements) to " +
                                      formatShape(shape));
  }
  return importer.setReshapedOutput(node, shape, "data");
}

/// Reshape-1 to -4: the shape is the attribute `shape`.
static LogicalResult convertReshape1(GraphImporter &importer, Node &node) {
  FailureOr<int64_t> allowZero = importer.intAttr(node, "allowzero", 0);
  if (failed(allowZero))
    return failure();
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = importer.intsAttr(node, "shape", {});
  if (failed(shape))
    return failure();
  return reshapeTo(importer, node, *shape, *allowZero);
}

/// Reshape-5 and later: the shape is input #1, a constant.
static LogicalResult convertReshape5(GraphImporter &importer, Node &node) {
  FailureOr<int64_t> allowZero = importer.intAttr(node, "allowzero", 0);
  if (failed(allowZero))
    return failure();
  if (failed(importer.checkArity(node, 2, 2, 1)))
    return failure();
  if (importer.attribute(node, "shape"))
    return importer.invalid(node, "attribute 'shape' exists only up to opset "
                                  "4; the shape is input #1");
  FailureOr<HostTensor> shape = importer.constantOperand(node, 1, "shape");
  if (failed(shape))
    return failure();
  if (shape->kind != ElementKind::Int64 || shape->shape.size() != 1)
    return importer.invalid(node, "the shape input " +
                                      quote(node.inputName(1)) +
                                      " must be a 1-D int64 tensor, got " +
                                      elementKindName(int32_t(shape->kind)) +
                                      " " + formatShape(shape->shape));
  FailureOr<SmallVector<int64_t>> dims =
      importer.intValues(node, *shape, "shape");
  if (failed(dims))
    return failure();
  return reshapeTo(importer, node, *dims, *allowZero);
}

/// Identity: the input itself.
static LogicalResult convertIdentity(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  importer.setOutput(node, 0, *node.inputs[0]);
  return success();
}

/// Dropout in inference: the identity, and its mask (when asked for, as
/// torch.onnx writes it for F.dropout: Swin's attention) a constant of all
/// true.
static LogicalResult convertDropout(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 3, 2)))
    return failure();
  FailureOr<int64_t> isTest =
      importer.intAttr(node, "is_test", importer.getOpset() < 7 ? 0 : 1);
  FailureOr<float> ratio = importer.floatAttr(node, "ratio", 0.5f);
  if (failed(isTest) || failed(ratio))
    return failure();
  if (*isTest == 0)
    return importer.unsupported(node,
                                "is_test = 0 (training) is not supported; "
                                "memfmt compiles inference");
  // Dropout-12 on: the ratio is input 1 (default 0.5). A ratio of 0 drops
  // nothing even in training mode (torchvision 0.14's Swin calls
  // F.dropout(attn, p=0.0) with training left true).
  bool dropsNothing = false;
  if (node.hasInput(1)) {
    OnnxValue &r = *node.inputs[1];
    if (r.isConstant()) {
      std::vector<float> values = r.constant->toFloats();
      dropsNothing = values.size() == 1 && values[0] == 0.0f;
    }
  }
  if (node.hasInput(2) && !dropsNothing) {
    OnnxValue &mode = *node.inputs[2];
    if (!mode.isConstant())
      return importer.unsupported(node,
                                  "training_mode " + quote(node.inputName(2)) +
                                      " is given at run time; memfmt compiles "
                                      "inference (make it a constant false)");
    std::vector<int64_t> flags = mode.constant->toInts();
    if (llvm::any_of(flags, [](int64_t f) { return f != 0; }))
      return importer.unsupported(node,
                                  "training_mode = true is not supported; "
                                  "memfmt compiles inference");
  }
  // Inference: the identity (the ratio is not used).
  OnnxValue &x = *node.inputs[0];
  importer.setOutput(node, 0, x);
  if (node.hasOutput(1)) {
    int64_t count = 1;
    for (int64_t d : x.shape)
      count *= d;
    importer.setOutput(
        node, 1,
        OnnxValue::ofConstant(
            HostTensor::fromInts(x.shape, std::vector<int64_t>(count, 1))
                .toBools()));
  }
  return success();
}

/// Concat: memfmt.cat (one input is the input itself).
static LogicalResult convertConcat(GraphImporter &importer, Node &node) {
  OpBuilder &builder = importer.getBuilder();
  if (node.numInputs() < 1 ||
      llvm::any_of(node.inputs, [](OnnxValue *v) { return !v; }))
    return importer.invalid(node,
                            "expects one or more inputs, none of them empty");
  if (!node.hasOutput(0) || node.numOutputs() != 1)
    return importer.invalid(node, "expects one output");
  FailureOr<int64_t> axis = importer.intAttr(node, "axis", 1);
  if (failed(axis))
    return failure();
  if (importer.getOpset() >= 4 && !importer.attribute(node, "axis"))
    return importer.invalid(node, "attribute 'axis' is required");
  ArrayRef<int64_t> first = node.inputs[0]->shape;
  int64_t rank = first.size();
  if (rank == 0)
    return importer.invalid(node, "cannot concatenate 0-D tensors");
  if (*axis < -rank || *axis >= rank)
    return importer.invalid(node, "axis " + Twine(*axis) +
                                      " is out of range for rank " +
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
      return importer.invalid(node, "input " + quote(node.inputName(i)) + " " +
                                        formatShape(s) + " differs from " +
                                        formatShape(first) + " outside axis " +
                                        Twine(dim));
    shape[dim] += s[dim];
  }
  // Shape arithmetic: a Concat of constants is a constant.
  if (llvm::all_of(node.inputs, [](OnnxValue *v) { return v->isConstant(); }))
    return foldConcat(importer, node, dim);
  for (unsigned i = 0; i < node.numInputs(); ++i) {
    FailureOr<Value> v = importer.tensorOperand(node, i, "input");
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  FailureOr<Value> y;
  if (operands.size() == 1)
    y = operands[0];
  else
    y = importer.verified(
        node, CatOp::create(
                  builder, node.loc, importer.tensorType(shape), operands,
                  dim == 0 ? IntegerAttr() : builder.getI64IntegerAttr(dim)));
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// Split: memfmt.chunk, and a cat of neighbours for unequal sizes.
static LogicalResult convertSplit(GraphImporter &importer, Node &node) {
  OpBuilder &builder = importer.getBuilder();
  if (node.numInputs() < 1 || !node.hasInput(0) || node.numInputs() > 2)
    return importer.invalid(node, "expects 1 or 2 inputs, got " +
                                      Twine(node.numInputs()));
  unsigned pieces = node.numOutputs();
  if (pieces < 1)
    return importer.invalid(node, "has no output");
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  FailureOr<int64_t> axis = importer.intAttr(node, "axis", 0);
  if (failed(axis))
    return failure();
  if (*axis < -rank || *axis >= rank)
    return importer.invalid(node, "axis " + Twine(*axis) +
                                      " is out of range for the "
                                      "input " +
                                      formatShape(x.shape));
  int64_t dim = *axis < 0 ? *axis + rank : *axis;
  int64_t size = x.shape[dim];
  SmallVector<int64_t> sizes;
  if (importer.getOpset() >= 13 && importer.attribute(node, "split"))
    return importer.invalid(node,
                            "attribute 'split' exists only up to opset 12; the "
                            "sizes are input #1");
  if (node.hasInput(1) && importer.attribute(node, "num_outputs"))
    return importer.invalid(node, "has both the split input and the "
                                  "attribute 'num_outputs'");
  if (node.hasInput(1)) {
    FailureOr<HostTensor> split = importer.constantOperand(node, 1, "split");
    if (failed(split))
      return failure();
    if (split->kind != ElementKind::Int64 || split->shape.size() != 1)
      return importer.invalid(node,
                              "the split input must be a 1-D int64 tensor");
    FailureOr<SmallVector<int64_t>> v =
        importer.intValues(node, *split, "split");
    if (failed(v))
      return failure();
    sizes = *v;
  } else if (importer.attribute(node, "split")) {
    FailureOr<SmallVector<int64_t>> v = importer.intsAttr(node, "split", {});
    if (failed(v))
      return failure();
    sizes = *v;
  } else if (importer.attribute(node, "num_outputs")) {
    // Split-18: parts of ceil(size / num_outputs), the last one smaller.
    if (importer.getOpset() < 18)
      return importer.invalid(node, "attribute 'num_outputs' exists from "
                                    "opset 18");
    FailureOr<int64_t> n = importer.intAttr(node, "num_outputs", 0);
    if (failed(n))
      return failure();
    if (*n != static_cast<int64_t>(pieces))
      return importer.invalid(node, "num_outputs is " + Twine(*n) +
                                        " but the node has " + Twine(pieces) +
                                        " outputs");
    int64_t part = (size + *n - 1) / *n;
    for (int64_t i = 0; i < *n; ++i)
      sizes.push_back(std::clamp<int64_t>(size - i * part, 0, part));
  } else {
    if (size % pieces != 0)
      return importer.invalid(node, "cannot split dimension " + Twine(dim) +
                                        " of " + formatShape(x.shape) +
                                        " into " + Twine(pieces) +
                                        " equal parts");
    sizes.assign(pieces, size / pieces);
  }
  if (sizes.size() != pieces)
    return importer.invalid(node, "split " + formatShape(sizes) + " has " +
                                      Twine(sizes.size()) + " sizes for " +
                                      Twine(pieces) + " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return importer.invalid(node, "split " + formatShape(sizes) +
                                        " has a negative size");
    total += s;
  }
  if (total != size)
    return importer.invalid(
        node, "split " + formatShape(sizes) + " adds up to " + Twine(total) +
                  ", but dimension " + Twine(dim) + " of " +
                  formatShape(x.shape) + " is " + Twine(size));
  if (llvm::is_contained(sizes, 0))
    return importer.unsupported(node,
                                "split " + formatShape(sizes) +
                                    " makes an empty tensor; empty tensors are "
                                    "not supported");
  auto pieceShape = [&](int64_t s) {
    SmallVector<int64_t, 4> shape(x.shape);
    shape[dim] = s;
    return shape;
  };
  if (pieces == 1) {
    importer.setOutput(node, 0, x);
    return success();
  }
  FailureOr<Value> input = importer.tensorOperand(node, 0, "input");
  if (failed(input))
    return failure();
  // Chunk into pieces of gcd(sizes), then concatenate neighbours.
  int64_t unit = 0;
  for (int64_t s : sizes)
    unit = std::gcd(unit, s);
  int64_t chunks = size / unit;
  SmallVector<Type> chunkTypes(chunks, importer.tensorType(pieceShape(unit)));
  auto chunk = ChunkOp::create(
      builder, node.loc, chunkTypes, *input, builder.getI64IntegerAttr(chunks),
      dim == 0 ? IntegerAttr() : builder.getI64IntegerAttr(dim));
  if (failed(importer.verified(node, chunk)))
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
      piece = importer.verified(
          node, CatOp::create(builder, node.loc,
                              importer.tensorType(pieceShape(s)), parts,
                              dim == 0 ? IntegerAttr()
                                       : builder.getI64IntegerAttr(dim)));
    if (failed(piece))
      return failure();
    importer.setOutput(node, i, OnnxValue::runtime(*piece, pieceShape(s)));
  }
  return success();
}

/// Pad with zeros (mode "constant", value 0) on the spatial dims of a 4-D
/// tensor: a depthwise 1x1 convolution with weight 1 and that padding (x * 1
/// + 0, exact); on other dims, a concatenation with zeros. No padding is the
/// identity.
static LogicalResult padWith(GraphImporter &importer, Node &node,
                             ArrayRef<int64_t> pads, float value,
                             StringRef mode) {
  OpBuilder &builder = importer.getBuilder();
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return importer.invalid(
        node, "pads " + formatShape(pads) + " must have " + Twine(2 * rank) +
                  " values for the input " + formatShape(x.shape));
  if (mode != "constant" || value != 0.0f)
    return importer.unsupported(node,
                                "only zero padding (mode 'constant', value 0) "
                                "is supported, got mode '" +
                                    mode + "', value " + std::to_string(value));
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; })) {
    importer.setOutput(node, 0, x);
    return success();
  }
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return importer.unsupported(
        node, "only non-negative padding is supported, got pads " +
                  formatShape(pads) + " for " + formatShape(x.shape));
  FailureOr<Value> input = importer.tensorOperand(node, 0, "data");
  if (failed(input))
    return failure();
  if (rank != 4 || pads[0] || pads[1] || pads[4] || pads[5]) {
    // Other dims (Swin pads H and W of an [N, H, W, C] tensor to whole
    // windows): zeros concatenated before and after along each padded dim.
    Value y = *input;
    SmallVector<int64_t, 4> shape(x.shape);
    std::string name = node.baseName().str();
    for (int64_t d = 0; d < rank; ++d) {
      int64_t before = pads[d], after = pads[d + rank];
      if (!before && !after)
        continue;
      SmallVector<Value> parts;
      auto zeros = [&](int64_t size) {
        SmallVector<int64_t, 4> zeroShape(shape);
        zeroShape[d] = size;
        parts.push_back(importer.splatConstant(name, zeroShape, 0.0));
      };
      if (before)
        zeros(before);
      parts.push_back(y);
      if (after)
        zeros(after);
      shape[d] += before + after;
      FailureOr<Value> cat = importer.verified(
          node,
          CatOp::create(builder, node.loc, importer.tensorType(shape), parts,
                        d == 0 ? IntegerAttr() : builder.getI64IntegerAttr(d)));
      if (failed(cat))
        return failure();
      y = *cat;
    }
    importer.setOutput(node, 0, OnnxValue::runtime(y, shape));
    return success();
  }
  int64_t channels = x.shape[1];
  std::string base = node.baseName().str();
  FailureOr<Value> ones = importer.derivedWeight(
      node, base, "ones",
      HostTensor::fromFloats({channels, 1, 1, 1},
                             std::vector<float>(channels, 1.0f)));
  if (failed(ones))
    return failure();
  SmallVector<int64_t, 4> shape = {x.shape[0], channels,
                                   x.shape[2] + pads[2] + pads[6],
                                   x.shape[3] + pads[3] + pads[7]};
  FailureOr<Value> y = importer.verified(
      node,
      Conv2dOp::create(
          builder, node.loc, importer.tensorType(shape), *input, *ones, Value(),
          DenseI64ArrayAttr(),
          builder.getDenseI64ArrayAttr({pads[2], pads[3], pads[6], pads[7]}),
          DenseI64ArrayAttr(),
          channels == 1 ? IntegerAttr() : builder.getI64IntegerAttr(channels)));
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// Pad-2 to -10: the pads and the value are attributes. (Pad-1 named them
/// differently and is not registered.)
static LogicalResult convertPad2(GraphImporter &importer, Node &node) {
  FailureOr<std::string> mode = importer.stringAttr(node, "mode", "constant");
  if (failed(mode))
    return failure();
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  FailureOr<SmallVector<int64_t>> pads = importer.intsAttr(node, "pads", {});
  FailureOr<float> value = importer.floatAttr(node, "value", 0.0f);
  if (failed(pads) || failed(value))
    return failure();
  return padWith(importer, node, *pads, *value, *mode);
}

/// Pad-11 and later: the pads and the value are inputs #1 and #2,
/// constants.
static LogicalResult convertPad11(GraphImporter &importer, Node &node) {
  FailureOr<std::string> mode = importer.stringAttr(node, "mode", "constant");
  if (failed(mode))
    return failure();
  if (failed(importer.checkArity(node, 2, importer.getOpset() >= 18 ? 4 : 3,
                                 1)))
    return failure();
  if (importer.attribute(node, "pads") || importer.attribute(node, "value"))
    return importer.invalid(node, "attributes 'pads' and 'value' exist only "
                                  "up to opset 10; they are inputs #1 and #2");
  FailureOr<HostTensor> p = importer.constantOperand(node, 1, "pads");
  if (failed(p))
    return failure();
  if (p->kind != ElementKind::Int64 || p->shape.size() != 1)
    return importer.invalid(node, "the pads input must be a 1-D int64 tensor");
  FailureOr<SmallVector<int64_t>> pads = importer.intValues(node, *p, "pads");
  if (failed(pads))
    return failure();
  float value = 0.0f;
  if (node.hasInput(2)) {
    FailureOr<HostTensor> c =
        importer.constantOperand(node, 2, "constant_value");
    if (failed(c))
      return failure();
    if (c->numElements() != 1 || !isFloatKind(c->kind))
      return importer.invalid(node, "constant_value must be one "
                                    "floating-point value");
    value = c->toFloats()[0];
  }
  if (node.hasInput(3)) {
    // Pad-18: the pads are for these axes only ([begins..., ends...]).
    FailureOr<HostTensor> a = importer.constantOperand(node, 3, "axes");
    if (failed(a))
      return failure();
    if (a->kind != ElementKind::Int64 || a->shape.size() != 1)
      return importer.invalid(node, "the axes input must be a 1-D int64 "
                                    "tensor");
    FailureOr<SmallVector<int64_t>> axes = importer.intValues(node, *a, "axes");
    if (failed(axes))
      return failure();
    int64_t rank = node.inputs[0]->shape.size();
    int64_t count = axes->size();
    if (static_cast<int64_t>(pads->size()) != 2 * count)
      return importer.invalid(node, "pads " + formatShape(*pads) + " has " +
                                        Twine(pads->size()) + " values for " +
                                        Twine(count) + " axes");
    SmallVector<int64_t> full(2 * rank, 0);
    for (auto [i, axis] : llvm::enumerate(*axes)) {
      if (axis < -rank || axis >= rank)
        return importer.invalid(node, "axis " + Twine(axis) +
                                          " is out of range for the input " +
                                          formatShape(node.inputs[0]->shape));
      int64_t d = axis < 0 ? axis + rank : axis;
      full[d] = (*pads)[i];
      full[d + rank] = (*pads)[i + count];
    }
    *pads = full;
  }
  return padWith(importer, node, *pads, value, *mode);
}

void mlir::memfmt::onnx_import::registerShapeOps(ONNXOpRegistry &registry) {
  registry.add(
      {"Flatten",
       {"axis"},
       {{1, convertFlatten}},
       {"`flatten` (axis 1) or `reshape`", "any axis, negative too", ""}});
  registry.add({"Reshape",
                {"allowzero", "shape", "consumed_inputs"},
                {{1, convertReshape1}, {5, convertReshape5}},
                {"`reshape`",
                 "a constant shape (initializer or Constant) with 0 (copy) "
                 "and -1 (infer)",
                 "a shape given at run time; `allowzero = 1` with a 0 (empty "
                 "tensors)"}});
  registry.add({"Identity",
                {},
                {{1, convertIdentity}},
                {"(the input)", "any tensor", ""}});
  registry.add({"Dropout",
                {"ratio", "is_test", "seed", "consumed_inputs"},
                {{1, convertDropout}},
                {"(the input; its mask a constant of all true)",
                 "inference: ratio ignored; `training_mode` a constant "
                 "false, or true with a constant ratio 0",
                 "`training_mode` true with another ratio, or at run time"}});
  registry.add({"Concat",
                {"axis"},
                {{1, convertConcat}},
                {"`cat`", "along the batch and any other axis", ""}});
  registry.add(
      {"Split",
       {"axis", "num_outputs", "split"},
       {{1, convertSplit}},
       {"`chunk` (+ `cat`)",
        "along the batch and any axis; equal parts, sizes from the attribute "
        "(opset < 13) or a constant input, `num_outputs` (opset 18): unequal "
        "sizes are a chunk into pieces of their gcd and a cat of neighbours",
        "sizes at run time; empty pieces"}});
  // Beyond the core set: the zero Pad torch exports in front of
  // AveragePool (count_include_pad), and Swin's pad to whole windows.
  registry.add({"Pad",
                {"mode", "pads", "value"},
                {{2, convertPad2}, {11, convertPad11}},
                {"`conv2d` (depthwise, weight 1), or `cat` with zeros",
                 "zeros (mode constant, value 0): on the spatial dims of a "
                 "4-D tensor a convolution, as torch exports around "
                 "AveragePool; on other dims (Swin's [N, H, W, C]) a "
                 "concatenation; the axes input (opset 18)",
                 "other modes and values; negative pads"}});
}
