// The gamma family of special_math.hpp: XLA's Lanczos lgamma and digamma, the Euler-Maclaurin
// Hurwitz zeta and its series partials, polygamma, and jax's incomplete gamma loops. Constants
// are the double literals of the JAX / StableHLO sources, rounded to the dtype where the graph
// creates them.
#include <linum/autodiff/ops/special_math.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

namespace linum::detail::special {

namespace {

// ---- Lanczos: lgamma and digamma (g = 7, n = 9)

constexpr double kLanczosGamma = 7;
constexpr double kBaseLanczosCoeff = 0.99999999999980993227684700473478;
constexpr double kLanczosCoefficients[] = {
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,   -176.61502916214059906584551354,
    12.507343278686904814458936853,     -0.13857109526572011689554707,
    9.984369578019570859563e-6,         1.50563273514931155834e-7};

// log(t) for t = z + g + 1/2, as log(g + 1/2) + log1p(z / (g + 1/2)).
template <class T>
T lanczos_log_t(T z) {
  const T g_half = static_cast<T>(kLanczosGamma + 0.5);
  return static_cast<T>(std::log(kLanczosGamma + 0.5)) + xlog1p(z / g_half);
}

template <class T>
T lgamma_impl(T x) {
  const T half = 0.5, one = 1;
  const bool reflect = x < half;
  const T z = reflect ? -x : x - one;
  T a = static_cast<T>(kBaseLanczosCoeff);
  for (int i = 0; i < 8; ++i)
    a = a + static_cast<T>(kLanczosCoefficients[i]) / (z + static_cast<T>(i + 1));
  const T t = static_cast<T>(kLanczosGamma + 0.5) + z;
  const T log_t = lanczos_log_t(z);
  const T r = (z + half - t / log_t) * log_t;
  T lg = (static_cast<T>((std::numbers::ln2 + std::log(std::numbers::pi)) / 2) + r) + xlog(a);
  // Reflection lgamma(x) = log(pi) - lgamma(1 - x) - log|sin(pi x)|, with sin(pi x) read from the
  // fractional part of |x| folded into [0, 1/2] (exactly 0 at the poles).
  const T ax = std::abs(x);
  T frac = ax - std::floor(ax);
  if (half < frac) frac = one - frac;
  const T denom = xlog(std::sin(static_cast<T>(std::numbers::pi) * frac));
  const T refl =
      std::isfinite(denom) ? static_cast<T>(std::log(std::numbers::pi)) - denom - lg : -denom;
  lg = reflect ? refl : lg;
  return std::isinf(x) ? lim<T>::infinity() : lg;
}

template <class T>
T digamma_impl(T x) {
  const T half = 0.5, one = 1, zero = 0;
  const bool reflect = x < half;
  const T z = reflect ? -x : x - one;
  T a = static_cast<T>(kBaseLanczosCoeff), a_prime = zero;
  for (int i = 0; i < 8; ++i) {
    const T c = static_cast<T>(kLanczosCoefficients[i]), zt = z + static_cast<T>(i + 1);
    a_prime = a_prime - c / (zt * zt);
    a = a + c / zt;
  }
  const T t = static_cast<T>(kLanczosGamma + 0.5) + z;
  T dg = (lanczos_log_t(z) + a_prime / a) - static_cast<T>(kLanczosGamma) / t;
  // Reflection digamma(x) = digamma(1 - x) - pi cot(pi x), with x shifted into [-1/2, 1/2].
  const T reduced = x + std::abs(std::floor(x + half));
  const T pi = static_cast<T>(std::numbers::pi);
  const T refl = dg - pi * std::cos(pi * reduced) / std::sin(pi * reduced);
  dg = reflect ? refl : dg;
  // Poles at 0 and the negative integers.
  return (x <= zero && x == std::floor(x)) ? lim<T>::quiet_NaN() : dg;
}

// ---- Hurwitz zeta (Johansson's Euler-Maclaurin formula, 9 terms + 12 corrections)

constexpr double kZetaCoeffs[] = {-7.1661652561756670113e18,
                                  1.8152105401943546773e17,
                                  -4.5979787224074726105e15,
                                  1.1646782814350067249e14,
                                  -2.950130727918164224e12,
                                  7.47242496e10,
                                  -1.8924375803183791606e9,
                                  47900160.0,
                                  -1209600.0,
                                  30240.0,
                                  -720.0,
                                  12.0};

template <class T>
T zeta_impl(T x, T q) {
  const T zero = 0, one = 1;
  T acc = q, q_neg_power = zero;
  const T neg_x = -x;
  T power_sum = std::pow(q, neg_x);
  for (int i = 0; i < 9; ++i) {
    acc = acc + one;
    q_neg_power = std::pow(acc, neg_x);
    power_sum = power_sum + q_neg_power;
  }
  acc = acc + one;
  q_neg_power = std::pow(acc, neg_x);
  const T correction = (q_neg_power * acc) / (x - one);
  const T rsqrt_acc = one / (acc * acc);
  T horner_sum = zero;
  for (int i = 0; i < 11; ++i) {
    const T lhs = x + static_cast<T>(22 - 2 * i), rhs = x + static_cast<T>(21 - 2 * i);
    const T product = lhs * rhs;
    horner_sum = product * (rsqrt_acc * (horner_sum + static_cast<T>(1.0 / kZetaCoeffs[i])));
  }
  const T tail =
      q_neg_power * (T(0.5) + (x / acc) * (static_cast<T>(1.0 / kZetaCoeffs[11]) + horner_sum));
  const T accurate = (power_sum + correction) + tail;
  T out = std::abs(q_neg_power) < std::abs(power_sum) * lim<T>::denorm_min() ? power_sum : accurate;
  const T nan = lim<T>::quiet_NaN(), inf = lim<T>::infinity();
  if (x < one) out = nan;
  const bool q_le_zero = q <= zero, x_int = x == std::floor(x);
  if (q_le_zero && !x_int) out = nan;
  // Poles at integer q <= 0: +inf for even integer x, NaN otherwise.
  if (q_le_zero && q == std::floor(q)) out = (x_int && std::fmod(x, T(2)) == zero) ? inf : nan;
  if (x == one) out = inf;
  return out;
}

// jax.scipy.special's Bernoulli-based coefficients of its zeta series.
constexpr double kBernoulliCoefs[] = {12.0,
                                      -720.0,
                                      30240.0,
                                      -1209600.0,
                                      47900160.0,
                                      -1892437580.3183792,
                                      74724249600.0,
                                      -2950130727918.164,
                                      116467828143500.67,
                                      -4597978722407473.0,
                                      1.8152105401943546e+17,
                                      -7.166165256175667e+18,
                                      2.82908877253043e+20,
                                      -1.1168794925000445e+22,
                                      4.4092635141854666e+23,
                                      -1.7407074646225822e+25};

// The partials of jax.scipy.special's _zeta_series_expansion
//   S + I + T,  S = sum_{k<N} (a + k)^-s,  I = (a + N)^(1 - s) / (s - 1),
//   T = (a + N)^-s (1/2 + sum_{j<M} prod_{m<=2j} (s + m) / (a + N) / B_j)
// (N = M = 8 for float32, 16 for float64), term by term.
template <class T>
T zeta_partial_impl(int wrt, T s, T a) {
  const int n = std::is_same_v<T, float> ? 8 : 16;
  const T big_n = static_cast<T>(n), one = 1;
  T ds = 0, da = 0;
  for (int k = 0; k < n; ++k) {
    const T base = a + static_cast<T>(k), term = std::pow(base, -s);
    ds -= std::log(base) * term;
    da -= s * term / base;
  }
  const T an = a + big_n, log_an = std::log(an);
  const T i_term = std::pow(an, one - s) / (s - one);
  ds += -log_an * i_term - i_term / (s - one);
  da += -std::pow(an, -s);
  const T t0 = std::pow(an, -s);
  T t1_sum = 0, dt1_ds = 0, dt1_da = 0, prod = 1, inv_sum = 0;
  for (int m = 0; m < 2 * n; ++m) {
    prod *= (s + static_cast<T>(m)) / an;
    inv_sum += one / (s + static_cast<T>(m));
    if (m % 2) continue;
    const int j = m / 2;
    const bool clipped = !(prod <= lim<T>::max());
    const T t1 = (clipped ? lim<T>::max() : prod) / static_cast<T>(kBernoulliCoefs[j]);
    t1_sum += t1;
    if (!clipped) {
      dt1_ds += t1 * inv_sum;
      dt1_da += t1 * -static_cast<T>(m + 1) / an;
    }
  }
  ds += -log_an * t0 * (T(0.5) + t1_sum) + t0 * dt1_ds;
  da += -s * t0 / an * (T(0.5) + t1_sum) + t0 * dt1_da;
  return wrt == 0 ? ds : da;
}

template <class T>
T polygamma_impl(T n, T x) {
  const T one = 1, two = 2;
  const T sign = two * std::fmod(n, two) - one;
  const T np1 = n + one;
  T r = (sign * std::exp(lgamma_impl(np1))) * zeta_impl(np1, x);
  if (n == T(0)) r = digamma_impl(x);
  return (n != std::floor(n) || n < T(0)) ? lim<T>::quiet_NaN() : r;
}

// ---- incomplete gamma (jax._src.lax.special's series and continued fraction)

enum class Mode { value, derivative };

// P(a, x) by its power series; `enabled` false leaves the loop's starting values (JAX computes
// every element and selects afterwards).
template <class T>
T igamma_series(T ax, T x, T a, bool enabled, Mode mode) {
  T r = a, c = 1, ans = 1, dc_da = 0, dans_da = 0;
  const T eps = lim<T>::epsilon();
  while (enabled) {
    r = r + T(1);
    dc_da = dc_da * (x / r) - (c * x) / (r * r);
    dans_da = dans_da + dc_da;
    c = c * (x / r);
    ans = ans + c;
    enabled = mode == Mode::value ? c / ans > eps : std::abs(dc_da / dans_da) > eps;
  }
  if (mode == Mode::value) return (ans * ax) / a;
  const T dlogax_da = xlog(x) - digamma_impl(a + T(1));
  return ax * (ans * dlogax_da + dans_da) / a;
}

// Q(a, x) by its continued fraction (at most 2000 steps, rescaled against overflow).
template <class T>
T igammac_fraction(T ax, T x, T a, bool enabled, Mode mode) {
  const T eps = lim<T>::epsilon();
  T y = T(1) - a, z = x + y + T(1), c = 0;
  T pkm2 = 1, qkm2 = x, pkm1 = x + T(1), qkm1 = z * x;
  T ans = pkm1 / qkm1;
  T dpkm2_da = 0, dqkm2_da = 0, dpkm1_da = 0, dqkm1_da = -x;
  T dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1;
  while (enabled && c < T(2000)) {
    c = c + T(1);
    y = y + T(1);
    z = z + T(2);
    const T yc = y * c;
    const T pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    const bool nonzero = qk != T(0);
    const T r = pk / qk;
    const T t = nonzero ? std::abs((ans - r) / r) : T(1);
    ans = nonzero ? r : ans;
    const T dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c;
    const T dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c;
    const T dans_da_new = nonzero ? (dpk_da - ans * dqk_da) / qk : dans_da;
    const T grad_change = nonzero ? std::abs(dans_da_new - dans_da) : T(1);
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    dpkm2_da = dpkm1_da;
    dqkm2_da = dqkm1_da;
    dpkm1_da = dpk_da;
    dqkm1_da = dqk_da;
    if (std::abs(pk) > T(1) / eps) {
      pkm2 *= eps;
      pkm1 *= eps;
      qkm2 *= eps;
      qkm1 *= eps;
      dpkm2_da *= eps;
      dqkm2_da *= eps;
      dpkm1_da *= eps;
      dqkm1_da *= eps;
    }
    dans_da = dans_da_new;
    enabled = mode == Mode::value ? t > eps : grad_change > eps;
  }
  if (mode == Mode::value) return ans * ax;
  const T dlogax_da = xlog(x) - digamma_impl(a);
  return ax * (ans * dlogax_da + dans_da);
}

// a log x - x - lgamma(a), and whether its exp underflows.
template <class T>
std::pair<T, bool> igamma_log_ax(T a, T x) {
  const T log_ax = a * xlog(x) - x - lgamma_impl(a);
  return {log_ax, log_ax < -xlog(lim<T>::max())};
}

template <class T>
T igamma_impl(T a, T x) {
  const T inf = lim<T>::infinity();
  const bool is_nan = std::isnan(a) || std::isnan(x);
  const bool x_inf = x == inf, a_inf = a == inf, a_zero = a == T(0), x_zero = x == T(0);
  const bool domain_error =
      x < T(0) || a < T(0) || (a_zero && x_zero) || (a_inf && x_inf) || is_nan;
  const bool use_igammac = x >= T(1) && x > a;
  auto [log_ax, underflow] = igamma_log_ax(a, x);
  const T ax = std::exp(log_ax);
  const bool enabled = !(x_zero || domain_error || underflow || x_inf || a_inf);
  T out = use_igammac ? T(1) - igammac_fraction(ax, x, a, enabled, Mode::value)
                      : igamma_series(ax, x, a, enabled, Mode::value);
  if (a_inf) out = 0;
  if (x_zero) out = 0;
  if (x_inf) out = 1;
  if (domain_error) out = lim<T>::quiet_NaN();
  return out;
}

template <class T>
T igammac_impl(T a, T x) {
  const T inf = lim<T>::infinity();
  const bool is_nan = std::isnan(a) || std::isnan(x);
  const bool x_inf = x == inf, a_inf = a == inf, a_zero = a == T(0), x_zero = x == T(0);
  const bool domain_error =
      x < T(0) || a < T(0) || (a_zero && x_zero) || (a_inf && x_inf) || is_nan;
  const bool use_igamma = x < T(1) || x < a;
  auto [log_ax, underflow] = igamma_log_ax(a, x);
  const bool enabled = !(domain_error || underflow || x_inf || a_zero || a_inf);
  const T ax = std::exp(log_ax);
  T out = use_igamma ? T(1) - igamma_series(ax, x, a, enabled, Mode::value)
                     : igammac_fraction(ax, x, a, enabled, Mode::value);
  if (a_inf) out = 1;
  if (x_inf || a_zero) out = 0;
  if (domain_error) out = lim<T>::quiet_NaN();
  return out;
}

template <class T>
T igamma_grad_a_impl(T a, T x) {
  const bool is_nan = std::isnan(a) || std::isnan(x);
  const bool x_zero = x == T(0), domain_error = x < T(0) || a <= T(0);
  const bool use_igammac = x > T(1) && x > a;
  auto [log_ax, underflow] = igamma_log_ax(a, x);
  const T ax = std::exp(log_ax);
  const bool enabled = !(x_zero || domain_error || underflow || is_nan);
  T out = use_igammac ? -igammac_fraction(ax, x, a, enabled, Mode::derivative)
                      : igamma_series(ax, x, a, enabled, Mode::derivative);
  if (x_zero) out = 0;
  if (domain_error || is_nan) out = lim<T>::quiet_NaN();
  return out;
}

}  // namespace

float lgamma(float x) { return lgamma_impl(x); }
double lgamma(double x) { return lgamma_impl(x); }
float digamma(float x) { return digamma_impl(x); }
double digamma(double x) { return digamma_impl(x); }
float zeta(float x, float q) { return zeta_impl(x, q); }
double zeta(double x, double q) { return zeta_impl(x, q); }
float zeta_series_partial(int wrt, float x, float q) { return zeta_partial_impl(wrt, x, q); }
double zeta_series_partial(int wrt, double x, double q) { return zeta_partial_impl(wrt, x, q); }
float polygamma(float n, float x) { return polygamma_impl(n, x); }
double polygamma(double n, double x) { return polygamma_impl(n, x); }
float igamma(float a, float x) { return igamma_impl(a, x); }
double igamma(double a, double x) { return igamma_impl(a, x); }
float igammac(float a, float x) { return igammac_impl(a, x); }
double igammac(double a, double x) { return igammac_impl(a, x); }
float igamma_grad_a(float a, float x) { return igamma_grad_a_impl(a, x); }
double igamma_grad_a(double a, double x) { return igamma_grad_a_impl(a, x); }

}  // namespace linum::detail::special
