//===- WeightsTest.cpp - Tests of the weights blob ------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Re-layout puts logical element (n, c, h, w) at the byte its strides say,
// for f32, f16 and bf16; synthetic weights are deterministic per (seed,
// name) and have the statistics of their rule; the safetensors source loads
// F32/F16/BF16 files and lists every mismatch by name in one message.
//
//===----------------------------------------------------------------------===//

#include "LoaderTestUtil.h"

#include "memfmt/runtime/io/HalfFloat.h"
#include "memfmt/runtime/io/SafeTensors.h"
#include "memfmt/runtime/loader/Weights.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace memfmt;
using namespace memfmt::loader;
using namespace memfmt::loader::test;
using ::testing::HasSubstr;

namespace {

std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &Shape) {
  std::vector<int64_t> Strides(Shape.size(), 1);
  for (size_t D = Shape.size(); D-- > 1;)
    Strides[D - 1] = Strides[D] * Shape[D];
  return Strides;
}

std::vector<int64_t> channelsLastStrides(const std::vector<int64_t> &Shape) {
  int64_t C = Shape[1], H = Shape[2], W = Shape[3];
  return {H * W * C, 1, W * C, C};
}

/// Appends a parameter at the next 64-byte boundary of the blob.
void addParameter(Manifest &M, const std::string &Name,
                  std::vector<int64_t> Shape, std::vector<int64_t> Strides = {},
                  ElementType Type = ElementType::F32) {
  TensorSpec P;
  P.Name = Name;
  P.Type = Type;
  P.Shape = std::move(Shape);
  P.Strides = Strides.empty() ? contiguousStrides(P.Shape) : std::move(Strides);
  P.Offset = (M.WeightsBytes + 63) / 64 * 64;
  P.Bytes = P.extentBytes();
  M.WeightsBytes = P.Offset + P.Bytes;
  M.Parameters.push_back(std::move(P));
}

/// A small ResNet-like parameter list: conv, batch norm, linear.
Manifest resnetLike() {
  Manifest M;
  M.Model = "tiny";
  M.Path = "/m/manifest.json";
  addParameter(M, "conv1.weight", {8, 3, 3, 3},
               channelsLastStrides({8, 3, 3, 3}));
  addParameter(M, "bn1.weight", {8});
  addParameter(M, "bn1.bias", {8});
  addParameter(M, "bn1.running_mean", {8});
  addParameter(M, "bn1.running_var", {8});
  addParameter(M, "fc.weight", {10, 8});
  addParameter(M, "fc.bias", {10});
  return M;
}

std::vector<uint8_t> build(const Manifest &M, const WeightsSource &S) {
  std::vector<uint8_t> Blob(static_cast<size_t>(M.WeightsBytes), 0xAB);
  io::Status Result = buildWeights(M, S, Blob.data());
  EXPECT_TRUE(Result.ok()) << Result.error();
  return Blob;
}

WeightsSource synthetic(uint64_t Seed) {
  WeightsSource S;
  S.Seed = Seed;
  return S;
}

/// Parameter \p Index of \p Blob, read back as row-major f32.
std::vector<float> readBack(const Manifest &M, const std::vector<uint8_t> &Blob,
                            size_t Index) {
  const TensorSpec &P = M.Parameters[Index];
  std::vector<float> Out(static_cast<size_t>(P.numElements()));
  gatherToRowMajor(Blob.data() + P.Offset, P, Out.data());
  return Out;
}

struct Moments {
  double Mean = 0, Std = 0, Min = 0, Max = 0;
};

Moments moments(const std::vector<float> &V) {
  Moments R;
  R.Min = R.Max = V[0];
  double Sum = 0, Sum2 = 0;
  for (float X : V) {
    Sum += X;
    Sum2 += static_cast<double>(X) * X;
    R.Min = std::min<double>(R.Min, X);
    R.Max = std::max<double>(R.Max, X);
  }
  R.Mean = Sum / V.size();
  R.Std = std::sqrt(Sum2 / V.size() - R.Mean * R.Mean);
  return R;
}

//===----------------------------------------------------------------------===//
// Re-layout
//===----------------------------------------------------------------------===//

// Channels-last strides put logical (n, c, h, w) at offset + (n*HWC + c +
// h*WC + w*C) * 4, and gathering restores the logical order.
TEST(Relayout, ChannelsLastF32) {
  const int64_t N = 2, C = 3, H = 4, W = 5;
  Manifest M;
  M.WeightsBytes = 64; // The parameter starts at byte 64.
  addParameter(M, "x", {N, C, H, W}, channelsLastStrides({N, C, H, W}));
  ASSERT_EQ(M.Parameters[0].Offset, 64);
  std::vector<float> Logical;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          Logical.push_back(
              static_cast<float>(n * 1000 + c * 100 + h * 10 + w));
  std::vector<uint8_t> Blob(static_cast<size_t>(M.WeightsBytes), 0);
  scatterFromRowMajor(Logical.data(), M.Parameters[0], Blob.data() + 64);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          float Got;
          size_t Byte = 64 + (n * H * W * C + c + h * W * C + w * C) * 4;
          std::memcpy(&Got, Blob.data() + Byte, 4);
          ASSERT_EQ(Got, n * 1000 + c * 100 + h * 10 + w)
              << "(" << n << "," << c << "," << h << "," << w << ")";
        }
  EXPECT_EQ(readBack(M, Blob, 0), Logical);
}

// f16 and bf16 parameters are rounded on the way in and widened on the way
// out; padded strides leave the gaps alone.
TEST(Relayout, HalfTypesAndGaps) {
  for (ElementType Type : {ElementType::F16, ElementType::BF16}) {
    Manifest M;
    // [2, 3] with a row pitch of 4 elements: one unused slot per row.
    addParameter(M, "x", {2, 3}, {4, 1}, Type);
    std::vector<float> Logical = {1.0f, -2.5f, 0.375f, 1024.0f, 3.0f, -0.0f};
    std::vector<uint8_t> Blob(static_cast<size_t>(M.WeightsBytes), 0x5A);
    scatterFromRowMajor(Logical.data(), M.Parameters[0], Blob.data());
    uint16_t Slot3, Slot0;
    std::memcpy(&Slot3, Blob.data() + 6, 2);
    std::memcpy(&Slot0, Blob.data(), 2);
    EXPECT_EQ(Slot3, 0x5A5A) << "the gap was written";
    EXPECT_EQ(Slot0, Type == ElementType::F16 ? io::floatToHalf(1.0f)
                                              : io::floatToBFloat16(1.0f));
    EXPECT_EQ(readBack(M, Blob, 0), Logical) << toString(Type);
  }
}

// Rank 0 and empty tensors.
TEST(Relayout, ScalarsAndEmpty) {
  Manifest M;
  addParameter(M, "s", {});
  addParameter(M, "e", {0, 4});
  std::vector<uint8_t> Blob(static_cast<size_t>(M.WeightsBytes) + 4, 0);
  float V = 7.0f;
  scatterFromRowMajor(&V, M.Parameters[0], Blob.data());
  EXPECT_EQ(readBack(M, Blob, 0), std::vector<float>{7.0f});
  scatterFromRowMajor(nullptr, M.Parameters[1], Blob.data());
}

//===----------------------------------------------------------------------===//
// Synthetic weights
//===----------------------------------------------------------------------===//

// The same seed gives the same bytes; another seed other bytes; padding is
// zero.
TEST(Synthetic, Deterministic) {
  Manifest M = resnetLike();
  std::vector<uint8_t> A = build(M, synthetic(1));
  std::vector<uint8_t> B = build(M, synthetic(1));
  std::vector<uint8_t> C = build(M, synthetic(2));
  EXPECT_EQ(A, B);
  for (size_t I = 0; I < M.Parameters.size(); ++I)
    EXPECT_NE(readBack(M, A, I), readBack(M, C, I)) << M.Parameters[I].Name;
  // Bytes between parameters are zero, not left over.
  const TensorSpec &Conv = M.Parameters[0], &Bn = M.Parameters[1];
  for (int64_t Byte = Conv.Offset + Conv.Bytes; Byte < Bn.Offset; ++Byte)
    ASSERT_EQ(A[Byte], 0) << "byte " << Byte;
}

// A parameter's values depend on (seed, name) only: not on its layout, its
// place in the blob or the other parameters.
TEST(Synthetic, IndependentOfLayoutAndNeighbours) {
  Manifest M = resnetLike();
  Manifest Other;
  addParameter(Other, "extra.weight", {4, 4, 1, 1});
  addParameter(Other, "conv1.weight", {8, 3, 3, 3}); // Contiguous this time.
  std::vector<uint8_t> A = build(M, synthetic(5));
  std::vector<uint8_t> B = build(Other, synthetic(5));
  EXPECT_EQ(readBack(M, A, 0), readBack(Other, B, 1));
}

// The rules by name and rank.
TEST(Synthetic, Rules) {
  Manifest M = resnetLike();
  addParameter(M, "ln.weight", {8});
  addParameter(M, "conv2.bias", {8});
  addParameter(M, "pos", {2, 3, 4});
  auto Rule = [&](size_t I) { return syntheticInit(M, I).Rule; };
  EXPECT_EQ(Rule(0), "he-normal(fan_in=27)");
  EXPECT_EQ(Rule(1), "bn-scale-uniform");
  EXPECT_EQ(Rule(2), "bias-normal");
  EXPECT_EQ(Rule(3), "running-mean-normal");
  EXPECT_EQ(Rule(4), "running-var-uniform");
  EXPECT_EQ(Rule(5), "linear-uniform(in=8)");
  EXPECT_EQ(Rule(6), "linear-bias-uniform(in=8)");
  EXPECT_EQ(Rule(7), "scale-uniform");
  EXPECT_EQ(Rule(8), "bias-normal");
  EXPECT_EQ(Rule(9), "he-normal(fan_in=12)");
}

// The last batch norm of a residual branch gets a small scale; the others,
// the stem's and the shortcut's keep [0.5, 1.5].
TEST(Synthetic, ResidualBranchScale) {
  Manifest M;
  for (const char *Name :
       {"bn1", "conv1", "layer1.0.conv1", "layer1.0.bn1", "layer1.0.bn2",
        "layer1.0.bn3", "layer1.0.downsample.1", "layer2.0.conv1",
        "layer2.0.bn1", "layer2.0.bn2"}) {
    std::string Prefix(Name);
    bool IsConv = Prefix.find("conv") != std::string::npos;
    addParameter(M, Prefix + ".weight",
                 IsConv ? std::vector<int64_t>{8, 8, 1, 1}
                        : std::vector<int64_t>{8});
    if (!IsConv)
      addParameter(M, Prefix + ".running_var", {8});
  }
  auto RuleOf = [&](const std::string &Name) {
    for (size_t I = 0; I < M.Parameters.size(); ++I)
      if (M.Parameters[I].Name == Name)
        return syntheticInit(M, I).Rule;
    return std::string("missing");
  };
  EXPECT_EQ(RuleOf("bn1.weight"), "bn-scale-uniform");
  EXPECT_EQ(RuleOf("layer1.0.bn2.weight"), "bn-scale-uniform");
  EXPECT_EQ(RuleOf("layer1.0.bn3.weight"), "residual-bn-scale-uniform");
  EXPECT_EQ(RuleOf("layer1.0.downsample.1.weight"), "bn-scale-uniform");
  EXPECT_EQ(RuleOf("layer2.0.bn2.weight"), "residual-bn-scale-uniform");
}

// Statistics on big tensors: He std within 10% (in fact much closer), the
// uniform ranges respected and filled.
TEST(Synthetic, Statistics) {
  Manifest M;
  addParameter(M, "layer3.0.conv2.weight", {256, 256, 3, 3},
               channelsLastStrides({256, 256, 3, 3}));
  addParameter(M, "layer3.0.bn2.weight", {4096});
  addParameter(M, "layer3.0.bn2.bias", {4096});
  addParameter(M, "layer3.0.bn2.running_mean", {4096});
  addParameter(M, "layer3.0.bn2.running_var", {4096});
  addParameter(M, "fc.weight", {1000, 2048});
  addParameter(M, "fc.bias", {1000});
  std::vector<uint8_t> Blob = build(M, synthetic(0));

  Moments Conv = moments(readBack(M, Blob, 0));
  double HeStd = std::sqrt(2.0 / (256 * 9));
  EXPECT_NEAR(Conv.Std, HeStd, 0.1 * HeStd);
  EXPECT_NEAR(Conv.Std, HeStd, 0.01 * HeStd);
  EXPECT_NEAR(Conv.Mean, 0.0, 0.01 * HeStd);

  for (size_t I : {1, 4}) {
    Moments U = moments(readBack(M, Blob, I));
    EXPECT_GE(U.Min, 0.5) << M.Parameters[I].Name;
    EXPECT_LT(U.Max, 1.5) << M.Parameters[I].Name;
    EXPECT_NEAR(U.Mean, 1.0, 0.02) << M.Parameters[I].Name;
    EXPECT_NEAR(U.Std, 1.0 / std::sqrt(12.0), 0.02) << M.Parameters[I].Name;
  }
  for (size_t I : {2, 3}) {
    Moments N = moments(readBack(M, Blob, I));
    EXPECT_NEAR(N.Mean, 0.0, 0.01) << M.Parameters[I].Name;
    EXPECT_NEAR(N.Std, 0.1, 0.01) << M.Parameters[I].Name;
  }
  double Bound = 1.0 / std::sqrt(2048.0);
  Moments Fc = moments(readBack(M, Blob, 5));
  EXPECT_GE(Fc.Min, -Bound);
  EXPECT_LT(Fc.Max, Bound);
  EXPECT_NEAR(Fc.Std, Bound / std::sqrt(3.0), 0.01 * Bound);
  Moments FcBias = moments(readBack(M, Blob, 6));
  EXPECT_GE(FcBias.Min, -Bound);
  EXPECT_LT(FcBias.Max, Bound);
}

//===----------------------------------------------------------------------===//
// Safetensors weights
//===----------------------------------------------------------------------===//

io::TensorView view(const std::string &Name, io::DType Type,
                    std::vector<int64_t> Shape, const void *Data,
                    size_t Bytes) {
  io::TensorView V;
  V.Name = Name;
  V.Type = Type;
  V.Shape = std::move(Shape);
  V.Data = static_cast<const uint8_t *>(Data);
  V.NumBytes = Bytes;
  return V;
}

// F32, F16 and BF16 tensors load into f32 parameters at their strides;
// num_batches_tracked is ignored.
TEST(SafeTensorsSource, LoadsAllFloatTypes) {
  Manifest M;
  M.Model = "tiny";
  addParameter(M, "conv.weight", {2, 3, 2, 2},
               channelsLastStrides({2, 3, 2, 2}));
  addParameter(M, "bn.weight", {3});
  addParameter(M, "fc.weight", {2, 2}, {1, 2}); // Transposed layout.

  std::vector<float> Conv(24);
  for (size_t I = 0; I < Conv.size(); ++I)
    Conv[I] = 0.25f * static_cast<float>(I) - 3.0f;
  std::vector<float> Bn = {0.5f, 1.0f, 1.5f};
  std::vector<uint16_t> BnHalf(3);
  io::convertF32ToF16(Bn.data(), BnHalf.data(), 3);
  std::vector<float> Fc = {1.0f, -2.0f, 0.125f, 64.0f};
  std::vector<uint16_t> FcBf16(4);
  io::convertF32ToBF16(Fc.data(), FcBf16.data(), 4);
  int64_t Tracked = 100;

  TempDir Dir;
  std::string Path = Dir.file("w.safetensors");
  io::Status Written = io::writeSafeTensors(
      Path, {view("conv.weight", io::DType::F32, {2, 3, 2, 2}, Conv.data(), 96),
             view("bn.num_batches_tracked", io::DType::I64, {}, &Tracked, 8),
             view("bn.weight", io::DType::F16, {3}, BnHalf.data(), 6),
             view("fc.weight", io::DType::BF16, {2, 2}, FcBf16.data(), 8)});
  ASSERT_TRUE(Written.ok()) << Written.error();

  WeightsSource S;
  S.K = WeightsSource::Kind::SafeTensors;
  S.Path = Path;
  std::vector<uint8_t> Blob = build(M, S);
  EXPECT_EQ(readBack(M, Blob, 0), Conv);
  EXPECT_EQ(readBack(M, Blob, 1), Bn);
  EXPECT_EQ(readBack(M, Blob, 2), Fc);
  // fc.weight is stored transposed: logical (0, 1) = -2 sits at slot 2.
  float Slot2;
  std::memcpy(&Slot2, Blob.data() + M.Parameters[2].Offset + 8, 4);
  EXPECT_EQ(Slot2, -2.0f);
}

// A zero-initialised parameter (optimizer state) starts as zeros from a
// synthetic source and when a safetensors file lacks it, and takes the
// file's values when it has them; the other parameters load as usual.
TEST(SafeTensorsSource, ZeroInitState) {
  Manifest M;
  M.Model = "tiny";
  addParameter(M, "fc.weight", {2, 2});
  addParameter(M, "fc.weight.momentum_buffer", {2, 2});
  addParameter(M, "fc.bias.momentum_buffer", {2});
  M.Parameters[1].ZeroInit = true;
  M.Parameters[2].ZeroInit = true;
  const std::vector<float> Zeros2x2(4, 0.0f), Zeros2(2, 0.0f);

  std::vector<uint8_t> Synthetic = build(M, synthetic(7));
  EXPECT_NE(readBack(M, Synthetic, 0), Zeros2x2);
  EXPECT_EQ(readBack(M, Synthetic, 1), Zeros2x2);
  EXPECT_EQ(readBack(M, Synthetic, 2), Zeros2);

  std::vector<float> W = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> Buf = {0.5f, -0.5f};
  TempDir Dir;
  std::string Path = Dir.file("w.safetensors");
  io::Status Written = io::writeSafeTensors(
      Path,
      {view("fc.weight", io::DType::F32, {2, 2}, W.data(), 16),
       view("fc.bias.momentum_buffer", io::DType::F32, {2}, Buf.data(), 8)});
  ASSERT_TRUE(Written.ok()) << Written.error();
  WeightsSource S;
  S.K = WeightsSource::Kind::SafeTensors;
  S.Path = Path;
  std::vector<uint8_t> Blob = build(M, S);
  EXPECT_EQ(readBack(M, Blob, 0), W);
  EXPECT_EQ(readBack(M, Blob, 1), Zeros2x2);
  EXPECT_EQ(readBack(M, Blob, 2), Buf);
}

// An optimizer's step count (an i64 zero_init parameter) starts at 0 and
// loads exactly from an I64 tensor, beyond f32's exact integers; any other
// dtype is an error naming it.
TEST(SafeTensorsSource, StepCount) {
  Manifest M;
  M.Model = "tiny";
  addParameter(M, "fc.weight", {2});
  addParameter(M, "optimizer.step", {}, {}, ElementType::I64);
  M.Parameters[1].ZeroInit = true;
  auto count = [&](const std::vector<uint8_t> &Blob) {
    int64_t V;
    std::memcpy(&V, Blob.data() + M.Parameters[1].Offset, 8);
    return V;
  };
  EXPECT_EQ(count(build(M, synthetic(3))), 0);

  std::vector<float> W = {1.0f, 2.0f};
  int64_t Steps = (int64_t(1) << 40) + 3;
  float NotACount = 3.0f;
  TempDir Dir;
  std::string Path = Dir.file("w.safetensors");
  ASSERT_TRUE(io::writeSafeTensors(
                  Path, {view("optimizer.step", io::DType::I64, {}, &Steps, 8),
                         view("fc.weight", io::DType::F32, {2}, W.data(), 8)})
                  .ok());
  WeightsSource S;
  S.K = WeightsSource::Kind::SafeTensors;
  S.Path = Path;
  EXPECT_EQ(count(build(M, S)), Steps);

  std::string Bad = Dir.file("bad.safetensors");
  ASSERT_TRUE(
      io::writeSafeTensors(
          Bad, {view("fc.weight", io::DType::F32, {2}, W.data(), 8),
                view("optimizer.step", io::DType::F32, {}, &NotACount, 4)})
          .ok());
  std::vector<uint8_t> Blob(static_cast<size_t>(M.WeightsBytes));
  io::Status Result = fillFromSafeTensors(M, Bad, Blob.data());
  ASSERT_FALSE(Result.ok());
  EXPECT_THAT(Result.error(),
              HasSubstr("1 with an unsupported dtype (expected F32, F16 or "
                        "BF16): optimizer.step is F32, expected I64"));
}

// i64 tensors (class indices) move between row-major f32 and strided i64.
TEST(Relayout, I64) {
  TensorSpec T;
  T.Type = ElementType::I64;
  T.Shape = {3};
  T.Strides = {2};
  std::vector<float> In = {0.0f, 7.0f, 2.0f};
  std::vector<int64_t> Buffer(5, -1);
  scatterFromRowMajor(In.data(), T, Buffer.data());
  EXPECT_EQ(Buffer, (std::vector<int64_t>{0, -1, 7, -1, 2}));
  std::vector<float> Out(3);
  gatherToRowMajor(Buffer.data(), T, Out.data());
  EXPECT_EQ(Out, In);
}

// One message lists every missing, mis-shaped, wrongly typed and unexpected
// tensor by name; training-only state is not unexpected.
TEST(SafeTensorsSource, ListsEveryProblem) {
  Manifest M;
  M.Model = "tiny";
  M.Path = "/m/manifest.json";
  addParameter(M, "a.weight", {2, 2});
  addParameter(M, "b.weight", {3});
  addParameter(M, "c.weight", {3});
  addParameter(M, "d.bias", {2});
  addParameter(M, "e.bias", {2});
  addParameter(M, "f.bias", {2});

  std::vector<uint8_t> Zeros(64, 0);
  TempDir Dir;
  std::string Path = Dir.file("bad.safetensors");
  io::Status Written = io::writeSafeTensors(
      Path, {view("a.weight", io::DType::F32, {4}, Zeros.data(), 16),
             view("d.bias", io::DType::I32, {2}, Zeros.data(), 8),
             view("e.bias", io::DType::F64, {3}, Zeros.data(), 24),
             view("f.bias", io::DType::F32, {2}, Zeros.data(), 8),
             view("x.num_batches_tracked", io::DType::I64, {}, Zeros.data(), 8),
             view("a.weight.momentum_buffer", io::DType::F32, {2, 2},
                  Zeros.data(), 16),
             view("optimizer.step", io::DType::I64, {}, Zeros.data(), 8),
             view("extra1", io::DType::F32, {1}, Zeros.data(), 4),
             view("extra2", io::DType::F16, {1}, Zeros.data(), 2)});
  ASSERT_TRUE(Written.ok()) << Written.error();

  std::vector<uint8_t> Blob(static_cast<size_t>(M.WeightsBytes));
  io::Status Result = fillFromSafeTensors(M, Path, Blob.data());
  ASSERT_FALSE(Result.ok());
  const std::string &E = Result.error();
  EXPECT_THAT(E, HasSubstr(Path + ": does not match model 'tiny' "
                                  "(/m/manifest.json): "));
  EXPECT_THAT(E, HasSubstr("2 missing: b.weight, c.weight"));
  EXPECT_THAT(E, HasSubstr("2 with the wrong shape: a.weight is [4], the "
                           "model expects [2,2], e.bias is [3], the model "
                           "expects [2]"));
  EXPECT_THAT(E, HasSubstr("2 with an unsupported dtype (expected F32, F16 "
                           "or BF16): d.bias is I32, e.bias is F64"));
  EXPECT_THAT(E, HasSubstr("2 not parameters of the model: extra1, extra2"));
  // Training-only state the model lacks is not a problem (a training
  // checkpoint loads for inference).
  EXPECT_THAT(E, ::testing::Not(HasSubstr("num_batches_tracked")));
  EXPECT_THAT(E, ::testing::Not(HasSubstr("momentum_buffer")));
  EXPECT_THAT(E, ::testing::Not(HasSubstr("optimizer.step")));
  EXPECT_THAT(E, ::testing::Not(HasSubstr("f.bias")));
}

// A file that is not a safetensors file fails with the reader's message.
TEST(SafeTensorsSource, UnreadableFile) {
  Manifest M;
  addParameter(M, "a", {1});
  TempDir Dir;
  writeText(Dir.file("x.safetensors"), "garbage");
  std::vector<uint8_t> Blob(64);
  io::Status Result =
      fillFromSafeTensors(M, Dir.file("x.safetensors"), Blob.data());
  ASSERT_FALSE(Result.ok());
  EXPECT_THAT(Result.error(), HasSubstr(Dir.file("x.safetensors")));
}

} // namespace
