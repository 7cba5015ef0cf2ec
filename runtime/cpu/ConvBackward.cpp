//===- ConvBackward.cpp - Reference convolution gradients -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The reference convolution_backward: the gradients of the conv2d kernel's
// convolution (PyTorch's semantics: groups, dilation, stride, asymmetric
// padding) with respect to its input, weight and bias, on tensors with any
// strides, accumulated in double and rounded once. Each gradient is computed
// only when its has_* flag is set; an absent one is not written at all.
//  * grad_input is the transposed convolution of grad_output: per (image,
//    input channel) plane, every (output channel of its group, kernel tap)
//    pair scatters a weighted grad_output row into a double plane, walking
//    only the output columns whose input column is inside the image (the
//    forward's column ranges), so each task writes its own plane;
//  * grad_weight, per (output channel, input channel of its group), sums
//    grad_output * input over images and output positions for every tap;
//  * grad_bias sums grad_output over images and positions, per channel.
// It is the oracle for the oneDNN path (OneDnnConvBackward.cpp) and its
// fallback.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Scratch.h"

#include "lib/Parallel.h"

#include <algorithm>
#include <vector>

using namespace memfmt::runtime;
using namespace memfmt::runtime::cpu;

namespace {

/// The shape and attributes every gradient needs.
struct ConvGeometry {
  int64_t n, height, width, outC, groupC, kernelH, kernelW, outH, outW;
  int64_t outPerGroup;
  /// Output columns [colBegin[kw], colEnd[kw]) read input columns inside
  /// the image for kernel column kw (convColumnRanges).
  const int64_t *colBegin, *colEnd;

  explicit ConvGeometry(const args::convolution_backward &a)
      : n(a.input.sizes[0]), height(a.input.sizes[2]), width(a.input.sizes[3]),
        outC(a.weight.sizes[0]), groupC(a.weight.sizes[1]),
        kernelH(a.weight.sizes[2]), kernelW(a.weight.sizes[3]),
        outH(a.grad_output.sizes[2]), outW(a.grad_output.sizes[3]),
        outPerGroup(outC / a.groups) {
    std::vector<int64_t> &begin = scratchBuffer<int64_t, 0>(kernelW);
    std::vector<int64_t> &end = scratchBuffer<int64_t, 1>(kernelW);
    convColumnRanges(kernelW, a.stride_w, a.dilation_w, a.pad_left, width, outW,
                     begin.data(), end.data());
    colBegin = begin.data();
    colEnd = end.data();
  }
};

void gradInput(const args::convolution_backward &a, const ConvGeometry &g) {
  const TensorView &dy = a.grad_output, &wt = a.weight, &dx = a.grad_input;
  const int64_t inC = a.input.sizes[1], plane = g.height * g.width;
  std::vector<double> &scratch =
      scratchBuffer<double, 0>(static_cast<size_t>(maxThreads()) * plane);
  const float *go = dy.as<float>(), *w = wt.as<float>();
  float *gi = dx.as<float>();
  const int64_t *ds = dy.strides, *ws = wt.strides, *xs = dx.strides;

  parallelFor(g.n * inC, 1, [&](int64_t begin, int64_t end, int thread) {
    double *acc = scratch.data() + thread * plane;
    for (int64_t task = begin; task < end; ++task) {
      int64_t image = task / inC, c = task % inC;
      int64_t icg = c % g.groupC, firstOut = (c / g.groupC) * g.outPerGroup;
      std::fill(acc, acc + plane, 0.0);
      for (int64_t oc = firstOut; oc < firstOut + g.outPerGroup; ++oc) {
        const float *dyPlane = go + image * ds[0] + oc * ds[1];
        for (int64_t kh = 0; kh < g.kernelH; ++kh) {
          for (int64_t kw = 0; kw < g.kernelW; ++kw) {
            double wv = w[oc * ws[0] + icg * ws[1] + kh * ws[2] + kw * ws[3]];
            int64_t colShift = kw * a.dilation_w - a.pad_left;
            for (int64_t oh = 0; oh < g.outH; ++oh) {
              int64_t ih = oh * a.stride_h - a.pad_top + kh * a.dilation_h;
              if (ih < 0 || ih >= g.height)
                continue;
              const float *dyRow = dyPlane + oh * ds[2];
              double *accRow = acc + ih * g.width;
              for (int64_t ow = g.colBegin[kw]; ow < g.colEnd[kw]; ++ow)
                accRow[ow * a.stride_w + colShift] += wv * dyRow[ow * ds[3]];
            }
          }
        }
      }
      for (int64_t ih = 0; ih < g.height; ++ih)
        for (int64_t iw = 0; iw < g.width; ++iw)
          gi[image * xs[0] + c * xs[1] + ih * xs[2] + iw * xs[3]] =
              static_cast<float>(acc[ih * g.width + iw]);
    }
  });
}

void gradWeight(const args::convolution_backward &a, const ConvGeometry &g) {
  const TensorView &dy = a.grad_output, &in = a.input, &dw = a.grad_weight;
  const int64_t taps = g.kernelH * g.kernelW;
  std::vector<double> &scratch =
      scratchBuffer<double, 0>(static_cast<size_t>(maxThreads()) * taps);
  const float *go = dy.as<float>(), *x = in.as<float>();
  float *gw = dw.as<float>();
  const int64_t *ds = dy.strides, *xs = in.strides, *ws = dw.strides;

  parallelFor(
      g.outC * g.groupC, 1, [&](int64_t begin, int64_t end, int thread) {
        double *acc = scratch.data() + thread * taps;
        for (int64_t task = begin; task < end; ++task) {
          int64_t oc = task / g.groupC, icg = task % g.groupC;
          int64_t c = (oc / g.outPerGroup) * g.groupC + icg;
          std::fill(acc, acc + taps, 0.0);
          for (int64_t image = 0; image < g.n; ++image) {
            const float *dyPlane = go + image * ds[0] + oc * ds[1];
            const float *xPlane = x + image * xs[0] + c * xs[1];
            for (int64_t kh = 0; kh < g.kernelH; ++kh) {
              for (int64_t kw = 0; kw < g.kernelW; ++kw) {
                int64_t colShift = kw * a.dilation_w - a.pad_left;
                double sum = 0;
                for (int64_t oh = 0; oh < g.outH; ++oh) {
                  int64_t ih = oh * a.stride_h - a.pad_top + kh * a.dilation_h;
                  if (ih < 0 || ih >= g.height)
                    continue;
                  const float *dyRow = dyPlane + oh * ds[2];
                  const float *xRow = xPlane + ih * xs[2];
                  for (int64_t ow = g.colBegin[kw]; ow < g.colEnd[kw]; ++ow)
                    sum += static_cast<double>(dyRow[ow * ds[3]]) *
                           xRow[(ow * a.stride_w + colShift) * xs[3]];
                }
                acc[kh * g.kernelW + kw] += sum;
              }
            }
          }
          for (int64_t kh = 0; kh < g.kernelH; ++kh)
            for (int64_t kw = 0; kw < g.kernelW; ++kw)
              gw[oc * ws[0] + icg * ws[1] + kh * ws[2] + kw * ws[3]] =
                  static_cast<float>(acc[kh * g.kernelW + kw]);
        }
      });
}

void gradBias(const args::convolution_backward &a, const ConvGeometry &g) {
  const TensorView &dy = a.grad_output;
  const float *go = dy.as<float>();
  float *gb = a.grad_bias.as<float>();
  const int64_t *ds = dy.strides;
  parallelFor(g.outC, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t oc = begin; oc < end; ++oc) {
      double sum = 0;
      for (int64_t image = 0; image < g.n; ++image)
        for (int64_t oh = 0; oh < g.outH; ++oh)
          for (int64_t ow = 0; ow < g.outW; ++ow)
            sum += go[image * ds[0] + oc * ds[1] + oh * ds[2] + ow * ds[3]];
      gb[oc * a.grad_bias.strides[0]] = static_cast<float>(sum);
    }
  });
}

} // namespace

void cpu::convolutionBackwardReference(const args::convolution_backward &a) {
  ConvGeometry g(a);
  if (a.has_grad_input)
    gradInput(a, g);
  if (a.has_grad_weight)
    gradWeight(a, g);
  if (a.has_grad_bias)
    gradBias(a, g);
}
