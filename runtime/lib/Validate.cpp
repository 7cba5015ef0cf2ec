//===- Validate.cpp - Argument checks of the inference kernels ------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The checks every kernel call passes before a backend sees it. They follow
// PyTorch's (and ONNX's) shape rules; conv and pooling output sizes come
// from the layout library (memfmt/Layout/Windows.h), which the compiler's
// verifiers call too:
//  * conv2d: OH = (H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1) /
//    stride_h + 1 (floor), likewise for W; C and O divisible by groups and
//    weight [O, C / groups, KH, KW];
//  * pooling: the output shape is the compiler's (ceil_mode applied), but
//    every window must cover at least one input element (max pooling; average
//    pooling without count_include_pad) or one padded position (average
//    pooling with count_include_pad), and an average pool's output size must
//    be its floor- or ceil-mode size;
//  * add and binary: NumPy broadcasting of size-1 dims, ranks aligned to
//    the right; binary's and eltwise's `op` one of elementwise_ops.h's;
//  * layer_norm: rank >= 1, the output of the input's shape, weight and
//    bias (when their flags say they are present) [D], D the input's last
//    dim, and eps finite and >= 0, as batch_norm's;
//  * softmax: rank >= 1, dim in [0, rank) (the compiler normalizes
//    PyTorch's negative dims), the output of the input's shape;
//  * casts: the output has the input's shape (in place only f32 to f32);
// Attributes are bounded (kMaxAttribute) so that no shape arithmetic can
// overflow, outputs must not have overlapping elements, and an output may
// share its buffer with an input only where the kernel allows it (the
// elementwise kernels, batch_norm, layer_norm, softmax and conv2d's
// residual, with identical layouts).
// The checks themselves are ValidateChecks.h's; the training kernels'
// validators are in ValidateTraining.cpp.
//
//===----------------------------------------------------------------------===//

#include "Validate.h"

#include "ValidateChecks.h"
#include "lib/ElementwiseMath.h"

#include <cmath>
#include <string>

using namespace memfmt::runtime;
using namespace memfmt::runtime::validation;

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

namespace {

/// A fusion epilogue's activation: 0 or a memfmt_eltwise_op_t, its
/// parameters not NaN.
memfmt_status_t checkActivation(KernelCall &call, int64_t activation,
                                double alpha, double beta) {
  if (activation != 0 && !math::isEltwiseOp(activation))
    return invalid(call, "activation " + std::to_string(activation) +
                             " is neither 0 nor a memfmt_eltwise_op_t (1 to "
                             "7)");
  if (activation != 0 && (std::isnan(alpha) || std::isnan(beta)))
    return invalid(call, "activation_alpha and activation_beta must not be "
                         "NaN");
  return MEMFMT_STATUS_OK;
}

} // namespace

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::conv2d &a) {
  MEMFMT_CHECK(checkFlag(call, a.has_bias, "has_bias"));
  MEMFMT_CHECK(checkFlag(call, a.has_residual, "has_residual"));
  MEMFMT_CHECK(checkFlag(call, a.relu, "relu"));
  MEMFMT_CHECK(checkActivation(call, a.activation, a.activation_alpha,
                               a.activation_beta));
  if (a.activation != 0 && a.relu)
    return invalid(call, "relu and an activation cannot both be applied");
  MEMFMT_CHECK(checkConvShapes(call, a, a.output, "output"));
  const int64_t *w = a.weight.sizes;
  if (a.has_bias) {
    MEMFMT_CHECK(checkRank(call, a.bias, "bias", 1));
    MEMFMT_CHECK(checkShape(call, a.bias, "bias", shapeOf({w[0]}),
                            " (one per output channel)"));
    MEMFMT_CHECK(checkNotAliased(call, a.bias, "bias", a.output, "output"));
  }
  if (a.has_residual) {
    MEMFMT_CHECK(checkShape(call, a.residual, "residual", a.output,
                            " (the output's shape)"));
    MEMFMT_CHECK(
        checkInPlace(call, a.residual, "residual", a.output, "output"));
  }
  MEMFMT_CHECK(checkDistinct(call, a.output, "output"));
  MEMFMT_CHECK(checkNotAliased(call, a.input, "input", a.output, "output"));
  return checkNotAliased(call, a.weight, "weight", a.output, "output");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::batch_norm &a) {
  MEMFMT_CHECK(checkChannelsFirst(call, a.input, "input"));
  if (!std::isfinite(a.eps) || a.eps < 0)
    return invalid(call, "eps is " + std::to_string(a.eps) +
                             ", expected a finite value >= 0");
  MEMFMT_CHECK(
      checkShape(call, a.output, "output", a.input, " (the input's shape)"));
  MEMFMT_CHECK(checkPerChannel(call, a.input,
                               {{&a.weight, "weight"},
                                {&a.bias, "bias"},
                                {&a.running_mean, "running_mean"},
                                {&a.running_var, "running_var"}}));
  MEMFMT_CHECK(checkDistinct(call, a.output, "output"));
  MEMFMT_CHECK(checkInPlace(call, a.input, "input", a.output, "output"));
  MEMFMT_CHECK(checkNotAliased(call, a.weight, "weight", a.output, "output"));
  MEMFMT_CHECK(checkNotAliased(call, a.bias, "bias", a.output, "output"));
  MEMFMT_CHECK(checkNotAliased(call, a.running_mean, "running_mean", a.output,
                               "output"));
  return checkNotAliased(call, a.running_var, "running_var", a.output,
                         "output");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::relu &a) {
  MEMFMT_CHECK(
      checkShape(call, a.output, "output", a.input, " (the input's shape)"));
  MEMFMT_CHECK(checkDistinct(call, a.output, "output"));
  return checkInPlace(call, a.input, "input", a.output, "output");
}

/// lhs and rhs broadcast (NumPy: ranks aligned to the right; each pair of
/// sizes equal or one of them 1) to the output's shape, which may be either
/// of them in place.
static memfmt_status_t checkBroadcast(KernelCall &call, const TensorView &lhs,
                                      const TensorView &rhs,
                                      const TensorView &output) {
  TensorView expected;
  expected.rank = std::max(lhs.rank, rhs.rank);
  for (int64_t i = 0; i < expected.rank; ++i) {
    int64_t dl = lhs.rank - expected.rank + i;
    int64_t dr = rhs.rank - expected.rank + i;
    int64_t l = dl >= 0 ? lhs.sizes[dl] : 1;
    int64_t r = dr >= 0 ? rhs.sizes[dr] : 1;
    if (l != r && l != 1 && r != 1)
      return invalid(
          call, "lhs " + formatShape(lhs) + " and rhs " + formatShape(rhs) +
                    " do not broadcast: sizes " + std::to_string(l) + " and " +
                    std::to_string(r) + " in output dim " + std::to_string(i));
    expected.sizes[i] = l == 1 ? r : l;
  }
  MEMFMT_CHECK(checkShape(call, output, "output", expected, [&] {
    return " (lhs " + formatShape(lhs) + " and rhs " + formatShape(rhs) +
           " broadcast)";
  }));
  MEMFMT_CHECK(checkDistinct(call, output, "output"));
  MEMFMT_CHECK(checkInPlace(call, lhs, "lhs", output, "output"));
  return checkInPlace(call, rhs, "rhs", output, "output");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::add &a) {
  return checkBroadcast(call, a.lhs, a.rhs, a.output);
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::binary &a) {
  if (!math::isBinaryOp(a.op))
    return invalid(call, "op " + std::to_string(a.op) +
                             " is not a memfmt_binary_op_t (1 to 3)");
  return checkBroadcast(call, a.lhs, a.rhs, a.output);
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::eltwise &a) {
  MEMFMT_CHECK(checkEltwiseFunction(call, a.op, a.alpha, a.beta));
  MEMFMT_CHECK(
      checkShape(call, a.output, "output", a.input, " (the input's shape)"));
  MEMFMT_CHECK(checkDistinct(call, a.output, "output"));
  return checkInPlace(call, a.input, "input", a.output, "output");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::layer_norm &a) {
  MEMFMT_CHECK(checkFlag(call, a.has_weight, "has_weight"));
  MEMFMT_CHECK(checkFlag(call, a.has_bias, "has_bias"));
  MEMFMT_CHECK(checkLayerNormInput(call, a.input, a.eps));
  MEMFMT_CHECK(
      checkShape(call, a.output, "output", a.input, " (the input's shape)"));
  TensorView normalized = shapeOf({a.input.sizes[a.input.rank - 1]});
  auto why = [&] {
    return " (the last dim of input " + formatShape(a.input) + ")";
  };
  if (a.has_weight) {
    MEMFMT_CHECK(checkShape(call, a.weight, "weight", normalized, why));
    MEMFMT_CHECK(checkNotAliased(call, a.weight, "weight", a.output, "output"));
  }
  if (a.has_bias) {
    MEMFMT_CHECK(checkShape(call, a.bias, "bias", normalized, why));
    MEMFMT_CHECK(checkNotAliased(call, a.bias, "bias", a.output, "output"));
  }
  MEMFMT_CHECK(checkDistinct(call, a.output, "output"));
  return checkInPlace(call, a.input, "input", a.output, "output");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::softmax &a) {
  if (a.input.rank < 1)
    return invalid(call, "input has rank 0 (shape " + formatShape(a.input) +
                             "), expected at least 1 (softmax runs along a "
                             "dim)");
  if (a.dim < 0 || a.dim >= a.input.rank)
    return invalid(call, "dim is " + std::to_string(a.dim) +
                             ", expected a dim of input " +
                             formatShape(a.input) + " in [0, " +
                             std::to_string(a.input.rank) + ")");
  MEMFMT_CHECK(
      checkShape(call, a.output, "output", a.input, " (the input's shape)"));
  MEMFMT_CHECK(checkDistinct(call, a.output, "output"));
  return checkInPlace(call, a.input, "input", a.output, "output");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::max_pool2d &a) {
  return checkMaxPool(call, a.input, a.output, a.kernel_h, a.kernel_w,
                      a.stride_h, a.stride_w, a.pad_top, a.pad_left,
                      a.dilation_h, a.dilation_w);
}

memfmt_status_t
memfmt::runtime::validate(KernelCall &call,
                          const args::max_pool2d_with_indices &a) {
  MEMFMT_CHECK(checkMaxPool(call, a.input, a.output, a.kernel_h, a.kernel_w,
                            a.stride_h, a.stride_w, a.pad_top, a.pad_left,
                            a.dilation_h, a.dilation_w));
  MEMFMT_CHECK(checkShape(call, a.indices, "indices", a.output,
                          " (the output's shape)"));
  MEMFMT_CHECK(checkDistinct(call, a.indices, "indices"));
  MEMFMT_CHECK(checkNotAliased(call, a.input, "input", a.indices, "indices"));
  return checkNotAliased(call, a.output, "output", a.indices, "indices");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::avg_pool2d &a) {
  MEMFMT_CHECK(checkPoolShapes(call, a.input, a.output));
  MEMFMT_CHECK(checkNotAliased(call, a.input, "input", a.output, "output"));
  return checkAvgPool(call, a.input, a.output, a.kernel_h, a.kernel_w,
                      a.stride_h, a.stride_w, a.pad_top, a.pad_left,
                      a.pad_bottom, a.pad_right, a.count_include_pad);
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::adaptive_avg_pool2d &a) {
  MEMFMT_CHECK(checkPoolShapes(call, a.input, a.output));
  MEMFMT_CHECK(checkNotAliased(call, a.input, "input", a.output, "output"));
  if (a.output.numElements() > 0 &&
      (a.input.sizes[2] < 1 || a.input.sizes[3] < 1))
    return invalid(call, "input " + formatShape(a.input) +
                             " has an empty plane; every output window "
                             "needs an element");
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::linear &a) {
  MEMFMT_CHECK(checkFlag(call, a.has_bias, "has_bias"));
  MEMFMT_CHECK(checkActivation(call, a.activation, a.activation_alpha,
                               a.activation_beta));
  MEMFMT_CHECK(checkLinearShapes(call, a.input, a.weight, a.output, "output"));
  if (a.has_bias) {
    MEMFMT_CHECK(checkShape(call, a.bias, "bias", shapeOf({a.weight.sizes[0]}),
                            " (one per output feature)"));
    MEMFMT_CHECK(checkNotAliased(call, a.bias, "bias", a.output, "output"));
  }
  MEMFMT_CHECK(checkDistinct(call, a.output, "output"));
  MEMFMT_CHECK(checkNotAliased(call, a.input, "input", a.output, "output"));
  return checkNotAliased(call, a.weight, "weight", a.output, "output");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::copy &a) {
  MEMFMT_CHECK(
      checkShape(call, a.output, "output", a.input, " (the input's shape)"));
  MEMFMT_CHECK(checkDistinct(call, a.output, "output"));
  return checkInPlace(call, a.input, "input", a.output, "output");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::fold_batch_norm &a) {
  MEMFMT_CHECK(checkFlag(call, a.has_bias, "has_bias"));
  MEMFMT_CHECK(checkRank(call, a.weight, "weight", 4));
  if (!std::isfinite(a.eps) || a.eps < 0)
    return invalid(call, "eps is " + std::to_string(a.eps) +
                             ", expected a finite value >= 0");
  TensorView channels = shapeOf({a.weight.sizes[0]});
  auto why = [&] {
    return " (one per output channel of weight " + formatShape(a.weight) + ")";
  };
  if (a.has_bias)
    MEMFMT_CHECK(checkShape(call, a.bias, "bias", channels, why));
  MEMFMT_CHECK(checkShape(call, a.gamma, "gamma", channels, why));
  MEMFMT_CHECK(checkShape(call, a.beta, "beta", channels, why));
  MEMFMT_CHECK(checkShape(call, a.running_mean, "running_mean", channels, why));
  MEMFMT_CHECK(checkShape(call, a.running_var, "running_var", channels, why));
  MEMFMT_CHECK(checkShape(call, a.out_weight, "out_weight", a.weight,
                          " (the weight's shape)"));
  MEMFMT_CHECK(checkShape(call, a.out_bias, "out_bias", channels, why));
  MEMFMT_CHECK(checkDistinct(call, a.out_weight, "out_weight"));
  MEMFMT_CHECK(checkDistinct(call, a.out_bias, "out_bias"));
  MEMFMT_CHECK(
      checkNotAliased(call, a.weight, "weight", a.out_bias, "out_bias"));
  return checkNotAliased(call, a.out_weight, "out_weight", a.out_bias,
                         "out_bias");
}

namespace {

/// cast_f32_to / cast_to_f32_from: an elementwise copy between element
/// types. In place only when both sides are f32 (it is then a copy).
memfmt_status_t checkCast(KernelCall &call, const TensorView &input,
                          const TensorView &output) {
  MEMFMT_CHECK(
      checkShape(call, output, "output", input, " (the input's shape)"));
  MEMFMT_CHECK(checkDistinct(call, output, "output"));
  if (call.dtype() == DType::f32)
    return checkInPlace(call, input, "input", output, "output");
  return checkNotAliased(call, input, "input", output, "output");
}

} // namespace

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::cast_f32_to &a) {
  return checkCast(call, a.input, a.output);
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::cast_to_f32_from &a) {
  return checkCast(call, a.input, a.output);
}
