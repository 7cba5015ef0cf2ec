//===- ConvPoolOps.cpp - ONNX convolution and pooling ---------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The converters of the convolution and pooling family: Conv, MaxPool,
// AveragePool, GlobalAveragePool and ReduceMean over H and W.
//
// * 1-D convolution and pooling (rank-3 inputs) run as 2-D with a height of 1
//   (memfmt.reshape around the op). 3-D ones are unsupported.
// * ceil_mode: ONNX's output size agrees with ATen's (memfmt's) except where
//   ONNX keeps a last window that lies entirely in the end padding, past the
//   input; ATen drops it, and such a node is unsupported.
// * ONNX pooling's default stride is 1 (ATen's is the kernel), so the stride
//   is always written out.
// * ReduceMean over H and W, as torch exports a global average pooling, is
//   adaptive average pooling to 1x1.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "ONNXOpRegistry.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"
#include "memfmt/Layout/Windows.h"

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

/// Checks that `x` is [N, C, W] or [N, C, H, W]: a 3-D `what` (rank 5) is
/// unsupported, other ranks are invalid.
static LogicalResult checkSpatialRank(GraphImporter &importer, Node &node,
                                      const OnnxValue &x, StringRef what) {
  int64_t rank = x.shape.size();
  if (rank == 5)
    return importer.unsupported(node, "3-D " + what + " (input " +
                                          formatShape(x.shape) +
                                          ") is not supported; only 1-D and "
                                          "2-D");
  if (rank != 3 && rank != 4)
    return importer.invalid(node, "the input " + formatShape(x.shape) +
                                      " must have rank 3 or 4 ([N, C, ...])");
  return success();
}

/// Conv: memfmt.conv2d (1-D as 2-D with height 1; auto_pad resolved to
/// explicit padding).
static LogicalResult convertConv(GraphImporter &importer, Node &node) {
  OpBuilder &builder = importer.getBuilder();
  if (failed(importer.checkArity(node, 2, 3, 1)))
    return failure();
  OnnxValue &x = *node.inputs[0];
  if (failed(checkSpatialRank(importer, node, x, "convolution")))
    return failure();
  int64_t rank = x.shape.size();
  int64_t spatial = rank - 2;
  OnnxValue &w = *node.inputs[1];
  if (static_cast<int64_t>(w.shape.size()) != rank)
    return importer.invalid(node, "the weight " + formatShape(w.shape) +
                                      " must have the input's rank " +
                                      std::to_string(rank));
  FailureOr<int64_t> group = importer.intAttr(node, "group", 1);
  FailureOr<std::string> autoPad =
      importer.stringAttr(node, "auto_pad", "NOTSET");
  FailureOr<SmallVector<int64_t>> kernelShape =
      importer.intsAttr(node, "kernel_shape", {});
  FailureOr<SmallVector<int64_t>> strides =
      importer.intsAttr(node, "strides", SmallVector<int64_t>(spatial, 1));
  FailureOr<SmallVector<int64_t>> dilations =
      importer.intsAttr(node, "dilations", SmallVector<int64_t>(spatial, 1));
  FailureOr<SmallVector<int64_t>> pads =
      importer.intsAttr(node, "pads", SmallVector<int64_t>(2 * spatial, 0));
  if (failed(group) || failed(autoPad) || failed(kernelShape) ||
      failed(strides) || failed(dilations) || failed(pads))
    return failure();
  ArrayRef<int64_t> weightSpatial = ArrayRef<int64_t>(w.shape).drop_front(2);
  if (!kernelShape->empty() && ArrayRef<int64_t>(*kernelShape) != weightSpatial)
    return importer.invalid(node, "kernel_shape " + formatShape(*kernelShape) +
                                      " does not match the weight " +
                                      formatShape(w.shape));
  if (static_cast<int64_t>(strides->size()) != spatial ||
      static_cast<int64_t>(dilations->size()) != spatial ||
      static_cast<int64_t>(pads->size()) != 2 * spatial)
    return importer.invalid(node, "strides, dilations and pads must have " +
                                      std::to_string(spatial) + ", " +
                                      std::to_string(spatial) + " and " +
                                      std::to_string(2 * spatial) + " values");
  if (llvm::any_of(*strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(*dilations, [](int64_t d) { return d < 1; }) ||
      llvm::any_of(*pads, [](int64_t p) { return p < 0; }) || *group < 1)
    return importer.invalid(node,
                            "strides, dilations and group must be positive and "
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
      int64_t extent =
          ::memfmt::layout::dilatedExtent(kernel[d], dilation[d]);
      int64_t total =
          std::max<int64_t>(0, (out - 1) * stride[d] + extent - in[d]);
      int64_t small = total / 2;
      pad[d] = *autoPad == "SAME_UPPER" ? small : total - small;
      pad[d + spatial] = total - pad[d];
    }
  } else if (*autoPad == "VALID") {
    pad.assign(2 * spatial, 0);
  } else if (*autoPad != "NOTSET" && !autoPad->empty()) {
    return importer.invalid(node, "auto_pad '" + *autoPad +
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
    return importer.invalid(node,
                            "the kernel " + formatShape(weightSpatial) +
                                " (dilated, with padding) does not fit the "
                                "input " +
                                formatShape(x.shape));

  FailureOr<Value> input = importer.tensorOperand(node, 0, "X");
  FailureOr<Value> weightValue = importer.tensorOperand(node, 1, "W");
  if (failed(input) || failed(weightValue))
    return failure();
  Value bias;
  if (node.hasInput(2)) {
    FailureOr<Value> b = importer.tensorOperand(node, 2, "B");
    if (failed(b))
      return failure();
    bias = *b;
  }
  int64_t n = x.shape[0], outChannels = w.shape[0];
  if (spatial == 1) {
    input = importer.reshape(node, *input, {n, x.shape[1], 1, x.shape[2]});
    weightValue = importer.reshape(node, *weightValue,
                                   {w.shape[0], w.shape[1], 1, w.shape[2]});
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
  FailureOr<Value> y = importer.verified(
      node,
      Conv2dOp::create(
          builder, node.loc, importer.tensorType({n, outChannels, oh, ow}),
          *input, *weightValue, bias, pair(stride), paddingAttr, pair(dilation),
          *group == 1 ? IntegerAttr() : builder.getI64IntegerAttr(*group)));
  if (failed(y))
    return failure();
  SmallVector<int64_t, 4> shape = {n, outChannels, oh, ow};
  if (spatial == 1) {
    shape = {n, outChannels, ow};
    y = importer.reshape(node, *y, shape);
    if (failed(y))
      return failure();
  }
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// MaxPool (`isMax`) and AveragePool: memfmt.max_pool2d (with indices where
/// the Indices output is used) or memfmt.avg_pool2d.
static LogicalResult convertPool(GraphImporter &importer, Node &node,
                                 bool isMax) {
  OpBuilder &builder = importer.getBuilder();
  if (failed(importer.checkArity(node, 1, 1, isMax ? 2 : 1)))
    return failure();
  OnnxValue &x = *node.inputs[0];
  if (failed(checkSpatialRank(importer, node, x, "pooling")))
    return failure();
  int64_t spatial = x.shape.size() - 2;
  bool withIndices = isMax && node.hasOutput(1);
  FailureOr<SmallVector<int64_t>> kernel =
      importer.intsAttr(node, "kernel_shape", {});
  FailureOr<SmallVector<int64_t>> strides =
      importer.intsAttr(node, "strides", SmallVector<int64_t>(spatial, 1));
  FailureOr<SmallVector<int64_t>> dilations =
      importer.intsAttr(node, "dilations", SmallVector<int64_t>(spatial, 1));
  FailureOr<SmallVector<int64_t>> pads =
      importer.intsAttr(node, "pads", SmallVector<int64_t>(2 * spatial, 0));
  FailureOr<std::string> autoPad =
      importer.stringAttr(node, "auto_pad", "NOTSET");
  FailureOr<int64_t> ceilMode = importer.intAttr(node, "ceil_mode", 0);
  FailureOr<int64_t> countIncludePad =
      importer.intAttr(node, "count_include_pad", 0);
  FailureOr<int64_t> storageOrder = importer.intAttr(node, "storage_order", 0);
  if (failed(kernel) || failed(strides) || failed(dilations) || failed(pads) ||
      failed(autoPad) || failed(ceilMode) || failed(countIncludePad) ||
      failed(storageOrder))
    return failure();
  if (kernel->empty())
    return importer.invalid(node, "attribute 'kernel_shape' is required");
  if (static_cast<int64_t>(kernel->size()) != spatial ||
      static_cast<int64_t>(strides->size()) != spatial ||
      static_cast<int64_t>(dilations->size()) != spatial ||
      static_cast<int64_t>(pads->size()) != 2 * spatial)
    return importer.invalid(
        node, "kernel_shape, strides, dilations and pads must "
              "have " +
                  Twine(spatial) + ", " + Twine(spatial) + ", " +
                  Twine(spatial) + " and " + Twine(2 * spatial) +
                  " values for the input " + formatShape(x.shape));
  if (llvm::any_of(*kernel, [](int64_t k) { return k < 1; }) ||
      llvm::any_of(*strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(*dilations, [](int64_t d) { return d < 1; }) ||
      llvm::any_of(*pads, [](int64_t p) { return p < 0; }))
    return importer.invalid(node, "kernel_shape, strides and dilations must be "
                                  "positive and pads non-negative");
  if (*storageOrder != 0 && *storageOrder != 1)
    return importer.invalid(node, "storage_order must be 0 or 1");
  if (!isMax && importer.attribute(node, "dilations")) {
    if (importer.getOpset() < 19)
      return importer.invalid(node, "AveragePool's attribute 'dilations' "
                                    "exists from opset 19");
    if (llvm::any_of(*dilations, [](int64_t d) { return d != 1; }))
      return importer.unsupported(node, "average pooling with dilations " +
                                            formatShape(*dilations) +
                                            " is not supported");
  }
  SmallVector<int64_t, 2> in(ArrayRef<int64_t>(x.shape).drop_front(2));
  SmallVector<int64_t, 4> pad(pads->begin(), pads->end());
  SmallVector<int64_t, 2> out(spatial);
  bool ceil = *ceilMode != 0;
  bool explicitPads = *autoPad == "NOTSET" || autoPad->empty();
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t k = (*kernel)[d], s = (*strides)[d];
    int64_t extent = ::memfmt::layout::dilatedExtent(k, (*dilations)[d]);
    if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
      out[d] = (in[d] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out[d] - 1) * s + extent - in[d]);
      int64_t small = total / 2;
      pad[d] = *autoPad == "SAME_UPPER" ? small : total - small;
      pad[d + spatial] = total - pad[d];
    } else if (*autoPad == "VALID") {
      pad[d] = pad[d + spatial] = 0;
      out[d] = std::max<int64_t>(0, ::memfmt::layout::convOutputSize(
                                        in[d], k, s, 0, 0, (*dilations)[d]));
    } else if (explicitPads) {
      // ONNX's count (ceil_mode rounds up); a window that does not fit the
      // padded input at all gives none, whatever the rounding.
      bool fits = in[d] + pad[d] + pad[d + spatial] >= extent;
      out[d] = fits ? ::memfmt::layout::windowCount(in[d], k, s, pad[d],
                                                  pad[d + spatial],
                                                  (*dilations)[d], ceil)
                    : 0;
    } else {
      return importer.invalid(node, "auto_pad '" + *autoPad +
                                        "' is not one of NOTSET, SAME_UPPER, "
                                        "SAME_LOWER, VALID");
    }
    if (out[d] < 1)
      return importer.invalid(node,
                              "the window " + formatShape(*kernel) +
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
        return importer.unsupported(node,
                                    "ceil_mode adds a last window that lies in "
                                    "the end padding, past the input (ONNX "
                                    "keeps it, memfmt follows ATen and drops "
                                    "it)");
    }
    useCeil = true;
  }
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t extent =
        ::memfmt::layout::dilatedExtent((*kernel)[d], (*dilations)[d]);
    if (pad[d] >= extent || pad[d + spatial] >= extent)
      return importer.unsupported(node,
                                  "pads " + formatShape(pad) +
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
      return importer.unsupported(node,
                                  "the Indices output is supported for a "
                                  "single 2-D plane (N = C = 1) only: memfmt's "
                                  "indices count within each plane");
    if (*storageOrder == 1 && x.shape[2] != 1 && x.shape[3] != 1)
      return importer.unsupported(node,
                                  "the Indices output with storage_order = 1 "
                                  "(column-major) is not supported");
  }

  FailureOr<Value> input = importer.tensorOperand(node, 0, "X");
  if (failed(input))
    return failure();
  SmallVector<int64_t, 2> k2(kernel->begin(), kernel->end());
  SmallVector<int64_t, 2> s2(strides->begin(), strides->end());
  SmallVector<int64_t, 2> d2(dilations->begin(), dilations->end());
  if (spatial == 1) {
    input =
        importer.reshape(node, *input, {x.shape[0], x.shape[1], 1, x.shape[2]});
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
        builder, node.loc, importer.tensorType(shape),
        RankedTensorType::get(shape, builder.getI64Type()), *input, kernelAttr,
        strideAttr, paddingAttr, dilationAttr, ceilAttr);
  else if (isMax)
    op = MaxPool2dOp::create(builder, node.loc, importer.tensorType(shape),
                             *input, kernelAttr, strideAttr, paddingAttr,
                             dilationAttr, ceilAttr);
  else
    op = AvgPool2dOp::create(
        builder, node.loc, importer.tensorType(shape), *input, kernelAttr,
        strideAttr, paddingAttr, ceilAttr,
        *countIncludePad ? BoolAttr() : builder.getBoolAttr(false));
  FailureOr<Value> y = importer.verified(node, op);
  if (failed(y))
    return failure();
  if (spatial == 1) {
    shape = {x.shape[0], x.shape[1], out[1]};
    y = importer.reshape(node, *y, shape);
    if (failed(y))
      return failure();
  }
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  if (withIndices)
    importer.setOutput(
        node, 1,
        OnnxValue::runtime(op->getResult(1), shape, ElementKind::Int64));
  return success();
}

/// MaxPool (registered per operator name).
static LogicalResult convertMaxPool(GraphImporter &importer, Node &node) {
  return convertPool(importer, node, /*isMax=*/true);
}

/// AveragePool (registered per operator name).
static LogicalResult convertAveragePool(GraphImporter &importer, Node &node) {
  return convertPool(importer, node, /*isMax=*/false);
}

/// GlobalAveragePool: memfmt.adaptive_avg_pool2d to 1x1.
static LogicalResult convertGlobalAveragePool(GraphImporter &importer,
                                              Node &node) {
  OpBuilder &builder = importer.getBuilder();
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  OnnxValue &x = *node.inputs[0];
  if (failed(checkSpatialRank(importer, node, x, "global pooling")))
    return failure();
  int64_t rank = x.shape.size();
  FailureOr<Value> input = importer.tensorOperand(node, 0, "X");
  if (failed(input))
    return failure();
  int64_t n = x.shape[0], c = x.shape[1];
  if (rank == 3) {
    input = importer.reshape(node, *input, {n, c, 1, x.shape[2]});
    if (failed(input))
      return failure();
  }
  FailureOr<Value> y = importer.verified(
      node, AdaptiveAvgPool2dOp::create(
                builder, node.loc, importer.tensorType({n, c, 1, 1}), *input,
                builder.getDenseI64ArrayAttr({1, 1})));
  if (failed(y))
    return failure();
  SmallVector<int64_t, 4> shape = {n, c, 1, 1};
  if (rank == 3) {
    shape = {n, c, 1};
    y = importer.reshape(node, *y, shape);
    if (failed(y))
      return failure();
  }
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// The mean over the spatial dims of a 4-D tensor: adaptive average pooling
/// to 1x1 (and a reshape without keepdims). `axes` are the ones the node
/// names (empty: every axis).
static LogicalResult reduceMeanOver(GraphImporter &importer, Node &node,
                                    ArrayRef<int64_t> axes) {
  OpBuilder &builder = importer.getBuilder();
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  FailureOr<int64_t> keepDims = importer.intAttr(node, "keepdims", 1);
  if (failed(keepDims))
    return failure();
  SmallVector<int64_t> all;
  if (axes.empty()) {
    all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    axes = all;
  }
  SmallVector<int64_t> normalized;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      return importer.invalid(node, "axis " + Twine(axis) +
                                        " is out of range for the "
                                        "input " +
                                        formatShape(x.shape));
    normalized.push_back(axis < 0 ? axis + rank : axis);
  }
  llvm::sort(normalized);
  if (rank != 4 || normalized != SmallVector<int64_t>{2, 3})
    return importer.unsupported(
        node, "only the mean over the spatial axes (2, 3) of "
              "a 4-D tensor is supported, got axes " +
                  formatShape(axes) + " for " + formatShape(x.shape));
  FailureOr<Value> input = importer.tensorOperand(node, 0, "data");
  if (failed(input))
    return failure();
  SmallVector<int64_t, 4> shape = {x.shape[0], x.shape[1], 1, 1};
  FailureOr<Value> y = importer.verified(
      node, AdaptiveAvgPool2dOp::create(builder, node.loc,
                                        importer.tensorType(shape), *input,
                                        builder.getDenseI64ArrayAttr({1, 1})));
  if (failed(y))
    return failure();
  if (!*keepDims) {
    shape = {x.shape[0], x.shape[1]};
    y = importer.reshape(node, *y, shape);
    if (failed(y))
      return failure();
  }
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// ReduceMean-1 to -17: the axes are an attribute.
static LogicalResult convertReduceMean1(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  if (importer.attribute(node, "noop_with_empty_axes"))
    return importer.invalid(node, "attribute 'noop_with_empty_axes' exists "
                                  "from opset 18");
  FailureOr<SmallVector<int64_t>> axes = importer.intsAttr(node, "axes", {});
  if (failed(axes))
    return failure();
  return reduceMeanOver(importer, node, *axes);
}

/// ReduceMean-18 and later: the axes are the optional input #1, a constant;
/// without it (or with no axes) `noop_with_empty_axes` decides between the
/// mean over every axis and the identity.
static LogicalResult convertReduceMean18(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 2, 1)))
    return failure();
  if (importer.attribute(node, "axes"))
    return importer.invalid(node, "attribute 'axes' exists only up to opset "
                                  "17; the axes are input #1");
  FailureOr<int64_t> noop = importer.intAttr(node, "noop_with_empty_axes", 0);
  if (failed(noop))
    return failure();
  SmallVector<int64_t> axes;
  if (node.hasInput(1)) {
    FailureOr<HostTensor> a = importer.constantOperand(node, 1, "axes");
    if (failed(a))
      return failure();
    if (a->kind != ElementKind::Int64 || a->shape.size() != 1)
      return importer.invalid(node, "the axes input must be a 1-D int64 "
                                    "tensor");
    FailureOr<SmallVector<int64_t>> v = importer.intValues(node, *a, "axes");
    if (failed(v))
      return failure();
    axes = *v;
  }
  if (axes.empty() && *noop) {
    importer.setOutput(node, 0, *node.inputs[0]);
    return success();
  }
  return reduceMeanOver(importer, node, axes);
}

void mlir::memfmt::onnx_import::registerConvPoolOps(ONNXOpRegistry &registry) {
  registry.add(
      {"Conv",
       {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
       {{1, convertConv}},
       {"`conv2d`",
        "1-D (as 2-D with height 1) and 2-D; `group`, `dilations`, "
        "`strides`, `pads` (asymmetric: 4 values top, left, bottom, right), "
        "`auto_pad` (NOTSET, SAME_UPPER, SAME_LOWER, VALID), `kernel_shape`; "
        "weight and bias as initializers or at run time",
        "3-D"}});
  registry.add(
      {"MaxPool",
       {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
        "storage_order", "strides"},
       {{1, convertMaxPool}},
       {"`max_pool2d`, `max_pool2d_with_indices`",
        "1-D and 2-D; `kernel_shape`, `strides` (default 1, always written), "
        "`pads`, `dilations`, `ceil_mode`, `auto_pad`, `storage_order`; the "
        "Indices output for one plane (N = C = 1; any `storage_order` when H "
        "or W is 1)",
        "3-D; Indices for N·C > 1 (memfmt's indices count within a plane, "
        "ONNX's across the tensor); a `ceil_mode` last window that lies "
        "entirely in the end padding (ONNX keeps it, ATen and memfmt drop "
        "it); pads not smaller than the window"}});
  registry.add({"AveragePool",
                {"auto_pad", "ceil_mode", "count_include_pad", "dilations",
                 "kernel_shape", "pads", "strides"},
                {{1, convertAveragePool}},
                {"`avg_pool2d`",
                 "1-D and 2-D; `count_include_pad` (ONNX default 0), "
                 "`ceil_mode`, `pads`, `auto_pad`, `dilations` of 1 "
                 "(opset 19)",
                 "as MaxPool; other dilations"}});
  registry.add({"GlobalAveragePool",
                {},
                {{1, convertGlobalAveragePool}},
                {"`adaptive_avg_pool2d` to 1x1", "1-D and 2-D", "3-D"}});
  // Beyond the core set: the spatial mean torch exports for a global
  // average pooling.
  registry.add(
      {"ReduceMean",
       {"axes", "keepdims", "noop_with_empty_axes"},
       {{1, convertReduceMean1}, {18, convertReduceMean18}},
       {"`adaptive_avg_pool2d` to 1x1",
        "over the spatial axes of a 4-D tensor, `keepdims`; the axes as an "
        "attribute (opset < 18) or a constant input, "
        "`noop_with_empty_axes`",
        "other axes"}});
}
