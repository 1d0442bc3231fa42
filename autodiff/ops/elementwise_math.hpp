// The rest of jax.numpy's elementwise functions: trigonometric and hyperbolic functions and their
// inverses, more exponents and logarithms, rounding, floating-point manipulation, division with
// numpy's sign rules, predicates, integer and bitwise ops. Transcendental functions compute in
// floating point (integers and bools become float32, as in jnp); the others keep jnp's dtypes.
#pragma once

#include <optional>
#include <utility>

#include <linum/autodiff/array.hpp>

namespace linum {

// ---- trigonometric and hyperbolic -----------------------------------------------------------
Array tan(const Array& x);
Array arcsin(const Array& x);
Array arccos(const Array& x);
Array arctan(const Array& x);
Array arctan2(const Array& y, const Array& x);  // the angle of (x, y), in (-pi, pi]
Array sinh(const Array& x);
Array cosh(const Array& x);
Array arcsinh(const Array& x);
Array arccosh(const Array& x);
Array arctanh(const Array& x);
// The Array API spellings jnp also exports.
Array asin(const Array& x);
Array acos(const Array& x);
Array atan(const Array& x);
Array atan2(const Array& y, const Array& x);
Array asinh(const Array& x);
Array acosh(const Array& x);
Array atanh(const Array& x);
Array deg2rad(const Array& x);
Array rad2deg(const Array& x);
Array radians(const Array& x);  // = deg2rad
Array degrees(const Array& x);  // = rad2deg
// sin(pi x) / (pi x), 1 at 0 (every derivative at 0 exact, as jnp.sinc's Maclaurin rule).
Array sinc(const Array& x);
// sqrt(x1² + x2²) without overflow; inf when either is infinite.
Array hypot(const Array& x1, const Array& x2);

// ---- exponents and logarithms -----------------------------------------------------------------
Array exp2(const Array& x);
Array log2(const Array& x);
Array log10(const Array& x);
Array logaddexp2(const Array& x1, const Array& x2);  // log2(2^x1 + 2^x2) without overflow
Array cbrt(const Array& x);
Array reciprocal(const Array& x);  // 1 / x in floating point
// x1 ** x2 after promotion to floating point (no integer_pow shortcut, no float64 upcast).
Array float_power(const Array& x1, const Array& x2);
Array pow(const Array& x1, const Array& x2);  // = power
// x1 * 2^x2 for an integer x2; frexp splits x into a mantissa in [0.5, 1) and an int32 exponent.
Array ldexp(const Array& x1, const Array& x2);
std::pair<Array, Array> frexp(const Array& x);

// ---- rounding ---------------------------------------------------------------------------------
Array trunc(const Array& x);  // toward zero; integers unchanged
Array rint(const Array& x);   // half to even; integers become float32
// jnp.round(x, decimals): round(x * 10^d) / 10^d in x's dtype (d < 0 rounds to tens, ...).
Array round(const Array& x, int decimals);
Array around(const Array& x, int decimals = 0);
// (fractional part, integral part), both with x's sign.
std::pair<Array, Array> modf(const Array& x);

// ---- signs and floating-point manipulation
Array fabs(const Array& x);      // abs in floating point
Array absolute(const Array& x);  // = abs
Array positive(const Array& x);  // +x
Array signbit(const Array& x);   // bool: the sign bit is set (-0.0 and -nan included)
Array copysign(const Array& x1, const Array& x2);
Array nextafter(const Array& x1, const Array& x2);  // the next float after x1 toward x2
Array spacing(const Array& x);                      // distance to the next float away from zero
Array heaviside(const Array& x1, const Array& x2);  // 0, x2 or 1 as x1 <, ==, > 0
// Maximum / minimum that ignore a NaN operand (NaN only when both are NaN).
Array fmax(const Array& x1, const Array& x2);
Array fmin(const Array& x1, const Array& x2);

// ---- division ---------------------------------------------------------------------------------
Array true_divide(const Array& x1, const Array& x2);  // = divide
// Division rounded toward -inf and the remainder with the divisor's sign (Python's // and %).
Array floor_divide(const Array& x1, const Array& x2);
Array remainder(const Array& x1, const Array& x2);
Array mod(const Array& x1, const Array& x2);  // = remainder
std::pair<Array, Array> divmod(const Array& x1, const Array& x2);
// The C remainder: x1 - trunc(x1 / x2) * x2, with x1's sign.
Array fmod(const Array& x1, const Array& x2);

// ---- predicates (bool results, not differentiable) ----------------------------------------------
Array isinf(const Array& x);
Array isposinf(const Array& x);
Array isneginf(const Array& x);
Array logical_xor(const Array& x1, const Array& x2);
// |a - b| <= atol + rtol |b| (or a == b); NaNs are close to each other only with equal_nan.
Array isclose(const Array& a, const Array& b, double rtol = 1e-05, double atol = 1e-08,
              bool equal_nan = false);
namespace detail {
Array allclose_impl(const Array& a, const Array& b, double rtol, double atol, bool equal_nan);
}
// all(isclose(...)). A template only so that the allclose(Array, Array[, tol]) helper that test
// code often defines for itself stays the better match for its own calls (found next to this one
// by argument-dependent lookup, a non-template wins a tie).
template <class = void>
Array allclose(const Array& a, const Array& b, double rtol = 1e-05, double atol = 1e-08,
               bool equal_nan = false) {
  return detail::allclose_impl(a, b, rtol, atol, equal_nan);
}
// Same shape and equal elements (a bool scalar; false for different shapes).
Array array_equal(const Array& a1, const Array& a2, bool equal_nan = false);
// Equal after broadcasting (false when the shapes do not broadcast).
Array array_equiv(const Array& a1, const Array& a2);
// NaN to `nan`, +-inf to posinf / neginf (the dtype's largest finite values by default).
Array nan_to_num(const Array& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                 std::optional<double> neginf = std::nullopt);

// choicelist[i] where condlist[i] is the first true condition, else default_ (jnp.select);
// conditions read nonzero as true, and all operands broadcast together.
Array select(const Arrays& condlist, const Arrays& choicelist, const Array& default_ = Array(0));

// ---- integers and bits (int32, uint32, bool)
Array bitwise_and(const Array& x1, const Array& x2);
Array bitwise_or(const Array& x1, const Array& x2);
Array bitwise_xor(const Array& x1, const Array& x2);
Array bitwise_not(const Array& x);
Array bitwise_invert(const Array& x);  // = bitwise_not
Array invert(const Array& x);          // = bitwise_not
// Shifts by a count >= the bit width (or negative) give 0, or the sign fill for right shifts of
// signed integers, as lax.shift_left / shift_right_arithmetic / shift_right_logical.
Array left_shift(const Array& x1, const Array& x2);
Array right_shift(const Array& x1, const Array& x2);  // arithmetic for int32, logical for uint32
Array bitwise_left_shift(const Array& x1, const Array& x2);
Array bitwise_right_shift(const Array& x1, const Array& x2);
Array gcd(const Array& x1, const Array& x2);
Array lcm(const Array& x1, const Array& x2);

}  // namespace linum
