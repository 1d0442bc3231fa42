// Index arithmetic and indexed updates of jax.numpy: the indices of triangles, diagonals and
// masks, flat <-> multi-dimensional indices, open meshes (ix_), choose, and the functional forms
// of numpy's in-place writers (put, put_along_axis, place, fill_diagonal: JAX arrays are
// immutable, so they return the updated array, as JAX's inplace=False). Index arrays are int32.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/scatter.hpp>

namespace linum {

// ---- indices of triangles, diagonals and masks ----------------------------------------------
// jnp.triu_indices / tril_indices: the (row, column) indices of the upper / lower triangle from
// diagonal k of an n x m matrix (m defaults to n), in row-major order.
std::pair<Array, Array> triu_indices(std::int64_t n, std::int64_t k = 0,
                                     std::optional<std::int64_t> m = std::nullopt);
std::pair<Array, Array> tril_indices(std::int64_t n, std::int64_t k = 0,
                                     std::optional<std::int64_t> m = std::nullopt);
// The same for the shape of a 2-D array.
std::pair<Array, Array> triu_indices_from(const Array& arr, std::int64_t k = 0);
std::pair<Array, Array> tril_indices_from(const Array& arr, std::int64_t k = 0);
// jnp.diag_indices: ndim copies of arange(n), the indices of the main diagonal of an
// n x ... x n array; diag_indices_from takes n and ndim from such an array.
Arrays diag_indices(std::int64_t n, int ndim = 2);
Arrays diag_indices_from(const Array& arr);
// jnp.mask_indices: the indices where mask_func(ones((n, n)), k) is nonzero (mask_func is e.g.
// triu or tril); size as for nonzero.
using MaskFunc = std::function<Array(const Array&, std::int64_t)>;
std::pair<Array, Array> mask_indices(std::int64_t n, const MaskFunc& mask_func, std::int64_t k = 0,
                                     std::optional<std::int64_t> size = std::nullopt);

// ---- flat and multi-dimensional indices ------------------------------------------------------
// What ravel_multi_index / choose do with out-of-range indices: raise (needs concrete indices),
// wrap (modulo the dimension), clip (into range), ignore (trust the caller; ravel_multi_index).
enum class IndexMode { raise, wrap, clip, ignore };
// jnp.unravel_index: the multi-dimensional indices of flat indices into `shape` (C order), one
// array per dimension. Out-of-range indices clamp as JAX's: above the end to the last entry,
// below -size to the first; negative ones in range count from the end.
Arrays unravel_index(const Array& indices, const Shape& shape);
// jnp.ravel_multi_index: the flat indices of multi_index (one integer array per dimension of
// dims) in C or F ('C' / 'F') order.
Array ravel_multi_index(const Arrays& multi_index, const Shape& dims,
                        IndexMode mode = IndexMode::raise, char order = 'C');
// jnp.ix_: an open mesh from 1-D integer arrays: the i-th has shape (1, ..., n_i, ..., 1).
Arrays ix_(const Arrays& args);
// jnp.choose: out[i...] = choices[a[i...]][i...] with a and the choices broadcast together.
// raise needs a concrete `a` (under jit use wrap or clip, as in JAX).
Array choose(const Array& a, const Arrays& choices, IndexMode mode = IndexMode::raise);

// ---- functional forms of numpy's in-place writers ---------------------------------------------
// jnp.put(a, ind, v, inplace=False): a with its flattened entries at ind set to v (v tiled to
// ind's length). mode: nullopt drops out-of-range indices; clip and wrap as IndexMode.
Array put(const Array& a, const Array& ind, const Array& v,
          std::optional<IndexMode> mode = std::nullopt);
// jnp.put_along_axis(arr, indices, values, axis, inplace=False): the writes take_along_axis
// reads (axis nullopt: of the flattened arr); values broadcast to indices' shape. mode: the
// scatter's out-of-bounds behaviour (x.at[...].set's default drops them).
Array put_along_axis(const Array& arr, const Array& indices, const Array& values,
                     std::optional<int> axis, std::optional<GatherScatterMode> mode = std::nullopt);
// jnp.place(arr, mask, vals, inplace=False): the entries where mask is true (in flat order) set
// to vals, repeated as needed. Runs under jit and vmap (no concrete mask needed).
Array place(const Array& arr, const Array& mask, const Array& vals);
// jnp.fill_diagonal(a, val, inplace=False): a with its main diagonal (a[i, i, ...]) set to val,
// a scalar or values repeated along the diagonal. All dims must be equal beyond 2-D; JAX's
// wrap=True is not supported.
Array fill_diagonal(const Array& a, const Array& val);

}  // namespace linum
