//===- CudaTrainingKernelTest.cpp - Training kernels against the CPU ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA backend's training kernels against the CPU reference kernels on
// the same bytes (CudaTestUtil.h), in f32 and with the f16 and bf16
// activations of a mixed-precision step (f32 parameters and weight
// gradients): training
// batch norm and its
// gradient on cuDNN in both formats (running statistics in and out of
// place, every gradient mask, the unsupported-layout error), the linear
// layer's gradients on cuBLAS (every mask, row-major, strided and padded
// operands, edge shapes), fill (every dtype and layout), threshold_backward
// (layout pairs, ties, NaN), eltwise_backward (every function, layout
// pairs, kinks and NaN), sum_to_size (the shapes VJPs reduce to, every
// layout), layer_norm_backward (every layout, with and without weight),
// softmax_backward (every layout, along every dim), sgd_update
// (torch.optim.SGD's options, bit for bit, in and out of place), the step
// count's increment and the cross-entropy loss and its gradient (and NaN for a
// target out of range, where the CPU refuses it). The convolution and pooling
// gradients are tested beside their forward kernels in CudaKernelTest.cpp.
// Without a CUDA device every test is skipped
// ("skipped: no CUDA device").
//
//===----------------------------------------------------------------------===//

#include "../BatchNormCalls.h"
#include "CudaTestUtil.h"

#include "memfmt/runtime/elementwise_ops.h"

#include <cmath>
#include <limits>

using namespace memfmt::test;

namespace {

/// BatchNormCalls.h's calls with the entry point of activation type `k`
/// (f32, f16 or bf16).
template <typename Ctx, typename Memref, typename... Rest>
int32_t batchNormForwardOf(Kind k, Ctx &&ctx, int64_t node, Memref input,
                           Memref weight, Memref bias, Memref runningMean,
                           Memref runningVar, Rest... rest) {
  return MEMFMT_TRAINING_ENTRY(native_batch_norm, k)(
      ctx, node, input, weight, bias, runningMean, runningVar,
      /*residual=*/input, rest..., /*has_residual=*/0, /*relu=*/0);
}
template <typename Ctx, typename Memref, typename... Rest>
int32_t batchNormBackwardOf(Kind k, Ctx &&ctx, int64_t node, Memref gradOut,
                            Memref input, Memref weight, Memref saveMean,
                            Memref saveInvstd, Rest... rest) {
  return MEMFMT_TRAINING_ENTRY(native_batch_norm_backward, k)(
      ctx, node, gradOut, input, weight, saveMean, saveInvstd,
      /*output=*/input, rest..., /*relu=*/0);
}

/// The shared contexts (created once per test program file: cuDNN and
/// cuBLAS handles are slow to make).
CudaEnv &env() {
  static CudaEnv *instance = new CudaEnv();
  return *instance;
}

TEST(CudaBatchNormTrainingTest, ForwardAndBackwardInBothFormats) {
  MEMFMT_REQUIRE_CUDA(env());
  const std::vector<int64_t> shapes[] = {
      {2, 3, 4, 5}, {1, 64, 7, 7}, {4, 16, 1, 1}, {3, 1, 5, 5}, {8, 32, 3, 3}};
  const Kind f = Kind::F32;
  for (Kind k : kTrainingKinds)
    for (const std::vector<int64_t> &shape : shapes)
      for (Layout layout : {C, CL})
        for (bool inPlace : {true, false}) {
          const int64_t c = shape[1];
          Buf x(k, shape, layout), y(k, shape, layout);
          Buf w(f, {c}), b(f, {c}), m(f, {c}), v(f, {c}), mOut(f, {c}),
              vOut(f, {c}), saveMean(f, {c}), saveInvstd(f, {c});
          x.fill(41, -3, 3);
          w.fill(42, 0.5, 1.5);
          b.fill(43);
          m.fill(44);
          v.fill(45, 0.5, 1.5);
          std::string what = std::string("native_batch_norm ") + toString(k) +
                             " " + toString(layout) + " " + x.describe() +
                             (inPlace ? " running stats in place" : "");
          const memfmt_memref_t *dm = m.device(env().gpu),
                                *dv = v.device(env().gpu);
          const memfmt_memref_t *dy = y.device(env().gpu),
                                *dsm = saveMean.device(env().gpu),
                                *dsi = saveInvstd.device(env().gpu);
          const memfmt_memref_t *dmo = inPlace ? dm : mOut.device(env().gpu);
          const memfmt_memref_t *dvo = inPlace ? dv : vOut.device(env().gpu);
          ASSERT_EQ(batchNormForwardOf(k, env().gpu, 20, x.device(env().gpu),
                                       w.device(env().gpu), b.device(env().gpu),
                                       dm, dv, dy, dsm, dsi, dmo, dvo, 1e-5,
                                       0.1),
                    MEMFMT_STATUS_OK)
              << what << ": " << memfmt_context_last_error(env().gpu);
          EXPECT_EQ(env().implOf(20),
                    layout == CL && shape[2] * shape[3] > 1 && c > 1
                        ? "cudnn_nhwc"
                        : "cudnn_nchw")
              << what;
          std::vector<uint8_t> gotY = y.download(),
                               gotMean = saveMean.download(),
                               gotInvstd = saveInvstd.download(),
                               gotM = (inPlace ? m : mOut).download(),
                               gotV = (inPlace ? v : vOut).download();
          const memfmt_memref_t *hm = m.host(), *hv = v.host();
          ASSERT_EQ(batchNormForwardOf(k, env().cpu, 20, x.host(), w.host(),
                                       b.host(), hm, hv, y.host(),
                                       saveMean.host(), saveInvstd.host(),
                                       inPlace ? hm : mOut.host(),
                                       inPlace ? hv : vOut.host(), 1e-5, 0.1),
                    MEMFMT_STATUS_OK);
          expectMatch(y, gotY, Match::Reduction, what + " output");
          expectMatch(saveMean, gotMean, Match::Reduction, what + " save_mean");
          expectMatch(saveInvstd, gotInvstd, Match::Reduction,
                      what + " save_invstd");
          expectMatch(inPlace ? m : mOut, gotM, Match::Reduction,
                      what + " running_mean");
          expectMatch(inPlace ? v : vOut, gotV, Match::Reduction,
                      what + " running_var");

          // The gradient from the CPU's saved statistics, on both sides.
          for (int mask : {7, 3, 6}) {
            Buf go(k, shape, layout), gi(k, shape, layout), gw(f, {c}),
                gb(f, {c});
            go.fill(46);
            std::string grad = what + " backward mask " + std::to_string(mask);
            const memfmt_memref_t *dgi = gi.device(env().gpu),
                                  *dgw = gw.device(env().gpu),
                                  *dgb = gb.device(env().gpu);
            ASSERT_EQ(
                batchNormBackwardOf(k, env().gpu, 21, go.device(env().gpu),
                                    x.device(env().gpu), w.device(env().gpu),
                                    saveMean.device(env().gpu),
                                    saveInvstd.device(env().gpu), dgi, dgw, dgb,
                                    mask & 1, (mask >> 1) & 1, (mask >> 2) & 1),
                MEMFMT_STATUS_OK)
                << grad << ": " << memfmt_context_last_error(env().gpu);
            ASSERT_EQ(batchNormBackwardOf(k, env().cpu, 21, go.host(), x.host(),
                                          w.host(), saveMean.host(),
                                          saveInvstd.host(), gi.host(),
                                          gw.host(), gb.host(), mask & 1,
                                          (mask >> 1) & 1, (mask >> 2) & 1),
                      MEMFMT_STATUS_OK);
            expectMatch(gi, gi.download(), Match::Reduction,
                        grad + " grad_input");
            expectMatch(gw, gw.download(), Match::Reduction,
                        grad + " grad_weight");
            expectMatch(gb, gb.download(), Match::Reduction,
                        grad + " grad_bias");
          }
        }
  // A layout cuDNN does not take is reported, not computed wrongly.
  Buf x(f, {2, 8, 3, 3}, S), y(f, {2, 8, 3, 3}, S), w(f, {8}), b(f, {8}),
      m(f, {8}), v(f, {8}), sm(f, {8}), si(f, {8});
  v.fill(1, 0.5, 1.5);
  const memfmt_memref_t *dm = m.device(env().gpu), *dv = v.device(env().gpu);
  EXPECT_EQ(batchNormForward(env().gpu, 22, x.device(env().gpu),
                             w.device(env().gpu), b.device(env().gpu), dm, dv,
                             y.device(env().gpu), sm.device(env().gpu),
                             si.device(env().gpu), dm, dv, 1e-5, 0.1),
            MEMFMT_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(memfmt_context_last_error(env().gpu))
                .find("packed NCHW or NHWC"),
            std::string::npos)
      << memfmt_context_last_error(env().gpu);
}

TEST(CudaLinearBackwardTest, EveryGradientLayoutAndEdgeShape) {
  MEMFMT_REQUIRE_CUDA(env());
  struct Case {
    int64_t n, kk, m;
  };
  for (Case c : {Case{4, 64, 32}, Case{8, 2048, 1000}, Case{3, 7, 5},
                 Case{1, 16, 1}, Case{5, 1, 3}})
    for (Layout lg : {C, S})
      for (Layout lx : {C, S, CLS})
        for (Layout lout : {C, S})
          for (int mask : {7, 1, 2, 4})
            for (Kind k : kTrainingKinds) {
              // bf16 activations and weight copy; f32 weight gradients.
              Buf go(k, {c.n, c.m}, lg), x(k, {c.n, c.kk}, lx),
                  w(k, {c.m, c.kk}, lx);
              Buf gi(k, {c.n, c.kk}, lout), gw(Kind::F32, {c.m, c.kk}, lout),
                  gb(Kind::F32, {c.m});
              go.fill(31);
              x.fill(32);
              w.fill(33, -0.1, 0.1);
              std::string what = "linear_backward " + std::string(toString(k)) +
                                 " " + go.describe() + " " + x.describe() +
                                 " -> " + gi.describe() + " mask " +
                                 std::to_string(mask);
              const memfmt_memref_t *dgi = gi.device(env().gpu),
                                    *dgw = gw.device(env().gpu),
                                    *dgb = gb.device(env().gpu);
              ASSERT_EQ(MEMFMT_TRAINING_ENTRY(linear_backward, k)(
                            env().gpu, 9, go.device(env().gpu),
                            x.device(env().gpu), w.device(env().gpu), dgi, dgw,
                            dgb, mask & 1, (mask >> 1) & 1, (mask >> 2) & 1),
                        MEMFMT_STATUS_OK)
                  << what << ": " << memfmt_context_last_error(env().gpu);
              ASSERT_EQ(MEMFMT_TRAINING_ENTRY(linear_backward, k)(
                            env().cpu, 9, go.host(), x.host(), w.host(),
                            gi.host(), gw.host(), gb.host(), mask & 1,
                            (mask >> 1) & 1, (mask >> 2) & 1),
                        MEMFMT_STATUS_OK);
              // Gradients that are off stay untouched on both sides.
              expectMatch(gi, gi.download(), Match::Reduction,
                          what + " grad_input");
              expectMatch(gw, gw.download(), Match::Reduction,
                          what + " grad_weight");
              expectMatch(gb, gb.download(), Match::Reduction,
                          what + " grad_bias");
            }
}

//===----------------------------------------------------------------------===//
// Training: fill, threshold_backward, sgd_update (bit for bit)
//===----------------------------------------------------------------------===//

class CudaFillTest : public ::testing::TestWithParam<Kind> {};

TEST_P(CudaFillTest, EveryLayoutAndShape) {
  MEMFMT_REQUIRE_CUDA(env());
  Kind k = GetParam();
  for (const std::vector<int64_t> &shape : kElementwiseShapes)
    for (Layout layout : kLayouts) {
      Buf y(k, shape, layout);
      std::string what = std::string(toString(k)) + " " + y.describe();
      ASSERT_EQ(MEMFMT_ENTRY(fill, k)(env().gpu, 0, y.device(env().gpu), 0.1),
                MEMFMT_STATUS_OK)
          << memfmt_context_last_error(env().gpu);
      ASSERT_EQ(MEMFMT_ENTRY(fill, k)(env().cpu, 0, y.host(), 0.1),
                MEMFMT_STATUS_OK);
      expectMatch(y, y.download(), Match::Exact, "fill " + what);
    }
}

TEST(CudaThresholdBackwardTest, EveryLayoutPairWithTiesAndNaN) {
  MEMFMT_REQUIRE_CUDA(env());
  for (const std::vector<int64_t> &shape : kElementwiseShapes)
    for (Layout in : kLayouts)
      for (Layout out : kLayouts)
        for (int64_t hasAddend : {0, 1})
          for (Kind k : kTrainingKinds) {
            // The addend (the fused gradient sum) in the output's layout.
            Buf grad(k, shape, in), self(k, shape, in), addend(k, shape, out),
                gi(k, shape, out);
            std::string what = name(k, in, out) + " " + gi.describe() +
                               (hasAddend ? " with addend" : "");
            grad.fill(1, -2, 2);
            self.fill(2, -1, 1);
            addend.fill(3, -2, 2);
            if (self.values.numElements() > 3)
              self.set(1, 0.0f).set(2, std::nanf("")).set(3, -0.0f);
            const memfmt_memref_t *dgi = gi.device(env().gpu);
            ASSERT_EQ(MEMFMT_TRAINING_ENTRY(threshold_backward, k)(
                          env().gpu, 0, grad.device(env().gpu),
                          self.device(env().gpu), addend.device(env().gpu), dgi,
                          0.0, hasAddend),
                      MEMFMT_STATUS_OK)
                << memfmt_context_last_error(env().gpu);
            ASSERT_EQ(MEMFMT_TRAINING_ENTRY(threshold_backward, k)(
                          env().cpu, 0, grad.host(), self.host(), addend.host(),
                          gi.host(), 0.0, hasAddend),
                      MEMFMT_STATUS_OK);
            expectMatch(gi, gi.download(), Match::Exact,
                        "threshold_backward " + what);
            if (in == out && (in == C || in == CL) &&
                gi.values.numElements() > 0)
              EXPECT_EQ(env().implOf(0), "flat") << what;
          }
}

TEST(CudaEltwiseBackwardTest, EveryFunctionAndLayoutPair) {
  MEMFMT_REQUIRE_CUDA(env());
  struct Function {
    int64_t op;
    double alpha, beta;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Function functions[] = {{MEMFMT_ELTWISE_SIGMOID, 0, 0},
                                {MEMFMT_ELTWISE_HARDSIGMOID, 1.0 / 6, 0.5},
                                {MEMFMT_ELTWISE_HARDSWISH, 0, 0},
                                {MEMFMT_ELTWISE_CLAMP, 0, 6},
                                {MEMFMT_ELTWISE_CLAMP, -1, inf},
                                {MEMFMT_ELTWISE_GELU_ERF, 0, 0},
                                {MEMFMT_ELTWISE_GELU_TANH, 0, 0},
                                {MEMFMT_ELTWISE_SILU, 0, 0}};
  for (const Function &f : functions)
    for (const std::vector<int64_t> &shape : kElementwiseShapes)
      for (Layout in : kLayouts)
        for (Layout out : kLayouts)
          for (Kind k : kTrainingKinds) {
            Buf grad(k, shape, in), self(k, shape, in), gi(k, shape, out);
            std::string what = "eltwise_backward op " + std::to_string(f.op) +
                               " " + name(k, in, out) + " " + gi.describe();
            grad.fill(1, -2, 2);
            self.fill(2, -8, 8);
            if (self.values.numElements() > 4)
              self.set(1, -3.0f).set(2, 3.0f).set(3, 6.0f).set(4,
                                                               std::nanf(""));
            ASSERT_EQ(MEMFMT_TRAINING_ENTRY(eltwise_backward, k)(
                          env().gpu, 0, grad.device(env().gpu),
                          self.device(env().gpu), gi.device(env().gpu), f.op,
                          f.alpha, f.beta),
                      MEMFMT_STATUS_OK)
                << memfmt_context_last_error(env().gpu);
            ASSERT_EQ(MEMFMT_TRAINING_ENTRY(eltwise_backward, k)(
                          env().cpu, 0, grad.host(), self.host(), gi.host(),
                          f.op, f.alpha, f.beta),
                      MEMFMT_STATUS_OK);
            // The same formulas (lib/ElementwiseMath.h); libm and CUDA's
            // exp/erf/tanh may differ in the last bits.
            expectMatch(gi, gi.download(), Match::Elementwise, what);
          }
}

TEST(CudaSumToSizeTest, TheShapesVjpsReduceTo) {
  MEMFMT_REQUIRE_CUDA(env());
  const std::pair<std::vector<int64_t>, std::vector<int64_t>> cases[] = {
      {{3, 24, 5, 7}, {3, 24, 1, 1}},
      {{3, 24, 5, 7}, {24, 1, 1}},
      {{3, 24, 5, 7}, {}},
      {{2, 1, 5, 5}, {2, 1, 1, 1}},
      {{4, 16, 1, 1}, {4, 16, 1, 1}},
      {{1, 3, 7, 5}, {3, 7, 1}}};
  for (const auto &[inShape, outShape] : cases)
    for (Layout in : kLayouts)
      for (Layout out : kLayouts)
        for (Kind k : kTrainingKinds) {
          Buf x(k, inShape, in), y(k, outShape, out);
          std::string what = "sum_to_size " + name(k, in, out) + " " +
                             x.describe() + " -> " + y.describe();
          x.fill(1, -2, 2);
          ASSERT_EQ(MEMFMT_TRAINING_ENTRY(sum_to_size, k)(
                        env().gpu, 0, x.device(env().gpu), y.device(env().gpu)),
                    MEMFMT_STATUS_OK)
              << memfmt_context_last_error(env().gpu);
          ASSERT_EQ(MEMFMT_TRAINING_ENTRY(sum_to_size, k)(env().cpu, 0,
                                                          x.host(), y.host()),
                    MEMFMT_STATUS_OK);
          // Both sum in double and round once.
          expectMatch(y, y.download(), Match::Elementwise, what);
        }
}

TEST(CudaLayerNormBackwardTest, EveryLayoutWithAndWithoutWeight) {
  MEMFMT_REQUIRE_CUDA(env());
  const std::vector<std::vector<int64_t>> shapes = {
      {7}, {3, 1}, {5, 96}, {2, 3, 4, 7}, {1, 1, 1, 5}, {2, 3, 5, 96}};
  for (const auto &shape : shapes)
    for (Layout layout : kLayouts)
      for (bool hasWeight : {false, true})
        for (Kind k : kTrainingKinds) {
          const int64_t d = shape.back();
          Buf go(k, shape, layout), x(k, shape, layout),
              w(Kind::F32, {d}, kLayouts[0]), gi(k, shape, layout),
              gw(Kind::F32, {d}, kLayouts[0]), gb(Kind::F32, {d}, kLayouts[0]);
          std::string what = "layer_norm_backward " + std::string(toString(k)) +
                             " " + x.describe() + (hasWeight ? " weight" : "");
          go.fill(1, -1, 1);
          x.fill(2, -3, 3);
          w.fill(3, 0.5, 2);
          auto call = [&](memfmt_context_t *ctx, bool device) {
            auto ref = [&](Buf &b) {
              return device ? b.device(env().gpu) : b.host();
            };
            return MEMFMT_TRAINING_ENTRY(layer_norm_backward, k)(
                ctx, 0, ref(go), ref(x), hasWeight ? ref(w) : ref(x), ref(gi),
                ref(gw), ref(gb), 1e-5, hasWeight, 1, 1, 1);
          };
          ASSERT_EQ(call(env().gpu, true), MEMFMT_STATUS_OK)
              << memfmt_context_last_error(env().gpu);
          ASSERT_EQ(call(env().cpu, false), MEMFMT_STATUS_OK)
              << memfmt_context_last_error(env().cpu);
          // Both compute in double and round once; the CPU's reference sums
          // the columns in row order, the GPU in its plan's order.
          expectMatch(gi, gi.download(), Match::Elementwise, what);
          expectMatch(gw, gw.download(), Match::Elementwise, what);
          expectMatch(gb, gb.download(), Match::Elementwise, what);
        }
}

TEST(CudaSoftmaxBackwardTest, EveryLayoutAlongEveryDim) {
  MEMFMT_REQUIRE_CUDA(env());
  const std::vector<std::vector<int64_t>> shapes = {
      {7}, {3, 1}, {5, 197}, {2, 3, 4, 7}, {1, 1, 1, 5}, {2, 12, 5, 5}};
  for (const auto &shape : shapes)
    for (int64_t dim = 0; dim < int64_t(shape.size()); ++dim)
      for (Layout layout : kLayouts)
        for (Kind k : kTrainingKinds) {
          Buf go(k, shape, layout), y(k, shape, layout), gi(k, shape, layout);
          const std::string what = "softmax_backward " +
                                   std::string(toString(k)) + " " +
                                   y.describe() + " dim " + std::to_string(dim);
          go.fill(1, -1, 1);
          y.fill(2, 0, 1);
          auto call = [&](memfmt_context_t *ctx, bool device) {
            auto ref = [&](Buf &b) {
              return device ? b.device(env().gpu) : b.host();
            };
            return MEMFMT_TRAINING_ENTRY(softmax_backward, k)(
                ctx, 0, ref(go), ref(y), ref(gi), dim);
          };
          ASSERT_EQ(call(env().gpu, true), MEMFMT_STATUS_OK)
              << memfmt_context_last_error(env().gpu);
          ASSERT_EQ(call(env().cpu, false), MEMFMT_STATUS_OK)
              << memfmt_context_last_error(env().cpu);
          // The GPU computes each row in double and rounds once, as the CPU's
          // reference; the CPU's row loop in f32 with the sum in double.
          expectMatch(gi, gi.download(), Match::Elementwise, what);
        }
}

struct CudaSgdCase {
  const char *name;
  double lr, momentum, dampening, weightDecay;
  bool nesterov, hasStep;
  int64_t step;
};

void PrintTo(const CudaSgdCase &c, std::ostream *os) { *os << c.name; }

const CudaSgdCase kSgdCases[] = {
    {"Plain", 0.1, 0, 0, 0, false, false, 0},
    {"Momentum", 0.05, 0.9, 0, 0, false, false, 0},
    {"DampeningFirstStep", 0.1, 0.9, 0.3, 0, false, true, 0},
    {"DampeningLaterStep", 0.1, 0.9, 0.3, 0, false, true, 4},
    {"Nesterov", 0.01, 0.9, 0, 0, true, true, 2},
    {"WeightDecay", 0.1, 0.9, 0, 1e-4, false, true, 1},
    {"WeightDecayNoMomentum", 0.3, 0, 0, 5e-2, false, false, 0},
};

class CudaSgdTest : public ::testing::TestWithParam<CudaSgdCase> {};

TEST_P(CudaSgdTest, MatchesTheCpuBitwise) {
  MEMFMT_REQUIRE_CUDA(env());
  const CudaSgdCase &o = GetParam();
  const std::vector<int64_t> shape = {4, 3, 5, 2};
  for (Layout layout : {C, CL, S})
    for (bool inPlace : {true, false}) {
      Buf param(Kind::F32, shape, layout), grad(Kind::F32, shape, layout),
          buf(Kind::F32, shape, layout);
      param.fill(1);
      grad.fill(2, -3, 3);
      buf.fill(3);
      Buf paramOut(Kind::F32, shape, inPlace ? layout : S),
          bufOut(Kind::F32, shape, inPlace ? layout : C);
      IndexBuf step({});
      step.values.flat(0) = o.step;
      std::string what = std::string(toString(layout)) +
                         (inPlace ? " in place" : " out of place");
      const memfmt_memref_t *dp = param.device(env().gpu);
      const memfmt_memref_t *db = buf.device(env().gpu);
      const memfmt_memref_t *dpo = inPlace ? dp : paramOut.device(env().gpu);
      const memfmt_memref_t *dbo = inPlace ? db : bufOut.device(env().gpu);
      ASSERT_EQ(_mlir_ciface_memfmt_sgd_update_f32(
                    env().gpu, 0, dp, grad.device(env().gpu), db,
                    step.device(env().gpu), grad.device(env().gpu), dpo, dbo,
                    o.lr, o.momentum, o.dampening, o.weightDecay, o.nesterov,
                    o.hasStep, 0),
                MEMFMT_STATUS_OK)
          << memfmt_context_last_error(env().gpu);
      std::vector<uint8_t> gotParam =
          inPlace ? param.download() : paramOut.download();
      std::vector<uint8_t> gotBuf =
          inPlace ? buf.download() : bufOut.download();
      const memfmt_memref_t *hp = param.host(), *hb = buf.host();
      ASSERT_EQ(_mlir_ciface_memfmt_sgd_update_f32(
                    env().cpu, 0, hp, grad.host(), hb, step.host(), grad.host(),
                    inPlace ? hp : paramOut.host(),
                    inPlace ? hb : bufOut.host(), o.lr, o.momentum, o.dampening,
                    o.weightDecay, o.nesterov, o.hasStep, 0),
                MEMFMT_STATUS_OK);
      expectMatch(inPlace ? param : paramOut, gotParam, Match::Exact,
                  std::string("sgd param ") + o.name + " " + what);
      expectMatch(inPlace ? buf : bufOut, gotBuf, Match::Exact,
                  std::string("sgd buffer ") + o.name + " " + what);
      if (inPlace && layout != S)
        EXPECT_EQ(env().implOf(0), "flat") << what;
    }
}

// The optimizer's step count, in place (as the memory plan runs it) and
// out of place, beyond f32's exact integers.
TEST(CudaIncrementTest, CountsLikeTheCpu) {
  MEMFMT_REQUIRE_CUDA(env());
  for (bool inPlace : {true, false}) {
    IndexBuf count({}), out({});
    count.values.flat(0) = (int64_t(1) << 40) + 5;
    const memfmt_memref_t *dc = count.device(env().gpu);
    const memfmt_memref_t *dout = inPlace ? dc : out.device(env().gpu);
    ASSERT_EQ(_mlir_ciface_memfmt_increment_i64(env().gpu, 0, dc, dc, dout, 0),
              MEMFMT_STATUS_OK)
        << memfmt_context_last_error(env().gpu);
    TestTensor<int64_t> got = inPlace ? count.download() : out.download();
    EXPECT_EQ(got.flat(0), (int64_t(1) << 40) + 6)
        << (inPlace ? "in place" : "out of place");
  }
}

// The loss scaler (GradScaler): a gradient unscaled by 3 (an inverse that
// is rounded) in every layout, in place and not, with an inf or without,
// bit for bit with the CPU and the same flag; the scale's backoff and
// growth; a skipped SGD step leaves the parameter and buffer as they were.
TEST(CudaLossScaleTest, MatchesTheCpu) {
  MEMFMT_REQUIRE_CUDA(env());
  const std::vector<int64_t> shape = {3, 5, 2, 4};
  for (Layout layout : {C, CL, S})
    for (bool inPlace : {true, false})
      for (bool withInf : {false, true}) {
        Buf grad(Kind::F32, shape, layout), out(Kind::F32, shape, S);
        grad.fill(4, -1e4, 1e4);
        if (withInf)
          grad.set(17, INFINITY);
        Buf scale(Kind::F32, {}), flag(Kind::F32, {});
        scale.set(0, 3.0f);
        flag.set(0, 0.0f);
        std::string what = std::string(toString(layout)) +
                           (inPlace ? " in place" : "") +
                           (withInf ? " with inf" : "");
        const memfmt_memref_t *dg = grad.device(env().gpu);
        const memfmt_memref_t *df = flag.device(env().gpu);
        const memfmt_memref_t *dout = inPlace ? dg : out.device(env().gpu);
        ASSERT_EQ(
            _mlir_ciface_memfmt_unscale_gradient_f32(
                env().gpu, 0, dg, scale.device(env().gpu), df, dout, df, 1),
            MEMFMT_STATUS_OK)
            << memfmt_context_last_error(env().gpu);
        std::vector<uint8_t> gotGrad =
            inPlace ? grad.download() : out.download();
        std::vector<uint8_t> gotFlag = flag.download();
        const memfmt_memref_t *hg = grad.host(), *hf = flag.host();
        ASSERT_EQ(_mlir_ciface_memfmt_unscale_gradient_f32(
                      env().cpu, 0, hg, scale.host(), hf,
                      inPlace ? hg : out.host(), hf, 1),
                  MEMFMT_STATUS_OK);
        expectMatch(inPlace ? grad : out, gotGrad, Match::Exact,
                    "unscaled " + what);
        EXPECT_EQ(flag.valueIn(gotFlag, 0), withInf ? 1.0f : 0.0f) << what;
        EXPECT_EQ(flag.value(0), withInf ? 1.0f : 0.0f) << what;
      }

  Buf state(Kind::F32, {}), scale(Kind::F32, {}), flag(Kind::F32, {});
  state.set(0, 0.0f);
  const memfmt_memref_t *ds = scale.device(env().gpu);
  ASSERT_EQ(_mlir_ciface_memfmt_loss_scale_f32(
                env().gpu, 1, state.device(env().gpu), ds, 65536.0),
            MEMFMT_STATUS_OK)
      << memfmt_context_last_error(env().gpu);
  EXPECT_EQ(scale.valueIn(scale.download(), 0), 65536.0f);
  IndexBuf tracker({});
  tracker.values.flat(0) = 1;
  for (float found : {0.0f, 1.0f}) {
    scale.set(0, 65536.0f);
    flag.set(0, found);
    const memfmt_memref_t *dscale = scale.device(env().gpu);
    const memfmt_memref_t *dt = tracker.device(env().gpu);
    ASSERT_EQ(_mlir_ciface_memfmt_update_loss_scale_f32(
                  env().gpu, 2, dscale, dt, flag.device(env().gpu), dscale, dt,
                  2.0, 0.5, 2),
              MEMFMT_STATUS_OK)
        << memfmt_context_last_error(env().gpu);
    EXPECT_EQ(scale.valueIn(scale.download(), 0),
              found != 0 ? 32768.0f : 131072.0f);
    EXPECT_EQ(tracker.download().flat(0), 0);
  }

  Buf param(Kind::F32, shape, CL), grad(Kind::F32, shape, CL),
      buf(Kind::F32, shape, CL);
  param.fill(1);
  grad.fill(2);
  buf.fill(3);
  flag.set(0, 1.0f);
  IndexBuf step({});
  step.values.flat(0) = 4;
  const memfmt_memref_t *dp = param.device(env().gpu),
                        *db = buf.device(env().gpu),
                        *dflag = flag.device(env().gpu),
                        *dstep = step.device(env().gpu);
  ASSERT_EQ(_mlir_ciface_memfmt_sgd_update_f32(
                env().gpu, 3, dp, grad.device(env().gpu), db, dstep, dflag, dp,
                db, 0.1, 0.9, 0.0, 1e-4, 0, 1, 1),
            MEMFMT_STATUS_OK)
      << memfmt_context_last_error(env().gpu);
  ASSERT_EQ(
      _mlir_ciface_memfmt_increment_i64(env().gpu, 4, dstep, dflag, dstep, 1),
      MEMFMT_STATUS_OK)
      << memfmt_context_last_error(env().gpu);
  expectMatch(param, param.download(), Match::Exact, "skipped param");
  expectMatch(buf, buf.download(), Match::Exact, "skipped buffer");
  EXPECT_EQ(step.download().flat(0), 4);
}

TEST(CudaCrossEntropyTest, LossAndGradientMatchTheCpu) {
  MEMFMT_REQUIRE_CUDA(env());
  struct Case {
    int64_t rows, classes;
  };
  for (Case c : {Case{8, 1000}, Case{1, 1}, Case{3, 5}, Case{32, 10}})
    for (Layout layout : {C, S}) {
      Buf x(Kind::F32, {c.rows, c.classes}, layout), loss(Kind::F32, {}),
          gradOut(Kind::F32, {}), gi(Kind::F32, {c.rows, c.classes}, layout);
      x.fill(61, -4, 4);
      gradOut.set(0, 0.75f);
      IndexBuf target({c.rows});
      for (int64_t n = 0; n < c.rows; ++n)
        target.values.flat(n) = (n * 7 + 3) % c.classes;
      std::string what = "cross_entropy " + x.describe();
      const memfmt_memref_t *dx = x.device(env().gpu),
                            *dt = target.device(env().gpu);
      const memfmt_memref_t *dl = loss.device(env().gpu),
                            *dgi = gi.device(env().gpu);
      ASSERT_EQ(
          _mlir_ciface_memfmt_cross_entropy_loss_f32(env().gpu, 30, dx, dt, dl),
          MEMFMT_STATUS_OK)
          << what << ": " << memfmt_context_last_error(env().gpu);
      ASSERT_EQ(_mlir_ciface_memfmt_cross_entropy_loss_backward_f32(
                    env().gpu, 31, gradOut.device(env().gpu), dx, dt, dgi),
                MEMFMT_STATUS_OK)
          << what << ": " << memfmt_context_last_error(env().gpu);
      std::vector<uint8_t> gotLoss = loss.download(), gotGrad = gi.download();
      ASSERT_EQ(_mlir_ciface_memfmt_cross_entropy_loss_f32(
                    env().cpu, 30, x.host(), target.host(), loss.host()),
                MEMFMT_STATUS_OK);
      ASSERT_EQ(_mlir_ciface_memfmt_cross_entropy_loss_backward_f32(
                    env().cpu, 31, gradOut.host(), x.host(), target.host(),
                    gi.host()),
                MEMFMT_STATUS_OK);
      expectMatch(loss, gotLoss, Match::Reduction, what + " loss");
      expectMatch(gi, gotGrad, Match::Reduction, what + " gradient");
    }
  // An index outside [0, C): the CPU refuses it; the GPU, which cannot read
  // it without stopping the stream, makes the loss NaN.
  Buf x(Kind::F32, {2, 4}), loss(Kind::F32, {});
  x.fill(62);
  IndexBuf target({2});
  target.values.flat(0) = 1;
  target.values.flat(1) = 4;
  ASSERT_EQ(_mlir_ciface_memfmt_cross_entropy_loss_f32(
                env().gpu, 32, x.device(env().gpu), target.device(env().gpu),
                loss.device(env().gpu)),
            MEMFMT_STATUS_OK);
  EXPECT_TRUE(std::isnan(loss.valueIn(loss.download(), 0)));
  EXPECT_NE(_mlir_ciface_memfmt_cross_entropy_loss_f32(
                env().cpu, 32, x.host(), target.host(), loss.host()),
            MEMFMT_STATUS_OK);
}

INSTANTIATE_TEST_SUITE_P(Kinds, CudaFillTest, ::testing::ValuesIn(kKinds));
INSTANTIATE_TEST_SUITE_P(Cases, CudaSgdTest, ::testing::ValuesIn(kSgdCases));

} // namespace
