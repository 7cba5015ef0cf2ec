//===- Validate.cpp - Argument checks shared by every backend -------------===//
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
//  * add: NumPy broadcasting of size-1 dims, ranks aligned to the right;
//  * casts: the output has the input's shape (in place only f32 to f32);
//  * pooling gradients: grad_output and grad_input share N and C, indices
//    have grad_output's shape, and the forward window attributes obey the
//    max pool's rules.
// Attributes are bounded (kMaxAttribute) so that no shape arithmetic can
// overflow, outputs must not have overlapping elements, and an output may
// share its buffer with an input only where the kernel allows it (the
// elementwise kernels and conv2d's residual, with identical layouts).
//
//===----------------------------------------------------------------------===//

#include "Validate.h"

#include "KernelCall.h"
#include "memfmt/Layout/Windows.h"

#include <cmath>
#include <string>
#include <type_traits>

using namespace memfmt::runtime;

namespace {

/// Attributes above this are rejected, so shape arithmetic stays far from
/// int64 overflow.
constexpr int64_t kMaxAttribute = int64_t(1) << 31;

memfmt_status_t invalid(KernelCall &call, const std::string &message) {
  return call.fail(MEMFMT_STATUS_INVALID_ARGUMENT, message);
}

memfmt_status_t checkRank(KernelCall &call, const TensorView &t,
                          const char *name, int64_t rank) {
  if (t.rank == rank)
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(name) + " has rank " +
                           std::to_string(t.rank) + " (shape " +
                           formatShape(t) + "), expected " +
                           std::to_string(rank));
}

memfmt_status_t checkFlag(KernelCall &call, int64_t value, const char *name) {
  if (value == 0 || value == 1)
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(name) + " is " + std::to_string(value) +
                           ", expected 0 or 1");
}

/// `value` must lie in [minimum, kMaxAttribute].
memfmt_status_t checkAttribute(KernelCall &call, int64_t value,
                               const char *name, int64_t minimum) {
  if (value >= minimum && value <= kMaxAttribute)
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(name) + " is " + std::to_string(value) +
                           ", expected a value in [" + std::to_string(minimum) +
                           ", " + std::to_string(kMaxAttribute) + "]");
}

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

/// A TensorView holding only a shape, for checkShape.
TensorView shapeOf(std::initializer_list<int64_t> sizes) {
  TensorView view;
  for (int64_t size : sizes)
    view.sizes[view.rank++] = size;
  return view;
}

/// Outputs must not have two elements at one address.
memfmt_status_t checkDistinct(KernelCall &call, const TensorView &t,
                              const char *name) {
  if (t.hasDistinctElements())
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(name) + " has overlapping elements " +
                           describe(t) + "; outputs need distinct addresses");
}

/// `out` must not start where input `in` starts.
memfmt_status_t checkNotAliased(KernelCall &call, const TensorView &in,
                                const char *inName, const TensorView &out,
                                const char *outName) {
  if (in.data != out.data || in.numElements() == 0 || out.numElements() == 0)
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(outName) + " is the same buffer as " +
                           inName + "; this kernel cannot run in place");
}

/// `out` may be `in` itself (same address and layout) but not a different
/// view starting at the same address.
memfmt_status_t checkInPlace(KernelCall &call, const TensorView &in,
                             const char *inName, const TensorView &out,
                             const char *outName) {
  if (in.data != out.data || in.numElements() == 0 || out.numElements() == 0 ||
      in.sameLayoutAs(out))
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(outName) + " " + describe(out) +
                           " shares its buffer with " + inName + " " +
                           describe(in) +
                           " but not its layout; in place needs identical "
                           "shapes and strides");
}

#define MEMFMT_CHECK(EXPR)                                                     \
  if (memfmt_status_t status = (EXPR))                                         \
  return status

/// Checks the window attributes and the coverage of each window of a max
/// or average pool.
memfmt_status_t checkPoolWindows(KernelCall &call, const TensorView &input,
                                 const TensorView &output, int64_t kernelH,
                                 int64_t kernelW, int64_t strideH,
                                 int64_t strideW, int64_t padTop,
                                 int64_t padLeft, int64_t dilationH,
                                 int64_t dilationW, int64_t padBottom,
                                 int64_t padRight, bool paddingCounts) {
  int64_t h = input.sizes[2], w = input.sizes[3];
  // Real input rows are [0, H); with count_include_pad the padded rows
  // [-pad_top, H + pad_bottom) count too.
  int64_t lowH = paddingCounts ? -padTop : 0;
  int64_t highH = paddingCounts ? h + padBottom : h;
  int64_t lowW = paddingCounts ? -padLeft : 0;
  int64_t highW = paddingCounts ? w + padRight : w;
  const char *what = paddingCounts ? "the padded input" : "the input";
  // An empty output computes no window. (Checking its windows anyway would
  // cost time in its spatial sizes, up to 2^31, with no elements to show for
  // it; found by memfmt-fuzz-runtime.)
  if (output.numElements() == 0)
    return MEMFMT_STATUS_OK;
  int64_t row = memfmt::layout::findEmptyWindow(
      output.sizes[2], kernelH, strideH, padTop, dilationH, lowH, highH);
  if (row >= 0)
    return invalid(call, "the window of output row " + std::to_string(row) +
                             " covers no element of " + what + " (input " +
                             formatShape(input) + ", output " +
                             formatShape(output) + ")");
  int64_t col = memfmt::layout::findEmptyWindow(
      output.sizes[3], kernelW, strideW, padLeft, dilationW, lowW, highW);
  if (col >= 0)
    return invalid(call, "the window of output column " + std::to_string(col) +
                             " covers no element of " + what + " (input " +
                             formatShape(input) + ", output " +
                             formatShape(output) + ")");
  return MEMFMT_STATUS_OK;
}

/// The batch and channel dims of a pool's output must be the input's.
memfmt_status_t checkPoolShapes(KernelCall &call, const TensorView &input,
                                const TensorView &output) {
  MEMFMT_CHECK(checkRank(call, input, "input", 4));
  MEMFMT_CHECK(checkRank(call, output, "output", 4));
  if (output.sizes[0] != input.sizes[0] || output.sizes[1] != input.sizes[1])
    return invalid(call, "output has shape " + formatShape(output) +
                             ", but its batch and channel dims must be the "
                             "input's " +
                             formatShape(input));
  for (int64_t d = 2; d < 4; ++d)
    if (output.sizes[d] > kMaxAttribute || input.sizes[d] > kMaxAttribute)
      return invalid(call, "spatial sizes above " +
                               std::to_string(kMaxAttribute) +
                               " are not supported");
  return checkDistinct(call, output, "output");
}

memfmt_status_t checkMaxPool(KernelCall &call, const TensorView &input,
                             const TensorView &output, int64_t kernelH,
                             int64_t kernelW, int64_t strideH, int64_t strideW,
                             int64_t padTop, int64_t padLeft, int64_t dilationH,
                             int64_t dilationW) {
  MEMFMT_CHECK(checkPoolShapes(call, input, output));
  MEMFMT_CHECK(checkAttribute(call, kernelH, "kernel_h", 1));
  MEMFMT_CHECK(checkAttribute(call, kernelW, "kernel_w", 1));
  MEMFMT_CHECK(checkAttribute(call, strideH, "stride_h", 1));
  MEMFMT_CHECK(checkAttribute(call, strideW, "stride_w", 1));
  MEMFMT_CHECK(checkAttribute(call, padTop, "pad_top", 0));
  MEMFMT_CHECK(checkAttribute(call, padLeft, "pad_left", 0));
  MEMFMT_CHECK(checkAttribute(call, dilationH, "dilation_h", 1));
  MEMFMT_CHECK(checkAttribute(call, dilationW, "dilation_w", 1));
  MEMFMT_CHECK(checkNotAliased(call, input, "input", output, "output"));
  return checkPoolWindows(call, input, output, kernelH, kernelW, strideH,
                          strideW, padTop, padLeft, dilationH, dilationW, 0, 0,
                          /*paddingCounts=*/false);
}

/// A batch norm's data tensor: rank >= 2, dim 1 the channels.
memfmt_status_t checkChannelsFirst(KernelCall &call, const TensorView &t,
                                   const char *name) {
  if (t.rank >= 2)
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(name) + " has rank " +
                           std::to_string(t.rank) + " (shape " +
                           formatShape(t) +
                           "), expected at least 2 (channels in dim 1)");
}

/// Each tensor of `perChannel` (with its name) must be [C], C = dim 1 of
/// `input`.
memfmt_status_t checkPerChannel(
    KernelCall &call, const TensorView &input,
    std::initializer_list<std::pair<const TensorView *, const char *>>
        perChannel) {
  TensorView channels = shapeOf({input.sizes[1]});
  auto why = [&] {
    return " (one per channel of input " + formatShape(input) + ")";
  };
  for (auto [view, name] : perChannel)
    MEMFMT_CHECK(checkShape(call, *view, name, channels, why));
  return MEMFMT_STATUS_OK;
}

/// The attributes, output size and windows of an average pool from `input`
/// to `output` (avg_pool2d, and avg_pool2d_backward with grad_input and
/// grad_output).
memfmt_status_t checkAvgPool(KernelCall &call, const TensorView &input,
                             const TensorView &output, int64_t kernelH,
                             int64_t kernelW, int64_t strideH, int64_t strideW,
                             int64_t padTop, int64_t padLeft, int64_t padBottom,
                             int64_t padRight, int64_t countIncludePad) {
  MEMFMT_CHECK(checkFlag(call, countIncludePad, "count_include_pad"));
  MEMFMT_CHECK(checkAttribute(call, kernelH, "kernel_h", 1));
  MEMFMT_CHECK(checkAttribute(call, kernelW, "kernel_w", 1));
  MEMFMT_CHECK(checkAttribute(call, strideH, "stride_h", 1));
  MEMFMT_CHECK(checkAttribute(call, strideW, "stride_w", 1));
  MEMFMT_CHECK(checkAttribute(call, padTop, "pad_top", 0));
  MEMFMT_CHECK(checkAttribute(call, padLeft, "pad_left", 0));
  MEMFMT_CHECK(checkAttribute(call, padBottom, "pad_bottom", 0));
  MEMFMT_CHECK(checkAttribute(call, padRight, "pad_right", 0));
  // The output size must be the floor- or the ceil-mode size (ATen's, as
  // the compiler's verifiers compute it).
  const int64_t *in = input.sizes, *out = output.sizes;
  int64_t kernel[2] = {kernelH, kernelW};
  int64_t stride[2] = {strideH, strideW};
  int64_t padBegin[2] = {padTop, padLeft};
  int64_t padEnd[2] = {padBottom, padRight};
  const char *dimName[2] = {"height", "width"};
  for (int d = 0; d < 2; ++d) {
    // A kernel larger than the padded input still gives one (clipped)
    // window in ceil mode when the stride reaches past it, as in ATen.
    if (memfmt::layout::windowCount(in[2 + d], kernel[d], stride[d],
                                    padBegin[d], padEnd[d], /*dilation=*/1,
                                    /*roundUp=*/true) < 1)
      return invalid(
          call, std::string("the kernel ") + dimName[d] + " " +
                    std::to_string(kernel[d]) +
                    " is larger than the padded input " + dimName[d] + " " +
                    std::to_string(in[2 + d] + padBegin[d] + padEnd[d]));
    int64_t floorSize = memfmt::layout::poolOutputSize(
        in[2 + d], kernel[d], stride[d], padBegin[d], padEnd[d], 1, false);
    if (floorSize < 1)
      floorSize = -1; // The kernel does not fit: no floor-mode size.
    int64_t ceilSize = memfmt::layout::poolOutputSize(
        in[2 + d], kernel[d], stride[d], padBegin[d], padEnd[d], 1, true);
    if (out[2 + d] != floorSize && out[2 + d] != ceilSize)
      return invalid(call, std::string("output ") + dimName[d] + " is " +
                               std::to_string(out[2 + d]) + ", expected " +
                               std::to_string(floorSize) + " (floor mode) or " +
                               std::to_string(ceilSize) +
                               " (ceil mode) for input " + formatShape(input));
  }
  return checkPoolWindows(call, input, output, kernelH, kernelW, strideH,
                          strideW, padTop, padLeft, 1, 1, padBottom, padRight,
                          /*paddingCounts=*/countIncludePad != 0);
}

} // namespace

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::conv2d &a) {
  MEMFMT_CHECK(checkFlag(call, a.has_bias, "has_bias"));
  MEMFMT_CHECK(checkFlag(call, a.has_residual, "has_residual"));
  MEMFMT_CHECK(checkFlag(call, a.relu, "relu"));
  MEMFMT_CHECK(checkRank(call, a.input, "input", 4));
  MEMFMT_CHECK(checkRank(call, a.weight, "weight", 4));
  MEMFMT_CHECK(checkRank(call, a.output, "output", 4));
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
  MEMFMT_CHECK(checkShape(call, a.output, "output", expected, [&] {
    return " for input " + formatShape(a.input) + ", weight " +
           formatShape(a.weight) + ", stride " + std::to_string(a.stride_h) +
           "x" + std::to_string(a.stride_w) + ", padding (top " +
           std::to_string(a.pad_top) + ", left " + std::to_string(a.pad_left) +
           ", bottom " + std::to_string(a.pad_bottom) + ", right " +
           std::to_string(a.pad_right) + "), dilation " +
           std::to_string(a.dilation_h) + "x" + std::to_string(a.dilation_w);
  }));
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

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::add &a) {
  // NumPy broadcasting: align ranks to the right; each pair of sizes must be
  // equal or contain a 1.
  TensorView expected;
  expected.rank = std::max(a.lhs.rank, a.rhs.rank);
  for (int64_t i = 0; i < expected.rank; ++i) {
    int64_t dl = a.lhs.rank - expected.rank + i;
    int64_t dr = a.rhs.rank - expected.rank + i;
    int64_t l = dl >= 0 ? a.lhs.sizes[dl] : 1;
    int64_t r = dr >= 0 ? a.rhs.sizes[dr] : 1;
    if (l != r && l != 1 && r != 1)
      return invalid(
          call, "lhs " + formatShape(a.lhs) + " and rhs " + formatShape(a.rhs) +
                    " do not broadcast: sizes " + std::to_string(l) + " and " +
                    std::to_string(r) + " in output dim " + std::to_string(i));
    expected.sizes[i] = l == 1 ? r : l;
  }
  MEMFMT_CHECK(checkShape(call, a.output, "output", expected, [&] {
    return " (lhs " + formatShape(a.lhs) + " and rhs " + formatShape(a.rhs) +
           " broadcast)";
  }));
  MEMFMT_CHECK(checkDistinct(call, a.output, "output"));
  MEMFMT_CHECK(checkInPlace(call, a.lhs, "lhs", a.output, "output"));
  return checkInPlace(call, a.rhs, "rhs", a.output, "output");
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
  MEMFMT_CHECK(checkRank(call, a.input, "input", 2));
  MEMFMT_CHECK(checkRank(call, a.weight, "weight", 2));
  MEMFMT_CHECK(checkRank(call, a.output, "output", 2));
  if (a.weight.sizes[1] != a.input.sizes[1])
    return invalid(call, "weight has shape " + formatShape(a.weight) +
                             ", but input " + formatShape(a.input) + " needs " +
                             std::to_string(a.input.sizes[1]) +
                             " features in dim 1");
  MEMFMT_CHECK(checkShape(call, a.output, "output",
                          shapeOf({a.input.sizes[0], a.weight.sizes[0]}), [&] {
                            return " for input " + formatShape(a.input) +
                                   " and weight " + formatShape(a.weight);
                          }));
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

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::cast_f32_to &a) {
  return checkCast(call, a.input, a.output);
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::cast_to_f32_from &a) {
  return checkCast(call, a.input, a.output);
}

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
  MEMFMT_CHECK(checkAttribute(call, a.kernel_h, "kernel_h", 1));
  MEMFMT_CHECK(checkAttribute(call, a.kernel_w, "kernel_w", 1));
  MEMFMT_CHECK(checkAttribute(call, a.stride_h, "stride_h", 1));
  MEMFMT_CHECK(checkAttribute(call, a.stride_w, "stride_w", 1));
  MEMFMT_CHECK(checkAttribute(call, a.pad_top, "pad_top", 0));
  MEMFMT_CHECK(checkAttribute(call, a.pad_left, "pad_left", 0));
  MEMFMT_CHECK(checkAttribute(call, a.dilation_h, "dilation_h", 1));
  MEMFMT_CHECK(checkAttribute(call, a.dilation_w, "dilation_w", 1));
  MEMFMT_CHECK(
      checkNotAliased(call, a.indices, "indices", a.grad_input, "grad_input"));
  return checkPoolWindows(call, a.grad_input, a.grad_output, a.kernel_h,
                          a.kernel_w, a.stride_h, a.stride_w, a.pad_top,
                          a.pad_left, a.dilation_h, a.dilation_w, 0, 0,
                          /*paddingCounts=*/false);
}

// TRAINING-STUB: validation of the training kernels (filled in by the kernel
// work).
#define MEMFMT_TRAINING_STUB(NAME)                                             \
  memfmt_status_t memfmt::runtime::validate(KernelCall &,                      \
                                            const args::NAME &) {              \
    return MEMFMT_STATUS_OK;                                                   \
  }
MEMFMT_TRAINING_STUB(convolution_backward)
MEMFMT_TRAINING_STUB(linear_backward)
#undef MEMFMT_TRAINING_STUB

//===----------------------------------------------------------------------===//
// Training kernels: fill, batch norm, threshold and average-pool gradients,
// cross-entropy, SGD
//===----------------------------------------------------------------------===//

namespace {

/// A tensor argument with its name and element size, for overlap checks;
/// a null view is an argument the call does not use.
struct Operand {
  const TensorView *view = nullptr;
  const char *name = "";
  size_t elementSize = sizeof(float);
};

/// The byte range [first, last) that `t`'s elements span (empty for no
/// elements).
std::pair<uintptr_t, uintptr_t> byteRange(const Operand &t) {
  const TensorView &v = *t.view;
  if (v.numElements() == 0)
    return {0, 0};
  int64_t low = 0, high = 0;
  for (int64_t d = 0; d < v.rank; ++d) {
    int64_t reach = (v.sizes[d] - 1) * v.strides[d];
    (reach < 0 ? low : high) += reach;
  }
  auto base = reinterpret_cast<uintptr_t>(v.data);
  auto size = static_cast<int64_t>(t.elementSize);
  return {base + low * size, base + (high + 1) * size};
}

/// Output `out` must not overlap tensor `other` (an input or another
/// output); when `inPlace`, it may be `other` exactly (same address, shape
/// and strides). Overlap is judged by the byte ranges the two span, so
/// interleaved views of one buffer count as overlapping.
memfmt_status_t checkApart(KernelCall &call, const Operand &out,
                           const Operand &other, bool inPlace = false) {
  auto [outLow, outHigh] = byteRange(out);
  auto [low, high] = byteRange(other);
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
  MEMFMT_CHECK(checkChannelsFirst(call, a.input, "input"));
  MEMFMT_CHECK(
      checkShape(call, a.output, "output", a.input, " (the input's shape)"));
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
  return checkAllApart(call,
                       {{&a.input, "input"},
                        {&a.weight, "weight"},
                        {&a.bias, "bias"},
                        {&a.running_mean, "running_mean"},
                        {&a.running_var, "running_var"}},
                       {{&a.output, "output"},
                        {&a.save_mean, "save_mean"},
                        {&a.save_invstd, "save_invstd"},
                        {&a.running_mean_out, "running_mean_out"},
                        {&a.running_var_out, "running_var_out"}},
                       inPlace);
}

memfmt_status_t
memfmt::runtime::validate(KernelCall &call,
                          const args::native_batch_norm_backward &a) {
  MEMFMT_CHECK(checkFlag(call, a.has_grad_input, "has_grad_input"));
  MEMFMT_CHECK(checkFlag(call, a.has_grad_weight, "has_grad_weight"));
  MEMFMT_CHECK(checkFlag(call, a.has_grad_bias, "has_grad_bias"));
  MEMFMT_CHECK(checkChannelsFirst(call, a.input, "input"));
  MEMFMT_CHECK(checkShape(call, a.grad_out, "grad_out", a.input,
                          " (the input's shape)"));
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
  return checkAllApart(
      call,
      {{&a.grad_out, "grad_out"},
       {&a.input, "input"},
       {&a.weight, "weight"},
       {&a.save_mean, "save_mean"},
       {&a.save_invstd, "save_invstd"}},
      {a.has_grad_input ? Operand{&a.grad_input, "grad_input"} : absent,
       a.has_grad_weight ? Operand{&a.grad_weight, "grad_weight"} : absent,
       a.has_grad_bias ? Operand{&a.grad_bias, "grad_bias"} : absent});
}

memfmt_status_t memfmt::runtime::validate(KernelCall &call,
                                          const args::threshold_backward &a) {
  MEMFMT_CHECK(checkShape(call, a.grad_output, "grad_output", a.self,
                          " (self's shape)"));
  MEMFMT_CHECK(
      checkShape(call, a.grad_input, "grad_input", a.self, " (self's shape)"));
  return checkAllApart(call,
                       {{&a.grad_output, "grad_output"}, {&a.self, "self"}},
                       {{&a.grad_input, "grad_input"}});
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
  if (a.has_step)
    MEMFMT_CHECK(checkRank(call, a.step, "step", 0));
  // Without momentum the buffers are neither read nor written, and without
  // has_step the step is not read: those are not checked for overlap.
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
       a.has_step ? Operand{&a.step, "step", sizeof(int64_t)} : absent},
      {{&a.param_out, "param_out"},
       buffered ? Operand{&a.momentum_buffer_out, "momentum_buffer_out"}
                : absent},
      inPlace);
}
