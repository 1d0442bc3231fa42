// optax's linear algebra for optimizers: power_iteration (the dominant eigenpair of a matrix or of
// a matrix-vector product over any pytree), matrix_inverse_pth_root (coupled Newton iterations,
// Shampoo's preconditioner) and nnls (non-negative least squares by Polyak's fast projected
// gradient). XLA's `precision` argument does not apply: linum computes in the operands' dtype.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>

#include <linum/autodiff/control_flow.hpp>
#include <linum/optim/tree_utils.hpp>

namespace linum::optim {

namespace detail {
// v / ||v|| over the whole tree (optax's _normalize_tree).
template <class V>
V normalize_tree(const V& v) {
  const Array inv = 1.0 / tree_utils::tree_l2_norm(v);
  return linum::detail::tree_apply_skip_empty(v, [&](const Array& x) { return inv * x; });
}
}  // namespace detail

// optax.power_iteration(mvp, v0=..., num_iters, error_tolerance) with the matrix given as a
// matrix-vector product over pytrees shaped like v0. From v = v0 / ||v0||, z = mvp(v), it
// repeats v = z / ||z||, z = mvp(v), eig = <v, z> while ||z - eig v|| / |eig| >= error_tolerance
// and fewer than num_iters steps ran. Returns (eig, z / ||z||). A while_loop, so it also runs
// under jit and vmap.
template <class Mvp, class V>
requires std::invocable<const Mvp&, const V&> std::pair<Array, V> power_iteration(
    const Mvp& mvp, const V& v0, std::int64_t num_iters = 100, double error_tolerance = 1e-6) {
  using Carry = std::tuple<V, V, Array, Array>;  // (eigvec, mvp(eigvec), eig, iteration)
  const V v = detail::normalize_tree(v0);
  const V z = mvp(v);
  // optax starts eig at 0.0, which the loop carries in the dtype of <v, z>.
  Carry init{v, z, zeros_like(tree_utils::tree_vdot(v, z)), zeros({}, int32)};
  const int max_iters = static_cast<int>(std::min<std::int64_t>(num_iters, INT32_MAX));
  auto cond = [&](const Carry& c) {
    const auto& [vec, zc, eig, it] = c;
    const V residual = linum::detail::tree_apply_skip_empty(
        zc, [&](const Array& zi, const Array& vi) { return zi - eig * vi; }, vec);
    const Array converged = abs(tree_utils::tree_l2_norm(residual) / eig) < error_tolerance;
    return logical_and(logical_not(converged), it < max_iters);
  };
  auto body = [&](const Carry& c) {
    const V vec = detail::normalize_tree(std::get<1>(c));
    V zn = mvp(vec);
    Array eig = tree_utils::tree_vdot(vec, zn);
    return Carry{vec, std::move(zn), std::move(eig), std::get<3>(c) + 1};
  };
  const Carry out = while_loop(cond, body, init);
  return {std::get<2>(out), detail::normalize_tree(std::get<1>(out))};
}

// optax.power_iteration's keyword arguments when the matrix is an array: v0 defaults to
// uniform(key, (n,), matrix dtype, -1, 1) with key defaulting to PRNGKey(0).
struct PowerIterationArgs {
  std::optional<Array> v0 = std::nullopt;
  std::int64_t num_iters = 100;
  double error_tolerance = 1e-6;
  std::optional<Array> key = std::nullopt;
};
// optax.power_iteration(matrix, ...): the dominant eigenpair (eigenvalue, unit eigenvector) of a
// square floating matrix, by the iteration above with mvp(v) = matrix @ v.
std::pair<Array, Array> power_iteration(const Array& matrix, const PowerIterationArgs& args = {});

// optax.matrix_inverse_pth_root(matrix, p, num_iters, ridge_epsilon, error_tolerance):
// matrix^(-1/p) of a symmetric PSD matrix by coupled Newton iterations (Higham, Functions of
// Matrices, eq. 7.18), after adding ridge_epsilon * (its dominant eigenvalue, from
// power_iteration) to the diagonal. Computed in float32 (float64 for a float64 matrix). Returns
// (matrix^(-1/p), error = max |M - I| of the iteration's M). optax's unrolled matrix power
// handles p = 1, 2, 4 and 8 only: any other p is a ValueError here (optax silently computes
// something else).
std::pair<Array, Array> matrix_inverse_pth_root(const Array& matrix, int p,
                                                std::int64_t num_iters = 100,
                                                double ridge_epsilon = 1e-6,
                                                double error_tolerance = 1e-6);

// optax.nnls(A, b, iters, unroll, L): argmin ||A x - b|| subject to x >= 0 by iters steps of
// the fast projected gradient method (Polyak 2015), for b of shape (M,) or (M, K); x has shape
// (N,) or (N, K). L bounds the spectral radius of A^T A (default min(Frobenius norm, 1-norm)).
// unroll is lax.scan's unrolling hint, accepted for optax's argument order; linum's scan runs
// step by step, so it changes nothing but must be positive as in JAX.
Array nnls(const Array& A, const Array& b, std::int64_t iters, int unroll = 1,
           std::optional<double> L = std::nullopt);

}  // namespace linum::optim
