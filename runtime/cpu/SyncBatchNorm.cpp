//===- SyncBatchNorm.cpp - Batch norm over the replicas' whole batch ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// native_batch_norm and native_batch_norm_backward when the context's
// communicator asks for synchronised statistics (`sync_batch_norm`, set by
// memfmt-train --sync-batch-norm), with torch.nn.SyncBatchNorm's semantics:
// the statistics are those of the global batch, the concatenation of every
// replica's batch, so R replicas at batch N compute what one process at
// batch R * N computes.
//  * Forward: each channel's local sum is summed over the replicas (one
//    all-reduce of C doubles) into the global mean, then the local sums of
//    squared deviations from it (a second all-reduce) into the biased
//    variance, both over n = R * (N * H * W) values; the output is
//    normalised with them, and the running variance is unbiased by
//    n / (n - 1) of the global n.
//  * Backward: the local sums of grad_out and grad_out * xhat are summed
//    over the replicas (one all-reduce of 2C doubles) for grad_input, whose
//    means are over the global n; grad_weight and grad_bias stay this
//    replica's sums, as SyncBatchNorm leaves them (the step then averages
//    them over the replicas like any gradient, memfmt.all_reduce_mean).
// Every replica must run the same model (the same n). The loops take any
// strides (ChannelLoops.h, shared with the reference kernels) and reduce
// in double.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "ChannelLoops.h"
#include "Scratch.h"

#include "lib/KernelCall.h"

#include <cmath>
#include <string>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;

namespace {

/// Sums `count` doubles over the replicas in place; a failure is recorded
/// on `call`.
memfmt_status_t sumOverReplicas(KernelCall &call,
                                const memfmt_communicator_t &comm,
                                double *data, int64_t count) {
  char error[512] = "";
  if (count == 0 ||
      comm.all_reduce_sum_f64(comm.user, data, count, error, sizeof error) == 0)
    return MEMFMT_STATUS_OK;
  return call.fail(MEMFMT_STATUS_BACKEND_ERROR,
                   "the synchronised batch statistics over " +
                       std::to_string(comm.size) +
                       " replicas failed: " + error);
}

} // namespace

memfmt_status_t cpu::syncBatchNorm(KernelCall &call,
                                   const memfmt_communicator_t &comm,
                                   const args::native_batch_norm &a) {
  const TensorView &in = a.input, &out = a.output;
  const int64_t channels = in.sizes[1];
  const ChannelSlice slice(in);
  const double n = double(in.numElements() / std::max<int64_t>(channels, 1)) *
                   double(comm.size);
  std::vector<double> &mean = scratchBuffer<double, 0>(channels);
  std::vector<double> &var = scratchBuffer<double, 1>(channels);
  const float *x = in.as<float>();
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c)
      mean[c] = channelSum(slice, in, c, [](double v) { return v; });
  });
  if (memfmt_status_t status =
          sumOverReplicas(call, comm, mean.data(), channels))
    return status;
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      mean[c] /= n;
      const double m = mean[c];
      var[c] = channelSum(slice, in, c, [m](double v) {
        return (v - m) * (v - m);
      });
    }
  });
  if (memfmt_status_t status =
          sumOverReplicas(call, comm, var.data(), channels))
    return status;
  float *y = out.as<float>();
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      var[c] /= n;
      const double m = mean[c];
      const double scale = channelValue(a.weight, c) / std::sqrt(var[c] + a.eps);
      const double shift = channelValue(a.bias, c);
      const float *xc = x + c * in.strides[1];
      float *yc = y + c * out.strides[1];
      forChannel<2>(slice, {out.strides, in.strides},
                    [&](const OperandOffsets<2> &o, int64_t count,
                        const OperandOffsets<2> &step) {
                      for (int64_t i = 0; i < count; ++i)
                        yc[o[0] + i * step[0]] = static_cast<float>(
                            (xc[o[1] + i * step[1]] - m) * scale + shift);
                    });
    }
  });
  writeBatchNormStatistics(a, mean.data(), var.data(), n);
  call.setImpl("synchronised");
  return MEMFMT_STATUS_OK;
}

memfmt_status_t cpu::syncBatchNormBackward(
    KernelCall &call, const memfmt_communicator_t &comm,
    const args::native_batch_norm_backward &a) {
  const TensorView &in = a.input, &go = a.grad_out, &gi = a.grad_input;
  const int64_t channels = in.sizes[1];
  const ChannelSlice slice(in);
  const double n = double(in.numElements() / std::max<int64_t>(channels, 1)) *
                   double(comm.size);
  // sums[c] = sum(grad_out), sums[channels + c] = sum(grad_out * xhat).
  std::vector<double> &sums = scratchBuffer<double, 0>(2 * channels);
  const float *x = in.as<float>(), *g = go.as<float>();
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      const double mean = channelValue(a.save_mean, c);
      const double invstd = channelValue(a.save_invstd, c);
      const float *xc = x + c * in.strides[1], *gc = g + c * go.strides[1];
      double sumGrad = 0, sumGradXhat = 0;
      forChannel<2>(slice, {in.strides, go.strides},
                    [&](const OperandOffsets<2> &o, int64_t count,
                        const OperandOffsets<2> &step) {
                      for (int64_t i = 0; i < count; ++i) {
                        double d = gc[o[1] + i * step[1]];
                        sumGrad += d;
                        sumGradXhat +=
                            d * (xc[o[0] + i * step[0]] - mean) * invstd;
                      }
                    });
      // This replica's parameter gradients, as SyncBatchNorm's.
      if (a.has_grad_weight)
        a.grad_weight.as<float>()[c * a.grad_weight.strides[0]] =
            static_cast<float>(sumGradXhat);
      if (a.has_grad_bias)
        a.grad_bias.as<float>()[c * a.grad_bias.strides[0]] =
            static_cast<float>(sumGrad);
      sums[c] = sumGrad;
      sums[channels + c] = sumGradXhat;
    }
  });
  call.setImpl("synchronised");
  if (!a.has_grad_input)
    return MEMFMT_STATUS_OK;
  if (memfmt_status_t status =
          sumOverReplicas(call, comm, sums.data(), 2 * channels))
    return status;
  parallelFor(channels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t c = begin; c < end; ++c) {
      const double mean = channelValue(a.save_mean, c);
      const double invstd = channelValue(a.save_invstd, c);
      const double scale = channelValue(a.weight, c) * invstd;
      const double meanGrad = sums[c] / n;
      const double meanGradXhat = sums[channels + c] / n;
      const float *xc = x + c * in.strides[1], *gc = g + c * go.strides[1];
      float *out = gi.as<float>() + c * gi.strides[1];
      forChannel<3>(slice, {gi.strides, in.strides, go.strides},
                    [&](const OperandOffsets<3> &o, int64_t count,
                        const OperandOffsets<3> &step) {
                      for (int64_t i = 0; i < count; ++i) {
                        double xhat = (xc[o[1] + i * step[1]] - mean) * invstd;
                        out[o[0] + i * step[0]] = static_cast<float>(
                            scale * (gc[o[2] + i * step[2]] - meanGrad -
                                     xhat * meanGradXhat));
                      }
                    });
    }
  });
  return MEMFMT_STATUS_OK;
}
