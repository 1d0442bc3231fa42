// optax.contrib's Schedule-Free wrapper (Defazio et al., "The Road Less Scheduled", 2024):
// schedule_free around any base optimizer, its shortcuts schedule_free_sgd and
// schedule_free_adamw, and schedule_free_eval_params, with optax's ScheduleFreeState. The base
// optimizer's momentum should be off: schedule-free replaces it by interpolating between the
// iterate z and its weighted average x. The per-leaf math is in contrib_schedule_free.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include <linum/optim/alias.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/schedule.hpp>
#include <linum/optim/transform.hpp>
#include <linum/optim/wrappers.hpp>

namespace linum::optim {

// b1, weight_sum, max_lr: scalars in the params' lowest dtype; step_count starts at 1 (int32);
// z: the base optimizer's iterate (in state_dtype when given).
template <class S, class P, class C = Array>
struct ScheduleFreeState {
  BOOST_HANA_DEFINE_STRUCT(ScheduleFreeState, (C, b1), (C, weight_sum), (C, step_count),
                           (C, max_lr), (S, base_optimizer_state), (P, z));
};

namespace detail {
// The averaging weight ck = max_lr**power / (weight_sum + max_lr**power) (0 for 0 / 0, NaN when
// either is NaN) and the new weight_sum: {ck, next_weight_sum}.
std::array<Array, 2> schedule_free_weight(const Array& max_lr, const Array& weight_sum,
                                          double weight_lr_power);
// One leaf: {update, z}. y: the params, z_old: the state's z, u: the base optimizer's update.
std::array<Array, 2> schedule_free_leaf(double b1, const Array& ck, const Array& y,
                                        const Array& z_old, const Array& u);
// (y - (1 - b1) * z) / b1: the averaged iterate x, where losses should be evaluated.
Array schedule_free_eval_leaf(const Array& b1, const Array& y, const Array& z);
void check_schedule_free_b1(double b1, const char* fn);
}  // namespace detail

// optax.contrib.schedule_free(base_optimizer, learning_rate, b1, weight_lr_power, state_dtype):
// z takes the base optimizer's steps; the params y returned interpolate b1 * x + (1 - b1) * z,
// x the average of the z's weighted by max_lr**weight_lr_power. learning_rate is a number or a
// schedule (read at step_count, which starts at 1). Needs params; passes optax's extra arguments
// on to the base optimizer.
template <class Base, class LR>
struct ScheduleFree : ForwardingTransformation<ScheduleFree<Base, LR>> {
  Base base_optimizer;
  LR learning_rate;
  double b1 = 0.9, weight_lr_power = 2.0;
  std::optional<DType> state_dtype;

  template <class P>
  auto init(const P& params) const {
    using S = state_t<Base, P>;
    const DType dt = tree_utils::tree_dtype(params, "lowest");
    return ScheduleFreeState<S, P>{full({}, b1, dt),
                                   zeros({}, dt),
                                   ones({}, int32),
                                   zeros({}, dt),
                                   base_optimizer.init(params),
                                   tree_utils::tree_cast(params, state_dtype)};
  }
  template <class U, class S, class Q>
  std::pair<U, S> run(const U& grads, const S& state, const Q* params,
                      const ExtraArgs<Q>* extra) const {
    if (!params) throw_no_params("schedule_free");
    Array lr;
    if constexpr (std::is_arithmetic_v<LR>)
      lr = full({}, static_cast<double>(learning_rate), state.max_lr.dtype());
    else
      lr = full({}, learning_rate(concrete_count(state.step_count, "schedule_free")),
                state.max_lr.dtype());
    S next = state;
    next.max_lr = maximum(state.max_lr, lr);
    next.step_count = safe_increment(state.step_count);
    auto [ck, weight_sum] =
        detail::schedule_free_weight(next.max_lr, state.weight_sum, weight_lr_power);
    next.weight_sum = weight_sum;
    auto [base_updates, base_state] =
        detail::inner_update(base_optimizer, grads, state.base_optimizer_state, params, extra);
    next.base_optimizer_state = std::move(base_state);
    Arrays z;
    U out = linum::detail::tree_apply_skip_empty(
        grads,
        [&](const Array&, const Array& y, const Array& z_old, const Array& u) {
          auto [upd, zi] = detail::schedule_free_leaf(b1, ck, y, z_old, u);
          z.push_back(std::move(zi));
          return upd;
        },
        *params, state.z, base_updates);
    std::size_t i = 0;
    next.z = linum::detail::tree_apply_skip_empty(state.z, [&](const Array&) { return z.at(i++); });
    return {std::move(out), std::move(next)};
  }
};
template <class Base, class LR>
ScheduleFree<Base, LR> schedule_free(Base base_optimizer, LR learning_rate, double b1 = 0.9,
                                     double weight_lr_power = 2.0,
                                     std::optional<DType> state_dtype = std::nullopt) {
  detail::check_schedule_free_b1(b1, "schedule_free");
  return ScheduleFree<Base, LR>{{}, std::move(base_optimizer), std::move(learning_rate),
                                b1, weight_lr_power,           state_dtype};
}

// optax.contrib.schedule_free_eval_params(state, params): the averaged iterate x, where to
// evaluate the model (the params themselves are y, where gradients are taken).
template <class S, class P>
P schedule_free_eval_params(const ScheduleFreeState<S, P>& state, const P& params) {
  return linum::detail::tree_apply_skip_empty(
      params,
      [&](const Array& y, const Array& z) {
        return detail::schedule_free_eval_leaf(state.b1, y, z);
      },
      state.z);
}

namespace detail {
// learning_rate, or optax's warmup_constant_schedule(0, learning_rate, warmup_steps) when
// warmup_steps is a number (std::nullopt: none, as optax's None).
template <class WS>
auto schedule_free_lr(double learning_rate, WS warmup_steps) {
  if constexpr (std::is_same_v<WS, std::nullopt_t>)
    return learning_rate;
  else
    return warmup_constant_schedule(0.0, learning_rate, static_cast<std::int64_t>(warmup_steps));
}
}  // namespace detail

// optax.contrib.schedule_free_sgd: schedule_free(sgd(lr)) (chained after
// add_decayed_weights(weight_decay) when weight_decay is a number; std::nullopt is optax's None).
// warmup_steps (a number, or std::nullopt) makes lr a linear warmup from 0.
template <class WS = std::nullopt_t, class WD = std::nullopt_t>
auto schedule_free_sgd(double learning_rate = 1.0, WS warmup_steps = std::nullopt, double b1 = 0.9,
                       WD weight_decay = std::nullopt, double weight_lr_power = 2.0,
                       std::optional<DType> state_dtype = std::nullopt) {
  auto lr = detail::schedule_free_lr(learning_rate, warmup_steps);
  if constexpr (std::is_same_v<WD, std::nullopt_t>) {
    return schedule_free(sgd(lr), lr, b1, weight_lr_power, state_dtype);
  } else {
    return schedule_free(chain(add_decayed_weights(static_cast<double>(weight_decay)), sgd(lr)), lr,
                         b1, weight_lr_power, state_dtype);
  }
}

// optax.contrib.schedule_free_adamw: schedule_free around Adam without momentum, written as
// optax writes it: scale_by_rms(b2, eps, eps_in_sqrt=false, bias_correction=true),
// add_decayed_weights(weight_decay), -lr.
template <class WS = std::nullopt_t>
auto schedule_free_adamw(double learning_rate = 0.0025, WS warmup_steps = std::nullopt,
                         double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                         double weight_decay = 0.0, double weight_lr_power = 2.0,
                         std::optional<DType> state_dtype = std::nullopt) {
  auto lr = detail::schedule_free_lr(learning_rate, warmup_steps);
  return schedule_free(chain(scale_by_rms<true>(b2, eps, 0.0, false),
                             add_decayed_weights(weight_decay), scale_by_learning_rate(lr)),
                       lr, b1, weight_lr_power, state_dtype);
}

}  // namespace linum::optim
