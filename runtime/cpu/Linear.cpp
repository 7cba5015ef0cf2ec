//===- Linear.cpp - Reference linear layer --------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// out = act(input @ weight^T + bias) for input [N, K], weight [M, K] and
// out [N, M] with any strides, as a double-accumulated dot product per
// output element rounded to f32, then the activation (as the convolution
// reference applies its own), split across output elements. The fast path is oneDNN's matmul
// (OneDnnLinear.cpp); this is its oracle and fallback.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "lib/ElementwiseMath.h"
#include "lib/Parallel.h"

#include <algorithm>

using namespace memfmt::runtime;

void cpu::linearReference(const args::linear &a) {
  const TensorView &in = a.input, &wt = a.weight, &out = a.output;
  const int64_t rows = in.sizes[0], features = in.sizes[1],
                outFeatures = wt.sizes[0];
  const float *x = in.as<float>(), *w = wt.as<float>();
  const float *bias = a.has_bias ? a.bias.as<float>() : nullptr;
  float *y = out.as<float>();
  const int64_t activation = a.activation;
  const float alpha = static_cast<float>(a.activation_alpha),
              beta = static_cast<float>(a.activation_beta);
  parallelFor(rows * outFeatures,
              std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(features, 1)),
              [&](int64_t begin, int64_t end, int) {
                for (int64_t t = begin; t < end; ++t) {
                  int64_t n = t / outFeatures, m = t % outFeatures;
                  const float *xr = x + n * in.strides[0];
                  const float *wr = w + m * wt.strides[0];
                  double sum = bias ? bias[m * a.bias.strides[0]] : 0.0;
                  for (int64_t k = 0; k < features; ++k)
                    sum += static_cast<double>(xr[k * in.strides[1]]) *
                           wr[k * wt.strides[1]];
                  float value = static_cast<float>(sum);
                  if (activation)
                    value = math::eltwise(activation, value, alpha, beta);
                  y[n * out.strides[0] + m * out.strides[1]] = value;
                }
              });
}
