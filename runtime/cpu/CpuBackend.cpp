//===- CpuBackend.cpp - The CPU backend: picks a kernel per call ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CPU implementation of Backend. For every kernel it checks the element
// type (f32 today; f16 and bf16 are UNSUPPORTED with a message), skips calls
// whose output is empty, and picks an implementation:
//  * MEMFMT_KERNELS_REFERENCE: always the reference kernel;
//  * MEMFMT_KERNELS_FAST: oneDNN for conv2d and linear when the build has it
//    and the call's layouts suit it, the layout-specialised loops for the
//    other kernels, and the reference for whatever those decline.
// The implementation that ran is recorded on the call for the profile.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "lib/Backend.h"
#include "lib/KernelCall.h"

#ifdef MEMFMT_HAVE_ONEDNN
#include "OneDnn.h"
#endif

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;

namespace {

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(const BackendOptions &options) : options(options) {
#ifdef MEMFMT_HAVE_ONEDNN
    if (fast()) {
      dnn = std::make_unique<OneDnnEngine>();
      conv = std::make_unique<OneDnnConv>(*dnn);
      linear = std::make_unique<OneDnnLinear>(*dnn);
    }
#endif
  }

#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  memfmt_status_t run(KernelCall &call, const args::NAME &a) override;
#include "memfmt/runtime/Kernels.def"

  void invalidateCaches() override {
#ifdef MEMFMT_HAVE_ONEDNN
    if (conv)
      conv->clear();
    if (linear)
      linear->clear();
#endif
  }

private:
  bool fast() const { return options.kernels == MEMFMT_KERNELS_FAST; }

  /// Runs `fastKernel()` in FAST mode, and `reference()` when that is not
  /// selected or declines; records the implementation on `call`.
  template <typename Fast, typename Reference>
  memfmt_status_t dispatch(KernelCall &call, const TensorView &output,
                           Fast fastKernel, Reference reference);

  BackendOptions options;
#ifdef MEMFMT_HAVE_ONEDNN
  std::unique_ptr<OneDnnEngine> dnn;
  std::unique_ptr<OneDnnConv> conv;
  std::unique_ptr<OneDnnLinear> linear;
#endif
};

template <typename Fast, typename Reference>
memfmt_status_t CpuBackend::dispatch(KernelCall &call, const TensorView &output,
                                     Fast fastKernel, Reference reference) {
  if (call.dtype() != DType::f32)
    return call.fail(MEMFMT_STATUS_UNSUPPORTED,
                     std::string("element type ") + toString(call.dtype()) +
                         " is not implemented by the CPU backend yet (f32 "
                         "only)");
  if (output.numElements() == 0) {
    call.setImpl("empty");
    return MEMFMT_STATUS_OK;
  }
  if (fast()) {
    if (const char *impl = fastKernel()) {
      call.setImpl(impl);
      return MEMFMT_STATUS_OK;
    }
  }
  reference();
  call.setImpl("reference");
  return MEMFMT_STATUS_OK;
}

/// A fast kernel that never applies.
const char *none() { return nullptr; }

} // namespace

memfmt_status_t CpuBackend::run(KernelCall &call, const args::conv2d &a) {
#ifdef MEMFMT_HAVE_ONEDNN
  if (fast() && call.dtype() == DType::f32) {
    memfmt_status_t status = MEMFMT_STATUS_OK;
    if (conv->run(call, a, status))
      return status;
  }
#endif
  return dispatch(call, a.output, none, [&] { conv2dReference(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::batch_norm &a) {
  return dispatch(
      call, a.output, [&] { return batchNormFast(a); },
      [&] { batchNormReference(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::relu &a) {
  return dispatch(
      call, a.output, [&] { return reluFast(a); }, [&] { reluReference(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::add &a) {
  return dispatch(
      call, a.output, [&] { return addFast(a); }, [&] { addReference(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::max_pool2d &a) {
  MaxPoolWindow w{a.kernel_h, a.kernel_w, a.stride_h,   a.stride_w,
                  a.pad_top,  a.pad_left, a.dilation_h, a.dilation_w};
  return dispatch(
      call, a.output,
      [&] { return maxPool2dFast(a.input, a.output, nullptr, w); },
      [&] { maxPool2dReference(a.input, a.output, nullptr, w); });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::max_pool2d_with_indices &a) {
  MaxPoolWindow w{a.kernel_h, a.kernel_w, a.stride_h,   a.stride_w,
                  a.pad_top,  a.pad_left, a.dilation_h, a.dilation_w};
  return dispatch(
      call, a.output,
      [&] { return maxPool2dFast(a.input, a.output, &a.indices, w); },
      [&] { maxPool2dReference(a.input, a.output, &a.indices, w); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::avg_pool2d &a) {
  return dispatch(
      call, a.output, [&] { return avgPool2dFast(a); },
      [&] { avgPool2dReference(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call,
                                const args::adaptive_avg_pool2d &a) {
  return dispatch(
      call, a.output, [&] { return adaptiveAvgPool2dFast(a); },
      [&] { adaptiveAvgPool2dReference(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::linear &a) {
#ifdef MEMFMT_HAVE_ONEDNN
  if (fast() && call.dtype() == DType::f32) {
    memfmt_status_t status = MEMFMT_STATUS_OK;
    if (linear->run(call, a, status))
      return status;
  }
#endif
  return dispatch(call, a.output, none, [&] { linearReference(a); });
}

memfmt_status_t CpuBackend::run(KernelCall &call, const args::copy &a) {
  return dispatch(
      call, a.output, [&] { return copyFast(a.input, a.output); },
      [&] { copyReference(a.input, a.output); });
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
