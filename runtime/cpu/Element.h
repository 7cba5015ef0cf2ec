//===- Element.h - The element types of the CPU fast kernels ---*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CPU backend's own fast loops (elementwise, per-channel binary, pooling,
// copies) are written once over a storage type T: `float` for f32 and
// `Bf16` (the 16 bits of a bfloat16) for bf16. They compute in f32:
// `load` widens an element (exact), `store<T>` rounds an f32 result to T
// once (to nearest even, NaN kept quiet, as io::floatToBFloat16). That is
// exactly what the widened reference does (Precision.cpp: the f32 reference
// on widened copies, the result rounded once), so an elementwise or max
// kernel gives the reference's bits in either type, and a sum (average
// pooling) differs from it only in the order of its double additions.
// f16 has no fast loops on the CPU: `visitFloatElement` declines it and it
// stays widened. Copies move bytes and need no arithmetic: `visitStorage`
// gives them an unsigned type of the element's size instead.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_ELEMENT_H
#define MEMFMT_RUNTIME_CPU_ELEMENT_H

#include "lib/TensorView.h"
#include "memfmt/runtime/io/HalfFloat.h"

#include <cstdint>

namespace memfmt::runtime::cpu {

/// A bfloat16 element as stored: the top 16 bits of an f32.
struct Bf16 {
  uint16_t bits;
};
static_assert(sizeof(Bf16) == 2, "a bf16 element is two bytes");

[[gnu::always_inline]] inline float load(float v) { return v; }
[[gnu::always_inline]] inline float load(Bf16 v) {
  return ::memfmt::io::bfloat16ToFloat(v.bits);
}

template <typename T> T store(float v);
template <> [[gnu::always_inline]] inline float store<float>(float v) {
  return v;
}
template <> [[gnu::always_inline]] inline Bf16 store<Bf16>(float v) {
  return Bf16{::memfmt::io::floatToBFloat16(v)};
}

/// Returns `visit(T{})` for the storage type T of `dtype` (f32 or bf16),
/// or null for a dtype the fast loops do not compute in.
template <typename Visit>
const char *visitFloatElement(DType dtype, Visit &&visit) {
  switch (dtype) {
  case DType::f32:
    return visit(float{});
  case DType::bf16:
    return visit(Bf16{});
  default:
    return nullptr;
  }
}

/// Returns `visit(U{})` for an unsigned type U of `dtype`'s size (a copy
/// moves elements without looking at them).
template <typename Visit>
const char *visitStorage(DType dtype, Visit &&visit) {
  switch (elementSize(dtype)) {
  case 2:
    return visit(uint16_t{});
  case 4:
    return visit(uint32_t{});
  case 8:
    return visit(uint64_t{});
  default:
    return nullptr;
  }
}

} // namespace memfmt::runtime::cpu

#endif // MEMFMT_RUNTIME_CPU_ELEMENT_H
