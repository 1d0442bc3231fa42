// optax.tree_utils over any pytree of Arrays: zeros_like / full_like / cast, leafwise arithmetic,
// vdot / sum / l2 norm, and the moment updates and bias correction the optimizers share.
// An empty Array() leaf stands for optax's MaskedNode (a leaf that masked() leaves out): every
// helper maps leaves with linum::detail::tree_apply_skip_empty, which passes it through
// untouched, and reductions skip it.
#pragma once

#include <optional>
#include <type_traits>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/tree_bridge.hpp>
#include <linum/pytree/tree_util.hpp>

namespace linum::optim {

namespace detail {

// Leaf math shared by the transformations (numerics.cpp).
Array update_moment(const Array& g, const Array& m, double decay, int order);
Array update_moment_per_elem_norm(const Array& g, const Array& m, double decay, int order);
Array bias_correction(const Array& moment, double decay, const Array& count);
// 1 - decay**count, the divisor of bias_correction for a moment of that dtype.
Array bias_correction_denominator(double decay, const Array& count, DType dtype);
Array cast(const Array& x, std::optional<DType> dtype);
Array sum_of_squares(const Array& x);

// f(leaf) (a rank-0 Array) summed over the non-empty leaves of t; 0.0 when there are none.
template <class T, class F>
Array sum_over_leaves(const T& t, F&& f) {
  Array acc;
  for (const Array& x : linum::detail::tree_arrays(t)) {
    if (!x.valid()) continue;
    Array s = f(x);
    acc = acc.valid() ? acc + s : s;
  }
  return acc.valid() ? acc : Array(0.0f);
}

}  // namespace detail

namespace tree_utils {

// zeros_like(params, dtype): dtype None keeps each leaf's dtype.
template <class T>
T tree_zeros_like(const T& t, std::optional<DType> dtype = std::nullopt) {
  return linum::detail::tree_apply_skip_empty(
      t, [&](const Array& x) { return zeros(x.shape(), dtype.value_or(x.dtype())); });
}

template <class T>
T tree_ones_like(const T& t, std::optional<DType> dtype = std::nullopt) {
  return linum::detail::tree_apply_skip_empty(
      t, [&](const Array& x) { return ones(x.shape(), dtype.value_or(x.dtype())); });
}

template <class T>
T tree_full_like(const T& t, double fill_value, std::optional<DType> dtype = std::nullopt) {
  return linum::detail::tree_apply_skip_empty(
      t, [&](const Array& x) { return full(x.shape(), fill_value, dtype.value_or(x.dtype())); });
}

// optax.tree_utils.tree_cast: every leaf to dtype (None: unchanged).
template <class T>
T tree_cast(const T& t, std::optional<DType> dtype) {
  if (!dtype) return t;
  return linum::detail::tree_apply_skip_empty(t, [&](const Array& x) { return astype(x, *dtype); });
}

// Casts every leaf of t to the dtype of the matching leaf of like.
template <class T>
T tree_cast_like(const T& t, const T& like) {
  return linum::detail::tree_apply_skip_empty(
      t, [](const Array& x, const Array& l) { return astype(x, l.dtype()); }, like);
}

template <class T>
T tree_add(const T& a, const T& b) {
  return linum::detail::tree_apply_skip_empty(
      a, [](const Array& x, const Array& y) { return add(x, y); }, b);
}
template <class T>
T tree_sub(const T& a, const T& b) {
  return linum::detail::tree_apply_skip_empty(
      a, [](const Array& x, const Array& y) { return subtract(x, y); }, b);
}
template <class T>
T tree_mul(const T& a, const T& b) {
  return linum::detail::tree_apply_skip_empty(
      a, [](const Array& x, const Array& y) { return multiply(x, y); }, b);
}
template <class T>
T tree_div(const T& a, const T& b) {
  return linum::detail::tree_apply_skip_empty(
      a, [](const Array& x, const Array& y) { return divide(x, y); }, b);
}
// scalar * tree (the scalar is weakly typed: float32 leaves stay float32).
template <class T>
T tree_scale(double scalar, const T& t) {
  return linum::detail::tree_apply_skip_empty(t, [scalar](const Array& x) { return scalar * x; });
}
// a + scalar * b.
template <class T>
T tree_add_scale(const T& a, double scalar, const T& b) {
  return linum::detail::tree_apply_skip_empty(
      a, [scalar](const Array& x, const Array& y) { return x + scalar * y; }, b);
}

// Sum of every element of every leaf (a rank-0 Array; 0.0 for a tree without leaves).
template <class T>
Array tree_sum(const T& t) {
  return detail::sum_over_leaves(t, [](const Array& x) { return sum(x); });
}

// <a, b> summed over all leaves.
template <class T>
Array tree_vdot(const T& a, const T& b) {
  return tree_sum(tree_mul(a, b));
}

// Euclidean norm of all leaves together (optax.tree_utils.tree_l2_norm / optax.global_norm);
// squared=true skips the square root.
template <class T>
Array tree_l2_norm(const T& t, bool squared = false) {
  Array acc = detail::sum_over_leaves(t, detail::sum_of_squares);
  return squared ? acc : sqrt(acc);
}

// decay * moment + (1 - decay) * g**order.
template <class T, class M>
M tree_update_moment(const T& updates, const M& moments, double decay, int order) {
  return linum::detail::tree_apply_skip_empty(
      moments,
      [&](const Array& m, const Array& g) { return detail::update_moment(g, m, decay, order); },
      updates);
}

// decay * moment + (1 - decay) * |g|**order (|g|^2 = g * g for real leaves).
template <class T, class M>
M tree_update_moment_per_elem_norm(const T& updates, const M& moments, double decay, int order) {
  return linum::detail::tree_apply_skip_empty(
      moments,
      [&](const Array& m, const Array& g) {
        return detail::update_moment_per_elem_norm(g, m, decay, order);
      },
      updates);
}

// moment / (1 - decay**count), the correction computed in the moment's dtype.
template <class M>
M tree_bias_correction(const M& moments, double decay, const Array& count) {
  return linum::detail::tree_apply_skip_empty(
      moments, [&](const Array& m) { return detail::bias_correction(m, decay, count); });
}

}  // namespace tree_utils

// optax.global_norm.
template <class T>
Array global_norm(const T& updates) {
  return tree_utils::tree_l2_norm(updates);
}

}  // namespace linum::optim
