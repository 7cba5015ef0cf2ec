//===- DeviceTypes.cuh - Element types and helpers of the CUDA kernels ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What every .cu file of the backend shares: f32/f16/bf16 loads and stores
// through float (all arithmetic is f32; f16/bf16 results round to nearest
// even once), 16-byte vectors, the walk of a StridedPlan, launch-size
// helpers and the dispatch from Elem to a C++ type.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CUDA_DEVICETYPES_CUH
#define MEMFMT_RUNTIME_CUDA_DEVICETYPES_CUH

#include "CudaPlan.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace memfmt::runtime::cuda {

__device__ __forceinline__ float toFloat(float v) { return v; }
__device__ __forceinline__ float toFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float toFloat(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T> __device__ __forceinline__ T fromFloat(float v);
template <> __device__ __forceinline__ float fromFloat<float>(float v) {
  return v;
}
template <> __device__ __forceinline__ __half fromFloat<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

/// N elements in one aligned load or store (16 bytes for the vector widths
/// the backend uses).
template <typename T, int N> struct alignas(sizeof(T) * N) Vec { T v[N]; };

/// The offsets of element `i` of `plan`'s walk in each operand.
template <int K>
__device__ __forceinline__ void offsetsOf(const StridedPlan<K> &plan, int64_t i,
                                          int64_t (&off)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k)
    off[k] = 0;
  for (int d = plan.rank - 1; d >= 0; --d) {
    int64_t size = plan.sizes[d];
    int64_t index = i % size;
    i /= size;
#pragma unroll
    for (int k = 0; k < K; ++k)
      off[k] += index * plan.strides[d][k];
  }
}

constexpr int kThreads = 256;

/// Blocks for `work` items at kThreads per block, capped (the kernels loop
/// with a grid stride).
inline unsigned blocksFor(int64_t work) {
  int64_t blocks = (work + kThreads - 1) / kThreads;
  if (blocks < 1)
    blocks = 1;
  return static_cast<unsigned>(blocks > (1 << 20) ? (1 << 20) : blocks);
}

__device__ __forceinline__ int64_t globalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ int64_t gridThreads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

inline bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

/// A type as a value, for generic lambdas (C++17).
template <typename T> struct TypeTag { using type = T; };

/// Calls f(TypeTag<T>{}) with the C++ type T of `e`.
template <typename F> cudaError_t withElem(Elem e, F &&f) {
  switch (e) {
  case Elem::F32:
    return f(TypeTag<float>{});
  case Elem::F16:
    return f(TypeTag<__half>{});
  case Elem::BF16:
    return f(TypeTag<__nv_bfloat16>{});
  }
  return cudaErrorInvalidValue;
}

} // namespace memfmt::runtime::cuda

#endif // MEMFMT_RUNTIME_CUDA_DEVICETYPES_CUH
