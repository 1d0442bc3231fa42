// Shape and indexing ops: reshape, transpose, broadcasting, joining, slicing, gathering.
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>

namespace linum {

Array reshape(const Array& x, const Shape& shape);  // one dimension may be -1
Array ravel(const Array& x);
Array transpose(const Array& x, std::vector<int> axes = {});  // empty: reverse the axes
Array moveaxis(const Array& x, int source, int destination);
Array expand_dims(const Array& x, int axis);
Array squeeze(const Array& x, const Axes& axis = {});
Array broadcast_to(const Array& x, const Shape& shape);
Array concatenate(const Arrays& xs, int axis = 0);
Array stack(const Arrays& xs, int axis = 0);
// Split into `sections` equal parts, or at the given indices (numpy.split).
Arrays split(const Array& x, std::int64_t sections, int axis = 0);
Arrays split(const Array& x, const std::vector<std::int64_t>& indices, int axis = 0);

// One axis of a static slice; like Python's start:stop:step, with nullopt for an omitted bound.
struct Slice {
  std::optional<std::int64_t> start, stop;
  std::int64_t step = 1;
};
// x[s0, s1, ...]: slices for the leading axes, the rest are taken whole.
Array slice(const Array& x, const std::vector<Slice>& slices);
// lax.slice: start/limit/strides per axis.
Array lax_slice(const Array& x, const std::vector<std::int64_t>& start,
                const std::vector<std::int64_t>& limit, std::vector<std::int64_t> strides = {});
// lax.dynamic_slice: start indices are clamped so that the slice fits, as in JAX.
Array dynamic_slice(const Array& x, const Arrays& start, const std::vector<std::int64_t>& sizes);
Array dynamic_slice(const Array& x, const std::vector<std::int64_t>& start,
                    const std::vector<std::int64_t>& sizes);
// Literal start indices, dynamic_slice(x, {1, 2}, {2, 2}): braces of ints would otherwise be
// ambiguous between the two overloads above.
Array dynamic_slice(const Array& x, std::initializer_list<std::int64_t> start,
                    const std::vector<std::int64_t>& sizes);
Array dynamic_update_slice(const Array& x, const Array& update, const Arrays& start);
Array dynamic_update_slice(const Array& x, const Array& update,
                           const std::vector<std::int64_t>& start);
Array dynamic_update_slice(const Array& x, const Array& update,
                           std::initializer_list<std::int64_t> start);
// Out-of-bounds indices of take / take_along_axis, as jnp's `mode`: `fill` (the default) counts
// negative indices from the end and reads fill_value elsewhere outside the axis (NaN for floats,
// the minimum of signed ints, the maximum of unsigned ones, true for bool); `clip` clamps the raw
// index into [0, n - 1]; `promise_in_bounds` trusts the caller (linum clamps as well); `wrap`
// takes the index modulo n (Python's, so -1 is the last entry).
enum class GatherMode { fill, clip, promise_in_bounds, wrap };

// jnp.take / take_along_axis with integer indices.
Array take(const Array& x, const Array& indices, std::optional<int> axis = std::nullopt,
           GatherMode mode = GatherMode::fill, std::optional<double> fill_value = std::nullopt);
Array take_along_axis(const Array& x, const Array& indices, int axis,
                      GatherMode mode = GatherMode::fill,
                      std::optional<double> fill_value = std::nullopt);

}  // namespace linum
