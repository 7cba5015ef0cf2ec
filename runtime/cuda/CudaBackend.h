//===- CudaBackend.h - The CUDA backend -------------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA implementation of Backend (lib/Backend.h): one device, one
// non-blocking stream on which every kernel, copy and library call of the
// context runs in call order, a cuDNN and a cuBLAS handle bound to that
// stream, CUDA events for timers, and graph capture of that stream.
//
// Memory the backend needs beyond the caller's tensors (cuDNN workspaces,
// packed copies for layouts a library does not take, padded inputs) comes
// from scratch slots that grow outside graph capture and are never freed
// while the context lives, so a captured graph never points at freed memory.
// Convolution algorithms are chosen once per shape (cudnnFind or the
// heuristics, within the workspace limit) and cached, so the first run of a
// model (the loader's warm-up run) does all the choosing and sizing and
// later runs and captures allocate nothing.
//
// Kernels are split by library: CudaBackend.cpp (own kernels, device
// functions), CudaConv.cpp, CudaConvBackward.cpp and CudaBatchNorm.cpp
// (cuDNN), CudaLinear.cpp (cuBLAS), CudaTraining.cpp (own training
// kernels, and all_reduce on NCCL, Nccl.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CUDA_CUDABACKEND_H
#define MEMFMT_RUNTIME_CUDA_CUDABACKEND_H

#include "CudaCheck.h"
#include "CudaPlan.h"
#include "Nccl.h"

#include "lib/Backend.h"
#include "lib/KernelCall.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace memfmt::runtime::cuda {

/// The Elem of a kernel call's element type.
Elem elemOf(DType type);

/// The cuDNN element type of `elem`.
cudnnDataType_t cudnnType(Elem elem);

/// A view of `sizes` packed in `format` at `data`.
TensorView packedView(void *data, const int64_t *sizes, ConvFormat format);

/// The layout of a convolution's cache key: [elem, format, tf32, N, C, H, W,
/// K, C/g, R, S, padH, padW, strideH, strideW, dilationH, dilationW,
/// groups].
enum ConvKeyIndex { kKeyElem = 0, kKeyFormat = 1, kKeyTf32 = 2 };

/// A chosen convolution: descriptors and algorithm for one shape (forward;
/// a convolution_backward shape fills the backward algorithms instead).
struct ConvChoice {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t workspace = 0;
  cudnnConvolutionBwdDataAlgo_t dataAlgo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  cudnnMathType_t dataMath = CUDNN_DEFAULT_MATH;
  cudnnConvolutionBwdFilterAlgo_t filterAlgo =
      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
  cudnnMathType_t filterMath = CUDNN_DEFAULT_MATH;
  /// The bias gradient's descriptor (1 x K x 1 x 1), made on first use.
  cudnnTensorDescriptor_t biasGrad = nullptr;
  /// Not empty when cuDNN has no algorithm for this shape (the reason).
  std::string unsupported;
  /// The bias (1xKx1x1) and activations of cudnnConvolutionBiasActivation-
  /// Forward, made on the first fused call; fusedFailed[relu][residual]
  /// holds why cuDNN refused that variant for this shape (its later calls
  /// then run the separate epilogue).
  cudnnTensorDescriptor_t bias = nullptr;
  cudnnActivationDescriptor_t relu = nullptr, identity = nullptr;
  std::string fusedFailed[2][2];
  ~ConvChoice();
};

/// Scratch slots (one per purpose; calls are ordered on the stream, so a
/// slot is reused by the next call only after the previous one is done).
enum ScratchSlot : int {
  kConvWorkspace = 0,
  kConvInput = 1,
  kConvWeight = 2,
  kConvOutput = 3,
  kLinearInput = 4,
  kLinearWeight = 5,
  kLinearOutput = 6,
  kBatchNormParams = 7,
  kLinearOnes = 8,
  kConvGradInput = 9,
  kConvGradWeight = 10,
  kLossRows = 11,
  kLayerNormRows = 12,
  kNumScratchSlots = 13
};

class CudaBackend final : public Backend {
public:
  CudaBackend(const BackendOptions &options, int device);
  ~CudaBackend() override;

  /// Creates the stream, handles and events. Returns a status and sets
  /// `error` on failure.
  memfmt_status_t initialize(std::string &error);

#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  memfmt_status_t run(KernelCall &call, const args::NAME &a) override;
#include "memfmt/runtime/Kernels.def"

  void invalidateCaches() override;

  std::string description() override { return deviceDescription; }
  memfmt_status_t allocate(int64_t bytes, void **out,
                           std::string &error) override;
  memfmt_status_t deallocate(void *ptr, std::string &error) override;
  memfmt_status_t copy(void *dst, const void *src, int64_t bytes,
                       memfmt_copy_kind_t kind, std::string &error) override;
  memfmt_status_t synchronize(std::string &error) override;
  memfmt_status_t timerStart(std::string &error) override;
  memfmt_status_t timerStop(double &milliseconds, std::string &error) override;
  memfmt_status_t captureBegin(std::string &error) override;
  memfmt_status_t captureEnd(void **graph, std::string &error) override;
  memfmt_status_t launchGraph(void *graph, std::string &error) override;
  void destroyGraph(void *graph) override;
  memfmt_status_t finishProfiledCall(std::string &error) override;
  /// Makes (or, with null, drops) the NCCL group of the replicas.
  memfmt_status_t setCommunicator(const memfmt_communicator_t *communicator,
                                  std::string &error) override;

private:
  /// Makes the device current for a kernel call.
  memfmt_status_t enter(KernelCall &call);
  /// A scratch buffer of at least `bytes` in `slot` (grown outside capture
  /// only).
  memfmt_status_t scratch(KernelCall &call, ScratchSlot slot, size_t bytes,
                          void **out);
  /// Copies `from` into `to` (same shape, any strides, same dtype) on the
  /// stream: a memcpy, an NCHW <-> NHWC transpose or the strided kernel.
  memfmt_status_t copyTensor(KernelCall &call, Elem elem,
                             const TensorView &from, const TensorView &to,
                             const char **impl);
  /// Copies `input` (elements `from`) into `output` (same shape, any
  /// strides, elements `to`), each element converted (rounded to nearest
  /// even when narrowing); copyTensor when the types are equal.
  memfmt_status_t convertTensor(KernelCall &call, Elem from, Elem to,
                                const TensorView &input,
                                const TensorView &output, const char **impl);
  /// conv2d with its bias, residual and relu in one cuDNN call
  /// (cudnnConvolutionBiasActivationForward) on tensors packed in `format`;
  /// `fused` is false when cuDNN refuses this shape (then the caller runs
  /// the separate epilogue).
  memfmt_status_t runFusedConv(KernelCall &call, ConvChoice &choice, Elem elem,
                               ConvFormat format, const TensorView &x,
                               const TensorView &wt, const args::conv2d &a,
                               const TensorView &y, void *workspace,
                               bool &fused);
  /// out = act(x + bias[channel dim 1] + residual); x may be out.
  memfmt_status_t epilogue(KernelCall &call, Elem elem, const TensorView &out,
                           const TensorView &x, const TensorView *bias,
                           const TensorView *residual, bool relu);
  memfmt_status_t runPool(KernelCall &call, PoolArgs &args);
  /// out = input @ weight^T (+ bias along dim 1) on cuBLAS, 2-D operands
  /// of any strides (CudaLinear.cpp); input and weight in `elem`, out and
  /// bias in `outElem` (f32 gradients of a bf16 step's weights).
  memfmt_status_t gemm(KernelCall &call, Elem elem, Elem outElem,
                       const TensorView &input, const TensorView &weight,
                       const TensorView &out, const TensorView *bias);
  memfmt_status_t batchNormCudnn(KernelCall &call, const args::batch_norm &a,
                                 bool &done);
  /// Makes the descriptors of a convolution shape (ConvKeyIndex) and sets
  /// its math type; refused during graph capture (CudaConv.cpp).
  memfmt_status_t describeConv(ErrorSink &sink, const std::vector<int64_t> &key,
                               ConvChoice &choice, Elem elem);
  /// Chooses the algorithm of a convolution shape. UNSUPPORTED when cuDNN
  /// has none in that format.
  memfmt_status_t selectConv(ErrorSink &sink, const std::vector<int64_t> &key,
                             ConvChoice &choice, Elem elem);
  /// Chooses the backward-data and backward-filter algorithms of a
  /// convolution shape (CudaConvBackward.cpp).
  memfmt_status_t selectConvBackward(ErrorSink &sink,
                                     const std::vector<int64_t> &key,
                                     ConvChoice &choice, Elem elem);
  /// The cached choice of a forward (or, with `backward`, a backward)
  /// convolution shape, chosen on first use; `unsupported` (and `why`)
  /// where cuDNN has none in the key's format. Checks that cuDNN's output
  /// size is `outSizes`.
  memfmt_status_t chooseConv(KernelCall &call, const std::vector<int64_t> &key,
                             Elem elem, bool backward, const int64_t *outSizes,
                             ConvChoice *&choice, bool &unsupported,
                             std::string &why);
  /// convolution_backward in one format; sets `unsupported` (and `why`)
  /// when cuDNN has no algorithm for it there.
  memfmt_status_t runConvBackward(KernelCall &call,
                                  const args::convolution_backward &a,
                                  ConvFormat format, bool &unsupported,
                                  std::string &why);
  /// conv2d in `format`; sets `unsupported` (and `why`) instead of failing
  /// when cuDNN has no algorithm for it.
  /// A fusion epilogue's `activation` (a memfmt_eltwise_op_t, or 0) on
  /// `output`, in place, after a convolution or a linear layer and their
  /// other epilogues.
  memfmt_status_t applyActivation(KernelCall &call, const TensorView &output,
                                  int64_t activation, double alpha,
                                  double beta);
  memfmt_status_t runConv(KernelCall &call, const args::conv2d &a,
                          ConvFormat format, bool &unsupported,
                          std::string &why);

  BackendOptions options;
  int device;
  std::string deviceDescription;
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;
  void *cublasWorkspace = nullptr;
  cudaEvent_t timerBegin = nullptr, timerEnd = nullptr;
  bool capturing = false;
  /// MEMFMT_CUDNN_ALGO=heuristic: cudnnGetConvolutionForwardAlgorithm_v7
  /// instead of cudnnFindConvolutionForwardAlgorithm.
  bool heuristicAlgorithms = false;
  /// MEMFMT_CUDA_BATCH_NORM=cudnn: cuDNN's inference batch norm for f32
  /// packed 4-D tensors instead of the own kernel.
  bool cudnnBatchNorm = false;
  /// MEMFMT_CUDA_FUSED_CONV=0: bias, residual and relu always run as a
  /// separate epilogue kernel, never inside cudnnConvolutionBiasActivation-
  /// Forward.
  bool fusedConv = true;

  struct Scratch {
    void *data = nullptr;
    size_t bytes = 0;
  };
  Scratch slots[kNumScratchSlots];
  /// Outgrown scratch buffers, freed with the backend (a graph captured
  /// earlier may still use them).
  std::vector<void *> retired;
  std::map<std::vector<int64_t>, std::unique_ptr<ConvChoice>> convCache;
  /// The same for convolution_backward shapes.
  std::map<std::vector<int64_t>, std::unique_ptr<ConvChoice>> convBackwardCache;
  /// The replicas' NCCL group while the context has a communicator.
  std::unique_ptr<NcclGroup> nccl;
};

} // namespace memfmt::runtime::cuda

#endif // MEMFMT_RUNTIME_CUDA_CUDABACKEND_H
