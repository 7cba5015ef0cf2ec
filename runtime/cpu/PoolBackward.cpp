//===- PoolBackward.cpp - Gradients of max and adaptive average pooling ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The reference kernels of the two pooling gradients PyTorch's ResNet plan
// names (aten::_adaptive_avg_pool2d_backward and
// aten::max_pool2d_with_indices_backward). Both scatter each grad_output
// element into a double accumulator per (n, c) plane and write the plane
// once, so grad_input is overwritten, accumulation order does not matter and
// any strides work:
//  * adaptive average: output cell (oh, ow) spreads go / (window size) over
//    its window [floor(oh * H / OH), ceil((oh + 1) * H / OH)) x (same for W);
//  * max: output cell (oh, ow) adds go at its index h * W + w, when that
//    position is one of the cell's window taps (oh * stride - pad +
//    k * dilation); indices max_pool2d_with_indices writes always are.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "lib/Parallel.h"

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

} // namespace

void cpu::adaptiveAvgPool2dBackwardReference(
    const args::adaptive_avg_pool2d_backward &a) {
  const TensorView &go = a.grad_output, &gi = a.grad_input;
  const int64_t channels = gi.sizes[1], h = gi.sizes[2], w = gi.sizes[3];
  const int64_t outH = go.sizes[2], outW = go.sizes[3];
  const int64_t *gs = go.strides;
  const float *g = go.as<float>();
  parallelFor(gi.sizes[0] * channels, 1, [&](int64_t begin, int64_t end, int) {
    std::vector<double> acc(static_cast<size_t>(h * w));
    for (int64_t p = begin; p < end; ++p) {
      int64_t n = p / channels, c = p % channels;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t oh = 0; oh < outH; ++oh) {
        int64_t h0 = oh * h / outH, h1 = ((oh + 1) * h + outH - 1) / outH;
        for (int64_t ow = 0; ow < outW; ++ow) {
          int64_t w0 = ow * w / outW, w1 = ((ow + 1) * w + outW - 1) / outW;
          double share =
              double(g[n * gs[0] + c * gs[1] + oh * gs[2] + ow * gs[3]]) /
              double((h1 - h0) * (w1 - w0));
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw)
              acc[ih * w + iw] += share;
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
  parallelFor(gi.sizes[0] * channels, 1, [&](int64_t begin, int64_t end, int) {
    std::vector<double> acc(static_cast<size_t>(h * w));
    for (int64_t p = begin; p < end; ++p) {
      int64_t n = p / channels, c = p % channels;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t oh = 0; oh < outH; ++oh)
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
