// jax.random.gamma's kernel (random_gamma_p: Marsaglia-Tsang with JAX's key use) and
// lax.random_gamma_grad, its implicit reparameterization derivative.
#include <linum/autodiff/random/fp_contract_off.hpp>

#include <linum/autodiff/random/sampling.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <linum/autodiff/random/xla_math.hpp>
#include <linum/error.hpp>

namespace linum::random::detail {

namespace {

template <class T>
T draw_normal(KeyData key, bool partitionable) {
  T v;
  normal(key, std::span<T>(&v, 1), partitionable);
  return v;
}

template <class T>
T draw_uniform(KeyData key, bool partitionable) {
  T v;
  uniform(key, std::span<T>(&v, 1), T(0), T(1), partitionable);
  return v;
}

// JAX's _gamma_one. For alpha < 1 it samples Gamma(alpha + 1) and boosts by U^(1 / alpha) (in
// log space: + log(U) / alpha, log(U) drawn as -exponential). Products that XLA:CPU contracts
// into the following add are std::fma here.
template <class T>
T gamma_one(KeyData key, T alpha, bool log_space, bool partitionable) {
  const T one = 1, third = static_cast<T>(1.0 / 3.0), squeeze = static_cast<T>(0.0331);
  const bool boost = alpha >= one;
  const T a = boost ? alpha : alpha + one;
  const T d = a - third;
  const T c = third * (one / std::sqrt(d));  // XLA rewrites A / sqrt(B) as A * rsqrt(B)
  KeyData pair[2];
  split(key, std::span(pair), partitionable);
  key = pair[0];
  const KeyData subkey = pair[1];
  // The initial state (X, V, U) = (0, 1, 2) enters the loop.
  T X = 0, V = 1, U = 2;
  auto keep_going = [&] {
    return U >= std::fma(-squeeze, X * X, one) &&
           xla_log(U) >= std::fma(X, T(0.5), d * ((one - V) + xla_log(V)));
  };
  while (keep_going()) {
    KeyData three[3];
    split(key, std::span(three), partitionable);
    key = three[0];
    KeyData x_key = three[1];
    T x = 0, v = -1;
    while (v <= 0) {
      KeyData xs[2];
      split(x_key, std::span(xs), partitionable);
      x_key = xs[0];
      x = draw_normal<T>(xs[1], partitionable);
      v = std::fma(x, c, one);
    }
    X = x * x;
    V = (v * v) * v;
    U = draw_uniform<T>(three[2], partitionable);
  }
  if (log_space) {
    T e;
    exponential(subkey, std::span<T>(&e, 1), partitionable);
    const T log_samples = -e;
    const T log_boost = (boost || log_samples == 0) ? T(0) : log_samples * (one / alpha);
    return (xla_log(d) + xla_log(V)) + log_boost;
  }
  const T samples = one - draw_uniform<T>(subkey, partitionable);
  const T b = boost ? one : std::pow(samples, one / alpha);
  return (d * V) * b;
}

// psi(x) for x > 0: the recurrence up to x >= 6, then the asymptotic series.
double digamma(double x) {
  double result = 0;
  for (; x < 6; x += 1) result -= 1 / x;
  const double f = 1 / (x * x);
  return result + std::log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

template <class T>
T log_of(T x) {
  return xla_log(x);
}

}  // namespace

template <class T>
void gamma(KeyData key, std::span<const T> alpha, std::span<T> out, bool log_space,
           bool partitionable) {
  if (alpha.size() != out.size())
    throw ValueError("gamma: " + std::to_string(alpha.size()) + " shape parameters for " +
                     std::to_string(out.size()) + " samples");
  std::vector<KeyData> keys(out.size());
  split(key, std::span(keys), partitionable);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = gamma_one(keys[i], alpha[i], log_space, partitionable);
}

template <class T>
T random_gamma_grad(T a, T x) {
  constexpr T eps = std::numeric_limits<T>::epsilon();
  if (std::isnan(a) || std::isnan(x) || x < 0 || a <= 0) return std::numeric_limits<T>::quiet_NaN();
  if (x == 0) return 0;
  const T ax = a * log_of(x) - x - static_cast<T>(std::lgamma(static_cast<double>(a)));
  // Where x^a e^-x / Gamma(a) underflows the loops do not run (JAX's `enabled`).
  bool enabled = !(ax < -log_of(std::numeric_limits<T>::max()));
  if (!(x > 1 && x > a)) {
    // The series of the lower incomplete gamma and its derivative in a.
    T r = a, c = 1, ans = 1, dc_da = 0, dans_da = 0;
    while (enabled) {
      r = r + 1;
      dc_da = dc_da * (x / r) - (c * x) / (r * r);
      dans_da = dans_da + dc_da;
      c = c * (x / r);
      ans = ans + c;
      enabled = std::abs(dc_da / dans_da) > eps;
    }
    const T dlogax_da = log_of(x) - static_cast<T>(digamma(static_cast<double>(a) + 1));
    return -(dans_da + ans * dlogax_da) * x / a;
  }
  // The continued fraction of the upper incomplete gamma, at most 2000 rounds.
  T y = 1 - a, z = x + y + 1, c = 0;
  T pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
  T ans = pkm1 / qkm1;
  T dpkm2_da = 0, dqkm2_da = 0, dpkm1_da = 0, dqkm1_da = -x;
  T dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1;
  while (enabled && c < 2000) {
    c = c + 1;
    y = y + 1;
    z = z + 2;
    const T yc = y * c;
    const T pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    const bool nonzero = qk != 0;
    if (nonzero) ans = pk / qk;
    const T dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c;
    const T dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c;
    const T dans_da_new = nonzero ? (dpk_da - ans * dqk_da) / qk : dans_da;
    const T change = nonzero ? std::abs(dans_da_new - dans_da) : T(1);
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    dpkm2_da = dpkm1_da;
    dqkm2_da = dqkm1_da;
    dpkm1_da = dpk_da;
    dqkm1_da = dqk_da;
    if (std::abs(pk) > 1 / eps) {
      for (T* v : {&pkm2, &pkm1, &qkm2, &qkm1, &dpkm2_da, &dqkm2_da, &dpkm1_da, &dqkm1_da})
        *v = *v * eps;
    }
    dans_da = dans_da_new;
    enabled = change > eps;
  }
  const T dlogax_da = log_of(x) - static_cast<T>(digamma(static_cast<double>(a)));
  return (dans_da + ans * dlogax_da) * x;
}

template void gamma<float>(KeyData, std::span<const float>, std::span<float>, bool, bool);
template void gamma<double>(KeyData, std::span<const double>, std::span<double>, bool, bool);
template float random_gamma_grad<float>(float, float);
template double random_gamma_grad<double>(double, double);

}  // namespace linum::random::detail
