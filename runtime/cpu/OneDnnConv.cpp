//===- OneDnnConv.cpp - oneDNN convolutions, cached per node --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// conv2d on oneDNN 2.x (convolution_forward::desc). The output decides the
// format: NHWC when it is channels-last contiguous, NCHW when it is
// contiguous (a tensor that is both takes the input's format, L3); any other
// output goes to the reference. An input in that format is used in place,
// any other input (the other format, or a strided view) is reordered into a
// scratch buffer first. Weights, whatever their strides, are described as
// they are ([G, O/G, I/G, KH, KW] for groups) and reordered once into the
// layout the primitive picked (format_tag::any). Bias is fused; the residual
// is copied into the output unless it already is the output and added by a
// sum post-op; relu is an eltwise post-op after it, so the result is
// relu(conv + bias + residual) as Kernels.def says.
//
// Everything that depends on the call's shapes, strides, attributes and
// weight buffer is built once per node and kept until a call with a
// different key arrives or the context's caches are invalidated; a
// configuration oneDNN cannot implement is remembered as such, so the
// fallback costs nothing on later calls.
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "CpuKernels.h"
#include "lib/KernelCall.h"

#include <algorithm>
#include <vector>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;
using dnnl::memory;
using Tag = dnnl::memory::format_tag;

namespace {

memory::dims dimsOf(const TensorView &t) {
  return memory::dims(t.sizes, t.sizes + t.rank);
}

/// The strides of `t` for a oneDNN memory descriptor. A size-1 dim's stride
/// is free (L2) and may be anything in a memref; it becomes the tensor's
/// extent, as if the dim were outermost, which oneDNN always accepts.
memory::dims stridesOf(const TensorView &t) {
  int64_t extent = 1;
  for (int64_t d = 0; d < t.rank; ++d)
    if (t.sizes[d] > 1)
      extent = std::max(extent, t.sizes[d] * t.strides[d]);
  memory::dims strides(t.strides, t.strides + t.rank);
  for (int64_t d = 0; d < t.rank; ++d)
    if (t.sizes[d] == 1)
      strides[d] = extent;
  return strides;
}

/// True if some output position's window only covers padding along one
/// spatial dimension (no tap lands in [0, in)): oneDNN 2.6 then leaves the
/// bias out of those positions when a sum post-op is attached, so the
/// residual is added separately there (found by the random-graph tests).
bool hasPaddingOnlyWindow(int64_t in, int64_t out, int64_t kernel,
                          int64_t stride, int64_t padBegin, int64_t dilation) {
  for (int64_t o = 0; o < out; ++o) {
    bool seesInput = false;
    for (int64_t k = 0; k < kernel && !seesInput; ++k) {
      int64_t i = o * stride - padBegin + k * dilation;
      seesInput = i >= 0 && i < in;
    }
    if (!seesInput)
      return true;
  }
  return false;
}

/// True if the residual can be a sum post-op (see hasPaddingOnlyWindow).
bool residualAsPostOp(const args::conv2d &a) {
  return a.has_residual &&
         !hasPaddingOnlyWindow(a.input.sizes[2], a.output.sizes[2],
                               a.weight.sizes[2], a.stride_h, a.pad_top,
                               a.dilation_h) &&
         !hasPaddingOnlyWindow(a.input.sizes[3], a.output.sizes[3],
                               a.weight.sizes[3], a.stride_w, a.pad_left,
                               a.dilation_w);
}

/// Everything the primitive depends on.
std::vector<int64_t> makeKey(const args::conv2d &a, Tag format,
                             bool reorderInput) {
  std::vector<int64_t> key;
  for (const TensorView *t : {&a.input, &a.weight, &a.output}) {
    key.insert(key.end(), t->sizes, t->sizes + t->rank);
    key.insert(key.end(), t->strides, t->strides + t->rank);
  }
  key.insert(key.end(),
             {a.stride_h, a.stride_w, a.pad_top, a.pad_left, a.pad_bottom,
              a.pad_right, a.dilation_h, a.dilation_w, a.groups, a.has_bias,
              a.has_residual, a.relu, static_cast<int64_t>(format),
              reorderInput, reinterpret_cast<intptr_t>(a.weight.data)});
  return key;
}

} // namespace

struct OneDnnConv::Entry {
  std::vector<int64_t> key;
  /// False when oneDNN has no implementation for this key.
  bool usable = false;
  bool reorderInput = false;
  /// The residual is a sum post-op; else run() adds it after the primitive.
  bool sumPostOp = false;
  dnnl::convolution_forward conv;
  dnnl::reorder inputReorder;
  /// The caller's input (when reordered), the primitive's input, output,
  /// bias and packed weights.
  memory userInput, input, output, bias, weights;

  explicit Entry(std::vector<int64_t> key) : key(std::move(key)) {}

  /// Creates the primitive and packs the weights; leaves `usable` false when
  /// oneDNN has no implementation. Throws dnnl::error when oneDNN rejects the
  /// description.
  void build(OneDnnEngine &dnn, const args::conv2d &a, Tag format,
             bool reorderInput) {
    this->reorderInput = reorderInput;
    const TensorView &w = a.weight;
    const int64_t groups = a.groups;
    const memory::data_type f32 = memory::data_type::f32;
    memory::desc inputDesc(dimsOf(a.input), f32, format);
    memory::desc outputDesc(dimsOf(a.output), f32, format);
    // Weights as they are: [O, I, KH, KW] or [G, O/G, I, KH, KW].
    memory::dims weightDims = dimsOf(w), weightStrides = stridesOf(w);
    if (groups > 1) {
      weightDims = {groups, w.sizes[0] / groups, w.sizes[1], w.sizes[2],
                    w.sizes[3]};
      weightStrides.insert(weightStrides.begin(),
                           weightStrides[0] * (w.sizes[0] / groups));
    }
    memory::desc userWeightDesc(weightDims, f32, weightStrides);
    memory::desc anyWeightDesc(weightDims, f32, Tag::any);
    memory::desc biasDesc;
    if (a.has_bias)
      biasDesc = memory::desc({w.sizes[0]}, f32, Tag::x);

    // With the residual outside the primitive, the relu is applied after
    // adding it (run()).
    sumPostOp = residualAsPostOp(a);
    bool residualOutside = a.has_residual && !sumPostOp;
    dnnl::post_ops ops;
    if (sumPostOp)
      ops.append_sum(1.0f);
    if (a.relu && !residualOutside)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);

    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        inputDesc, anyWeightDesc, biasDesc, outputDesc,
        {a.stride_h, a.stride_w}, {a.dilation_h - 1, a.dilation_w - 1},
        {a.pad_top, a.pad_left}, {a.pad_bottom, a.pad_right});
    dnnl::convolution_forward::primitive_desc pd(desc, attr, dnn.engine,
                                                 /*allow_empty=*/true);
    if (!pd)
      return; // No implementation: the reference runs instead.
    conv = dnnl::convolution_forward(pd);

    // Pack the weights once.
    memory userWeights(userWeightDesc, dnn.engine, w.data);
    weights = memory(pd.weights_desc(), dnn.engine);
    dnnl::reorder(userWeights, weights)
        .execute(dnn.stream, userWeights, weights);
    dnn.stream.wait();

    output = memory(outputDesc, dnn.engine, DNNL_MEMORY_NONE);
    if (a.has_bias)
      bias = memory(biasDesc, dnn.engine, DNNL_MEMORY_NONE);
    if (reorderInput) {
      memory::desc userDesc(dimsOf(a.input), f32, stridesOf(a.input));
      userInput = memory(userDesc, dnn.engine, DNNL_MEMORY_NONE);
      input = memory(inputDesc, dnn.engine); // Scratch, owned here.
      inputReorder = dnnl::reorder(userInput, input);
    } else {
      input = memory(inputDesc, dnn.engine, DNNL_MEMORY_NONE);
    }
    usable = true;
  }
};

OneDnnConv::OneDnnConv(OneDnnEngine &dnn) : dnn(dnn) {}
OneDnnConv::~OneDnnConv() = default;
void OneDnnConv::clear() { cache.clear(); }

bool OneDnnConv::run(KernelCall &call, const args::conv2d &a,
                     memfmt_status_t &status) {
  const TensorView &in = a.input, &out = a.output;
  if (in.numElements() == 0 || a.weight.numElements() == 0 ||
      out.numElements() == 0 || !hasPositiveStrides(in) ||
      !hasPositiveStrides(a.weight))
    return false;
  // The output's format; an input in the same format is used directly.
  Tag format;
  bool reorderInput = false;
  if (out.isChannelsLastContiguous() && in.isChannelsLastContiguous())
    format = Tag::nhwc;
  else if (out.isContiguous() && in.isContiguous())
    format = Tag::nchw;
  else if (out.isChannelsLastContiguous() || out.isContiguous()) {
    format = out.isChannelsLastContiguous() ? Tag::nhwc : Tag::nchw;
    reorderInput = true;
  } else {
    return false;
  }

  std::vector<int64_t> key = makeKey(a, format, reorderInput);
  std::unique_ptr<Entry> &entry = cache[call.node()];
  if (!entry || entry->key != key) {
    entry.reset();
    entry = std::make_unique<Entry>(std::move(key));
    try {
      entry->build(dnn, a, format, reorderInput);
    } catch (const dnnl::error &) {
      // Strides or attributes oneDNN cannot take: the entry stays unusable
      // and this node runs the reference.
      entry->usable = false;
    }
  }
  if (!entry->usable)
    return false;

  // relu(conv + bias + residual): the sum post-op adds what the output holds.
  if (entry->sumPostOp && !a.residual.sameViewAs(out) &&
      !copyFast(a.residual, out))
    copyReference(a.residual, out);
  // The residual is added after the primitive instead: it must not be
  // overwritten before that, so an in-place residual is copied first.
  std::vector<float> savedResidual;
  TensorView residual = a.residual;
  if (a.has_residual && !entry->sumPostOp && a.residual.data == out.data) {
    savedResidual.resize(static_cast<size_t>(out.numElements()));
    residual.data = savedResidual.data();
    for (int64_t d = 0, stride = 1; d < out.rank; ++d) {
      int64_t dim = out.rank - 1 - d;
      residual.strides[dim] = stride;
      stride *= out.sizes[dim];
    }
    copyReference(a.residual, residual);
  }
  std::vector<float> packedBias;
  try {
    if (a.has_bias) {
      entry->bias.set_data_handle(
          const_cast<float *>(denseVector(a.bias, packedBias)));
    }
    entry->output.set_data_handle(out.data);
    if (entry->reorderInput) {
      entry->userInput.set_data_handle(in.data);
      entry->inputReorder.execute(dnn.stream, entry->userInput, entry->input);
    } else {
      entry->input.set_data_handle(in.data);
    }
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, entry->input},
                                            {DNNL_ARG_WEIGHTS, entry->weights},
                                            {DNNL_ARG_DST, entry->output}};
    if (a.has_bias)
      args.emplace(DNNL_ARG_BIAS, entry->bias);
    entry->conv.execute(dnn.stream, args);
    dnn.stream.wait();
    if (a.has_residual && !entry->sumPostOp) {
      args::add sum;
      sum.lhs = out;
      sum.rhs = residual;
      sum.output = out;
      sum.relu = a.relu;
      addReference(sum);
    }
  } catch (const dnnl::error &error) {
    status = call.fail(MEMFMT_STATUS_BACKEND_ERROR,
                       describeError("convolution_forward", error));
    return true;
  }
  call.setImpl(entry->reorderInput ? "onednn_reorder_input" : "onednn");
  status = MEMFMT_STATUS_OK;
  return true;
}
