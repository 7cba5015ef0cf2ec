//===- Distributed.h - memfmt-train's replicas (Open MPI) -------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Data-parallel training across processes: when memfmt-train is started by
// Open MPI's launcher (`mpirun -np N memfmt-train DIR ...`, on one machine
// or across a hostfile's), each process is one replica. Replicas wraps
// MPI_COMM_WORLD: the runtime's memfmt_communicator_t (the gradient
// all-reduce of every step, memfmt.all_reduce, and with
// --sync-batch-norm the batch statistics of every batch norm), the
// broadcast of the
// model state from rank 0 at start, and the mean of a step's loss. Every
// collective waits at most the timeout (--collective-timeout): a replica
// that stopped answering ends the job with an error instead of a hang
// (MPI_Abort ends the other ranks; a rank that died is reported by mpirun
// itself). Started any other way, memfmt-train is the only replica and no
// MPI function is called.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_TRAIN_DISTRIBUTED_H
#define MEMFMT_TOOLS_MEMFMT_TRAIN_DISTRIBUTED_H

#include "memfmt/runtime/memfmt_runtime.h"
#include "memfmt/runtime/model.h"

#include <cstdint>
#include <string>

namespace memfmt::train {

class Replicas {
public:
  /// Joins the replicas of the launcher that started this process (MPI_Init
  /// under mpirun), else makes this process the only one. \p Timeout:
  /// seconds each collective may wait.
  Replicas(int &Argc, char **&Argv, double Timeout);
  ~Replicas();
  Replicas(const Replicas &) = delete;
  Replicas &operator=(const Replicas &) = delete;

  int64_t rank() const { return Rank; }
  int64_t size() const { return Size; }
  /// Where the replicas run ("3 processes on 1 host (Open MPI 4.1.4)"), or
  /// "" for a single replica.
  const std::string &description() const { return Description; }

  /// Makes \p Ctx this replica of the group (its all-reduces go here);
  /// with \p SyncBatchNorm its training batch norms use the statistics of
  /// every replica's batch.
  void attach(memfmt_context_t *Ctx, bool SyncBatchNorm);
  /// Gives every replica rank 0's value of every state tensor of \p Model
  /// (parameters, running statistics, momentum buffers).
  void broadcastState(memfmt_model_t *Model);
  /// The mean of \p Value over the replicas.
  float mean(float Value);
  /// Ends every replica with exit status \p Code after an error here (the
  /// others may be waiting in a collective); returns for a single replica.
  void abortAll(int Code);

private:
  /// Sums \p Count floats in place over the replicas, waiting at most the
  /// timeout; false with \p Error set when it fails or times out.
  template <typename T>
  bool allReduceSum(T *Data, int64_t Count, std::string &Error);
  bool broadcast(void *Data, int64_t Bytes, std::string &Error);
  /// The communicator's functions (memfmt_runtime.h).
  static int broadcastOf(void *User, void *Data, int64_t Bytes, char *Error,
                         size_t ErrorSize);
  template <typename T>
  static int allReduceSumOf(void *User, T *Data, int64_t Count, char *Error,
                            size_t ErrorSize);

  int64_t Rank = 0, Size = 1;
  double Timeout;
  bool Initialized = false;
  std::string Description;
};

} // namespace memfmt::train

#endif // MEMFMT_TOOLS_MEMFMT_TRAIN_DISTRIBUTED_H
