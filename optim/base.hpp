// optax's base: the transformation protocol (init / update over any pytree of Arrays), EmptyState,
// identity, stateless transformations, user-written transformations from two functions,
// apply_updates / incremental_update / periodic_update and safe_increment.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/tree_bridge.hpp>
#include <linum/optim/tree_utils.hpp>

namespace linum::optim {

// optax.EmptyState: the state of a transformation that keeps none.
struct EmptyState {
  BOOST_HANA_DEFINE_STRUCT(EmptyState);
};

// optax's message when a transformation needs the parameters and update() got none.
inline constexpr const char* kNoParamsMsg =
    "You are using a transformation that requires the current value of parameters, but you are "
    "not passing `params` when calling `update`.";

// [[noreturn]] ValueError(kNoParamsMsg), prefixed with the transformation's name.
[[noreturn]] void throw_no_params(const char* transformation);

// optax's extra keyword arguments of update (GradientTransformationExtraArgs): the objective's
// value at params, its gradient there, and the objective itself, which polyak_sgd and the
// linesearches read (value_fn); the objective Hutchinson's estimator differentiates (sophia's
// obj_fn); the gradient function sam's opaque mode calls at each adversarial step
// (grad_fn(params, step)). Transformations that do not need them ignore them, as optax's
// with_extra_args_support does; a chain passes them to every member.
template <class P>
struct ExtraArgs {
  std::optional<Array> value{};
  std::optional<P> grad{};
  std::function<Array(const P&)> value_fn{};
  std::function<Array(const P&)> obj_fn{};
  std::function<P(const P&, int)> grad_fn{};
};

// Every transformation derives from Transformation<Self> and defines
//   template <class P> State init(const P& params) const;
//   template <class U, class Q> std::pair<U, State> update_impl(const U& updates,
//                                                               const State& state,
//                                                               const Q* params) const;
// (params == nullptr when the caller passed none), and, when it reads optax's extra arguments,
//   template <class U, class S, class Q> ... update_extra(updates, state, params, extra) const;
// The base adds optax's call forms: tx.update(updates, state), tx.update(updates, state, params)
// and tx.update(updates, state, params, ExtraArgs<Params>{value, grad, value_fn}).
template <class Self>
struct Transformation {
  template <class U, class S>
  auto update(const U& updates, const S& state) const {
    return self().update_impl(updates, state, static_cast<const U*>(nullptr));
  }
  template <class U, class S, class Q>
  auto update(const U& updates, const S& state, const Q& params) const {
    return self().update_impl(updates, state, &params);
  }
  template <class U, class S, class Q, class X>
  auto update(const U& updates, const S& state, const Q& params, const ExtraArgs<X>& extra) const {
    if constexpr (requires { self().update_extra(updates, state, &params, extra); })
      return self().update_extra(updates, state, &params, extra);
    else
      return self().update_impl(updates, state, &params);
  }

 private:
  const Self& self() const { return static_cast<const Self&>(*this); }
};

// The base of a transformation that keeps no state (EmptyState): Self defines only
//   template <class U, class Q> U apply(const U& updates, const Q* params) const;
template <class Self>
struct StatelessTransformation : Transformation<Self> {
  template <class P>
  EmptyState init(const P&) const {
    return {};
  }
  template <class U, class Q>
  std::pair<U, EmptyState> update_impl(const U& updates, const EmptyState& state,
                                       const Q* params) const {
    return {static_cast<const Self&>(*this).apply(updates, params), state};
  }
};

// The state type a transformation keeps for params of type P.
template <class Tx, class P>
using state_t =
    std::remove_cvref_t<decltype(std::declval<const Tx&>().init(std::declval<const P&>()))>;

// What a transformation is, checked where it is used: init(P) and update(U, state, P).
template <class Tx, class P>
concept TransformationFor = requires(const Tx& tx, const P& p, const state_t<Tx, P>& s) {
  tx.init(p);
  tx.update(p, s, p);
};

// optax.identity(): updates unchanged, EmptyState.
struct Identity : StatelessTransformation<Identity> {
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    return updates;
  }
};
inline Identity identity() { return {}; }

// optax.init_empty_state(params): EmptyState.
template <class P>
EmptyState init_empty_state(const P&) {
  return {};
}

// optax.set_to_zero(): zeros like the updates (freezes the leaves it sees), EmptyState.
struct SetToZero : StatelessTransformation<SetToZero> {
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    return tree_utils::tree_zeros_like(updates);
  }
};
inline SetToZero set_to_zero() { return {}; }

// optax.stateless(f): f(updates, params) -> updates (params is a const pointer, nullptr when
// update() got none), EmptyState.
template <class F>
struct Stateless : StatelessTransformation<Stateless<F>> {
  F f;
  explicit Stateless(F fn) : f(std::move(fn)) {}
  template <class U, class Q>
  U apply(const U& updates, const Q* params) const {
    return f(updates, params);
  }
};
template <class F>
Stateless<F> stateless(F f) {
  return Stateless<F>(std::move(f));
}

// optax.stateless_with_tree_map(f): f(g, p) on every leaf; p is an empty Array() without params.
template <class F>
auto stateless_with_tree_map(F f) {
  return stateless([f = std::move(f)](const auto& updates, const auto* params) {
    using U = std::remove_cvref_t<decltype(updates)>;
    if (params) {
      return linum::detail::tree_apply_skip_empty(
          updates, [&](const Array& g, const Array& p) { return f(g, p); }, *params);
    }
    return U(linum::detail::tree_apply_skip_empty(updates,
                                                  [&](const Array& g) { return f(g, Array()); }));
  });
}

// optax.GradientTransformation(init_fn, update_fn) for a user's own transformation:
// init_fn(params) -> state; update_fn(updates, state, params_ptr) -> (updates, state), where
// params_ptr is nullptr when update() got no params.
template <class Init, class Update>
struct FnTransformation : Transformation<FnTransformation<Init, Update>> {
  Init init_fn;
  Update update_fn;
  FnTransformation(Init i, Update u) : init_fn(std::move(i)), update_fn(std::move(u)) {}
  template <class P>
  auto init(const P& params) const {
    return init_fn(params);
  }
  template <class U, class S, class Q>
  auto update_impl(const U& updates, const S& state, const Q* params) const {
    return update_fn(updates, state, params);
  }
};
template <class Init, class Update>
FnTransformation<Init, Update> transformation(Init init_fn, Update update_fn) {
  return {std::move(init_fn), std::move(update_fn)};
}

// ---- numerics and updates ------------------------------------------------------------------

// optax.safe_increment: count + 1, saturating at the dtype's maximum (int32: 2147483647).
Array safe_increment(const Array& count);
// optax.safe_int32_increment: the older name of safe_increment.
inline Array safe_int32_increment(const Array& count) { return safe_increment(count); }

namespace detail {
// optax maps apply_updates / incremental_update with is_leaf=lambda x: x is None and gives None
// where the first tree is None, whatever the second holds there: `other` with those places made
// None, so the two trees then map leaf for leaf (Tree, optional, map and vector nodes).
Tree none_where_none(const Tree& first, const Tree& other);
template <class A, class B>
B none_where_none(const A& first, const B& other) {
  if constexpr (std::is_same_v<A, Array> || std::is_same_v<B, Array>) {
    return other;
  } else if constexpr (std::is_same_v<A, Tree> && std::is_same_v<B, Tree>) {
    return none_where_none(first, other);
  } else if constexpr (pytree::detail::is_std_optional<A>::value &&
                       pytree::detail::is_std_optional<B>::value) {
    if (!first || !other) return B();
    return B(none_where_none(*first, *other));
  } else if constexpr (pytree::detail::category_v<A> == pytree::detail::Category::Frozen &&
                       pytree::detail::category_v<B> == pytree::detail::Category::Frozen) {
    // A FrozenDict cannot be edited in place: through its plain-dict form.
    return B(none_where_none(first.unfreeze(), other.unfreeze()));
  } else if constexpr (requires {
                         typename A::mapped_type;
                         typename B::mapped_type;
                       }) {
    B out = other;
    for (auto& [k, v] : out)
      if (auto it = first.find(k); it != first.end()) v = none_where_none(it->second, v);
    return out;
  } else if constexpr (
      requires { typename A::value_type; } &&
      requires(const A& a) {
        a.size();
        a[0];
      } &&
      requires(B & b) {
        b[0];
        b.size();
      }) {
    B out = other;
    for (std::size_t i = 0; i < out.size() && i < first.size(); ++i)
      out[i] = none_where_none(first[i], out[i]);
    return out;
  } else {
    return other;
  }
}
}  // namespace detail

// optax.apply_updates: p + u leafwise, cast back to the parameter's dtype; None params stay None.
template <class P, class U>
P apply_updates(const P& params, const U& updates) {
  return linum::detail::tree_apply_skip_empty(
      params, [](const Array& p, const Array& u) { return astype(add(p, u), p.dtype()); },
      detail::none_where_none(params, updates));
}

// optax.incremental_update: step_size * new + (1 - step_size) * old (Polyak averaging); None
// where the new tensors are None.
template <class P>
P incremental_update(const P& new_tensors, const P& old_tensors, double step_size) {
  return linum::detail::tree_apply_skip_empty(
      new_tensors,
      [step_size](const Array& n, const Array& o) { return step_size * n + (1.0 - step_size) * o; },
      detail::none_where_none(new_tensors, old_tensors));
}

// optax.periodic_update: new_tensors when steps % update_period == 0, else old_tensors.
template <class P>
P periodic_update(const P& new_tensors, const P& old_tensors, const Array& steps,
                  std::int64_t update_period) {
  if (update_period <= 0) {
    throw ValueError("periodic_update: update_period must be positive, got " +
                     std::to_string(update_period));
  }
  const bool due = steps.concrete().item<std::int64_t>() % update_period == 0;
  return due ? new_tensors : old_tensors;
}

}  // namespace linum::optim
