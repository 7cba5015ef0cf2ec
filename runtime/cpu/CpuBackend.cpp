//===- CpuBackend.cpp - The CPU backend: picks a kernel per call ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CPU implementation of Backend. For every kernel it skips calls whose
// output is empty and picks an implementation:
//  * MEMFMT_KERNELS_REFERENCE: always the reference kernel; f16 and bf16
//    calls run the f32 reference on widened copies (Precision.cpp,
//    "reference_widened"), the oracle of the reduced-precision kernels;
//  * MEMFMT_KERNELS_FAST, f32: oneDNN for conv2d, linear (and their
//    gradients), sigmoid/silu/gelu and layer_norm when the build has it and
//    the call's layouts suit it, the layout-specialised loops for the other
//    kernels and for what oneDNN declines, and the reference for whatever
//    those decline;
//  * MEMFMT_KERNELS_FAST, bf16: oneDNN for conv2d, linear, layer_norm,
//    sigmoid/silu/gelu and casts where the CPU has an implementation
//    (convolutions need AVX-512 BF16 or AMX); the layout-specialised loops
//    that also compute in bf16 (Element.h: relu, add, binary, softmax, the
//    piecewise-linear eltwise functions, and the pooling and copies
//    oneDNN declines; for a mixed-precision training step also the
//    channels-last batch norms, relu's gradient, max pooling with its
//    positions and the pooling gradients, with oneDNN's bf16 convolution
//    and matmul gradients), else the widened reference; f16: the widened
//    reference (copies excepted).
// The implementation that ran is recorded on the call for the profile.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "lib/Backend.h"
#include "lib/KernelCall.h"

#ifdef MEMFMT_HAVE_ONEDNN
#include "OneDnn.h"
#endif

#include <type_traits>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;

namespace {

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(const BackendOptions &options) : options(options) {
#ifdef MEMFMT_HAVE_ONEDNN
    if (fast()) {
      dnn = std::make_unique<OneDnnEngine>();
      // bf16 math only where the CPU has bf16 instructions (oneDNN would
      // emulate them elsewhere, slower than f32).
      bf16Math = options.allowBf16 && hasNativeBf16();
      conv = std::make_unique<OneDnnConv>(*dnn, options.winograd, bf16Math);
      linear = std::make_unique<OneDnnLinear>(*dnn);
      unary = std::make_unique<OneDnnUnary>(*dnn);
      layerNorm = std::make_unique<OneDnnLayerNorm>(*dnn);
      convBackward = std::make_unique<OneDnnConvBackward>(
          *dnn, options.winograd, bf16Math);
      linearBackward = std::make_unique<OneDnnLinearBackward>(*dnn);
    }
#endif
  }

#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  memfmt_status_t run(KernelCall &call, const args::NAME &a) override;
#include "memfmt/runtime/Kernels.def"

  /// "CPU (2 threads, oneDNN 2.6.3 on avx512_core_bf16)": the instruction
  /// set is the best one oneDNN dispatches to here, which decides how fast
  /// bf16 runs (native dot products or AMX tiles).
  std::string description() override {
    std::string text = "CPU (" + std::to_string(options.numThreads) +
                       (options.numThreads == 1 ? " thread" : " threads");
#ifdef MEMFMT_HAVE_ONEDNN
    if (dnn)
      text += ", " + describeOneDnn();
    if (bf16Math)
      text += ", f32 convolutions in bf16";
    else if (options.allowBf16 && fast())
      text += ", no bf16 instructions: f32 convolutions in f32";
#endif
    return text + ")";
  }

  void invalidateCaches() override {
#ifdef MEMFMT_HAVE_ONEDNN
    if (conv)
      conv->clear();
    if (linear)
      linear->clear();
    if (unary)
      unary->clear();
    if (layerNorm)
      layerNorm->clear();
    if (convBackward)
      convBackward->clear();
    if (linearBackward)
      linearBackward->clear();
#endif
  }

private:
  bool fast() const { return options.kernels == MEMFMT_KERNELS_FAST; }

  /// Runs the fast kernel in FAST mode, and the reference(const Args &)
  /// overload below when that is not selected or declines; f16 and bf16
  /// calls run the reference on widened copies (Precision.cpp). A fast
  /// kernel taking the call's DType runs for any element type (and declines
  /// those it has no loop for); one taking nothing runs for f32 only.
  /// Records the implementation on `call`.
  template <typename Args, typename Fast>
  memfmt_status_t dispatchTyped(KernelCall &call, const Args &a,
                                const TensorView &output, Fast fastKernel);
  /// The reference kernel, on widened copies for f16 and bf16 calls.
  template <typename Args>
  memfmt_status_t runReference(KernelCall &call, const Args &a);

  /// dispatchTyped for the kernels oneDNN also has (pooling, copies): a
  /// bf16 call, and an f32 one unless `f32OnOneDnn` is false, runs oneDNN's
  /// kernel, the own loops where oneDNN declines, else the (widened)
  /// reference (options.ownLoops: the own loops first). oneDNN's jitted
  /// reorders and pooling beat the own loops,
  /// which are built for the baseline ISA (Vectorize.h), on both: on AMX in
  /// bf16 ShuffleNet's channel-shuffle copies took 2.1 against 4.0 ms and
  /// EfficientNet-B0's global pools 0.8 against 3.0 ms; in f32 ShuffleNet's
  /// concatenations, channel shuffles and slices 2.9 against 6.4 ms per run
  /// at batch 8 (bench/RESULTS.md, 2026-12-06).
  template <typename Args, typename Fast>
  memfmt_status_t dispatchOneDnnFirst(KernelCall &call, const Args &a,
                                      const TensorView &output,
                                      Fast fastKernel,
                                      bool f32OnOneDnn = true) {
    memfmt_status_t status = MEMFMT_STATUS_OK;
    if (!options.ownLoops &&
        (runReducedOnOneDnn(call, a, status) ||
         (f32OnOneDnn && runOnOneDnn(call, a, status, DType::f32))))
      return status;
    return dispatchTyped(call, a, output, fastKernel);
  }

  BackendOptions options;
#ifdef MEMFMT_HAVE_ONEDNN
  std::unique_ptr<OneDnnEngine> dnn;
  /// f32 convolutions multiply in bf16 (allow_bf16 on a CPU with bf16).
  bool bf16Math = false;
  std::unique_ptr<OneDnnConv> conv;
  std::unique_ptr<OneDnnLinear> linear;
  std::unique_ptr<OneDnnUnary> unary;
  std::unique_ptr<OneDnnLayerNorm> layerNorm;
  std::unique_ptr<OneDnnConvBackward> convBackward;
  std::unique_ptr<OneDnnLinearBackward> linearBackward;
#endif
  /// A non-dense all_reduce output's elements (AllReduce.cpp).
  std::vector<float> allReduceStaging;

  /// Runs the oneDNN kernel of a call of element type `dtype` in FAST mode;
  /// false when the call has another type or is not one oneDNN takes here.
  /// (oneDNN 2.6's f16 reorders drop the sign of -0, and this CPU family
  /// has no f16 convolutions: f16 stays widened.)
  template <typename Args>
  bool runOnOneDnn(KernelCall &call, const Args &a, memfmt_status_t &status,
                   DType dtype) {
#ifdef MEMFMT_HAVE_ONEDNN
    return fast() && call.dtype() == dtype && unary->run(call, a, status);
#else
    (void)call, (void)a, (void)status, (void)dtype;
    return false;
#endif
  }
  /// runOnOneDnn for bf16 calls (the casts, and every oneDNN-first kernel).
  template <typename Args>
  bool runReducedOnOneDnn(KernelCall &call, const Args &a,
                          memfmt_status_t &status) {
    return runOnOneDnn(call, a, status, DType::bf16);
  }
};

// The reference kernel of each args struct.
void reference(const args::conv2d &a) { conv2dReference(a); }
void reference(const args::batch_norm &a) { batchNormReference(a); }
void reference(const args::relu &a) { reluReference(a); }
void reference(const args::add &a) { addReference(a); }
void reference(const args::binary &a) { binaryReference(a); }
void reference(const args::eltwise &a) { eltwiseReference(a); }
void reference(const args::layer_norm &a) { layerNormReference(a); }
void reference(const args::softmax &a) { softmaxReference(a); }
void reference(const args::softmax_backward &a) { softmaxBackwardReference(a); }
MaxPoolWindow windowOf(const args::max_pool2d &a) {
  return {a.kernel_h, a.kernel_w, a.stride_h,   a.stride_w,
          a.pad_top,  a.pad_left, a.dilation_h, a.dilation_w};
}
MaxPoolWindow windowOf(const args::max_pool2d_with_indices &a) {
  return {a.kernel_h, a.kernel_w, a.stride_h,   a.stride_w,
          a.pad_top,  a.pad_left, a.dilation_h, a.dilation_w};
}
void reference(const args::max_pool2d &a) {
  maxPool2dReference(a.input, a.output, nullptr, windowOf(a));
}
void reference(const args::max_pool2d_with_indices &a) {
  maxPool2dReference(a.input, a.output, &a.indices, windowOf(a));
}
void reference(const args::avg_pool2d &a) { avgPool2dReference(a); }
void reference(const args::adaptive_avg_pool2d &a) {
  adaptiveAvgPool2dReference(a);
}
void reference(const args::linear &a) { linearReference(a); }
void reference(const args::copy &a) { copyReference(a.input, a.output); }
void reference(const args::fold_batch_norm &a) { foldBatchNormReference(a); }
// With f32 on both sides a cast is a copy; the widening does the rest.
void reference(const args::cast_f32_to &a) { copyReference(a.input, a.output); }
void reference(const args::cast_to_f32_from &a) {
  copyReference(a.input, a.output);
}
void reference(const args::adaptive_avg_pool2d_backward &a) {
  adaptiveAvgPool2dBackwardReference(a);
}
void reference(const args::max_pool2d_with_indices_backward &a) {
  maxPool2dWithIndicesBackwardReference(a);
}
void reference(const args::fill &a) { fillReference(a); }
void reference(const args::native_batch_norm &a) {
  nativeBatchNormReference(a);
}
void reference(const args::native_batch_norm_backward &a) {
  nativeBatchNormBackwardReference(a);
}
void reference(const args::threshold_backward &a) {
  thresholdBackwardReference(a);
}
void reference(const args::eltwise_backward &a) { eltwiseBackwardReference(a); }
void reference(const args::sum_to_size &a) { sumToSizeReference(a); }
void reference(const args::layer_norm_backward &a) {
  layerNormBackwardReference(a);
}
void reference(const args::avg_pool2d_backward &a) {
  avgPool2dBackwardReference(a);
}
void reference(const args::cross_entropy_loss &a) {
  crossEntropyLossReference(a);
}
void reference(const args::cross_entropy_loss_backward &a) {
  crossEntropyLossBackwardReference(a);
}
void reference(const args::sgd_update &a) { sgdUpdateReference(a); }
void reference(const args::convolution_backward &a) {
  convolutionBackwardReference(a);
}
void reference(const args::linear_backward &a) { linearBackwardReference(a); }

/// The arguments the widened reference takes: as given, but a gradient
/// kernel's absent outputs (has_* 0: another tensor passed in their place,
/// maybe one of another element type) emptied, so that the widening neither
/// reads nor writes back the tensor standing in for them.
template <typename Args> Args forWidening(const Args &a) { return a; }
template <typename Args> Args withoutAbsentGradients(Args a) {
  for (auto [present, view] :
       {std::pair{a.has_grad_input, &a.grad_input},
        std::pair{a.has_grad_weight, &a.grad_weight},
        std::pair{a.has_grad_bias, &a.grad_bias}})
    if (!present)
      view->sizes[0] = 0;
  return a;
}
args::convolution_backward forWidening(const args::convolution_backward &a) {
  return withoutAbsentGradients(a);
}
args::linear_backward forWidening(const args::linear_backward &a) {
  return withoutAbsentGradients(a);
}
args::native_batch_norm_backward
forWidening(const args::native_batch_norm_backward &a) {
  return withoutAbsentGradients(a);
}
args::layer_norm_backward forWidening(const args::layer_norm_backward &a) {
  args::layer_norm_backward wide = withoutAbsentGradients(a);
  if (!wide.has_weight)
    wide.weight.sizes[0] = 0;
  return wide;
}

} // namespace

template <typename Args, typename Fast>
memfmt_status_t CpuBackend::dispatchTyped(KernelCall &call, const Args &a,
                                          const TensorView &output,
                                          Fast fastKernel) {
  if (output.numElements() == 0) {
    call.setImpl("empty");
    return MEMFMT_STATUS_OK;
  }
  if (fast()) {
    if constexpr (std::is_invocable_v<Fast, DType>) {
      if (const char *impl = fastKernel(call.dtype())) {
        call.setImpl(impl);
        return MEMFMT_STATUS_OK;
      }
    } else if (call.dtype() == DType::f32) {
      if (const char *impl = fastKernel()) {
        call.setImpl(impl);
        return MEMFMT_STATUS_OK;
      }
    }
  }
  return runReference(call, a);
}

template <typename Args>
memfmt_status_t CpuBackend::runReference(KernelCall &call, const Args &a) {
  if (call.dtype() != DType::f32) {
    Widener widener(call.dtype());
    Args wide = widen(widener, forWidening(a));
    reference(wide);
    widener.finish();
    call.setImpl("reference_widened");
    return MEMFMT_STATUS_OK;
  }
  reference(a);
  call.setImpl("reference");
  return MEMFMT_STATUS_OK;
}

namespace {

/// A fast kernel that never applies.
const char *none() { return nullptr; }

} // namespace

memfmt_status_t CpuBackend::run(KernelCall &call, const args::conv2d &a) {
#ifdef MEMFMT_HAVE_ONEDNN
  if (fast() && call.dtype() != DType::f16) {
    memfmt_status_t status = MEMFMT_STATUS_OK;
    if (conv->run(call, a, status))
      return status;
  }
#endif
  return dispatchTyped(call, a, a.output, none);
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::batch_norm &a) {
  return dispatchTyped(call, a, a.output, [&] { return batchNormFast(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::fold_batch_norm &a) {
  // Runs once, at load: the reference is the only implementation.
  return dispatchTyped(call, a, a.out_weight, none);
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::relu &a) {
  return dispatchTyped(call, a, a.output,
                       [&](DType dtype) { return reluFast(a, dtype); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::add &a) {
  return dispatchTyped(call, a, a.output,
                       [&](DType dtype) { return addFast(a, dtype); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::binary &a) {
  return dispatchTyped(call, a, a.output,
                       [&](DType dtype) { return binaryFast(a, dtype); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::eltwise &a) {
#ifdef MEMFMT_HAVE_ONEDNN
  memfmt_status_t status = MEMFMT_STATUS_OK;
  if (fast() && unary->run(call, a, status))
    return status;
#endif
  return dispatchTyped(call, a, a.output,
                       [&](DType dtype) { return eltwiseFast(a, dtype); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::layer_norm &a) {
#ifdef MEMFMT_HAVE_ONEDNN
  memfmt_status_t status = MEMFMT_STATUS_OK;
  if (fast() && layerNorm->run(call, a, status))
    return status;
#endif
  return dispatchTyped(call, a, a.output, [&] { return layerNormFast(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::softmax &a) {
  // No oneDNN: the row loop is as fast as its softmax (Softmax.cpp).
  return dispatchTyped(call, a, a.output,
                       [&](DType dtype) { return softmaxFast(a, dtype); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::max_pool2d &a) {
  // f32 keeps the own loop: oneDNN's max does not keep NaNs (OneDnnUnary).
  return dispatchOneDnnFirst(
      call, a, a.output,
      [&](DType dtype) {
        return maxPool2dFast(a.input, a.output, nullptr, windowOf(a), dtype);
      },
      /*f32OnOneDnn=*/false);
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::max_pool2d_with_indices &a) {
  return dispatchTyped(call, a, a.output, [&](DType dtype) {
    return maxPool2dFast(a.input, a.output, &a.indices, windowOf(a), dtype);
  });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::avg_pool2d &a) {
  return dispatchOneDnnFirst(call, a, a.output, [&](DType dtype) {
    return avgPool2dFast(a, dtype);
  });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::adaptive_avg_pool2d &a) {
  // f32 keeps the own loop: with oneDNN's, EfficientNet-B0 at batch 1 ran
  // 11% slower (5.4 -> 6.0 ms; its squeeze-excite global pools are tiny,
  // and the own-loop op after the first one took 0.6 ms instead of 0.05 --
  // why was not found), and batch 8 gained nothing.
  return dispatchOneDnnFirst(
      call, a, a.output,
      [&](DType dtype) { return adaptiveAvgPool2dFast(a, dtype); },
      /*f32OnOneDnn=*/false);
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::linear &a) {
#ifdef MEMFMT_HAVE_ONEDNN
  if (fast() && call.dtype() != DType::f16) {
    memfmt_status_t status = MEMFMT_STATUS_OK;
    if (linear->run(call, a, status))
      return status;
  }
#endif
  return dispatchTyped(call, a, a.output, none);
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::copy &a) {
  return dispatchOneDnnFirst(call, a, a.output, [&](DType dtype) {
    return copyFast(a.input, a.output, dtype);
  });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::cast_f32_to &a) {
  memfmt_status_t status = MEMFMT_STATUS_OK;
  if (runReducedOnOneDnn(call, a, status))
    return status;
  return dispatchTyped(call, a, a.output,
                       [&] { return copyFast(a.input, a.output, DType::f32); });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::cast_to_f32_from &a) {
  memfmt_status_t status = MEMFMT_STATUS_OK;
  if (runReducedOnOneDnn(call, a, status))
    return status;
  return dispatchTyped(call, a, a.output,
                       [&] { return copyFast(a.input, a.output, DType::f32); });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::adaptive_avg_pool2d_backward &a) {
  return dispatchTyped(call, a, a.grad_input,
                       [&](DType dtype) {
                         return adaptiveAvgPool2dBackwardFast(a, dtype);
                       });
}

memfmt_status_t
CpuBackend::run(KernelCall &call,
                const args::max_pool2d_with_indices_backward &a) {
  return dispatchTyped(call, a, a.grad_input,
                       [&](DType dtype) {
                         return maxPool2dWithIndicesBackwardFast(a, dtype);
                       });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::convolution_backward &a) {
  // No empty-output shortcut: with no images the weight and bias gradients
  // are zeros that must still be written.
#ifdef MEMFMT_HAVE_ONEDNN
  if (fast()) {
    memfmt_status_t status = MEMFMT_STATUS_OK;
    if (convBackward->run(call, a, status))
      return status;
  }
#endif
  return runReference(call, a);
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::linear_backward &a) {
#ifdef MEMFMT_HAVE_ONEDNN
  if (fast()) {
    memfmt_status_t status = MEMFMT_STATUS_OK;
    if (linearBackward->run(call, a, status))
      return status;
  }
#endif
  return runReference(call, a);
}

//===----------------------------------------------------------------------===//
// Training kernels (f32; bf16 activations in a mixed-precision step; fill
// also f16)
//===----------------------------------------------------------------------===//

namespace {

constexpr const char *kSyncBatchNormF32Only =
    "synchronised batch norm (--sync-batch-norm) is f32 only; train the "
    "bf16 model without it, or compile the step in f32";

/// The class indices must lie in [0, classes): a data-dependent check, so
/// it is the backend's (Validate.cpp never reads tensor contents).
memfmt_status_t checkTargets(KernelCall &call, const TensorView &target,
                             int64_t classes) {
  int64_t row = findBadTarget(target, classes);
  if (row < 0)
    return MEMFMT_STATUS_OK;
  int64_t value = target.as<int64_t>()[row * target.strides[0]];
  return call.fail(MEMFMT_STATUS_INVALID_ARGUMENT,
                   "target[" + std::to_string(row) + "] is " +
                       std::to_string(value) +
                       ", expected a class index in "
                       "[0, " +
                       std::to_string(classes) + ")");
}

} // namespace

memfmt_status_t CpuBackend::run(KernelCall &call, const args::fill &a) {
  return dispatchTyped(call, a, a.output, [&] { return fillFast(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::native_batch_norm &a) {
  if (const memfmt_communicator_t *comm = call.communicator();
      comm && comm->size > 1 && comm->sync_batch_norm)
    return call.dtype() == DType::f32 ? syncBatchNorm(call, *comm, a)
                                      : call.fail(MEMFMT_STATUS_UNSUPPORTED,
                                                  kSyncBatchNormF32Only);
  // save_mean is empty exactly when there are no channels (the validator
  // wants more than one value per channel), when nothing is written.
  return dispatchTyped(call, a, a.save_mean,
                       [&](DType dtype) { return nativeBatchNormFast(a, dtype); });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::native_batch_norm_backward &a) {
  if (const memfmt_communicator_t *comm = call.communicator();
      comm && comm->size > 1 && comm->sync_batch_norm)
    return call.dtype() == DType::f32 ? syncBatchNormBackward(call, *comm, a)
                                      : call.fail(MEMFMT_STATUS_UNSUPPORTED,
                                                  kSyncBatchNormF32Only);
  // With channels, grad_weight and grad_bias are written even for an empty
  // batch (zeros); without, nothing is.
  return dispatchTyped(call, a, a.weight,
                       [&](DType dtype) {
                         return nativeBatchNormBackwardFast(a, dtype);
                       });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::threshold_backward &a) {
  return dispatchTyped(call, a, a.grad_input,
                       [&](DType dtype) { return thresholdBackwardFast(a, dtype); });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::eltwise_backward &a) {
#ifdef MEMFMT_HAVE_ONEDNN
  memfmt_status_t status = MEMFMT_STATUS_OK;
  if (fast() && unary->run(call, a, status))
    return status;
#endif
  return dispatchTyped(call, a, a.grad_input, [&](DType dtype) {
    return eltwiseBackwardFast(a, dtype);
  });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::softmax_backward &a) {
  return dispatchTyped(call, a, a.grad_input, [&](DType dtype) {
    return softmaxBackwardFast(a, dtype);
  });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::sum_to_size &a) {
  return dispatchTyped(call, a, a.output,
                       [&](DType dtype) { return sumToSizeFast(a, dtype); });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::layer_norm_backward &a) {
  // Rows to differentiate, or weight and bias gradients to write (zeros
  // when there are no rows).
  const TensorView &x = a.input;
  if (x.numElements() == 0 &&
      (x.sizes[x.rank - 1] == 0 || (!a.has_grad_weight && !a.has_grad_bias))) {
    call.setImpl("empty");
    return MEMFMT_STATUS_OK;
  }
  if (fast())
    if (const char *impl = layerNormBackwardFast(a, call.dtype())) {
      call.setImpl(impl);
      return MEMFMT_STATUS_OK;
    }
  return runReference(call, a);
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::avg_pool2d_backward &a) {
  return dispatchTyped(call, a, a.grad_input,
                       [&] { return avgPool2dBackwardFast(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::cross_entropy_loss &a) {
  if (memfmt_status_t status = checkTargets(call, a.target, a.self.sizes[1]))
    return status;
  return dispatchTyped(call, a, a.output, none);
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::cross_entropy_loss_backward &a) {
  if (memfmt_status_t status = checkTargets(call, a.target, a.self.sizes[1]))
    return status;
  return dispatchTyped(call, a, a.grad_input, none);
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::sgd_update &a) {
  if (sgdStepSkipped(a)) {
    sgdKeepState(a);
    call.setImpl("skipped");
    return MEMFMT_STATUS_OK;
  }
  return dispatchTyped(call, a, a.param_out, [&] { return sgdUpdateFast(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::increment &a) {
  bool skipped = a.has_found_inf && *a.found_inf.as<float>() != 0;
  *a.output.as<int64_t>() = *a.input.as<int64_t>() + (skipped ? 0 : 1);
  call.setImpl("reference");
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::loss_scale &a) {
  lossScale(a);
  call.setImpl("reference");
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::unscale_gradient &a) {
  call.setImpl(unscaleGradient(a, fast()));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::update_loss_scale &a) {
  updateLossScale(a);
  call.setImpl("reference");
  return MEMFMT_STATUS_OK;
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::all_reduce &a) {
  return allReduce(call, a, allReduceStaging);
}

std::unique_ptr<Backend>
memfmt::runtime::createCpuBackend(const BackendOptions &options,
                                  std::string &error) {
#ifdef MEMFMT_HAVE_ONEDNN
  try {
    return std::make_unique<CpuBackend>(options);
  } catch (const dnnl::error &e) {
    error = describeError("engine", e);
    return nullptr;
  }
#else
  (void)error;
  return std::make_unique<CpuBackend>(options);
#endif
}
