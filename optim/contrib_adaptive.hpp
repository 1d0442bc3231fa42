// optax.contrib's Adam variants: ADOPT (scale_by_adopt, adopt: the second moment of the
// previous step normalizes the gradient before the momentum), AdEMAMix (scale_by_ademamix,
// ademamix: a fast and a slow EMA mixed by alpha) and its simplified form
// (scale_by_simplified_ademamix, simplified_ademamix), with optax's states. The per-leaf math is
// in contrib_adaptive.cpp.
#pragma once

#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include <linum/optim/adaptive.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/fused.hpp>
#include <linum/optim/schedule.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

template <class P, class C = Array>
struct ScaleByAdemamixState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByAdemamixState, (C, count), (C, count_m2), (P, m1), (P, m2),
                           (P, nu));
};

template <class P, class C = Array>
struct ScaleBySimplifiedAdEMAMixState {
  BOOST_HANA_DEFINE_STRUCT(ScaleBySimplifiedAdEMAMixState, (C, t), (P, m), (P, n));
};

// optax's ScalarOrSchedule for a hyperparameter read at a step count: a number, or a schedule
// (any callable count -> value) evaluated at the concrete count.
struct ScalarOrSchedule {
  double value = 0.0;
  Schedule schedule;
  ScalarOrSchedule(double v) : value(v) {}  // NOLINT(google-explicit-constructor)
  template <class F>
  requires(std::is_invocable_r_v<double, const F&, std::int64_t> && !std::is_arithmetic_v<F>)
      ScalarOrSchedule(F f)  // NOLINT(google-explicit-constructor)
      : schedule(std::move(f)) {}
  double at(const Array& count, const char* fn) const {
    return schedule ? schedule(concrete_count(count, fn)) : value;
  }
};

// adopt's clip value from the step count (before the step): optax's default count**0.25.
using AdoptClipValueFn = std::function<Array(const Array& count)>;

namespace detail {
struct AdoptConfig {
  double b1, b2, eps;
  std::optional<DType> mu_dtype;
  bool nesterov, use_clipping;
};
// {update, mu, nu}. first: whether the count before the step is 0 (then b1 = 1, b2 = 0);
// clip_value: the clip bound (empty without clipping).
std::array<Array, 3> adopt_leaf(const AdoptConfig& c, const Array& first, const Array& clip_value,
                                const Array& g, const Array& mu, const Array& nu);
Array adopt_default_clip_value(const Array& count);

struct AdemamixConfig {
  double b1, b2, b3, alpha, eps, eps_root;
};
// {update, m1, m2, nu}.
std::array<Array, 4> ademamix_leaf(const AdemamixConfig& c, const Array& count_inc, const Array& g,
                                   const Array& m1, const Array& m2, const Array& nu);
// {update, m, n}.
std::array<Array, 3> simplified_ademamix_leaf(const AdemamixConfig& c, const Array& t_inc,
                                              const Array& g, const Array& m, const Array& n);
}  // namespace detail

// optax.contrib.scale_by_adopt: nu is updated with g**2, but the update normalizes g by the
// previous step's nu (g / max(sqrt(nu_prev), eps), clipped to +-clip_value_fn(count) when
// use_clipping) before the momentum mu; the first step only initializes nu (its update is 0
// with clipping). State: ScaleByAdamState.
struct ScaleByAdopt : Transformation<ScaleByAdopt> {
  detail::AdoptConfig c{0.9, 0.9999, 1e-6, std::nullopt, false, true};
  AdoptClipValueFn clip_value_fn = detail::adopt_default_clip_value;
  template <class P>
  ScaleByAdamState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params, c.mu_dtype),
            tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByAdamState<P>> update_impl(const U& updates, const ScaleByAdamState<P>& s,
                                                const Q*) const {
    Array first = equal(s.count, zeros({}, s.count.dtype()));
    Array clip_value = c.use_clipping ? clip_value_fn(s.count) : Array();
    auto [out, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m, const Array& v) {
          return detail::adopt_leaf(c, first, clip_value, g, m, v);
        },
        s.mu, s.nu);
    return {std::move(out),
            {safe_increment(s.count), detail::rebuild_walked(s.mu, l[0]),
             detail::rebuild_walked(s.nu, l[1])}};
  }
};
inline ScaleByAdopt scale_by_adopt(
    double b1 = 0.9, double b2 = 0.9999, double eps = 1e-6,
    std::optional<DType> mu_dtype = std::nullopt, bool nesterov = false, bool use_clipping = true,
    AdoptClipValueFn clip_value_fn = detail::adopt_default_clip_value) {
  ScaleByAdopt t;
  t.c = {b1, b2, eps, mu_dtype, nesterov, use_clipping};
  t.clip_value_fn = std::move(clip_value_fn);
  return t;
}

// optax.contrib.adopt: scale_by_adopt, -lr.
template <class LR>
auto adopt(LR learning_rate, double b1 = 0.9, double b2 = 0.9999, double eps = 1e-6,
           std::optional<DType> mu_dtype = std::nullopt, bool nesterov = false,
           bool use_clipping = true,
           AdoptClipValueFn clip_value_fn = detail::adopt_default_clip_value) {
  return chain(
      scale_by_adopt(b1, b2, eps, mu_dtype, nesterov, use_clipping, std::move(clip_value_fn)),
      scale_by_learning_rate(std::move(learning_rate)));
}

// optax.contrib.scale_by_ademamix: (m1_hat + alpha * m2) / (sqrt(nu_hat + eps_root) + eps), m1
// the fast EMA (b1, bias-corrected), m2 the slow one (b3, not corrected). b3 and alpha are
// numbers or schedules read at count_m2.
struct ScaleByAdemamix : Transformation<ScaleByAdemamix> {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8, eps_root = 0.0;
  ScalarOrSchedule b3{0.9999}, alpha{6.0};
  std::optional<DType> mu_dtype;
  template <class P>
  ScaleByAdemamixState<P> init(const P& params) const {
    return {zero_count(), zero_count(), tree_utils::tree_zeros_like(params, mu_dtype),
            tree_utils::tree_zeros_like(params, mu_dtype),
            tree_utils::tree_zeros_like(params, mu_dtype)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByAdemamixState<P>> update_impl(const U& updates,
                                                    const ScaleByAdemamixState<P>& s,
                                                    const Q*) const {
    const detail::AdemamixConfig c{b1,
                                   b2,
                                   b3.at(s.count_m2, "scale_by_ademamix"),
                                   alpha.at(s.count_m2, "scale_by_ademamix"),
                                   eps,
                                   eps_root};
    Array count = safe_increment(s.count);
    auto [out, l] = detail::map_leaves<4>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m1, const Array& m2, const Array& v) {
          return detail::ademamix_leaf(c, count, g, m1, m2, v);
        },
        s.m1, s.m2, s.nu);
    return {std::move(out),
            {count, safe_increment(s.count_m2), detail::rebuild_walked(s.m1, l[0]),
             detail::rebuild_walked(s.m2, l[1]), detail::rebuild_walked(s.nu, l[2])}};
  }
};
inline ScaleByAdemamix scale_by_ademamix(double b1 = 0.9, double b2 = 0.999,
                                         ScalarOrSchedule b3 = 0.9999, ScalarOrSchedule alpha = 6.0,
                                         double eps = 1e-8, double eps_root = 0.0,
                                         std::optional<DType> mu_dtype = std::nullopt) {
  ScaleByAdemamix t;
  t.b1 = b1, t.b2 = b2, t.eps = eps, t.eps_root = eps_root, t.mu_dtype = mu_dtype;
  t.b3 = std::move(b3), t.alpha = std::move(alpha);
  return t;
}

// optax.contrib.ademamix: scale_by_ademamix, add_decayed_weights(weight_decay, mask), -lr (note
// alpha's default 5, where scale_by_ademamix's is 6, as in optax).
template <class LR, class Mask = NoMask>
auto ademamix(LR learning_rate, double b1 = 0.9, double b2 = 0.999, ScalarOrSchedule b3 = 0.9999,
              ScalarOrSchedule alpha = 5.0, double eps = 1e-8, double eps_root = 0.0,
              std::optional<DType> mu_dtype = std::nullopt, double weight_decay = 0.0,
              Mask mask = {}) {
  return chain(scale_by_ademamix(b1, b2, std::move(b3), std::move(alpha), eps, eps_root, mu_dtype),
               add_decayed_weights(weight_decay, std::move(mask)),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.contrib.scale_by_simplified_ademamix: (m + alpha * g) / (sqrt(n_hat + eps_root) + eps)
// with the undamped momentum m = g + b1 * m and n the EMA (b2) of g**2. alpha: a number or a
// schedule read at t.
struct ScaleBySimplifiedAdemamix : Transformation<ScaleBySimplifiedAdemamix> {
  double b1 = 0.99, b2 = 0.95, eps = 1e-8, eps_root = 0.0;
  ScalarOrSchedule alpha{0.0};
  template <class P>
  ScaleBySimplifiedAdEMAMixState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleBySimplifiedAdEMAMixState<P>> update_impl(
      const U& updates, const ScaleBySimplifiedAdEMAMixState<P>& s, const Q*) const {
    const detail::AdemamixConfig c{b1,  b2,      0.0, alpha.at(s.t, "scale_by_simplified_ademamix"),
                                   eps, eps_root};
    Array t = safe_increment(s.t);
    auto [out, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m, const Array& n) {
          return detail::simplified_ademamix_leaf(c, t, g, m, n);
        },
        s.m, s.n);
    return {std::move(out),
            {t, detail::rebuild_walked(s.m, l[0]), detail::rebuild_walked(s.n, l[1])}};
  }
};
inline ScaleBySimplifiedAdemamix scale_by_simplified_ademamix(double b1 = 0.99, double b2 = 0.95,
                                                              ScalarOrSchedule alpha = 0.0,
                                                              double eps = 1e-8,
                                                              double eps_root = 0.0) {
  ScaleBySimplifiedAdemamix t;
  t.b1 = b1, t.b2 = b2, t.eps = eps, t.eps_root = eps_root, t.alpha = std::move(alpha);
  return t;
}

// optax.contrib.simplified_ademamix: scale_by_simplified_ademamix, add_decayed_weights, -lr.
template <class LR, class Mask = NoMask>
auto simplified_ademamix(LR learning_rate, double b1 = 0.99, double b2 = 0.95,
                         ScalarOrSchedule alpha = 0.0, double eps = 1e-8, double eps_root = 0.0,
                         double weight_decay = 0.0, Mask mask = {}) {
  return chain(scale_by_simplified_ademamix(b1, b2, std::move(alpha), eps, eps_root),
               add_decayed_weights(weight_decay, std::move(mask)),
               scale_by_learning_rate(std::move(learning_rate)));
}

}  // namespace linum::optim
