// jnp's elementwise functions that jnp itself composes from lax primitives (log2, hypot, sinc,
// copysign, isclose, nan_to_num, ...): the same compositions here, so that values, NaN/inf
// behaviour and derivatives come out as JAX's.
#include <cmath>
#include <limits>
#include <numbers>

#include <linum/autodiff/ops/dtype_info.hpp>
#include <linum/autodiff/ops/elementwise_math.hpp>
#include <linum/autodiff/ops/elementwise_rules.hpp>
#include <linum/autodiff/ops/reduction.hpp>

namespace linum {
namespace detail {
namespace {

// The limits of a floating dtype (or a complex one's real part), bfloat16/float16 included.
double largest(DType d) { return finfo(d).max; }
double smallest_subnormal(DType d) { return finfo(d).smallest_subnormal; }

}  // namespace
}  // namespace detail

using namespace detail;

// ---- exponents and logarithms -----------------------------------------------------------------

Array log2(const Array& x) {
  Array xf = to_inexact(x, "log2");
  return log(xf) / log(constant_like(xf, 2.0));
}

Array log10(const Array& x) {
  Array xf = to_inexact(x, "log10");
  return log(xf) * constant_like(xf, 0.4342944819032518);
}

// max + log1p(2^(min - max)) / log(2), as logaddexp: min - max keeps the derivative at a tie at
// 1/2 each; NaN, or infinities of one sign, take x1 + x2.
Array logaddexp2(const Array& x1, const Array& x2) {
  auto [x, y] = promote_inexact(x1, x2, "logaddexp2");
  Array hi = maximum(x, y), lo = minimum(x, y);
  Array out = hi + log1p(exp2(lo - hi)) * constant_like(x, 1.0 / std::numbers::ln2);
  return where(isnan(x - y), x + y, out);
}

Array reciprocal(const Array& x) { return power(to_inexact(x, "reciprocal"), -1); }

// lax.pow after promotion: the exponent is made strongly typed so that power() does not take
// its integer_pow path for a scalar exponent.
Array float_power(const Array& x1, const Array& x2) {
  auto [x, y] = promote_inexact(x1, x2, "float_power");
  return power(x, y.weak_type() ? astype(y, y.dtype()) : y);
}

Array pow(const Array& x1, const Array& x2) { return power(x1, x2); }

// jnp.ldexp: frexp(x1), the exponents added in floating point, then m * 2^e; x1 = 0 or +-inf
// is returned as it is.
Array ldexp(const Array& x1, const Array& x2) {
  check_valid(x1, "ldexp");
  check_valid(x2, "ldexp");
  broadcast_shapes(x1.shape(), x2.shape(), "ldexp");
  if (is_floating(x2.dtype()))
    throw ValueError("ldexp: the exponent must be an integer array, got " +
                     std::string(dtype_name(x2.dtype())));
  Array x = to_inexact(x1, "ldexp");
  auto [m, e0] = frexp(x);
  Array e = astype(e0, x.dtype()) + astype(x2, x.dtype());
  m = where(e > 0, m * 2, m);
  e = where(e > 0, e - 1, e);
  Array r = m * power(constant_like(x, 2.0), e);
  return where(logical_or(isinf(x), equal(x, 0)), x, r);
}

// ---- angles -----------------------------------------------------------------------------------

Array deg2rad(const Array& x) {
  Array xf = to_inexact(x, "deg2rad");
  return xf * constant_like(xf, std::numbers::pi / 180);
}
Array rad2deg(const Array& x) {
  Array xf = to_inexact(x, "rad2deg");
  return xf * constant_like(xf, 180 / std::numbers::pi);
}
Array radians(const Array& x) { return deg2rad(x); }
Array degrees(const Array& x) { return rad2deg(x); }

// sin(pi x) / (pi x) away from 0 and +-inf; at 0 the Maclaurin primitive (value 1, exact
// derivatives of every order); at +-inf 0.
Array sinc(const Array& x) {
  Array xf = to_inexact(x, "sinc");
  Array eq_zero = equal(xf, 0), eq_inf = equal(abs(xf), std::numeric_limits<double>::infinity());
  Array pi_x = constant_like(xf, std::numbers::pi) * xf;
  Array safe = where(logical_or(eq_zero, eq_inf), constant_like(xf, 1.0), pi_x);
  Array r = where(eq_zero, sinc_maclaurin(0, pi_x), sin(safe) / safe);
  return where(eq_inf, constant_like(xf, 0.0), r);
}

// max * sqrt(1 + (min / max)²), 0 where both are 0, inf where either is +-inf.
Array hypot(const Array& x1, const Array& x2) {
  auto [a0, b0] = promote_inexact(x1, x2, "hypot");
  Array a = abs(a0), b = abs(b0);
  const double inf = std::numeric_limits<double>::infinity();
  Array idx_inf = logical_or(equal(a, inf), equal(b, inf));
  Array hi = maximum(a, b), lo = minimum(a, b);
  Array safe_hi = where(equal(hi, 0), constant_like(hi, 1.0), hi);
  Array r = where(equal(hi, 0), hi, hi * sqrt(1.0 + square(lo / safe_hi)));
  return where(idx_inf, constant_like(r, inf), r);
}

// ---- rounding ---------------------------------------------------------------------------------

Array trunc(const Array& x) {
  check_valid(x, "trunc");
  if (!is_floating(x.dtype())) return x;
  return where(x < 0, ceil(x), floor(x));
}

Array rint(const Array& x) {
  check_valid(x, "rint");
  if (!is_floating(x.dtype())) return astype(x, float32);
  return round(x);
}

Array round(const Array& x, int decimals) {
  check_valid(x, "round");
  if (!is_floating(x.dtype())) {
    if (decimals < 0)
      throw NotImplementedError(
          "round: integer rounding with decimals < 0 is not implemented, got decimals=" +
          std::to_string(decimals));
    return x;
  }
  if (decimals == 0) return round(x);
  if (decimals > std::log10(largest(x.dtype()))) return x;
  Array factor = constant_like(x, std::pow(10.0, decimals));
  return round(x * factor) / factor;
}
Array around(const Array& x, int decimals) { return round(x, decimals); }

std::pair<Array, Array> modf(const Array& x) {
  Array xf = to_inexact(x, "modf");
  Array whole = where(xf >= 0, floor(xf), ceil(xf));
  return {xf - whole, whole};
}

// ---- signs and floating-point manipulation

Array fabs(const Array& x) { return abs(to_inexact(x, "fabs")); }
Array absolute(const Array& x) { return abs(x); }
Array positive(const Array& x) {
  check_valid(x, "positive");
  return x;
}

Array copysign(const Array& x1, const Array& x2) {
  auto [a, b] = promote_inexact(x1, x2, "copysign");
  return where(signbit(b), negative(abs(a)), abs(a));
}

Array spacing(const Array& x) {
  Array xf = to_inexact(x, "spacing");
  Array inf = constant_like(xf, std::numeric_limits<double>::infinity());
  Array r = nextafter(xf, copysign(inf, xf)) - xf;
  return where(equal(r, 0), copysign(constant_like(xf, smallest_subnormal(xf.dtype())), xf), r);
}

Array heaviside(const Array& x1, const Array& x2) {
  auto [a, b] = promote_inexact(x1, x2, "heaviside");
  Array zero = constant_like(a, 0.0), one = constant_like(a, 1.0);
  return where(a < 0, zero, where(a > 0, one, where(isnan(a), a, b)));
}

Array fmax(const Array& x1, const Array& x2) {
  return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2);
}
Array fmin(const Array& x1, const Array& x2) {
  return where(logical_or(less(x1, x2), isnan(x2)), x1, x2);
}

Array true_divide(const Array& x1, const Array& x2) { return divide(x1, x2); }

// ---- predicates ---------------------------------------------------------------------------------

Array isinf(const Array& x) {
  check_valid(x, "isinf");
  if (!is_floating(x.dtype())) return zeros_like(astype(x, bool_));
  return equal(abs(x), std::numeric_limits<double>::infinity());
}
Array isposinf(const Array& x) {
  check_valid(x, "isposinf");
  if (!is_floating(x.dtype())) return zeros_like(astype(x, bool_));
  return equal(x, std::numeric_limits<double>::infinity());
}
Array isneginf(const Array& x) {
  check_valid(x, "isneginf");
  if (!is_floating(x.dtype())) return zeros_like(astype(x, bool_));
  return equal(x, -std::numeric_limits<double>::infinity());
}

Array logical_xor(const Array& x1, const Array& x2) {
  check_valid(x1, "logical_xor");
  check_valid(x2, "logical_xor");
  broadcast_shapes(x1.shape(), x2.shape(), "logical_xor");
  return not_equal(to_bool(x1, "logical_xor"), to_bool(x2, "logical_xor"));
}

Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  auto [x, y] = promote_inexact(a, b, "isclose");
  Array in_range = abs(x - y) <= constant_like(x, atol) + constant_like(x, rtol) * abs(y);
  Array out = logical_or(equal(x, y), logical_and(isfinite(y), in_range));
  return equal_nan ? logical_or(out, logical_and(isnan(x), isnan(y))) : out;
}

Array detail::allclose_impl(const Array& a, const Array& b, double rtol, double atol,
                            bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan));
}

Array array_equal(const Array& a1, const Array& a2, bool equal_nan) {
  check_valid(a1, "array_equal");
  check_valid(a2, "array_equal");
  if (a1.shape() != a2.shape()) return Array(false);
  Array eq = equal(a1, a2);
  if (equal_nan) eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)));
  return all(eq);
}

Array array_equiv(const Array& a1, const Array& a2) {
  check_valid(a1, "array_equiv");
  check_valid(a2, "array_equiv");
  try {
    broadcast_shapes(a1.shape(), a2.shape(), "array_equiv");
  } catch (const ValueError&) {
    return Array(false);
  }
  return all(equal(a1, a2));
}

Array nan_to_num(const Array& x, double nan, std::optional<double> posinf,
                 std::optional<double> neginf) {
  check_valid(x, "nan_to_num");
  if (!is_floating(x.dtype())) return x;
  const double hi = posinf.value_or(largest(x.dtype())), lo = neginf.value_or(-largest(x.dtype()));
  Array out = where(isnan(x), constant_like(x, nan), x);
  out = where(isposinf(out), constant_like(x, hi), out);
  return where(isneginf(out), constant_like(x, lo), out);
}

// jnp.select picks, per element, the first choice whose condition holds (argmax over the
// stacked conditions, the default behind a leading false); nested wheres from the last choice
// inward pick the same elements and route cotangents the same way.
Array select(const Arrays& condlist, const Arrays& choicelist, const Array& default_) {
  if (condlist.size() != choicelist.size())
    throw ValueError("select: condlist must have length equal to choicelist (" +
                     std::to_string(condlist.size()) + " vs " + std::to_string(choicelist.size()) +
                     ")");
  if (condlist.empty()) throw ValueError("select: condlist must be non-empty");
  check_valid(default_, "select");
  ResultType r{default_.dtype(), default_.weak_type()};
  Shape shape = default_.shape();
  for (std::size_t i = 0; i < condlist.size(); ++i) {
    check_valid(condlist[i], "select");
    check_valid(choicelist[i], "select");
    r = linum::result_type(r.dtype, r.weak_type, choicelist[i].dtype(), choicelist[i].weak_type());
    shape = broadcast_shapes(broadcast_shapes(shape, condlist[i].shape(), "select"),
                             choicelist[i].shape(), "select");
  }
  Array out = broadcast_to(promote_to(default_, r), shape);
  for (std::size_t i = condlist.size(); i-- > 0;)
    out = where(to_bool(condlist[i], "select"), promote_to(choicelist[i], r), out);
  return out;
}

}  // namespace linum
