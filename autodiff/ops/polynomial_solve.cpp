// poly, polydiv and polyfit as jax.numpy composes them: convolutions with (1, -root), JAX's
// long-division loop of indexed updates, and a column-scaled least-squares solve.
#include <linum/autodiff/ops/polynomial_solve.hpp>

#include <cmath>
#include <limits>

#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/linalg_decomp.hpp>
#include <linum/autodiff/ops/polynomial.hpp>
#include <linum/autodiff/ops/scatter.hpp>

namespace linum {

using namespace detail;

namespace {

Array inexact(const Array& x) { return is_inexact(x.dtype()) ? x : astype(x, float32); }

double eps_of(DType d) {
  return real_dtype(d) == float64 ? std::numeric_limits<double>::epsilon()
                                  : static_cast<double>(std::numeric_limits<float>::epsilon());
}

}  // namespace

Array poly(const Array& seq_of_zeros) {
  check_valid(seq_of_zeros, "poly");
  const Array z = atleast_1d(inexact(seq_of_zeros));
  if (z.ndim() == 2 && z.shape(0) == z.shape(1) && z.shape(0) != 0)
    throw NotImplementedError(
        "poly: the characteristic polynomial of a square matrix needs its general eigenvalues "
        "(jnp.linalg.eigvals), which linum does not implement; pass the roots as a 1-D array");
  if (z.ndim() != 1)
    throw ValueError("poly: input must be 1d or non-empty square 2d array, got shape " +
                     shape_str(seq_of_zeros.shape()));
  if (z.shape(0) == 0) return ones({}, z.dtype());
  Array a = ones({1}, z.dtype());
  for (std::int64_t k = 0; k < z.shape(0); ++k)
    a = convolve(a, stack({ones({}, z.dtype()), -z[k]}, 0), "full");
  return a;
}

std::pair<Array, Array> polydiv(const Array& u, const Array& v, bool trim_leading_zeros) {
  check_valid(u, "polydiv");
  check_valid(v, "polydiv");
  if (u.ndim() != 1 || v.ndim() != 1 || u.size() == 0 || v.size() == 0)
    throw ValueError("polydiv: expected non-empty 1-D coefficient arrays, got shapes " +
                     shape_str(u.shape()) + " and " + shape_str(v.shape()));
  ResultType t = result_type(u, v);
  if (!is_inexact(t.dtype)) t = {float32, false};
  Array r = promote_to(u, t);
  const Array d = promote_to(v, t);
  const std::int64_t m = u.size() - 1, n = v.size() - 1;
  const Array scale = 1.0 / d[0];
  Array q = zeros({std::max<std::int64_t>(m - n + 1, 1)}, t.dtype);
  for (std::int64_t k = 0; k <= m - n; ++k) {
    const Array c = scale * r[k];
    q = at(q, k).set(c);
    r = at(r, Slice{k, k + n + 1}).add(-c * d);
  }
  if (trim_leading_zeros) {
    // numpy's tolerance for a zero: about sqrt(eps) of the dtype.
    const Array c = concrete_or_error(r, "polydiv",
                                      "trim_leading_zeros needs concrete values (the "
                                      "remainder's length depends on them)");
    const Array small = abs(c) < std::sqrt(eps_of(t.dtype));
    if (all(small).item<bool>()) return {q, zeros({0}, t.dtype)};
    r = slice(r, {Slice{argmin(small).item<std::int64_t>(), std::nullopt}});
  }
  return {q, r};
}

Array polyfit(const Array& x, const Array& y, int deg, std::optional<double> rcond,
              const std::optional<Array>& w) {
  check_valid(x, "polyfit");
  check_valid(y, "polyfit");
  if (deg < 0) throw ValueError("polyfit: expected deg >= 0, got " + std::to_string(deg));
  if (x.ndim() != 1)
    throw TypeError("polyfit: expected 1D vector for x, got shape " + shape_str(x.shape()));
  if (x.size() == 0) throw TypeError("polyfit: expected non-empty vector for x");
  if (y.ndim() < 1 || y.ndim() > 2)
    throw TypeError("polyfit: expected 1D or 2D array for y, got shape " + shape_str(y.shape()));
  if (x.shape(0) != y.shape(0))
    throw TypeError("polyfit: expected x and y to have same length, got " +
                    std::to_string(x.shape(0)) + " and " + std::to_string(y.shape(0)));
  const Array xa = inexact(x);
  const double rc = rcond.value_or(static_cast<double>(x.shape(0)) * eps_of(xa.dtype()));
  Array lhs = vander(xa, deg + 1), rhs = inexact(y);
  if (w) {
    check_valid(*w, "polyfit");
    if (w->ndim() != 1) throw TypeError("polyfit: expected a 1-d array for weights");
    if (w->shape(0) != y.shape(0))
      throw TypeError("polyfit: expected w and y to have the same length, got " +
                      std::to_string(w->shape(0)) + " and " + std::to_string(y.shape(0)));
    const Array wc = expand_dims(inexact(*w), 1);
    lhs = lhs * wc;
    rhs = rhs * (y.ndim() == 2 ? wc : inexact(*w));
  }
  // Columns scaled to unit norm to improve the conditioning, then scaled back.
  const Array scale = sqrt(sum(lhs * lhs, 0));
  const Array c = linalg::lstsq(lhs / scale, rhs, rc).x;
  return c.ndim() > 1 ? c / expand_dims(scale, 1) : c / scale;
}

}  // namespace linum
