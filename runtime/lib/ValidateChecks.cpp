//===- ValidateChecks.cpp - The checks kernel validators share ------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The definitions of ValidateChecks.h's checks (the templates are there).
//
//===----------------------------------------------------------------------===//

#include "ValidateChecks.h"

#include "ElementwiseMath.h"

#include <cmath>

using namespace memfmt::runtime;

namespace memfmt::runtime::validation {

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

memfmt_status_t checkEltwiseFunction(KernelCall &call, int64_t op,
                                     double alpha, double beta) {
  if (!math::isEltwiseOp(op))
    return invalid(call, "op " + std::to_string(op) +
                             " is not a memfmt_eltwise_op_t (1 to 7)");
  if (std::isnan(alpha) || std::isnan(beta))
    return invalid(call, "alpha and beta must not be NaN");
  return MEMFMT_STATUS_OK;
}

memfmt_status_t checkLayerNormInput(KernelCall &call, const TensorView &input,
                                    double eps) {
  if (input.rank < 1)
    return invalid(call, "input has rank 0 (shape " + formatShape(input) +
                             "), expected at least 1 (the last dim is "
                             "normalized)");
  if (!std::isfinite(eps) || eps < 0)
    return invalid(call, "eps is " + std::to_string(eps) +
                             ", expected a finite value >= 0");
  return MEMFMT_STATUS_OK;
}

memfmt_status_t checkAttribute(KernelCall &call, int64_t value,
                               const char *name, int64_t minimum) {
  if (value >= minimum && value <= kMaxAttribute)
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(name) + " is " + std::to_string(value) +
                           ", expected a value in [" + std::to_string(minimum) +
                           ", " + std::to_string(kMaxAttribute) + "]");
}

TensorView shapeOf(std::initializer_list<int64_t> sizes) {
  TensorView view;
  for (int64_t size : sizes)
    view.sizes[view.rank++] = size;
  return view;
}

memfmt_status_t checkDistinct(KernelCall &call, const TensorView &t,
                              const char *name) {
  if (t.hasDistinctElements())
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(name) + " has overlapping elements " +
                           describe(t) + "; outputs need distinct addresses");
}

memfmt_status_t checkNotAliased(KernelCall &call, const TensorView &in,
                                const char *inName, const TensorView &out,
                                const char *outName) {
  if (in.data != out.data || in.numElements() == 0 || out.numElements() == 0)
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(outName) + " is the same buffer as " +
                           inName + "; this kernel cannot run in place");
}

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

memfmt_status_t checkMaxPoolAttributes(KernelCall &call, int64_t kernelH,
                                       int64_t kernelW, int64_t strideH,
                                       int64_t strideW, int64_t padTop,
                                       int64_t padLeft, int64_t dilationH,
                                       int64_t dilationW) {
  MEMFMT_CHECK(checkAttribute(call, kernelH, "kernel_h", 1));
  MEMFMT_CHECK(checkAttribute(call, kernelW, "kernel_w", 1));
  MEMFMT_CHECK(checkAttribute(call, strideH, "stride_h", 1));
  MEMFMT_CHECK(checkAttribute(call, strideW, "stride_w", 1));
  MEMFMT_CHECK(checkAttribute(call, padTop, "pad_top", 0));
  MEMFMT_CHECK(checkAttribute(call, padLeft, "pad_left", 0));
  MEMFMT_CHECK(checkAttribute(call, dilationH, "dilation_h", 1));
  return checkAttribute(call, dilationW, "dilation_w", 1);
}

memfmt_status_t checkMaxPool(KernelCall &call, const TensorView &input,
                             const TensorView &output, int64_t kernelH,
                             int64_t kernelW, int64_t strideH, int64_t strideW,
                             int64_t padTop, int64_t padLeft, int64_t dilationH,
                             int64_t dilationW) {
  MEMFMT_CHECK(checkPoolShapes(call, input, output));
  MEMFMT_CHECK(checkMaxPoolAttributes(call, kernelH, kernelW, strideH, strideW,
                                      padTop, padLeft, dilationH, dilationW));
  MEMFMT_CHECK(checkNotAliased(call, input, "input", output, "output"));
  return checkPoolWindows(call, input, output, kernelH, kernelW, strideH,
                          strideW, padTop, padLeft, dilationH, dilationW, 0, 0,
                          /*paddingCounts=*/false);
}

memfmt_status_t checkChannelsFirst(KernelCall &call, const TensorView &t,
                                   const char *name) {
  if (t.rank >= 2)
    return MEMFMT_STATUS_OK;
  return invalid(call, std::string(name) + " has rank " +
                           std::to_string(t.rank) + " (shape " +
                           formatShape(t) +
                           "), expected at least 2 (channels in dim 1)");
}

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

memfmt_status_t checkLinearShapes(KernelCall &call, const TensorView &input,
                                  const TensorView &weight,
                                  const TensorView &output,
                                  const char *outputName) {
  MEMFMT_CHECK(checkRank(call, input, "input", 2));
  MEMFMT_CHECK(checkRank(call, weight, "weight", 2));
  MEMFMT_CHECK(checkRank(call, output, outputName, 2));
  if (weight.sizes[1] != input.sizes[1])
    return invalid(call, "weight has shape " + formatShape(weight) +
                             ", but input " + formatShape(input) + " needs " +
                             std::to_string(input.sizes[1]) +
                             " features in dim 1");
  return checkShape(call, output, outputName,
                    shapeOf({input.sizes[0], weight.sizes[0]}), [&] {
                      return " for input " + formatShape(input) +
                             " and weight " + formatShape(weight);
                    });
}

} // namespace memfmt::runtime::validation
