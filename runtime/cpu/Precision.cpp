//===- Precision.cpp - f16/bf16 calls through the f32 reference kernels ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CPU backend has no f16/bf16 kernels of its own yet: it runs a call of
// element type f16 or bf16 by widening. Every tensor argument of the kernel's
// element type T (MEMFMT_IN) is converted to a dense f32 copy, every output
// of type T (MEMFMT_OUT) gets a dense f32 scratch tensor, the f32 reference
// kernel runs on those, and the scratch outputs are rounded back to T (round
// to nearest even) into the real outputs. Arguments of fixed type
// (MEMFMT_IN_I64, MEMFMT_OUT_I64, MEMFMT_IN_F32, MEMFMT_OUT_F32) are passed
// through. The per-kernel code is generated from Kernels.def, so a new kernel
// widens without being listed here.
//
// The result is the f32 reference's value of the T-rounded inputs, rounded
// once to T: the oracle the CUDA backend's f16/bf16 kernels are checked
// against, and what memfmt-run --check compares a reduced-precision model
// with. Copies are taken before anything is written, so in-place calls keep
// their meaning.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "StridedLoop.h"

#include "memfmt/runtime/io/HalfFloat.h"

#include <algorithm>

using namespace memfmt::runtime;
namespace io = memfmt::io;

namespace {

constexpr int64_t kMinPerThread = 1 << 16;

float loadAs(DType type, const void *base, int64_t index) {
  switch (type) {
  case DType::f16:
    return io::halfToFloat(static_cast<const uint16_t *>(base)[index]);
  case DType::bf16:
    return io::bfloat16ToFloat(static_cast<const uint16_t *>(base)[index]);
  default:
    return static_cast<const float *>(base)[index];
  }
}

void storeAs(DType type, void *base, int64_t index, float value) {
  switch (type) {
  case DType::f16:
    static_cast<uint16_t *>(base)[index] = io::floatToHalf(value);
    return;
  case DType::bf16:
    static_cast<uint16_t *>(base)[index] = io::floatToBFloat16(value);
    return;
  default:
    static_cast<float *>(base)[index] = value;
    return;
  }
}

/// Row-major strides of `view`'s shape. An empty view's strides are never
/// used, and its other sizes may be anything (up to INT64_MAX, whose product
/// overflows; found by memfmt-fuzz-runtime): they are all 1.
void setRowMajor(TensorView &view) {
  if (view.numElements() == 0) {
    std::fill(view.strides, view.strides + view.rank, int64_t(1));
    return;
  }
  int64_t running = 1;
  for (int64_t d = view.rank; d-- > 0;) {
    view.strides[d] = running;
    running *= std::max<int64_t>(view.sizes[d], 1);
  }
}

} // namespace

void cpu::convertElements(const TensorView &input, DType inputType,
                          const TensorView &output, DType outputType) {
  const void *x = input.data;
  void *y = output.data;
  forEachStrided<2>(output.rank, output.sizes, {output.strides, input.strides},
                    kMinPerThread,
                    [&](const OperandOffsets<2> &at, int64_t count,
                        const OperandOffsets<2> &step) {
                      for (int64_t i = 0; i < count; ++i)
                        storeAs(outputType, y, at[0] + i * step[0],
                                loadAs(inputType, x, at[1] + i * step[1]));
                    });
}

cpu::Widener::Widener(DType type) : type(type) {}

cpu::Widener::~Widener() = default;

float *cpu::Widener::scratch(TensorView &view) {
  int64_t count = std::max<int64_t>(view.numElements(), 1);
  buffers.push_back(std::make_unique<float[]>(static_cast<size_t>(count)));
  setRowMajor(view);
  view.data = buffers.back().get();
  return buffers.back().get();
}

void cpu::Widener::input(TensorView &view) {
  TensorView original = view;
  scratch(view);
  if (view.numElements() > 0)
    convertElements(original, type, view, DType::f32);
}

void cpu::Widener::output(TensorView &view) {
  TensorView original = view;
  scratch(view);
  pending.push_back({view, original});
}

void cpu::Widener::finish() {
  for (const Pending &p : pending)
    if (p.target.numElements() > 0)
      convertElements(p.scratch, DType::f32, p.target, type);
  pending.clear();
}

// One widen() per kernel: MEMFMT_IN and MEMFMT_OUT arguments are replaced,
// the others are kept.
#define MEMFMT_RT_WIDEN(ARGS) MEMFMT_RT_WIDEN_CAT(MEMFMT_RT_WIDEN_A ARGS, _END)
#define MEMFMT_RT_WIDEN_CAT(A, B) MEMFMT_RT_WIDEN_CAT_I(A, B)
#define MEMFMT_RT_WIDEN_CAT_I(A, B) A##B
#define MEMFMT_RT_WIDEN_A(K, N) MEMFMT_RT_WIDEN_##K(N) MEMFMT_RT_WIDEN_B
#define MEMFMT_RT_WIDEN_B(K, N) MEMFMT_RT_WIDEN_##K(N) MEMFMT_RT_WIDEN_A
#define MEMFMT_RT_WIDEN_A_END
#define MEMFMT_RT_WIDEN_B_END
#define MEMFMT_RT_WIDEN_IN(N) widener.input(wide.N);
#define MEMFMT_RT_WIDEN_OUT(N) widener.output(wide.N);
#define MEMFMT_RT_WIDEN_OUT_I64(N)
#define MEMFMT_RT_WIDEN_IN_I64(N)
#define MEMFMT_RT_WIDEN_IN_F32(N)
#define MEMFMT_RT_WIDEN_OUT_F32(N)
#define MEMFMT_RT_WIDEN_I64(N)
#define MEMFMT_RT_WIDEN_F64(N)

#define MEMFMT_DTYPE(T) MEMFMT_ABI_DTYPE(T)
#define MEMFMT_IN(N) MEMFMT_ABI_IN(N)
#define MEMFMT_OUT(N) MEMFMT_ABI_OUT(N)
#define MEMFMT_OUT_I64(N) MEMFMT_ABI_OUT_I64(N)
#define MEMFMT_IN_I64(N) MEMFMT_ABI_IN_I64(N)
#define MEMFMT_IN_F32(N) MEMFMT_ABI_IN_F32(N)
#define MEMFMT_OUT_F32(N) MEMFMT_ABI_OUT_F32(N)
#define MEMFMT_I64(N) MEMFMT_ABI_I64(N)
#define MEMFMT_F64(N) MEMFMT_ABI_F64(N)
#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  args::NAME cpu::widen(Widener &widener, const args::NAME &a) {               \
    args::NAME wide = a;                                                       \
    MEMFMT_RT_WIDEN(ARGS)                                                      \
    return wide;                                                               \
  }
#include "memfmt/runtime/Kernels.def"
