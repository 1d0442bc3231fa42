// Combining transformations: chain (state: a std::tuple of the member states, as optax's tuple),
// masked (MaskedState; leaves outside the mask pass through), and add_decayed_weights with a mask.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <linum/optim/base.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// optax.chain(*transforms): init is the tuple of the members' states; update runs them in order,
// threading the updates and passing every member the same params.
template <class... Txs>
struct Chain : Transformation<Chain<Txs...>> {
  std::tuple<Txs...> transforms;
  explicit Chain(Txs... txs) : transforms(std::move(txs)...) {}

  template <class P>
  auto init(const P& params) const {
    return std::apply([&](const auto&... tx) { return std::tuple{tx.init(params)...}; },
                      transforms);
  }

  template <class U, class S, class Q>
  std::pair<U, S> update_impl(const U& updates, const S& state, const Q* params) const {
    static_assert(std::tuple_size_v<S> == sizeof...(Txs),
                  "chain: the state must hold one state per transformation (call init first)");
    U u = updates;
    S next;
    run<0>(u, state, next, params, static_cast<const ExtraArgs<Q>*>(nullptr));
    return {std::move(u), std::move(next)};
  }
  // optax's extra arguments go to every member (those that do not read them ignore them).
  template <class U, class S, class Q>
  std::pair<U, S> update_extra(const U& updates, const S& state, const Q* params,
                               const ExtraArgs<Q>& extra) const {
    static_assert(std::tuple_size_v<S> == sizeof...(Txs),
                  "chain: the state must hold one state per transformation (call init first)");
    U u = updates;
    S next;
    run<0>(u, state, next, params, &extra);
    return {std::move(u), std::move(next)};
  }

 private:
  template <std::size_t I>
  using member_t = std::tuple_element_t<I, std::tuple<Txs...>>;
  // How many members after I fold into I's pass: a following add_decayed_weights (no mask) and/or
  // scale (constant learning rate), when I is scale_by_adam, trace or scale_by_rms/stddev.
  template <std::size_t I>
  static constexpr std::size_t folded() {
    constexpr std::size_t n = sizeof...(Txs);
    if constexpr (I + 1 >= n || !requires { member_t<I>::kFoldsEpilogue; }) {
      return 0;
    } else if constexpr (std::is_same_v<member_t<I + 1>, Scale>) {
      return 1;
    } else if constexpr (std::is_same_v<member_t<I + 1>, AddDecayedWeights>) {
      if constexpr (I + 2 < n && std::is_same_v<member_t<I + 2>, Scale>)
        return 2;
      else
        return 1;
    } else {
      return 0;
    }
  }

  // Runs members I.. in order; a member with folded() > 0 does its followers' work in its own
  // pass (their states are EmptyState and stay as they were).
  template <std::size_t I, class U, class S, class Q>
  void run(U& u, const S& state, S& next, const Q* params, const ExtraArgs<Q>* extra) const {
    if constexpr (I < sizeof...(Txs)) {
      constexpr std::size_t k = folded<I>();
      if constexpr (k > 0) {
        constexpr bool decays = std::is_same_v<member_t<I + 1>, AddDecayedWeights>;
        // Without params add_decayed_weights must raise its own error: no folding then.
        if (!decays || params) {
          detail::Epilogue ep;
          if constexpr (decays) {
            // A weight decay of 0 leaves the updates as they are (optax returns them unchanged).
            ep.weight_decay = std::get<I + 1>(transforms).weight_decay;
            ep.decay = ep.weight_decay != 0.0;
          }
          if constexpr (std::is_same_v<member_t<I + k>, Scale>) {
            ep.scaled = true;
            ep.scale = std::get<I + k>(transforms).step_size;
          }
          std::tie(u, std::get<I>(next)) =
              std::get<I>(transforms).update_with(u, std::get<I>(state), params, ep);
          [&]<std::size_t... J>(std::index_sequence<J...>) {
            ((std::get<I + 1 + J>(next) = std::get<I + 1 + J>(state)), ...);
          }
          (std::make_index_sequence<k>{});
          run<I + 1 + k>(u, state, next, params, extra);
          return;
        }
      }
      std::tie(u, std::get<I>(next)) = step<I>(u, std::get<I>(state), params, extra);
      run<I + 1>(u, state, next, params, extra);
    }
  }

  template <std::size_t I, class U, class SI, class Q>
  auto step(const U& u, const SI& s, const Q* params, const ExtraArgs<Q>* extra) const {
    const auto& tx = std::get<I>(transforms);
    if (params && extra) return tx.update(u, s, *params, *extra);
    if (params) return tx.update(u, s, *params);
    return tx.update(u, s);
  }
};

template <class... Txs>
Chain<std::decay_t<Txs>...> chain(Txs&&... txs) {
  return Chain<std::decay_t<Txs>...>(std::forward<Txs>(txs)...);
}

// optax.MaskedState.
template <class S>
struct MaskedState {
  BOOST_HANA_DEFINE_STRUCT(MaskedState, (S, inner_state));
};

namespace detail {

template <class M>
bool mask_truth(const M& m) {
  return static_cast<bool>(m);  // a bool, or a size-1 (bool) Array
}

// The tree with the leaves outside the mask replaced by MaskedNode (an empty Array).
template <class T, class MT>
T mask_pytree(const T& tree, const MT& mask) {
  return pytree::tree_map(
      [](const Array& x, const auto& m) -> Array { return mask_truth(m) ? x : Array(); }, tree,
      mask);
}

}  // namespace detail

// optax.masked(inner, mask): inner sees only the leaves where mask is true (the others are
// MaskedNodes, empty Arrays, in its state too); the other updates pass through unchanged.
// mask: a tree like the params with bool (or bool Array) leaves, or a callable params -> mask.
template <class Inner, class Mask>
struct Masked : Transformation<Masked<Inner, Mask>> {
  Inner inner;
  Mask mask;
  Masked(Inner i, Mask m) : inner(std::move(i)), mask(std::move(m)) {}

  template <class P>
  auto init(const P& params) const {
    using S = state_t<Inner, P>;
    return MaskedState<S>{inner.init(detail::mask_pytree(params, mask_tree(params)))};
  }

  template <class U, class S, class Q>
  std::pair<U, S> update_impl(const U& updates, const S& state, const Q* params) const {
    return run(updates, state, params, static_cast<const ExtraArgs<Q>*>(nullptr));
  }
  // optax passes the extra arguments on unmasked.
  template <class U, class S, class Q>
  std::pair<U, S> update_extra(const U& updates, const S& state, const Q* params,
                               const ExtraArgs<Q>& extra) const {
    return run(updates, state, params, &extra);
  }

 private:
  template <class U, class S, class Q>
  std::pair<U, S> run(const U& updates, const S& state, const Q* params,
                      const ExtraArgs<Q>* extra) const {
    const auto mt = mask_tree(updates);
    U masked_updates = detail::mask_pytree(updates, mt);
    auto result = [&] {
      if (params) {
        Q masked_params = detail::mask_pytree(*params, mt);
        if (extra) return inner.update(masked_updates, state.inner_state, masked_params, *extra);
        return inner.update(masked_updates, state.inner_state, masked_params);
      }
      return inner.update(masked_updates, state.inner_state);
    }();
    U out =
        pytree::tree_map([](const Array& old, const Array& fresh,
                            const auto& m) -> Array { return detail::mask_truth(m) ? fresh : old; },
                         updates, result.first, mt);
    return {std::move(out), S{std::move(result.second)}};
  }

  // A bool mask is a whole-tree prefix (optax's mask=True): every leaf in or every leaf out.
  template <class T>
  decltype(auto) mask_tree(const T& tree) const {
    if constexpr (std::is_same_v<Mask, bool>)
      return linum::detail::tree_apply(tree, [m = mask](const Array&) { return Array(m); });
    else if constexpr (std::is_invocable_v<const Mask&, const T&>)
      return mask(tree);
    else
      return (mask);
  }
};

template <class Inner, class Mask>
Masked<Inner, Mask> masked(Inner inner, Mask mask) {
  return Masked<Inner, Mask>(std::move(inner), std::move(mask));
}

// No mask (the default of add_decayed_weights / adamw / lamb / lion).
struct NoMask {};

// optax.add_decayed_weights(weight_decay, mask): updates + weight_decay * params, on the masked
// leaves only when a mask is given. weight_decay is a number or a schedule (any callable
// count -> value; the state then counts steps: WeightDecaySchedule).
template <class WD = double, class Mask = NoMask>
auto add_decayed_weights(WD weight_decay = 0.0, Mask mask = {}) {
  auto t = [&] {
    if constexpr (std::is_arithmetic_v<WD>) {
      AddDecayedWeights a;
      a.weight_decay = static_cast<double>(weight_decay);
      return a;
    } else {
      AddDecayedWeightsSchedule a;
      a.weight_decay = Schedule(std::move(weight_decay));
      return a;
    }
  }();
  if constexpr (std::is_same_v<Mask, NoMask>)
    return t;
  else
    return masked(t, std::move(mask));
}

}  // namespace linum::optim
