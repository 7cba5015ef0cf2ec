//===- BatchNormCalls.h - Training batch norm calls without fusion -*- C++
//-*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The training batch norm kernels called as most tests call them: without
// the training fusion's epilogue (no residual, no relu). The fused slots
// get the input, which the kernel then does not read, and flags 0; the
// other arguments are the entry points' own, in their order.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_TEST_BATCHNORMCALLS_H
#define MEMFMT_RUNTIME_TEST_BATCHNORMCALLS_H

#include "memfmt/runtime/kernel_abi.h"

namespace memfmt::test {

/// native_batch_norm(ctx, node, input, weight, bias, running_mean,
/// running_var, output, save_mean, save_invstd, running_mean_out,
/// running_var_out, eps, momentum) with no residual and no relu; with
/// `bf16`, the entry point of bf16 activations (f32 parameters).
template <typename Ctx, typename Memref, typename... Rest>
int32_t batchNormForwardOf(bool bf16, Ctx &&ctx, int64_t node, Memref input,
                           Memref weight, Memref bias, Memref runningMean,
                           Memref runningVar, Rest... rest) {
  auto *entry = bf16 ? _mlir_ciface_memfmt_native_batch_norm_bf16
                     : _mlir_ciface_memfmt_native_batch_norm_f32;
  return entry(ctx, node, input, weight, bias, runningMean, runningVar,
               /*residual=*/input, rest..., /*has_residual=*/0, /*relu=*/0);
}
template <typename Ctx, typename Memref, typename... Rest>
int32_t batchNormForward(Ctx &&ctx, int64_t node, Memref input, Rest... rest) {
  return batchNormForwardOf(false, ctx, node, input, rest...);
}

/// native_batch_norm_backward(ctx, node, grad_out, input, weight,
/// save_mean, save_invstd, grad_input, grad_weight, grad_bias,
/// has_grad_input, has_grad_weight, has_grad_bias) without relu; `bf16` as
/// above.
template <typename Ctx, typename Memref, typename... Rest>
int32_t batchNormBackwardOf(bool bf16, Ctx &&ctx, int64_t node, Memref gradOut,
                            Memref input, Memref weight, Memref saveMean,
                            Memref saveInvstd, Rest... rest) {
  auto *entry = bf16 ? _mlir_ciface_memfmt_native_batch_norm_backward_bf16
                     : _mlir_ciface_memfmt_native_batch_norm_backward_f32;
  return entry(ctx, node, gradOut, input, weight, saveMean, saveInvstd,
               /*output=*/input, rest..., /*relu=*/0);
}
template <typename Ctx, typename Memref, typename... Rest>
int32_t batchNormBackward(Ctx &&ctx, int64_t node, Memref gradOut,
                          Rest... rest) {
  return batchNormBackwardOf(false, ctx, node, gradOut, rest...);
}

} // namespace memfmt::test

#endif // MEMFMT_RUNTIME_TEST_BATCHNORMCALLS_H
