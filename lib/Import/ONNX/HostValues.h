//===- HostValues.h - Constant values the import folds use ------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What the import-time folds of ShapeArithmetic.cpp and ConstantFolds.cpp
// compute with: a constant's values as int64 or float (HostValues), NumPy
// broadcasting of constant operands, a row-major index walk, and the reading
// of a small integer constant input (shapes, axes, starts and ends).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LIB_IMPORT_ONNX_HOSTVALUES_H
#define MEMFMT_LIB_IMPORT_ONNX_HOSTVALUES_H

#include "GraphImporter.h"

#include <algorithm>
#include <array>
#include <utility>

namespace mlir::memfmt::onnx_import {

/// An integer element kind (not bool, floating-point or complex).
inline bool isIntegerKind(ElementKind kind) {
  return !isFloatKind(kind) && kind != ElementKind::Double &&
         elementKindSize(int32_t(kind)) > 0 && kind != ElementKind::Bool &&
         kind != ElementKind::Complex64 && kind != ElementKind::Complex128;
}

/// A constant's values as int64 or as float, with its shape.
struct HostValues {
  bool integer = true;
  /// Integer values that are ONNX bools (0 or 1): Equal's result, Where's
  /// condition.
  bool boolean = false;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  SmallVector<int64_t, 4> shape;

  static FailureOr<HostValues> of(GraphImporter &importer, Node &node,
                                  const HostTensor &t, StringRef role) {
    HostValues v;
    v.shape = t.shape;
    if (isIntegerKind(t.kind) || t.kind == ElementKind::Bool) {
      v.ints = t.toInts();
      v.boolean = t.kind == ElementKind::Bool;
    } else if (isFloatKind(t.kind) || t.kind == ElementKind::Double) {
      v.integer = false;
      v.floats = t.toFloats();
    } else {
      return importer.unsupported(node, "the " + role + " input is " +
                                            elementKindName(int32_t(t.kind)));
    }
    return v;
  }

  int64_t size() const {
    return integer ? int64_t(ints.size()) : int64_t(floats.size());
  }
  HostTensor tensor() const {
    if (!integer)
      return HostTensor::fromFloats(shape, floats);
    HostTensor t = HostTensor::fromInts(shape, ints);
    return boolean ? t.toBools() : t;
  }
  /// The value at `i` of a float or integer tensor, as a double.
  double at(int64_t i) const { return integer ? double(ints[i]) : floats[i]; }
  /// A tensor of `newShape` holding the elements at `indices`.
  HostValues gather(ArrayRef<int64_t> newShape,
                    ArrayRef<int64_t> indices) const {
    HostValues out;
    out.integer = integer;
    out.boolean = boolean;
    out.shape.assign(newShape.begin(), newShape.end());
    for (int64_t i : indices) {
      if (integer)
        out.ints.push_back(ints[i]);
      else
        out.floats.push_back(floats[i]);
    }
    return out;
  }
};

/// Row-major strides of `shape`.
inline SmallVector<int64_t, 4> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Calls `fn(offsets)` for every index of `shape` in row-major order, with
/// the offsets of each operand given its strides (per dim of `shape`).
template <size_t N, typename Fn>
void forEachIndex(ArrayRef<int64_t> shape,
                  std::array<SmallVector<int64_t, 4>, N> strides, Fn fn) {
  int64_t count = 1;
  for (int64_t s : shape)
    count *= s;
  SmallVector<int64_t, 4> index(shape.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    std::array<int64_t, N> offsets{};
    for (size_t d = 0; d < shape.size(); ++d)
      for (size_t k = 0; k < N; ++k)
        offsets[k] += index[d] * strides[k][d];
    fn(offsets);
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// The NumPy broadcast of the operands' shapes and each operand's strides
/// over it (0 where it is broadcast), or a located error.
template <size_t N>
FailureOr<
    std::pair<SmallVector<int64_t, 4>, std::array<SmallVector<int64_t, 4>, N>>>
broadcastOperands(GraphImporter &importer, Node &node,
                  std::array<const HostValues *, N> operands) {
  SmallVector<int64_t, 4> shape = operands[0]->shape;
  for (const HostValues *v : ArrayRef(operands).drop_front()) {
    std::optional<SmallVector<int64_t, 4>> b = broadcastShapes(shape, v->shape);
    if (!b)
      return importer.invalid(node, "operand shapes " + formatShape(shape) +
                                        " and " + formatShape(v->shape) +
                                        " do not broadcast");
    shape = *b;
  }
  int64_t rank = shape.size();
  std::array<SmallVector<int64_t, 4>, N> strides;
  for (auto [k, v] : llvm::enumerate(operands)) {
    SmallVector<int64_t, 4> own = rowMajorStrides(v->shape);
    strides[k].assign(rank, 0);
    int64_t lead = rank - v->shape.size();
    for (int64_t d = lead; d < rank; ++d)
      if (v->shape[d - lead] != 1)
        strides[k][d] = own[d - lead];
  }
  return std::make_pair(shape, strides);
}

/// A 1-D (or 0-D) integer constant input's values; with `clamp`, values
/// beyond +-2^31 are clamped to it instead of rejected (Slice's starts and
/// ends, where exporters write INT64_MAX for "to the end").
inline FailureOr<SmallVector<int64_t>> intsInput(GraphImporter &importer,
                                                 Node &node, unsigned i,
                                                 StringRef role,
                                                 bool clamp = false) {
  FailureOr<HostTensor> t = importer.constantOperand(node, i, role);
  if (failed(t))
    return failure();
  if (!isIntegerKind(t->kind) || t->shape.size() > 1)
    return importer.invalid(node, "the " + role +
                                      " input must be a 0-D or 1-D integer "
                                      "tensor");
  if (!clamp)
    return importer.intValues(node, *t, role);
  SmallVector<int64_t> values;
  for (int64_t v : t->toInts())
    values.push_back(std::clamp(v, -kMaxAttribute, kMaxAttribute));
  return values;
}

} // namespace mlir::memfmt::onnx_import

#endif // MEMFMT_LIB_IMPORT_ONNX_HOSTVALUES_H
