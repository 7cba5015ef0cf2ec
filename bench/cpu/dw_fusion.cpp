// dw_fusion.cpp - does oneDNN's pointwise + depthwise fusion pay here?
//
// MobileNet and EfficientNet blocks expand with a 1x1 convolution (and an
// activation), then run a 3x3 depthwise convolution on the expanded tensor,
// the largest of the block. oneDNN can compute both in one primitive (the
// depthwise post-op, post_ops::append_dw, inference only): the expanded
// tensor then never reaches memory. OpenVINO's CPU plugin fuses these pairs;
// memfmt runs them as two primitives. This probe times, on oneDNN 2.6 with
// the machine's threads, per MBConv shape:
//   * separate: the 1x1 convolution (SiLU post-op) and the depthwise one
//     (SiLU), NHWC in and out, as memfmt runs them today;
//   * fused, NHWC: one primitive with NHWC source and destination (its
//     values are checked against the separate pair);
//   * fused, nChw16c: the same on blocked tensors, with and without the
//     reorders from and back to NHWC a channels-last model would add.
// Each line prints the medians of 7 rounds of 5 calls and the largest
// difference from the separate pair relative to its largest value.
//
//   g++ -O2 -std=c++17 bench/cpu/dw_fusion.cpp -ldnnl -o dw_fusion
//   OMP_NUM_THREADS=2 ./dw_fusion
#include "OneDnnProbe.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

engine &eng = bench::engine();
stream &strm = bench::stream();
using bench::filled;
using bench::medianMs;
using bench::relDiff;

primitive_attr silu(bool withDepthwise, int stride) {
  post_ops ops;
  ops.append_eltwise(1.f, algorithm::eltwise_swish, 1.f, 0.f);
  if (withDepthwise) {
    ops.append_dw(dt::f32, dt::f32, dt::f32, 3, stride, 1, 0, {});
    ops.append_eltwise(1.f, algorithm::eltwise_swish, 1.f, 0.f);
  }
  primitive_attr attr;
  attr.set_post_ops(ops);
  return attr;
}

void probe(int n, int ic, int oc, int h, int w, int stride) {
  const int oh = (h - 1) / stride + 1, ow = (w - 1) / stride + 1;
  memory::desc src({n, ic, h, w}, dt::f32, tag::nhwc);
  memory::desc mid({n, oc, h, w}, dt::f32, tag::nhwc);
  memory::desc dst({n, oc, oh, ow}, dt::f32, tag::nhwc);
  memory::desc anyWeights({oc, ic, 1, 1}, dt::f32, tag::any);
  memory::desc dwWeights({oc, 1, 1, 3, 3}, dt::f32, tag::any);
  memory::desc bias({oc}, dt::f32, tag::x);
  auto desc = [&](const memory::desc &in, const memory::desc &out,
                  const memory::desc &weights, int s, int pad) {
    return convolution_forward::desc(prop_kind::forward_inference,
                                     algorithm::convolution_direct, in,
                                     weights, bias, out, {s, s}, {pad, pad},
                                     {pad, pad});
  };

  // Separate, NHWC: what memfmt runs.
  convolution_forward::primitive_desc pw(
      desc(src, mid, anyWeights, 1, 0), silu(false, 1), eng);
  convolution_forward::primitive_desc dw(
      desc(mid, dst, dwWeights, stride, 1), silu(false, 1), eng);
  memory x = filled(src, 1), b = filled(bias, 2), y = filled(mid, 0),
         z = filled(dst, 0);
  memory pwW = filled(pw.weights_desc(), 3), dwW = filled(dw.weights_desc(), 4);
  convolution_forward pwConv(pw), dwConv(dw);
  auto separate = [&] {
    pwConv.execute(strm, {{DNNL_ARG_SRC, x},
                          {DNNL_ARG_WEIGHTS, pwW},
                          {DNNL_ARG_BIAS, b},
                          {DNNL_ARG_DST, y}});
    dwConv.execute(strm, {{DNNL_ARG_SRC, y},
                          {DNNL_ARG_WEIGHTS, dwW},
                          {DNNL_ARG_BIAS, b},
                          {DNNL_ARG_DST, z}});
  };
  double separateMs = medianMs(separate);
  separate();
  strm.wait();
  std::printf("%dx%dx%dx%d -> %d channels, stride %d: separate %.3f ms (%s "
              "+ %s)\n",
              n, ic, h, w, oc, stride, separateMs, pw.impl_info_str(),
              dw.impl_info_str());

  for (tag layout : {tag::nhwc, tag::nChw16c}) {
    memory::desc fsrc({n, ic, h, w}, dt::f32, layout);
    memory::desc fmid({n, oc, h, w}, dt::f32, layout);
    convolution_forward::primitive_desc fused(
        desc(fsrc, fmid, anyWeights, 1, 0), silu(true, stride), eng);
    memory fx(fused.src_desc(), eng), fz(fused.dst_desc(), eng),
        zBack(dst, eng);
    memory fW(fused.weights_desc(), eng),
        fdwW(fused.query_md(query::exec_arg_md,
                            DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS),
             eng);
    reorder(pwW, fW).execute(strm, pwW, fW);
    reorder(dwW, fdwW).execute(strm, dwW, fdwW);
    reorder toFused(x, fx), fromFused(fz, zBack);
    convolution_forward conv(fused);
    auto run = [&] {
      conv.execute(strm, {{DNNL_ARG_SRC, fx},
                          {DNNL_ARG_WEIGHTS, fW},
                          {DNNL_ARG_BIAS, b},
                          {DNNL_ARG_DST, fz},
                          {DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS, fdwW},
                          {DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS, b}});
    };
    auto withReorders = [&] {
      toFused.execute(strm, x, fx);
      run();
      fromFused.execute(strm, fz, zBack);
    };
    withReorders();
    strm.wait();
    double diff = relDiff(z, zBack, dst);
    double ms = medianMs(run), msReorders = medianMs(withReorders);
    std::printf("  fused %s (%s): %.3f ms, %.3f ms with reorders from and "
                "to NHWC; %.2fx; rel. diff %.1e%s\n",
                layout == tag::nhwc ? "NHWC" : "nChw16c", fused.impl_info_str(),
                ms, msReorders, separateMs / msReorders, diff,
                diff > 1e-5 ? " WRONG" : "");
  }
}

} // namespace

int main() {
  // MBConv expansions of EfficientNet-B0 / MobileNetV2 at batch 8 and at
  // the sub-batch memfmt-tile-batch picks (2).
  probe(8, 16, 96, 112, 112, 2);
  probe(8, 24, 144, 56, 56, 1);
  probe(8, 40, 240, 28, 28, 2);
  probe(8, 80, 480, 14, 14, 1);
  probe(8, 192, 1152, 7, 7, 1);
  probe(2, 24, 144, 56, 56, 1);
  return 0;
}
