//===- HalfFloat.h - IEEE half and bfloat16 <-> float conversions ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Bit-exact conversions between f32 and the two 16-bit float formats of
// weight files, in plain C++ (no _Float16, no intrinsics), header-only:
//
//  * IEEE 754 binary16 ("F16", numpy '<f2'): 1 sign, 5 exponent, 10 mantissa
//    bits; widening is exact, including subnormals, infinities and NaN
//    payloads; narrowing rounds to nearest, ties to even, overflows to
//    infinity and flushes nothing (results may be subnormal).
//  * bfloat16 ("BF16"): the top 16 bits of an f32; widening is exact,
//    narrowing rounds to nearest, ties to even.
//
// Narrowing a NaN gives a quiet NaN of the same sign that keeps the top
// payload bits (so a signalling NaN becomes quiet, as hardware does).
// The array forms accept 16-bit buffers at any alignment.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_IO_HALFFLOAT_H
#define MEMFMT_RUNTIME_IO_HALFFLOAT_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace memfmt::io {

/// The raw bits of \p F.
inline uint32_t floatBits(float F) {
  uint32_t Bits;
  std::memcpy(&Bits, &F, sizeof(Bits));
  return Bits;
}

/// The float whose raw bits are \p Bits.
inline float floatFromBits(uint32_t Bits) {
  float F;
  std::memcpy(&F, &Bits, sizeof(F));
  return F;
}

/// Widens the IEEE binary16 value with bits \p H to f32 (exact).
inline float halfToFloat(uint16_t H) {
  uint32_t Sign = static_cast<uint32_t>(H & 0x8000u) << 16;
  uint32_t Exp = (H >> 10) & 0x1Fu;
  uint32_t Mant = H & 0x3FFu;
  if (Exp == 0x1F) // Infinity or NaN (payload kept).
    return floatFromBits(Sign | 0x7F800000u | (Mant << 13));
  if (Exp != 0) // Normal: rebias 15 -> 127.
    return floatFromBits(Sign | ((Exp + 112) << 23) | (Mant << 13));
  if (Mant == 0)
    return floatFromBits(Sign);
  // Subnormal: Mant * 2^-24; normalise so the leading one becomes implicit.
  uint32_t FExp = 113;
  while (!(Mant & 0x400u)) {
    Mant <<= 1;
    --FExp;
  }
  return floatFromBits(Sign | (FExp << 23) | ((Mant & 0x3FFu) << 13));
}

/// Narrows \p F to IEEE binary16 bits, rounding to nearest, ties to even.
inline uint16_t floatToHalf(float F) {
  uint32_t Bits = floatBits(F);
  uint32_t Sign = (Bits >> 16) & 0x8000u;
  uint32_t Abs = Bits & 0x7FFFFFFFu;
  if (Abs > 0x7F800000u) // NaN: quiet, keep the top payload bits.
    return static_cast<uint16_t>(Sign | 0x7E00u | ((Abs >> 13) & 0x3FFu));
  if (Abs >= 0x477FF000u) // >= 65520 (half-way past 65504): infinity.
    return static_cast<uint16_t>(Sign | 0x7C00u);
  if (Abs >= 0x38800000u) {
    // >= 2^-14: a normal half. Rebias the exponent (127 -> 15) and round.
    uint32_t Rebased = Abs - 0x38000000u;
    Rebased += 0xFFFu + ((Rebased >> 13) & 1u);
    return static_cast<uint16_t>(Sign | (Rebased >> 13));
  }
  if (Abs <= 0x33000000u) // <= 2^-25 (the tie goes to even zero).
    return static_cast<uint16_t>(Sign);
  // A subnormal half: count units of 2^-24, rounding the shifted-out bits.
  uint32_t Exp = Abs >> 23;                      // 102 ... 112
  uint32_t Mant = (Abs & 0x7FFFFFu) | 0x800000u; // Value = Mant * 2^(Exp-150).
  uint32_t Shift = 126 - Exp;                    // 14 ... 24
  uint32_t Units = Mant >> Shift;
  uint32_t Rest = Mant & ((1u << Shift) - 1u);
  uint32_t Halfway = 1u << (Shift - 1);
  if (Rest > Halfway || (Rest == Halfway && (Units & 1u)))
    ++Units; // May carry into the smallest normal, 0x0400, correctly.
  return static_cast<uint16_t>(Sign | Units);
}

/// Widens the bfloat16 value with bits \p B to f32 (exact).
inline float bfloat16ToFloat(uint16_t B) {
  return floatFromBits(static_cast<uint32_t>(B) << 16);
}

/// Narrows \p F to bfloat16 bits, rounding to nearest, ties to even.
inline uint16_t floatToBFloat16(float F) {
  uint32_t Bits = floatBits(F);
  if ((Bits & 0x7FFFFFFFu) > 0x7F800000u) // NaN: quiet, keep the top payload.
    return static_cast<uint16_t>((Bits >> 16) | 0x0040u);
  Bits += 0x7FFFu + ((Bits >> 16) & 1u); // Overflow rounds to infinity.
  return static_cast<uint16_t>(Bits >> 16);
}

/// Widens \p Count binary16 values at \p Src to f32 at \p Dst.
inline void convertF16ToF32(const void *Src, float *Dst, size_t Count) {
  const auto *Bytes = static_cast<const unsigned char *>(Src);
  for (size_t I = 0; I < Count; ++I) {
    uint16_t H;
    std::memcpy(&H, Bytes + 2 * I, 2);
    float F = halfToFloat(H);
    std::memcpy(Dst + I, &F, sizeof(F));
  }
}

/// Widens \p Count bfloat16 values at \p Src to f32 at \p Dst.
inline void convertBF16ToF32(const void *Src, float *Dst, size_t Count) {
  const auto *Bytes = static_cast<const unsigned char *>(Src);
  for (size_t I = 0; I < Count; ++I) {
    uint16_t B;
    std::memcpy(&B, Bytes + 2 * I, 2);
    float F = bfloat16ToFloat(B);
    std::memcpy(Dst + I, &F, sizeof(F));
  }
}

/// Narrows \p Count floats at \p Src to binary16 bits at \p Dst.
inline void convertF32ToF16(const float *Src, void *Dst, size_t Count) {
  auto *Bytes = static_cast<unsigned char *>(Dst);
  for (size_t I = 0; I < Count; ++I) {
    float F;
    std::memcpy(&F, Src + I, sizeof(F));
    uint16_t H = floatToHalf(F);
    std::memcpy(Bytes + 2 * I, &H, 2);
  }
}

/// Narrows \p Count floats at \p Src to bfloat16 bits at \p Dst.
inline void convertF32ToBF16(const float *Src, void *Dst, size_t Count) {
  auto *Bytes = static_cast<unsigned char *>(Dst);
  for (size_t I = 0; I < Count; ++I) {
    float F;
    std::memcpy(&F, Src + I, sizeof(F));
    uint16_t B = floatToBFloat16(F);
    std::memcpy(Bytes + 2 * I, &B, 2);
  }
}

} // namespace memfmt::io

#endif // MEMFMT_RUNTIME_IO_HALFFLOAT_H
