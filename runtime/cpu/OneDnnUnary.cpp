//===- OneDnnUnary.cpp - oneDNN pooling, reorders, eltwise per node -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The one-source, one-destination kernels the CPU backend runs on oneDNN
// before its own loops (CpuKernels.h): for bf16 each of them; for f32 the
// copies and average pooling (CpuBackend.cpp says which and why):
//  * max_pool2d and avg_pool2d on pooling_v2_forward, with the right padding
//    that gives the call's output size (ceil_mode). Average pooling with
//    count_include_pad divides by the whole kernel in oneDNN, which is the
//    window clipped to the padded input (Kernels.def) only when no window
//    reaches past the given padding, so that case takes exactly the given
//    padding and declines otherwise;
//  * adaptive_avg_pool2d whose windows tile the input (H and W multiples of
//    the output's), as an average pooling with kernel = stride = H / OH;
//  * copy, cast_f32_to and cast_to_f32_from as a reorder between the two
//    tensors' own strides and types (rounding to nearest even);
//  * eltwise's sigmoid, silu and gelu (erf and tanh), f32 and bf16 (computed
//    in f32, rounded once), on eltwise_forward (logistic, swish with alpha
//    1, gelu_erf, gelu_tanh), whose vectorised exp, erf and tanh are
//    several times faster than libm's per element (and than the widened
//    reference for bf16: ViT-B/16's GELUs took 54 of its 219 ms there);
//    the piecewise-linear functions (clamp, hardswish, hardsigmoid) have
//    their own vectorised loops (Elementwise.cpp);
//  * eltwise_backward of the same four on eltwise_backward (sigmoid from
//    its output, logistic_use_dst_for_bwd; the others from the input), the
//    gradient's third tensor bound as the entry's `extra` memory: with
//    libm per element, EfficientNet-B0's SiLU gradients took 84 of a 404 ms
//    training step at batch 8.
// Max pooling here takes the larger of two values with oneDNN's max, so a
// NaN does not always win as it does in the reference; the reduced-precision
// builds are checked against f32 with a tolerance anyway
// (test/E2E/cpu_bf16.py).
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "lib/KernelCall.h"

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;
using dnnl::memory;

struct OneDnnUnary::Entry {
  PrimitiveKey key;
  bool usable = false;
  BoundPrimitive primitive;
  /// `extra` is a second input (a gradient's forward tensor), unbound when
  /// the primitive has none.
  memory source, destination, extra;

  explicit Entry(const PrimitiveKey &key) : key(key) {}

  /// Binds `p` to the two memories of `sourceDesc` and `destinationDesc`.
  void bind(dnnl::primitive p, const memory::desc &sourceDesc,
            const memory::desc &destinationDesc, int sourceArg,
            int destinationArg, const dnnl::engine &engine,
            memfmt_context_counters_t &counters) {
    source = memory(sourceDesc, engine, DNNL_MEMORY_NONE);
    destination = memory(destinationDesc, engine, DNNL_MEMORY_NONE);
    primitive.reset(std::move(p));
    primitive.bind(sourceArg, source);
    primitive.bind(destinationArg, destination);
    ++counters.primitives_built;
    usable = true;
  }

  /// bind, and `extraDesc` as the primitive's `extraArg`.
  void bind(dnnl::primitive p, const memory::desc &sourceDesc,
            const memory::desc &destinationDesc, const memory::desc &extraDesc,
            int sourceArg, int destinationArg, int extraArg,
            const dnnl::engine &engine, memfmt_context_counters_t &counters) {
    bind(std::move(p), sourceDesc, destinationDesc, sourceArg, destinationArg,
         engine, counters);
    extra = memory(extraDesc, engine, DNNL_MEMORY_NONE);
    primitive.bind(extraArg, extra);
  }
};

struct OneDnnUnary::PoolAxis {
  int64_t in, out, kernel, stride, padBegin, dilation;
  /// Taps from the first to the last of a window.
  int64_t extent() const { return (kernel - 1) * dilation + 1; }
  /// The end padding oneDNN's output size formula needs to give `out`:
  /// out = (in + padBegin + padEnd - extent) / stride + 1, or -1 if none.
  int64_t padEndFor() const {
    int64_t padEnd = (out - 1) * stride + extent() - in - padBegin;
    if (padEnd < 0)
      padEnd = 0;
    if ((in + padBegin + padEnd - extent()) / stride + 1 != out)
      return -1;
    return padEnd;
  }
};

namespace {

/// A pooling key: the two tensors, the windows and the algorithm.
PrimitiveKey poolKey(const TensorView &in, const TensorView &out,
                     const OneDnnUnary::PoolAxis &h,
                     const OneDnnUnary::PoolAxis &w, int64_t padBottom,
                     int64_t padRight, dnnl::algorithm algorithm, DType dtype) {
  PrimitiveKey key;
  key.add(in);
  key.add(out);
  for (const OneDnnUnary::PoolAxis *axis : {&h, &w})
    for (int64_t v :
         {axis->kernel, axis->stride, axis->padBegin, axis->dilation})
      key.add(v);
  key.add(padBottom);
  key.add(padRight);
  key.add(static_cast<int64_t>(algorithm));
  key.add(static_cast<int64_t>(dtype));
  return key;
}

/// A reorder key: the two tensors and their types.
PrimitiveKey reorderKey(const TensorView &in, DType inType,
                        const TensorView &out, DType outType) {
  PrimitiveKey key;
  key.add(in);
  key.add(out);
  key.add(static_cast<int64_t>(inType));
  key.add(static_cast<int64_t>(outType));
  return key;
}

bool describable(const TensorView &in, const TensorView &out) {
  return in.numElements() > 0 && out.numElements() > 0 &&
         hasPositiveStrides(in) && hasPositiveStrides(out);
}

} // namespace

OneDnnUnary::OneDnnUnary(OneDnnEngine &dnn) : dnn(dnn) {}
OneDnnUnary::~OneDnnUnary() = default;
void OneDnnUnary::clear() { cache.clear(); }

template <typename Build>
bool OneDnnUnary::runEntry(KernelCall &call, const PrimitiveKey &key,
                           const TensorView &input, const TensorView &output,
                           const char *what, Build build,
                           memfmt_status_t &status,
                           const TensorView *extraInput) {
  memfmt_context_counters_t &counters = call.counters();
  Entry &entry =
      cache.lookup(call.node(), key, [&](Entry &e) { build(e, counters); });
  if (!entry.usable)
    return false;
  try {
    entry.source.set_data_handle(input.data);
    entry.destination.set_data_handle(output.data);
    if (extraInput)
      entry.extra.set_data_handle(extraInput->data);
    entry.primitive.execute(dnn, counters);
  } catch (const dnnl::error &error) {
    status = call.fail(MEMFMT_STATUS_BACKEND_ERROR, describeError(what, error));
    return true;
  }
  call.setImpl("onednn");
  status = MEMFMT_STATUS_OK;
  return true;
}

namespace {

/// Builds a pooling entry from `in` to `out`; leaves it unusable when
/// oneDNN has no implementation.
void buildPool(OneDnnUnary::Entry &e, memfmt_context_counters_t &counters,
               const OneDnnEngine &dnn, const TensorView &in,
               const TensorView &out, DType dtype, dnnl::algorithm algorithm,
               const OneDnnUnary::PoolAxis &h, const OneDnnUnary::PoolAxis &w,
               int64_t padBottom, int64_t padRight) {
  memory::desc source = descOf(in, dtype, &out),
               destination = descOf(out, dtype, &in);
  const auto inference = dnnl::prop_kind::forward_inference;
  dnnl::pooling_v2_forward::desc desc(
      inference, algorithm, source, destination, {h.stride, w.stride},
      {h.kernel, w.kernel}, {h.dilation - 1, w.dilation - 1},
      {h.padBegin, w.padBegin}, {padBottom, padRight});
  dnnl::pooling_v2_forward::primitive_desc pd(desc, dnn.engine,
                                              /*allow_empty=*/true);
  if (pd)
    e.bind(dnnl::pooling_v2_forward(pd), source, destination, DNNL_ARG_SRC,
           DNNL_ARG_DST, dnn.engine, counters);
}

} // namespace

bool OneDnnUnary::runPool(KernelCall &call, const TensorView &in,
                          const TensorView &out, const PoolAxis &h,
                          const PoolAxis &w, int64_t padBottom,
                          int64_t padRight, dnnl::algorithm algorithm,
                          memfmt_status_t &status) {
  // oneDNN visits every tap of a window, padding included: a kernel larger
  // than the input (up to 2^31 taps, found by memfmt-fuzz-runtime) goes to
  // the widened kernels, which visit only the taps inside the input.
  if (h.kernel > h.in || w.kernel > w.in)
    return false;
  const DType dtype = call.dtype();
  return runEntry(
      call, poolKey(in, out, h, w, padBottom, padRight, algorithm, dtype), in,
      out, "pooling_forward",
      [&](Entry &e, memfmt_context_counters_t &counters) {
        buildPool(e, counters, dnn, in, out, dtype, algorithm, h, w, padBottom,
                  padRight);
      },
      status);
}

bool OneDnnUnary::run(KernelCall &call, const args::max_pool2d &a,
                      memfmt_status_t &status) {
  const TensorView &in = a.input, &out = a.output;
  if (!describable(in, out))
    return false;
  PoolAxis h{in.sizes[2], out.sizes[2], a.kernel_h,
             a.stride_h,  a.pad_top,    a.dilation_h};
  PoolAxis w{in.sizes[3], out.sizes[3], a.kernel_w,
             a.stride_w,  a.pad_left,   a.dilation_w};
  int64_t padBottom = h.padEndFor(), padRight = w.padEndFor();
  if (padBottom < 0 || padRight < 0)
    return false;
  return runPool(call, in, out, h, w, padBottom, padRight,
                 dnnl::algorithm::pooling_max, status);
}

bool OneDnnUnary::run(KernelCall &call, const args::avg_pool2d &a,
                      memfmt_status_t &status) {
  const TensorView &in = a.input, &out = a.output;
  if (!describable(in, out))
    return false;
  PoolAxis h{in.sizes[2], out.sizes[2], a.kernel_h, a.stride_h, a.pad_top, 1};
  PoolAxis w{in.sizes[3], out.sizes[3], a.kernel_w, a.stride_w, a.pad_left, 1};
  int64_t padBottom = h.padEndFor(), padRight = w.padEndFor();
  if (padBottom < 0 || padRight < 0)
    return false;
  // Dividing by the whole kernel is right only inside the given padding.
  if (a.count_include_pad &&
      (padBottom != a.pad_bottom || padRight != a.pad_right))
    return false;
  return runPool(call, in, out, h, w, padBottom, padRight,
                 a.count_include_pad
                     ? dnnl::algorithm::pooling_avg_include_padding
                     : dnnl::algorithm::pooling_avg_exclude_padding,
                 status);
}

bool OneDnnUnary::run(KernelCall &call, const args::adaptive_avg_pool2d &a,
                      memfmt_status_t &status) {
  const TensorView &in = a.input, &out = a.output;
  if (!describable(in, out) || in.sizes[2] % out.sizes[2] != 0 ||
      in.sizes[3] % out.sizes[3] != 0)
    return false;
  int64_t kh = in.sizes[2] / out.sizes[2], kw = in.sizes[3] / out.sizes[3];
  PoolAxis h{in.sizes[2], out.sizes[2], kh, kh, 0, 1};
  PoolAxis w{in.sizes[3], out.sizes[3], kw, kw, 0, 1};
  return runPool(call, in, out, h, w, 0, 0,
                 dnnl::algorithm::pooling_avg_exclude_padding, status);
}

namespace {

/// Builds a reorder entry from `in` (of `inType`) to `out` (of `outType`).
void buildReorder(OneDnnUnary::Entry &e, memfmt_context_counters_t &counters,
                  const OneDnnEngine &dnn, const TensorView &in, DType inType,
                  const TensorView &out, DType outType) {
  memory::desc source = descOf(in, inType, &out),
               destination = descOf(out, outType, &in);
  dnnl::reorder::primitive_desc pd(dnn.engine, source, dnn.engine, destination,
                                   dnnl::primitive_attr(),
                                   /*allow_empty=*/true);
  if (!pd)
    return;
  e.bind(dnnl::reorder(pd), source, destination, DNNL_ARG_FROM, DNNL_ARG_TO,
         dnn.engine, counters);
}

} // namespace

bool OneDnnUnary::runReorder(KernelCall &call, const TensorView &input,
                             DType inType, const TensorView &output,
                             DType outType, memfmt_status_t &status) {
  if (!describable(input, output))
    return false;
  return runEntry(
      call, reorderKey(input, inType, output, outType), input, output,
      "reorder",
      [&](Entry &e, memfmt_context_counters_t &counters) {
        buildReorder(e, counters, dnn, input, inType, output, outType);
      },
      status);
}

bool OneDnnUnary::run(KernelCall &call, const args::copy &a,
                      memfmt_status_t &status) {
  return runReorder(call, a.input, call.dtype(), a.output, call.dtype(),
                    status);
}

bool OneDnnUnary::run(KernelCall &call, const args::cast_f32_to &a,
                      memfmt_status_t &status) {
  // Without bf16 instructions oneDNN 2.6 rounds to bf16 in software, and
  // that path loses the sign of -0 (measured on AVX2); memfmt's own
  // rounding runs there instead.
  if (call.dtype() == DType::bf16 && !hasNativeBf16())
    return false;
  return runReorder(call, a.input, DType::f32, a.output, call.dtype(), status);
}

bool OneDnnUnary::run(KernelCall &call, const args::cast_to_f32_from &a,
                      memfmt_status_t &status) {
  return runReorder(call, a.input, call.dtype(), a.output, DType::f32, status);
}

namespace {

/// oneDNN's eltwise algorithm and alpha for a memfmt_eltwise_op_t it
/// computes the same function of (sigmoid, silu, gelu), or false.
/// `useOutput`: sigmoid's gradient from its output.
bool eltwiseAlgorithm(int64_t op, bool useOutput, dnnl::algorithm &algorithm,
                      float &alpha) {
  alpha = 0.0f;
  switch (op) {
  case MEMFMT_ELTWISE_SIGMOID:
    algorithm = useOutput ? dnnl::algorithm::eltwise_logistic_use_dst_for_bwd
                          : dnnl::algorithm::eltwise_logistic;
    return true;
  case MEMFMT_ELTWISE_SILU:
    algorithm = dnnl::algorithm::eltwise_swish;
    alpha = 1.0f;
    return true;
  case MEMFMT_ELTWISE_GELU_ERF:
    algorithm = dnnl::algorithm::eltwise_gelu_erf;
    return true;
  case MEMFMT_ELTWISE_GELU_TANH:
    algorithm = dnnl::algorithm::eltwise_gelu_tanh;
    return true;
  default:
    return false;
  }
}

} // namespace

bool OneDnnUnary::run(KernelCall &call, const args::eltwise_backward &a,
                      memfmt_status_t &status) {
  dnnl::algorithm algorithm;
  float alpha;
  if (!eltwiseAlgorithm(a.op, /*useOutput=*/true, algorithm, alpha))
    return false;
  const TensorView &gradOut = a.grad_output, &self = a.self,
                   &gradIn = a.grad_input;
  const DType dtype = call.dtype();
  if ((dtype != DType::f32 && dtype != DType::bf16) ||
      !describable(gradOut, gradIn) || !describable(self, gradIn) ||
      !gradOut.sameLayoutAs(gradIn) || !self.sameLayoutAs(gradIn))
    return false;
  PrimitiveKey key;
  key.add(gradIn);
  key.add(a.op);
  key.add(static_cast<int64_t>(dtype));
  const bool fromOutput = a.op == MEMFMT_ELTWISE_SIGMOID;
  return runEntry(
      call, key, gradOut, gradIn, "eltwise_backward",
      [&](Entry &e, memfmt_context_counters_t &counters) {
        memory::desc data = descOf(gradIn, dtype);
        dnnl::eltwise_forward::primitive_desc hint(
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training,
                                        algorithm, data, alpha, 0.0f),
            dnn.engine, /*allow_empty=*/true);
        if (!hint)
          return;
        dnnl::eltwise_backward::primitive_desc pd(
            dnnl::eltwise_backward::desc(algorithm, data, data, alpha, 0.0f),
            dnn.engine, hint, /*allow_empty=*/true);
        if (pd)
          e.bind(dnnl::eltwise_backward(pd), data, data, data,
                 DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC,
                 fromOutput ? DNNL_ARG_DST : DNNL_ARG_SRC, dnn.engine,
                 counters);
      },
      status, &self);
}

bool OneDnnUnary::run(KernelCall &call, const args::eltwise &a,
                      memfmt_status_t &status) {
  dnnl::algorithm algorithm;
  float alpha;
  if (!eltwiseAlgorithm(a.op, /*useOutput=*/false, algorithm, alpha))
    return false;
  const TensorView &in = a.input, &out = a.output;
  const DType dtype = call.dtype();
  if ((dtype != DType::f32 && dtype != DType::bf16) || !describable(in, out) ||
      !in.sameLayoutAs(out))
    return false;
  PrimitiveKey key;
  key.add(in);
  key.add(a.op);
  key.add(static_cast<int64_t>(dtype));
  return runEntry(
      call, key, in, out, "eltwise_forward",
      [&](Entry &e, memfmt_context_counters_t &counters) {
        memory::desc data = descOf(in, dtype);
        dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         algorithm, data, alpha, 0.0f);
        dnnl::eltwise_forward::primitive_desc pd(desc, dnn.engine,
                                                 /*allow_empty=*/true);
        if (pd)
          e.bind(dnnl::eltwise_forward(pd), data, data, DNNL_ARG_SRC,
                 DNNL_ARG_DST, dnn.engine, counters);
      },
      status);
}
