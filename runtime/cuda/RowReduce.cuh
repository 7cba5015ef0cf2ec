//===- RowReduce.cuh - Reductions over the threads that own a row ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The row kernels (LayerNorm.cu, Softmax.cu) give each row to a team of
// threads: a warp, a block or a single thread. Each member strides over the
// row, then combines its partial value with the rest of the team's through
// one of the functors here: a warp with butterfly shuffles, a block through
// one shared-memory slot per warp, a single thread with nothing. Every
// member gets the result, so the whole team goes on with the row. The
// operations are f32 sums and maxima.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CUDA_ROWREDUCE_CUH
#define MEMFMT_RUNTIME_CUDA_ROWREDUCE_CUH

#include <cuda_runtime.h>

#include <math_constants.h>

namespace memfmt::runtime::cuda {

constexpr int kWarp = 32;

struct SumOp {
  static __device__ float identity() { return 0.0f; }
  __device__ float operator()(float a, float b) const { return a + b; }
};

/// fmaxf: a NaN loses to any number.
struct MaxOp {
  static __device__ float identity() { return -CUDART_INF_F; }
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/// `op` over the 32 lanes of a warp, in every lane.
template <typename Op>
__device__ __forceinline__ float warpReduce(float v, Op op) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// A warp's team.
struct WarpReduce {
  template <typename Op> __device__ float operator()(float v, Op op) const {
    return warpReduce(v, op);
  }
};

/// A block's team (a multiple of 32 threads).
struct BlockReduce {
  float *partial; // One slot per warp, in shared memory.
  template <typename Op> __device__ float operator()(float v, Op op) const {
    v = warpReduce(v, op);
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    __syncthreads(); // The previous reduction has read `partial`.
    if (lane == 0)
      partial[warp] = v;
    __syncthreads();
    const int warps = blockDim.x / kWarp;
    return warpReduce(lane < warps ? partial[lane] : Op::identity(), op);
  }
};

/// A team of one thread: its value is the result.
struct ThreadReduce {
  template <typename Op> __device__ float operator()(float v, Op) const {
    return v;
  }
};

} // namespace memfmt::runtime::cuda

#endif // MEMFMT_RUNTIME_CUDA_ROWREDUCE_CUH
