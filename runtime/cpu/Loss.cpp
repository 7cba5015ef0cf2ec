//===- Loss.cpp - Mean cross-entropy loss and its gradient ----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// cross_entropy_loss and cross_entropy_loss_backward on logits self [N, C]
// (any strides) and class indices target [N]. Each row's log-sum-exp is
// taken as max + log(sum(exp(x - max))) in double, so no exp overflows
// whatever the logits' magnitude (a row holding 1e4 gives a finite loss),
// and the batch mean is summed in double; the gradient is softmax minus the
// one-hot target, scaled by grad_output / N. These run once per training
// step on [N, classes] (8 x 1000 for ResNet), far below the convolutions,
// so there is one implementation, threaded over rows for the gradient.
// Targets are checked by the backend before either kernel runs
// (findBadTarget), since the check reads the data.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "lib/Parallel.h"

#include <cmath>
#include <limits>

using namespace memfmt::runtime;

namespace {

/// log(sum_c exp(x[c * stride])) over `classes` values, in double.
double logSumExp(const float *x, int64_t stride, int64_t classes) {
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < classes; ++c)
    max = std::max(max, static_cast<double>(x[c * stride]));
  // A row of -inf (or a +inf) has no finite shift; exp(x - max) would give
  // NaN for the +inf case, which is the value PyTorch returns too.
  if (std::isinf(max) && max < 0)
    return max;
  double sum = 0;
  for (int64_t c = 0; c < classes; ++c)
    sum += std::exp(static_cast<double>(x[c * stride]) - max);
  return max + std::log(sum);
}

} // namespace

int64_t cpu::findBadTarget(const TensorView &target, int64_t classes) {
  const int64_t *t = target.as<int64_t>();
  for (int64_t n = 0; n < target.sizes[0]; ++n) {
    int64_t value = t[n * target.strides[0]];
    if (value < 0 || value >= classes)
      return n;
  }
  return -1;
}

void cpu::crossEntropyLossReference(const args::cross_entropy_loss &a) {
  const TensorView &x = a.self;
  const int64_t rows = x.sizes[0], classes = x.sizes[1];
  const float *logits = x.as<float>();
  const int64_t *t = a.target.as<int64_t>();
  double total = 0;
  for (int64_t n = 0; n < rows; ++n) {
    const float *row = logits + n * x.strides[0];
    int64_t target = t[n * a.target.strides[0]];
    total += logSumExp(row, x.strides[1], classes) -
             static_cast<double>(row[target * x.strides[1]]);
  }
  // The mean over no rows is 0 / 0 = NaN, as in PyTorch.
  *a.output.as<float>() = static_cast<float>(total / double(rows));
}

void cpu::crossEntropyLossBackwardReference(
    const args::cross_entropy_loss_backward &a) {
  const TensorView &x = a.self, &gi = a.grad_input;
  const int64_t rows = x.sizes[0], classes = x.sizes[1];
  const float *logits = x.as<float>();
  const int64_t *t = a.target.as<int64_t>();
  const double scale =
      static_cast<double>(*a.grad_output.as<float>()) / double(rows);
  float *out = gi.as<float>();
  parallelFor(
      rows, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(classes, 1)),
      [&](int64_t begin, int64_t end, int) {
        for (int64_t n = begin; n < end; ++n) {
          const float *row = logits + n * x.strides[0];
          float *grad = out + n * gi.strides[0];
          double lse = logSumExp(row, x.strides[1], classes);
          int64_t target = t[n * a.target.strides[0]];
          for (int64_t c = 0; c < classes; ++c) {
            double p =
                std::exp(static_cast<double>(row[c * x.strides[1]]) - lse);
            grad[c * gi.strides[1]] =
                static_cast<float>((p - (c == target ? 1.0 : 0.0)) * scale);
          }
        }
      });
}
