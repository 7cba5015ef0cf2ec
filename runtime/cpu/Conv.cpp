//===- Conv.cpp - Reference 2-D convolution over any strides --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The reference conv2d: PyTorch's semantics (groups, dilation, asymmetric
// padding) plus the fused epilogue of Kernels.def, out = act(conv + bias +
// residual), on tensors with any strides. It accumulates in double: for each
// (image, output channel) it sums weight * input-row products into a double
// plane, walking only the output columns whose input column is inside the
// image (so the inner loop has no branch), then adds bias and residual,
// applies relu and rounds once. Work is split across (image, output channel)
// pairs. It is the oracle for the oneDNN path and its fallback for layouts
// oneDNN does not take.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Scratch.h"

#include "lib/ElementwiseMath.h"
#include "lib/Parallel.h"

#include <algorithm>
#include <vector>

using namespace memfmt::runtime;

void cpu::convColumnRanges(int64_t kernelW, int64_t stride, int64_t dilation,
                           int64_t padLeft, int64_t width, int64_t outW,
                           int64_t *begin, int64_t *end) {
  for (int64_t kw = 0; kw < kernelW; ++kw) {
    int64_t shift = kw * dilation - padLeft, ow = 0;
    while (ow < outW && ow * stride + shift < 0)
      ++ow;
    begin[kw] = ow;
    while (ow < outW && ow * stride + shift < width)
      ++ow;
    end[kw] = ow;
  }
}

void cpu::conv2dReference(const args::conv2d &a) {
  const TensorView &in = a.input, &wt = a.weight, &out = a.output;
  const int64_t n = in.sizes[0], height = in.sizes[2], width = in.sizes[3];
  const int64_t outC = wt.sizes[0], groupC = wt.sizes[1];
  const int64_t kernelH = wt.sizes[2], kernelW = wt.sizes[3];
  const int64_t outH = out.sizes[2], outW = out.sizes[3];
  const int64_t outPerGroup = outC / a.groups;
  const int64_t plane = outH * outW;
  if (out.numElements() == 0)
    return;

  // Output columns [colBegin[kw], colEnd[kw]) read input columns inside the
  // image for kernel column kw.
  std::vector<int64_t> &colBegin = scratchBuffer<int64_t, 0>(kernelW);
  std::vector<int64_t> &colEnd = scratchBuffer<int64_t, 1>(kernelW);
  convColumnRanges(kernelW, a.stride_w, a.dilation_w, a.pad_left, width, outW,
                   colBegin.data(), colEnd.data());

  const float *x = in.as<float>(), *w = wt.as<float>();
  const float *bias = a.has_bias ? a.bias.as<float>() : nullptr;
  const float *residual = a.has_residual ? a.residual.as<float>() : nullptr;
  float *y = out.as<float>();
  const int64_t *xs = in.strides, *ws = wt.strides, *ys = out.strides;
  const int64_t *rs = a.residual.strides;
  std::vector<double> &scratch =
      scratchBuffer<double, 0>(static_cast<size_t>(maxThreads()) * plane);

  parallelFor(n * outC, 1, [&](int64_t begin, int64_t end, int thread) {
    double *acc = scratch.data() + thread * plane;
    for (int64_t task = begin; task < end; ++task) {
      int64_t image = task / outC, oc = task % outC;
      int64_t firstIn = (oc / outPerGroup) * groupC;
      std::fill(acc, acc + plane, 0.0);
      for (int64_t icg = 0; icg < groupC; ++icg) {
        const float *xPlane = x + image * xs[0] + (firstIn + icg) * xs[1];
        for (int64_t kh = 0; kh < kernelH; ++kh) {
          for (int64_t kw = 0; kw < kernelW; ++kw) {
            double wv = w[oc * ws[0] + icg * ws[1] + kh * ws[2] + kw * ws[3]];
            int64_t colShift = kw * a.dilation_w - a.pad_left;
            for (int64_t oh = 0; oh < outH; ++oh) {
              int64_t ih = oh * a.stride_h - a.pad_top + kh * a.dilation_h;
              if (ih < 0 || ih >= height)
                continue;
              const float *xRow = xPlane + ih * xs[2];
              double *accRow = acc + oh * outW;
              for (int64_t ow = colBegin[kw]; ow < colEnd[kw]; ++ow)
                accRow[ow] += wv * xRow[(ow * a.stride_w + colShift) * xs[3]];
            }
          }
        }
      }
      double b = bias ? bias[oc * a.bias.strides[0]] : 0.0;
      for (int64_t oh = 0; oh < outH; ++oh) {
        for (int64_t ow = 0; ow < outW; ++ow) {
          double v = acc[oh * outW + ow] + b;
          if (residual)
            v += residual[image * rs[0] + oc * rs[1] + oh * rs[2] + ow * rs[3]];
          if (a.relu && v < 0)
            v = 0;
          float out = static_cast<float>(v);
          if (a.activation)
            out = math::eltwise(a.activation, out,
                                static_cast<float>(a.activation_alpha),
                                static_cast<float>(a.activation_beta));
          y[image * ys[0] + oc * ys[1] + oh * ys[2] + ow * ys[3]] = out;
        }
      }
    }
  });
}
