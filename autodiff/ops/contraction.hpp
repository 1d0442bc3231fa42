// The tensor contractions of jax.numpy beyond dot/matmul/einsum (ops/linalg.hpp): tensordot,
// inner, outer, kron, vdot and numpy 2's matvec / vecmat / vecdot, all lowered to
// lax.dot_general or elementwise products as jnp lowers them.
#pragma once

#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum {

// Contracts the last `axes` dims of a with the first `axes` dims of b.
Array tensordot(const Array& a, const Array& b, int axes = 2);
// Contracts a's dims axes_a[i] with b's dims axes_b[i] (jnp's pair-of-sequences axes); the result
// holds a's free dims then b's.
Array tensordot(const Array& a, const Array& b, const std::vector<int>& axes_a,
                const std::vector<int>& axes_b);
Array inner(const Array& a, const Array& b);  // over the last axes; a * b for a scalar operand
Array outer(const Array& a, const Array& b);  // ravel(a)[:, None] * ravel(b)[None, :]
Array kron(const Array& a, const Array& b);   // the Kronecker product
Array vdot(const Array& a, const Array& b);   // dot of the flattened arrays
// Batched matrix-vector, vector-matrix and vector-vector products over the trailing dims, the
// leading (batch) dims broadcast: (..., n, m) x (..., m) -> (..., n); (..., n) x (..., n, m) ->
// (..., m); vecdot contracts `axis` of both.
Array matvec(const Array& x1, const Array& x2);
Array vecmat(const Array& x1, const Array& x2);
Array vecdot(const Array& x1, const Array& x2, int axis = -1);

}  // namespace linum
