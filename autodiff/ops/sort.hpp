// Sorting, searching and counting (jax.numpy / jax.lax names). Floats sort in JAX's total order:
// -inf < ... < -0.0 == 0.0 < ... < inf < NaN (NaNs last). Sorts are stable unless asked not to
// be; the gradients of sorted values flow through the sorting permutation.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum {

// lax.sort: sorts every operand along `dimension` by the first num_keys operands (compared
// lexicographically, the first key primary); all operands have the same shape.
Arrays lax_sort(const Arrays& operands, int dimension = -1, bool is_stable = true,
                int num_keys = 1);
// lax.sort_key_val: values reordered like the sorted keys.
std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, int dimension = -1,
                                     bool is_stable = true);

// jnp.sort / jnp.argsort along `axis` (nullopt: the flattened array). descending reverses the
// order; argsort keeps equal elements in their original order either way (stable, as JAX).
// argsort's indices are int32.
Array sort(const Array& a, std::optional<int> axis = -1, bool stable = true,
           bool descending = false);
Array argsort(const Array& a, std::optional<int> axis = -1, bool stable = true,
              bool descending = false);
// jnp.lexsort: the indices that sort by the last key first, then the one before it, ...
Array lexsort(const Arrays& keys, int axis = -1);

// lax.top_k: the k largest entries along `axis` and their int32 indices, largest first; equal
// values keep their order (lower index first). NaN counts as the largest value.
std::pair<Array, Array> top_k(const Array& operand, std::int64_t k, int axis = -1);

// jnp.partition / argpartition: entry kth is the one a sort would put there, smaller ones
// before it and larger ones after (in no particular order), built on two top_k calls as JAX.
Array partition(const Array& a, std::int64_t kth, int axis = -1);
Array argpartition(const Array& a, std::int64_t kth, int axis = -1);

// jnp.searchsorted: for each value of v, the index at which inserting it into the sorted 1-D
// array a keeps a sorted; left: before equal entries, right: after them. sorter: indices that
// sort a. Every method gives the same int32 result (they differ in speed in JAX).
enum class SearchSide { left, right };
enum class SearchMethod { scan, scan_unrolled, sort, compare_all };
Array searchsorted(const Array& a, const Array& v, SearchSide side = SearchSide::left,
                   const std::optional<Array>& sorter = std::nullopt,
                   SearchMethod method = SearchMethod::scan);

// The static size of nonzero-like results (JAX requires it under jit and vmap; eagerly it may
// be left out and is the number of nonzero entries). Missing entries are fill_value: one value
// for every output, or one per dimension (nonzero's tuple); zero by default.
struct SizeOptions {
  std::optional<std::int64_t> size = std::nullopt;
  std::vector<std::int64_t> fill_value = {};
};
// jnp.nonzero: one int32 index array per dimension of a (a must have at least one).
Arrays nonzero(const Array& a, const SizeOptions& options = {});
// jnp.where with only a condition: nonzero(condition).
Arrays where(const Array& condition, const SizeOptions& options = {});
// jnp.flatnonzero: nonzero of the flattened array.
Array flatnonzero(const Array& a, const SizeOptions& options = {});
// jnp.argwhere: the nonzero indices as rows, shape (size, a.ndim).
Array argwhere(const Array& a, const SizeOptions& options = {});

// jnp.compress: the slices of `a` along `axis` (nullopt: flattened) where condition is true;
// with a size, the first `size` of them, padded with fill_value.
Array compress(const Array& condition, const Array& a, std::optional<int> axis = std::nullopt,
               std::optional<std::int64_t> size = std::nullopt, double fill_value = 0);
// jnp.extract: compress of the flattened condition and array.
Array extract(const Array& condition, const Array& arr,
              std::optional<std::int64_t> size = std::nullopt, double fill_value = 0);

// jnp.unique of the flattened array: its distinct values in sorted order (all NaNs count as one).
// With a size (required under jit and vmap), the first `size` of them, padded with fill_value
// (by default the smallest value).
Array unique(const Array& ar, std::optional<std::int64_t> size = std::nullopt,
             std::optional<double> fill_value = std::nullopt);

}  // namespace linum
