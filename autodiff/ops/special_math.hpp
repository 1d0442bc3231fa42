// Scalar special functions computed by the algorithms JAX runs (internal to ops/special.cpp):
// StableHLO's CHLO decompositions that XLA applies (Lanczos lgamma and digamma, Euler-Maclaurin
// Hurwitz zeta, polygamma, Cephes erfc), jax._src.lax.special's Cephes Bessel series and
// incomplete gamma loops, and jax.scipy.special's ndtri and log_ndtr. Each is written in the
// arithmetic of its dtype, in the order JAX's graph evaluates it, with XLA:CPU's log and log1p
// for float32 (random/xla_math.hpp): values agree with JAX's to float rounding.
#pragma once

#include <cstddef>
#include <limits>

#include <linum/autodiff/random/xla_math.hpp>

namespace linum::detail::special {

template <class T>
using lim = std::numeric_limits<T>;

// XLA:CPU's log and log1p (its own polynomials for float32, libm for float64).
template <class T>
T xlog(T x) {
  return random::detail::xla_log(x);
}
template <class T>
T xlog1p(T x) {
  return random::detail::xla_log1p(x);
}

// StableHLO's polynomial: p = c[0]; p = p * x + c[i] (highest degree first).
template <class T, std::size_t N>
T poly(T x, const double (&c)[N]) {
  T p = static_cast<T>(c[0]);
  for (std::size_t i = 1; i < N; ++i) p = p * x + static_cast<T>(c[i]);
  return p;
}

float lgamma(float x);
double lgamma(double x);
float digamma(float x);
double digamma(double x);
// Hurwitz zeta(x, q) = sum over n >= 0 of (n + q)^-x.
float zeta(float x, float q);
double zeta(double x, double q);
// d/dx and d/dq of JAX's series expansion of zeta (the series jax.scipy.special.zeta's JVP
// differentiates), wrt = 0 or 1.
float zeta_series_partial(int wrt, float x, float q);
double zeta_series_partial(int wrt, double x, double q);
float polygamma(float n, float x);
double polygamma(double n, double x);
float erfc(float x);
double erfc(double x);
float bessel_i0e(float x);
double bessel_i0e(double x);
float bessel_i1e(float x);
double bessel_i1e(double x);
// Regularized lower / upper incomplete gamma P(a, x), Q(a, x), and dP/da.
float igamma(float a, float x);
double igamma(double a, double x);
float igammac(float a, float x);
double igammac(double a, double x);
float igamma_grad_a(float a, float x);
double igamma_grad_a(double a, double x);
float ndtr(float x);
double ndtr(double x);
float ndtri(float p);
double ndtri(double p);
float log_ndtr(float x, int series_order);
double log_ndtr(double x, int series_order);

}  // namespace linum::detail::special
