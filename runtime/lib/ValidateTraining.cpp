//===- ValidateTraining.cpp - Argument checks of the training kernels -----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The checks every call of a training kernel passes before a backend sees
// it (Validate.h), on ValidateChecks.h's building blocks:
//  * pooling gradients: grad_output and grad_input share N and C, indices
//    have grad_output's shape, and the forward window attributes obey the
//    max pool's rules;
//  * convolution_backward and linear_backward: the forward's shape rules
//    (shared with conv2d and linear), each gradient present (its has_*
//    flag) shaped like its primal, all of them apart from the inputs and
//    from each other;
//  * fill, batch norm in training mode and its gradient, threshold and
//    average-pool gradients, cross-entropy and its gradient, the SGD
//    update: shapes, finite hyper-parameters in range, and outputs apart
//    from inputs by the bytes they span (exact aliases only where a kernel
//    updates in place: the running statistics, the parameter and momentum);
//  * eltwise_backward: a known function, gradients shaped like self, the
//    gradient apart from the inputs; sum_to_size: the output's shape one
//    the input broadcasts from, the output apart from the input;
//  * layer_norm_backward: the forward's rules (rank >= 1, eps, [D] weight),
//    gradients shaped like their primals and apart from everything read;
//  * softmax_backward: the forward's rules (rank >= 1, dim in [0, rank)),
//    grad_output and grad_input shaped like the output, grad_input apart
//    from both inputs;
//  * all_reduce and increment: output shaped like the input (0-d for the
//    step count's increment), and either the input itself or apart from it;
//  * the loss scaler's kernels: 0-d scalars, factors in GradScaler's
//    ranges (growth > 1, 0 < backoff < 1, interval >= 1), the unscaled
//    gradient shaped like the gradient, outputs in place or apart.
//
//===----------------------------------------------------------------------===//

#include "Validate.h"

#include "ValidateChecks.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

using namespace memfmt::runtime;
using namespace memfmt::runtime::validation;

namespace {

/// The 4-D shapes of a pooling backward: grad_output [N, C, OH, OW] and
/// grad_input [N, C, H, W].
memfmt_status_t checkPoolBackwardShapes(KernelCall &call,
                                        const TensorView &gradOutput,
                                        const TensorView &gradInput) {
  MEMFMT_CHECK(checkRank(call, gradOutput, "grad_output", 4));
  MEMFMT_CHECK(checkRank(call, gradInput, "grad_input", 4));
  if (gradOutput.sizes[0] != gradInput.sizes[0] ||
      gradOutput.sizes[1] != gradInput.sizes[1])
    return invalid(call, "grad_output has shape " + formatShape(gradOutput) +
                             ", but its batch and channel dims must be "
                             "grad_input's " +
                             formatShape(gradInput));
  for (int64_t d = 2; d < 4; ++d)
    if (gradOutput.sizes[d] > kMaxAttribute ||
        gradInput.sizes[d] > kMaxAttribute)
      return invalid(call, "spatial sizes above " +
                               std::to_string(kMaxAttribute) +
                               " are not supported");
  MEMFMT_CHECK(checkDistinct(call, gradInput, "grad_input"));
  return checkNotAliased(call, gradOutput, "grad_output", gradInput,
                         "grad_input");
}

} // namespace

memfmt_status_t
memfmt::runtime::validate(KernelCall &call,
                          const args::adaptive_avg_pool2d_backward &a) {
  MEMFMT_CHECK(checkPoolBackwardShapes(call, a.grad_output, a.grad_input));
  if (a.grad_output.numElements() > 0 &&
      (a.grad_input.sizes[2] < 1 || a.grad_input.sizes[3] < 1))
    return invalid(call, "grad_input " + formatShape(a.grad_input) +
                             " has an empty plane; every output window "
                             "needs an element");
  return MEMFMT_STATUS_OK;
}

memfmt_status_t
memfmt::runtime::validate(KernelCall &call,
                          const args::max_pool2d_with_indices_backward &a) {
  MEMFMT_CHECK(checkPoolBackwardShapes(call, a.grad_output, a.grad_input));
  MEMFMT_CHECK(checkShape(call, a.indices, "indices", a.grad_output,
                          " (grad_output's shape)"));
  MEMFMT_CHECK(checkMaxPoolAttributes(call, a.kernel_h, a.kernel_w, a.stride_h,
                                      a.stride_w, a.pad_top, a.pad_left,
                                      a.dilation_h, a.dilation_w));
  MEMFMT_CHECK(
      checkNotAliased(call, a.indices, "indices", a.grad_input, "grad_input"));
  return checkPoolWindows(call, a.grad_input, a.grad_output, a.kernel_h,
                          a.kernel_w, a.stride_h, a.stride_w, a.pad_top,
                          a.pad_left, a.dilation_h, a.dilation_w, 0, 0,
                          /*paddingCounts=*/false);
}

namespace {

/// A tensor of a gradient kernel: its name and whether it is read (an
/// input) or computed (an output): its has_* flag. An absent tensor is
/// another one passed in its place, and is neither read nor written.
struct Gradient {
  const TensorView &view;
  const char *name;
  int64_t present = 1;
};

/// The gradients a backward kernel computes must have distinct elements and
/// share no buffer with its inputs or with each other.
memfmt_status_t checkGradientsApart(KernelCall &call,
                                    std::initializer_list<Gradient> inputs,
                                    std::initializer_list<Gradient> outputs) {
  for (const Gradient *out = outputs.begin(); out != outputs.end(); ++out) {
    if (!out->present)
      continue;
    MEMFMT_CHECK(checkDistinct(call, out->view, out->name));
    for (const Gradient &in : inputs)
      if (in.present)
        MEMFMT_CHECK(
            checkNotAliased(call, in.view, in.name, out->view, out->name));
    for (const Gradient *other = outputs.begin(); other != out; ++other)
      if (other->present)
        MEMFMT_CHECK(checkNotAliased(call, other->view, other->name, out->view,
                                     out->name));
  }
  return MEMFMT_STATUS_OK;
}

/// The shapes of grad_input, grad_weight and grad_bias (those present):
/// the input's, the weight's and one per output channel (or feature).
template <typename Args>
memfmt_status_t checkGradientShapes(KernelCall &call, const Args &a,
                                    const char *perOutput) {
  MEMFMT_CHECK(checkFlag(call, a.has_grad_input, "has_grad_input"));
  MEMFMT_CHECK(checkFlag(call, a.has_grad_weight, "has_grad_weight"));
  MEMFMT_CHECK(checkFlag(call, a.has_grad_bias, "has_grad_bias"));
  if (a.has_grad_input)
    MEMFMT_CHECK(checkShape(call, a.grad_input, "grad_input", a.input,
                            " (the input's shape)"));
  if (a.has_grad_weight)
    MEMFMT_CHECK(checkShape(call, a.grad_weight, "grad_weight", a.weight,
                            " (the weight's shape)"));
  if (a.has_grad_bias)
    MEMFMT_CHECK(checkShape(call, a.grad_bias, "grad_bias",
                            shapeOf({a.weight.sizes[0]}), perOutput));
  return checkGradientsApart(call,
                             {{a.grad_output, "grad_output"},
                              {a.input, "input"},
                              {a.weight, "weight"}},
                             {{a.grad_input, "grad_input", a.has_grad_input},
                              {a.grad_weight, "grad_weight", a.has_grad_weight},
                              {a.grad_bias, "grad_bias", a.has_grad_bias}});
}

} // namespace

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::convolution_backward &a) {
  MEMFMT_CHECK(checkConvShapes(call, a, a.grad_output, "grad_output"));
  return checkGradientShapes(call, a, " (one per output channel)");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::linear_backward &a) {
  MEMFMT_CHECK(
      checkLinearShapes(call, a.input, a.weight, a.grad_output, "grad_output"));
  return checkGradientShapes(call, a, " (one per output feature)");
}

//===----------------------------------------------------------------------===//
// Training kernels: fill, batch norm, threshold and average-pool gradients,
// cross-entropy, SGD
//===----------------------------------------------------------------------===//

namespace {

/// A tensor argument with its name and element size, for overlap checks
/// (0: the call's element type; the f32 statistics of a bf16 batch norm
/// say sizeof(float)); a null view is an argument the call does not use.
struct Operand {
  const TensorView *view = nullptr;
  const char *name = "";
  size_t elementSize = 0;
};

/// The byte range [first, last) that `t`'s elements span (empty for no
/// elements), its elements `callSize` bytes unless it says otherwise.
std::pair<uintptr_t, uintptr_t> byteRange(const Operand &t, size_t callSize) {
  const TensorView &v = *t.view;
  if (v.numElements() == 0)
    return {0, 0};
  int64_t low = 0, high = 0;
  for (int64_t d = 0; d < v.rank; ++d) {
    int64_t reach = (v.sizes[d] - 1) * v.strides[d];
    (reach < 0 ? low : high) += reach;
  }
  auto base = reinterpret_cast<uintptr_t>(v.data);
  auto size = static_cast<int64_t>(t.elementSize ? t.elementSize : callSize);
  return {base + low * size, base + (high + 1) * size};
}

/// Output `out` must not overlap tensor `other` (an input or another
/// output); when `inPlace`, it may be `other` exactly (same address, shape
/// and strides). Overlap is judged by the byte ranges the two span, so
/// interleaved views of one buffer count as overlapping.
memfmt_status_t checkApart(KernelCall &call, const Operand &out,
                           const Operand &other, bool inPlace = false) {
  size_t callSize = elementSize(call.dtype());
  auto [outLow, outHigh] = byteRange(out, callSize);
  auto [low, high] = byteRange(other, callSize);
  if (outLow == outHigh || low == high || outHigh <= low || high <= outLow)
    return MEMFMT_STATUS_OK;
  if (inPlace && out.view->sameViewAs(*other.view))
    return MEMFMT_STATUS_OK;
  return invalid(
      call,
      std::string(out.name) + " " + describe(*out.view) + " overlaps " +
          other.name + " " + describe(*other.view) +
          (inPlace ? "; in place it must be exactly " + std::string(other.name)
                   : std::string("; outputs must not overlap "
                                 "other tensors")));
}

/// Every output of `outs` apart from every input of `ins` and from the
/// outputs before it; `inPlace(out, in)` says where an exact alias is
/// allowed.
template <typename InPlace>
memfmt_status_t
checkAllApart(KernelCall &call, std::initializer_list<Operand> ins,
              std::initializer_list<Operand> outs, InPlace inPlace) {
  for (auto out = outs.begin(); out != outs.end(); ++out) {
    if (!out->view)
      continue;
    MEMFMT_CHECK(checkDistinct(call, *out->view, out->name));
    for (const Operand &in : ins)
      if (in.view)
        MEMFMT_CHECK(checkApart(call, *out, in, inPlace(*out, in)));
    for (auto earlier = outs.begin(); earlier != out; ++earlier)
      if (earlier->view)
        MEMFMT_CHECK(checkApart(call, *out, *earlier));
  }
  return MEMFMT_STATUS_OK;
}

memfmt_status_t checkAllApart(KernelCall &call,
                              std::initializer_list<Operand> ins,
                              std::initializer_list<Operand> outs) {
  return checkAllApart(call, ins, outs,
                       [](const Operand &, const Operand &) { return false; });
}

/// `value` must be finite and at least `minimum` (strictly above it when
/// `strict`).
memfmt_status_t checkReal(KernelCall &call, double value, const char *name,
                          double minimum, bool strict = false) {
  if (std::isfinite(value) && (strict ? value > minimum : value >= minimum))
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(name) + " is " + std::to_string(value) +
                           ", expected a finite value " +
                           (strict ? "> " : ">= ") + std::to_string(minimum));
}

} // namespace

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::fill &a) {
  return checkDistinct(call, a.output, "output");
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::native_batch_norm &a) {
  MEMFMT_CHECK(checkFlag(call, a.has_residual, "has_residual"));
  MEMFMT_CHECK(checkFlag(call, a.relu, "relu"));
  MEMFMT_CHECK(checkChannelsFirst(call, a.input, "input"));
  MEMFMT_CHECK(
      checkShape(call, a.output, "output", a.input, " (the input's shape)"));
  if (a.has_residual)
    MEMFMT_CHECK(checkShape(call, a.residual, "residual", a.input,
                            " (the input's shape)"));
  MEMFMT_CHECK(checkPerChannel(call, a.input,
                               {{&a.weight, "weight"},
                                {&a.bias, "bias"},
                                {&a.running_mean, "running_mean"},
                                {&a.running_var, "running_var"},
                                {&a.save_mean, "save_mean"},
                                {&a.save_invstd, "save_invstd"},
                                {&a.running_mean_out, "running_mean_out"},
                                {&a.running_var_out, "running_var_out"}}));
  MEMFMT_CHECK(checkReal(call, a.eps, "eps", 0, /*strict=*/true));
  MEMFMT_CHECK(checkReal(call, a.momentum, "momentum", 0));
  // ATen: the running variance is unbiased by n / (n - 1).
  if (a.input.sizes[1] > 0 && a.input.numElements() / a.input.sizes[1] < 2)
    return invalid(call, "input " + formatShape(a.input) +
                             " has fewer than 2 values per channel; the "
                             "unbiased running variance divides by n - 1");
  auto inPlace = [&](const Operand &out, const Operand &in) {
    return (out.view == &a.running_mean_out && in.view == &a.running_mean) ||
           (out.view == &a.running_var_out && in.view == &a.running_var);
  };
  constexpr size_t f32 = sizeof(float);
  return checkAllApart(
      call,
      {{&a.input, "input"},
       {&a.weight, "weight", f32},
       {&a.bias, "bias", f32},
       {&a.running_mean, "running_mean", f32},
       {&a.running_var, "running_var", f32},
       a.has_residual ? Operand{&a.residual, "residual"} : Operand{}},
      {{&a.output, "output"},
       {&a.save_mean, "save_mean", f32},
       {&a.save_invstd, "save_invstd", f32},
       {&a.running_mean_out, "running_mean_out", f32},
       {&a.running_var_out, "running_var_out", f32}},
      inPlace);
}

memfmt_status_t
memfmt::runtime::validate(KernelCall &call,
                          const args::native_batch_norm_backward &a) {
  MEMFMT_CHECK(checkFlag(call, a.has_grad_input, "has_grad_input"));
  MEMFMT_CHECK(checkFlag(call, a.has_grad_weight, "has_grad_weight"));
  MEMFMT_CHECK(checkFlag(call, a.has_grad_bias, "has_grad_bias"));
  MEMFMT_CHECK(checkFlag(call, a.relu, "relu"));
  MEMFMT_CHECK(checkChannelsFirst(call, a.input, "input"));
  MEMFMT_CHECK(checkShape(call, a.grad_out, "grad_out", a.input,
                          " (the input's shape)"));
  if (a.relu)
    MEMFMT_CHECK(
        checkShape(call, a.output, "output", a.input, " (the input's shape)"));
  MEMFMT_CHECK(checkPerChannel(call, a.input,
                               {{&a.weight, "weight"},
                                {&a.save_mean, "save_mean"},
                                {&a.save_invstd, "save_invstd"}}));
  if (a.has_grad_input)
    MEMFMT_CHECK(checkShape(call, a.grad_input, "grad_input", a.input,
                            " (the input's shape)"));
  if (a.has_grad_weight)
    MEMFMT_CHECK(
        checkPerChannel(call, a.input, {{&a.grad_weight, "grad_weight"}}));
  if (a.has_grad_bias)
    MEMFMT_CHECK(checkPerChannel(call, a.input, {{&a.grad_bias, "grad_bias"}}));
  // Absent outputs are other tensors passed again: not checked.
  const Operand absent{};
  constexpr size_t f32 = sizeof(float);
  return checkAllApart(
      call,
      {{&a.grad_out, "grad_out"},
       {&a.input, "input"},
       {&a.weight, "weight", f32},
       {&a.save_mean, "save_mean", f32},
       {&a.save_invstd, "save_invstd", f32},
       a.relu ? Operand{&a.output, "output"} : absent},
      {a.has_grad_input ? Operand{&a.grad_input, "grad_input"} : absent,
       a.has_grad_weight ? Operand{&a.grad_weight, "grad_weight", f32}
                         : absent,
       a.has_grad_bias ? Operand{&a.grad_bias, "grad_bias", f32} : absent});
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::threshold_backward &a) {
  MEMFMT_CHECK(checkShape(call, a.grad_output, "grad_output", a.self,
                          " (self's shape)"));
  MEMFMT_CHECK(
      checkShape(call, a.grad_input, "grad_input", a.self, " (self's shape)"));
  MEMFMT_CHECK(checkFlag(call, a.has_addend, "has_addend"));
  if (a.has_addend)
    MEMFMT_CHECK(
        checkShape(call, a.addend, "addend", a.self, " (self's shape)"));
  return checkAllApart(
      call,
      {{&a.grad_output, "grad_output"},
       {&a.self, "self"},
       a.has_addend ? Operand{&a.addend, "addend"} : Operand{}},
      {{&a.grad_input, "grad_input"}});
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::eltwise_backward &a) {
  MEMFMT_CHECK(checkEltwiseFunction(call, a.op, a.alpha, a.beta));
  MEMFMT_CHECK(checkShape(call, a.grad_output, "grad_output", a.self,
                          " (self's shape)"));
  MEMFMT_CHECK(
      checkShape(call, a.grad_input, "grad_input", a.self, " (self's shape)"));
  return checkAllApart(call,
                       {{&a.grad_output, "grad_output"}, {&a.self, "self"}},
                       {{&a.grad_input, "grad_input"}});
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::sum_to_size &a) {
  const TensorView &x = a.input, &y = a.output;
  bool broadcasts = y.rank <= x.rank;
  for (int64_t d = 0; broadcasts && d < y.rank; ++d) {
    int64_t size = y.sizes[d], inputSize = x.sizes[x.rank - y.rank + d];
    broadcasts = size == inputSize || size == 1;
  }
  if (!broadcasts)
    return invalid(call, "output " + formatShape(y) + " is not a shape input " +
                             formatShape(x) +
                             " broadcasts from (each of its dims, aligned "
                             "to the right, input's size or 1)");
  return checkAllApart(call, {{&a.input, "input"}}, {{&a.output, "output"}});
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::softmax_backward &a) {
  const TensorView &y = a.output;
  if (y.rank < 1)
    return invalid(call, "output has rank 0 (shape " + formatShape(y) +
                             "), expected at least 1 (softmax runs along a "
                             "dim)");
  if (a.dim < 0 || a.dim >= y.rank)
    return invalid(call, "dim is " + std::to_string(a.dim) +
                             ", expected a dim of output " + formatShape(y) +
                             " in [0, " + std::to_string(y.rank) + ")");
  MEMFMT_CHECK(checkShape(call, a.grad_output, "grad_output", y,
                          " (the output's shape)"));
  MEMFMT_CHECK(
      checkShape(call, a.grad_input, "grad_input", y, " (the output's shape)"));
  return checkAllApart(call,
                       {{&a.grad_output, "grad_output"}, {&a.output, "output"}},
                       {{&a.grad_input, "grad_input"}});
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::layer_norm_backward &a) {
  MEMFMT_CHECK(checkFlag(call, a.has_weight, "has_weight"));
  MEMFMT_CHECK(checkFlag(call, a.has_grad_input, "has_grad_input"));
  MEMFMT_CHECK(checkFlag(call, a.has_grad_weight, "has_grad_weight"));
  MEMFMT_CHECK(checkFlag(call, a.has_grad_bias, "has_grad_bias"));
  const TensorView &x = a.input;
  MEMFMT_CHECK(checkLayerNormInput(call, x, a.eps));
  MEMFMT_CHECK(checkShape(call, a.grad_output, "grad_output", x,
                          " (the input's shape)"));
  TensorView normalized = shapeOf({x.sizes[x.rank - 1]});
  auto why = [&] {
    return " (the last dim of input " + formatShape(x) + ")";
  };
  if (a.has_weight)
    MEMFMT_CHECK(checkShape(call, a.weight, "weight", normalized, why));
  if (a.has_grad_input)
    MEMFMT_CHECK(
        checkShape(call, a.grad_input, "grad_input", x, " (the input's shape)"));
  if (a.has_grad_weight)
    MEMFMT_CHECK(
        checkShape(call, a.grad_weight, "grad_weight", normalized, why));
  if (a.has_grad_bias)
    MEMFMT_CHECK(checkShape(call, a.grad_bias, "grad_bias", normalized, why));
  return checkGradientsApart(call,
                             {{a.grad_output, "grad_output"},
                              {a.input, "input"},
                              {a.weight, "weight", a.has_weight}},
                             {{a.grad_input, "grad_input", a.has_grad_input},
                              {a.grad_weight, "grad_weight", a.has_grad_weight},
                              {a.grad_bias, "grad_bias", a.has_grad_bias}});
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::avg_pool2d_backward &a) {
  MEMFMT_CHECK(checkPoolBackwardShapes(call, a.grad_output, a.grad_input));
  MEMFMT_CHECK(checkAvgPool(call, a.grad_input, a.grad_output, a.kernel_h,
                            a.kernel_w, a.stride_h, a.stride_w, a.pad_top,
                            a.pad_left, a.pad_bottom, a.pad_right,
                            a.count_include_pad));
  return checkAllApart(call, {{&a.grad_output, "grad_output"}},
                       {{&a.grad_input, "grad_input"}});
}

namespace {

/// Logits [N, C], targets [N] (i64).
memfmt_status_t checkLogits(KernelCall &call, const TensorView &self,
                            const TensorView &target) {
  MEMFMT_CHECK(checkRank(call, self, "self", 2));
  MEMFMT_CHECK(checkRank(call, target, "target", 1));
  return checkShape(call, target, "target", shapeOf({self.sizes[0]}), [&] {
    return " (one class index per row of self " + formatShape(self) + ")";
  });
}

} // namespace

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::cross_entropy_loss &a) {
  MEMFMT_CHECK(checkLogits(call, a.self, a.target));
  MEMFMT_CHECK(checkRank(call, a.output, "output", 0));
  return checkAllApart(
      call, {{&a.self, "self"}, {&a.target, "target", sizeof(int64_t)}},
      {{&a.output, "output"}});
}

memfmt_status_t
memfmt::runtime::validate(KernelCall &call,
                          const args::cross_entropy_loss_backward &a) {
  MEMFMT_CHECK(checkLogits(call, a.self, a.target));
  MEMFMT_CHECK(checkRank(call, a.grad_output, "grad_output", 0));
  MEMFMT_CHECK(
      checkShape(call, a.grad_input, "grad_input", a.self, " (self's shape)"));
  return checkAllApart(call,
                       {{&a.grad_output, "grad_output"},
                        {&a.self, "self"},
                        {&a.target, "target", sizeof(int64_t)}},
                       {{&a.grad_input, "grad_input"}});
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::sgd_update &a) {
  MEMFMT_CHECK(checkFlag(call, a.nesterov, "nesterov"));
  MEMFMT_CHECK(checkFlag(call, a.has_step, "has_step"));
  MEMFMT_CHECK(checkReal(call, a.lr, "lr", 0));
  MEMFMT_CHECK(checkReal(call, a.momentum, "momentum", 0));
  MEMFMT_CHECK(checkReal(call, a.weight_decay, "weight_decay", 0));
  if (!std::isfinite(a.dampening))
    return invalid(call, "dampening is " + std::to_string(a.dampening) +
                             ", expected a finite value");
  if (a.nesterov && (a.momentum <= 0 || a.dampening != 0))
    return invalid(call, "nesterov needs momentum > 0 and dampening 0, got "
                         "momentum " +
                             std::to_string(a.momentum) + " and dampening " +
                             std::to_string(a.dampening));
  const char *why = " (the parameter's shape)";
  MEMFMT_CHECK(checkShape(call, a.grad, "grad", a.param, why));
  MEMFMT_CHECK(
      checkShape(call, a.momentum_buffer, "momentum_buffer", a.param, why));
  MEMFMT_CHECK(checkShape(call, a.param_out, "param_out", a.param, why));
  MEMFMT_CHECK(checkShape(call, a.momentum_buffer_out, "momentum_buffer_out",
                          a.param, why));
  MEMFMT_CHECK(checkFlag(call, a.has_found_inf, "has_found_inf"));
  if (a.has_step)
    MEMFMT_CHECK(checkRank(call, a.step, "step", 0));
  if (a.has_found_inf)
    MEMFMT_CHECK(checkRank(call, a.found_inf, "found_inf", 0));
  // Without momentum the buffers are neither read nor written, and without
  // has_step (has_found_inf) the step (the flag) is not read: those are not
  // checked for overlap.
  const Operand absent{};
  bool buffered = a.momentum != 0;
  auto inPlace = [&](const Operand &out, const Operand &in) {
    return (out.view == &a.param_out && in.view == &a.param) ||
           (out.view == &a.momentum_buffer_out &&
            in.view == &a.momentum_buffer);
  };
  return checkAllApart(
      call,
      {{&a.param, "param"},
       {&a.grad, "grad"},
       buffered ? Operand{&a.momentum_buffer, "momentum_buffer"} : absent,
       a.has_step ? Operand{&a.step, "step", sizeof(int64_t)} : absent,
       a.has_found_inf ? Operand{&a.found_inf, "found_inf"} : absent},
      {{&a.param_out, "param_out"},
       buffered ? Operand{&a.momentum_buffer_out, "momentum_buffer_out"}
                : absent},
      inPlace);
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::increment &a) {
  MEMFMT_CHECK(checkRank(call, a.input, "input", 0));
  MEMFMT_CHECK(checkRank(call, a.output, "output", 0));
  MEMFMT_CHECK(checkFlag(call, a.has_found_inf, "has_found_inf"));
  if (a.has_found_inf)
    MEMFMT_CHECK(checkRank(call, a.found_inf, "found_inf", 0));
  auto inPlace = [&](const Operand &out, const Operand &in) {
    return out.view == &a.output && in.view == &a.input &&
           a.output.sameViewAs(a.input);
  };
  return checkAllApart(call,
                       {{&a.input, "input", sizeof(int64_t)},
                        a.has_found_inf
                            ? Operand{&a.found_inf, "found_inf", sizeof(float)}
                            : Operand{}},
                       {{&a.output, "output", sizeof(int64_t)}}, inPlace);
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::loss_scale &a) {
  MEMFMT_CHECK(checkRank(call, a.scale, "scale", 0));
  MEMFMT_CHECK(checkRank(call, a.output, "output", 0));
  MEMFMT_CHECK(checkReal(call, a.init_scale, "init_scale", 0, true));
  auto inPlace = [&](const Operand &out, const Operand &in) {
    return out.view == &a.output && in.view == &a.scale &&
           a.output.sameViewAs(a.scale);
  };
  return checkAllApart(call, {{&a.scale, "scale"}}, {{&a.output, "output"}},
                       inPlace);
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::unscale_gradient &a) {
  MEMFMT_CHECK(checkFlag(call, a.has_found_inf, "has_found_inf"));
  MEMFMT_CHECK(checkRank(call, a.scale, "scale", 0));
  if (a.has_found_inf)
    MEMFMT_CHECK(checkRank(call, a.found_inf, "found_inf", 0));
  MEMFMT_CHECK(checkRank(call, a.found_inf_out, "found_inf_out", 0));
  MEMFMT_CHECK(checkShape(call, a.grad_out, "grad_out", a.grad,
                          " (the gradient's shape)"));
  auto inPlace = [&](const Operand &out, const Operand &in) {
    return (out.view == &a.grad_out && in.view == &a.grad &&
            a.grad_out.sameViewAs(a.grad)) ||
           (out.view == &a.found_inf_out && in.view == &a.found_inf &&
            a.found_inf_out.sameViewAs(a.found_inf));
  };
  return checkAllApart(
      call,
      {{&a.grad, "grad"},
       {&a.scale, "scale"},
       a.has_found_inf ? Operand{&a.found_inf, "found_inf"} : Operand{}},
      {{&a.grad_out, "grad_out"}, {&a.found_inf_out, "found_inf_out"}},
      inPlace);
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::update_loss_scale &a) {
  MEMFMT_CHECK(checkRank(call, a.scale, "scale", 0));
  MEMFMT_CHECK(checkRank(call, a.growth_tracker, "growth_tracker", 0));
  MEMFMT_CHECK(checkRank(call, a.found_inf, "found_inf", 0));
  MEMFMT_CHECK(checkRank(call, a.scale_out, "scale_out", 0));
  MEMFMT_CHECK(checkRank(call, a.growth_tracker_out, "growth_tracker_out", 0));
  MEMFMT_CHECK(
      checkReal(call, a.growth_factor, "growth_factor", 1, /*strict=*/true));
  MEMFMT_CHECK(
      checkReal(call, a.backoff_factor, "backoff_factor", 0, /*strict=*/true));
  if (a.backoff_factor >= 1)
    return invalid(call, "backoff_factor is " +
                             std::to_string(a.backoff_factor) +
                             ", expected a value < 1");
  MEMFMT_CHECK(checkAttribute(call, a.growth_interval, "growth_interval", 1));
  auto inPlace = [&](const Operand &out, const Operand &in) {
    return (out.view == &a.scale_out && in.view == &a.scale &&
            a.scale_out.sameViewAs(a.scale)) ||
           (out.view == &a.growth_tracker_out && in.view == &a.growth_tracker &&
            a.growth_tracker_out.sameViewAs(a.growth_tracker));
  };
  return checkAllApart(
      call,
      {{&a.scale, "scale"},
       {&a.growth_tracker, "growth_tracker", sizeof(int64_t)},
       {&a.found_inf, "found_inf"}},
      {{&a.scale_out, "scale_out"},
       {&a.growth_tracker_out, "growth_tracker_out", sizeof(int64_t)}},
      inPlace);
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::all_reduce &a) {
  MEMFMT_CHECK(checkFlag(call, a.average, "average"));
  MEMFMT_CHECK(checkShape(call, a.output, "output", a.input,
                          " (the input's shape)"));
  auto inPlace = [&](const Operand &out, const Operand &in) {
    return out.view == &a.output && in.view == &a.input &&
           a.output.sameViewAs(a.input);
  };
  return checkAllApart(call, {{&a.input, "input"}}, {{&a.output, "output"}},
                       inPlace);
}
