//===- CudaCheck.h - Checked CUDA, cuDNN and cuBLAS calls -------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Every CUDA runtime, cuDNN and cuBLAS call of the backend goes through one of
// the MEMFMT_CUDA_TRY / MEMFMT_CUDNN_TRY / MEMFMT_CUBLAS_TRY macros. On
// failure they return `sink.fail(status, message)` from the enclosing
// function, where the message names the call and carries the library's own
// text and code, e.g.
//
//   cudaMalloc failed: out of memory (cudaErrorMemoryAllocation)
//   cudnnConvolutionForward failed: CUDNN_STATUS_BAD_PARAM (...)
//
// and the status follows the error: no device or driver -> NO_DEVICE, out of
// memory -> OUT_OF_MEMORY, "not supported" -> UNSUPPORTED, anything else ->
// BACKEND_ERROR. A sink is a KernelCall (kernel calls) or an ErrorSink (the
// device functions and backend creation, which return the message to the
// context).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CUDA_CUDACHECK_H
#define MEMFMT_RUNTIME_CUDA_CUDACHECK_H

#include "memfmt/runtime/memfmt_runtime.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

namespace memfmt::runtime::cuda {

/// The name of the function an expression calls ("cudaMalloc" for
/// "cudaMalloc(&p, n)").
std::string callName(const char *expression);

/// "<library text> (<error name>)" and the memfmt status of each library's
/// error codes.
std::string describe(cudaError_t error);
std::string describe(cudnnStatus_t status);
std::string describe(cublasStatus_t status);
memfmt_status_t statusOf(cudaError_t error);
memfmt_status_t statusOf(cudnnStatus_t status);
memfmt_status_t statusOf(cublasStatus_t status);

inline bool succeeded(cudaError_t e) { return e == cudaSuccess; }
inline bool succeeded(cudnnStatus_t s) { return s == CUDNN_STATUS_SUCCESS; }
inline bool succeeded(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS; }

/// Collects the first failure of a function that is not a kernel call.
struct ErrorSink {
  std::string &message;
  memfmt_status_t fail(memfmt_status_t status, const std::string &text) {
    message = text;
    return status;
  }
};

} // namespace memfmt::runtime::cuda

/// Evaluates EXPR (a CUDA, cuDNN or cuBLAS call); on failure returns
/// SINK.fail(status, "<call> failed: <library message>").
#define MEMFMT_GPU_TRY(SINK, EXPR)                                             \
  do {                                                                         \
    auto memfmtResult = (EXPR);                                                \
    if (!::memfmt::runtime::cuda::succeeded(memfmtResult))                     \
      return (SINK).fail(                                                      \
          ::memfmt::runtime::cuda::statusOf(memfmtResult),                     \
          ::memfmt::runtime::cuda::callName(#EXPR) +                           \
              " failed: " + ::memfmt::runtime::cuda::describe(memfmtResult));  \
  } while (false)
#define MEMFMT_CUDA_TRY(SINK, EXPR) MEMFMT_GPU_TRY(SINK, EXPR)
#define MEMFMT_CUDNN_TRY(SINK, EXPR) MEMFMT_GPU_TRY(SINK, EXPR)
#define MEMFMT_CUBLAS_TRY(SINK, EXPR) MEMFMT_GPU_TRY(SINK, EXPR)

/// Checks the launch of a kernel (cudaGetLastError after it), naming the
/// kernel in the message.
#define MEMFMT_LAUNCH_TRY(SINK, NAME, EXPR)                                    \
  do {                                                                         \
    cudaError_t memfmtLaunch = (EXPR);                                         \
    if (memfmtLaunch != cudaSuccess)                                           \
      return (SINK).fail(::memfmt::runtime::cuda::statusOf(memfmtLaunch),      \
                         std::string("launching ") + (NAME) + " failed: " +    \
                             ::memfmt::runtime::cuda::describe(memfmtLaunch)); \
  } while (false)

#endif // MEMFMT_RUNTIME_CUDA_CUDACHECK_H
