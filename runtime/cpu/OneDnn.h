//===- OneDnn.h - oneDNN primitives cached per node -------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CPU backend's oneDNN 2.x fast path. One engine and stream per context;
// per node, the primitive made for the last (shapes, strides, attributes,
// weight buffer) it was called with, so repeated runs create nothing:
//  * OneDnnConv: convolution_forward on NCHW or NHWC (f32, bf16 where the
//    CPU has it), bias fused, the residual as a sum post-op and relu as an
//    eltwise post-op; weights are reordered once into the primitive's
//    preferred layout; an input in the other format (or any strides) is
//    reordered into the output's format first; NCHW convolutions, and on
//    AVX2 channels-last ones with a spatial window and constant weights,
//    run in oneDNN's preferred (blocked) layout through a reorder each way;
//  * OneDnnLinear: matmul on the tensors' own strides, bias and relu fused;
//  * OneDnnConvBackward, OneDnnLinearBackward: the gradients of those two
//    (convolution backward data / weights primitives; matmuls);
//  * OneDnnPool: max and average pooling (adaptive pooling whose windows
//    tile the input) for bf16, and f32 average pooling (f32 max and
//    adaptive pooling keep their own loops: CpuBackend.cpp);
//  * OneDnnReorder: copies between any positive strides for bf16 and f32,
//    and the casts between them;
//  * OneDnnLayerNorm: f32 layer_normalization_forward over the dense rows
//    of an input and an output.
// `run` returns false when the call is not one it takes (an output that is
// neither NCHW nor NHWC, strides oneDNN cannot describe, a configuration
// oneDNN has no implementation for); the caller then runs the reference.
// When it returns true, `status` is the call's result.
//
// A call allocates nothing: keys have a fixed capacity, every memory object
// and argument list is made when the entry is built, and primitives run
// through oneDNN's C API on those argument lists. What an entry builds is
// counted in the context's counters (memfmt_context_get_counters).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_ONEDNN_H
#define MEMFMT_RUNTIME_CPU_ONEDNN_H

#include "lib/KernelArgs.h"

#include "memfmt/runtime/memfmt_runtime.h"

#include <dnnl.hpp>

#include <array>
#include <cassert>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memfmt::runtime {
class KernelCall;
} // namespace memfmt::runtime

namespace memfmt::runtime::cpu {

/// The oneDNN engine and stream of one context.
struct OneDnnEngine {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

/// "oneDNN 2.6.3 on avx512_core_bf16": the library's version and the best
/// instruction set it dispatches to on this CPU (after DNNL_MAX_CPU_ISA).
std::string describeOneDnn();

/// True if oneDNN runs bf16 on this CPU's own bf16 instructions (AVX-512
/// BF16 or AMX) rather than emulating them.
bool hasNativeBf16();

/// True where oneDNN's best instruction set is AVX2 (no AVX-512): there its
/// direct f32 convolutions with a spatial window (3x3, the 7x7 stem) run
/// faster on its blocked layout (nChw8c) than on NHWC, even through a
/// reorder each way, in inference (OneDnnConv.cpp).
bool blockedSpatialConvolutionsPay();

/// oneDNN's type for a floating-point element type.
dnnl::memory::data_type dataTypeOf(DType dtype);

/// The sizes of `t` for a oneDNN memory descriptor.
dnnl::memory::dims dimsOf(const TensorView &t);

/// The strides of `t` for a oneDNN memory descriptor. A size-1 dim's stride
/// is free (L2) and may be anything in a memref; it becomes the tensor's
/// extent, as if the dim were outermost, which oneDNN always accepts.
dnnl::memory::dims stridesOf(const TensorView &t);

/// The strides of the [rows, cols] matrix whose element (r, c) is at
/// `r * rowStride + c * colStride`. A size-1 dim's stride is free (L2); it is
/// set to what a dense matrix would have so oneDNN sees a plain layout.
dnnl::memory::dims matrixStrides(int64_t rows, int64_t cols, int64_t rowStride,
                                 int64_t colStride);

/// `t` as it is in memory, with element type `dtype`. A 4-D tensor that is
/// channels-last (or NCHW) contiguous gets oneDNN's nhwc (nchw) tag, whose
/// jit kernels a desc of its raw strides can miss when a size-1 dim has an
/// arbitrary stride (L2); one that is both takes `like`'s format when given.
dnnl::memory::desc descOf(const TensorView &t, DType dtype,
                          const TensorView *like = nullptr);

/// True if every dim of size > 1 has a positive stride: oneDNN describes
/// neither broadcast (zero) nor reversed (negative) dims.
bool hasPositiveStrides(const TensorView &t);

/// What a cached entry was built for, compared on every call. Its capacity
/// is fixed, so making and comparing one allocates nothing.
class PrimitiveKey {
public:
  void add(int64_t value) {
    assert(count < values.size() && "PrimitiveKey capacity exceeded");
    values[count++] = value;
  }
  /// The tensor's rank, sizes and strides.
  void add(const TensorView &t) {
    add(t.rank);
    for (int64_t d = 0; d < t.rank; ++d) {
      add(t.sizes[d]);
      add(t.strides[d]);
    }
  }
  bool operator==(const PrimitiveKey &other) const {
    if (count != other.count)
      return false;
    for (size_t i = 0; i < count; ++i)
      if (values[i] != other.values[i])
        return false;
    return true;
  }
  bool operator!=(const PrimitiveKey &other) const { return !(*this == other); }

private:
  std::array<int64_t, 64> values{};
  size_t count = 0;
};

/// The tensors of a gradient kernel (convolution_backward, linear_backward)
/// in `key`: grad_output, input, weight and the gradients whose has_* flag is
/// set, then the flags. False when oneDNN cannot take the call: an empty
/// operand (its gradients are sums of nothing, which the reference writes)
/// or a stride oneDNN cannot describe.
template <typename Args>
bool addGradientOperands(const Args &a, PrimitiveKey &key) {
  for (const TensorView *t : {&a.grad_output, &a.input, &a.weight}) {
    if (t->numElements() == 0 || !hasPositiveStrides(*t))
      return false;
    key.add(*t);
  }
  for (auto [present, t] : {std::pair{a.has_grad_input, &a.grad_input},
                            std::pair{a.has_grad_weight, &a.grad_weight},
                            std::pair{a.has_grad_bias, &a.grad_bias}}) {
    if (!present)
      continue;
    if (!hasPositiveStrides(*t))
      return false;
    key.add(*t);
  }
  for (int64_t flag : {a.has_grad_input, a.has_grad_weight, a.has_grad_bias})
    key.add(flag);
  return true;
}

/// The [positions, channels] matrix of a 4-D activation [N, C, H, W], its
/// rows the (n, h, w) positions in that order under the tensor's own
/// strides (a channels-last tensor, or an NCHW one of one pixel); nullopt
/// when the positions are not evenly spaced in memory. A pointwise
/// convolution is a matmul on such matrices.
std::optional<TensorView> positionsByChannels(const TensorView &t);

/// The [O, C] matrix of a 1x1 convolution weight [O, C, 1, 1].
TensorView pointwiseWeight(const TensorView &w);

/// A matmul primitive descriptor on oneDNN's GEMM-based implementation
/// (gemm:jit, its sgemm) where it has one for `desc`, else on its first
/// choice; empty when it has none. oneDNN 2.6 lists its brgemm kernels
/// first, which were slower on the tall matrices of pointwise convolutions
/// in a training step (OneDnnConvBackward.cpp).
dnnl::matmul::primitive_desc gemmMatmul(OneDnnEngine &dnn,
                                        const dnnl::matmul::desc &desc);

/// A primitive with the memory objects of its arguments bound once. The
/// memory objects' data handles are set per call; execute() passes the
/// bound list to oneDNN's C API, so running allocates nothing in memfmt.
class BoundPrimitive {
public:
  void reset(dnnl::primitive p) {
    primitive = std::move(p);
    count = 0;
  }
  void bind(int argument, const dnnl::memory &memory) {
    assert(count < arguments.size() && "too many primitive arguments");
    arguments[count++] = {argument, memory.get()};
  }
  /// Becomes a reorder from `from` to `to`, bound to both.
  void resetReorder(const dnnl::memory &from, const dnnl::memory &to) {
    reset(dnnl::reorder(from, to));
    bind(DNNL_ARG_FROM, from);
    bind(DNNL_ARG_TO, to);
  }
  explicit operator bool() const { return static_cast<bool>(primitive); }
  /// Runs the primitive on `dnn`'s stream and waits; throws dnnl::error.
  void execute(OneDnnEngine &dnn, memfmt_context_counters_t &counters) const;

private:
  dnnl::primitive primitive;
  std::array<dnnl_exec_arg_t, 6> arguments{};
  int count = 0;
};

/// The entry of each node; an entry is rebuilt when a call's key differs
/// from the one it was built for. `Entry` has a constructor taking the key,
/// a `key` member and a `usable` flag set by its build.
template <typename Entry> class NodeCache {
public:
  /// The entry of `node` for `key`, building it with `build(entry)` first
  /// when needed. A build that throws dnnl::error leaves the entry unusable
  /// (the reference then runs this node at no further cost).
  template <typename Build>
  Entry &lookup(int64_t node, const PrimitiveKey &key, Build build) {
    std::unique_ptr<Entry> &entry = entries[node];
    if (!entry || entry->key != key) {
      entry = std::make_unique<Entry>(key);
      try {
        build(*entry);
      } catch (const dnnl::error &) {
        entry->usable = false;
      }
    }
    return *entry;
  }
  void clear() { entries.clear(); }

private:
  std::unordered_map<int64_t, std::unique_ptr<Entry>> entries;
};

/// A grow-only scratch buffer aligned to a cache line (64 bytes, the
/// alignment oneDNN gives its own memory objects). A std::vector<char> of
/// that size is only as aligned as malloc makes it (16 bytes past a page),
/// so every 64-byte vector load of a jit kernel would straddle two lines.
class AlignedScratch {
public:
  static constexpr size_t kAlign = 64;
  /// `bytes` rounded up to a multiple of kAlign.
  static size_t roundUp(size_t bytes) {
    return (bytes + kAlign - 1) / kAlign * kAlign;
  }
  /// Makes room for at least `bytes`; the contents are not kept.
  void grow(size_t bytes);
  char *data() const { return storage.get(); }

private:
  struct Free {
    void operator()(char *p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> storage;
  size_t capacity = 0;
};

/// conv2d: oneDNN's convolution primitives (OneDnnConv.cpp).
class OneDnnConv {
public:
  /// `winograd`: f32 3x3 convolutions may use Winograd's algorithm;
  /// `bf16Math`: f32 convolutions multiply in bf16 (see OneDnnConv.cpp).
  OneDnnConv(OneDnnEngine &dnn, bool winograd, bool bf16Math);
  ~OneDnnConv();
  bool run(KernelCall &call, const args::conv2d &a, memfmt_status_t &status);
  /// Drops every cached primitive and packed weight.
  void clear();

private:
  struct Entry;
  /// Constant weights packed for one layout, shared by every node that
  /// reads the same buffer into it (memfmt-tile-batch's sub-batches run the
  /// same layer once each).
  struct SharedPack {
    const void *source;
    dnnl::memory::desc from, to;
    dnnl::memory packed;
  };
  /// The pack of `source` (described by `from`) into `to`, or null.
  const dnnl::memory *findPack(const void *source,
                               const dnnl::memory::desc &from,
                               const dnnl::memory::desc &to) const;

  OneDnnEngine &dnn;
  bool winograd, bf16Math;
  NodeCache<Entry> cache;
  std::vector<SharedPack> packs;
  /// Blocked input and output of the Winograd convolutions, and the bf16
  /// input of the bf16-math ones (one call at a time).
  AlignedScratch blocked;
};

/// linear: one matmul on the tensors' own strides (OneDnnLinear.cpp).
class OneDnnLinear {
public:
  explicit OneDnnLinear(OneDnnEngine &dnn);
  ~OneDnnLinear();
  bool run(KernelCall &call, const args::linear &a, memfmt_status_t &status);
  /// Drops every cached primitive.
  void clear();

private:
  struct Entry;
  OneDnnEngine &dnn;
  NodeCache<Entry> cache;
};

/// linear_backward: matmuls on the tensors' own strides
/// (OneDnnLinearBackward.cpp).
class OneDnnLinearBackward {
public:
  /// `bf16Math`: the matmuls multiply bf16 copies of their operands
  /// (OneDnnLinearBackward.cpp).
  explicit OneDnnLinearBackward(OneDnnEngine &dnn, bool bf16Math = false);
  ~OneDnnLinearBackward();
  bool run(KernelCall &call, const args::linear_backward &a,
           memfmt_status_t &status);
  /// Drops every cached primitive.
  void clear();

private:
  struct Entry;
  OneDnnEngine &dnn;
  bool bf16Math;
  NodeCache<Entry> cache;
  /// The bf16 copies of the operands (bf16 math; one call at a time).
  AlignedScratch scratch;
};

/// convolution_backward: pointwise convolutions whose activations are
/// matrices as linear_backward's matmuls, the others by oneDNN's
/// convolution primitives (OneDnnConvBackward.cpp).
class OneDnnConvBackward {
public:
  /// `winograd`: 3x3 convolutions' gradients may use Winograd's algorithm;
  /// `bf16Math`: the gradients multiply in bf16 (OneDnnConvBackward.cpp).
  OneDnnConvBackward(OneDnnEngine &dnn, bool winograd, bool bf16Math);
  ~OneDnnConvBackward();
  bool run(KernelCall &call, const args::convolution_backward &a,
           memfmt_status_t &status);
  /// Drops every cached primitive.
  void clear();

private:
  struct Entry;
  OneDnnEngine &dnn;
  bool winograd, bf16Math;
  NodeCache<Entry> cache;
  /// The matmuls of pointwise convolutions.
  OneDnnLinearBackward pointwise;
  /// The copies of tensors whose layout the primitives do not take (one
  /// call at a time).
  AlignedScratch scratch;
};

/// Pooling, reorders and eltwise: one primitive from a source to a
/// destination.
class OneDnnUnary {
public:
  explicit OneDnnUnary(OneDnnEngine &dnn);
  ~OneDnnUnary();
  bool run(KernelCall &call, const args::max_pool2d &a,
           memfmt_status_t &status);
  bool run(KernelCall &call, const args::avg_pool2d &a,
           memfmt_status_t &status);
  bool run(KernelCall &call, const args::adaptive_avg_pool2d &a,
           memfmt_status_t &status);
  bool run(KernelCall &call, const args::copy &a, memfmt_status_t &status);
  /// sigmoid, silu and gelu (f32; input and output of one layout).
  bool run(KernelCall &call, const args::eltwise &a, memfmt_status_t &status);
  /// Their gradients (f32 and bf16; the three tensors of one layout).
  bool run(KernelCall &call, const args::eltwise_backward &a,
           memfmt_status_t &status);
  bool run(KernelCall &call, const args::cast_f32_to &a,
           memfmt_status_t &status);
  bool run(KernelCall &call, const args::cast_to_f32_from &a,
           memfmt_status_t &status);
  /// Drops every cached primitive.
  void clear();

  struct Entry;
  /// A pooling window along one spatial dimension.
  struct PoolAxis;

private:
  /// A pooling call from `input` to `output` with the windows `h` and `w`
  /// and oneDNN's end padding.
  bool runPool(KernelCall &call, const TensorView &input,
               const TensorView &output, const PoolAxis &h, const PoolAxis &w,
               int64_t padBottom, int64_t padRight, dnnl::algorithm algorithm,
               memfmt_status_t &status);
  /// Runs the entry of `call`'s node for `key` (built by `build` when
  /// needed) from `input` (and `extraInput`, the entry's `extra`) to
  /// `output`.
  template <typename Build>
  bool runEntry(KernelCall &call, const PrimitiveKey &key,
                const TensorView &input, const TensorView &output,
                const char *what, Build build, memfmt_status_t &status,
                const TensorView *extraInput = nullptr);
  /// A reorder from `input` (of `inType`) to `output` (of `outType`).
  bool runReorder(KernelCall &call, const TensorView &input, DType inType,
                  const TensorView &output, DType outType,
                  memfmt_status_t &status);

  OneDnnEngine &dnn;
  NodeCache<Entry> cache;
};

/// layer_norm (f32): layer_normalization_forward on the dense [rows, D]
/// matrix of an input and an output whose last dim has unit stride and whose
/// rows follow each other without gaps (OneDnnLayerNorm.cpp).
class OneDnnLayerNorm {
public:
  explicit OneDnnLayerNorm(OneDnnEngine &dnn);
  ~OneDnnLayerNorm();
  bool run(KernelCall &call, const args::layer_norm &a,
           memfmt_status_t &status);
  /// Drops every cached primitive.
  void clear();

private:
  struct Entry;
  OneDnnEngine &dnn;
  NodeCache<Entry> cache;
  /// Dense copies of strided weights and biases.
  std::vector<char> weightScratch, biasScratch;
};

/// Appends a fusion epilogue's activation (a memfmt_eltwise_op_t with its
/// parameters, as conv2d's and linear's) as eltwise post-ops; false where
/// oneDNN has none that computes it.
bool appendActivation(dnnl::post_ops &ops, int64_t activation, double alpha,
                      double beta);

/// "oneDNN convolution_forward: could not execute a primitive (status 3)".
std::string describeError(const char *what, const dnnl::error &error);

/// The elements of the 1-D tensor `v` (elements of `size` bytes) with unit
/// stride: its own data when they already are, else a copy gathered into
/// `scratch` (which allocates only the first time it grows).
void *denseVector(const TensorView &v, size_t size, std::vector<char> &scratch);

} // namespace memfmt::runtime::cpu

#endif // MEMFMT_RUNTIME_CPU_ONEDNN_H
