//===- Pool.cu - Max, average and adaptive average pooling ----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Forward 2-D pooling with the CPU backend's (PyTorch's) semantics: padded
// positions never win a max, the first maximum in window order wins ties and
// a NaN wins over any number (the last NaN's index is kept), indices are
// h * W + w inside the (n, c) plane; average pooling clips the window to the
// padded input for the count_include_pad divisor and to the input for the
// sum; adaptive pooling uses rows [floor(i * H / OH), ceil((i + 1) * H /
// OH)). Sums are f32.
//
// Two kernels per kind:
//  * NHWC: the channel stride is 1 everywhere; a thread owns `vec` adjacent
//    channels of one output pixel, so a warp reads consecutive channels of
//    each window position (16-byte loads when vec > 1);
//  * generic: one output element per thread, any strides, the thread index
//    decomposed in the output's own stride order (args.order) so that
//    neighbouring threads write neighbouring addresses in NCHW too.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "DeviceTypes.cuh"
#include "PoolWindows.cuh"

#include <climits>

namespace memfmt::runtime::cuda {
namespace {

/// One output element (or `VEC` channels of it) at (n, c..c+VEC, oh, ow).
template <typename T, int VEC>
__device__ __forceinline__ void poolOne(const PoolArgs &a, int64_t n, int64_t c,
                                        int64_t oh, int64_t ow) {
  const T *x = static_cast<const T *>(a.x) + n * a.xs[0] + c * a.xs[1];
  T *y = static_cast<T *>(a.y) + n * a.ys[0] + c * a.ys[1] + oh * a.ys[2] +
         ow * a.ys[3];
  float result[VEC];
  if (a.kind == PoolKind::Max) {
    int64_t best[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      result[j] = -__int_as_float(0x7f800000);
      best[j] = -1;
    }
    for (int64_t kh = 0; kh < a.kh; ++kh) {
      int64_t ih = oh * a.sh - a.pt + kh * a.dh;
      if (ih < 0 || ih >= a.h)
        continue;
      for (int64_t kw = 0; kw < a.kw; ++kw) {
        int64_t iw = ow * a.sw - a.pl + kw * a.dw;
        if (iw < 0 || iw >= a.w)
          continue;
        Vec<T, VEC> v = *reinterpret_cast<const Vec<T, VEC> *>(
            x + ih * a.xs[2] + iw * a.xs[3]);
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          float f = toFloat(v.v[j]);
          if (best[j] < 0 || f > result[j] || isnan(f)) {
            result[j] = f;
            best[j] = ih * a.w + iw;
          }
        }
      }
    }
    if (a.indices) {
      int64_t *idx =
          a.indices + n * a.is[0] + c * a.is[1] + oh * a.is[2] + ow * a.is[3];
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        idx[j * a.is[1]] = best[j];
    }
  } else {
    Span rows, cols;
    if (a.kind == PoolKind::Avg) {
      rows = avgSpan(oh, a.kh, a.sh, a.pt, a.h, a.pb);
      cols = avgSpan(ow, a.kw, a.sw, a.pl, a.w, a.pr);
    } else {
      rows = adaptiveSpan(oh, a.oh, a.h);
      cols = adaptiveSpan(ow, a.ow, a.w);
    }
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      result[j] = 0.0f;
    for (int64_t ih = rows.begin; ih < rows.end; ++ih)
      for (int64_t iw = cols.begin; iw < cols.end; ++iw) {
        Vec<T, VEC> v = *reinterpret_cast<const Vec<T, VEC> *>(
            x + ih * a.xs[2] + iw * a.xs[3]);
#pragma unroll
        for (int j = 0; j < VEC; ++j)
          result[j] += toFloat(v.v[j]);
      }
    int64_t divisor = a.kind == PoolKind::Avg && a.countIncludePad
                          ? rows.extent * cols.extent
                          : (rows.end - rows.begin) * (cols.end - cols.begin);
    float inverse = 1.0f / static_cast<float>(divisor);
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      result[j] = divisor == 0 ? 0.0f : result[j] * inverse;
  }
  if (VEC == 1) {
    y[0] = fromFloat<T>(result[0]);
  } else {
    Vec<T, VEC> out;
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      out.v[j] = fromFloat<T>(result[j]);
    *reinterpret_cast<Vec<T, VEC> *>(y) = out;
  }
}

/// NHWC: thread i owns channels [g * VEC, (g + 1) * VEC) of output pixel
/// i / groups. 32-bit index math (the host checks the range).
template <typename T, int VEC> __global__ void poolNhwcKernel(PoolArgs a) {
  const uint32_t groups = static_cast<uint32_t>(a.c / VEC);
  const uint32_t ow = static_cast<uint32_t>(a.ow);
  const uint32_t oh = static_cast<uint32_t>(a.oh);
  const uint32_t work = static_cast<uint32_t>(a.n) * oh * ow * groups;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < work;
       i += gridDim.x * blockDim.x) {
    uint32_t g = i % groups, pixel = i / groups;
    uint32_t w = pixel % ow, rest = pixel / ow;
    uint32_t h = rest % oh, n = rest / oh;
    poolOne<T, VEC>(a, n, static_cast<int64_t>(g) * VEC, h, w);
  }
}

template <typename T> __global__ void poolGenericKernel(PoolArgs a) {
  const int64_t total = a.n * a.c * a.oh * a.ow;
  for (int64_t i = globalThread(); i < total; i += gridThreads()) {
    int64_t index[4];
    int64_t rest = i;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      index[a.order[k]] = rest % a.orderSizes[k];
      rest /= a.orderSizes[k];
    }
    poolOne<T, 1>(a, index[0], index[1], index[2], index[3]);
  }
}

} // namespace

cudaError_t launchPool(Elem elem, const PoolArgs &args, bool nhwc,
                       cudaStream_t stream) {
  int64_t total = args.n * args.c * args.oh * args.ow;
  if (total == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(T);
    if (nhwc && total < INT_MAX) {
      int64_t work = total / args.vec;
      if (args.vec == kVec)
        poolNhwcKernel<T, kVec><<<blocksFor(work), kThreads, 0, stream>>>(args);
      else
        poolNhwcKernel<T, 1><<<blocksFor(work), kThreads, 0, stream>>>(args);
    } else {
      poolGenericKernel<T><<<blocksFor(total), kThreads, 0, stream>>>(args);
    }
    return cudaGetLastError();
  });
}

} // namespace memfmt::runtime::cuda
