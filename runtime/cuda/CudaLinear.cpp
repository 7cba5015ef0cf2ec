//===- CudaLinear.cpp - linear on cuBLAS ----------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// linear (out = input @ weight^T + bias) as one cublasGemmEx call plus, when
// there is a bias or a scratch output, one per-channel epilogue kernel; and
// linear_backward as three such products on transposed views. cuBLAS is
// column-major; planLinear (CudaPlan.h) maps the three matrices' strides to
// transposition flags and leading dimensions, so row-major, column-major and
// row-padded operands go to cuBLAS as they are; an operand with no unit stride
// is first copied to a dense row-major scratch matrix. Element types and
// arithmetic: f32 with f32 accumulation (CUBLAS_COMPUTE_32F;
// CUBLAS_COMPUTE_32F_FAST_TF32 when TF32 is allowed), f16 and bf16 inputs with
// f32 accumulation on tensor cores.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "CudaKernels.h"

#include <algorithm>
#include <climits>
#include <utility>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cuda;

namespace {

cudaDataType_t cublasType(Elem elem) {
  switch (elem) {
  case Elem::F16:
    return CUDA_R_16F;
  case Elem::BF16:
    return CUDA_R_16BF;
  default:
    return CUDA_R_32F;
  }
}

/// A dense row-major view of `rows` x `cols` at `data`.
TensorView rowMajor(void *data, int64_t rows, int64_t cols) {
  TensorView view;
  view.data = data;
  view.rank = 2;
  view.sizes[0] = rows;
  view.sizes[1] = cols;
  view.strides[0] = cols;
  view.strides[1] = 1;
  return view;
}

bool fitsInt(const GemmPlan &p) {
  for (int64_t v : {p.m, p.n, p.k, p.lda, p.ldb, p.ldc})
    if (v > INT_MAX)
      return false;
  return true;
}

} // namespace

/// out = in @ w^T (+ bias along dim 1), in [n, k], w [m, k], out [n, m],
/// any strides: one cublasGemmEx on the operands as they lie where cuBLAS
/// can take them (else on dense row-major scratch copies), then the bias
/// and the copy out of a scratch output in one epilogue kernel.
memfmt_status_t CudaBackend::gemm(KernelCall &call, Elem elem, Elem outElem,
                                  const TensorView &input,
                                  const TensorView &weight,
                                  const TensorView &out,
                                  const TensorView *bias) {
  size_t esize = elemSize(elem);
  const int64_t n = input.sizes[0], k = input.sizes[1], m = weight.sizes[0];
  TensorView in = input, w = weight, y = out;
  bool repacked = false;
  auto pack = [&](TensorView &t, ScratchSlot slot) -> memfmt_status_t {
    void *buffer = nullptr;
    if (memfmt_status_t s = scratch(
            call, slot, static_cast<size_t>(t.sizes[0] * t.sizes[1]) * esize,
            &buffer))
      return s;
    TensorView dense = rowMajor(buffer, t.sizes[0], t.sizes[1]);
    const char *impl = nullptr;
    if (memfmt_status_t s = copyTensor(call, elem, t, dense, &impl))
      return s;
    t = dense;
    repacked = true;
    return MEMFMT_STATUS_OK;
  };
  if (k > 0 && !gemmOperand(n, k, in.strides[0], in.strides[1]).ok)
    if (memfmt_status_t s = pack(in, kLinearInput))
      return s;
  if (k > 0 && !gemmOperand(m, k, w.strides[0], w.strides[1]).ok)
    if (memfmt_status_t s = pack(w, kLinearWeight))
      return s;
  bool outputDirect = gemmOperand(n, m, out.strides[0], out.strides[1]).ok;
  const size_t outSize = elemSize(outElem);
  if (!outputDirect) {
    void *buffer = nullptr;
    if (memfmt_status_t s =
            scratch(call, kLinearOutput,
                    static_cast<size_t>(out.numElements()) * outSize, &buffer))
      return s;
    y = rowMajor(buffer, n, m);
    repacked = true;
  }
  if (k == 0) {
    // An empty sum: the product is zero, the output its bias.
    void *buffer = nullptr;
    if (memfmt_status_t s =
            scratch(call, kLinearOutput,
                    static_cast<size_t>(out.numElements()) * outSize, &buffer))
      return s;
    MEMFMT_CUDA_TRY(call, cudaMemsetAsync(buffer, 0,
                                          static_cast<size_t>(n * m) * outSize,
                                          stream));
    call.setImpl("zero");
    return epilogue(call, outElem, out, rowMajor(buffer, n, m), bias, nullptr,
                    /*relu=*/false);
  }
  GemmPlan plan = planLinear(n, k, m, in.strides, w.strides, y.strides);
  if (!plan.ok)
    return call.fail(MEMFMT_STATUS_INTERNAL,
                     "no cuBLAS layout for a product of " + describe(in) +
                         " and " + describe(w) + " into " + describe(y));
  if (!fitsInt(plan))
    return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                     "cuBLAS takes sizes and leading dimensions below 2^31; "
                     "got " +
                         formatShape(in) + " and " + formatShape(w));
  const void *matA = plan.swapped ? w.data : in.data;
  const void *matB = plan.swapped ? in.data : w.data;
  cudaDataType_t type = cublasType(elem);
  cublasComputeType_t compute = elem == Elem::F32 && options.allowTf32
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  float alpha = 1.0f, beta = 0.0f;
  MEMFMT_CUBLAS_TRY(
      call, cublasGemmEx(cublas, plan.transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                         plan.transB ? CUBLAS_OP_T : CUBLAS_OP_N, int(plan.m),
                         int(plan.n), int(plan.k), &alpha, matA, type,
                         int(plan.lda), matB, type, int(plan.ldb), &beta,
                         y.data, cublasType(outElem), int(plan.ldc), compute,
                         CUBLAS_GEMM_DEFAULT));
  if (!outputDirect || bias)
    if (memfmt_status_t s =
            epilogue(call, outElem, out, y, bias, nullptr, /*relu=*/false))
      return s;
  call.setImpl(repacked ? "cublas_repacked" : "cublas");
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::linear &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  if (a.output.numElements() == 0) {
    call.setImpl("empty");
    return MEMFMT_STATUS_OK;
  }
  const Elem elem = elemOf(call.dtype());
  if (memfmt_status_t s = gemm(call, elem, elem, a.input, a.weight, a.output,
                               a.has_bias ? &a.bias : nullptr))
    return s;
  // A fused activation (linear + GELU) runs after, in place.
  return applyActivation(call, a.output, a.activation, a.activation_alpha,
                         a.activation_beta);
}

namespace {

/// The transpose of a 2-D view (no data moves).
TensorView transposed(const TensorView &t) {
  TensorView view = t;
  std::swap(view.sizes[0], view.sizes[1]);
  std::swap(view.strides[0], view.strides[1]);
  return view;
}

/// A 1-D view [m] as the column [m, 1].
TensorView column(const TensorView &t) {
  TensorView view = t;
  view.rank = 2;
  view.sizes[1] = 1;
  view.strides[1] = 1;
  return view;
}

} // namespace

// The three products of linear_backward, each as gemm (out = in @ w^T) on
// transposed views of the operands: grad_input = grad_output @ weight,
// grad_weight = grad_output^T @ input, and grad_bias = grad_output^T @ ones
// (a column of N ones in scratch). A gradient whose flag is off is not
// written, as on the CPU.
memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::linear_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  // A bf16 step's products read bf16 and accumulate in f32 (cuBLAS's
  // CUBLAS_COMPUTE_32F); the weight and bias gradients are written in f32.
  const Elem elem = elemOf(call.dtype());
  const TensorView &go = a.grad_output;
  const int64_t n = go.sizes[0];
  if (a.has_grad_input && a.grad_input.numElements() > 0)
    if (memfmt_status_t s = gemm(call, elem, elem, go, transposed(a.weight),
                                 a.grad_input, nullptr))
      return s;
  if (a.has_grad_weight && a.grad_weight.numElements() > 0)
    if (memfmt_status_t s = gemm(call, elem, Elem::F32, transposed(go),
                                 transposed(a.input), a.grad_weight, nullptr))
      return s;
  if (a.has_grad_bias && a.grad_bias.numElements() > 0) {
    void *ones = nullptr;
    if (memfmt_status_t s = scratch(
            call, kLinearOnes,
            static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float),
            &ones))
      return s;
    TensorView onesRow = rowMajor(ones, 1, n);
    const int64_t *strides[1] = {onesRow.strides};
    StridedPlan<1> fill = planStrided<1>(2, onesRow.sizes, strides);
    MEMFMT_LAUNCH_TRY(call, "the fill kernel",
                      launchFill(elem, fill, ones, 1.0f, stream));
    if (memfmt_status_t s = gemm(call, elem, Elem::F32, transposed(go), onesRow,
                                 column(a.grad_bias), nullptr))
      return s;
  }
  call.setImpl("cublas");
  return MEMFMT_STATUS_OK;
}
