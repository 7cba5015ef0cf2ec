//===- Elementwise.cu - Elementwise, conversion and per-channel kernels ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The backend's elementwise kernels, each in two or three shapes chosen by
// the host plan (CudaPlan.h):
//  * flat: every operand one dense run (any dense layout, NCHW or NHWC);
//    16-byte vector loads and stores when the pointers are aligned, a scalar
//    tail;
//  * per-channel rows (NHWC: C innermost, a thread owns `vec` channels of
//    one pixel, 16-byte accesses when C and the pixel strides allow) and
//    planes (NCHW: a block owns one (n, c) plane and computes its scale
//    once);
//  * generic: one element per thread, offsets from the plan's strides (any
//    layout, broadcasting by zero strides).
// relu keeps NaN (only x < 0 becomes 0). Batch norm subtracts the mean
// before scaling, as the CPU backend does. Outputs may be inputs (same
// layout): each element is read before it is written by the same thread.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "DeviceTypes.cuh"
#include "lib/ElementwiseMath.h"

#include <climits>

namespace memfmt::runtime::cuda {
namespace {

struct IdentityOp {
  __device__ float operator()(float v) const { return v; }
};

struct ReluOp {
  __device__ float operator()(float v) const { return v < 0.0f ? 0.0f : v; }
};

__device__ __forceinline__ float maybeRelu(float v, bool relu) {
  return relu && v < 0.0f ? 0.0f : v;
}

//===----------------------------------------------------------------------===//
// Unary: relu and conversions
//===----------------------------------------------------------------------===//

template <typename TIn, typename TOut, int VEC, typename Op>
__global__ void flatUnaryKernel(const TIn *x, TOut *y, int64_t n, Op op) {
  int64_t vectors = n / VEC;
  const Vec<TIn, VEC> *xv = reinterpret_cast<const Vec<TIn, VEC> *>(x);
  Vec<TOut, VEC> *yv = reinterpret_cast<Vec<TOut, VEC> *>(y);
  for (int64_t i = globalThread(); i < vectors; i += gridThreads()) {
    Vec<TIn, VEC> a = xv[i];
    Vec<TOut, VEC> b;
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      b.v[j] = fromFloat<TOut>(op(toFloat(a.v[j])));
    yv[i] = b;
  }
  for (int64_t i = vectors * VEC + globalThread(); i < n; i += gridThreads())
    y[i] = fromFloat<TOut>(op(toFloat(x[i])));
}

template <typename TIn, typename TOut, typename Op>
__global__ void stridedUnaryKernel(StridedPlan<2> plan, const TIn *x, TOut *y,
                                   Op op) {
  for (int64_t i = globalThread(); i < plan.total; i += gridThreads()) {
    int64_t off[2];
    offsetsOf(plan, i, off);
    y[off[0]] = fromFloat<TOut>(op(toFloat(x[off[1]])));
  }
}

template <typename TIn, typename TOut, typename Op>
cudaError_t unary(const StridedPlan<2> &plan, void *y, const void *x, Op op,
                  cudaStream_t stream) {
  if (plan.total == 0)
    return cudaSuccess;
  const TIn *in = static_cast<const TIn *>(x);
  TOut *out = static_cast<TOut *>(y);
  constexpr int kVec =
      16 / (sizeof(TIn) > sizeof(TOut) ? sizeof(TIn) : sizeof(TOut));
  if (isFlat(plan)) {
    if (aligned16(x) && aligned16(y))
      flatUnaryKernel<TIn, TOut, kVec>
          <<<blocksFor(plan.total / kVec + 1), kThreads, 0, stream>>>(
              in, out, plan.total, op);
    else
      flatUnaryKernel<TIn, TOut, 1>
          <<<blocksFor(plan.total), kThreads, 0, stream>>>(in, out, plan.total,
                                                           op);
  } else {
    stridedUnaryKernel<TIn, TOut>
        <<<blocksFor(plan.total), kThreads, 0, stream>>>(plan, in, out, op);
  }
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// Binary: add, mul, sub, div
//===----------------------------------------------------------------------===//

template <typename T, int VEC, typename Op>
__global__ void flatBinaryKernel(const T *a, const T *b, T *y, int64_t n,
                                 Op op) {
  int64_t vectors = n / VEC;
  const Vec<T, VEC> *av = reinterpret_cast<const Vec<T, VEC> *>(a);
  const Vec<T, VEC> *bv = reinterpret_cast<const Vec<T, VEC> *>(b);
  Vec<T, VEC> *yv = reinterpret_cast<Vec<T, VEC> *>(y);
  for (int64_t i = globalThread(); i < vectors; i += gridThreads()) {
    Vec<T, VEC> p = av[i], q = bv[i], r;
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      r.v[j] = fromFloat<T>(op(toFloat(p.v[j]), toFloat(q.v[j])));
    yv[i] = r;
  }
  for (int64_t i = vectors * VEC + globalThread(); i < n; i += gridThreads())
    y[i] = fromFloat<T>(op(toFloat(a[i]), toFloat(b[i])));
}

template <typename T, typename Op>
__global__ void stridedBinaryKernel(StridedPlan<3> plan, const T *a,
                                    const T *b, T *y, Op op) {
  for (int64_t i = globalThread(); i < plan.total; i += gridThreads()) {
    int64_t off[3];
    offsetsOf(plan, i, off);
    y[off[0]] = fromFloat<T>(op(toFloat(a[off[1]]), toFloat(b[off[2]])));
  }
}

template <typename Op>
cudaError_t binary(Elem elem, const StridedPlan<3> &plan, void *y,
                   const void *a, const void *b, Op op, cudaStream_t stream) {
  if (plan.total == 0)
    return cudaSuccess;
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(T);
    const T *pa = static_cast<const T *>(a);
    const T *pb = static_cast<const T *>(b);
    T *py = static_cast<T *>(y);
    if (isFlat(plan)) {
      if (aligned16(a) && aligned16(b) && aligned16(y))
        flatBinaryKernel<T, kVec>
            <<<blocksFor(plan.total / kVec + 1), kThreads, 0, stream>>>(
                pa, pb, py, plan.total, op);
      else
        flatBinaryKernel<T, 1><<<blocksFor(plan.total), kThreads, 0, stream>>>(
            pa, pb, py, plan.total, op);
    } else {
      stridedBinaryKernel<T><<<blocksFor(plan.total), kThreads, 0, stream>>>(
          plan, pa, pb, py, op);
    }
    return cudaGetLastError();
  });
}

struct AddOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

/// mul, sub or div (memfmt_binary_op_t).
struct BinaryOp {
  int64_t op;
  __device__ float operator()(float a, float b) const {
    return math::binary(op, a, b);
  }
};

/// sigmoid, hardswish, ... (memfmt_eltwise_op_t).
struct EltwiseOp {
  int64_t op;
  float alpha, beta;
  __device__ float operator()(float x) const {
    return math::eltwise(op, x, alpha, beta);
  }
};

//===----------------------------------------------------------------------===//
// Per-channel: batch norm and bias/residual epilogues
//===----------------------------------------------------------------------===//

/// y = (x - center) * scale + shift for one channel.
struct Affine {
  float center, scale, shift;
};

template <typename T>
__device__ __forceinline__ Affine affineOf(const ChannelArgs &a, int64_t c) {
  Affine f;
  if (a.batchNorm) {
    float w = toFloat(static_cast<const T *>(a.weight)[c * a.weightStride]);
    float v = toFloat(static_cast<const T *>(a.var)[c * a.varStride]);
    f.scale = w / sqrtf(v + a.eps);
    if (a.scaleOnly) {
      f.center = 0.0f;
      f.shift = 0.0f;
    } else {
      f.center = toFloat(static_cast<const T *>(a.mean)[c * a.meanStride]);
      f.shift = toFloat(static_cast<const T *>(a.bias)[c * a.biasStride]);
    }
  } else {
    f.center = 0.0f;
    f.scale = 1.0f;
    f.shift = a.bias ? toFloat(static_cast<const T *>(a.bias)[c * a.biasStride])
                     : 0.0f;
  }
  return f;
}

template <typename T>
__device__ __forceinline__ float
applyChannel(const ChannelArgs &a, const Affine &f, float x, float r) {
  float v = (x - f.center) * f.scale + f.shift;
  if (a.r)
    v += r;
  return maybeRelu(v, a.relu);
}

/// Rows [pixels, C] with unit channel stride: thread i owns channels
/// [c0, c0 + VEC) of one row. 32-bit index math (the host checks the range).
template <typename T, int VEC>
__global__ void channelRowsKernel(ChannelArgs a) {
  const uint32_t rows = static_cast<uint32_t>(a.plan.sizes[0]);
  const uint32_t groups = static_cast<uint32_t>(a.plan.sizes[1] / VEC);
  const uint32_t work = rows * groups;
  const T *x = static_cast<const T *>(a.x);
  const T *r = static_cast<const T *>(a.r);
  T *y = static_cast<T *>(a.y);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < work;
       i += gridDim.x * blockDim.x) {
    uint32_t row = i / groups;
    int64_t c0 = static_cast<int64_t>(i - row * groups) * VEC;
    int64_t yo = row * a.plan.strides[0][kChanY] + c0;
    int64_t xo = row * a.plan.strides[0][kChanX] + c0;
    int64_t ro = row * a.plan.strides[0][kChanR] + c0;
    Vec<T, VEC> xv = *reinterpret_cast<const Vec<T, VEC> *>(x + xo);
    Vec<T, VEC> rv;
    if (r)
      rv = *reinterpret_cast<const Vec<T, VEC> *>(r + ro);
    Vec<T, VEC> out;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      Affine f = affineOf<T>(a, c0 + j);
      out.v[j] = fromFloat<T>(
          applyChannel<T>(a, f, toFloat(xv.v[j]), r ? toFloat(rv.v[j]) : 0.0f));
    }
    *reinterpret_cast<Vec<T, VEC> *>(y + yo) = out;
  }
}

/// Planes [outer, C, inner] (or [C, inner]): block b owns plane b and
/// computes its channel's affine map once; threads stride over the plane.
template <typename T, int VEC>
__global__ void channelPlanesKernel(ChannelArgs a) {
  const bool three = a.plan.rank == 3;
  const int64_t channels = a.plan.sizes[three ? 1 : 0];
  const int64_t inner = a.plan.sizes[three ? 2 : 1];
  const int cdim = three ? 1 : 0;
  const T *x = static_cast<const T *>(a.x);
  const T *r = static_cast<const T *>(a.r);
  T *y = static_cast<T *>(a.y);
  for (int64_t plane = blockIdx.x;
       plane < (three ? a.plan.sizes[0] : 1) * channels; plane += gridDim.x) {
    int64_t outer = plane / channels, c = plane - outer * channels;
    int64_t yo = c * a.plan.strides[cdim][kChanY];
    int64_t xo = c * a.plan.strides[cdim][kChanX];
    int64_t ro = c * a.plan.strides[cdim][kChanR];
    if (three) {
      yo += outer * a.plan.strides[0][kChanY];
      xo += outer * a.plan.strides[0][kChanX];
      ro += outer * a.plan.strides[0][kChanR];
    }
    Affine f = affineOf<T>(a, c);
    for (int64_t j = static_cast<int64_t>(threadIdx.x) * VEC; j < inner;
         j += static_cast<int64_t>(blockDim.x) * VEC) {
      Vec<T, VEC> xv = *reinterpret_cast<const Vec<T, VEC> *>(x + xo + j);
      Vec<T, VEC> rv;
      if (r)
        rv = *reinterpret_cast<const Vec<T, VEC> *>(r + ro + j);
      Vec<T, VEC> out;
#pragma unroll
      for (int k = 0; k < VEC; ++k)
        out.v[k] = fromFloat<T>(applyChannel<T>(a, f, toFloat(xv.v[k]),
                                                r ? toFloat(rv.v[k]) : 0.0f));
      *reinterpret_cast<Vec<T, VEC> *>(y + yo + j) = out;
    }
  }
}

template <typename T> __global__ void channelGenericKernel(ChannelArgs a) {
  const T *x = static_cast<const T *>(a.x);
  const T *r = static_cast<const T *>(a.r);
  T *y = static_cast<T *>(a.y);
  for (int64_t i = globalThread(); i < a.plan.total; i += gridThreads()) {
    int64_t off[4];
    offsetsOf(a.plan, i, off);
    Affine f = affineOf<T>(a, off[kChanIndex]);
    y[off[kChanY]] =
        fromFloat<T>(applyChannel<T>(a, f, x ? toFloat(x[off[kChanX]]) : 0.0f,
                                     r ? toFloat(r[off[kChanR]]) : 0.0f));
  }
}

template <typename T>
cudaError_t channelwise(const ChannelArgs &a, cudaStream_t stream) {
  if (a.plan.total == 0)
    return cudaSuccess;
  constexpr int kVec = 16 / sizeof(T);
  bool small = a.plan.total < INT_MAX;
  if (!a.x) {
    channelGenericKernel<T>
        <<<blocksFor(a.plan.total), kThreads, 0, stream>>>(a);
  } else if (a.pattern == ChannelPattern::Rows && small) {
    int64_t work = a.plan.total / a.vec;
    if (a.vec == kVec)
      channelRowsKernel<T, kVec><<<blocksFor(work), kThreads, 0, stream>>>(a);
    else
      channelRowsKernel<T, 1><<<blocksFor(work), kThreads, 0, stream>>>(a);
  } else if (a.pattern == ChannelPattern::Planes) {
    int64_t inner = a.plan.sizes[a.plan.rank - 1];
    int64_t planes = a.plan.total / inner;
    unsigned blocks =
        static_cast<unsigned>(planes < (1 << 30) ? planes : (1 << 30));
    // Small planes (7 x 7) get small blocks: whole warps, no idle ones.
    int64_t perThread = (inner + a.vec - 1) / a.vec;
    unsigned threads = static_cast<unsigned>(
        perThread >= kThreads ? kThreads : (perThread + 31) / 32 * 32);
    if (a.vec == kVec)
      channelPlanesKernel<T, kVec><<<blocks, threads, 0, stream>>>(a);
    else
      channelPlanesKernel<T, 1><<<blocks, threads, 0, stream>>>(a);
  } else {
    channelGenericKernel<T>
        <<<blocksFor(a.plan.total), kThreads, 0, stream>>>(a);
  }
  return cudaGetLastError();
}

} // namespace

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

cudaError_t launchRelu(Elem elem, const StridedPlan<2> &plan, void *y,
                       const void *x, cudaStream_t stream) {
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return unary<T, T>(plan, y, x, ReluOp(), stream);
  });
}

cudaError_t launchConvert(Elem from, Elem to, const StridedPlan<2> &plan,
                          void *y, const void *x, cudaStream_t stream) {
  return withElem(from, [&](auto fromTag) {
    using TIn = typename decltype(fromTag)::type;
    return withElem(to, [&](auto toTag) {
      using TOut = typename decltype(toTag)::type;
      return unary<TIn, TOut>(plan, y, x, IdentityOp(), stream);
    });
  });
}

cudaError_t launchAdd(Elem elem, const StridedPlan<3> &plan, void *y,
                      const void *a, const void *b, cudaStream_t stream) {
  return binary(elem, plan, y, a, b, AddOp(), stream);
}

cudaError_t launchBinary(Elem elem, const StridedPlan<3> &plan, void *y,
                         const void *a, const void *b, int64_t op,
                         cudaStream_t stream) {
  return binary(elem, plan, y, a, b, BinaryOp{op}, stream);
}

cudaError_t launchEltwise(Elem elem, const StridedPlan<2> &plan, void *y,
                          const void *x, int64_t op, float alpha, float beta,
                          cudaStream_t stream) {
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return unary<T, T>(plan, y, x, EltwiseOp{op, alpha, beta}, stream);
  });
}

cudaError_t launchChannelwise(Elem elem, const ChannelArgs &args,
                              cudaStream_t stream) {
  return withElem(elem, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return channelwise<T>(args, stream);
  });
}

} // namespace memfmt::runtime::cuda
