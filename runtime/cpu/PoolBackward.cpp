//===- PoolBackward.cpp - Gradients of max and adaptive average pooling ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The reference kernels of the pooling gradients
// (aten::_adaptive_avg_pool2d_backward, aten::max_pool2d_with_indices_backward
// and aten::avg_pool2d_backward). Each scatters each grad_output element
// into a double accumulator per (n, c) plane and writes the plane once, so
// grad_input is overwritten, accumulation order does not matter and any
// strides work:
//  * adaptive average: output cell (oh, ow) spreads go / (window size) over
//    its window [floor(oh * H / OH), ceil((oh + 1) * H / OH)) x (same for W);
//  * max: output cell (oh, ow) adds go at its index h * W + w, when that
//    position is one of the cell's window taps (oh * stride - pad +
//    k * dilation); indices max_pool2d_with_indices writes always are;
//  * average: output cell (oh, ow) spreads go / divisor over the real input
//    positions of its window, the divisor being avg_pool2d's (Kernels.def).
// Each also has a fast kernel for dense grad_inputs: avg_pool2d_backward's
// channels-last only, the max and adaptive ones channels-last or contiguous
// (a training step's layouts): per image, zero it and add each cell's
// gradients in f32, threads over images, nothing allocated. The max and
// adaptive ones also take bf16 (a mixed-precision step): the image is
// accumulated in an f32 scratch image per thread (Scratch.h: reused, so a
// step allocates nothing) and rounded to bf16 once, as the widened
// reference rounds.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Element.h"
#include "Scratch.h"

#include "lib/Parallel.h"

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

using namespace memfmt::runtime;

namespace {

/// Writes the (n, c) plane `acc` (H x W, row-major) into `gradInput`.
void writePlane(const TensorView &gradInput, int64_t n, int64_t c,
                const std::vector<double> &acc) {
  const int64_t h = gradInput.sizes[2], w = gradInput.sizes[3];
  const int64_t *s = gradInput.strides;
  float *plane = gradInput.as<float>() + n * s[0] + c * s[1];
  for (int64_t ih = 0; ih < h; ++ih)
    for (int64_t iw = 0; iw < w; ++iw)
      plane[ih * s[2] + iw * s[3]] = static_cast<float>(acc[ih * w + iw]);
}

/// The tap k in [0, kernel) with `first + k * dilation == position`, or -1.
int64_t tapOf(int64_t position, int64_t first, int64_t kernel,
              int64_t dilation) {
  int64_t distance = position - first;
  if (distance < 0 || distance % dilation != 0)
    return -1;
  int64_t k = distance / dilation;
  return k < kernel ? k : -1;
}

/// Division of non-negative indices below 2^52 by a fixed positive
/// divisor, as a multiplication by its reciprocal in double, corrected by
/// one where rounding crossed a multiple: a hardware 64-bit division per
/// element made the max pool gradient compute-bound (ResNet-50's stem,
/// 1.6M indices per batch of 8).
class RowDivider {
public:
  explicit RowDivider(int64_t divisor)
      : divisor(divisor), reciprocal(1.0 / double(divisor)) {}
  int64_t quotient(int64_t x) const {
    int64_t q = static_cast<int64_t>(double(x) * reciprocal);
    q -= q * divisor > x;
    q += (q + 1) * divisor <= x;
    return q;
  }

private:
  int64_t divisor;
  double reciprocal;
};

} // namespace

void cpu::adaptiveAvgPool2dBackwardReference(
    const args::adaptive_avg_pool2d_backward &a) {
  const TensorView &go = a.grad_output, &gi = a.grad_input;
  const int64_t channels = gi.sizes[1], h = gi.sizes[2], w = gi.sizes[3];
  const int64_t outH = go.sizes[2], outW = go.sizes[3];
  const int64_t *gs = go.strides;
  const float *g = go.as<float>();
  // The spatial sizes of an empty tensor may be anything, up to 2^31: an
  // empty grad_input has nothing to write, an empty grad_output contributes
  // nothing (walking its 2^31 rows took seconds; found by
  // memfmt-fuzz-runtime).
  if (gi.numElements() == 0)
    return;
  if (go.numElements() == 0) {
    const std::vector<double> zeros(static_cast<size_t>(h * w), 0.0);
    for (int64_t p = 0; p < gi.sizes[0] * channels; ++p)
      writePlane(gi, p / channels, p % channels, zeros);
    return;
  }
  // The output cells whose window holds input row ih are the rows
  // [rows[ih].first, rows[ih].second] (windows are monotonic), likewise for
  // columns. An input position then receives a rectangle of the output's
  // share grid, summed in O(1) from 2-D prefix sums: O(outH * outW + H * W)
  // per plane, where adding every window's share to its positions took up
  // to outH * outW * H * W (seconds for 1024 x 1 -> 1 x 1024 under the
  // sanitizers; found by memfmt-fuzz-runtime).
  auto ranges = [](int64_t out, int64_t in) {
    std::vector<std::pair<int64_t, int64_t>> holders(in, {out, -1});
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = o * in / out; i < ((o + 1) * in + out - 1) / out; ++i) {
        holders[i].first = std::min(holders[i].first, o);
        holders[i].second = std::max(holders[i].second, o);
      }
    return holders;
  };
  const auto rows = ranges(outH, h), cols = ranges(outW, w);
  auto extent = [](int64_t o, int64_t out, int64_t in) {
    return ((o + 1) * in + out - 1) / out - o * in / out;
  };
  parallelFor(gi.sizes[0] * channels, 1, [&](int64_t begin, int64_t end, int) {
    std::vector<double> acc(static_cast<size_t>(h * w));
    // prefix[(oh + 1) * (outW + 1) + ow + 1]: the shares of cells
    // [0, oh] x [0, ow].
    std::vector<double> prefix(static_cast<size_t>((outH + 1) * (outW + 1)));
    const int64_t stride = outW + 1;
    for (int64_t p = begin; p < end; ++p) {
      int64_t n = p / channels, c = p % channels;
      for (int64_t oh = 0; oh < outH; ++oh) {
        double row = 0;
        for (int64_t ow = 0; ow < outW; ++ow) {
          row += double(g[n * gs[0] + c * gs[1] + oh * gs[2] + ow * gs[3]]) /
                 double(extent(oh, outH, h) * extent(ow, outW, w));
          prefix[(oh + 1) * stride + ow + 1] =
              prefix[oh * stride + ow + 1] + row;
        }
      }
      for (int64_t ih = 0; ih < h; ++ih) {
        int64_t r0 = rows[ih].first, r1 = rows[ih].second + 1;
        for (int64_t iw = 0; iw < w; ++iw) {
          int64_t c0 = cols[iw].first, c1 = cols[iw].second + 1;
          acc[ih * w + iw] =
              prefix[r1 * stride + c1] - prefix[r0 * stride + c1] -
              prefix[r1 * stride + c0] + prefix[r0 * stride + c0];
        }
      }
      writePlane(gi, n, c, acc);
    }
  });
}

void cpu::maxPool2dWithIndicesBackwardReference(
    const args::max_pool2d_with_indices_backward &a) {
  const TensorView &go = a.grad_output, &gi = a.grad_input;
  const int64_t channels = gi.sizes[1], h = gi.sizes[2], w = gi.sizes[3];
  const int64_t outH = go.sizes[2], outW = go.sizes[3];
  const int64_t *gs = go.strides, *is = a.indices.strides;
  const float *g = go.as<float>();
  const int64_t *idx = a.indices.as<int64_t>();
  // An empty grad_output holds no cell, whatever its row count (up to 2^31).
  const int64_t cellRows = go.numElements() > 0 ? outH : 0;
  parallelFor(gi.sizes[0] * channels, 1, [&](int64_t begin, int64_t end, int) {
    std::vector<double> acc(static_cast<size_t>(h * w));
    for (int64_t p = begin; p < end; ++p) {
      int64_t n = p / channels, c = p % channels;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t oh = 0; oh < cellRows; ++oh)
        for (int64_t ow = 0; ow < outW; ++ow) {
          int64_t index = idx[n * is[0] + c * is[1] + oh * is[2] + ow * is[3]];
          if (index < 0 || index >= h * w)
            continue;
          int64_t ih = index / w, iw = index % w;
          if (tapOf(ih, oh * a.stride_h - a.pad_top, a.kernel_h, a.dilation_h) <
                  0 ||
              tapOf(iw, ow * a.stride_w - a.pad_left, a.kernel_w,
                    a.dilation_w) < 0)
            continue;
          acc[index] += g[n * gs[0] + c * gs[1] + oh * gs[2] + ow * gs[3]];
        }
      writePlane(gi, n, c, acc);
    }
  });
}

namespace {

/// The windows of grad_output cell (oh, ow) and its divisor.
struct AvgCell {
  cpu::Window rows, cols;
  int64_t divisor;
};

AvgCell avgCellOf(const args::avg_pool2d_backward &a, int64_t oh, int64_t ow) {
  const TensorView &gi = a.grad_input;
  cpu::Window rows = cpu::avgWindow(oh, a.kernel_h, a.stride_h, a.pad_top,
                                    gi.sizes[2], a.pad_bottom);
  cpu::Window cols = cpu::avgWindow(ow, a.kernel_w, a.stride_w, a.pad_left,
                                    gi.sizes[3], a.pad_right);
  int64_t divisor = a.count_include_pad
                        ? rows.padded * cols.padded
                        : (rows.end - rows.begin) * (cols.end - cols.begin);
  return {rows, cols, divisor};
}

} // namespace

void cpu::avgPool2dBackwardReference(const args::avg_pool2d_backward &a) {
  const TensorView &go = a.grad_output, &gi = a.grad_input;
  const int64_t channels = gi.sizes[1], h = gi.sizes[2], w = gi.sizes[3];
  const int64_t *gs = go.strides;
  const float *g = go.as<float>();
  // An empty grad_output holds no cell, whatever its row count (up to 2^31).
  const int64_t cellRows = go.numElements() > 0 ? go.sizes[2] : 0;
  const int64_t outW = go.sizes[3];
  parallelFor(gi.sizes[0] * channels, 1, [&](int64_t begin, int64_t end, int) {
    std::vector<double> acc(static_cast<size_t>(h * w));
    for (int64_t p = begin; p < end; ++p) {
      int64_t n = p / channels, c = p % channels;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t oh = 0; oh < cellRows; ++oh)
        for (int64_t ow = 0; ow < outW; ++ow) {
          AvgCell cell = avgCellOf(a, oh, ow);
          double share =
              double(g[n * gs[0] + c * gs[1] + oh * gs[2] + ow * gs[3]]) /
              double(cell.divisor);
          for (int64_t ih = cell.rows.begin; ih < cell.rows.end; ++ih)
            for (int64_t iw = cell.cols.begin; iw < cell.cols.end; ++iw)
              acc[ih * w + iw] += share;
        }
      writePlane(gi, n, c, acc);
    }
  });
}

const char *cpu::avgPool2dBackwardFast(const args::avg_pool2d_backward &a) {
  const TensorView &go = a.grad_output, &gi = a.grad_input;
  if (!go.isChannelsLastContiguous() || !gi.isChannelsLastContiguous() ||
      go.numElements() == 0)
    return nullptr;
  const int64_t channels = gi.sizes[1], h = gi.sizes[2], w = gi.sizes[3];
  const int64_t outH = go.sizes[2], outW = go.sizes[3];
  const float *g = go.as<float>();
  float *out = gi.as<float>();
  parallelFor(gi.sizes[0], 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t n = begin; n < end; ++n) {
      float *image = out + n * h * w * channels;
      std::fill(image, image + h * w * channels, 0.0f);
      for (int64_t oh = 0; oh < outH; ++oh)
        for (int64_t ow = 0; ow < outW; ++ow) {
          AvgCell cell = avgCellOf(a, oh, ow);
          const float scale = 1.0f / static_cast<float>(cell.divisor);
          const float *cellGrad = g + ((n * outH + oh) * outW + ow) * channels;
          for (int64_t ih = cell.rows.begin; ih < cell.rows.end; ++ih)
            for (int64_t iw = cell.cols.begin; iw < cell.cols.end; ++iw) {
              float *row = image + (ih * w + iw) * channels;
              for (int64_t c = 0; c < channels; ++c)
                row[c] += cellGrad[c] * scale;
            }
        }
    }
  });
  return "channels_last";
}

namespace {

/// grad_input's layout for the fast kernels: dense images (contiguous or
/// channels-last contiguous), so that an image is one range to zero; the
/// name of the implementation, or null for the reference.
const char *denseImages(const TensorView &gi) {
  if (gi.isChannelsLastContiguous())
    return "channels_last";
  return gi.isContiguous() ? "contiguous" : nullptr;
}

/// Runs `scatter(image, n)` for every image n of the dense grad_input `gi`
/// of storage type T on the threads, `image` being an f32 image of
/// `gi`'s strides (without dim 0): grad_input's own for f32, a per-thread
/// scratch image rounded into grad_input afterwards for bf16. The image is
/// set to zeros first unless `zeroed` is false (the scatter then writes
/// every element itself).
template <typename T, typename Scatter>
void scatterImages(const TensorView &gi, bool zeroed, Scatter scatter) {
  const int64_t size = gi.sizes[1] * gi.sizes[2] * gi.sizes[3];
  T *out = gi.as<T>();
  parallelFor(gi.sizes[0], 1, [&](int64_t begin, int64_t end, int) {
    float *scratch = nullptr;
    if constexpr (!std::is_same_v<T, float>)
      scratch = cpu::scratchBuffer<float, 0>(static_cast<size_t>(size)).data();
    for (int64_t n = begin; n < end; ++n) {
      T *image = out + n * gi.strides[0];
      float *acc;
      if constexpr (std::is_same_v<T, float>)
        acc = image;
      else
        acc = scratch;
      if (zeroed)
        std::fill(acc, acc + size, 0.0f);
      scatter(acc, n);
      if constexpr (!std::is_same_v<T, float>)
        for (int64_t i = 0; i < size; ++i)
          image[i] = cpu::store<T>(acc[i]);
    }
  });
}

template <typename T>
void maxPoolBackwardImages(const args::max_pool2d_with_indices_backward &a) {
  const TensorView &go = a.grad_output, &gi = a.grad_input;
  const int64_t channels = gi.sizes[1], h = gi.sizes[2], w = gi.sizes[3];
  const int64_t outH = go.sizes[2], outW = go.sizes[3];
  const int64_t *gs = go.strides, *is = a.indices.strides, *os = gi.strides;
  const T *g = go.as<T>();
  const int64_t *idx = a.indices.as<int64_t>();
  const bool dilated = a.dilation_h != 1 || a.dilation_w != 1;
  const RowDivider rows(w);
  // Per image: zero it, then each cell's C gradients go to the positions
  // its C indices name, when they are taps of the cell's window (as in the
  // reference); a position several cells chose sums their gradients in f32.
  // Channels-last images are zeroed a row of pixels at a time, just before
  // the first window that reaches the row: a cell's taps lie in rows below
  // the end of its window, which only moves down, so the rows being added
  // to stay in cache and the image is written once, not zeroed and then
  // read back.
  const bool byRows = gi.isChannelsLastContiguous(); // As denseImages.
  const int64_t rowSize = w * channels, windowRows = (a.kernel_h - 1) * a.dilation_h + 1;
  scatterImages<T>(gi, !byRows, [&](float *image, int64_t n) {
    int64_t zeroRows = 0; // Rows [0, zeroRows) are zeroed.
    auto zeroRowsTo = [&](int64_t end) {
      end = std::min(end, h);
      if (byRows && end > zeroRows) {
        std::fill(image + zeroRows * rowSize, image + end * rowSize, 0.0f);
        zeroRows = end;
      }
    };
    for (int64_t oh = 0; oh < outH; ++oh) {
      const int64_t firstRow = oh * a.stride_h - a.pad_top;
      zeroRowsTo(firstRow + windowRows);
      for (int64_t ow = 0; ow < outW; ++ow) {
        const int64_t firstCol = ow * a.stride_w - a.pad_left;
        const T *cellGrad = g + n * gs[0] + oh * gs[2] + ow * gs[3];
        const int64_t *cellIndex = idx + n * is[0] + oh * is[2] + ow * is[3];
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t index = cellIndex[c * is[1]];
          if (index < 0 || index >= h * w)
            continue;
          const int64_t ih = rows.quotient(index), iw = index - ih * w;
          // Without dilation a tap is a window-relative row and column in
          // [0, kernel): two unsigned compares instead of tapOf's divisions.
          if (dilated
                  ? tapOf(ih, firstRow, a.kernel_h, a.dilation_h) < 0 ||
                        tapOf(iw, firstCol, a.kernel_w, a.dilation_w) < 0
                  : uint64_t(ih - firstRow) >= uint64_t(a.kernel_h) ||
                        uint64_t(iw - firstCol) >= uint64_t(a.kernel_w))
            continue;
          image[c * os[1] + ih * os[2] + iw * os[3]] +=
              cpu::load(cellGrad[c * gs[1]]);
        }
      }
    }
    zeroRowsTo(h);
  });
}

template <typename T>
void adaptiveAvgPoolBackwardImages(
    const args::adaptive_avg_pool2d_backward &a) {
  const TensorView &go = a.grad_output, &gi = a.grad_input;
  const int64_t channels = gi.sizes[1], h = gi.sizes[2], w = gi.sizes[3];
  const int64_t outH = go.sizes[2], outW = go.sizes[3];
  const int64_t *gs = go.strides, *os = gi.strides;
  const T *g = go.as<T>();
  // Per image: zero it, then each cell spreads its C gradients, divided by
  // its window's size, over the window [floor(o * in / out),
  // ceil((o + 1) * in / out)) of each axis.
  scatterImages<T>(gi, true, [&](float *image, int64_t n) {
    for (int64_t oh = 0; oh < outH; ++oh) {
      const int64_t h0 = oh * h / outH, h1 = ((oh + 1) * h + outH - 1) / outH;
      for (int64_t ow = 0; ow < outW; ++ow) {
        const int64_t w0 = ow * w / outW, w1 = ((ow + 1) * w + outW - 1) / outW;
        const float count = static_cast<float>((h1 - h0) * (w1 - w0));
        const T *cellGrad = g + n * gs[0] + oh * gs[2] + ow * gs[3];
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) {
            float *at = image + ih * os[2] + iw * os[3];
            for (int64_t c = 0; c < channels; ++c)
              at[c * os[1]] += cpu::load(cellGrad[c * gs[1]]) / count;
          }
      }
    }
  });
}

} // namespace

const char *cpu::maxPool2dWithIndicesBackwardFast(
    const args::max_pool2d_with_indices_backward &a, DType dtype) {
  const char *impl = denseImages(a.grad_input);
  if (!impl || a.grad_output.numElements() == 0 ||
      a.grad_input.numElements() == 0)
    return nullptr;
  return visitFloatElement(dtype, [&](auto element) {
    maxPoolBackwardImages<decltype(element)>(a);
    return impl;
  });
}

const char *cpu::adaptiveAvgPool2dBackwardFast(
    const args::adaptive_avg_pool2d_backward &a, DType dtype) {
  const char *impl = denseImages(a.grad_input);
  if (!impl || a.grad_output.numElements() == 0 ||
      a.grad_input.numElements() == 0)
    return nullptr;
  return visitFloatElement(dtype, [&](auto element) {
    adaptiveAvgPoolBackwardImages<decltype(element)>(a);
    return impl;
  });
}
