//===- Strides.h - Memory-format rules L1-L6 over shapes and strides ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The pure stride/format logic of DESIGN.md §1 (rules L1-L6) as plain functions
// over a shape and a stride vector (both in elements). It has no MLIR or LLVM
// dependency: the dialect's verifiers, the layout passes, the lowering and the
// runtime all call these same functions, so a rule is written exactly once.
//
// Conventions shared by every function:
//  * `sizes` and `strides` have the same length (the rank); callers check it.
//  * A dimension of size 1 is not taken into account when strides are
//    compared or ordered: its stride may be anything (L1, L2).
//  * A tensor with a size-0 dimension has no elements; it is contiguous in
//    every format and any two stride vectors describe "the same bytes".
//  * "channels_last" means channels_last for rank 4 (NCHW, strides ordered
//    C < W < H < N) and channels_last_3d for rank 5 (NCDHW, C < W < H < D < N).
//    Other ranks have no channels-last format.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_LAYOUT_STRIDES_H
#define MEMFMT_LAYOUT_STRIDES_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace memfmt::layout {

/// A read-only view of an int64 list. Converts implicitly from anything with
/// `data()` and `size()` (std::vector, llvm::ArrayRef, std::array) and from an
/// initializer list, so callers on both sides of the MLIR boundary use it
/// without copying.
class IntSpan {
public:
  constexpr IntSpan() = default;
  constexpr IntSpan(const int64_t *data, size_t size) : ptr(data), len(size) {}
  template <typename Container,
            typename = decltype(std::declval<const Container &>().data()),
            typename = decltype(std::declval<const Container &>().size())>
  constexpr IntSpan(const Container &c) : ptr(c.data()), len(c.size()) {}
  // Like llvm::ArrayRef: the span does not extend the list's lifetime, which
  // is fine for the intended use (a braced list passed as an argument lives
  // until the end of the full expression). GCC warns about it; silence that.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  constexpr IntSpan(std::initializer_list<int64_t> list)
      : ptr(list.begin()), len(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  constexpr const int64_t *begin() const { return ptr; }
  constexpr const int64_t *end() const { return ptr + len; }
  constexpr size_t size() const { return len; }
  constexpr bool empty() const { return len == 0; }
  constexpr int64_t operator[](size_t i) const { return ptr[i]; }

private:
  const int64_t *ptr = nullptr;
  size_t len = 0;
};

/// The memory formats of DESIGN.md §1. `Preserve` is a request (L6), never the
/// format of an actual tensor.
enum class MemoryFormat { Contiguous, ChannelsLast, Preserve };

/// "contiguous", "channels_last" or "preserve".
std::string_view toString(MemoryFormat format);

/// Number of elements (the product of `sizes`; 1 for rank 0).
int64_t numElements(IntSpan sizes);

/// True for the ranks that have a channels-last format (4 and 5).
bool hasChannelsLastFormat(size_t rank);

/// L2: the dense NCHW strides of `sizes`, e.g. [C*H*W, H*W, W, 1].
std::vector<int64_t> contiguousStrides(IntSpan sizes);

/// L2: the dense channels-last strides of a rank-4 or rank-5 shape, e.g.
/// [H*W*C, 1, W*C, C]. Returns an empty vector for any other rank.
std::vector<int64_t> channelsLastStrides(IntSpan sizes);

/// L2: the dense strides of `format` (Contiguous or ChannelsLast) for `sizes`.
/// Returns an empty vector when `format` is Preserve or when the rank has no
/// such format.
std::vector<int64_t> stridesForFormat(MemoryFormat format, IntSpan sizes);

/// L2: true if `strides` are the dense NCHW strides of `sizes` (size-1 dims
/// free; tensors with no elements are contiguous).
bool isContiguous(IntSpan sizes, IntSpan strides);

/// L2: true if `strides` are the dense channels-last strides of `sizes`
/// (size-1 dims free). Always false for ranks other than 4 and 5.
bool isChannelsLastContiguous(IntSpan sizes, IntSpan strides);

/// L2: isContiguous or isChannelsLastContiguous, selected by `format`
/// (Preserve gives false).
bool isContiguousInFormat(MemoryFormat format, IntSpan sizes,
                          IntSpan strides);

/// L1: true if the strides are ordered like channels-last (C < W < H < N, or
/// C < W < H < D < N for rank 5), ignoring size-1 dims. Density is not
/// required: this is the "strides like channels-last" predicate.
bool hasChannelsLastOrder(IntSpan sizes, IntSpan strides);

/// L4: ChannelsLast if the strides are channels-last contiguous and not also
/// contiguous, else Contiguous.
MemoryFormat suggestMemoryFormat(IntSpan sizes, IntSpan strides);

/// L4: true if the strides are one of the supported memory formats, i.e.
/// contiguous or channels-last contiguous. Overlapping layouts, zero strides
/// on dims of size > 1 and other permutations are not.
bool hasSupportedFormat(IntSpan sizes, IntSpan strides);

/// True if no two elements share an offset and the elements fill a range
/// [0, numElements) exactly (any permutation of dims). Size-1 dims are
/// ignored; tensors with no elements are dense.
bool isNonOverlappingAndDense(IntSpan sizes, IntSpan strides);

/// L6: the strides of a preserve_format result (clone, empty_like, to,
/// resize_as). A dense, non-overlapping input without zero strides keeps its
/// exact strides; otherwise the result gets the dense strides of
/// suggestMemoryFormat(sizes, strides).
std::vector<int64_t> preserveFormatStrides(IntSpan sizes, IntSpan strides);

/// L3: true if the two stride vectors give every element of `sizes` the same
/// offset, i.e. they are equal on every dimension of size > 1 (or the tensor
/// has no elements).
bool sameBytes(IntSpan sizes, IntSpan lhs, IntSpan rhs);

/// L3: true if a tensor of `sizes` is both contiguous and channels-last
/// contiguous for some strides, so converting between the two formats is a
/// no-op (e.g. Nx2048x1x1, 1xCx1x1, Nx1xHxW).
bool formatsShareBytes(IntSpan sizes);


/// The element offsets, relative to element [0, ..., 0], of the lowest and
/// the highest element a strided tensor reaches (a negative stride reaches
/// below 0). Both are 0 for a tensor with no elements.
struct Reach {
  int64_t low = 0;
  int64_t high = 0;
};
Reach reachOf(IntSpan sizes, IntSpan strides);

/// The span rule: how many elements a strided tensor's memory covers, from its
/// lowest to its highest element (`high - low + 1`); 0 when it has no
/// elements. For non-negative strides, 1 + sum((size - 1) * stride). The
/// compiler sizes buffers with it and the runtime checks buffers against it.
int64_t spanElements(IntSpan sizes, IntSpan strides);

} // namespace memfmt::layout

#endif // MEMFMT_LAYOUT_STRIDES_H
