//===- PoolWindows.cuh - Pooling windows along one dim ---------*- CUDA -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The windows of average and adaptive average pooling along one dim, shared
// by the forward kernels (Pool.cu) and the gradients (PoolBackward.cu) so
// that both use the same rows and the same divisors (the CPU backend's, and
// PyTorch's).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CUDA_POOLWINDOWS_CUH
#define MEMFMT_RUNTIME_CUDA_POOLWINDOWS_CUH

#include <cstdint>

namespace memfmt::runtime::cuda {

/// A window along one dim: the input positions [begin, end) it sums and
/// the extent its count_include_pad divisor counts.
struct Span {
  int64_t begin, end, extent;
};

/// Average pooling: output `o`'s window starts at o * stride - pad and is
/// clipped to the padded input (size + padEnd) for the extent and to the
/// input for the sum.
__device__ __forceinline__ Span avgSpan(int64_t o, int64_t kernel,
                                        int64_t stride, int64_t pad,
                                        int64_t size, int64_t padEnd) {
  int64_t start = o * stride - pad;
  int64_t stop =
      start + kernel < size + padEnd ? start + kernel : size + padEnd;
  return {start > 0 ? start : 0, stop < size ? stop : size, stop - start};
}

/// Adaptive average pooling: rows [floor(o * size / outSize),
/// ceil((o + 1) * size / outSize)).
__device__ __forceinline__ Span adaptiveSpan(int64_t o, int64_t outSize,
                                             int64_t size) {
  int64_t begin = o * size / outSize;
  int64_t end = ((o + 1) * size + outSize - 1) / outSize;
  return {begin, end, end - begin};
}

} // namespace memfmt::runtime::cuda

#endif // MEMFMT_RUNTIME_CUDA_POOLWINDOWS_CUH
