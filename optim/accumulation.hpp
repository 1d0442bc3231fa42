// optax.MultiSteps: gradient accumulation over k mini-steps around an inner optimizer; the inner
// optimizer runs (and its state moves) only on every k-th call, zeros are emitted in between.
#pragma once

#include <cstdint>
#include <functional>
#include <tuple>
#include <utility>

#include <linum/optim/base.hpp>
#include <linum/optim/schedule.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// optax.MultiStepsState (skip_state is always () here: there is no should_skip_update_fn).
template <class S, class P, class C = Array>
struct MultiStepsState {
  BOOST_HANA_DEFINE_STRUCT(MultiStepsState, (C, mini_step), (C, gradient_step),
                           (S, inner_opt_state), (P, acc_grads), (std::tuple<>, skip_state));
};

template <class Inner>
struct MultiSteps : Transformation<MultiSteps<Inner>> {
  Inner opt;
  // Mini-steps per gradient step, as a function of the gradient step.
  std::function<std::int64_t(std::int64_t)> every_k_schedule;
  // Average the accumulated gradients (else sum them).
  bool use_grad_mean = true;

  // As optax, any int is taken: with k <= 0 the inner optimizer never runs (see next_mini_step).
  MultiSteps(Inner inner, std::int64_t every_k, bool grad_mean = true)
      : opt(std::move(inner)), use_grad_mean(grad_mean) {
    every_k_schedule = [every_k](std::int64_t) { return every_k; };
  }
  MultiSteps(Inner inner, std::function<std::int64_t(std::int64_t)> schedule, bool grad_mean = true)
      : opt(std::move(inner)), every_k_schedule(std::move(schedule)), use_grad_mean(grad_mean) {}

  template <class P>
  auto init(const P& params) const {
    using S = state_t<Inner, P>;
    return MultiStepsState<S, P>{
        zero_count(), zero_count(), opt.init(params), tree_utils::tree_zeros_like(params), {}};
  }

  // Runs eagerly: the counters must be concrete (the branch is taken on the host).
  template <class U, class MS, class Q>
  std::pair<U, MS> update_impl(const U& updates, const MS& state, const Q* params) const {
    const std::int64_t k = every_k_schedule(concrete_count(state.gradient_step, "MultiSteps"));
    const std::int64_t mini = concrete_count(state.mini_step, "MultiSteps");
    const Array& n_acc = state.mini_step;
    auto acc = linum::detail::tree_apply_skip_empty(
        state.acc_grads,
        [&](const Array& a, const Array& g) {
          return use_grad_mean ? a + (g - a) / (n_acc + 1) : g + a;
        },
        updates);
    const Array next_mini = full({}, static_cast<double>(next_mini_step(mini, k)), n_acc.dtype());
    if (mini != k - 1) {
      MS next{next_mini, state.gradient_step, state.inner_opt_state, std::move(acc), {}};
      return {tree_utils::tree_zeros_like(updates), std::move(next)};
    }
    auto [final_updates, inner_state] = params ? opt.update(acc, state.inner_opt_state, *params)
                                               : opt.update(acc, state.inner_opt_state);
    auto zero_acc = linum::detail::tree_apply_skip_empty(
        acc, [](const Array& a, const Array& u) { return zeros(a.shape(), u.dtype()); },
        final_updates);
    MS next{next_mini,
            safe_increment(state.gradient_step),
            std::move(inner_state),
            std::move(zero_acc),
            {}};
    return {U(std::move(final_updates)), std::move(next)};
  }

  // optax's safe_increment(mini_step) % k_steps under jnp.remainder: the sign of k (Python's
  // floor modulo), and XLA's x % 0 == x. For k <= 0 the result never reaches k - 1, so the inner
  // optimizer never runs and every update is zeros, as in optax.
  static std::int64_t next_mini_step(std::int64_t mini, std::int64_t k) {
    const std::int64_t x = mini + 1;
    if (k == 0) return x;
    const std::int64_t r = x % k;
    return r != 0 && ((r < 0) != (k < 0)) ? r + k : r;
  }

  // Whether the last update() call ran the inner optimizer.
  template <class MS>
  bool has_updated(const MS& state) const {
    return concrete_count(state.mini_step, "MultiSteps") == 0 &&
           concrete_count(state.gradient_step, "MultiSteps") > 0;
  }

  const MultiSteps& gradient_transformation() const { return *this; }
};

}  // namespace linum::optim
