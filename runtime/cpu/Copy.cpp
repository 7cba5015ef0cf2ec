//===- Copy.cpp - Copies between any two layouts --------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The copy kernel behind every layout conversion (contiguous, clone, to) and
// the flatten copy. The reference is forEachStrided over the output's
// order. The fast path, in order:
//  * the output is the input itself: nothing to do;
//  * both are dense in the same layout (L3, same bytes): a block copy;
//  * a 4-D NCHW <-> NHWC conversion (contiguous on one side, channels-last
//    contiguous on the other): per image, a transpose of a C x HW matrix
//    into HW x C (or back) in cache-sized square tiles, split across
//    (image, tile row) pairs;
// * any other view of the same shape (a slice, a channel shuffle, a
//   permute, a piece of a cat or chunk): the strided loop ordered by the
//   side with the longer unit-stride run, with block copies for runs that
//   are unit-stride on both sides.
// The fast path moves elements of any size (f32, bf16, ...: Element.h's
// visitStorage); the reference is f32 (other types are widened).
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Element.h"
#include "StridedLoop.h"

#include <algorithm>
#include <cstring>

using namespace memfmt::runtime;

namespace {

constexpr int64_t kMinPerThread = 1 << 16;

/// Edge of the square tiles of the blocked transpose (elements); 64 measured
/// best of 16, 32 and 64 (f32).
constexpr int64_t kTile = 64;

/// Rows [i0, i1) of the transpose of one dense rows x cols matrix:
/// dst[j * rows + i] = src[i * cols + j], in kTile-column blocks. The inner
/// loop runs over i, so the destination is written contiguously while the
/// kTile source lines being read stay in L1; this order measured about twice
/// as fast as the other one (8x256x56x56, both directions, 2 threads).
template <typename U>
void transposeRows(const U *src, U *dst, int64_t rows, int64_t cols,
                   int64_t i0, int64_t i1) {
  for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
    int64_t j1 = std::min(cols, j0 + kTile);
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t i = i0; i < i1; ++i)
        dst[j * rows + i] = src[i * cols + j];
  }
}

/// For each of `count` matrices, dst[j * rows + i] = src[i * cols + j]
/// (rows x cols, both dense), split across (matrix, kTile rows) tasks.
template <typename U>
void transposeMatrices(const U *src, U *dst, int64_t count, int64_t rows,
                       int64_t cols) {
  const int64_t tileRows = (rows + kTile - 1) / kTile;
  const int64_t matrix = rows * cols;
  parallelFor(count * tileRows,
              std::max<int64_t>(1, kMinPerThread / (kTile * cols)),
              [=](int64_t begin, int64_t end, int) {
                for (int64_t task = begin; task < end; ++task) {
                  int64_t m = task / tileRows;
                  int64_t i0 = (task % tileRows) * kTile;
                  transposeRows(src + m * matrix, dst + m * matrix, rows, cols,
                                i0, std::min(rows, i0 + kTile));
                }
              });
}

} // namespace

void cpu::copyReference(const TensorView &input, const TensorView &output) {
  const float *x = input.as<float>();
  float *y = output.as<float>();
  forEachStrided<2>(output.rank, output.sizes, {output.strides, input.strides},
                    kMinPerThread,
                    [&](const OperandOffsets<2> &at, int64_t count,
                        const OperandOffsets<2> &step) {
                      for (int64_t i = 0; i < count; ++i)
                        y[at[0] + i * step[0]] = x[at[1] + i * step[1]];
                    });
}

namespace memfmt::runtime::cpu {
namespace {

/// copyFast for elements of type U.
template <typename U>
const char *copyFastOf(const TensorView &input, const TensorView &output) {
  const U *x = input.as<U>();
  U *y = output.as<U>();
  if (input.isDense() && input.sameLayoutAs(output)) {
    parallelFor(output.numElements(), kMinPerThread,
                [&](int64_t begin, int64_t end, int) {
                  std::memmove(y + begin, x + begin,
                               (end - begin) * sizeof(U));
                });
    return "dense";
  }
  if (output.rank == 4) {
    const int64_t n = output.sizes[0], channels = output.sizes[1];
    const int64_t pixels = output.sizes[2] * output.sizes[3];
    if (input.isContiguous() && output.isChannelsLastContiguous()) {
      transposeMatrices(x, y, n, channels, pixels);
      return "nchw_to_nhwc";
    }
    if (input.isChannelsLastContiguous() && output.isContiguous()) {
      transposeMatrices(x, y, n, pixels, channels);
      return "nhwc_to_nchw";
    }
  }
  if (input.rank != output.rank ||
      !std::equal(input.sizes, input.sizes + input.rank, output.sizes))
    return nullptr;
  // Any other view (a slice, a channel shuffle, a permute, a piece of a
  // cat): the strided loop with its innermost run along the longer
  // unit-stride dimension of either side, and a block copy for runs that are
  // unit-stride on both. A channel shuffle of g groups then reads runs of
  // C/g channels instead of writing runs of g.
  auto unitRun = [](const TensorView &v) {
    int64_t run = 1;
    for (int64_t d = 0; d < v.rank; ++d)
      if (v.sizes[d] > 1 && v.strides[d] == 1)
        run = v.sizes[d];
    return run;
  };
  const bool byInput = unitRun(input) > unitRun(output);
  const TensorView &first = byInput ? input : output;
  const TensorView &second = byInput ? output : input;
  const int in = byInput ? 0 : 1, out = byInput ? 1 : 0;
  forEachStrided<2>(
      output.rank, output.sizes, {first.strides, second.strides},
      kMinPerThread,
      [&](const OperandOffsets<2> &at, int64_t count,
          const OperandOffsets<2> &step) {
        const U *src = x + at[in];
        U *dst = y + at[out];
        const int64_t ss = step[in], ds = step[out];
        if (ss == 1 && ds == 1)
          std::memcpy(dst, src, count * sizeof(U));
        else if (ds == 1)
          for (int64_t i = 0; i < count; ++i)
            dst[i] = src[i * ss];
        else
          for (int64_t i = 0; i < count; ++i)
            dst[i * ds] = src[i * ss];
      });
  return byInput ? "strided_by_input" : "strided";
}

} // namespace
} // namespace memfmt::runtime::cpu

const char *cpu::copyFast(const TensorView &input, const TensorView &output,
                          DType dtype) {
  if (output.numElements() == 0)
    return "empty";
  if (input.sameViewAs(output))
    return "in_place";
  return visitStorage(dtype, [&](auto element) {
    return copyFastOf<decltype(element)>(input, output);
  });
}
