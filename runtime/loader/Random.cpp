//===- Random.cpp - Portable, seeded random numbers for synthetic data ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// SplitMix64, stream keys and the Box-Muller transform with its own log, sin
// and cos (see Random.h for why libm is not used). Every function here is a
// fixed sequence of IEEE 754 double operations; CMake compiles this file
// with -ffp-contract=off and the pragma below repeats it for Clang, so no
// fused multiply-add can change a result bit on machines that have one.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/loader/Random.h"

#include <cmath>

#if defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace memfmt::loader {

namespace {

/// SplitMix64's finaliser (also MurmurHash3's fmix64 with other constants).
uint64_t mix64(uint64_t Z) {
  Z = (Z ^ (Z >> 30)) * 0xBF58476D1CE4E5B9ull;
  Z = (Z ^ (Z >> 27)) * 0x94D049BB133111EBull;
  return Z ^ (Z >> 31);
}

constexpr double Ln2 = 0.693147180559945309417232121458176568;
constexpr double HalfPi = 1.57079632679489661923132169163975144;
constexpr double SqrtHalf = 0.707106781186547524400844362104849039;

/// The series coefficients, computed once by a fixed sequence of
/// correctly rounded divisions (so they are the same bits everywhere).
struct SeriesCoefficients {
  static constexpr int NumTrig = 14;
  static constexpr int NumLog = 13;
  /// (-1)^k / (2k+1)!: sin x = x * sum Sin[k] x^2k.
  double Sin[NumTrig];
  /// (-1)^k / (2k)!: cos x = sum Cos[k] x^2k.
  double Cos[NumTrig];
  /// 1 / (2k+1): atanh s = s * sum Log[k] s^2k.
  double Log[NumLog];

  SeriesCoefficients() {
    Sin[0] = 1.0;
    Cos[0] = 1.0;
    for (int K = 1; K < NumTrig; ++K) {
      Sin[K] = Sin[K - 1] / -static_cast<double>((2 * K) * (2 * K + 1));
      Cos[K] = Cos[K - 1] / -static_cast<double>((2 * K - 1) * (2 * K));
    }
    for (int K = 0; K < NumLog; ++K)
      Log[K] = 1.0 / static_cast<double>(2 * K + 1);
  }
};

const SeriesCoefficients &coefficients() {
  static const SeriesCoefficients C;
  return C;
}

/// sum C[k] X2^k by Horner's rule.
template <int N> double horner(const double (&C)[N], double X2) {
  double Acc = C[N - 1];
  for (int K = N - 2; K >= 0; --K)
    Acc = Acc * X2 + C[K];
  return Acc;
}

} // namespace

uint64_t streamKey(uint64_t Seed, std::string_view Name) {
  uint64_t Hash = 0xCBF29CE484222325ull; // FNV-1a 64 offset basis.
  for (unsigned char C : Name) {
    Hash ^= C;
    Hash *= 0x100000001B3ull; // FNV-1a 64 prime.
  }
  return mix64(Hash ^ mix64(Seed + 0x9E3779B97F4A7C15ull));
}

uint64_t SplitMix64::next() {
  State += 0x9E3779B97F4A7C15ull;
  return mix64(State);
}

double SplitMix64::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double portableLog(double X) {
  // X = M * 2^E with M in [sqrt(1/2), sqrt(2)): frexp and the doubling are
  // exact.
  int E = 0;
  double M = std::frexp(X, &E); // M in [0.5, 1).
  if (M < SqrtHalf) {
    M = M * 2.0;
    E -= 1;
  }
  // log(M) = 2 atanh(S) = 2 (S + S^3/3 + S^5/5 + ...), |S| <= 0.1716, so
  // S^2 <= 0.0295 and 13 terms reach below 1e-20.
  double S = (M - 1.0) / (M + 1.0);
  double Acc = horner(coefficients().Log, S * S);
  return static_cast<double>(E) * Ln2 + 2.0 * S * Acc;
}

void portableSinCos2Pi(double Turns, double &Sin, double &Cos) {
  // Quarter turns: Q in {0, 1, 2, 3} and the fraction F in [0, 1), both
  // exact because multiplying by 4 only changes the exponent.
  double Quarters = Turns * 4.0;
  double Q = std::floor(Quarters);
  // X <= pi/2, where the 14th terms of both series are below 1e-22.
  double X = (Quarters - Q) * HalfPi;
  double X2 = X * X;
  const SeriesCoefficients &Coef = coefficients();
  double S = X * horner(Coef.Sin, X2);
  double C = horner(Coef.Cos, X2);
  switch (static_cast<int>(Q) & 3) {
  case 0:
    Sin = S;
    Cos = C;
    break;
  case 1: // sin(a + pi/2) = cos a, cos(a + pi/2) = -sin a.
    Sin = C;
    Cos = -S;
    break;
  case 2:
    Sin = -S;
    Cos = -C;
    break;
  default:
    Sin = -C;
    Cos = S;
    break;
  }
}

double NormalGenerator::next() {
  if (HasSpare) {
    HasSpare = false;
    return Spare;
  }
  // 1 - U lies in (0, 1], so the logarithm is finite.
  double U1 = 1.0 - Bits.uniform();
  double U2 = Bits.uniform();
  double Radius = std::sqrt(-2.0 * portableLog(U1));
  double Sin = 0.0, Cos = 0.0;
  portableSinCos2Pi(U2, Sin, Cos);
  Spare = Radius * Sin;
  HasSpare = true;
  return Radius * Cos;
}

} // namespace memfmt::loader
