//===- OneDnnConvBackward.cpp - oneDNN convolution gradients per node -----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// convolution_backward (f32 or bf16) on oneDNN 2.x. A pointwise convolution
// (1x1, unit stride, no padding, one group) whose activations are matrices
// ([N * H * W, C] rows under their own strides: channels-last tensors, and
// NCHW ones of one pixel) is linear_backward on those matrices and runs as
// its matmuls (OneDnnLinearBackward.cpp) on the tensors as they lie: no
// weight is packed and nothing is copied. oneDNN 2.6's convolution
// primitives would reorder the weights into their blocked layout for the
// backward-data primitive and the weight gradient out of it on every call
// (the weights change every step). In a ResNet-50 batch-8 training step
// (AMD Zen 5, 2 threads, memfmt-train --profile) the gradients of its 33
// unit-stride pointwise layers took 156 ms as matmuls, 182 ms as
// primitives and reorders. (Their forward stays on the convolution
// primitive, OneDnnConv.cpp: as matmuls it took 170-176 ms per step against
// 163-166 with weight packs.) Every other convolution: grad_input by a
// convolution_backward_data primitive, grad_weight and grad_bias by one
// convolution_backward_weights primitive (bias fused), each made with the
// forward_training primitive descriptor oneDNN wants as a hint. A gradient
// whose has_* flag is 0 is not computed (grad_bias alone computes the
// weight gradient into scratch and drops it).
//
// Activations (grad_output, input, grad_input) are described in one format:
// NHWC when grad_output is channels-last contiguous (else when the input
// is), NCHW when it is contiguous, else NHWC. Where oneDNN's implementation
// for that format is a slow one (its reference, or the GEMM-based kernels
// it uses for plain NCHW), the activations are left to oneDNN
// (format_tag::any) instead, which picks the layout of its jit kernels, as
// the forward does for NCHW. 3x3 convolutions with unit stride and dilation,
// one group, symmetric padding and at least 1024 output positions run
// Winograd's F(4x4, 3x3) instead (in oneDNN's blocked layouts) when the
// context allows it, up to twice as fast as the direct kernels. Weights and
// their gradient are always left to oneDNN. Every tensor whose layout is not
// the one the primitive reads or writes goes through a reorder into or out of a
// shared scratch buffer (the weights every call: they change every training
// step), so any positive strides work; zero or negative strides go to the
// reference.
//
// With the context's allow_bf16 option, on a CPU with bf16 instructions, the
// gradients multiply in bf16 (f32 accumulation): both primitives are
// described with bf16 grad_output, input and weights, which the ports
// above round into the scratch, and f32 grad_input, grad_weight and
// grad_bias, written straight to the caller's tensors where the layouts
// agree; pointwise convolutions' matmuls multiply bf16 copies
// (OneDnnLinearBackward.cpp); Winograd is not used.
//
// A bf16 call (a mixed-precision training step) describes grad_output,
// input, weight and grad_input in bf16 as they lie and grad_weight and
// grad_bias in f32 (Kernels.def), so nothing is rounded on the way; no
// Winograd either. Depthwise convolutions are the exception to both: their
// primitives multiply in f32 (depthwiseInF32), the ports widening the bf16
// operands and rounding grad_input once.
//
// Everything that depends on the call's shapes, strides, attributes and
// flags (primitives, memory objects, reorders, scratch offsets) is built
// once per node and kept until a call with another key arrives or the
// caches are invalidated; a configuration oneDNN cannot implement is
// remembered as such, so the fallback to the reference costs nothing later.
// A call with a known key creates nothing: the context's primitives_built
// counter stays put (ConvBackwardTest checks it).
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "lib/KernelCall.h"

#include <cstring>
#include <optional>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;
using dnnl::memory;
using Tag = dnnl::memory::format_tag;

namespace {

/// True if oneDNN's implementation is one of its slow ones: the reference
/// kernels, or the GEMM-based convolutions (im2col) of plain layouts.
bool isSlow(const dnnl::primitive_desc &pd) {
  const char *impl = pd.impl_info_str();
  return std::strncmp(impl, "ref", 3) == 0 || std::strstr(impl, "gemm");
}

/// Output positions (N * OH * OW) from which Winograd's gradients beat the
/// direct kernels. oneDNN 2.6 transforms the weights (backward-data) or the
/// weight gradient (backward-weights) on every call, and the activations
/// go through its blocked layout, which costs more than Winograd saves on
/// few positions. Measured per layer on ResNet-50's 3x3 convolutions in a
/// batch-8 training step (2 threads, AMD Zen 5, DNNL_VERBOSE, mean of the
/// calls after each primitive's first): at 392 positions (512 channels,
/// 7x7) Winograd took 6.2 ms backward-data and 7.2 ms backward-weights
/// against the direct kernels' 5.2 and 6.3; at 1568 (256 channels, 14x14)
/// 3.5 and 3.3 against 5.0 and 5.1.
constexpr int64_t WinogradBackwardMinPositions = 1024;

/// A convolution whose gradients Winograd's F(4x4, 3x3) may compute (as
/// the forward's, OneDnnConv.cpp) and should: 3x3, unit stride and
/// dilation, one group, symmetric padding (oneDNN 2.6's Winograd
/// backward-data computes a wrong grad_input when the padding is (1, 0) or
/// (0, 1) on a side, found by ConvBackwardWinogradTest), and enough output
/// positions (WinogradBackwardMinPositions).
bool winogradCandidate(const args::convolution_backward &a) {
  const TensorView &dy = a.grad_output;
  return a.weight.sizes[2] == 3 && a.weight.sizes[3] == 3 && a.stride_h == 1 &&
         a.stride_w == 1 && a.dilation_h == 1 && a.dilation_w == 1 &&
         a.groups == 1 && a.pad_top == a.pad_bottom &&
         a.pad_left == a.pad_right &&
         dy.sizes[0] * dy.sizes[2] * dy.sizes[3] >=
             WinogradBackwardMinPositions;
}

/// A pointwise convolution's gradients as linear_backward's: grad_output
/// [P, O], input [P, C] and grad_input [P, C] over the P = N * H * W
/// positions, weight and grad_weight [O, C]; nullopt for any other
/// convolution, or activations that are not matrices. Absent gradients
/// stay empty views (linear_backward does not read them).
std::optional<args::linear_backward>
asLinearBackward(const args::convolution_backward &a) {
  if (a.weight.sizes[2] != 1 || a.weight.sizes[3] != 1 || a.stride_h != 1 ||
      a.stride_w != 1 || a.pad_top || a.pad_left || a.pad_bottom ||
      a.pad_right || a.groups != 1)
    return std::nullopt;
  args::linear_backward l;
  l.has_grad_input = a.has_grad_input;
  l.has_grad_weight = a.has_grad_weight;
  l.has_grad_bias = a.has_grad_bias;
  std::optional<TensorView> dy = positionsByChannels(a.grad_output),
                            x = positionsByChannels(a.input);
  if (!dy || !x)
    return std::nullopt;
  l.grad_output = *dy;
  l.input = *x;
  l.weight = pointwiseWeight(a.weight);
  if (a.has_grad_input) {
    std::optional<TensorView> dx = positionsByChannels(a.grad_input);
    if (!dx)
      return std::nullopt;
    l.grad_input = *dx;
  }
  if (a.has_grad_weight)
    l.grad_weight = pointwiseWeight(a.grad_weight);
  if (a.has_grad_bias)
    l.grad_bias = a.grad_bias;
  return l;
}

/// The weight (or weight gradient) of `type` as it lies in memory,
/// [O, I, KH, KW] or [G, O/G, I, KH, KW] with groups.
memory::desc weightDesc(const TensorView &w, int64_t groups,
                        memory::data_type type = memory::data_type::f32) {
  memory::dims dims = dimsOf(w), strides = stridesOf(w);
  if (groups > 1) {
    dims = {groups, w.sizes[0] / groups, w.sizes[1], w.sizes[2], w.sizes[3]};
    strides.insert(strides.begin(), strides[0] * (w.sizes[0] / groups));
  }
  return memory::desc(dims, type, strides);
}

/// A depthwise convolution (one input channel per group), whose gradients
/// run in f32 in a bf16 step: oneDNN 2.6 has no AMX kernel for them, and
/// its bf16 ones (jit_dw:avx512_core_bf16, jit_bf16:avx512_core_bf16) took
/// up to 4x the time of its f32 ones on the same node of an
/// EfficientNet-B0 step (35.7 against 9.2 ms, bench/RESULTS.md); the ports
/// widen the bf16 operands and round grad_input back, as memory-bound as
/// the depthwise kernels themselves.
bool depthwiseInF32(const args::convolution_backward &a) {
  return a.groups > 1 && a.groups == a.input.sizes[1] && a.weight.sizes[1] == 1;
}

/// One tensor of a primitive: the caller's memory (`user`) and the memory
/// the primitive binds (`inner`): the caller's itself when its layout is
/// the one the primitive wants, else a copy at `offset` in the shared
/// scratch with a reorder into it (an input) or out of it (an output).
struct OneDnnPort {
  memory user, inner;
  BoundPrimitive reorder;
  size_t offset = 0;
  bool inScratch = false;
  /// Uses another port's copy (made earlier in the same call).
  bool shared = false;

  /// `userDesc` is empty for a tensor the caller does not get (a gradient
  /// computed only because oneDNN computes it with another): scratch only.
  void build(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
             const memory::desc &userDesc, const memory::desc &want,
             bool output, size_t &scratchBytes) {
    if (userDesc)
      user = memory(userDesc, dnn.engine, DNNL_MEMORY_NONE);
    if (userDesc && userDesc == want) {
      inner = user;
      return;
    }
    inScratch = true;
    offset = scratchBytes;
    scratchBytes += AlignedScratch::roundUp(want.get_size());
    inner = memory(want, dnn.engine, DNNL_MEMORY_NONE);
    if (userDesc) {
      if (output)
        reorder.resetReorder(inner, user);
      else
        reorder.resetReorder(user, inner);
      ++counters.primitives_built;
    }
  }
  void share(const OneDnnPort &other) {
    inner = other.inner;
    shared = true;
  }
  /// True if the primitive reads or writes a copy.
  bool copied() const { return inScratch || shared; }

  /// Points the port at the call's `data` (and the scratch at `base`).
  void bind(char *base, void *data) {
    if (shared)
      return;
    if (user)
      user.set_data_handle(data);
    if (inScratch)
      inner.set_data_handle(base + offset);
  }
  /// An input: binds it and copies it into the scratch when needed.
  void bindInput(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
                 char *base, void *data) {
    bind(base, data);
    if (!shared && reorder)
      reorder.execute(dnn, counters);
  }
  /// An output, after the primitive: copies it out of the scratch.
  void finishOutput(OneDnnEngine &dnn, memfmt_context_counters_t &counters) {
    if (reorder)
      reorder.execute(dnn, counters);
  }
};

} // namespace

struct OneDnnConvBackward::Entry {
  PrimitiveKey key;
  bool usable = false;
  /// The activations are in oneDNN's preferred layout (format_tag::any).
  bool preferred = false;
  /// Some activation goes through a reorder.
  bool reordered = false;
  /// The primitives run Winograd's F(4x4, 3x3) (in oneDNN's blocked
  /// layouts).
  bool winograd = false;
  /// A depthwise convolution of a bf16 call (or under allow_bf16) whose
  /// primitives multiply in f32 (depthwiseInF32).
  bool f32Math = false;
  BoundPrimitive backwardData, backwardWeights;
  OneDnnPort dataGradOutput, dataWeight, gradInput;
  OneDnnPort weightsInput, weightsGradOutput, gradWeight, gradBias;
  size_t scratchBytes = 0;

  explicit Entry(const PrimitiveKey &key) : key(key) {}

  /// Creates the primitives; leaves `usable` false when oneDNN has no
  /// implementation. Throws dnnl::error when oneDNN rejects a description.
  /// A Winograd build that fails anywhere falls back to the direct
  /// algorithm.
  void build(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
             const args::convolution_backward &a, bool winogradAllowed,
             bool bf16Math, DType dtype) {
    if (winogradAllowed && !bf16Math && dtype == DType::f32 &&
        winogradCandidate(a)) {
      try {
        buildWith(dnn, counters, a, /*tryWinograd=*/true, bf16Math, dtype);
        if (usable)
          return;
      } catch (const dnnl::error &) {
      }
      *this = Entry(PrimitiveKey(key)); // Drop the half-built attempt.
    }
    buildWith(dnn, counters, a, /*tryWinograd=*/false, bf16Math, dtype);
  }

  void buildWith(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
                 const args::convolution_backward &a, bool tryWinograd,
                 bool bf16Math, DType dtype) {
    const memory::data_type f32 = memory::data_type::f32;
    // What the primitives multiply: grad_output, input and weights; and
    // the type of grad_input (the call's, or f32 for a depthwise
    // convolution's gradients, which the port rounds into a bf16 call's).
    f32Math = (bf16Math || dtype == DType::bf16) && depthwiseInF32(a);
    const memory::data_type mul = (bf16Math || dtype == DType::bf16) && !f32Math
                                      ? memory::data_type::bf16
                                      : f32;
    const memory::data_type gradInputType = f32Math ? f32 : dataTypeOf(dtype);
    const TensorView &dy = a.grad_output;
    Tag format = Tag::nhwc;
    if (!dy.isChannelsLastContiguous() &&
        (dy.isContiguous() ||
         (!a.input.isChannelsLastContiguous() && a.input.isContiguous())))
      format = Tag::nchw;
    const memory::dims strides = {a.stride_h, a.stride_w},
                       dilates = {a.dilation_h - 1, a.dilation_w - 1},
                       padBegin = {a.pad_top, a.pad_left},
                       padEnd = {a.pad_bottom, a.pad_right};
    const memory::desc weightUser =
        weightDesc(a.weight, a.groups, dataTypeOf(dtype));
    const memory::desc anyWeight(weightUser.dims(), mul, Tag::any);
    const memory::desc anyGradWeight(weightUser.dims(), f32, Tag::any);
    memory::desc biasDesc;
    if (a.has_grad_bias)
      biasDesc = memory::desc({a.weight.sizes[0]}, f32, Tag::x);

    // The forward hint and the two primitives for activations in `tag`.
    struct Pds {
      dnnl::convolution_backward_data::primitive_desc data;
      dnnl::convolution_backward_weights::primitive_desc weights;
    };
    auto primitivesFor = [&](Tag tag, dnnl::algorithm algorithm =
                                          dnnl::algorithm::convolution_direct) {
      memory::desc src(dimsOf(a.input), mul, tag), dst(dimsOf(dy), mul, tag);
      // grad_input in the call's type, whatever the primitives multiply.
      memory::desc gradSrc(dimsOf(a.input), gradInputType, tag);
      dnnl::convolution_forward::desc forward(
          dnnl::prop_kind::forward_training, algorithm, src, anyWeight,
          biasDesc, dst, strides, dilates, padBegin, padEnd);
      dnnl::convolution_forward::primitive_desc hint(forward, dnn.engine);
      Pds pds;
      if (a.has_grad_input) {
        dnnl::convolution_backward_data::desc desc(algorithm, gradSrc,
                                                   anyWeight, dst, strides,
                                                   dilates, padBegin, padEnd);
        pds.data = dnnl::convolution_backward_data::primitive_desc(
            desc, dnn.engine, hint, /*allow_empty=*/true);
      }
      if (a.has_grad_weight || a.has_grad_bias) {
        auto desc = a.has_grad_bias
                        ? dnnl::convolution_backward_weights::desc(
                              algorithm, src, anyGradWeight, biasDesc, dst,
                              strides, dilates, padBegin, padEnd)
                        : dnnl::convolution_backward_weights::desc(
                              algorithm, src, anyGradWeight, dst, strides,
                              dilates, padBegin, padEnd);
        pds.weights = dnnl::convolution_backward_weights::primitive_desc(
            desc, dnn.engine, hint, /*allow_empty=*/true);
      }
      return pds;
    };
    // Empty (missing) where a wanted primitive has no implementation.
    auto complete = [&](const Pds &pds) {
      return (!a.has_grad_input || pds.data) &&
             (!(a.has_grad_weight || a.has_grad_bias) || pds.weights);
    };
    auto slow = [&](const Pds &pds) {
      return (pds.data && isSlow(pds.data)) ||
             (pds.weights && isSlow(pds.weights));
    };
    Pds pds;
    if (tryWinograd) {
      pds = primitivesFor(Tag::any, dnnl::algorithm::convolution_winograd);
      if (!complete(pds))
        return; // build() tries the direct algorithm.
      winograd = preferred = true;
    } else {
      pds = primitivesFor(format);
    }
    if (!winograd && (!complete(pds) || slow(pds))) {
      Pds preferredPds = primitivesFor(Tag::any);
      if (complete(preferredPds) && (!complete(pds) || !slow(preferredPds))) {
        pds = preferredPds;
        preferred = true;
      }
    }
    if (!complete(pds))
      return; // No implementation: the reference runs instead.

    auto user = [&](const TensorView &t) { return descOf(t, dtype); };
    if (pds.data) {
      dataGradOutput.build(dnn, counters, user(dy), pds.data.diff_dst_desc(),
                           /*output=*/false, scratchBytes);
      dataWeight.build(dnn, counters, weightUser, pds.data.weights_desc(),
                       /*output=*/false, scratchBytes);
      gradInput.build(dnn, counters, user(a.grad_input),
                      pds.data.diff_src_desc(), /*output=*/true, scratchBytes);
      backwardData.reset(dnnl::convolution_backward_data(pds.data));
      backwardData.bind(DNNL_ARG_DIFF_DST, dataGradOutput.inner);
      backwardData.bind(DNNL_ARG_WEIGHTS, dataWeight.inner);
      backwardData.bind(DNNL_ARG_DIFF_SRC, gradInput.inner);
      ++counters.primitives_built;
      reordered |= dataGradOutput.copied() || gradInput.copied();
    }
    if (pds.weights) {
      weightsInput.build(dnn, counters, user(a.input), pds.weights.src_desc(),
                         /*output=*/false, scratchBytes);
      // grad_output in the layout the data gradient already reordered it
      // into is used from there.
      if (pds.data && dataGradOutput.copied() &&
          pds.weights.diff_dst_desc() == pds.data.diff_dst_desc())
        weightsGradOutput.share(dataGradOutput);
      else
        weightsGradOutput.build(dnn, counters, user(dy),
                                pds.weights.diff_dst_desc(), /*output=*/false,
                                scratchBytes);
      // Without has_grad_weight the weight gradient is scratch only.
      gradWeight.build(dnn, counters,
                       a.has_grad_weight ? weightDesc(a.grad_weight, a.groups)
                                         : memory::desc(),
                       pds.weights.diff_weights_desc(), /*output=*/true,
                       scratchBytes);
      backwardWeights.reset(dnnl::convolution_backward_weights(pds.weights));
      backwardWeights.bind(DNNL_ARG_SRC, weightsInput.inner);
      backwardWeights.bind(DNNL_ARG_DIFF_DST, weightsGradOutput.inner);
      backwardWeights.bind(DNNL_ARG_DIFF_WEIGHTS, gradWeight.inner);
      if (a.has_grad_bias) {
        gradBias.build(dnn, counters, descOf(a.grad_bias, DType::f32),
                       pds.weights.diff_bias_desc(), /*output=*/true,
                       scratchBytes);
        backwardWeights.bind(DNNL_ARG_DIFF_BIAS, gradBias.inner);
      }
      ++counters.primitives_built;
      reordered |= weightsInput.copied() || weightsGradOutput.copied();
    }
    usable = true;
  }
};

OneDnnConvBackward::OneDnnConvBackward(OneDnnEngine &dnn, bool winograd,
                                       bool bf16Math)
    : dnn(dnn), winograd(winograd), bf16Math(bf16Math),
      pointwise(dnn, bf16Math) {}
OneDnnConvBackward::~OneDnnConvBackward() = default;
void OneDnnConvBackward::clear() {
  cache.clear();
  pointwise.clear();
}

bool OneDnnConvBackward::run(KernelCall &call,
                             const args::convolution_backward &a,
                             memfmt_status_t &status) {
  if (std::optional<args::linear_backward> matmuls = asLinearBackward(a);
      matmuls && pointwise.run(call, *matmuls, status)) {
    // A call that wants only grad_bias multiplies nothing (a row sum in f32).
    bool multiplies = matmuls->has_grad_input || matmuls->has_grad_weight;
    if (status == MEMFMT_STATUS_OK)
      call.setImpl(bf16Math && multiplies && call.dtype() == DType::f32
                       ? "onednn_bf16_math_matmul"
                       : "onednn_matmul");
    return true;
  }
  if (call.dtype() != DType::f32 && call.dtype() != DType::bf16)
    return false;
  PrimitiveKey key;
  if (!addGradientOperands(a, key))
    return false;
  for (int64_t value :
       {a.stride_h, a.stride_w, a.pad_top, a.pad_left, a.pad_bottom,
        a.pad_right, a.dilation_h, a.dilation_w, a.groups,
        static_cast<int64_t>(call.dtype())})
    key.add(value);
  memfmt_context_counters_t &counters = call.counters();
  Entry &entry = cache.lookup(call.node(), key, [&](Entry &e) {
    e.build(dnn, counters, a, winograd, bf16Math, call.dtype());
    scratch.grow(e.scratchBytes);
  });
  if (!entry.usable)
    return false;

  try {
    char *base = scratch.data();
    if (entry.backwardData) {
      entry.dataGradOutput.bindInput(dnn, counters, base, a.grad_output.data);
      entry.dataWeight.bindInput(dnn, counters, base, a.weight.data);
      // The weights change every step, so they are packed every call
      // (counted as the forward counts its packs of non-constant weights).
      if (entry.dataWeight.copied())
        ++counters.weight_packs;
      entry.gradInput.bind(base, a.grad_input.data);
      entry.backwardData.execute(dnn, counters);
      entry.gradInput.finishOutput(dnn, counters);
    }
    if (entry.backwardWeights) {
      entry.weightsInput.bindInput(dnn, counters, base, a.input.data);
      entry.weightsGradOutput.bindInput(dnn, counters, base,
                                        a.grad_output.data);
      entry.gradWeight.bind(base, a.grad_weight.data);
      if (a.has_grad_bias)
        entry.gradBias.bind(base, a.grad_bias.data);
      entry.backwardWeights.execute(dnn, counters);
      entry.gradWeight.finishOutput(dnn, counters);
      if (a.has_grad_bias)
        entry.gradBias.finishOutput(dnn, counters);
    }
  } catch (const dnnl::error &error) {
    status = call.fail(MEMFMT_STATUS_BACKEND_ERROR,
                       describeError("convolution_backward", error));
    return true;
  }
  call.setImpl(entry.winograd                           ? "onednn_winograd"
               : entry.f32Math                          ? "onednn_f32_math"
               : bf16Math && call.dtype() == DType::f32 ? "onednn_bf16_math"
               : entry.preferred ? "onednn_preferred_layout"
               : entry.reordered ? "onednn_reorder"
                                 : "onednn");
  status = MEMFMT_STATUS_OK;
  return true;
}
