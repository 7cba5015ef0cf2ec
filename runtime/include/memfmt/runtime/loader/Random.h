//===- Random.h - Portable, seeded random numbers for synthetic data ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The random numbers behind synthetic weights ("synthetic:SEED") and random
// inputs ("--input random:SEED"). They must give the same bytes on every
// machine, compiler and C library, so nothing here uses <random>'s
// distributions (their algorithms are implementation-defined) or libm's
// transcendental functions (not correctly rounded, so they differ in the
// last bit between C libraries):
//
//  * the generator is SplitMix64 (Steele, Lea and Flood 2014), seeded by a
//    stream key: FNV-1a of a name mixed with a 64-bit seed through the
//    SplitMix64 finaliser, so each (seed, tensor name) pair has its own
//    stream and adding a tensor does not change the others;
//  * uniforms take the top 53 bits: k * 2^-53;
//  * normals come from the Box-Muller transform, in pairs, with log, sin and
//    cos evaluated by fixed series in double arithmetic using only +, -, *,
//    / and sqrt, which IEEE 754 rounds exactly. The implementation file is
//    compiled with floating-point contraction off, so no FMA changes a bit.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LOADER_RANDOM_H
#define MEMFMT_RUNTIME_LOADER_RANDOM_H

#include <cstdint>
#include <string_view>

namespace memfmt::loader {

/// The key of the stream for (\p Seed, \p Name): FNV-1a 64 of the name's
/// bytes, xor the seed, through the SplitMix64 finaliser.
uint64_t streamKey(uint64_t Seed, std::string_view Name);

/// SplitMix64: a 64-bit state advanced by a Weyl sequence and finalised by
/// a bijective mixer. Period 2^64; every state is valid.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t State) : State(State) {}

  /// The next 64 random bits.
  uint64_t next();

  /// A uniform double in [0, 1): the top 53 bits times 2^-53.
  double uniform();

private:
  uint64_t State;
};

/// Standard normal numbers by the Box-Muller transform over a SplitMix64
/// stream: each pair of uniforms (u1, u2) gives sqrt(-2 log(1 - u1)) times
/// cos(2 pi u2), then the same radius times sin(2 pi u2).
class NormalGenerator {
public:
  explicit NormalGenerator(uint64_t Key) : Bits(Key) {}

  /// The next standard normal number.
  double next();

  /// A uniform double in [0, 1) from the same stream (drops any pending
  /// second normal of a pair, so mixing the two stays deterministic).
  double uniform() {
    HasSpare = false;
    return Bits.uniform();
  }

private:
  SplitMix64 Bits;
  double Spare = 0.0;
  bool HasSpare = false;
};

/// log(\p X) for finite \p X > 0, from a fixed atanh series: identical bits
/// everywhere, within a few ulp of the true value.
double portableLog(double X);

/// sin and cos of 2 pi \p Turns for \p Turns in [0, 1), from fixed Taylor
/// series after an exact reduction to a quarter turn.
void portableSinCos2Pi(double Turns, double &Sin, double &Cos);

} // namespace memfmt::loader

#endif // MEMFMT_RUNTIME_LOADER_RANDOM_H
