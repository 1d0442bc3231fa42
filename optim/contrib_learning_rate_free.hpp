// optax.contrib's learning-rate-free optimizers, which estimate the step size from the distance
// travelled and the gradients seen: D-Adaptation AdamW (dadapt_adamw), Prodigy (prodigy),
// Distance over Gradients (dog, scale_by_dog) and over Weighted Gradients (dowg, scale_by_dowg),
// COntinuous COin Betting (cocob, scale_by_cocob), and the Mechanic tuner of any optimizer's
// step size (mechanize), with optax's states. Their scalar state
// fields (estimates, sums) are in the params' lowest dtype, as optax keeps them. The per-leaf and
// scalar math is in contrib_learning_rate_free.cpp.
#pragma once

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <linum/optim/combine.hpp>
#include <linum/optim/contrib_adaptive.hpp>
#include <linum/optim/transform.hpp>
#include <linum/optim/wrappers.hpp>

namespace linum::optim {

template <class P, class C = Array>
struct DAdaptAdamWState {
  BOOST_HANA_DEFINE_STRUCT(DAdaptAdamWState, (P, exp_avg), (P, exp_avg_sq), (P, grad_sum),
                           (C, estim_lr), (C, numerator_weighted), (C, count));
};

template <class P, class C = Array>
struct ProdigyState {
  BOOST_HANA_DEFINE_STRUCT(ProdigyState, (P, exp_avg), (P, exp_avg_sq), (P, grad_sum), (P, params0),
                           (C, estim_lr), (C, numerator_weighted), (C, count));
};

// is_init_step: a bool scalar; max_dist, sum_sq_norm_grads: scalars in the params' dtype.
template <class P, class C = Array>
struct DoGState {
  BOOST_HANA_DEFINE_STRUCT(DoGState, (C, is_init_step), (P, init_params), (C, max_dist),
                           (C, sum_sq_norm_grads));
};

template <class P, class C = Array>
struct DoWGState {
  BOOST_HANA_DEFINE_STRUCT(DoWGState, (P, init_params), (C, weighted_sq_norm_grads),
                           (C, estim_sq_dist));
};

// count: int32; r, m, v, s: one entry per beta (num_betas), in the params' lowest dtype.
template <class S, class P, class C = Array>
struct MechanicState {
  BOOST_HANA_DEFINE_STRUCT(MechanicState, (S, base_optimizer_state), (C, count), (C, r), (C, m),
                           (C, v), (C, s), (P, x0));
};

template <class P>
struct COCOBState {
  BOOST_HANA_DEFINE_STRUCT(COCOBState, (P, init_particles), (P, cumulative_gradients), (P, scale),
                           (P, subgradients), (P, reward));
};

namespace detail {
// The AdamW hyperparameters D-Adaptation and Prodigy share; beta3 is Prodigy's.
struct DAdaptConfig {
  double b1, b2, beta3, eps, estim_lr0, estim_lr_coef, weight_decay;
  bool safeguard_warmup;
};
// estim_lr * sched * sqrt(1 - b2**count_inc) / (1 - b1**count_inc) in estim_lr's dtype.
Array dadapt_dlr(const DAdaptConfig& c, const Array& estim_lr, double sched,
                 const Array& count_inc);
// One leaf of dadapt_adamw's moments: {exp_avg, exp_avg_sq, grad_sum}.
std::array<Array, 3> dadapt_adamw_moments(const DAdaptConfig& c, const Array& dlr, const Array& g,
                                          const Array& ea, const Array& eas, const Array& gs);
// grad_sum / (sqrt(exp_avg_sq) + eps), before this step's moments.
Array dadapt_adamw_weighted(const DAdaptConfig& c, const Array& gs, const Array& eas);
Array dadapt_adamw_update(const DAdaptConfig& c, const Array& dlr, const Array& ea,
                          const Array& eas, const Array& p);
// One leaf of prodigy's moments: {exp_avg, exp_avg_sq, grad_sum}.
std::array<Array, 3> prodigy_moments(const DAdaptConfig& c, const Array& estim_lr, const Array& dlr,
                                     const Array& g, const Array& ea, const Array& eas,
                                     const Array& gs);
Array prodigy_update(const DAdaptConfig& c, const Array& dlr, const Array& estim_lr,
                     const Array& ea, const Array& eas, const Array& p);
// One leaf of scale_by_cocob: {update, cumulative_gradients, scale, subgradients, reward}.
std::array<Array, 5> cocob_leaf(double alpha, const Array& g, const Array& p, const Array& p0,
                                const Array& cumulative, const Array& scale,
                                const Array& subgradients, const Array& reward);
void check_dog_init_step(const std::string& type);

struct MechanicConfig {
  double weight_decay, eps, s_init;
  int num_betas;
};
// Mechanic's scalar step from h = <g + decay, delta_prev>: the new {r, m, v, s}.
std::array<Array, 4> mechanic_scalars(const MechanicConfig& c, const Array& h, const Array& r,
                                      const Array& m, const Array& v, const Array& s);
void check_mechanize(const MechanicConfig& c);
}  // namespace detail

// optax.contrib.dadapt_adamw(learning_rate, betas, eps, estim_lr0, weight_decay): AdamW whose
// base step size estim_lr (D, a lower bound on the distance to the solution) grows with the
// ratio of sum_t dlr_t <g_t, s_t / sqrt(v_t)> to the l1 norm of s (s the EMA of dlr * g);
// learning_rate is a multiplier (a number or a schedule, 1.0 its base). Needs params.
struct DAdaptAdamW : Transformation<DAdaptAdamW> {
  detail::DAdaptConfig c{0.9, 0.999, 0.0, 1e-8, 1e-6, 1.0, 0.0, false};
  ScalarOrSchedule learning_rate{1.0};
  template <class P>
  DAdaptAdamWState<P> init(const P& params) const {
    const DType dt = tree_utils::tree_dtype(params, "lowest");
    return {tree_utils::tree_zeros_like(params),
            tree_utils::tree_zeros_like(params),
            tree_utils::tree_zeros_like(params),
            full({}, c.estim_lr0, dt),
            zeros({}, dt),
            zero_count()};
  }
  template <class U, class P, class Q>
  std::pair<U, DAdaptAdamWState<P>> update_impl(const U& updates, const DAdaptAdamWState<P>& s,
                                                const Q* params) const {
    if (!params) throw_no_params("dadapt_adamw");
    Array count_inc = safe_increment(s.count);
    Array dlr =
        detail::dadapt_dlr(c, s.estim_lr, learning_rate.at(s.count, "dadapt_adamw"), count_inc);
    P weighted = linum::detail::tree_apply_skip_empty(
        s.grad_sum,
        [&](const Array& gs, const Array& eas) {
          return detail::dadapt_adamw_weighted(c, gs, eas);
        },
        s.exp_avg_sq);
    Array numerator_acum = tree_utils::tree_vdot(updates, weighted);
    DAdaptAdamWState<P> next = s;
    auto [ea, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& a, const Array& v, const Array& gs) {
          return detail::dadapt_adamw_moments(c, dlr, g, a, v, gs);
        },
        s.exp_avg, s.exp_avg_sq, s.grad_sum);
    next.exp_avg = std::move(ea);
    next.exp_avg_sq = detail::rebuild_walked(s.exp_avg_sq, l[0]);
    next.grad_sum = detail::rebuild_walked(s.grad_sum, l[1]);
    const double sb2 = std::sqrt(c.b2);
    Array l1 = tree_utils::tree_norm(next.grad_sum, "1");
    next.numerator_weighted =
        sb2 * s.numerator_weighted + (1.0 - sb2) * dlr * astype(numerator_acum, dlr.dtype());
    next.estim_lr =
        maximum(s.estim_lr, next.numerator_weighted / ((1.0 - sb2) * astype(l1, dlr.dtype())));
    next.count = count_inc;
    U out = linum::detail::tree_apply_skip_empty(
        updates,
        [&](const Array&, const Array& a, const Array& v, const Array& p) {
          return detail::dadapt_adamw_update(c, dlr, a, v, p);
        },
        next.exp_avg, next.exp_avg_sq, *params);
    return {std::move(out), std::move(next)};
  }
};
inline DAdaptAdamW dadapt_adamw(ScalarOrSchedule learning_rate = 1.0,
                                std::pair<double, double> betas = {0.9, 0.999}, double eps = 1e-8,
                                double estim_lr0 = 1e-6, double weight_decay = 0.0) {
  DAdaptAdamW t;
  t.c = {betas.first, betas.second, 0.0, eps, estim_lr0, 1.0, weight_decay, false};
  t.learning_rate = std::move(learning_rate);
  return t;
}

// optax.contrib.prodigy(learning_rate, betas, beta3, eps, estim_lr0, estim_lr_coef,
// weight_decay, safeguard_warmup): D-Adaptation's AdamW on estim_lr-scaled gradients, D
// estimated from <g, params0 - params> weighted by beta3 (default sqrt(b2)), which adapts it
// faster. The update's eps is scaled by the new estim_lr. Needs params.
struct Prodigy : Transformation<Prodigy> {
  detail::DAdaptConfig c{0.9, 0.999, std::sqrt(0.999), 1e-8, 1e-6, 1.0, 0.0, false};
  ScalarOrSchedule learning_rate{1.0};
  template <class P>
  ProdigyState<P> init(const P& params) const {
    const DType dt = tree_utils::tree_dtype(params, "lowest");
    return {tree_utils::tree_zeros_like(params),
            tree_utils::tree_zeros_like(params),
            tree_utils::tree_zeros_like(params),
            params,
            full({}, c.estim_lr0, dt),
            zeros({}, dt),
            zero_count()};
  }
  template <class U, class P, class Q>
  std::pair<U, ProdigyState<P>> update_impl(const U& updates, const ProdigyState<P>& s,
                                            const Q* params) const {
    if (!params) throw_no_params("prodigy");
    Array count_inc = safe_increment(s.count);
    Array dlr = detail::dadapt_dlr(c, s.estim_lr, learning_rate.at(s.count, "prodigy"), count_inc);
    Array numerator_acum = tree_utils::tree_vdot(updates, tree_utils::tree_sub(s.params0, *params));
    ProdigyState<P> next = s;
    auto [ea, l] = detail::map_leaves<3>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& a, const Array& v, const Array& gs) {
          return detail::prodigy_moments(c, s.estim_lr, dlr, g, a, v, gs);
        },
        s.exp_avg, s.exp_avg_sq, s.grad_sum);
    next.exp_avg = std::move(ea);
    next.exp_avg_sq = detail::rebuild_walked(s.exp_avg_sq, l[0]);
    next.grad_sum = detail::rebuild_walked(s.grad_sum, l[1]);
    const DType dt = s.estim_lr.dtype();
    next.numerator_weighted = c.beta3 * s.numerator_weighted +
                              (s.estim_lr / c.estim_lr0) * dlr * astype(numerator_acum, dt);
    Array denominator = astype(tree_utils::tree_norm(next.grad_sum, "1"), dt);
    next.estim_lr = maximum(s.estim_lr, c.estim_lr_coef * next.numerator_weighted / denominator);
    next.count = count_inc;
    U out = linum::detail::tree_apply_skip_empty(
        updates,
        [&](const Array&, const Array& a, const Array& v, const Array& p) {
          return detail::prodigy_update(c, dlr, next.estim_lr, a, v, p);
        },
        next.exp_avg, next.exp_avg_sq, *params);
    return {std::move(out), std::move(next)};
  }
};
inline Prodigy prodigy(ScalarOrSchedule learning_rate = 1.0,
                       std::pair<double, double> betas = {0.9, 0.999},
                       std::optional<double> beta3 = std::nullopt, double eps = 1e-8,
                       double estim_lr0 = 1e-6, double estim_lr_coef = 1.0,
                       double weight_decay = 0.0, bool safeguard_warmup = false) {
  Prodigy t;
  t.c = {betas.first,  betas.second,    beta3.value_or(std::sqrt(betas.second)),
         eps,          estim_lr0,       estim_lr_coef,
         weight_decay, safeguard_warmup};
  t.learning_rate = std::move(learning_rate);
  return t;
}

// optax's init_step of dog: {"distance", r0} (the initial distance), {"learning_rate", eta0}
// (the first step's learning rate) or {"heuristic", alpha} (r0 = alpha * (1 + |params0|)).
using DogInitStep = std::pair<std::string, double>;

// scale_by_dog(init_step, eps): updates * max_dist / sqrt(sum_t |g_t|**2 + eps), max_dist the
// largest distance from the initial params so far (at least r0). Needs params.
struct ScaleByDog : Transformation<ScaleByDog> {
  DogInitStep init_step{"heuristic", 1e-6};
  double eps = 1e-8;
  template <class P>
  DoGState<P> init(const P& params) const {
    const DType dt = tree_utils::tree_dtype(params, "lowest");
    Array r_epsilon;
    if (init_step.first == "distance")
      r_epsilon = full({}, init_step.second, dt);
    else if (init_step.first == "heuristic")
      r_epsilon = astype(init_step.second * (1.0 + tree_utils::tree_l2_norm(params)), dt);
    else
      r_epsilon = zeros({}, dt);
    return {full({}, 1.0, bool_), params, r_epsilon, zeros({}, dt)};
  }
  template <class U, class P, class Q>
  std::pair<U, DoGState<P>> update_impl(const U& updates, const DoGState<P>& s,
                                        const Q* params) const {
    if (!params) throw_no_params("scale_by_dog");
    const DType dt = s.max_dist.dtype();
    Array dist = tree_utils::tree_l2_norm(tree_utils::tree_sub(s.init_params, *params));
    DoGState<P> next = s;
    next.max_dist = maximum(s.max_dist, astype(dist, dt));
    next.sum_sq_norm_grads =
        s.sum_sq_norm_grads + astype(tree_utils::tree_l2_norm(updates, true), dt);
    Array lr = next.max_dist / sqrt(next.sum_sq_norm_grads + eps);
    if (init_step.first == "learning_rate")
      lr = where(s.is_init_step, full({}, init_step.second, dt), lr);
    next.is_init_step = full({}, 0.0, bool_);
    U out = linum::detail::tree_apply_skip_empty(updates, [&](const Array& g) { return lr * g; });
    return {std::move(out), std::move(next)};
  }
};
inline ScaleByDog scale_by_dog(DogInitStep init_step, double eps = 1e-8) {
  detail::check_dog_init_step(init_step.first);
  ScaleByDog t;
  t.init_step = std::move(init_step), t.eps = eps;
  return t;
}

namespace detail {
// optax's `add_decayed_weights(weight_decay, mask) if weight_decay is not None else identity()`:
// std::nullopt (the default) is None.
template <class WD, class Mask>
auto optional_decayed_weights(WD weight_decay, Mask mask) {
  if constexpr (std::is_same_v<WD, std::nullopt_t>)
    return identity();
  else
    return add_decayed_weights(static_cast<double>(weight_decay), std::move(mask));
}
}  // namespace detail

// optax.contrib.dog(learning_rate, init_step, eps, weight_decay, mask): [add_decayed_weights
// when weight_decay is a number], scale_by_dog, -lr. The initial params must be the real ones
// for the "heuristic" init_step.
template <class LR = double, class WD = std::nullopt_t, class Mask = NoMask>
auto dog(LR learning_rate = 1.0, DogInitStep init_step = {"heuristic", 1e-6}, double eps = 1e-8,
         WD weight_decay = std::nullopt, Mask mask = {}) {
  return chain(detail::optional_decayed_weights(weight_decay, std::move(mask)),
               scale_by_dog(std::move(init_step), eps),
               scale_by_learning_rate(std::move(learning_rate)));
}

// scale_by_dowg(init_estim_sq_dist, eps): updates * d2 / (sqrt(sum_t d2_t |g_t|**2) + eps),
// d2 the largest squared distance from the initial params so far (at least
// init_estim_sq_dist, default eps). Needs params.
struct ScaleByDowg : Transformation<ScaleByDowg> {
  std::optional<double> init_estim_sq_dist;
  double eps = 1e-4;
  template <class P>
  DoWGState<P> init(const P& params) const {
    const DType dt = tree_utils::tree_dtype(params, "lowest");
    return {params, zeros({}, dt), full({}, init_estim_sq_dist.value_or(eps), dt)};
  }
  template <class U, class P, class Q>
  std::pair<U, DoWGState<P>> update_impl(const U& updates, const DoWGState<P>& s,
                                         const Q* params) const {
    if (!params) throw_no_params("scale_by_dowg");
    const DType dt = s.estim_sq_dist.dtype();
    Array sq_dist = tree_utils::tree_l2_norm(tree_utils::tree_sub(s.init_params, *params), true);
    DoWGState<P> next = s;
    next.estim_sq_dist = maximum(s.estim_sq_dist, astype(sq_dist, dt));
    next.weighted_sq_norm_grads =
        next.estim_sq_dist * astype(tree_utils::tree_l2_norm(updates, true), dt) +
        s.weighted_sq_norm_grads;
    Array lr = next.estim_sq_dist / (sqrt(next.weighted_sq_norm_grads) + eps);
    U out = linum::detail::tree_apply_skip_empty(updates, [&](const Array& g) { return lr * g; });
    return {std::move(out), std::move(next)};
  }
};
inline ScaleByDowg scale_by_dowg(std::optional<double> init_estim_sq_dist = std::nullopt,
                                 double eps = 1e-4) {
  ScaleByDowg t;
  t.init_estim_sq_dist = init_estim_sq_dist, t.eps = eps;
  return t;
}

// optax.contrib.dowg(learning_rate, init_estim_sq_dist, eps, weight_decay, mask):
// [add_decayed_weights when weight_decay is a number], scale_by_dowg, -lr.
template <class LR = double, class WD = std::nullopt_t, class Mask = NoMask>
auto dowg(LR learning_rate = 1.0, std::optional<double> init_estim_sq_dist = std::nullopt,
          double eps = 1e-4, WD weight_decay = std::nullopt, Mask mask = {}) {
  return chain(detail::optional_decayed_weights(weight_decay, std::move(mask)),
               scale_by_dowg(init_estim_sq_dist, eps),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.contrib.scale_by_cocob(alpha, eps): coin betting per coordinate; the new params are
// p0 + C / (L * max(G + L, alpha * L)) * (L + R), with C the negated gradient sum, L the largest
// |g| (from eps), G the sum of |g| and R the reward; the update is their difference from params.
// Needs params.
struct ScaleByCocob : Transformation<ScaleByCocob> {
  double alpha = 100.0, eps = 1e-8;
  template <class P>
  COCOBState<P> init(const P& params) const {
    P zeros_like = tree_utils::tree_zeros_like(params);
    return {params, zeros_like, tree_utils::tree_full_like(params, eps), zeros_like, zeros_like};
  }
  template <class U, class P, class Q>
  std::pair<U, COCOBState<P>> update_impl(const U& updates, const COCOBState<P>& s,
                                          const Q* params) const {
    if (!params) throw_no_params("scale_by_cocob");
    auto [out, l] = detail::map_leaves<5>(
        updates, params, true,
        [&](const Array& g, const Array* p, const Array& p0, const Array& cg, const Array& sc,
            const Array& sg, const Array& r) {
          return detail::cocob_leaf(alpha, g, p ? *p : Array(), p0, cg, sc, sg, r);
        },
        s.init_particles, s.cumulative_gradients, s.scale, s.subgradients, s.reward);
    return {std::move(out),
            {s.init_particles, detail::rebuild_walked(s.cumulative_gradients, l[0]),
             detail::rebuild_walked(s.scale, l[1]), detail::rebuild_walked(s.subgradients, l[2]),
             detail::rebuild_walked(s.reward, l[3])}};
  }
};
inline ScaleByCocob scale_by_cocob(double alpha = 100.0, double eps = 1e-8) {
  ScaleByCocob t;
  t.alpha = alpha, t.eps = eps;
  return t;
}

// optax.contrib.cocob(learning_rate, alpha, eps, weight_decay, mask): add_decayed_weights,
// +lr (a multiplier of the gradients, not of the step), scale_by_cocob.
template <class LR = double, class Mask = NoMask>
auto cocob(LR learning_rate = 1.0, double alpha = 100.0, double eps = 1e-8,
           double weight_decay = 0.0, Mask mask = {}) {
  return chain(add_decayed_weights(weight_decay, std::move(mask)),
               scale_by_learning_rate(std::move(learning_rate), false), scale_by_cocob(alpha, eps));
}

// optax.contrib.mechanize(base_optimizer, weight_decay, eps, s_init, num_betas): learns the
// scale sum(s) of the base optimizer's updates online; params become x0 - sum(s) * delta, delta
// the base updates accumulated (negated) since x0 (the params at the first step). s is a
// coin-betting wealth per beta 1 - 0.1**i (i = 1..num_betas). Needs params; passes optax's extra
// arguments to the base optimizer.
template <class Base>
struct Mechanize : ForwardingTransformation<Mechanize<Base>> {
  Base base_optimizer;
  detail::MechanicConfig c{1e-2, 1e-8, 1e-6, 6};
  template <class P>
  auto init(const P& params) const {
    using S = state_t<Base, P>;
    const DType dt = tree_utils::tree_dtype(params, "lowest");
    const Shape n{c.num_betas};
    return MechanicState<S, P>{
        base_optimizer.init(params), zero_count(), zeros(n, dt), zeros(n, dt), zeros(n, dt),
        full(n, c.s_init, dt),       params};
  }
  template <class U, class S, class Q>
  std::pair<U, S> run(const U& updates, const S& state, const Q* params,
                      const ExtraArgs<Q>* extra) const {
    if (!params) throw_no_params("mechanize");
    auto [neg_updates, base_state] =
        detail::inner_update(base_optimizer, updates, state.base_optimizer_state, params, extra);
    S next = state;
    next.base_optimizer_state = std::move(base_state);
    next.count = safe_increment(state.count);
    next.x0 = tree_utils::tree_where(equal(state.count, zeros({}, state.count.dtype())), *params,
                                     state.x0);
    Array s_sum = sum(state.s);
    Array decay = c.weight_decay * s_sum * tree_utils::tree_l2_norm(updates) /
                  (tree_utils::tree_l2_norm(*params) + c.eps);
    U decayed = linum::detail::tree_apply_skip_empty(
        updates, [&](const Array& g, const Array& p) { return g + decay * p; }, *params);
    U delta_prev = linum::detail::tree_apply_skip_empty(
        *params, [&](const Array& p, const Array& x0) { return (x0 - p) / (s_sum + c.eps); },
        next.x0);
    Array h = tree_utils::tree_vdot(decayed, delta_prev);
    auto [r, m, v, s] = detail::mechanic_scalars(c, h, state.r, state.m, state.v, state.s);
    next.r = r, next.m = m, next.v = v, next.s = s;
    Array s_total = sum(s);
    U out = linum::detail::tree_apply_skip_empty(
        delta_prev,
        [&](const Array& d, const Array& u, const Array& x0, const Array& p) {
          return (x0 - s_total * (d - u)) - p;
        },
        U(neg_updates), next.x0, *params);
    return {std::move(out), std::move(next)};
  }
};
template <class Base>
Mechanize<Base> mechanize(Base base_optimizer, double weight_decay = 1e-2, double eps = 1e-8,
                          double s_init = 1e-6, int num_betas = 6) {
  Mechanize<Base> t{{}, std::move(base_optimizer), {weight_decay, eps, s_init, num_betas}};
  detail::check_mechanize(t.c);
  return t;
}

}  // namespace linum::optim
