//===- SoftmaxBackward.cpp - The gradient of softmax ----------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// softmax_backward (aten::_softmax_backward_data): from grad_output g and
// the forward's output y, every row along `dim` gives
//   grad_input = y * (g - sum(g * y))
// with the sum over the row. The rows are walked as the forward walks them
// (forEachStrided over the other dims, split across threads), so the result
// does not depend on the thread count.
//  * The reference takes any strides (f32; bf16 widened by the backend): the
//    row's dot product and each element in double, rounded once
//    (math::softmaxRowBackward, which the CUDA kernel runs too).
//  * The fast loop takes f32 or bf16 rows with unit stride along `dim` in all
//    three tensors (the last dim of row-major tensors, the channels of
//    channels-last ones): the dot product in double over eight lanes
//    (RowSums.h), each element in f32 arithmetic, rounded once to the
//    element type. Compiled per vector width (Vectorize.h).
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Element.h"
#include "RowSums.h"
#include "StridedLoop.h"
#include "Vectorize.h"

#include "lib/TrainingMath.h"

#include <algorithm>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;

namespace {

/// Elements per thread below which the loops stay serial.
constexpr int64_t kMinPerThread = 1 << 14;

/// Calls `body(gi, go, y, steps, count)` for runs of `count` rows covering
/// every row: row r of a run starts at gi + r * steps[0], go + r *
/// steps[1] and y + r * steps[2]; element i of a row is i * strides[dim]
/// further on in each tensor.
template <typename T, typename Body>
void forEachRowRun(const args::softmax_backward &a, Body &&body) {
  const TensorView &gi = a.grad_input, &go = a.grad_output, &y = a.output;
  T *gis = gi.as<T>();
  const T *gos = go.as<T>(), *ys = y.as<T>();
  forEachRowAlong<3>(y.rank, y.sizes, a.dim,
                     {gi.strides, go.strides, y.strides}, kMinPerThread,
                     [&](const OperandOffsets<3> &offsets, int64_t count,
                         const OperandOffsets<3> &steps) {
                       body(gis + offsets[0], gos + offsets[1], ys + offsets[2],
                            steps, count);
                     });
}

/// The gradient of `count` rows of `d` contiguous elements (inlined into
/// each clone below).
template <typename T>
[[gnu::always_inline]] inline void rowsOf(T *gi, const T *go, const T *y,
                                          const OperandOffsets<3> &steps,
                                          int64_t count, int64_t d) {
  for (int64_t r = 0; r < count; ++r) {
    T *gir = gi + r * steps[0];
    const T *gor = go + r * steps[1], *yr = y + r * steps[2];
    const float dot = static_cast<float>(dotContiguous(gor, yr, d));
    for (int64_t i = 0; i < d; ++i)
      gir[i] = store<T>(load(yr[i]) * (load(gor[i]) - dot));
  }
}

MEMFMT_VECTOR_CLONES
void softmaxBackwardRows(float *gi, const float *go, const float *y,
                         const OperandOffsets<3> &steps, int64_t count,
                         int64_t d) {
  rowsOf(gi, go, y, steps, count, d);
}

MEMFMT_VECTOR_CLONES
void softmaxBackwardRows(Bf16 *gi, const Bf16 *go, const Bf16 *y,
                         const OperandOffsets<3> &steps, int64_t count,
                         int64_t d) {
  rowsOf(gi, go, y, steps, count, d);
}

} // namespace

void cpu::softmaxBackwardReference(const args::softmax_backward &a) {
  const int64_t d = a.output.sizes[a.dim];
  const int64_t giStep = a.grad_input.strides[a.dim],
                goStep = a.grad_output.strides[a.dim],
                yStep = a.output.strides[a.dim];
  forEachRowRun<float>(a, [&](float *gi, const float *go, const float *y,
                              const OperandOffsets<3> &steps, int64_t count) {
    for (int64_t r = 0; r < count; ++r)
      math::softmaxRowBackward(d, y + r * steps[2], yStep, go + r * steps[1],
                               goStep, gi + r * steps[0], giStep);
  });
}

const char *cpu::softmaxBackwardFast(const args::softmax_backward &a,
                                     DType dtype) {
  const int64_t d = a.output.sizes[a.dim];
  // A size-1 dim's stride is free (L2).
  if (d != 1 &&
      (a.grad_input.strides[a.dim] != 1 || a.grad_output.strides[a.dim] != 1 ||
       a.output.strides[a.dim] != 1))
    return nullptr;
  return visitFloatElement(dtype, [&](auto element) {
    using T = decltype(element);
    forEachRowRun<T>(a, [&](T *gi, const T *go, const T *y,
                            const OperandOffsets<3> &steps, int64_t count) {
      softmaxBackwardRows(gi, go, y, steps, count, d);
    });
    return "rows";
  });
}
