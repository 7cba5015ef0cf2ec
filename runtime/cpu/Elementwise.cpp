//===- Elementwise.cpp - relu, add, eltwise and binary --------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// relu, add and binary (mul, sub, div; NumPy broadcasting; the reference
// add takes a relu epilogue for the convolution that sums its residual with
// it) and eltwise (sigmoid, hardswish, clamp, gelu, ... of
// ElementwiseMath.h, shared with the CUDA kernels). The reference
// walks the output's index space with forEachStrided, giving a broadcast
// operand stride 0 in its size-1 (or missing leading) dims, so any layout of
// any operand works. The fast path covers the case that matters for CNNs:
// every tensor has the same shape and the same dense layout (NCHW,
// channels-last or any other dense permutation, L3), which is one linear,
// vectorisable loop, a per-channel operand ([N or 1, C, 1, 1]: a
// squeeze-excite or layer scale) against a dense NCHW or channels-last one,
// and an operand of one element (a splat constant) against a dense one.
// The fast loops run in f32 and bf16 (Element.h: computed in f32, rounded
// once, the widened reference's bits). relu keeps NaN (like PyTorch): only `x <
// 0` becomes 0. An output may be an input itself (same address and layout):
// each element is read before it is written.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Element.h"
#include "StridedLoop.h"
#include "Vectorize.h"

#include "lib/ElementwiseMath.h"

#include <algorithm>

using namespace memfmt::runtime;

namespace {

/// Elements per thread below which the elementwise loops stay serial.
constexpr int64_t kMinPerThread = 1 << 15;

using math::relu;

/// True if every view has the same shape and the same dense layout, so
/// element i of each is at data + i for i in [0, numElements).
bool sameDenseLayout(std::initializer_list<const TensorView *> views) {
  const TensorView &first = **views.begin();
  if (!first.isDense())
    return false;
  for (const TensorView *view : views)
    if (!view->sameLayoutAs(first))
      return false;
  return true;
}

/// The strides that broadcast `operand` to the output shape `out`: ranks
/// aligned to the right, stride 0 where the operand has size 1 (or no dim).
void broadcastStrides(const TensorView &operand, const TensorView &out,
                      int64_t *strides) {
  int64_t lead = out.rank - operand.rank;
  for (int64_t i = 0; i < out.rank; ++i) {
    int64_t d = i - lead;
    strides[i] =
        d < 0 || operand.sizes[d] != out.sizes[i] ? 0 : operand.strides[d];
  }
}

} // namespace

void cpu::reluReference(const args::relu &a) {
  const float *x = a.input.as<float>();
  float *y = a.output.as<float>();
  forEachStrided<2>(a.output.rank, a.output.sizes,
                    {a.output.strides, a.input.strides}, kMinPerThread,
                    [&](const OperandOffsets<2> &at, int64_t count,
                        const OperandOffsets<2> &step) {
                      for (int64_t i = 0; i < count; ++i)
                        y[at[0] + i * step[0]] = relu(x[at[1] + i * step[1]]);
                    });
}

namespace memfmt::runtime::cpu {
namespace {

/// y[i] = fn(x[i]) over two tensors of one dense layout, in T (inlined, so
/// that the loop vectorises when `Vector`: fn is plain arithmetic, no libm
/// call).
template <typename T, bool Vector = true, typename Fn>
void denseMap(const TensorView &input, const TensorView &output,
              int64_t minPerThread, Fn fn) {
  const T *x = input.as<T>();
  T *y = output.as<T>();
  parallelFor(output.numElements(), minPerThread,
              [&](int64_t begin, int64_t end, int) {
                if constexpr (Vector) {
                  MEMFMT_INDEPENDENT_ITERATIONS
                  for (int64_t i = begin; i < end; ++i)
                    y[i] = store<T>(fn(load(x[i])));
                } else {
                  for (int64_t i = begin; i < end; ++i)
                    y[i] = store<T>(fn(load(x[i])));
                }
              });
}

} // namespace
} // namespace memfmt::runtime::cpu

const char *cpu::reluFast(const args::relu &a, DType dtype) {
  if (!sameDenseLayout({&a.output, &a.input}))
    return nullptr;
  return visitFloatElement(dtype, [&](auto element) {
    denseMap<decltype(element)>(a.input, a.output, kMinPerThread,
                                [](float x) { return relu(x); });
    return "dense";
  });
}

namespace memfmt::runtime::cpu {
namespace {

/// out = fn(lhs, rhs) with NumPy broadcasting, any layouts.
template <typename Fn>
void broadcastReference(const TensorView &lhs, const TensorView &rhs,
                        const TensorView &out, Fn fn) {
  int64_t lhsStrides[kMaxRank], rhsStrides[kMaxRank];
  broadcastStrides(lhs, out, lhsStrides);
  broadcastStrides(rhs, out, rhsStrides);
  const float *l = lhs.as<float>(), *r = rhs.as<float>();
  float *y = out.as<float>();
  forEachStrided<3>(out.rank, out.sizes, {out.strides, lhsStrides, rhsStrides},
                    kMinPerThread,
                    [&](const OperandOffsets<3> &at, int64_t count,
                        const OperandOffsets<3> &step) {
                      for (int64_t i = 0; i < count; ++i)
                        y[at[0] + i * step[0]] =
                            fn(l[at[1] + i * step[1]], r[at[2] + i * step[2]]);
                    });
}

/// The same in T when every tensor has one shape and one dense layout;
/// else returns null.
template <typename T, typename Fn>
const char *broadcastFast(const TensorView &lhs, const TensorView &rhs,
                          const TensorView &out, Fn fn) {
  if (!sameDenseLayout({&out, &lhs, &rhs}))
    return nullptr;
  const T *l = lhs.as<T>(), *r = rhs.as<T>();
  T *y = out.as<T>();
  parallelFor(out.numElements(), kMinPerThread,
              [&](int64_t begin, int64_t end, int) {
                MEMFMT_INDEPENDENT_ITERATIONS
                for (int64_t i = begin; i < end; ++i)
                  y[i] = store<T>(fn(load(l[i]), load(r[i])));
              });
  return "dense";
}

/// out = fn(lhs, rhs) where one operand holds a single element (a splat
/// constant broadcast over the other: a vision transformer's attention
/// scale) and the other has the output's shape and dense layout, in T;
/// else returns null.
template <typename T, typename Fn>
const char *scalarOperandFast(const TensorView &lhs, const TensorView &rhs,
                              const TensorView &out, Fn fn) {
  for (bool scalarOnLeft : {false, true}) {
    const TensorView &tensor = scalarOnLeft ? rhs : lhs;
    const TensorView &scalar = scalarOnLeft ? lhs : rhs;
    if (scalar.numElements() != 1 || !sameDenseLayout({&out, &tensor}))
      continue;
    const float s = load(*scalar.as<T>());
    const T *x = tensor.as<T>();
    T *y = out.as<T>();
    parallelFor(out.numElements(), kMinPerThread,
                [&](int64_t begin, int64_t end, int) {
                  if (scalarOnLeft) {
                    MEMFMT_INDEPENDENT_ITERATIONS
                    for (int64_t i = begin; i < end; ++i)
                      y[i] = store<T>(fn(s, load(x[i])));
                  } else {
                    MEMFMT_INDEPENDENT_ITERATIONS
                    for (int64_t i = begin; i < end; ++i)
                      y[i] = store<T>(fn(load(x[i]), s));
                  }
                });
    return "scalar";
  }
  return nullptr;
}

} // namespace
} // namespace memfmt::runtime::cpu

void cpu::addReference(const args::add &a, bool withRelu) {
  if (withRelu)
    broadcastReference(a.lhs, a.rhs, a.output,
                       [](float l, float r) { return relu(l + r); });
  else
    broadcastReference(a.lhs, a.rhs, a.output,
                       [](float l, float r) { return l + r; });
}

const char *cpu::addFast(const args::add &a, DType dtype) {
  return visitFloatElement(dtype, [&](auto element) -> const char * {
    using T = decltype(element);
    auto add = [](float l, float r) { return l + r; };
    if (const char *impl = broadcastFast<T>(a.lhs, a.rhs, a.output, add))
      return impl;
    return scalarOperandFast<T>(a.lhs, a.rhs, a.output, add);
  });
}

void cpu::binaryReference(const args::binary &a) {
  int64_t op = a.op;
  broadcastReference(a.lhs, a.rhs, a.output, [op](float l, float r) {
    return math::binary(op, l, r);
  });
}

namespace memfmt::runtime::cpu {
namespace {

/// Calls `visit(fn)` with binary's function `op` (mul, sub or div) as a
/// lambda, so that each caller's loop is instantiated, and vectorised, per
/// function. Always inlined, so that a caller compiled per vector width
/// (perChannelRows) keeps the loops in its own versions.
template <typename Visit>
[[gnu::always_inline]] inline decltype(auto) visitBinary(int64_t op,
                                                         Visit &&visit) {
  switch (op) {
  case MEMFMT_BINARY_MUL:
    return visit([](float l, float r) { return l * r; });
  case MEMFMT_BINARY_SUB:
    return visit([](float l, float r) { return l - r; });
  default:
    return visit([](float l, float r) { return l / r; });
  }
}

/// Calls `visit(fn)` with fn(v, s) = v op s, or s op v when `scaleOnLeft`
/// (v an activation's element, s its channel's scale). Always inlined, as
/// visitBinary.
template <typename Visit>
[[gnu::always_inline]] inline void visitPerChannel(int64_t op, bool scaleOnLeft,
                                                   Visit &&visit) {
  visitBinary(
      op, [&](auto fn) __attribute__((always_inline)) {
        if (scaleOnLeft)
          visit([fn](float v, float scale) { return fn(scale, v); });
        else
          visit(fn);
      });
}

/// The channels-last rows [begin, end) of a per-channel binary in T: row
/// `row` of `c` contiguous channels at x + row * c and y + row * c, its
/// scales at r + (row / hw) * rn with stride rc (the compiler versions the
/// loop for rc = 1).
template <typename T>
[[gnu::always_inline]] inline void
perChannelRowsOf(int64_t op, bool scaleOnLeft, const T *x, const T *r,
                 int64_t rn, int64_t rc, T *y, int64_t hw, int64_t c,
                 int64_t begin, int64_t end) {
  visitPerChannel(
      op, scaleOnLeft, [&](auto fn) __attribute__((always_inline)) {
        for (int64_t row = begin; row < end; ++row) {
          const T *scale = r + (row / hw) * rn;
          const T *xr = x + row * c;
          T *yr = y + row * c;
          MEMFMT_INDEPENDENT_ITERATIONS
          for (int64_t k = 0; k < c; ++k)
            yr[k] = store<T>(fn(load(xr[k]), load(scale[k * rc])));
        }
      });
}

/// perChannelRowsOf per storage type, compiled per vector width
/// (Vectorize.h): as a baseline SSE2 loop a squeeze-excite scale of
/// EfficientNet-B0 ran at a quarter of the speed it runs at from the cache
/// with AVX-512.
MEMFMT_VECTOR_CLONES
void perChannelRows(int64_t op, bool scaleOnLeft, const float *x,
                    const float *r, int64_t rn, int64_t rc, float *y,
                    int64_t hw, int64_t c, int64_t begin, int64_t end) {
  perChannelRowsOf(op, scaleOnLeft, x, r, rn, rc, y, hw, c, begin, end);
}
MEMFMT_VECTOR_CLONES
void perChannelRows(int64_t op, bool scaleOnLeft, const Bf16 *x,
                    const Bf16 *r, int64_t rn, int64_t rc, Bf16 *y,
                    int64_t hw, int64_t c, int64_t begin, int64_t end) {
  perChannelRowsOf(op, scaleOnLeft, x, r, rn, rc, y, hw, c, begin, end);
}

/// out = lhs op rhs[n, c] (rhs[n, c] op lhs when `scaleOnLeft`) in T where
/// out and lhs are 4-D with one dense NCHW or channels-last layout and rhs
/// is a per-channel [N or 1, C, 1, 1] (a squeeze-excite scale) or [C, 1, 1]
/// (a layer scale); else returns null.
template <typename T>
const char *perChannelFast(const TensorView &lhs, const TensorView &rhsView,
                           const TensorView &out, int64_t op,
                           bool scaleOnLeft) {
  // A lower-rank rhs ([C, 1, 1], as ConvNeXt's layer scale) is aligned to
  // the right (NumPy).
  if (out.rank != 4 || rhsView.rank > 4 || rhsView.rank < 3)
    return nullptr;
  TensorView rhs = rhsView;
  if (rhs.rank == 3) {
    rhs.rank = 4;
    for (int d = 3; d > 0; --d) {
      rhs.sizes[d] = rhs.sizes[d - 1];
      rhs.strides[d] = rhs.strides[d - 1];
    }
    rhs.sizes[0] = 1;
    rhs.strides[0] = 0;
  }
  if (!out.isDense() ||
      !lhs.sameLayoutAs(out) || rhs.sizes[1] != out.sizes[1] ||
      rhs.sizes[2] != 1 || rhs.sizes[3] != 1 ||
      (rhs.sizes[0] != 1 && rhs.sizes[0] != out.sizes[0]))
    return nullptr;
  int64_t n = out.sizes[0], c = out.sizes[1],
          hw = out.sizes[2] * out.sizes[3];
  int64_t rn = rhs.sizes[0] == 1 ? 0 : rhs.strides[0], rc = rhs.strides[1];
  const T *l = lhs.as<T>(), *r = rhs.as<T>();
  T *y = out.as<T>();
  bool channelsLast = out.strides[1] == 1 && c > 1;
  bool contiguous = out.strides[3] == 1 && out.strides[2] == out.sizes[3] &&
                    out.strides[1] == hw;
  if (channelsLast && out.strides[0] == hw * c) {
    // Rows of C channels: one scale vector per image.
    parallelFor(n * hw, kMinPerThread / std::max<int64_t>(c, 1),
                [&](int64_t begin, int64_t end, int) {
                  perChannelRows(op, scaleOnLeft, l, r, rn, rc, y, hw, c, begin,
                                 end);
                });
    return "per_channel";
  }
  if (contiguous && out.strides[0] == c * hw) {
    // Planes of H x W: one scale per plane.
    visitPerChannel(op, scaleOnLeft, [&](auto fn) {
      parallelFor(n * c, kMinPerThread / std::max<int64_t>(hw, 1),
                  [&](int64_t begin, int64_t end, int) {
                    for (int64_t plane = begin; plane < end; ++plane) {
                      float scale =
                          load(r[(plane / c) * rn + (plane % c) * rc]);
                      const T *x = l + plane * hw;
                      T *o = y + plane * hw;
                      MEMFMT_INDEPENDENT_ITERATIONS
                      for (int64_t k = 0; k < hw; ++k)
                        o[k] = store<T>(fn(load(x[k]), scale));
                    }
                  });
    });
    return "per_channel";
  }
  return nullptr;
}

} // namespace
} // namespace memfmt::runtime::cpu

const char *cpu::binaryFast(const args::binary &a, DType dtype) {
  // Same dense layouts (one loop per function, so that each vectorises) or
  // a one-element operand, then a per-channel operand on either side (on
  // the left: ConvNeXt's layer_scale * x).
  return visitFloatElement(dtype, [&](auto element) -> const char * {
    using T = decltype(element);
    if (const char *impl = visitBinary(a.op, [&](auto fn) {
          const char *dense = broadcastFast<T>(a.lhs, a.rhs, a.output, fn);
          return dense ? dense
                       : scalarOperandFast<T>(a.lhs, a.rhs, a.output, fn);
        }))
      return impl;
    if (const char *impl = perChannelFast<T>(a.lhs, a.rhs, a.output, a.op,
                                             /*scaleOnLeft=*/false))
      return impl;
    return perChannelFast<T>(a.rhs, a.lhs, a.output, a.op,
                             /*scaleOnLeft=*/true);
  });
}

void cpu::eltwiseReference(const args::eltwise &a) {
  const float *x = a.input.as<float>();
  float *y = a.output.as<float>();
  int64_t op = a.op;
  float alpha = static_cast<float>(a.alpha), beta = static_cast<float>(a.beta);
  forEachStrided<2>(a.output.rank, a.output.sizes,
                    {a.output.strides, a.input.strides}, kMinPerThread,
                    [&](const OperandOffsets<2> &at, int64_t count,
                        const OperandOffsets<2> &step) {
                      for (int64_t i = 0; i < count; ++i)
                        y[at[0] + i * step[0]] = math::eltwise(
                            op, x[at[1] + i * step[1]], alpha, beta);
                    });
}

const char *cpu::eltwiseFast(const args::eltwise &a, DType dtype) {
  if (!sameDenseLayout({&a.output, &a.input}))
    return nullptr;
  float alpha = static_cast<float>(a.alpha), beta = static_cast<float>(a.beta);
  const int64_t grain = kMinPerThread / 4;
  // The piecewise-linear functions get a loop each (they vectorise); the
  // others call libm per element (the CPU backend runs them on oneDNN's
  // eltwise where it can, OneDnnUnary.cpp).
  return visitFloatElement(dtype, [&](auto element) {
    using T = decltype(element);
    const TensorView &x = a.input, &y = a.output;
    switch (a.op) {
    case MEMFMT_ELTWISE_CLAMP:
      denseMap<T>(x, y, grain, [=](float v) {
        return math::clampKeepNaN(v, alpha, beta);
      });
      break;
    case MEMFMT_ELTWISE_HARDSWISH:
      denseMap<T>(x, y, grain, [](float v) { return math::hardswish(v); });
      break;
    case MEMFMT_ELTWISE_HARDSIGMOID:
      denseMap<T>(x, y, grain,
                  [=](float v) { return math::hardsigmoid(v, alpha, beta); });
      break;
    default: {
      int64_t op = a.op;
      denseMap<T, /*Vector=*/false>(x, y, grain, [=](float v) {
        return math::eltwise(op, v, alpha, beta);
      });
    }
    }
    return "dense";
  });
}
