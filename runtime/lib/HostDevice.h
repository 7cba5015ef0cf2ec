//===- HostDevice.h - Functions for the CPU and the GPU ---------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// MEMFMT_HOST_DEVICE marks the scalar functions written once for the CPU
// kernels and the CUDA ones: __host__ __device__ under nvcc, nothing for the
// host compiler.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_HOSTDEVICE_H
#define MEMFMT_RUNTIME_LIB_HOSTDEVICE_H

#ifdef __CUDACC__
#define MEMFMT_HOST_DEVICE __host__ __device__
#else
#define MEMFMT_HOST_DEVICE
#endif

#endif // MEMFMT_RUNTIME_LIB_HOSTDEVICE_H
