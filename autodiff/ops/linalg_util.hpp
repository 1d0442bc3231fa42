// Internal: matrix helpers shared by the linalg primitives and jnp.linalg's composites (all
// over the last two axes, batched over the leading ones), and the VJP-by-transposition rule.
#pragma once

#include <cstdint>
#include <span>

#include <linum/autodiff/primitive.hpp>

namespace linum::detail {

// x with its last two axes swapped (jnp.matrix_transpose).
Array mT(const Array& x);
// jnp.tril / jnp.triu of the last two axes: entries above (below) diagonal k set to zero.
Array tril_of(const Array& x, int k = 0);
Array triu_of(const Array& x, int k = 0);
// The main diagonal of the last two axes, (..., min(m, n)).
Array diagonal_of(const Array& x);
// The vectors of the last axis as diagonal matrices, (..., n, n).
Array diag_matrix(const Array& v);
// x[..., r0:r1, c0:c1] (a bound of -1: the end of the axis).
Array block(const Array& x, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1);
// The sum of the main diagonal of the last two axes.
Array trace_of(const Array& x);
// Identity of size n broadcast to (batch..., n, n) in x's dtype.
Array batched_eye(const Shape& batch, std::int64_t n, DType dtype);
// Rows of the last two axes of x permuted by `perm` (int32, (..., m)): out[i] = x[perm[i]], as a
// product with the permutation matrix, so that it is linear, batched and differentiable.
Array permute_rows(const Array& x, const Array& perm);

// x must be (..., m, n) with rank >= 2 (square when `square`) and a floating dtype: integers and
// bools become float32, as jnp.linalg promotes them; complex is a TypeError naming `op`.
Array check_matrix(const Array& x, const char* op, bool square);
// The product of the leading dims of `s` (all but the last `core` axes).
std::int64_t batch_size(const Shape& s, int core);
// The leading dims of `s` (all but the last `core` axes).
Shape batch_shape(const Shape& s, int core);

// The VJP of a primitive as the transpose of its JVP (JAX's rule for the linalg primitives that
// define only a JVP): reverse mode over p.jvp, which is linear in the tangents. p.jvp must not
// call p itself on the tangents.
Arrays transpose_jvp(const Primitive& p, std::span<const Array> primals,
                     std::span<const Array> cotangents, std::span<const Array> outs);

}  // namespace linum::detail
