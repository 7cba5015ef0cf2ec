//===- ErrorTest.cpp - Bad calls fail with a status and a message ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Every kind of bad call a compiled model (or a bug in the lowering) can
// make: null context, null or malformed memrefs, wrong ranks, output shapes
// that contradict the attributes, attributes out of range, windows that
// cover nothing, shapes that do not broadcast, overlapping or aliased
// outputs, unsupported element types. Each must return the right status and
// leave a message naming the kernel, the node and the problem, and must not
// touch the output.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTest.h"

#include "memfmt/runtime/elementwise_ops.h"

#include <cmath>

#include <cstring>

using namespace memfmt::test;

namespace {

using namespace memfmt::test::layout_names;

/// Expects `status` and a last error containing every one of `parts`.
void expectError(const TestContext &ctx, int32_t status,
                 memfmt_status_t expected,
                 std::initializer_list<const char *> parts) {
  EXPECT_EQ(status, expected) << ctx.lastError();
  std::string message = ctx.lastError();
  for (const char *part : parts)
    EXPECT_NE(message.find(part), std::string::npos)
        << "message \"" << message << "\" lacks \"" << part << "\"";
  memfmt_context_clear_error(ctx);
  EXPECT_STREQ(memfmt_context_last_error(ctx), "");
}

/// A well-formed 3x3 convolution [1, 4, 6, 6] -> [1, 8, 6, 6].
struct Conv {
  Tensor in{{1, 4, 6, 6}, CL}, w{{8, 4, 3, 3}, CL}, b{{8}},
      out{{1, 8, 6, 6}, CL};
  Conv() {
    in.fillRandom(1);
    w.fillRandom(2);
    b.fillRandom(3);
  }
  int32_t run(memfmt_context_t *ctx, const memfmt_memref_t *input,
              const memfmt_memref_t *output, int64_t stride = 1,
              int64_t groups = 1, int64_t relu = 0, int64_t pad = 1) {
    return _mlir_ciface_memfmt_conv2d_f32(
        ctx, 42, input, w.memref(), b.memref(), output, output, stride, stride,
        pad, pad, pad, pad, 1, 1, groups, 1, 0, relu, 0, 0.0, 0.0);
  }
};

/// The transpose of the square matrix `square` over the same buffer
/// (strides [1, n]): an output that shares an input's buffer but not its
/// layout. Its descriptor {base, base, offset, sizes, strides} is kept in
/// `storage`.
memfmt_memref_t transposedAlias(const Tensor &square,
                                std::vector<int64_t> &storage) {
  memfmt_memref_t alias = *square.memref();
  const int64_t *descriptor = static_cast<const int64_t *>(alias.descriptor);
  storage.assign(descriptor, descriptor + 7);
  storage[5] = 1;
  storage[6] = square.sizes[0];
  alias.descriptor = storage.data();
  return alias;
}

class ErrorTest : public ::testing::TestWithParam<memfmt_kernels_t> {};

TEST_P(ErrorTest, NullContext) {
  Conv conv;
  EXPECT_EQ(conv.run(nullptr, conv.in.memref(), conv.out.memref()),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  std::string message = memfmt_context_last_error(nullptr);
  EXPECT_NE(message.find("memfmt_conv2d_f32 (node 42)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("context is null"), std::string::npos) << message;
}

TEST_P(ErrorTest, NullAndMalformedMemrefs) {
  TestContext ctx(GetParam());
  Conv conv;
  expectError(ctx, conv.run(ctx, nullptr, conv.out.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"memfmt_conv2d_f32", "node 42", "input is a null memref"});

  memfmt_memref_t noDescriptor{4, nullptr};
  expectError(ctx, conv.run(ctx, &noDescriptor, conv.out.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"input has a null descriptor"});

  memfmt_memref_t negativeRank{-1, conv.in.buffer.data()};
  expectError(ctx, conv.run(ctx, &negativeRank, conv.out.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"negative rank"});

  memfmt_memref_t highRank = *conv.in.memref();
  highRank.rank = 9;
  expectError(ctx, conv.run(ctx, &highRank, conv.out.memref()),
              MEMFMT_STATUS_UNSUPPORTED, {"rank 9"});

  Tensor negativeSize({1, 4, 6, 6}, CL);
  negativeSize.sizes[2] = -6;
  negativeSize = Tensor(negativeSize); // Rebuild the descriptor.
  expectError(ctx, conv.run(ctx, negativeSize.memref(), conv.out.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"negative size -6"});

  Tensor nullData({1, 4, 6, 6}, CL);
  nullData.buffer.clear();
  nullData.buffer.shrink_to_fit();
  nullData = Tensor(nullData);
  expectError(ctx, conv.run(ctx, nullData.memref(), conv.out.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"null data pointer"});

  Tensor huge({1, 4, 6, 6}, std::vector<int64_t>{1, 1, INT64_MAX / 2, 1}, 0,
              144);
  expectError(ctx, conv.run(ctx, huge.memref(), conv.out.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"overflows"});
}

TEST_P(ErrorTest, ConvShapesAndAttributes) {
  TestContext ctx(GetParam());
  Conv conv;
  Tensor rank3({4, 6, 6});
  expectError(ctx, conv.run(ctx, rank3.memref(), conv.out.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"input has rank 3", "expected 4"});

  Tensor wrongOut({1, 8, 5, 5}, CL);
  expectError(
      ctx, conv.run(ctx, conv.in.memref(), wrongOut.memref()),
      MEMFMT_STATUS_INVALID_ARGUMENT,
      {"output has shape [1, 8, 5, 5]", "expected [1, 8, 6, 6]", "stride 1x1"});
  for (int64_t i = 0; i < wrongOut.numElements(); ++i)
    EXPECT_EQ(wrongOut.flat(i), Tensor::kSentinel) << "output was written";

  expectError(ctx, conv.run(ctx, conv.in.memref(), conv.out.memref(), 0),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"stride_h is 0"});
  expectError(ctx, conv.run(ctx, conv.in.memref(), conv.out.memref(), 1, 3),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"groups is 3"});
  expectError(ctx, conv.run(ctx, conv.in.memref(), conv.out.memref(), 1, 1, 2),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"relu is 2"});
  expectError(ctx,
              conv.run(ctx, conv.in.memref(), conv.out.memref(), 1, 1, 0, -1),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"pad_top is -1"});

  // The activation: 0 or a memfmt_eltwise_op_t, not with relu, no NaN.
  auto withActivation = [&](int64_t relu, int64_t activation, double alpha) {
    return _mlir_ciface_memfmt_conv2d_f32(
        ctx, 42, conv.in.memref(), conv.w.memref(), conv.b.memref(),
        conv.out.memref(), conv.out.memref(), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
        relu, activation, alpha, 6.0);
  };
  expectError(ctx, withActivation(0, 9, 0.0), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"activation 9 is neither 0 nor a memfmt_eltwise_op_t"});
  expectError(ctx, withActivation(1, MEMFMT_ELTWISE_CLAMP, 0.0),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"relu and an activation cannot both be applied"});
  expectError(ctx, withActivation(0, MEMFMT_ELTWISE_CLAMP, std::nan("")),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"activation_alpha and activation_beta must not be NaN"});

  // Weight channels must be input channels / groups.
  Tensor w2({8, 2, 3, 3});
  expectError(ctx,
              _mlir_ciface_memfmt_conv2d_f32(
                  ctx, 42, conv.in.memref(), w2.memref(), conv.b.memref(),
                  conv.out.memref(), conv.out.memref(), 1, 1, 1, 1, 1, 1, 1, 1,
                  1, 1, 0, 0, 0, 0.0, 0.0),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"weight has shape [8, 2, 3, 3]"});

  // Kernel larger than the padded input.
  Tensor big({8, 4, 9, 9});
  expectError(ctx,
              _mlir_ciface_memfmt_conv2d_f32(
                  ctx, 42, conv.in.memref(), big.memref(), conv.b.memref(),
                  conv.out.memref(), conv.out.memref(), 1, 1, 1, 1, 1, 1, 1, 1,
                  1, 1, 0, 0, 0, 0.0, 0.0),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"larger than the padded input"});

  // Wrong bias and residual shapes.
  Tensor bias7({7});
  expectError(ctx,
              _mlir_ciface_memfmt_conv2d_f32(
                  ctx, 42, conv.in.memref(), conv.w.memref(), bias7.memref(),
                  conv.out.memref(), conv.out.memref(), 1, 1, 1, 1, 1, 1, 1, 1,
                  1, 1, 0, 0, 0, 0.0, 0.0),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"bias has shape [7]"});
  Tensor residual({1, 8, 6, 5});
  expectError(ctx,
              _mlir_ciface_memfmt_conv2d_f32(
                  ctx, 42, conv.in.memref(), conv.w.memref(), conv.b.memref(),
                  residual.memref(), conv.out.memref(), 1, 1, 1, 1, 1, 1, 1, 1,
                  1, 1, 1, 0, 0, 0.0, 0.0),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"residual has shape"});
}

TEST_P(ErrorTest, OutputsMustNotOverlapOrAlias) {
  TestContext ctx(GetParam());
  // An output with a zero stride on a dim of size 8 (an expanded view).
  Tensor expanded({1, 8, 6, 6}, std::vector<int64_t>{36, 0, 6, 1}, 0, 36);
  Conv conv;
  expectError(ctx, conv.run(ctx, conv.in.memref(), expanded.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"overlapping elements"});

  // Convolution into its own input.
  Tensor square({1, 4, 6, 6}, CL), w({4, 4, 3, 3});
  expectError(
      ctx,
      _mlir_ciface_memfmt_conv2d_f32(
          ctx, 42, square.memref(), w.memref(), square.memref(),
          square.memref(), square.memref(), 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0.0, 0.0),
      MEMFMT_STATUS_INVALID_ARGUMENT, {"output is the same buffer as input"});

  // relu in place, but through a different layout of the same buffer.
  Tensor t({2, 3, 4, 4}, C);
  Tensor transposed({2, 3, 4, 4}, std::vector<int64_t>{48, 16, 1, 4}, 0, 96);
  transposed.buffer = t.buffer;
  memfmt_memref_t alias = *transposed.memref();
  std::vector<int64_t> descriptor(11);
  std::memcpy(descriptor.data(), alias.descriptor, 11 * sizeof(int64_t));
  float *base = t.buffer.data();
  std::memcpy(&descriptor[0], &base, sizeof(base));
  std::memcpy(&descriptor[1], &base, sizeof(base));
  alias.descriptor = descriptor.data();
  expectError(ctx, _mlir_ciface_memfmt_relu_f32(ctx, 3, t.memref(), &alias),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"memfmt_relu_f32 (node 3)", "not its layout"});
}

TEST_P(ErrorTest, ElementwiseShapes) {
  TestContext ctx(GetParam());
  Tensor a({2, 3, 4}), b({2, 5, 4}), out({2, 3, 4}), out5({2, 5, 4});
  expectError(ctx,
              _mlir_ciface_memfmt_add_f32(ctx, 5, a.memref(), b.memref(),
                                          out5.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"do not broadcast"});
  Tensor c({3, 1});
  expectError(ctx,
              _mlir_ciface_memfmt_add_f32(ctx, 5, a.memref(), c.memref(),
                                          out5.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"output has shape [2, 5, 4]", "expected [2, 3, 4]"});
  expectError(ctx, _mlir_ciface_memfmt_relu_f32(ctx, 5, a.memref(), b.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"output has shape [2, 5, 4]"});
  expectError(ctx, _mlir_ciface_memfmt_copy_f32(ctx, 5, a.memref(), b.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"memfmt_copy_f32"});
  // binary and eltwise: the shapes as add's and relu's, and their `op`.
  expectError(ctx,
              _mlir_ciface_memfmt_binary_f32(ctx, 5, a.memref(), b.memref(),
                                             out5.memref(), MEMFMT_BINARY_MUL),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"memfmt_binary_f32 (node 5)", "do not broadcast"});
  expectError(ctx,
              _mlir_ciface_memfmt_binary_f32(ctx, 5, a.memref(), a.memref(),
                                             out.memref(), 9),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"op 9 is not a memfmt_binary_op_t (1 to 3)"});
  expectError(ctx,
              _mlir_ciface_memfmt_eltwise_f32(ctx, 5, a.memref(), b.memref(),
                                              MEMFMT_ELTWISE_SIGMOID, 0, 0),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"memfmt_eltwise_f32 (node 5)", "output has shape [2, 5, 4]"});
  expectError(ctx,
              _mlir_ciface_memfmt_eltwise_f32(ctx, 5, a.memref(), out.memref(),
                                              0, 0, 0),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"op 0 is not a memfmt_eltwise_op_t (1 to 7)"});
  expectError(ctx,
              _mlir_ciface_memfmt_eltwise_f32(
                  ctx, 5, a.memref(), out.memref(), MEMFMT_ELTWISE_CLAMP,
                  std::numeric_limits<double>::quiet_NaN(), 1.0),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"alpha and beta must not be NaN"});

  Tensor x({2, 3, 4, 4}), w({3}), w4({4}), y({2, 3, 4, 4});
  expectError(ctx,
              _mlir_ciface_memfmt_batch_norm_f32(
                  ctx, 6, x.memref(), w4.memref(), w.memref(), w.memref(),
                  w.memref(), y.memref(), 1e-5),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"weight has shape [4]"});
  expectError(ctx,
              _mlir_ciface_memfmt_batch_norm_f32(ctx, 6, x.memref(), w.memref(),
                                                 w.memref(), w.memref(),
                                                 w.memref(), y.memref(), -1.0),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"eps"});
  Tensor vec({3});
  expectError(ctx,
              _mlir_ciface_memfmt_batch_norm_f32(
                  ctx, 6, vec.memref(), w.memref(), w.memref(), w.memref(),
                  w.memref(), vec.memref(), 1e-5),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"at least 2"});
}

TEST_P(ErrorTest, LayerNormShapesFlagsAndEps) {
  TestContext ctx(GetParam());
  Tensor x({2, 3, 4}), y({2, 3, 4}), w({4}), b({4});
  x.fillRandom(1);
  auto run = [&](const Tensor &in, const Tensor &out, const Tensor &weight,
                 const Tensor &bias, double eps, int64_t hasWeight,
                 int64_t hasBias) {
    return _mlir_ciface_memfmt_layer_norm_f32(
        ctx, 11, in.memref(), weight.memref(), bias.memref(), out.memref(), eps,
        hasWeight, hasBias);
  };
  const std::vector<float> untouched = y.buffer;

  Tensor y5({2, 3, 5});
  expectError(ctx, run(x, y5, w, b, 1e-5, 1, 1), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"memfmt_layer_norm_f32 (node 11)", "output has shape [2, 3, 5]",
               "expected [2, 3, 4] (the input's shape)"});
  Tensor scalar(std::vector<int64_t>{}), scalarOut(std::vector<int64_t>{});
  expectError(ctx, run(scalar, scalarOut, w, b, 1e-5, 0, 0),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"input has rank 0", "expected at least 1"});
  Tensor w5({5}), b41({4, 1});
  expectError(ctx, run(x, y, w5, b, 1e-5, 1, 1), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"weight has shape [5], expected [4] (the last dim of input "
               "[2, 3, 4])"});
  expectError(ctx, run(x, y, w, b41, 1e-5, 1, 1),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"bias has shape [4, 1], expected [4]"});
  // Absent parameters are not looked at (the output stands in for them).
  EXPECT_EQ(run(x, y, w5, b41, 1e-5, 0, 0), MEMFMT_STATUS_OK)
      << ctx.lastError();
  y.buffer = untouched;
  expectError(ctx, run(x, y, w, b, 1e-5, 2, 1), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"has_weight is 2, expected 0 or 1"});
  expectError(ctx, run(x, y, w, b, 1e-5, 1, -1), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"has_bias is -1, expected 0 or 1"});
  for (double eps : {-1e-5, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()})
    expectError(ctx, run(x, y, w, b, eps, 1, 1), MEMFMT_STATUS_INVALID_ARGUMENT,
                {"eps is ", ", expected a finite value >= 0"});
  // The output as weight or bias, overlapping, or in place through another
  // layout of the input's buffer.
  Tensor row({4}), rowOut({4});
  row.fillRandom(2);
  expectError(ctx, run(row, rowOut, rowOut, b, 1e-5, 1, 0),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"output is the same buffer as weight"});
  expectError(ctx, run(row, rowOut, w, rowOut, 1e-5, 0, 1),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"output is the same buffer as bias"});
  Tensor expanded({2, 3, 4}, std::vector<int64_t>{0, 4, 1}, 0, 12);
  expectError(ctx, run(x, expanded, w, b, 1e-5, 1, 1),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"overlapping elements"});
  Tensor square({4, 4});
  std::vector<int64_t> descriptor;
  memfmt_memref_t alias = transposedAlias(square, descriptor);
  expectError(ctx,
              _mlir_ciface_memfmt_layer_norm_f32(ctx, 11, square.memref(),
                                                 w.memref(), b.memref(), &alias,
                                                 1e-5, 1, 1),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"not its layout"});
  EXPECT_EQ(y.buffer, untouched) << "a failed call wrote its output";
}

TEST_P(ErrorTest, SoftmaxShapesAndDim) {
  TestContext ctx(GetParam());
  Tensor x({2, 3, 4}), y({2, 3, 4});
  x.fillRandom(1);
  auto run = [&](const Tensor &in, const Tensor &out, int64_t dim) {
    return _mlir_ciface_memfmt_softmax_f32(ctx, 12, in.memref(), out.memref(),
                                           dim);
  };
  const std::vector<float> untouched = y.buffer;

  Tensor y5({2, 3, 5});
  expectError(ctx, run(x, y5, 2), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"memfmt_softmax_f32 (node 12)", "output has shape [2, 3, 5]",
               "expected [2, 3, 4] (the input's shape)"});
  Tensor flat({24});
  expectError(ctx, run(x, flat, 0), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"output has shape [24], expected [2, 3, 4]"});
  Tensor scalar(std::vector<int64_t>{}), scalarOut(std::vector<int64_t>{});
  expectError(ctx, run(scalar, scalarOut, 0), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"input has rank 0", "expected at least 1"});
  // PyTorch's negative dims are the compiler's to normalize.
  expectError(ctx, run(x, y, -1), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"dim is -1, expected a dim of input [2, 3, 4] in [0, 3)"});
  expectError(ctx, run(x, y, 3), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"dim is 3, expected a dim of input [2, 3, 4] in [0, 3)"});
  // An overlapping output, or in place through another layout of the
  // input's buffer.
  Tensor expanded({2, 3, 4}, std::vector<int64_t>{0, 4, 1}, 0, 12);
  expectError(ctx, run(x, expanded, 2), MEMFMT_STATUS_INVALID_ARGUMENT,
              {"overlapping elements"});
  Tensor square({4, 4});
  std::vector<int64_t> descriptor;
  memfmt_memref_t alias = transposedAlias(square, descriptor);
  expectError(
      ctx, _mlir_ciface_memfmt_softmax_f32(ctx, 12, square.memref(), &alias, 1),
      MEMFMT_STATUS_INVALID_ARGUMENT, {"not its layout"});
  EXPECT_EQ(y.buffer, untouched) << "a failed call wrote its output";
}

TEST_P(ErrorTest, PoolingWindowsAndSizes) {
  TestContext ctx(GetParam());
  Tensor in({1, 2, 4, 4}, CL);
  // Output row 2 of a 2x2/stride-2 pool over 4 rows starts below the input.
  Tensor tooTall({1, 2, 3, 2}, CL);
  expectError(ctx,
              _mlir_ciface_memfmt_max_pool2d_f32(ctx, 7, in.memref(),
                                                 tooTall.memref(), 2, 2, 2, 2,
                                                 0, 0, 1, 1),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"window of output row 2 covers no element"});
  Tensor otherChannels({1, 3, 2, 2});
  expectError(ctx,
              _mlir_ciface_memfmt_max_pool2d_f32(ctx, 7, in.memref(),
                                                 otherChannels.memref(), 2, 2,
                                                 2, 2, 0, 0, 1, 1),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"batch and channel dims"});
  Tensor out({1, 2, 2, 2});
  IndexTensor badIndices({1, 2, 2, 3});
  expectError(ctx,
              _mlir_ciface_memfmt_max_pool2d_with_indices_f32(
                  ctx, 7, in.memref(), out.memref(), badIndices.memref(), 2, 2,
                  2, 2, 0, 0, 1, 1),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"indices has shape"});
  expectError(ctx,
              _mlir_ciface_memfmt_max_pool2d_f32(
                  ctx, 7, in.memref(), out.memref(), 0, 2, 2, 2, 0, 0, 1, 1),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"kernel_h is 0"});

  // Average pool: 4 rows, kernel 2, stride 2 gives 2 (floor and ceil).
  Tensor three({1, 2, 3, 2});
  expectError(ctx,
              _mlir_ciface_memfmt_avg_pool2d_f32(ctx, 8, in.memref(),
                                                 three.memref(), 2, 2, 2, 2, 0,
                                                 0, 0, 0, 1),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"output height is 3", "expected 2 (floor mode)"});
  expectError(ctx,
              _mlir_ciface_memfmt_avg_pool2d_f32(
                  ctx, 8, in.memref(), out.memref(), 2, 2, 2, 2, 0, 0, 0, 0, 3),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"count_include_pad is 3"});
  // Ceil mode over 5 rows, kernel 2, stride 2, padding 1: ATen (and the
  // compiler) drop a 4th window, which would start in the end padding; it
  // is no valid size even though it covers a padded row.
  Tensor five({1, 2, 5, 5}, CL), fourRows({1, 2, 4, 3}),
      threeRows({1, 2, 3, 3});
  expectError(
      ctx,
      _mlir_ciface_memfmt_avg_pool2d_f32(
          ctx, 8, five.memref(), fourRows.memref(), 2, 2, 2, 2, 1, 1, 1, 1, 1),
      MEMFMT_STATUS_INVALID_ARGUMENT,
      {"output height is 4", "expected 3 (floor mode) or 3 (ceil mode)"});
  EXPECT_KERNEL_OK(ctx, _mlir_ciface_memfmt_avg_pool2d_f32(
                            ctx, 8, five.memref(), threeRows.memref(), 2, 2, 2,
                            2, 1, 1, 1, 1, 1));

  Tensor empty({1, 2, 0, 4}), one({1, 2, 1, 1});
  expectError(ctx,
              _mlir_ciface_memfmt_adaptive_avg_pool2d_f32(
                  ctx, 9, empty.memref(), one.memref()),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"empty plane"});
}

TEST_P(ErrorTest, LinearShapes) {
  TestContext ctx(GetParam());
  Tensor in({2, 5}), w({3, 4}), out({2, 3});
  expectError(ctx,
              _mlir_ciface_memfmt_linear_f32(ctx, 10, in.memref(), w.memref(),
                                             out.memref(), out.memref(), 0, 0,
                                             0.0, 0.0),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"weight has shape [3, 4]"});
  Tensor w5({3, 5}), out4({2, 4});
  expectError(ctx,
              _mlir_ciface_memfmt_linear_f32(ctx, 10, in.memref(), w5.memref(),
                                             out4.memref(), out4.memref(), 0,
                                             0, 0.0, 0.0),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"expected [2, 3]"});
  Tensor rank3({2, 5, 1});
  expectError(ctx,
              _mlir_ciface_memfmt_linear_f32(ctx, 10, rank3.memref(),
                                             w5.memref(), out.memref(),
                                             out.memref(), 0, 0, 0.0, 0.0),
              MEMFMT_STATUS_INVALID_ARGUMENT, {"input has rank 3"});
  // The fused activation: a memfmt_eltwise_op_t, its parameters not NaN.
  expectError(ctx,
              _mlir_ciface_memfmt_linear_f32(ctx, 10, in.memref(), w5.memref(),
                                             out.memref(), out.memref(), 0, 99,
                                             0.0, 0.0),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"activation 99 is neither 0 nor a memfmt_eltwise_op_t"});
  expectError(ctx,
              _mlir_ciface_memfmt_linear_f32(
                  ctx, 10, in.memref(), w5.memref(), out.memref(),
                  out.memref(), 0, MEMFMT_ELTWISE_CLAMP, std::nan(""), 6.0),
              MEMFMT_STATUS_INVALID_ARGUMENT,
              {"activation_alpha and activation_beta must not be NaN"});
}

/// A failed call still counts in the profile.
TEST_P(ErrorTest, FailedCallsAreProfiled) {
  TestContext ctx(GetParam());
  Tensor a({2, 3}), b({3, 2});
  EXPECT_EQ(_mlir_ciface_memfmt_relu_f32(ctx, 13, a.memref(), b.memref()),
            MEMFMT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.implOf(13), "none");
}

INSTANTIATE_TEST_SUITE_P(Kernels, ErrorTest,
                         ::testing::Values(MEMFMT_KERNELS_REFERENCE,
                                           MEMFMT_KERNELS_FAST),
                         [](const auto &info) {
                           return std::string(toString(info.param));
                         });

} // namespace
