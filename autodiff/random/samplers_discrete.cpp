// jax.random's discrete samplers over raw buffers. Their rejection loops run over the whole draw
// as JAX's while_loops do: each round draws a fresh uniform for every position, and a position's
// accepted value may be replaced by a later round's until every position has accepted, so a
// sample depends on the whole draw, not on its position alone.
#include <linum/autodiff/random/fp_contract_off.hpp>

#include <linum/autodiff/random/sampling.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <linum/autodiff/random/xla_math.hpp>
#include <linum/error.hpp>

namespace linum::random::detail {

namespace {

// XLA's float -> int32 conversion saturates, and NaN becomes 0.
template <class T>
std::int32_t saturating_int32(T v) {
  if (std::isnan(v)) return 0;
  if (v <= T(std::numeric_limits<std::int32_t>::min()))
    return std::numeric_limits<std::int32_t>::min();
  if (v >= T(std::numeric_limits<std::int32_t>::max()))
    return std::numeric_limits<std::int32_t>::max();
  return static_cast<std::int32_t>(v);
}

template <class T>
std::vector<T> draw_uniform(KeyData key, std::size_t n, bool partitionable) {
  std::vector<T> u(n);
  uniform(key, std::span(u), T(0), T(1), partitionable);
  return u;
}

KeyData split_off(KeyData& key, bool partitionable, bool keep_first = true) {
  KeyData pair[2];
  split(key, std::span(pair), partitionable);
  key = keep_first ? pair[0] : pair[1];
  return keep_first ? pair[1] : pair[0];
}

void check_sizes(std::size_t params, std::size_t out, const char* fn) {
  if (params != out)
    throw ValueError(std::string(fn) + ": " + std::to_string(params) + " parameters for " +
                     std::to_string(out) + " samples");
}

// _stirling_approx_tail: the table for k <= 9; above, JAX's series evaluated at the clamped
// k = 9 (JAX clamps k before the series).
template <class T>
T stirling_tail(T k) {
  static constexpr double kTail[] = {0.0810614667953272,  0.0413406959554092, 0.0276779256849983,
                                     0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                                     0.0118967099458917,  0.0104112652619720, 0.00925546218271273,
                                     0.00833056343336287};
  const T kc = std::clamp(k, T(0), T(9));
  if (k <= 9) return static_cast<T>(kTail[static_cast<int>(std::floor(kc))]);
  const T kp1sq = (kc + 1) * (kc + 1);
  const T inner = static_cast<T>(1.0 / 360) - static_cast<T>(1.0 / 1260) / kp1sq;
  return (static_cast<T>(1.0 / 12) - inner / kp1sq) / (kc + 1);
}

}  // namespace

void poisson(KeyData key, std::span<const float> lam, std::span<std::int32_t> out,
             bool partitionable) {
  check_sizes(lam.size(), out.size(), "poisson");
  const std::size_t n = out.size();
  std::vector<bool> knuth(n);
  bool any_knuth = false, any_rejection = false;
  for (std::size_t i = 0; i < n; ++i) {
    knuth[i] = std::isnan(lam[i]) || lam[i] < 10;
    (knuth[i] ? any_knuth : any_rejection) = true;
  }
  // Knuth: multiply uniforms until the product drops below exp(-lam) (in log space).
  std::vector<std::int64_t> count(n, 0);
  if (any_knuth) {
    std::vector<float> neg_lam(n), log_prod(n, 0.0f);
    for (std::size_t i = 0; i < n; ++i) neg_lam[i] = -(knuth[i] ? lam[i] : 0.0f);
    KeyData rng = key;
    auto running = [&] {
      for (std::size_t i = 0; i < n; ++i)
        if (log_prod[i] > neg_lam[i]) return true;
      return false;
    };
    for (std::int64_t it = 0; running() && it < std::numeric_limits<std::int32_t>::max(); ++it) {
      const KeyData sub = split_off(rng, partitionable);
      for (std::size_t i = 0; i < n; ++i)
        if (log_prod[i] > neg_lam[i]) ++count[i];
      const auto u = draw_uniform<float>(sub, n, partitionable);
      for (std::size_t i = 0; i < n; ++i) log_prod[i] = log_prod[i] + xla_log(u[i]);
    }
  }
  // Hormann's transformed rejection, with lam = 1e5 where Knuth is used (those positions still
  // take part in the loop's stopping rule).
  std::vector<float> k_out(n, -1.0f);
  if (any_rejection) {
    std::vector<float> lr(n), log_lam(n), b(n), a(n), inv_alpha(n), v_r(n);
    for (std::size_t i = 0; i < n; ++i) {
      lr[i] = knuth[i] ? 1e5f : lam[i];
      log_lam[i] = xla_log(lr[i]);
      b[i] = std::fma(2.53f, std::sqrt(lr[i]), 0.931f);
      a[i] = std::fma(0.02483f, b[i], -0.059f);
      inv_alpha[i] = 1.1239f + 1.1328f / (b[i] - 3.4f);
      v_r[i] = 0.9277f - 3.6224f / (b[i] - 2.0f);
    }
    std::vector<bool> accepted(n, false);
    KeyData rng = key;
    for (std::int64_t it = 0;
         std::find(accepted.begin(), accepted.end(), false) != accepted.end() &&
         it < std::numeric_limits<std::int32_t>::max();
         ++it) {
      KeyData three[3];
      split(rng, std::span(three), partitionable);
      rng = three[0];
      const auto u = draw_uniform<float>(three[1], n, partitionable);
      const auto v = draw_uniform<float>(three[2], n, partitionable);
      for (std::size_t i = 0; i < n; ++i) {
        const float ui = u[i] - 0.5f;
        const float us = 0.5f - std::abs(ui);
        const float k = std::floor(std::fma(2.0f * a[i] / us + b[i], ui, lr[i]) + 0.43f);
        const float s = xla_log(v[i] * inv_alpha[i] / (a[i] / (us * us) + b[i]));
        const float t = std::fma(k, log_lam[i], -lr[i]) - std::lgamma(k + 1.0f);
        const bool accept1 = us >= 0.07f && v[i] <= v_r[i];
        const bool reject = k < 0 || (us < 0.013f && v[i] > us);
        if (accept1 || (!reject && s <= t)) {
          k_out[i] = k;
          accepted[i] = true;
        }
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    out[i] = lam[i] == 0 ? 0
             : knuth[i]  ? static_cast<std::int32_t>(count[i] - 1)
                         : saturating_int32(k_out[i]);
}

template <class T>
void binomial(KeyData key, std::span<const T> count_in, std::span<const T> prob, std::span<T> out,
              bool partitionable) {
  check_sizes(count_in.size(), out.size(), "binomial");
  check_sizes(prob.size(), out.size(), "binomial");
  const std::size_t n = out.size();
  constexpr T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> q(n), count(n);
  std::vector<bool> p_lt_half(n), invalid(n), count_inf(n), inversion(n);
  bool any_inversion = false, any_btrs = false;
  for (std::size_t i = 0; i < n; ++i) {
    p_lt_half[i] = prob[i] < T(0.5);
    q[i] = p_lt_half[i] ? prob[i] : T(1) - prob[i];
    const bool count_nan_or_neg = std::isnan(count_in[i]) || count_in[i] < 0;
    const bool q_nan = std::isnan(q[i]), q_neg = q[i] < 0;
    count_inf[i] = std::isinf(count_in[i]);
    if (q_nan || q_neg) q[i] = T(0.01);
    inversion[i] = count_nan_or_neg || count_in[i] * q[i] <= T(10);
    invalid[i] = q_neg || q_nan || count_nan_or_neg;
    // For the final flip, as JAX: only valid finite counts with p >= 1/2 are flipped.
    p_lt_half[i] = p_lt_half[i] || count_nan_or_neg || q_nan || count_inf[i];
    count[i] = std::floor(count_in[i]);
    (inversion[i] ? any_inversion : any_btrs) = true;
  }
  // Inversion: count geometric waiting times until their sum exceeds count.
  std::vector<T> num_geom(n, 0);
  if (any_inversion) {
    std::vector<T> c_inv(n), l1mq(n), geom_sum(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      c_inv[i] = inversion[i] ? count[i] : T(0);
      l1mq[i] = xla_log1p(-q[i]);
    }
    KeyData rng = key;
    auto running = [&] {
      for (std::size_t i = 0; i < n; ++i)
        if (geom_sum[i] <= c_inv[i]) return true;
      return false;
    };
    while (running()) {
      const KeyData sub = split_off(rng, partitionable, /*keep_first=*/false);
      for (std::size_t i = 0; i < n; ++i)
        if (geom_sum[i] <= c_inv[i]) num_geom[i] = num_geom[i] + 1;
      const auto u = draw_uniform<T>(sub, n, partitionable);
      for (std::size_t i = 0; i < n; ++i)
        geom_sum[i] = geom_sum[i] + std::ceil(xla_log(u[i]) / l1mq[i]);
    }
  }
  // BTRS (Hormann), with count 1e4 and q 1/2 where the inversion is used.
  std::vector<T> k_out(n, T(-1));
  if (any_btrs) {
    std::vector<T> cb(n), qb(n), stddev(n), b(n), a(n), c(n), v_r(n), r(n), alpha(n), m(n);
    for (std::size_t i = 0; i < n; ++i) {
      cb[i] = inversion[i] ? T(1e4) : count[i];
      qb[i] = inversion[i] ? T(0.5) : q[i];
      stddev[i] = std::sqrt(cb[i] * qb[i] * (1 - qb[i]));
      b[i] = std::fma(T(2.53), stddev[i], T(1.15));
      a[i] = std::fma(T(0.01), qb[i], std::fma(T(0.0248), b[i], T(-0.0873)));
      c[i] = std::fma(cb[i], qb[i], T(0.5));
      v_r[i] = T(0.92) - T(4.2) / b[i];
      r[i] = qb[i] / (1 - qb[i]);
      alpha[i] = (T(2.83) + T(5.1) / b[i]) * stddev[i];
      m[i] = std::floor((cb[i] + 1) * qb[i]);
    }
    std::vector<bool> accepted(n, false);
    KeyData rng = key;
    while (std::find(accepted.begin(), accepted.end(), false) != accepted.end()) {
      KeyData three[3];
      split(rng, std::span(three), partitionable);
      rng = three[0];
      const auto u = draw_uniform<T>(three[1], n, partitionable);
      const auto v = draw_uniform<T>(three[2], n, partitionable);
      for (std::size_t i = 0; i < n; ++i) {
        const T ui = u[i] - T(0.5);
        const T us = T(0.5) - std::abs(ui);
        const bool accept1 = us >= T(0.07) && v[i] <= v_r[i];
        const T k = std::floor(std::fma(T(2) * a[i] / us + b[i], ui, c[i]));
        const bool reject = k < 0 || k > cb[i];
        const T lv = xla_log(v[i] * alpha[i] / (a[i] / (us * us) + b[i]));
        const T l1 = xla_log((m[i] + 1) / (r[i] * (cb[i] - m[i] + 1)));
        const T l2 = xla_log((cb[i] - m[i] + 1) / (cb[i] - k + 1));
        const T l3 = xla_log(r[i] * (cb[i] - k + 1) / (k + 1));
        // A*l1 + B*l2 + C*l3: each single-use product is contracted into the add after it.
        const T s12 = std::fma(m[i] + T(0.5), l1, (cb[i] + 1) * l2);
        const T s123 = std::fma(k + T(0.5), l3, s12);
        const T ub = s123 + stirling_tail(m[i]) + stirling_tail(cb[i] - m[i]) - stirling_tail(k) -
                     stirling_tail(cb[i] - k);
        if (accept1 || (!reject && lv <= ub)) {
          k_out[i] = k;
          accepted[i] = true;
        }
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    T s = inversion[i] ? num_geom[i] - 1 : k_out[i];
    if (invalid[i]) s = nan;
    if (count_inf[i] && !invalid[i]) s = std::numeric_limits<T>::infinity();
    out[i] = p_lt_half[i] ? s : count[i] - s;
  }
}

template <class T>
void geometric(KeyData key, std::span<const T> p, std::span<std::int32_t> out, bool partitionable) {
  check_sizes(p.size(), out.size(), "geometric");
  const auto u = draw_uniform<T>(key, out.size(), partitionable);
  for (std::size_t i = 0; i < out.size(); ++i) {
    // u == 0 is read as 1 so that log(u) stays finite, as JAX does.
    const T log_u = xla_log(u[i] == 0 ? T(1) : u[i]);
    out[i] = saturating_int32(std::floor(log_u / xla_log1p(-p[i])) + 1);
  }
}

template void binomial<float>(KeyData, std::span<const float>, std::span<const float>,
                              std::span<float>, bool);
template void binomial<double>(KeyData, std::span<const double>, std::span<const double>,
                               std::span<double>, bool);
template void geometric<float>(KeyData, std::span<const float>, std::span<std::int32_t>, bool);
template void geometric<double>(KeyData, std::span<const double>, std::span<std::int32_t>, bool);

}  // namespace linum::random::detail
