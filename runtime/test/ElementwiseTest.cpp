//===- ElementwiseTest.cpp - Elementwise kernels, batch_norm and copy -----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The memory-bound kernels on the reference and fast kernels against
// Naive.h: every test layout for inputs and outputs (same and mixed), ranks
// 0 to 5 where the kernel takes any rank, broadcasting in add and binary
// (both sides, lower ranks, scalars), every eltwise function (with its
// special values: NaN, infinities, the corners of the hard ops), batch norm
// over ranks 2 to 5, in-place calls, NaN through relu, and copy's layout
// conversions (NCHW <-> NHWC, strided views,
// tensors that are both formats at once). The fast path must be taken where
// the layouts are the ones it specialises.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

const std::vector<std::vector<int64_t>> kShapes = {
    {},           {7},          {3, 5},       {2, 3, 4},       {3, 5, 7, 9},
    {1, 1, 1, 1}, {2, 1, 4, 4}, {4, 6, 1, 1}, {2, 3, 2, 3, 4}, {0, 3, 2, 2}};

const std::pair<Layout, Layout> kLayoutPairs[] = {
    {C, C}, {CL, CL}, {CLS, CLS}, {S, S}, {C, CL}, {CL, C}, {S, CL}, {CLS, C}};

//===----------------------------------------------------------------------===//
// relu
//===----------------------------------------------------------------------===//

TEST(ReluTest, MatchesNaiveInEveryLayoutAndRank) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const auto &shape : kShapes) {
      for (auto [inLayout, outLayout] : kLayoutPairs) {
        Tensor in(shape, inLayout), out(shape, outLayout);
        in.fillRandom(21);
        if (in.numElements() > 2)
          in.flat(1) = std::numeric_limits<float>::quiet_NaN();
        Expected want;
        for (int64_t i = 0; i < in.numElements(); ++i) {
          want.value.push_back(naiveRelu(in.flat(i)));
          want.magnitude.push_back(0);
        }
        std::string what = std::string(toString(kernels)) + " " +
                           in.describe() + " -> " + out.describe();
        EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_relu_f32(
                                  ctx, node, in.memref(), out.memref()))
            << what;
        expectClose(out, want, 0, what);
        if (kernels == MEMFMT_KERNELS_FAST && inLayout == outLayout &&
            (inLayout == C || inLayout == CL) && in.numElements() > 0) {
          EXPECT_EQ(ctx.implOf(node), "dense") << what;
        }
        ++node;
      }
    }
  }
}

TEST(ReluTest, InPlace) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    for (Layout layout : {C, CL, S}) {
      TestContext ctx(kernels);
      Tensor t({2, 3, 4, 5}, layout);
      t.fillRandom(22);
      Expected want;
      for (int64_t i = 0; i < t.numElements(); ++i) {
        want.value.push_back(naiveRelu(t.flat(i)));
        want.magnitude.push_back(0);
      }
      EXPECT_KERNEL_OK(
          ctx, _mlir_ciface_memfmt_relu_f32(ctx, 0, t.memref(), t.memref()));
      expectClose(t, want, 0, t.describe());
    }
  }
}

//===----------------------------------------------------------------------===//
// add
//===----------------------------------------------------------------------===//

struct AddCase {
  const char *name;
  std::vector<int64_t> lhs, rhs, out;
};

const AddCase kAddCases[] = {
    {"SameShape", {3, 5, 7, 9}, {3, 5, 7, 9}, {3, 5, 7, 9}},
    {"ChannelBias", {2, 4, 3, 5}, {1, 4, 1, 1}, {2, 4, 3, 5}},
    {"LowerRank", {2, 4, 3, 5}, {4, 1, 1}, {2, 4, 3, 5}},
    {"BothSides", {2, 1, 3, 1}, {1, 4, 1, 5}, {2, 4, 3, 5}},
    {"Scalar", {}, {2, 3, 4, 5}, {2, 3, 4, 5}},
    {"Rank5", {2, 3, 2, 3, 4}, {2, 3, 2, 3, 4}, {2, 3, 2, 3, 4}},
    {"Vector", {6}, {1}, {6}},
    {"OnePixel", {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}},
    {"Empty", {0, 3, 2, 2}, {1, 3, 1, 1}, {0, 3, 2, 2}},
};

TEST(AddTest, MatchesNaiveWithBroadcasting) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const AddCase &ac : kAddCases) {
      for (auto [inLayout, outLayout] : kLayoutPairs) {
        Tensor l(ac.lhs, inLayout), r(ac.rhs, outLayout == C ? S : inLayout);
        Tensor out(ac.out, outLayout);
        l.fillRandom(23);
        r.fillRandom(24);
        std::string what = std::string(toString(kernels)) + " " + ac.name +
                           " " + l.describe() + " + " + r.describe() + " -> " +
                           out.describe();
        EXPECT_KERNEL_OK(ctx,
                         _mlir_ciface_memfmt_add_f32(ctx, node, l.memref(),
                                                     r.memref(), out.memref()))
            << what;
        expectClose(out, naiveAdd(l, r, ac.out), 0, what);
        ++node;
      }
    }
  }
}

TEST(AddTest, DenseFastPathAndInPlace) {
  for (Layout layout : {C, CL}) {
    TestContext ctx(MEMFMT_KERNELS_FAST);
    Tensor l({2, 8, 5, 5}, layout), r({2, 8, 5, 5}, layout);
    l.fillRandom(25);
    r.fillRandom(26);
    Expected want = naiveAdd(l, r, l.sizes);
    // In place: the output is lhs.
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_add_f32(ctx, 1, l.memref(),
                                                      r.memref(), l.memref()));
    expectClose(l, want, 0, l.describe());
    EXPECT_EQ(ctx.implOf(1), "dense");
  }
}

//===----------------------------------------------------------------------===//
// eltwise
//===----------------------------------------------------------------------===//

struct EltwiseCase {
  const char *name;
  int64_t op;
  double alpha, beta;
};

const EltwiseCase kEltwiseCases[] = {
    {"sigmoid", MEMFMT_ELTWISE_SIGMOID, 0, 0},
    {"hardsigmoid", MEMFMT_ELTWISE_HARDSIGMOID, 1.0 / 6.0, 0.5},
    {"hardsigmoid(0.2, 0.5)", MEMFMT_ELTWISE_HARDSIGMOID, 0.2, 0.5},
    {"hardswish", MEMFMT_ELTWISE_HARDSWISH, 0, 0},
    {"relu6", MEMFMT_ELTWISE_CLAMP, 0.0, 6.0},
    {"clamp(-inf, 0.5)", MEMFMT_ELTWISE_CLAMP,
     -std::numeric_limits<double>::infinity(), 0.5},
    {"clamp(1, -1)", MEMFMT_ELTWISE_CLAMP, 1.0, -1.0},
    {"gelu", MEMFMT_ELTWISE_GELU_ERF, 0, 0},
    {"gelu(tanh)", MEMFMT_ELTWISE_GELU_TANH, 0, 0},
    {"silu", MEMFMT_ELTWISE_SILU, 0, 0},
};

/// ATen's formulas in double, written independently of ElementwiseMath.h.
double naiveEltwise(const EltwiseCase &c, double x) {
  auto clamp = [](double v, double lo, double hi) {
    return std::isnan(v) ? v : std::min(std::max(v, lo), hi);
  };
  switch (c.op) {
  case MEMFMT_ELTWISE_SIGMOID:
    return 1.0 / (1.0 + std::exp(-x));
  case MEMFMT_ELTWISE_HARDSIGMOID:
    return clamp(c.alpha * x + c.beta, 0.0, 1.0);
  case MEMFMT_ELTWISE_HARDSWISH:
    return x * clamp(x + 3.0, 0.0, 6.0) / 6.0;
  case MEMFMT_ELTWISE_CLAMP:
    // torch.clamp(x, min, max) = min(max(x, min), max), also for min > max.
    return clamp(x, c.alpha, c.beta);
  case MEMFMT_ELTWISE_GELU_ERF:
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  case MEMFMT_ELTWISE_GELU_TANH:
    return 0.5 * x *
           (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  default:
    return x / (1.0 + std::exp(-x));
  }
}

Expected naiveEltwise(const EltwiseCase &c, const Tensor &in) {
  Expected want;
  for (int64_t i = 0; i < in.numElements(); ++i) {
    want.value.push_back(naiveEltwise(c, in.flat(i)));
    // f32 exp/erf/tanh: a few ulps of the input's size (none at infinity).
    want.magnitude.push_back(std::isfinite(in.flat(i)) ? std::fabs(in.flat(i))
                                                       : 0.0);
  }
  return want;
}

TEST(EltwiseTest, MatchesNaiveInEveryLayoutAndRank) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const EltwiseCase &c : kEltwiseCases) {
      for (const auto &shape : kShapes) {
        for (auto [inLayout, outLayout] : kLayoutPairs) {
          Tensor in(shape, inLayout), out(shape, outLayout);
          in.fillRandom(31);
          for (int64_t i = 0; i < in.numElements(); ++i)
            in.flat(i) *= 4.0f; // reach the clamps' and hard ops' corners
          std::string what = std::string(toString(kernels)) + " " + c.name +
                             " " + in.describe() + " -> " + out.describe();
          EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_eltwise_f32(
                                    ctx, node, in.memref(), out.memref(), c.op,
                                    c.alpha, c.beta))
              << what;
          expectClose(out, naiveEltwise(c, in), 1e-6, what);
          if (kernels == MEMFMT_KERNELS_FAST && inLayout == outLayout &&
              (inLayout == C || inLayout == CL) && in.numElements() > 0) {
            // exp, erf and tanh run on oneDNN's eltwise (ranks 1 and up,
            // in a build with oneDNN); the piecewise-linear functions on
            // the dense loops.
            bool transcendental = memfmt_runtime_has_onednn() &&
                                  in.rank() > 0 &&
                                  (c.op == MEMFMT_ELTWISE_SIGMOID ||
                                  c.op == MEMFMT_ELTWISE_SILU ||
                                  c.op == MEMFMT_ELTWISE_GELU_ERF ||
                                  c.op == MEMFMT_ELTWISE_GELU_TANH);
            EXPECT_EQ(ctx.implOf(node), transcendental ? "onednn" : "dense")
                << what;
          }
          ++node;
        }
      }
    }
  }
}

/// conv2d's activation epilogue (fused_conv2d's `activation`): every
/// function after a depthwise convolution with bias and after a 1x1 one
/// with a residual, in both formats, fast (oneDNN post-ops, or the
/// reference where oneDNN has none) and reference kernels.
TEST(EltwiseTest, FusedIntoConvolution) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const EltwiseCase &c : kEltwiseCases)
      for (Layout layout : {C, CL})
        for (bool depthwise : {true, false}) {
          ConvAttrs a;
          a.groups = depthwise ? 6 : 1;
          a.padTop = a.padLeft = a.padBottom = a.padRight = depthwise ? 1 : 0;
          a.bias = depthwise;
          a.residual = !depthwise;
          int64_t o = depthwise ? 6 : 8, k = depthwise ? 3 : 1;
          Tensor in({2, 6, 5, 7}, layout), w({o, 6 / a.groups, k, k}, layout);
          Tensor b({o}), r({2, o, 5, 7}, layout), out({2, o, 5, 7}, layout);
          in.fillRandom(51);
          w.fillRandom(52);
          b.fillRandom(53);
          r.fillRandom(54);
          for (int64_t i = 0; i < w.numElements(); ++i)
            w.flat(i) *= 3.0f; // reach the clamps' corners
          Expected want = naiveConv(in, w, a.bias ? &b : nullptr,
                                    a.residual ? &r : nullptr, a);
          for (double &v : want.value)
            v = naiveEltwise(c, v);
          std::string what = std::string(toString(kernels)) + " conv + " +
                             c.name + " " + out.describe() +
                             (depthwise ? " depthwise" : " 1x1 + residual");
          EXPECT_KERNEL_OK(
              ctx, _mlir_ciface_memfmt_conv2d_f32(
                       ctx, node, in.memref(), w.memref(),
                       a.bias ? b.memref() : out.memref(),
                       a.residual ? r.memref() : out.memref(), out.memref(),
                       1, 1, a.padTop, a.padLeft, a.padBottom, a.padRight, 1,
                       1, a.groups, a.bias, a.residual, 0, c.op, c.alpha,
                       c.beta))
              << what;
          // The f32 activation adds a few ulps of its input, which the
          // convolution's magnitude bounds.
          expectClose(out, want,
                      std::max(kernels == MEMFMT_KERNELS_REFERENCE
                                   ? kReferenceFactor
                                   : floatSumFactor(6 * k * k),
                               2e-6),
                      what);
          ++node;
        }
  }
}

TEST(EltwiseTest, SpecialValuesAndInPlace) {
  const float inf = std::numeric_limits<float>::infinity();
  const float values[] = {std::numeric_limits<float>::quiet_NaN(),
                          inf,
                          -inf,
                          0.0f,
                          -0.0f,
                          -3.0f,
                          3.0f,
                          88.0f,
                          -88.0f,
                          -104.0f};
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    for (const EltwiseCase &c : kEltwiseCases) {
      Tensor t({1, 10, 1, 1}, CL);
      for (int64_t i = 0; i < 10; ++i)
        t.flat(i) = values[i];
      Expected want = naiveEltwise(c, t);
      std::string what = std::string(toString(kernels)) + " " + c.name;
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_eltwise_f32(
                                ctx, 0, t.memref(), t.memref(), c.op, c.alpha,
                                c.beta))
          << what;
      // NaN stays NaN, infinities map exactly; f32 underflows to 0 where
      // double does not (sigmoid(-104) ~ 7e-46).
      expectClose(t, want, 1e-6, what);
    }
  }
}

//===----------------------------------------------------------------------===//
// binary
//===----------------------------------------------------------------------===//

TEST(BinaryTest, MatchesNaiveWithBroadcasting) {
  const std::pair<int64_t, const char *> ops[] = {
      {MEMFMT_BINARY_MUL, "mul"},
      {MEMFMT_BINARY_SUB, "sub"},
      {MEMFMT_BINARY_DIV, "div"}};
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (auto [op, name] : ops) {
      for (const AddCase &ac : kAddCases) {
        for (auto [inLayout, outLayout] : kLayoutPairs) {
          Tensor l(ac.lhs, inLayout), r(ac.rhs, outLayout == C ? S : inLayout);
          Tensor out(ac.out, outLayout);
          l.fillRandom(33);
          r.fillRandom(34);
          std::string what = std::string(toString(kernels)) + " " + name +
                             " " + ac.name + " " + l.describe() + ", " +
                             r.describe() + " -> " + out.describe();
          EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_binary_f32(
                                    ctx, node, l.memref(), r.memref(),
                                    out.memref(), op))
              << what;
          // sub(a, b) = add(a, -b); mul and div from the broadcast pairs.
          Expected want;
          if (op == MEMFMT_BINARY_SUB) {
            Tensor neg(ac.rhs, C);
            for (int64_t i = 0; i < r.numElements(); ++i)
              neg.flat(i) = -r.flat(i);
            want = naiveAdd(l, neg, ac.out);
          } else {
            // Each operand broadcast to the output: plus zeros of the other.
            auto zeros = [](const std::vector<int64_t> &shape) {
              Tensor t(shape, C);
              for (int64_t i = 0; i < t.numElements(); ++i)
                t.flat(i) = 0.0f;
              return t;
            };
            Expected lhs = naiveAdd(l, zeros(ac.rhs), ac.out);
            Expected rhs = naiveAdd(zeros(ac.lhs), r, ac.out);
            want = lhs;
            for (size_t i = 0; i < want.value.size(); ++i) {
              want.value[i] = op == MEMFMT_BINARY_MUL
                                  ? lhs.value[i] * rhs.value[i]
                                  : lhs.value[i] / rhs.value[i];
              want.magnitude[i] = 0;
            }
          }
          expectClose(out, want, 0, what);
          ++node;
        }
      }
    }
  }
}

TEST(BinaryTest, DenseFastPathAndInPlace) {
  for (Layout layout : {C, CL}) {
    TestContext ctx(MEMFMT_KERNELS_FAST);
    Tensor l({2, 8, 5, 5}, layout), r({2, 8, 5, 5}, layout);
    l.fillRandom(35);
    r.fillRandom(36);
    Expected want;
    for (int64_t i = 0; i < l.numElements(); ++i) {
      want.value.push_back(double(l.flat(i)) * r.flat(i));
      want.magnitude.push_back(0);
    }
    // In place: the output is rhs.
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_binary_f32(
                              ctx, 1, l.memref(), r.memref(), r.memref(),
                              MEMFMT_BINARY_MUL));
    expectClose(r, want, 0, r.describe());
    EXPECT_EQ(ctx.implOf(1), "dense");
  }
}

TEST(BinaryTest, PerChannelFastPath) {
  // A squeeze-excite scale [N, C, 1, 1] (or [1, C, 1, 1]) times an
  // activation in either dense format: one loop over rows or planes.
  for (Layout layout : {C, CL})
    for (std::vector<int64_t> scaleShape : {std::vector<int64_t>{2, 8, 1, 1},
                                            std::vector<int64_t>{1, 8, 1, 1}}) {
      TestContext ctx(MEMFMT_KERNELS_FAST);
      Tensor x({2, 8, 5, 3}, layout), s(scaleShape, C), y({2, 8, 5, 3}, layout);
      x.fillRandom(37);
      s.fillRandom(38);
      std::string what = x.describe() + " * " + s.describe();
      EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_binary_f32(
                                ctx, 2, x.memref(), s.memref(), y.memref(),
                                MEMFMT_BINARY_DIV))
          << what;
      Expected want;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 8; ++c)
          for (int64_t h = 0; h < 5; ++h)
            for (int64_t w = 0; w < 3; ++w) {
              want.value.push_back(
                  double(x.at({n, c, h, w})) /
                  s.at({scaleShape[0] == 1 ? 0 : n, c, 0, 0}));
              want.magnitude.push_back(0);
            }
      expectClose(y, want, 0, what);
      EXPECT_EQ(ctx.implOf(2), "per_channel") << what;
    }
}

TEST(BinaryTest, PerChannelEveryOpSideAndInPlace) {
  // Every function, the scale on either side, into another tensor or in
  // place on the activation (as the memory plan runs a squeeze-excite
  // scale), with 37 channels: whole vectors and a remainder in each row;
  // the scale dense or a strided view (channel stride > 1).
  const int64_t ops[] = {MEMFMT_BINARY_MUL, MEMFMT_BINARY_SUB,
                         MEMFMT_BINARY_DIV};
  int64_t node = 0;
  for (Layout layout : {C, CL})
    for (Layout scaleLayout : {CL, S})
      for (int64_t op : ops)
        for (bool scaleOnLeft : {false, true})
          for (bool inPlace : {false, true}) {
            TestContext ctx(MEMFMT_KERNELS_FAST);
            Tensor x({2, 37, 3, 5}, layout), s({2, 37, 1, 1}, scaleLayout),
                y({2, 37, 3, 5}, layout);
            x.fillRandom(41);
            s.fillRandom(42, 0.5, 2);
            Expected want;
            for (int64_t n = 0; n < 2; ++n)
              for (int64_t c = 0; c < 37; ++c)
                for (int64_t h = 0; h < 3; ++h)
                  for (int64_t w = 0; w < 5; ++w) {
                    float v = x.at({n, c, h, w}), sc = s.at({n, c, 0, 0});
                    float l = scaleOnLeft ? sc : v, r = scaleOnLeft ? v : sc;
                    want.value.push_back(op == MEMFMT_BINARY_MUL   ? l * r
                                         : op == MEMFMT_BINARY_SUB ? l - r
                                                                   : l / r);
                    want.magnitude.push_back(0);
                  }
            Tensor &out = inPlace ? x : y;
            std::string what = "op " + std::to_string(op) + " " + x.describe() +
                               (scaleOnLeft ? " right" : " left") +
                               (inPlace ? " in place" : "");
            EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_binary_f32(
                                      ctx, node,
                                      scaleOnLeft ? s.memref() : x.memref(),
                                      scaleOnLeft ? x.memref() : s.memref(),
                                      out.memref(), op))
                << what;
            expectClose(out, want, 0, what);
            EXPECT_EQ(ctx.implOf(node), "per_channel") << what;
            ++node;
          }
}

TEST(BinaryTest, PerChannelOperandOfLowerRankOnEitherSide) {
  // ConvNeXt's layer scale [C, 1, 1] times (here: minus) an activation, the
  // scale on the left: the same loops, the operands swapped back.
  for (Layout layout : {C, CL}) {
    TestContext ctx(MEMFMT_KERNELS_FAST);
    Tensor s({8, 1, 1}, C), x({2, 8, 5, 3}, layout), y({2, 8, 5, 3}, layout);
    x.fillRandom(39);
    s.fillRandom(40);
    std::string what = s.describe() + " - " + x.describe();
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_binary_f32(
                              ctx, 3, s.memref(), x.memref(), y.memref(),
                              MEMFMT_BINARY_SUB))
        << what;
    Expected want;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 8; ++c)
        for (int64_t h = 0; h < 5; ++h)
          for (int64_t w = 0; w < 3; ++w) {
            want.value.push_back(double(s.at({c, 0, 0})) - x.at({n, c, h, w}));
            want.magnitude.push_back(0);
          }
    expectClose(y, want, 0, what);
    EXPECT_EQ(ctx.implOf(3), "per_channel") << what;
  }
}

TEST(BinaryTest, OneElementOperandEveryOpSideAndInPlace) {
  // A splat constant broadcast over an activation (a vision transformer's
  // attention scale, 0-d; a [1, 1, 1] one): every function and add, the
  // constant on either side, into another tensor or in place; dense layouts
  // take the scalar loop, a strided one the reference.
  const int64_t ops[] = {MEMFMT_BINARY_MUL, MEMFMT_BINARY_SUB,
                         MEMFMT_BINARY_DIV, -1 /* add */};
  int64_t node = 0;
  TestContext ctx(MEMFMT_KERNELS_FAST);
  for (Layout layout : {C, CL, S})
    for (const std::vector<int64_t> &scalarShape :
         {std::vector<int64_t>{}, std::vector<int64_t>{1, 1, 1}})
      for (int64_t op : ops)
        for (bool scalarOnLeft : {false, true})
          for (bool inPlace : {false, true}) {
            Tensor x({2, 12, 3, 5}, layout), s(scalarShape, C),
                y({2, 12, 3, 5}, layout);
            x.fillRandom(43);
            s.fillRandom(44, 0.5, 2);
            const float sc = s.flat(0);
            Expected want;
            for (int64_t i = 0; i < x.numElements(); ++i) {
              float v = x.flat(i);
              float l = scalarOnLeft ? sc : v, r = scalarOnLeft ? v : sc;
              want.value.push_back(op == MEMFMT_BINARY_MUL   ? l * r
                                   : op == MEMFMT_BINARY_SUB ? l - r
                                   : op == MEMFMT_BINARY_DIV ? l / r
                                                             : l + r);
              want.magnitude.push_back(0);
            }
            Tensor &out = inPlace ? x : y;
            const Tensor &lhs = scalarOnLeft ? s : x,
                         &rhs = scalarOnLeft ? x : s;
            std::string what = "op " + std::to_string(op) + " " + x.describe() +
                               " scalar " + s.describe() +
                               (scalarOnLeft ? " left" : " right") +
                               (inPlace ? " in place" : "");
            EXPECT_KERNEL_OK(ctx, op < 0 ? _mlir_ciface_memfmt_add_f32(
                                               ctx, node, lhs.memref(),
                                               rhs.memref(), out.memref())
                                         : _mlir_ciface_memfmt_binary_f32(
                                               ctx, node, lhs.memref(),
                                               rhs.memref(), out.memref(), op))
                << what;
            expectClose(out, want, 0, what);
            EXPECT_EQ(ctx.implOf(node), layout == S ? "reference" : "scalar")
                << what;
            ++node;
          }
}

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

TEST(BatchNormTest, MatchesNaiveInEveryLayoutAndRank) {
  const std::vector<std::vector<int64_t>> shapes = {
      {4, 6},        {2, 3, 5},       {3, 5, 7, 9}, {1, 1, 1, 1},
      {2, 16, 1, 1}, {2, 3, 2, 3, 4}, {1, 1, 4, 4}};
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const auto &shape : shapes) {
      for (auto [inLayout, outLayout] : kLayoutPairs) {
        int64_t channels = shape[1];
        Tensor in(shape, inLayout), out(shape, outLayout);
        Tensor weight({channels}, S), bias({channels}), mean({channels}, S),
            var({channels});
        in.fillRandom(31, -3, 3);
        weight.fillRandom(32, 0.5, 2);
        bias.fillRandom(33);
        mean.fillRandom(34);
        var.fillRandom(35, 0.1, 4);
        double eps = 1e-5;
        std::string what = std::string(toString(kernels)) + " " +
                           in.describe() + " -> " + out.describe();
        EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_batch_norm_f32(
                                  ctx, node, in.memref(), weight.memref(),
                                  bias.memref(), mean.memref(), var.memref(),
                                  out.memref(), eps))
            << what;
        // The fast path computes (x - mean) * scale + bias in f32: three
        // roundings of terms bounded by the magnitude.
        expectClose(out, naiveBatchNorm(in, weight, bias, mean, var, eps),
                    kernels == MEMFMT_KERNELS_REFERENCE ? kReferenceFactor
                                                        : floatSumFactor(2),
                    what);
        bool specialised =
            inLayout == outLayout && (inLayout == C || inLayout == CL);
        if (kernels == MEMFMT_KERNELS_FAST && specialised) {
          EXPECT_NE(ctx.implOf(node), "reference") << what;
        }
        ++node;
      }
    }
  }
}

TEST(BatchNormTest, InPlace) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    Tensor t({2, 4, 3, 3}, CL), weight({4}), bias({4}), mean({4}), var({4});
    t.fillRandom(36);
    weight.fillRandom(37);
    bias.fillRandom(38);
    mean.fillRandom(39);
    var.fillRandom(40, 0.5, 1.5);
    Expected want = naiveBatchNorm(t, weight, bias, mean, var, 1e-3);
    EXPECT_KERNEL_OK(ctx,
                     _mlir_ciface_memfmt_batch_norm_f32(
                         ctx, 0, t.memref(), weight.memref(), bias.memref(),
                         mean.memref(), var.memref(), t.memref(), 1e-3));
    expectClose(t, want, floatSumFactor(2), "in place");
  }
}

//===----------------------------------------------------------------------===//
// copy
//===----------------------------------------------------------------------===//

TEST(CopyTest, EveryLayoutPairAndRank) {
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    int64_t node = 0;
    for (const auto &shape : kShapes) {
      for (Layout from : kAllLayouts) {
        for (Layout to : kAllLayouts) {
          Tensor in(shape, from), out(shape, to);
          in.fillRandom(41);
          Expected want;
          for (int64_t i = 0; i < in.numElements(); ++i) {
            want.value.push_back(in.flat(i));
            want.magnitude.push_back(0);
          }
          std::string what = std::string(toString(kernels)) + " " +
                             in.describe() + " -> " + out.describe();
          EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_copy_f32(
                                    ctx, node, in.memref(), out.memref()))
              << what;
          expectClose(out, want, 0, what);
          ++node;
        }
      }
    }
  }
}

/// The conversions the compiler inserts run the specialised loops (where
/// oneDNN does not take them: CopyTest.OneDnnTakesF32Copies).
TEST(CopyTest, LayoutConversionsUseFastPaths) {
  ScopedEnv ownLoops(kOwnLoops, "1");
  TestContext ctx(MEMFMT_KERNELS_FAST);
  struct Case {
    Layout from, to;
    const char *impl;
  };
  const Case cases[] = {{C, CL, "nchw_to_nhwc"},
                        {CL, C, "nhwc_to_nchw"},
                        {CL, CL, "dense"},
                        {C, C, "dense"}};
  int64_t node = 0;
  for (const Case &c : cases) {
    Tensor in({3, 35, 9, 11}, c.from), out({3, 35, 9, 11}, c.to);
    in.fillRandom(42);
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_copy_f32(ctx, node, in.memref(),
                                                       out.memref()));
    for (int64_t i = 0; i < in.numElements(); ++i)
      ASSERT_EQ(out.flat(i), in.flat(i)) << i;
    EXPECT_EQ(ctx.implOf(node), c.impl);
    ++node;
  }
}

/// L3: Nx2048x1x1 is both formats; its size-1 dims may carry any stride, and
/// a copy between the two descriptions is a plain block copy.
TEST(CopyTest, SameBytesWithArbitrarySizeOneStrides) {
  ScopedEnv ownLoops(kOwnLoops, "1");
  for (memfmt_kernels_t kernels : kBothKernels) {
    TestContext ctx(kernels);
    Tensor in({2, 64, 1, 1}, std::vector<int64_t>{64, 1, 777, 5}, 0, 128);
    Tensor out({2, 64, 1, 1}, std::vector<int64_t>{64, 1, 64, 64}, 0, 128);
    in.fillRandom(43);
    EXPECT_KERNEL_OK(
        ctx, _mlir_ciface_memfmt_copy_f32(ctx, 0, in.memref(), out.memref()));
    for (int64_t i = 0; i < in.numElements(); ++i)
      ASSERT_EQ(out.flat(i), in.flat(i)) << i;
    if (kernels == MEMFMT_KERNELS_FAST) {
      EXPECT_EQ(ctx.implOf(0), "dense");
    }
  }
}

/// Views the compiler copies between - a channel shuffle's [N, C/g, g, H, W]
/// views, a slice of channels - run the strided loop, ordered by the side
/// with the longer unit-stride run.
TEST(CopyTest, ViewsUseTheStridedLoop) {
  ScopedEnv ownLoops(kOwnLoops, "1");
  TestContext ctx(MEMFMT_KERNELS_FAST);
  // channel_shuffle of [2, 6, 5, 3] channels-last with 2 groups.
  Tensor in({2, 3, 2, 5, 3}, std::vector<int64_t>{90, 1, 3, 18, 6}, 0, 180);
  Tensor out({2, 3, 2, 5, 3}, std::vector<int64_t>{90, 2, 1, 18, 6}, 0, 180);
  in.fillRandom(44);
  EXPECT_KERNEL_OK(
      ctx, _mlir_ciface_memfmt_copy_f32(ctx, 0, in.memref(), out.memref()));
  for (int64_t i = 0; i < in.numElements(); ++i)
    ASSERT_EQ(out.flat(i), in.flat(i)) << i;
  EXPECT_EQ(ctx.implOf(0), "strided_by_input");
  // Channels 3..5 of a channels-last [2, 6, 5, 3].
  Tensor whole({2, 3, 5, 3}, std::vector<int64_t>{90, 1, 18, 6}, 3, 180);
  Tensor piece({2, 3, 5, 3}, CL);
  whole.fillRandom(45);
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_copy_f32(ctx, 1, whole.memref(),
                                                     piece.memref()));
  for (int64_t i = 0; i < piece.numElements(); ++i)
    ASSERT_EQ(piece.flat(i), whole.flat(i)) << i;
  EXPECT_EQ(ctx.implOf(1), "strided");
}

/// By default a fast f32 copy - a layout conversion, a channel shuffle's
/// views, a slice of channels - is a oneDNN reorder where the build has
/// oneDNN (its jitted reorders beat the own loops: CpuBackend.cpp), with the
/// same bytes.
TEST(CopyTest, OneDnnTakesF32Copies) {
  ScopedEnv ownLoops(kOwnLoops, nullptr);
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor nchw({3, 35, 9, 11}, C), nhwc({3, 35, 9, 11}, CL);
  nchw.fillRandom(46);
  Tensor in({2, 3, 2, 5, 3}, std::vector<int64_t>{90, 1, 3, 18, 6}, 0, 180);
  Tensor out({2, 3, 2, 5, 3}, std::vector<int64_t>{90, 2, 1, 18, 6}, 0, 180);
  in.fillRandom(47);
  Tensor whole({2, 3, 5, 3}, std::vector<int64_t>{90, 1, 18, 6}, 3, 180);
  Tensor piece({2, 3, 5, 3}, CL);
  whole.fillRandom(48);
  const std::pair<Tensor *, Tensor *> copies[] = {
      {&nchw, &nhwc}, {&in, &out}, {&whole, &piece}};
  int64_t node = 0;
  for (auto [from, to] : copies) {
    EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_copy_f32(ctx, node, from->memref(),
                                                       to->memref()));
    for (int64_t i = 0; i < from->numElements(); ++i)
      ASSERT_EQ(to->flat(i), from->flat(i)) << node << " " << i;
    if (memfmt_runtime_has_onednn())
      EXPECT_EQ(ctx.implOf(node), "onednn") << node;
    else
      EXPECT_NE(ctx.implOf(node), "reference") << node;
    ++node;
  }
}

/// Inputs may broadcast through zero strides (expand).
TEST(CopyTest, ExpandedInput) {
  TestContext ctx(MEMFMT_KERNELS_FAST);
  Tensor in({2, 3, 4, 5}, std::vector<int64_t>{0, 1, 0, 0}, 0, 3);
  Tensor out({2, 3, 4, 5}, CL);
  for (int64_t c = 0; c < 3; ++c)
    in.buffer[c] = float(c + 1);
  EXPECT_KERNEL_OK(
      ctx, _mlir_ciface_memfmt_copy_f32(ctx, 0, in.memref(), out.memref()));
  for (int64_t i = 0; i < out.numElements(); ++i)
    ASSERT_EQ(out.flat(i), float(out.indexOf(i)[1] + 1));
}

} // namespace
