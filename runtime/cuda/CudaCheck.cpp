//===- CudaCheck.cpp - Messages and statuses of CUDA library errors -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The text and memfmt status of CUDA runtime, cuDNN and cuBLAS error codes
// (CudaCheck.h).
//
//===----------------------------------------------------------------------===//

#include "CudaCheck.h"

#include <cstring>

using namespace memfmt::runtime;

std::string cuda::callName(const char *expression) {
  const char *open = std::strchr(expression, '(');
  std::string name = open ? std::string(expression, open - expression)
                          : std::string(expression);
  while (!name.empty() && (name.back() == ' ' || name.back() == '\n'))
    name.pop_back();
  return name;
}

std::string cuda::describe(cudaError_t error) {
  return std::string(cudaGetErrorString(error)) + " (" +
         cudaGetErrorName(error) + ")";
}

std::string cuda::describe(cudnnStatus_t status) {
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  std::string text = cudnnGetErrorString(status);
  if (detail[0])
    text += std::string(" (") + detail + ")";
  return text;
}

std::string cuda::describe(cublasStatus_t status) {
  return std::string(cublasGetStatusString(status)) + " (" +
         cublasGetStatusName(status) + ")";
}

memfmt_status_t cuda::statusOf(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return MEMFMT_STATUS_OK;
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorDevicesUnavailable:
  case cudaErrorInvalidDevice:
  case cudaErrorSystemDriverMismatch:
  case cudaErrorCompatNotSupportedOnDevice:
    return MEMFMT_STATUS_NO_DEVICE;
  case cudaErrorMemoryAllocation:
    return MEMFMT_STATUS_OUT_OF_MEMORY;
  case cudaErrorNotSupported:
  case cudaErrorNoKernelImageForDevice:
    return MEMFMT_STATUS_UNSUPPORTED;
  default:
    return MEMFMT_STATUS_BACKEND_ERROR;
  }
}

memfmt_status_t cuda::statusOf(cudnnStatus_t status) {
  if (status == CUDNN_STATUS_SUCCESS)
    return MEMFMT_STATUS_OK;
  if (status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
    return MEMFMT_STATUS_OUT_OF_MEMORY;
  if (status == CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER)
    return MEMFMT_STATUS_NO_DEVICE;
  // Categories are thousands: 3xxx is "not supported".
  if (CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED)
    return MEMFMT_STATUS_UNSUPPORTED;
  return MEMFMT_STATUS_BACKEND_ERROR;
}

memfmt_status_t cuda::statusOf(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return MEMFMT_STATUS_OK;
  case CUBLAS_STATUS_ALLOC_FAILED:
    return MEMFMT_STATUS_OUT_OF_MEMORY;
  case CUBLAS_STATUS_NOT_SUPPORTED:
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return MEMFMT_STATUS_UNSUPPORTED;
  default:
    return MEMFMT_STATUS_BACKEND_ERROR;
  }
}
