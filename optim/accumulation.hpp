// optax's accumulations: ema (EmaState), the skip predicates skip_not_finite and
// skip_large_updates, and MultiSteps: gradient accumulation over k mini-steps around an inner
// optimizer; the inner optimizer runs (and its state moves) only on every k-th call, zeros are
// emitted in between, and a step that should_skip_update_fn rejects changes nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include <linum/optim/base.hpp>
#include <linum/optim/erased.hpp>
#include <linum/optim/schedule.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

template <class P, class C = Array>
struct EmaState {
  BOOST_HANA_DEFINE_STRUCT(EmaState, (C, count), (P, ema));
};

// optax.ema(decay, debias, accumulator_dtype): the exponential moving average of the updates,
// debiased by 1 - decay**count; the average is kept in accumulator_dtype when given.
struct Ema : Transformation<Ema> {
  double decay = 0.9;
  bool debias = true;
  std::optional<DType> accumulator_dtype;
  template <class P>
  EmaState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params, accumulator_dtype)};
  }
  template <class U, class P, class Q>
  std::pair<U, EmaState<P>> update_impl(const U& updates, const EmaState<P>& s, const Q*) const {
    P new_ema = tree_utils::tree_update_moment(updates, s.ema, decay, 1);
    Array count = safe_increment(s.count);
    U out = debias ? U(tree_utils::tree_bias_correction(new_ema, decay, count)) : U(new_ema);
    return {std::move(out), {count, tree_utils::tree_cast(new_ema, accumulator_dtype)}};
  }
};
inline Ema ema(double decay, bool debias = true,
               std::optional<DType> accumulator_dtype = std::nullopt) {
  Ema t;
  t.decay = decay, t.debias = debias, t.accumulator_dtype = accumulator_dtype;
  return t;
}

// optax.ShouldSkipUpdateFunction: (updates, gradient_step, params) -> (should_skip, skip_state),
// should_skip a bool scalar; the trees are dynamic Trees (params is None without params).
using ShouldSkipUpdateFunction =
    std::function<std::pair<Array, Tree>(const Tree& updates, const Array& gradient_step,
                                         const Tree& params)>;

// optax.skip_not_finite: skip when any update is inf or NaN; skip_state
// {'should_skip', 'num_not_finite'}.
std::pair<Array, Tree> skip_not_finite(const Tree& updates, const Array& gradient_step,
                                       const Tree& params);
// optax.skip_large_updates: skip unless the squared norm of the updates is below
// max_squared_norm; skip_state {'should_skip', 'norm_squared'}. Bind max_squared_norm to use it
// as a ShouldSkipUpdateFunction.
std::pair<Array, Tree> skip_large_updates(const Tree& updates, const Array& gradient_step,
                                          const Tree& params, double max_squared_norm);

// optax.MultiStepsState; skip_state is what should_skip_update_fn returned (() without one).
template <class S, class P, class C = Array>
struct MultiStepsState {
  BOOST_HANA_DEFINE_STRUCT(MultiStepsState, (C, mini_step), (C, gradient_step),
                           (S, inner_opt_state), (P, acc_grads), (Tree, skip_state));
};

template <class Inner>
struct MultiSteps : Transformation<MultiSteps<Inner>> {
  Inner opt;
  // Mini-steps per gradient step, as a function of the gradient step.
  std::function<std::int64_t(std::int64_t)> every_k_schedule;
  // Average the accumulated gradients (else sum them).
  bool use_grad_mean = true;
  ShouldSkipUpdateFunction should_skip_update_fn;
  // The dtype of acc_grads (optax's default float32; nullopt keeps each leaf's dtype).
  std::optional<DType> accumulator_dtype = float32;

  // As optax, any int is taken: with k <= 0 the inner optimizer never runs (see next_mini_step).
  MultiSteps(Inner inner, std::int64_t every_k, bool grad_mean = true,
             ShouldSkipUpdateFunction skip = {}, std::optional<DType> acc_dtype = float32)
      : opt(std::move(inner)),
        use_grad_mean(grad_mean),
        should_skip_update_fn(std::move(skip)),
        accumulator_dtype(acc_dtype) {
    every_k_schedule = [every_k](std::int64_t) { return every_k; };
  }
  MultiSteps(Inner inner, std::function<std::int64_t(std::int64_t)> schedule, bool grad_mean = true,
             ShouldSkipUpdateFunction skip = {}, std::optional<DType> acc_dtype = float32)
      : opt(std::move(inner)),
        every_k_schedule(std::move(schedule)),
        use_grad_mean(grad_mean),
        should_skip_update_fn(std::move(skip)),
        accumulator_dtype(acc_dtype) {}

  template <class P>
  auto init(const P& params) const {
    using S = state_t<Inner, P>;
    Array step = zero_count();
    Tree skip_state = should_skip(tree_utils::tree_zeros_like(params), step, &params).second;
    return MultiStepsState<S, P>{zero_count(), step, opt.init(params),
                                 tree_utils::tree_zeros_like(params, accumulator_dtype),
                                 std::move(skip_state)};
  }

  // Runs eagerly: the counters must be concrete (the branches are taken on the host).
  template <class U, class MS, class Q>
  std::pair<U, MS> update_impl(const U& updates, const MS& state, const Q* params) const {
    return run(updates, state, params, static_cast<const ExtraArgs<Q>*>(nullptr));
  }
  template <class U, class MS, class Q>
  std::pair<U, MS> update_extra(const U& updates, const MS& state, const Q* params,
                                const ExtraArgs<Q>& extra) const {
    return run(updates, state, params, &extra);
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

 private:
  template <class U, class Q>
  std::pair<Array, Tree> should_skip(const U& updates, const Array& step, const Q* params) const {
    if (!should_skip_update_fn) return {Array(false), Tree::tuple()};
    auto r = should_skip_update_fn(detail::to_tree(updates), step,
                                   params ? detail::to_tree(*params) : Tree());
    if (!r.first.valid() || r.first.dtype() != bool_ || r.first.ndim() != 0)
      throw ValueError(
          "MultiSteps: The `should_skip_update_fn` function should return a boolean scalar array, "
          "but it returned " +
          (r.first.valid() ? "an array of dtype " + std::string(dtype_name(r.first.dtype())) +
                                 " and shape " + shape_str(r.first.shape())
                           : std::string("an empty Array")));
    return r;
  }

  template <class U, class MS, class Q>
  std::pair<U, MS> run(const U& updates, const MS& state, const Q* params,
                       const ExtraArgs<Q>* extra) const {
    const std::int64_t k = every_k_schedule(concrete_count(state.gradient_step, "MultiSteps"));
    auto [skip, skip_state] = should_skip(updates, state.gradient_step, params);
    if (skip.concrete().template item<bool>()) {
      MS next = state;
      next.skip_state = std::move(skip_state);
      return {tree_utils::tree_zeros_like(updates), std::move(next)};
    }
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
      MS next{next_mini, state.gradient_step, state.inner_opt_state,
              tree_utils::tree_cast_like(acc, state.acc_grads), std::move(skip_state)};
      return {tree_utils::tree_zeros_like(updates), std::move(next)};
    }
    U acc_u = linum::detail::tree_apply_skip_empty(
        updates, [](const Array& u, const Array& a) { return astype(a, u.dtype()); }, acc);
    auto [final_updates, inner_state] =
        params && extra ? opt.update(acc_u, state.inner_opt_state, *params, *extra)
        : params        ? opt.update(acc_u, state.inner_opt_state, *params)
                        : opt.update(acc_u, state.inner_opt_state);
    MS next{next_mini, safe_increment(state.gradient_step), std::move(inner_state),
            tree_utils::tree_zeros_like(state.acc_grads), std::move(skip_state)};
    return {U(std::move(final_updates)), std::move(next)};
  }
};

}  // namespace linum::optim
