//===- Nccl.cpp - NCCL groups of CUDA replicas ----------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// NcclGroup (Nccl.h): NCCL's entry points looked up once in libnccl.so.2,
// a communicator per group, and ncclAllReduce for the all_reduce kernel.
//
//===----------------------------------------------------------------------===//

#include "Nccl.h"

#include <mutex>

#ifdef MEMFMT_HAVE_NCCL_HEADER
#include <dlfcn.h>
#include <nccl.h>
#endif

using namespace memfmt::runtime;
using namespace memfmt::runtime::cuda;

#ifdef MEMFMT_HAVE_NCCL_HEADER

namespace {

/// The NCCL entry points the runtime calls, from the library found at run
/// time (its ABI is stable across 2.x, which nccl.h's types describe).
struct NcclApi {
  decltype(&ncclGetVersion) getVersion = nullptr;
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclCommDestroy) commDestroy = nullptr;
  decltype(&ncclAllReduce) allReduce = nullptr;
  decltype(&ncclGetErrorString) getErrorString = nullptr;
  /// Absent before NCCL 2.13; then only the result's string is reported.
  decltype(&ncclGetLastError) getLastError = nullptr;
  int version = 0;
  /// Why NCCL cannot be used ("" when it can).
  std::string problem;
};

template <typename Fn>
bool lookUp(void *library, const char *name, Fn &out, std::string &problem) {
  out = reinterpret_cast<Fn>(dlsym(library, name));
  if (!out && problem.empty())
    problem = std::string("libnccl.so.2 has no ") + name;
  return out != nullptr;
}

/// Loads NCCL once per process; the handle is never closed (communicators
/// may outlive any one context).
const NcclApi &api() {
  static NcclApi loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    NcclApi &a = loaded;
    void *library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *why = dlerror();
      a.problem = std::string("NCCL could not be loaded (") +
                  (why ? why : "libnccl.so.2 not found") +
                  "); install NCCL or add its directory to LD_LIBRARY_PATH";
      return;
    }
    lookUp(library, "ncclGetVersion", a.getVersion, a.problem);
    lookUp(library, "ncclGetUniqueId", a.getUniqueId, a.problem);
    lookUp(library, "ncclCommInitRank", a.commInitRank, a.problem);
    lookUp(library, "ncclCommDestroy", a.commDestroy, a.problem);
    lookUp(library, "ncclAllReduce", a.allReduce, a.problem);
    lookUp(library, "ncclGetErrorString", a.getErrorString, a.problem);
    std::string optional;
    lookUp(library, "ncclGetLastError", a.getLastError, optional);
    if (!a.problem.empty())
      return;
    if (a.getVersion(&a.version) != ncclSuccess)
      a.problem = "ncclGetVersion failed";
    else if (a.version < NCCL_VERSION(2, 10, 0))
      a.problem = "NCCL " + std::to_string(a.version) +
                  " is too old; the runtime needs 2.10 or later (ncclAvg)";
  });
  return loaded;
}

/// "ncclCommInitRank: unhandled system error (<NCCL's last message>)".
std::string ncclMessage(const NcclApi &a, const char *call, ncclResult_t result,
                        ncclComm_t comm) {
  std::string text = std::string(call) + ": " + a.getErrorString(result);
  if (a.getLastError) {
    const char *last = a.getLastError(comm);
    if (last && *last)
      text += std::string(" (") + last + ")";
  }
  return text;
}

/// "2.28.9" from NCCL's version code (major * 10000 + minor * 100 + patch
/// since 2.9).
std::string versionText(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) +
         "." + std::to_string(code % 100);
}

} // namespace

std::unique_ptr<NcclGroup>
NcclGroup::create(const memfmt_communicator_t &communicator, int device,
                  memfmt_status_t &status, std::string &error) {
  if (communicator.size > 1 && !communicator.broadcast) {
    status = MEMFMT_STATUS_INVALID_ARGUMENT;
    error = "a CUDA context of " + std::to_string(communicator.size) +
            " replicas needs the communicator's broadcast (replica 0 "
            "shares NCCL's unique id with it)";
    return nullptr;
  }
  status = MEMFMT_STATUS_BACKEND_ERROR;
  const NcclApi &a = api();
  if (!a.problem.empty()) {
    error = a.problem;
    return nullptr;
  }
  ncclUniqueId id{};
  if (communicator.rank == 0)
    if (ncclResult_t r = a.getUniqueId(&id); r != ncclSuccess) {
      error = ncclMessage(a, "ncclGetUniqueId", r, nullptr);
      return nullptr;
    }
  if (communicator.size > 1) {
    char why[512] = "";
    if (communicator.broadcast(communicator.user, &id, sizeof id, why,
                               sizeof why)) {
      error = std::string("the broadcast of NCCL's unique id failed: ") + why;
      return nullptr;
    }
  }
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
    error = std::string("cudaSetDevice: ") + cudaGetErrorString(e);
    return nullptr;
  }
  ncclComm_t comm = nullptr;
  if (ncclResult_t r =
          a.commInitRank(&comm, static_cast<int>(communicator.size), id,
                         static_cast<int>(communicator.rank));
      r != ncclSuccess) {
    error = ncclMessage(a, "ncclCommInitRank", r, comm);
    return nullptr;
  }
  std::unique_ptr<NcclGroup> group(new NcclGroup());
  group->comm = comm;
  group->text = "NCCL " + versionText(a.version) + ", " +
                std::to_string(communicator.size) + " replica" +
                (communicator.size == 1 ? "" : "s");
  status = MEMFMT_STATUS_OK;
  return group;
}

NcclGroup::~NcclGroup() {
  if (comm)
    api().commDestroy(static_cast<ncclComm_t>(comm));
}

bool NcclGroup::allReduce(float *data, int64_t count, bool average,
                          cudaStream_t stream, std::string &error) {
  const NcclApi &a = api();
  auto c = static_cast<ncclComm_t>(comm);
  ncclResult_t r =
      a.allReduce(data, data, static_cast<size_t>(count), ncclFloat32,
                  average ? ncclAvg : ncclSum, c, stream);
  if (r == ncclSuccess)
    return true;
  error = ncclMessage(a, "ncclAllReduce", r, c);
  return false;
}

#else // !MEMFMT_HAVE_NCCL_HEADER

std::unique_ptr<NcclGroup> NcclGroup::create(const memfmt_communicator_t &, int,
                                             memfmt_status_t &status,
                                             std::string &error) {
  status = MEMFMT_STATUS_UNSUPPORTED;
  error = "this runtime was built without NCCL (the CUDA toolkit had no "
          "nccl.h), so a CUDA context cannot join replicas";
  return nullptr;
}

NcclGroup::~NcclGroup() = default;

bool NcclGroup::allReduce(float *, int64_t, bool, cudaStream_t,
                          std::string &error) {
  error = "built without NCCL";
  return false;
}

#endif // MEMFMT_HAVE_NCCL_HEADER
