//===- Transpose.cu - NCHW <-> NHWC through shared memory -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The layout conversion between dense NCHW and dense NHWC is, per image, the
// transpose of a C x HW matrix (or back). Each block moves 32 x 32 tiles:
// it reads a tile row by row (coalesced), stages it in shared memory padded
// to 33 columns (no bank conflicts on the transposed read) and writes it
// column by column as rows of the output (coalesced again). The kernel moves
// bytes, so one instantiation per element size serves every dtype.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "DeviceTypes.cuh"

namespace memfmt::runtime::cuda {
namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;

template <typename T>
__global__ void transposeKernel(const T *x, T *y, int64_t batches, int64_t rows,
                                int64_t cols) {
  __shared__ T tile[kTile][kTile + 1];
  const int64_t tilesR = (rows + kTile - 1) / kTile;
  const int64_t tilesC = (cols + kTile - 1) / kTile;
  const int64_t tiles = batches * tilesR * tilesC;
  const int64_t matrix = rows * cols;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    int64_t b = t / (tilesR * tilesC);
    int64_t rest = t - b * tilesR * tilesC;
    int64_t r0 = (rest / tilesC) * kTile, c0 = (rest % tilesC) * kTile;
    const T *xb = x + b * matrix;
    T *yb = y + b * matrix;
    for (int i = threadIdx.y; i < kTile; i += kRowsPerPass) {
      int64_t r = r0 + i, c = c0 + threadIdx.x;
      if (r < rows && c < cols)
        tile[i][threadIdx.x] = xb[r * cols + c];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < kTile; i += kRowsPerPass) {
      int64_t c = c0 + i, r = r0 + threadIdx.x;
      if (c < cols && r < rows)
        yb[c * rows + r] = tile[threadIdx.x][i];
    }
    __syncthreads();
  }
}

template <typename T>
cudaError_t transpose(const void *x, void *y, int64_t batches, int64_t rows,
                      int64_t cols, cudaStream_t stream) {
  int64_t tiles =
      batches * ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
  unsigned blocks = static_cast<unsigned>(tiles < (1 << 24) ? tiles : 1 << 24);
  transposeKernel<T><<<blocks, dim3(kTile, kRowsPerPass), 0, stream>>>(
      static_cast<const T *>(x), static_cast<T *>(y), batches, rows, cols);
  return cudaGetLastError();
}

} // namespace

cudaError_t launchTranspose(size_t elementBytes, const void *x, void *y,
                            int64_t batches, int64_t rows, int64_t cols,
                            cudaStream_t stream) {
  if (batches == 0 || rows == 0 || cols == 0)
    return cudaSuccess;
  switch (elementBytes) {
  case 2:
    return transpose<uint16_t>(x, y, batches, rows, cols, stream);
  case 4:
    return transpose<uint32_t>(x, y, batches, rows, cols, stream);
  case 8:
    return transpose<uint64_t>(x, y, batches, rows, cols, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

} // namespace memfmt::runtime::cuda
