//===- CudaKernels.h - Launchers of the own CUDA kernels --------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The host entry points of the kernels in Elementwise.cu, LayerNorm.cu,
// Softmax.cu, Transpose.cu, Pool.cu, PoolBackward.cu, Training.cu and Loss.cu.
// Each
// takes a plan made by CudaPlan.h, launches on `stream` and returns the
// launch's error (cudaGetLastError), or cudaSuccess when there is no work.
// All arithmetic is in f32; f16/bf16 results are rounded once. Pointers are
// device pointers to the first element; strides are in elements.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CUDA_CUDAKERNELS_H
#define MEMFMT_RUNTIME_CUDA_CUDAKERNELS_H

#include "CudaPlan.h"

#include "lib/TrainingMath.h"

#include <cuda_runtime_api.h>

namespace memfmt::runtime::cuda {

/// y = max(x, 0) (NaN stays NaN). Operands: y, x.
cudaError_t launchRelu(Elem elem, const StridedPlan<2> &plan, void *y,
                       const void *x, cudaStream_t stream);

/// y = a + b. Operands: y, a, b (broadcast operands have zero strides).
cudaError_t launchAdd(Elem elem, const StridedPlan<3> &plan, void *y,
                      const void *a, const void *b, cudaStream_t stream);

/// y = a op b, `op` a memfmt_binary_op_t (mul, sub, div); operands as add's.
cudaError_t launchBinary(Elem elem, const StridedPlan<3> &plan, void *y,
                         const void *a, const void *b, int64_t op,
                         cudaStream_t stream);

/// y = f(x), `op` a memfmt_eltwise_op_t with its parameters (sigmoid,
/// hardswish, clamp, gelu, ...; ElementwiseMath.h). Operands: y, x.
cudaError_t launchEltwise(Elem elem, const StridedPlan<2> &plan, void *y,
                          const void *x, int64_t op, float alpha, float beta,
                          cudaStream_t stream);

/// y = x converted from `from` to `to` (a plain copy when they are equal).
/// Operands: y, x.
cudaError_t launchConvert(Elem from, Elem to, const StridedPlan<2> &plan,
                          void *y, const void *x, cudaStream_t stream);

/// A per-channel operation on the plan's operands (ChannelOperand order):
///  * batch norm: y = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] +
///    bias[c]; with `scaleOnly`, y = x * weight[c] / sqrt(var[c] + eps)
///    (folding a batch norm into convolution weights);
///  * bias: y = x + bias[c] (bias may be null) + r (when r is not null);
/// then max(., 0) when `relu`. y may be x (in place). x may be null (read as
/// 0) with the Generic pattern only.
struct ChannelArgs {
  StridedPlan<4> plan;
  ChannelPattern pattern = ChannelPattern::Generic;
  /// Elements per thread of the Rows and Planes kernels (1 or the vector
  /// width).
  int vec = 1;
  void *y = nullptr;
  const void *x = nullptr;
  const void *r = nullptr;
  bool batchNorm = false;
  bool scaleOnly = false;
  const void *weight = nullptr, *bias = nullptr, *mean = nullptr,
             *var = nullptr;
  int64_t weightStride = 0, biasStride = 0, meanStride = 0, varStride = 0;
  float eps = 0;
  bool relu = false;
};
cudaError_t launchChannelwise(Elem elem, const ChannelArgs &args,
                              cudaStream_t stream);

/// Layer norm over the last dim (after planLayerNorm): each row becomes
/// (x - mean) / sqrt(var + eps) * weight + bias, statistics in f32. y may be
/// x (in place).
cudaError_t launchLayerNorm(Elem elem, const LayerNormArgs &args,
                            cudaStream_t stream);

/// Softmax along one dim (after planSoftmax): each row becomes
/// exp(x - max) / sum(exp(x - max)), max and sum in f32. y may be x (in
/// place).
cudaError_t launchSoftmax(Elem elem, const SoftmaxArgs &args,
                          cudaStream_t stream);

/// For b in [0, batches): y[b] = x[b]^T, where x[b] is a dense rows x cols
/// matrix at x + b * rows * cols and y[b] a dense cols x rows matrix (the
/// NCHW <-> NHWC conversion: rows = C, cols = H * W or back). Elements of
/// 2, 4 or 8 bytes.
cudaError_t launchTranspose(size_t elementBytes, const void *x, void *y,
                            int64_t batches, int64_t rows, int64_t cols,
                            cudaStream_t stream);

/// Forward pooling (PoolKind Max, Avg, Adaptive): the NHWC kernel (after
/// planPoolNhwc) or the generic one (after planPoolGeneric).
cudaError_t launchPool(Elem elem, const PoolArgs &args, bool nhwc,
                       cudaStream_t stream);

/// Pooling gradients (PoolKind MaxBackward, AdaptiveBackward): each thread
/// gathers one grad_input element (no atomics).
cudaError_t launchPoolBackward(Elem elem, const PoolArgs &args, bool nhwc,
                               cudaStream_t stream);

/// Training.cu: y = value in every element. Operand: y.
cudaError_t launchFill(Elem elem, const StridedPlan<1> &plan, void *y,
                       float value, cudaStream_t stream);

// The training kernels below take their activations and gradients in
// `elem` (f32, or bf16 in a mixed-precision step; parameters, statistics
// and their gradients are f32 either way).

/// grad_input = self <= threshold ? 0 : grad_output (+ addend where addend
/// is not null, added in f32). Operands: grad_input, grad_output, self,
/// addend.
cudaError_t launchThresholdBackward(Elem elem, const StridedPlan<4> &plan,
                                    void *gradInput, const void *gradOutput,
                                    const void *self, const void *addend,
                                    float threshold, cudaStream_t stream);

/// grad_input = eltwiseBackward(op, grad_output, self, alpha, beta)
/// (lib/ElementwiseMath.h). Operands: grad_input, grad_output, self.
cudaError_t launchEltwiseBackward(Elem elem, const StridedPlan<3> &plan,
                                  void *gradInput, const void *gradOutput,
                                  const void *self, int64_t op, float alpha,
                                  float beta, cudaStream_t stream);

/// sum_to_size: output element i (plan `outputs`: output, input
/// offsets) is the sum in double of input over `reduced` (the summed dims'
/// sizes and input strides). One thread per output element.
cudaError_t launchSumToSize(Elem elem, const StridedPlan<2> &outputs,
                            const StridedPlan<1> &reduced, void *output,
                            const void *input, cudaStream_t stream);

/// layer_norm_backward (Kernels.def). `rows` walks the rows (the dims
/// before the last) with operands grad_input, grad_output, input; `d`
/// elements per row, `steps` their strides in the three; `statistics` is
/// device scratch for two doubles per row. One thread per row computes its
/// mean, rstd and (when gradInput is not null) its grad_input; then one
/// thread per column sums grad_weight and grad_bias (each when not null,
/// with its stride) over the rows in plan order.
cudaError_t launchLayerNormBackward(Elem elem, const StridedPlan<3> &rows,
                                    int64_t d, const int64_t (&steps)[3],
                                    void *gradInput, const void *gradOutput,
                                    const void *input, const void *weight,
                                    int64_t weightStride, void *gradWeight,
                                    int64_t gradWeightStride, void *gradBias,
                                    int64_t gradBiasStride, double eps,
                                    double *statistics, cudaStream_t stream);

/// softmax_backward (Kernels.def): `rows` walks the rows along the dim
/// with operands grad_input, grad_output, output; `d` elements per row,
/// `steps` their strides in the three. One thread per row, in double
/// (lib/TrainingMath.h, as the CPU reference).
cudaError_t launchSoftmaxBackward(Elem elem, const StridedPlan<3> &rows,
                                  int64_t d, const int64_t (&steps)[3],
                                  void *gradInput, const void *gradOutput,
                                  const void *output, cudaStream_t stream);

/// The operands of an sgd_update plan.
enum SgdOperand : int {
  kSgdParamOut = 0,
  kSgdParam = 1,
  kSgdGrad = 2,
  kSgdBufferIn = 3,
  kSgdBufferOut = 4
};

/// One torch.optim.SGD step (lib/TrainingMath.h), f32. Without momentum
/// the buffers are neither read nor written (their strides may be the
/// parameter's). `step` (device memory, 0-d i64) may be null: then every
/// step is a later step. Where `foundInf` (device memory, 0-d f32; may be
/// null) is nonzero the step is skipped: the outputs take param and the
/// buffer (the same values again where in place).
struct SgdUpdateArgs {
  StridedPlan<5> plan;
  math::SgdScalars scalars;
  float *paramOut = nullptr, *bufferOut = nullptr;
  const float *param = nullptr, *grad = nullptr, *bufferIn = nullptr;
  const int64_t *step = nullptr;
  const float *foundInf = nullptr;
};
cudaError_t launchSgdUpdate(const SgdUpdateArgs &args, cudaStream_t stream);

/// Training.cu: *output = *input + 1 (a step count; output may be input),
/// or *input where `foundInf` (may be null) is nonzero.
cudaError_t launchIncrement(const int64_t *input, const float *foundInf,
                            int64_t *output, cudaStream_t stream);

/// Training.cu, the loss scaler (lib/TrainingMath.h), all on the stream so
/// that a CUDA graph captures them: *output = the scale (init_scale where
/// *scale is 0); gradOut = grad unscaled by *scale along `plan` (operands
/// grad_out, grad), *foundInfOut = 1 where an element is not finite or
/// *foundInf (may be null) is nonzero, else 0; the next scale and growth
/// tracker. Outputs may be their inputs.
cudaError_t launchLossScale(const float *scale, float *output, double initScale,
                            cudaStream_t stream);
cudaError_t launchUnscaleGradient(const StridedPlan<2> &plan, float *gradOut,
                                  const float *grad, const float *scale,
                                  const float *foundInf, float *foundInfOut,
                                  cudaStream_t stream);
cudaError_t launchUpdateLossScale(const float *scale,
                                  const int64_t *growthTracker,
                                  const float *foundInf, float *scaleOut,
                                  int64_t *growthTrackerOut,
                                  double growthFactor, double backoffFactor,
                                  int64_t growthInterval, cudaStream_t stream);

/// Loss.cu: the mean cross-entropy of logits [rows, classes] and class
/// indices [rows] (an index outside [0, classes) makes its row NaN).
struct LossArgs {
  const float *logits = nullptr;
  int64_t logitStrides[2] = {};
  const int64_t *targets = nullptr;
  int64_t targetStride = 0;
  int64_t rows = 0, classes = 0;
  /// The loss (0-d) of the forward kernel.
  float *loss = nullptr;
  /// The backward kernel's 0-d grad_output and its grad_input [rows,
  /// classes].
  const float *gradOutput = nullptr;
  float *gradInput = nullptr;
  int64_t gradStrides[2] = {};
};
/// `rowLoss` is scratch for `rows` doubles.
cudaError_t launchCrossEntropyLoss(const LossArgs &args, double *rowLoss,
                                   cudaStream_t stream);
cudaError_t launchCrossEntropyLossBackward(const LossArgs &args,
                                           cudaStream_t stream);

} // namespace memfmt::runtime::cuda

#endif // MEMFMT_RUNTIME_CUDA_CUDAKERNELS_H
