//===- OneDnn.cpp - Helpers shared by the oneDNN kernels ------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What OneDnnConv.cpp and OneDnnLinear.cpp share: turning a dnnl::error into
// a message for the context, the stride test that decides whether oneDNN can
// describe a tensor at all, and gathering a strided bias.
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

using namespace memfmt::runtime;

std::string cpu::describeError(const char *what, const dnnl::error &error) {
  return std::string("oneDNN ") + what + ": " + error.what() + " (status " +
         std::to_string(static_cast<int>(error.status)) + ")";
}

bool cpu::hasPositiveStrides(const TensorView &t) {
  for (int64_t d = 0; d < t.rank; ++d)
    if (t.sizes[d] > 1 && t.strides[d] <= 0)
      return false;
  return true;
}

const float *cpu::denseVector(const TensorView &v,
                              std::vector<float> &scratch) {
  const float *data = v.as<float>();
  if (v.sizes[0] <= 1 || v.strides[0] == 1)
    return data;
  scratch.resize(v.sizes[0]);
  for (int64_t i = 0; i < v.sizes[0]; ++i)
    scratch[i] = data[i * v.strides[0]];
  return scratch.data();
}
