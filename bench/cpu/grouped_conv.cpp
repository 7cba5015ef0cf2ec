// grouped_conv.cpp - how should a channels-last grouped convolution run here?
//
// RegNetY and ResNeXt convolve in groups of a few channels (RegNetY-400MF:
// 8 per group, 6 to 55 groups). On AVX2, oneDNN 2.6's direct kernel for
// NHWC grouped convolutions (jit:avx2 on acdb) runs such shapes at a small
// share of the machine's peak. This probe times, per RegNetY-400MF shape,
// f32, with the machine's threads:
//   * NHWC: the primitive on the channels-last tensors, as memfmt runs it;
//   * blocked: oneDNN's preferred layout (format_tag::any: nChw8c on AVX2),
//     with the reorders from and back to NHWC a channels-last model adds;
//   * merged k: k neighbouring groups as one group with block-diagonal
//     weights (zeros between the blocks), NHWC in and out: k times the
//     multiply-adds, in a kernel that may run them faster;
//   * one side blocked: the source (or the destination) in oneDNN's
//     preferred layout, the other NHWC, paying only that side's reorder.
// Each line prints the medians of 7 rounds of 5 calls, GFLOP/s of the
// grouped convolution's own multiply-adds, and the largest difference from
// the NHWC primitive relative to its largest value.
//
//   g++ -O2 -std=c++17 bench/cpu/grouped_conv.cpp -ldnnl -o grouped_conv
//   OMP_NUM_THREADS=2 ./grouped_conv
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

primitive_attr relu() {
  post_ops ops;
  ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
  primitive_attr attr;
  attr.set_post_ops(ops);
  return attr;
}

void probe(int n, int c, int groups, int h, int stride) {
  const int oh = (h - 1) / stride + 1, per = c / groups;
  const double gflop = 2.0 * n * oh * oh * c * per * 9 * 1e-9;
  memory::desc src({n, c, h, h}, dt::f32, tag::nhwc);
  memory::desc dst({n, c, oh, oh}, dt::f32, tag::nhwc);
  memory::desc bias({c}, dt::f32, tag::x);
  memory::desc plainW({groups, per, per, 3, 3}, dt::f32, tag::goihw);
  auto pdFor = [&](const memory::desc &in, const memory::desc &out,
                   const memory::desc &weights) {
    return convolution_forward::primitive_desc(
        convolution_forward::desc(prop_kind::forward_inference,
                                  algorithm::convolution_direct, in, weights,
                                  bias, out, {stride, stride}, {1, 1}, {1, 1}),
        relu(), eng);
  };
  memory x = filled(src, 1), b = filled(bias, 2), y(dst, eng),
         w = filled(plainW, 3);

  auto nhwc = pdFor(src, dst, memory::desc(plainW.dims(), dt::f32, tag::any));
  memory wN(nhwc.weights_desc(), eng);
  reorder(w, wN).execute(strm, w, wN);
  convolution_forward convN(nhwc);
  auto runN = [&] {
    convN.execute(strm, {{DNNL_ARG_SRC, x},
                         {DNNL_ARG_WEIGHTS, wN},
                         {DNNL_ARG_BIAS, b},
                         {DNNL_ARG_DST, y}});
  };
  double msN = medianMs(runN);
  std::printf("%dx%dx%dx%d, %d groups of %d, stride %d: NHWC %.3f ms "
              "(%.0f GFLOP/s, %s)\n",
              n, c, h, h, groups, per, stride, msN, gflop / msN * 1e3,
              nhwc.impl_info_str());

  { // Blocked, through reorders.
    auto blocked = pdFor(memory::desc(src.dims(), dt::f32, tag::any),
                         memory::desc(dst.dims(), dt::f32, tag::any),
                         memory::desc(plainW.dims(), dt::f32, tag::any));
    memory bx(blocked.src_desc(), eng), by(blocked.dst_desc(), eng),
        wB(blocked.weights_desc(), eng), yBack(dst, eng);
    reorder(w, wB).execute(strm, w, wB);
    reorder toB(x, bx), fromB(by, yBack);
    convolution_forward conv(blocked);
    auto run = [&] {
      toB.execute(strm, x, bx);
      conv.execute(strm, {{DNNL_ARG_SRC, bx},
                          {DNNL_ARG_WEIGHTS, wB},
                          {DNNL_ARG_BIAS, b},
                          {DNNL_ARG_DST, by}});
      fromB.execute(strm, by, yBack);
    };
    auto convOnly = [&] {
      conv.execute(strm, {{DNNL_ARG_SRC, bx},
                          {DNNL_ARG_WEIGHTS, wB},
                          {DNNL_ARG_BIAS, b},
                          {DNNL_ARG_DST, by}});
    };
    run();
    strm.wait();
    double ms = medianMs(run), msConv = medianMs(convOnly);
    std::printf("  blocked (%s): %.3f ms with reorders, %.3f ms without; "
                "%.2fx; rel. diff %.1e\n",
                blocked.impl_info_str(), ms, msConv, msN / ms,
                relDiff(y, yBack, dst));
  }
  // One side blocked: only the reorder of that side is paid.
  for (bool blockedSrc : {true, false}) {
    const memory::desc anySrc(src.dims(), dt::f32, tag::any),
        anyDst(dst.dims(), dt::f32, tag::any);
    convolution_forward::primitive_desc half;
    try {
      half = pdFor(blockedSrc ? anySrc : src, blockedSrc ? dst : anyDst,
                   memory::desc(plainW.dims(), dt::f32, tag::any));
    } catch (const dnnl::error &) {
      std::printf("  %s blocked: no implementation\n",
                  blockedSrc ? "source" : "destination");
      continue;
    }
    memory hx(half.src_desc(), eng), hy(half.dst_desc(), eng),
        wH(half.weights_desc(), eng), yBack(dst, eng);
    reorder(w, wH).execute(strm, w, wH);
    reorder toH(x, hx), fromH(hy, yBack);
    convolution_forward conv(half);
    auto run = [&] {
      if (blockedSrc)
        toH.execute(strm, x, hx);
      conv.execute(strm, {{DNNL_ARG_SRC, blockedSrc ? hx : x},
                          {DNNL_ARG_WEIGHTS, wH},
                          {DNNL_ARG_BIAS, b},
                          {DNNL_ARG_DST, blockedSrc ? yBack : hy}});
      if (!blockedSrc)
        fromH.execute(strm, hy, yBack);
    };
    run();
    strm.wait();
    double ms = medianMs(run);
    std::printf("  %s blocked (%s): %.3f ms with its reorder; %.2fx; rel. "
                "diff %.1e\n",
                blockedSrc ? "source" : "destination", half.impl_info_str(), ms,
                msN / ms, relDiff(y, yBack, dst));
  }
  runN();
  strm.wait();
  for (int k = 2; k <= groups; ++k) {
    if (groups % k || (k * per < 16 && k != groups) || k * per > 64)
      continue;
    const int mg = groups / k, mper = k * per;
    memory::desc mergedW({mg, mper, mper, 3, 3}, dt::f32, tag::goihw);
    memory wm(mergedW, eng);
    float *pm = static_cast<float *>(wm.get_data_handle());
    const float *pw = static_cast<const float *>(w.get_data_handle());
    std::fill(pm, pm + mergedW.get_size() / sizeof(float), 0.f);
    for (int g = 0; g < groups; ++g)
      for (int o = 0; o < per; ++o)
        for (int i = 0; i < per; ++i)
          for (int t = 0; t < 9; ++t) {
            const int G = g / k, off = (g % k) * per;
            pm[(((size_t)G * mper + off + o) * mper + off + i) * 9 + t] =
                pw[(((size_t)g * per + o) * per + i) * 9 + t];
          }
    auto merged =
        pdFor(src, dst, memory::desc(mergedW.dims(), dt::f32, tag::any));
    memory wM(merged.weights_desc(), eng), yM(dst, eng);
    reorder(wm, wM).execute(strm, wm, wM);
    convolution_forward conv(merged);
    auto run = [&] {
      conv.execute(strm, {{DNNL_ARG_SRC, x},
                          {DNNL_ARG_WEIGHTS, wM},
                          {DNNL_ARG_BIAS, b},
                          {DNNL_ARG_DST, yM}});
    };
    run();
    strm.wait();
    double ms = medianMs(run);
    std::printf("  merged %d (%d groups of %d, %s): %.3f ms; %.2fx; rel. "
                "diff %.1e\n",
                k, mg, mper, merged.impl_info_str(), ms, msN / ms,
                relDiff(y, yM, dst));
  }
}

} // namespace

int main() {
  // RegNetY-400MF's grouped 3x3 convolutions (8 channels per group) at
  // batch 8 and at the sub-batch memfmt-tile-batch picks for block 1 (4).
  probe(4, 48, 6, 112, 2);
  probe(8, 48, 6, 56, 1);
  probe(8, 104, 13, 56, 2);
  probe(8, 104, 13, 28, 1);
  probe(8, 208, 26, 28, 2);
  probe(8, 208, 26, 14, 1);
  probe(8, 440, 55, 14, 2);
  probe(8, 440, 55, 7, 1);
  return 0;
}
