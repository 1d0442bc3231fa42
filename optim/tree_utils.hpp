// optax.tree_utils over any pytree of Arrays: zeros_like / full_like / cast, leafwise arithmetic,
// vdot / sum / l2 norm, and the moment updates and bias correction the optimizers share.
// An empty Array() leaf stands for optax's MaskedNode (a leaf that masked() leaves out): every
// helper maps leaves with linum::detail::tree_apply_skip_empty, which passes it through
// untouched, and reductions skip it.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
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
// 1 - decay**count, the divisor of bias_correction for a moment of that dtype: float64 for
// float64, else float32 (bias_correction casts it to the moment's dtype before dividing).
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

// a + b (+ more trees), leafwise.
template <class T, class... More>
T tree_add(const T& a, const T& b, const More&... more) {
  return linum::detail::tree_apply_skip_empty(
      a, [](const Array& x, const Array& y, const auto&... z) { return (add(x, y) + ... + z); }, b,
      more...);
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

// optax.tree_utils.tree_norm: the 2-norm (ord 2, the default), 1-norm (ord 1) or max-norm
// (ord "inf") of all leaves together; squared squares it. ValueError for another ord.
template <class T>
Array tree_norm(const T& t, const std::string& ord = "2", bool squared = false);

// The largest / smallest element over all leaves (-inf / inf for a tree without elements).
template <class T>
Array tree_max(const T& t) {
  Array acc;
  for (const Array& x : linum::detail::tree_arrays(t)) {
    if (!x.valid() || x.size() == 0) continue;
    acc = acc.valid() ? maximum(acc, max(x)) : max(x);
  }
  return acc.valid() ? acc : Array(-std::numeric_limits<float>::infinity());
}
template <class T>
Array tree_min(const T& t) {
  Array acc;
  for (const Array& x : linum::detail::tree_arrays(t)) {
    if (!x.valid() || x.size() == 0) continue;
    acc = acc.valid() ? minimum(acc, min(x)) : min(x);
  }
  return acc.valid() ? acc : Array(std::numeric_limits<float>::infinity());
}

template <class T>
Array tree_norm(const T& t, const std::string& ord, bool squared) {
  if (ord == "2") return tree_l2_norm(t, squared);
  Array r;
  if (ord == "1")
    r = detail::sum_over_leaves(t, [](const Array& x) { return sum(abs(x)); });
  else if (ord == "inf" || ord == "infinity")
    r = tree_max(linum::detail::tree_apply_skip_empty(t, [](const Array& x) { return abs(x); }));
  else
    throw ValueError("tree_norm: Unsupported ord: " + ord + " (expected \"1\", \"2\" or \"inf\")");
  return squared ? r * r : r;
}

// The number of elements over all leaves.
template <class T>
std::int64_t tree_size(const T& t) {
  std::int64_t n = 0;
  for (const Array& x : linum::detail::tree_arrays(t))
    if (x.valid()) n += x.size();
  return n;
}

// clip(x, min_value, max_value) leafwise (a bound std::nullopt is not applied).
template <class T>
T tree_clip(const T& t, std::optional<double> min_value = std::nullopt,
            std::optional<double> max_value = std::nullopt) {
  return linum::detail::tree_apply_skip_empty(t, [&](const Array& x) {
    Array y = x;
    if (min_value) y = maximum(y, *min_value);
    if (max_value) y = minimum(y, *max_value);
    return y;
  });
}

// where(condition, x, y) leafwise (one condition for every leaf).
template <class T>
T tree_where(const Array& condition, const T& x, const T& y) {
  return linum::detail::tree_apply_skip_empty(
      x, [&](const Array& a, const Array& b) { return where(condition, a, b); }, y);
}

// Whether every leaf of a is close to the matching leaf of b (numpy's allclose).
template <class T>
bool tree_allclose(const T& a, const T& b, double rtol = 1e-5, double atol = 1e-8,
                   bool equal_nan = false) {
  Arrays xs = linum::detail::tree_arrays(a), ys = linum::detail::tree_arrays(b);
  if (xs.size() != ys.size())
    throw ValueError("tree_allclose: the trees have " + std::to_string(xs.size()) + " and " +
                     std::to_string(ys.size()) + " leaves");
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].valid() && !ys[i].valid()) continue;
    Array x = astype(xs[i], float64), y = astype(ys[i], float64);
    Array close = abs(x - y) <= atol + rtol * abs(y);
    close = logical_or(close, equal(x, y));  // equal infinities
    if (equal_nan) close = logical_or(close, logical_and(isnan(x), isnan(y)));
    if (!all(close).concrete().item<bool>()) return false;
  }
  return true;
}

// Every leaf broadcast to shape + its own shape (a batch of copies).
template <class T>
T tree_batch_shape(const T& t, const Shape& shape = {}) {
  return linum::detail::tree_apply_skip_empty(t, [&](const Array& x) {
    Shape s = shape;
    s.insert(s.end(), x.shape().begin(), x.shape().end());
    return broadcast_to(x, s);
  });
}

// optax.tree_utils.tree_dtype(tree, mixed_dtype_handler): the leaves' common dtype; with leaves
// of several dtypes, ValueError unless mixed_dtype_handler is "promote" (their promoted dtype)
// or "highest" / "lowest" (the widest / narrowest of them).
template <class T>
DType tree_dtype(const T& t, const std::string& mixed_dtype_handler = "");

// optax.tree_utils.tree_real / tree_conj: jnp.real / jnp.conj of every leaf (real leaves pass
// through).
template <class T>
T tree_real(const T& t) {
  return linum::detail::tree_apply_skip_empty(t, [](const Array& x) { return real(x); });
}
template <class T>
T tree_conj(const T& t) {
  return linum::detail::tree_apply_skip_empty(t, [](const Array& x) { return conj(x); });
}

// linum's keys are raw uint32[2] data already: the identity.
template <class T>
T tree_unwrap_random_key_data(const T& t) {
  return t;
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

// max(|g| + eps, decay * moment) (the infinity-norm moment of Adamax).
template <class T, class M>
M tree_update_infinity_moment(const T& updates, const M& moments, double decay, double eps) {
  return linum::detail::tree_apply_skip_empty(
      moments, [&](const Array& m, const Array& g) { return maximum(abs(g) + eps, decay * m); },
      updates);
}

// moment / (1 - decay**count), the correction computed in the moment's dtype.
template <class M>
M tree_bias_correction(const M& moments, double decay, const Array& count) {
  return linum::detail::tree_apply_skip_empty(
      moments, [&](const Array& m) { return detail::bias_correction(m, decay, count); });
}

}  // namespace tree_utils

namespace detail {
DType dtype_of_leaves(const Arrays& leaves, const std::string& mixed_dtype_handler);
}
namespace tree_utils {
template <class T>
DType tree_dtype(const T& t, const std::string& mixed_dtype_handler) {
  return detail::dtype_of_leaves(linum::detail::tree_arrays(t), mixed_dtype_handler);
}
}  // namespace tree_utils

// optax.global_norm.
template <class T>
Array global_norm(const T& updates) {
  return tree_utils::tree_l2_norm(updates);
}

}  // namespace linum::optim
