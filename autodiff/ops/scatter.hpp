// Gathers and scatters: lax.gather and the lax.scatter family with XLA's dimension numbers, and
// JAX's indexed updates, x.at[idx].set(v) spelled linum::at(x, idx).set(v).
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/shape.hpp>

namespace linum {

// lax.GatherScatterMode: what indices out of bounds do. clip: clamped so that the whole window
// is in range. fill_or_drop: a gather returns fill_value for the whole window, a scatter drops
// the whole window. promise_in_bounds: the caller promises they are in range; as with XLA,
// gathers then clamp and scatters drop.
enum class GatherScatterMode { clip, fill_or_drop, promise_in_bounds };

// lax.GatherDimensionNumbers; the index vector is always the last axis of start_indices.
struct GatherDimensionNumbers {
  std::vector<int> offset_dims;           // output axes that hold the window (ascending)
  std::vector<int> collapsed_slice_dims;  // operand axes of window size 1 left out of the output
  std::vector<int> start_index_map;       // operand axis of each index component
  std::vector<int> operand_batching_dims = {};        // operand axes paired with ...
  std::vector<int> start_indices_batching_dims = {};  // ... these start_indices axes
};

struct GatherOptions {
  GatherScatterMode mode = GatherScatterMode::promise_in_bounds;  // lax.gather's default
  // fill_or_drop's value: NaN for floats, the lowest int32, the largest uint32, true for bool.
  std::optional<double> fill_value = std::nullopt;
  bool indices_are_sorted = false;  // hints, accepted as in JAX (the CPU kernel needs neither)
  bool unique_indices = false;
};

// lax.gather: the windows of `slice_sizes` of operand that start at start_indices.
Array gather(const Array& operand, const Array& start_indices,
             const GatherDimensionNumbers& dimension_numbers, const Shape& slice_sizes,
             const GatherOptions& options = {});

// lax.ScatterDimensionNumbers; the index vector is always the last axis of scatter_indices.
struct ScatterDimensionNumbers {
  std::vector<int> update_window_dims;            // axes of updates that hold the window
  std::vector<int> inserted_window_dims;          // operand axes of window size 1 not in updates
  std::vector<int> scatter_dims_to_operand_dims;  // operand axis of each index component
  std::vector<int> operand_batching_dims = {};
  std::vector<int> scatter_indices_batching_dims = {};
};

struct ScatterOptions {
  GatherScatterMode mode = GatherScatterMode::fill_or_drop;  // lax.scatter's default
  bool indices_are_sorted = false;
  // A promise that no two windows overlap: scatter's gradient then skips finding the update
  // that won each position, and scatter_mul's gradient with respect to updates needs it (JAX).
  bool unique_indices = false;
};

// lax.scatter (replace), scatter_add, scatter_sub, scatter_mul, scatter_min, scatter_max: the
// operand with each window of updates combined into it; updates have the operand's dtype.
Array scatter(const Array& operand, const Array& scatter_indices, const Array& updates,
              const ScatterDimensionNumbers& dimension_numbers, const ScatterOptions& options = {});
Array scatter_add(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  const ScatterOptions& options = {});
Array scatter_sub(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  const ScatterOptions& options = {});
Array scatter_mul(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  const ScatterOptions& options = {});
Array scatter_min(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  const ScatterOptions& options = {});
Array scatter_max(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  const ScatterOptions& options = {});

// ---- x.at[...] ----------------------------------------------------------------------------

// One entry of an index tuple, as numpy indexing: an integer (negative counts from the end), a
// static Slice, or an integer Array (advanced indexing; several broadcast together). A bool
// Array with a concrete value selects where it is true (numpy's boolean mask).
class Index {
 public:
  Index(int i) : v_(std::int64_t{i}) {}  // NOLINT(google-explicit-constructor): x.at[1]
  Index(std::int64_t i) : v_(i) {}       // NOLINT(google-explicit-constructor)
  Index(Slice s) : v_(s) {}              // NOLINT(google-explicit-constructor): x.at[1:3]
  Index(Array a) : v_(std::move(a)) {}   // NOLINT(google-explicit-constructor): x.at[idx]
  const std::variant<std::int64_t, Slice, Array>& value() const { return v_; }

 private:
  std::variant<std::int64_t, Slice, Array> v_;
};

struct AtOptions {
  // Default: get() clamps (JAX's promise_in_bounds for indexing), updates drop (fill_or_drop).
  std::optional<GatherScatterMode> mode = std::nullopt;
  std::optional<double> fill_value = std::nullopt;  // get() with fill_or_drop
  bool indices_are_sorted = false;
  bool unique_indices = false;
};

// JAX's x.at[index]: a functional view for indexed reads and updates. Each update returns a new
// array of x's shape and dtype (values are promoted with x, combined, and cast back to x's dtype).
// With repeated indices, add/multiply/min/max combine every update and set keeps the last one.
class IndexUpdateRef {
 public:
  IndexUpdateRef(Array x, std::vector<Index> index) : x_(std::move(x)), index_(std::move(index)) {}
  Array get(const AtOptions& options = {}) const;
  Array set(const Array& values, const AtOptions& options = {}) const;
  Array add(const Array& values, const AtOptions& options = {}) const;
  Array subtract(const Array& values, const AtOptions& options = {}) const;
  Array multiply(const Array& values, const AtOptions& options = {}) const;
  Array divide(const Array& values, const AtOptions& options = {}) const;
  Array power(const Array& values, const AtOptions& options = {}) const;
  Array min(const Array& values, const AtOptions& options = {}) const;
  Array max(const Array& values, const AtOptions& options = {}) const;

 private:
  Array x_;
  std::vector<Index> index_;
};

// linum::at(x, i).add(v) is x.at[i].add(v); at(x, {0, Slice{1, 3}, idx}) is x.at[0, 1:3, idx].
IndexUpdateRef at(const Array& x, Index index);
IndexUpdateRef at(const Array& x, std::vector<Index> index);

}  // namespace linum
