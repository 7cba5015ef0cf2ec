//===- CpuKernels.h - The CPU backend's kernel functions --------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The f32 kernels of the CPU backend, one family per file:
//  * `...Reference` kernels accept any strides on every tensor (NCHW,
//    channels-last, strided views, broadcast zero strides on inputs) and
//    accumulate in double; they are the oracle and the fallback;
//  * `...Fast` kernels specialise layouts (all tensors dense in the same
//    layout, channels-last rows, NCHW<->NHWC transposes) and return the name
//    of what ran, or null when the layouts are not theirs, in which case the
//    caller runs the reference.
// All of them get arguments that passed Validate.cpp, and none fails.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_CPUKERNELS_H
#define MEMFMT_RUNTIME_CPU_CPUKERNELS_H

#include "lib/KernelArgs.h"

namespace memfmt::runtime::cpu {

/// The window attributes of a max pool (bottom/right padding is implied by
/// the output size).
struct MaxPoolWindow {
  int64_t kernelH, kernelW, strideH, strideW, padTop, padLeft, dilationH,
      dilationW;
};

// Conv.cpp
void conv2dReference(const args::conv2d &a);

// BatchNorm.cpp
void batchNormReference(const args::batch_norm &a);
const char *batchNormFast(const args::batch_norm &a);

// Elementwise.cpp
void reluReference(const args::relu &a);
const char *reluFast(const args::relu &a);
void addReference(const args::add &a);
const char *addFast(const args::add &a);

// Pool.cpp. `indices` is null for max_pool2d.
void maxPool2dReference(const TensorView &input, const TensorView &output,
                        const TensorView *indices, const MaxPoolWindow &w);
const char *maxPool2dFast(const TensorView &input, const TensorView &output,
                          const TensorView *indices, const MaxPoolWindow &w);
void avgPool2dReference(const args::avg_pool2d &a);
const char *avgPool2dFast(const args::avg_pool2d &a);
void adaptiveAvgPool2dReference(const args::adaptive_avg_pool2d &a);
const char *adaptiveAvgPool2dFast(const args::adaptive_avg_pool2d &a);

// Linear.cpp
void linearReference(const args::linear &a);

// Copy.cpp
void copyReference(const TensorView &input, const TensorView &output);
const char *copyFast(const TensorView &input, const TensorView &output);

} // namespace memfmt::runtime::cpu

#endif // MEMFMT_RUNTIME_CPU_CPUKERNELS_H
