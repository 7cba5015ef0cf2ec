//===- Scratch.h - Per-thread scratch buffers of the CPU kernels -*- C++
//-*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CPU kernels' temporary tables (pooling windows, per-channel
// parameters, per-thread accumulators) live in per-thread vectors that every
// call reuses, so a kernel call allocates only when it needs more room than
// every call before it on the same thread. A compiled model's warm-up run at
// load sizes them all, so its runs allocate nothing (checked by
// test/E2E/no-per-run-work.test).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_CPU_SCRATCH_H
#define MEMFMT_RUNTIME_CPU_SCRATCH_H

#include <cstddef>
#include <vector>

namespace memfmt::runtime::cpu {

/// This thread's buffer number `Slot` of element type `T`, resized to `size`
/// elements (their values are unspecified). Buffers of different slots are
/// distinct; a kernel uses each slot once, and calls no other kernel while
/// it holds one.
template <typename T, int Slot> std::vector<T> &scratchBuffer(size_t size) {
  static thread_local std::vector<T> buffer;
  buffer.resize(size);
  return buffer;
}

} // namespace memfmt::runtime::cpu

#endif // MEMFMT_RUNTIME_CPU_SCRATCH_H
