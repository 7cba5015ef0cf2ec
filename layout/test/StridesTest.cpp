//===- StridesTest.cpp - Tests for the memory-format rules L1-L6 ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// GoogleTest suite for memfmt/Layout/Strides.h. Every expectation that PyTorch
// also answers was checked against torch 1.13 (Debian's python3-torch), e.g.
// torch.empty(..., memory_format=torch.channels_last).stride(),
// x.is_contiguous(memory_format=...) and
// torch.empty_like(x, memory_format=torch.preserve_format).stride(). Where
// DESIGN.md §1 deliberately differs from PyTorch (L4 looks only at contiguity;
// L6 never preserves zero strides; a tensor with no elements is contiguous in
// every format), the test says so and expects the DESIGN answer.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Layout/Strides.h"

#include "gtest/gtest.h"

#include <array>
#include <set>
#include <vector>

using namespace memfmt::layout;

namespace {

using Strides = std::vector<int64_t>;

/// Calls `fn` with every multi-index of `sizes` (row-major order).
template <typename Fn>
void forEachIndex(const std::vector<int64_t> &sizes, Fn fn) {
  if (numElements(sizes) == 0)
    return;
  std::vector<int64_t> index(sizes.size(), 0);
  while (true) {
    fn(index);
    // Advance the last dim; carry into the dims before it.
    size_t dim = sizes.size();
    while (true) {
      if (dim == 0)
        return;
      --dim;
      if (++index[dim] < sizes[dim])
        break;
      index[dim] = 0;
    }
  }
}

/// The offset in elements of multi-index `index`.
int64_t offsetOf(const std::vector<int64_t> &index, const Strides &strides) {
  int64_t offset = 0;
  for (size_t i = 0; i != index.size(); ++i)
    offset += index[i] * strides[i];
  return offset;
}

/// Returns true if the offsets of all elements are distinct and fill
/// [0, numElements) exactly: a brute-force isNonOverlappingAndDense.
bool offsetsFillRange(const std::vector<int64_t> &sizes,
                      const std::vector<int64_t> &strides) {
  std::set<int64_t> offsets;
  bool inRange = true;
  int64_t n = numElements(sizes);
  forEachIndex(sizes, [&](const std::vector<int64_t> &index) {
    int64_t offset = offsetOf(index, strides);
    inRange &= offset >= 0 && offset < n;
    offsets.insert(offset);
  });
  return inRange && static_cast<int64_t>(offsets.size()) == n;
}

//===----------------------------------------------------------------------===//
// Formats, shapes and dense strides (L2)
//===----------------------------------------------------------------------===//

TEST(StridesTest, ToStringNamesEveryFormat) {
  EXPECT_EQ(toString(MemoryFormat::Contiguous), "contiguous");
  EXPECT_EQ(toString(MemoryFormat::ChannelsLast), "channels_last");
  EXPECT_EQ(toString(MemoryFormat::Preserve), "preserve");
}

TEST(StridesTest, NumElementsIsProductOfSizes) {
  EXPECT_EQ(numElements({2, 3, 4, 5}), 120);
  EXPECT_EQ(numElements({7}), 7);
  EXPECT_EQ(numElements({}), 1); // rank 0: a scalar.
  EXPECT_EQ(numElements({8, 0, 4}), 0);
}

TEST(StridesTest, OnlyRanksFourAndFiveHaveChannelsLast) {
  EXPECT_FALSE(hasChannelsLastFormat(0));
  EXPECT_FALSE(hasChannelsLastFormat(1));
  EXPECT_FALSE(hasChannelsLastFormat(2));
  EXPECT_FALSE(hasChannelsLastFormat(3));
  EXPECT_TRUE(hasChannelsLastFormat(4));
  EXPECT_TRUE(hasChannelsLastFormat(5));
  EXPECT_FALSE(hasChannelsLastFormat(6));
}

TEST(StridesTest, IntSpanAcceptsStdContainers) {
  std::vector<int64_t> sizes = {2, 3, 4, 5};
  std::array<int64_t, 4> strides = {60, 1, 15, 3};
  EXPECT_TRUE(isChannelsLastContiguous(sizes, strides));
  IntSpan span(sizes);
  EXPECT_EQ(span.size(), 4u);
  EXPECT_FALSE(span.empty());
  EXPECT_EQ(span[3], 5);
  EXPECT_TRUE(IntSpan().empty());
}

TEST(StridesTest, ContiguousStridesRank4) {
  // torch.empty(2,3,4,5).stride() == (60, 20, 5, 1)
  EXPECT_EQ(contiguousStrides({2, 3, 4, 5}), (Strides{60, 20, 5, 1}));
}

TEST(StridesTest, ContiguousStridesLowRanks) {
  EXPECT_EQ(contiguousStrides({}), Strides{});
  EXPECT_EQ(contiguousStrides({9}), (Strides{1}));
  EXPECT_EQ(contiguousStrides({3, 4}), (Strides{4, 1}));
  EXPECT_EQ(contiguousStrides({3, 4, 5}), (Strides{20, 5, 1}));
}

TEST(StridesTest, ChannelsLastStridesRank4) {
  // torch.empty(2,3,4,5, memory_format=torch.channels_last).stride()
  EXPECT_EQ(channelsLastStrides({2, 3, 4, 5}), (Strides{60, 1, 15, 3}));
}

TEST(StridesTest, ChannelsLastStridesRank5) {
  // torch.empty(2,3,4,5,6, memory_format=torch.channels_last_3d).stride()
  EXPECT_EQ(channelsLastStrides({2, 3, 4, 5, 6}), (Strides{360, 1, 90, 18, 3}));
  EXPECT_EQ(contiguousStrides({2, 3, 4, 5, 6}), (Strides{360, 120, 30, 6, 1}));
}

TEST(StridesTest, ChannelsLastStridesEmptyForOtherRanks) {
  EXPECT_TRUE(channelsLastStrides({}).empty());
  EXPECT_TRUE(channelsLastStrides({4}).empty());
  EXPECT_TRUE(channelsLastStrides({3, 4}).empty());
  EXPECT_TRUE(channelsLastStrides({3, 4, 5}).empty());
  EXPECT_TRUE(channelsLastStrides({1, 2, 3, 4, 5, 6}).empty());
}

TEST(StridesTest, OddSizesDenseStrides) {
  // torch.empty(3,7,5,11[, memory_format=torch.channels_last]).stride()
  EXPECT_EQ(contiguousStrides({3, 7, 5, 11}), (Strides{385, 55, 11, 1}));
  EXPECT_EQ(channelsLastStrides({3, 7, 5, 11}), (Strides{385, 1, 77, 7}));
}

TEST(StridesTest, SizeZeroDimCountsAsOneInContiguousStrides) {
  // torch.empty(0,3,4,5).stride() == (60, 20, 5, 1)
  EXPECT_EQ(contiguousStrides({0, 3, 4, 5}), (Strides{60, 20, 5, 1}));
  EXPECT_EQ(contiguousStrides({2, 0, 4, 5}), (Strides{20, 20, 5, 1}));
}

TEST(StridesTest, SizeZeroDimCountsAsOneInChannelsLastStrides) {
  // torch.empty(0,3,4,5, memory_format=torch.channels_last).stride() ==
  // (60, 1, 15, 3).
  EXPECT_EQ(channelsLastStrides({0, 3, 4, 5}), (Strides{60, 1, 15, 3}));
  // torch gives (0, 1, 15, 3) for 2x3x0x5 (its channels-last helper does not
  // clamp sizes); we clamp like its contiguous helper, so dense strides never
  // contain a zero (which L6 would refuse to preserve).
  EXPECT_EQ(channelsLastStrides({2, 3, 0, 5}), (Strides{15, 1, 15, 3}));
}

TEST(StridesTest, StridesForFormatSelectsFormat) {
  EXPECT_EQ(stridesForFormat(MemoryFormat::Contiguous, {2, 3, 4, 5}),
            (Strides{60, 20, 5, 1}));
  EXPECT_EQ(stridesForFormat(MemoryFormat::ChannelsLast, {2, 3, 4, 5}),
            (Strides{60, 1, 15, 3}));
  EXPECT_EQ(stridesForFormat(MemoryFormat::Contiguous, {3, 4}),
            (Strides{4, 1}));
  EXPECT_TRUE(stridesForFormat(MemoryFormat::ChannelsLast, {3, 4}).empty());
  EXPECT_TRUE(stridesForFormat(MemoryFormat::Preserve, {2, 3, 4, 5}).empty());
}

//===----------------------------------------------------------------------===//
// Contiguity (L2) and the formats that share bytes (L3)
//===----------------------------------------------------------------------===//

TEST(StridesTest, DenseNCHWIsContiguousOnly) {
  EXPECT_TRUE(isContiguous({2, 3, 4, 5}, {60, 20, 5, 1}));
  EXPECT_FALSE(isChannelsLastContiguous({2, 3, 4, 5}, {60, 20, 5, 1}));
}

TEST(StridesTest, DenseChannelsLastIsChannelsLastContiguousOnly) {
  EXPECT_TRUE(isChannelsLastContiguous({2, 3, 4, 5}, {60, 1, 15, 3}));
  EXPECT_FALSE(isContiguous({2, 3, 4, 5}, {60, 1, 15, 3}));
}

TEST(StridesTest, SizeOneDimStrideIsFreeForContiguity) {
  // L2: a size-1 dim's stride may be anything.
  EXPECT_TRUE(isContiguous({2, 1, 4, 5}, {20, 999, 5, 1}));
  EXPECT_TRUE(isContiguous({2, 3, 1, 5}, {15, 5, 0, 1}));
  EXPECT_TRUE(isChannelsLastContiguous({2, 3, 1, 5}, {15, 1, 7, 3}));
  EXPECT_FALSE(isContiguous({2, 3, 4, 5}, {60, 20, 5, 2}));
}

TEST(StridesTest, ChannelsLastContiguousFalseForOtherRanks) {
  // Rank 3 "HWC-like" strides are dense but rank 3 has no channels-last.
  EXPECT_FALSE(isChannelsLastContiguous({3, 4, 5}, {1, 15, 3}));
  EXPECT_FALSE(isChannelsLastContiguous({3, 4}, {4, 1}));
  EXPECT_FALSE(isChannelsLastContiguous({}, {}));
  EXPECT_TRUE(isContiguous({}, {}));
  EXPECT_TRUE(isContiguous({3, 4, 5}, {20, 5, 1}));
}

TEST(StridesTest, NxCx1x1IsBothFormats) {
  // L3, ResNet's pooled features. torch: both is_contiguous() and
  // is_contiguous(memory_format=channels_last) are True for
  // torch.empty(8,2048,1,1), and the channels-last strides are
  // (2048, 1, 2048, 2048).
  EXPECT_EQ(channelsLastStrides({8, 2048, 1, 1}),
            (Strides{2048, 1, 2048, 2048}));
  for (const Strides &strides :
       {Strides{2048, 1, 1, 1}, Strides{2048, 1, 2048, 2048}}) {
    EXPECT_TRUE(isContiguous({8, 2048, 1, 1}, strides));
    EXPECT_TRUE(isChannelsLastContiguous({8, 2048, 1, 1}, strides));
  }
  EXPECT_TRUE(formatsShareBytes({8, 2048, 1, 1}));
}

TEST(StridesTest, OnexCx1x1IsBothFormatsWithAnySizeOneStrides) {
  // torch: as_strided((1,3,1,1), (99,1,42,7)) is contiguous in both formats.
  EXPECT_TRUE(isContiguous({1, 3, 1, 1}, {99, 1, 42, 7}));
  EXPECT_TRUE(isChannelsLastContiguous({1, 3, 1, 1}, {99, 1, 42, 7}));
  EXPECT_TRUE(formatsShareBytes({1, 64, 1, 1}));
  EXPECT_EQ(channelsLastStrides({1, 64, 1, 1}), (Strides{64, 1, 64, 64}));
}

TEST(StridesTest, Nx1xHxWIsBothFormats) {
  // torch: torch.empty(4,1,7,9) is contiguous in both formats; its
  // channels-last strides are (63, 1, 9, 1).
  EXPECT_EQ(channelsLastStrides({4, 1, 7, 9}), (Strides{63, 1, 9, 1}));
  EXPECT_EQ(contiguousStrides({4, 1, 7, 9}), (Strides{63, 63, 9, 1}));
  for (const Strides &strides : {Strides{63, 63, 9, 1}, Strides{63, 1, 9, 1}}) {
    EXPECT_TRUE(isContiguous({4, 1, 7, 9}, strides));
    EXPECT_TRUE(isChannelsLastContiguous({4, 1, 7, 9}, strides));
  }
  EXPECT_TRUE(formatsShareBytes({4, 1, 7, 9}));
}

TEST(StridesTest, SizeZeroTensorIsContiguousInEveryFormat) {
  // Header convention. torch 1.13 answers is_contiguous(channels_last) ==
  // False for as_strided((0,3,4,5), (7,11,13,17)); the design wins.
  EXPECT_TRUE(isContiguous({0, 3, 4, 5}, {7, 11, 13, 17}));
  EXPECT_TRUE(isChannelsLastContiguous({0, 3, 4, 5}, {7, 11, 13, 17}));
  EXPECT_TRUE(isChannelsLastContiguous({2, 3, 4, 5, 0}, {0, 0, 0, 0, 0}));
  EXPECT_TRUE(hasSupportedFormat({2, 0, 4, 5}, {1, 1, 1, 1}));
  EXPECT_EQ(suggestMemoryFormat({0, 3, 4, 5}, {60, 1, 15, 3}),
            MemoryFormat::Contiguous);
}

TEST(StridesTest, IsContiguousInFormatDispatches) {
  EXPECT_TRUE(isContiguousInFormat(MemoryFormat::Contiguous, {2, 3, 4, 5},
                                   {60, 20, 5, 1}));
  EXPECT_TRUE(isContiguousInFormat(MemoryFormat::ChannelsLast, {2, 3, 4, 5},
                                   {60, 1, 15, 3}));
  EXPECT_FALSE(isContiguousInFormat(MemoryFormat::ChannelsLast, {2, 3, 4, 5},
                                    {60, 20, 5, 1}));
  EXPECT_FALSE(isContiguousInFormat(MemoryFormat::Preserve, {2, 3, 4, 5},
                                    {60, 20, 5, 1}));
}

TEST(StridesTest, ChannelsLast3dIsChannelsLastContiguous) {
  // torch.empty(2,3,4,5,6, memory_format=torch.channels_last_3d):
  // is_contiguous() False, is_contiguous(channels_last_3d) True.
  Strides strides = {360, 1, 90, 18, 3};
  EXPECT_TRUE(isChannelsLastContiguous({2, 3, 4, 5, 6}, strides));
  EXPECT_FALSE(isContiguous({2, 3, 4, 5, 6}, strides));
  EXPECT_EQ(suggestMemoryFormat({2, 3, 4, 5, 6}, strides),
            MemoryFormat::ChannelsLast);
}

TEST(StridesTest, Contiguous5dIsNotChannelsLast3d) {
  Strides strides = {360, 120, 30, 6, 1};
  EXPECT_TRUE(isContiguous({2, 3, 4, 5, 6}, strides));
  EXPECT_FALSE(isChannelsLastContiguous({2, 3, 4, 5, 6}, strides));
  EXPECT_FALSE(hasChannelsLastOrder({2, 3, 4, 5, 6}, strides));
  EXPECT_EQ(suggestMemoryFormat({2, 3, 4, 5, 6}, strides),
            MemoryFormat::Contiguous);
}

TEST(StridesTest, FormatsShareBytesFor5dNxCx1x1x1) {
  // torch: torch.empty(4,16,1,1,1) is channels_last_3d contiguous too.
  EXPECT_EQ(channelsLastStrides({4, 16, 1, 1, 1}),
            (Strides{16, 1, 16, 16, 16}));
  EXPECT_TRUE(formatsShareBytes({4, 16, 1, 1, 1}));
  EXPECT_FALSE(formatsShareBytes({4, 16, 2, 1, 1}));
}

TEST(StridesTest, FormatsShareBytesTrueCases) {
  EXPECT_TRUE(formatsShareBytes({1, 1, 1, 1}));
  EXPECT_TRUE(formatsShareBytes({1, 1, 1, 9}));
  EXPECT_TRUE(formatsShareBytes({0, 3, 4, 5})); // no elements.
}

TEST(StridesTest, FormatsShareBytesFalseCases) {
  // torch: is_contiguous(channels_last) is False for contiguous tensors of
  // these shapes.
  EXPECT_FALSE(formatsShareBytes({2, 3, 4, 5}));
  EXPECT_FALSE(formatsShareBytes({1, 3, 4, 5}));
  EXPECT_FALSE(formatsShareBytes({2, 3, 4, 1}));
  EXPECT_FALSE(formatsShareBytes({2, 3, 1, 5}));
  // Ranks without channels-last never share.
  EXPECT_FALSE(formatsShareBytes({8, 2048}));
  EXPECT_FALSE(formatsShareBytes({}));
}

//===----------------------------------------------------------------------===//
// L1: channels-last order
//===----------------------------------------------------------------------===//

TEST(StridesTest, ChannelsLastOrderForDenseChannelsLast) {
  EXPECT_TRUE(hasChannelsLastOrder({2, 3, 4, 5}, {60, 1, 15, 3}));
  EXPECT_TRUE(hasChannelsLastOrder({3, 7, 5, 11}, {385, 1, 77, 7}));
}

TEST(StridesTest, ChannelsLastOrderDoesNotNeedDensity) {
  // torch.empty(2,6,4,5, memory_format=torch.channels_last)[:, :3] has
  // strides (120, 1, 30, 6): ordered like channels-last, not dense.
  EXPECT_TRUE(hasChannelsLastOrder({2, 3, 4, 5}, {120, 1, 30, 6}));
  EXPECT_FALSE(isChannelsLastContiguous({2, 3, 4, 5}, {120, 1, 30, 6}));
}

TEST(StridesTest, ChannelsLastOrderFalseForNCHW) {
  EXPECT_FALSE(hasChannelsLastOrder({2, 3, 4, 5}, {60, 20, 5, 1}));
}

TEST(StridesTest, ChannelsLastOrderIgnoresSizeOneDims) {
  // H has size 1: its stride (here 0 or huge) is not compared.
  EXPECT_TRUE(hasChannelsLastOrder({2, 3, 1, 5}, {15, 1, 0, 3}));
  EXPECT_TRUE(hasChannelsLastOrder({2, 3, 1, 5}, {15, 1, 1000, 3}));
  // Only one dim of size > 1: nothing to compare.
  EXPECT_TRUE(hasChannelsLastOrder({1, 3, 1, 1}, {5, 9, 2, 1}));
  EXPECT_TRUE(hasChannelsLastOrder({1, 1, 1, 1}, {0, 0, 0, 0}));
  // Nx1xHxW contiguous: C ignored, W < H < N.
  EXPECT_TRUE(hasChannelsLastOrder({4, 1, 7, 9}, {63, 63, 9, 1}));
}

TEST(StridesTest, ChannelsLastOrderIsStrict) {
  // Equal strides on two dims of size > 1 are not ordered.
  EXPECT_FALSE(hasChannelsLastOrder({2, 3, 4, 5}, {60, 1, 3, 3}));
  EXPECT_FALSE(hasChannelsLastOrder({2, 3, 4, 5}, {60, 1, 15, 1}));
}

TEST(StridesTest, ChannelsLastOrderRank5) {
  EXPECT_TRUE(hasChannelsLastOrder({2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}));
  // A strided D slice keeps the order: (360, 1, 90, 36, 3).
  EXPECT_TRUE(hasChannelsLastOrder({2, 3, 4, 3, 6}, {360, 1, 90, 36, 3}));
  // D and H swapped.
  EXPECT_FALSE(hasChannelsLastOrder({2, 3, 4, 5, 6}, {360, 1, 18, 90, 3}));
}

TEST(StridesTest, ChannelsLastOrderFalseForOtherRanks) {
  EXPECT_FALSE(hasChannelsLastOrder({3, 4, 5}, {1, 15, 3}));
  EXPECT_FALSE(hasChannelsLastOrder({3, 4}, {1, 3}));
  EXPECT_FALSE(hasChannelsLastOrder({}, {}));
}

TEST(StridesTest, NeitherPermutationHasChannelsLastOrder) {
  // NHCW: torch.empty(2,4,3,5).permute(0,2,1,3), strides (60, 5, 15, 1).
  EXPECT_FALSE(hasChannelsLastOrder({2, 3, 4, 5}, {60, 5, 15, 1}));
  // CHWN: torch.empty(3,4,5,2).permute(3,0,1,2), strides (1, 40, 10, 2).
  EXPECT_FALSE(hasChannelsLastOrder({2, 3, 4, 5}, {1, 40, 10, 2}));
}

//===----------------------------------------------------------------------===//
// L4: suggested and supported formats
//===----------------------------------------------------------------------===//

TEST(StridesTest, SuggestContiguousForNCHW) {
  EXPECT_EQ(suggestMemoryFormat({2, 3, 4, 5}, {60, 20, 5, 1}),
            MemoryFormat::Contiguous);
  EXPECT_TRUE(hasSupportedFormat({2, 3, 4, 5}, {60, 20, 5, 1}));
}

TEST(StridesTest, SuggestChannelsLastForDenseChannelsLast) {
  EXPECT_EQ(suggestMemoryFormat({2, 3, 4, 5}, {60, 1, 15, 3}),
            MemoryFormat::ChannelsLast);
  EXPECT_TRUE(hasSupportedFormat({2, 3, 4, 5}, {60, 1, 15, 3}));
}

TEST(StridesTest, SuggestContiguousWhenBothFormatsHold) {
  // L3/L4: channels-last contiguous *and* contiguous -> contiguous.
  EXPECT_EQ(suggestMemoryFormat({8, 2048, 1, 1}, {2048, 1, 2048, 2048}),
            MemoryFormat::Contiguous);
  EXPECT_EQ(suggestMemoryFormat({4, 1, 7, 9}, {63, 1, 9, 1}),
            MemoryFormat::Contiguous);
}

TEST(StridesTest, SuggestIsStricterThanPyTorchForSlicedChannelsLast) {
  // torch.suggest_memory_format says channels_last for strides
  // (120, 1, 30, 6) (it looks at the order); L4 only looks at contiguity.
  EXPECT_EQ(suggestMemoryFormat({2, 3, 4, 5}, {120, 1, 30, 6}),
            MemoryFormat::Contiguous);
  EXPECT_FALSE(hasSupportedFormat({2, 3, 4, 5}, {120, 1, 30, 6}));
}

TEST(StridesTest, ZeroStridesAreNoSupportedFormat) {
  // torch.empty(2,1,4,5).expand(2,3,4,5): strides (20, 0, 5, 1), contiguous
  // in neither format.
  EXPECT_FALSE(isContiguous({2, 3, 4, 5}, {20, 0, 5, 1}));
  EXPECT_FALSE(isChannelsLastContiguous({2, 3, 4, 5}, {20, 0, 5, 1}));
  EXPECT_FALSE(hasSupportedFormat({2, 3, 4, 5}, {20, 0, 5, 1}));
  EXPECT_EQ(suggestMemoryFormat({2, 3, 4, 5}, {20, 0, 5, 1}),
            MemoryFormat::Contiguous);
  // Broadcast along N: (0, 20, 5, 1).
  EXPECT_FALSE(hasSupportedFormat({2, 3, 4, 5}, {0, 20, 5, 1}));
}

TEST(StridesTest, OverlappingStridesAreNoSupportedFormat) {
  EXPECT_FALSE(hasSupportedFormat({2, 3, 4, 5}, {1, 1, 1, 1}));
  EXPECT_EQ(suggestMemoryFormat({2, 3, 4, 5}, {1, 1, 1, 1}),
            MemoryFormat::Contiguous);
}

TEST(StridesTest, OtherPermutationsAreNoSupportedFormat) {
  // NHCW and CHWN are dense but neither format (torch agrees: both
  // is_contiguous checks are False).
  EXPECT_FALSE(hasSupportedFormat({2, 3, 4, 5}, {60, 5, 15, 1}));
  EXPECT_FALSE(hasSupportedFormat({2, 3, 4, 5}, {1, 40, 10, 2}));
  // NCDHW permuted to NDCHW: (360, 30, 90, 6, 1).
  EXPECT_FALSE(hasSupportedFormat({2, 3, 4, 5, 6}, {360, 30, 90, 6, 1}));
}

TEST(StridesTest, LowRanksOnlyEverSuggestContiguous) {
  EXPECT_EQ(suggestMemoryFormat({3, 4}, {1, 3}), MemoryFormat::Contiguous);
  EXPECT_FALSE(hasSupportedFormat({3, 4}, {1, 3})); // a transpose.
  EXPECT_TRUE(hasSupportedFormat({3, 4}, {4, 1}));
  EXPECT_TRUE(hasSupportedFormat({7}, {1}));
  EXPECT_FALSE(hasSupportedFormat({7}, {2}));
  EXPECT_TRUE(hasSupportedFormat({}, {}));
}

//===----------------------------------------------------------------------===//
// Non-overlapping and dense
//===----------------------------------------------------------------------===//

TEST(StridesTest, DenseForEitherFormat) {
  EXPECT_TRUE(isNonOverlappingAndDense({2, 3, 4, 5}, {60, 20, 5, 1}));
  EXPECT_TRUE(isNonOverlappingAndDense({2, 3, 4, 5}, {60, 1, 15, 3}));
  EXPECT_TRUE(isNonOverlappingAndDense({2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}));
}

TEST(StridesTest, DenseForAnyPermutation) {
  EXPECT_TRUE(isNonOverlappingAndDense({2, 3, 4, 5}, {60, 5, 15, 1})); // NHCW
  EXPECT_TRUE(isNonOverlappingAndDense({2, 3, 4, 5}, {1, 40, 10, 2})); // CHWN
  EXPECT_TRUE(isNonOverlappingAndDense({5, 3, 4}, {1, 20, 5}));
  EXPECT_TRUE(isNonOverlappingAndDense({3, 4}, {1, 3}));
}

TEST(StridesTest, ZeroStrideOnRealDimOverlaps) {
  EXPECT_FALSE(isNonOverlappingAndDense({2, 3, 4, 5}, {20, 0, 5, 1}));
  EXPECT_FALSE(isNonOverlappingAndDense({2, 3, 4, 5}, {0, 20, 5, 1}));
  EXPECT_FALSE(isNonOverlappingAndDense({4}, {0}));
}

TEST(StridesTest, OverlappingStridesAreNotDense) {
  EXPECT_FALSE(isNonOverlappingAndDense({2, 3, 4, 5}, {1, 1, 1, 1}));
  // Sliding windows: (3, 4) with strides (1, 1).
  EXPECT_FALSE(isNonOverlappingAndDense({3, 4}, {1, 1}));
  // Equal strides on two real dims.
  EXPECT_FALSE(isNonOverlappingAndDense({2, 3, 4, 5}, {60, 1, 3, 3}));
}

TEST(StridesTest, GapsAreNotDense) {
  // Sliced channels-last (120, 1, 30, 6); every other W (120, 40, 10, 2).
  EXPECT_FALSE(isNonOverlappingAndDense({2, 3, 4, 5}, {120, 1, 30, 6}));
  EXPECT_FALSE(isNonOverlappingAndDense({2, 3, 4, 5}, {120, 40, 10, 2}));
  EXPECT_FALSE(isNonOverlappingAndDense({7}, {2}));
}

TEST(StridesTest, DensityIgnoresSizeOneAndSizeZero) {
  EXPECT_TRUE(isNonOverlappingAndDense({1, 3, 1, 1}, {0, 1, 0, 0}));
  EXPECT_TRUE(isNonOverlappingAndDense({2, 3, 1, 5}, {15, 5, -4, 1}));
  EXPECT_TRUE(isNonOverlappingAndDense({1}, {123}));
  EXPECT_TRUE(isNonOverlappingAndDense({}, {}));
  // No elements: dense whatever the strides (header convention).
  EXPECT_TRUE(isNonOverlappingAndDense({0, 3, 4, 5}, {1, 1, 1, 1}));
}

TEST(StridesTest, NegativeStrideIsNotDense) {
  EXPECT_FALSE(isNonOverlappingAndDense({4}, {-1}));
  EXPECT_FALSE(isNonOverlappingAndDense({2, 3}, {3, -1}));
}

TEST(StridesTest, DensityMatchesBruteForce) {
  const std::vector<std::pair<Strides, Strides>> cases = {
      {{2, 3, 4, 5}, {60, 20, 5, 1}},
      {{2, 3, 4, 5}, {60, 1, 15, 3}},
      {{2, 3, 4, 5}, {60, 5, 15, 1}},
      {{2, 3, 4, 5}, {1, 40, 10, 2}},
      {{2, 3, 4, 5}, {120, 1, 30, 6}},
      {{2, 3, 4, 5}, {20, 0, 5, 1}},
      {{2, 3, 4, 5}, {1, 1, 1, 1}},
      {{2, 3, 4, 5}, {60, 1, 3, 3}},
      {{3, 1, 2, 2}, {4, 0, 2, 1}},
      {{2, 3}, {1, 2}},
      {{2, 3}, {2, 1}},
      {{2, 3}, {3, 1}},
  };
  for (const auto &[sizes, strides] : cases)
    EXPECT_EQ(isNonOverlappingAndDense(sizes, strides),
              offsetsFillRange(sizes, strides))
        << "sizes " << ::testing::PrintToString(sizes) << " strides "
        << ::testing::PrintToString(strides);
}

//===----------------------------------------------------------------------===//
// L6: preserve_format
//===----------------------------------------------------------------------===//

TEST(StridesTest, PreserveKeepsContiguous) {
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {60, 20, 5, 1}),
            (Strides{60, 20, 5, 1}));
}

TEST(StridesTest, PreserveKeepsChannelsLast) {
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {60, 1, 15, 3}),
            (Strides{60, 1, 15, 3}));
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}),
            (Strides{360, 1, 90, 18, 3}));
}

TEST(StridesTest, PreserveKeepsDensePermutationsExactly) {
  // torch.empty_like(x).stride() for NHCW, CHWN and NDCHW views.
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {60, 5, 15, 1}),
            (Strides{60, 5, 15, 1}));
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {1, 40, 10, 2}),
            (Strides{1, 40, 10, 2}));
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5, 6}, {360, 30, 90, 6, 1}),
            (Strides{360, 30, 90, 6, 1}));
}

TEST(StridesTest, PreserveKeepsLowRankPermutations) {
  // torch.empty(3,4,5).permute(2,0,1): empty_like keeps (1, 20, 5).
  EXPECT_EQ(preserveFormatStrides({5, 3, 4}, {1, 20, 5}), (Strides{1, 20, 5}));
  // torch.empty(3,4).t(): empty_like keeps (1, 4).
  EXPECT_EQ(preserveFormatStrides({4, 3}, {1, 4}), (Strides{1, 4}));
}

TEST(StridesTest, PreserveKeepsNonZeroSizeOneStrides) {
  // torch: empty_like(as_strided((1,3,1,1), (99,1,42,7))) keeps them.
  EXPECT_EQ(preserveFormatStrides({1, 3, 1, 1}, {99, 1, 42, 7}),
            (Strides{99, 1, 42, 7}));
}

TEST(StridesTest, PreserveExpandFallsBackToContiguous) {
  // torch.empty_like(torch.empty(2,1,4,5).expand(2,3,4,5)).stride() ==
  // (60, 20, 5, 1), also when the source was channels-last.
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {20, 0, 5, 1}),
            (Strides{60, 20, 5, 1}));
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {0, 20, 5, 1}),
            (Strides{60, 20, 5, 1}));
}

TEST(StridesTest, PreserveNeverKeepsZeroStrideOnSizeOneDim) {
  // torch keeps (15, 5, 0, 1) here; L6 says zero strides are never
  // preserved, so the result takes L4's format.
  EXPECT_EQ(preserveFormatStrides({2, 3, 1, 5}, {15, 5, 0, 1}),
            (Strides{15, 5, 5, 1}));
  // 1x3x1x1 with (0, 1, 0, 0): both formats hold, L4 says contiguous.
  EXPECT_EQ(preserveFormatStrides({1, 3, 1, 1}, {0, 1, 0, 0}),
            (Strides{3, 1, 1, 1}));
  // Channels-last with a zero stride on size-1 H stays channels-last.
  EXPECT_EQ(preserveFormatStrides({2, 3, 1, 5}, {15, 1, 0, 3}),
            (Strides{15, 1, 15, 3}));
}

TEST(StridesTest, PreserveNonDenseFallsBackToSuggestedFormat) {
  // Sliced channels-last (120, 1, 30, 6): torch gives (60, 1, 15, 3), but
  // L4 only suggests channels-last for channels-last *contiguous* input.
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {120, 1, 30, 6}),
            (Strides{60, 20, 5, 1}));
  // Every other W of a contiguous tensor (torch agrees).
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {120, 40, 10, 2}),
            (Strides{60, 20, 5, 1}));
  // Rank 1 with a step: torch gives (1,).
  EXPECT_EQ(preserveFormatStrides({5}, {2}), (Strides{1}));
}

TEST(StridesTest, PreserveOverlappingFallsBackToContiguous) {
  // torch gives (1, 2, 6, 24) here (it sorts the strides); L6 gives L4's
  // format.
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {1, 1, 1, 1}),
            (Strides{60, 20, 5, 1}));
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {60, 1, 3, 3}),
            (Strides{60, 20, 5, 1}));
}

TEST(StridesTest, PreserveSizeZeroKeepsStrides) {
  // torch.empty_like(torch.empty(0,3,4,5, memory_format=channels_last))
  // keeps (60, 1, 15, 3).
  EXPECT_EQ(preserveFormatStrides({0, 3, 4, 5}, {60, 1, 15, 3}),
            (Strides{60, 1, 15, 3}));
  EXPECT_EQ(preserveFormatStrides({}, {}), Strides{});
}

//===----------------------------------------------------------------------===//
// L3: same bytes, and offsets
//===----------------------------------------------------------------------===//

TEST(StridesTest, SameBytesForEqualStrides) {
  EXPECT_TRUE(sameBytes({2, 3, 4, 5}, {60, 1, 15, 3}, {60, 1, 15, 3}));
  EXPECT_TRUE(sameBytes({}, {}, {}));
}

TEST(StridesTest, SameBytesIgnoresSizeOneDims) {
  EXPECT_TRUE(
      sameBytes({8, 2048, 1, 1}, {2048, 1, 1, 1}, {2048, 1, 2048, 2048}));
  EXPECT_TRUE(sameBytes({2, 3, 1, 5}, {15, 5, 0, 1}, {15, 5, 5, 1}));
}

TEST(StridesTest, SameBytesFalseWhenRealDimDiffers) {
  EXPECT_FALSE(sameBytes({2, 3, 4, 5}, {60, 20, 5, 1}, {60, 1, 15, 3}));
  EXPECT_FALSE(sameBytes({1, 3, 4, 5}, {60, 20, 5, 1}, {60, 1, 15, 3}));
  EXPECT_FALSE(sameBytes({7}, {1}, {2}));
}

TEST(StridesTest, SameBytesTrueWithoutElements) {
  EXPECT_TRUE(sameBytes({0, 3, 4, 5}, {60, 20, 5, 1}, {60, 1, 15, 3}));
  EXPECT_TRUE(sameBytes({2, 3, 0}, {1, 2, 3}, {9, 9, 9}));
}

TEST(StridesTest, SameBytesMeansSameOffsets) {
  // L3 by brute force: for the shapes that share bytes, every element has
  // the same offset under both dense stride vectors.
  for (const Strides &sizes : {Strides{8, 16, 1, 1}, Strides{1, 5, 1, 1},
                               Strides{3, 1, 4, 6}, Strides{2, 4, 1, 1, 1}}) {
    Strides contiguous = contiguousStrides(sizes);
    Strides channelsLast = channelsLastStrides(sizes);
    ASSERT_TRUE(sameBytes(sizes, contiguous, channelsLast));
    forEachIndex(sizes, [&](const std::vector<int64_t> &index) {
      EXPECT_EQ(offsetOf(index, contiguous), offsetOf(index, channelsLast));
    });
  }
}

TEST(StridesTest, OffsetsInBothFormats) {
  Strides contiguous = contiguousStrides({2, 3, 4, 5});
  Strides channelsLast = channelsLastStrides({2, 3, 4, 5});
  EXPECT_EQ(offsetOf({1, 2, 0, 1}, contiguous), 101);
  EXPECT_EQ(offsetOf({1, 2, 0, 1}, channelsLast), 65);
  EXPECT_EQ(offsetOf({0, 1, 0, 0}, channelsLast), 1); // next channel.
  EXPECT_EQ(offsetOf({0, 0, 0, 1}, channelsLast), 3); // next pixel.
  EXPECT_EQ(offsetOf({1, 2, 3, 4, 5}, channelsLastStrides({2, 3, 4, 5, 6})),
            360 + 2 + 270 + 72 + 15);
}

TEST(StridesTest, SpanOfDenseAndStridedTensors) {
  // A dense tensor spans exactly its elements, in either format.
  EXPECT_EQ(spanElements({2, 3, 4, 5}, {60, 20, 5, 1}), 120);
  EXPECT_EQ(spanElements({2, 3, 4, 5}, {60, 1, 15, 3}), 120);
  // Size-1 dims reach nothing, whatever their stride.
  EXPECT_EQ(spanElements({1, 3, 1, 1}, {999, 1, -7, 5}), 3);
  // A gap (a slice of a wider tensor) and broadcast (zero stride).
  EXPECT_EQ(spanElements({2, 3}, {10, 1}), 13);
  EXPECT_EQ(spanElements({4, 3}, {0, 1}), 3);
  // No elements: no span; rank 0: one element.
  EXPECT_EQ(spanElements({2, 0, 3}, {0, 3, 1}), 0);
  EXPECT_EQ(spanElements({}, {}), 1);
  // Negative strides reach below element 0.
  Reach reach = reachOf({3, 2}, {-2, 1});
  EXPECT_EQ(reach.low, -4);
  EXPECT_EQ(reach.high, 1);
  EXPECT_EQ(spanElements({3, 2}, {-2, 1}), 6);
}

TEST(StridesTest, DenseStridesFillTheirRange) {
  // The dense strides of both formats are a bijection onto [0, numel) and are
  // recognised by the predicates, for odd and size-1-heavy shapes.
  for (const Strides &sizes :
       {Strides{2, 3, 4, 5}, Strides{3, 7, 5, 11}, Strides{1, 3, 1, 5},
        Strides{2, 1, 3, 1}, Strides{2, 3, 2, 3, 2}, Strides{1, 1, 1, 1, 1}}) {
    Strides contiguous = contiguousStrides(sizes);
    Strides channelsLast = channelsLastStrides(sizes);
    EXPECT_TRUE(offsetsFillRange(sizes, contiguous));
    EXPECT_TRUE(offsetsFillRange(sizes, channelsLast));
    EXPECT_TRUE(isContiguous(sizes, contiguous));
    EXPECT_TRUE(isChannelsLastContiguous(sizes, channelsLast));
    EXPECT_TRUE(hasChannelsLastOrder(sizes, channelsLast));
    EXPECT_TRUE(isNonOverlappingAndDense(sizes, channelsLast));
    EXPECT_EQ(preserveFormatStrides(sizes, channelsLast), channelsLast);
    EXPECT_EQ(formatsShareBytes(sizes),
              sameBytes(sizes, contiguous, channelsLast));
  }
}

} // namespace
