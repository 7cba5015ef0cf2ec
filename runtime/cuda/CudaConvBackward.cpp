//===- CudaConvBackward.cpp - convolution_backward on cuDNN ---------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The gradients of a convolution through cuDNN, in NHWC or NCHW as the
// forward (CudaConv.cpp):
//  1. The format follows the input (NHWC for a channels-last model); where
//     cuDNN has no algorithm in it, the other one. grad_output, input and
//     weight that are not packed in the format are copied to packed
//     scratch tensors, and gradients are computed into packed scratch and
//     copied out when their buffer is not packed.
//  2. The backward-data and backward-filter algorithms are chosen once per
//     shape (cudnnFind..., or the heuristics with MEMFMT_CUDNN_ALGO=
//     heuristic), the fastest that fits the workspace limit, FMA math for
//     f32 unless TF32 is allowed; so the first step chooses and later steps
//     and graph captures allocate nothing.
//  3. grad_weight first (it reads the input and grad_output), then
//     grad_input (weight and grad_output), then grad_bias
//     (cudnnConvolutionBackwardBias, the sum of grad_output over N, H, W).
//     A gradient whose flag is off is not computed.
//  4. A bf16 or f16 step (f32 master weights) runs cuDNN in that type with
//     f32 accumulation; cuDNN writes the weight and bias gradients in it,
//     which are widened into their f32 outputs, as PyTorch's autocast
//     accumulates the 16-bit gradients of its 16-bit weight copies. (The CPU
//     backend's oneDNN writes them in f32 directly.)
// cuDNN's descriptor has one padding per dim, so an asymmetric padding is
// reported as not supported on CUDA yet (torchvision's CNNs pad
// symmetrically).
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "CudaKernels.h"

#include <algorithm>
#include <climits>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cuda;

namespace {

/// The first usable candidate of a cudnnFind/Get result list: status
/// success, workspace within `limit`, FMA math where `exactF32`. Returns the
/// index or -1, and appends to `tried` why candidates were skipped.
template <typename Perf>
int firstUsable(const std::vector<Perf> &perf, int returned, bool exactF32,
                int64_t limit, std::string &tried) {
  for (int i = 0; i < returned; ++i) {
    const Perf &p = perf[static_cast<size_t>(i)];
    if (p.status != CUDNN_STATUS_SUCCESS)
      continue;
    if (static_cast<int64_t>(p.memory) > limit) {
      tried += " algorithm " + std::to_string(int(p.algo)) + " needs " +
               std::to_string(p.memory) + " bytes;";
      continue;
    }
    if (exactF32 && p.mathType == CUDNN_TENSOR_OP_MATH)
      continue;
    return i;
  }
  return -1;
}

} // namespace

memfmt_status_t CudaBackend::selectConvBackward(ErrorSink &call,
                                                const std::vector<int64_t> &key,
                                                ConvChoice &choice, Elem elem) {
  if (memfmt_status_t s = describeConv(call, key, choice, elem))
    return s;
  const bool exactF32 = elem == Elem::F32 && key[kKeyTf32] == 0;
  std::string tried;

  int count = 0;
  MEMFMT_CUDNN_TRY(
      call, cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnn, &count));
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> data(
      static_cast<size_t>(std::max(count, 1)));
  int returned = 0;
  if (heuristicAlgorithms)
    MEMFMT_CUDNN_TRY(call, cudnnGetConvolutionBackwardDataAlgorithm_v7(
                               cudnn, choice.w, choice.y, choice.conv, choice.x,
                               count, &returned, data.data()));
  else
    MEMFMT_CUDNN_TRY(call, cudnnFindConvolutionBackwardDataAlgorithm(
                               cudnn, choice.w, choice.y, choice.conv, choice.x,
                               count, &returned, data.data()));
  int d = firstUsable(data, returned, exactF32, options.workspaceLimit, tried);
  if (d < 0)
    return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                     "cuDNN has no usable backward-data algorithm for this "
                     "convolution (" +
                         std::to_string(returned) + " candidates;" + tried +
                         ")");
  choice.dataAlgo = data[size_t(d)].algo;
  choice.dataMath = exactF32 ? CUDNN_FMA_MATH : data[size_t(d)].mathType;

  MEMFMT_CUDNN_TRY(
      call, cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnn, &count));
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> filter(
      static_cast<size_t>(std::max(count, 1)));
  if (heuristicAlgorithms)
    MEMFMT_CUDNN_TRY(call, cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                               cudnn, choice.x, choice.y, choice.conv, choice.w,
                               count, &returned, filter.data()));
  else
    MEMFMT_CUDNN_TRY(call, cudnnFindConvolutionBackwardFilterAlgorithm(
                               cudnn, choice.x, choice.y, choice.conv, choice.w,
                               count, &returned, filter.data()));
  int f =
      firstUsable(filter, returned, exactF32, options.workspaceLimit, tried);
  if (f < 0)
    return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                     "cuDNN has no usable backward-filter algorithm for this "
                     "convolution (" +
                         std::to_string(returned) + " candidates;" + tried +
                         ")");
  choice.filterAlgo = filter[size_t(f)].algo;
  choice.filterMath = exactF32 ? CUDNN_FMA_MATH : filter[size_t(f)].mathType;

  // One workspace serves both calls.
  size_t dataBytes = 0, filterBytes = 0;
  MEMFMT_CUDNN_TRY(call,
                   cudnnSetConvolutionMathType(choice.conv, choice.dataMath));
  MEMFMT_CUDNN_TRY(call, cudnnGetConvolutionBackwardDataWorkspaceSize(
                             cudnn, choice.w, choice.y, choice.conv, choice.x,
                             choice.dataAlgo, &dataBytes));
  MEMFMT_CUDNN_TRY(call,
                   cudnnSetConvolutionMathType(choice.conv, choice.filterMath));
  MEMFMT_CUDNN_TRY(call, cudnnGetConvolutionBackwardFilterWorkspaceSize(
                             cudnn, choice.x, choice.y, choice.conv, choice.w,
                             choice.filterAlgo, &filterBytes));
  choice.workspace = std::max({dataBytes, filterBytes, data[size_t(d)].memory,
                               filter[size_t(f)].memory});

  MEMFMT_CUDNN_TRY(call, cudnnCreateTensorDescriptor(&choice.biasGrad));
  MEMFMT_CUDNN_TRY(
      call, cudnnSetTensor4dDescriptor(choice.biasGrad, CUDNN_TENSOR_NCHW,
                                       cudnnType(elem), 1, int(key[7]), 1, 1));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::convolution_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  if (a.pad_top != a.pad_bottom || a.pad_left != a.pad_right)
    return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                     "an asymmetric padding in the convolution gradient is "
                     "not implemented on CUDA yet");
  for (const TensorView *t : {&a.grad_output, &a.input, &a.weight})
    for (int d = 0; d < 4; ++d)
      if (t->sizes[d] > INT_MAX / 2)
        return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                         "cuDNN takes dimensions below 2^30; got " +
                             formatShape(*t));
  // Nothing to sum over: the requested gradients are zeros.
  if (a.grad_output.numElements() == 0 || a.input.numElements() == 0 ||
      a.weight.numElements() == 0) {
    auto zero = [&](bool wanted, const TensorView &t,
                    Elem elem) -> memfmt_status_t {
      if (!wanted || t.numElements() == 0)
        return MEMFMT_STATUS_OK;
      const int64_t *strides[1] = {t.strides};
      StridedPlan<1> plan =
          planStrided<1>(static_cast<int>(t.rank), t.sizes, strides);
      MEMFMT_LAUNCH_TRY(call, "the fill kernel",
                        launchFill(elem, plan, t.data, 0.0f, stream));
      return MEMFMT_STATUS_OK;
    };
    if (memfmt_status_t s =
            zero(a.has_grad_input, a.grad_input, elemOf(call.dtype())))
      return s;
    if (memfmt_status_t s = zero(a.has_grad_weight, a.grad_weight, Elem::F32))
      return s;
    if (memfmt_status_t s = zero(a.has_grad_bias, a.grad_bias, Elem::F32))
      return s;
    call.setImpl("zero");
    return MEMFMT_STATUS_OK;
  }
  ConvFormat preferred =
      isPacked(ConvFormat::Nhwc, a.input.sizes, a.input.strides) &&
              !isPacked(ConvFormat::Nchw, a.input.sizes, a.input.strides)
          ? ConvFormat::Nhwc
          : ConvFormat::Nchw;
  ConvFormat other =
      preferred == ConvFormat::Nhwc ? ConvFormat::Nchw : ConvFormat::Nhwc;
  std::string why, first;
  bool unsupported = false;
  if (memfmt_status_t s = runConvBackward(call, a, preferred, unsupported, why))
    return s;
  if (!unsupported)
    return MEMFMT_STATUS_OK;
  first = why;
  if (memfmt_status_t s = runConvBackward(call, a, other, unsupported, why))
    return s;
  if (!unsupported)
    return MEMFMT_STATUS_OK;
  return call.fail(
      MEMFMT_STATUS_UNSUPPORTED,
      std::string(preferred == ConvFormat::Nhwc ? "NHWC" : "NCHW") + ": " +
          first + "; " + (other == ConvFormat::Nhwc ? "NHWC" : "NCHW") + ": " +
          why);
}

memfmt_status_t CudaBackend::runConvBackward(
    KernelCall &call, const args::convolution_backward &a, ConvFormat format,
    bool &unsupported, std::string &why) {
  unsupported = false;
  const Elem elem = elemOf(call.dtype());
  const size_t esize = elemSize(elem);
  const int64_t *x = a.input.sizes, *w = a.weight.sizes;
  std::vector<int64_t> key = {int64_t(elem),
                              int64_t(format),
                              options.allowTf32 ? 1 : 0,
                              x[0],
                              x[1],
                              x[2],
                              x[3],
                              w[0],
                              w[1],
                              w[2],
                              w[3],
                              a.pad_top,
                              a.pad_left,
                              a.stride_h,
                              a.stride_w,
                              a.dilation_h,
                              a.dilation_w,
                              a.groups};
  ConvChoice *found = nullptr;
  if (memfmt_status_t s =
          chooseConv(call, key, elem, /*backward=*/true, a.grad_output.sizes,
                     found, unsupported, why))
    return s;
  if (unsupported)
    return MEMFMT_STATUS_OK;
  ConvChoice &choice = *found;

  // The operands, packed in `format` (scratch copies where they are not).
  bool repacked = false;
  auto packed = [&](const TensorView &t, ScratchSlot slot,
                    TensorView &out) -> memfmt_status_t {
    out = t;
    if (isPacked(format, t.sizes, t.strides))
      return MEMFMT_STATUS_OK;
    void *buffer = nullptr;
    if (memfmt_status_t s = scratch(
            call, slot, static_cast<size_t>(t.numElements()) * esize, &buffer))
      return s;
    out = packedView(buffer, t.sizes, format);
    repacked = true;
    return MEMFMT_STATUS_OK;
  };
  auto packedCopy = [&](const TensorView &t, ScratchSlot slot,
                        TensorView &out) -> memfmt_status_t {
    if (memfmt_status_t s = packed(t, slot, out))
      return s;
    const char *impl = nullptr;
    return out.data == t.data ? MEMFMT_STATUS_OK
                              : copyTensor(call, elem, t, out, &impl);
  };
  TensorView dy, in, wt;
  if (memfmt_status_t s = packedCopy(a.grad_output, kConvOutput, dy))
    return s;
  void *workspace = nullptr;
  if (choice.workspace > 0)
    if (memfmt_status_t s =
            scratch(call, kConvWorkspace, choice.workspace, &workspace))
      return s;
  float alpha = 1.0f, beta = 0.0f;
  const char *impl = nullptr;

  if (a.has_grad_weight) {
    TensorView dw;
    if (memfmt_status_t s = packedCopy(a.input, kConvInput, in))
      return s;
    // cuDNN writes the filter gradient in the data type: an f32 grad_weight
    // of a 16-bit step is converted from packed scratch.
    if (elem == Elem::F32) {
      if (memfmt_status_t s = packed(a.grad_weight, kConvGradWeight, dw))
        return s;
    } else {
      void *buffer = nullptr;
      if (memfmt_status_t s =
              scratch(call, kConvGradWeight,
                      static_cast<size_t>(a.grad_weight.numElements()) * esize,
                      &buffer))
        return s;
      dw = packedView(buffer, a.grad_weight.sizes, format);
    }
    MEMFMT_CUDNN_TRY(
        call, cudnnSetConvolutionMathType(choice.conv, choice.filterMath));
    MEMFMT_CUDNN_TRY(call,
                     cudnnConvolutionBackwardFilter(
                         cudnn, &alpha, choice.x, in.data, choice.y, dy.data,
                         choice.conv, choice.filterAlgo, workspace,
                         choice.workspace, &beta, choice.w, dw.data));
    if (dw.data != a.grad_weight.data)
      if (memfmt_status_t s =
              convertTensor(call, elem, Elem::F32, dw, a.grad_weight, &impl))
        return s;
  }
  if (a.has_grad_input) {
    TensorView dx;
    if (memfmt_status_t s = packedCopy(a.weight, kConvWeight, wt))
      return s;
    if (memfmt_status_t s = packed(a.grad_input, kConvGradInput, dx))
      return s;
    MEMFMT_CUDNN_TRY(call,
                     cudnnSetConvolutionMathType(choice.conv, choice.dataMath));
    MEMFMT_CUDNN_TRY(call, cudnnConvolutionBackwardData(
                               cudnn, &alpha, choice.w, wt.data, choice.y,
                               dy.data, choice.conv, choice.dataAlgo, workspace,
                               choice.workspace, &beta, choice.x, dx.data));
    if (dx.data != a.grad_input.data)
      if (memfmt_status_t s = copyTensor(call, elem, dx, a.grad_input, &impl))
        return s;
  }
  if (a.has_grad_bias) {
    if (a.grad_bias.sizes[0] > 1 && a.grad_bias.strides[0] != 1)
      return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                       "needs a dense grad_bias on CUDA; got strides " +
                           formatStrides(a.grad_bias));
    // As the filter gradient: in the data type, then widened.
    void *db = a.grad_bias.data;
    if (elem != Elem::F32)
      if (memfmt_status_t s =
              scratch(call, kBatchNormParams,
                      static_cast<size_t>(a.grad_bias.sizes[0]) * esize, &db))
        return s;
    MEMFMT_CUDNN_TRY(call, cudnnConvolutionBackwardBias(cudnn, &alpha, choice.y,
                                                        dy.data, &beta,
                                                        choice.biasGrad, db));
    if (db != a.grad_bias.data) {
      TensorView narrow = a.grad_bias;
      narrow.data = db;
      narrow.strides[0] = 1;
      if (memfmt_status_t s =
              convertTensor(call, elem, Elem::F32, narrow, a.grad_bias, &impl))
        return s;
    }
  }
  static const char *const names[2][2] = {
      {"cudnn_nchw", "cudnn_nchw_repacked"},
      {"cudnn_nhwc", "cudnn_nhwc_repacked"}};
  call.setImpl(names[format == ConvFormat::Nhwc][repacked]);
  return MEMFMT_STATUS_OK;
}
