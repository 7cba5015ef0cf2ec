//===- ShapeArithmetic.cpp - Shape logic folded at import -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The static shape logic exporters write around reshapes and channel
// shuffles (`x.view(x.size(0), -1)` becomes Shape, Gather, Unsqueeze,
// Concat, Reshape) is computed here, at import, on values known at compile
// time, so none of it reaches the IR: memfmt compiles static shapes, so a
// Shape is always a constant.
//
// * Shape and Size of any value (its shape is static), Gather, Slice,
//   ConstantOfShape, Cast and Range of constants fold to constants (int64,
//   float or bool); the broadcasting folds (Add, Mul, Sub, Div, Concat,
//   Equal, Less, Greater, Where, Expand) are in ConstantFolds.cpp.
// * Slice, Gather and Transpose of a run-time tensor are memfmt.slice (per
//   run of gathered indices, concatenated) and memfmt.permute (data, not
//   shape logic, but they share the index rules with their folds).
// * Unsqueeze and Squeeze of a run-time tensor are a memfmt.reshape; a Cast
//   of a floating-point tensor to a floating-point type is the identity
//   (memfmt computes in the model's element type).
// * Anything else on a run-time tensor is unsupported, with the reason.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "HostValues.h"
#include "ONNXOpRegistry.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

#include <algorithm>
#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

namespace {

/// An axis attribute or input value normalised into [0, rank).
FailureOr<int64_t> normalizeAxis(GraphImporter &importer, Node &node,
                                 int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return importer.invalid(node, "axis " + Twine(axis) +
                                      " is out of range for rank " +
                                      Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

/// The axes of Unsqueeze and Squeeze (after checking the node's arity): the
/// attribute before opset 13, the (optional for Squeeze) input #1 from 13.
FailureOr<SmallVector<int64_t>> axesOf(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, importer.getOpset() >= 13 ? 2 : 1,
                                 1)))
    return failure();
  if (importer.getOpset() >= 13) {
    if (importer.attribute(node, "axes"))
      return importer.invalid(node, "attribute 'axes' exists only up to "
                                    "opset 12; the axes are input #1");
    if (!node.hasInput(1))
      return SmallVector<int64_t>();
    return intsInput(importer, node, 1, "axes");
  }
  return importer.intsAttr(node, "axes", {});
}

//===----------------------------------------------------------------------===//
// Converters
//===----------------------------------------------------------------------===//

/// Shape (start and end from opset 15): the input's static shape.
LogicalResult convertShape(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  ArrayRef<int64_t> shape = node.inputs[0]->shape;
  int64_t rank = shape.size();
  FailureOr<int64_t> start = importer.intAttr(node, "start", 0);
  FailureOr<int64_t> end = importer.intAttr(node, "end", rank);
  if (failed(start) || failed(end))
    return failure();
  auto clampAxis = [&](int64_t a) {
    return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank);
  };
  int64_t from = clampAxis(*start), to = std::max(from, clampAxis(*end));
  SmallVector<int64_t> dims(shape.begin() + from, shape.begin() + to);
  importer.setOutput(node, 0,
                     OnnxValue::ofConstant(HostTensor::fromInts(
                         {int64_t(dims.size())}, dims)));
  return success();
}

/// Size: the input's number of elements.
LogicalResult convertSize(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  int64_t count = 1;
  for (int64_t d : node.inputs[0]->shape)
    count *= d;
  importer.setOutput(node, 0,
                     OnnxValue::ofConstant(HostTensor::fromInts({}, {count})));
  return success();
}

/// Gather of run-time data at constant `indices` along `axis` (for example
/// ViT's class token, `x[:, 0]`): one memfmt.slice per run of consecutive
/// indices, a memfmt.cat of the runs, and a reshape to the result's shape.
static LogicalResult gatherRuntime(GraphImporter &importer, Node &node,
                                   int64_t axis, ArrayRef<int64_t> indices,
                                   ArrayRef<int64_t> shape) {
  FailureOr<Value> data = importer.tensorOperand(node, 0, "data");
  if (failed(data))
    return failure();
  SmallVector<Value> runs;
  int64_t extent = 0;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i + 1;
    while (j < indices.size() && indices[j] == indices[j - 1] + 1)
      ++j;
    FailureOr<Value> run = importer.slice(node, *data, axis, indices[i],
                                          indices[j - 1] + 1);
    if (failed(run))
      return failure();
    runs.push_back(*run);
    extent += int64_t(j - i);
    i = j;
  }
  FailureOr<Value> y = runs.front();
  if (runs.size() > 1) {
    OpBuilder &builder = importer.getBuilder();
    SmallVector<int64_t, 4> catShape(node.inputs[0]->shape);
    catShape[axis] = extent;
    y = importer.verified(
        node, CatOp::create(builder, node.loc, importer.tensorType(catShape),
                            runs,
                            axis == 0 ? IntegerAttr()
                                      : builder.getI64IntegerAttr(axis)));
  }
  if (succeeded(y))
    y = importer.reshape(node, *y, shape);
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// Gather along `axis` at constant indices: folded for constant data, else
/// slices of the run-time tensor (gatherRuntime).
LogicalResult convertGather(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 2, 2, 1)))
    return failure();
  OnnxValue &x = *node.inputs[0];
  FailureOr<HostTensor> indexTensor =
      importer.constantOperand(node, 1, "indices");
  FailureOr<int64_t> axisAttr = importer.intAttr(node, "axis", 0);
  if (failed(indexTensor) || failed(axisAttr))
    return failure();
  if (!isIntegerKind(indexTensor->kind))
    return importer.invalid(node, "the indices must be integers");
  int64_t rank = x.shape.size();
  if (rank == 0)
    return importer.invalid(node, "cannot gather from a 0-D tensor");
  FailureOr<int64_t> axis = normalizeAxis(importer, node, *axisAttr, rank);
  if (failed(axis))
    return failure();
  int64_t extent = x.shape[*axis];
  std::vector<int64_t> indices = indexTensor->toInts();
  for (int64_t &i : indices) {
    if (i < -extent || i >= extent)
      return importer.invalid(node, "index " + Twine(i) +
                                        " is out of range for dimension " +
                                        Twine(*axis) + " of size " +
                                        Twine(extent));
    i = i < 0 ? i + extent : i;
  }
  SmallVector<int64_t, 4> shape(x.shape.begin(), x.shape.begin() + *axis);
  shape.append(indexTensor->shape.begin(), indexTensor->shape.end());
  shape.append(x.shape.begin() + *axis + 1, x.shape.end());
  if (!x.isConstant()) {
    if (indices.empty())
      return importer.unsupported(node, "the result is empty; empty tensors "
                                        "are not supported");
    return gatherRuntime(importer, node, *axis, indices, shape);
  }
  FailureOr<HostValues> data = HostValues::of(importer, node, *x.constant, "data");
  if (failed(data))
    return failure();
  // out[outer, j..., inner] = data[outer, indices[j...], inner].
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= data->shape[d];
  for (int64_t d = *axis + 1; d < rank; ++d)
    inner *= data->shape[d];
  std::vector<int64_t> picks;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : indices)
      for (int64_t n = 0; n < inner; ++n)
        picks.push_back((o * extent + i) * inner + n);
  importer.setOutput(node, 0,
                     OnnxValue::ofConstant(data->gather(shape, picks).tensor()));
  return success();
}

/// Slice: the starts, ends, axes and steps are attributes before opset 10,
/// constant inputs from 10. A constant folds; a run-time tensor is one
/// memfmt.slice per sliced axis (positive steps).
LogicalResult convertSlice(GraphImporter &importer, Node &node) {
  bool inputs = importer.getOpset() >= 10;
  if (failed(importer.checkArity(node, inputs ? 3 : 1, inputs ? 5 : 1, 1)))
    return failure();
  FailureOr<SmallVector<int64_t>> starts, ends, axes, steps;
  if (inputs) {
    // Starts and ends beyond the dimension are clamped to it.
    starts = intsInput(importer, node, 1, "starts", /*clamp=*/true);
    ends = intsInput(importer, node, 2, "ends", /*clamp=*/true);
    axes = node.hasInput(3) ? intsInput(importer, node, 3, "axes")
                            : FailureOr<SmallVector<int64_t>>(
                                  SmallVector<int64_t>());
    steps = node.hasInput(4) ? intsInput(importer, node, 4, "steps")
                             : FailureOr<SmallVector<int64_t>>(
                                   SmallVector<int64_t>());
  } else {
    starts = importer.intsAttr(node, "starts", {});
    ends = importer.intsAttr(node, "ends", {});
    axes = importer.intsAttr(node, "axes", {});
    steps = SmallVector<int64_t>();
  }
  if (failed(starts) || failed(ends) || failed(axes) || failed(steps))
    return failure();
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  size_t count = starts->size();
  if (axes->empty())
    for (size_t i = 0; i < count; ++i)
      axes->push_back(i);
  if (steps->empty())
    steps->assign(count, 1);
  if (ends->size() != count || axes->size() != count || steps->size() != count)
    return importer.invalid(node, "starts, ends, axes and steps must have as "
                                  "many values");
  SmallVector<int64_t, 4> begin(rank, 0), step(rank, 1),
      shape(x.shape.begin(), x.shape.end());
  for (size_t i = 0; i < count; ++i) {
    FailureOr<int64_t> axis = normalizeAxis(importer, node, (*axes)[i], rank);
    if (failed(axis))
      return failure();
    int64_t dim = x.shape[*axis], s = (*steps)[i];
    if (s == 0)
      return importer.invalid(node, "a step is 0");
    int64_t b = (*starts)[i], e = (*ends)[i];
    b = b < 0 ? b + dim : b;
    e = e < 0 ? e + dim : e;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[*axis] = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[*axis] = b > e ? (b - e - s - 1) / -s : 0;
    }
    begin[*axis] = b;
    step[*axis] = s;
  }
  if (!x.isConstant()) {
    // (An empty slice of a constant is shape arithmetic: Swin slices its
    // window shapes to nothing where a window covers the whole map.)
    if (llvm::is_contained(shape, 0))
      return importer.unsupported(node, "the slice is empty; empty tensors "
                                        "are not supported");
    if (llvm::any_of(step, [](int64_t s) { return s < 0; }))
      return importer.unsupported(node, "Slice of a run-time tensor with a "
                                        "negative step is not supported");
    FailureOr<Value> y = importer.tensorOperand(node, 0, "data");
    if (failed(y))
      return failure();
    for (int64_t d = 0; d < rank && succeeded(y); ++d)
      if (shape[d] != x.shape[d]) // Else the whole axis.
        y = importer.slice(node, *y, d, begin[d],
                           begin[d] + (shape[d] - 1) * step[d] + 1, step[d]);
    if (failed(y))
      return failure();
    importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
    return success();
  }
  FailureOr<HostValues> data =
      HostValues::of(importer, node, *x.constant, "data");
  if (failed(data))
    return failure();
  SmallVector<int64_t, 4> strides = rowMajorStrides(data->shape);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    base += begin[d] * strides[d];
    strides[d] *= step[d];
  }
  std::vector<int64_t> picks;
  forEachIndex<1>(shape, {strides},
                  [&](std::array<int64_t, 1> at) { picks.push_back(base + at[0]); });
  importer.setOutput(node, 0,
                     OnnxValue::ofConstant(data->gather(shape, picks).tensor()));
  return success();
}

/// Transpose (`perm`, by default the reversed dimensions): memfmt.permute,
/// which the layout passes make a view where it can be (a constant folds).
LogicalResult convertTranspose(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  SmallVector<int64_t> reversed;
  for (int64_t d = rank - 1; d >= 0; --d)
    reversed.push_back(d);
  FailureOr<SmallVector<int64_t>> perm =
      importer.intsAttr(node, "perm", reversed);
  if (failed(perm))
    return failure();
  SmallVector<bool> seen(rank, false);
  bool valid = static_cast<int64_t>(perm->size()) == rank;
  for (int64_t d : *perm) {
    valid = valid && d >= 0 && d < rank && !seen[d];
    if (valid)
      seen[d] = true;
  }
  if (!valid)
    return importer.invalid(node, "perm " + formatShape(*perm) +
                                      " is not a permutation of the " +
                                      Twine(rank) + " dimensions of " +
                                      formatShape(x.shape));
  SmallVector<int64_t, 4> shape;
  for (int64_t d : *perm)
    shape.push_back(x.shape[d]);
  if (x.isConstant()) {
    FailureOr<HostValues> data =
        HostValues::of(importer, node, *x.constant, "data");
    if (failed(data))
      return failure();
    SmallVector<int64_t, 4> inStrides = rowMajorStrides(data->shape), strides;
    for (int64_t d : *perm)
      strides.push_back(inStrides[d]);
    std::vector<int64_t> picks;
    forEachIndex<1>(shape, {strides},
                    [&](std::array<int64_t, 1> at) { picks.push_back(at[0]); });
    OnnxValue folded = OnnxValue::ofConstant(data->gather(shape, picks).tensor());
    if (rank == 2 && (*perm)[0] == 1)
      folded.transposeOf = node.inputName(0).str();
    importer.setOutput(node, 0, std::move(folded));
    return success();
  }
  FailureOr<Value> input = importer.tensorOperand(node, 0, "data");
  if (failed(input))
    return failure();
  OpBuilder &builder = importer.getBuilder();
  FailureOr<Value> y = importer.verified(
      node, PermuteOp::create(builder, node.loc, importer.tensorType(shape),
                              *input, builder.getDenseI64ArrayAttr(*perm)));
  if (failed(y))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*y, shape));
  return success();
}

/// Unsqueeze: a constant with the new shape, or a reshape.
LogicalResult convertUnsqueeze(GraphImporter &importer, Node &node) {
  FailureOr<SmallVector<int64_t>> axes = axesOf(importer, node);
  if (failed(axes))
    return failure();
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size() + axes->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    FailureOr<int64_t> axis = normalizeAxis(importer, node, a, rank);
    if (failed(axis))
      return failure();
    if (inserted[*axis])
      return importer.invalid(node, "axis " + Twine(a) + " is given twice");
    inserted[*axis] = true;
  }
  SmallVector<int64_t, 4> shape;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : x.shape[next++]);
  return importer.setReshapedOutput(node, shape, "data");
}

/// Squeeze: without axes, every dimension of size 1.
LogicalResult convertSqueeze(GraphImporter &importer, Node &node) {
  FailureOr<SmallVector<int64_t>> axes = axesOf(importer, node);
  if (failed(axes))
    return failure();
  OnnxValue &x = *node.inputs[0];
  int64_t rank = x.shape.size();
  SmallVector<bool> removed(rank, axes->empty());
  if (axes->empty())
    for (int64_t d = 0; d < rank; ++d)
      removed[d] = x.shape[d] == 1;
  for (int64_t a : *axes) {
    FailureOr<int64_t> axis = normalizeAxis(importer, node, a, rank);
    if (failed(axis))
      return failure();
    if (x.shape[*axis] != 1)
      return importer.invalid(node, "cannot squeeze dimension " +
                                        Twine(*axis) + " of " +
                                        formatShape(x.shape) +
                                        ": its size is not 1");
    removed[*axis] = true;
  }
  SmallVector<int64_t, 4> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!removed[d])
      shape.push_back(x.shape[d]);
  return importer.setReshapedOutput(node, shape, "data");
}

/// Cast: of a constant to an integer or floating-point type; of a run-time
/// floating-point tensor to a floating-point type, the identity.
LogicalResult convertCast(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  FailureOr<int64_t> to = importer.intAttr(node, "to", 0);
  if (failed(to))
    return failure();
  auto kind = static_cast<ElementKind>(*to);
  bool toFloat = isFloatKind(kind) || kind == ElementKind::Double;
  bool toBool = kind == ElementKind::Bool;
  if (!toFloat && !toBool && !isIntegerKind(kind))
    return importer.unsupported(node, "a cast to " +
                                          elementKindName(int32_t(kind)) +
                                          " is not supported");
  OnnxValue &x = *node.inputs[0];
  if (!x.isConstant()) {
    if (toBool)
      return importer.unsupported(node, "a cast of a run-time tensor to "
                                        "bool is not supported");
    if (!toFloat || x.elementKind != ElementKind::Float)
      return importer.unsupported(node, "a run-time tensor can only be cast "
                                        "between floating-point types");
    importer.setOutput(node, 0, x);
    return success();
  }
  FailureOr<HostValues> v =
      HostValues::of(importer, node, *x.constant, "input");
  if (failed(v))
    return failure();
  HostValues out;
  out.shape = v->shape;
  out.integer = !toFloat;
  out.boolean = toBool; // Non-zero is true (a constant mask: Swin's).
  for (int64_t i = 0; i < v->size(); ++i) {
    if (toBool)
      out.ints.push_back(v->integer ? v->ints[i] != 0 : v->floats[i] != 0.0f);
    else if (out.integer)
      out.ints.push_back(v->integer ? v->ints[i]
                                    : static_cast<int64_t>(v->floats[i]));
    else
      out.floats.push_back(v->integer ? static_cast<float>(v->ints[i])
                                      : v->floats[i]);
  }
  importer.setOutput(node, 0, OnnxValue::ofConstant(out.tensor()));
  return success();
}

/// ConstantOfShape: a constant of the (constant) shape filled with `value`
/// (default float 0).
LogicalResult convertConstantOfShape(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 1, 1, 1)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      intsInput(importer, node, 0, "shape");
  if (failed(shape))
    return failure();
  int64_t count;
  if (!countElements(*shape, count) || count == 0)
    return importer.unsupported(node, "shape " + formatShape(*shape) +
                                          " is empty or too large");
  HostValues fill;
  fill.integer = false;
  fill.floats = {0.0f};
  if (const onnx::AttributeProto *attr = importer.attribute(node, "value")) {
    std::string error;
    std::optional<HostTensor> value =
        decodeTensor(attr->t(), importer.getBaseDirectory(), error);
    if (!value || value->numElements() != 1)
      return importer.invalid(node, "attribute 'value' must be a tensor of "
                                    "one element" +
                                        (error.empty() ? "" : ": " + error));
    FailureOr<HostValues> v = HostValues::of(importer, node, *value, "value");
    if (failed(v))
      return failure();
    fill = *v;
  }
  std::vector<int64_t> picks(count, 0);
  fill.shape = {1};
  importer.setOutput(node, 0,
                     OnnxValue::ofConstant(fill.gather(*shape, picks).tensor()));
  return success();
}

/// Range of constants: start, start + delta, ... up to limit (excluded).
LogicalResult convertRange(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 3, 3, 1)))
    return failure();
  SmallVector<HostValues, 3> v;
  for (unsigned i = 0; i < 3; ++i) {
    FailureOr<HostTensor> t = importer.constantOperand(
        node, i, i == 0 ? "start" : i == 1 ? "limit" : "delta");
    if (failed(t))
      return failure();
    FailureOr<HostValues> h = HostValues::of(importer, node, *t, "range");
    if (failed(h))
      return failure();
    if (h->size() != 1)
      return importer.invalid(node, "start, limit and delta must be scalars");
    v.push_back(*h);
  }
  HostValues out;
  out.integer = v[0].integer;
  if (out.integer) {
    int64_t start = v[0].ints[0], limit = v[1].ints[0], delta = v[2].ints[0];
    if (delta == 0)
      return importer.invalid(node, "delta is 0");
    for (int64_t x = start; delta > 0 ? x < limit : x > limit; x += delta)
      out.ints.push_back(x);
  } else {
    float start = v[0].floats[0], limit = v[1].floats[0],
          delta = v[2].floats[0];
    if (delta == 0.0f)
      return importer.invalid(node, "delta is 0");
    int64_t n = std::max<int64_t>(0, std::ceil((limit - start) / delta));
    for (int64_t i = 0; i < n; ++i)
      out.floats.push_back(start + i * delta);
  }
  if (out.size() == 0)
    return importer.unsupported(node, "the range is empty; empty tensors are "
                                      "not supported");
  out.shape = {out.size()};
  importer.setOutput(node, 0, OnnxValue::ofConstant(out.tensor()));
  return success();
}

} // namespace

void mlir::memfmt::onnx_import::registerShapeArithmeticOps(
    ONNXOpRegistry &registry) {
  constexpr StringRef folded = "(folded at import)";
  registry.add({"Shape",
                {"start", "end"},
                {{1, convertShape}},
                {folded, "any tensor (its shape is static); `start`, `end`",
                 ""}});
  registry.add({"Size", {}, {{1, convertSize}}, {folded, "any tensor", ""}});
  registry.add({"Gather",
                {"axis"},
                {{1, convertGather}},
                {"`slice` (+ `cat`, `reshape`; constants: folded)",
                 "constant indices, any axis, negative indices; run-time data "
                 "as one slice per run of consecutive indices",
                 "indices given at run time"}});
  registry.add({"Slice",
                {"starts", "ends", "axes"},
                {{1, convertSlice}},
                {"`slice` per sliced axis (constants: folded)",
                 "starts, ends, axes (attributes before opset 10), steps; "
                 "negative steps and empty results on constants",
                 "negative steps and empty results on run-time data"}});
  registry.add({"Transpose",
                {"perm"},
                {{1, convertTranspose}},
                {"`permute` (constants: folded)",
                 "any permutation; a view (no copy) where the permuted "
                 "strides are a memory format, as for ConvNeXt's NCHW <-> "
                 "NHWC permutes in a channels-last build",
                 ""}});
  registry.add({"Unsqueeze",
                {"axes"},
                {{1, convertUnsqueeze}},
                {"`reshape` (constants: folded)",
                 "axes as an attribute (opset < 13) or a constant input", ""}});
  registry.add({"Squeeze",
                {"axes"},
                {{1, convertSqueeze}},
                {"`reshape` (constants: folded)",
                 "axes as an attribute (opset < 13) or a constant input, or "
                 "none (every size-1 dimension)",
                 ""}});
  registry.add({"Cast",
                {"to", "saturate"},
                {{1, convertCast}},
                {"(folded, or the input)",
                 "constants to integer, floating-point and bool types; "
                 "run-time tensors between floating-point types (the "
                 "identity)",
                 "run-time tensors to integers or bool; strings"}});
  registry.add({"ConstantOfShape",
                {"value"},
                {{9, convertConstantOfShape}},
                {folded, "a constant shape; `value` (default float 0)",
                 "empty shapes"}});
  registry.add({"Range",
                {},
                {{11, convertRange}},
                {folded, "constant scalars", "empty ranges"}});
}
