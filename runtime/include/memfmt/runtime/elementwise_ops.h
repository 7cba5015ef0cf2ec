/*===- elementwise_ops.h - The functions of the eltwise and binary kernels -===*\
|*                                                                            *|
|* Part of the memfmt project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The `op` argument of Kernels.def's `eltwise` and `binary` kernels: which
 * elementwise function they compute. Part of the kernel ABI: the lowering
 * writes these numbers into compiled models, so they never change meaning.
 * The formulas (runtime/lib/ElementwiseMath.h) are ATen's.
 */

#ifndef MEMFMT_RUNTIME_ELEMENTWISE_OPS_H
#define MEMFMT_RUNTIME_ELEMENTWISE_OPS_H

/** eltwise(input, output, op, alpha, beta). */
typedef enum memfmt_eltwise_op {
  /** 1 / (1 + exp(-x)) */
  MEMFMT_ELTWISE_SIGMOID = 1,
  /** min(max(alpha * x + beta, 0), 1) (ATen: alpha 1/6, beta 1/2) */
  MEMFMT_ELTWISE_HARDSIGMOID = 2,
  /** x * min(max(x + 3, 0), 6) / 6 */
  MEMFMT_ELTWISE_HARDSWISH = 3,
  /** min(max(x, alpha), beta); NaN stays NaN (alpha or beta may be inf) */
  MEMFMT_ELTWISE_CLAMP = 4,
  /** x / 2 * (1 + erf(x / sqrt(2))) */
  MEMFMT_ELTWISE_GELU_ERF = 5,
  /** x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) */
  MEMFMT_ELTWISE_GELU_TANH = 6,
  /** x * sigmoid(x) (SiLU, swish) */
  MEMFMT_ELTWISE_SILU = 7,
} memfmt_eltwise_op_t;

/** binary(lhs, rhs, output, op), NumPy broadcasting. */
typedef enum memfmt_binary_op {
  MEMFMT_BINARY_MUL = 1,
  MEMFMT_BINARY_SUB = 2,
  MEMFMT_BINARY_DIV = 3,
} memfmt_binary_op_t;

#endif /* MEMFMT_RUNTIME_ELEMENTWISE_OPS_H */
