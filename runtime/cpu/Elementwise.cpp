//===- Elementwise.cpp - relu and add -------------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// relu and add (NumPy broadcasting; the reference add takes a relu epilogue
// for the convolution that sums its residual with it). The reference
// walks the output's index space with forEachStrided, giving a broadcast
// operand stride 0 in its size-1 (or missing leading) dims, so any layout of
// any operand works. The fast path covers the case that matters for CNNs:
// every tensor has the same shape and the same dense layout (NCHW,
// channels-last or any other dense permutation, L3), which is one linear,
// vectorisable loop. relu keeps NaN (like PyTorch): only `x < 0` becomes 0.
// An output may be an input itself (same address and layout): each element
// is read before it is written.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "StridedLoop.h"

using namespace memfmt::runtime;

namespace {

/// Elements per thread below which the elementwise loops stay serial.
constexpr int64_t kMinPerThread = 1 << 15;

inline float relu(float v) { return v < 0.0f ? 0.0f : v; }

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

const char *cpu::reluFast(const args::relu &a) {
  if (!sameDenseLayout({&a.output, &a.input}))
    return nullptr;
  const float *x = a.input.as<float>();
  float *y = a.output.as<float>();
  parallelFor(a.output.numElements(), kMinPerThread,
              [&](int64_t begin, int64_t end, int) {
                for (int64_t i = begin; i < end; ++i)
                  y[i] = relu(x[i]);
              });
  return "dense";
}

void cpu::addReference(const args::add &a, bool withRelu) {
  int64_t lhsStrides[kMaxRank], rhsStrides[kMaxRank];
  broadcastStrides(a.lhs, a.output, lhsStrides);
  broadcastStrides(a.rhs, a.output, rhsStrides);
  const float *l = a.lhs.as<float>(), *r = a.rhs.as<float>();
  float *y = a.output.as<float>();
  forEachStrided<3>(a.output.rank, a.output.sizes,
                    {a.output.strides, lhsStrides, rhsStrides}, kMinPerThread,
                    [&](const OperandOffsets<3> &at, int64_t count,
                        const OperandOffsets<3> &step) {
                      for (int64_t i = 0; i < count; ++i) {
                        float v =
                            l[at[1] + i * step[1]] + r[at[2] + i * step[2]];
                        y[at[0] + i * step[0]] = withRelu ? relu(v) : v;
                      }
                    });
}

const char *cpu::addFast(const args::add &a) {
  if (!sameDenseLayout({&a.output, &a.lhs, &a.rhs}))
    return nullptr;
  const float *l = a.lhs.as<float>(), *r = a.rhs.as<float>();
  float *y = a.output.as<float>();
  parallelFor(a.output.numElements(), kMinPerThread,
              [&](int64_t begin, int64_t end, int) {
                for (int64_t i = begin; i < end; ++i)
                  y[i] = l[i] + r[i];
              });
  return "dense";
}
