//===- TensorView.h - A decoded memref descriptor ---------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's view of one tensor argument: the address of its first element
// and its sizes and strides (in elements), decoded from the MLIR unranked
// memref a compiled model passes (kernel_abi.h). Decoding checks everything
// that can be checked without touching the data: null pointers, the rank, the
// sign of sizes and that the byte extent fits in an int64. Layout questions
// (contiguous, channels-last, same bytes) go to the stride library, so the
// runtime and the compiler answer them with the same rules (L1-L6).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_TENSORVIEW_H
#define MEMFMT_RUNTIME_LIB_TENSORVIEW_H

#include "memfmt/Layout/Strides.h"
#include "memfmt/runtime/kernel_abi.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace memfmt::runtime {

/// The largest rank a kernel accepts. Kernels.def's kernels need at most 4
/// (5 for a later 3-D format); memrefs of higher rank are UNSUPPORTED.
constexpr int64_t kMaxRank = 8;

/// Element types of tensor arguments.
enum class DType { f32, f16, bf16, i64 };

/// Bytes per element of `dtype`.
size_t elementSize(DType dtype);

/// "f32", "f16", "bf16" or "i64".
const char *toString(DType dtype);

/// A tensor argument: first element, sizes and strides in elements.
struct TensorView {
  void *data = nullptr;
  int64_t rank = 0;
  int64_t sizes[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};

  layout::IntSpan shape() const { return {sizes, static_cast<size_t>(rank)}; }
  layout::IntSpan strideSpan() const {
    return {strides, static_cast<size_t>(rank)};
  }
  int64_t numElements() const { return layout::numElements(shape()); }

  template <typename T> T *as() const { return static_cast<T *>(data); }

  /// L2: dense NCHW (row-major) strides.
  bool isContiguous() const {
    return layout::isContiguous(shape(), strideSpan());
  }
  /// L2: dense channels-last strides (rank 4 and 5 only).
  bool isChannelsLastContiguous() const {
    return layout::isChannelsLastContiguous(shape(), strideSpan());
  }
  /// Dense and non-overlapping in some order of the dims, so the elements
  /// are exactly the `numElements()` slots starting at `data`.
  bool isDense() const {
    return layout::isNonOverlappingAndDense(shape(), strideSpan());
  }
  /// L3: same sizes, and strides that give every element the same offset.
  bool sameLayoutAs(const TensorView &other) const;
  /// The same elements at the same addresses (an exact alias).
  bool sameViewAs(const TensorView &other) const {
    return data == other.data && sameLayoutAs(other);
  }
  /// True if no two elements share an address. Conservative: strides sorted
  /// by magnitude must each step over everything inside the smaller ones.
  bool hasDistinctElements() const;
};

/// Decodes an unranked memref of elements of `elementSize` bytes into
/// `view`. On failure returns INVALID_ARGUMENT (or UNSUPPORTED for a rank
/// above kMaxRank) and says what is wrong in `reason` (without the
/// argument's name).
memfmt_status_t decodeMemref(const memfmt_memref_t *memref, size_t elementSize,
                             TensorView &view, std::string &reason);

/// "[1, 64, 56, 56]".
std::string formatShape(const TensorView &view);
/// "[200704, 1, 3584, 64]".
std::string formatStrides(const TensorView &view);
/// "[1, 64, 56, 56] (strides [200704, 1, 3584, 64])".
std::string describe(const TensorView &view);

} // namespace memfmt::runtime

#endif // MEMFMT_RUNTIME_LIB_TENSORVIEW_H
