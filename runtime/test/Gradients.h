//===- Gradients.h - Checks shared by the gradient tests --------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What the tests of convolution_backward and linear_backward share: the
// expected grad_input, grad_weight and grad_bias of a call (for
// convolutions, computed by naive loops), the has_* flag
// sets they run (all gradients, then each one absent in turn), the check
// that compares the present gradients with the naive ones and finds the
// absent ones (buffers of sentinels passed with their flag 0) untouched,
// and the check of a validator's error.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_TEST_GRADIENTS_H
#define MEMFMT_RUNTIME_TEST_GRADIENTS_H

#include "RuntimeTest.h"

namespace memfmt::test {

struct Gradients {
  Expected input, weight, bias;
};

/// Gradients by the definition of the forward convolution: out[n, oc, y,
/// x] = sum of in[n, g * cg + icg, iy, ix] * w[oc, icg, r, s], so each term
/// sends grad_output * w to grad_input and grad_output * in to grad_weight.
inline Gradients naiveGradients(const Tensor &dy, const Tensor &in,
                                const Tensor &w, const ConvAttrs &c) {
  const int64_t n = in.sizes[0], ch = in.sizes[1], h = in.sizes[2],
                wd = in.sizes[3];
  const int64_t o = w.sizes[0], cg = w.sizes[1], kh = w.sizes[2],
                kw = w.sizes[3];
  const int64_t oh = dy.sizes[2], ow = dy.sizes[3];
  Gradients g;
  g.input.value.assign(in.numElements(), 0.0);
  g.input.magnitude.assign(in.numElements(), 0.0);
  g.weight.value.assign(w.numElements(), 0.0);
  g.weight.magnitude.assign(w.numElements(), 0.0);
  g.bias.value.assign(o, 0.0);
  g.bias.magnitude.assign(o, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double d = dy.at({i, oc, y, x});
          g.bias.value[oc] += d;
          g.bias.magnitude[oc] += std::fabs(d);
          forEachConvTap(
              in, w, c, oc, y, x,
              [&](int64_t ic, int64_t iy, int64_t ix, int64_t icg, int64_t r,
                  int64_t s) {
                int64_t at = ((i * ch + ic) * h + iy) * wd + ix;
                double toInput = d * w.at({oc, icg, r, s});
                g.input.value[at] += toInput;
                g.input.magnitude[at] += std::fabs(toInput);
                int64_t wat = ((oc * cg + icg) * kh + r) * kw + s;
                double toWeight = d * in.at({i, ic, iy, ix});
                g.weight.value[wat] += toWeight;
                g.weight.magnitude[wat] += std::fabs(toWeight);
              });
        }
  return g;
}

/// has_grad_input, has_grad_weight, has_grad_bias: all, then each one off.
constexpr int64_t kGradientFlagSets[][3] = {
    {1, 1, 1}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}};

/// True if every slot of `t`'s buffer still holds the sentinel.
inline bool untouched(const Tensor &t) {
  for (float v : t.buffer)
    if (v != Tensor::kSentinel)
      return false;
  return true;
}

/// The gradients whose flag is set match `want` within expectClose's
/// bound with `inputFactor` (grad_input) or `weightFactor` (grad_weight,
/// grad_bias); the others were not written.
inline void expectGradients(const Tensor &gradInput, const Tensor &gradWeight,
                            const Tensor &gradBias, const int64_t *flags,
                            const Gradients &want, double inputFactor,
                            double weightFactor, const std::string &what) {
  const Tensor *tensors[3] = {&gradInput, &gradWeight, &gradBias};
  const Expected *expected[3] = {&want.input, &want.weight, &want.bias};
  const char *names[3] = {"grad_input", "grad_weight", "grad_bias"};
  for (int i = 0; i < 3; ++i) {
    if (flags[i])
      expectClose(*tensors[i], *expected[i],
                  i == 0 ? inputFactor : weightFactor, what + " " + names[i]);
    else
      EXPECT_TRUE(untouched(*tensors[i]))
          << what << ": wrote the absent " << names[i];
  }
}

/// `status` is MEMFMT_STATUS_INVALID_ARGUMENT and the context's message
/// names `kernel` and contains `text`.
inline void expectInvalid(const TestContext &ctx, int32_t status,
                          const char *kernel, const std::string &text) {
  EXPECT_EQ(status, MEMFMT_STATUS_INVALID_ARGUMENT);
  std::string message = ctx.lastError();
  EXPECT_NE(message.find(kernel), std::string::npos) << message;
  EXPECT_NE(message.find(text), std::string::npos) << message;
}

} // namespace memfmt::test

#endif // MEMFMT_RUNTIME_TEST_GRADIENTS_H
