//===- Strides.cpp - Memory-format rules L1-L6 over shapes and strides ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the pure stride/format logic of DESIGN.md §1 declared
// in Strides.h: the dense strides of each memory format (L2), the
// channels-last stride order (L1), "same bytes" (L3), the memory format a
// tensor suggests (L4), the non-overlapping-and-dense test and the strides of a
// preserve_format result (L6). Everything works on a shape and a stride vector
// in elements and uses nothing but the C++17 standard library, so the
// compiler and the runtime share one copy of the rules.
//
// Two conventions from the header run through every function: a dimension of
// size 1 never takes part in a stride comparison, and a tensor with a size-0
// dimension has no elements, so every layout question about it answers "yes".
// Dense strides are computed as PyTorch computes them for contiguous tensors:
// a size-0 dimension contributes 1 to the running product, so the dense
// strides of a shape never contain a zero.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Layout/Strides.h"

#include <algorithm>
#include <array>
#include <numeric>

using namespace memfmt::layout;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

/// a * b (or a + b) wrapping around in two's complement instead of
/// overflowing: a shape whose element count does not fit an int64 is refused
/// by the tools, but verifiers ask about it first, and must get a
/// (meaningless) answer, not undefined behaviour.
int64_t mulWrap(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}
int64_t addWrap(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}

/// The channels-last order of the dims of a rank-4 (NCHW) or rank-5 (NCDHW)
/// shape, innermost (smallest stride) first: C, W, H, N or C, W, H, D, N.
/// Only the first `rank` entries of the result are meaningful.
struct DimOrder {
  std::array<size_t, 5> dims{};
  size_t rank = 0;

  const size_t *begin() const { return dims.data(); }
  const size_t *end() const { return dims.data() + rank; }
};

/// Returns the channels-last dim order for `rank`, or an empty order when the
/// rank has no channels-last format.
DimOrder channelsLastOrder(size_t rank) {
  if (rank == 4)
    return {{1, 3, 2, 0, 0}, 4};
  if (rank == 5)
    return {{1, 4, 3, 2, 0}, 5};
  return {};
}

/// Returns true if some dimension of `sizes` is 0, i.e. the tensor has no
/// elements.
bool hasNoElements(IntSpan sizes) {
  return std::any_of(sizes.begin(), sizes.end(),
                     [](int64_t size) { return size == 0; });
}

/// Returns true if `strides` are the dense strides of `sizes` laid out in
/// `order` (innermost dim first), with size-1 dims free.
template <typename Order>
bool isDenseInOrder(IntSpan sizes, IntSpan strides, const Order &order) {
  if (hasNoElements(sizes))
    return true;
  int64_t expected = 1;
  for (size_t dim : order) {
    if (sizes[dim] == 1)
      continue;
    if (strides[dim] != expected)
      return false;
    expected = mulWrap(expected, sizes[dim]);
  }
  return true;
}

/// Returns the dense strides of `sizes` laid out in `order` (innermost dim
/// first). A size-0 dim contributes 1 to the running product.
template <typename Order>
std::vector<int64_t> denseStridesInOrder(IntSpan sizes, const Order &order) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t running = 1;
  for (size_t dim : order) {
    strides[dim] = running;
    running = mulWrap(running, std::max<int64_t>(sizes[dim], 1));
  }
  return strides;
}

} // namespace

//===----------------------------------------------------------------------===//
// Formats and shapes
//===----------------------------------------------------------------------===//

std::string_view memfmt::layout::toString(MemoryFormat format) {
  switch (format) {
  case MemoryFormat::Contiguous:
    return "contiguous";
  case MemoryFormat::ChannelsLast:
    return "channels_last";
  case MemoryFormat::Preserve:
    return "preserve";
  }
  return "unknown";
}

int64_t memfmt::layout::numElements(IntSpan sizes) {
  return std::accumulate(
      sizes.begin(), sizes.end(), int64_t{1},
      [](int64_t acc, int64_t size) { return mulWrap(acc, size); });
}

bool memfmt::layout::hasChannelsLastFormat(size_t rank) {
  return rank == 4 || rank == 5;
}

//===----------------------------------------------------------------------===//
// L2: dense strides and contiguity
//===----------------------------------------------------------------------===//

std::vector<int64_t> memfmt::layout::contiguousStrides(IntSpan sizes) {
  std::vector<size_t> order(sizes.size());
  // Innermost (last) dim first.
  for (size_t i = 0, e = sizes.size(); i != e; ++i)
    order[i] = e - 1 - i;
  return denseStridesInOrder(sizes, order);
}

std::vector<int64_t> memfmt::layout::channelsLastStrides(IntSpan sizes) {
  if (!hasChannelsLastFormat(sizes.size()))
    return {};
  return denseStridesInOrder(sizes, channelsLastOrder(sizes.size()));
}

std::vector<int64_t> memfmt::layout::stridesForFormat(MemoryFormat format,
                                                      IntSpan sizes) {
  switch (format) {
  case MemoryFormat::Contiguous:
    return contiguousStrides(sizes);
  case MemoryFormat::ChannelsLast:
    return channelsLastStrides(sizes);
  case MemoryFormat::Preserve:
    return {};
  }
  return {};
}

bool memfmt::layout::isContiguous(IntSpan sizes, IntSpan strides) {
  if (hasNoElements(sizes))
    return true;
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1)
      continue;
    if (strides[i] != expected)
      return false;
    expected = mulWrap(expected, sizes[i]);
  }
  return true;
}

bool memfmt::layout::isChannelsLastContiguous(IntSpan sizes, IntSpan strides) {
  if (!hasChannelsLastFormat(sizes.size()))
    return false;
  return isDenseInOrder(sizes, strides, channelsLastOrder(sizes.size()));
}

bool memfmt::layout::isContiguousInFormat(MemoryFormat format, IntSpan sizes,
                                          IntSpan strides) {
  switch (format) {
  case MemoryFormat::Contiguous:
    return isContiguous(sizes, strides);
  case MemoryFormat::ChannelsLast:
    return isChannelsLastContiguous(sizes, strides);
  case MemoryFormat::Preserve:
    return false;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// L1: channels-last order
//===----------------------------------------------------------------------===//

bool memfmt::layout::hasChannelsLastOrder(IntSpan sizes, IntSpan strides) {
  if (!hasChannelsLastFormat(sizes.size()))
    return false;
  // A tensor with no elements is channels-last contiguous (header
  // convention), so it must also have the channels-last order.
  if (hasNoElements(sizes))
    return true;
  bool havePrevious = false;
  int64_t previous = 0;
  for (size_t dim : channelsLastOrder(sizes.size())) {
    if (sizes[dim] == 1)
      continue;
    if (havePrevious && !(previous < strides[dim]))
      return false;
    previous = strides[dim];
    havePrevious = true;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// L4: suggested and supported formats
//===----------------------------------------------------------------------===//

MemoryFormat memfmt::layout::suggestMemoryFormat(IntSpan sizes,
                                                 IntSpan strides) {
  if (isChannelsLastContiguous(sizes, strides) && !isContiguous(sizes, strides))
    return MemoryFormat::ChannelsLast;
  return MemoryFormat::Contiguous;
}

bool memfmt::layout::hasSupportedFormat(IntSpan sizes, IntSpan strides) {
  return isContiguous(sizes, strides) ||
         isChannelsLastContiguous(sizes, strides);
}

//===----------------------------------------------------------------------===//
// L6: density and preserve_format
//===----------------------------------------------------------------------===//

bool memfmt::layout::isNonOverlappingAndDense(IntSpan sizes, IntSpan strides) {
  if (hasNoElements(sizes))
    return true;
  // PyTorch's algorithm: order the dims of size > 1 by stride, then each
  // stride must be the product of the sizes of the dims before it. A zero
  // stride on such a dim can never match (the running product is >= 1), and
  // neither can the second of two equal strides, so how std::sort orders
  // equal strides does not change the answer.
  // The runtime asks this on every kernel call: the dims are sorted on the
  // stack, and only a rank above kInlineRank allocates.
  constexpr size_t kInlineRank = 8;
  size_t inlineOrder[kInlineRank];
  std::vector<size_t> heapOrder;
  size_t *order = inlineOrder;
  if (sizes.size() > kInlineRank) {
    heapOrder.resize(sizes.size());
    order = heapOrder.data();
  }
  size_t count = 0;
  for (size_t i = 0, e = sizes.size(); i != e; ++i)
    if (sizes[i] != 1)
      order[count++] = i;
  std::sort(order, order + count, [&](size_t lhs, size_t rhs) {
    return strides[lhs] < strides[rhs];
  });
  int64_t expected = 1;
  for (size_t k = 0; k != count; ++k) {
    size_t dim = order[k];
    if (strides[dim] != expected)
      return false;
    expected = mulWrap(expected, sizes[dim]);
  }
  return true;
}

std::vector<int64_t> memfmt::layout::preserveFormatStrides(IntSpan sizes,
                                                           IntSpan strides) {
  // L6: zero strides are never preserved, not even on a size-1 dim.
  bool hasZeroStride = std::any_of(strides.begin(), strides.end(),
                                   [](int64_t stride) { return stride == 0; });
  if (!hasZeroStride && isNonOverlappingAndDense(sizes, strides))
    return std::vector<int64_t>(strides.begin(), strides.end());
  return stridesForFormat(suggestMemoryFormat(sizes, strides), sizes);
}

//===----------------------------------------------------------------------===//
// L3: same bytes
//===----------------------------------------------------------------------===//

bool memfmt::layout::sameBytes(IntSpan sizes, IntSpan lhs, IntSpan rhs) {
  if (hasNoElements(sizes))
    return true;
  for (size_t i = 0, e = sizes.size(); i != e; ++i)
    if (sizes[i] != 1 && lhs[i] != rhs[i])
      return false;
  return true;
}

bool memfmt::layout::formatsShareBytes(IntSpan sizes) {
  if (!hasChannelsLastFormat(sizes.size()))
    return false;
  return sameBytes(sizes, contiguousStrides(sizes), channelsLastStrides(sizes));
}

memfmt::layout::Reach memfmt::layout::reachOf(IntSpan sizes,
                                              IntSpan strides) {
  Reach reach;
  if (hasNoElements(sizes))
    return reach;
  for (size_t i = 0, e = sizes.size(); i != e; ++i) {
    int64_t step = mulWrap(sizes[i] - 1, strides[i]);
    if (step < 0)
      reach.low = addWrap(reach.low, step);
    else
      reach.high = addWrap(reach.high, step);
  }
  return reach;
}

int64_t memfmt::layout::spanElements(IntSpan sizes, IntSpan strides) {
  if (hasNoElements(sizes))
    return 0;
  Reach reach = reachOf(sizes, strides);
  return addWrap(reach.high - reach.low, 1);
}
