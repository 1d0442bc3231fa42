// optax's gradient transformations and their states: scale, scale_by_learning_rate,
// scale_by_schedule, scale_by_adam, scale_by_rms, scale_by_stddev, scale_by_rss, scale_by_lion,
// scale_by_sign, scale_by_trust_ratio, trace, add_decayed_weights, centralize, apply_every.
// States are Hana structs named and laid out as optax's NamedTuples, templates over the params
// tree type P (and the counter type C) so that tree_map may re-type them (e.g. to shapes).
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/fused.hpp>
#include <linum/optim/numerics.hpp>
#include <linum/optim/schedule.hpp>
#include <linum/optim/tree_utils.hpp>

namespace linum::optim {

// ---- states ----------------------------------------------------------------------------------

template <class P, class C = Array>
struct ScaleByAdamState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByAdamState, (C, count), (P, mu), (P, nu));
};

template <class P>
struct TraceState {
  BOOST_HANA_DEFINE_STRUCT(TraceState, (P, trace));
};

template <class C = Array>
struct ScaleByScheduleState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByScheduleState, (C, count));
};

template <class P>
struct ScaleByRmsState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByRmsState, (P, nu));
};

template <class P, class C = Array>
struct ScaleByRmsWithCountState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByRmsWithCountState, (C, count), (P, nu));
};

template <class P>
struct ScaleByRStdDevState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByRStdDevState, (P, mu), (P, nu));
};

template <class P, class C = Array>
struct ScaleByRStdDevWithCountState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByRStdDevWithCountState, (C, count), (P, mu), (P, nu));
};

template <class P>
struct ScaleByRssState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByRssState, (P, sum_of_squares));
};

template <class P, class C = Array>
struct ScaleByLionState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByLionState, (C, count), (P, mu));
};

// optax.ApplyEvery: the state of apply_every.
template <class P, class C = Array>
struct ApplyEvery {
  BOOST_HANA_DEFINE_STRUCT(ApplyEvery, (C, count), (P, grad_acc));
};

// Aliases optax keeps for stateless transformations.
using ClipState = EmptyState;
using ClipByGlobalNormState = EmptyState;
using AddDecayedWeightsState = EmptyState;
using ScaleByTrustRatioState = EmptyState;
using ScaleState = EmptyState;

// A fresh int32 step counter.
inline Array zero_count() { return zeros({}, int32); }

// ---- scaling ---------------------------------------------------------------------------------

// optax.scale(step_size): updates * step_size.
struct Scale : StatelessTransformation<Scale> {
  double step_size = 1.0;
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    const double s = step_size;
    return linum::detail::tree_apply_skip_empty(
        updates, [s](const Array& g) { return detail::scale_leaf(s, g); });
  }
};
inline Scale scale(double step_size) {
  Scale t;
  t.step_size = step_size;
  return t;
}

// optax.scale_by_schedule(fn): updates * fn(count) (at the count before this step).
struct ScaleBySchedule : Transformation<ScaleBySchedule> {
  Schedule step_size_fn;
  template <class P>
  ScaleByScheduleState<> init(const P&) const {
    return {zero_count()};
  }
  template <class U, class Q>
  std::pair<U, ScaleByScheduleState<>> update_impl(const U& updates,
                                                   const ScaleByScheduleState<>& state,
                                                   const Q*) const {
    const double s = step_size_fn(concrete_count(state.count, "scale_by_schedule"));
    U out = linum::detail::tree_apply_skip_empty(
        updates, [s](const Array& g) { return full({}, s, g.dtype()) * g; });
    return {std::move(out), {safe_increment(state.count)}};
  }
};
inline ScaleBySchedule scale_by_schedule(Schedule step_size_fn) {
  ScaleBySchedule t;
  t.step_size_fn = std::move(step_size_fn);
  return t;
}

// optax.scale_by_learning_rate: -lr (flip_sign) as scale() for a number, as scale_by_schedule()
// for a schedule (any callable count -> value).
template <class LR>
auto scale_by_learning_rate(LR learning_rate, bool flip_sign = true) {
  const double m = flip_sign ? -1.0 : 1.0;
  if constexpr (std::is_arithmetic_v<LR>) {
    return scale(m * static_cast<double>(learning_rate));
  } else {
    Schedule lr(std::move(learning_rate));
    return scale_by_schedule([lr, m](std::int64_t count) { return m * lr(count); });
  }
}

// learning_rate=None: identity (adadelta's and adafactor's default).
inline Identity scale_by_learning_rate(std::nullopt_t, bool = true) { return {}; }

// optax.scale_by_sign(): sign(updates).
struct ScaleBySign : StatelessTransformation<ScaleBySign> {
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    return linum::detail::tree_apply_skip_empty(updates, [](const Array& g) { return sign(g); });
  }
};
inline ScaleBySign scale_by_sign() { return {}; }

// ---- adaptive scalings -----------------------------------------------------------------------

// optax.scale_by_adam: eps outside the square root, eps_root inside; bias correction with the
// incremented count; mu kept in mu_dtype when given. nesterov gives NAdam.
struct ScaleByAdam : Transformation<ScaleByAdam> {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8, eps_root = 0.0;
  std::optional<DType> mu_dtype;
  bool nesterov = false;

  template <class P>
  ScaleByAdamState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params, mu_dtype),
            tree_utils::tree_zeros_like(params)};
  }
  // Chains fold a following add_decayed_weights / scale into update_with's pass (combine.hpp).
  static constexpr bool kFoldsEpilogue = true;
  template <class U, class P, class Q>
  std::pair<U, ScaleByAdamState<P>> update_impl(const U& updates, const ScaleByAdamState<P>& state,
                                                const Q* params) const {
    return update_with(updates, state, params, {});
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByAdamState<P>> update_with(const U& updates, const ScaleByAdamState<P>& state,
                                                const Q* params, const detail::Epilogue& ep) const {
    Array count_inc = safe_increment(state.count);
    detail::AdamLeafConfig c{
        b1, b2, eps, eps_root, mu_dtype, nesterov, {b1, count_inc}, {b2, count_inc}, std::nullopt};
    if (nesterov) c.c1_next.emplace(b1, safe_increment(count_inc));
    auto [out, leaves] = detail::map_leaves<3>(
        updates, params, ep.decay,
        [&](const Array& g, const Array* p, const Array& m, const Array& v) {
          return detail::adam_leaf(c, g, m, v, p, ep);
        },
        state.mu, state.nu);
    return {std::move(out),
            {count_inc, detail::rebuild_walked(state.mu, leaves[0]),
             detail::rebuild_walked(state.nu, leaves[1])}};
  }
};
inline ScaleByAdam scale_by_adam(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                                 double eps_root = 0.0,
                                 std::optional<DType> mu_dtype = std::nullopt,
                                 bool nesterov = false) {
  ScaleByAdam t;
  t.b1 = b1, t.b2 = b2, t.eps = eps, t.eps_root = eps_root, t.mu_dtype = mu_dtype;
  t.nesterov = nesterov;
  return t;
}

// optax.scale_by_rms and optax.scale_by_stddev: updates / sqrt(v + eps) (eps_in_sqrt) or
// / (sqrt(v) + eps), where v is nu, the decaying average of g**2 (rms), or, Centered, the
// variance nu - mu**2 with mu the decaying average of g (stddev). With BiasCorrection the state
// also counts steps (the ...WithCountState layouts) and the moments are debiased. optax picks the
// state layout with a bool at run time; here it is the template argument.
template <bool Centered, bool BiasCorrection>
struct ScaleBySecondMoment : Transformation<ScaleBySecondMoment<Centered, BiasCorrection>> {
  double decay = 0.9, eps = 1e-8, initial_scale = 0.0;
  bool eps_in_sqrt = true;

  template <class P>
  auto init(const P& params) const {
    P nu = tree_utils::tree_full_like(params, initial_scale);
    if constexpr (Centered && BiasCorrection)
      return ScaleByRStdDevWithCountState<P>{zero_count(), tree_utils::tree_zeros_like(params),
                                             std::move(nu)};
    else if constexpr (Centered)
      return ScaleByRStdDevState<P>{tree_utils::tree_zeros_like(params), std::move(nu)};
    else if constexpr (BiasCorrection)
      return ScaleByRmsWithCountState<P>{zero_count(), std::move(nu)};
    else
      return ScaleByRmsState<P>{std::move(nu)};
  }
  static constexpr bool kFoldsEpilogue = true;
  template <class U, class S, class Q>
  std::pair<U, S> update_impl(const U& updates, const S& state, const Q* params) const {
    return update_with(updates, state, params, {});
  }
  template <class U, class S, class Q>
  std::pair<U, S> update_with(const U& updates, const S& state, const Q* params,
                              const detail::Epilogue& ep) const {
    S next = state;
    detail::SecondMomentLeafConfig c{decay, eps, eps_in_sqrt, Centered, std::nullopt};
    if constexpr (BiasCorrection) {
      next.count = safe_increment(state.count);
      c.debias.emplace(decay, next.count);
    }
    auto leaf = [&](const Array& g, const Array* p, const Array& m, const Array& v) {
      return detail::second_moment_leaf(c, g, m, v, p, ep);
    };
    if constexpr (Centered) {
      auto [out, leaves] =
          detail::map_leaves<3>(updates, params, ep.decay, leaf, state.mu, state.nu);
      next.mu = detail::rebuild_walked(state.mu, leaves[0]);
      next.nu = detail::rebuild_walked(state.nu, leaves[1]);
      return {std::move(out), std::move(next)};
    } else {
      auto [out, leaves] = detail::map_leaves<3>(
          updates, params, ep.decay,
          [&](const Array& g, const Array* p, const Array& v) { return leaf(g, p, Array(), v); },
          state.nu);
      next.nu = detail::rebuild_walked(state.nu, leaves[1]);
      return {std::move(out), std::move(next)};
    }
  }
};
template <bool BiasCorrection = false>
using ScaleByRms = ScaleBySecondMoment<false, BiasCorrection>;
template <bool BiasCorrection = false>
using ScaleByStddev = ScaleBySecondMoment<true, BiasCorrection>;

template <bool BiasCorrection = false>
ScaleByRms<BiasCorrection> scale_by_rms(double decay = 0.9, double eps = 1e-8,
                                        double initial_scale = 0.0, bool eps_in_sqrt = true) {
  return {{}, decay, eps, initial_scale, eps_in_sqrt};
}
template <bool BiasCorrection = false>
ScaleByStddev<BiasCorrection> scale_by_stddev(double decay = 0.9, double eps = 1e-8,
                                              double initial_scale = 0.0, bool eps_in_sqrt = true) {
  return {{}, decay, eps, initial_scale, eps_in_sqrt};
}

// optax.scale_by_rss (Adagrad): updates / sqrt(sum of squared gradients + eps), 0 where the sum
// is 0.
struct ScaleByRss : Transformation<ScaleByRss> {
  double initial_accumulator_value = 0.1, eps = 1e-7;
  template <class P>
  ScaleByRssState<P> init(const P& params) const {
    return {tree_utils::tree_full_like(params, initial_accumulator_value)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByRssState<P>> update_impl(const U& updates, const ScaleByRssState<P>& state,
                                               const Q*) const {
    P sos = linum::detail::tree_apply_skip_empty(
        state.sum_of_squares, [](const Array& t, const Array& g) { return g * g + t; }, updates);
    U out = linum::detail::tree_apply_skip_empty(
        updates,
        [&](const Array& g, const Array& t) { return where(t > 0, rsqrt(t + eps), 0.0) * g; }, sos);
    return {std::move(out), {std::move(sos)}};
  }
};
inline ScaleByRss scale_by_rss(double initial_accumulator_value = 0.1, double eps = 1e-7) {
  ScaleByRss t;
  t.initial_accumulator_value = initial_accumulator_value, t.eps = eps;
  return t;
}

// optax.scale_by_lion (mode 'hard'): sign((1 - b1) * g + b1 * mu); mu tracks g with b2.
struct ScaleByLion : Transformation<ScaleByLion> {
  double b1 = 0.9, b2 = 0.99;
  std::optional<DType> mu_dtype;
  template <class P>
  ScaleByLionState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params, mu_dtype)};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByLionState<P>> update_impl(const U& updates, const ScaleByLionState<P>& state,
                                                const Q*) const {
    U out = linum::detail::tree_apply_skip_empty(
        updates,
        [b1 = b1](const Array& g, const Array& m) { return sign((1.0 - b1) * g + b1 * m); },
        state.mu);
    P mu =
        tree_utils::tree_cast(tree_utils::tree_update_moment(updates, state.mu, b2, 1), mu_dtype);
    return {std::move(out), {safe_increment(state.count), std::move(mu)}};
  }
};
inline ScaleByLion scale_by_lion(double b1 = 0.9, double b2 = 0.99,
                                 std::optional<DType> mu_dtype = std::nullopt) {
  ScaleByLion t;
  t.b1 = b1, t.b2 = b2, t.mu_dtype = mu_dtype;
  return t;
}

// optax.scale_by_trust_ratio (LAMB / LARS): updates * coefficient * |p| / (|u| + eps), 1 where
// either norm is 0. Needs params.
struct ScaleByTrustRatio : StatelessTransformation<ScaleByTrustRatio> {
  double min_norm = 0.0, trust_coefficient = 1.0, eps = 0.0;
  template <class U, class Q>
  U apply(const U& updates, const Q* params) const {
    if (!params) throw_no_params("scale_by_trust_ratio");
    U out = linum::detail::tree_apply_skip_empty(
        updates,
        [&](const Array& u, const Array& p) {
          Array param_norm = safe_norm(p, min_norm);
          Array update_norm = safe_norm(u, min_norm);
          Array ratio = trust_coefficient * param_norm / (update_norm + eps);
          Array zero_norm = logical_or(equal(param_norm, zeros({}, param_norm.dtype())),
                                       equal(update_norm, zeros({}, update_norm.dtype())));
          return u * where(zero_norm, full({}, 1.0, p.dtype()), ratio);
        },
        *params);
    return out;
  }
};
inline ScaleByTrustRatio scale_by_trust_ratio(double min_norm = 0.0, double trust_coefficient = 1.0,
                                              double eps = 0.0) {
  ScaleByTrustRatio t;
  t.min_norm = min_norm, t.trust_coefficient = trust_coefficient, t.eps = eps;
  return t;
}

// ---- momentum, weight decay, centralisation ----------------------------------------------------

// optax.trace: new_trace = g + decay * trace; output new_trace, or g + decay * new_trace with
// nesterov. The trace is kept in accumulator_dtype when given.
struct Trace : Transformation<Trace> {
  double decay = 0.9;
  bool nesterov = false;
  std::optional<DType> accumulator_dtype;
  template <class P>
  TraceState<P> init(const P& params) const {
    return {tree_utils::tree_zeros_like(params, accumulator_dtype)};
  }
  static constexpr bool kFoldsEpilogue = true;
  template <class U, class P, class Q>
  std::pair<U, TraceState<P>> update_impl(const U& updates, const TraceState<P>& state,
                                          const Q* params) const {
    return update_with(updates, state, params, {});
  }
  template <class U, class P, class Q>
  std::pair<U, TraceState<P>> update_with(const U& updates, const TraceState<P>& state,
                                          const Q* params, const detail::Epilogue& ep) const {
    const detail::TraceLeafConfig c{decay, nesterov};
    auto [out, leaves] = detail::map_leaves<2>(
        updates, params, ep.decay,
        [&](const Array& g, const Array* p, const Array& t) {
          return detail::trace_leaf(c, g, t, p, ep);
        },
        state.trace);
    return {std::move(out), {detail::rebuild_walked(state.trace, leaves[0])}};
  }
};
inline Trace trace(double decay, bool nesterov = false,
                   std::optional<DType> accumulator_dtype = std::nullopt) {
  Trace t;
  t.decay = decay, t.nesterov = nesterov, t.accumulator_dtype = accumulator_dtype;
  return t;
}

// optax.add_decayed_weights (without mask; masked weight decay is in combine.hpp):
// updates + weight_decay * params (unchanged for a weight decay of 0, as optax). Needs params.
struct AddDecayedWeights : StatelessTransformation<AddDecayedWeights> {
  double weight_decay = 0.0;
  template <class U, class Q>
  U apply(const U& updates, const Q* params) const {
    if (!params) throw_no_params("add_decayed_weights");
    if (weight_decay == 0.0) return updates;
    U out = linum::detail::tree_apply_skip_empty(
        updates,
        [wd = weight_decay](const Array& g, const Array& p) {
          return detail::decayed_weights_leaf(g, wd, p);
        },
        *params);
    return out;
  }
};

// optax's WeightDecaySchedule: the state of add_decayed_weights with a scheduled weight decay.
template <class C = Array>
struct WeightDecaySchedule {
  BOOST_HANA_DEFINE_STRUCT(WeightDecaySchedule, (C, count));
};

// add_decayed_weights(schedule): updates + schedule(count) * params, count before the step.
struct AddDecayedWeightsSchedule : Transformation<AddDecayedWeightsSchedule> {
  Schedule weight_decay;
  template <class P>
  WeightDecaySchedule<> init(const P&) const {
    return {zero_count()};
  }
  template <class U, class Q>
  std::pair<U, WeightDecaySchedule<>> update_impl(const U& updates,
                                                  const WeightDecaySchedule<>& state,
                                                  const Q* params) const {
    if (!params) throw_no_params("add_decayed_weights");
    const double s = weight_decay(concrete_count(state.count, "add_decayed_weights"));
    U out = linum::detail::tree_apply_skip_empty(
        updates, [s](const Array& g, const Array& p) { return detail::decayed_weights_leaf(g, s, p); },
        *params);
    return {std::move(out), {safe_increment(state.count)}};
  }
};

// optax.centralize(): subtract the mean over all but the leading axis (leaves of rank > 1).
struct Centralize : StatelessTransformation<Centralize> {
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    U out = linum::detail::tree_apply_skip_empty(updates, [](const Array& g) {
      if (g.ndim() <= 1) return g;
      std::vector<int> axes;
      for (int i = 1; i < g.ndim(); ++i) axes.push_back(i);
      return g - mean(g, Axes(axes), /*keepdims=*/true);
    });
    return out;
  }
};
inline Centralize centralize() { return {}; }

// ---- clipping -----------------------------------------------------------------------------------

// optax.clip(max_delta): every element into [-max_delta, max_delta].
struct Clip : StatelessTransformation<Clip> {
  double max_delta = 0.0;
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    const double d = max_delta;
    return linum::detail::tree_apply_skip_empty(updates,
                                                [d](const Array& g) { return clip(g, -d, d); });
  }
};
inline Clip clip(double max_delta) {
  Clip t;
  t.max_delta = max_delta;
  return t;
}

// optax.clip_by_global_norm(max_norm): updates * max_norm / global_norm when the global norm is
// at least max_norm.
struct ClipByGlobalNorm : StatelessTransformation<ClipByGlobalNorm> {
  double max_norm = 0.0;
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    Array g_norm = global_norm(updates);
    Array trigger = g_norm < max_norm;
    U out = linum::detail::tree_apply_skip_empty(updates, [&](const Array& t) {
      return where(trigger, t, (t / astype(g_norm, t.dtype())) * max_norm);
    });
    return out;
  }
};
inline ClipByGlobalNorm clip_by_global_norm(double max_norm) {
  ClipByGlobalNorm t;
  t.max_norm = max_norm;
  return t;
}

// ---- gradient accumulation
// ------------------------------------------------------------------------

// optax.apply_every(k): accumulate updates and emit their sum every k-th step, zeros in between.
struct ApplyEveryK : Transformation<ApplyEveryK> {
  std::int64_t k = 1;
  template <class P>
  ApplyEvery<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params)};
  }
  template <class U, class P, class Q>
  std::pair<U, ApplyEvery<P>> update_impl(const U& updates, const ApplyEvery<P>& state,
                                          const Q*) const {
    // The stored count is already reduced mod k (optax stores count_inc % k).
    const Array& c = state.count;
    Array acc = not_equal(c, zeros({}, c.dtype()));
    Array emit = equal(c, full({}, static_cast<double>(k - 1), c.dtype()));
    P grad_acc = linum::detail::tree_apply_skip_empty(
        state.grad_acc,
        [&](const Array& ga, const Array& g) { return astype(acc, ga.dtype()) * ga + g; }, updates);
    U out = linum::detail::tree_apply_skip_empty(
        updates, [&](const Array&, const Array& ga) { return astype(emit, ga.dtype()) * ga; },
        grad_acc);
    Array count_inc = safe_increment(c);
    Array wrapped = where(count_inc >= static_cast<double>(k), zeros({}, c.dtype()), count_inc);
    return {std::move(out), {wrapped, std::move(grad_acc)}};
  }
};
inline ApplyEveryK apply_every(std::int64_t k = 1) {
  if (k < 1) throw ValueError("apply_every: k must be at least 1, got " + std::to_string(k));
  ApplyEveryK t;
  t.k = k;
  return t;
}

}  // namespace linum::optim
