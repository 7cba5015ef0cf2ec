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
//    them over the replicas like any gradient, memfmt.all_reduce).
// Every replica must run the same model (the same n). The phases between
// the all-reduces are the reference kernels' (BatchNormReference.cpp): any
// strides, in double.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Scratch.h"

#include "lib/KernelCall.h"

#include <algorithm>
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
  const int64_t channels = a.input.sizes[1];
  const double n =
      double(a.input.numElements() / std::max<int64_t>(channels, 1)) *
      double(comm.size);
  std::vector<double> &mean = scratchBuffer<double, 0>(channels);
  std::vector<double> &var = scratchBuffer<double, 1>(channels);
  channelSums(a.input, mean.data());
  if (memfmt_status_t status =
          sumOverReplicas(call, comm, mean.data(), channels))
    return status;
  for (double &m : mean)
    m /= n;
  squaredDeviationSums(a.input, mean.data(), var.data());
  if (memfmt_status_t status =
          sumOverReplicas(call, comm, var.data(), channels))
    return status;
  for (double &v : var)
    v /= n;
  normalizeChannels(a, mean.data(), var.data());
  writeBatchNormStatistics(a, mean.data(), var.data(), n);
  call.setImpl("synchronised");
  return MEMFMT_STATUS_OK;
}

memfmt_status_t cpu::syncBatchNormBackward(
    KernelCall &call, const memfmt_communicator_t &comm,
    const args::native_batch_norm_backward &a) {
  const int64_t channels = a.input.sizes[1];
  // This replica's grad_weight and grad_bias, as SyncBatchNorm's.
  std::vector<double> &sums = scratchBuffer<double, 0>(2 * channels);
  batchNormGradientSums(a, sums.data());
  call.setImpl("synchronised");
  if (!a.has_grad_input)
    return MEMFMT_STATUS_OK;
  if (memfmt_status_t status =
          sumOverReplicas(call, comm, sums.data(), 2 * channels))
    return status;
  batchNormGradInput(
      a, sums.data(),
      double(a.input.numElements() / std::max<int64_t>(channels, 1)) *
          double(comm.size));
  return MEMFMT_STATUS_OK;
}
