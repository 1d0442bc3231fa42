// Reductions over axes (axis=None reduces everything), and the jax.nn functions built on them.
#pragma once

#include <optional>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>

namespace linum {

Array sum(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array mean(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array max(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array min(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array prod(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array all(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array any(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array var(const Array& x, const Axes& axis = {}, bool keepdims = false, int ddof = 0);
// argmax/argmin over one axis (or the flattened array when axis is absent), int32 result.
Array argmax(const Array& x, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array argmin(const Array& x, std::optional<int> axis = std::nullopt, bool keepdims = false);

Array logsumexp(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array softmax(const Array& x, const Axes& axis = -1);
Array log_softmax(const Array& x, const Axes& axis = -1);
// jax.nn.standardize: (x - mean) * rsqrt(variance + epsilon) over `axis`; a missing variance is
// mean(x²) - mean², as JAX computes it. jax.nn.normalize is the same function.
Array standardize(const Array& x, const Axes& axis = -1,
                  const std::optional<Array>& mean = std::nullopt,
                  const std::optional<Array>& variance = std::nullopt, double epsilon = 1e-5);
// One-hot encoding of integer labels along a new last axis (jax.nn.one_hot).
Array one_hot(const Array& labels, std::int64_t num_classes, DType dtype = float32);

}  // namespace linum
