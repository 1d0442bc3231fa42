// The jax.scipy.special functions that JAX composes from lax primitives (gamma, beta, betaln,
// comb, rel_entr, boxcox, i0, logsumexp with weights, ...) and jax.scipy.stats.norm: the same
// compositions, so that values, edge cases and derivatives come out as JAX's.
#include <cmath>
#include <limits>
#include <numbers>

#include <linum/autodiff/ops/elementwise_math.hpp>
#include <linum/autodiff/ops/elementwise_rules.hpp>
#include <linum/autodiff/ops/reduction.hpp>
#include <linum/autodiff/ops/special.hpp>

namespace linum {
namespace detail {

Array xlogx(const Array& x);  // ops/special.cpp

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// scipy's algdiv: log(Γ(b) / Γ(a + b)) for b >= 8 (a <= b), from the Stirling remainders.
Array algdiv(const Array& a, const Array& b) {
  const double c0 = 0.833333333333333e-01, c1 = -0.277777777760991e-02, c2 = 0.793650666825390e-03,
               c3 = -0.595202931351870e-03, c4 = 0.837308034031215e-03, c5 = -0.165322962780713e-02;
  Array h = a / b;
  Array c = h / (1.0 + h), x = h / (1.0 + h);
  Array d = b + (a - 0.5);
  Array x2 = x * x;
  Array s3 = 1.0 + (x + x2);
  Array s5 = 1.0 + (x + x2 * s3);
  Array s7 = 1.0 + (x + x2 * s5);
  Array s9 = 1.0 + (x + x2 * s7);
  Array s11 = 1.0 + (x + x2 * s9);
  Array t = square(1.0 / b);
  Array w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0;
  w = w * (c / b);
  Array u = d * log1p(a / b), v = a * (log(b) - 1.0);
  return where(u <= v, (w - v) - u, (w - u) - v);
}

// jnp's promote_args_inexact over three operands (x, loc, scale).
std::tuple<Array, Array, Array> promote3_inexact(const Array& x, const Array& y, const Array& z,
                                                 const char* op) {
  check_valid(x, op);
  check_valid(y, op);
  check_valid(z, op);
  broadcast_shapes(broadcast_shapes(x.shape(), y.shape(), op), z.shape(), op);
  const ResultType r1 = result_type(x, y);
  ResultType r = linum::result_type(r1.dtype, r1.weak_type, z.dtype(), z.weak_type());
  if (!is_floating(r.dtype)) r.dtype = float32;
  return {promote_to(x, r), promote_to(y, r), promote_to(z, r)};
}

}  // namespace
}  // namespace detail

using namespace detail;

// ---- gamma family -----------------------------------------------------------------------------

Array loggamma(const Array& x) {
  Array xf = to_inexact(x, "loggamma");
  return where(xf > 0, gammaln(xf), constant_like(xf, kNan));
}

Array gammasgn(const Array& x) {
  Array xf = to_inexact(x, "gammasgn");
  Array fl = floor(xf), neg = xf < 0;
  Array is_nan = logical_or(logical_and(neg, equal(xf, fl)), isnan(xf));
  Array is_neg = logical_or(logical_and(neg, not_equal(remainder(fl, 2), 0)),
                            logical_and(equal(xf, 0), signbit(xf)));
  return where(is_nan, constant_like(xf, kNan),
               where(is_neg, constant_like(xf, -1), constant_like(xf, 1)));
}

Array gamma(const Array& x) {
  Array xf = to_inexact(x, "gamma");
  return gammasgn(xf) * exp(gammaln(xf));
}

// lgamma(a) + (lgamma(b) - lgamma(a + b)) with a <= b, or algdiv once b >= 8 (scipy's betaln,
// which stays accurate for large arguments where the three lgammas cancel).
Array betaln(const Array& a, const Array& b) {
  auto [x, y] = promote_inexact(a, b, "betaln");
  Array lo = minimum(x, y), hi = maximum(x, y);
  Array small_b = gammaln(lo) + (gammaln(hi) - gammaln(lo + hi));
  Array large_b = gammaln(lo) + algdiv(lo, hi);
  return where(hi < 8, small_b, large_b);
}

Array beta(const Array& a, const Array& b) {
  auto [x, y] = promote_inexact(a, b, "beta");
  Array sign = gammasgn(x) * gammasgn(y) * gammasgn(x + y);
  return sign * exp(betaln(x, y));
}

Array factorial(const Array& n) {
  Array nf = to_inexact(n, "factorial");
  return where(nf < 0, constant_like(nf, 0), exp(gammaln(nf + 1.0)));
}

Array poch(const Array& z, const Array& m) {
  auto [zf, mf] = promote_inexact(z, m, "poch");
  return where(equal(mf, 0), constant_like(zf, 1), gamma(zf + mf) / gamma(zf));
}

Array multigammaln(const Array& a, int d) {
  Array af = to_inexact(a, "multigammaln");
  if (d < 0) throw ValueError("multigammaln: d must be non-negative, got " + std::to_string(d));
  const Array dd = constant_like(af, d);
  Array constant =
      constant_like(af, 0.25) * dd * (dd - 1.0) * log(constant_like(af, std::numbers::pi));
  Array b = arange(0, d, 1, af.dtype()) / 2.0;
  return sum(gammaln(expand_dims(af, -1) - b), -1) + constant;
}

Array comb(const Array& n, const Array& k, bool repetition) {
  auto [nf, kf] = promote_inexact(n, k, "comb");
  if (repetition) {
    Array cond = logical_and(equal(kf, 0), nf >= 0);
    return where(cond, constant_like(nf, 1), comb(nf + kf - 1.0, kf, false));
  }
  Array cond = logical_and(logical_and(kf <= nf, nf >= 0), kf >= 0);
  Array sn = where(cond, nf, 0.0), sk = where(cond, kf, 0.0);
  Array r = exp(gammaln(sn + 1.0) - gammaln(sk + 1.0) - gammaln(sn + 1.0 - sk));
  return where(cond, r, 0.0);
}

// ---- information theory -----------------------------------------------------------------------

Array entr(const Array& x) {
  Array xf = to_inexact(x, "entr");
  return where(xf < 0, constant_like(xf, -kInf), negative(xlogx(xf)));
}

Array rel_entr(const Array& p, const Array& q) {
  auto [pf, qf] = promote_inexact(p, q, "rel_entr");
  Array both_pos = logical_and(pf > 0, qf > 0);
  Array p_zero = logical_and(equal(pf, 0), qf >= 0);
  Array sp = where(both_pos, pf, 1), sq = where(both_pos, qf, 1);
  Array v = xlogx(sp) - xlogy(sp, sq);
  return where(both_pos, v, where(p_zero, constant_like(pf, 0), constant_like(pf, kInf)));
}

Array kl_div(const Array& p, const Array& q) {
  auto [pf, qf] = promote_inexact(p, q, "kl_div");
  return rel_entr(pf, qf) - pf + qf;
}

Array boxcox(const Array& x, const Array& lmbda) {
  auto [xf, l] = promote_inexact(x, lmbda, "boxcox");
  Array zero = equal(l, 0), safe = where(zero, 1, l), log_x = log(xf);
  return where(zero, log_x, expm1(safe * log_x) / safe);
}

Array boxcox1p(const Array& x, const Array& lmbda) {
  auto [xf, l] = promote_inexact(x, lmbda, "boxcox1p");
  Array zero = equal(l, 0), safe = where(zero, 1, l), log1p_x = log1p(xf);
  return where(zero, log1p_x, expm1(safe * log1p_x) / safe);
}

// ---- Bessel -------------------------------------------------------------------------------------

// e^|x| i0e(|x|); |x| is read through a where at 0 so that the derivative there is jnp.i0's 0
// (lax.abs's derivative at 0 would give 1). jnp.i0 has no where (a custom JVP instead), so its
// result keeps x's weak type: restored here, since linum's where never gives a weak result.
Array i0(const Array& x) {
  Array xf = to_inexact(x, "i0");
  Array ax = where(equal(xf, 0), constant_like(xf, 0), abs(xf));
  Array r = exp(ax) * i0e(ax);
  return convert_element_type(r, r.dtype(), xf.weak_type());
}

Array i1(const Array& x) {
  Array xf = to_inexact(x, "i1");
  return exp(abs(xf)) * i1e(xf);
}

// ---- logsumexp with weights ---------------------------------------------------------------------

std::pair<Array, Array> logsumexp_with_sign(const Array& a, const Axes& axis, bool keepdims,
                                            const Array& b) {
  const char* op = "logsumexp";
  Array x, w;
  if (b.valid()) {
    std::tie(x, w) = promote_inexact(a, b, op);
    const Shape s = broadcast_shapes(x.shape(), w.shape(), op);
    if (x.shape() != s) x = broadcast_to(x, s);
    if (w.shape() != s) w = broadcast_to(w, s);
    x = where(not_equal(w, 0), x, -kInf);
  } else {
    x = to_inexact(a, op);
  }
  const auto axes = normalize_axes(axis, x.ndim(), op);
  Shape kept = x.shape(), reduced;
  std::int64_t count = 1;
  for (int d = 0, k = 0; d < x.ndim(); ++d) {
    const bool r = k < static_cast<int>(axes.size()) && axes[k] == d;
    if (r) {
      ++k;
      count *= x.shape()[d];
      kept[d] = 1;
    } else {
      reduced.push_back(x.shape()[d]);
    }
  }
  Array amax = count == 0 ? full(kept, -kInf, x.dtype()) : max(x, axis, true);
  amax = stop_gradient(where(isfinite(amax), amax, 0));
  Array e = exp(x - amax);
  if (w.valid()) e = e * w;
  Array s = sum(e, axis, keepdims);
  Array sgn = sign(s);
  Array out = log(abs(s)) + (keepdims ? amax : reshape(amax, reduced));
  return {out, sgn};
}

Array logsumexp(const Array& a, const Axes& axis, bool keepdims, const Array& b) {
  if (!b.valid()) return logsumexp(a, axis, keepdims);
  auto [out, sgn] = logsumexp_with_sign(a, axis, keepdims, b);
  return where(sgn < 0, constant_like(out, kNan), out);
}

// ---- jax.scipy.stats.norm -----------------------------------------------------------------------

namespace stats::norm {

Array logpdf(const Array& x, const Array& loc, const Array& scale) {
  auto [xf, m, s] = promote3_inexact(x, loc, scale, "norm.logpdf");
  Array s2 = square(s);
  Array log_normalizer = log(constant_like(xf, 2 * std::numbers::pi) * s2);
  Array quadratic = square(xf - m) / s2;
  return (log_normalizer + quadratic) / constant_like(xf, -2);
}

Array pdf(const Array& x, const Array& loc, const Array& scale) {
  return exp(logpdf(x, loc, scale));
}

Array cdf(const Array& x, const Array& loc, const Array& scale) {
  auto [xf, m, s] = promote3_inexact(x, loc, scale, "norm.cdf");
  return ndtr((xf - m) / s);
}

Array logcdf(const Array& x, const Array& loc, const Array& scale) {
  auto [xf, m, s] = promote3_inexact(x, loc, scale, "norm.logcdf");
  return log_ndtr((xf - m) / s);
}

Array sf(const Array& x, const Array& loc, const Array& scale) {
  auto [xf, m, s] = promote3_inexact(x, loc, scale, "norm.sf");
  return cdf(negative(xf), negative(m), s);
}

Array logsf(const Array& x, const Array& loc, const Array& scale) {
  auto [xf, m, s] = promote3_inexact(x, loc, scale, "norm.logsf");
  return logcdf(negative(xf), negative(m), s);
}

Array ppf(const Array& q, const Array& loc, const Array& scale) { return ndtri(q) * scale + loc; }

Array isf(const Array& q, const Array& loc, const Array& scale) {
  check_valid(q, "norm.isf");
  return ppf(constant_like(q, 1) - q, loc, scale);
}

}  // namespace stats::norm

}  // namespace linum
