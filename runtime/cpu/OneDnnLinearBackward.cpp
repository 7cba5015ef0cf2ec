//===- OneDnnLinearBackward.cpp - oneDNN matmuls for linear gradients -----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// linear_backward (f32 or bf16) as up to three oneDNN 2.x matmuls, each on the
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
// With bf16 math (the pointwise convolution gradients of a context with
// allow_bf16, on a CPU with bf16 instructions) grad_output, input and
// weight are first rounded into dense bf16 copies in a scratch buffer (one
// reorder each, grad_output's shared by both products) and the matmuls
// multiply those with f32 accumulation into the f32 gradients, on the
// kernels oneDNN lists first (AMX or AVX-512 BF16 brgemm); grad_bias stays
// an f32 product.
//
// A bf16 call (a mixed-precision training step) multiplies its bf16
// grad_output, input and weight as they lie, into a bf16 grad_input and the
// f32 grad_weight and grad_bias (f32 accumulation; grad_bias multiplies by
// bf16 ones, which is exact).
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "lib/KernelCall.h"

#include <vector>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;
using dnnl::memory;

namespace {

/// The [rows, cols] matrix of `type` (f32 by default) whose element (r, c)
/// is at r * rowStride + c * colStride.
memory::desc matrix(int64_t rows, int64_t cols, int64_t rowStride,
                    int64_t colStride,
                    memory::data_type type = memory::data_type::f32) {
  return memory::desc({rows, cols}, type,
                      matrixStrides(rows, cols, rowStride, colStride));
}

/// The [rows, cols] matrix of a 2-D tensor of `type`, transposed when
/// `transpose`.
memory::desc matrix(const TensorView &t, bool transpose = false,
                    memory::data_type type = memory::data_type::f32) {
  return transpose ? matrix(t.sizes[1], t.sizes[0], t.strides[1], t.strides[0],
                            type)
                   : matrix(t.sizes[0], t.sizes[1], t.strides[0], t.strides[1],
                            type);
}

/// dst = lhs @ rhs as one matmul primitive.
struct Product {
  BoundPrimitive matmul;
  memory lhs, rhs, dst;

  /// False when oneDNN has no implementation. f32 products prefer the
  /// GEMM-based kernels (see above), bf16 ones take oneDNN's first.
  bool build(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
             const memory::desc &lhsDesc, const memory::desc &rhsDesc,
             const memory::desc &dstDesc) {
    dnnl::matmul::desc desc(lhsDesc, rhsDesc, dstDesc);
    dnnl::matmul::primitive_desc pd =
        lhsDesc.data_type() == memory::data_type::f32
            ? gemmMatmul(dnn, desc)
            : dnnl::matmul::primitive_desc(desc, dnnl::primitive_attr(),
                                           dnn.engine, /*allow_empty=*/true);
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

/// A dense bf16 copy of an f32 matrix, at `offset` in the scratch.
struct Bf16Copy {
  memory user, copy;
  BoundPrimitive reorder;
  size_t offset = 0;

  /// The copy of the [rows, cols] matrix `from` (row-major).
  void build(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
             const memory::desc &from, size_t &scratchBytes) {
    memory::desc dense(from.dims(), memory::data_type::bf16,
                       memory::format_tag::ab);
    user = memory(from, dnn.engine, DNNL_MEMORY_NONE);
    copy = memory(dense, dnn.engine, DNNL_MEMORY_NONE);
    reorder.resetReorder(user, copy);
    ++counters.primitives_built;
    offset = scratchBytes;
    scratchBytes += AlignedScratch::roundUp(dense.get_size());
  }
  /// Rounds `data` into the copy; returns the copy's address.
  void *run(OneDnnEngine &dnn, memfmt_context_counters_t &counters, char *base,
            void *data) {
    user.set_data_handle(data);
    copy.set_data_handle(base + offset);
    reorder.execute(dnn, counters);
    return base + offset;
  }
  int64_t rows() const { return copy.get_desc().dims()[0]; }
  int64_t cols() const { return copy.get_desc().dims()[1]; }
};

} // namespace

struct OneDnnLinearBackward::Entry {
  PrimitiveKey key;
  bool usable = false;
  Product gradInput, gradWeight, gradBias;
  /// The ones grad_bias multiplies by, f32 or bf16 (0x3f80) as grad_output.
  std::vector<float> ones;
  std::vector<uint16_t> ones16;
  /// bf16 math: the copies the products read (empty otherwise).
  bool bf16 = false;
  Bf16Copy gradOutput16, input16, weight16;
  size_t scratchBytes = 0;

  explicit Entry(const PrimitiveKey &key) : key(key) {}

  void build(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
             const args::linear_backward &a, bool bf16Math, DType dtype) {
    const TensorView &dy = a.grad_output;
    const memory::data_type type = dataTypeOf(dtype);
    // The operands the products read: the tensors, or their bf16 copies
    // ([N, M] grad_output, [N, K] input, [M, K] weight, row-major).
    memory::desc dyDesc = matrix(dy, false, type),
                 dyT = matrix(dy, /*transpose=*/true, type),
                 weightDesc = matrix(a.weight, false, type),
                 inputDesc = matrix(a.input, false, type);
    bf16 = dtype == DType::f32 && bf16Math &&
           (a.has_grad_input || a.has_grad_weight);
    if (bf16) {
      const memory::data_type b16 = memory::data_type::bf16;
      gradOutput16.build(dnn, counters, dyDesc, scratchBytes);
      const int64_t n = gradOutput16.rows(), m = gradOutput16.cols();
      dyDesc = matrix(n, m, m, 1, b16);
      dyT = matrix(m, n, 1, m, b16);
      if (a.has_grad_input) {
        weight16.build(dnn, counters, weightDesc, scratchBytes);
        weightDesc =
            matrix(weight16.rows(), weight16.cols(), weight16.cols(), 1, b16);
      }
      if (a.has_grad_weight) {
        input16.build(dnn, counters, inputDesc, scratchBytes);
        inputDesc =
            matrix(input16.rows(), input16.cols(), input16.cols(), 1, b16);
      }
    }
    if (a.has_grad_input &&
        !gradInput.build(dnn, counters, dyDesc, weightDesc,
                         matrix(a.grad_input, false, type)))
      return;
    if (a.has_grad_weight &&
        !gradWeight.build(dnn, counters, dyT, inputDesc, matrix(a.grad_weight)))
      return;
    if (a.has_grad_bias) {
      const int64_t rows = dy.sizes[0], features = dy.sizes[1];
      if (dtype == DType::bf16)
        ones16.assign(static_cast<size_t>(rows), 0x3f80);
      else
        ones.assign(static_cast<size_t>(rows), 1.0f);
      if (!gradBias.build(dnn, counters, matrix(dy, /*transpose=*/true, type),
                          matrix(rows, 1, 1, 1, type),
                          matrix(features, 1, a.grad_bias.strides[0], 1)))
        return;
    }
    usable = true;
  }
};

OneDnnLinearBackward::OneDnnLinearBackward(OneDnnEngine &dnn, bool bf16Math)
    : dnn(dnn), bf16Math(bf16Math) {}
OneDnnLinearBackward::~OneDnnLinearBackward() = default;
void OneDnnLinearBackward::clear() { cache.clear(); }

bool OneDnnLinearBackward::run(KernelCall &call, const args::linear_backward &a,
                               memfmt_status_t &status) {
  if (call.dtype() != DType::f32 && call.dtype() != DType::bf16)
    return false;
  PrimitiveKey key;
  if (!addGradientOperands(a, key))
    return false;
  key.add(static_cast<int64_t>(call.dtype()));
  memfmt_context_counters_t &counters = call.counters();
  Entry &entry = cache.lookup(call.node(), key, [&](Entry &e) {
    e.build(dnn, counters, a, bf16Math, call.dtype());
    scratch.grow(e.scratchBytes);
  });
  if (!entry.usable)
    return false;

  try {
    void *dy = a.grad_output.data, *weight = a.weight.data,
         *input = a.input.data;
    if (entry.bf16) {
      char *base = scratch.data();
      dy = entry.gradOutput16.run(dnn, counters, base, dy);
      if (a.has_grad_input)
        weight = entry.weight16.run(dnn, counters, base, weight);
      if (a.has_grad_weight)
        input = entry.input16.run(dnn, counters, base, input);
    }
    if (a.has_grad_input)
      entry.gradInput.run(dnn, counters, dy, weight, a.grad_input.data);
    if (a.has_grad_weight)
      entry.gradWeight.run(dnn, counters, dy, input, a.grad_weight.data);
    if (a.has_grad_bias)
      entry.gradBias.run(dnn, counters, a.grad_output.data,
                         entry.ones16.empty()
                             ? static_cast<void *>(entry.ones.data())
                             : static_cast<void *>(entry.ones16.data()),
                         a.grad_bias.data);
  } catch (const dnnl::error &error) {
    status =
        call.fail(MEMFMT_STATUS_BACKEND_ERROR, describeError("matmul", error));
    return true;
  }
  call.setImpl(entry.bf16 ? "onednn_bf16_math" : "onednn");
  status = MEMFMT_STATUS_OK;
  return true;
}
