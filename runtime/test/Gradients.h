//===- Gradients.h - Checks shared by the gradient tests --------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What the tests of convolution_backward and linear_backward share: the
// expected grad_input, grad_weight and grad_bias of a call, the has_* flag
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
