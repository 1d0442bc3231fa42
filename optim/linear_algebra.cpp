#include <linum/optim/linear_algebra.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <linum/autodiff/ops/linalg.hpp>
#include <linum/autodiff/ops/linalg_decomp.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/error.hpp>

namespace linum::optim {

namespace {

void check_square_floating(const Array& matrix, const char* fn) {
  if (matrix.ndim() != 2 || matrix.shape(0) != matrix.shape(1))
    throw ValueError(std::string(fn) + ": matrix must be a square 2-D array, got shape " +
                     shape_str(matrix.shape()));
  if (!is_floating(matrix.dtype()))
    throw TypeError(std::string(fn) + ": matrix must be float32 or float64, got " +
                    std::string(dtype_name(matrix.dtype())));
}

// m^p for p = 1, 2, 4 or 8 by repeated squaring (optax's unrolled mat_power).
Array matrix_power_of_two(const Array& m, int p) {
  Array r = m;
  for (int k = 1; k < p; k *= 2) r = matmul(r, r);
  return r;
}

// The step sizes s_k = (c_k - 1) / c_{k+1} of the fast projected gradient, c_0 = 0 and
// c_{k+1} = (1 + sqrt(1 + 4 c_k^2)) / 2, computed in T as optax's loop computes them.
template <class T>
std::vector<T> fpg_momenta(std::int64_t iters) {
  std::vector<T> s;
  s.reserve(static_cast<std::size_t>(iters));
  T c = 0;
  for (std::int64_t k = 0; k < iters; ++k) {
    const T cn = (T(1) + std::sqrt(T(1) + T(4) * (c * c))) / T(2);
    s.push_back((c - T(1)) / cn);
    c = cn;
  }
  return s;
}

}  // namespace

std::pair<Array, Array> power_iteration(const Array& matrix, const PowerIterationArgs& args) {
  check_square_floating(matrix, "power_iteration");
  const std::int64_t n = matrix.shape(0);
  Array v0 = args.v0 ? *args.v0
                     : random::uniform(args.key ? *args.key : random::PRNGKey(0), {n},
                                       matrix.dtype(), -1.0, 1.0);
  if (v0.shape() != Shape{n})
    throw ValueError("power_iteration: v0 must be a vector of size " + std::to_string(n) +
                     " for a matrix of shape " + shape_str(matrix.shape()) + ", got shape " +
                     shape_str(v0.shape()));
  return power_iteration([&](const Array& v) { return matmul(matrix, v); }, v0, args.num_iters,
                         args.error_tolerance);
}

std::pair<Array, Array> matrix_inverse_pth_root(const Array& matrix, int p, std::int64_t num_iters,
                                                double ridge_epsilon, double error_tolerance) {
  check_square_floating(matrix, "matrix_inverse_pth_root");
  if (p != 1 && p != 2 && p != 4 && p != 8)
    throw ValueError(
        "matrix_inverse_pth_root: p must be 1, 2, 4 or 8 (optax's matrix power "
        "is unrolled for these), got " +
        std::to_string(p));
  // optax computes in float32, which float64 operands promote to float64.
  const DType dt = matrix.dtype();
  const std::int64_t n = matrix.shape(0);
  const Array alpha = full({}, -1.0 / p, dt);
  const Array identity = eye(n, -1, 0, dt);
  const Array max_ev = power_iteration(matrix).first;
  const Array ridge = ridge_epsilon * maximum(max_ev, 1e-16);

  if (n == 1) return {power(matrix + ridge, alpha), zeros({}, dt)};

  const Array damped = matrix + ridge * identity;
  const Array z = (1 + p) / (2 * linalg::norm(damped));
  const Array m0 = damped * z;
  const Array h0 = identity * power(z, 1.0 / p);
  // (iteration, M, H, H of the previous step, max |M - I|, whether the last step kept the
  // error below 1.2 times the one before: the error may grow a little before converging).
  using State = std::tuple<Array, Array, Array, Array, Array, Array>;
  const int max_iters = static_cast<int>(std::min<std::int64_t>(num_iters, INT32_MAX));
  State init{zeros({}, int32), m0, h0, h0, max(abs(m0 - identity)), full({}, 1, bool_)};
  auto cond = [&](const State& s) {
    const auto& [i, m, h, old_h, error, run_step] = s;
    return logical_and(i < max_iters, logical_and(error > error_tolerance, run_step));
  };
  auto body = [&](const State& s) {
    const auto& [i, m, h, old_h, error, run_step] = s;
    const Array m_i = (1 - alpha) * identity + alpha * m;
    Array new_m = matmul(matrix_power_of_two(m_i, p), m);
    Array new_h = matmul(h, m_i);
    Array new_error = max(abs(new_m - identity));
    Array keeps_going = new_error < error * 1.2;
    return State{i + 1, std::move(new_m), std::move(new_h), h, new_error, keeps_going};
  };
  const auto [i, m, h, old_h, unused_error, converged] = while_loop(cond, body, init);
  const Array error = max(abs(m - identity));
  const Array c = astype(converged, dt);
  return {c * h + (1 - c) * old_h, error};
}

Array nnls(const Array& A, const Array& b, std::int64_t iters, int unroll,
           std::optional<double> L) {
  if (A.ndim() != 2)
    throw ValueError("nnls: A must be a 2-D array (M, N), got shape " + shape_str(A.shape()));
  if ((b.ndim() != 1 && b.ndim() != 2) || b.shape(0) != A.shape(0))
    throw ValueError(
        "nnls: b must have shape (M,) or (M, K) with M = " + std::to_string(A.shape(0)) +
        " (the rows of A), got shape " + shape_str(b.shape()));
  if (!is_floating(A.dtype()) || !is_floating(b.dtype()))
    throw TypeError("nnls: A and b must be float32 or float64, got " +
                    std::string(dtype_name(A.dtype())) + " and " +
                    std::string(dtype_name(b.dtype())));
  if (iters < 0) throw ValueError("nnls: iters must be >= 0, got " + std::to_string(iters));
  if (unroll < 1)
    throw ValueError("nnls: `unroll` must be a `bool` or a positive `int`, got " +
                     std::to_string(unroll));
  const DType dt = promote_types(A.dtype(), b.dtype());
  const Array At = astype(A, dt).T();
  const Array Q = matmul(At, astype(A, dt));
  const Array q = matmul(At, astype(b, dt));
  Array lipschitz;
  if (L) {
    lipschitz = Array(*L);
  } else {
    // An upper bound on the spectral radius of Q: min(Frobenius norm, 1-norm).
    const Array fro = linalg::matrix_norm(Q);
    lipschitz = Q.size() != 0 ? minimum(fro, linalg::matrix_norm(Q, false, 1.0)) : zeros({}, dt);
  }
  lipschitz = where(equal(lipschitz, Array(0)), Array(1), lipschitz);

  Shape xs = {A.shape(1)};
  if (b.ndim() == 2) xs.push_back(b.shape(1));
  const Array x0 = zeros(xs, dt);
  if (iters == 0) return x0;
  const Array momenta =
      dt == float32 ? array(fpg_momenta<float>(iters)) : array(fpg_momenta<double>(iters));
  using Carry = std::pair<Array, Array>;  // (x, the extrapolated point p)
  auto step = [&](const Carry& c, const Array& s) {
    const auto& [x, p] = c;
    Array xn = maximum(p - (matmul(Q, p) - q) / lipschitz, 0);
    Array pn = xn + s * (xn - x);
    return std::make_pair(Carry{xn, pn}, std::nullopt);
  };
  return scan(step, Carry{x0, x0}, momenta).first.first;
}

}  // namespace linum::optim
