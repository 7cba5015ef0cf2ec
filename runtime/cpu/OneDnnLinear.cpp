//===- OneDnnLinear.cpp - oneDNN matmul for linear layers -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// linear on oneDNN 2.x's matmul: out[N, M] = input[N, K] @ weight^T + bias,
// relu as an eltwise post-op. Every operand is described with its own
// strides (the weight as the [K, M] matrix with the weight's strides
// swapped), so row-major, transposed and padded views need no copy and no
// packed weights are cached: a primitive per node and key is all that is
// kept. A bias with a non-unit stride is gathered per call. Calls oneDNN
// cannot describe (zero or negative strides) fall back to the reference.
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "lib/KernelCall.h"

#include <vector>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;
using dnnl::memory;

namespace {

/// The strides of the [rows, cols] matrix whose element (r, c) is at
/// `r * rowStride + c * colStride`. A size-1 dim's stride is free (L2); it is
/// set to what a dense matrix would have so oneDNN sees a plain layout.
memory::dims matrixStrides(int64_t rows, int64_t cols, int64_t rowStride,
                           int64_t colStride) {
  if (cols == 1)
    colStride = 1;
  if (rows == 1)
    rowStride = cols * colStride;
  return {rowStride, colStride};
}

} // namespace

struct OneDnnLinear::Entry {
  std::vector<int64_t> key;
  bool usable = false;
  dnnl::matmul matmul;
  memory input, weight, bias, output;

  explicit Entry(std::vector<int64_t> key) : key(std::move(key)) {}

  void build(OneDnnEngine &dnn, const args::linear &a) {
    const int64_t n = a.input.sizes[0], k = a.input.sizes[1],
                  m = a.weight.sizes[0];
    const memory::data_type f32 = memory::data_type::f32;
    memory::desc inputDesc(
        {n, k}, f32,
        matrixStrides(n, k, a.input.strides[0], a.input.strides[1]));
    memory::desc weightDesc(
        {k, m}, f32,
        matrixStrides(k, m, a.weight.strides[1], a.weight.strides[0]));
    memory::desc outputDesc(
        {n, m}, f32,
        matrixStrides(n, m, a.output.strides[0], a.output.strides[1]));
    memory::desc biasDesc;
    if (a.has_bias)
      biasDesc = memory::desc({1, m}, f32, memory::format_tag::ab);
    dnnl::post_ops ops;
    if (a.relu)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    dnnl::matmul::desc desc(inputDesc, weightDesc, biasDesc, outputDesc);
    dnnl::matmul::primitive_desc pd(desc, attr, dnn.engine,
                                    /*allow_empty=*/true);
    if (!pd)
      return;
    matmul = dnnl::matmul(pd);
    input = memory(inputDesc, dnn.engine, DNNL_MEMORY_NONE);
    weight = memory(weightDesc, dnn.engine, DNNL_MEMORY_NONE);
    output = memory(outputDesc, dnn.engine, DNNL_MEMORY_NONE);
    if (a.has_bias)
      bias = memory(biasDesc, dnn.engine, DNNL_MEMORY_NONE);
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
  std::vector<int64_t> key;
  for (const TensorView *t : {&a.input, &a.weight, &a.output}) {
    key.insert(key.end(), t->sizes, t->sizes + t->rank);
    key.insert(key.end(), t->strides, t->strides + t->rank);
  }
  key.insert(key.end(), {a.has_bias, a.relu});

  std::unique_ptr<Entry> &entry = cache[call.node()];
  if (!entry || entry->key != key) {
    entry = std::make_unique<Entry>(std::move(key));
    try {
      entry->build(dnn, a);
    } catch (const dnnl::error &) {
      entry->usable = false;
    }
  }
  if (!entry->usable)
    return false;

  std::vector<float> packedBias;
  try {
    if (a.has_bias) {
      entry->bias.set_data_handle(
          const_cast<float *>(denseVector(a.bias, packedBias)));
    }
    entry->input.set_data_handle(a.input.data);
    entry->weight.set_data_handle(a.weight.data);
    entry->output.set_data_handle(a.output.data);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, entry->input},
                                            {DNNL_ARG_WEIGHTS, entry->weight},
                                            {DNNL_ARG_DST, entry->output}};
    if (a.has_bias)
      args.emplace(DNNL_ARG_BIAS, entry->bias);
    entry->matmul.execute(dnn.stream, args);
    dnn.stream.wait();
  } catch (const dnnl::error &error) {
    status =
        call.fail(MEMFMT_STATUS_BACKEND_ERROR, describeError("matmul", error));
    return true;
  }
  call.setImpl("onednn");
  status = MEMFMT_STATUS_OK;
  return true;
}
