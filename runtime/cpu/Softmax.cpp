//===- Softmax.cpp - Softmax along one dim --------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// aten::_softmax(input, dim): every row along `dim` (one per index of the
// other dims) becomes exp(x - max) / sum(exp(x - max)), max and sum taken
// over the row. Subtracting the row's maximum keeps every exp in [0, 1], so
// none overflows whatever the inputs' magnitude (rows holding 1e4 are
// fine), and the sum is at least 1. A row holding NaN, or holding only -inf,
// becomes NaN, as in PyTorch. The rows are walked by forEachStrided over
// the other dims (the sizes with `dim` set to 1), so any layout is visited
// in the output's memory order and the rows are split across threads.
//  * The reference takes any strides and computes in double (the max, the
//    exps, their sum and the quotient), rounding once.
//  * The fast loop takes rows with unit stride along `dim` in both tensors
//    (the last dim of row-major tensors, the channels of channels-last
//    ones, padded rows, input and output in different layouts): the max
//    over eight float lanes, exp(x - max) into the output through
//    expNonPositive below, their sum in double (RowSums.h), and a scaling
//    by 1 / sum. bf16 rows (a mixed-precision training step's attention)
//    are widened into a per-thread row of floats that takes the same
//    steps; each result is rounded to bf16 once. libm's expf is a call per
//    element, which keeps a loop scalar; expNonPositive is plain arithmetic
//    that the compiler vectorises. The loop is compiled for AVX-512, AVX2 and
//    the baseline, and the loader picks the best one the CPU has
//    (target_clones).
// There is no oneDNN path: oneDNN 2.6's softmax_v2_forward (jit:avx512_core,
// for dense rows only) is no faster than this loop, and it keeps a NaN to
// its own element where PyTorch makes the whole row NaN. Measured in a
// standalone program on a 2-vCPU AMD EPYC VM (AVX-512), one thread, on
// [75264, 49] (Swin-T's stage-1 window attention at batch 8) and
// [18912, 197] (ViT-B/16's at batch 8): oneDNN 3.9-5.2 and 2.3-4.6 ms per
// call, this loop's AVX-512 version 3.0-3.8 and 1.9-2.2 ms, its baseline
// (SSE2) version 6.7-8.7 and 5.4-7.8 ms, the same loop with libm's expf
// 12-15 and 12-14 ms. SoftmaxTest.DISABLED_TimeAttention times the kernel
// in the runtime (3.3-3.4 and 1.8-1.9 ms, in place too; the reference
// 44-47 and 35-43 ms).
// A row's max is found before any of it is written, and the later passes
// read each element before writing it, so the output may be the input.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Element.h"
#include "RowSums.h"
#include "Scratch.h"
#include "StridedLoop.h"
#include "Vectorize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;

namespace {

/// Elements per thread below which the loops stay serial (an exp costs a
/// few nanoseconds, so a chunk runs for tens of microseconds).
constexpr int64_t kMinPerThread = 1 << 14;

/// Calls `body(x, xRowStep, y, yRowStep, count)` for runs of `count` rows
/// of `a`'s input and output covering every row: row r of a run starts at
/// x + r * xRowStep and y + r * yRowStep, its element i is i *
/// strides[dim] further on.
template <typename T, typename Body>
void forEachRowRun(const args::softmax &a, Body &&body) {
  const TensorView &in = a.input, &out = a.output;
  const T *x = in.as<T>();
  T *y = out.as<T>();
  forEachRowAlong<2>(
      in.rank, in.sizes, a.dim, {out.strides, in.strides}, kMinPerThread,
      [&](const OperandOffsets<2> &offsets, int64_t count,
          const OperandOffsets<2> &steps) {
        body(x + offsets[1], steps[1], y + offsets[0], steps[0], count);
      });
}

uint32_t bitsOf(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

float floatOf(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

/// exp(x) for x <= 0 (and NaN, which stays NaN), within 1.02 ulp of the
/// exact value (checked against double over every float in
/// [ln(FLT_MIN), 0], with and without fused multiply-adds); 0 below
/// ln(FLT_MIN), where the exact value is subnormal (a softmax term under
/// 2^-126 of the row's largest, which is 1).
/// Cephes' expf: x = n * ln2 + r with |r| <= ln2 / 2 (ln2 split in two so
/// that n * ln2 is exact), a degree-7 polynomial for exp(r), and 2^n made
/// from its exponent bits. n is rounded by adding 1.5 * 2^23, which leaves
/// it in the sum's low mantissa bits (round to nearest, no float-to-int
/// conversion, which SSE2 cannot vectorise and NaN would make undefined).
inline float expNonPositive(float x) {
  constexpr float kLowest = -87.33654475f; // ln(FLT_MIN)
  constexpr float kRound = 12582912.0f;    // 1.5 * 2^23
  const float clamped = x < kLowest ? kLowest : x;
  const float shifted = clamped * 1.44269504088896341f + kRound;
  const float n = shifted - kRound;
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // n + 127 in the exponent field: n is in [-126, 0] for x in the range.
  const float scale = floatOf((bitsOf(shifted) - bitsOf(kRound) + 127u) << 23);
  return x < kLowest ? 0.0f : p * scale;
}

/// The largest of `count` contiguous floats (-inf for none), over eight
/// independent lanes. NaN never wins a comparison; a row holding one
/// becomes NaN through its exp anyway.
inline float maxContiguous(const float *x, int64_t count) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float lane[8] = {kNegInf, kNegInf, kNegInf, kNegInf,
                   kNegInf, kNegInf, kNegInf, kNegInf};
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int j = 0; j < 8; ++j)
      lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  float max = kNegInf;
  for (; i < count; ++i)
    max = x[i] > max ? x[i] : max;
  for (float v : lane)
    max = v > max ? v : max;
  return max;
}

/// y[i] = exp(x[i] - shift) for `count` contiguous floats. In place gets a
/// loop of its own: the compiler vectorises the two-pointer loop behind a
/// runtime overlap check, which x == y fails, running it scalar (4 to 7
/// times slower on the attention shapes above).
inline void expShifted(const float *x, float *y, int64_t count, float shift) {
  if (x == y) {
    for (int64_t i = 0; i < count; ++i)
      y[i] = expNonPositive(y[i] - shift);
    return;
  }
  for (int64_t i = 0; i < count; ++i)
    y[i] = expNonPositive(x[i] - shift);
}

/// The softmax of `count` rows of `d` contiguous floats, row r at
/// x + r * xRowStep and y + r * yRowStep.
MEMFMT_VECTOR_CLONES
void softmaxRows(const float *x, int64_t xRowStep, float *y, int64_t yRowStep,
                 int64_t count, int64_t d) {
  for (int64_t r = 0; r < count; ++r) {
    const float *xr = x + r * xRowStep;
    float *yr = y + r * yRowStep;
    expShifted(xr, yr, d, maxContiguous(xr, d));
    const float scale = static_cast<float>(1.0 / sumContiguous(yr, d));
    for (int64_t i = 0; i < d; ++i)
      yr[i] *= scale;
  }
}

/// The same for bf16 rows, in f32: each row is widened into `row` (d
/// floats of this thread's scratch) and goes through the f32 steps there,
/// then each result is rounded to bf16 once. The row is read whole before
/// any of it is written, so the output may be the input.
MEMFMT_VECTOR_CLONES
void softmaxRows(const Bf16 *x, int64_t xRowStep, Bf16 *y, int64_t yRowStep,
                 int64_t count, int64_t d, float *row) {
  for (int64_t r = 0; r < count; ++r) {
    const Bf16 *xr = x + r * xRowStep;
    Bf16 *yr = y + r * yRowStep;
    for (int64_t i = 0; i < d; ++i)
      row[i] = load(xr[i]);
    expShifted(row, row, d, maxContiguous(row, d));
    const float scale = static_cast<float>(1.0 / sumContiguous(row, d));
    for (int64_t i = 0; i < d; ++i)
      yr[i] = store<Bf16>(row[i] * scale);
  }
}

} // namespace

void cpu::softmaxReference(const args::softmax &a) {
  const int64_t d = a.input.sizes[a.dim];
  const int64_t xStep = a.input.strides[a.dim], yStep = a.output.strides[a.dim];
  forEachRowRun<float>(a, [&](const float *x, int64_t xRowStep, float *y,
                              int64_t yRowStep, int64_t count) {
    for (int64_t r = 0; r < count; ++r) {
      const float *xr = x + r * xRowStep;
      float *yr = y + r * yRowStep;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < d; ++i)
        max = std::max(max, static_cast<double>(xr[i * xStep]));
      double sum = 0;
      for (int64_t i = 0; i < d; ++i)
        sum += std::exp(xr[i * xStep] - max);
      for (int64_t i = 0; i < d; ++i)
        yr[i * yStep] = static_cast<float>(std::exp(xr[i * xStep] - max) / sum);
    }
  });
}

const char *cpu::softmaxFast(const args::softmax &a, DType dtype) {
  const int64_t d = a.input.sizes[a.dim];
  // A size-1 dim's stride is free (L2).
  if (d != 1 && (a.input.strides[a.dim] != 1 || a.output.strides[a.dim] != 1))
    return nullptr;
  return visitFloatElement(dtype, [&](auto element) {
    using T = decltype(element);
    forEachRowRun<T>(a, [&](const T *x, int64_t xRowStep, T *y,
                            int64_t yRowStep, int64_t count) {
      if constexpr (std::is_same_v<T, float>)
        softmaxRows(x, xRowStep, y, yRowStep, count, d);
      else
        softmaxRows(x, xRowStep, y, yRowStep, count, d,
                    scratchBuffer<float, 0>(d).data());
    });
    return "rows";
  });
}
