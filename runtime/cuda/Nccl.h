//===- Nccl.h - NCCL groups of CUDA replicas --------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA backend's collectives: an NcclGroup is one NCCL communicator over
// the replicas of a memfmt_communicator_t, made when a CUDA context joins
// them (memfmt_context_set_communicator). Replica 0 draws NCCL's unique id
// and the communicator's host `broadcast` gives it to the others (with one
// replica nothing is sent), then every replica joins with ncclCommInitRank
// on the context's device. `all_reduce` kernels then sum or average device
// memory in place with ncclAllReduce on the context's stream (so a CUDA
// graph captures them too).
//
// NCCL is loaded when the first group is made (dlopen of libnccl.so.2),
// not linked: the runtime runs inference where NCCL is absent, and a
// data-parallel CUDA context reports that NCCL could not be loaded. The
// runtime needs NCCL 2.10 or later (ncclAvg). Built without nccl.h, making
// a group fails with that reason.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CUDA_NCCL_H
#define MEMFMT_RUNTIME_CUDA_NCCL_H

#include "memfmt/runtime/memfmt_runtime.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

namespace memfmt::runtime::cuda {

class NcclGroup {
public:
  /// Joins the replicas of `communicator` on CUDA device `device`; a
  /// collective call (every replica makes it). Returns null and sets
  /// `status` and `error` on failure: BACKEND_ERROR when NCCL cannot be
  /// loaded or fails, INVALID_ARGUMENT for several replicas without a
  /// `broadcast`.
  static std::unique_ptr<NcclGroup>
  create(const memfmt_communicator_t &communicator, int device,
         memfmt_status_t &status, std::string &error);
  ~NcclGroup();
  NcclGroup(const NcclGroup &) = delete;
  NcclGroup &operator=(const NcclGroup &) = delete;

  /// Sums (or, with `average`, averages) `count` f32 at `data` (device
  /// memory) over the replicas, in place, on `stream`. Returns false and
  /// sets `error` when NCCL refuses the call.
  bool allReduce(float *data, int64_t count, bool average, cudaStream_t stream,
                 std::string &error);

  /// "NCCL 2.28.9, 2 replicas".
  const std::string &description() const { return text; }

private:
  NcclGroup() = default;
  void *comm = nullptr; // ncclComm_t
  std::string text;
};

} // namespace memfmt::runtime::cuda

#endif // MEMFMT_RUNTIME_CUDA_NCCL_H
