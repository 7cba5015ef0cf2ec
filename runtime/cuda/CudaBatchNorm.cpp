//===- CudaBatchNorm.cpp - Batch norm on cuDNN ----------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Batch normalization through cuDNN's spatial batch norm, on 4-D tensors
// packed NCHW or NHWC (cuDNN reads the layout from the descriptor, so a
// channels-last model normalizes its NHWC activations where they lie):
//  * inference (batch_norm), f32 only with MEMFMT_CUDA_BATCH_NORM=cudnn
//    (the own per-channel kernel is the default; CudaBackend.cpp);
//  * training (native_batch_norm): cudnnBatchNormalizationForwardTraining
//    computes the batch statistics, the output, save_mean and save_invstd
//    (1 / sqrt(var + eps), ATen's save_invstd) and updates the running
//    statistics with the unbiased variance, as torch; the running
//    statistics are copied to their outputs first when those are other
//    buffers, since cuDNN updates them in place;
//  * its gradient (native_batch_norm_backward):
//    cudnnBatchNormalizationBackward from the saved statistics; gradients
//    whose flag is off go to scratch memory, so they are not written.
// Training takes f32, f16 or bf16 activations (a mixed-precision step) with the
// weight, bias and statistics in f32, as cuDNN's derived per-channel
// descriptor wants them.
// Other layouts and ranks, and synchronised batch norm (a communicator
// with sync_batch_norm), are reported as not supported on CUDA yet.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include <initializer_list>
#include <string>
#include <utility>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cuda;

namespace {

/// cuDNN's descriptors of one batch norm: the data tensors and the
/// per-channel parameters.
struct BatchNormDescs {
  cudnnTensorDescriptor_t data = nullptr, params = nullptr;
  ~BatchNormDescs() {
    if (data)
      cudnnDestroyTensorDescriptor(data);
    if (params)
      cudnnDestroyTensorDescriptor(params);
  }
};

/// The format in which every tensor of `tensors` (one 4-D shape) is packed,
/// NCHW first where both fit; false if there is none.
bool packedFormat(std::initializer_list<const TensorView *> tensors,
                  ConvFormat &format) {
  for (ConvFormat f : {ConvFormat::Nchw, ConvFormat::Nhwc}) {
    bool all = true;
    for (const TensorView *t : tensors)
      all = all && t->rank == 4 && isPacked(f, t->sizes, t->strides);
    if (all) {
      format = f;
      return true;
    }
  }
  return false;
}

/// True if every per-channel tensor is one dense run.
bool unitStride(std::initializer_list<const TensorView *> params) {
  for (const TensorView *p : params)
    if (p->sizes[0] > 1 && p->strides[0] != 1)
      return false;
  return true;
}

/// The descriptors of a batch norm of `x` (elements `elem`) packed in
/// `format`; cuDNN derives the per-channel descriptor (f32 for f32, f16 and
/// bf16 data).
template <typename Sink>
memfmt_status_t describeBatchNorm(Sink &call, const TensorView &x, Elem elem,
                                  ConvFormat format, BatchNormDescs &d) {
  const int64_t *s = x.sizes;
  for (int i = 0; i < 4; ++i)
    if (s[i] > INT32_MAX)
      return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                       "cuDNN takes dimensions below 2^31; got " +
                           formatShape(x));
  MEMFMT_CUDNN_TRY(call, cudnnCreateTensorDescriptor(&d.data));
  MEMFMT_CUDNN_TRY(call, cudnnCreateTensorDescriptor(&d.params));
  MEMFMT_CUDNN_TRY(
      call,
      cudnnSetTensor4dDescriptor(
          d.data,
          format == ConvFormat::Nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
          cudnnType(elem), int(s[0]), int(s[1]), int(s[2]), int(s[3])));
  MEMFMT_CUDNN_TRY(call, cudnnDeriveBNTensorDescriptor(
                             d.params, d.data, CUDNN_BATCHNORM_SPATIAL));
  return MEMFMT_STATUS_OK;
}

const char *cudnnImpl(ConvFormat format) {
  return format == ConvFormat::Nhwc ? "cudnn_nhwc" : "cudnn_nchw";
}

/// Why a training batch norm cannot run on CUDA here, or "".
std::string trainingUnsupported(const KernelCall &call, bool packed,
                                bool unitParams, const TensorView &input) {
  const memfmt_communicator_t *comm = call.communicator();
  if (comm && comm->size > 1 && comm->sync_batch_norm)
    return "synchronised batch norm (sync_batch_norm) is not implemented on "
           "CUDA yet";
  if (!packed)
    return "needs 4-D tensors packed NCHW or NHWC on CUDA (cuDNN); got " +
           describe(input);
  if (!unitParams)
    return "needs dense per-channel tensors on CUDA (cuDNN)";
  return "";
}

} // namespace

/// cuDNN's inference batch norm (MEMFMT_CUDA_BATCH_NORM=cudnn) for f32 4-D
/// tensors that are both packed NCHW or both packed NHWC, with unit-stride
/// parameters; `done` stays false for anything else (the own kernel runs).
memfmt_status_t CudaBackend::batchNormCudnn(KernelCall &call,
                                            const args::batch_norm &a,
                                            bool &done) {
  ConvFormat format;
  if (call.dtype() != DType::f32 ||
      !packedFormat({&a.input, &a.output}, format) ||
      !unitStride({&a.weight, &a.bias, &a.running_mean, &a.running_var}))
    return MEMFMT_STATUS_OK;
  BatchNormDescs d;
  if (memfmt_status_t s =
          describeBatchNorm(call, a.input, Elem::F32, format, d))
    return s;
  float one = 1.0f, zero = 0.0f;
  MEMFMT_CUDNN_TRY(call, cudnnBatchNormalizationForwardInference(
                             cudnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                             d.data, a.input.data, d.data, a.output.data,
                             d.params, a.weight.data, a.bias.data,
                             a.running_mean.data, a.running_var.data, a.eps));
  call.setImpl(cudnnImpl(format));
  done = true;
  return MEMFMT_STATUS_OK;
}

/// Why the fused training batch norm is refused: cuDNN fuses the add and
/// activation (cudnnBatchNormalizationForwardTrainingEx) only in half
/// precision, and memfmt-compile --train fuses for the CPU only.
static const char *const kNoFusedTrainingBatchNorm =
    "training batch norm with a fused residual or relu (memfmt-fuse-training) "
    "runs on the CPU only; compile the CUDA training step with --target cuda, "
    "which does not fuse";

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::native_batch_norm &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  if (a.has_residual || a.relu)
    return call.fail(MEMFMT_STATUS_UNSUPPORTED, kNoFusedTrainingBatchNorm);
  ConvFormat format = ConvFormat::Nchw;
  bool packed = packedFormat({&a.input, &a.output}, format);
  std::string why = trainingUnsupported(
      call, packed,
      unitStride({&a.weight, &a.bias, &a.running_mean, &a.running_var,
                  &a.save_mean, &a.save_invstd, &a.running_mean_out,
                  &a.running_var_out}),
      a.input);
  if (!why.empty())
    return call.fail(MEMFMT_STATUS_UNSUPPORTED, why);
  // cuDNN updates the running statistics in place: start the outputs from
  // the inputs.
  const size_t channelBytes = static_cast<size_t>(a.input.sizes[1]) * 4;
  for (auto [from, to] : {std::pair{&a.running_mean, &a.running_mean_out},
                          std::pair{&a.running_var, &a.running_var_out}})
    if (from->data != to->data)
      MEMFMT_CUDA_TRY(call, cudaMemcpyAsync(to->data, from->data, channelBytes,
                                            cudaMemcpyDeviceToDevice, stream));
  BatchNormDescs d;
  if (memfmt_status_t s =
          describeBatchNorm(call, a.input, elemOf(call.dtype()), format, d))
    return s;
  float one = 1.0f, zero = 0.0f;
  MEMFMT_CUDNN_TRY(call, cudnnBatchNormalizationForwardTraining(
                             cudnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                             d.data, a.input.data, d.data, a.output.data,
                             d.params, a.weight.data, a.bias.data, a.momentum,
                             a.running_mean_out.data, a.running_var_out.data,
                             a.eps, a.save_mean.data, a.save_invstd.data));
  call.setImpl(cudnnImpl(format));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::native_batch_norm_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  if (a.relu)
    return call.fail(MEMFMT_STATUS_UNSUPPORTED, kNoFusedTrainingBatchNorm);
  ConvFormat format = ConvFormat::Nchw;
  bool packed =
      a.has_grad_input
          ? packedFormat({&a.input, &a.grad_out, &a.grad_input}, format)
          : packedFormat({&a.input, &a.grad_out}, format);
  std::string why =
      trainingUnsupported(call, packed,
                          unitStride({&a.weight, &a.save_mean, &a.save_invstd,
                                      &a.grad_weight, &a.grad_bias}),
                          a.input);
  if (!why.empty())
    return call.fail(MEMFMT_STATUS_UNSUPPORTED, why);
  // cuDNN writes all three gradients: the ones that are off go to scratch.
  const Elem elem = elemOf(call.dtype());
  void *gradInput = a.grad_input.data;
  if (!a.has_grad_input)
    if (memfmt_status_t s =
            scratch(call, kConvOutput,
                    static_cast<size_t>(a.input.numElements()) * elemSize(elem),
                    &gradInput))
      return s;
  void *params = nullptr;
  const size_t channels = static_cast<size_t>(a.input.sizes[1]);
  if (!a.has_grad_weight || !a.has_grad_bias)
    if (memfmt_status_t s =
            scratch(call, kBatchNormParams, 2 * channels * 4, &params))
      return s;
  void *gradWeight = a.has_grad_weight ? a.grad_weight.data : params;
  void *gradBias = a.has_grad_bias ? a.grad_bias.data
                                   : static_cast<float *>(params) + channels;
  BatchNormDescs d;
  if (memfmt_status_t s = describeBatchNorm(call, a.input, elem, format, d))
    return s;
  float one = 1.0f, zero = 0.0f;
  // With the saved statistics given, cuDNN does not use epsilon (it must
  // only be valid).
  MEMFMT_CUDNN_TRY(
      call, cudnnBatchNormalizationBackward(
                cudnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero,
                d.data, a.input.data, d.data, a.grad_out.data, d.data,
                gradInput, d.params, a.weight.data, gradWeight, gradBias,
                CUDNN_BN_MIN_EPSILON, a.save_mean.data, a.save_invstd.data));
  call.setImpl(cudnnImpl(format));
  return MEMFMT_STATUS_OK;
}
