// optax's adaptive scalings beyond Adam itself: scale_by_amsgrad, scale_by_adamax,
// scale_by_belief (AdaBelief), scale_by_yogi, scale_by_radam, scale_by_adan and
// scale_by_novograd, with optax's states. The per-leaf math is in adaptive.cpp.
#pragma once

#include <array>
#include <optional>
#include <utility>

#include <linum/optim/base.hpp>
#include <linum/optim/fused.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

template <class P, class C = Array>
struct ScaleByAmsgradState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByAmsgradState, (C, count), (P, mu), (P, nu), (P, nu_max));
};

template <class P, class C = Array>
struct ScaleByBeliefState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByBeliefState, (C, count), (P, mu), (P, nu));
};

template <class P, class C = Array>
struct ScaleByAdanState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByAdanState, (P, m), (P, v), (P, n), (P, g), (C, t));
};

// nu holds one scalar per leaf (the decaying average of the leaf's squared norm).
template <class P, class C = Array>
struct ScaleByNovogradState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByNovogradState, (C, count), (P, mu), (P, nu));
};

namespace detail {

// The leaf updates (adaptive.cpp): {update, new state leaves...}; an empty g (MaskedNode) with
// empty state leaves gives empty outputs. count is the incremented step count.
struct AmsgradConfig {
  double b1, b2, eps, eps_root;
  std::optional<DType> mu_dtype;
  bool bias_correction_mu, bias_correction_nu;
};
std::array<Array, 4> amsgrad_leaf(const AmsgradConfig& c, const Array& count, const Array& g,
                                  const Array& mu, const Array& nu, const Array& nu_max);

std::array<Array, 3> adamax_leaf(double b1, double b2, double eps, const Array& count,
                                 const Array& g, const Array& mu, const Array& nu);

struct BeliefConfig {
  double b1, b2, eps, eps_root;
  bool nesterov;
};
std::array<Array, 3> belief_leaf(const BeliefConfig& c, const Array& count, const Array& g,
                                 const Array& mu, const Array& nu);

std::array<Array, 3> yogi_leaf(double b1, double b2, double eps, double eps_root,
                               const Array& count, const Array& g, const Array& mu,
                               const Array& nu);

// ro: RAdam's length of the approximated simple moving average at this step (a scalar).
struct RadamConfig {
  double b1, b2, eps, eps_root, threshold;
  bool nesterov;
};
Array radam_ro(double b2, const Array& count, DType dtype);
std::array<Array, 3> radam_leaf(const RadamConfig& c, const Array& count, const Array& ro,
                                const Array& g, const Array& mu, const Array& nu);

struct AdanConfig {
  double b1, b2, b3, eps, eps_root;
};
// {update, m, v, n, g}; first: whether this is the first step (t == 0 before it).
std::array<Array, 5> adan_leaf(const AdanConfig& c, const Array& first, const Array& t_inc,
                               const Array& g, const Array& m, const Array& v, const Array& n,
                               const Array& g_prev);

struct NovogradConfig {
  double b1, b2, eps, eps_root, weight_decay;
  std::optional<DType> mu_dtype;
};
// first: whether this is the first step (the incremented count is 1).
std::array<Array, 3> novograd_leaf(const NovogradConfig& c, const Array& first, const Array& g,
                                   const Array& p, const Array& mu, const Array& nu);

// The dtype of the scalars a transformation computes from its step count: float64 when a leaf
// of the tree is float64 (as under JAX's x64 mode), else float32.
template <class T>
DType scalar_dtype(const T& tree) {
  for (const Array& x : linum::detail::tree_arrays(tree))
    if (x.valid() && x.dtype() == float64) return float64;
  return float32;
}

}  // namespace detail

// optax.scale_by_amsgrad: Adam whose denominator uses the running maximum nu_max of the
// (bias-corrected, unless bias_correction_nu is false) second moment.
struct ScaleByAmsgrad : Transformation<ScaleByAmsgrad> {
  detail::AmsgradConfig c{0.9, 0.999, 1e-8, 0.0, std::nullopt, true, true};
  template <class P>
  ScaleByAmsgradState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params, c.mu_dtype),
            tree_utils::tree_zeros_like(params), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByAmsgradState<P>> update_impl(const U& updates,
                                                   const ScaleByAmsgradState<P>& s,
                                                   const Q*) const {
    Array count = safe_increment(s.count);
    auto [out, l] = detail::map_leaves<4>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m, const Array& v, const Array& vm) {
          return detail::amsgrad_leaf(c, count, g, m, v, vm);
        },
        s.mu, s.nu, s.nu_max);
    return {std::move(out),
            {count, detail::rebuild_walked(s.mu, l[0]), detail::rebuild_walked(s.nu, l[1]),
             detail::rebuild_walked(s.nu_max, l[2])}};
  }
};
inline ScaleByAmsgrad scale_by_amsgrad(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                                       double eps_root = 0.0,
                                       std::optional<DType> mu_dtype = std::nullopt,
                                       bool bias_correction_mu = true,
                                       bool bias_correction_nu = true) {
  ScaleByAmsgrad t;
  t.c = {b1, b2, eps, eps_root, mu_dtype, bias_correction_mu, bias_correction_nu};
  return t;
}

// optax.scale_by_adamax: m_hat / nu, nu the infinity norm max(|g| + eps, b2 * nu).
struct ScaleByAdamax : Transformation<ScaleByAdamax> {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  template <class P>
  ScaleByAdamState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByAdamState<P>> update_impl(const U& updates, const ScaleByAdamState<P>& s,
                                                const Q*) const {
    Array count = safe_increment(s.count);
    auto [out, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m, const Array& v) {
          return detail::adamax_leaf(b1, b2, eps, count, g, m, v);
        },
        s.mu, s.nu);
    return {std::move(out),
            {count, detail::rebuild_walked(s.mu, l[0]), detail::rebuild_walked(s.nu, l[1])}};
  }
};
inline ScaleByAdamax scale_by_adamax(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8) {
  ScaleByAdamax t;
  t.b1 = b1, t.b2 = b2, t.eps = eps;
  return t;
}

// optax.scale_by_belief (AdaBelief): Adam whose second moment tracks (g - mu)**2 + eps_root.
struct ScaleByBelief : Transformation<ScaleByBelief> {
  detail::BeliefConfig c{0.9, 0.999, 1e-16, 1e-16, false};
  template <class P>
  ScaleByBeliefState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByBeliefState<P>> update_impl(const U& updates, const ScaleByBeliefState<P>& s,
                                                  const Q*) const {
    Array count = safe_increment(s.count);
    auto [out, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m, const Array& v) {
          return detail::belief_leaf(c, count, g, m, v);
        },
        s.mu, s.nu);
    return {std::move(out),
            {count, detail::rebuild_walked(s.mu, l[0]), detail::rebuild_walked(s.nu, l[1])}};
  }
};
inline ScaleByBelief scale_by_belief(double b1 = 0.9, double b2 = 0.999, double eps = 1e-16,
                                     double eps_root = 1e-16, bool nesterov = false) {
  ScaleByBelief t;
  t.c = {b1, b2, eps, eps_root, nesterov};
  return t;
}

// optax.scale_by_yogi: Adam with the additive second-moment update
// nu - (1 - b2) * sign(nu - g**2) * g**2; both moments start at initial_accumulator_value.
struct ScaleByYogi : Transformation<ScaleByYogi> {
  double b1 = 0.9, b2 = 0.999, eps = 1e-3, eps_root = 0.0, initial_accumulator_value = 1e-6;
  template <class P>
  ScaleByAdamState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_full_like(params, initial_accumulator_value),
            tree_utils::tree_full_like(params, initial_accumulator_value)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByAdamState<P>> update_impl(const U& updates, const ScaleByAdamState<P>& s,
                                                const Q*) const {
    Array count = safe_increment(s.count);
    auto [out, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m, const Array& v) {
          return detail::yogi_leaf(b1, b2, eps, eps_root, count, g, m, v);
        },
        s.mu, s.nu);
    return {std::move(out),
            {count, detail::rebuild_walked(s.mu, l[0]), detail::rebuild_walked(s.nu, l[1])}};
  }
};
inline ScaleByYogi scale_by_yogi(double b1 = 0.9, double b2 = 0.999, double eps = 1e-3,
                                 double eps_root = 0.0, double initial_accumulator_value = 1e-6) {
  ScaleByYogi t;
  t.b1 = b1, t.b2 = b2, t.eps = eps, t.eps_root = eps_root;
  t.initial_accumulator_value = initial_accumulator_value;
  return t;
}

// optax.scale_by_radam: Adam rectified by r(ro) once ro, the length of the approximated SMA,
// reaches threshold; the bias-corrected momentum alone before that.
struct ScaleByRadam : Transformation<ScaleByRadam> {
  detail::RadamConfig c{0.9, 0.999, 1e-8, 0.0, 5.0, false};
  template <class P>
  ScaleByAdamState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByAdamState<P>> update_impl(const U& updates, const ScaleByAdamState<P>& s,
                                                const Q*) const {
    Array count = safe_increment(s.count);
    Array ro = detail::radam_ro(c.b2, count, detail::scalar_dtype(updates));
    auto [out, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m, const Array& v) {
          return detail::radam_leaf(c, count, ro, g, m, v);
        },
        s.mu, s.nu);
    return {std::move(out),
            {count, detail::rebuild_walked(s.mu, l[0]), detail::rebuild_walked(s.nu, l[1])}};
  }
};
inline ScaleByRadam scale_by_radam(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                                   double eps_root = 0.0, double threshold = 5.0,
                                   bool nesterov = false) {
  ScaleByRadam t;
  t.c = {b1, b2, eps, eps_root, threshold, nesterov};
  return t;
}

// optax.scale_by_adan: Nesterov-accelerated adaptive momentum over g and the gradient
// difference g - g_prev (zero at the first step).
struct ScaleByAdan : Transformation<ScaleByAdan> {
  detail::AdanConfig c{0.98, 0.92, 0.99, 1e-8, 0.0};
  template <class P>
  ScaleByAdanState<P> init(const P& params) const {
    P z = tree_utils::tree_zeros_like(params);
    return {z, z, z, z, zero_count()};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByAdanState<P>> update_impl(const U& updates, const ScaleByAdanState<P>& s,
                                                const Q*) const {
    Array first = equal(s.t, zeros({}, s.t.dtype()));
    Array t = safe_increment(s.t);
    auto [out, l] = detail::map_leaves<5>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m, const Array& v, const Array& n,
            const Array& gp) { return detail::adan_leaf(c, first, t, g, m, v, n, gp); },
        s.m, s.v, s.n, s.g);
    return {std::move(out),
            {detail::rebuild_walked(s.m, l[0]), detail::rebuild_walked(s.v, l[1]),
             detail::rebuild_walked(s.n, l[2]), detail::rebuild_walked(s.g, l[3]), t}};
  }
};
inline ScaleByAdan scale_by_adan(double b1 = 0.98, double b2 = 0.92, double b3 = 0.99,
                                 double eps = 1e-8, double eps_root = 0.0) {
  ScaleByAdan t;
  t.c = {b1, b2, b3, eps, eps_root};
  return t;
}

// optax.scale_by_novograd: per-leaf second moments of the squared gradient norm; the momentum
// of g / (sqrt(nu + eps_root) + eps) + weight_decay * params. Needs params.
struct ScaleByNovograd : Transformation<ScaleByNovograd> {
  detail::NovogradConfig c{0.9, 0.25, 1e-8, 0.0, 0.0, std::nullopt};
  template <class P>
  ScaleByNovogradState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params, c.mu_dtype),
            linum::detail::tree_apply_skip_empty(
                params, [](const Array& p) { return zeros({}, p.dtype()); })};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByNovogradState<P>> update_impl(const U& updates,
                                                    const ScaleByNovogradState<P>& s,
                                                    const Q* params) const {
    if (!params) throw_no_params("scale_by_novograd");
    Array count = safe_increment(s.count);
    Array first = equal(count, ones({}, count.dtype()));
    auto [out, l] = detail::map_leaves<3>(
        updates, params, true,
        [&](const Array& g, const Array* p, const Array& m, const Array& v) {
          return detail::novograd_leaf(c, first, g, p ? *p : Array(), m, v);
        },
        s.mu, s.nu);
    return {std::move(out),
            {count, detail::rebuild_walked(s.mu, l[0]), detail::rebuild_walked(s.nu, l[1])}};
  }
};
inline ScaleByNovograd scale_by_novograd(double b1 = 0.9, double b2 = 0.25, double eps = 1e-8,
                                         double eps_root = 0.0, double weight_decay = 0.0,
                                         std::optional<DType> mu_dtype = std::nullopt) {
  ScaleByNovograd t;
  t.c = {b1, b2, eps, eps_root, weight_decay, mu_dtype};
  return t;
}

}  // namespace linum::optim
