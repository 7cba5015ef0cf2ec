//===- ValidateChecks.h - The checks kernel validators share ----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The building blocks of the kernels' argument checks (Validate.cpp for the
// inference kernels, ValidateTraining.cpp for the gradients, the loss and
// the optimizer): ranks, flags and bounded attributes, shapes against an
// expected shape, outputs apart from their inputs, pooling windows, per-channel
// vectors, and the shape rules that a forward kernel and its gradient share
// (a convolution's, a linear layer's). Each returns MEMFMT_STATUS_OK or
// fails the call with a message naming the argument; MEMFMT_CHECK returns
// the first failure. Private to the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_VALIDATECHECKS_H
#define MEMFMT_RUNTIME_LIB_VALIDATECHECKS_H

#include "KernelCall.h"
#include "TensorView.h"
#include "memfmt/Layout/Windows.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>

/// Returns the status of EXPR from the enclosing function when it failed.
#define MEMFMT_CHECK(EXPR)                                                     \
  if (memfmt_status_t status = (EXPR))                                         \
  return status

namespace memfmt::runtime::validation {

/// Attributes above this are rejected, so shape arithmetic stays far from
/// int64 overflow.
constexpr int64_t kMaxAttribute = int64_t(1) << 31;

/// Fails the call with MEMFMT_STATUS_INVALID_ARGUMENT and `message`.
memfmt_status_t invalid(KernelCall &call, const std::string &message);

/// `t` must have rank `rank`.
memfmt_status_t checkRank(KernelCall &call, const TensorView &t,
                          const char *name, int64_t rank);

/// A has_* flag must be 0 or 1.
memfmt_status_t checkFlag(KernelCall &call, int64_t value, const char *name);

/// `value` must lie in [minimum, kMaxAttribute].
memfmt_status_t checkAttribute(KernelCall &call, int64_t value,
                               const char *name, int64_t minimum);

/// An elementwise function's code (memfmt_eltwise_op_t) and parameters:
/// eltwise's and eltwise_backward's.
memfmt_status_t checkEltwiseFunction(KernelCall &call, int64_t op,
                                     double alpha, double beta);

/// A layer norm's input (rank >= 1: the last dim is normalized) and eps:
/// layer_norm's and layer_norm_backward's.
memfmt_status_t checkLayerNormInput(KernelCall &call, const TensorView &input,
                                    double eps);

/// A TensorView holding only a shape, for checkShape.
TensorView shapeOf(std::initializer_list<int64_t> sizes);

/// Outputs must not have two elements at one address.
memfmt_status_t checkDistinct(KernelCall &call, const TensorView &t,
                              const char *name);

/// `out` must not start where input `in` starts.
memfmt_status_t checkNotAliased(KernelCall &call, const TensorView &in,
                                const char *inName, const TensorView &out,
                                const char *outName);

/// `out` may be `in` itself (same address and layout) but not a different
/// view starting at the same address.
memfmt_status_t checkInPlace(KernelCall &call, const TensorView &in,
                             const char *inName, const TensorView &out,
                             const char *outName);

/// Checks the window attributes and the coverage of each window of a max
/// or average pool.
memfmt_status_t checkPoolWindows(KernelCall &call, const TensorView &input,
                                 const TensorView &output, int64_t kernelH,
                                 int64_t kernelW, int64_t strideH,
                                 int64_t strideW, int64_t padTop,
                                 int64_t padLeft, int64_t dilationH,
                                 int64_t dilationW, int64_t padBottom,
                                 int64_t padRight, bool paddingCounts);

/// The batch and channel dims of a pool's output must be the input's.
memfmt_status_t checkPoolShapes(KernelCall &call, const TensorView &input,
                                const TensorView &output);

/// The window attributes of a max pool (and of its gradient) in range:
/// kernel, stride and dilation >= 1, padding >= 0.
memfmt_status_t checkMaxPoolAttributes(KernelCall &call, int64_t kernelH,
                                       int64_t kernelW, int64_t strideH,
                                       int64_t strideW, int64_t padTop,
                                       int64_t padLeft, int64_t dilationH,
                                       int64_t dilationW);

/// A max pool from `input` to `output`: shapes, attributes, no aliasing and
/// every window covering an input element.
memfmt_status_t checkMaxPool(KernelCall &call, const TensorView &input,
                             const TensorView &output, int64_t kernelH,
                             int64_t kernelW, int64_t strideH, int64_t strideW,
                             int64_t padTop, int64_t padLeft, int64_t dilationH,
                             int64_t dilationW);

/// A batch norm's data tensor: rank >= 2, dim 1 the channels.
memfmt_status_t checkChannelsFirst(KernelCall &call, const TensorView &t,
                                   const char *name);

/// Each tensor of `perChannel` (with its name) must be [C], C = dim 1 of
/// `input`.
memfmt_status_t checkPerChannel(
    KernelCall &call, const TensorView &input,
    std::initializer_list<std::pair<const TensorView *, const char *>>
        perChannel);

/// The attributes, output size and windows of an average pool from `input`
/// to `output` (avg_pool2d, and avg_pool2d_backward with grad_input and
/// grad_output).
memfmt_status_t checkAvgPool(KernelCall &call, const TensorView &input,
                             const TensorView &output, int64_t kernelH,
                             int64_t kernelW, int64_t strideH, int64_t strideW,
                             int64_t padTop, int64_t padLeft, int64_t padBottom,
                             int64_t padRight, int64_t countIncludePad);

/// The shape rules of a linear layer (linear's, which linear_backward
/// shares): input [N, K], weight [M, K] and `output` (linear's output,
/// linear_backward's grad_output) [N, M].
memfmt_status_t checkLinearShapes(KernelCall &call, const TensorView &input,
                                  const TensorView &weight,
                                  const TensorView &output,
                                  const char *outputName);

/// `why` says where the expected shape comes from: a string literal, or a
/// callable returning the text, called only when the check fails (so that a
/// passing check allocates nothing: kernels are validated on every run).
template <typename Why>
memfmt_status_t checkShape(KernelCall &call, const TensorView &t,
                           const char *name, const TensorView &expected,
                           const Why &why) {
  if (t.rank == expected.rank &&
      std::equal(t.sizes, t.sizes + t.rank, expected.sizes))
    return MEMFMT_STATUS_OK;
  std::string text;
  if constexpr (std::is_convertible_v<Why, const char *>)
    text = why;
  else
    text = why();
  return invalid(call, std::string(name) + " has shape " + formatShape(t) +
                           ", expected " + formatShape(expected) + text);
}

/// The shape rules of a convolution (conv2d's, which convolution_backward
/// shares): ranks, attribute ranges, groups dividing the channels, the
/// weight's input channels and kernel, and `output` (conv2d's output,
/// convolution_backward's grad_output) being [N, O, OH, OW] with the sizes
/// the layout library computes.
template <typename Args>
memfmt_status_t checkConvShapes(KernelCall &call, const Args &a,
                                const TensorView &output,
                                const char *outputName) {
  MEMFMT_CHECK(checkRank(call, a.input, "input", 4));
  MEMFMT_CHECK(checkRank(call, a.weight, "weight", 4));
  MEMFMT_CHECK(checkRank(call, output, outputName, 4));
  MEMFMT_CHECK(checkAttribute(call, a.stride_h, "stride_h", 1));
  MEMFMT_CHECK(checkAttribute(call, a.stride_w, "stride_w", 1));
  MEMFMT_CHECK(checkAttribute(call, a.pad_top, "pad_top", 0));
  MEMFMT_CHECK(checkAttribute(call, a.pad_left, "pad_left", 0));
  MEMFMT_CHECK(checkAttribute(call, a.pad_bottom, "pad_bottom", 0));
  MEMFMT_CHECK(checkAttribute(call, a.pad_right, "pad_right", 0));
  MEMFMT_CHECK(checkAttribute(call, a.dilation_h, "dilation_h", 1));
  MEMFMT_CHECK(checkAttribute(call, a.dilation_w, "dilation_w", 1));
  MEMFMT_CHECK(checkAttribute(call, a.groups, "groups", 1));

  const int64_t *in = a.input.sizes, *w = a.weight.sizes;
  for (int64_t d = 0; d < 4; ++d)
    if (in[d] > kMaxAttribute || w[d] > kMaxAttribute)
      return invalid(call, "sizes above " + std::to_string(kMaxAttribute) +
                               " are not supported");
  if (in[1] % a.groups != 0 || w[0] % a.groups != 0)
    return invalid(call, "groups is " + std::to_string(a.groups) +
                             ", which must divide the input channels (" +
                             std::to_string(in[1]) +
                             ") and the output channels (" +
                             std::to_string(w[0]) + ")");
  if (w[1] * a.groups != in[1])
    return invalid(call, "weight has shape " + formatShape(a.weight) +
                             ", but input " + formatShape(a.input) +
                             " with groups " + std::to_string(a.groups) +
                             " needs " + std::to_string(in[1] / a.groups) +
                             " input channels per group in dim 1");
  if (w[2] < 1 || w[3] < 1)
    return invalid(call, "weight has shape " + formatShape(a.weight) +
                             "; the kernel must be at least 1x1");
  int64_t outH = memfmt::layout::convOutputSize(
      in[2], w[2], a.stride_h, a.pad_top, a.pad_bottom, a.dilation_h);
  int64_t outW = memfmt::layout::convOutputSize(
      in[3], w[3], a.stride_w, a.pad_left, a.pad_right, a.dilation_w);
  if (outH < 1 || outW < 1)
    return invalid(
        call,
        "the dilated kernel (" +
            std::to_string(memfmt::layout::dilatedExtent(w[2], a.dilation_h)) +
            "x" +
            std::to_string(memfmt::layout::dilatedExtent(w[3], a.dilation_w)) +
            ") is larger than the padded input (" +
            std::to_string(in[2] + a.pad_top + a.pad_bottom) + "x" +
            std::to_string(in[3] + a.pad_left + a.pad_right) + ")");
  TensorView expected = shapeOf({in[0], w[0], outH, outW});
  return checkShape(call, output, outputName, expected, [&] {
    return " for input " + formatShape(a.input) + ", weight " +
           formatShape(a.weight) + ", stride " + std::to_string(a.stride_h) +
           "x" + std::to_string(a.stride_w) + ", padding (top " +
           std::to_string(a.pad_top) + ", left " + std::to_string(a.pad_left) +
           ", bottom " + std::to_string(a.pad_bottom) + ", right " +
           std::to_string(a.pad_right) + "), dilation " +
           std::to_string(a.dilation_h) + "x" + std::to_string(a.dilation_w);
  });
}

} // namespace memfmt::runtime::validation

#endif // MEMFMT_RUNTIME_LIB_VALIDATECHECKS_H
