//===- LinearBackward.cpp - Reference linear layer gradients --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The reference linear_backward for output = input @ weight^T + bias with
// input [N, K], weight [M, K] and grad_output [N, M], any strides:
// grad_input = grad_output @ weight, grad_weight = grad_output^T @ input and
// grad_bias = the sum of grad_output over N, each as a double-accumulated
// dot product per element, split across elements, and each only when its
// has_* flag is set (an absent gradient is not written). The fast path is
// oneDNN's matmul (OneDnnLinearBackward.cpp); this is its oracle and
// fallback.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "lib/Parallel.h"

#include <algorithm>

using namespace memfmt::runtime;

namespace {

/// out[i, j] = sum over t < terms of lhs(i, t) * rhs(t, j), where lhs(i, t)
/// is at lhs + i * lhsStride[0] + t * lhsStride[1] (likewise rhs), or
/// sum over t of lhs(i, t) alone when rhs is null.
void productSum(const TensorView &out, const float *lhs,
                const int64_t lhsStride[2], const float *rhs,
                const int64_t rhsStride[2], int64_t terms) {
  const int64_t rows = out.sizes[0], cols = out.rank == 2 ? out.sizes[1] : 1;
  const int64_t outStride0 = out.strides[0],
                outStride1 = out.rank == 2 ? out.strides[1] : 0;
  float *y = out.as<float>();
  parallelFor(rows * cols,
              std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(terms, 1)),
              [&](int64_t begin, int64_t end, int) {
                for (int64_t e = begin; e < end; ++e) {
                  int64_t i = e / cols, j = e % cols;
                  double sum = 0;
                  // No pointer arithmetic on the data of an empty operand
                  // (terms == 0: the sum is 0).
                  const float *l = terms ? lhs + i * lhsStride[0] : lhs;
                  if (rhs && terms) {
                    const float *r = rhs + j * rhsStride[1];
                    for (int64_t t = 0; t < terms; ++t)
                      sum += static_cast<double>(l[t * lhsStride[1]]) *
                             r[t * rhsStride[0]];
                  } else if (!rhs) {
                    for (int64_t t = 0; t < terms; ++t)
                      sum += l[t * lhsStride[1]];
                  }
                  y[i * outStride0 + j * outStride1] = static_cast<float>(sum);
                }
              });
}

} // namespace

void cpu::linearBackwardReference(const args::linear_backward &a) {
  const TensorView &dy = a.grad_output, &x = a.input, &w = a.weight;
  const int64_t rows = x.sizes[0];
  const int64_t dyT[2] = {dy.strides[1], dy.strides[0]};
  // grad_input[n, k] = sum over m of grad_output[n, m] * weight[m, k].
  if (a.has_grad_input)
    productSum(a.grad_input, dy.as<float>(), dy.strides, w.as<float>(),
               w.strides, w.sizes[0]);
  // grad_weight[m, k] = sum over n of grad_output[n, m] * input[n, k].
  if (a.has_grad_weight)
    productSum(a.grad_weight, dy.as<float>(), dyT, x.as<float>(), x.strides,
               rows);
  // grad_bias[m] = sum over n of grad_output[n, m].
  if (a.has_grad_bias)
    productSum(a.grad_bias, dy.as<float>(), dyT, nullptr, nullptr, rows);
}
