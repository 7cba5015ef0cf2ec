//===- CudaTraining.cpp - Training kernels and all_reduce on CUDA ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The host side of the CUDA backend's training kernels that are memfmt's
// own: fill, threshold_backward, eltwise_backward, sum_to_size,
// layer_norm_backward, softmax_backward, sgd_update and increment
// (Training.cu), the cross-entropy loss and its gradient (Loss.cu), and
// the data-parallel all_reduce with the NCCL group it runs on (Nccl.h).
// Each plans its launch and enqueues it on the context's stream. The cuDNN and
// cuBLAS gradients live beside their forward kernels (CudaConvBackward.cpp,
// CudaBatchNorm.cpp, CudaLinear.cpp), the pooling gradients with pooling
// (CudaBackend.cpp).
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "CudaKernels.h"

#include <algorithm>
#include <string>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cuda;

//===----------------------------------------------------------------------===//
// Training: the elementwise kernels (Training.cu)
//===----------------------------------------------------------------------===//

memfmt_status_t CudaBackend::run(KernelCall &call, const args::fill &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const int64_t *strides[1] = {a.output.strides};
  StridedPlan<1> plan =
      planStrided<1>(static_cast<int>(a.output.rank), a.output.sizes, strides);
  call.setImpl(implOf(plan));
  MEMFMT_LAUNCH_TRY(call, "the fill kernel",
                    launchFill(elemOf(call.dtype()), plan, a.output.data,
                               static_cast<float>(a.value), stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::threshold_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const TensorView &gi = a.grad_input;
  // Without an addend its plan column repeats grad_output's, unread.
  const TensorView &addend = a.has_addend ? a.addend : a.grad_output;
  const int64_t *strides[4] = {gi.strides, a.grad_output.strides,
                               a.self.strides, addend.strides};
  StridedPlan<4> plan =
      planStrided<4>(static_cast<int>(gi.rank), gi.sizes, strides);
  call.setImpl(implOf(plan));
  MEMFMT_LAUNCH_TRY(call, "the threshold_backward kernel",
                    launchThresholdBackward(
                        elemOf(call.dtype()), plan, gi.data, a.grad_output.data,
                        a.self.data, a.has_addend ? a.addend.data : nullptr,
                        static_cast<float>(a.threshold), stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::eltwise_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const TensorView &gi = a.grad_input;
  const int64_t *strides[3] = {gi.strides, a.grad_output.strides,
                               a.self.strides};
  StridedPlan<3> plan =
      planStrided<3>(static_cast<int>(gi.rank), gi.sizes, strides);
  call.setImpl(implOf(plan));
  MEMFMT_LAUNCH_TRY(call, "the eltwise_backward kernel",
                    launchEltwiseBackward(elemOf(call.dtype()), plan, gi.data,
                                          a.grad_output.data, a.self.data, a.op,
                                          static_cast<float>(a.alpha),
                                          static_cast<float>(a.beta), stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::sum_to_size &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const TensorView &x = a.input, &y = a.output;
  // The output's index space with the input strides of its kept dims (0
  // where it has size 1), and the summed dims of the input.
  const int64_t lead = x.rank - y.rank;
  int64_t keptStrides[kMaxRank] = {};
  int64_t reducedSizes[kMaxRank] = {}, reducedStrides[kMaxRank] = {};
  int reducedRank = 0;
  for (int64_t d = 0; d < x.rank; ++d) {
    bool summed = d < lead || (y.sizes[d - lead] == 1 && x.sizes[d] != 1);
    if (d >= lead)
      keptStrides[d - lead] = summed ? 0 : x.strides[d];
    if (summed) {
      reducedSizes[reducedRank] = x.sizes[d];
      reducedStrides[reducedRank++] = x.strides[d];
    }
  }
  const int64_t *outputStrides[2] = {y.strides, keptStrides};
  StridedPlan<2> outputs =
      planStrided<2>(static_cast<int>(y.rank), y.sizes, outputStrides);
  const int64_t *summedStrides[1] = {reducedStrides};
  StridedPlan<1> reduced =
      planStrided<1>(reducedRank, reducedSizes, summedStrides);
  call.setImpl("per_output");
  MEMFMT_LAUNCH_TRY(call, "the sum_to_size kernel",
                    launchSumToSize(elemOf(call.dtype()), outputs, reduced,
                                    y.data, x.data, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::layer_norm_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const TensorView &x = a.input, &go = a.grad_output;
  const TensorView &gi = a.has_grad_input ? a.grad_input : go;
  const int64_t last = x.rank - 1, d = x.sizes[last];
  // The rows' index space: every dim but the last (size 1 there).
  int64_t rowSizes[kMaxRank];
  std::copy(x.sizes, x.sizes + x.rank, rowSizes);
  rowSizes[last] = 1;
  const int64_t *strides[3] = {gi.strides, go.strides, x.strides};
  StridedPlan<3> rows =
      planStrided<3>(static_cast<int>(x.rank), rowSizes, strides);
  const int64_t steps[3] = {gi.strides[last], go.strides[last],
                            x.strides[last]};
  void *statistics = nullptr;
  if (memfmt_status_t s =
          scratch(call, kLayerNormRows,
                  std::max<size_t>(1, 2 * sizeof(double) * rows.total),
                  &statistics))
    return s;
  call.setImpl("per_row");
  MEMFMT_LAUNCH_TRY(
      call, "the layer_norm_backward kernels",
      launchLayerNormBackward(
          elemOf(call.dtype()), rows, d, steps,
          a.has_grad_input ? a.grad_input.data : nullptr, go.data, x.data,
          a.has_weight ? a.weight.data : nullptr, a.weight.strides[0],
          a.has_grad_weight ? a.grad_weight.data : nullptr,
          a.grad_weight.strides[0],
          a.has_grad_bias ? a.grad_bias.data : nullptr, a.grad_bias.strides[0],
          a.eps, static_cast<double *>(statistics), stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::softmax_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const TensorView &y = a.output, &go = a.grad_output, &gi = a.grad_input;
  // The rows' index space: every dim but `dim` (size 1 there).
  int64_t rowSizes[kMaxRank];
  std::copy(y.sizes, y.sizes + y.rank, rowSizes);
  rowSizes[a.dim] = 1;
  const int64_t *strides[3] = {gi.strides, go.strides, y.strides};
  StridedPlan<3> rows =
      planStrided<3>(static_cast<int>(y.rank), rowSizes, strides);
  const int64_t steps[3] = {gi.strides[a.dim], go.strides[a.dim],
                            y.strides[a.dim]};
  call.setImpl("per_row");
  MEMFMT_LAUNCH_TRY(call, "the softmax_backward kernel",
                    launchSoftmaxBackward(elemOf(call.dtype()), rows,
                                          y.sizes[a.dim], steps, gi.data,
                                          go.data, y.data, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::sgd_update &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const TensorView &out = a.param_out;
  // Without momentum the buffers are not used; the parameter's views stand
  // in for them in the plan (as on the CPU).
  const bool momentum = a.momentum != 0;
  const TensorView &bufferIn = momentum ? a.momentum_buffer : a.param;
  const TensorView &bufferOut = momentum ? a.momentum_buffer_out : out;
  SgdUpdateArgs args;
  const int64_t *strides[5] = {};
  strides[kSgdParamOut] = out.strides;
  strides[kSgdParam] = a.param.strides;
  strides[kSgdGrad] = a.grad.strides;
  strides[kSgdBufferIn] = bufferIn.strides;
  strides[kSgdBufferOut] = bufferOut.strides;
  args.plan = planStrided<5>(static_cast<int>(out.rank), out.sizes, strides);
  args.scalars = math::SgdScalars::of(a.lr, a.momentum, a.dampening,
                                      a.weight_decay, a.nesterov != 0);
  args.paramOut = out.as<float>();
  args.param = a.param.as<float>();
  args.grad = a.grad.as<float>();
  args.bufferIn = bufferIn.as<float>();
  args.bufferOut = bufferOut.as<float>();
  args.step = a.has_step ? a.step.as<int64_t>() : nullptr;
  args.foundInf = a.has_found_inf ? a.found_inf.as<float>() : nullptr;
  call.setImpl(implOf(args.plan));
  MEMFMT_LAUNCH_TRY(call, "the sgd_update kernel",
                    launchSgdUpdate(args, stream));
  return MEMFMT_STATUS_OK;
}

// cross_entropy_loss and its gradient (Loss.cu).
static LossArgs lossArgs(const TensorView &logits, const TensorView &target) {
  LossArgs args;
  args.logits = logits.as<float>();
  args.logitStrides[0] = logits.strides[0];
  args.logitStrides[1] = logits.strides[1];
  args.targets = target.as<int64_t>();
  args.targetStride = target.strides[0];
  args.rows = logits.sizes[0];
  args.classes = logits.sizes[1];
  return args;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::cross_entropy_loss &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  LossArgs args = lossArgs(a.self, a.target);
  args.loss = a.output.as<float>();
  void *rows = nullptr;
  if (memfmt_status_t s = scratch(
          call, kLossRows,
          static_cast<size_t>(std::max<int64_t>(args.rows, 1)) * sizeof(double),
          &rows))
    return s;
  call.setImpl("rows");
  MEMFMT_LAUNCH_TRY(
      call, "the cross-entropy kernels",
      launchCrossEntropyLoss(args, static_cast<double *>(rows), stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::cross_entropy_loss_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  LossArgs args = lossArgs(a.self, a.target);
  args.gradOutput = a.grad_output.as<float>();
  args.gradInput = a.grad_input.as<float>();
  args.gradStrides[0] = a.grad_input.strides[0];
  args.gradStrides[1] = a.grad_input.strides[1];
  call.setImpl("rows");
  MEMFMT_LAUNCH_TRY(call, "the cross-entropy gradient kernel",
                    launchCrossEntropyLossBackward(args, stream));
  return MEMFMT_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// Data parallelism
//===----------------------------------------------------------------------===//

memfmt_status_t
CudaBackend::setCommunicator(const memfmt_communicator_t *communicator,
                             std::string &error) {
  if (capturing) {
    error = "cannot join or leave replicas during graph capture";
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  }
  if (stream)
    cudaStreamSynchronize(stream);
  nccl.reset();
  if (!communicator)
    return MEMFMT_STATUS_OK;
  memfmt_status_t status = MEMFMT_STATUS_OK;
  nccl = NcclGroup::create(*communicator, device, status, error);
  return status;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::increment &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  call.setImpl("one_thread");
  MEMFMT_LAUNCH_TRY(
      call, "the increment kernel",
      launchIncrement(a.input.as<int64_t>(),
                      a.has_found_inf ? a.found_inf.as<float>() : nullptr,
                      a.output.as<int64_t>(), stream));
  return MEMFMT_STATUS_OK;
}

// The loss scaler (Training.cu): device-side, so a captured step reads the
// flag and the scale of the run it replays.
memfmt_status_t CudaBackend::run(KernelCall &call, const args::loss_scale &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  call.setImpl("one_thread");
  MEMFMT_LAUNCH_TRY(call, "the loss_scale kernel",
                    launchLossScale(a.scale.as<float>(), a.output.as<float>(),
                                    a.init_scale, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::unscale_gradient &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const TensorView &out = a.grad_out;
  const int64_t *strides[2] = {out.strides, a.grad.strides};
  StridedPlan<2> plan =
      planStrided<2>(static_cast<int>(out.rank), out.sizes, strides);
  call.setImpl(implOf(plan));
  MEMFMT_LAUNCH_TRY(
      call, "the unscale_gradient kernels",
      launchUnscaleGradient(plan, out.as<float>(), a.grad.as<float>(),
                            a.scale.as<float>(),
                            a.has_found_inf ? a.found_inf.as<float>() : nullptr,
                            a.found_inf_out.as<float>(), stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::update_loss_scale &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  call.setImpl("one_thread");
  MEMFMT_LAUNCH_TRY(
      call, "the update_loss_scale kernel",
      launchUpdateLossScale(a.scale.as<float>(), a.growth_tracker.as<int64_t>(),
                            a.found_inf.as<float>(), a.scale_out.as<float>(),
                            a.growth_tracker_out.as<int64_t>(), a.growth_factor,
                            a.backoff_factor, a.growth_interval, stream));
  return MEMFMT_STATUS_OK;
}

// all_reduce: the output takes the input's values, then NCCL sums or
// averages it over the replicas in place on the stream. Without a
// communicator the kernel is the copy alone; with one, NCCL runs even for a
// single replica (the identity), so one GPU exercises the whole path. The
// memory plan's buffers are dense, which NCCL's one array needs.
memfmt_status_t CudaBackend::run(KernelCall &call, const args::all_reduce &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const TensorView &out = a.output;
  const char *impl = "single_replica";
  if (!a.input.sameViewAs(out))
    if (memfmt_status_t s = copyTensor(call, Elem::F32, a.input, out, &impl))
      return s;
  if (!nccl) {
    call.setImpl(impl);
    return MEMFMT_STATUS_OK;
  }
  if (!out.isDense())
    return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                     "needs a dense output on CUDA (NCCL reduces one "
                     "array); got strides " +
                         formatStrides(out));
  std::string error;
  if (out.numElements() > 0 &&
      !nccl->allReduce(out.as<float>(), out.numElements(), a.average != 0,
                       stream, error))
    return call.fail(MEMFMT_STATUS_BACKEND_ERROR, "the all-reduce (" +
                                                      nccl->description() +
                                                      ") failed: " + error);
  call.setImpl("nccl");
  return MEMFMT_STATUS_OK;
}
