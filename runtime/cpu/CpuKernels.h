//===- CpuKernels.h - The CPU backend's kernel functions --------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The kernels of the CPU backend, one family per file:
//  * `...Reference` kernels accept any strides on every tensor (NCHW,
//    channels-last, strided views, broadcast zero strides on inputs) and
//    accumulate in double; they are the oracle and the fallback;
//  * `...Fast` kernels specialise layouts (all tensors dense in the same
//    layout, channels-last rows, NCHW<->NHWC transposes) and return the name
//    of what ran, or null when the layouts are not theirs, in which case the
//    caller runs the reference. Those that take a DType run in f32 and
//    bf16 (Element.h) and decline other types; the others are f32 only.
// All of them get arguments that passed Validate.cpp, and none fails.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_CPUKERNELS_H
#define MEMFMT_RUNTIME_CPU_CPUKERNELS_H

#include "lib/KernelArgs.h"

#include <memory>
#include <vector>

namespace memfmt::runtime {
class KernelCall;
} // namespace memfmt::runtime

namespace memfmt::runtime::cpu {

/// The window attributes of a max pool (bottom/right padding is implied by
/// the output size).
struct MaxPoolWindow {
  int64_t kernelH, kernelW, strideH, strideW, padTop, padLeft, dilationH,
      dilationW;
};

// Conv.cpp
void conv2dReference(const args::conv2d &a);
/// For each kernel column kw < kernelW, the output columns [begin[kw],
/// end[kw]) whose input column ow * stride + kw * dilation - padLeft lies in
/// [0, width), so the reference convolutions' inner loops need no bounds
/// check.
void convColumnRanges(int64_t kernelW, int64_t stride, int64_t dilation,
                      int64_t padLeft, int64_t width, int64_t outW,
                      int64_t *begin, int64_t *end);

// ConvBackward.cpp
void convolutionBackwardReference(const args::convolution_backward &a);

// LinearBackward.cpp
void linearBackwardReference(const args::linear_backward &a);

// BatchNorm.cpp
void batchNormReference(const args::batch_norm &a);
const char *batchNormFast(const args::batch_norm &a);
/// Folds a batch norm into a convolution's weight and bias (load time only,
/// so there is no fast variant).
void foldBatchNormReference(const args::fold_batch_norm &a);

// Elementwise.cpp
void reluReference(const args::relu &a);
const char *reluFast(const args::relu &a, DType dtype);
/// `withRelu` applies max(x, 0) after the sum: the epilogue of a convolution
/// whose residual oneDNN does not sum itself (OneDnnConv.cpp); the add kernel
/// has none.
void addReference(const args::add &a, bool withRelu = false);
const char *addFast(const args::add &a, DType dtype);
void binaryReference(const args::binary &a);
const char *binaryFast(const args::binary &a, DType dtype);
void eltwiseReference(const args::eltwise &a);
const char *eltwiseFast(const args::eltwise &a, DType dtype);

/// A half-open range [begin, end) of input rows or columns (or of kernel
/// taps) and, for average pooling, the window's count_include_pad extent.
struct Window {
  int64_t begin, end, padded;
};

// Pool.cpp. `indices` is null for max_pool2d.
/// The input rows (or columns) [begin, end) of average-pool output row `o`
/// and its count_include_pad extent: the window clipped to the padded input
/// [-pad, size + padEnd) (Kernels.def's divisor rule).
Window avgWindow(int64_t o, int64_t kernel, int64_t stride, int64_t pad,
                 int64_t size, int64_t padEnd);
void maxPool2dReference(const TensorView &input, const TensorView &output,
                        const TensorView *indices, const MaxPoolWindow &w);
const char *maxPool2dFast(const TensorView &input, const TensorView &output,
                          const TensorView *indices, const MaxPoolWindow &w,
                          DType dtype);
void avgPool2dReference(const args::avg_pool2d &a);
const char *avgPool2dFast(const args::avg_pool2d &a, DType dtype);
void adaptiveAvgPool2dReference(const args::adaptive_avg_pool2d &a);
const char *adaptiveAvgPool2dFast(const args::adaptive_avg_pool2d &a,
                                  DType dtype);

// LayerNorm.cpp
void layerNormReference(const args::layer_norm &a);
const char *layerNormFast(const args::layer_norm &a);
/// The stride between consecutive rows of `t` (rows: every index of the
/// dims before the last, in row-major order) when its last dim has unit
/// stride (or size 1) and row r starts at r * rowStride; false otherwise.
/// The layouts the fast layer norms (the loop, oneDNN) take.
bool layerNormRows(const TensorView &t, int64_t &rowStride);

// LayerNormBackward.cpp
void layerNormBackwardReference(const args::layer_norm_backward &a);
/// f32 or bf16 (`dtype`), on rows layerNormRows takes.
const char *layerNormBackwardFast(const args::layer_norm_backward &a,
                                  DType dtype);

// Softmax.cpp
void softmaxReference(const args::softmax &a);
void softmaxBackwardReference(const args::softmax_backward &a);
/// f32 or bf16 rows with unit stride along `dim`; null otherwise.
const char *softmaxBackwardFast(const args::softmax_backward &a, DType dtype);
/// f32 or bf16 rows with unit stride along `dim` in both tensors (any
/// other strides); null otherwise.
const char *softmaxFast(const args::softmax &a, DType dtype);

// Linear.cpp
void linearReference(const args::linear &a);

// Copy.cpp
void copyReference(const TensorView &input, const TensorView &output);
/// Any element type (a copy moves elements of dtype's size).
const char *copyFast(const TensorView &input, const TensorView &output,
                     DType dtype);

// PoolBackward.cpp
void adaptiveAvgPool2dBackwardReference(
    const args::adaptive_avg_pool2d_backward &a);
void maxPool2dWithIndicesBackwardReference(
    const args::max_pool2d_with_indices_backward &a);
void avgPool2dBackwardReference(const args::avg_pool2d_backward &a);
const char *avgPool2dBackwardFast(const args::avg_pool2d_backward &a);
/// The max and adaptive gradients: f32 or bf16 (`dtype`).
const char *maxPool2dWithIndicesBackwardFast(
    const args::max_pool2d_with_indices_backward &a, DType dtype);
const char *
adaptiveAvgPool2dBackwardFast(const args::adaptive_avg_pool2d_backward &a,
                              DType dtype);

// BatchNormReference.cpp
void nativeBatchNormReference(const args::native_batch_norm &a);
/// Element c of the 1-D f32 per-channel tensor t (weight, bias, saved
/// statistics), widened.
inline double channelValue(const TensorView &t, int64_t c) {
  return static_cast<double>(t.as<float>()[c * t.strides[0]]);
}
/// Writes save_mean, save_invstd and the running statistics of a training
/// batch norm from its batch statistics: the per-channel `mean` and biased
/// variance `var` (C values each) of `n` values per channel (the running
/// variance is unbiased by n / (n - 1)). Shared by every implementation.
void writeBatchNormStatistics(const args::native_batch_norm &a,
                              const double *mean, const double *var, double n);
void nativeBatchNormBackwardReference(
    const args::native_batch_norm_backward &a);
// The reference's phases (any strides, in double, threaded over channels),
// which SyncBatchNorm.cpp runs with all-reduces between them.
/// sums[c] = the sum of channel c of the f32 tensor `in`. (These phases
/// read f32 tensors only: synchronised batch norm is f32.)
void channelSums(const TensorView &in, double *sums);
/// sums[c] = the sum of (x - mean[c])^2 over channel c.
void squaredDeviationSums(const TensorView &in, const double *mean,
                          double *sums);
/// output = (input - mean) / sqrt(var + eps) * weight + bias per channel.
void normalizeChannels(const args::native_batch_norm &a, const double *mean,
                       const double *var);
/// sums[c] = sum(grad_out), sums[C + c] = sum(grad_out * xhat) of channel
/// c, and grad_weight / grad_bias (when present) from them.
void batchNormGradientSums(const args::native_batch_norm_backward &a,
                           double *sums);
/// grad_input from batchNormGradientSums' sums over `n` values per channel.
void batchNormGradInput(const args::native_batch_norm_backward &a,
                        const double *sums, double n);

// BatchNormTraining.cpp
/// f32, or bf16 activations (`dtype`) in channels-last (rows) layouts.
const char *nativeBatchNormFast(const args::native_batch_norm &a, DType dtype);
/// f32, or bf16 activations (`dtype`) in channels-last (rows) layouts.
const char *
nativeBatchNormBackwardFast(const args::native_batch_norm_backward &a,
                            DType dtype);

// ElementwiseBackward.cpp
void fillReference(const args::fill &a);
const char *fillFast(const args::fill &a);
void thresholdBackwardReference(const args::threshold_backward &a);
/// f32 or bf16 (`dtype`), on tensors dense in one common layout.
const char *thresholdBackwardFast(const args::threshold_backward &a,
                                  DType dtype);
void eltwiseBackwardReference(const args::eltwise_backward &a);
/// f32 or bf16 (`dtype`), on tensors dense in one common layout.
const char *eltwiseBackwardFast(const args::eltwise_backward &a, DType dtype);

// Reduce.cpp
void sumToSizeReference(const args::sum_to_size &a);
/// f32 or bf16 (`dtype`), where input has a unit-stride dim.
const char *sumToSizeFast(const args::sum_to_size &a, DType dtype);

// Loss.cpp
/// The first row n whose target[n] lies outside [0, classes), or -1.
int64_t findBadTarget(const TensorView &target, int64_t classes);
void crossEntropyLossReference(const args::cross_entropy_loss &a);
void crossEntropyLossBackwardReference(
    const args::cross_entropy_loss_backward &a);

// Sgd.cpp
/// Whether GradScaler skips this step (has_found_inf and found_inf != 0),
/// and the skipped step's outputs: param and the buffer kept.
bool sgdStepSkipped(const args::sgd_update &a);
void sgdKeepState(const args::sgd_update &a);
void sgdUpdateReference(const args::sgd_update &a);
const char *sgdUpdateFast(const args::sgd_update &a);

// LossScale.cpp
void lossScale(const args::loss_scale &a);
/// grad_out and found_inf_out; either may be its input (in place). Returns
/// the loop that ran: "dense" (dense tensors of one layout, where
/// `allowDense`: the fast kernels) or "strided" (the same arithmetic).
const char *unscaleGradient(const args::unscale_gradient &a, bool allowDense);
void updateLossScale(const args::update_loss_scale &a);

// SyncBatchNorm.cpp
/// The training batch norm and its gradient with statistics over the
/// replicas of `comm` (its sync_batch_norm): SyncBatchNorm's semantics.
memfmt_status_t syncBatchNorm(KernelCall &call,
                              const memfmt_communicator_t &comm,
                              const args::native_batch_norm &a);
memfmt_status_t syncBatchNormBackward(KernelCall &call,
                                      const memfmt_communicator_t &comm,
                                      const args::native_batch_norm_backward &a);

// AllReduce.cpp
/// all_reduce through the call's communicator; `staging` holds a non-dense
/// output's elements densely.
memfmt_status_t allReduce(KernelCall &call, const args::all_reduce &a,
                          std::vector<float> &staging);

// Precision.cpp

/// output[i] = input[i] converted from `inputType` to `outputType` (f32,
/// f16 or bf16; round to nearest even), any strides on both sides.
void convertElements(const TensorView &input, DType inputType,
                     const TensorView &output, DType outputType);

/// Runs an f16/bf16 call on the f32 reference kernels: input() replaces a
/// tensor of the call's element type by a dense f32 copy, output() by a
/// dense f32 scratch tensor that finish() rounds back into the original.
class Widener {
public:
  explicit Widener(DType type);
  ~Widener();
  Widener(const Widener &) = delete;
  Widener &operator=(const Widener &) = delete;

  void input(TensorView &view);
  void output(TensorView &view);
  /// Writes every scratch output back, rounded to the element type.
  void finish();

private:
  float *scratch(TensorView &view);

  struct Pending {
    TensorView scratch, target;
  };
  DType type;
  std::vector<std::unique_ptr<float[]>> buffers;
  std::vector<Pending> pending;
};

/// The arguments of a kernel with its element-type tensors widened to f32
/// (one overload per kernel of Kernels.def).
#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  args::NAME widen(Widener &widener, const args::NAME &a);
#include "memfmt/runtime/Kernels.def"

} // namespace memfmt::runtime::cpu

#endif // MEMFMT_RUNTIME_CPU_CPUKERNELS_H
