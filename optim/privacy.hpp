// optax.contrib's differentially private SGD (Abadi et al. 2016): differentially_private_aggregate
// clips each example's gradient to a global L2 norm, sums them, adds Gaussian noise and divides
// by the batch size; dpsgd chains it with optional momentum and the learning rate. (optax also
// exports both, deprecated, at its top level.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <linum/autodiff/random/random.hpp>
#include <linum/optim/alias.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/clipping.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// optax.contrib.DifferentiallyPrivateAggregateState: the key the next update's noise comes from.
template <class K = Array>
struct DifferentiallyPrivateAggregateState {
  BOOST_HANA_DEFINE_STRUCT(DifferentiallyPrivateAggregateState, (K, rng_key));
};

namespace detail {
// The noised average of the clipped sums: (clipped[i] + noise_std * normal(keys[i + 1])) / batch,
// with keys = split(rng_key, leaves + 1); returns the leaves and keys[0], the next state's key.
std::pair<Arrays, Array> private_aggregate(const Arrays& per_example_grads, double l2_norm_clip,
                                           double noise_multiplier, const Array& rng_key);
}  // namespace detail

// optax.contrib.differentially_private_aggregate(l2_norm_clip, noise_multiplier, key): the
// updates are per-example gradients (a batch axis 0 on every leaf), so it must come first in a
// chain; the result has no batch axis. Noise of standard deviation l2_norm_clip *
// noise_multiplier, fresh keys every step (one per leaf, in flattening order).
struct DifferentiallyPrivateAggregate : Transformation<DifferentiallyPrivateAggregate> {
  double l2_norm_clip = 1.0, noise_multiplier = 1.0;
  Array key;
  template <class P>
  DifferentiallyPrivateAggregateState<> init(const P&) const {
    return {key};
  }
  template <class U, class Q>
  auto update_impl(const U& updates, const DifferentiallyPrivateAggregateState<>& state,
                   const Q*) const {
    auto [noised, next_key] = detail::private_aggregate(
        linum::detail::tree_arrays(updates), l2_norm_clip, noise_multiplier, state.rng_key);
    return std::pair<U, DifferentiallyPrivateAggregateState<>>{
        pytree::tree_unflatten_like(updates, noised), {next_key}};
  }
};
// key: a random::key (uint32[2]) or a seed (optax: jax.random.key(seed); no key means key(0)).
DifferentiallyPrivateAggregate differentially_private_aggregate(double l2_norm_clip,
                                                                double noise_multiplier,
                                                                const Array& key);
DifferentiallyPrivateAggregate differentially_private_aggregate(double l2_norm_clip,
                                                                double noise_multiplier,
                                                                std::int64_t seed = 0);

// optax.contrib.dpsgd(learning_rate, l2_norm_clip, noise_multiplier, seed): the private
// aggregate, then -lr; state (DifferentiallyPrivateAggregateState, EmptyState, EmptyState for a
// constant lr).
template <class LR>
auto dpsgd(LR learning_rate, double l2_norm_clip, double noise_multiplier, std::int64_t seed) {
  return chain(differentially_private_aggregate(l2_norm_clip, noise_multiplier, seed), identity(),
               scale_by_learning_rate(std::move(learning_rate)));
}
// optax.contrib.dpsgd(..., momentum, nesterov): with trace(momentum, nesterov) between them
// (state (DifferentiallyPrivateAggregateState, TraceState, EmptyState)).
template <class LR>
auto dpsgd(LR learning_rate, double l2_norm_clip, double noise_multiplier, std::int64_t seed,
           double momentum, bool nesterov = false) {
  return chain(differentially_private_aggregate(l2_norm_clip, noise_multiplier, seed),
               trace(momentum, nesterov), scale_by_learning_rate(std::move(learning_rate)));
}

}  // namespace linum::optim
