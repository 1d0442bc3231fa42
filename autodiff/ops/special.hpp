// jax.scipy.special and jax.scipy.stats.norm: gamma-family, error-function, Bessel and
// information-theory functions. Inputs promote to floating point (integers to float32) as in
// JAX; values follow JAX's algorithms (XLA's Lanczos lgamma/digamma, Cephes erfc and Bessel
// series, Cephes ndtri), and every function is differentiable where JAX's is.
#pragma once

#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>

namespace linum {

// ---- gamma family -----------------------------------------------------------------------------
Array gammaln(const Array& x);   // log|Γ(x)| (lax.lgamma); +inf at the poles
Array loggamma(const Array& x);  // gammaln for x > 0, NaN elsewhere (real inputs)
Array gammasgn(const Array& x);  // the sign of Γ(x): ±1, NaN at the poles
Array gamma(const Array& x);
Array digamma(const Array& x);  // ψ = Γ'/Γ; NaN at 0 and the negative integers
// ψ⁽ⁿ⁾(x) for an integer-typed n >= 0 (NaN for other n); differentiable in x only.
Array polygamma(const Array& n, const Array& x);
// Hurwitz ζ(x, q) = Σ_{k>=0} (k + q)^-x for x > 1 (the Riemann ζ is q = 1).
Array zeta(const Array& x, const Array& q);
Array beta(const Array& a, const Array& b);
Array betaln(const Array& a, const Array& b);  // log|B(a, b)|, accurate for large b
// Regularized incomplete gamma P(a, x) and Q(a, x) = 1 - P(a, x).
Array gammainc(const Array& a, const Array& x);
Array gammaincc(const Array& a, const Array& x);
Array factorial(const Array& n);             // Γ(n + 1) in floating point, 0 for n < 0
Array poch(const Array& z, const Array& m);  // Γ(z + m) / Γ(z), 1 for m = 0
// log Γ_d(a), the multivariate gamma function of dimension d.
Array multigammaln(const Array& a, int d);
Array comb(const Array& n, const Array& k, bool repetition = false);  // n choose k, in float

// ---- error function and the normal distribution
Array erfc(const Array& x);
Array erfinv(const Array& x);  // erf⁻¹ on [-1, 1], ±inf at ±1
Array ndtr(const Array& x);    // standard normal CDF (float32 / float64 inputs only)
Array ndtri(const Array& p);   // its inverse (float32 / float64 inputs only)
// log(ndtr(x)), accurate far into the lower tail (asymptotic series of `series_order` terms).
Array log_ndtr(const Array& x, int series_order = 3);

// ---- logistic and information theory
Array logit(const Array& x);  // log(x / (1 - x)); the inverse of sigmoid (scipy's expit)
Array xlogy(const Array& x, const Array& y);     // x log(y), 0 where x = 0 (unless y is NaN)
Array xlog1py(const Array& x, const Array& y);   // x log1p(y), 0 where x = 0 (unless y is NaN)
Array entr(const Array& x);                      // -x log(x); 0 at 0, -inf for x < 0
Array rel_entr(const Array& p, const Array& q);  // p log(p / q) with scipy's edge values
Array kl_div(const Array& p, const Array& q);    // rel_entr(p, q) - p + q
Array boxcox(const Array& x, const Array& lmbda);
Array boxcox1p(const Array& x, const Array& lmbda);

// ---- modified Bessel functions of the first kind
Array i0(const Array& x);   // I₀; derivative 0 at 0 (jnp.i0's rule)
Array i0e(const Array& x);  // e^-|x| I₀(x)
Array i1(const Array& x);
Array i1e(const Array& x);  // e^-|x| I₁(x)

// ---- logsumexp with weights (jax.scipy.special.logsumexp's b and return_sign)
// ---------------------- log |Σ b exp(a)| over `axis`; NaN where the weighted sum is negative (a
// and b broadcast).
Array logsumexp(const Array& a, const Axes& axis, bool keepdims, const Array& b);
// (log |Σ b exp(a)|, sign of Σ b exp(a)); an empty b means no weights.
std::pair<Array, Array> logsumexp_with_sign(const Array& a, const Axes& axis = {},
                                            bool keepdims = false, const Array& b = Array());

// ---- jax.scipy.stats.norm: the normal distribution with mean loc and standard deviation scale
namespace stats::norm {
Array logpdf(const Array& x, const Array& loc = Array(0), const Array& scale = Array(1));
Array pdf(const Array& x, const Array& loc = Array(0), const Array& scale = Array(1));
Array cdf(const Array& x, const Array& loc = Array(0), const Array& scale = Array(1));
Array logcdf(const Array& x, const Array& loc = Array(0), const Array& scale = Array(1));
Array sf(const Array& x, const Array& loc = Array(0), const Array& scale = Array(1));
Array logsf(const Array& x, const Array& loc = Array(0), const Array& scale = Array(1));
Array ppf(const Array& q, const Array& loc = Array(0), const Array& scale = Array(1));
Array isf(const Array& q, const Array& loc = Array(0), const Array& scale = Array(1));
}  // namespace stats::norm

}  // namespace linum
