//===- PoolBackward.cu - Gradients of max and adaptive average pooling ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// max_pool2d_with_indices_backward, adaptive_avg_pool2d_backward and
// avg_pool2d_backward as gathers: each thread owns one grad_input element (or
// `vec` adjacent channels of one pixel, NHWC) and sums, in f32, the grad_output
// cells whose window holds it, so there are no atomics and the result does not
// depend on scheduling. The candidate cells of input row ih are:
//  * max: oh with oh * stride - pad + k * dilation == ih for some tap k in
//    [0, kernel), i.e. oh in [ceil((ih + pad - (kernel - 1) * dilation) /
//    stride), floor((ih + pad) / stride)]; a cell counts when its index is
//    ih * W + iw and ih, iw are taps of its window (the CPU reference's
//    rule);
//  * adaptive: oh around [floor(ih * OH / H), ceil((ih + 1) * OH / H)),
//    widened by one and checked against the forward window
//    [floor(oh * H / OH), ceil((oh + 1) * H / OH)), each contributing
//    grad / (window rows * window cols);
//  * average: oh in [ceil((ih + pad - kernel + 1) / stride), floor((ih +
//    pad) / stride)], each contributing grad / its window's divisor (the
//    forward kernel's, PoolWindows.cuh).
// The NHWC kernel reads consecutive channels across a warp (channels-last
// optimised, as PyTorch's plan asks); the generic kernel takes any strides.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "DeviceTypes.cuh"
#include "PoolWindows.cuh"

#include <climits>

namespace memfmt::runtime::cuda {
namespace {

__device__ __forceinline__ int64_t floorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// True if `position` is tap first + k * dilation, k in [0, kernel).
__device__ __forceinline__ bool isTap(int64_t position, int64_t first,
                                      int64_t kernel, int64_t dilation) {
  int64_t distance = position - first;
  return distance >= 0 && distance % dilation == 0 &&
         distance / dilation < kernel;
}

/// acc[j] += cell[j] * scale for the VEC channels of one grad_output cell
/// (one 16-byte load when VEC > 1, which only the NHWC kernel uses: its
/// channels are adjacent).
template <typename T, int VEC>
__device__ __forceinline__ void addScaled(float (&acc)[VEC], const T *cell,
                                          float scale) {
  if (VEC == 1) {
    acc[0] += toFloat(cell[0]) * scale;
  } else {
    Vec<T, VEC> v = *reinterpret_cast<const Vec<T, VEC> *>(cell);
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      acc[j] += toFloat(v.v[j]) * scale;
  }
}

/// grad_input at (n, c..c+VEC, ih, iw).
template <typename T, int VEC>
__device__ __forceinline__ void gatherOne(const PoolArgs &a, int64_t n,
                                          int64_t c, int64_t ih, int64_t iw) {
  // Backward: x is grad_input (written), y is grad_output (read).
  float acc[VEC];
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    acc[j] = 0.0f;
  const T *go = static_cast<const T *>(a.y) + n * a.ys[0] + c * a.ys[1];
  if (a.kind == PoolKind::MaxBackward) {
    int64_t ohLo = floorDiv(ih + a.pt - (a.kh - 1) * a.dh + a.sh - 1, a.sh);
    int64_t ohHi = floorDiv(ih + a.pt, a.sh);
    int64_t owLo = floorDiv(iw + a.pl - (a.kw - 1) * a.dw + a.sw - 1, a.sw);
    int64_t owHi = floorDiv(iw + a.pl, a.sw);
    ohLo = ohLo < 0 ? 0 : ohLo;
    owLo = owLo < 0 ? 0 : owLo;
    ohHi = ohHi >= a.oh ? a.oh - 1 : ohHi;
    owHi = owHi >= a.ow ? a.ow - 1 : owHi;
    const int64_t target = ih * a.w + iw;
    const int64_t *idx = a.indices + n * a.is[0] + c * a.is[1];
    for (int64_t oh = ohLo; oh <= ohHi; ++oh) {
      if (!isTap(ih, oh * a.sh - a.pt, a.kh, a.dh))
        continue;
      for (int64_t ow = owLo; ow <= owHi; ++ow) {
        if (!isTap(iw, ow * a.sw - a.pl, a.kw, a.dw))
          continue;
        int64_t cell = oh * a.ys[2] + ow * a.ys[3];
        int64_t icell = oh * a.is[2] + ow * a.is[3];
#pragma unroll
        for (int j = 0; j < VEC; ++j)
          if (idx[icell + j * a.is[1]] == target)
            acc[j] += toFloat(go[cell + j * a.ys[1]]);
      }
    }
  } else if (a.kind == PoolKind::AdaptiveBackward) {
    int64_t ohLo = ih * a.oh / a.h - 1,
            ohHi = ((ih + 1) * a.oh + a.h - 1) / a.h;
    int64_t owLo = iw * a.ow / a.w - 1,
            owHi = ((iw + 1) * a.ow + a.w - 1) / a.w;
    ohLo = ohLo < 0 ? 0 : ohLo;
    owLo = owLo < 0 ? 0 : owLo;
    ohHi = ohHi >= a.oh ? a.oh - 1 : ohHi;
    owHi = owHi >= a.ow ? a.ow - 1 : owHi;
    for (int64_t oh = ohLo; oh <= ohHi; ++oh) {
      Span rows = adaptiveSpan(oh, a.oh, a.h);
      if (ih < rows.begin || ih >= rows.end)
        continue;
      for (int64_t ow = owLo; ow <= owHi; ++ow) {
        Span cols = adaptiveSpan(ow, a.ow, a.w);
        if (iw < cols.begin || iw >= cols.end)
          continue;
        addScaled<T, VEC>(acc, go + oh * a.ys[2] + ow * a.ys[3],
                          1.0f / static_cast<float>(rows.extent * cols.extent));
      }
    }
  } else { // AvgBackward
    // Output rows whose window [oh * stride - pad, + kernel) holds ih.
    int64_t ohLo = floorDiv(ih + a.pt - a.kh + a.sh, a.sh);
    int64_t ohHi = floorDiv(ih + a.pt, a.sh);
    int64_t owLo = floorDiv(iw + a.pl - a.kw + a.sw, a.sw);
    int64_t owHi = floorDiv(iw + a.pl, a.sw);
    ohLo = ohLo < 0 ? 0 : ohLo;
    owLo = owLo < 0 ? 0 : owLo;
    ohHi = ohHi >= a.oh ? a.oh - 1 : ohHi;
    owHi = owHi >= a.ow ? a.ow - 1 : owHi;
    for (int64_t oh = ohLo; oh <= ohHi; ++oh) {
      Span rows = avgSpan(oh, a.kh, a.sh, a.pt, a.h, a.pb);
      for (int64_t ow = owLo; ow <= owHi; ++ow) {
        Span cols = avgSpan(ow, a.kw, a.sw, a.pl, a.w, a.pr);
        int64_t divisor = a.countIncludePad ? rows.extent * cols.extent
                                            : (rows.end - rows.begin) *
                                                  (cols.end - cols.begin);
        addScaled<T, VEC>(acc, go + oh * a.ys[2] + ow * a.ys[3],
                          1.0f / static_cast<float>(divisor));
      }
    }
  }
  T *gi = static_cast<T *>(a.x) + n * a.xs[0] + c * a.xs[1] + ih * a.xs[2] +
          iw * a.xs[3];
  if (VEC == 1) {
    gi[0] = fromFloat<T>(acc[0]);
  } else {
    Vec<T, VEC> out;
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      out.v[j] = fromFloat<T>(acc[j]);
    *reinterpret_cast<Vec<T, VEC> *>(gi) = out;
  }
}

template <typename T, int VEC> __global__ void gatherNhwcKernel(PoolArgs a) {
  const uint32_t groups = static_cast<uint32_t>(a.c / VEC);
  const uint32_t w = static_cast<uint32_t>(a.w);
  const uint32_t h = static_cast<uint32_t>(a.h);
  const uint32_t work = static_cast<uint32_t>(a.n) * h * w * groups;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < work;
       i += gridDim.x * blockDim.x) {
    uint32_t g = i % groups, pixel = i / groups;
    uint32_t iw = pixel % w, rest = pixel / w;
    uint32_t ih = rest % h, n = rest / h;
    gatherOne<T, VEC>(a, n, static_cast<int64_t>(g) * VEC, ih, iw);
  }
}

template <typename T> __global__ void gatherGenericKernel(PoolArgs a) {
  const int64_t total = a.n * a.c * a.h * a.w;
  for (int64_t i = globalThread(); i < total; i += gridThreads()) {
    int64_t index[4];
    int64_t rest = i;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      index[a.order[k]] = rest % a.orderSizes[k];
      rest /= a.orderSizes[k];
    }
    gatherOne<T, 1>(a, index[0], index[1], index[2], index[3]);
  }
}

} // namespace

cudaError_t launchPoolBackward(Elem elem, const PoolArgs &args, bool nhwc,
                               cudaStream_t stream) {
  int64_t total = args.n * args.c * args.h * args.w;
  if (total == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(T);
    if (nhwc && total < INT_MAX) {
      int64_t work = total / args.vec;
      if (args.vec == kVec)
        gatherNhwcKernel<T, kVec>
            <<<blocksFor(work), kThreads, 0, stream>>>(args);
      else
        gatherNhwcKernel<T, 1><<<blocksFor(work), kThreads, 0, stream>>>(args);
    } else {
      gatherGenericKernel<T><<<blocksFor(total), kThreads, 0, stream>>>(args);
    }
    return cudaGetLastError();
  });
}

} // namespace memfmt::runtime::cuda
