//===- Reduce.cpp - sum_to_size -------------------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// sum_to_size sums a tensor down to a shape it was broadcast from: the
// gradient of a broadcast operand (a squeeze-excite scale [N, C, 1, 1]
// against [N, C, H, W], a layer scale [C, 1, 1], a bias). Every output
// element is the sum of the input elements that broadcast reads it for,
// accumulated in double and rounded once, so the result does not depend on
// the layout or the split across threads (L8).
//
// The reference visits each output element's reduced index space with an
// odometer, for any strides. The fast variant needs a dim of unit stride in
// the input and makes it the vectorised inner loop: where that dim is
// summed (NCHW's W under an [N, C, 1, 1] result) each output element adds
// contiguous runs; where it is kept (channels-last's C) a block of up to
// 64 neighbouring outputs accumulates together, one contiguous row of the
// block per reduced index, the column sums batch norm's statistics take.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Element.h"
#include "RowSums.h"

#include "lib/Parallel.h"

#include <algorithm>

using namespace memfmt::runtime;

namespace {

/// Output elements per thread below which the sums stay serial (each one
/// sums many inputs).
constexpr int64_t kMinOutputsPerThread = 64;

/// sum_to_size's index spaces: the output's dims (each with its input
/// stride) and the reduced dims of the input (sizes and strides), size-1
/// reduced dims dropped.
struct Reduction {
  int64_t outRank = 0;
  int64_t outSizes[kMaxRank] = {}, outStrides[kMaxRank] = {},
          inStrides[kMaxRank] = {};
  int64_t reducedRank = 0;
  int64_t reducedSizes[kMaxRank] = {}, reducedStrides[kMaxRank] = {};

  explicit Reduction(const args::sum_to_size &a) {
    const TensorView &x = a.input, &y = a.output;
    int64_t lead = x.rank - y.rank;
    outRank = y.rank;
    for (int64_t d = 0; d < x.rank; ++d) {
      bool summed = d < lead || (y.sizes[d - lead] == 1 && x.sizes[d] != 1);
      if (d >= lead) {
        outSizes[d - lead] = y.sizes[d - lead];
        outStrides[d - lead] = y.strides[d - lead];
        inStrides[d - lead] = summed ? 0 : x.strides[d];
      }
      if (summed && x.sizes[d] != 1) {
        reducedSizes[reducedRank] = x.sizes[d];
        reducedStrides[reducedRank++] = x.strides[d];
      }
    }
  }

  /// The input and output offsets of output element `index` (row-major over
  /// the output's sizes).
  void offsetsOf(int64_t index, int64_t &in, int64_t &out) const {
    in = out = 0;
    for (int64_t d = outRank - 1; d >= 0; --d) {
      int64_t coordinate = index % outSizes[d];
      index /= outSizes[d];
      in += coordinate * inStrides[d];
      out += coordinate * outStrides[d];
    }
  }

  /// Calls `visit(offset)` for every reduced index, with the input offset
  /// it adds to an output element's, dims in `[0, rank)` of the reduced
  /// ones (an odometer; the last dim fastest).
  template <typename Visit>
  void forEachReduced(int64_t rank, Visit &&visit) const {
    for (int64_t d = 0; d < rank; ++d)
      if (reducedSizes[d] == 0)
        return;
    int64_t counter[kMaxRank] = {};
    int64_t offset = 0;
    while (true) {
      visit(offset);
      // Steps only to offsets of elements: no sum past a dim's last one,
      // which could overflow for a valid view (its last offset fits).
      int64_t d = rank - 1;
      for (; d >= 0; --d) {
        if (++counter[d] < reducedSizes[d]) {
          offset += reducedStrides[d];
          break;
        }
        offset -= (counter[d] - 1) * reducedStrides[d];
        counter[d] = 0;
      }
      if (d < 0)
        return;
    }
  }
};

} // namespace

void cpu::sumToSizeReference(const args::sum_to_size &a) {
  // An empty input sums to zeros. Its strides are arbitrary (any strides
  // describe no elements), so no offset is formed from them.
  if (a.input.numElements() == 0) {
    args::fill zeros{};
    zeros.output = a.output;
    fillReference(zeros);
    return;
  }
  const Reduction r(a);
  const float *x = a.input.as<float>();
  float *y = a.output.as<float>();
  parallelFor(a.output.numElements(), kMinOutputsPerThread,
              [&](int64_t begin, int64_t end, int) {
                for (int64_t o = begin; o < end; ++o) {
                  int64_t in, out;
                  r.offsetsOf(o, in, out);
                  double sum = 0;
                  r.forEachReduced(r.reducedRank, [&](int64_t offset) {
                    sum += x[in + offset];
                  });
                  y[out] = static_cast<float>(sum);
                }
              });
}

namespace {

/// Outputs that accumulate together along a kept unit-stride dim.
constexpr int64_t kBlock = 64;

template <typename T>
const char *sumToSizeUnitStride(const args::sum_to_size &a) {
  const TensorView &x = a.input;
  // An empty input (its data may be null) sums to zeros: the reference.
  if (x.numElements() == 0)
    return nullptr;
  Reduction r(a);
  int64_t lead = x.rank - a.output.rank;
  // The input's unit-stride dim: summed or kept.
  int64_t unit = -1;
  for (int64_t d = 0; d < x.rank; ++d)
    if (x.strides[d] == 1 && x.sizes[d] > 1)
      unit = d;
  if (unit < 0)
    return nullptr;
  const T *in = x.as<T>();
  T *y = a.output.as<T>();
  bool unitSummed = unit < lead || a.output.sizes[unit - lead] == 1;
  if (unitSummed) {
    // Contiguous runs: the unit dim is the last reduced one in the
    // odometer's order once moved there.
    int64_t position = 0;
    while (r.reducedStrides[position] != 1 || r.reducedSizes[position] <= 1)
      ++position;
    int64_t run = r.reducedSizes[position];
    std::rotate(r.reducedSizes + position, r.reducedSizes + position + 1,
                r.reducedSizes + r.reducedRank);
    std::rotate(r.reducedStrides + position, r.reducedStrides + position + 1,
                r.reducedStrides + r.reducedRank);
    parallelFor(a.output.numElements(), kMinOutputsPerThread,
                [&](int64_t begin, int64_t end, int) {
                  for (int64_t o = begin; o < end; ++o) {
                    int64_t base, out;
                    r.offsetsOf(o, base, out);
                    cpu::Lanes lane = {};
                    r.forEachReduced(r.reducedRank - 1, [&](int64_t offset) {
                      cpu::addContiguous(lane, in + base + offset, run);
                    });
                    y[out] = cpu::store<T>(
                        static_cast<float>(cpu::laneSum(lane)));
                  }
                });
    return "contiguous_runs";
  }
  // Blocks of up to kBlock outputs along the kept unit dim k: its index
  // becomes the innermost, blocked coordinate.
  int64_t k = unit - lead;
  int64_t size = r.outSizes[k], outStride = r.outStrides[k];
  int64_t blocksPerRow = (size + kBlock - 1) / kBlock;
  Reduction rows = r;
  rows.outSizes[k] = 1;
  int64_t tasks = size ? a.output.numElements() / size * blocksPerRow : 0;
  parallelFor(tasks, std::max<int64_t>(1, kMinOutputsPerThread / kBlock),
              [&](int64_t begin, int64_t end, int) {
                for (int64_t task = begin; task < end; ++task) {
                  int64_t base, out;
                  rows.offsetsOf(task / blocksPerRow, base, out);
                  int64_t first = task % blocksPerRow * kBlock;
                  int64_t count = std::min(kBlock, size - first);
                  double sum[kBlock] = {};
                  const T *p = in + base + first;
                  rows.forEachReduced(rows.reducedRank, [&](int64_t offset) {
                    for (int64_t j = 0; j < count; ++j)
                      sum[j] += cpu::load(p[offset + j]);
                  });
                  for (int64_t j = 0; j < count; ++j)
                    y[out + (first + j) * outStride] =
                        cpu::store<T>(static_cast<float>(sum[j]));
                }
              });
  return "column_blocks";
}

} // namespace

const char *cpu::sumToSizeFast(const args::sum_to_size &a, DType dtype) {
  return visitFloatElement(dtype, [&](auto element) {
    return sumToSizeUnitStride<decltype(element)>(a);
  });
}
