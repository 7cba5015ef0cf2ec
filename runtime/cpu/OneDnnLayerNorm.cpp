//===- OneDnnLayerNorm.cpp - oneDNN layer normalization per node ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// f32 and bf16 layer_norm on oneDNN 2.6's layer_normalization_forward
// (inference,
// statistics computed per call; weight and bias as its scale and shift). The
// tensors are described as the dense 2-D [rows, D] matrix of their rows,
// which takes any rank whose last dim has unit stride and whose rows follow
// each other without gaps (layerNormRows with a row stride of D: dense
// row-major tensors, such as the [N, H, W, C] activations of a channels-last
// model). oneDNN 2.x has one memory descriptor for source and destination,
// and its simple_layer_normalization reads a descriptor with padded rows as
// if they were dense (wrong results), so both tensors must have dense rows;
// other calls are declined and run the CPU backend's own loop
// (LayerNorm.cpp). Weight and bias with a stride other than 1 are gathered
// into dense scratch vectors; bf16 ones are widened there (oneDNN's scale
// and shift are f32; bf16 data is normalised in f32 and rounded once, as
// the widened reference does: ConvNeXt-Tiny's LayerNorms took 22% of its
// bf16 time on that reference).
//
// oneDNN computes the statistics in f32, the loop in double; oneDNN is the
// faster of the two (LayerNorm.cpp has the measurements).
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "OneDnn.h"

#include "lib/KernelCall.h"

#include "memfmt/runtime/io/HalfFloat.h"

#include <cstring>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;
using dnnl::memory;

struct OneDnnLayerNorm::Entry {
  PrimitiveKey key;
  bool usable = false;
  BoundPrimitive primitive;
  memory source, destination, scale, shift;

  explicit Entry(const PrimitiveKey &key) : key(key) {}
};

OneDnnLayerNorm::OneDnnLayerNorm(OneDnnEngine &dnn) : dnn(dnn) {}
OneDnnLayerNorm::~OneDnnLayerNorm() = default;
void OneDnnLayerNorm::clear() { cache.clear(); }

namespace {

/// The [D] parameter `v` as a dense f32 vector: `v` itself when it is one,
/// else gathered (and widened from bf16) into `scratch`.
void *denseF32Vector(const TensorView &v, DType dtype,
                     std::vector<char> &scratch) {
  if (dtype == DType::f32)
    return denseVector(v, sizeof(float), scratch);
  scratch.resize(v.sizes[0] * sizeof(float));
  auto *to = reinterpret_cast<float *>(scratch.data());
  const auto *from = static_cast<const uint16_t *>(v.data);
  for (int64_t i = 0; i < v.sizes[0]; ++i)
    to[i] = memfmt::io::bfloat16ToFloat(from[i * v.strides[0]]);
  return scratch.data();
}

} // namespace

bool OneDnnLayerNorm::run(KernelCall &call, const args::layer_norm &a,
                          memfmt_status_t &status) {
  const TensorView &in = a.input, &out = a.output;
  const DType dtype = call.dtype();
  // bf16 only where the CPU has bf16 instructions (oneDNN emulates them
  // elsewhere, and its software rounding loses the sign of -0 on AVX2).
  if ((dtype != DType::f32 && !(dtype == DType::bf16 && hasNativeBf16())) ||
      out.numElements() == 0)
    return false;
  int64_t inRow = 0, outRow = 0;
  if (!layerNormRows(in, inRow) || !layerNormRows(out, outRow))
    return false;
  const int64_t d = in.sizes[in.rank - 1];
  const int64_t rows = in.numElements() / d;
  // Dense rows only: one descriptor serves both tensors, and oneDNN 2.6's
  // simple_layer_normalization accepts a padded row stride but reads the
  // rows as if they were dense (wrong results; LayerNormTest found it).
  if (rows > 1 && (inRow != d || outRow != d))
    return false;

  PrimitiveKey key;
  key.add(rows);
  key.add(d);
  key.add(a.has_weight);
  key.add(a.has_bias);
  int64_t epsBits = 0;
  std::memcpy(&epsBits, &a.eps, sizeof(epsBits));
  key.add(epsBits);
  key.add(static_cast<int64_t>(dtype));

  memfmt_context_counters_t &counters = call.counters();
  Entry &entry = cache.lookup(call.node(), key, [&](Entry &e) {
    memory::desc data({rows, d},
                      dtype == DType::bf16 ? memory::data_type::bf16
                                           : memory::data_type::f32,
                      memory::format_tag::ab);
    memory::desc parameter({d}, memory::data_type::f32, memory::format_tag::a);
    auto flags = dnnl::normalization_flags::none;
    if (a.has_weight)
      flags |= dnnl::normalization_flags::use_scale;
    if (a.has_bias)
      flags |= dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::desc desc(
        dnnl::prop_kind::forward_inference, data, static_cast<float>(a.eps),
        flags);
    dnnl::layer_normalization_forward::primitive_desc pd(desc, dnn.engine,
                                                         /*allow_empty=*/true);
    if (!pd)
      return;
    e.source = memory(data, dnn.engine, DNNL_MEMORY_NONE);
    e.destination = memory(data, dnn.engine, DNNL_MEMORY_NONE);
    e.primitive.reset(dnnl::layer_normalization_forward(pd));
    e.primitive.bind(DNNL_ARG_SRC, e.source);
    e.primitive.bind(DNNL_ARG_DST, e.destination);
    if (a.has_weight) {
      e.scale = memory(parameter, dnn.engine, DNNL_MEMORY_NONE);
      e.primitive.bind(DNNL_ARG_SCALE, e.scale);
    }
    if (a.has_bias) {
      e.shift = memory(parameter, dnn.engine, DNNL_MEMORY_NONE);
      e.primitive.bind(DNNL_ARG_SHIFT, e.shift);
    }
    ++counters.primitives_built;
    e.usable = true;
  });
  if (!entry.usable)
    return false;
  try {
    entry.source.set_data_handle(in.data);
    entry.destination.set_data_handle(out.data);
    if (a.has_weight)
      entry.scale.set_data_handle(
          denseF32Vector(a.weight, dtype, weightScratch));
    if (a.has_bias)
      entry.shift.set_data_handle(denseF32Vector(a.bias, dtype, biasScratch));
    entry.primitive.execute(dnn, counters);
  } catch (const dnnl::error &error) {
    status = call.fail(MEMFMT_STATUS_BACKEND_ERROR,
                       describeError("layer_normalization_forward", error));
    return true;
  }
  call.setImpl("onednn");
  status = MEMFMT_STATUS_OK;
  return true;
}
