// jax.numpy.linalg's functions built on the decompositions (inv, pinv, lstsq, norms, cond,
// powers, products, tensor solves) and jax.scipy.linalg's factor / solve pairs. pinv keeps
// JAX's own derivative rule (a primitive); the rest are compositions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <linum/autodiff/ops/differences.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/linalg_decomp.hpp>
#include <linum/autodiff/ops/linalg_util.hpp>

namespace linum {
namespace detail {
namespace {

double eps_of(DType d) {
  return d == float64 ? std::numeric_limits<double>::epsilon()
                      : std::numeric_limits<float>::epsilon();
}

// s[..., :1] of a vector (..., k), keeping the axis.
Array first_of(const Array& s) { return squeeze(block(expand_dims(s, -1), 0, 1, 0, -1), -1); }

// jnp.linalg.pinv through the SVD (singular values at or below rtol * s_max dropped), with
// JAX's JVP (_pinv_jvp) and its transpose as the VJP.
struct Pinv final : Primitive {
  double rtol;
  explicit Pinv(double r) : rtol(r) {}
  const char* name() const override { return "pinv"; }
  void print_params(std::ostream& os) const override { os << "rtol=" << rtol; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    Shape s = in[0].shape;
    std::swap(s[s.size() - 1], s[s.size() - 2]);
    return {{s, in[0].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& a = in[0];
    const Shape os = abstract_eval(std::array{ShapeDtype{a.shape(), a.dtype()}})[0].shape;
    if (a.shape(-1) == 0 || a.shape(-2) == 0) return {zeros(os, a.dtype())};
    const auto r = lax::linalg::svd(a, false, true);
    const Array keep = greater(r.s, multiply(first_of(r.s), rtol));
    const Array s = where(keep, r.s, std::numeric_limits<double>::infinity());
    return {matmul(mT(r.vh), divide(mT(r.u), expand_dims(s, -1)))};
  }
  Arrays jvp(std::span<const Array> pr, std::span<const Array> t,
             std::span<const Array> o) const override {
    if (!t[0].valid()) return {Array()};
    const Array &a = pr[0], &da = t[0], &p = o[0];
    if (a.shape(-2) >= a.shape(-1)) {
      const Array s = matmul(matmul(p, mT(p)), mT(da));
      const Array u = matmul(matmul(mT(da), mT(p)), p);
      return {add(subtract(add(subtract(s, matmul(matmul(p, da), p)), u), matmul(matmul(s, a), p)),
                  negative(matmul(matmul(p, a), u)))};
    }
    const Array s = matmul(p, matmul(mT(p), mT(da)));
    const Array u = matmul(mT(da), matmul(mT(p), p));
    return {add(subtract(add(subtract(s, matmul(p, matmul(da, p))), u), matmul(s, matmul(a, p))),
                negative(matmul(p, matmul(a, u))))};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return transpose_jvp(*this, p, ct, o);
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(std::make_shared<const Pinv>(rtol), {move_bdim(in[0], bdims[0], 0, 0)})}, {0}};
  }
};

// lax.linalg.lu_pivots_to_permutation: the row order that the swaps in `pivots` produce.
struct PivotsToPermutation final : Primitive {
  std::int64_t size;
  explicit PivotsToPermutation(std::int64_t n) : size(n) {}
  const char* name() const override { return "lu_pivots_to_permutation"; }
  bool differentiable() const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    Shape s = in[0].shape;
    s.back() = size;
    return {{s, int32}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& piv = in[0];
    Shape s = piv.shape();
    const std::int64_t k = s.back();
    s.back() = size;
    Array out = empty(s, int32);
    const auto* p = in_ptr<std::int32_t>(piv);
    auto* q = out_ptr<std::int32_t>(out);
    for (std::int64_t b = 0; b < batch_size(piv.shape(), 1); ++b) {
      std::int32_t* r = q + b * size;
      std::iota(r, r + size, 0);
      for (std::int64_t i = 0; i < k; ++i) {
        const std::int32_t j = p[b * k + i];
        if (j < 0 || j >= size)
          throw IndexError("lu_solve: pivot " + std::to_string(j) + " is out of range for " +
                           std::to_string(size) + " rows");
        std::swap(r[i], r[j]);
      }
    }
    return {out};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(std::make_shared<const PivotsToPermutation>(size),
                   {move_bdim(in[0], bdims[0], 0, 0)})},
            {0}};
  }
};

Array to_inexact_linalg(const Array& x, const char* op) {
  check_valid(x, op);
  if (is_complex(x.dtype()))
    throw TypeError(std::string(op) + ": complex arrays are not supported, got " +
                    std::string(dtype_name(x.dtype())));
  return is_floating(x.dtype()) ? x : astype(x, float32);
}

Array abs_squared(const Array& x) {
  return is_complex(x.dtype()) ? real(multiply(x, conj(x))) : multiply(x, x);
}

int canonical_axis(int a, int nd, const char* op) { return normalize_axis(a, nd, op); }

// Chain order of numpy's multi_dot: cost-optimal parenthesisation by dynamic programming.
Array chain_product(const Arrays& m, const std::vector<std::vector<std::size_t>>& split,
                    std::size_t i, std::size_t j) {
  if (i == j) return m[i];
  const std::size_t k = split[i][j];
  return matmul(chain_product(m, split, i, k), chain_product(m, split, k + 1, j));
}

}  // namespace
}  // namespace detail

using namespace detail;

namespace linalg {

Array inv(const Array& a) {
  check_valid(a, "inv");
  if (a.ndim() < 2 || a.shape(-1) != a.shape(-2))
    throw ValueError("inv: argument must have shape [..., n, n], got " + shape_str(a.shape()));
  const Array x = check_matrix(a, "inv", true);
  return solve(x, batched_eye(batch_shape(x.shape(), 2), x.shape(-1), x.dtype()));
}

Array pinv(const Array& a, std::optional<double> rtol) {
  const Array x = check_matrix(a, "pinv", false);
  const double r = rtol.value_or(10.0 * static_cast<double>(std::max(x.shape(-1), x.shape(-2))) *
                                 eps_of(x.dtype()));
  return bind1(std::make_shared<const Pinv>(r), {x});
}

LstsqResult lstsq(const Array& a, const Array& b, std::optional<double> rcond) {
  Array x = to_inexact_linalg(a, "lstsq"), y = to_inexact_linalg(b, "lstsq");
  if (x.ndim() != 2)
    throw TypeError("lstsq: " + std::to_string(x.ndim()) +
                    "-dimensional array given. Array must be two-dimensional");
  if (y.ndim() != 1 && y.ndim() != 2)
    throw TypeError("lstsq: " + std::to_string(y.ndim()) +
                    "-dimensional array given. Array must be one or two-dimensional");
  if (x.shape(0) != y.shape(0))
    throw ValueError("lstsq: leading dimensions of input arrays must match, got " +
                     shape_str(a.shape()) + " and " + shape_str(b.shape()));
  const DType dt = promote_types(x.dtype(), y.dtype());
  x = astype(x, dt);
  y = astype(y, dt);
  const bool vector = y.ndim() == 1;
  if (vector) y = expand_dims(y, 1);
  const std::int64_t m = x.shape(0), n = x.shape(1);
  LstsqResult r;
  if (x.size() == 0) {
    r.s = zeros({0}, dt);
    r.rank = zeros({}, int32);
    r.x = zeros({n, y.shape(1)}, dt);
  } else {
    double rc = rcond.value_or(eps_of(dt) * static_cast<double>(std::max(n, m)));
    if (rc < 0) rc = eps_of(dt);
    const auto f = lax::linalg::svd(x, false, true);
    const Array mask =
        logical_and(greater(f.s, 0), greater_equal(f.s, multiply(first_of(f.s), rc)));
    r.rank = sum(mask);
    const Array safe = where(mask, f.s, 1);
    const Array s_inv = expand_dims(where(mask, divide(1, safe), 0), 1);
    r.x = linum::matmul(mT(f.vh), multiply(s_inv, linum::matmul(mT(f.u), y)));
    r.s = f.s;
  }
  r.residuals = sum(abs_squared(subtract(y, linum::matmul(x, r.x))), 0);
  if (vector) r.x = reshape(r.x, {-1});
  return r;
}

Array matrix_power(const Array& a, int n) {
  check_valid(a, "matrix_power");
  if (a.ndim() < 2)
    throw TypeError("matrix_power: " + std::to_string(a.ndim()) +
                    "-dimensional array given. Array must be at least two-dimensional");
  if (a.shape(-1) != a.shape(-2))
    throw TypeError("matrix_power: last 2 dimensions of the array must be square");
  if (n == 0) return broadcast_to(eye(a.shape(-1), -1, 0, a.dtype()), a.shape());
  Array x = n < 0 ? inv(a) : a;
  unsigned k = static_cast<unsigned>(n < 0 ? -static_cast<long>(n) : n);
  if (k == 1) return x;
  if (k == 2) return linum::matmul(x, x);
  if (k == 3) return linum::matmul(linum::matmul(x, x), x);
  Array z, result;
  while (k > 0) {  // binary powering, in JAX's order of products
    z = z.valid() ? linum::matmul(z, z) : x;
    if (k & 1u) result = result.valid() ? linum::matmul(result, z) : z;
    k >>= 1u;
  }
  return result;
}

Array matrix_rank(const Array& M, std::optional<double> rtol) {
  const Array x = to_inexact_linalg(M, "matrix_rank");
  if (x.ndim() < 2) return astype(any(not_equal(x, 0)), int32);
  const Array S = svdvals(x);
  Array tol = rtol ? full({}, *rtol, S.dtype())
                   : multiply(max(S, -1), static_cast<double>(std::max(x.shape(-1), x.shape(-2))) *
                                              eps_of(S.dtype()));
  return sum(greater(S, expand_dims(tol, -1)), -1);
}

Array vector_norm(const Array& x, std::optional<std::vector<int>> axis, bool keepdims, double ord) {
  check_valid(x, "vector_norm");
  const Array v = is_inexact(x.dtype()) ? x : astype(x, float32);
  const Axes ax = axis ? Axes(*axis) : Axes();
  if (ord == 2) return sqrt(sum(abs_squared(v), ax, keepdims));
  if (ord == INFINITY) return max(abs(v), ax, keepdims);
  if (ord == -INFINITY) return min(abs(v), ax, keepdims);
  if (ord == 0) return sum(astype(not_equal(v, 0), real_dtype(v.dtype())), ax, keepdims);
  if (ord == 1) return sum(abs(v), ax, keepdims);
  return power(sum(power(abs(v), ord), ax, keepdims), 1.0 / ord);
}

Array norm(const Array& x, const NormOrd& ord, std::optional<std::vector<int>> axis,
           bool keepdims) {
  check_valid(x, "norm");
  const Array v = is_inexact(x.dtype()) ? x : astype(x, float32);
  const int nd = v.ndim();
  std::vector<int> ax;
  if (!axis) {
    if (!ord.p && ord.name.empty()) return sqrt(sum(abs_squared(v), Axes(), keepdims));
    for (int i = 0; i < nd; ++i) ax.push_back(i);
  } else {
    for (int a : *axis) ax.push_back(canonical_axis(a, nd, "norm"));
  }
  if (ax.size() == 1) {
    if (!ord.name.empty())
      throw ValueError("norm: invalid order '" + ord.name + "' for vector norm.");
    return vector_norm(v, ax, keepdims, ord.p.value_or(2));
  }
  if (ax.size() != 2)
    throw ValueError(
        "norm: improper number of axes for norm: " + std::to_string(ax.size()) +
        ". Pass one axis to compute a vector-norm, or two axes to compute a matrix-norm.");
  int row = ax[0], col = ax[1];
  const bool fro = (!ord.p && (ord.name.empty() || ord.name == "fro" || ord.name == "f"));
  if (fro) return sqrt(sum(abs_squared(v), Axes(ax), keepdims));
  const double p = ord.p.value_or(NAN);
  if (p == 1 || p == -1) {
    if (!keepdims && col > row) --col;
    const Array s = sum(abs(v), row, keepdims);
    return p == 1 ? max(s, col, keepdims) : min(s, col, keepdims);
  }
  if (p == INFINITY || p == -INFINITY) {
    if (!keepdims && row > col) --row;
    const Array s = sum(abs(v), col, keepdims);
    return p > 0 ? max(s, row, keepdims) : min(s, row, keepdims);
  }
  if (ord.name == "nuc" || p == 2 || p == -2) {
    Array y = svdvals(moveaxis(moveaxis(v, row, nd - 1), col < row ? col : col - 1, nd - 1));
    // moveaxis twice: row to the end, then col after it, so the matrix is (row, col).
    y = p == 2 ? max(y, -1) : p == -2 ? min(y, -1) : sum(y, -1);
    if (keepdims) {
      std::sort(ax.begin(), ax.end());
      for (int a : ax) y = expand_dims(y, a);
    }
    return y;
  }
  throw ValueError("norm: invalid order '" + (ord.name.empty() ? std::to_string(p) : ord.name) +
                   "' for matrix norm.");
}

Array matrix_norm(const Array& x, bool keepdims, const NormOrd& ord) {
  return norm(x, ord, std::vector<int>{-2, -1}, keepdims);
}

Array cond(const Array& x, const NormOrd& p) {
  check_valid(x, "cond");
  if (x.ndim() < 2)
    throw ValueError("cond: input array must be at least 2D; got shape " + shape_str(x.shape()));
  if (x.shape(-1) == 0 || x.shape(-2) == 0)
    throw ValueError("cond: input array must not be empty; got shape " + shape_str(x.shape()));
  if ((!p.p && p.name.empty()) || p.p == 2.0) {
    const Array s = svdvals(x);
    const std::int64_t k = s.shape(-1);
    return divide(squeeze(first_of(s), -1),
                  squeeze(squeeze(block(expand_dims(s, -1), k - 1, k, 0, -1), -1), -1));
  }
  Array r;
  if (p.p == -2.0) {
    const Array s = svdvals(x);
    const std::int64_t k = s.shape(-1);
    r = divide(squeeze(squeeze(block(expand_dims(s, -1), k - 1, k, 0, -1), -1), -1),
               squeeze(first_of(s), -1));
  } else {
    if (x.shape(-1) != x.shape(-2))
      throw ValueError("cond: for this p, the array must be square; got shape " +
                       shape_str(x.shape()));
    r = multiply(norm(x, p, std::vector<int>{-2, -1}), norm(inv(x), p, std::vector<int>{-2, -1}));
  }
  return where(logical_and(isnan(r), logical_not(any(isnan(x), {-2, -1}))), INFINITY, r);
}

Array multi_dot(const Arrays& arrays) {
  if (arrays.size() < 2)
    throw ValueError("multi_dot requires at least two arrays; got " +
                     std::to_string(arrays.size()));
  Arrays m = arrays;
  for (auto& a : m) check_valid(a, "multi_dot");
  const bool first_vec = m.front().ndim() == 1, last_vec = m.back().ndim() == 1;
  bool ok = (m.front().ndim() == 1 || m.front().ndim() == 2) &&
            (m.back().ndim() == 1 || m.back().ndim() == 2);
  for (std::size_t i = 1; i + 1 < m.size(); ++i) ok = ok && m[i].ndim() == 2;
  if (!ok)
    throw ValueError(
        "multi_dot: input arrays must all be two-dimensional, except for the first and last array "
        "which may be 1 or 2 dimensional");
  if (first_vec) m.front() = expand_dims(m.front(), 0);
  if (last_vec) m.back() = expand_dims(m.back(), 1);
  const std::size_t n = m.size();
  for (std::size_t i = 0; i + 1 < n; ++i)
    if (m[i].shape(1) != m[i + 1].shape(0))
      throw ValueError(
          "multi_dot: last dimension of each array must match first dimension of following array");
  std::vector<double> dims{static_cast<double>(m[0].shape(0))};
  for (const auto& a : m) dims.push_back(static_cast<double>(a.shape(1)));
  std::vector<std::vector<double>> cost(n, std::vector<double>(n, 0));
  std::vector<std::vector<std::size_t>> split(n, std::vector<std::size_t>(n, 0));
  for (std::size_t len = 1; len < n; ++len)
    for (std::size_t i = 0; i + len < n; ++i) {
      const std::size_t j = i + len;
      cost[i][j] = INFINITY;
      for (std::size_t k = i; k < j; ++k) {
        const double c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1];
        if (c < cost[i][j]) {
          cost[i][j] = c;
          split[i][j] = k;
        }
      }
    }
  Array r = chain_product(m, split, 0, n - 1);
  if (first_vec) r = squeeze(r, 0);
  if (last_vec) r = squeeze(r, -1);
  return r;
}

Array tensorinv(const Array& a, int ind) {
  check_valid(a, "tensorinv");
  if (ind <= 0)
    throw ValueError("tensorinv: ind must be a positive integer; got ind=" + std::to_string(ind));
  if (ind > a.ndim())
    throw ValueError("tensorinv: ind=" + std::to_string(ind) + " exceeds the rank of shape " +
                     shape_str(a.shape()));
  const Shape contracting(a.shape().begin(), a.shape().begin() + ind),
      batch(a.shape().begin() + ind, a.shape().end());
  if (shape_size(contracting) != shape_size(batch))
    throw ValueError(
        "tensorinv is only possible when the product of the first `ind` dimensions equals that of "
        "the remaining dimensions. got a.shape=" +
        shape_str(a.shape()) + " with ind=" + std::to_string(ind));
  Shape out = batch;
  out.insert(out.end(), contracting.begin(), contracting.end());
  return reshape(inv(reshape(a, {shape_size(contracting), shape_size(batch)})), out);
}

Array tensorsolve(const Array& a, const Array& b, std::optional<std::vector<int>> axes) {
  check_valid(a, "tensorsolve");
  check_valid(b, "tensorsolve");
  Array x = a;
  if (axes) {  // numpy's order: the listed axes move to the end, in the order given
    std::vector<int> listed, perm;
    for (int ax : *axes) listed.push_back(normalize_axis(ax, a.ndim(), "tensorsolve"));
    for (int i = 0; i < a.ndim(); ++i)
      if (std::find(listed.begin(), listed.end(), i) == listed.end()) perm.push_back(i);
    perm.insert(perm.end(), listed.begin(), listed.end());
    x = transpose(a, perm);
  }
  const Shape out(x.shape().begin() + std::min<std::ptrdiff_t>(b.ndim(), x.ndim()),
                  x.shape().end());
  if (b.ndim() > x.ndim() || !std::equal(b.shape().begin(), b.shape().end(), x.shape().begin()))
    throw ValueError(
        "tensorsolve: after moving axes to end, leading shape of a must match shape of b. got "
        "a.shape=" +
        shape_str(x.shape()) + ", b.shape=" + shape_str(b.shape()));
  if (b.size() != shape_size(out))
    throw ValueError(
        "tensorsolve: input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); got "
        "a.shape=" +
        shape_str(x.shape()) + ", b.ndim=" + std::to_string(b.ndim()));
  return reshape(solve(reshape(x, {b.size(), shape_size(out)}), reshape(b, {-1})), out);
}

Array cross(const Array& x1, const Array& x2, int axis) {
  check_valid(x1, "cross");
  check_valid(x2, "cross");
  if (x1.ndim() == 0 || x2.ndim() == 0 || x1.shape(axis) != 3 || x2.shape(axis) != 3)
    throw ValueError(
        "cross: both input arrays must be (arrays of) 3-dimensional vectors, got shapes " +
        shape_str(x1.shape()) + " and " + shape_str(x2.shape()) + " along axis " +
        std::to_string(axis));
  return linum::cross(x1, x2, axis, axis, axis);  // jnp.cross, restricted to 3-vectors
}

Array outer(const Array& x1, const Array& x2) {
  check_valid(x1, "outer");
  check_valid(x2, "outer");
  if (x1.ndim() != 1 || x2.ndim() != 1)
    throw ValueError("outer: input arrays must be one-dimensional, but they have shapes " +
                     shape_str(x1.shape()) + " and " + shape_str(x2.shape()));
  return multiply(expand_dims(x1, 1), expand_dims(x2, 0));
}

Array matrix_transpose(const Array& x) {
  check_valid(x, "matrix_transpose");
  if (x.ndim() < 2)
    throw ValueError("matrix_transpose requires at least 2 dimensions; got ndim=" +
                     std::to_string(x.ndim()));
  return mT(x);
}

Array trace(const Array& x, int offset) {
  check_valid(x, "trace");
  if (x.ndim() < 2)
    throw ValueError("trace: expected an array of at least two dimensions, got shape " +
                     shape_str(x.shape()));
  const Array v = x.dtype() == bool_ ? astype(x, int32) : x;
  return sum(multiply(v, eye(x.shape(-2), x.shape(-1), offset, v.dtype())), {-2, -1});
}

Array diagonal(const Array& x, int offset) {
  check_valid(x, "diagonal");
  if (x.ndim() < 2)
    throw ValueError("diagonal: expected an array of at least two dimensions, got shape " +
                     shape_str(x.shape()));
  const std::int64_t m = x.shape(-2), n = x.shape(-1);
  const std::int64_t r0 = offset < 0 ? std::min<std::int64_t>(-offset, m) : 0,
                     c0 = offset > 0 ? std::min<std::int64_t>(offset, n) : 0;
  return diagonal_of(block(x, r0, m, c0, n));
}

Array vecdot(const Array& x1, const Array& x2, int axis) {
  check_valid(x1, "vecdot");
  check_valid(x2, "vecdot");
  return sum(multiply(conj(x1), x2), axis);
}

Array matmul(const Array& x1, const Array& x2) { return linum::matmul(x1, x2); }

}  // namespace linalg

namespace scipy::linalg {

Array solve_triangular(const Array& a, const Array& b, int trans, bool lower, bool unit_diagonal) {
  if (trans < 0 || trans > 2)
    throw ValueError("solve_triangular: trans must be 0, 1 or 2, got " + std::to_string(trans));
  return lax::linalg::triangular_solve(a, b,
                                       {.left_side = true,
                                        .lower = lower,
                                        .transpose_a = trans != 0,
                                        .conjugate_a = trans == 2,
                                        .unit_diagonal = unit_diagonal});
}

std::pair<Array, bool> cho_factor(const Array& a, bool lower) {
  const Array x = check_matrix(a, "cho_factor", true);
  const Array L = lax::linalg::cholesky(lower ? x : mT(x), false);
  return {lower ? L : mT(L), lower};
}

Array cho_solve(const std::pair<Array, bool>& c_and_lower, const Array& b) {
  const auto& [c, lower] = c_and_lower;
  const Array y = lax::linalg::triangular_solve(
      c, b, {.left_side = true, .lower = lower, .transpose_a = !lower});
  return lax::linalg::triangular_solve(c, y,
                                       {.left_side = true, .lower = lower, .transpose_a = lower});
}

std::pair<Array, Array> lu_factor(const Array& a) {
  const auto f = lax::linalg::lu(a);
  return {f.lu, f.pivots};
}

Array lu_solve(const std::pair<Array, Array>& lu_and_piv, const Array& b, int trans) {
  const auto& [lu, piv] = lu_and_piv;
  check_valid(lu, "lu_solve");
  check_valid(piv, "lu_solve");
  check_valid(b, "lu_solve");
  if (lu.ndim() < 2 || lu.shape(-1) != lu.shape(-2))
    throw ValueError("lu_solve: last two dimensions of LU decomposition must be equal, got shape " +
                     shape_str(lu.shape()));
  if (trans < 0 || trans > 2)
    throw ValueError("lu_solve: 'trans' value must be 0, 1, or 2, got " + std::to_string(trans));
  if (piv.dtype() != int32)
    throw TypeError("lu_solve: pivots must be int32, got " + std::string(dtype_name(piv.dtype())));
  const std::int64_t m = lu.shape(-1);
  const bool vector = lu.ndim() == b.ndim() + 1;
  Array x = vector ? expand_dims(b, -1) : b;
  if (x.shape(-2) != m)
    throw ValueError("lu_solve: the LU factors (shape " + shape_str(lu.shape()) +
                     ") and b (shape " + shape_str(b.shape()) + ") do not match");
  const Array perm = bind1(std::make_shared<const PivotsToPermutation>(m), {piv});
  const Array pm = astype(
      equal(expand_dims(perm, -1), arange(std::int64_t(0), m, std::int64_t(1), int32)), lu.dtype());
  if (trans == 0) {
    x = linum::matmul(pm, x);
    x = lax::linalg::triangular_solve(lu, x,
                                      {.left_side = true, .lower = true, .unit_diagonal = true});
    x = lax::linalg::triangular_solve(lu, x, {.left_side = true, .lower = false});
  } else {
    x = lax::linalg::triangular_solve(lu, x,
                                      {.left_side = true, .lower = false, .transpose_a = true});
    x = lax::linalg::triangular_solve(
        lu, x, {.left_side = true, .lower = true, .transpose_a = true, .unit_diagonal = true});
    x = linum::matmul(mT(pm), x);
  }
  return vector ? squeeze(x, -1) : x;
}

}  // namespace scipy::linalg

}  // namespace linum
