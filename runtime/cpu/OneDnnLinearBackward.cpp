//===- OneDnnLinearBackward.cpp - oneDNN matmuls for linear gradients -----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// linear_backward (f32) as up to three oneDNN 2.x matmuls, each on the
// tensors' own strides (a transpose is a swap of strides), so no tensor is
// copied or packed:
//   grad_input [N, K]  = grad_output [N, M] @ weight [M, K],
//   grad_weight [M, K] = grad_output^T [M, N] @ input [N, K],
//   grad_bias [M, 1]   = grad_output^T [M, N] @ ones [N, 1]
// (the ones live in the entry). Only the gradients whose has_* flag is set
// are computed. matmul rather than inner_product's backward primitives:
// those want their own weight layouts (reorders each step) and a separate
// bias reduction, while matmul takes the strides as they are, as the
// forward (OneDnnLinear.cpp) does. Of matmul's implementations the
// GEMM-based one (gemm:jit, oneDNN's sgemm) is taken where it exists: on
// the matrices of ResNet-50's pointwise convolution gradients at batch 8
// (OneDnnConvBackward.cpp, up to 25088 rows) it took 8% less time in a
// training step than the brgemm kernels oneDNN 2.6 lists first (AMD Zen 5,
// 2 threads). The primitives are built once per node
// and key; calls with zero-sized dims or strides oneDNN cannot describe go
// to the reference.
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "lib/KernelCall.h"

#include <vector>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;
using dnnl::memory;

namespace {

/// The [rows, cols] f32 matrix whose element (r, c) is at r * rowStride +
/// c * colStride.
memory::desc matrix(int64_t rows, int64_t cols, int64_t rowStride,
                    int64_t colStride) {
  return memory::desc({rows, cols}, memory::data_type::f32,
                      matrixStrides(rows, cols, rowStride, colStride));
}

/// The [rows, cols] matrix of a 2-D tensor, transposed when `transpose`.
memory::desc matrix(const TensorView &t, bool transpose = false) {
  return transpose ? matrix(t.sizes[1], t.sizes[0], t.strides[1], t.strides[0])
                   : matrix(t.sizes[0], t.sizes[1], t.strides[0], t.strides[1]);
}

/// dst = lhs @ rhs as one matmul primitive.
struct Product {
  BoundPrimitive matmul;
  memory lhs, rhs, dst;

  /// False when oneDNN has no implementation.
  bool build(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
             const memory::desc &lhsDesc, const memory::desc &rhsDesc,
             const memory::desc &dstDesc) {
    dnnl::matmul::primitive_desc pd =
        gemmMatmul(dnn, dnnl::matmul::desc(lhsDesc, rhsDesc, dstDesc));
    if (!pd)
      return false;
    lhs = memory(lhsDesc, dnn.engine, DNNL_MEMORY_NONE);
    rhs = memory(rhsDesc, dnn.engine, DNNL_MEMORY_NONE);
    dst = memory(dstDesc, dnn.engine, DNNL_MEMORY_NONE);
    matmul.reset(dnnl::matmul(pd));
    matmul.bind(DNNL_ARG_SRC, lhs);
    matmul.bind(DNNL_ARG_WEIGHTS, rhs);
    matmul.bind(DNNL_ARG_DST, dst);
    ++counters.primitives_built;
    return true;
  }

  void run(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
           void *lhsData, void *rhsData, void *dstData) {
    lhs.set_data_handle(lhsData);
    rhs.set_data_handle(rhsData);
    dst.set_data_handle(dstData);
    matmul.execute(dnn, counters);
  }
};

} // namespace

struct OneDnnLinearBackward::Entry {
  PrimitiveKey key;
  bool usable = false;
  Product gradInput, gradWeight, gradBias;
  std::vector<float> ones;

  explicit Entry(const PrimitiveKey &key) : key(key) {}

  void build(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
             const args::linear_backward &a) {
    const TensorView &dy = a.grad_output;
    if (a.has_grad_input &&
        !gradInput.build(dnn, counters, matrix(dy), matrix(a.weight),
                         matrix(a.grad_input)))
      return;
    if (a.has_grad_weight &&
        !gradWeight.build(dnn, counters, matrix(dy, /*transpose=*/true),
                          matrix(a.input), matrix(a.grad_weight)))
      return;
    if (a.has_grad_bias) {
      const int64_t rows = dy.sizes[0], features = dy.sizes[1];
      ones.assign(static_cast<size_t>(rows), 1.0f);
      if (!gradBias.build(dnn, counters, matrix(dy, /*transpose=*/true),
                          matrix(rows, 1, 1, 1),
                          matrix(features, 1, a.grad_bias.strides[0], 1)))
        return;
    }
    usable = true;
  }
};

OneDnnLinearBackward::OneDnnLinearBackward(OneDnnEngine &dnn) : dnn(dnn) {}
OneDnnLinearBackward::~OneDnnLinearBackward() = default;
void OneDnnLinearBackward::clear() { cache.clear(); }

bool OneDnnLinearBackward::run(KernelCall &call, const args::linear_backward &a,
                               memfmt_status_t &status) {
  PrimitiveKey key;
  if (!addGradientOperands(a, key))
    return false;
  memfmt_context_counters_t &counters = call.counters();
  Entry &entry = cache.lookup(call.node(), key,
                              [&](Entry &e) { e.build(dnn, counters, a); });
  if (!entry.usable)
    return false;

  try {
    if (a.has_grad_input)
      entry.gradInput.run(dnn, counters, a.grad_output.data, a.weight.data,
                          a.grad_input.data);
    if (a.has_grad_weight)
      entry.gradWeight.run(dnn, counters, a.grad_output.data, a.input.data,
                           a.grad_weight.data);
    if (a.has_grad_bias)
      entry.gradBias.run(dnn, counters, a.grad_output.data, entry.ones.data(),
                         a.grad_bias.data);
  } catch (const dnnl::error &error) {
    status =
        call.fail(MEMFMT_STATUS_BACKEND_ERROR, describeError("matmul", error));
    return true;
  }
  call.setImpl("onednn");
  status = MEMFMT_STATUS_OK;
  return true;
}
