// jnp's statistics: std, ptp, average, count_nonzero, the nan* reductions (jnp's
// _nan_reduction: NaN replaced by the reduction's identity, NaN again for all-NaN slices) and
// the quantile family. Quantiles sort each slice (lax.sort, NaNs last) and gather the order
// statistics, so that gradients reach the selected elements as in jnp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <linum/autodiff/ops/elementwise_math.hpp>
#include <linum/autodiff/ops/elementwise_rules.hpp>
#include <linum/autodiff/ops/reduction_stats.hpp>
#include <linum/autodiff/ops/sort.hpp>

namespace linum {
namespace detail {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// jnp's _nan_reduction: NaNs read as `identity`; NaN again where the whole slice is NaN.
template <class R>
Array nan_reduce(const Array& x, const Axes& axis, bool keepdims, double identity,
                 bool nan_if_all_nan, const char* op, R reduce) {
  check_valid(x, op);
  if (!is_floating(x.dtype())) return reduce(x, axis, keepdims);
  Array nan = isnan(x);
  Array out = reduce(where(nan, constant_like(x, identity), x), axis, keepdims);
  if (!nan_if_all_nan) return out;
  return where(all(nan, axis, keepdims), constant_like(x, kNan), out);
}

Array nan_arg(const Array& x, std::optional<int> axis, bool keepdims, bool is_max) {
  const char* op = is_max ? "nanargmax" : "nanargmin";
  check_valid(x, op);
  if (!is_floating(x.dtype()))
    return is_max ? argmax(x, axis, keepdims) : argmin(x, axis, keepdims);
  Array nan = isnan(x);
  Array filled = where(nan, constant_like(x, is_max ? -kInf : kInf), x);
  Array r = is_max ? argmax(filled, axis, keepdims) : argmin(filled, axis, keepdims);
  Array all_nan = axis ? all(nan, *axis, keepdims) : all(nan, Axes{}, keepdims);
  return where(all_nan, -1, r);
}

// ---- quantiles ----------------------------------------------------------------------------------

enum class Method { linear, lower, higher, nearest, midpoint };

Method parse_method(const std::string& m, const char* op) {
  if (m == "linear") return Method::linear;
  if (m == "lower") return Method::lower;
  if (m == "higher") return Method::higher;
  if (m == "nearest") return Method::nearest;
  if (m == "midpoint") return Method::midpoint;
  if (m == "inverted_cdf")
    throw NotImplementedError(std::string(op) +
                              ": method 'inverted_cdf' (weighted quantiles) is not implemented");
  throw ValueError(
      std::string(op) +
      ": method can only be 'linear', 'lower', 'higher', 'midpoint' or 'nearest', got '" + m + "'");
}

// x with the reduced axes moved last and merged into one: (kept..., n); `kept` gets the kept
// dims, `kept_dims` the result shape with keepdims.
Array merge_reduced(const Array& x, const Axes& axis, const char* op, Shape& kept,
                    Shape& kept_dims) {
  const auto axes = normalize_axes(axis, x.ndim(), op);
  std::vector<int> perm;
  std::int64_t n = 1;
  kept.clear();
  kept_dims = x.shape();
  for (int d = 0; d < x.ndim(); ++d)
    if (!std::binary_search(axes.begin(), axes.end(), d)) {
      perm.push_back(d);
      kept.push_back(x.shape()[d]);
    }
  for (int d : axes) {
    perm.push_back(d);
    n *= x.shape()[d];
    kept_dims[d] = 1;
  }
  if (n == 0)
    throw ValueError(std::string(op) + ": cannot take a quantile of an empty slice (shape " +
                     shape_str(x.shape()) + ")");
  Shape merged = kept;
  merged.push_back(n);
  return reshape(transpose(x, perm), merged);
}

// s[..., idx] along the last axis, for idx of shape q_shape + kept (q_shape () or (m,)), as an
// array of that shape.
Array gather_last(const Array& s, const Array& idx, bool q_vector) {
  Array i = q_vector ? moveaxis(idx, 0, -1) : expand_dims(idx, -1);
  Array g = take_along_axis(s, i, -1);
  return q_vector ? moveaxis(g, -1, 0) : squeeze(g, -1);
}

Array quantile_impl(const Array& x0, const Array& q0, const Axes& axis, const std::string& method,
                    bool keepdims, bool squash_nans, const char* op) {
  const Method m = parse_method(method, op);
  Array x = to_inexact(x0, op);
  check_valid(q0, op);
  if (q0.ndim() > 1)
    throw ValueError(std::string(op) + ": q must have rank <= 1, got shape " +
                     shape_str(q0.shape()));
  Array q = to_inexact(q0, op);
  const bool q_vector = q.ndim() == 1;
  Shape kept, kept_dims;
  Array a = merge_reduced(x, axis, op, kept, kept_dims);
  const std::int64_t n = a.shape().back();
  Array nan = isnan(a);
  if (!squash_nans) a = where(any(nan, -1, true), constant_like(a, kNan), a);
  Array s = sort(a, -1);
  // Positions q (count - 1) per slice (count: the non-NaN elements when squashing).
  Shape pos_shape = q.shape();
  pos_shape.insert(pos_shape.end(), kept.begin(), kept.end());
  Array count = squash_nans ? astype(sum(logical_not(nan), -1), q.dtype())
                            : constant_like(q, static_cast<double>(n));
  Array qb = q_vector ? reshape(q,
                                [&] {
                                  Shape s1 = q.shape();
                                  s1.insert(s1.end(), kept.size(), 1);
                                  return s1;
                                }())
                      : q;
  Array pos = broadcast_to(qb * (count - 1.0), pos_shape);
  Array low = floor(pos), high = ceil(pos);
  Array high_w = pos - low, low_w = 1.0 - high_w;
  low = clip(low, constant_like(low, 0), count - 1.0);
  high = clip(high, constant_like(high, 0), count - 1.0);
  Array low_v = gather_last(s, astype(low, int32), q_vector);
  Array high_v = gather_last(s, astype(high, int32), q_vector);
  Array r;
  switch (m) {
    case Method::linear:
      r = astype(low_v, q.dtype()) * low_w + astype(high_v, q.dtype()) * high_w;
      break;
    case Method::lower: r = low_v; break;
    case Method::higher: r = high_v; break;
    case Method::nearest: r = where(high_w <= 0.5, low_v, high_v); break;
    case Method::midpoint: r = (low_v + high_v) * constant_like(low_v, 0.5); break;
  }
  r = astype(r, x.dtype());
  if (!keepdims) return r;
  Shape out = q.shape();
  out.insert(out.end(), kept_dims.begin(), kept_dims.end());
  return reshape(r, out);
}

// x as a 2-D array of variables in rows (numpy's atleast_2d, then the transpose for columns).
Array as_rows(const Array& x, bool rowvar) {
  Array r = x.ndim() == 0 ? reshape(x, {1, 1}) : x.ndim() == 1 ? reshape(x, {1, -1}) : x;
  return !rowvar && x.ndim() != 1 ? transpose(r) : r;
}

// The last axis of x from lo to hi.
Array last_axis(const Array& x, std::int64_t lo, std::int64_t hi) {
  std::vector<Slice> s(x.ndim() - 1);
  s.push_back(Slice{lo, hi});
  return slice(x, s);
}

}  // namespace
}  // namespace detail

using namespace detail;

Array std(const Array& x, const Axes& axis, bool keepdims, int ddof) {
  check_valid(x, "std");
  return sqrt(var(x, axis, keepdims, ddof));
}

Array ptp(const Array& x, const Axes& axis, bool keepdims) {
  check_valid(x, "ptp");
  return max(x, axis, keepdims) - min(x, axis, keepdims);
}

Array amax(const Array& x, const Axes& axis, bool keepdims) { return max(x, axis, keepdims); }
Array amin(const Array& x, const Axes& axis, bool keepdims) { return min(x, axis, keepdims); }

Array average(const Array& x, const Axes& axis, const Array& weights, bool keepdims) {
  const char* op = "average";
  if (!weights.valid()) return mean(to_inexact(x, op), axis, keepdims);
  // Weights along `axis` need not broadcast with x: only their dtypes are promoted together.
  check_valid(x, op);
  check_valid(weights, op);
  ResultType r = result_type(x, weights);
  if (!is_floating(r.dtype)) r.dtype = float32;
  Array a = promote_to(x, r), w = promote_to(weights, r);
  if (a.shape() != w.shape()) {
    if (axis.all)
      throw ValueError("average: axis must be specified when shapes of a and weights differ");
    Shape along;
    std::vector<int> ax;
    for (int d : axis.axes) {
      ax.push_back(normalize_axis(d, a.ndim(), op));
      along.push_back(a.shape()[ax.back()]);
    }
    if (w.shape() != along)
      throw ValueError("average: shape of weights " + shape_str(w.shape()) +
                       " must be consistent with shape of a along the specified axis " +
                       shape_str(along));
    // Weights laid along `axis` (in the order given), as jnp's lax.reshape with dimensions.
    std::vector<int> order(ax.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int i, int j) { return ax[i] < ax[j]; });
    Shape target(a.ndim(), 1);
    for (int d : ax) target[d] = a.shape()[d];
    w = reshape(transpose(w, order), target);
  }
  Array wsum = sum(w, axis, keepdims);
  return sum(a * w, axis, keepdims) / wsum;
}

Array cov(const Array& m, const Array& y, bool rowvar, bool bias, std::optional<int> ddof) {
  const char* op = "cov";
  check_valid(m, op);
  Array mf = m, yf = y;
  if (y.valid()) {
    check_valid(y, op);
    ResultType r = result_type(m, y);
    if (!is_floating(r.dtype)) r.dtype = float32;
    mf = promote_to(m, r);
    yf = promote_to(y, r);
    if (y.ndim() > 2)
      throw ValueError("cov: y has more than 2 dimensions, got shape " + shape_str(y.shape()));
  } else {
    mf = to_inexact(m, op);
  }
  if (m.ndim() > 2)
    throw ValueError("cov: m has more than 2 dimensions, got shape " + shape_str(m.shape()));
  Array x = as_rows(mf, rowvar);
  if (x.shape()[0] == 0) return zeros({0, 0}, x.dtype());
  if (yf.valid()) {
    Array yr = yf.ndim() <= 1 ? as_rows(yf, true) : as_rows(yf, rowvar);
    x = concatenate({x, yr}, 0);
  }
  if (x.shape()[1] == 0)
    return full(x.shape()[0] == 1 ? Shape{} : Shape{x.shape()[0], x.shape()[0]}, kNan, x.dtype());
  const int d = ddof.value_or(bias ? 0 : 1);
  Array centered = x - mean(x, 1, true);
  Array c = matmul(centered, transpose(centered)) / static_cast<double>(x.shape()[1] - d);
  return squeeze(c);
}

Array corrcoef(const Array& x, const Array& y, bool rowvar) {
  Array c = cov(x, y, rowvar);
  if (c.ndim() == 0) return c / c;
  const std::int64_t n = c.shape()[0];
  Array stddev = sqrt(take(reshape(c, {-1}), arange(0, n * n, n + 1)));
  c = c / expand_dims(stddev, 1) / expand_dims(stddev, 0);
  return clip(c, -1, 1);
}

Array trapezoid(const Array& y, const Array& x, double dx, int axis) {
  const char* op = "trapezoid";
  check_valid(y, op);
  Array yf, d;
  if (!x.valid()) {
    yf = to_inexact(y, op);
    d = make_scalar(dx, yf.dtype(), true);
  } else {
    check_valid(x, op);
    ResultType r = result_type(y, x);
    if (!is_floating(r.dtype)) r.dtype = float32;
    yf = promote_to(y, r);
    Array xf = promote_to(x, r);
    if (xf.ndim() != 1) xf = moveaxis(xf, normalize_axis(axis, xf.ndim(), op), -1);
    const std::int64_t n = xf.shape().back();
    d = last_axis(xf, 1, n) - last_axis(xf, 0, n - 1);
  }
  Array v = moveaxis(yf, normalize_axis(axis, yf.ndim(), op), -1);
  const std::int64_t n = v.shape().back();
  if (d.ndim() == 0 || d.shape().back() == 1) {
    Array step = d.ndim() == 0 ? d : squeeze(d, -1);
    return step * (sum(v, -1) -
                   0.5 * (squeeze(last_axis(v, 0, 1), -1) + squeeze(last_axis(v, n - 1, n), -1)));
  }
  return 0.5 * sum(d * (last_axis(v, 1, n) + last_axis(v, 0, n - 1)), -1);
}

Array count_nonzero(const Array& x, const Axes& axis, bool keepdims) {
  check_valid(x, "count_nonzero");
  return sum(not_equal(x, 0), axis, keepdims);
}

Array nansum(const Array& x, const Axes& axis, bool keepdims) {
  return nan_reduce(x, axis, keepdims, 0.0, false, "nansum",
                    [](const Array& v, const Axes& a, bool k) { return sum(v, a, k); });
}
Array nanprod(const Array& x, const Axes& axis, bool keepdims) {
  return nan_reduce(x, axis, keepdims, 1.0, false, "nanprod",
                    [](const Array& v, const Axes& a, bool k) { return prod(v, a, k); });
}
Array nanmax(const Array& x, const Axes& axis, bool keepdims) {
  return nan_reduce(x, axis, keepdims, -kInf, true, "nanmax",
                    [](const Array& v, const Axes& a, bool k) { return max(v, a, k); });
}
Array nanmin(const Array& x, const Axes& axis, bool keepdims) {
  return nan_reduce(x, axis, keepdims, kInf, true, "nanmin",
                    [](const Array& v, const Axes& a, bool k) { return min(v, a, k); });
}

Array nanmean(const Array& x, const Axes& axis, bool keepdims) {
  check_valid(x, "nanmean");
  if (!is_floating(x.dtype())) return mean(x, axis, keepdims);
  Array count = astype(sum(logical_not(isnan(x)), axis, keepdims), x.dtype());
  return nansum(x, axis, keepdims) / count;
}

// Centered squares with NaNs as 0 over N - ddof non-NaN elements; NaN where that is <= 0.
Array nanvar(const Array& x, const Axes& axis, bool keepdims, int ddof) {
  Array a = to_inexact(x, "nanvar");
  Array nan = isnan(a);
  Array centered = square(where(nan, constant_like(a, 0), a - nanmean(a, axis, true)));
  Array normalizer = sum(logical_not(nan), axis, keepdims) - ddof;
  Array empty_slice = normalizer <= 0;
  Array r = where(empty_slice, constant_like(a, kNan), sum(centered, axis, keepdims));
  return r / astype(where(empty_slice, 1, normalizer), a.dtype());
}

Array nanstd(const Array& x, const Axes& axis, bool keepdims, int ddof) {
  return sqrt(nanvar(x, axis, keepdims, ddof));
}

Array nanargmax(const Array& x, std::optional<int> axis, bool keepdims) {
  return nan_arg(x, axis, keepdims, true);
}
Array nanargmin(const Array& x, std::optional<int> axis, bool keepdims) {
  return nan_arg(x, axis, keepdims, false);
}

Array quantile(const Array& x, const Array& q, const Axes& axis, const std::string& method,
               bool keepdims) {
  return quantile_impl(x, q, axis, method, keepdims, false, "quantile");
}
Array nanquantile(const Array& x, const Array& q, const Axes& axis, const std::string& method,
                  bool keepdims) {
  return quantile_impl(x, q, axis, method, keepdims, true, "nanquantile");
}
Array percentile(const Array& x, const Array& q, const Axes& axis, const std::string& method,
                 bool keepdims) {
  check_valid(q, "percentile");
  return quantile_impl(x, to_inexact(q, "percentile") / 100, axis, method, keepdims, false,
                       "percentile");
}
Array nanpercentile(const Array& x, const Array& q, const Axes& axis, const std::string& method,
                    bool keepdims) {
  check_valid(q, "nanpercentile");
  return quantile_impl(x, to_inexact(q, "nanpercentile") / 100, axis, method, keepdims, true,
                       "nanpercentile");
}
Array median(const Array& x, const Axes& axis, bool keepdims) {
  Array xf = to_inexact(x, "median");
  return quantile_impl(xf, constant_like(xf, 0.5), axis, "midpoint", keepdims, false, "median");
}
Array nanmedian(const Array& x, const Axes& axis, bool keepdims) {
  Array xf = to_inexact(x, "nanmedian");
  return quantile_impl(xf, constant_like(xf, 0.5), axis, "midpoint", keepdims, true, "nanmedian");
}

}  // namespace linum
