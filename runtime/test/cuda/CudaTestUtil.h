//===- CudaTestUtil.h - Helpers of the CUDA backend's tests -----*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA tests run every kernel twice on the same bytes: on the GPU (a
// CUDA context) and on the CPU reference kernels (widened for f16/bf16, the
// oracle of cpu/Precision.cpp), and compare. A Buf is one tensor of a test
// layout (TestTensor.h: NCHW, channels-last, channels-last slice, strided)
// in f32, f16 or bf16: host bytes (with sentinels between elements), the
// host memref, and a device copy with its own memref. After the GPU call the
// device bytes come back and are compared element by element (within a
// tolerance that depends on the kernel and the element type) and slot by
// slot outside the elements (the gaps must be untouched).
//
// CudaEnv owns the two contexts; a test without a CUDA device is skipped
// with the message "skipped: no CUDA device".
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_TEST_CUDA_CUDATESTUTIL_H
#define MEMFMT_RUNTIME_TEST_CUDA_CUDATESTUTIL_H

#include "../TestTensor.h"

#include "memfmt/runtime/io/HalfFloat.h"
#include "memfmt/runtime/kernel_abi.h"
#include "memfmt/runtime/memfmt_runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memfmt::test {

enum class Kind { F32, F16, BF16 };

inline const char *toString(Kind k) {
  return k == Kind::F32 ? "f32" : k == Kind::F16 ? "f16" : "bf16";
}

inline size_t bytesOf(Kind k) { return k == Kind::F32 ? 4 : 2; }

/// The value `v` after rounding to `k`.
inline float roundTo(Kind k, float v) {
  switch (k) {
  case Kind::F16:
    return io::halfToFloat(io::floatToHalf(v));
  case Kind::BF16:
    return io::bfloat16ToFloat(io::floatToBFloat16(v));
  default:
    return v;
  }
}

/// The CUDA context under test and the CPU reference context.
class CudaEnv {
public:
  /// Creates both contexts; `available()` is false without a device.
  explicit CudaEnv(bool cudaGraph = false) {
    memfmt_context_options_t options;
    memfmt_context_options_init(&options);
    options.backend = MEMFMT_BACKEND_CUDA;
    options.allow_tf32 = MEMFMT_SWITCH_OFF;
    options.cuda_graph = cudaGraph ? MEMFMT_SWITCH_ON : MEMFMT_SWITCH_OFF;
    status = memfmt_context_create(&options, &gpu);
    if (status != MEMFMT_STATUS_OK)
      error = memfmt_context_last_error(nullptr);
    else
      memfmt_context_set_profiling(gpu, 1);
    memfmt_context_options_init(&options);
    options.kernels = MEMFMT_KERNELS_REFERENCE;
    EXPECT_EQ(memfmt_context_create(&options, &cpu), MEMFMT_STATUS_OK);
  }
  ~CudaEnv() {
    memfmt_context_destroy(gpu);
    memfmt_context_destroy(cpu);
  }
  CudaEnv(const CudaEnv &) = delete;
  CudaEnv &operator=(const CudaEnv &) = delete;

  bool available() const { return gpu != nullptr; }
  memfmt_context_t *gpu = nullptr;
  memfmt_context_t *cpu = nullptr;
  memfmt_status_t status = MEMFMT_STATUS_OK;
  std::string error;

  /// The implementation the GPU ran for `node` ("" if none).
  std::string implOf(int64_t node) const {
    int64_t count = 0;
    memfmt_context_profile_count(gpu, &count);
    for (int64_t i = count; i-- > 0;) {
      memfmt_profile_entry_t entry;
      memfmt_context_profile_entry(gpu, i, &entry);
      if (entry.node == node)
        return entry.impl;
    }
    return "";
  }
};

/// Skips the current test when `env` has no device.
#define MEMFMT_REQUIRE_CUDA(env)                                               \
  do {                                                                         \
    if (!(env).available())                                                    \
      GTEST_SKIP() << "skipped: no CUDA device (" << (env).error << ")";       \
  } while (false)

/// A tensor of a test layout in f32, f16 or bf16, on the host and the GPU.
class Buf {
public:
  Buf(Kind kind, std::vector<int64_t> sizes, Layout layout = Layout::Contiguous)
      : kind(kind), values(std::move(sizes), layout) {
    encode();
  }

  /// Uniform values in [lo, hi), rounded to the element type.
  Buf &fill(uint32_t seed, double lo = -1.0, double hi = 1.0) {
    values.fillRandom(seed, lo, hi);
    for (int64_t i = 0; i < values.numElements(); ++i)
      values.flat(i) = roundTo(kind, values.flat(i));
    encode();
    return *this;
  }
  /// Sets logical element `i` (rounded).
  Buf &set(int64_t i, float v) {
    values.flat(i) = roundTo(kind, v);
    encode();
    return *this;
  }

  const memfmt_memref_t *host() {
    hostDesc = descriptor(bytes.data());
    hostRef = {values.rank(), hostDesc.data()};
    return &hostRef;
  }

  /// Uploads the bytes (elements and sentinels) and returns the device
  /// memref.
  const memfmt_memref_t *device(memfmt_context_t *gpu) {
    release();
    ctx = gpu;
    EXPECT_EQ(memfmt_device_alloc(gpu, int64_t(bytes.size()), &dev),
              MEMFMT_STATUS_OK)
        << memfmt_context_last_error(gpu);
    EXPECT_EQ(memfmt_device_copy(gpu, dev, bytes.data(), int64_t(bytes.size()),
                                 MEMFMT_COPY_HOST_TO_DEVICE),
              MEMFMT_STATUS_OK)
        << memfmt_context_last_error(gpu);
    devDesc = descriptor(static_cast<uint8_t *>(dev));
    devRef = {values.rank(), devDesc.data()};
    return &devRef;
  }

  /// The device bytes, after the GPU's work is done.
  std::vector<uint8_t> download() const {
    std::vector<uint8_t> out(bytes.size());
    EXPECT_EQ(memfmt_context_synchronize(ctx), MEMFMT_STATUS_OK)
        << memfmt_context_last_error(ctx);
    EXPECT_EQ(memfmt_device_copy(ctx, out.data(), dev, int64_t(out.size()),
                                 MEMFMT_COPY_DEVICE_TO_HOST),
              MEMFMT_STATUS_OK)
        << memfmt_context_last_error(ctx);
    return out;
  }

  /// Logical element `i` of `raw` (bytes laid out like this tensor).
  float valueIn(const std::vector<uint8_t> &raw, int64_t i) const {
    return decode(raw, values.offset + linear(values.indexOf(i)));
  }
  float value(int64_t i) const { return valueIn(bytes, i); }

  /// Buffer slots that are not elements.
  std::vector<bool> gapMask() const {
    std::vector<bool> gap(values.buffer.size(), true);
    for (int64_t i = 0; i < values.numElements(); ++i)
      gap[values.offset + linear(values.indexOf(i))] = false;
    return gap;
  }

  ~Buf() { release(); }
  Buf(const Buf &) = delete;
  Buf &operator=(const Buf &) = delete;

  Kind kind;
  TestTensor<float> values;
  std::vector<uint8_t> bytes;

  std::string describe() const {
    return std::string(toString(kind)) + " " + values.describe();
  }

private:
  int64_t linear(const std::vector<int64_t> &index) const {
    int64_t at = 0;
    for (size_t d = 0; d < index.size(); ++d)
      at += index[d] * values.strides[d];
    return at;
  }
  void encode() {
    size_t n = values.buffer.size(), size = bytesOf(kind);
    bytes.assign(n * size, 0);
    for (size_t i = 0; i < n; ++i) {
      float v = values.buffer[i];
      if (kind == Kind::F32) {
        std::memcpy(&bytes[i * 4], &v, 4);
      } else {
        uint16_t h =
            kind == Kind::F16 ? io::floatToHalf(v) : io::floatToBFloat16(v);
        std::memcpy(&bytes[i * 2], &h, 2);
      }
    }
  }
  float decode(const std::vector<uint8_t> &raw, int64_t slot) const {
    if (kind == Kind::F32) {
      float v;
      std::memcpy(&v, &raw[slot * 4], 4);
      return v;
    }
    uint16_t h;
    std::memcpy(&h, &raw[slot * 2], 2);
    return kind == Kind::F16 ? io::halfToFloat(h) : io::bfloat16ToFloat(h);
  }
  std::vector<int64_t> descriptor(uint8_t *base) const {
    std::vector<int64_t> d(3 + 2 * values.rank());
    std::memcpy(&d[0], &base, sizeof(base));
    std::memcpy(&d[1], &base, sizeof(base));
    d[2] = values.offset;
    for (int64_t i = 0; i < values.rank(); ++i) {
      d[3 + i] = values.sizes[i];
      d[3 + values.rank() + i] = values.strides[i];
    }
    return d;
  }
  void release() {
    if (dev)
      memfmt_device_free(ctx, dev);
    dev = nullptr;
  }

  std::vector<int64_t> hostDesc, devDesc;
  memfmt_memref_t hostRef{}, devRef{};
  memfmt_context_t *ctx = nullptr;
  void *dev = nullptr;
};

/// An i64 tensor (pooling indices) on the host and the GPU.
class IndexBuf {
public:
  IndexBuf(std::vector<int64_t> sizes, Layout layout = Layout::Contiguous)
      : values(std::move(sizes), layout) {}

  const memfmt_memref_t *host() { return values.memref(); }

  const memfmt_memref_t *device(memfmt_context_t *gpu) {
    if (dev)
      memfmt_device_free(ctx, dev);
    ctx = gpu;
    int64_t bytes = int64_t(values.buffer.size() * sizeof(int64_t));
    EXPECT_EQ(memfmt_device_alloc(gpu, bytes, &dev), MEMFMT_STATUS_OK);
    EXPECT_EQ(memfmt_device_copy(gpu, dev, values.buffer.data(), bytes,
                                 MEMFMT_COPY_HOST_TO_DEVICE),
              MEMFMT_STATUS_OK);
    int64_t *base = static_cast<int64_t *>(dev);
    desc.assign(3 + 2 * values.rank(), 0);
    std::memcpy(&desc[0], &base, sizeof(base));
    std::memcpy(&desc[1], &base, sizeof(base));
    desc[2] = values.offset;
    for (int64_t i = 0; i < values.rank(); ++i) {
      desc[3 + i] = values.sizes[i];
      desc[3 + values.rank() + i] = values.strides[i];
    }
    ref = {values.rank(), desc.data()};
    return &ref;
  }

  /// The device tensor, downloaded.
  TestTensor<int64_t> download() const {
    TestTensor<int64_t> out = values;
    memfmt_context_synchronize(ctx);
    EXPECT_EQ(memfmt_device_copy(ctx, out.buffer.data(), dev,
                                 int64_t(out.buffer.size() * sizeof(int64_t)),
                                 MEMFMT_COPY_DEVICE_TO_HOST),
              MEMFMT_STATUS_OK);
    return out;
  }

  ~IndexBuf() {
    if (dev)
      memfmt_device_free(ctx, dev);
  }
  IndexBuf(const IndexBuf &) = delete;
  IndexBuf &operator=(const IndexBuf &) = delete;

  TestTensor<int64_t> values;

private:
  std::vector<int64_t> desc;
  memfmt_memref_t ref{};
  memfmt_context_t *ctx = nullptr;
  void *dev = nullptr;
};

/// How closely a GPU result must match the CPU reference.
enum class Match {
  /// Bit-exact values (copies, conversions, relu, max pooling).
  Exact,
  /// One rounding of a few f32 operations apart (add, batch norm).
  Elementwise,
  /// Sums in another order (convolution, linear, average pooling,
  /// gradients): relative to the output's largest magnitude. cuDNN may pick
  /// Winograd or FFT algorithms for f32, whose error is larger than a plain
  /// sum's.
  Reduction,
};

/// Compares the GPU result (`gpuBytes`, laid out like `cpu`) with the CPU
/// reference in `cpu`: elements within the tolerance of `match`, gaps
/// identical to the CPU buffer's (both started from the same bytes). The
/// tolerance is that of `precision`, the narrowest type the GPU's result
/// went through (the buffer's own by default; bf16 for the f32 weight
/// gradients cuDNN writes in bf16).
inline void expectMatch(const Buf &cpu, const std::vector<uint8_t> &gpuBytes,
                        Match match, const std::string &what,
                        std::optional<Kind> precision = std::nullopt) {
  const Kind kind = precision.value_or(cpu.kind);
  int64_t n = cpu.values.numElements();
  double scale = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(cpu.value(i)))
      scale = std::max(scale, double(std::fabs(cpu.value(i))));
  // Half an ulp of the element type, relative.
  double ulp = kind == Kind::F32   ? 1.0 / (1 << 24)
               : kind == Kind::F16 ? 1.0 / 2048
                                   : 1.0 / 256;
  double rel = 0, abs = 0;
  switch (match) {
  case Match::Exact:
    break;
  case Match::Elementwise:
    rel = 4 * ulp + 1e-6;
    abs = 1e-6 * scale;
    break;
  case Match::Reduction:
    rel = 4 * ulp + 1e-6;
    abs = (kind == Kind::F32 ? 1e-4 : 4 * ulp) * scale;
    break;
  }
  int failures = 0;
  for (int64_t i = 0; i < n && failures < 5; ++i) {
    double want = cpu.value(i), got = cpu.valueIn(gpuBytes, i);
    bool same = (std::isnan(want) && std::isnan(got)) || want == got;
    if (!same && !(std::fabs(got - want) <= abs + rel * std::fabs(want))) {
      ADD_FAILURE() << what << ": element " << i << " is " << got
                    << " on the GPU, " << want << " on the CPU";
      ++failures;
    }
  }
  std::vector<bool> gaps = cpu.gapMask();
  size_t size = bytesOf(cpu.kind);
  for (size_t slot = 0; slot < gaps.size(); ++slot)
    if (gaps[slot] && std::memcmp(&gpuBytes[slot * size],
                                  &cpu.bytes[slot * size], size) != 0) {
      ADD_FAILURE() << what << ": the GPU wrote buffer slot " << slot
                    << ", which is no element";
      break;
    }
}

/// The entry point of kernel NAME for element type `kind`.
#define MEMFMT_ENTRY(NAME, KIND)                                               \
  ((KIND) == ::memfmt::test::Kind::F32   ? _mlir_ciface_memfmt_##NAME##_f32    \
   : (KIND) == ::memfmt::test::Kind::F16 ? _mlir_ciface_memfmt_##NAME##_f16    \
                                         : _mlir_ciface_memfmt_##NAME##_bf16)

/// The entry point of training kernel NAME (Kernels.def's
/// MEMFMT_TRAINING_DTYPES: f32, and f16 or bf16 activations of a
/// mixed-precision step) for `kind`.
#define MEMFMT_TRAINING_ENTRY(NAME, KIND) MEMFMT_ENTRY(NAME, KIND)

/// The test layouts and element types the kernel tests sweep.
constexpr Layout C = Layout::Contiguous, CL = Layout::ChannelsLast,
                 CLS = Layout::ChannelsLastSlice, S = Layout::Strided;
constexpr Layout kLayouts[] = {C, CL, CLS, S};
constexpr Kind kKinds[] = {Kind::F32, Kind::F16, Kind::BF16};
/// The activation types of the training kernels.
constexpr Kind kTrainingKinds[] = {Kind::F32, Kind::F16, Kind::BF16};

/// Shapes of the elementwise tests: NCHW with odd and one-pixel sizes,
/// channel counts that do and do not fill a vector, 2-D, empty.
inline const std::vector<int64_t> kElementwiseShapes[] = {
    {2, 3, 4, 5}, {1, 64, 7, 7}, {2, 13, 3, 3}, {3, 1, 1, 1}, {5, 7}, {0, 4}};

/// "f32 channels_last -> contiguous", for failure messages.
inline std::string name(Kind k, Layout in, Layout out) {
  return std::string(toString(k)) + " " + toString(in) + " -> " + toString(out);
}

} // namespace memfmt::test

#endif // MEMFMT_RUNTIME_TEST_CUDA_CUDATESTUTIL_H
