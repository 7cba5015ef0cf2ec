//===- CudaBackend.cpp - The CUDA backend: device, stream, own kernels ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Creation (device checks that turn a missing GPU or driver into
// MEMFMT_STATUS_NO_DEVICE with the CUDA runtime's message), the device
// functions of memfmt_runtime.h (memory, copies, events, graph capture) and
// the kernels that run on the backend's own CUDA code: relu, add, eltwise,
// binary, batch norm, layer norm, softmax, the poolings and their
// gradients, copies and dtype conversions. Each
// kernel plans its launch on the host (CudaPlan.h) and records what ran for
// the profile:
//  * "flat" / "strided": elementwise kernels on one dense run or any
//    strides;
//  * "rows" / "planes" / "generic": per-channel kernels (batch norm,
//    epilogues) in NHWC, NCHW or any layout, "_vec" when 16-byte accesses
//    apply;
//  * "warp_per_row" / "block_per_row": layer norm (any layout), and
//    softmax with unit stride along its dim ("thread_per_row" otherwise);
//  * "nhwc" / "nhwc_vec" / "generic": poolings;
//  * "memcpy", "nchw_to_nhwc", "nhwc_to_nchw", "strided": copies.
// Convolutions and linear layers are in CudaConv.cpp and CudaLinear.cpp,
// the training kernels and all_reduce in CudaTraining.cpp and
// CudaConvBackward.cpp, batch norm on cuDNN in CudaBatchNorm.cpp.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "CudaKernels.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cuda;

Elem cuda::elemOf(DType type) {
  switch (type) {
  case DType::f16:
    return Elem::F16;
  case DType::bf16:
    return Elem::BF16;
  default:
    return Elem::F32;
  }
}

ConvChoice::~ConvChoice() {
  if (x)
    cudnnDestroyTensorDescriptor(x);
  if (y)
    cudnnDestroyTensorDescriptor(y);
  if (w)
    cudnnDestroyFilterDescriptor(w);
  if (conv)
    cudnnDestroyConvolutionDescriptor(conv);
  for (cudnnTensorDescriptor_t t : {bias, biasGrad})
    if (t)
      cudnnDestroyTensorDescriptor(t);
  for (cudnnActivationDescriptor_t activation : {relu, identity})
    if (activation)
      cudnnDestroyActivationDescriptor(activation);
}

namespace {

/// cuBLAS's workspace, set once so that graph capture never allocates.
constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;

const char *getEnv(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

/// Zero strides for an absent operand.
const int64_t kZeroStrides[kMaxDims] = {};

bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

} // namespace

//===----------------------------------------------------------------------===//
// Creation and destruction
//===----------------------------------------------------------------------===//

CudaBackend::CudaBackend(const BackendOptions &options, int device)
    : options(options), device(device) {
  if (const char *mode = getEnv("MEMFMT_CUDNN_ALGO"))
    heuristicAlgorithms = std::strcmp(mode, "heuristic") == 0;
  if (const char *mode = getEnv("MEMFMT_CUDA_BATCH_NORM"))
    cudnnBatchNorm = std::strcmp(mode, "cudnn") == 0;
  if (const char *mode = getEnv("MEMFMT_CUDA_FUSED_CONV"))
    fusedConv = std::strcmp(mode, "0") != 0;
}

CudaBackend::~CudaBackend() {
  cudaSetDevice(device);
  if (stream)
    cudaStreamSynchronize(stream);
  nccl.reset();
  convCache.clear();
  convBackwardCache.clear();
  if (cublas)
    cublasDestroy(cublas);
  if (cudnn)
    cudnnDestroy(cudnn);
  if (cublasWorkspace)
    cudaFree(cublasWorkspace);
  for (Scratch &s : slots)
    if (s.data)
      cudaFree(s.data);
  for (void *p : retired)
    cudaFree(p);
  if (timerBegin)
    cudaEventDestroy(timerBegin);
  if (timerEnd)
    cudaEventDestroy(timerEnd);
  if (stream)
    cudaStreamDestroy(stream);
}

memfmt_status_t CudaBackend::initialize(std::string &error) {
  ErrorSink sink{error};
  MEMFMT_CUDA_TRY(sink, cudaSetDevice(device));
  MEMFMT_CUDA_TRY(sink,
                  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  MEMFMT_CUDA_TRY(sink, cudaEventCreate(&timerBegin));
  MEMFMT_CUDA_TRY(sink, cudaEventCreate(&timerEnd));

  size_t cudnnVersion = cudnnGetVersion();
  if (cudnnVersion / 10000 != CUDNN_MAJOR)
    return sink.fail(MEMFMT_STATUS_BACKEND_ERROR,
                     "cuDNN " + std::to_string(cudnnVersion) +
                         " is loaded, but the runtime was built with cuDNN " +
                         std::to_string(CUDNN_VERSION) +
                         " (the major versions must match)");
  MEMFMT_CUDNN_TRY(sink, cudnnCreate(&cudnn));
  MEMFMT_CUDNN_TRY(sink, cudnnSetStream(cudnn, stream));
  MEMFMT_CUBLAS_TRY(sink, cublasCreate(&cublas));
  MEMFMT_CUBLAS_TRY(sink, cublasSetStream(cublas, stream));
  MEMFMT_CUDA_TRY(sink, cudaMalloc(&cublasWorkspace, kCublasWorkspaceBytes));
  MEMFMT_CUBLAS_TRY(
      sink, cublasSetWorkspace(cublas, cublasWorkspace, kCublasWorkspaceBytes));

  cudaDeviceProp props;
  MEMFMT_CUDA_TRY(sink, cudaGetDeviceProperties(&props, device));
  int driver = 0, runtimeVersion = 0, cublasVersion = 0;
  MEMFMT_CUDA_TRY(sink, cudaDriverGetVersion(&driver));
  MEMFMT_CUDA_TRY(sink, cudaRuntimeGetVersion(&runtimeVersion));
  MEMFMT_CUBLAS_TRY(sink, cublasGetVersion(cublas, &cublasVersion));
  char text[512];
  std::snprintf(text, sizeof(text),
                "%s (sm_%d%d, %d SMs, %.1f GiB; driver %d.%d, runtime %d.%d, "
                "cuDNN %zu, cuBLAS %d%s)",
                props.name, props.major, props.minor, props.multiProcessorCount,
                double(props.totalGlobalMem) / double(1u << 30), driver / 1000,
                (driver % 1000) / 10, runtimeVersion / 1000,
                (runtimeVersion % 1000) / 10, cudnnVersion, cublasVersion,
                options.allowTf32 ? ", TF32 allowed" : "");
  deviceDescription = text;
  return MEMFMT_STATUS_OK;
}

std::unique_ptr<Backend>
memfmt::runtime::createCudaBackend(const BackendOptions &options,
                                   std::string &error,
                                   memfmt_status_t &status) {
  int count = 0;
  cudaError_t result = cudaGetDeviceCount(&count);
  if (result != cudaSuccess) {
    status = MEMFMT_STATUS_NO_DEVICE;
    error =
        "no CUDA device: cudaGetDeviceCount failed: " + cuda::describe(result);
    cudaGetLastError(); // Clear the sticky-free error for later calls.
    return nullptr;
  }
  if (count == 0) {
    status = MEMFMT_STATUS_NO_DEVICE;
    error = "no CUDA device: cudaGetDeviceCount found none";
    return nullptr;
  }
  if (options.device >= count) {
    status = MEMFMT_STATUS_INVALID_ARGUMENT;
    error = "device " + std::to_string(options.device) +
            " does not exist; this machine has " + std::to_string(count) +
            " CUDA device" + (count == 1 ? "" : "s");
    return nullptr;
  }
  auto backend = std::make_unique<CudaBackend>(options, options.device);
  status = backend->initialize(error);
  if (status != MEMFMT_STATUS_OK)
    return nullptr;
  return backend;
}

void CudaBackend::invalidateCaches() {
  convCache.clear();
  convBackwardCache.clear();
}

//===----------------------------------------------------------------------===//
// Device functions
//===----------------------------------------------------------------------===//

memfmt_status_t CudaBackend::allocate(int64_t bytes, void **out,
                                      std::string &error) {
  ErrorSink sink{error};
  if (capturing)
    return sink.fail(MEMFMT_STATUS_INVALID_ARGUMENT,
                     "cannot allocate while a CUDA graph is being captured");
  MEMFMT_CUDA_TRY(sink, cudaSetDevice(device));
  void *p = nullptr;
  size_t size = static_cast<size_t>(bytes > 0 ? bytes : 1);
  cudaError_t result = cudaMalloc(&p, size);
  if (result != cudaSuccess) {
    cudaGetLastError();
    return sink.fail(statusOf(result),
                     "cudaMalloc of " + std::to_string(bytes) +
                         " bytes failed: " + cuda::describe(result));
  }
  result = cudaMemsetAsync(p, 0, size, stream);
  if (result != cudaSuccess) {
    cudaFree(p);
    return sink.fail(statusOf(result),
                     "cudaMemsetAsync failed: " + cuda::describe(result));
  }
  *out = p;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::deallocate(void *ptr, std::string &error) {
  ErrorSink sink{error};
  MEMFMT_CUDA_TRY(sink, cudaSetDevice(device));
  MEMFMT_CUDA_TRY(sink, cudaStreamSynchronize(stream));
  MEMFMT_CUDA_TRY(sink, cudaFree(ptr));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::copy(void *dst, const void *src, int64_t bytes,
                                  memfmt_copy_kind_t kind, std::string &error) {
  ErrorSink sink{error};
  MEMFMT_CUDA_TRY(sink, cudaSetDevice(device));
  cudaMemcpyKind direction =
      kind == MEMFMT_COPY_HOST_TO_DEVICE   ? cudaMemcpyHostToDevice
      : kind == MEMFMT_COPY_DEVICE_TO_HOST ? cudaMemcpyDeviceToHost
                                           : cudaMemcpyDeviceToDevice;
  MEMFMT_CUDA_TRY(sink, cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                                        direction, stream));
  if (kind == MEMFMT_COPY_DEVICE_TO_HOST)
    MEMFMT_CUDA_TRY(sink, cudaStreamSynchronize(stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::synchronize(std::string &error) {
  ErrorSink sink{error};
  MEMFMT_CUDA_TRY(sink, cudaSetDevice(device));
  MEMFMT_CUDA_TRY(sink, cudaStreamSynchronize(stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::timerStart(std::string &error) {
  ErrorSink sink{error};
  MEMFMT_CUDA_TRY(sink, cudaEventRecord(timerBegin, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::timerStop(double &milliseconds,
                                       std::string &error) {
  ErrorSink sink{error};
  MEMFMT_CUDA_TRY(sink, cudaEventRecord(timerEnd, stream));
  MEMFMT_CUDA_TRY(sink, cudaEventSynchronize(timerEnd));
  float ms = 0;
  MEMFMT_CUDA_TRY(sink, cudaEventElapsedTime(&ms, timerBegin, timerEnd));
  milliseconds = ms;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::captureBegin(std::string &error) {
  ErrorSink sink{error};
  if (capturing)
    return sink.fail(MEMFMT_STATUS_INVALID_ARGUMENT,
                     "a capture is already in progress");
  MEMFMT_CUDA_TRY(sink, cudaSetDevice(device));
  MEMFMT_CUDA_TRY(
      sink, cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  capturing = true;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::captureEnd(void **graphOut, std::string &error) {
  ErrorSink sink{error};
  *graphOut = nullptr;
  if (!capturing)
    return sink.fail(MEMFMT_STATUS_INVALID_ARGUMENT, "no capture in progress");
  capturing = false;
  cudaGraph_t graph = nullptr;
  MEMFMT_CUDA_TRY(sink, cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  cudaError_t result = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (result != cudaSuccess)
    return sink.fail(statusOf(result),
                     "cudaGraphInstantiate failed: " + cuda::describe(result));
  *graphOut = exec;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::launchGraph(void *graph, std::string &error) {
  ErrorSink sink{error};
  MEMFMT_CUDA_TRY(sink, cudaSetDevice(device));
  MEMFMT_CUDA_TRY(sink,
                  cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), stream));
  return MEMFMT_STATUS_OK;
}

void CudaBackend::destroyGraph(void *graph) {
  if (graph)
    cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph));
}

memfmt_status_t CudaBackend::finishProfiledCall(std::string &error) {
  if (capturing)
    return MEMFMT_STATUS_OK;
  ErrorSink sink{error};
  MEMFMT_CUDA_TRY(sink, cudaStreamSynchronize(stream));
  return MEMFMT_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// Helpers of the kernels
//===----------------------------------------------------------------------===//

memfmt_status_t CudaBackend::enter(KernelCall &call) {
  // cudaSetDevice only when needed: calls run inside graph captures too.
  int current = -1;
  MEMFMT_CUDA_TRY(call, cudaGetDevice(&current));
  if (current != device)
    MEMFMT_CUDA_TRY(call, cudaSetDevice(device));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::scratch(KernelCall &call, ScratchSlot slot,
                                     size_t bytes, void **out) {
  Scratch &s = slots[slot];
  if (bytes <= s.bytes && s.data) {
    *out = s.data;
    return MEMFMT_STATUS_OK;
  }
  if (capturing)
    return call.fail(MEMFMT_STATUS_INVALID_ARGUMENT,
                     "this call needs " + std::to_string(bytes) +
                         " bytes of scratch memory, more than any call before "
                         "it, during a CUDA graph capture; run the model once "
                         "before capturing it");
  // Grow by half again, so that a few growing shapes do not reallocate each
  // time.
  size_t size = std::max(bytes, s.bytes + s.bytes / 2);
  size = (std::max<size_t>(size, 256) + 255) / 256 * 256;
  void *p = nullptr;
  cudaError_t result = cudaMalloc(&p, size);
  if (result != cudaSuccess) {
    cudaGetLastError();
    return call.fail(statusOf(result), "cudaMalloc of " + std::to_string(size) +
                                           " bytes of scratch memory failed: " +
                                           cuda::describe(result));
  }
  if (s.data)
    retired.push_back(s.data);
  s.data = p;
  s.bytes = size;
  *out = p;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::copyTensor(KernelCall &call, Elem elem,
                                        const TensorView &from,
                                        const TensorView &to,
                                        const char **impl) {
  *impl = "empty";
  if (to.numElements() == 0)
    return MEMFMT_STATUS_OK;
  if (from.sameViewAs(to)) {
    *impl = "in_place";
    return MEMFMT_STATUS_OK;
  }
  bool positive = true;
  for (int64_t d = 0; d < from.rank; ++d)
    positive = positive && from.strides[d] >= 0 && to.strides[d] >= 0;
  size_t bytes = static_cast<size_t>(to.numElements()) * elemSize(elem);
  if (positive && from.isDense() && from.sameLayoutAs(to)) {
    *impl = "memcpy";
    MEMFMT_CUDA_TRY(call, cudaMemcpyAsync(to.data, from.data, bytes,
                                          cudaMemcpyDeviceToDevice, stream));
    return MEMFMT_STATUS_OK;
  }
  if (to.rank == 4) {
    int64_t n = to.sizes[0], c = to.sizes[1], hw = to.sizes[2] * to.sizes[3];
    if (from.isContiguous() && to.isChannelsLastContiguous() &&
        !to.isContiguous()) {
      *impl = "nchw_to_nhwc";
      MEMFMT_LAUNCH_TRY(call, "the NCHW to NHWC transpose",
                        launchTranspose(elemSize(elem), from.data, to.data, n,
                                        c, hw, stream));
      return MEMFMT_STATUS_OK;
    }
    if (from.isChannelsLastContiguous() && !from.isContiguous() &&
        to.isContiguous()) {
      *impl = "nhwc_to_nchw";
      MEMFMT_LAUNCH_TRY(call, "the NHWC to NCHW transpose",
                        launchTranspose(elemSize(elem), from.data, to.data, n,
                                        hw, c, stream));
      return MEMFMT_STATUS_OK;
    }
  }
  const int64_t *strides[2] = {to.strides, from.strides};
  StridedPlan<2> plan =
      planStrided<2>(static_cast<int>(to.rank), to.sizes, strides);
  *impl = isFlat(plan) ? "flat" : "strided";
  MEMFMT_LAUNCH_TRY(
      call, "the copy kernel",
      launchConvert(elem, elem, plan, to.data, from.data, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::epilogue(KernelCall &call, Elem elem,
                                      const TensorView &out,
                                      const TensorView &x,
                                      const TensorView *bias,
                                      const TensorView *residual, bool relu) {
  int64_t channel[kMaxDims] = {};
  if (out.rank > 1)
    channel[1] = 1;
  const int64_t *strides[4] = {out.strides, x.strides,
                               residual ? residual->strides : kZeroStrides,
                               channel};
  ChannelArgs args;
  args.plan = planStrided<4>(static_cast<int>(out.rank), out.sizes, strides);
  args.pattern = classifyChannelPlan(args.plan, residual != nullptr);
  bool aligned = aligned16(out.data) && aligned16(x.data) &&
                 (!residual || aligned16(residual->data));
  args.vec = channelVectorWidth(args.plan, args.pattern, residual != nullptr,
                                vectorWidth(elem), aligned);
  args.y = out.data;
  args.x = x.data;
  args.r = residual ? residual->data : nullptr;
  args.bias = bias ? bias->data : nullptr;
  args.biasStride = bias ? bias->strides[0] : 0;
  args.relu = relu;
  MEMFMT_LAUNCH_TRY(call, "the epilogue kernel",
                    launchChannelwise(elem, args, stream));
  return MEMFMT_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// Elementwise kernels
//===----------------------------------------------------------------------===//

/// The plan of out = f(in) (CudaPlan.h's implOf names it for the profile).
static StridedPlan<2> unaryPlan(const TensorView &in, const TensorView &out) {
  const int64_t *strides[2] = {out.strides, in.strides};
  return planStrided<2>(static_cast<int>(out.rank), out.sizes, strides);
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::relu &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  StridedPlan<2> plan = unaryPlan(a.input, a.output);
  call.setImpl(implOf(plan));
  MEMFMT_LAUNCH_TRY(call, "the relu kernel",
                    launchRelu(elemOf(call.dtype()), plan, a.output.data,
                               a.input.data, stream));
  return MEMFMT_STATUS_OK;
}

/// The plan of out = lhs op rhs with NumPy broadcasting: ranks aligned to
/// the right; a size-1 (or missing) dim of an operand gets stride 0.
static StridedPlan<3> broadcastPlan(const TensorView &lhs,
                                    const TensorView &rhs,
                                    const TensorView &out) {
  int64_t l[kMaxDims] = {}, r[kMaxDims] = {};
  for (int64_t i = 0; i < out.rank; ++i) {
    int64_t dl = lhs.rank - out.rank + i, dr = rhs.rank - out.rank + i;
    l[i] = dl >= 0 && lhs.sizes[dl] != 1 ? lhs.strides[dl] : 0;
    r[i] = dr >= 0 && rhs.sizes[dr] != 1 ? rhs.strides[dr] : 0;
  }
  const int64_t *strides[3] = {out.strides, l, r};
  return planStrided<3>(static_cast<int>(out.rank), out.sizes, strides);
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::add &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  StridedPlan<3> plan = broadcastPlan(a.lhs, a.rhs, a.output);
  call.setImpl(implOf(plan));
  MEMFMT_LAUNCH_TRY(call, "the add kernel",
                    launchAdd(elemOf(call.dtype()), plan, a.output.data,
                              a.lhs.data, a.rhs.data, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::binary &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  StridedPlan<3> plan = broadcastPlan(a.lhs, a.rhs, a.output);
  call.setImpl(implOf(plan));
  MEMFMT_LAUNCH_TRY(call, "the binary kernel",
                    launchBinary(elemOf(call.dtype()), plan, a.output.data,
                                 a.lhs.data, a.rhs.data, a.op, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::applyActivation(KernelCall &call,
                                             const TensorView &output,
                                             int64_t activation, double alpha,
                                             double beta) {
  if (!activation)
    return MEMFMT_STATUS_OK;
  StridedPlan<2> plan = unaryPlan(output, output);
  MEMFMT_LAUNCH_TRY(call, "the fused activation",
                    launchEltwise(elemOf(call.dtype()), plan, output.data,
                                  output.data, activation,
                                  static_cast<float>(alpha),
                                  static_cast<float>(beta), stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::eltwise &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  StridedPlan<2> plan = unaryPlan(a.input, a.output);
  call.setImpl(implOf(plan));
  MEMFMT_LAUNCH_TRY(call, "the eltwise kernel",
                    launchEltwise(elemOf(call.dtype()), plan, a.output.data,
                                  a.input.data, a.op,
                                  static_cast<float>(a.alpha),
                                  static_cast<float>(a.beta), stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::batch_norm &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  if (a.output.numElements() == 0) {
    call.setImpl("empty");
    return MEMFMT_STATUS_OK;
  }
  Elem elem = elemOf(call.dtype());
  if (cudnnBatchNorm) {
    bool done = false;
    if (memfmt_status_t s = batchNormCudnn(call, a, done))
      return s;
    if (done)
      return MEMFMT_STATUS_OK;
  }
  int64_t channel[kMaxDims] = {};
  channel[1] = 1;
  const int64_t *strides[4] = {a.output.strides, a.input.strides, kZeroStrides,
                               channel};
  ChannelArgs args;
  args.plan =
      planStrided<4>(static_cast<int>(a.output.rank), a.output.sizes, strides);
  args.pattern = classifyChannelPlan(args.plan, false);
  args.vec =
      channelVectorWidth(args.plan, args.pattern, false, vectorWidth(elem),
                         aligned16(a.output.data) && aligned16(a.input.data));
  args.y = a.output.data;
  args.x = a.input.data;
  args.batchNorm = true;
  args.weight = a.weight.data;
  args.bias = a.bias.data;
  args.mean = a.running_mean.data;
  args.var = a.running_var.data;
  args.weightStride = a.weight.strides[0];
  args.biasStride = a.bias.strides[0];
  args.meanStride = a.running_mean.strides[0];
  args.varStride = a.running_var.strides[0];
  args.eps = static_cast<float>(a.eps);
  static const char *const names[3][2] = {
      {"rows", "rows_vec"}, {"planes", "planes_vec"}, {"generic", "generic"}};
  call.setImpl(names[static_cast<int>(args.pattern)][args.vec > 1]);
  MEMFMT_LAUNCH_TRY(call, "the batch norm kernel",
                    launchChannelwise(elem, args, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::layer_norm &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  if (a.output.numElements() == 0) {
    call.setImpl("empty");
    return MEMFMT_STATUS_OK;
  }
  LayerNormArgs args;
  planLayerNorm(args, static_cast<int>(a.output.rank), a.output.sizes,
                a.output.strides, a.input.strides);
  args.y = a.output.data;
  args.x = a.input.data;
  if (a.has_weight) {
    args.weight = a.weight.data;
    args.weightStride = a.weight.strides[0];
  }
  if (a.has_bias) {
    args.bias = a.bias.data;
    args.biasStride = a.bias.strides[0];
  }
  args.eps = static_cast<float>(a.eps);
  call.setImpl(args.warpPerRow ? "warp_per_row" : "block_per_row");
  MEMFMT_LAUNCH_TRY(call, "the layer norm kernel",
                    launchLayerNorm(elemOf(call.dtype()), args, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::softmax &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  if (a.output.numElements() == 0) {
    call.setImpl("empty");
    return MEMFMT_STATUS_OK;
  }
  SoftmaxArgs args;
  planSoftmax(args, static_cast<int>(a.output.rank), a.output.sizes,
              static_cast<int>(a.dim), a.output.strides, a.input.strides);
  args.y = a.output.data;
  args.x = a.input.data;
  call.setImpl(toString(args.team));
  MEMFMT_LAUNCH_TRY(call, "the softmax kernel",
                    launchSoftmax(elemOf(call.dtype()), args, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::copy &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const char *impl = "empty";
  memfmt_status_t status =
      copyTensor(call, elemOf(call.dtype()), a.input, a.output, &impl);
  call.setImpl(impl);
  return status;
}

memfmt_status_t CudaBackend::convertTensor(KernelCall &call, Elem from, Elem to,
                                           const TensorView &input,
                                           const TensorView &output,
                                           const char **impl) {
  if (from == to)
    return copyTensor(call, from, input, output, impl);
  StridedPlan<2> plan = unaryPlan(input, output);
  *impl = implOf(plan);
  MEMFMT_LAUNCH_TRY(
      call, "the conversion kernel",
      launchConvert(from, to, plan, output.data, input.data, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::cast_f32_to &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const char *impl = "empty";
  memfmt_status_t status = convertTensor(call, Elem::F32, elemOf(call.dtype()),
                                         a.input, a.output, &impl);
  call.setImpl(impl);
  return status;
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::cast_to_f32_from &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  const char *impl = "empty";
  memfmt_status_t status = convertTensor(call, elemOf(call.dtype()), Elem::F32,
                                         a.input, a.output, &impl);
  call.setImpl(impl);
  return status;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

namespace {

/// The sizes and strides of PoolArgs from an x-side and a y-side tensor.
void setPoolTensors(PoolArgs &args, const TensorView &x, const TensorView &y,
                    const TensorView *indices) {
  args.x = x.data;
  args.y = y.data;
  args.indices = indices ? indices->as<int64_t>() : nullptr;
  args.n = x.sizes[0];
  args.c = x.sizes[1];
  args.h = x.sizes[2];
  args.w = x.sizes[3];
  args.oh = y.sizes[2];
  args.ow = y.sizes[3];
  for (int d = 0; d < 4; ++d) {
    args.xs[d] = x.strides[d];
    args.ys[d] = y.strides[d];
    args.is[d] = indices ? indices->strides[d] : 0;
  }
}

void setMaxWindow(PoolArgs &args, int64_t kh, int64_t kw, int64_t sh,
                  int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw) {
  args.kh = kh;
  args.kw = kw;
  args.sh = sh;
  args.sw = sw;
  args.pt = pt;
  args.pl = pl;
  args.dh = dh;
  args.dw = dw;
}

/// The window of avg_pool2d and of its gradient (the same attributes).
template <typename AvgArgs>
void setAvgWindow(PoolArgs &args, const AvgArgs &a) {
  setMaxWindow(args, a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_top,
               a.pad_left, 1, 1);
  args.pb = a.pad_bottom;
  args.pr = a.pad_right;
  args.countIncludePad = a.count_include_pad != 0;
}

} // namespace

memfmt_status_t CudaBackend::runPool(KernelCall &call, PoolArgs &args) {
  bool backward = isBackward(args.kind);
  int64_t written = backward ? args.n * args.c * args.h * args.w
                             : args.n * args.c * args.oh * args.ow;
  if (written == 0) {
    call.setImpl("empty");
    return MEMFMT_STATUS_OK;
  }
  Elem elem = elemOf(call.dtype());
  planPoolGeneric(args);
  bool nhwc = planPoolNhwc(args, vectorWidth(elem),
                           aligned16(args.x) && aligned16(args.y));
  call.setImpl(!nhwc ? "generic" : args.vec > 1 ? "nhwc_vec" : "nhwc");
  if (backward)
    MEMFMT_LAUNCH_TRY(call, "the pooling gradient kernel",
                      launchPoolBackward(elem, args, nhwc, stream));
  else
    MEMFMT_LAUNCH_TRY(call, "the pooling kernel",
                      launchPool(elem, args, nhwc, stream));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::max_pool2d &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  PoolArgs args;
  args.kind = PoolKind::Max;
  setPoolTensors(args, a.input, a.output, nullptr);
  setMaxWindow(args, a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_top,
               a.pad_left, a.dilation_h, a.dilation_w);
  return runPool(call, args);
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::max_pool2d_with_indices &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  PoolArgs args;
  args.kind = PoolKind::Max;
  setPoolTensors(args, a.input, a.output, &a.indices);
  setMaxWindow(args, a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_top,
               a.pad_left, a.dilation_h, a.dilation_w);
  return runPool(call, args);
}

memfmt_status_t CudaBackend::run(KernelCall &call, const args::avg_pool2d &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  PoolArgs args;
  args.kind = PoolKind::Avg;
  setPoolTensors(args, a.input, a.output, nullptr);
  setAvgWindow(args, a);
  return runPool(call, args);
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::adaptive_avg_pool2d &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  PoolArgs args;
  args.kind = PoolKind::Adaptive;
  setPoolTensors(args, a.input, a.output, nullptr);
  return runPool(call, args);
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::adaptive_avg_pool2d_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  PoolArgs args;
  args.kind = PoolKind::AdaptiveBackward;
  setPoolTensors(args, a.grad_input, a.grad_output, nullptr);
  return runPool(call, args);
}

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::avg_pool2d_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  PoolArgs args;
  args.kind = PoolKind::AvgBackward;
  setPoolTensors(args, a.grad_input, a.grad_output, nullptr);
  setAvgWindow(args, a);
  return runPool(call, args);
}

memfmt_status_t
CudaBackend::run(KernelCall &call,
                 const args::max_pool2d_with_indices_backward &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  PoolArgs args;
  args.kind = PoolKind::MaxBackward;
  setPoolTensors(args, a.grad_input, a.grad_output, &a.indices);
  setMaxWindow(args, a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_top,
               a.pad_left, a.dilation_h, a.dilation_w);
  return runPool(call, args);
}

//===----------------------------------------------------------------------===//
// Load-time folding
//===----------------------------------------------------------------------===//

memfmt_status_t CudaBackend::run(KernelCall &call,
                                 const args::fold_batch_norm &a) {
  if (memfmt_status_t s = enter(call))
    return s;
  Elem elem = elemOf(call.dtype());
  call.setImpl("generic");
  auto batchNormParams = [&](ChannelArgs &args) {
    args.batchNorm = true;
    args.weight = a.gamma.data;
    args.weightStride = a.gamma.strides[0];
    args.var = a.running_var.data;
    args.varStride = a.running_var.strides[0];
    args.mean = a.running_mean.data;
    args.meanStride = a.running_mean.strides[0];
    args.bias = a.beta.data;
    args.biasStride = a.beta.strides[0];
    args.eps = static_cast<float>(a.eps);
  };
  // out_weight[o, ...] = weight[o, ...] * gamma[o] / sqrt(var[o] + eps).
  {
    int64_t channel[kMaxDims] = {1};
    const int64_t *strides[4] = {a.out_weight.strides, a.weight.strides,
                                 kZeroStrides, channel};
    ChannelArgs args;
    args.plan = planStrided<4>(4, a.out_weight.sizes, strides);
    args.pattern = ChannelPattern::Generic;
    args.y = a.out_weight.data;
    args.x = a.weight.data;
    batchNormParams(args);
    args.scaleOnly = true;
    MEMFMT_LAUNCH_TRY(call, "the weight folding kernel",
                      launchChannelwise(elem, args, stream));
  }
  // out_bias[o] = (bias[o] or 0 - mean[o]) * scale[o] + beta[o].
  {
    int64_t channel[kMaxDims] = {1};
    const int64_t *strides[4] = {a.out_bias.strides,
                                 a.has_bias ? a.bias.strides : kZeroStrides,
                                 kZeroStrides, channel};
    ChannelArgs args;
    args.plan = planStrided<4>(1, a.out_bias.sizes, strides);
    args.pattern = ChannelPattern::Generic;
    args.y = a.out_bias.data;
    args.x = a.has_bias ? a.bias.data : nullptr;
    batchNormParams(args);
    MEMFMT_LAUNCH_TRY(call, "the bias folding kernel",
                      launchChannelwise(elem, args, stream));
  }
  return MEMFMT_STATUS_OK;
}
