// optax.contrib's MADGRAD (scale_by_madgrad, madgrad: momentumized dual averaging with a cube-root
// adaptive denominator) and ACProp (scale_by_acprop, acprop: AdaBelief's centred second moment,
// applied one step late), with optax's states. The per-leaf math is in contrib_adaptive_more.cpp.
#pragma once

#include <array>
#include <utility>

#include <linum/optim/adaptive.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/contrib_adaptive.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// grad_sum_sq: sum_k lamb_k g_k**2; s: sum_k lamb_k g_k; x0: the initial params.
template <class P, class C = Array>
struct MadgradState {
  BOOST_HANA_DEFINE_STRUCT(MadgradState, (C, count), (P, grad_sum_sq), (P, s), (P, x0));
};

namespace detail {
// One leaf of scale_by_madgrad: {update, grad_sum_sq, s}. lr: the learning rate at count (before
// this step).
std::array<Array, 3> madgrad_leaf(double lr, double momentum, double eps, const Array& count,
                                  const Array& g, const Array& p, const Array& grad_sum_sq,
                                  const Array& s, const Array& x0);
// One leaf of scale_by_acprop: {update, mu, nu}. initial: whether count (before the step) is 0.
std::array<Array, 3> acprop_leaf(double b1, double b2, double eps, double eps_root,
                                 const Array& count, const Array& initial, const Array& g,
                                 const Array& mu, const Array& nu);
}  // namespace detail

// optax.contrib.scale_by_madgrad(learning_rate, momentum, eps): with lamb = (lr + eps) *
// sqrt(count + 1), z = x0 - s / (cbrt(grad_sum_sq) + eps) and the new params
// (1 - momentum) * z + momentum * params; the update is their difference from params (the learning
// rate is inside: chain no -lr after it). Needs params.
struct ScaleByMadgrad : Transformation<ScaleByMadgrad> {
  ScalarOrSchedule learning_rate{0.0};
  double momentum = 0.9, eps = 1e-6;
  template <class P>
  MadgradState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params), tree_utils::tree_zeros_like(params),
            params};
  }
  template <class U, class P, class Q>
  std::pair<U, MadgradState<P>> update_impl(const U& updates, const MadgradState<P>& s,
                                            const Q* params) const {
    if (!params) throw_no_params("scale_by_madgrad");
    const double lr = learning_rate.at(s.count, "scale_by_madgrad");
    auto [out, l] = detail::map_leaves<3>(
        updates, params, true,
        [&](const Array& g, const Array* p, const Array& gss, const Array& si, const Array& x0) {
          return detail::madgrad_leaf(lr, momentum, eps, s.count, g, p ? *p : Array(), gss, si, x0);
        },
        s.grad_sum_sq, s.s, s.x0);
    return {std::move(out),
            {safe_increment(s.count), detail::rebuild_walked(s.grad_sum_sq, l[0]),
             detail::rebuild_walked(s.s, l[1]), s.x0}};
  }
};
inline ScaleByMadgrad scale_by_madgrad(ScalarOrSchedule learning_rate, double momentum = 0.9,
                                       double eps = 1e-6) {
  ScaleByMadgrad t;
  t.learning_rate = std::move(learning_rate), t.momentum = momentum, t.eps = eps;
  return t;
}

// optax.contrib.madgrad(learning_rate, momentum, weight_decay, eps): add_decayed_weights (before
// the dual averaging), scale_by_madgrad.
inline auto madgrad(ScalarOrSchedule learning_rate, double momentum = 0.9,
                    double weight_decay = 0.0, double eps = 1e-6) {
  return chain(add_decayed_weights(weight_decay),
               scale_by_madgrad(std::move(learning_rate), momentum, eps));
}

// optax.contrib.scale_by_acprop(b1, b2, eps, eps_root): g / (sqrt(s_hat) + eps) with s_hat the
// bias-corrected EMA of (g - mu)**2 (+ eps_root) as it was before this step (1 at the first step),
// mu the EMA of g. State: ScaleByBeliefState.
struct ScaleByAcprop : Transformation<ScaleByAcprop> {
  double b1 = 0.9, b2 = 0.999, eps = 1e-16, eps_root = 1e-16;
  template <class P>
  ScaleByBeliefState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByBeliefState<P>> update_impl(const U& updates, const ScaleByBeliefState<P>& s,
                                                  const Q*) const {
    Array initial = equal(s.count, zeros({}, s.count.dtype()));
    auto [out, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m, const Array& v) {
          return detail::acprop_leaf(b1, b2, eps, eps_root, s.count, initial, g, m, v);
        },
        s.mu, s.nu);
    return {std::move(out),
            {safe_increment(s.count), detail::rebuild_walked(s.mu, l[0]),
             detail::rebuild_walked(s.nu, l[1])}};
  }
};
inline ScaleByAcprop scale_by_acprop(double b1 = 0.9, double b2 = 0.999, double eps = 1e-16,
                                     double eps_root = 1e-16) {
  ScaleByAcprop t;
  t.b1 = b1, t.b2 = b2, t.eps = eps, t.eps_root = eps_root;
  return t;
}

// optax.contrib.acprop(learning_rate, b1, b2, eps, eps_root, weight_decay, mask): scale_by_acprop,
// add_decayed_weights, -lr.
template <class LR, class Mask = NoMask>
auto acprop(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-16,
            double eps_root = 1e-16, double weight_decay = 0.0, Mask mask = {}) {
  return chain(scale_by_acprop(b1, b2, eps, eps_root),
               add_decayed_weights(weight_decay, std::move(mask)),
               scale_by_learning_rate(std::move(learning_rate)));
}

}  // namespace linum::optim
