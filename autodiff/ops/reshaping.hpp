// More of jax.numpy's shape manipulation: broadcasting several arrays or shapes together,
// rolling an axis, unstacking, resizing by repetition, trimming zeros, and jnp.block's nested
// concatenation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>

namespace linum {

// jnp.broadcast_shapes: the shape numpy broadcasting gives `shapes` (ValueError if they do not
// broadcast); no shapes give ().
Shape broadcast_shapes(const std::vector<Shape>& shapes);
// jnp.broadcast_arrays: every array broadcast to their common shape (dtypes unchanged).
Arrays broadcast_arrays(const Arrays& args);
// jnp.rollaxis: `axis` moved to just before position `start` (numpy's older moveaxis).
Array rollaxis(const Array& a, int axis, int start = 0);
// jnp.unstack: the slices of x along `axis`, each without that axis.
Arrays unstack(const Array& x, int axis = 0);
// jnp.resize: the flattened a repeated (and cut) to fill new_shape; zeros when a is empty.
Array resize(const Array& a, const Shape& new_shape);
// jnp.trim_zeros: filt without the leading ('f') and/or trailing ('b') slices that are all zero
// along each of `axis` (all axes by default). Needs a concrete filt (the result's shape depends
// on its values).
Array trim_zeros(const Array& filt, const std::string& trim = "fb", const Axes& axis = {});
// jnp.block: a nested list of arrays joined into one: the innermost lists along the last axis,
// the lists of those along the second to last, ... (arrays get leading 1s up to the depth).
Array block(const Arrays& arrays);
Array block(const std::vector<Arrays>& arrays);
Array block(const std::vector<std::vector<Arrays>>& arrays);

}  // namespace linum
