// The float format a sampler draws in, as jax.random reads it from finfo(dtype): how many random
// bits one element takes, its mantissa width, tiny / eps / epsneg, and the rounding of a Python
// constant to it. The kernels compute in T (float or double) and draw in S: S is T itself, or
// BFloat16 / Float16 computed in float. Internal to the random library.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <linum/autodiff/dtype.hpp>
#include <linum/autodiff/float16.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum::random::detail {

template <class S>
struct DrawFormat;
template <>
struct DrawFormat<float> {
  using Bits = std::uint32_t;     // the random bits one element takes
  using Storage = std::uint32_t;  // the element's own bit pattern
  static constexpr int kNmant = 23;
  static constexpr Storage kOne = 0x3F800000u;
  static constexpr double kTiny = 0x1p-126;
};
template <>
struct DrawFormat<double> {
  using Bits = std::uint64_t;
  using Storage = std::uint64_t;
  static constexpr int kNmant = 52;
  static constexpr Storage kOne = 0x3FF0000000000000ull;
  static constexpr double kTiny = 0x1p-1022;
};
// JAX draws 8 bits, not 16, for bfloat16: its 7 mantissa bits are fewer than 8.
template <>
struct DrawFormat<BFloat16> {
  using Bits = std::uint8_t;
  using Storage = std::uint16_t;
  static constexpr int kNmant = 7;
  static constexpr Storage kOne = 0x3F80u;
  static constexpr double kTiny = 0x1p-126;
};
template <>
struct DrawFormat<Float16> {
  using Bits = std::uint16_t;
  using Storage = std::uint16_t;
  static constexpr int kNmant = 10;
  static constexpr Storage kOne = 0x3C00u;
  static constexpr double kTiny = 0x1p-14;
};

// The value of a bit pattern of S, as T.
template <class T, class S>
T from_storage(typename DrawFormat<S>::Storage bits) {
  if constexpr (std::is_floating_point_v<S>)
    return static_cast<T>(std::bit_cast<S>(bits));
  else
    return static_cast<T>(static_cast<float>(S::from_bits(bits)));
}

// A Python float or a converted parameter in S (jnp.array(x, dtype)), held in T.
template <class T, class S>
T in_format(double x) {
  return static_cast<T>(static_cast<S>(x));
}

// [0, 1) from the top kNmant of the drawn bits under exponent 0, minus one: exact in S.
template <class T, class S>
T unit_from_bits(typename DrawFormat<S>::Bits bits) {
  using F = DrawFormat<S>;
  constexpr int kShift = 8 * sizeof(typename F::Bits) - F::kNmant;
  const auto mant =
      static_cast<typename F::Storage>(static_cast<typename F::Storage>(bits) >> kShift);
  return from_storage<T, S>(static_cast<typename F::Storage>(mant | F::kOne)) - T(1);
}

// finfo(S): tiny (smallest normal), eps (2^-nmant), epsneg (2^-(nmant + 1)).
template <class T, class S>
T finfo_tiny() {
  return static_cast<T>(DrawFormat<S>::kTiny);
}
template <class T, class S>
T finfo_eps() {
  return std::ldexp(T(1), -DrawFormat<S>::kNmant);
}
template <class T, class S>
T finfo_epsneg() {
  return std::ldexp(T(1), -DrawFormat<S>::kNmant - 1);
}

// lax.nextafter(x, toward) in S, for x a value of S.
template <class T, class S>
T next_after(T x, T toward) {
  if constexpr (std::is_same_v<T, S>) {
    return std::nextafter(x, toward);
  } else {
    if (std::isnan(x) || std::isnan(toward)) return x + toward;
    if (x == toward) return toward;
    if (x == T(0))  // the smallest subnormal, with toward's sign
      return from_storage<T, S>(toward > 0 ? 1u : 0x8001u);
    auto bits = S(x).bits;
    bits = static_cast<decltype(bits)>((x < toward) == (x > 0) ? bits + 1 : bits - 1);
    return from_storage<T, S>(bits);
  }
}

// Calls f.template operator()<T, S>() for a float dtype: T the type computed in, S the draw
// format: (float, float), (double, double), (float, BFloat16), (float, Float16).
template <class F>
decltype(auto) dispatch_draw(DType d, const char* name, F&& f) {
  if (d == DType::bfloat16) return f.template operator()<float, BFloat16>();
  if (d == DType::float16) return f.template operator()<float, Float16>();
  return linum::detail::dispatch_float(d, name,
                                       [&]<class T>() { return f.template operator()<T, T>(); });
}

}  // namespace linum::random::detail
