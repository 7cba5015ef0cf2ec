//===- TensorView.cpp - A decoded memref descriptor -----------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Decoding of MLIR unranked memrefs into TensorViews, with the checks a
// runtime can make on a descriptor it did not build, and the formatting of
// shapes for error messages.
//
//===----------------------------------------------------------------------===//

#include "TensorView.h"

#include <algorithm>
#include <cstring>
#include <utility>

using namespace memfmt::runtime;

size_t memfmt::runtime::elementSize(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return 4;
  case DType::f16:
  case DType::bf16:
    return 2;
  case DType::i64:
    return 8;
  }
  return 0;
}

const char *memfmt::runtime::toString(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return "f32";
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  case DType::i64:
    return "i64";
  }
  return "?";
}

bool TensorView::sameLayoutAs(const TensorView &other) const {
  if (rank != other.rank || !std::equal(sizes, sizes + rank, other.sizes))
    return false;
  return layout::sameBytes(shape(), strideSpan(), other.strideSpan());
}

bool TensorView::hasDistinctElements() const {
  if (numElements() == 0)
    return true;
  int64_t dims[kMaxRank];
  int64_t count = 0;
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] > 1)
      dims[count++] = d;
  auto magnitude = [&](int64_t d) {
    return strides[d] < 0 ? -strides[d] : strides[d];
  };
  // Smallest stride first (insertion sort: at most kMaxRank dims).
  for (int64_t i = 1; i < count; ++i)
    for (int64_t j = i; j > 0 && magnitude(dims[j]) < magnitude(dims[j - 1]);
         --j)
      std::swap(dims[j - 1], dims[j]);
  // `reach` is the largest offset distance spanned by the dims so far.
  int64_t reach = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t d = dims[i];
    if (magnitude(d) <= reach)
      return false;
    reach += (sizes[d] - 1) * magnitude(d);
  }
  return true;
}

memfmt_status_t memfmt::runtime::decodeMemref(const memfmt_memref_t *memref,
                                              size_t elementSize,
                                              TensorView &view,
                                              std::string &reason) {
  view = TensorView();
  if (!memref) {
    reason = "is a null memref";
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  }
  if (!memref->descriptor) {
    reason = "has a null descriptor";
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  }
  if (memref->rank < 0) {
    reason = "has negative rank " + std::to_string(memref->rank);
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  }
  if (memref->rank > kMaxRank) {
    reason = "has rank " + std::to_string(memref->rank) +
             "; the runtime supports ranks up to " + std::to_string(kMaxRank);
    return MEMFMT_STATUS_UNSUPPORTED;
  }

  // {T *allocated; T *aligned; int64_t offset; int64_t sizes[rank];
  //  int64_t strides[rank]}, read field by field so that no struct of the
  // wrong rank is ever formed.
  const char *bytes = static_cast<const char *>(memref->descriptor);
  void *aligned = nullptr;
  int64_t offset = 0;
  std::memcpy(&aligned, bytes + sizeof(void *), sizeof(void *));
  std::memcpy(&offset, bytes + 2 * sizeof(void *), sizeof(int64_t));
  const char *sizesAt = bytes + 2 * sizeof(void *) + sizeof(int64_t);
  view.rank = memref->rank;
  std::memcpy(view.sizes, sizesAt, view.rank * sizeof(int64_t));
  std::memcpy(view.strides, sizesAt + view.rank * sizeof(int64_t),
              view.rank * sizeof(int64_t));

  // Sizes, element count and the address range must be representable.
  int64_t count = 1;
  int64_t extent = 0;
  for (int64_t d = 0; d < view.rank; ++d) {
    int64_t size = view.sizes[d];
    if (size < 0) {
      reason = "has negative size " + std::to_string(size) + " in dim " +
               std::to_string(d) + " (shape " + formatShape(view) + ")";
      return MEMFMT_STATUS_INVALID_ARGUMENT;
    }
    if (__builtin_mul_overflow(count, size, &count)) {
      reason = "has more elements than fit in an int64 (shape " +
               formatShape(view) + ")";
      return MEMFMT_STATUS_INVALID_ARGUMENT;
    }
  }
  if (count == 0)
    return MEMFMT_STATUS_OK; // No element is ever addressed.
  for (int64_t d = 0; d < view.rank; ++d) {
    // INT64_MIN has no magnitude in int64: reject it before negating.
    int64_t stride = view.strides[d] == INT64_MIN ? 0
                     : view.strides[d] < 0        ? -view.strides[d]
                                                  : view.strides[d];
    int64_t span = 0;
    if (view.strides[d] == INT64_MIN ||
        __builtin_mul_overflow(view.sizes[d] - 1, stride, &span) ||
        __builtin_add_overflow(extent, span, &extent)) {
      reason =
          "has strides whose address range overflows (" + describe(view) + ")";
      return MEMFMT_STATUS_INVALID_ARGUMENT;
    }
  }
  int64_t byteOffset = 0, byteExtent = 0;
  if (__builtin_mul_overflow(offset, static_cast<int64_t>(elementSize),
                             &byteOffset) ||
      __builtin_mul_overflow(extent, static_cast<int64_t>(elementSize),
                             &byteExtent)) {
    reason = "has an offset or address range that overflows (offset " +
             std::to_string(offset) + ", " + describe(view) + ")";
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  }
  if (!aligned) {
    reason =
        "has a null data pointer and " + std::to_string(count) + " elements";
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  }
  view.data = static_cast<char *>(aligned) + byteOffset;
  return MEMFMT_STATUS_OK;
}

static std::string formatList(const int64_t *values, int64_t count) {
  std::string text = "[";
  for (int64_t i = 0; i < count; ++i) {
    if (i)
      text += ", ";
    text += std::to_string(values[i]);
  }
  return text + "]";
}

std::string memfmt::runtime::formatShape(const TensorView &view) {
  return formatList(view.sizes, view.rank);
}

std::string memfmt::runtime::formatStrides(const TensorView &view) {
  return formatList(view.strides, view.rank);
}

std::string memfmt::runtime::describe(const TensorView &view) {
  return formatShape(view) + " (strides " + formatStrides(view) + ")";
}
