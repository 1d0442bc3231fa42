// optax.tree_utils's random trees: tree_split_key_like (one key per leaf) and tree_random_like
// (a sampler called per leaf with its own key, shape and dtype).
#pragma once

#include <optional>
#include <utility>

#include <linum/autodiff/ops/shape.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum::optim::tree_utils {

// optax.tree_utils.tree_split_key_like: split(key, number of leaves), one row per leaf in
// flattening order (placeholder leaves, optax's MaskedNodes, are not leaves and get none).
template <class T>
T tree_split_key_like(const Array& key, const T& target) {
  std::int64_t n = 0;
  for (const Array& x : linum::detail::tree_arrays(target)) n += x.valid();
  Array keys = random::split(key, n);
  std::int64_t i = 0;
  return linum::detail::tree_apply_skip_empty(target, [&](const Array&) {
    const std::int64_t row = i++;
    return lax_slice(keys, {row, 0}, {row + 1, 2}).reshape({2});
  });
}

// optax.tree_utils.tree_random_like: sampler(key, shape, dtype) per leaf (random::normal by
// default), dtype the leaf's unless given.
template <class T, class Sampler>
T tree_random_like(const Array& key, const T& target, Sampler sampler,
                   std::optional<DType> dtype = std::nullopt) {
  T keys = tree_split_key_like(key, target);
  return linum::detail::tree_apply_skip_empty(
      target,
      [&](const Array& x, const Array& k) { return sampler(k, x.shape(), dtype.value_or(x.dtype())); },
      keys);
}
template <class T>
T tree_random_like(const Array& key, const T& target, std::optional<DType> dtype = std::nullopt) {
  return tree_random_like(
      key, target,
      [](const Array& k, const Shape& shape, DType dt) { return random::normal(k, shape, dt); },
      dtype);
}

}  // namespace linum::optim::tree_utils
