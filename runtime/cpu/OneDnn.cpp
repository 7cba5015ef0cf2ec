//===- OneDnn.cpp - Helpers shared by the oneDNN kernels ------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What the oneDNN kernels share: memory descriptors of tensor views, running
// a bound primitive through the C API (counted), turning a dnnl::error into
// a message for the context, and the stride test that decides whether
// oneDNN can describe a tensor at all.
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "memfmt/runtime/elementwise_ops.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace memfmt::runtime;
using dnnl::memory;

namespace {

/// oneDNN's name of an instruction set (as DNNL_MAX_CPU_ISA spells it, in
/// lower case), or null for one this version has no name for.
const char *isaName(dnnl_cpu_isa_t isa) {
  switch (isa) {
  case dnnl_cpu_isa_sse41:
    return "sse41";
  case dnnl_cpu_isa_avx:
    return "avx";
  case dnnl_cpu_isa_avx2:
    return "avx2";
  case dnnl_cpu_isa_avx2_vnni:
    return "avx2_vnni";
  case dnnl_cpu_isa_avx512_core:
    return "avx512_core";
  case dnnl_cpu_isa_avx512_core_vnni:
    return "avx512_core_vnni";
  case dnnl_cpu_isa_avx512_core_bf16:
    return "avx512_core_bf16";
  case dnnl_cpu_isa_avx512_core_amx:
    return "avx512_core_amx";
  default:
    return nullptr;
  }
}

} // namespace

std::string cpu::describeOneDnn() {
  const dnnl_version_t *v = dnnl_version();
  dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  char unnamed[24];
  const char *name = isaName(isa);
  if (!name) {
    std::snprintf(unnamed, sizeof unnamed, "isa_0x%x",
                  static_cast<unsigned>(isa));
    name = unnamed;
  }
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) +
         "." + std::to_string(v->patch) + " on " + name;
}

bool cpu::hasNativeBf16() {
  // The ISA values are cumulative bit masks (AMX includes AVX-512 BF16).
  const unsigned bf16 = dnnl_cpu_isa_avx512_core_bf16;
  return (static_cast<unsigned>(dnnl_get_effective_cpu_isa()) & bf16) == bf16;
}

bool cpu::blockedSpatialConvolutionsPay() {
  // The ISA values are cumulative bit masks: AVX2 (with or without VNNI)
  // and nothing of AVX-512.
  const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const unsigned avx2 = dnnl_cpu_isa_avx2, avx512 = dnnl_cpu_isa_avx512_core;
  return (isa & avx2) == avx2 && (isa & avx512) != avx512;
}

memory::data_type cpu::dataTypeOf(DType dtype) {
  switch (dtype) {
  case DType::f16:
    return memory::data_type::f16;
  case DType::bf16:
    return memory::data_type::bf16;
  case DType::i64: // Never a oneDNN tensor; callers check.
  case DType::f32:
    break;
  }
  return memory::data_type::f32;
}

memory::dims cpu::dimsOf(const TensorView &t) {
  return memory::dims(t.sizes, t.sizes + t.rank);
}

memory::dims cpu::stridesOf(const TensorView &t) {
  int64_t extent = 1;
  for (int64_t d = 0; d < t.rank; ++d)
    if (t.sizes[d] > 1)
      extent = std::max(extent, t.sizes[d] * t.strides[d]);
  memory::dims strides(t.strides, t.strides + t.rank);
  for (int64_t d = 0; d < t.rank; ++d)
    if (t.sizes[d] == 1)
      strides[d] = extent;
  return strides;
}

memory::dims cpu::matrixStrides(int64_t rows, int64_t cols, int64_t rowStride,
                                int64_t colStride) {
  if (cols == 1)
    colStride = 1;
  if (rows == 1)
    rowStride = cols * colStride;
  return {rowStride, colStride};
}

std::optional<TensorView> cpu::positionsByChannels(const TensorView &t) {
  int64_t rows = 1, rowStride = 0;
  for (int dim : {3, 2, 0}) { // Innermost first.
    if (t.sizes[dim] == 1)
      continue;
    if (rows > 1 && t.strides[dim] != rowStride * rows)
      return std::nullopt;
    if (rows == 1)
      rowStride = t.strides[dim];
    rows *= t.sizes[dim];
  }
  TensorView m;
  m.data = t.data;
  m.rank = 2;
  m.sizes[0] = rows;
  m.sizes[1] = t.sizes[1];
  m.strides[0] = rows == 1 ? t.sizes[1] * t.strides[1] : rowStride;
  m.strides[1] = t.strides[1];
  return m;
}

TensorView cpu::pointwiseWeight(const TensorView &w) {
  TensorView m;
  m.data = w.data;
  m.rank = 2;
  m.sizes[0] = w.sizes[0];
  m.sizes[1] = w.sizes[1];
  m.strides[0] = w.strides[0];
  m.strides[1] = w.strides[1];
  return m;
}

dnnl::matmul::primitive_desc cpu::gemmMatmul(OneDnnEngine &dnn,
                                             const dnnl::matmul::desc &desc) {
  dnnl::matmul::primitive_desc pd(desc, dnnl::primitive_attr(), dnn.engine,
                                  /*allow_empty=*/true);
  if (!pd)
    return pd;
  while (std::strncmp(pd.impl_info_str(), "gemm", 4) != 0)
    if (!pd.next_impl()) // Past the last: start again at the first.
      return dnnl::matmul::primitive_desc(desc, dnnl::primitive_attr(),
                                          dnn.engine);
  return pd;
}

memory::desc cpu::descOf(const TensorView &t, DType dtype,
                         const TensorView *like) {
  if (t.rank == 4) {
    bool channelsLast = t.isChannelsLastContiguous(),
         contiguous = t.isContiguous();
    if (channelsLast && contiguous && like)
      channelsLast = like->isChannelsLastContiguous();
    if (channelsLast || contiguous)
      return memory::desc(dimsOf(t), dataTypeOf(dtype),
                          channelsLast ? memory::format_tag::nhwc
                                       : memory::format_tag::nchw);
  }
  return memory::desc(dimsOf(t), dataTypeOf(dtype), stridesOf(t));
}

void cpu::BoundPrimitive::execute(OneDnnEngine &dnn,
                                  memfmt_context_counters_t &counters) const {
  dnnl::error::wrap_c_api(dnnl_primitive_execute(primitive.get(),
                                                 dnn.stream.get(), count,
                                                 arguments.data()),
                          "could not execute a primitive");
  dnn.stream.wait();
  ++counters.library_calls;
}

std::string cpu::describeError(const char *what, const dnnl::error &error) {
  return std::string("oneDNN ") + what + ": " + error.what() + " (status " +
         std::to_string(static_cast<int>(error.status)) + ")";
}

void cpu::AlignedScratch::grow(size_t bytes) {
  if (bytes <= capacity)
    return;
  size_t rounded = roundUp(bytes);
  storage.reset(static_cast<char *>(std::aligned_alloc(kAlign, rounded)));
  if (!storage)
    throw std::bad_alloc();
  capacity = rounded;
}

bool cpu::hasPositiveStrides(const TensorView &t) {
  for (int64_t d = 0; d < t.rank; ++d)
    if (t.sizes[d] > 1 && t.strides[d] <= 0)
      return false;
  return true;
}

bool cpu::appendActivation(dnnl::post_ops &ops, int64_t activation,
                           double activationAlpha, double activationBeta) {
  using dnnl::algorithm;
  const float alpha = static_cast<float>(activationAlpha);
  const float beta = static_cast<float>(activationBeta);
  const float big = std::numeric_limits<float>::max();
  switch (activation) {
  case MEMFMT_ELTWISE_SIGMOID:
    ops.append_eltwise(1.0f, algorithm::eltwise_logistic, 0.0f, 0.0f);
    return true;
  case MEMFMT_ELTWISE_SILU:
    ops.append_eltwise(1.0f, algorithm::eltwise_swish, 1.0f, 0.0f);
    return true;
  case MEMFMT_ELTWISE_HARDSWISH:
    ops.append_eltwise(1.0f, algorithm::eltwise_hardswish, 0.0f, 0.0f);
    return true;
  case MEMFMT_ELTWISE_HARDSIGMOID:
    ops.append_eltwise(1.0f, algorithm::eltwise_linear, alpha, beta);
    ops.append_eltwise(1.0f, algorithm::eltwise_clip, 0.0f, 1.0f);
    return true;
  case MEMFMT_ELTWISE_CLAMP:
    // torch.clamp with min > max is max everywhere; oneDNN's clip is not.
    if (alpha > beta)
      return false;
    ops.append_eltwise(1.0f, algorithm::eltwise_clip, std::max(alpha, -big),
                       std::min(beta, big));
    return true;
  case MEMFMT_ELTWISE_GELU_ERF:
    ops.append_eltwise(1.0f, algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    return true;
  case MEMFMT_ELTWISE_GELU_TANH:
    ops.append_eltwise(1.0f, algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
    return true;
  default:
    return false;
  }
}

void *cpu::denseVector(const TensorView &v, size_t size,
                       std::vector<char> &scratch) {
  if (v.sizes[0] <= 1 || v.strides[0] == 1)
    return v.data;
  scratch.resize(v.sizes[0] * size);
  const char *from = static_cast<const char *>(v.data);
  for (int64_t i = 0; i < v.sizes[0]; ++i)
    std::memcpy(scratch.data() + i * size,
                from + i * v.strides[0] * static_cast<int64_t>(size), size);
  return scratch.data();
}
