//===- CudaConv.cpp - conv2d on cuDNN -------------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// conv2d through cuDNN's convolution forward, in NHWC or NCHW:
//  1. The format follows the output (CudaPlan.h, chooseConvFormat): NHWC for
//     a channels-last model, NCHW for a contiguous one; where cuDNN has no
//     algorithm in that format (an element type or channel count its
//     kernels of that format do not take), the other format. Input, weight
//     and output must be packed in the format; a tensor that is not (a
//     strided view, a weight in the other layout) is copied to a packed
//     scratch tensor, and an asymmetric padding (which cuDNN's descriptor
//     cannot express) pads the input into scratch memory first.
//  2. The algorithm is chosen once per shape (the cache key is every
//     dimension, attribute, the element type, the format and TF32) by
//     cudnnFindConvolutionForwardAlgorithm (timed trials, the default) or
//     cudnnGetConvolutionForwardAlgorithm_v7 (MEMFMT_CUDNN_ALGO=heuristic),
//     keeping the fastest one whose workspace fits the context's limit.
//     Arithmetic: f32 uses FMA math unless TF32 is allowed (then tensor
//     cores may run TF32, as PyTorch's allow_tf32); f16 and bf16 use tensor
//     cores with f32 accumulation.
//  3. The epilogue: with a bias and a packed output, cuDNN's fused
//     convolution (cudnnConvolutionBiasActivationForward) adds the bias,
//     the residual and relu as it writes the output (any other activation
//     runs after, in place: the eltwise kernel). Where cuDNN refuses
//     that for a shape (remembered per shape) or MEMFMT_CUDA_FUSED_CONV=0,
//     a residual that is the output itself is accumulated by cuDNN (beta =
//     1), and bias, any other residual, relu and the copy out of a scratch
//     output run as one per-channel kernel.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "CudaKernels.h"

#include <algorithm>
#include <climits>

#if defined(__GNUC__) || defined(__clang__)
// cuDNN 9 marks the filter descriptor API deprecated (in favour of its graph
// API) but keeps it; the legacy convolution API needs it.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

using namespace memfmt::runtime;
using namespace memfmt::runtime::cuda;

cudnnDataType_t cuda::cudnnType(Elem elem) {
  switch (elem) {
  case Elem::F16:
    return CUDNN_DATA_HALF;
  case Elem::BF16:
    return CUDNN_DATA_BFLOAT16;
  default:
    return CUDNN_DATA_FLOAT;
  }
}

TensorView cuda::packedView(void *data, const int64_t *sizes,
                            ConvFormat format) {
  TensorView view;
  view.data = data;
  view.rank = 4;
  for (int d = 0; d < 4; ++d)
    view.sizes[d] = sizes[d];
  packedStrides(format, sizes, view.strides);
  return view;
}

namespace {

cudnnTensorFormat_t cudnnFormat(ConvFormat format) {
  return format == ConvFormat::Nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

} // namespace

memfmt_status_t CudaBackend::describeConv(ErrorSink &call,
                                          const std::vector<int64_t> &key,
                                          ConvChoice &choice, Elem elem) {
  if (capturing)
    return call.fail(MEMFMT_STATUS_INVALID_ARGUMENT,
                     "a convolution shape was first seen during a CUDA graph "
                     "capture; run the model once before capturing it (its "
                     "algorithm is chosen then)");
  ConvFormat format = static_cast<ConvFormat>(key[kKeyFormat]);
  bool tf32 = key[kKeyTf32] != 0;
  const int64_t *k = key.data() + 3;
  int n = int(k[0]), c = int(k[1]), h = int(k[2]), w = int(k[3]);
  int outC = int(k[4]), inPerGroup = int(k[5]), r = int(k[6]), s = int(k[7]);
  int padH = int(k[8]), padW = int(k[9]), strideH = int(k[10]),
      strideW = int(k[11]), dilH = int(k[12]), dilW = int(k[13]),
      groups = int(k[14]);
  cudnnDataType_t type = cudnnType(elem);

  MEMFMT_CUDNN_TRY(call, cudnnCreateTensorDescriptor(&choice.x));
  MEMFMT_CUDNN_TRY(call, cudnnCreateTensorDescriptor(&choice.y));
  MEMFMT_CUDNN_TRY(call, cudnnCreateFilterDescriptor(&choice.w));
  MEMFMT_CUDNN_TRY(call, cudnnCreateConvolutionDescriptor(&choice.conv));
  MEMFMT_CUDNN_TRY(call, cudnnSetTensor4dDescriptor(
                             choice.x, cudnnFormat(format), type, n, c, h, w));
  MEMFMT_CUDNN_TRY(call, cudnnSetFilter4dDescriptor(choice.w, type,
                                                    cudnnFormat(format), outC,
                                                    inPerGroup, r, s));
  MEMFMT_CUDNN_TRY(call, cudnnSetConvolution2dDescriptor(
                             choice.conv, padH, padW, strideH, strideW, dilH,
                             dilW, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  MEMFMT_CUDNN_TRY(call, cudnnSetConvolutionGroupCount(choice.conv, groups));
  // FMA math keeps f32 exact to f32 (no TF32); tensor-op math lets cuDNN use
  // tensor cores (TF32 for f32 when allowed, f16/bf16 with f32 accumulation).
  bool exactF32 = elem == Elem::F32 && !tf32;
  cudnnMathType_t requested = exactF32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
  MEMFMT_CUDNN_TRY(call, cudnnSetConvolutionMathType(choice.conv, requested));

  int outN = 0, outCh = 0, outH = 0, outW = 0;
  MEMFMT_CUDNN_TRY(
      call, cudnnGetConvolution2dForwardOutputDim(
                choice.conv, choice.x, choice.w, &outN, &outCh, &outH, &outW));
  MEMFMT_CUDNN_TRY(call,
                   cudnnSetTensor4dDescriptor(choice.y, cudnnFormat(format),
                                              type, outN, outCh, outH, outW));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::selectConv(ErrorSink &call,
                                        const std::vector<int64_t> &key,
                                        ConvChoice &choice, Elem elem) {
  if (memfmt_status_t s = describeConv(call, key, choice, elem))
    return s;
  const bool exactF32 = elem == Elem::F32 && key[kKeyTf32] == 0;
  int maxCount = 0;
  MEMFMT_CUDNN_TRY(
      call, cudnnGetConvolutionForwardAlgorithmMaxCount(cudnn, &maxCount));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(
      static_cast<size_t>(std::max(maxCount, 1)));
  int returned = 0;
  if (heuristicAlgorithms)
    MEMFMT_CUDNN_TRY(call, cudnnGetConvolutionForwardAlgorithm_v7(
                               cudnn, choice.x, choice.w, choice.conv, choice.y,
                               maxCount, &returned, perf.data()));
  else
    MEMFMT_CUDNN_TRY(call, cudnnFindConvolutionForwardAlgorithm(
                               cudnn, choice.x, choice.w, choice.conv, choice.y,
                               maxCount, &returned, perf.data()));
  // Results come fastest first; take the first that ran, fits the
  // workspace limit and respects the math type.
  std::string tried;
  for (int i = 0; i < returned; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t &p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS)
      continue;
    if (static_cast<int64_t>(p.memory) > options.workspaceLimit) {
      tried += " algorithm " + std::to_string(int(p.algo)) + " needs " +
               std::to_string(p.memory) + " bytes;";
      continue;
    }
    if (exactF32 && p.mathType == CUDNN_TENSOR_OP_MATH)
      continue;
    cudnnMathType_t math = exactF32 ? CUDNN_FMA_MATH : p.mathType;
    if (cudnnSetConvolutionMathType(choice.conv, math) != CUDNN_STATUS_SUCCESS)
      continue;
    size_t workspace = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(
            cudnn, choice.x, choice.w, choice.conv, choice.y, p.algo,
            &workspace) != CUDNN_STATUS_SUCCESS)
      continue;
    choice.algo = p.algo;
    choice.math = math;
    choice.workspace = std::max(workspace, p.memory);
    return MEMFMT_STATUS_OK;
  }
  return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                   "cuDNN has no usable forward algorithm for this "
                   "convolution (" +
                       std::to_string(returned) + " candidates;" + tried +
                       " workspace limit " +
                       std::to_string(options.workspaceLimit) + " bytes)");
}

memfmt_status_t CudaBackend::chooseConv(KernelCall &call,
                                        const std::vector<int64_t> &key,
                                        Elem elem, bool backward,
                                        const int64_t *outSizes,
                                        ConvChoice *&choice, bool &unsupported,
                                        std::string &why) {
  unsupported = false;
  auto &cache = backward ? convBackwardCache : convCache;
  auto found = cache.find(key);
  if (found == cache.end()) {
    auto made = std::make_unique<ConvChoice>();
    std::string message;
    ErrorSink sink{message};
    memfmt_status_t s = backward ? selectConvBackward(sink, key, *made, elem)
                                 : selectConv(sink, key, *made, elem);
    if (s == MEMFMT_STATUS_UNSUPPORTED)
      made->unsupported = message; // The caller tries the other format.
    else if (s != MEMFMT_STATUS_OK)
      return call.fail(s, message);
    found = cache.emplace(key, std::move(made)).first;
  }
  choice = found->second.get();
  if (!choice->unsupported.empty()) {
    unsupported = true;
    why = choice->unsupported;
    return MEMFMT_STATUS_OK;
  }
  // cuDNN's output size must be ours (Validate.cpp's formula).
  int outDims[4] = {};
  MEMFMT_CUDNN_TRY(call, cudnnGetConvolution2dForwardOutputDim(
                             choice->conv, choice->x, choice->w, &outDims[0],
                             &outDims[1], &outDims[2], &outDims[3]));
  for (int d = 0; d < 4; ++d)
    if (outDims[d] != outSizes[d])
      return call.fail(MEMFMT_STATUS_INTERNAL,
                       "cuDNN computes an output of size " +
                           std::to_string(outDims[d]) + " in dim " +
                           std::to_string(d) + ", expected " +
                           std::to_string(outSizes[d]));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::conv2d &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  if (a.output.numElements() == 0) {
    call.setImpl("empty");
    return MEMFMT_STATUS_OK;
  }
  // The output's format first; where cuDNN has no algorithm for it (an
  // element type or channel count its kernels of that format do not take),
  // the other one through packed copies.
  ConvFormat preferred =
      chooseConvFormat(a.output.sizes, a.output.strides, a.input.sizes,
                       a.input.strides, a.weight.sizes, a.weight.strides);
  ConvFormat other =
      preferred == ConvFormat::Nhwc ? ConvFormat::Nchw : ConvFormat::Nhwc;
  std::string why;
  bool unsupported = false;
  if (memfmt_status_t s = runConv(call, a, preferred, unsupported, why))
    return s;
  if (!unsupported)
    return applyActivation(call, a.output, a.activation, a.activation_alpha,
                           a.activation_beta);
  std::string first = why;
  if (memfmt_status_t s = runConv(call, a, other, unsupported, why))
    return s;
  if (!unsupported)
    return applyActivation(call, a.output, a.activation, a.activation_alpha,
                           a.activation_beta);
  return call.fail(
      MEMFMT_STATUS_UNSUPPORTED,
      std::string(preferred == ConvFormat::Nhwc ? "NHWC" : "NCHW") + ": " +
          first + "; " + (other == ConvFormat::Nhwc ? "NHWC" : "NCHW") + ": " +
          why);
}

memfmt_status_t CudaBackend::runConv(KernelCall &call, const args::conv2d &a,
                                     ConvFormat format, bool &unsupported,
                                     std::string &why) {
  unsupported = false;
  const TensorView &out = a.output;
  Elem elem = elemOf(call.dtype());
  size_t esize = elemSize(elem);
  bool repacked = false;

  // cuDNN takes int dimensions.
  for (const TensorView *t : {&a.input, &a.weight, &out})
    for (int d = 0; d < 4; ++d)
      if (t->sizes[d] > INT_MAX / 2)
        return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                         "cuDNN takes dimensions below 2^30; got " +
                             formatShape(*t));

  // The output, packed: the real one or scratch.
  TensorView y = out;
  bool outputPacked = isPacked(format, out.sizes, out.strides);
  if (!outputPacked) {
    void *buffer = nullptr;
    if (memfmt_status_t s =
            scratch(call, kConvOutput,
                    static_cast<size_t>(out.numElements()) * esize, &buffer))
      return s;
    y = packedView(buffer, out.sizes, format);
    repacked = true;
  }

  // A convolution over no input channels is its bias and residual: zeros
  // in scratch memory (the output may hold the residual), then the
  // epilogue.
  if (a.input.sizes[1] == 0 || a.weight.numElements() == 0 ||
      a.input.numElements() == 0) {
    size_t bytes = static_cast<size_t>(out.numElements()) * esize;
    void *buffer = nullptr;
    if (memfmt_status_t s = scratch(call, kConvOutput, bytes, &buffer))
      return s;
    MEMFMT_CUDA_TRY(call, cudaMemsetAsync(buffer, 0, bytes, stream));
    call.setImpl("zero");
    return epilogue(call, elem, out, packedView(buffer, out.sizes, format),
                    a.has_bias ? &a.bias : nullptr,
                    a.has_residual ? &a.residual : nullptr, a.relu != 0);
  }

  // An asymmetric padding (which cuDNN's descriptor cannot express) pads
  // the input into scratch memory, and the convolution runs unpadded.
  bool asymmetric = a.pad_top != a.pad_bottom || a.pad_left != a.pad_right;
  int64_t xSizes[4] = {a.input.sizes[0], a.input.sizes[1], a.input.sizes[2],
                       a.input.sizes[3]};
  int64_t padH = a.pad_top, padW = a.pad_left;
  if (asymmetric) {
    xSizes[2] += a.pad_top + a.pad_bottom;
    xSizes[3] += a.pad_left + a.pad_right;
    padH = padW = 0;
  }

  // The algorithm, once per shape, before any copy is made.
  const int64_t *w = a.weight.sizes;
  std::vector<int64_t> key = {int64_t(elem),
                              int64_t(format),
                              options.allowTf32 ? 1 : 0,
                              xSizes[0],
                              xSizes[1],
                              xSizes[2],
                              xSizes[3],
                              w[0],
                              w[1],
                              w[2],
                              w[3],
                              padH,
                              padW,
                              a.stride_h,
                              a.stride_w,
                              a.dilation_h,
                              a.dilation_w,
                              a.groups};
  ConvChoice *choice = nullptr;
  if (memfmt_status_t s = chooseConv(call, key, elem, /*backward=*/false,
                                     out.sizes, choice, unsupported, why))
    return s;
  if (unsupported)
    return MEMFMT_STATUS_OK;

  // The input, packed (and padded).
  TensorView x = a.input;
  if (asymmetric || !isPacked(format, x.sizes, x.strides)) {
    size_t bytes =
        static_cast<size_t>(xSizes[0] * xSizes[1] * xSizes[2] * xSizes[3]) *
        esize;
    void *buffer = nullptr;
    if (memfmt_status_t s = scratch(call, kConvInput, bytes, &buffer))
      return s;
    TensorView padded = packedView(buffer, xSizes, format);
    TensorView interior = padded;
    if (asymmetric) {
      MEMFMT_CUDA_TRY(call, cudaMemsetAsync(buffer, 0, bytes, stream));
      for (int d = 0; d < 4; ++d)
        interior.sizes[d] = x.sizes[d];
      interior.data =
          static_cast<char *>(buffer) +
          (a.pad_top * padded.strides[2] + a.pad_left * padded.strides[3]) *
              static_cast<int64_t>(esize);
    }
    const char *impl = nullptr;
    if (memfmt_status_t s = copyTensor(call, elem, x, interior, &impl))
      return s;
    x = padded;
    repacked = true;
  }

  // The weight, packed.
  TensorView wt = a.weight;
  if (!isPacked(format, wt.sizes, wt.strides)) {
    void *buffer = nullptr;
    if (memfmt_status_t s =
            scratch(call, kConvWeight,
                    static_cast<size_t>(wt.numElements()) * esize, &buffer))
      return s;
    TensorView packed = packedView(buffer, wt.sizes, format);
    const char *impl = nullptr;
    if (memfmt_status_t s = copyTensor(call, elem, wt, packed, &impl))
      return s;
    wt = packed;
    repacked = true;
  }

  // A residual that is the output itself is accumulated by cuDNN (beta = 1).
  bool residualInPlace =
      a.has_residual && outputPacked && a.residual.sameViewAs(out);
  void *workspace = nullptr;
  if (choice->workspace > 0)
    if (memfmt_status_t s =
            scratch(call, kConvWorkspace, choice->workspace, &workspace))
      return s;
  // [NHWC][repacked][fused]
  static const char *const names[2][2][2] = {
      {{"cudnn_nchw", "cudnn_nchw_fused"},
       {"cudnn_nchw_repacked", "cudnn_nchw_repacked_fused"}},
      {{"cudnn_nhwc", "cudnn_nhwc_fused"},
       {"cudnn_nhwc_repacked", "cudnn_nhwc_repacked_fused"}}};
  const bool nhwc = format == ConvFormat::Nhwc;

  // bias (+ residual) (+ relu) inside cuDNN's fused convolution, where the
  // output is packed, the bias dense and the residual (if any) the output
  // itself or packed like it.
  bool residualPacked = a.has_residual && a.residual.sameLayoutAs(y) &&
                        isPacked(format, a.residual.sizes, a.residual.strides);
  if (fusedConv &&
      choice->fusedFailed[a.relu != 0][a.has_residual != 0].empty() &&
      outputPacked && a.has_bias &&
      (a.bias.sizes[0] <= 1 || a.bias.strides[0] == 1) &&
      (!a.has_residual || residualInPlace || residualPacked)) {
    bool fused = false;
    if (memfmt_status_t s = runFusedConv(call, *choice, elem, format, x, wt, a,
                                         y, workspace, fused))
      return s;
    if (fused) {
      call.setImpl(names[nhwc][repacked][1]);
      return MEMFMT_STATUS_OK;
    }
  }

  float alpha = 1.0f, beta = residualInPlace ? 1.0f : 0.0f;
  MEMFMT_CUDNN_TRY(call, cudnnConvolutionForward(
                             cudnn, &alpha, choice->x, x.data, choice->w,
                             wt.data, choice->conv, choice->algo, workspace,
                             choice->workspace, &beta, choice->y, y.data));

  bool residualLeft = a.has_residual && !residualInPlace;
  if (!outputPacked || a.has_bias || residualLeft || a.relu) {
    if (memfmt_status_t s =
            epilogue(call, elem, out, y, a.has_bias ? &a.bias : nullptr,
                     residualLeft ? &a.residual : nullptr, a.relu != 0))
      return s;
  }
  call.setImpl(names[nhwc][repacked][0]);
  return MEMFMT_STATUS_OK;
}

memfmt_status_t
CudaBackend::runFusedConv(KernelCall &call, ConvChoice &choice, Elem elem,
                          ConvFormat format, const TensorView &x,
                          const TensorView &wt, const args::conv2d &a,
                          const TensorView &y, void *workspace, bool &fused) {
  fused = false;
  // cuDNN applies the identity only after its implicit precomputed GEMM.
  if (!a.relu &&
      choice.algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
    return MEMFMT_STATUS_OK;
  std::string message;
  ErrorSink sink{message};
  // A refusal by cuDNN (of the bias type, the format, the algorithm: "not
  // supported" or a bad parameter) is remembered for the shape and variant,
  // and the separate epilogue runs instead; anything else (out of memory, a
  // lost device, a fault while running) fails the call.
  auto fail = [&](memfmt_status_t status, bool refusal) {
    if (!refusal)
      return call.fail(status, message);
    choice.fusedFailed[a.relu != 0][a.has_residual != 0] = message;
    return MEMFMT_STATUS_OK;
  };
  // The descriptors, once per shape (by the warm-up run at load, never
  // inside a graph capture).
  if (!choice.bias) {
    if (capturing)
      return MEMFMT_STATUS_OK;
    memfmt_status_t s = [&]() -> memfmt_status_t {
      MEMFMT_CUDNN_TRY(sink, cudnnCreateTensorDescriptor(&choice.bias));
      MEMFMT_CUDNN_TRY(sink, cudnnSetTensor4dDescriptor(
                                 choice.bias, cudnnFormat(format),
                                 cudnnType(elem), 1, int(y.sizes[1]), 1, 1));
      // cuDNN's fused convolution takes relu without NaN propagation only
      // (as PyTorch calls it): a NaN sum becomes 0 there, where the
      // separate epilogue keeps it.
      for (auto [desc, mode] :
           {std::pair{&choice.relu, CUDNN_ACTIVATION_RELU},
            std::pair{&choice.identity, CUDNN_ACTIVATION_IDENTITY}}) {
        MEMFMT_CUDNN_TRY(sink, cudnnCreateActivationDescriptor(desc));
        MEMFMT_CUDNN_TRY(sink, cudnnSetActivationDescriptor(
                                   *desc, mode, CUDNN_NOT_PROPAGATE_NAN, 0.0));
      }
      return MEMFMT_STATUS_OK;
    }();
    if (s)
      return fail(s, s == MEMFMT_STATUS_UNSUPPORTED ||
                         s == MEMFMT_STATUS_BACKEND_ERROR);
  }
  // y = act(conv(x, w) + alpha2 * z + bias): z is the residual (the output
  // itself when it is summed in place), unread when alpha2 is 0.
  float alpha1 = 1.0f, alpha2 = a.has_residual ? 1.0f : 0.0f;
  const void *z = a.has_residual ? a.residual.data : y.data;
  cudnnStatus_t status = cudnnConvolutionBiasActivationForward(
      cudnn, &alpha1, choice.x, x.data, choice.w, wt.data, choice.conv,
      choice.algo, workspace, choice.workspace, &alpha2, choice.y, z,
      choice.bias, a.bias.data, a.relu ? choice.relu : choice.identity,
      choice.y, y.data);
  if (status != CUDNN_STATUS_SUCCESS) {
    sink.fail(statusOf(status),
              "cudnnConvolutionBiasActivationForward failed: " +
                  describe(status));
    return fail(statusOf(status),
                statusOf(status) == MEMFMT_STATUS_UNSUPPORTED ||
                    CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_BAD_PARAM);
  }
  fused = true;
  return MEMFMT_STATUS_OK;
}
