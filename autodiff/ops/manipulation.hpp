// Array manipulation (jax.numpy / jax.lax names): padding, flips and rolls, tiling and repeats,
// stacking and splitting, triangles and diagonals, grids, insert and delete.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>
#include <linum/autodiff/ops/shape.hpp>

namespace linum {

// ---- padding ----------------------------------------------------------------------------------

// One axis of lax.pad's padding_config: `low` / `high` entries before / after (negative values
// crop), and `interior` entries between neighbours.
struct PadDim {
  std::int64_t low = 0, high = 0, interior = 0;
};
// lax.pad: padding_value is a scalar of operand's dtype (a weakly typed scalar converts); the
// result is differentiable in both.
Array lax_pad(const Array& operand, const Array& padding_value, const std::vector<PadDim>& config);

// jnp.pad's modes. constant: constant_values; edge: the edge value; reflect / symmetric: the
// mirror image without / with the edge; wrap: the other end; linear_ramp: from the edge to
// end_values; maximum / minimum / mean / median: the statistic of the stat_length entries nearest
// each side (all entries by default); empty: zeros (jax.numpy's empty).
enum class PadMode {
  constant,
  edge,
  reflect,
  symmetric,
  wrap,
  linear_ramp,
  maximum,
  minimum,
  mean,
  median,
  empty
};
enum class ReflectType { even, odd };  // odd: reflect about the edge value (2 * edge - x)

// Per-axis (before, after) pairs; one pair applies to every axis (numpy's broadcasting).
using PadWidth = std::vector<std::pair<std::int64_t, std::int64_t>>;
struct PadOptions {
  PadMode mode = PadMode::constant;
  std::vector<std::pair<double, double>> constant_values = {};  // empty: 0
  std::vector<std::pair<double, double>> end_values = {};       // linear_ramp; empty: 0
  PadWidth stat_length = {};                                    // empty: the whole axis
  ReflectType reflect_type = ReflectType::even;
};
// jnp.pad: pad_width entries must be non-negative.
Array pad(const Array& array, const PadWidth& pad_width, const PadOptions& options = {});
Array pad(const Array& array, std::int64_t pad_width, const PadOptions& options = {});

// ---- flips, rolls, repeats --------------------------------------------------------------------

Array flip(const Array& m, const Axes& axis = {});  // jnp.flip (lax.rev); all axes by default
Array rev(const Array& operand, const std::vector<int>& dimensions);  // lax.rev
Array fliplr(const Array& m);                                         // flip(m, 1)
Array flipud(const Array& m);                                         // flip(m, 0)
// jnp.rot90: k quarter turns from the first towards the second of `axes`.
Array rot90(const Array& m, int k = 1, std::pair<int, int> axes = {0, 1});
Array swapaxes(const Array& a, int axis1, int axis2);
// jnp.roll: elements shifted along axis (nullopt: the flattened array, reshaped back), wrapping
// around. A shift Array (a scalar or one per axis) may be traced.
Array roll(const Array& a, std::int64_t shift, std::optional<int> axis = std::nullopt);
Array roll(const Array& a, const std::vector<std::int64_t>& shift, const std::vector<int>& axis);
Array roll(const Array& a, const Array& shift, std::optional<std::vector<int>> axis = std::nullopt);
// jnp.tile: A repeated reps times along each axis (reps padded with leading 1s, or A with
// leading axes, to the same length).
Array tile(const Array& A, const std::vector<std::int64_t>& reps);
// jnp.repeat: each entry repeated along axis (nullopt: of the flattened array). repeats is one
// count for all or one per entry; a repeats Array may be traced when total_repeat_length fixes
// the length (the result is cut or padded with the last entry to it, as in JAX).
Array repeat(const Array& a, std::int64_t repeats, std::optional<int> axis = std::nullopt,
             std::optional<std::int64_t> total_repeat_length = std::nullopt);
Array repeat(const Array& a, const std::vector<std::int64_t>& repeats,
             std::optional<int> axis = std::nullopt,
             std::optional<std::int64_t> total_repeat_length = std::nullopt);
Array repeat(const Array& a, const Array& repeats, std::optional<int> axis = std::nullopt,
             std::optional<std::int64_t> total_repeat_length = std::nullopt);

// ---- stacking and splitting --------------------------------------------------------------------

Array atleast_1d(const Array& x);
Array atleast_2d(const Array& x);       // a 1-D x becomes a row (1, n)
Array atleast_3d(const Array& x);       // (n,) -> (1, n, 1); (n, m) -> (n, m, 1)
Array hstack(const Arrays& tup);        // along axis 1 (axis 0 for 1-D arrays)
Array vstack(const Arrays& tup);        // rows: atleast_2d, along axis 0
Array dstack(const Arrays& tup);        // atleast_3d, along axis 2
Array column_stack(const Arrays& tup);  // 1-D arrays as columns, along axis 1
// numpy.array_split: like split, but `sections` need not divide the axis (the first n % sections
// pieces get one entry more).
Arrays array_split(const Array& x, std::int64_t sections, int axis = 0);
Arrays array_split(const Array& x, const std::vector<std::int64_t>& indices, int axis = 0);
Arrays hsplit(const Array& x, std::int64_t sections);  // split along axis 1 (0 for 1-D)
Arrays hsplit(const Array& x, const std::vector<std::int64_t>& indices);
Arrays vsplit(const Array& x, std::int64_t sections);  // axis 0 of an array of rank >= 2
Arrays vsplit(const Array& x, const std::vector<std::int64_t>& indices);
Arrays dsplit(const Array& x, std::int64_t sections);  // axis 2 of an array of rank >= 3
Arrays dsplit(const Array& x, const std::vector<std::int64_t>& indices);

// jnp.append: values after arr along axis (nullopt: both flattened).
Array append(const Array& arr, const Array& values, std::optional<int> axis = std::nullopt);
// jnp.insert: values inserted before the given indices along axis (nullopt: flattened); an
// index Array may be traced. Values broadcast to the inserted slices.
Array insert(const Array& arr, std::int64_t obj, const Array& values,
             std::optional<int> axis = std::nullopt);
Array insert(const Array& arr, const Slice& obj, const Array& values,
             std::optional<int> axis = std::nullopt);
Array insert(const Array& arr, const Array& obj, const Array& values,
             std::optional<int> axis = std::nullopt);
// jnp.delete (`delete` is a C++ keyword): arr without the given entries along axis (nullopt:
// flattened). An index Array needs a concrete value unless assume_unique_indices promises no
// repeats (then it may be traced); a bool Array is a mask of the entries to delete.
Array delete_(const Array& arr, std::int64_t obj, std::optional<int> axis = std::nullopt);
Array delete_(const Array& arr, const Slice& obj, std::optional<int> axis = std::nullopt);
Array delete_(const Array& arr, const Array& obj, std::optional<int> axis = std::nullopt,
              bool assume_unique_indices = false);

// ---- triangles, diagonals, grids -------------------------------------------------------------

// jnp.tri: ones at and below the k-th diagonal of an N x M matrix (M defaults to N).
Array tri(std::int64_t N, std::optional<std::int64_t> M = std::nullopt, std::int64_t k = 0,
          DType dtype = float32);
Array tril(const Array& m, std::int64_t k = 0);  // entries above the k-th diagonal zeroed
Array triu(const Array& m, std::int64_t k = 0);  // entries below the k-th diagonal zeroed
Array identity(std::int64_t n, DType dtype = float32);
// jnp.diagonal: the diagonal at `offset` of the (axis1, axis2) matrices, as a new last axis.
Array diagonal(const Array& a, std::int64_t offset = 0, int axis1 = 0, int axis2 = 1);
// jnp.diag: the k-th diagonal of a 2-D array, or a 2-D array with a 1-D v on its k-th diagonal.
Array diag(const Array& v, std::int64_t k = 0);
Array diagflat(const Array& v, std::int64_t k = 0);  // diag of the flattened v
// jnp.trace: the sum of diagonal(a, offset, axis1, axis2) (bool sums as int32).
Array trace(const Array& a, std::int64_t offset = 0, int axis1 = 0, int axis2 = 1,
            std::optional<DType> dtype = std::nullopt);
// jnp.meshgrid of 1-D arrays: xy (Cartesian, the default) swaps the first two output axes of ij
// (matrix) indexing; sparse keeps size-1 axes instead of broadcasting.
enum class MeshIndexing { xy, ij };
Arrays meshgrid(const Arrays& xi, MeshIndexing indexing = MeshIndexing::xy, bool sparse = false);
// jnp.indices: out[i] holds the index along axis i of a grid of `dimensions`, shape (n, *dims).
Array indices(const Shape& dimensions, DType dtype = int32);

}  // namespace linum
