// optax.contrib's MoMo (Schaipp et al. 2023, momentum models with a Polyak-type step size):
// momo (SGD with momentum) and momo_adam (Adam), whose step is min(learning_rate, a step size
// computed from the loss value, its EMA and a lower bound of the loss), with optax's states. The
// scalar and per-leaf math is in contrib_momo.cpp.
#pragma once

#include <array>
#include <utility>

#include <linum/optim/base.hpp>
#include <linum/optim/contrib_adaptive.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// exp_avg: the EMA of the gradients; barf: of the loss values; gamma: of <g, params>; lb: the
// lower bound of the loss; the scalars in the params' lowest dtype.
template <class P, class C = Array>
struct MomoState {
  BOOST_HANA_DEFINE_STRUCT(MomoState, (P, exp_avg), (C, barf), (C, gamma), (C, lb), (C, count));
};

// As MomoState, with exp_avg_sq the EMA of the squared gradients (Adam's second moment).
template <class P, class C = Array>
struct MomoAdamState {
  BOOST_HANA_DEFINE_STRUCT(MomoAdamState, (P, exp_avg), (P, exp_avg_sq), (C, barf), (C, gamma),
                           (C, lb), (C, count));
};

namespace detail {
struct MomoConfig {
  double b1, b2, eps, lower_bound, weight_decay;
  bool adapt_lower_bound;
};
// The scalars of one step: {tau, new lb}. alpha: the learning rate; norm: <exp_avg, exp_avg> (momo)
// or <exp_avg, exp_avg / precond> (momo_adam); bc1: momo_adam's 1 - b1**count (1 for momo).
std::array<Array, 2> momo_step_size(const MomoConfig& c, double alpha, const Array& barf,
                                    const Array& gamma, const Array& iprod, const Array& norm,
                                    const Array& lb, const Array& bc1, bool adam);
// The update of one leaf: -(alpha wd) / (1 + alpha wd) p - tau * m (/ precond, momo_adam's).
Array momo_update(double alpha, double weight_decay, const Array& tau, const Array& m,
                  const Array& precond, const Array& p);
// optax's errors for a call without params, or without the loss value.
[[noreturn]] void throw_momo_missing(bool has_params, const char* fn);
}  // namespace detail

// optax.contrib.momo: SGD with momentum beta whose step size is min(lr, max((1 + lr wd)(barf -
// lb - gamma) + <exp_avg, params>, 0) / |exp_avg|**2) (no step when |exp_avg|**2 <= float64's
// eps); adapt_lower_bound re-estimates lb each step. Needs params and ExtraArgs<Params>{value}.
struct Momo : Transformation<Momo> {
  ScalarOrSchedule learning_rate{1.0};
  detail::MomoConfig c{0.9, 0.0, 0.0, 0.0, 0.0, false};

  template <class P>
  MomoState<P> init(const P& params) const {
    const DType dt = tree_utils::tree_dtype(params, "lowest");
    return {tree_utils::tree_zeros_like(params), zeros({}, dt), zeros({}, dt),
            full({}, c.lower_bound, dt), zero_count()};
  }
  template <class U, class P, class Q>
  std::pair<U, MomoState<P>> update_impl(const U&, const MomoState<P>&, const Q* params) const {
    detail::throw_momo_missing(params != nullptr, "momo");
  }
  template <class U, class P, class Q>
  std::pair<U, MomoState<P>> update_extra(const U& updates, const MomoState<P>& s, const Q* params,
                                          const ExtraArgs<Q>& extra) const {
    if (!params || !extra.value) detail::throw_momo_missing(params != nullptr, "momo");
    const DType dt = s.barf.dtype();
    Array bt = where(equal(s.count, zeros({}, int32)), zeros({}, dt), full({}, c.b1, dt));
    Array barf = bt * s.barf + (1 - bt) * astype(*extra.value, dt);
    P exp_avg = linum::detail::tree_apply_skip_empty(
        s.exp_avg, [&](const Array& m, const Array& g) { return bt * m + (1 - bt) * g; }, updates);
    Array gamma = bt * s.gamma + (1 - bt) * tree_utils::tree_vdot(updates, *params);
    Array norm = tree_utils::tree_norm(exp_avg, "2", true);
    Array iprod = tree_utils::tree_vdot(exp_avg, *params);
    const double alpha = learning_rate.at(s.count, "momo");
    auto [tau, lb] =
        detail::momo_step_size(c, alpha, barf, gamma, iprod, norm, s.lb, Array(), false);
    U out = linum::detail::tree_apply_skip_empty(
        updates,
        [&](const Array&, const Array& m, const Array& p) {
          return detail::momo_update(alpha, c.weight_decay, tau, m, Array(), p);
        },
        exp_avg, *params);
    return {std::move(out), {std::move(exp_avg), barf, gamma, lb, safe_increment(s.count)}};
  }
};

// optax.contrib.momo(learning_rate, beta, lower_bound, weight_decay, adapt_lower_bound).
inline Momo momo(ScalarOrSchedule learning_rate = 1.0, double beta = 0.9, double lower_bound = 0.0,
                 double weight_decay = 0.0, bool adapt_lower_bound = false) {
  Momo t;
  t.learning_rate = std::move(learning_rate);
  t.c = {beta, 0.0, 0.0, lower_bound, weight_decay, adapt_lower_bound};
  return t;
}

// optax.contrib.momo_adam: Adam (exp_avg, exp_avg_sq, eps outside the square root) whose step
// size is min(lr / bc1, max((1 + lr wd)(barf - bc1 lb - gamma) + <exp_avg, params>, 0) /
// <exp_avg, exp_avg / precond>), bc1 = 1 - b1**t. Needs params and ExtraArgs<Params>{value}.
struct MomoAdam : Transformation<MomoAdam> {
  ScalarOrSchedule learning_rate{1e-2};
  detail::MomoConfig c{0.9, 0.999, 1e-8, 0.0, 0.0, false};

  template <class P>
  MomoAdamState<P> init(const P& params) const {
    const DType dt = tree_utils::tree_dtype(params, "lowest");
    return {tree_utils::tree_zeros_like(params),
            tree_utils::tree_zeros_like(params),
            zeros({}, dt),
            zeros({}, dt),
            full({}, c.lower_bound, dt),
            zero_count()};
  }
  template <class U, class P, class Q>
  std::pair<U, MomoAdamState<P>> update_impl(const U&, const MomoAdamState<P>&,
                                             const Q* params) const {
    detail::throw_momo_missing(params != nullptr, "momo_adam");
  }
  template <class U, class P, class Q>
  std::pair<U, MomoAdamState<P>> update_extra(const U& updates, const MomoAdamState<P>& s,
                                              const Q* params, const ExtraArgs<Q>& extra) const {
    if (!params || !extra.value) detail::throw_momo_missing(params != nullptr, "momo_adam");
    const DType dt = s.barf.dtype();
    Array count_inc = safe_increment(s.count);
    Array barf = c.b1 * s.barf + (1 - c.b1) * astype(*extra.value, dt);
    P exp_avg = linum::detail::tree_apply_skip_empty(
        s.exp_avg, [&](const Array& m, const Array& g) { return c.b1 * m + (1 - c.b1) * g; },
        updates);
    P exp_avg_sq = linum::detail::tree_apply_skip_empty(
        s.exp_avg_sq, [&](const Array& v, const Array& g) { return c.b2 * v + (1 - c.b2) * g * g; },
        updates);
    Array bc2 = detail::bias_correction_denominator(c.b2, count_inc, dt);
    P precond = linum::detail::tree_apply_skip_empty(
        exp_avg_sq, [&](const Array& v) { return c.eps + sqrt(v / bc2); });
    P weighted = linum::detail::tree_apply_skip_empty(
        exp_avg, [](const Array& m, const Array& q) { return m / q; }, precond);
    Array norm = tree_utils::tree_vdot(exp_avg, weighted);
    Array gamma = c.b1 * s.gamma + (1 - c.b1) * tree_utils::tree_vdot(updates, *params);
    Array iprod = tree_utils::tree_vdot(exp_avg, *params);
    const double alpha = learning_rate.at(s.count, "momo_adam");
    Array bc1 = detail::bias_correction_denominator(c.b1, count_inc, dt);
    auto [tau, lb] = detail::momo_step_size(c, alpha, barf, gamma, iprod, norm, s.lb, bc1, true);
    U out = linum::detail::tree_apply_skip_empty(
        updates,
        [&](const Array&, const Array& m, const Array& q, const Array& p) {
          return detail::momo_update(alpha, c.weight_decay, tau, m, q, p);
        },
        exp_avg, precond, *params);
    return {std::move(out),
            {std::move(exp_avg), std::move(exp_avg_sq), barf, gamma, lb, count_inc}};
  }
};

// optax.contrib.momo_adam(learning_rate, b1, b2, eps, lower_bound, weight_decay,
// adapt_lower_bound).
inline MomoAdam momo_adam(ScalarOrSchedule learning_rate = 1e-2, double b1 = 0.9, double b2 = 0.999,
                          double eps = 1e-8, double lower_bound = 0.0, double weight_decay = 0.0,
                          bool adapt_lower_bound = false) {
  MomoAdam t;
  t.learning_rate = std::move(learning_rate);
  t.c = {b1, b2, eps, lower_bound, weight_decay, adapt_lower_bound};
  return t;
}

}  // namespace linum::optim
