//===- CudaKernelTest.cpp - Every CUDA kernel against the CPU reference ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The inference kernels of Kernels.def on the CUDA backend (and the
// convolution and pooling gradients, beside their forward kernels; the
// other training kernels are in CudaTrainingKernelTest.cpp), in f32, f16
// and bf16, with
// tensors in NCHW, channels-last, a channels-last slice (padded channels)
// and a general strided layout, on edge shapes (one pixel, one channel,
// channel counts that do or do not fill 16-byte vectors, odd sizes, layer
// norm and softmax rows longer than a warp takes, softmax along every dim
// of ranks 1 to 5, empty tensors), against the CPU reference kernels on the
// same bytes
// (CudaTestUtil.h). The implementation that ran is checked where the layout
// decides it (the NHWC fast paths must be taken for channels-last tensors).
// Without a CUDA device every test is skipped ("skipped: no CUDA device").
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include <cstdio>
#include <limits>

using namespace memfmt::test;

namespace {


/// The shared contexts (created once: cuDNN and cuBLAS handles are slow to
/// make).
CudaEnv &env() {
  static CudaEnv *instance = new CudaEnv();
  return *instance;
}

//===----------------------------------------------------------------------===//
// Elementwise: relu, add, eltwise, binary, copy, casts
//===----------------------------------------------------------------------===//

class CudaElementwiseTest : public ::testing::TestWithParam<Kind> {};

TEST_P(CudaElementwiseTest, ReluAndCopyInEveryLayoutPair) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  for (const std::vector<int64_t> &shape : kElementwiseShapes)
    for (Layout in : kLayouts)
      for (Layout out : kLayouts) {
        std::string what =
            name(k, in, out) + " " + Buf(k, shape, in).describe();
        Buf x(k, shape, in);
        x.fill(1, -2, 2);
        if (x.values.numElements() > 2)
          x.set(1, std::nanf("")).set(2, -0.0f);
        Buf y(k, shape, out);
        const memfmt_memref_t *dy = y.device(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(relu, k)(env().gpu, 0, x.device(env().gpu), dy),
                  MEMFMT_STATUS_OK)
            << memfmt_context_last_error(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(relu, k)(env().cpu, 0, x.host(), y.host()),
                  MEMFMT_STATUS_OK);
        expectMatch(y, y.download(), Match::Exact, "relu " + what);
        if (in == out && (in == C || in == CL) && x.values.numElements() > 0)
          EXPECT_EQ(env().implOf(0), "flat") << what;

        Buf z(k, shape, out);
        const memfmt_memref_t *dz = z.device(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(copy, k)(env().gpu, 1, x.device(env().gpu), dz),
                  MEMFMT_STATUS_OK)
            << memfmt_context_last_error(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(copy, k)(env().cpu, 1, x.host(), z.host()),
                  MEMFMT_STATUS_OK);
        expectMatch(z, z.download(), Match::Exact, "copy " + what);
        if (shape.size() == 4 && shape[1] > 1 && shape[2] * shape[3] > 1) {
          if (in == C && out == CL)
            EXPECT_EQ(env().implOf(1), "nchw_to_nhwc") << what;
          if (in == CL && out == C)
            EXPECT_EQ(env().implOf(1), "nhwc_to_nchw") << what;
          if (in == out && in != S && in != CLS)
            EXPECT_EQ(env().implOf(1), "memcpy") << what;
        }
      }
}

TEST_P(CudaElementwiseTest, ReluInPlace) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  for (Layout layout : kLayouts) {
    Buf x(k, {2, 16, 5, 5}, layout);
    x.fill(2);
    const memfmt_memref_t *d = x.device(env().gpu);
    ASSERT_EQ(MEMFMT_ENTRY(relu, k)(env().gpu, 0, d, d), MEMFMT_STATUS_OK);
    const memfmt_memref_t *h = x.host();
    ASSERT_EQ(MEMFMT_ENTRY(relu, k)(env().cpu, 0, h, h), MEMFMT_STATUS_OK);
    expectMatch(x, x.download(), Match::Exact, "relu in place " + x.describe());
  }
}

TEST_P(CudaElementwiseTest, AddWithBroadcast) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  struct Case {
    std::vector<int64_t> lhs, rhs, out;
  };
  const Case cases[] = {{{2, 8, 4, 4}, {2, 8, 4, 4}, {2, 8, 4, 4}},
                        {{2, 8, 4, 4}, {1, 8, 1, 1}, {2, 8, 4, 4}},
                        {{2, 8, 4, 4}, {8, 1, 1}, {2, 8, 4, 4}},
                        {{1, 64, 7, 7}, {1, 64, 7, 7}, {1, 64, 7, 7}},
                        {{3, 5}, {5}, {3, 5}}};
  for (const Case &c : cases)
    for (Layout la : kLayouts)
      for (Layout lo : {C, CL, S}) {
        Buf a(k, c.lhs, la), b(k, c.rhs, la), y(k, c.out, lo);
        a.fill(3, -2, 2);
        b.fill(4, -2, 2);
        std::string what = "add " + name(k, la, lo) + " " + a.describe() +
                           " + " + b.describe();
        const memfmt_memref_t *dy = y.device(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(add, k)(env().gpu, 2, a.device(env().gpu),
                                       b.device(env().gpu), dy),
                  MEMFMT_STATUS_OK)
            << memfmt_context_last_error(env().gpu);
        ASSERT_EQ(
            MEMFMT_ENTRY(add, k)(env().cpu, 2, a.host(), b.host(), y.host()),
            MEMFMT_STATUS_OK);
        expectMatch(y, y.download(), Match::Elementwise, what);
      }
}

TEST_P(CudaElementwiseTest, EltwiseAndBinaryMatchTheCpu) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  const double inf = std::numeric_limits<double>::infinity();
  struct Function {
    int64_t op;
    double alpha, beta;
  };
  const Function functions[] = {
      {MEMFMT_ELTWISE_SIGMOID, 0, 0},       {MEMFMT_ELTWISE_HARDSIGMOID, 0.2, 0.5},
      {MEMFMT_ELTWISE_HARDSWISH, 0, 0},     {MEMFMT_ELTWISE_CLAMP, 0, 6},
      {MEMFMT_ELTWISE_CLAMP, -inf, 0.5},    {MEMFMT_ELTWISE_GELU_ERF, 0, 0},
      {MEMFMT_ELTWISE_GELU_TANH, 0, 0},     {MEMFMT_ELTWISE_SILU, 0, 0}};
  for (const Function &f : functions)
    for (const std::vector<int64_t> &shape : kElementwiseShapes)
      for (Layout in : kLayouts)
        for (Layout out : {C, CL, S}) {
          Buf x(k, shape, in), y(k, shape, out);
          x.fill(5, -8, 8);
          if (x.values.numElements() > 2)
            x.set(1, std::nanf(""));
          std::string what = "eltwise " + std::to_string(f.op) + " " +
                             name(k, in, out) + " " + x.describe();
          const memfmt_memref_t *dy = y.device(env().gpu);
          ASSERT_EQ(MEMFMT_ENTRY(eltwise, k)(env().gpu, 3, x.device(env().gpu),
                                             dy, f.op, f.alpha, f.beta),
                    MEMFMT_STATUS_OK)
              << memfmt_context_last_error(env().gpu);
          ASSERT_EQ(MEMFMT_ENTRY(eltwise, k)(env().cpu, 3, x.host(), y.host(),
                                             f.op, f.alpha, f.beta),
                    MEMFMT_STATUS_OK);
          expectMatch(y, y.download(), Match::Elementwise, what);
        }
  for (int64_t op : {MEMFMT_BINARY_MUL, MEMFMT_BINARY_SUB, MEMFMT_BINARY_DIV})
    for (Layout la : kLayouts) {
      // A squeeze-excite scale [N, C, 1, 1] against an activation.
      Buf a(k, {2, 8, 4, 4}, la), b(k, {2, 8, 1, 1}, C), y(k, {2, 8, 4, 4}, la);
      a.fill(6, -2, 2);
      b.fill(7, 0.5, 2);
      std::string what = "binary " + std::to_string(op) + " " + a.describe();
      const memfmt_memref_t *dy = y.device(env().gpu);
      ASSERT_EQ(MEMFMT_ENTRY(binary, k)(env().gpu, 4, a.device(env().gpu),
                                        b.device(env().gpu), dy, op),
                MEMFMT_STATUS_OK)
          << memfmt_context_last_error(env().gpu);
      ASSERT_EQ(MEMFMT_ENTRY(binary, k)(env().cpu, 4, a.host(), b.host(),
                                        y.host(), op),
                MEMFMT_STATUS_OK);
      expectMatch(y, y.download(), Match::Elementwise, what);
    }
}

TEST(CudaCastTest, F32ToReducedAndBackInEveryLayoutPair) {
  MEMFMT_REQUIRE_CUDA(env());
  for (Kind k : {Kind::F16, Kind::BF16})
    for (Layout in : kLayouts)
      for (Layout out : kLayouts) {
        Buf x(Kind::F32, {2, 16, 3, 5}, in);
        x.fill(5, -70000, 70000);
        x.set(0, 65520.0f).set(1, std::nanf("")).set(2, 1.0f + 1.0f / 2048);
        Buf y(k, {2, 16, 3, 5}, out);
        std::string what = name(k, in, out);
        const memfmt_memref_t *dy = y.device(env().gpu);
        auto to = k == Kind::F16 ? _mlir_ciface_memfmt_cast_f32_to_f16
                                 : _mlir_ciface_memfmt_cast_f32_to_bf16;
        ASSERT_EQ(to(env().gpu, 3, x.device(env().gpu), dy), MEMFMT_STATUS_OK)
            << memfmt_context_last_error(env().gpu);
        ASSERT_EQ(to(env().cpu, 3, x.host(), y.host()), MEMFMT_STATUS_OK);
        expectMatch(y, y.download(), Match::Exact, "cast_f32_to " + what);

        Buf back(Kind::F32, {2, 16, 3, 5}, in);
        const memfmt_memref_t *db = back.device(env().gpu);
        auto from = k == Kind::F16 ? _mlir_ciface_memfmt_cast_to_f32_from_f16
                                   : _mlir_ciface_memfmt_cast_to_f32_from_bf16;
        ASSERT_EQ(from(env().gpu, 4, y.device(env().gpu), db),
                  MEMFMT_STATUS_OK);
        ASSERT_EQ(from(env().cpu, 4, y.host(), back.host()), MEMFMT_STATUS_OK);
        expectMatch(back, back.download(), Match::Exact,
                    "cast_to_f32_from " + what);
      }
}

INSTANTIATE_TEST_SUITE_P(Kinds, CudaElementwiseTest,
                         ::testing::ValuesIn(kKinds), [](const auto &info) {
                           return std::string(toString(info.param));
                         });

//===----------------------------------------------------------------------===//
// Batch norm
//===----------------------------------------------------------------------===//

class CudaBatchNormTest : public ::testing::TestWithParam<Kind> {};

TEST_P(CudaBatchNormTest, EveryLayoutAndShape) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  const std::vector<int64_t> shapes[] = {
      {2, 64, 7, 7}, {2, 3, 5, 4}, {1, 8, 1, 1}, {4, 16}, {2, 24, 8, 8}};
  for (const std::vector<int64_t> &shape : shapes)
    for (Layout in : kLayouts)
      for (Layout out : {in, C}) {
        int64_t c = shape[1];
        Buf x(k, shape, in), y(k, shape, out);
        Buf w(k, {c}), b(k, {c}), m(k, {c}), v(k, {c});
        x.fill(6, -3, 3);
        w.fill(7, 0.5, 1.5);
        b.fill(8);
        m.fill(9);
        v.fill(10, 0.5, 1.5);
        std::string what =
            "batch_norm " + name(k, in, out) + " " + x.describe();
        const memfmt_memref_t *dy = y.device(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(batch_norm, k)(
                      env().gpu, 5, x.device(env().gpu), w.device(env().gpu),
                      b.device(env().gpu), m.device(env().gpu),
                      v.device(env().gpu), dy, 1e-5),
                  MEMFMT_STATUS_OK)
            << memfmt_context_last_error(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(batch_norm, k)(env().cpu, 5, x.host(), w.host(),
                                              b.host(), m.host(), v.host(),
                                              y.host(), 1e-5),
                  MEMFMT_STATUS_OK);
        expectMatch(y, y.download(), Match::Elementwise, what);
        // (One-pixel images are both formats: a flat generic walk.)
        bool pixels = shape.size() == 4 && shape[2] * shape[3] > 1;
        if (in == CL && out == CL && pixels && c % 8 == 0)
          EXPECT_EQ(env().implOf(5), "rows_vec") << what;
        if (in == C && out == C && pixels && c > 1)
          EXPECT_NE(env().implOf(5).find("planes"), std::string::npos) << what;
      }
}

INSTANTIATE_TEST_SUITE_P(Kinds, CudaBatchNormTest, ::testing::ValuesIn(kKinds),
                         [](const auto &info) {
                           return std::string(toString(info.param));
                         });

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

class CudaLayerNormTest : public ::testing::TestWithParam<Kind> {};

TEST_P(CudaLayerNormTest, EveryLayoutShapeAndParameter) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  // Ranks 1, 2 and 4; D = 1, odd, 96 (a Swin stage) and one row longer than
  // a warp takes (a block per row); empty tensors.
  const std::vector<int64_t> shapes[] = {{7},    {5, 97},      {2, 3, 4, 96},
                                         {3, 1}, {2, 3, 5, 7}, {3, 2000},
                                         {1, 1}, {0, 4}};
  for (const std::vector<int64_t> &shape : shapes)
    for (Layout in : kLayouts)
      for (Layout out : {in, C})
        for (bool affine : {false, true}) {
          int64_t d = shape.back();
          Buf x(k, shape, in), y(k, shape, out), w(k, {d}), b(k, {d});
          x.fill(11, -3, 3);
          w.fill(12, 0.5, 1.5);
          b.fill(13);
          std::string what = "layer_norm " + name(k, in, out) + " " +
                             x.describe() + (affine ? " affine" : "");
          const memfmt_memref_t *dy = y.device(env().gpu);
          ASSERT_EQ(
              MEMFMT_ENTRY(layer_norm, k)(env().gpu, 12, x.device(env().gpu),
                                          affine ? w.device(env().gpu) : dy,
                                          affine ? b.device(env().gpu) : dy, dy,
                                          1e-5, affine, affine),
              MEMFMT_STATUS_OK)
              << memfmt_context_last_error(env().gpu);
          const memfmt_memref_t *hy = y.host();
          ASSERT_EQ(MEMFMT_ENTRY(layer_norm, k)(
                        env().cpu, 12, x.host(), affine ? w.host() : hy,
                        affine ? b.host() : hy, hy, 1e-5, affine, affine),
                    MEMFMT_STATUS_OK);
          expectMatch(y, y.download(), Match::Reduction, what);
          if (x.values.numElements() > 0)
            EXPECT_EQ(env().implOf(12),
                      d > 1024 ? "block_per_row" : "warp_per_row")
                << what;
        }
}

TEST_P(CudaLayerNormTest, InPlace) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  for (Layout layout : kLayouts) {
    Buf x(k, {2, 4, 3, 96}, layout), w(k, {96}), b(k, {96});
    x.fill(14, -2, 2);
    w.fill(15, 0.5, 1.5);
    b.fill(16);
    const memfmt_memref_t *d = x.device(env().gpu);
    ASSERT_EQ(MEMFMT_ENTRY(layer_norm, k)(env().gpu, 13, d, w.device(env().gpu),
                                          b.device(env().gpu), d, 1e-5, 1, 1),
              MEMFMT_STATUS_OK)
        << memfmt_context_last_error(env().gpu);
    const memfmt_memref_t *h = x.host();
    ASSERT_EQ(MEMFMT_ENTRY(layer_norm, k)(env().cpu, 13, h, w.host(), b.host(),
                                          h, 1e-5, 1, 1),
              MEMFMT_STATUS_OK);
    expectMatch(x, x.download(), Match::Reduction,
                "layer_norm in place " + x.describe());
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, CudaLayerNormTest, ::testing::ValuesIn(kKinds),
                         [](const auto &info) {
                           return std::string(toString(info.param));
                         });

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

class CudaSoftmaxTest : public ::testing::TestWithParam<Kind> {};

/// The team planSoftmax gives rows along `dim` of `x`: a warp or a block
/// per unit-stride row of more than one element, else a thread per row.
const char *softmaxTeamOf(const Buf &x, int64_t dim) {
  const int64_t d = x.values.sizes[dim];
  if (d == 1 || x.values.strides[dim] != 1)
    return "thread_per_row";
  return d > 1024 ? "block_per_row" : "warp_per_row";
}

/// Runs softmax along `dim` from `x` into `y` on the GPU and on the CPU
/// reference (node 14) and compares them; `y` may be `x` (in place).
void expectSoftmaxMatches(Buf &x, Buf &y, int64_t dim,
                          const std::string &what) {
  const bool inPlace = &x == &y;
  const memfmt_memref_t *dx = x.device(env().gpu);
  const memfmt_memref_t *dy = inPlace ? dx : y.device(env().gpu);
  ASSERT_EQ(MEMFMT_ENTRY(softmax, x.kind)(env().gpu, 14, dx, dy, dim),
            MEMFMT_STATUS_OK)
      << memfmt_context_last_error(env().gpu);
  const memfmt_memref_t *hx = x.host();
  const memfmt_memref_t *hy = inPlace ? hx : y.host();
  ASSERT_EQ(MEMFMT_ENTRY(softmax, x.kind)(env().cpu, 14, hx, hy, dim),
            MEMFMT_STATUS_OK);
  expectMatch(y, y.download(), Match::Reduction, what);
  if (x.values.numElements() > 0)
    EXPECT_EQ(env().implOf(14), softmaxTeamOf(x, dim)) << what;
}

TEST_P(CudaSoftmaxTest, EveryLayoutShapeAndDim) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  // Ranks 1 to 5 along every dim; one pixel, one channel, odd sizes, a row
  // longer than a warp takes (a block per row); empty tensors.
  const std::vector<int64_t> shapes[] = {
      {7},           {5, 97},      {3, 2000},       {2, 3, 5}, {2, 3, 4, 5},
      {2, 13, 3, 3}, {1, 1, 1, 1}, {2, 3, 2, 3, 4}, {0, 4}};
  for (const std::vector<int64_t> &shape : shapes)
    for (int64_t dim = 0; dim < int64_t(shape.size()); ++dim)
      for (Layout in : kLayouts)
        for (Layout out : {in, C}) {
          Buf x(k, shape, in), y(k, shape, out);
          x.fill(17, -4, 4);
          expectSoftmaxMatches(x, y, dim,
                               "softmax " + name(k, in, out) + " " +
                                   x.describe() + " dim " +
                                   std::to_string(dim));
        }
}

TEST_P(CudaSoftmaxTest, InPlace) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  for (Layout layout : kLayouts)
    for (int64_t dim = 0; dim < 4; ++dim) {
      Buf x(k, {2, 4, 3, 96}, layout);
      x.fill(18, -4, 4);
      expectSoftmaxMatches(x, x, dim,
                           "softmax in place " + x.describe() + " dim " +
                               std::to_string(dim));
    }
}

TEST_P(CudaSoftmaxTest, LargeValuesAndInfinities) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  const float inf = std::numeric_limits<float>::infinity();
  for (bool transposed : {false, true}) {
    // Rows of 9 along dim 1, or along dim 0 (a thread per row): row 0
    // near 1e4 (only the max subtraction keeps exp finite), row 1 with
    // masked (-inf) entries, row 2 holding a NaN, row 3 only -inf.
    Buf x(k,
          transposed ? std::vector<int64_t>{9, 4} : std::vector<int64_t>{4, 9});
    Buf y(k, x.values.sizes);
    x.fill(19, -3, 3);
    auto set = [&](int64_t row, int64_t i, float v) {
      x.set(transposed ? i * 4 + row : row * 9 + i, v);
    };
    for (int64_t i = 0; i < 9; ++i) {
      set(0, i, 1e4f + float(i));
      set(3, i, -inf);
    }
    for (int64_t i : {0, 4, 8})
      set(1, i, -inf);
    set(2, 5, std::nanf(""));
    expectSoftmaxMatches(x, y, transposed ? 0 : 1,
                         "softmax special values " + x.describe());
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, CudaSoftmaxTest, ::testing::ValuesIn(kKinds),
                         [](const auto &info) {
                           return std::string(toString(info.param));
                         });

//===----------------------------------------------------------------------===//
// Convolution (cuDNN) and linear (cuBLAS)
//===----------------------------------------------------------------------===//

struct ConvCase {
  const char *name;
  int64_t n, c, h, w, o, kh, kw;
  int64_t stride, padTop, padLeft, padBottom, padRight, dilation, groups;
  bool bias, residual, relu;
};

void PrintTo(const ConvCase &c, std::ostream *os) { *os << c.name; }

const ConvCase kConvCases[] = {
    {"Same3x3", 2, 16, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, false, false,
     false},
    {"ResNetStem7x7Stride2", 2, 3, 32, 32, 16, 7, 7, 2, 3, 3, 3, 3, 1, 1, false,
     false, false},
    {"Pointwise", 2, 64, 7, 7, 32, 1, 1, 1, 0, 0, 0, 0, 1, 1, false, false,
     false},
    {"PointwiseStride2", 1, 32, 9, 9, 64, 1, 1, 2, 0, 0, 0, 0, 1, 1, false,
     false, false},
    {"BiasResidualRelu", 2, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true,
     true},
    {"Grouped", 1, 16, 6, 6, 32, 3, 3, 1, 1, 1, 1, 1, 1, 4, true, false, false},
    {"Dilated", 1, 8, 10, 10, 8, 3, 3, 1, 2, 2, 2, 2, 2, 1, false, false, true},
    {"AsymmetricPadding", 1, 8, 7, 6, 8, 3, 2, 2, 0, 1, 2, 0, 1, 1, true, false,
     false},
    {"OddChannels", 2, 5, 5, 5, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, false,
     true},
    {"OnePixel", 4, 32, 1, 1, 16, 1, 1, 1, 0, 0, 0, 0, 1, 1, true, false,
     false},
};

class CudaConvTest
    : public ::testing::TestWithParam<std::tuple<Kind, ConvCase>> {};

TEST_P(CudaConvTest, MatchesTheCpuReference) {
  MEMFMT_REQUIRE_CUDA(env());
  auto [k, cs] = GetParam();
  int64_t kh = cs.kh, kw = cs.kw;
  int64_t oh = (cs.h + cs.padTop + cs.padBottom - cs.dilation * (kh - 1) - 1) /
                   cs.stride +
               1;
  int64_t ow = (cs.w + cs.padLeft + cs.padRight - cs.dilation * (kw - 1) - 1) /
                   cs.stride +
               1;
  for (Layout layout : kLayouts)
    for (Layout weightLayout : {layout, C}) {
      Buf x(k, {cs.n, cs.c, cs.h, cs.w}, layout);
      Buf w(k, {cs.o, cs.c / cs.groups, kh, kw}, weightLayout);
      Buf b(k, {cs.o});
      Buf r(k, {cs.n, cs.o, oh, ow}, layout);
      Buf y(k, {cs.n, cs.o, oh, ow}, layout);
      x.fill(11);
      w.fill(12, -0.5, 0.5);
      b.fill(13);
      r.fill(14);
      std::string what =
          std::string(cs.name) + " " + x.describe() + " weight " + w.describe();
      const memfmt_memref_t *dy = y.device(env().gpu);
      const memfmt_memref_t *db = b.device(env().gpu);
      // Cases without relu fuse ReLU6 (clamp to [0, 6]) instead, the
      // activation epilogue the mobile CNNs use.
      int64_t activation = cs.relu ? 0 : MEMFMT_ELTWISE_CLAMP;
      ASSERT_EQ(MEMFMT_ENTRY(conv2d, k)(
                    env().gpu, 6, x.device(env().gpu), w.device(env().gpu),
                    cs.bias ? db : dy, cs.residual ? r.device(env().gpu) : dy,
                    dy, cs.stride, cs.stride, cs.padTop, cs.padLeft,
                    cs.padBottom, cs.padRight, cs.dilation, cs.dilation,
                    cs.groups, cs.bias, cs.residual, cs.relu, activation, 0.0,
                    6.0),
                MEMFMT_STATUS_OK)
          << what << ": " << memfmt_context_last_error(env().gpu);
      const memfmt_memref_t *hy = y.host();
      ASSERT_EQ(MEMFMT_ENTRY(conv2d, k)(
                    env().cpu, 6, x.host(), w.host(), cs.bias ? b.host() : hy,
                    cs.residual ? r.host() : hy, hy, cs.stride, cs.stride,
                    cs.padTop, cs.padLeft, cs.padBottom, cs.padRight,
                    cs.dilation, cs.dilation, cs.groups, cs.bias, cs.residual,
                    cs.relu, activation, 0.0, 6.0),
                MEMFMT_STATUS_OK);
      expectMatch(y, y.download(), Match::Reduction, what);
      std::string impl = env().implOf(6);
      EXPECT_EQ(impl.rfind("cudnn_", 0), 0u) << what << ": " << impl;
      // Channels-last runs cuDNN's NHWC kernels where cuDNN surely has them
      // (ResNet's convolutions: channel counts that fill 16-byte vectors,
      // one group, no dilation). Elsewhere cuDNN may have no NHWC algorithm
      // and the backend falls back to NCHW through packed copies, which is
      // correct (checked above) and printed. (A 1x1 output is both
      // formats: cuDNN may take either.)
      bool nhwcKnown =
          cs.c % 8 == 0 && cs.o % 8 == 0 && cs.groups == 1 && cs.dilation == 1;
      if (layout == CL && weightLayout == CL && cs.padTop == cs.padBottom &&
          cs.padLeft == cs.padRight && oh * ow > 1) {
        bool nhwc = impl == "cudnn_nhwc" || impl == "cudnn_nhwc_fused";
        if (nhwcKnown)
          EXPECT_TRUE(nhwc) << what << ": " << impl;
        else if (!nhwc)
          std::printf("note: %s ran %s\n", what.c_str(), impl.c_str());
      }
      // A bias on a packed output goes into cuDNN's fused convolution
      // unless cuDNN refuses it for the shape (printed).
      if (cs.bias && layout != CLS && layout != S &&
          impl.find("_fused") == std::string::npos)
        std::printf("note: %s ran %s, not fused\n", what.c_str(), impl.c_str());
    }
}

/// The gradients (f32, and f16 or bf16 activations and weight copy with f32
/// weight gradients, as a mixed-precision step runs): every gradient mask, both
/// formats and the strided layouts, against the CPU's convolution_backward.
TEST_P(CudaConvTest, BackwardMatchesTheCpuReference) {
  MEMFMT_REQUIRE_CUDA(env());
  auto [k, cs] = GetParam();
  int64_t kh = cs.kh, kw = cs.kw;
  int64_t oh = (cs.h + cs.padTop + cs.padBottom - cs.dilation * (kh - 1) - 1) /
                   cs.stride +
               1;
  int64_t ow = (cs.w + cs.padLeft + cs.padRight - cs.dilation * (kw - 1) - 1) /
                   cs.stride +
               1;
  const bool asymmetric =
      cs.padTop != cs.padBottom || cs.padLeft != cs.padRight;
  for (Layout layout : kLayouts)
    for (int mask : {7, 3, 6}) {
      Buf x(k, {cs.n, cs.c, cs.h, cs.w}, layout),
          w(k, {cs.o, cs.c / cs.groups, kh, kw}, layout),
          go(k, {cs.n, cs.o, oh, ow}, layout);
      Buf gx(k, {cs.n, cs.c, cs.h, cs.w}, layout),
          gw(Kind::F32, {cs.o, cs.c / cs.groups, kh, kw}, layout),
          gb(Kind::F32, {cs.o});
      x.fill(51);
      w.fill(52, -0.5, 0.5);
      go.fill(53);
      std::string what = std::string(cs.name) + " backward " + x.describe() +
                         " mask " + std::to_string(mask);
      const memfmt_memref_t *dgx = gx.device(env().gpu),
                            *dgw = gw.device(env().gpu),
                            *dgb = gb.device(env().gpu);
      int32_t s = MEMFMT_TRAINING_ENTRY(convolution_backward, k)(
          env().gpu, 7, go.device(env().gpu), x.device(env().gpu),
          w.device(env().gpu), dgx, dgw, dgb, cs.stride, cs.stride, cs.padTop,
          cs.padLeft, cs.padBottom, cs.padRight, cs.dilation, cs.dilation,
          cs.groups, mask & 1, (mask >> 1) & 1, (mask >> 2) & 1);
      if (asymmetric) {
        EXPECT_EQ(s, MEMFMT_STATUS_UNSUPPORTED) << what;
        EXPECT_NE(std::string(memfmt_context_last_error(env().gpu))
                      .find("asymmetric padding"),
                  std::string::npos)
            << memfmt_context_last_error(env().gpu);
        continue;
      }
      ASSERT_EQ(s, MEMFMT_STATUS_OK)
          << what << ": " << memfmt_context_last_error(env().gpu);
      ASSERT_EQ(MEMFMT_TRAINING_ENTRY(convolution_backward, k)(
                    env().cpu, 7, go.host(), x.host(), w.host(), gx.host(),
                    gw.host(), gb.host(), cs.stride, cs.stride, cs.padTop,
                    cs.padLeft, cs.padBottom, cs.padRight, cs.dilation,
                    cs.dilation, cs.groups, mask & 1, (mask >> 1) & 1,
                    (mask >> 2) & 1),
                MEMFMT_STATUS_OK);
      expectMatch(gx, gx.download(), Match::Reduction, what + " grad_input");
      // cuDNN writes a bf16 step's weight and bias gradients in bf16 (the
      // CPU's oneDNN in f32).
      expectMatch(gw, gw.download(), Match::Reduction, what + " grad_weight",
                  k);
      expectMatch(gb, gb.download(), Match::Reduction, what + " grad_bias", k);
      std::string impl = env().implOf(7);
      EXPECT_EQ(impl.rfind("cudnn_", 0), 0u) << what << ": " << impl;
      if (layout == CL && cs.c % 8 == 0 && cs.o % 8 == 0 && cs.groups == 1 &&
          cs.dilation == 1 && oh * ow > 1 && cs.h * cs.w > 1)
        EXPECT_EQ(impl, "cudnn_nhwc") << what;
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaConvTest,
                         ::testing::Combine(::testing::ValuesIn(kKinds),
                                            ::testing::ValuesIn(kConvCases)),
                         [](const auto &info) {
                           return std::string(
                                      toString(std::get<0>(info.param))) +
                                  "_" + std::get<1>(info.param).name;
                         });

/// conv2d with the residual in the output buffer (the compiler's in-place
/// residual): cuDNN accumulates into it (beta = 1), or with a bias its fused
/// convolution reads it as z and writes the sum over it.
TEST(CudaConvTest, ResidualInPlace) {
  MEMFMT_REQUIRE_CUDA(env());
  for (Kind k : kKinds)
    for (Layout layout : {C, CL})
      for (int bias : {0, 1}) {
        Buf x(k, {2, 8, 6, 6}, layout), w(k, {8, 8, 3, 3}, layout);
        Buf b(k, {8});
        Buf y(k, {2, 8, 6, 6}, layout);
        x.fill(15);
        w.fill(16, -0.3, 0.3);
        b.fill(18);
        y.fill(17); // The residual.
        std::string what = std::string("residual in place ") +
                           (bias ? "with bias " : "") + y.describe();
        const memfmt_memref_t *dy = y.device(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(conv2d, k)(
                      env().gpu, 7, x.device(env().gpu), w.device(env().gpu),
                      bias ? b.device(env().gpu) : dy, dy, dy, 1, 1, 1, 1, 1, 1,
                      1, 1, 1, bias, 1, 1, 0, 0.0, 0.0),
                  MEMFMT_STATUS_OK)
            << what << ": " << memfmt_context_last_error(env().gpu);
        std::string impl = env().implOf(7);
        const memfmt_memref_t *hy = y.host();
        ASSERT_EQ(MEMFMT_ENTRY(conv2d, k)(env().cpu, 7, x.host(), w.host(),
                                          bias ? b.host() : hy, hy, hy, 1, 1, 1,
                                          1, 1, 1, 1, 1, 1, bias, 1, 1, 0,
                                          0.0, 0.0),
                  MEMFMT_STATUS_OK);
        expectMatch(y, y.download(), Match::Reduction,
                    what + " (" + impl + ")");
      }
}

class CudaLinearTest : public ::testing::TestWithParam<Kind> {};

TEST_P(CudaLinearTest, LayoutsBiasAndEdgeShapes) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  struct Case {
    int64_t n, kk, m;
  };
  for (Case c :
       {Case{4, 64, 32}, Case{1, 2048, 1000}, Case{3, 7, 5}, Case{8, 16, 1}})
    for (Layout li : {C, S, CLS})
      for (Layout lw : {C, S})
        for (Layout lo : {C, S})
          for (int bias : {0, 1}) {
            Buf x(k, {c.n, c.kk}, li), w(k, {c.m, c.kk}, lw), b(k, {c.m});
            Buf y(k, {c.n, c.m}, lo);
            x.fill(18);
            w.fill(19, -0.1, 0.1);
            b.fill(20);
            // With the bias, the fused GELU epilogue too (ConvNeXt's MLP).
            const int64_t act = bias ? MEMFMT_ELTWISE_GELU_ERF : 0;
            std::string what = "linear " + x.describe() + " " + w.describe() +
                               " -> " + y.describe() + (act ? " gelu" : "");
            const memfmt_memref_t *dy = y.device(env().gpu);
            ASSERT_EQ(MEMFMT_ENTRY(linear, k)(env().gpu, 8, x.device(env().gpu),
                                              w.device(env().gpu),
                                              bias ? b.device(env().gpu) : dy,
                                              dy, bias, act, 0.0, 0.0),
                      MEMFMT_STATUS_OK)
                << what << ": " << memfmt_context_last_error(env().gpu);
            const memfmt_memref_t *hy = y.host();
            ASSERT_EQ(MEMFMT_ENTRY(linear, k)(env().cpu, 8, x.host(), w.host(),
                                              bias ? b.host() : hy, hy, bias,
                                              act, 0.0, 0.0),
                      MEMFMT_STATUS_OK);
            expectMatch(y, y.download(), Match::Reduction, what);
          }
}

INSTANTIATE_TEST_SUITE_P(Kinds, CudaLinearTest, ::testing::ValuesIn(kKinds),
                         [](const auto &info) {
                           return std::string(toString(info.param));
                         });

//===----------------------------------------------------------------------===//
// Pooling and its gradients
//===----------------------------------------------------------------------===//

struct PoolCase {
  const char *name;
  int64_t n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
  bool ceil;
};

void PrintTo(const PoolCase &c, std::ostream *os) { *os << c.name; }

int64_t pooledSize(int64_t in, int64_t k, int64_t s, int64_t pa, int64_t pb,
                   int64_t d, bool ceil) {
  int64_t room = in + pa + pb - d * (k - 1) - 1;
  int64_t out = (ceil ? (room + s - 1) / s : room / s) + 1;
  if (ceil && (out - 1) * s >= in + pa)
    --out;
  return out;
}

const PoolCase kPoolCases[] = {
    {"ResNet3x3Stride2", 2, 64, 16, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false},
    {"TwoByTwo", 1, 8, 6, 8, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false},
    {"CeilOddChannels", 2, 3, 8, 10, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true},
    {"Dilation", 1, 16, 9, 10, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, false},
    {"OnePixel", 2, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, false},
};

class CudaPoolTest
    : public ::testing::TestWithParam<std::tuple<Kind, PoolCase>> {};

TEST_P(CudaPoolTest, MaxWithAndWithoutIndices) {
  MEMFMT_REQUIRE_CUDA(env());
  auto [k, cs] = GetParam();
  int64_t oh = pooledSize(cs.h, cs.kh, cs.sh, cs.pt, cs.pt, cs.dh, cs.ceil);
  int64_t ow = pooledSize(cs.w, cs.kw, cs.sw, cs.pl, cs.pl, cs.dw, cs.ceil);
  for (Layout in : kLayouts)
    for (Layout out : {in, C}) {
      Buf x(k, {cs.n, cs.c, cs.h, cs.w}, in), y(k, {cs.n, cs.c, oh, ow}, out);
      x.fill(21);
      if (k == Kind::F32 && x.values.numElements() > 7)
        x.set(7, std::nanf(""));
      IndexBuf idx({cs.n, cs.c, oh, ow}, out);
      std::string what = std::string(cs.name) + " " + name(k, in, out);
      const memfmt_memref_t *dy = y.device(env().gpu);
      ASSERT_EQ(MEMFMT_ENTRY(max_pool2d_with_indices,
                             k)(env().gpu, 9, x.device(env().gpu), dy,
                                idx.device(env().gpu), cs.kh, cs.kw, cs.sh,
                                cs.sw, cs.pt, cs.pl, cs.dh, cs.dw),
                MEMFMT_STATUS_OK)
          << what << ": " << memfmt_context_last_error(env().gpu);
      ASSERT_EQ(MEMFMT_ENTRY(max_pool2d_with_indices, k)(
                    env().cpu, 9, x.host(), y.host(), idx.host(), cs.kh, cs.kw,
                    cs.sh, cs.sw, cs.pt, cs.pl, cs.dh, cs.dw),
                MEMFMT_STATUS_OK);
      expectMatch(y, y.download(), Match::Exact, "max_pool2d " + what);
      TestTensor<int64_t> gpuIdx = idx.download();
      for (int64_t i = 0; i < idx.values.numElements(); ++i)
        ASSERT_EQ(gpuIdx.flat(i), idx.values.flat(i))
            << what << ": index " << i;
      if (in == CL && out == CL && cs.c % 8 == 0)
        EXPECT_EQ(env().implOf(9), "nhwc_vec") << what;

      Buf y2(k, {cs.n, cs.c, oh, ow}, out);
      const memfmt_memref_t *dy2 = y2.device(env().gpu);
      ASSERT_EQ(MEMFMT_ENTRY(max_pool2d, k)(env().gpu, 10, x.device(env().gpu),
                                            dy2, cs.kh, cs.kw, cs.sh, cs.sw,
                                            cs.pt, cs.pl, cs.dh, cs.dw),
                MEMFMT_STATUS_OK);
      ASSERT_EQ(MEMFMT_ENTRY(max_pool2d, k)(env().cpu, 10, x.host(), y2.host(),
                                            cs.kh, cs.kw, cs.sh, cs.sw, cs.pt,
                                            cs.pl, cs.dh, cs.dw),
                MEMFMT_STATUS_OK);
      expectMatch(y2, y2.download(), Match::Exact, "max_pool2d " + what);

      // The gradient through the indices.
      Buf go(k, {cs.n, cs.c, oh, ow}, out), gi(k, {cs.n, cs.c, cs.h, cs.w}, in);
      go.fill(22);
      const memfmt_memref_t *dgi = gi.device(env().gpu);
      ASSERT_EQ(MEMFMT_ENTRY(max_pool2d_with_indices_backward,
                             k)(env().gpu, 11, go.device(env().gpu),
                                idx.device(env().gpu), dgi, cs.kh, cs.kw, cs.sh,
                                cs.sw, cs.pt, cs.pl, cs.dh, cs.dw),
                MEMFMT_STATUS_OK)
          << memfmt_context_last_error(env().gpu);
      ASSERT_EQ(MEMFMT_ENTRY(max_pool2d_with_indices_backward, k)(
                    env().cpu, 11, go.host(), idx.host(), gi.host(), cs.kh,
                    cs.kw, cs.sh, cs.sw, cs.pt, cs.pl, cs.dh, cs.dw),
                MEMFMT_STATUS_OK);
      expectMatch(gi, gi.download(), Match::Reduction,
                  "max_pool2d_with_indices_backward " + what);
    }
}

TEST_P(CudaPoolTest, AverageWithAndWithoutPadding) {
  MEMFMT_REQUIRE_CUDA(env());
  auto [k, cs] = GetParam();
  if (cs.dh != 1 || cs.dw != 1)
    GTEST_SKIP() << "average pooling has no dilation";
  for (int countPad : {0, 1})
    for (Layout in : kLayouts) {
      // Asymmetric: one more row of padding at the bottom.
      int64_t pb = cs.pb + (cs.kh > 1 ? 1 : 0);
      int64_t oh = pooledSize(cs.h, cs.kh, cs.sh, cs.pt, pb, 1, cs.ceil);
      int64_t ow = pooledSize(cs.w, cs.kw, cs.sw, cs.pl, cs.pr, 1, cs.ceil);
      Buf x(k, {cs.n, cs.c, cs.h, cs.w}, in), y(k, {cs.n, cs.c, oh, ow}, in);
      x.fill(23);
      std::string what = std::string(cs.name) + " " + name(k, in, in) +
                         (countPad ? " count_include_pad" : "");
      const memfmt_memref_t *dy = y.device(env().gpu);
      int32_t s = MEMFMT_ENTRY(avg_pool2d, k)(
          env().gpu, 12, x.device(env().gpu), dy, cs.kh, cs.kw, cs.sh, cs.sw,
          cs.pt, cs.pl, pb, cs.pr, countPad);
      int32_t cpuStatus = MEMFMT_ENTRY(avg_pool2d, k)(
          env().cpu, 12, x.host(), y.host(), cs.kh, cs.kw, cs.sh, cs.sw, cs.pt,
          cs.pl, pb, cs.pr, countPad);
      ASSERT_EQ(s, cpuStatus)
          << what << ": " << memfmt_context_last_error(env().gpu);
      if (s != MEMFMT_STATUS_OK)
        continue; // A window over padding only: both reject it.
      expectMatch(y, y.download(), Match::Reduction, "avg_pool2d " + what);
      // The gradient (f32 and bf16, as in training), into a grad_input of
      // any layout, from a grad_output in the input's.
      if (k == Kind::F16)
        continue;
      for (Layout out : kLayouts) {
        Buf gy(k, {cs.n, cs.c, oh, ow}, in),
            gx(k, {cs.n, cs.c, cs.h, cs.w}, out);
        gy.fill(24);
        const memfmt_memref_t *dgx = gx.device(env().gpu);
        ASSERT_EQ(MEMFMT_TRAINING_ENTRY(avg_pool2d_backward, k)(
                      env().gpu, 13, gy.device(env().gpu), dgx, cs.kh, cs.kw,
                      cs.sh, cs.sw, cs.pt, cs.pl, pb, cs.pr, countPad),
                  MEMFMT_STATUS_OK)
            << what << ": " << memfmt_context_last_error(env().gpu);
        ASSERT_EQ(MEMFMT_TRAINING_ENTRY(avg_pool2d_backward, k)(
                      env().cpu, 13, gy.host(), gx.host(), cs.kh, cs.kw, cs.sh,
                      cs.sw, cs.pt, cs.pl, pb, cs.pr, countPad),
                  MEMFMT_STATUS_OK);
        expectMatch(gx, gx.download(), Match::Reduction,
                    "avg_pool2d_backward " + what + " -> " + toString(out));
        if (in == CL && out == CL)
          EXPECT_EQ(env().implOf(13).rfind("nhwc", 0), 0u) << what;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaPoolTest,
                         ::testing::Combine(::testing::ValuesIn(kKinds),
                                            ::testing::ValuesIn(kPoolCases)),
                         [](const auto &info) {
                           return std::string(
                                      toString(std::get<0>(info.param))) +
                                  "_" + std::get<1>(info.param).name;
                         });

class CudaAdaptiveTest : public ::testing::TestWithParam<Kind> {};

TEST_P(CudaAdaptiveTest, ForwardAndBackward) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  struct Case {
    int64_t n, c, h, w, oh, ow;
  };
  for (Case cs : {Case{2, 64, 7, 7, 1, 1}, Case{1, 3, 10, 7, 4, 3},
                  Case{2, 8, 3, 2, 5, 4}, Case{1, 16, 1, 1, 1, 1},
                  Case{2, 2048, 7, 7, 1, 1}})
    for (Layout in : kLayouts)
      for (Layout out : {in, C}) {
        Buf x(k, {cs.n, cs.c, cs.h, cs.w}, in);
        Buf y(k, {cs.n, cs.c, cs.oh, cs.ow}, out);
        x.fill(24);
        std::string what = name(k, in, out) + " " + x.describe() + " -> " +
                           std::to_string(cs.oh) + "x" + std::to_string(cs.ow);
        const memfmt_memref_t *dy = y.device(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(adaptive_avg_pool2d, k)(env().gpu, 13,
                                                       x.device(env().gpu), dy),
                  MEMFMT_STATUS_OK)
            << memfmt_context_last_error(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(adaptive_avg_pool2d, k)(env().cpu, 13, x.host(),
                                                       y.host()),
                  MEMFMT_STATUS_OK);
        expectMatch(y, y.download(), Match::Reduction,
                    "adaptive_avg_pool2d " + what);

        Buf go(k, {cs.n, cs.c, cs.oh, cs.ow}, out);
        Buf gi(k, {cs.n, cs.c, cs.h, cs.w}, in);
        go.fill(25);
        const memfmt_memref_t *dgi = gi.device(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(adaptive_avg_pool2d_backward,
                               k)(env().gpu, 14, go.device(env().gpu), dgi),
                  MEMFMT_STATUS_OK)
            << memfmt_context_last_error(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(adaptive_avg_pool2d_backward,
                               k)(env().cpu, 14, go.host(), gi.host()),
                  MEMFMT_STATUS_OK);
        expectMatch(gi, gi.download(), Match::Reduction,
                    "adaptive_avg_pool2d_backward " + what);
        if (in == CL && out == CL && cs.c % 8 == 0)
          EXPECT_EQ(env().implOf(14), "nhwc_vec") << what;
      }
}

INSTANTIATE_TEST_SUITE_P(Kinds, CudaAdaptiveTest, ::testing::ValuesIn(kKinds),
                         [](const auto &info) {
                           return std::string(toString(info.param));
                         });

//===----------------------------------------------------------------------===//
// Load-time batch-norm folding
//===----------------------------------------------------------------------===//

TEST(CudaFoldBatchNormTest, MatchesTheCpuReference) {
  MEMFMT_REQUIRE_CUDA(env());
  for (Kind k : kKinds)
    for (Layout layout : {C, CL, S})
      for (int hasBias : {0, 1}) {
        Buf w(k, {8, 4, 3, 3}, layout), bias(k, {8}), gamma(k, {8}),
            beta(k, {8}), mean(k, {8}), var(k, {8});
        Buf outW(k, {8, 4, 3, 3}, layout), outB(k, {8});
        w.fill(26);
        bias.fill(27);
        gamma.fill(28, 0.5, 1.5);
        beta.fill(29);
        mean.fill(30);
        var.fill(31, 0.5, 1.5);
        std::string what = std::string("fold_batch_norm ") + w.describe();
        const memfmt_memref_t *dw = outW.device(env().gpu);
        const memfmt_memref_t *db = outB.device(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(fold_batch_norm, k)(
                      env().gpu, 15, w.device(env().gpu),
                      hasBias ? bias.device(env().gpu) : db,
                      gamma.device(env().gpu), beta.device(env().gpu),
                      mean.device(env().gpu), var.device(env().gpu), dw, db,
                      1e-5, hasBias),
                  MEMFMT_STATUS_OK)
            << memfmt_context_last_error(env().gpu);
        ASSERT_EQ(MEMFMT_ENTRY(fold_batch_norm, k)(
                      env().cpu, 15, w.host(),
                      hasBias ? bias.host() : outB.host(), gamma.host(),
                      beta.host(), mean.host(), var.host(), outW.host(),
                      outB.host(), 1e-5, hasBias),
                  MEMFMT_STATUS_OK);
        expectMatch(outW, outW.download(), Match::Elementwise, what);
        expectMatch(outB, outB.download(), Match::Elementwise, what + " bias");
      }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(CudaErrorTest, ValidationIsTheSameOnTheGpu) {
  MEMFMT_REQUIRE_CUDA(env());
  Buf x(Kind::F32, {2, 3, 4, 4}), y(Kind::F32, {2, 3, 4, 5});
  EXPECT_EQ(_mlir_ciface_memfmt_relu_f32(env().gpu, 16, x.device(env().gpu),
                                         y.device(env().gpu)),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memfmt_context_last_error(env().gpu))
                .find("memfmt_relu_f32 (node 16): output has shape [2, 3, 4, "
                      "5], expected [2, 3, 4, 4]"),
            std::string::npos)
      << memfmt_context_last_error(env().gpu);
}

} // namespace
