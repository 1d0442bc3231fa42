// optax's other gradient scalings: scale_by_adadelta, scale_by_sm3, scale_by_rprop,
// scale_by_optimistic_gradient, scale_by_distance_over_gradients (DoG), scale_by_polyak,
// normalize_by_update_norm and scale_by_param_block_norm, with optax's states. The per-leaf math
// is in scaling.cpp.
#pragma once

#include <array>
#include <string>
#include <utility>

#include <linum/optim/adaptive.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/erased.hpp>
#include <linum/optim/fused.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

template <class P>
struct ScaleByAdaDeltaState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByAdaDeltaState, (P, e_g), (P, e_x));
};

// mu: per leaf, a list of one accumulator per axis (a dynamic Tree shaped like the params with
// list leaves, as optax's tree of lists).
template <class P>
struct ScaleBySM3State {
  BOOST_HANA_DEFINE_STRUCT(ScaleBySM3State, (Tree, mu), (P, nu));
};

template <class P>
struct ScaleByRpropState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByRpropState, (P, step_sizes), (P, prev_updates));
};

template <class P, class B = Array>
struct ScaleByOptimisticGradientState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByOptimisticGradientState, (B, is_initial_step),
                           (P, previous_gradient));
};

template <class P>
struct ScaleByDistanceOverGradientsState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByDistanceOverGradientsState, (P, max_dist),
                           (P, grad_sum_of_squares), (P, init_params));
};

namespace detail {

// {update, e_g, e_x}.
std::array<Array, 3> adadelta_leaf(double rho, double eps, const Array& g, const Array& e_g,
                                   const Array& e_x);
// scale_by_sm3 over dynamic trees: the accumulators of params (a list of one vector per axis
// at each leaf), and one step from updates, the accumulators and nu: {new nu (which is also
// the update), new accumulators}.
Tree sm3_init(const Tree& params);
std::pair<Tree, Tree> sm3_update(double b1, double b2, double eps, const Tree& updates,
                                 const Tree& mu, const Tree& nu);
struct RpropConfig {
  double eta_minus, eta_plus, min_step_size, max_step_size;
};
// {update, step_sizes, prev_updates}.
std::array<Array, 3> rprop_leaf(const RpropConfig& c, const Array& g, const Array& step_size,
                                const Array& prev);
Array optimistic_leaf(double alpha, double beta, const Array& initial, const Array& g,
                      const Array& prev);
// {update, max_dist, grad_sum_of_squares}.
std::array<Array, 3> dog_leaf(double eps, double global_scale, const Array& g, const Array& p,
                              const Array& max_dist, const Array& g_sos, const Array& p0);
Array dog_init_dist(double reps_rel, const Array& p);
// scale_by_polyak's step size from the squared gradient norm and the objective's value.
Array polyak_step(const Array& grad_sq_norm, const Array& value, double f_min,
                  double max_learning_rate, double eps, bool plus);

}  // namespace detail

// optax.scale_by_adadelta: g * sqrt(E[dx**2] + eps) / sqrt(E[g**2] + eps).
struct ScaleByAdaDelta : Transformation<ScaleByAdaDelta> {
  double rho = 0.9, eps = 1e-6;
  template <class P>
  ScaleByAdaDeltaState<P> init(const P& params) const {
    return {tree_utils::tree_zeros_like(params), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByAdaDeltaState<P>> update_impl(const U& updates,
                                                    const ScaleByAdaDeltaState<P>& s,
                                                    const Q*) const {
    auto [out, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& eg, const Array& ex) {
          return detail::adadelta_leaf(rho, eps, g, eg, ex);
        },
        s.e_g, s.e_x);
    return {std::move(out), {detail::rebuild_walked(s.e_g, l[0]), detail::rebuild_walked(s.e_x, l[1])}};
  }
};
inline ScaleByAdaDelta scale_by_adadelta(double rho = 0.9, double eps = 1e-6) {
  ScaleByAdaDelta t;
  t.rho = rho, t.eps = eps;
  return t;
}

// optax.scale_by_sm3: SM3's cover-set accumulators (one vector per axis), then momentum b1 on
// the scaled gradient. ValueError for a 0-d leaf (optax fails there too).
struct ScaleBySM3 : Transformation<ScaleBySM3> {
  double b1 = 0.9, b2 = 1.0, eps = 1e-8;
  template <class P>
  ScaleBySM3State<P> init(const P& params) const {
    return {detail::sm3_init(detail::to_tree(params)), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleBySM3State<P>> update_impl(const U& updates, const ScaleBySM3State<P>& s,
                                               const Q*) const {
    auto [out, mu] =
        detail::sm3_update(b1, b2, eps, detail::to_tree(updates), s.mu, detail::to_tree(s.nu));
    return {detail::from_tree<U>(out, "updates"), {std::move(mu), detail::from_tree<P>(out, "nu")}};
  }
};
inline ScaleBySM3 scale_by_sm3(double b1 = 0.9, double b2 = 1.0, double eps = 1e-8) {
  ScaleBySM3 t;
  t.b1 = b1, t.b2 = b2, t.eps = eps;
  return t;
}

// optax.scale_by_rprop: per-element step sizes grown by eta_plus while the gradient keeps its
// sign, shrunk by eta_minus (and the step skipped) when it flips; as in optax, the update
// emitted is the one computed at the previous step (zero at the first). The learning rate is
// the initial step size.
struct ScaleByRprop : Transformation<ScaleByRprop> {
  double learning_rate = 0.0;
  detail::RpropConfig c{0.5, 1.2, 1e-6, 50.0};
  template <class P>
  ScaleByRpropState<P> init(const P& params) const {
    return {tree_utils::tree_full_like(params, learning_rate), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByRpropState<P>> update_impl(const U& updates, const ScaleByRpropState<P>& s,
                                                 const Q*) const {
    auto [out, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& st, const Array& prev) {
          return detail::rprop_leaf(c, g, st, prev);
        },
        s.step_sizes, s.prev_updates);
    return {std::move(out),
            {detail::rebuild_walked(s.step_sizes, l[0]), detail::rebuild_walked(s.prev_updates, l[1])}};
  }
};
inline ScaleByRprop scale_by_rprop(double learning_rate, double eta_minus = 0.5,
                                   double eta_plus = 1.2, double min_step_size = 1e-6,
                                   double max_step_size = 50.0) {
  ScaleByRprop t;
  t.learning_rate = learning_rate;
  t.c = {eta_minus, eta_plus, min_step_size, max_step_size};
  return t;
}

// optax.scale_by_optimistic_gradient: (alpha + beta) * g - beta * g_prev, g_prev = g at the
// first step.
struct ScaleByOptimisticGradient : Transformation<ScaleByOptimisticGradient> {
  double alpha = 1.0, beta = 1.0;
  template <class P>
  ScaleByOptimisticGradientState<P> init(const P& params) const {
    return {Array(true), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByOptimisticGradientState<P>> update_impl(
      const U& updates, const ScaleByOptimisticGradientState<P>& s, const Q*) const {
    U out = linum::detail::tree_apply_skip_empty(
        updates,
        [&](const Array& g, const Array& prev) {
          return detail::optimistic_leaf(alpha, beta, s.is_initial_step, g, prev);
        },
        s.previous_gradient);
    return {std::move(out), {Array(false), P(updates)}};
  }
};
inline ScaleByOptimisticGradient scale_by_optimistic_gradient(double alpha = 1.0,
                                                              double beta = 1.0) {
  ScaleByOptimisticGradient t;
  t.alpha = alpha, t.beta = beta;
  return t;
}

// optax.scale_by_distance_over_gradients (DoG): per leaf, g * global_scale * max distance from
// the initial params / sqrt(sum of squared gradients + eps). Needs params.
struct ScaleByDistanceOverGradients : Transformation<ScaleByDistanceOverGradients> {
  double reps_rel = 1e-6, eps = 1e-8, global_scale = 1.0;
  DType param_dtype = float32;
  template <class P>
  ScaleByDistanceOverGradientsState<P> init(const P& params) const {
    const double r = reps_rel;
    return {linum::detail::tree_apply_skip_empty(
                params, [r](const Array& p) { return detail::dog_init_dist(r, p); }),
            linum::detail::tree_apply_skip_empty(
                params, [](const Array&) { return zeros({1}, float32); }),
            tree_utils::tree_cast(params, param_dtype)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByDistanceOverGradientsState<P>> update_impl(
      const U& updates, const ScaleByDistanceOverGradientsState<P>& s, const Q* params) const {
    if (!params) throw_no_params("scale_by_distance_over_gradients");
    auto [out, l] = detail::map_leaves<3>(
        updates, params, true,
        [&](const Array& g, const Array* p, const Array& d, const Array& sos, const Array& p0) {
          return detail::dog_leaf(eps, global_scale, g, *p, d, sos, p0);
        },
        s.max_dist, s.grad_sum_of_squares, s.init_params);
    return {std::move(out),
            {detail::rebuild_walked(s.max_dist, l[0]),
             detail::rebuild_walked(s.grad_sum_of_squares, l[1]), s.init_params}};
  }
};
inline ScaleByDistanceOverGradients scale_by_distance_over_gradients(
    double reps_rel = 1e-6, double eps = 1e-8, DType param_dtype = float32,
    double global_scale = 1.0) {
  ScaleByDistanceOverGradients t;
  t.reps_rel = reps_rel, t.eps = eps, t.param_dtype = param_dtype, t.global_scale = global_scale;
  return t;
}

// optax.scale_by_polyak: updates * min((value - f_min) / (|g|^2 + eps), max_learning_rate)
// (0 where |g|^2 + eps is below float64's epsilon); variant "sps+" clips the gap at 0. Reads
// the objective's value from the extra arguments: update(updates, state, params, {value}).
struct ScaleByPolyak : Transformation<ScaleByPolyak> {
  double f_min = 0.0, max_learning_rate = 1.0, eps = 0.0;
  bool plus = false;
  template <class P>
  EmptyState init(const P&) const {
    return {};
  }
  template <class U, class Q>
  std::pair<U, EmptyState> update_impl(const U&, const EmptyState&, const Q*) const {
    throw ValueError(
        "scale_by_polyak: update needs the objective's value: call "
        "update(updates, state, params, ExtraArgs<Params>{value})");
  }
  template <class U, class Q>
  std::pair<U, EmptyState> update_extra(const U& updates, const EmptyState& s, const Q* params,
                                        const ExtraArgs<Q>& extra) const {
    if (!extra.value) return update_impl(updates, s, params);
    Array step = detail::polyak_step(tree_utils::tree_l2_norm(updates, true), *extra.value, f_min,
                                     max_learning_rate, eps, plus);
    U out = linum::detail::tree_apply_skip_empty(updates, [&](const Array& g) { return step * g; });
    return {std::move(out), s};
  }
};
inline ScaleByPolyak scale_by_polyak(double f_min = 0.0, double max_learning_rate = 1.0,
                                     double eps = 0.0, const std::string& variant = "sps") {
  if (variant != "sps" && variant != "sps+")
    throw ValueError("Invalid argument value for Polyak SGD: variant='" + variant +
                     "' (expected 'sps' or 'sps+')");
  ScaleByPolyak t;
  t.f_min = f_min, t.max_learning_rate = max_learning_rate, t.eps = eps;
  t.plus = variant == "sps+";
  return t;
}

// optax.normalize_by_update_norm: updates * scale_factor / (global norm + eps).
struct NormalizeByUpdateNorm : StatelessTransformation<NormalizeByUpdateNorm> {
  double scale_factor = 1.0, eps = 1e-6;
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    Array g_norm = (tree_utils::tree_l2_norm(updates) + eps) / scale_factor;
    return linum::detail::tree_apply_skip_empty(updates,
                                                [&](const Array& g) { return g / g_norm; });
  }
};
inline NormalizeByUpdateNorm normalize_by_update_norm(double scale_factor = 1.0,
                                                      double eps = 1e-6) {
  NormalizeByUpdateNorm t;
  t.scale_factor = scale_factor, t.eps = eps;
  return t;
}

// optax.scale_by_param_block_norm: updates * max(|param|, min_scale) per leaf. Needs params.
struct ScaleByParamBlockNorm : StatelessTransformation<ScaleByParamBlockNorm> {
  double min_scale = 1e-3;
  template <class U, class Q>
  U apply(const U& updates, const Q* params) const {
    if (!params) throw_no_params("scale_by_param_block_norm");
    return linum::detail::tree_apply_skip_empty(
        updates, [&](const Array& u, const Array& p) { return u * safe_norm(p, min_scale); },
        *params);
  }
};
inline ScaleByParamBlockNorm scale_by_param_block_norm(double min_scale = 1e-3) {
  ScaleByParamBlockNorm t;
  t.min_scale = min_scale;
  return t;
}

}  // namespace linum::optim
