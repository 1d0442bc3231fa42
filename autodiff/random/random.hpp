// linum::random: jax.random over linum::Array. Keys are uint32[2] arrays (JAX's raw PRNGKey
// layout), so they are ordinary pytree leaves; every sampler matches JAX bit for bit in the
// mode chosen by set_threefry_partitionable / ThreefryPartitionableScope (threefry.hpp), and a
// batch of keys under vmap gives a batch of samples from one vectorized kernel call.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/random/threefry.hpp>

namespace linum::random {

// ---- keys ------------------------------------------------------------------------------------

// How a seed becomes a key: JAX's default (jax_enable_x64 off) keeps its low 32 bits, [0, lo];
// with x64 on, a 64-bit seed is split into [hi, lo].
enum class SeedBits { x32, x64 };

// jax.random.PRNGKey(seed): a uint32 array of shape (2,).
Array PRNGKey(std::int64_t seed, SeedBits bits = SeedBits::x32);
// jax.random.key(seed): linum keys are always raw uint32[2] data, so this is PRNGKey.
Array key(std::int64_t seed, SeedBits bits = SeedBits::x32);
// jax.random.key_data / wrap_key_data: identities on raw keys (the latter checks the layout).
Array key_data(const Array& keys);
Array wrap_key_data(const Array& data);

// split(key, num): keys of shape (num, 2), or (*shape, 2) for a shape.
Array split(const Array& key, std::int64_t num = 2);
Array split(const Array& key, const Shape& shape);
// fold_in(key, data): data is a scalar integer (negative values wrap to uint32, as in JAX).
Array fold_in(const Array& key, const Array& data);
Array fold_in(const Array& key, std::int64_t data);

// ---- samplers --------------------------------------------------------------------------------
// Each takes one key of shape (2,) (use vmap for batches, as in JAX). Float samplers accept
// float32 and float64.

// Uniform bits; linum arrays have 32-bit unsigned integers only, so dtype must be uint32
// (detail::random_bits in threefry.hpp has the 8/16/64-bit streams).
Array bits(const Array& key, const Shape& shape = {}, DType dtype = uint32);
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = float32, double minval = 0.0,
              double maxval = 1.0);
Array normal(const Array& key, const Shape& shape = {}, DType dtype = float32);
// Samples of the standard normal truncated to the open interval (lower, upper).
Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape = {},
                       DType dtype = float32);
// bool samples with P(true) = p, computed in `dtype` (JAX: p's dtype; a Python float is
// float32). mode "high" uses two uniforms for accuracy at tiny p.
Array bernoulli(const Array& key, double p = 0.5, const Shape& shape = {},
                std::string_view mode = "low", DType dtype = float32);
// Integers in [minval, maxval) (int32), with JAX's clipping of bounds outside int32.
Array randint(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
              DType dtype = int32);
// Standard Gumbel samples; mode "low" (JAX's default) or "high".
Array gumbel(const Array& key, const Shape& shape = {}, DType dtype = float32,
             std::string_view mode = "low");
// Indices drawn from softmax(logits) along `axis` (Gumbel-max); shape defaults to the logits'
// shape without `axis`. replace=false samples without replacement (Gumbel top-k).
Array categorical(const Array& key, const Array& logits, int axis = -1,
                  const std::optional<Shape>& shape = std::nullopt, bool replace = true,
                  std::string_view mode = "low");
// A random permutation of arange(n), or of x along `axis` (each lane separately when
// independent), as jax.random.permutation.
Array permutation(const Array& key, std::int64_t n);
Array permutation(const Array& key, const Array& x, int axis = 0, bool independent = false);
// Samples from arange(n) or from `a` along `axis`, with or without replacement, uniformly or
// with weights p (1-D, length a.shape[axis]).
Array choice(const Array& key, std::int64_t n, const Shape& shape = {}, bool replace = true,
             const std::optional<Array>& p = std::nullopt);
Array choice(const Array& key, const Array& a, const Shape& shape = {}, bool replace = true,
             const std::optional<Array>& p = std::nullopt, int axis = 0);

}  // namespace linum::random
