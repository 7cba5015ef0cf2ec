//===- OneDnn.h - oneDNN primitives cached per node -------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CPU backend's oneDNN 2.x fast path. One engine and stream per context;
// per node, the primitive made for the last (shapes, strides, attributes,
// weight buffer) it was called with, so repeated runs create nothing:
//  * OneDnnConv: convolution_forward on NCHW or NHWC f32, bias fused, the
//    residual as a sum post-op and relu as an eltwise post-op; weights are
//    reordered once into the primitive's preferred layout; an input in the
//    other format (or any strides) is reordered into the output's format
//    first;
//  * OneDnnLinear: matmul on the tensors' own strides, bias and relu fused.
// `run` returns false when the call is not one it takes (an output that is
// neither NCHW nor NHWC, strides oneDNN cannot describe, a configuration
// oneDNN has no implementation for); the caller then runs the reference.
// When it returns true, `status` is the call's result.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_ONEDNN_H
#define MEMFMT_RUNTIME_CPU_ONEDNN_H

#include "lib/KernelArgs.h"

#include <dnnl.hpp>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace memfmt::runtime {
class KernelCall;
} // namespace memfmt::runtime

namespace memfmt::runtime::cpu {

/// The oneDNN engine and stream of one context.
struct OneDnnEngine {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

class OneDnnConv {
public:
  explicit OneDnnConv(OneDnnEngine &dnn);
  ~OneDnnConv();
  bool run(KernelCall &call, const args::conv2d &a, memfmt_status_t &status);
  /// Drops every cached primitive and packed weight.
  void clear();

private:
  struct Entry;
  OneDnnEngine &dnn;
  std::unordered_map<int64_t, std::unique_ptr<Entry>> cache;
};

class OneDnnLinear {
public:
  explicit OneDnnLinear(OneDnnEngine &dnn);
  ~OneDnnLinear();
  bool run(KernelCall &call, const args::linear &a, memfmt_status_t &status);
  /// Drops every cached primitive and packed weight.
  void clear();

private:
  struct Entry;
  OneDnnEngine &dnn;
  std::unordered_map<int64_t, std::unique_ptr<Entry>> cache;
};

/// "oneDNN convolution_forward: could not execute a primitive (status 3)".
std::string describeError(const char *what, const dnnl::error &error);

/// The elements of the 1-D f32 tensor `v` with unit stride: its own data
/// when they already are, else a copy gathered into `scratch`.
const float *denseVector(const TensorView &v, std::vector<float> &scratch);

/// True if every dim of size > 1 has a positive stride: oneDNN describes
/// neither broadcast (zero) nor reversed (negative) dims.
bool hasPositiveStrides(const TensorView &t);

} // namespace memfmt::runtime::cpu

#endif // MEMFMT_RUNTIME_CPU_ONEDNN_H
