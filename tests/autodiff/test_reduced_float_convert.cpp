// bfloat16 / float16 element conversions. float16 is checked against numpy's own casts (the
// table tests/autodiff/reference_float16.py generates); bfloat16 against rules written here from
// the format's definition: every one of the 65536 patterns decodes to (-1)^s 2^(e-127) 1.m, and
// float32 -> bfloat16 picks the nearer neighbour, the even one on a tie.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <linum/linum.hpp>

#include "support/testing.hpp"

namespace {

#include "data/float16_reference.inc"

using namespace linum;

// The value of a finite bfloat16 / float16 pattern from the IEEE layout (not the library's code).
double decode_finite(std::uint32_t bits, int mant_bits, int exp_bits) {
  const std::uint32_t sign = bits >> (mant_bits + exp_bits);
  const int bias = (1 << (exp_bits - 1)) - 1;
  const auto e = static_cast<int>((bits >> mant_bits) & ((1u << exp_bits) - 1));
  const double m = static_cast<double>(bits & ((1u << mant_bits) - 1));
  const double mag = e == 0 ? std::ldexp(m, 1 - bias - mant_bits)
                            : std::ldexp(m + std::ldexp(1.0, mant_bits), e - bias - mant_bits);
  return sign ? -mag : mag;
}

// float32 -> bfloat16 by the definition: the two bfloat16 values around x (the truncation and
// the next one away from zero, whose pattern after 0x7f7f is inf, which rounding treats as
// 2^128), the nearer one, the even pattern on a tie.
std::uint16_t bfloat16_nearest_even(float x) {
  const auto u = std::bit_cast<std::uint32_t>(x);
  const auto lo = static_cast<std::uint16_t>(u >> 16), hi = static_cast<std::uint16_t>(lo + 1);
  auto value = [](std::uint16_t b) {
    return (b & 0x7fff) == 0x7f80 ? std::copysign(std::ldexp(1.0, 128), (b & 0x8000) ? -1.0 : 1.0)
                                  : decode_finite(b, 7, 8);
  };
  const double dlo = std::abs(static_cast<double>(x) - value(lo));
  const double dhi = std::abs(value(hi) - static_cast<double>(x));
  if (dlo != dhi) return dlo < dhi ? lo : hi;
  return (lo & 1) ? hi : lo;
}

}  // namespace

TEST_CASE("bfloat16 -> float32 is exact for all 65536 patterns") {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const float f = static_cast<float>(BFloat16::from_bits(static_cast<std::uint16_t>(b)));
    const auto e = (b >> 7) & 0xff;
    if (e == 0xff) {
      // inf stays inf; a NaN keeps its payload (the pattern is float32's upper half).
      CHECK(std::bit_cast<std::uint32_t>(f) == b << 16);
      CHECK(((b & 0x7f) ? std::isnan(f) : std::isinf(f)));
      continue;
    }
    const double v = decode_finite(b, 7, 8);
    CHECK(static_cast<double>(f) == v);
    CHECK(std::signbit(f) == ((b & 0x8000) != 0));
  }
}

TEST_CASE("float32 -> bfloat16 rounds to nearest even: values, ties both ways, overflow") {
  int checked = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    if (((b >> 7) & 0xff) == 0xff) continue;  // inf / NaN patterns: below
    const float v = static_cast<float>(BFloat16::from_bits(static_cast<std::uint16_t>(b)));
    // The midpoint to the next pattern has 9 significant bits: exact in float32.
    const double next = (b & 0x7fff) == 0x7f7f ? std::copysign(std::ldexp(1.0, 128), v)
                                               : decode_finite(b + 1, 7, 8);
    const auto mid = static_cast<float>((static_cast<double>(v) + next) / 2);
    if (std::isinf(mid)) continue;  // the midpoint above the largest finite is 2^128
    for (float x : {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 2 * mid),
                    std::nextafter(v, 0.0f), std::nextafter(v, 2 * v)}) {
      REQUIRE(BFloat16(x).bits == bfloat16_nearest_even(x));
      ++checked;
    }
  }
  CHECK(checked > 380000);
  // Ties go to the even pattern in both directions: 1 + 2^-8 down to 1, 1 + 3 * 2^-8 up.
  CHECK(BFloat16(1.0f + 0x1p-8f).bits == 0x3f80);
  CHECK(BFloat16(1.0f + 3 * 0x1p-8f).bits == 0x3f82);
  CHECK(BFloat16(-(1.0f + 3 * 0x1p-8f)).bits == 0xbf82);
  // Overflow: at or past the midpoint above the largest finite (0x7f7f) the value is inf.
  CHECK(BFloat16(std::numeric_limits<float>::max()).bits == 0x7f80);
  CHECK(BFloat16(-std::numeric_limits<float>::max()).bits == 0xff80);
  CHECK(BFloat16(std::bit_cast<float>(0x7f7f7fffu)).bits == 0x7f7f);  // just below the tie
  CHECK(BFloat16(std::bit_cast<float>(0x7f7f8000u)).bits == 0x7f80);  // the tie: odd, rounds up
  CHECK(BFloat16(std::numeric_limits<float>::infinity()).bits == 0x7f80);
  CHECK(BFloat16(-std::numeric_limits<float>::infinity()).bits == 0xff80);
  // Subnormals round like any other value; the smallest subnormal's half ties to +0.
  CHECK(BFloat16(0x1p-133f).bits == 0x0001);
  CHECK(BFloat16(0x1p-134f).bits == 0x0000);
  CHECK(BFloat16(-0x1p-134f).bits == 0x8000);
  CHECK(BFloat16(0x1.8p-134f).bits == 0x0001);
}

TEST_CASE("NaN stays a quiet NaN of its sign in both 2-byte types") {
  for (std::uint32_t u :
       {0x7f800001u, 0x7fa00000u, 0x7fc00000u, 0x7fffffffu, 0xff800001u, 0xffc00123u}) {
    const float x = std::bit_cast<float>(u);
    const bool neg = (u >> 31) != 0;
    const BFloat16 b(x);
    CHECK(std::isnan(static_cast<float>(b)));
    CHECK((b.bits & 0x7fc0) == 0x7fc0);  // quiet
    CHECK(((b.bits & 0x8000) != 0) == neg);
    const Float16 h(x);
    CHECK(std::isnan(static_cast<float>(h)));
    CHECK((h.bits & 0x7e00) == 0x7e00);
    CHECK(((h.bits & 0x8000) != 0) == neg);
    CHECK(std::isnan(static_cast<float>(Float16(static_cast<double>(x)))));
  }
}

TEST_CASE("float64 -> bfloat16 goes through float32, as ml_dtypes casts it") {
  // 1 + 2^-8 + 2^-30 lies just above the tie between 1 and 1 + 2^-7: rounded directly it would
  // go up, but float32 drops the 2^-30 and the tie then goes to the even pattern, 1.0.
  CHECK(BFloat16(1.0 + 0x1p-8 + 0x1p-30).bits == 0x3f80);
  CHECK(BFloat16(1.0 + 0x1p-8 + 0x1p-20).bits == 0x3f81);  // float32 keeps 2^-20: rounds up
  CHECK(BFloat16(1e300).bits == 0x7f80);                   // float32 overflow first
  CHECK(BFloat16(std::int32_t{16777217}).bits == BFloat16(16777216.0f).bits);
}

TEST_CASE("float16 conversions match numpy's casts") {
  for (const auto& [x, h] : kF32ToF16) {
    INFO("float32 bits " << x);
    CHECK(Float16(std::bit_cast<float>(x)).bits == h);
  }
  for (const auto& [x, h] : kF64ToF16) {
    INFO("float64 bits " << x);
    CHECK(Float16(std::bit_cast<double>(x)).bits == h);
  }
  for (const auto& [h, x] : kF16ToF32) {
    INFO("float16 bits " << h);
    CHECK(std::bit_cast<std::uint32_t>(
              static_cast<float>(Float16::from_bits(static_cast<std::uint16_t>(h)))) == x);
  }
  // The table holds double inputs within float32's rounding error of a tie: float16 rounds them
  // once, directly (a cast through float32 would not match numpy here).
  CHECK(Float16(1.0 + 0x1p-11 + 0x1p-40).bits == 0x3c01);
  CHECK(Float16(1.0 + 0x1p-11).bits == 0x3c00);
}

TEST_CASE("float32 arrays convert to float16 as the scalar codec, element by element") {
  // astype runs a vector path (F16C's instruction where the CPU has it) over whole arrays; every
  // float32 exponent, with mantissas at and around float16's ties, both signs, NaNs and infs,
  // must give Float16(x)'s bits. An odd length also runs the scalar tail.
  std::vector<float> xs;
  for (std::uint32_t e = 0; e < 256; ++e)
    for (std::uint32_t m : {0x0u, 0x1u, 0xfffu, 0x1000u, 0x1001u, 0x2000u, 0x3000u, 0x5a5a5u,
                            0x400000u, 0x7fe000u, 0x7ff000u, 0x7fffffu})
      for (std::uint32_t sign : {0u, 0x80000000u}) xs.push_back(std::bit_cast<float>(sign | (e << 23) | m));
  xs.push_back(65519.996f);
  REQUIRE(xs.size() % 8 != 0);
  const Array h = astype(array(xs), float16);
  const auto* bits = h.data<Float16>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    INFO("float32 bits " << std::hex << std::bit_cast<std::uint32_t>(xs[i]));
    CHECK(bits[i].bits == Float16(xs[i]).bits);
  }
}

TEST_CASE("float16 arrays convert to float32 as the scalar codec, signalling NaNs kept") {
  // The vector path (F16C where the CPU has it) over all 65536 patterns plus an odd tail: the
  // same float32 bits as the codec, a signalling NaN's included.
  std::vector<Float16> hs;
  for (std::uint32_t h = 0; h < 65536; ++h) hs.push_back(Float16::from_bits(static_cast<std::uint16_t>(h)));
  hs.push_back(Float16::from_bits(0x7c01));
  const Array f = astype(array(hs), float32);
  const auto* out = f.data<float>();
  for (std::size_t i = 0; i < hs.size(); ++i) {
    INFO("float16 bits " << std::hex << hs[i].bits);
    CHECK(std::bit_cast<std::uint32_t>(out[i]) ==
          std::bit_cast<std::uint32_t>(static_cast<float>(hs[i])));
  }
}

TEST_CASE("float16 -> float32 is exact for all 65536 patterns") {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = static_cast<float>(Float16::from_bits(static_cast<std::uint16_t>(h)));
    if (((h >> 10) & 0x1f) == 0x1f) {
      CHECK(((h & 0x3ff) ? std::isnan(f) : std::isinf(f)));
      continue;
    }
    CHECK(static_cast<double>(f) == decode_finite(h, 10, 5));
    CHECK(std::signbit(f) == ((h & 0x8000) != 0));
    // Every finite float16 converts back to itself.
    CHECK(Float16(f).bits == h);
  }
}

TEST_CASE("finfo of bfloat16 and float16 as jnp.finfo gives them") {
  // numpy 1.24: np.finfo(np.float16).
  const FInfo h = finfo(float16);
  CHECK(h.bits == 16);
  CHECK(h.eps == 0x1p-10);  // 9.765625e-04
  CHECK(h.epsneg == 0x1p-11);
  CHECK(h.max == 65504.0);
  CHECK(h.min == -65504.0);
  CHECK(h.smallest_normal == 0x1p-14);  // 6.1035e-05
  CHECK(h.tiny == 0x1p-14);
  CHECK(h.smallest_subnormal == 0x1p-24);  // 5.96e-08
  CHECK(h.nmant == 10);
  CHECK(h.nexp == 5);
  CHECK(h.machep == -10);
  CHECK(h.negep == -11);
  CHECK(h.minexp == -14);
  CHECK(h.maxexp == 16);
  CHECK(h.precision == 3);
  CHECK(h.resolution == doctest::Approx(1e-3));
  // ml_dtypes.finfo(bfloat16): float32's exponent range with 7 mantissa bits.
  const FInfo b = finfo(bfloat16);
  CHECK(b.bits == 16);
  CHECK(b.eps == 0x1p-7);  // 0.0078125
  CHECK(b.epsneg == 0x1p-8);
  CHECK(b.max == 3.3895313892515355e38);
  CHECK(b.smallest_normal == 0x1p-126);
  CHECK(b.smallest_subnormal == 0x1p-133);  // 9.183549615799121e-41
  CHECK(b.nmant == 7);
  CHECK(b.nexp == 8);
  CHECK(b.minexp == -126);
  CHECK(b.maxexp == 128);
  CHECK(b.precision == 2);
  CHECK(b.resolution == doctest::Approx(0.01));
  // The limits are the extreme patterns of each format.
  CHECK(static_cast<double>(BFloat16::from_bits(0x7f7f)) == b.max);
  CHECK(static_cast<double>(BFloat16::from_bits(0x0001)) == b.smallest_subnormal);
  CHECK(static_cast<double>(Float16::from_bits(0x7bff)) == h.max);
  CHECK(static_cast<double>(Float16::from_bits(0x0001)) == h.smallest_subnormal);
  // float32's limits are unchanged by the format-based computation.
  CHECK(finfo(float32).max == static_cast<double>(std::numeric_limits<float>::max()));
  CHECK(finfo(float64).smallest_subnormal == std::numeric_limits<double>::denorm_min());
}
