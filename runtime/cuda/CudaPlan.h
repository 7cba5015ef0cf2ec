//===- CudaPlan.h - Host-side planning of CUDA kernel launches --*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Everything the CUDA backend decides before it launches anything, as plain
// C++ with no CUDA dependency, so that it is unit-tested on machines without
// a GPU (runtime/test/cuda/CudaPlanTest.cpp):
//  * StridedPlan: the index space of an elementwise kernel over K operands
//    (output first), with size-1 dims dropped, dims ordered by the output's
//    strides (outermost first) and neighbours merged where every operand
//    steps over the inner dim exactly; a dense same-layout call becomes one
//    flat dim, whatever the layout (NCHW, channels-last, L3);
//  * channel patterns: a per-channel operation (batch norm, a bias epilogue)
//    on a plan whose last operand is the channel index: "rows" (channels
//    innermost, NHWC), "planes" (a channel's pixels innermost, NCHW) or the
//    generic walk;
//  * pool plans: NHWC-vectorised or the generic walk, with the generic
//    kernel's dim order taken from the output's strides;
//  * layer norm plans: the rows (every dim but the last, as a StridedPlan)
//    and whether a warp or a block normalizes each row;
//  * softmax plans: the rows along any dim (every other dim, as a
//    StridedPlan) and whether a warp, a block or a single thread owns each
//    row;
//  * GEMM operands for cuBLAS (column-major storage, transposed or not, and
//    the leading dimension) from a matrix's strides;
//  * the cuDNN convolution's tensor format and whether it needs packed
//    copies.
// The structs here are also the kernels' parameters (trivially copyable,
// compiled by nvcc too).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CUDA_CUDAPLAN_H
#define MEMFMT_RUNTIME_CUDA_CUDAPLAN_H

#include <cstddef>
#include <cstdint>

namespace memfmt::runtime::cuda {

/// The most dims a plan has (the runtime's kMaxRank).
constexpr int kMaxDims = 8;

/// Element types of the CUDA kernels.
enum class Elem : int { F32 = 0, F16 = 1, BF16 = 2 };

inline size_t elemSize(Elem e) { return e == Elem::F32 ? 4 : 2; }

/// Elements per 16-byte vector.
inline int vectorWidth(Elem e) { return e == Elem::F32 ? 4 : 8; }

/// The walk of an elementwise kernel: `total` elements; dim d (outermost
/// first) has sizes[d] indices, operand k steps strides[d][k] elements per
/// index. rank 0 with total 1 is a single element; total 0 is no work.
template <int K> struct StridedPlan {
  int rank = 0;
  int64_t total = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims][K] = {};
};

/// Builds the plan of a `rank`-D index space `sizes` over K operands with
/// strides `strides[k]` (each `rank` entries; operand 0 should be the
/// output: its strides order the dims).
template <int K>
StridedPlan<K> planStrided(int rank, const int64_t *sizes,
                           const int64_t *const (&strides)[K]);

/// True if every operand of `plan` is one dense run (rank <= 1, unit
/// strides): the flat, vectorisable kernels apply.
template <int K> bool isFlat(const StridedPlan<K> &plan);

/// The profile's name of the kernel shape a plan takes: "empty", "flat"
/// (the vectorised dense kernels) or "strided".
template <int K> const char *implOf(const StridedPlan<K> &plan) {
  return plan.total == 0 ? "empty" : isFlat(plan) ? "flat" : "strided";
}

//===----------------------------------------------------------------------===//
// Per-channel operations
//===----------------------------------------------------------------------===//

/// Operands of a per-channel plan: output, input, residual (stride 0 when
/// absent) and the channel index (stride 1 along the channel dim, 0
/// elsewhere).
enum ChannelOperand { kChanY = 0, kChanX = 1, kChanR = 2, kChanIndex = 3 };

enum class ChannelPattern : int {
  /// rank 2 [pixels, C]: channels innermost with unit stride (NHWC).
  Rows = 0,
  /// rank 2 [C, inner] or 3 [outer, C, inner]: a channel's elements
  /// innermost with unit stride (NCHW).
  Planes = 1,
  /// Anything else: one element per thread, any strides.
  Generic = 2,
};

/// Classifies a per-channel plan (operand order of ChannelOperand).
ChannelPattern classifyChannelPlan(const StridedPlan<4> &plan,
                                   bool hasResidual);

/// Elements per thread of a Rows or Planes kernel: `width` when the inner
/// dim, every other dim's y/x/(residual) strides and the pointers
/// (`alignedPointers`) allow 16-byte accesses, else 1.
int channelVectorWidth(const StridedPlan<4> &plan, ChannelPattern pattern,
                       bool hasResidual, int width, bool alignedPointers);

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

/// Rows of at most this many elements get one warp each (eight rows per
/// block); longer rows get a block each.
constexpr int64_t kLayerNormWarpLimit = 1024;

/// The parameters of the layer norm kernel (Kernels.def's layer_norm): each
/// row of `d` elements is normalized over itself.
struct LayerNormArgs {
  /// The rows: the index space of the dims before the last, operands y and
  /// x; rows.total rows (one for a 1-D tensor).
  StridedPlan<2> rows;
  /// Elements per row and their strides in y and x.
  int64_t d = 0, yStep = 1, xStep = 1;
  void *y = nullptr;
  const void *x = nullptr;
  /// Null when absent (weight 1, bias 0).
  const void *weight = nullptr, *bias = nullptr;
  int64_t weightStride = 0, biasStride = 0;
  float eps = 0;
  /// One warp per row; else one block per row.
  bool warpPerRow = true;
};

/// Plans a layer norm over `rank`-D tensors of `sizes` (rank >= 1, the last
/// dim normalized) with the output's and the input's strides: fills rows
/// (output-ordered, merged like any StridedPlan), d, the steps and
/// warpPerRow.
void planLayerNorm(LayerNormArgs &args, int rank, const int64_t *sizes,
                   const int64_t *outStrides, const int64_t *inStrides);

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// Unit-stride rows of at most this many elements get one warp each; longer
/// ones get a block each.
constexpr int64_t kSoftmaxWarpLimit = 1024;

/// What owns one row of the softmax kernel.
enum class SoftmaxTeam : int {
  /// A warp (eight rows per block), lane i reading elements i, i + 32, ...:
  /// coalesced when the input has unit stride along the dim.
  Warp = 0,
  /// A block of 256 threads, likewise, for rows longer than
  /// kSoftmaxWarpLimit.
  Block = 1,
  /// One thread, walking the row with its stride: rows along a dim that is
  /// not the input's innermost (the channels of an NCHW tensor), where
  /// consecutive threads own rows whose elements are neighbours in memory.
  /// Also rows of one element, which need no team.
  Thread = 2,
};

/// "warp_per_row", "block_per_row" or "thread_per_row" (the profile's impl).
const char *toString(SoftmaxTeam team);

/// The parameters of the softmax kernel (Kernels.def's softmax): each row of
/// `d` elements becomes exp(x - max) / sum(exp(x - max)).
struct SoftmaxArgs {
  /// The rows: the index space of every dim but the softmax one, operands y
  /// and x; rows.total rows (one for a 1-D tensor).
  StridedPlan<2> rows;
  /// Elements per row and their strides in y and x.
  int64_t d = 0, yStep = 1, xStep = 1;
  void *y = nullptr;
  const void *x = nullptr;
  SoftmaxTeam team = SoftmaxTeam::Warp;
};

/// Plans a softmax along dim `dim` (0 <= dim < rank) of `rank`-D tensors of
/// `sizes` with the output's and the input's strides: fills rows
/// (output-ordered, merged like any StridedPlan), d, the steps and the team
/// (a warp or a block when the input has unit stride along `dim`, by the
/// row's length; else a thread).
void planSoftmax(SoftmaxArgs &args, int rank, const int64_t *sizes, int dim,
                 const int64_t *outStrides, const int64_t *inStrides);

//===----------------------------------------------------------------------===//
// GEMM operands (cuBLAS is column-major)
//===----------------------------------------------------------------------===//

/// How a logical rows x cols matrix with element (i, j) at i * rowStride +
/// j * colStride is handed to cuBLAS: stored column-major as itself
/// (transposed = false, element (i, j) at i + j * ld) or as its transpose
/// (transposed = true, element (i, j) at j + i * ld).
struct GemmOperand {
  bool ok = false;
  bool transposed = false;
  int64_t ld = 1;
};

/// The GemmOperand of a matrix, or ok = false when neither stride is unit
/// (the caller copies it to a dense buffer first).
GemmOperand gemmOperand(int64_t rows, int64_t cols, int64_t rowStride,
                        int64_t colStride);

/// A cuBLAS call computing out = input @ weight^T for input [N, K], weight
/// [M, K] and out [N, M] (row/col strides each): column-major C (m x n) =
/// op(A) (m x k) * op(B) (k x n). `swapped` says whether A is the weight
/// (C = out^T, m = M, n = N) or the input (C = out, m = N, n = M).
struct GemmPlan {
  bool ok = false;
  bool swapped = false;
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;
};

/// Plans out = input @ weight^T; ok = false when a matrix (the output
/// included) has no unit stride (the caller uses dense copies).
GemmPlan planLinear(int64_t n, int64_t k, int64_t m, const int64_t *inStrides,
                    const int64_t *weightStrides, const int64_t *outStrides);

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

/// The tensor format cuDNN runs a convolution in.
enum class ConvFormat : int { Nchw = 0, Nhwc = 1 };

/// Strides of a packed 4-D tensor of `sizes` in `format`.
void packedStrides(ConvFormat format, const int64_t *sizes, int64_t *strides);

/// True if strides give every element of `sizes` the offset the packed
/// `format` gives it (size-1 dims are free, L3).
bool isPacked(ConvFormat format, const int64_t *sizes, const int64_t *strides);

/// The format of a convolution: NHWC when the output is channels-last by
/// L4 (channels-last contiguous and not also contiguous) or, when the output
/// is both, when the input or the weight is; NCHW otherwise.
ConvFormat chooseConvFormat(const int64_t *outSizes, const int64_t *outStrides,
                            const int64_t *inSizes, const int64_t *inStrides,
                            const int64_t *weightSizes,
                            const int64_t *weightStrides);

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// The kinds of pooling kernels.
enum class PoolKind : int {
  Max = 0,
  Avg = 1,
  Adaptive = 2,
  MaxBackward = 3,
  AdaptiveBackward = 4,
  AvgBackward = 5
};

/// True for the gradient kernels (they write x from y).
inline bool isBackward(PoolKind kind) {
  return kind == PoolKind::MaxBackward || kind == PoolKind::AdaptiveBackward ||
         kind == PoolKind::AvgBackward;
}

/// The parameters of a pooling kernel. Forward kernels write y from x (and
/// indices for max with indices); backward kernels write x (grad_input)
/// from y (grad_output) and indices. Sizes are N, C, H, W (of x) and OH, OW
/// (of y); strides are in elements, in N, C, H, W order.
struct PoolArgs {
  PoolKind kind = PoolKind::Max;
  void *x = nullptr;
  void *y = nullptr;
  int64_t *indices = nullptr;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t xs[4] = {}, ys[4] = {}, is[4] = {};
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0,
          dh = 1, dw = 1;
  bool countIncludePad = false;
  /// Generic kernel: the dims of the written tensor (y forward, x backward)
  /// innermost first, and their sizes in that order.
  int order[4] = {3, 2, 1, 0};
  int64_t orderSizes[4] = {};
  /// NHWC kernels: channels per thread (1 = not vectorised).
  int vec = 1;
};

/// True if the NHWC kernel applies: the channel stride is 1 in every tensor
/// (x, y and indices when present). `vec` is then the vector width that the
/// channel count, the pixel strides and `alignedPointers` allow (else 1).
bool planPoolNhwc(PoolArgs &args, int vectorWidth, bool alignedPointers);

/// Fills args.order and orderSizes for the generic kernel: the written
/// tensor's dims by increasing stride (ties: the logical order W, H, C, N).
void planPoolGeneric(PoolArgs &args);

} // namespace memfmt::runtime::cuda

#endif // MEMFMT_RUNTIME_CUDA_CUDAPLAN_H
