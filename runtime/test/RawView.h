//===- RawView.h - Memrefs over another test tensor's buffer ----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// A memref descriptor of any offset, sizes and strides over the buffer of an
// existing TestTensor, for the tests of aliasing rules: two views of one
// buffer that overlap without being the same view.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_TEST_RAWVIEW_H
#define MEMFMT_RUNTIME_TEST_RAWVIEW_H

#include "TestTensor.h"

namespace memfmt::test {

/// {allocated, aligned, offset, sizes[rank], strides[rank]} over `t`'s
/// buffer.
class RawView {
public:
  template <typename T>
  RawView(const TestTensor<T> &t, int64_t offset, std::vector<int64_t> sizes,
          std::vector<int64_t> strides) {
    const T *base = t.buffer.data();
    descriptor.assign(3 + 2 * sizes.size(), 0);
    std::memcpy(&descriptor[0], &base, sizeof(base));
    std::memcpy(&descriptor[1], &base, sizeof(base));
    descriptor[2] = offset;
    std::copy(sizes.begin(), sizes.end(), descriptor.begin() + 3);
    std::copy(strides.begin(), strides.end(),
              descriptor.begin() + 3 + sizes.size());
    ref.rank = static_cast<int64_t>(sizes.size());
    ref.descriptor = descriptor.data();
  }
  RawView(const RawView &) = delete;
  RawView &operator=(const RawView &) = delete;

  const memfmt_memref_t *memref() const { return &ref; }

private:
  std::vector<int64_t> descriptor;
  memfmt_memref_t ref{};
};

} // namespace memfmt::test

#endif // MEMFMT_RUNTIME_TEST_RAWVIEW_H
