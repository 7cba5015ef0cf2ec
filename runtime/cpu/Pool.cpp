//===- Pool.cpp - Max, average and adaptive average pooling ---------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// 2-D pooling with PyTorch's semantics:
//  * max: padded positions never win; the first maximum in window order
//    (rows, then columns) wins ties, and a NaN wins over any number (the last
//    NaN's index is kept), as in PyTorch's `val > max || isnan(val)`; the
//    index is h * W + w inside the (n, c) input plane;
//  * average: the window is clipped to the padded input [-pad, size + pad)
//    for the count_include_pad divisor, and to the input for the sum (and
//    for the divisor without count_include_pad);
//  * adaptive average: rows [floor(i * H / OH), ceil((i + 1) * H / OH)).
// The reference kernels take any strides and work per (n, c) plane,
// accumulating in double, checking every tap against the input's bounds.
// The fast kernels precompute, per output row and column, the taps that fall
// inside the input, so their loops have no bounds checks, and need all
// tensors in one dense layout: channels-last (one output pixel's C channels
// at a time, every inner loop over contiguous channels) or NCHW (one plane
// at a time, rows read with unit stride; with indices, 16 output columns at
// a time keep their maxima and 32-bit positions in registers). The
// channels-last kernels without indices (max, average, adaptive average)
// also run in bf16 (Element.h): compared and summed in f32 (sums in double),
// a maximum stored as the winning element's bits, an average rounded once.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Element.h"
#include "Scratch.h"
#include "Vectorize.h"

#include "lib/Parallel.h"
#include "memfmt/Layout/Windows.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace memfmt::runtime;
using memfmt::runtime::cpu::avgWindow;
using memfmt::runtime::cpu::scratchBuffer;
using memfmt::runtime::cpu::Window;

Window cpu::avgWindow(int64_t o, int64_t kernel, int64_t stride, int64_t pad,
                      int64_t size, int64_t padEnd) {
  int64_t start = o * stride - pad;
  int64_t stop = std::min(start + kernel, size + padEnd);
  return {std::max<int64_t>(start, 0), std::min(stop, size), stop - start};
}

namespace {

/// What average pooling divides a window's sum by: the padded extents'
/// product when `padded`, else the number of summed elements.
int64_t windowDivisor(const Window &row, const Window &col, bool padded) {
  return padded ? row.padded * col.padded
                : (row.end - row.begin) * (col.end - col.begin);
}

/// Adaptive pooling rows [begin, end) of output row `o` of `outSize`.
Window adaptiveWindow(int64_t o, int64_t outSize, int64_t size) {
  int64_t begin = o * size / outSize;
  int64_t end = ((o + 1) * size + outSize - 1) / outSize;
  return {begin, end, end - begin};
}

/// The dense layouts the fast kernels take.
enum class DenseLayout { ChannelsLast, Contiguous, Other };

/// ChannelsLast if every tensor is channels-last contiguous, else Contiguous
/// if every tensor is contiguous (NCHW), else Other. (A tensor that is both,
/// L3, counts as either.)
DenseLayout denseLayout(std::initializer_list<const TensorView *> views) {
  bool channelsLast = true, contiguous = true;
  for (const TensorView *view : views) {
    if (!view)
      continue;
    channelsLast = channelsLast && view->isChannelsLastContiguous();
    contiguous = contiguous && view->isContiguous();
  }
  return channelsLast ? DenseLayout::ChannelsLast
         : contiguous ? DenseLayout::Contiguous
                      : DenseLayout::Other;
}

/// For each output index along one dim, the kernel taps [begin, end) whose
/// input index `o * stride - pad + k * dilation` lies in [0, size).
/// Validation guarantees every range is non-empty.
template <int Slot>
const std::vector<Window> &tapRanges(int64_t outSize, int64_t kernel,
                                     int64_t stride, int64_t pad,
                                     int64_t dilation, int64_t size) {
  std::vector<Window> &ranges = scratchBuffer<Window, Slot>(outSize);
  for (int64_t o = 0; o < outSize; ++o) {
    memfmt::layout::TapRange taps =
        memfmt::layout::windowTaps(o, kernel, stride, pad, dilation, 0, size);
    ranges[o] = {taps.begin, taps.end, taps.size()};
  }
  return ranges;
}

/// A block of kBlock interior output columns from \p ow0 of one NCHW output
/// row with indices: the maxima and their positions stay in registers over
/// the whole window and are stored once. \p Stride is the column stride
/// when known at compile time (the loads become shuffles), else 0 and
/// \p stride is used (gathers).
constexpr int64_t kBlock = 16;
/// Windows of more rows than this take the tap-at-a-time loop.
constexpr int64_t kMaxTapRows = 16;
template <int64_t Stride>
[[gnu::always_inline]] inline void
maxBlockWithIndices(const float *xp, int64_t width, const int64_t *tapRows,
                    int64_t numRows, int64_t kernelW, int64_t dilationW,
                    int64_t stride, int64_t padLeft, int64_t ow0, float *yr,
                    int64_t *ir) {
  const int64_t s = Stride ? Stride : stride;
  // Positions in 32 bits (the caller checks the plane fits), so that the
  // values and positions of a block share one vector mask.
  float best[kBlock];
  int32_t where[kBlock];
  // The first tap initialises (as in PyTorch), then every tap competes.
  const int64_t first = tapRows[0] * width + ow0 * s - padLeft;
  for (int64_t j = 0; j < kBlock; ++j) {
    best[j] = xp[first + j * s];
    where[j] = static_cast<int32_t>(first + j * s);
  }
  for (int64_t r = 0; r < numRows; ++r)
    for (int64_t kw = 0; kw < kernelW; ++kw) {
      const int64_t base =
          tapRows[r] * width + ow0 * s + kw * dilationW - padLeft;
      const float *row = xp + base;
      const int32_t at = static_cast<int32_t>(base);
      for (int32_t j = 0; j < kBlock; ++j) {
        float v = row[j * s];
        bool take = v > best[j] || v != v;
        best[j] = take ? v : best[j];
        where[j] = take ? at + j * static_cast<int32_t>(s) : where[j];
      }
    }
  for (int64_t j = 0; j < kBlock; ++j) {
    yr[ow0 + j] = best[j];
    ir[ow0 + j] = where[j];
  }
}

/// The interior output columns [colLo, colHi) (every tap inside the input
/// row) of one NCHW output row with indices, kBlock at a time; returns the
/// first column it left (fewer than kBlock remain) for the caller's edge
/// loop. One tap at a time over the whole row, as without indices, kept
/// the int64 positions in memory: 16x slower than without indices
/// (ResNet-50's training max pool, 48 against 3 ms at batch 8).
MEMFMT_VECTOR_CLONES
int64_t maxRowWithIndices(const float *xp, int64_t width,
                          const int64_t *tapRows, int64_t numRows,
                          int64_t kernelW, int64_t dilationW, int64_t stride,
                          int64_t padLeft, int64_t colLo, int64_t colHi,
                          float *yr, int64_t *ir) {
  int64_t ow0 = colLo;
  for (; ow0 + kBlock <= colHi; ow0 += kBlock) {
    if (stride == 2)
      maxBlockWithIndices<2>(xp, width, tapRows, numRows, kernelW, dilationW,
                             stride, padLeft, ow0, yr, ir);
    else if (stride == 1)
      maxBlockWithIndices<1>(xp, width, tapRows, numRows, kernelW, dilationW,
                             stride, padLeft, ow0, yr, ir);
    else
      maxBlockWithIndices<0>(xp, width, tapRows, numRows, kernelW, dilationW,
                             stride, padLeft, ow0, yr, ir);
  }
  return ow0;
}

/// Channels-last max pooling in T, rows of the output [begin, end) (image
/// row / outH, output row row % outH): per output pixel the first tap of
/// the window initialises every channel and each later tap takes a channel
/// where it is larger in f32 or NaN (as the reference does), the winner's
/// element stored as it is; with `idx` (training's max pool, whose backward
/// reads them; its own f32 loop is below) also the winners' positions.
template <typename T>
void maxRowsChannelsLast(const T *x, T *y, int64_t *idx, int64_t begin,
                         int64_t end, int64_t outH, int64_t outW,
                         int64_t height, int64_t width, int64_t channels,
                         const std::vector<Window> &rows,
                         const std::vector<Window> &cols,
                         const memfmt::runtime::cpu::MaxPoolWindow &w) {
  using memfmt::runtime::cpu::load;
  for (int64_t row = begin; row < end; ++row) {
    int64_t n = row / outH, oh = row % outH;
    int64_t ih0 = oh * w.strideH - w.padTop;
    for (int64_t ow = 0; ow < outW; ++ow) {
      int64_t iw0 = ow * w.strideW - w.padLeft;
      T *yr = y + (row * outW + ow) * channels;
      int64_t *ir = idx ? idx + (row * outW + ow) * channels : nullptr;
      bool first = true;
      for (int64_t kh = rows[oh].begin; kh < rows[oh].end; ++kh) {
        int64_t ih = ih0 + kh * w.dilationH;
        for (int64_t kw = cols[ow].begin; kw < cols[ow].end; ++kw) {
          int64_t iw = iw0 + kw * w.dilationW;
          const int64_t at = ih * width + iw;
          const T *xr = x + ((n * height + ih) * width + iw) * channels;
          if (first) {
            std::copy(xr, xr + channels, yr);
            if (ir)
              std::fill(ir, ir + channels, at);
            first = false;
            continue;
          }
          if (ir) {
            for (int64_t c = 0; c < channels; ++c) {
              float v = load(xr[c]);
              bool take = v > load(yr[c]) || v != v;
              yr[c] = take ? xr[c] : yr[c];
              ir[c] = take ? at : ir[c];
            }
          } else {
            for (int64_t c = 0; c < channels; ++c) {
              float v = load(xr[c]);
              yr[c] = v > load(yr[c]) || v != v ? xr[c] : yr[c];
            }
          }
        }
      }
    }
  }
}

/// The tap `v` wins over the running maximum `m` where it is larger or NaN
/// (a NaN already in `m` stays: NaN > v and v != v are false for a number
/// v), as in the reference. Branch-free, so it vectorises.
inline float maxKeepingNan(float v, float m) {
  return ((v > m) | (v != v)) ? v : m;
}

/// One output pixel's channels [c0, channels) in blocks of kBlock, each
/// block's running maximum in registers over the window's taps (`tap(kh,
/// kw)` is the tap's pixel), stored once; returns where the blocks end.
/// With `Indices`, each channel's position (`at(kh, kw)`, h * W + w) rides
/// along, taken with the value: the first tap, then every larger one or
/// NaN (so the last NaN's), as the loop above.
template <int64_t kBlock, bool Indices, typename Tap, typename At>
[[gnu::always_inline]] inline int64_t
maxChannelBlocks(float *yr, int64_t *ir, int64_t c0, int64_t channels,
                 Window taps, Window tapCols, const Tap &tap, const At &at) {
  const float *firstTap = tap(taps.begin, tapCols.begin);
  const int64_t firstAt = Indices ? at(taps.begin, tapCols.begin) : 0;
  for (; c0 + kBlock <= channels; c0 += kBlock) {
    float acc[kBlock];
    int64_t pos[kBlock];
    for (int64_t j = 0; j < kBlock; ++j) {
      acc[j] = firstTap[c0 + j];
      if constexpr (Indices)
        pos[j] = firstAt;
    }
    for (int64_t kh = taps.begin; kh < taps.end; ++kh)
      for (int64_t kw = tapCols.begin; kw < tapCols.end; ++kw) {
        const float *xr = tap(kh, kw) + c0;
        if constexpr (Indices) {
          const int64_t p = at(kh, kw);
          for (int64_t j = 0; j < kBlock; ++j) {
            const bool take = (xr[j] > acc[j]) | (xr[j] != xr[j]);
            acc[j] = take ? xr[j] : acc[j];
            pos[j] = take ? p : pos[j];
          }
        } else {
          for (int64_t j = 0; j < kBlock; ++j)
            acc[j] = maxKeepingNan(xr[j], acc[j]);
        }
      }
    for (int64_t j = 0; j < kBlock; ++j) {
      yr[c0 + j] = acc[j];
      if constexpr (Indices)
        ir[c0 + j] = pos[j];
    }
  }
  return c0;
}

/// maxRowsChannelsLast for f32, compiled for each vector width
/// (Vectorize.h), its channels in register blocks (maxChannelBlocks, 16
/// wide where the channels divide by 16, else 8, then one at a time), with
/// positions when `idx` is set (a training step's max pool). The loop above
/// stores and reloads the output after every tap: as the baseline clone it
/// ran ShuffleNet-v2's stem pool ([8, 24, 112, 112], 3x3 stride 2) at 1.3
/// ms and 3x slower as an AVX-512 one (oneDNN's takes 0.39 ms, but its max
/// does not keep NaNs); with positions, ResNet-50's stem pool at batch 8
/// took 7.8 ms.
template <bool Indices>
[[gnu::always_inline]] inline void maxRowsChannelsLastF32With(
    const float *x, float *y, int64_t *idx, int64_t begin, int64_t end,
    int64_t outH, int64_t outW, int64_t height, int64_t width, int64_t channels,
    const std::vector<Window> &rows, const std::vector<Window> &cols,
    const memfmt::runtime::cpu::MaxPoolWindow &w) {
  for (int64_t row = begin; row < end; ++row) {
    const int64_t n = row / outH, oh = row % outH;
    const int64_t ih0 = oh * w.strideH - w.padTop;
    const Window taps = rows[oh];
    for (int64_t ow = 0; ow < outW; ++ow) {
      const int64_t iw0 = ow * w.strideW - w.padLeft;
      const Window tapCols = cols[ow];
      float *yr = y + (row * outW + ow) * channels;
      int64_t *ir = Indices ? idx + (row * outW + ow) * channels : nullptr;
      auto at = [&](int64_t kh, int64_t kw) {
        return (ih0 + kh * w.dilationH) * width + iw0 + kw * w.dilationW;
      };
      auto tap = [&](int64_t kh, int64_t kw) {
        return x + (n * height * width + at(kh, kw)) * channels;
      };
      int64_t c0 = 0;
      if (channels % 16 == 0)
        c0 = maxChannelBlocks<16, Indices>(yr, ir, c0, channels, taps, tapCols,
                                           tap, at);
      c0 = maxChannelBlocks<8, Indices>(yr, ir, c0, channels, taps, tapCols,
                                        tap, at);
      maxChannelBlocks<1, Indices>(yr, ir, c0, channels, taps, tapCols, tap,
                                   at);
    }
  }
}

MEMFMT_VECTOR_CLONES
void maxRowsChannelsLastF32(const float *x, float *y, int64_t *idx,
                            int64_t begin, int64_t end, int64_t outH,
                            int64_t outW, int64_t height, int64_t width,
                            int64_t channels, const std::vector<Window> &rows,
                            const std::vector<Window> &cols,
                            const memfmt::runtime::cpu::MaxPoolWindow &w) {
  if (idx)
    maxRowsChannelsLastF32With<true>(x, y, idx, begin, end, outH, outW, height,
                                     width, channels, rows, cols, w);
  else
    maxRowsChannelsLastF32With<false>(x, y, idx, begin, end, outH, outW, height,
                                      width, channels, rows, cols, w);
}

} // namespace

//===----------------------------------------------------------------------===//
// Max pooling
//===----------------------------------------------------------------------===//

void cpu::maxPool2dReference(const TensorView &input, const TensorView &output,
                             const TensorView *indices,
                             const MaxPoolWindow &w) {
  const int64_t channels = input.sizes[1], height = input.sizes[2],
                width = input.sizes[3];
  const int64_t outH = output.sizes[2], outW = output.sizes[3];
  const int64_t *xs = input.strides, *ys = output.strides;
  const float *x = input.as<float>();
  float *y = output.as<float>();
  int64_t *idx = indices ? indices->as<int64_t>() : nullptr;
  const int64_t *is = indices ? indices->strides : nullptr;
  // Only the taps inside the input (a kernel may be far larger).
  const std::vector<Window> &rows =
      tapRanges<0>(outH, w.kernelH, w.strideH, w.padTop, w.dilationH, height);
  const std::vector<Window> &cols =
      tapRanges<1>(outW, w.kernelW, w.strideW, w.padLeft, w.dilationW, width);

  parallelFor(
      output.sizes[0] * channels, 1, [&](int64_t begin, int64_t end, int) {
        for (int64_t p = begin; p < end; ++p) {
          int64_t n = p / channels, c = p % channels;
          const float *plane = x + n * xs[0] + c * xs[1];
          for (int64_t oh = 0; oh < outH; ++oh) {
            for (int64_t ow = 0; ow < outW; ++ow) {
              float best = -std::numeric_limits<float>::infinity();
              int64_t bestIndex = -1;
              for (int64_t kh = rows[oh].begin; kh < rows[oh].end; ++kh) {
                int64_t ih = oh * w.strideH - w.padTop + kh * w.dilationH;
                for (int64_t kw = cols[ow].begin; kw < cols[ow].end; ++kw) {
                  int64_t iw = ow * w.strideW - w.padLeft + kw * w.dilationW;
                  float v = plane[ih * xs[2] + iw * xs[3]];
                  if (bestIndex < 0 || v > best || std::isnan(v)) {
                    best = v;
                    bestIndex = ih * width + iw;
                  }
                }
              }
              y[n * ys[0] + c * ys[1] + oh * ys[2] + ow * ys[3]] = best;
              if (idx)
                idx[n * is[0] + c * is[1] + oh * is[2] + ow * is[3]] =
                    bestIndex;
            }
          }
        }
      });
}

const char *cpu::maxPool2dFast(const TensorView &input,
                               const TensorView &output,
                               const TensorView *indices,
                               const MaxPoolWindow &w, DType dtype) {
  DenseLayout layout = denseLayout({&input, &output, indices});
  if (layout == DenseLayout::Other)
    return nullptr;
  // bf16: channels-last only.
  if (dtype != DType::f32 && layout != DenseLayout::ChannelsLast)
    return nullptr;
  const int64_t channels = input.sizes[1], height = input.sizes[2],
                width = input.sizes[3];
  const int64_t outH = output.sizes[2], outW = output.sizes[3];
  const std::vector<Window> &rows =
      tapRanges<0>(outH, w.kernelH, w.strideH, w.padTop, w.dilationH, height);
  const std::vector<Window> &cols =
      tapRanges<1>(outW, w.kernelW, w.strideW, w.padLeft, w.dilationW, width);
  // Channels-last: register blocks for f32, the loop above for bf16.
  if (layout == DenseLayout::ChannelsLast)
    return visitFloatElement(dtype, [&](auto element) {
      using T = decltype(element);
      const T *x = input.as<T>();
      T *y = output.as<T>();
      int64_t *idx = indices ? indices->as<int64_t>() : nullptr;
      parallelFor(
          output.sizes[0] * outH, 1, [&](int64_t begin, int64_t end, int) {
            if constexpr (std::is_same_v<T, float>)
              maxRowsChannelsLastF32(x, y, idx, begin, end, outH, outW, height,
                                     width, channels, rows, cols, w);
            else
              maxRowsChannelsLast(x, y, idx, begin, end, outH, outW, height,
                                  width, channels, rows, cols, w);
          });
      return "channels_last";
    });
  const float *x = input.as<float>();
  float *y = output.as<float>();
  int64_t *idx = indices ? indices->as<int64_t>() : nullptr;

  // Contiguous (channels-last returned above).
  // Output columns [colLo, colHi) have every tap inside the input; there
  // the loops run over output columns innermost, independent iterations
  // the compiler can vectorise. The columns at the edges go one by one.
  int64_t colLo = 0;
  auto full = [&](int64_t ow) {
    return cols[ow].begin == 0 && cols[ow].end == w.kernelW;
  };
  while (colLo < outW && !full(colLo))
    ++colLo;
  int64_t colHi = colLo;
  while (colHi < outW && full(colHi))
    ++colHi;
  parallelFor(
      output.sizes[0] * channels, 1, [&](int64_t begin, int64_t end, int) {
        for (int64_t p = begin; p < end; ++p) {
          const float *xp = x + p * height * width;
          for (int64_t oh = 0; oh < outH; ++oh) {
            int64_t ih0 = oh * w.strideH - w.padTop;
            float *yr = y + (p * outH + oh) * outW;
            int64_t *ir = idx ? idx + (p * outH + oh) * outW : nullptr;
            auto edge = [&](int64_t ow) {
              int64_t iw0 = ow * w.strideW - w.padLeft;
              // The first tap is the initial candidate (as in PyTorch).
              int64_t bestIndex = (ih0 + rows[oh].begin * w.dilationH) * width +
                                  iw0 + cols[ow].begin * w.dilationW;
              float best = xp[bestIndex];
              for (int64_t kh = rows[oh].begin; kh < rows[oh].end; ++kh) {
                int64_t ih = ih0 + kh * w.dilationH;
                for (int64_t kw = cols[ow].begin; kw < cols[ow].end; ++kw) {
                  int64_t iw = iw0 + kw * w.dilationW;
                  float v = xp[ih * width + iw];
                  if (v > best || v != v) {
                    best = v;
                    bestIndex = ih * width + iw;
                  }
                }
              }
              yr[ow] = best;
              if (ir)
                ir[ow] = bestIndex;
            };
            for (int64_t ow = 0; ow < colLo; ++ow)
              edge(ow);
            for (int64_t ow = colHi; ow < outW; ++ow)
              edge(ow);
            if (colLo == colHi)
              continue;
            if (ir) {
              int64_t tapRows[kMaxTapRows];
              int64_t numRows = 0;
              for (int64_t kh = rows[oh].begin;
                   kh < rows[oh].end && numRows < kMaxTapRows; ++kh)
                tapRows[numRows++] = ih0 + kh * w.dilationH;
              if (numRows == rows[oh].end - rows[oh].begin &&
                  height * width <= std::numeric_limits<int32_t>::max()) {
                int64_t left = maxRowWithIndices(
                    xp, width, tapRows, numRows, w.kernelW, w.dilationW,
                    w.strideW, w.padLeft, colLo, colHi, yr, ir);
                for (int64_t ow = left; ow < colHi; ++ow)
                  edge(ow);
                continue;
              }
            }
            // Interior: the first tap initialises, every tap then competes.
            int64_t firstRow = ih0 + rows[oh].begin * w.dilationH;
            for (int64_t ow = colLo; ow < colHi; ++ow) {
              int64_t at = firstRow * width + ow * w.strideW - w.padLeft;
              yr[ow] = xp[at];
              if (ir)
                ir[ow] = at;
            }
            for (int64_t kh = rows[oh].begin; kh < rows[oh].end; ++kh) {
              int64_t ih = ih0 + kh * w.dilationH;
              const float *row = xp + ih * width;
              for (int64_t kw = 0; kw < w.kernelW; ++kw) {
                int64_t shift = kw * w.dilationW - w.padLeft;
                // Distinct tensors (validated), so the pointers do not alias.
                const float *__restrict src = row;
                float *__restrict dst = yr;
                const int64_t stride = w.strideW;
                if (ir) {
                  int64_t *__restrict dstIndex = ir;
                  const int64_t base = ih * width + shift;
                  for (int64_t ow = colLo; ow < colHi; ++ow) {
                    float v = src[ow * stride + shift];
                    bool take = v > dst[ow] || v != v;
                    dst[ow] = take ? v : dst[ow];
                    dstIndex[ow] = take ? base + ow * stride : dstIndex[ow];
                  }
                } else {
                  for (int64_t ow = colLo; ow < colHi; ++ow) {
                    float v = src[ow * stride + shift];
                    dst[ow] = v > dst[ow] || v != v ? v : dst[ow];
                  }
                }
              }
            }
          }
        }
      });
  return "contiguous";
}

//===----------------------------------------------------------------------===//
// Average pooling
//===----------------------------------------------------------------------===//

void cpu::avgPool2dReference(const args::avg_pool2d &a) {
  const TensorView &input = a.input, &output = a.output;
  const int64_t channels = input.sizes[1], height = input.sizes[2],
                width = input.sizes[3];
  const int64_t outH = output.sizes[2], outW = output.sizes[3];
  const int64_t *xs = input.strides, *ys = output.strides;
  const float *x = input.as<float>();
  float *y = output.as<float>();

  parallelFor(output.sizes[0] * channels, 1,
              [&](int64_t begin, int64_t end, int) {
                for (int64_t p = begin; p < end; ++p) {
                  int64_t n = p / channels, c = p % channels;
                  const float *plane = x + n * xs[0] + c * xs[1];
                  for (int64_t oh = 0; oh < outH; ++oh) {
                    Window rows = avgWindow(oh, a.kernel_h, a.stride_h,
                                            a.pad_top, height, a.pad_bottom);
                    for (int64_t ow = 0; ow < outW; ++ow) {
                      Window cols = avgWindow(ow, a.kernel_w, a.stride_w,
                                              a.pad_left, width, a.pad_right);
                      double sum = 0;
                      for (int64_t ih = rows.begin; ih < rows.end; ++ih)
                        for (int64_t iw = cols.begin; iw < cols.end; ++iw)
                          sum += plane[ih * xs[2] + iw * xs[3]];
                      y[n * ys[0] + c * ys[1] + oh * ys[2] + ow * ys[3]] =
                          static_cast<float>(
                              sum / windowDivisor(rows, cols,
                                                  a.count_include_pad != 0));
                    }
                  }
                }
              });
}

namespace {

/// Output row `row` (image row / outH, output row row % outH) of a
/// channels-last average pooling in T: for each output column the window's
/// channel vectors summed into `acc` (double, as the planes' loop sums)
/// and divided.
template <typename T>
[[gnu::always_inline]] inline void
averageRowChannelsLastOf(const T *x, T *y, double *acc, int64_t row,
                         int64_t outH, int64_t outW, int64_t height,
                         int64_t width, int64_t channels, const Window *rows,
                         const Window *cols, bool padded) {
  using memfmt::runtime::cpu::load;
  using memfmt::runtime::cpu::store;
  int64_t n = row / outH, oh = row % outH;
  for (int64_t ow = 0; ow < outW; ++ow) {
    std::fill(acc, acc + channels, 0.0);
    for (int64_t ih = rows[oh].begin; ih < rows[oh].end; ++ih) {
      for (int64_t iw = cols[ow].begin; iw < cols[ow].end; ++iw) {
        const T *xr = x + ((n * height + ih) * width + iw) * channels;
        for (int64_t c = 0; c < channels; ++c)
          acc[c] += load(xr[c]);
      }
    }
    T *yr = y + (row * outW + ow) * channels;
    double d = static_cast<double>(windowDivisor(rows[oh], cols[ow], padded));
    for (int64_t c = 0; c < channels; ++c)
      yr[c] = store<T>(static_cast<float>(acc[c] / d));
  }
}

/// averageRowChannelsLastOf per storage type, compiled per vector width
/// (Vectorize.h): as a baseline SSE2 loop the global pooling of
/// EfficientNet-B0's squeeze-excite blocks ran at a third of the speed it
/// runs at from the cache with AVX-512.
MEMFMT_VECTOR_CLONES
void averageRowChannelsLast(const float *x, float *y, double *acc, int64_t row,
                            int64_t outH, int64_t outW, int64_t height,
                            int64_t width, int64_t channels, const Window *rows,
                            const Window *cols, bool padded) {
  averageRowChannelsLastOf(x, y, acc, row, outH, outW, height, width, channels,
                           rows, cols, padded);
}
MEMFMT_VECTOR_CLONES
void averageRowChannelsLast(const memfmt::runtime::cpu::Bf16 *x,
                            memfmt::runtime::cpu::Bf16 *y, double *acc,
                            int64_t row, int64_t outH, int64_t outW,
                            int64_t height, int64_t width, int64_t channels,
                            const Window *rows, const Window *cols,
                            bool padded) {
  averageRowChannelsLastOf(x, y, acc, row, outH, outW, height, width, channels,
                           rows, cols, padded);
}

/// Average pooling over precomputed row and column windows in a dense
/// layout: the sum over [rows[oh].begin, rows[oh].end) x [cols[ow].begin,
/// cols[ow].end) divided by the padded extents' product when `padded`, else
/// by the number of summed elements, in T. Returns null for other layouts.
template <typename T>
const char *avgPoolFast(const TensorView &input, const TensorView &output,
                        const std::vector<Window> &rows,
                        const std::vector<Window> &cols, bool padded) {
  using memfmt::runtime::cpu::load;
  using memfmt::runtime::cpu::store;
  DenseLayout layout = denseLayout({&input, &output});
  if (layout == DenseLayout::Other)
    return nullptr;
  const int64_t channels = input.sizes[1], height = input.sizes[2],
                width = input.sizes[3];
  const int64_t outH = output.sizes[2], outW = output.sizes[3];
  const T *x = input.as<T>();
  T *y = output.as<T>();
  auto divisor = [&](int64_t oh, int64_t ow) {
    return windowDivisor(rows[oh], cols[ow], padded);
  };

  if (layout == DenseLayout::Contiguous) {
    parallelFor(
        output.sizes[0] * channels, 1, [&](int64_t begin, int64_t end, int) {
          for (int64_t p = begin; p < end; ++p) {
            const T *xp = x + p * height * width;
            T *yp = y + p * outH * outW;
            for (int64_t oh = 0; oh < outH; ++oh) {
              for (int64_t ow = 0; ow < outW; ++ow) {
                double sum = 0;
                for (int64_t ih = rows[oh].begin; ih < rows[oh].end; ++ih)
                  for (int64_t iw = cols[ow].begin; iw < cols[ow].end; ++iw)
                    sum += load(xp[ih * width + iw]);
                yp[oh * outW + ow] =
                    store<T>(static_cast<float>(sum / divisor(oh, ow)));
              }
            }
          }
        });
    return "contiguous";
  }

  std::vector<double> &scratch =
      scratchBuffer<double, 0>(static_cast<size_t>(maxThreads()) * channels);
  parallelFor(
      output.sizes[0] * outH, 1, [&](int64_t begin, int64_t end, int thread) {
        double *acc = scratch.data() + thread * channels;
        for (int64_t row = begin; row < end; ++row)
          averageRowChannelsLast(x, y, acc, row, outH, outW, height, width,
                                 channels, rows.data(), cols.data(), padded);
      });
  return "channels_last";
}

/// avgPoolFast in the storage type of `dtype` (f32, bf16; else null).
const char *avgPoolFastIn(DType dtype, const TensorView &input,
                          const TensorView &output,
                          const std::vector<Window> &rows,
                          const std::vector<Window> &cols, bool padded) {
  return memfmt::runtime::cpu::visitFloatElement(dtype, [&](auto element) {
    return avgPoolFast<decltype(element)>(input, output, rows, cols, padded);
  });
}

} // namespace

const char *cpu::avgPool2dFast(const args::avg_pool2d &a, DType dtype) {
  const int64_t height = a.input.sizes[2], width = a.input.sizes[3];
  std::vector<Window> &rows = scratchBuffer<Window, 0>(a.output.sizes[2]);
  std::vector<Window> &cols = scratchBuffer<Window, 1>(a.output.sizes[3]);
  for (size_t oh = 0; oh < rows.size(); ++oh)
    rows[oh] =
        avgWindow(oh, a.kernel_h, a.stride_h, a.pad_top, height, a.pad_bottom);
  for (size_t ow = 0; ow < cols.size(); ++ow)
    cols[ow] =
        avgWindow(ow, a.kernel_w, a.stride_w, a.pad_left, width, a.pad_right);
  return avgPoolFastIn(dtype, a.input, a.output, rows, cols,
                       a.count_include_pad != 0);
}

//===----------------------------------------------------------------------===//
// Adaptive average pooling
//===----------------------------------------------------------------------===//

void cpu::adaptiveAvgPool2dReference(const args::adaptive_avg_pool2d &a) {
  const TensorView &input = a.input, &output = a.output;
  const int64_t channels = input.sizes[1], height = input.sizes[2],
                width = input.sizes[3];
  const int64_t outH = output.sizes[2], outW = output.sizes[3];
  const int64_t *xs = input.strides, *ys = output.strides;
  const float *x = input.as<float>();
  float *y = output.as<float>();

  parallelFor(output.sizes[0] * channels, 1,
              [&](int64_t begin, int64_t end, int) {
                for (int64_t p = begin; p < end; ++p) {
                  int64_t n = p / channels, c = p % channels;
                  const float *plane = x + n * xs[0] + c * xs[1];
                  for (int64_t oh = 0; oh < outH; ++oh) {
                    Window rows = adaptiveWindow(oh, outH, height);
                    for (int64_t ow = 0; ow < outW; ++ow) {
                      Window cols = adaptiveWindow(ow, outW, width);
                      double sum = 0;
                      for (int64_t ih = rows.begin; ih < rows.end; ++ih)
                        for (int64_t iw = cols.begin; iw < cols.end; ++iw)
                          sum += plane[ih * xs[2] + iw * xs[3]];
                      y[n * ys[0] + c * ys[1] + oh * ys[2] + ow * ys[3]] =
                          static_cast<float>(sum / (rows.padded * cols.padded));
                    }
                  }
                }
              });
}

const char *cpu::adaptiveAvgPool2dFast(const args::adaptive_avg_pool2d &a,
                                       DType dtype) {
  const int64_t height = a.input.sizes[2], width = a.input.sizes[3];
  std::vector<Window> &rows = scratchBuffer<Window, 0>(a.output.sizes[2]);
  std::vector<Window> &cols = scratchBuffer<Window, 1>(a.output.sizes[3]);
  for (size_t oh = 0; oh < rows.size(); ++oh)
    rows[oh] = adaptiveWindow(oh, rows.size(), height);
  for (size_t ow = 0; ow < cols.size(); ++ow)
    cols[ow] = adaptiveWindow(ow, cols.size(), width);
  return avgPoolFastIn(dtype, a.input, a.output, rows, cols, /*padded=*/true);
}
