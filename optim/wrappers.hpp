// optax's wrappers around an inner transformation: conditionally_transform,
// conditionally_mask and apply_if_finite (run the inner one or not, by a condition on the step
// or on the updates), lookahead (slow and fast weights), flatten (the inner one sees one flat
// vector), named_chain (states by name), freeze and selective_transform (zero updates on a
// mask), and the constraints keep_params_nonnegative and zero_nans. The conditions are
// evaluated eagerly (the branch is taken on the host).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/optim/base.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/erased.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

namespace detail {
// The inner update with whatever arguments the outer one got.
template <class Tx, class U, class S, class Q>
auto inner_update(const Tx& tx, const U& updates, const S& state, const Q* params,
                  const ExtraArgs<Q>* extra) {
  if (params && extra) return tx.update(updates, state, *params, *extra);
  if (params) return tx.update(updates, state, *params);
  return tx.update(updates, state);
}
bool condition_true(const Array& c, const char* fn);
}  // namespace detail

// The extra-argument plumbing shared by the wrappers: Self defines
//   run(updates, state, params, extra) with extra == nullptr when update() got none.
template <class Self>
struct ForwardingTransformation : Transformation<Self> {
  template <class U, class S, class Q>
  auto update_impl(const U& updates, const S& state, const Q* params) const {
    return static_cast<const Self&>(*this).run(updates, state, params,
                                               static_cast<const ExtraArgs<Q>*>(nullptr));
  }
  template <class U, class S, class Q>
  auto update_extra(const U& updates, const S& state, const Q* params,
                    const ExtraArgs<Q>& extra) const {
    return static_cast<const Self&>(*this).run(updates, state, params, &extra);
  }
};

// ---- conditionality
// ------------------------------------------------------------------------------

template <class S, class C = Array>
struct ConditionallyTransformState {
  BOOST_HANA_DEFINE_STRUCT(ConditionallyTransformState, (S, inner_state), (C, step));
};
template <class S, class C = Array>
struct ConditionallyMaskState {
  BOOST_HANA_DEFINE_STRUCT(ConditionallyMaskState, (C, step), (S, inner_state));
};

// optax.ConditionFn: step -> bool (a bool scalar Array).
using ConditionFn = std::function<Array(const Array& step)>;

// optax.conditionally_transform: the inner transformation where should_transform_fn(step), the
// updates unchanged (and the inner state kept) elsewhere; step counts every call.
// optax.conditionally_mask (Mask = true): zeros instead of the unchanged updates.
template <class Inner, bool Mask>
struct Conditionally : ForwardingTransformation<Conditionally<Inner, Mask>> {
  Inner inner;
  ConditionFn should_transform_fn;
  template <class P>
  auto init(const P& params) const {
    using S = state_t<Inner, P>;
    if constexpr (Mask)
      return ConditionallyMaskState<S>{zero_count(), inner.init(params)};
    else
      return ConditionallyTransformState<S>{inner.init(params), zero_count()};
  }
  template <class U, class S, class Q>
  std::pair<U, S> run(const U& updates, const S& state, const Q* params,
                      const ExtraArgs<Q>* extra) const {
    S next = state;
    next.step = safe_increment(state.step);
    if (detail::condition_true(should_transform_fn(state.step),
                               Mask ? "conditionally_mask" : "conditionally_transform")) {
      auto [u, s] = detail::inner_update(inner, updates, state.inner_state, params, extra);
      next.inner_state = std::move(s);
      return {U(std::move(u)), std::move(next)};
    }
    return {Mask ? tree_utils::tree_zeros_like(updates) : updates, std::move(next)};
  }
};
template <class Inner>
Conditionally<Inner, false> conditionally_transform(Inner inner, ConditionFn should_transform_fn) {
  return Conditionally<Inner, false>{{}, std::move(inner), std::move(should_transform_fn)};
}
template <class Inner>
Conditionally<Inner, true> conditionally_mask(Inner inner, ConditionFn should_transform_fn) {
  return Conditionally<Inner, true>{{}, std::move(inner), std::move(should_transform_fn)};
}

template <class S, class C = Array, class B = Array>
struct ApplyIfFiniteState {
  BOOST_HANA_DEFINE_STRUCT(ApplyIfFiniteState, (C, notfinite_count), (B, last_finite),
                           (C, total_notfinite), (S, inner_state));
};

// optax.apply_if_finite: the inner transformation when every update is finite (or after more
// than max_consecutive_errors non-finite steps in a row); zeros, and the inner state kept,
// otherwise.
template <class Inner>
struct ApplyIfFinite : ForwardingTransformation<ApplyIfFinite<Inner>> {
  Inner inner;
  std::int64_t max_consecutive_errors = 0;
  template <class P>
  auto init(const P& params) const {
    using S = state_t<Inner, P>;
    return ApplyIfFiniteState<S>{zero_count(), Array(true), zero_count(), inner.init(params)};
  }
  template <class U, class S, class Q>
  std::pair<U, S> run(const U& updates, const S& state, const Q* params,
                      const ExtraArgs<Q>* extra) const {
    bool finite = true;
    for (const Array& x : linum::detail::tree_arrays(updates))
      if (x.valid()) finite = finite && all(isfinite(x)).concrete().template item<bool>();
    S next = state;
    next.notfinite_count = finite ? zero_count() : safe_increment(state.notfinite_count);
    next.last_finite = Array(finite);
    next.total_notfinite = finite ? state.total_notfinite : safe_increment(state.total_notfinite);
    const bool apply =
        finite || concrete_count(next.notfinite_count, "apply_if_finite") > max_consecutive_errors;
    if (!apply) return {tree_utils::tree_zeros_like(updates), std::move(next)};
    auto [u, s] = detail::inner_update(inner, updates, state.inner_state, params, extra);
    next.inner_state = std::move(s);
    return {U(std::move(u)), std::move(next)};
  }
};
template <class Inner>
ApplyIfFinite<Inner> apply_if_finite(Inner inner, std::int64_t max_consecutive_errors) {
  return ApplyIfFinite<Inner>{{}, std::move(inner), max_consecutive_errors};
}

// ---- lookahead
// -----------------------------------------------------------------------------------

// optax.LookaheadParams: the fast weights (that the fast optimizer moves) and the slow ones.
template <class P>
struct LookaheadParams {
  BOOST_HANA_DEFINE_STRUCT(LookaheadParams, (P, fast), (P, slow));
  static LookaheadParams init_synced(const P& params) { return {params, params}; }
};

template <class S, class C = Array>
struct LookaheadState {
  BOOST_HANA_DEFINE_STRUCT(LookaheadState, (S, fast_state), (C, steps_since_sync));
};

// optax.lookahead: the fast optimizer steps the fast weights; every sync_period steps the slow
// weights move slow_step_size of the way to them and the fast weights are reset to the slow
// ones (and, with reset_state, the fast optimizer's state to its initial one). update takes
// LookaheadParams and returns LookaheadParams updates.
template <class Fast>
struct Lookahead : Transformation<Lookahead<Fast>> {
  Fast fast_optimizer;
  std::int64_t sync_period = 1;
  double slow_step_size = 0.5;
  bool reset_state = false;

  template <class P>
  auto init(const LookaheadParams<P>& params) const {
    using S = state_t<Fast, P>;
    return LookaheadState<S>{fast_optimizer.init(params.fast), zero_count()};
  }
  // As optax (which logs a warning), plain params are taken as the fast ones.
  template <class P>
  auto init(const P& params) const {
    using S = state_t<Fast, P>;
    return LookaheadState<S>{fast_optimizer.init(params), zero_count()};
  }

  template <class U, class S, class P>
  std::pair<LookaheadParams<U>, S> update_impl(const U& updates, const S& state,
                                               const LookaheadParams<P>* params) const {
    if (!params) throw_no_params("lookahead");
    auto [fast_u, fast_state] = fast_optimizer.update(updates, state.fast_state, params->fast);
    const std::int64_t since = concrete_count(state.steps_since_sync, "lookahead");
    const bool sync = since == sync_period - 1;
    const double s = sync ? 1.0 : 0.0;
    // last_difference = fast + u - slow; slow += s * step * diff; fast update -= s * (1 - step)
    // * diff (optax's _lookahead_update).
    U diff = linum::detail::tree_apply_skip_empty(
        U(fast_u), [](const Array& u, const Array& f, const Array& sl) { return f + u - sl; },
        params->fast, params->slow);
    LookaheadParams<U> out{
        linum::detail::tree_apply_skip_empty(
            U(fast_u),
            [&](const Array& u, const Array& d) { return u - s * (1.0 - slow_step_size) * d; },
            diff),
        linum::detail::tree_apply_skip_empty(
            diff, [&](const Array& d) { return slow_step_size * s * d; })};
    S next{std::move(fast_state), full({}, static_cast<double>((since + 1) % sync_period), int32)};
    if (reset_state && sync) next.fast_state = fast_optimizer.init(params->fast);
    return {std::move(out), std::move(next)};
  }
  template <class U, class S, class Q>
  std::pair<LookaheadParams<U>, S> update_impl(const U&, const S&, const Q*) const {
    throw TypeError(
        "lookahead: update needs LookaheadParams{fast, slow} params (see "
        "LookaheadParams::init_synced)");
  }
};
template <class Fast>
Lookahead<Fast> lookahead(Fast fast_optimizer, std::int64_t sync_period, double slow_step_size,
                          bool reset_state = false) {
  if (sync_period < 1)
    throw ValueError("lookahead: Synchronization period must be >= 1, got " +
                     std::to_string(sync_period));
  return Lookahead<Fast>{{}, std::move(fast_optimizer), sync_period, slow_step_size, reset_state};
}

// ---- layouts and names -----------------------------------------------------------------------

namespace detail {
Array flatten_leaves(const Arrays& leaves);
Arrays unflatten_leaves(const Array& flat, const Arrays& like);
}  // namespace detail

// optax.flatten(inner): the inner transformation sees the updates (and params) as one flat
// vector, the leaves raveled and concatenated; its state is that of a vector. The extra
// arguments' grad and value_fn are flattened / unflattened to match.
template <class Inner>
struct Flatten : ForwardingTransformation<Flatten<Inner>> {
  Inner inner;
  template <class P>
  auto init(const P& params) const {
    return inner.init(detail::flatten_leaves(linum::detail::tree_arrays(params)));
  }
  template <class U, class S, class Q>
  std::pair<U, S> run(const U& updates, const S& state, const Q* params,
                      const ExtraArgs<Q>* extra) const {
    using linum::detail::tree_arrays;
    const Arrays like = tree_arrays(updates);
    Array flat = detail::flatten_leaves(like);
    std::optional<Array> flat_params;
    if (params) flat_params = detail::flatten_leaves(tree_arrays(*params));
    std::optional<ExtraArgs<Array>> flat_extra;
    if (extra) {
      flat_extra.emplace();
      flat_extra->value = extra->value;
      if (extra->grad) flat_extra->grad = detail::flatten_leaves(tree_arrays(*extra->grad));
      if (extra->value_fn && params) {
        const Q like_params = *params;
        flat_extra->value_fn = [fn = extra->value_fn, like_params](const Array& x) {
          const Arrays leaves = detail::unflatten_leaves(x, tree_arrays(like_params));
          return fn(pytree::tree_unflatten_like(like_params, leaves));
        };
      }
    }
    auto [u, s] = detail::inner_update(inner, flat, state, flat_params ? &*flat_params : nullptr,
                                       flat_extra ? &*flat_extra : nullptr);
    return {pytree::tree_unflatten_like(updates, detail::unflatten_leaves(u, like)), std::move(s)};
  }
};
template <class Inner>
Flatten<Inner> flatten(Inner inner) {
  return Flatten<Inner>{{}, std::move(inner)};
}

// optax.named_chain((name, transformation), ...): chain whose state is a dict of the members'
// states by name (a dynamic Tree, as erased states are). ValueError for repeated names.
template <class... Txs>
struct NamedChain : ForwardingTransformation<NamedChain<Txs...>> {
  std::vector<std::string> names;
  std::tuple<Txs...> transforms;

  template <class P>
  Tree init(const P& params) const {
    Tree::dict_type d;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (d.insert_or_assign(names[I], detail::to_tree(std::get<I>(transforms).init(params))), ...);
    }
    (std::index_sequence_for<Txs...>{});
    return Tree(std::move(d));
  }
  template <class U, class Q>
  std::pair<U, Tree> run(const U& updates, const Tree& state, const Q* params,
                         const ExtraArgs<Q>* extra) const {
    U u = updates;
    Tree::dict_type d;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            const auto& tx = std::get<I>(transforms);
            using S = state_t<std::remove_cvref_t<decltype(tx)>, Q>;
            S s = detail::from_tree<S>(state.at(names[I]), "named_chain['" + names[I] + "']");
            auto [nu, ns] = detail::inner_update(tx, u, s, params, extra);
            u = U(std::move(nu));
            d.insert_or_assign(names[I], detail::to_tree(ns));
          }(),
          ...);
    }
    (std::index_sequence_for<Txs...>{});
    return {std::move(u), Tree(std::move(d))};
  }
};
template <class... Txs>
NamedChain<Txs...> named_chain(std::pair<std::string, Txs>... named) {
  std::vector<std::string> names{named.first...};
  if (std::set<std::string>(names.begin(), names.end()).size() != names.size()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
    throw ValueError("named_chain: Named transformations must have unique names, but got [" + list +
                     "]");
  }
  return NamedChain<Txs...>{{}, std::move(names), std::tuple<Txs...>(std::move(named.second)...)};
}

// ---- freezing
// ------------------------------------------------------------------------------------

// optax.freeze(mask): zero updates where mask is true (masked(set_to_zero(), mask)).
template <class Mask>
auto freeze(Mask mask) {
  return masked(set_to_zero(), std::move(mask));
}

// optax.partition (the new name of multi_transform) and PartitionState.
template <class S>
using PartitionState = MultiTransformState<S>;
template <class P, class LabelFn>
MultiTransform<P, LabelFn> partition(std::map<std::string, GradientTransformation<P>> transforms,
                                     LabelFn label_fn) {
  return multi_transform(std::move(transforms), std::move(label_fn));
}

// optax.selective_transform(optimizer, freeze_mask): optimizer on the leaves where freeze_mask
// is false, zero updates where it is true (partition into "train" and "freeze"). freeze_mask:
// a bool, or a params-like tree of bools.
template <class P, class Tx, class Mask>
auto selective_transform(Tx optimizer, const Mask& freeze_mask) {
  std::map<std::string, bool> frozen;  // keystr of each leaf's path -> frozen
  if constexpr (!std::is_same_v<Mask, bool>) {
    for (const auto& [path, m] : pytree::tree_leaves_with_path(freeze_mask))
      frozen.insert_or_assign(pytree::keystr(path), static_cast<bool>(m));
  }
  auto label_fn = [frozen, freeze_mask](const pytree::KeyPath& path, const Array&) -> std::string {
    bool f;
    if constexpr (std::is_same_v<Mask, bool>) {
      f = freeze_mask;
    } else {
      auto it = frozen.find(pytree::keystr(path));
      if (it == frozen.end())
        throw ValueError("selective_transform: freeze_mask has no entry for " +
                         pytree::keystr(path));
      f = it->second;
    }
    return f ? "freeze" : "train";
  };
  std::map<std::string, GradientTransformation<P>> txs;
  txs.emplace("train", GradientTransformation<P>(std::move(optimizer)));
  txs.emplace("freeze", GradientTransformation<P>(set_to_zero()));
  return partition(std::move(txs), std::move(label_fn));
}

// ---- constraints
// ---------------------------------------------------------------------------------

using NonNegativeParamsState = EmptyState;

// optax.keep_params_nonnegative: where params + updates would be negative, updates = -params
// (the params land on 0). Needs params.
struct KeepParamsNonnegative : StatelessTransformation<KeepParamsNonnegative> {
  template <class U, class Q>
  U apply(const U& updates, const Q* params) const {
    if (!params) throw_no_params("keep_params_nonnegative");
    return linum::detail::tree_apply_skip_empty(
        updates, [](const Array& u, const Array& p) { return where((p + u) < 0.0, -p, u); },
        *params);
  }
};
inline KeepParamsNonnegative keep_params_nonnegative() { return {}; }

template <class P>
struct ZeroNansState {
  BOOST_HANA_DEFINE_STRUCT(ZeroNansState, (P, found_nan));
};

// optax.zero_nans: NaN updates replaced by 0; found_nan records, per leaf, whether the last
// updates held one.
struct ZeroNans : Transformation<ZeroNans> {
  template <class P>
  ZeroNansState<P> init(const P& params) const {
    return {
        linum::detail::tree_apply_skip_empty(params, [](const Array&) { return Array(false); })};
  }
  template <class U, class P, class Q>
  std::pair<U, ZeroNansState<P>> update_impl(const U& updates, const ZeroNansState<P>& state,
                                             const Q*) const {
    P found = linum::detail::tree_apply_skip_empty(
        state.found_nan, [](const Array&, const Array& g) { return any(isnan(g)); }, updates);
    U out = linum::detail::tree_apply_skip_empty(
        updates, [](const Array& g) { return where(isnan(g), zeros_like(g), g); });
    return {std::move(out), {std::move(found)}};
  }
};
inline ZeroNans zero_nans() { return {}; }

// optax.with_extra_args_support: every linum transformation takes optax's extra arguments
// already (those that do not read them ignore them), so this is the identity.
template <class Tx>
Tx with_extra_args_support(Tx tx) {
  return tx;
}

}  // namespace linum::optim
