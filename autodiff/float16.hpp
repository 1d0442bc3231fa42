// The 2-byte floating element types: BFloat16 (1 sign, 8 exponent, 7 mantissa bits: float32's
// range at low precision) and Float16 (IEEE binary16: 5 exponent, 10 mantissa bits). Both hold
// their bits; values convert to and from float32/float64 rounding to nearest even, as ml_dtypes
// and numpy do, and arithmetic on them happens in float32 (ops convert, compute and round once).
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace linum {

namespace detail {

// float32 -> bfloat16 bits, round to nearest even; NaN becomes the quiet NaN of its sign
// (Eigen's float_to_bfloat16_rtne, which ml_dtypes uses). Overflow rounds to inf naturally:
// bfloat16 keeps float32's exponent, so the rounding carry walks into the exponent field.
constexpr std::uint16_t bfloat16_bits_from_float(float f) {
  const auto u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u & 0x80000000u) ? 0xffc0 : 0x7fc0;
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
// Exact: a bfloat16 is the upper half of a float32.
constexpr float float_from_bfloat16_bits(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// float64 -> float16 bits, rounded once from the exact value (numpy's double-to-half cast);
// float32 values take this path too, as widening them to double is exact. NaN stays NaN with
// its sign and the quiet bit set (the payload's top bits kept, as numpy and F16C do).
constexpr std::uint16_t float16_bits_from_double(double d) {
  const auto x = std::bit_cast<std::uint64_t>(d);
  const auto sign = static_cast<std::uint16_t>((x >> 48) & 0x8000u);
  const auto e = static_cast<int>((x >> 52) & 0x7ff);
  const std::uint64_t mant = x & ((std::uint64_t{1} << 52) - 1);
  if (e == 0x7ff)
    return sign | (mant ? static_cast<std::uint16_t>(0x7e00u | ((mant >> 42) & 0x3ffu)) : 0x7c00u);
  if (e >= 1023 + 16) return sign | 0x7c00u;  // |d| >= 65536: inf
  // Rounds m / 2^s to the nearest integer, ties to even.
  auto round_shift = [](std::uint64_t m, int s) {
    const std::uint64_t q = m >> s, rem = m & ((std::uint64_t{1} << s) - 1),
                        half = std::uint64_t{1} << (s - 1);
    return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
  };
  if (e > 1023 - 15) {  // a normal float16 (or one that rounds up to inf)
    const std::uint64_t h = round_shift((static_cast<std::uint64_t>(e - 1008) << 52) | mant, 42);
    return sign | static_cast<std::uint16_t>(h >= 0x7c00u ? 0x7c00u : h);
  }
  // A subnormal float16: the count of 2^-24 units, |d| = m * 2^(e - 1075).
  const std::uint64_t m = e ? (mant | (std::uint64_t{1} << 52)) : mant;
  const int s = 1051 - (e ? e : 1);
  return s > 63 ? sign : static_cast<std::uint16_t>(sign | round_shift(m, s));
}
// Exact: every float16 is a float32.
constexpr float float_from_float16_bits(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    const float v = static_cast<float>(m) * 0x1p-24f;  // subnormal (or zero): exact
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

// The bit codecs of the two formats, from float64 and to float32.
struct BFloat16Format {
  // Through float32 first, as ml_dtypes casts a double or an integer.
  static constexpr std::uint16_t encode(double v) {
    return bfloat16_bits_from_float(static_cast<float>(v));
  }
  static constexpr float decode(std::uint16_t b) { return float_from_bfloat16_bits(b); }
};
struct Float16Format {
  static constexpr std::uint16_t encode(double v) { return float16_bits_from_double(v); }
  static constexpr float decode(std::uint16_t b) { return float_from_float16_bits(b); }
};

// A 2-byte float element: its bits, with explicit conversions from any arithmetic value
// (rounded by the format's codec) and to float / double (exact).
template <class Format>
struct TwoByteFloat {
  std::uint16_t bits = 0;
  TwoByteFloat() = default;
  template <class V>
  requires std::is_arithmetic_v<V>
  constexpr explicit TwoByteFloat(V v) : bits(Format::encode(static_cast<double>(v))) {}
  static constexpr TwoByteFloat from_bits(std::uint16_t b) {
    TwoByteFloat r;
    r.bits = b;
    return r;
  }
  constexpr explicit operator float() const { return Format::decode(bits); }
  constexpr explicit operator double() const { return Format::decode(bits); }
  // Value comparison, as numpy's: NaN differs from everything, -0 equals 0.
  friend constexpr bool operator==(TwoByteFloat a, TwoByteFloat b) {
    return static_cast<float>(a) == static_cast<float>(b);
  }
};

}  // namespace detail

// jnp.bfloat16's element; from a double or an integer the value goes through float32 first.
using BFloat16 = detail::TwoByteFloat<detail::BFloat16Format>;
// jnp.float16's element (IEEE binary16), rounded once from float32, float64 or an integer.
using Float16 = detail::TwoByteFloat<detail::Float16Format>;

}  // namespace linum
