//===- RandomTest.cpp - Tests of the portable random numbers --------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The portable log/sin/cos agree with libm to 2e-15; SplitMix64 matches the
// reference sequence; normals have the right moments; and golden values pin
// the exact bits, so a change of algorithm (or an FMA sneaking in) shows up
// as a failure rather than as different synthetic weights on another
// machine.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/loader/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace memfmt::loader;

namespace {

// SplitMix64 seeded with 0 gives the published reference sequence.
TEST(Random, SplitMix64ReferenceSequence) {
  SplitMix64 G(0);
  EXPECT_EQ(G.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(G.next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(G.next(), 0x06C45D188009454Full);
}

// Uniforms lie in [0, 1).
TEST(Random, UniformRange) {
  SplitMix64 G(42);
  double Sum = 0;
  for (int I = 0; I < 100000; ++I) {
    double U = G.uniform();
    ASSERT_GE(U, 0.0);
    ASSERT_LT(U, 1.0);
    Sum += U;
  }
  EXPECT_NEAR(Sum / 100000, 0.5, 0.005);
}

// The series log agrees with libm's to 2e-15 (relative) over many magnitudes.
TEST(Random, PortableLogMatchesLibm) {
  SplitMix64 G(1);
  for (int I = 0; I < 100000; ++I) {
    double X = 1.0 - G.uniform(); // (0, 1], Box-Muller's range.
    double Want = std::log(X);
    EXPECT_NEAR(portableLog(X), Want, 2e-15 * std::fabs(Want) + 1e-300)
        << "x = " << X;
  }
  for (double X : {1.0, 2.0, 0.5, 1e-300, 3e300, 0.7071067811865476, 10.0})
    EXPECT_NEAR(portableLog(X), std::log(X), 2e-15 * std::fabs(std::log(X)))
        << "x = " << X;
  EXPECT_EQ(portableLog(1.0), 0.0);
}

// sin and cos of 2 pi t agree with libm's to 1e-15 over the turn.
TEST(Random, PortableSinCosMatchesLibm) {
  const double TwoPi = 6.283185307179586476925286766559;
  for (int I = 0; I < 4096; ++I) {
    double T = I / 4096.0 + 1.0 / 65536.0;
    double S = 0, C = 0;
    portableSinCos2Pi(T, S, C);
    EXPECT_NEAR(S, std::sin(TwoPi * T), 2e-15) << "t = " << T;
    EXPECT_NEAR(C, std::cos(TwoPi * T), 2e-15) << "t = " << T;
  }
  double S = 1, C = 0;
  portableSinCos2Pi(0.0, S, C);
  EXPECT_EQ(S, 0.0);
  EXPECT_EQ(C, 1.0);
}

// Box-Muller normals have mean 0, variance 1, the right mass within one
// standard deviation and kurtosis 3.
TEST(Random, NormalMoments) {
  NormalGenerator G(streamKey(3, "moments"));
  const int N = 1000000;
  double Sum = 0, Sum2 = 0, Sum4 = 0;
  int Within1 = 0;
  for (int I = 0; I < N; ++I) {
    double Z = G.next();
    ASSERT_TRUE(std::isfinite(Z));
    Sum += Z;
    Sum2 += Z * Z;
    Sum4 += Z * Z * Z * Z;
    Within1 += std::fabs(Z) < 1.0;
  }
  EXPECT_NEAR(Sum / N, 0.0, 0.005);
  EXPECT_NEAR(Sum2 / N, 1.0, 0.01);
  EXPECT_NEAR(Sum4 / N, 3.0, 0.05);
  EXPECT_NEAR(static_cast<double>(Within1) / N, 0.6827, 0.003);
}

// Streams differ by seed and by name, and are reproducible.
TEST(Random, StreamKeys) {
  EXPECT_EQ(streamKey(0, "conv1.weight"), streamKey(0, "conv1.weight"));
  EXPECT_NE(streamKey(0, "conv1.weight"), streamKey(1, "conv1.weight"));
  EXPECT_NE(streamKey(0, "conv1.weight"), streamKey(0, "conv2.weight"));
  EXPECT_NE(streamKey(0, "ab"), streamKey(0, "ba"));
}

uint64_t bitsOf(double D) {
  uint64_t B;
  std::memcpy(&B, &D, sizeof(B));
  return B;
}

// Golden bits: the stream key and first normals of (seed 0,
// "conv1.weight"). If this fails, synthetic weights changed for everybody.
TEST(Random, GoldenValues) {
  uint64_t Key = streamKey(0, "conv1.weight");
  NormalGenerator G(Key);
  std::vector<uint64_t> Bits;
  for (int I = 0; I < 4; ++I)
    Bits.push_back(bitsOf(G.next()));
  EXPECT_EQ(Key, 0x01CD9F88B71DF1DFull);
  EXPECT_EQ(Bits, (std::vector<uint64_t>{
                      0xBFE7CB384B27B074ull, 0xBFE3CB3CCE10F21Full,
                      0x3FC77CEB038D122Dull, 0xBFE4584053FBBFF3ull}));
}

} // namespace
