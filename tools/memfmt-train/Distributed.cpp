//===- Distributed.cpp - memfmt-train's replicas (Open MPI) ---------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Replicas on MPI_COMM_WORLD (see Distributed.h). Each collective is the
// nonblocking MPI call (MPI_Iallreduce, MPI_Ibcast) completed by MPI_Test
// until it finishes or the timeout passes, so a replica that stopped
// answering is an error after the timeout, not a hang. Counts above what an
// MPI `int` holds go in pieces. Without MPI at build time (no Open MPI
// found), only the single replica exists, and a launch by mpirun with more
// than one process is refused.
//
//===----------------------------------------------------------------------===//

#include "Distributed.h"

#include "ToolError.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#ifdef MEMFMT_HAVE_MPI
#include <mpi.h>
#endif

using namespace memfmt::train;
using memfmt::run::fail;

namespace {

/// The number of processes the launcher says it started (Open MPI's and
/// PMIx's variables), or 1.
int64_t launchedSize() {
  for (const char *Name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (const char *Value = std::getenv(Name))
      return std::max<int64_t>(1, std::atoll(Value));
  return 1;
}

/// Elements of one MPI call (its count is an int).
constexpr int64_t MaxPiece = int64_t(1) << 30;

} // namespace

#ifdef MEMFMT_HAVE_MPI

namespace {

/// Completes \p Request within \p Timeout seconds; false with \p Error
/// set otherwise.
bool finish(MPI_Request &Request, double Timeout, const char *What,
            std::string &Error) {
  auto Deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(Timeout);
  for (;;) {
    int Done = 0;
    int Status = MPI_Test(&Request, &Done, MPI_STATUS_IGNORE);
    if (Status != MPI_SUCCESS) {
      char Text[MPI_MAX_ERROR_STRING];
      int Length = 0;
      MPI_Error_string(Status, Text, &Length);
      Error = std::string(What) + " failed: " + std::string(Text, Length);
      return false;
    }
    if (Done)
      return true;
    if (std::chrono::steady_clock::now() > Deadline) {
      Error = std::string(What) + " timed out after " +
              std::to_string(static_cast<int64_t>(Timeout)) +
              " s: another replica stopped answering (--collective-timeout)";
      return false;
    }
    std::this_thread::yield();
  }
}

} // namespace

Replicas::Replicas(int &Argc, char **&Argv, double Timeout)
    : Timeout(Timeout) {
  if (launchedSize() <= 1)
    return;
  int Provided = 0;
  if (MPI_Init_thread(&Argc, &Argv, MPI_THREAD_FUNNELED, &Provided) !=
      MPI_SUCCESS)
    fail("cannot join the replicas: MPI_Init failed");
  Initialized = true;
  // Errors come back as statuses (and become ToolErrors), not aborts.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int R = 0, S = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &S);
  Rank = R;
  Size = S;
  char Library[MPI_MAX_LIBRARY_VERSION_STRING];
  int Length = 0;
  MPI_Get_library_version(Library, &Length);
  std::string Version(Library, static_cast<size_t>(Length));
  Version = Version.substr(0, Version.find_first_of(",\n"));
  Description = std::to_string(Size) + " processes (" + Version + ")";
}

Replicas::~Replicas() {
  if (Initialized)
    MPI_Finalize();
}

template <typename T>
bool Replicas::allReduceSum(T *Data, int64_t Count, std::string &Error) {
  MPI_Datatype Type = sizeof(T) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT;
  for (int64_t Done = 0; Done < Count; Done += MaxPiece) {
    MPI_Request Request;
    int Piece = static_cast<int>(std::min(MaxPiece, Count - Done));
    if (MPI_Iallreduce(MPI_IN_PLACE, Data + Done, Piece, Type, MPI_SUM,
                       MPI_COMM_WORLD, &Request) != MPI_SUCCESS) {
      Error = "MPI_Iallreduce failed";
      return false;
    }
    if (!finish(Request, Timeout, "the all-reduce", Error))
      return false;
  }
  return true;
}

bool Replicas::broadcast(void *Data, int64_t Bytes, std::string &Error) {
  char *Bytes0 = static_cast<char *>(Data);
  for (int64_t Done = 0; Done < Bytes; Done += MaxPiece) {
    MPI_Request Request;
    int Piece = static_cast<int>(std::min(MaxPiece, Bytes - Done));
    if (MPI_Ibcast(Bytes0 + Done, Piece, MPI_BYTE, 0, MPI_COMM_WORLD,
                   &Request) != MPI_SUCCESS) {
      Error = "MPI_Ibcast failed";
      return false;
    }
    if (!finish(Request, Timeout, "a broadcast from rank 0", Error))
      return false;
  }
  return true;
}

void Replicas::abortAll(int Code) {
  if (Initialized && Size > 1)
    MPI_Abort(MPI_COMM_WORLD, Code);
}

#else // !MEMFMT_HAVE_MPI

Replicas::Replicas(int &, char **&, double Timeout) : Timeout(Timeout) {
  if (launchedSize() > 1)
    fail("started as one of " + std::to_string(launchedSize()) +
         " processes, but this memfmt-train was built without MPI "
         "(install libopenmpi-dev and build again for data-parallel "
         "training)");
}

Replicas::~Replicas() = default;

template <typename T>
bool Replicas::allReduceSum(T *, int64_t, std::string &) {
  return true;
}
bool Replicas::broadcast(void *, int64_t, std::string &) { return true; }
void Replicas::abortAll(int) {}

#endif // MEMFMT_HAVE_MPI

namespace {

/// The communicator's convention (memfmt_runtime.h): 0, or 1 after writing
/// the message to `Error`.
int communicatorStatus(bool Done, const std::string &Message, char *Error,
                       size_t ErrorSize) {
  if (Done)
    return 0;
  std::snprintf(Error, ErrorSize, "%s", Message.c_str());
  return 1;
}

} // namespace

template <typename T>
int Replicas::allReduceSumOf(void *User, T *Data, int64_t Count, char *Error,
                             size_t ErrorSize) {
  std::string Message;
  bool Done = static_cast<Replicas *>(User)->allReduceSum(Data, Count, Message);
  return communicatorStatus(Done, Message, Error, ErrorSize);
}

int Replicas::broadcastOf(void *User, void *Data, int64_t Bytes, char *Error,
                          size_t ErrorSize) {
  std::string Message;
  bool Done = static_cast<Replicas *>(User)->broadcast(Data, Bytes, Message);
  return communicatorStatus(Done, Message, Error, ErrorSize);
}

void Replicas::attach(memfmt_context_t *Ctx, bool SyncBatchNorm) {
  if (Size == 1)
    return;
  memfmt_communicator_t Communicator{};
  Communicator.rank = Rank;
  Communicator.size = Size;
  Communicator.user = this;
  Communicator.all_reduce_sum_f32 = &Replicas::allReduceSumOf<float>;
  Communicator.all_reduce_sum_f64 = &Replicas::allReduceSumOf<double>;
  Communicator.sync_batch_norm = SyncBatchNorm ? 1 : 0;
  Communicator.broadcast = &Replicas::broadcastOf;
  if (memfmt_context_set_communicator(Ctx, &Communicator) != MEMFMT_STATUS_OK)
    fail(memfmt_context_last_error(Ctx));
}

void Replicas::broadcastState(memfmt_model_t *Model) {
  if (Size == 1)
    return;
  memfmt_model_info_t Info;
  memfmt_model_get_info(Model, &Info);
  std::vector<float> Values;
  for (int64_t I = 0; I < Info.num_parameters; ++I) {
    memfmt_model_tensor_info_t Tensor;
    memfmt_model_parameter_info(Model, I, &Tensor);
    int64_t Count = 1;
    for (int64_t D = 0; D < Tensor.rank; ++D)
      Count *= Tensor.shape[D];
    Values.resize(static_cast<size_t>(Count));
    if (Rank == 0 &&
        memfmt_model_read_parameter(Model, Tensor.name, Values.data(),
                                    Count) != MEMFMT_STATUS_OK)
      fail(std::string("reading ") + Tensor.name + ": " +
           memfmt_context_last_error(memfmt_model_context(Model)));
    std::string Error;
    if (!broadcast(Values.data(), Count * int64_t(sizeof(float)), Error))
      fail(Error);
    if (Rank != 0 &&
        memfmt_model_write_parameter(Model, Tensor.name, Values.data(),
                                     Count) != MEMFMT_STATUS_OK)
      fail(std::string("writing ") + Tensor.name + ": " +
           memfmt_context_last_error(memfmt_model_context(Model)));
  }
}

float Replicas::mean(float Value) {
  if (Size == 1)
    return Value;
  std::string Error;
  if (!allReduceSum(&Value, 1, Error))
    fail(Error);
  return Value / static_cast<float>(Size);
}
