// optax.add_noise (AddNoiseState): annealed Gaussian noise added to the updates. (The other
// adding transformation, add_decayed_weights, is in transform.hpp / combine.hpp.)
#pragma once

#include <cstdint>
#include <utility>

#include <linum/optim/adaptive.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/transform.hpp>
#include <linum/optim/tree_random.hpp>

namespace linum::optim {

template <class C = Array, class K = Array>
struct AddNoiseState {
  BOOST_HANA_DEFINE_STRUCT(AddNoiseState, (C, count), (K, rng_key));
};

// optax.add_noise(eta, gamma, key): updates + N(0, eta / t**gamma) noise at step t (1-based),
// one fresh key per step from split(rng_key), one key per leaf from tree_random_like.
struct AddNoise : Transformation<AddNoise> {
  double eta = 0.01, gamma = 0.55;
  Array key;
  template <class P>
  AddNoiseState<> init(const P&) const {
    return {zero_count(), key};
  }
  template <class U, class Q>
  std::pair<U, AddNoiseState<>> update_impl(const U& updates, const AddNoiseState<>& s,
                                            const Q*) const {
    Array count = safe_increment(s.count);
    const DType dt = detail::scalar_dtype(updates);
    Array stddev = sqrt(eta / power(astype(count, dt), gamma));
    Array keys = random::split(s.rng_key);
    Array next_key = lax_slice(keys, {0, 0}, {1, 2}).reshape({2});
    Array sample_key = lax_slice(keys, {1, 0}, {2, 2}).reshape({2});
    U noise = tree_utils::tree_random_like(sample_key, updates);
    U out = linum::detail::tree_apply_skip_empty(
        updates, [&](const Array& g, const Array& n) { return g + astype(stddev, g.dtype()) * n; },
        noise);
    return {std::move(out), {count, next_key}};
  }
};
// key: a random::key (uint32[2]) or a seed.
inline AddNoise add_noise(double eta, double gamma, const Array& key) {
  AddNoise t;
  t.eta = eta, t.gamma = gamma, t.key = key;
  return t;
}
inline AddNoise add_noise(double eta, double gamma, std::int64_t seed = 0) {
  return add_noise(eta, gamma, random::key(seed));
}

}  // namespace linum::optim
