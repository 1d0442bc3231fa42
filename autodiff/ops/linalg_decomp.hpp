// Matrix decompositions and solvers over LAPACK, differentiable and batched over leading dims:
// jax.lax.linalg (linum::lax::linalg), jax.numpy.linalg (linum::linalg) and the factor / solve
// pairs of jax.scipy.linalg (linum::scipy::linalg). Inputs are float32 or float64 (integers
// promote to float32); the last two axes hold the matrices. As in JAX, a failed factorization
// is not an error: cholesky of a matrix that is not positive definite gives NaNs, solve and inv
// of a singular matrix give infs/NaNs, det gives 0.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum {

namespace lax::linalg {

// lax.linalg.cholesky: the lower factor L (L L^T = x) of (x + x^T) / 2, or of x's lower
// triangle alone without symmetrize_input; NaNs where x is not positive definite.
Array cholesky(const Array& x, bool symmetrize_input = true);

// lax.linalg.triangular_solve's keyword arguments.
struct TriangularSolveOptions {
  bool left_side = false;  // solve op(a) x = b (else x op(a) = b)
  bool lower = false;      // a is lower triangular (the other triangle is not read)
  bool transpose_a = false;
  bool conjugate_a = false;  // no effect on real matrices
  bool unit_diagonal = false;
};
// x with op(a) x = b (left_side) or x op(a) = b; b may be one rank lower than a (a vector).
Array triangular_solve(const Array& a, const Array& b, const TriangularSolveOptions& opts = {});

// lax.linalg.lu: P a = L U with partial pivoting: lu holds L (unit diagonal, below) and U;
// pivots (int32, min(m, n)) the row swaps, permutation (int32, m) the rows of P a.
struct LuResult {
  Array lu, pivots, permutation;
};
LuResult lu(const Array& x);

// lax.linalg.qr: (q, r) with q orthonormal columns; full_matrices gives q (m, m), r (m, n),
// else q (m, k), r (k, n) with k = min(m, n).
std::pair<Array, Array> qr(const Array& x, bool full_matrices = true);

// lax.linalg.eigh: (v, w), eigenvalues w ascending and eigenvectors as the columns of v, of
// (x + x^T) / 2, or of the lower (upper) triangle of x without symmetrize_input.
std::pair<Array, Array> eigh(const Array& x, bool lower = true, bool symmetrize_input = true);

// lax.linalg.svd: u, s (descending), vh with x = u diag(s) vh; full_matrices gives square u and
// vh. Without compute_uv only s is set.
struct SvdResult {
  Array u, s, vh;
};
SvdResult svd(const Array& x, bool full_matrices = true, bool compute_uv = true);

}  // namespace lax::linalg

namespace linalg {

// jnp.linalg.cholesky: lower factor (upper: its transpose).
Array cholesky(const Array& a, bool upper = false, bool symmetrize_input = true);
// jnp.linalg.solve: a (..., m, m) with b (m,) or (..., m, n); leading dims broadcast.
Array solve(const Array& a, const Array& b);
Array inv(const Array& a);
// jnp.linalg.det: exact products for 2x2 and 3x3, LU otherwise; the derivative at a singular
// matrix is the adjugate (JAX's cofactor solve), not NaN.
Array det(const Array& a);
struct SlogdetResult {
  Array sign, logabsdet;
};
SlogdetResult slogdet(const Array& a);
// jnp.linalg.qr with mode "reduced" (default), "complete" or "r" (Q left empty).
struct QRResult {
  Array Q, R;
};
QRResult qr(const Array& a, const std::string& mode = "reduced");
// jnp.linalg.svd; without compute_uv only S is set.
struct SVDResult {
  Array U, S, Vh;
};
SVDResult svd(const Array& a, bool full_matrices = true, bool compute_uv = true);
Array svdvals(const Array& x);
// jnp.linalg.eigh: eigenvalues ascending, eigenvectors as columns; UPLO "L" or "U".
struct EighResult {
  Array eigenvalues, eigenvectors;
};
EighResult eigh(const Array& a, const std::string& UPLO = "L", bool symmetrize_input = true);
Array eigvalsh(const Array& a, const std::string& UPLO = "L", bool symmetrize_input = true);
// jnp.linalg.pinv with JAX's derivative rule; rtol defaults to 10 * max(m, n) * eps.
Array pinv(const Array& a, std::optional<double> rtol = std::nullopt);
// jnp.linalg.lstsq for 2-D a and b (m,) or (m, k), through the SVD. residuals are the squared
// norms of b - a x per column (computed always, as numpy_resid=False does).
struct LstsqResult {
  Array x, residuals, rank, s;
};
LstsqResult lstsq(const Array& a, const Array& b, std::optional<double> rcond = std::nullopt);
Array matrix_power(const Array& a, int n);
Array matrix_rank(const Array& M, std::optional<double> rtol = std::nullopt);

// jnp.linalg.norm. ord: empty for the default (2-norm of vectors, Frobenius of matrices), a
// number (inf and -inf included), or "fro" / "nuc" (matrices). axis: empty for all axes when
// x is 1-D or 2-D; one axis gives a vector norm, two a matrix norm.
struct NormOrd {
  std::optional<double> p;
  std::string name;  // "fro" or "nuc"
  NormOrd() = default;
  NormOrd(double v) : p(v) {}                     // NOLINT(google-explicit-constructor)
  NormOrd(const char* s) : name(s) {}             // NOLINT(google-explicit-constructor)
  NormOrd(std::string s) : name(std::move(s)) {}  // NOLINT(google-explicit-constructor)
};
Array norm(const Array& x, const NormOrd& ord = {},
           std::optional<std::vector<int>> axis = std::nullopt, bool keepdims = false);
Array vector_norm(const Array& x, std::optional<std::vector<int>> axis = std::nullopt,
                  bool keepdims = false, double ord = 2);
Array matrix_norm(const Array& x, bool keepdims = false, const NormOrd& ord = "fro");
// jnp.linalg.cond: p = 2 (default), -2 through the singular values, else norm(x) norm(inv(x)).
Array cond(const Array& x, const NormOrd& p = {});
// jnp.linalg.multi_dot: the chain product in the cheapest order; the first and last array may
// be vectors.
Array multi_dot(const Arrays& arrays);
Array tensorinv(const Array& a, int ind = 2);
Array tensorsolve(const Array& a, const Array& b,
                  std::optional<std::vector<int>> axes = std::nullopt);
Array cross(const Array& x1, const Array& x2, int axis = -1);  // 3-vectors along axis
Array outer(const Array& x1, const Array& x2);                 // 1-D inputs
Array matrix_transpose(const Array& x);
Array trace(const Array& x, int offset = 0);
Array diagonal(const Array& x, int offset = 0);
Array vecdot(const Array& x1, const Array& x2, int axis = -1);
Array matmul(const Array& x1, const Array& x2);

}  // namespace linalg

namespace scipy::linalg {

// jax.scipy.linalg.solve_triangular: trans 0 (a x = b), 1 (a^T x = b) or 2 (a^H x = b).
Array solve_triangular(const Array& a, const Array& b, int trans = 0, bool lower = false,
                       bool unit_diagonal = false);
// cho_factor returns (c, lower): the factor in the requested triangle (the other is zero);
// cho_solve solves a x = b with it.
std::pair<Array, bool> cho_factor(const Array& a, bool lower = false);
Array cho_solve(const std::pair<Array, bool>& c_and_lower, const Array& b);
// lu_factor returns (lu, piv) as LAPACK's getrf; lu_solve solves a x = b (trans 0) or a^T x = b
// (trans 1) with them.
std::pair<Array, Array> lu_factor(const Array& a);
Array lu_solve(const std::pair<Array, Array>& lu_and_piv, const Array& b, int trans = 0);

}  // namespace scipy::linalg

}  // namespace linum
