//===- OneDnnConv.cpp - oneDNN convolutions, cached per node --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// conv2d on oneDNN 2.x (convolution_forward::desc), in f32 and, where the CPU
// has an implementation (AVX-512 BF16, AMX), bf16 with f32 accumulation. The
// output decides the format: NHWC when it is channels-last contiguous, NCHW
// when it is contiguous (a tensor that is both takes the input's format, L3);
// any other output goes to the reference. An input in that format is used in
// place, any other input (the other format, or a strided view) is reordered
// into a scratch buffer first. Weights, whatever their strides, are described
// as they are ([G, O/G, I/G, KH, KW] for groups) and reordered into the layout
// the primitive picked (format_tag::any): once, when they lie in memory the
// context was told is constant (a model's weights), else on every call (a
// weight that is a model input). Bias is fused; the residual is copied into the
// output unless it already is the output and added by a sum post-op; relu or
// the activation is an eltwise post-op after it (hardsigmoid as a linear then
// a clip post-op), so the result is act(conv + bias + residual) as
// Kernels.def says. NCHW convolutions run in the layout oneDNN prefers for
// them (NHWC or blocked) through reorders, see below.
//
// f32 3x3 convolutions with unit stride and dilation and one group run
// Winograd's F(4x4, 3x3) (algorithm::convolution_winograd) where oneDNN
// implements it (AVX-512) and the context allows it (its `winograd` option,
// on by default): about twice as fast as the direct kernels on ResNet's 3x3
// layers with constant weights (weights packed on every call, a training
// step's, only where the output is large enough to amortise the packing). Those
// kernels read and write only oneDNN's blocked layout, so the input is
// reordered into it and the output out of it, through one scratch buffer shared
// by all nodes (the reorders cost ~5% of the convolution); a residual
// (ResNet-18/34's basic blocks) is reordered into the blocked output and added
// by the sum post-op. Their weights are packed from plain OIHW.
//
// With the context's allow_bf16 option, on a CPU with bf16 instructions, f32
// convolutions multiply in bf16 (oneDNN's AMX or AVX-512 BF16 kernels, f32
// accumulation): the primitive reads a bf16 copy of the input, made by its
// input reorder in the shared scratch, and bf16 weights (the weight pack
// rounds them), and writes the f32 output, bias, residual and epilogue
// being f32 as before. On AMX this is several times faster than f32 (see
// bench/cpu/conv_precision.cpp); Winograd is not used then.
//
// Grouped convolutions that multiply in bf16 with few channels per group
// (RegNet's 8; not depthwise) get no AMX kernel from oneDNN 2.6: its
// jit_bf16 kernel ran them slower than f32 (RegNetY-400MF batch 8: 8.7 of
// 19.6 ms). Where the CPU has AMX they run with k adjacent groups merged
// into one, the weights block-diagonal (zeros between the groups): k times
// the multiplications, on AMX, and the same sums, since the zeros add
// exact zeros (only an inf or NaN input reaches the merged neighbours'
// outputs, as NaN). k is the smallest divisor of the group count that gives
// 16 channels per group (or all groups), at most 16, and the merged
// convolution is used only if oneDNN implements it on AMX. Measured on
// RegNetY-400MF at batch 8 (2 threads, bf16): 48 channels in 6 groups
// 1.72 -> 0.77 ms (merged into 3), 104 in 13 groups 0.84 -> 0.58 ms (into
// one), 208 in 26 0.44 -> 0.15 ms (into 13), 440 in 55 0.27 -> 0.18 ms
// (into 11); the model 19.6 -> 15.0 ms.
//
// Everything that depends on the call's shapes, strides, attributes and weight
// buffer (the primitive, the packed weights, the reorders of the input and of a
// residual that is not already the output) is built once per node and kept
// until a call with a different key arrives or the context's caches are
// invalidated. Packed constant weights are shared by the nodes that pack the
// same buffer into the same layout (the sub-batches memfmt-tile-batch makes
// run one layer several times); a configuration oneDNN cannot implement is
// remembered as such, so the fallback costs nothing on later calls.
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "CpuKernels.h"
#include "lib/KernelCall.h"
#include "memfmt/Layout/Windows.h"

#include "memfmt/runtime/elementwise_ops.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;
using dnnl::memory;
using Tag = dnnl::memory::format_tag;

namespace {

/// True if some output position's window only covers padding along one
/// spatial dimension (no tap lands in [0, in)): oneDNN 2.6 then leaves the
/// bias out of those positions when a sum post-op is attached, so the
/// residual is added separately there (found by the random-graph tests).
bool hasPaddingOnlyWindow(int64_t in, int64_t out, int64_t kernel,
                          int64_t stride, int64_t padBegin, int64_t dilation) {
  return memfmt::layout::findEmptyWindow(out, kernel, stride, padBegin,
                                         dilation, 0, in) >= 0;
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

/// Output positions (N * OH * OW) from which Winograd pays for packing its
/// weights on every call (weights that change between calls: a training
/// step's parameters). oneDNN 2.6 transforms weights into its Winograd
/// format slowly, about as long as the direct convolution takes at 6272
/// positions (measured on ResNet-50's 3x3 layers at batch 8, AVX-512 EPYC:
/// Winograd 25% faster at 25088 positions, level at 6272, 2.5x slower at
/// 1568 and 9x slower at 392), so below this the direct kernels run.
constexpr int64_t WinogradRepackMinPositions = 16384;

/// A convolution Winograd's F(4x4, 3x3) may compute (and should): f32, 3x3,
/// unit stride and dilation, one group, a residual (if any) that the sum
/// post-op can add, and weights that are constant or amortised over enough
/// output positions (see WinogradRepackMinPositions).
bool winogradCandidate(const args::conv2d &a, DType dtype,
                       bool constantWeights) {
  const TensorView &out = a.output;
  return dtype == DType::f32 && a.weight.sizes[2] == 3 &&
         a.weight.sizes[3] == 3 && a.stride_h == 1 && a.stride_w == 1 &&
         a.dilation_h == 1 && a.dilation_w == 1 && a.groups == 1 &&
         (!a.has_residual || residualAsPostOp(a)) &&
         (constantWeights || out.sizes[0] * out.sizes[2] * out.sizes[3] >=
                                 WinogradRepackMinPositions);
}

/// How many adjacent groups a grouped convolution that multiplies in bf16
/// runs merged into one (see the file comment); 1 for none.
int64_t groupsToMerge(const args::conv2d &a) {
  const int64_t groups = a.groups;
  const int64_t perGroup = std::min(a.weight.sizes[0] / groups,
                                    a.weight.sizes[1]);
  if (groups == 1 || a.weight.sizes[1] == 1 || perGroup >= 16)
    return 1;
  for (int64_t k = 2; k <= std::min<int64_t>(groups, 16); ++k)
    if (groups % k == 0 && (k * perGroup >= 16 || k == groups))
      return k;
  return 1;
}

/// Everything the entry depends on.
PrimitiveKey makeKey(const args::conv2d &a, DType dtype, Tag format,
                     bool reorderInput, bool constantWeights) {
  PrimitiveKey key;
  key.add(a.input);
  key.add(a.weight);
  key.add(a.output);
  if (a.has_bias)
    key.add(a.bias);
  if (a.has_residual)
    key.add(a.residual);
  for (int64_t value :
       {a.stride_h, a.stride_w, a.pad_top, a.pad_left, a.pad_bottom,
        a.pad_right, a.dilation_h, a.dilation_w, a.groups, a.has_bias,
        a.has_residual, a.relu, a.activation, static_cast<int64_t>(dtype),
        static_cast<int64_t>(format), static_cast<int64_t>(reorderInput),
        static_cast<int64_t>(constantWeights)})
    key.add(value);
  for (double value : {a.activation_alpha, a.activation_beta}) {
    int64_t bits;
    static_assert(sizeof(bits) == sizeof(value));
    std::memcpy(&bits, &value, sizeof(bits));
    key.add(bits);
  }
  // Weights packed at build time belong to this buffer.
  if (constantWeights)
    key.add(static_cast<int64_t>(reinterpret_cast<intptr_t>(a.weight.data)));
  return key;
}

} // namespace

struct OneDnnConv::Entry {
  PrimitiveKey key;
  /// False when oneDNN has no implementation for this key.
  bool usable = false;
  bool reorderInput = false;
  /// The weights were packed at build time (they are constant); else they
  /// are packed again on every call.
  bool packedOnce = false;
  /// The residual is a sum post-op; else run() adds it after the primitive.
  bool sumPostOp = false;
  /// The primitive reads and writes layouts of oneDNN's choosing (blocked
  /// for Winograd, NHWC for the direct kernels of NCHW tensors on AVX-512)
  /// in the shared scratch (OneDnnConv::blocked), through two reorders
  /// (three with a residual, which is reordered into that output and summed
  /// there).
  bool blockedIo = false;
  bool winograd = false;
  /// An f32 convolution that multiplies in bf16: its input is converted
  /// into the shared scratch (OneDnnConv::blocked) by inputReorder.
  bool bf16Math = false;
  /// Adjacent groups merged into one (1: none); packWeights scatters the
  /// weights into the diagonal blocks of plainWeights first.
  int64_t mergedGroups = 1;
  /// The call's group count and element size, for scatterDiagonal.
  int64_t groups = 1;
  size_t elementBytes = 0;
  size_t blockedInputBytes = 0;
  BoundPrimitive conv, inputReorder, residualCopy, weightPack;
  /// Winograd weights are packed from plain OIHW (oneDNN 2.6 reorders into
  /// its Winograd format from nothing else) and merged groups from their
  /// block-diagonal weights: caller's -> plain -> packed.
  BoundPrimitive weightPlain;
  memory plainWeights;
  BoundPrimitive toBlocked, fromBlocked;
  memory blockedInput, blockedOutput, userOutput;
  /// The caller's input (when reordered), the primitive's input, output,
  /// bias, the caller's and the packed weights, and the residual (when
  /// copied into the output).
  memory userInput, input, output, bias, userWeights, weights, residual;
  /// A strided bias gathered densely (denseVector), and an in-place
  /// residual saved before the primitive overwrites it (sized in build()).
  std::vector<char> biasScratch;
  std::vector<float> savedResidual;

  explicit Entry(const PrimitiveKey &key) : key(key) {}

  /// Packs the caller's weights (userWeights) for the primitive.
  void packWeights(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
                   const TensorView &w) {
    if (mergedGroups > 1)
      scatterDiagonal(w);
    if (weightPlain)
      weightPlain.execute(dnn, counters);
    weightPack.execute(dnn, counters);
    ++counters.weight_packs;
  }
  /// Copies the caller's weights [O, I/G, KH, KW] (any strides) into the
  /// diagonal blocks of the merged groups' plain weights [G/k, k*O/G,
  /// k*I/G, KH, KW], whose other elements stay zero: block j of merged
  /// group g holds group g*k + j at rows j*O/G and columns j*I/G. oneDNN's
  /// reorder cannot write it (it refuses the strided view of the diagonal
  /// as overlapping), so this loop does.
  void scatterDiagonal(const TensorView &w) const {
    const int64_t k = mergedGroups, oPer = w.sizes[0] / groups,
                  iPer = w.sizes[1], kh = w.sizes[2], kw = w.sizes[3];
    const size_t bytes = elementBytes;
    const char *from = static_cast<const char *>(w.data);
    char *to = static_cast<char *>(plainWeights.get_data_handle());
    for (int64_t o = 0; o < w.sizes[0]; ++o) {
      const int64_t g = o / oPer, j = g % k;
      // Row (g/k, j*oPer + o % oPer) of the merged weights.
      const int64_t row = (g / k) * k * oPer + j * oPer + o % oPer;
      for (int64_t i = 0; i < iPer; ++i)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t x = 0; x < kw; ++x) {
            const int64_t src = o * w.strides[0] + i * w.strides[1] +
                                y * w.strides[2] + x * w.strides[3];
            const int64_t dst =
                ((row * k * iPer + j * iPer + i) * kh + y) * kw + x;
            std::memcpy(to + dst * bytes, from + src * bytes, bytes);
          }
    }
  }

  /// Creates the primitives and packs the weights; leaves `usable` false
  /// when oneDNN has no implementation. Throws dnnl::error when oneDNN
  /// rejects the description. A Winograd build that fails anywhere falls
  /// back to the direct algorithm.
  void build(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
             const args::conv2d &a, DType dtype, Tag format, bool reorderInput,
             bool constantWeights, bool winogradAllowed, bool bf16Allowed,
             OneDnnConv &owner) {
    bf16Math = bf16Allowed && dtype == DType::f32;
    if (winogradAllowed && !bf16Math &&
        winogradCandidate(a, dtype, constantWeights)) {
      try {
        buildWith(dnn, counters, a, dtype, format, reorderInput,
                  constantWeights, /*tryWinograd=*/true, owner);
        if (usable)
          return;
      } catch (const dnnl::error &) {
      }
      *this = Entry(PrimitiveKey(key)); // Drop the half-built attempt.
    }
    buildWith(dnn, counters, a, dtype, format, reorderInput || bf16Math,
              constantWeights, /*tryWinograd=*/false, owner);
  }

  void buildWith(OneDnnEngine &dnn, memfmt_context_counters_t &counters,
                 const args::conv2d &a, DType dtype, Tag format,
                 bool reorderInput, bool constantWeights, bool tryWinograd,
                 OneDnnConv &owner) {
    this->reorderInput = reorderInput;
    packedOnce = constantWeights;
    const TensorView &w = a.weight;
    const int64_t groups = a.groups;
    const memory::data_type type = dataTypeOf(dtype);
    // What the primitive multiplies: the input and the packed weights.
    const memory::data_type mulType = bf16Math ? memory::data_type::bf16 : type;
    memory::desc inputDesc(dimsOf(a.input), mulType, format);
    memory::desc outputDesc(dimsOf(a.output), type, format);
    // Weights as they are: [O, I, KH, KW] or [G, O/G, I, KH, KW].
    memory::dims weightDims = dimsOf(w), weightStrides = stridesOf(w);
    if (groups > 1) {
      weightDims = {groups, w.sizes[0] / groups, w.sizes[1], w.sizes[2],
                    w.sizes[3]};
      weightStrides.insert(weightStrides.begin(),
                           weightStrides[0] * (w.sizes[0] / groups));
    }
    memory::desc userWeightDesc(weightDims, type, weightStrides);
    memory::desc anyWeightDesc(weightDims, mulType, Tag::any);
    memory::desc biasDesc;
    if (a.has_bias)
      biasDesc = memory::desc({w.sizes[0]}, type, Tag::x);

    // With the residual outside the primitive, the relu is applied after
    // adding it (run()); that path exists in f32 only.
    sumPostOp = residualAsPostOp(a);
    bool residualOutside = a.has_residual && !sumPostOp;
    if (residualOutside && dtype != DType::f32)
      return;
    dnnl::post_ops ops;
    if (sumPostOp)
      ops.append_sum(1.0f);
    if (a.relu && !residualOutside)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    // The activation as eltwise post-ops (after the residual, which is then
    // in the primitive too: an activation with the residual outside is
    // left to the reference).
    if (a.activation && residualOutside)
      return;
    if (a.activation && !appendActivation(ops, a.activation, a.activation_alpha,
                                              a.activation_beta))
      return;
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);

    // The primitive for `algorithm` on input and output descriptions (the
    // caller's layouts, or format_tag::any for oneDNN's choice); empty
    // where oneDNN has no implementation.
    auto primitiveFor = [&](dnnl::algorithm algorithm, const memory::desc &src,
                            const memory::desc &dst,
                            const memory::desc &weightsAny) {
      dnnl::convolution_forward::desc desc(
          dnnl::prop_kind::forward_inference, algorithm, src, weightsAny,
          biasDesc, dst, {a.stride_h, a.stride_w},
          {a.dilation_h - 1, a.dilation_w - 1}, {a.pad_top, a.pad_left},
          {a.pad_bottom, a.pad_right});
      return dnnl::convolution_forward::primitive_desc(desc, attr, dnn.engine,
                                                       /*allow_empty=*/true);
    };
    const memory::desc anyInput(dimsOf(a.input), mulType, Tag::any);
    const memory::desc anyOutput(dimsOf(a.output), type, Tag::any);
    dnnl::convolution_forward::primitive_desc pd;
    // Merged groups: [G/k, k*O/G, k*I/G, KH, KW] (4-D when all groups merge).
    const int64_t merge = mulType == memory::data_type::bf16 &&
                                  format == Tag::nhwc
                              ? groupsToMerge(a)
                              : 1;
    memory::dims mergedDims;
    if (merge > 1) {
      mergedDims = {groups / merge, merge * weightDims[1],
                    merge * weightDims[2], weightDims[3], weightDims[4]};
      if (merge == groups)
        mergedDims.erase(mergedDims.begin());
      pd = primitiveFor(dnnl::algorithm::convolution_direct, inputDesc,
                        outputDesc,
                        memory::desc(mergedDims, mulType, Tag::any));
      if (pd && std::strstr(pd.impl_info_str(), "amx"))
        mergedGroups = merge;
    }
    if (mergedGroups == 1)
      pd = primitiveFor(dnnl::algorithm::convolution_direct, inputDesc,
                        outputDesc, anyWeightDesc);
    if (tryWinograd) {
      if (auto winogradPd = primitiveFor(dnnl::algorithm::convolution_winograd,
                                         anyInput, anyOutput, anyWeightDesc)) {
        pd = winogradPd;
        winograd = blockedIo = true;
      }
    }
    // oneDNN's direct kernels for plain NCHW are GEMM-based (x64:gemm:jit),
    // 2-3x slower than those of the layouts it prefers (format_tag::any:
    // NHWC for brgconv on AVX-512, else blocked): an NCHW convolution runs
    // in those, through reorders, as PyTorch's NCHW convolutions on oneDNN
    // do. The NCHW build then pays a layout conversion per convolution,
    // which is what channels-last saves.
    // On AVX2 (no AVX-512) the same holds for a channels-last convolution
    // with a spatial window and constant weights (an inference model's):
    // oneDNN's jit:avx2 direct kernel is 10-30% faster on nChw8c than on
    // NHWC, and ResNet-18/50 inference ran 4-18% faster with their 3x3
    // convolutions (and stem) there, reorders included, with the same
    // values. A training step's forward convolutions (weights that change
    // every step) made the ResNet-50 step ~6% slower that way, so they stay
    // on NHWC, as do 1x1 convolutions (level in both layouts) and grouped
    // ones (slower through the reorders) (bench/RESULTS.md, 2026-12-07).
    const bool spatialOnAvx2 =
        format == Tag::nhwc && groups == 1 && constantWeights &&
        mulType == memory::data_type::f32 &&
        (w.sizes[2] > 1 || w.sizes[3] > 1) && blockedSpatialConvolutionsPay();
    if (!blockedIo && !residualOutside &&
        (format == Tag::nchw || spatialOnAvx2)) {
      auto preferredPd = primitiveFor(dnnl::algorithm::convolution_direct,
                                      anyInput, anyOutput, anyWeightDesc);
      if (preferredPd && (preferredPd.src_desc() != inputDesc ||
                          preferredPd.dst_desc() != outputDesc)) {
        pd = preferredPd;
        blockedIo = true;
      }
    }
    if (!pd)
      return; // No implementation: the reference runs instead.

    // The packed weights: packed once, here, when they are constant (or
    // taken from another node that packed the same buffer the same way).
    userWeights = memory(userWeightDesc, dnn.engine, DNNL_MEMORY_NONE);
    const memory *shared =
        constantWeights
            ? owner.findPack(w.data, userWeightDesc, pd.weights_desc())
            : nullptr;
    if (shared) {
      weights = *shared;
    } else {
      weights = memory(pd.weights_desc(), dnn.engine);
      memory packFrom = userWeights;
      if (mergedGroups > 1) {
        // Zeros between the diagonal blocks scatterDiagonal fills.
        this->groups = groups;
        elementBytes = elementSize(dtype);
        plainWeights = memory(
            memory::desc(mergedDims, type,
                         mergedDims.size() == 4 ? Tag::oihw : Tag::goihw),
            dnn.engine);
        std::memset(plainWeights.get_data_handle(), 0,
                    plainWeights.get_desc().get_size());
        packFrom = plainWeights;
      } else if (winograd) {
        plainWeights =
            memory(memory::desc(weightDims, type, Tag::oihw), dnn.engine);
        weightPlain.resetReorder(userWeights, plainWeights);
        packFrom = plainWeights;
      }
      weightPack.resetReorder(packFrom, weights);
      if (constantWeights) {
        userWeights.set_data_handle(w.data);
        packWeights(dnn, counters, w);
        owner.packs.push_back(
            {w.data, userWeightDesc, pd.weights_desc(), weights});
      }
    }

    output = memory(outputDesc, dnn.engine, DNNL_MEMORY_NONE);
    if (blockedIo) {
      // user input -> blocked input -> conv -> blocked output -> user output.
      userInput = memory(descOf(a.input, dtype), dnn.engine, DNNL_MEMORY_NONE);
      blockedInput = memory(pd.src_desc(), dnn.engine, DNNL_MEMORY_NONE);
      blockedOutput = memory(pd.dst_desc(), dnn.engine, DNNL_MEMORY_NONE);
      blockedInputBytes = AlignedScratch::roundUp(pd.src_desc().get_size());
      owner.blocked.grow(blockedInputBytes + pd.dst_desc().get_size());
      toBlocked.resetReorder(userInput, blockedInput);
      userOutput = output;
      fromBlocked.resetReorder(blockedOutput, userOutput);
      counters.primitives_built += 2;
      input = blockedInput;
      output = blockedOutput;
    } else if (reorderInput) {
      userInput = memory(descOf(a.input, dtype), dnn.engine, DNNL_MEMORY_NONE);
      if (bf16Math) { // In the shared scratch, bound by run().
        input = memory(inputDesc, dnn.engine, DNNL_MEMORY_NONE);
        owner.blocked.grow(inputDesc.get_size());
      } else {
        input = memory(inputDesc, dnn.engine); // Scratch, owned here.
      }
      inputReorder.resetReorder(userInput, input);
      ++counters.primitives_built;
    } else {
      input = memory(inputDesc, dnn.engine, DNNL_MEMORY_NONE);
    }
    conv.reset(dnnl::convolution_forward(pd));
    conv.bind(DNNL_ARG_SRC, input);
    conv.bind(DNNL_ARG_WEIGHTS, weights);
    conv.bind(DNNL_ARG_DST, output);
    if (a.has_bias) {
      bias = memory(biasDesc, dnn.engine, DNNL_MEMORY_NONE);
      conv.bind(DNNL_ARG_BIAS, bias);
    }
    ++counters.primitives_built;
    if (sumPostOp) {
      residual =
          memory(descOf(a.residual, dtype), dnn.engine, DNNL_MEMORY_NONE);
      residualCopy.resetReorder(residual, output);
      ++counters.primitives_built;
    }
    if (residualOutside)
      savedResidual.resize(static_cast<size_t>(a.output.numElements()));
    usable = true;
  }
};

OneDnnConv::OneDnnConv(OneDnnEngine &dnn, bool winograd, bool bf16Math)
    : dnn(dnn), winograd(winograd), bf16Math(bf16Math) {}
OneDnnConv::~OneDnnConv() = default;
void OneDnnConv::clear() {
  cache.clear();
  packs.clear();
}

const memory *OneDnnConv::findPack(const void *source, const memory::desc &from,
                                   const memory::desc &to) const {
  for (const SharedPack &pack : packs)
    if (pack.source == source && pack.from == from && pack.to == to)
      return &pack.packed;
  return nullptr;
}

bool OneDnnConv::run(KernelCall &call, const args::conv2d &a,
                     memfmt_status_t &status) {
  const TensorView &in = a.input, &out = a.output;
  const DType dtype = call.dtype();
  if (in.numElements() == 0 || a.weight.numElements() == 0 ||
      out.numElements() == 0 || !hasPositiveStrides(in) ||
      !hasPositiveStrides(a.weight) ||
      (a.has_residual && !hasPositiveStrides(a.residual)))
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

  memfmt_context_counters_t &counters = call.counters();
  const bool constantWeights = call.isConstant(a.weight);
  Entry &entry = cache.lookup(
      call.node(), makeKey(a, dtype, format, reorderInput, constantWeights),
      [&](Entry &e) {
        e.build(dnn, counters, a, dtype, format, reorderInput, constantWeights,
                winograd, bf16Math, *this);
      });
  if (!entry.usable)
    return false;

  try {
    // Weights that may change between calls (a model input) are packed
    // again each time.
    if (!entry.packedOnce) {
      entry.userWeights.set_data_handle(a.weight.data);
      entry.packWeights(dnn, counters, a.weight);
    }
    // relu(conv + bias + residual): the sum post-op adds what the output
    // holds (Winograd's blocked output is filled below).
    if (entry.sumPostOp && !entry.blockedIo && !a.residual.sameViewAs(out)) {
      entry.residual.set_data_handle(a.residual.data);
      entry.output.set_data_handle(out.data);
      entry.residualCopy.execute(dnn, counters);
    }
    // The residual is added after the primitive instead: it must not be
    // overwritten before that, so an in-place residual is copied first
    // (f32 only, see build()).
    TensorView residual = a.residual;
    if (a.has_residual && !entry.sumPostOp && a.residual.data == out.data) {
      residual.data = entry.savedResidual.data();
      for (int64_t d = 0, stride = 1; d < out.rank; ++d) {
        int64_t dim = out.rank - 1 - d;
        residual.strides[dim] = stride;
        stride *= out.sizes[dim];
      }
      copyReference(a.residual, residual);
    }
    if (a.has_bias)
      entry.bias.set_data_handle(
          denseVector(a.bias, elementSize(dtype), entry.biasScratch));
    if (entry.blockedIo) {
      char *base = blocked.data();
      entry.userInput.set_data_handle(in.data);
      entry.blockedInput.set_data_handle(base);
      entry.blockedOutput.set_data_handle(base + entry.blockedInputBytes);
      // The residual into the blocked output, where the sum post-op adds
      // it; read before the output (which it may be) is written.
      if (entry.sumPostOp) {
        entry.residual.set_data_handle(a.residual.data);
        entry.residualCopy.execute(dnn, counters);
      }
      entry.toBlocked.execute(dnn, counters);
      entry.conv.execute(dnn, counters);
      entry.userOutput.set_data_handle(out.data);
      entry.fromBlocked.execute(dnn, counters);
    } else {
      entry.output.set_data_handle(out.data);
      if (entry.reorderInput) {
        entry.userInput.set_data_handle(in.data);
        if (entry.bf16Math)
          entry.input.set_data_handle(blocked.data());
        entry.inputReorder.execute(dnn, counters);
      } else {
        entry.input.set_data_handle(in.data);
      }
      entry.conv.execute(dnn, counters);
    }
    if (a.has_residual && !entry.sumPostOp) {
      args::add sum;
      sum.lhs = out;
      sum.rhs = residual;
      sum.output = out;
      addReference(sum, a.relu != 0);
    }
  } catch (const dnnl::error &error) {
    status = call.fail(MEMFMT_STATUS_BACKEND_ERROR,
                       describeError("convolution_forward", error));
    return true;
  }
  call.setImpl(entry.winograd       ? "onednn_winograd"
               : entry.mergedGroups > 1
                   ? (entry.bf16Math ? "onednn_bf16_math_merged_groups"
                                     : "onednn_merged_groups")
               : entry.bf16Math     ? "onednn_bf16_math"
               : entry.blockedIo    ? "onednn_preferred_layout"
               : entry.reorderInput ? "onednn_reorder_input"
                                    : "onednn");
  status = MEMFMT_STATUS_OK;
  return true;
}
