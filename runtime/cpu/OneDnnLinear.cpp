//===- OneDnnLinear.cpp - oneDNN matmul for linear layers -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// linear on oneDNN 2.x's matmul (f32, and bf16 where the CPU has it): out[N, M]
// = act(input[N, K] @ weight^T + bias), the activation as eltwise post-ops
// (appendActivation; a call with one oneDNN lacks runs the reference). Every operand is described with its own strides (the weight as the [K, M] matrix with the
// weight's strides swapped), so row-major, transposed and padded views need no
// copy and no packed weights are cached: a primitive per node and key is all
// that is kept. A bias with a non-unit stride is gathered into a buffer of the
// entry. Calls oneDNN cannot describe (zero or negative strides) fall back to
// the reference.
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "lib/KernelCall.h"

#include <cstring>
#include <vector>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;
using dnnl::memory;

struct OneDnnLinear::Entry {
  PrimitiveKey key;
  bool usable = false;
  BoundPrimitive matmul;
  memory input, weight, bias, output;
  /// A strided bias gathered densely (denseVector).
  std::vector<char> biasScratch;

  explicit Entry(const PrimitiveKey &key) : key(key) {}

  void build(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
             const args::linear &a, DType dtype) {
    const int64_t n = a.input.sizes[0], k = a.input.sizes[1],
                  m = a.weight.sizes[0];
    const memory::data_type type = dataTypeOf(dtype);
    memory::desc inputDesc(
        {n, k}, type,
        matrixStrides(n, k, a.input.strides[0], a.input.strides[1]));
    memory::desc weightDesc(
        {k, m}, type,
        matrixStrides(k, m, a.weight.strides[1], a.weight.strides[0]));
    memory::desc outputDesc(
        {n, m}, type,
        matrixStrides(n, m, a.output.strides[0], a.output.strides[1]));
    memory::desc biasDesc;
    if (a.has_bias)
      biasDesc = memory::desc({1, m}, type, memory::format_tag::ab);
    dnnl::primitive_attr attr;
    if (a.activation) {
      dnnl::post_ops ops;
      if (!appendActivation(ops, a.activation, a.activation_alpha,
                            a.activation_beta))
        return;
      attr.set_post_ops(ops);
    }
    dnnl::matmul::desc desc(inputDesc, weightDesc, biasDesc, outputDesc);
    dnnl::matmul::primitive_desc pd(desc, attr, dnn.engine,
                                    /*allow_empty=*/true);
    if (!pd)
      return;
    input = memory(inputDesc, dnn.engine, DNNL_MEMORY_NONE);
    weight = memory(weightDesc, dnn.engine, DNNL_MEMORY_NONE);
    output = memory(outputDesc, dnn.engine, DNNL_MEMORY_NONE);
    matmul.reset(dnnl::matmul(pd));
    matmul.bind(DNNL_ARG_SRC, input);
    matmul.bind(DNNL_ARG_WEIGHTS, weight);
    matmul.bind(DNNL_ARG_DST, output);
    if (a.has_bias) {
      bias = memory(biasDesc, dnn.engine, DNNL_MEMORY_NONE);
      matmul.bind(DNNL_ARG_BIAS, bias);
    }
    ++counters.primitives_built;
    usable = true;
  }
};

OneDnnLinear::OneDnnLinear(OneDnnEngine &dnn) : dnn(dnn) {}
OneDnnLinear::~OneDnnLinear() = default;
void OneDnnLinear::clear() { cache.clear(); }

bool OneDnnLinear::run(KernelCall &call, const args::linear &a,
                       memfmt_status_t &status) {
  if (a.output.numElements() == 0 || a.input.sizes[1] == 0 ||
      !hasPositiveStrides(a.input) || !hasPositiveStrides(a.weight))
    return false;
  const DType dtype = call.dtype();
  PrimitiveKey key;
  key.add(a.input);
  key.add(a.weight);
  key.add(a.output);
  key.add(a.has_bias);
  key.add(static_cast<int64_t>(dtype));
  key.add(a.activation);
  for (double value : {a.activation_alpha, a.activation_beta}) {
    int64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    key.add(bits);
  }
  memfmt_context_counters_t &counters = call.counters();
  Entry &entry = cache.lookup(
      call.node(), key, [&](Entry &e) { e.build(dnn, counters, a, dtype); });
  if (!entry.usable)
    return false;

  try {
    if (a.has_bias)
      entry.bias.set_data_handle(
          denseVector(a.bias, elementSize(dtype), entry.biasScratch));
    entry.input.set_data_handle(a.input.data);
    entry.weight.set_data_handle(a.weight.data);
    entry.output.set_data_handle(a.output.data);
    entry.matmul.execute(dnn, counters);
  } catch (const dnnl::error &error) {
    status =
        call.fail(MEMFMT_STATUS_BACKEND_ERROR, describeError("matmul", error));
    return true;
  }
  call.setImpl("onednn");
  status = MEMFMT_STATUS_OK;
  return true;
}
