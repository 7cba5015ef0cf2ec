// OneDnnProbe.h - what the oneDNN probes of bench/cpu share.
//
// The probes (dw_fusion.cpp, grouped_conv.cpp) time oneDNN 2.6 primitives
// on shapes of real networks, each compiled on its own with one g++ line.
// This header gives them one CPU engine and stream, a timer (the median of
// 7 rounds of 5 calls, after one warm-up call), f32 buffers filled with
// nonzero values written by the CPU (an untouched buffer maps the zero page
// and turns every load into an L1 hit), and the relative difference of two
// results.
#ifndef MEMFMT_BENCH_CPU_ONEDNNPROBE_H
#define MEMFMT_BENCH_CPU_ONEDNNPROBE_H

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

namespace bench {

inline dnnl::engine &engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

inline dnnl::stream &stream() {
  static dnnl::stream strm(engine());
  return strm;
}

/// Milliseconds per call of `call`: the median of 7 rounds of 5 calls.
inline double medianMs(const std::function<void()> &call) {
  call();
  stream().wait();
  std::vector<double> rounds;
  for (int r = 0; r < 7; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i)
      call();
    stream().wait();
    rounds.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count() /
                     5);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

/// An f32 memory of `desc` holding values in [-1, 1) that depend on `seed`.
inline dnnl::memory filled(const dnnl::memory::desc &desc, int seed) {
  dnnl::memory m(desc, engine());
  float *p = static_cast<float *>(m.get_data_handle());
  for (size_t i = 0; i < desc.get_size() / sizeof(float); ++i)
    p[i] = 0.01f * float((i * 7919 + seed * 104729) % 200) - 1.0f;
  return m;
}

/// max |a - b| / max |a| over two f32 memories of `desc`.
inline double relDiff(const dnnl::memory &a, const dnnl::memory &b,
                      const dnnl::memory::desc &desc) {
  const float *x = static_cast<const float *>(a.get_data_handle());
  const float *y = static_cast<const float *>(b.get_data_handle());
  double diff = 0, scale = 0;
  for (size_t i = 0; i < desc.get_size() / sizeof(float); ++i) {
    diff = std::max(diff, double(std::fabs(x[i] - y[i])));
    scale = std::max(scale, double(std::fabs(x[i])));
  }
  return diff / scale;
}

} // namespace bench

#endif // MEMFMT_BENCH_CPU_ONEDNNPROBE_H
