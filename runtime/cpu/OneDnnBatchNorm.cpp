//===- OneDnnBatchNorm.cpp - Training batch norm on oneDNN ----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// native_batch_norm and native_batch_norm_backward on oneDNN 2.6's
// batch_normalization primitives (use_scale | use_shift), for 4-D f32
// tensors dense in NCHW or NHWC with every data tensor of a call in the same
// layout; anything else goes to the reference (BatchNormTraining.cpp).
//  * Forward (forward_training): the primitive computes the batch mean and
//    the biased variance and normalises; writeBatchNormStatistics then
//    writes save_mean, save_invstd and the running statistics (with the
//    unbiased variance) in double, as the reference does.
//  * Backward (prop_kind::backward): the primitive takes the variance, not
//    save_invstd, so it is given var = 1 / save_invstd^2 with epsilon 0,
//    which gives back save_invstd to f32 rounding whatever eps was (passing
//    var = 1 / invstd^2 - eps would cancel catastrophically for var << eps).
//    It always writes the scale and shift gradients (into the entry's
//    buffers, copied out when asked for); a call without grad_input goes to
//    the reference, since the primitive always writes one. oneDNN 2.6's
//    backward also wants a SHIFT argument it does not read (execute fails
//    with invalid_arguments without one): it gets a buffer of zeros.
// Each node's entry owns dense per-channel buffers bound once, so a call
// copies C weights in and C statistics out and allocates nothing.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "OneDnn.h"

#include "lib/KernelCall.h"

#include <cmath>
#include <cstring>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;
using dnnl::memory;

namespace {

const dnnl::normalization_flags kScaleShift =
    dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

/// True if `t` is a 4-D tensor dense in NCHW or NHWC with elements.
bool takes(const TensorView &t) {
  return t.rank == 4 && t.numElements() > 0 &&
         (t.isContiguous() || t.isChannelsLastContiguous());
}

/// A [C] f32 memory on `buffer`'s storage.
memory vectorMemory(std::vector<float> &buffer, const dnnl::engine &engine) {
  memory::desc desc({static_cast<memory::dim>(buffer.size())},
                    memory::data_type::f32, memory::format_tag::a);
  return memory(desc, engine, buffer.data());
}

/// Copies the 1-D tensor `t` (any stride) into `to`.
void gather(const TensorView &t, std::vector<float> &to) {
  const float *from = t.as<float>();
  for (size_t c = 0; c < to.size(); ++c)
    to[c] = from[static_cast<int64_t>(c) * t.strides[0]];
}

/// Copies `from` into the 1-D tensor `t` (any stride).
void scatter(const std::vector<float> &from, const TensorView &t) {
  float *to = t.as<float>();
  for (size_t c = 0; c < from.size(); ++c)
    to[static_cast<int64_t>(c) * t.strides[0]] = from[c];
}

int64_t bitsOf(double value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// Runs `entry`'s primitive; on a oneDNN error records it in `status`.
bool execute(KernelCall &call, OneDnnEngine &dnn, const BoundPrimitive &p,
             const char *what, memfmt_status_t &status) {
  try {
    p.execute(dnn, call.counters());
  } catch (const dnnl::error &error) {
    status = call.fail(MEMFMT_STATUS_BACKEND_ERROR, describeError(what, error));
    return false;
  }
  call.setImpl("onednn");
  status = MEMFMT_STATUS_OK;
  return true;
}

} // namespace

struct OneDnnBatchNorm::ForwardEntry {
  PrimitiveKey key;
  bool usable = false;
  BoundPrimitive primitive;
  memory source, destination;
  std::vector<float> scale, shift, mean, variance;
  std::vector<double> wideMean, wideVariance;

  explicit ForwardEntry(const PrimitiveKey &key) : key(key) {}

  void build(const OneDnnEngine &dnn, const TensorView &input, double eps,
             memfmt_context_counters_t &counters) {
    const size_t channels = static_cast<size_t>(input.sizes[1]);
    for (std::vector<float> *v : {&scale, &shift, &mean, &variance})
      v->assign(channels, 0.0f);
    wideMean.assign(channels, 0.0);
    wideVariance.assign(channels, 0.0);
    memory::desc data = descOf(input, DType::f32);
    dnnl::batch_normalization_forward::desc desc(
        dnnl::prop_kind::forward_training, data, static_cast<float>(eps),
        kScaleShift);
    dnnl::batch_normalization_forward::primitive_desc pd(desc, dnn.engine,
                                                         /*allow_empty=*/true);
    if (!pd || pd.workspace_desc().get_size() != 0)
      return;
    source = memory(data, dnn.engine, DNNL_MEMORY_NONE);
    destination = memory(data, dnn.engine, DNNL_MEMORY_NONE);
    primitive.reset(dnnl::batch_normalization_forward(pd));
    primitive.bind(DNNL_ARG_SRC, source);
    primitive.bind(DNNL_ARG_DST, destination);
    // The primitive keeps the handles of the memories it was bound to, so
    // the vector memories live as long as the entry through these binds.
    scaleMemory = vectorMemory(scale, dnn.engine);
    shiftMemory = vectorMemory(shift, dnn.engine);
    meanMemory = vectorMemory(mean, dnn.engine);
    varianceMemory = vectorMemory(variance, dnn.engine);
    primitive.bind(DNNL_ARG_SCALE, scaleMemory);
    primitive.bind(DNNL_ARG_SHIFT, shiftMemory);
    primitive.bind(DNNL_ARG_MEAN, meanMemory);
    primitive.bind(DNNL_ARG_VARIANCE, varianceMemory);
    ++counters.primitives_built;
    usable = true;
  }

  memory scaleMemory, shiftMemory, meanMemory, varianceMemory;
};

struct OneDnnBatchNorm::BackwardEntry {
  PrimitiveKey key;
  bool usable = false;
  BoundPrimitive primitive;
  memory source, gradOut, gradInput;
  memory scaleMemory, shiftMemory, meanMemory, varianceMemory,
      gradScaleMemory, gradShiftMemory;
  std::vector<float> scale, shift, mean, variance, gradScale, gradShift;

  explicit BackwardEntry(const PrimitiveKey &key) : key(key) {}

  void build(const OneDnnEngine &dnn, const TensorView &input,
             memfmt_context_counters_t &counters) {
    const size_t channels = static_cast<size_t>(input.sizes[1]);
    for (std::vector<float> *v :
         {&scale, &shift, &mean, &variance, &gradScale, &gradShift})
      v->assign(channels, 0.0f);
    memory::desc data = descOf(input, DType::f32);
    // Epsilon 0: the variance given is 1 / save_invstd^2 (file comment).
    dnnl::batch_normalization_forward::desc hintDesc(
        dnnl::prop_kind::forward_training, data, 0.0f, kScaleShift);
    dnnl::batch_normalization_forward::primitive_desc hint(
        hintDesc, dnn.engine, /*allow_empty=*/true);
    if (!hint)
      return;
    dnnl::batch_normalization_backward::desc desc(
        dnnl::prop_kind::backward, data, data, 0.0f, kScaleShift);
    dnnl::batch_normalization_backward::primitive_desc pd(
        desc, dnn.engine, hint, /*allow_empty=*/true);
    if (!pd || pd.workspace_desc().get_size() != 0)
      return;
    source = memory(data, dnn.engine, DNNL_MEMORY_NONE);
    gradOut = memory(data, dnn.engine, DNNL_MEMORY_NONE);
    gradInput = memory(data, dnn.engine, DNNL_MEMORY_NONE);
    scaleMemory = vectorMemory(scale, dnn.engine);
    shiftMemory = vectorMemory(shift, dnn.engine);
    meanMemory = vectorMemory(mean, dnn.engine);
    varianceMemory = vectorMemory(variance, dnn.engine);
    gradScaleMemory = vectorMemory(gradScale, dnn.engine);
    gradShiftMemory = vectorMemory(gradShift, dnn.engine);
    primitive.reset(dnnl::batch_normalization_backward(pd));
    primitive.bind(DNNL_ARG_SRC, source);
    primitive.bind(DNNL_ARG_DIFF_DST, gradOut);
    primitive.bind(DNNL_ARG_DIFF_SRC, gradInput);
    primitive.bind(DNNL_ARG_SCALE, scaleMemory);
    primitive.bind(DNNL_ARG_SHIFT, shiftMemory);
    primitive.bind(DNNL_ARG_MEAN, meanMemory);
    primitive.bind(DNNL_ARG_VARIANCE, varianceMemory);
    primitive.bind(DNNL_ARG_DIFF_SCALE, gradScaleMemory);
    primitive.bind(DNNL_ARG_DIFF_SHIFT, gradShiftMemory);
    ++counters.primitives_built;
    usable = true;
  }
};

OneDnnBatchNorm::OneDnnBatchNorm(OneDnnEngine &dnn) : dnn(dnn) {}
OneDnnBatchNorm::~OneDnnBatchNorm() = default;

void OneDnnBatchNorm::clear() {
  forward.clear();
  backward.clear();
}

bool OneDnnBatchNorm::run(KernelCall &call, const args::native_batch_norm &a,
                          memfmt_status_t &status) {
  const TensorView &in = a.input;
  if (!takes(in) || !a.output.sameLayoutAs(in))
    return false;
  PrimitiveKey key;
  key.add(in);
  key.add(bitsOf(a.eps));
  ForwardEntry &e = forward.lookup(call.node(), key, [&](ForwardEntry &e) {
    e.build(dnn, in, a.eps, call.counters());
  });
  if (!e.usable)
    return false;
  gather(a.weight, e.scale);
  gather(a.bias, e.shift);
  e.source.set_data_handle(in.data);
  e.destination.set_data_handle(a.output.data);
  if (!execute(call, dnn, e.primitive, "batch_normalization_forward", status))
    return true;
  std::copy(e.mean.begin(), e.mean.end(), e.wideMean.begin());
  std::copy(e.variance.begin(), e.variance.end(), e.wideVariance.begin());
  writeBatchNormStatistics(a, e.wideMean.data(), e.wideVariance.data());
  return true;
}

bool OneDnnBatchNorm::run(KernelCall &call,
                          const args::native_batch_norm_backward &a,
                          memfmt_status_t &status) {
  const TensorView &in = a.input;
  if (!a.has_grad_input || !takes(in) || !a.grad_out.sameLayoutAs(in) ||
      !a.grad_input.sameLayoutAs(in))
    return false;
  PrimitiveKey key;
  key.add(in);
  BackwardEntry &e = backward.lookup(call.node(), key, [&](BackwardEntry &e) {
    e.build(dnn, in, call.counters());
  });
  if (!e.usable)
    return false;
  gather(a.weight, e.scale);
  gather(a.save_mean, e.mean);
  const float *invstd = a.save_invstd.as<float>();
  for (size_t c = 0; c < e.variance.size(); ++c) {
    double s = invstd[static_cast<int64_t>(c) * a.save_invstd.strides[0]];
    e.variance[c] = static_cast<float>(1.0 / (s * s));
  }
  e.source.set_data_handle(in.data);
  e.gradOut.set_data_handle(a.grad_out.data);
  e.gradInput.set_data_handle(a.grad_input.data);
  if (!execute(call, dnn, e.primitive, "batch_normalization_backward", status))
    return true;
  if (a.has_grad_weight)
    scatter(e.gradScale, a.grad_weight);
  if (a.has_grad_bias)
    scatter(e.gradShift, a.grad_bias);
  return true;
}
