// conv_precision.cpp - would a bf16 training step pay on this CPU?
//
// A ResNet-50 training step spends most of its time in convolutions: each of
// the 53 runs forward, backward data (all but the stem, whose input gradient
// nothing uses) and backward weights. This probe times those three oneDNN
// 2.6 primitives for every convolution of ResNet-50 (torchvision's v1.5
// shapes, 224x224), NHWC source and destination as a channels-last step runs
// them, in f32 and in bf16 (bf16 source, weights and gradients, f32
// accumulation inside oneDNN: what a mixed-precision step with f32 master
// weights would run), and prints each shape and the step's totals. Buffers
// hold nonzero data written by the CPU (an untouched buffer maps the zero
// page and makes every load an L1 hit). Each figure is the median of 5
// rounds of 3 calls, multiplied by the number of such convolutions in the
// network.
//
//   g++ -O2 -std=c++17 bench/cpu/conv_precision.cpp -ldnnl -o conv_precision
//   OMP_NUM_THREADS=2 ./conv_precision [BATCH]    (default 8)
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

struct Shape {
  int count, ic, oc, ih, k, stride;
  bool gradInput; // false for the stem: the image's gradient is never used
};

// ResNet-50 (torchvision, stride on the 3x3 convolution), 224x224.
const Shape kResNet50[] = {
    {1, 3, 64, 224, 7, 2, false},
    // layer1: 56x56, width 64, out 256, 3 blocks
    {1, 64, 64, 56, 1, 1, true},   {3, 64, 64, 56, 3, 1, true},
    {3, 64, 256, 56, 1, 1, true},  {1, 64, 256, 56, 1, 1, true},
    {2, 256, 64, 56, 1, 1, true},
    // layer2: width 128, out 512, 4 blocks
    {1, 256, 128, 56, 1, 1, true}, {1, 128, 128, 56, 3, 2, true},
    {4, 128, 512, 28, 1, 1, true}, {1, 256, 512, 56, 1, 2, true},
    {3, 512, 128, 28, 1, 1, true}, {3, 128, 128, 28, 3, 1, true},
    // layer3: width 256, out 1024, 6 blocks
    {1, 512, 256, 28, 1, 1, true}, {1, 256, 256, 28, 3, 2, true},
    {6, 256, 1024, 14, 1, 1, true}, {1, 512, 1024, 28, 1, 2, true},
    {5, 1024, 256, 14, 1, 1, true}, {5, 256, 256, 14, 3, 1, true},
    // layer4: width 512, out 2048, 3 blocks
    {1, 1024, 512, 14, 1, 1, true}, {1, 512, 512, 14, 3, 2, true},
    {3, 512, 2048, 7, 1, 1, true},  {1, 1024, 2048, 14, 1, 2, true},
    {2, 2048, 512, 7, 1, 1, true},  {2, 512, 512, 7, 3, 1, true},
};

void fill(memory &m) {
  auto *bytes = static_cast<unsigned char *>(m.get_data_handle());
  size_t size = m.get_desc().get_size();
  bool isBf16 = m.get_desc().data_type() == dt::bf16;
  for (size_t i = 0; i < size; i += isBf16 ? 2 : 4) {
    // Values in [0.5, 1) with varied mantissas, in either type.
    uint16_t high = 0x3f00 | static_cast<uint16_t>((i * 7919) % 128);
    if (isBf16) {
      std::memcpy(bytes + i, &high, 2);
    } else {
      uint32_t word = (uint32_t(high) << 16) | uint32_t((i * 31) & 0xffff);
      std::memcpy(bytes + i, &word, 4);
    }
  }
}

double medianMs(primitive &p, stream &s,
                const std::unordered_map<int, memory> &args) {
  p.execute(s, args);
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i)
      p.execute(s, args);
    s.wait();
    rounds.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count() /
                     3);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

struct Times {
  double forward = 0, backwardData = 0, backwardWeights = 0;
  double total() const { return forward + backwardData + backwardWeights; }
};

Times timeShape(engine &eng, stream &s, int batch, const Shape &shape,
                dt type) {
  int pad = shape.k / 2;
  int oh = (shape.ih + 2 * pad - shape.k) / shape.stride + 1;
  memory::dims strides = {shape.stride, shape.stride}, padding = {pad, pad};
  memory::desc src({batch, shape.ic, shape.ih, shape.ih}, type, tag::nhwc);
  memory::desc weights({shape.oc, shape.ic, shape.k, shape.k}, type,
                       tag::any);
  memory::desc dst({batch, shape.oc, oh, oh}, type, tag::nhwc);
  convolution_forward::primitive_desc forwardPd(
      {prop_kind::forward_training, algorithm::convolution_direct, src,
       weights, dst, strides, padding, padding},
      eng);
  memory source(src, eng), diffSource(src, eng), output(dst, eng),
      diffOutput(dst, eng), weight(forwardPd.weights_desc(), eng);
  for (memory *m : {&source, &diffSource, &output, &diffOutput, &weight})
    fill(*m);
  Times t;
  convolution_forward forward(forwardPd);
  t.forward = medianMs(forward, s,
                       {{DNNL_ARG_SRC, source},
                        {DNNL_ARG_WEIGHTS, weight},
                        {DNNL_ARG_DST, output}});
  if (shape.gradInput) {
    convolution_backward_data::primitive_desc pd(
        {algorithm::convolution_direct, src, weights, dst, strides, padding,
         padding},
        eng, forwardPd);
    memory packed(pd.weights_desc(), eng);
    fill(packed);
    convolution_backward_data backward(pd);
    t.backwardData = medianMs(backward, s,
                              {{DNNL_ARG_DIFF_DST, diffOutput},
                               {DNNL_ARG_WEIGHTS, packed},
                               {DNNL_ARG_DIFF_SRC, diffSource}});
  }
  convolution_backward_weights::primitive_desc pd(
      {algorithm::convolution_direct, src, weights, dst, strides, padding,
       padding},
      eng, forwardPd);
  memory diffWeights(pd.diff_weights_desc(), eng);
  fill(diffWeights);
  convolution_backward_weights backward(pd);
  t.backwardWeights = medianMs(backward, s,
                               {{DNNL_ARG_SRC, source},
                                {DNNL_ARG_DIFF_DST, diffOutput},
                                {DNNL_ARG_DIFF_WEIGHTS, diffWeights}});
  std::printf("  %-4s x%d ic%-4d oc%-4d %3dx%-3d k%d s%d: fwd %7.3f  bwd_d "
              "%7.3f  bwd_w %7.3f ms  (%s / %s)\n",
              type == dt::f32 ? "f32" : "bf16", shape.count, shape.ic,
              shape.oc, shape.ih, shape.ih, shape.k, shape.stride, t.forward,
              t.backwardData, t.backwardWeights, forwardPd.impl_info_str(),
              pd.impl_info_str());
  return t;
}

} // namespace

int main(int argc, char **argv) {
  int batch = argc > 1 ? std::atoi(argv[1]) : 8;
  if (batch <= 0) {
    std::fprintf(stderr, "usage: conv_precision [BATCH > 0]\n");
    return 2;
  }
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  Times sums[2];
  std::printf("ResNet-50 convolutions, batch %d, 224x224, NHWC, ms per call "
              "(median of 5 rounds of 3):\n",
              batch);
  for (const Shape &shape : kResNet50) {
    for (int i = 0; i < 2; ++i) {
      Times t = timeShape(eng, s, batch, shape, i ? dt::bf16 : dt::f32);
      sums[i].forward += shape.count * t.forward;
      sums[i].backwardData += shape.count * t.backwardData;
      sums[i].backwardWeights += shape.count * t.backwardWeights;
    }
  }
  std::printf("\nper training step (53 convolutions), ms:\n");
  std::printf("  %-5s %9s %9s %9s %9s\n", "", "forward", "bwd data",
              "bwd wts", "total");
  for (int i = 0; i < 2; ++i)
    std::printf("  %-5s %9.1f %9.1f %9.1f %9.1f\n", i ? "bf16" : "f32",
                sums[i].forward, sums[i].backwardData,
                sums[i].backwardWeights, sums[i].total());
  std::printf("  f32 / bf16: forward %.2fx, backward data %.2fx, backward "
              "weights %.2fx, all %.2fx\n",
              sums[0].forward / sums[1].forward,
              sums[0].backwardData / sums[1].backwardData,
              sums[0].backwardWeights / sums[1].backwardWeights,
              sums[0].total() / sums[1].total());
  return 0;
}
