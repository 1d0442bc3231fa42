// jax.numpy's set operations on flattened arrays: the Array API's unique_* family, union1d,
// intersect1d, setdiff1d, setxor1d and isin, built from sort, nonzero and scatters as JAX builds
// them. Results whose length depends on the values need a concrete input, or a static `size`
// (then they run under jit and vmap): the first `size` results, padded with fill_value.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>

#include <linum/autodiff/array.hpp>

namespace linum {

// ---- the Array API's unique functions ---------------------------------------------------------
// Distinct values of the flattened array in sorted order, where every NaN counts as a value of
// its own (equal_nan=False, unlike linum::unique). Padding: fill_value, by default the smallest
// value. indices: the first position of each value in the flattened x; inverse_indices (x's
// shape): the position of each entry's value in `values`; counts: how often each value occurs
// (0 in the padding). Index arrays are int32.
struct UniqueAllResult {
  Array values, indices, inverse_indices, counts;
};
struct UniqueCountsResult {
  Array values, counts;
};
struct UniqueInverseResult {
  Array values, inverse_indices;
};
UniqueAllResult unique_all(const Array& x, std::optional<std::int64_t> size = std::nullopt,
                           std::optional<double> fill_value = std::nullopt);
UniqueCountsResult unique_counts(const Array& x, std::optional<std::int64_t> size = std::nullopt,
                                 std::optional<double> fill_value = std::nullopt);
UniqueInverseResult unique_inverse(const Array& x, std::optional<std::int64_t> size = std::nullopt,
                                   std::optional<double> fill_value = std::nullopt);
Array unique_values(const Array& x, std::optional<std::int64_t> size = std::nullopt,
                    std::optional<double> fill_value = std::nullopt);

// ---- set operations on 1-D arrays (inputs are flattened and promoted together) ---------------
// jnp.union1d: the sorted distinct values of both. Padding: fill_value, else the smallest value.
Array union1d(const Array& ar1, const Array& ar2, std::optional<std::int64_t> size = std::nullopt,
              std::optional<double> fill_value = std::nullopt);
// jnp.intersect1d: the sorted values in both. assume_unique promises inputs without repeats.
// Padding: fill_value, else the smallest result.
Array intersect1d(const Array& ar1, const Array& ar2, bool assume_unique = false,
                  std::optional<std::int64_t> size = std::nullopt,
                  std::optional<double> fill_value = std::nullopt);
// jnp.intersect1d with return_indices=True: the values and, for each, its first index in the
// flattened ar1 and in ar2 (int32; padding entries hold ar1.size / ar2.size).
std::tuple<Array, Array, Array> intersect1d_indices(
    const Array& ar1, const Array& ar2, bool assume_unique = false,
    std::optional<std::int64_t> size = std::nullopt,
    std::optional<double> fill_value = std::nullopt);
// jnp.setdiff1d: the sorted distinct values of ar1 that are not in ar2 (ar1's dtype). Padding:
// fill_value, else 0.
Array setdiff1d(const Array& ar1, const Array& ar2, bool assume_unique = false,
                std::optional<std::int64_t> size = std::nullopt,
                std::optional<double> fill_value = std::nullopt);
// jnp.setxor1d: the sorted values in exactly one of the two. Padding: fill_value, else the
// smallest result.
Array setxor1d(const Array& ar1, const Array& ar2, bool assume_unique = false,
               std::optional<std::int64_t> size = std::nullopt,
               std::optional<double> fill_value = std::nullopt);

// jnp.isin: for each entry of `element` (bool, element's shape), whether it equals some entry of
// test_elements (invert: whether it equals none). The methods give the same result: compare_all
// (the default of `auto`) compares every pair, binary_search sorts test_elements and searches,
// sort sorts both together.
enum class IsinMethod { auto_, compare_all, binary_search, sort };
Array isin(const Array& element, const Array& test_elements, bool assume_unique = false,
           bool invert = false, IsinMethod method = IsinMethod::auto_);

// jnp.sort_complex: a sorted along its last axis by real part, then imaginary part, as a complex
// array (real inputs become complex64 / complex128).
Array sort_complex(const Array& a);

}  // namespace linum
