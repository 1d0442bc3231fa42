// jnp's polynomial functions and 1-D convolution, composed as jnp composes them: convolve and
// correlate are one lax.conv_general_dilated (whose rules give derivatives, batching and jit),
// polyval is Horner's rule over p's leading axis, the rest are products with arange factors.
#include <linum/autodiff/ops/elementwise_rules.hpp>
#include <linum/autodiff/ops/manipulation.hpp>
#include <linum/autodiff/ops/polynomial.hpp>

namespace linum {

using namespace detail;

namespace {

// Both operands in their common dtype, then floating point (jnp's promote_dtypes_inexact); unlike
// promote_inexact no broadcasting: the lengths of 1-D coefficient arrays differ.
std::pair<Array, Array> common_inexact(const Array& a, const Array& b, const char* op) {
  check_valid(a, op);
  check_valid(b, op);
  const ResultType r = result_type(a, b);
  return {to_inexact(promote_to(a, r), op), to_inexact(promote_to(b, r), op)};
}

// jnp's _conv: the shorter operand slides over the longer (correlate then reverses the result),
// convolve flips the kernel; lax's convolution is a cross-correlation.
Array conv1d(const Array& a, const Array& v, const std::string& mode, bool correlate,
             const char* op) {
  check_valid(a, op);
  check_valid(v, op);
  if (a.ndim() != 1 || v.ndim() != 1)
    throw ValueError(std::string(op) + ": only 1-dimensional inputs are supported, got shapes " +
                     shape_str(a.shape()) + " and " + shape_str(v.shape()));
  auto [x0, y0] = common_inexact(a, v, op);
  if (x0.size() == 0 || y0.size() == 0)
    throw ValueError(std::string(op) + ": inputs cannot be empty, got shapes " +
                     shape_str(a.shape()) + " and " + shape_str(v.shape()));
  Array x = x0, y = y0;
  bool reverse = false;
  if (x.size() < y.size()) {
    std::swap(x, y);
    reverse = correlate;
  }
  if (!correlate) y = flip(y, {0});
  const std::int64_t m = y.size();
  std::pair<std::int64_t, std::int64_t> pad;
  if (mode == "valid")
    pad = {0, 0};
  else if (mode == "same")
    pad = {m / 2, m - m / 2 - 1};
  else if (mode == "full")
    pad = {m - 1, m - 1};
  else
    throw ValueError(std::string(op) + ": mode must be one of 'full', 'same', 'valid', got '" +
                     mode + "'");
  ConvOptions opts;
  opts.padding = Padding(std::vector<std::pair<std::int64_t, std::int64_t>>{pad});
  Array r =
      reshape(conv_general_dilated(reshape(x, {1, -1, 1}), reshape(y, {-1, 1, 1}), opts), {-1});
  return reverse ? flip(r, {0}) : r;
}

}  // namespace

Array convolve(const Array& a, const Array& v, const std::string& mode) {
  return conv1d(a, v, mode, false, "convolve");
}
Array correlate(const Array& a, const Array& v, const std::string& mode) {
  return conv1d(a, v, mode, true, "correlate");
}

Array polyval(const Array& p, const Array& x) {
  check_valid(p, "polyval");
  check_valid(x, "polyval");
  if (p.ndim() < 1) throw ValueError("polyval: p must have at least one dimension, got shape ()");
  const ResultType r = result_type(p, x);
  const Array pp = promote_to(p, r), xx = promote_to(x, r);
  const Shape rest(pp.shape().begin() + 1, pp.shape().end());
  Array y = broadcast_to(zeros({}, r.dtype), broadcast_shapes(rest, xx.shape(), "polyval"));
  for (std::int64_t i = 0; i < pp.shape()[0]; ++i)
    y = y * xx + reshape(slice(pp, {Slice{i, i + 1}}), rest);
  return y;
}

// The shorter polynomial added into the trailing coefficients of the longer.
Array polyadd(const Array& a1, const Array& a2) {
  check_valid(a1, "polyadd");
  check_valid(a2, "polyadd");
  if (a1.ndim() != 1 || a2.ndim() != 1)
    throw ValueError("polyadd: expected 1-D coefficient arrays, got shapes " +
                     shape_str(a1.shape()) + " and " + shape_str(a2.shape()));
  const ResultType r = result_type(a1, a2);
  Array x = promote_to(a1, r), y = promote_to(a2, r);
  if (x.size() < y.size()) std::swap(x, y);
  const std::int64_t lead = x.size() - y.size();
  if (lead == 0) return x + y;
  return concatenate({lax_slice(x, {0}, {lead}), lax_slice(x, {lead}, {x.size()}) + y});
}

Array polysub(const Array& a1, const Array& a2) {
  check_valid(a2, "polysub");
  return polyadd(a1, negative(a2));
}

Array polymul(const Array& a1, const Array& a2) {
  check_valid(a1, "polymul");
  check_valid(a2, "polymul");
  auto [x, y] = common_inexact(a1, a2, "polymul");
  if (x.size() == 0) x = zeros({1}, y.dtype());
  if (y.size() == 0) y = zeros({1}, x.dtype());
  return convolve(x, y, "full");
}

// p[:-m] times the falling factorials (n-1)(n-2)...(n-m) of the powers.
Array polyder(const Array& p, int m) {
  Array pf = to_inexact(p, "polyder");
  if (pf.ndim() != 1)
    throw ValueError("polyder: expected a 1-D coefficient array, got shape " +
                     shape_str(pf.shape()));
  if (m < 0)
    throw ValueError("polyder: order of derivative must be positive, got " + std::to_string(m));
  const std::int64_t n = pf.size();
  if (m == 0) return pf;
  if (m >= n) return zeros({0}, pf.dtype());
  Array coeff = ones({n - m}, pf.dtype());
  for (int j = 0; j < m; ++j) coeff = coeff * (arange(n - 1 - j, m - 1 - j, -1, pf.dtype()));
  return lax_slice(pf, {0}, {n - m}) * coeff;
}

// (p, k) divided by the rising products of the new powers.
Array polyint(const Array& p, int m, const Array& k) {
  Array pf = to_inexact(p, "polyint");
  if (pf.ndim() != 1)
    throw ValueError("polyint: expected a 1-D coefficient array, got shape " +
                     shape_str(pf.shape()));
  if (m < 0)
    throw ValueError("polyint: order of integral must be positive (see polyder), got " +
                     std::to_string(m));
  Array kk = k.valid() ? k : Array(0);
  const ResultType r = result_type(pf, kk);
  pf = promote_to(pf, r);
  kk = promote_to(kk, r);
  if (kk.ndim() == 0 || (kk.ndim() == 1 && kk.size() == 1)) kk = broadcast_to(reshape(kk, {}), {m});
  if (kk.shape() != Shape{m})
    throw ValueError("polyint: k must be a scalar or a rank-1 array of length 1 or m, got shape " +
                     shape_str(k.shape()));
  if (m == 0) return pf;
  const std::int64_t n = pf.size() + m;
  // coeff[i] = prod over j < m of max(1, n - 1 - i - j): the divisors of each new power.
  Array coeff = ones({n}, pf.dtype());
  for (int j = 0; j < m; ++j)
    coeff = coeff * maximum(arange(n - 1 - j, -1 - j, -1, pf.dtype()), 1.0);
  return concatenate({pf, kk}) / coeff;
}

Array vander(const Array& x, std::optional<std::int64_t> n, bool increasing) {
  check_valid(x, "vander");
  if (x.ndim() != 1)
    throw ValueError("vander: x must be a one-dimensional array, got shape " +
                     shape_str(x.shape()));
  if (n && *n < 0) throw ValueError("vander: N must be nonnegative, got " + std::to_string(*n));
  const std::int64_t cols = n.value_or(x.size());
  Array powers = increasing ? arange(0, cols, 1, x.dtype()) : arange(cols - 1, -1, -1, x.dtype());
  return power(expand_dims(x, -1), powers);
}

}  // namespace linum
