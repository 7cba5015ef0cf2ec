//===- AllReduce.cpp - A tensor reduced over data-parallel replicas -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// all_reduce on host memory: the output takes the input's values (unless
// it is the input), the context's communicator sums them over the replicas
// in place, and with `average` each element is divided by the number of
// replicas (as PyTorch's DistributedDataParallel averages gradients). A dense output
// (the memory plan's buffers are) is reduced where it lies, since every
// replica runs the same compiled model and so lays it out the same way; any
// other output goes through a dense buffer of the backend. Without a
// communicator, or with one replica, the kernel is a copy or nothing.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "lib/KernelCall.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;

memfmt_status_t cpu::allReduce(KernelCall &call, const args::all_reduce &a,
                               std::vector<float> &staging) {
  const TensorView &out = a.output;
  if (!a.input.sameViewAs(out))
    copyReference(a.input, out);
  const memfmt_communicator_t *comm = call.communicator();
  if (!comm || comm->size == 1) {
    call.setImpl("single_replica");
    return MEMFMT_STATUS_OK;
  }
  const int64_t count = out.numElements();
  // The elements as one dense array (a dense view's elements are the
  // numElements() slots starting at its data): the output's own, or a copy.
  TensorView dense = out;
  if (!out.isDense()) {
    staging.resize(static_cast<size_t>(count));
    dense.data = staging.data();
    std::vector<int64_t> strides = layout::contiguousStrides(out.shape());
    std::copy(strides.begin(), strides.end(), dense.strides);
    copyReference(out, dense);
  }
  float *data = dense.as<float>();
  char error[512] = "";
  if (count > 0 &&
      comm->all_reduce_sum_f32(comm->user, data, count, error, sizeof error))
    return call.fail(MEMFMT_STATUS_BACKEND_ERROR,
                     std::string("the all-reduce over ") +
                         std::to_string(comm->size) +
                         " replicas failed: " + error);
  if (a.average) {
    const float replicas = static_cast<float>(comm->size);
    for (int64_t i = 0; i < count; ++i)
      data[i] /= replicas;
  }
  if (dense.data != out.data)
    copyReference(dense, out);
  call.setImpl("communicator");
  return MEMFMT_STATUS_OK;
}
