// bincount, digitize, the histograms and interp, composed as jax.numpy composes them: a bin
// index per value from searchsorted, and one scatter-add of the weights into the bins.
#include <linum/autodiff/ops/histogram.hpp>

#include <cmath>
#include <limits>

#include <linum/autodiff/ops/differences.hpp>
#include <linum/autodiff/ops/index_tricks.hpp>
#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/manipulation.hpp>
#include <linum/autodiff/ops/reduction_stats.hpp>
#include <linum/autodiff/ops/scatter.hpp>

namespace linum {
namespace detail {
namespace {

// jnp's to_inexact_dtype: integers and bools compute in float32.
DType inexact_dtype(DType d) { return is_inexact(d) ? d : float32; }

Array last(const Array& v) { return squeeze(slice(v, {Slice{-1, std::nullopt}}), 0); }
Array first_entry(const Array& v) { return squeeze(slice(v, {Slice{0, 1}}), 0); }

// n + 1 equally spaced edges from lo to hi (traced scalars), as jnp.linspace computes them:
// lo * (1 - t) + hi * t for t = i / n, and hi itself last.
Array spaced_edges(const Array& lo, const Array& hi, std::int64_t n) {
  const DType d = lo.dtype();
  const Array t =
      arange(std::int64_t{0}, n, std::int64_t{1}, d) / full({}, static_cast<double>(n), d);
  return concatenate({lo * (1.0 - t) + hi * t, reshape(hi, {1})}, 0);
}

// The bin of each value: searchsorted right, with values equal to the last edge in the last bin.
Array bin_index(const Array& edges, const Array& v) {
  const Array idx = searchsorted(edges, v, SearchSide::right);
  return where(equal(v, last(edges)), idx - 1, idx);
}

}  // namespace
}  // namespace detail

using namespace detail;

Array bincount(const Array& x, const std::optional<Array>& weights, std::int64_t minlength,
               std::optional<std::int64_t> length) {
  check_valid(x, "bincount");
  const Array xi = x.dtype() == bool_ ? astype(x, int32) : x;
  if (!is_integer(xi.dtype()))
    throw TypeError("bincount: x argument to bincount must have an integer type; got " +
                    std::string(dtype_name(x.dtype())));
  if (xi.ndim() != 1)
    throw ValueError("bincount: only 1-dimensional input supported, got shape " +
                     shape_str(x.shape()));
  if (minlength < 0)
    throw ValueError("bincount: minlength must be non-negative, got " + std::to_string(minlength));
  if (length && *length < 0)
    throw ValueError("bincount: length must be non-negative, got " + std::to_string(*length));
  std::int64_t n = 0;
  if (length) {
    n = *length;
  } else {
    const Array c = concrete_or_error(
        xi, "bincount", "x needs a concrete value unless the static length argument is given");
    n = minlength;
    if (c.size()) n = std::max(n, std::max<std::int64_t>(0, max(c).item<std::int64_t>()) + 1);
  }
  Array w = ones(xi.shape(), int32);
  if (weights) {
    check_valid(*weights, "bincount");
    if (weights->shape() != xi.shape())
      throw ValueError("bincount: weights of shape " + shape_str(weights->shape()) +
                       " must match x of shape " + shape_str(x.shape()));
    w = *weights;
  }
  const Array idx = xi.dtype() == uint32 ? xi : maximum(xi, 0);
  return at(zeros({n}, w.dtype()), idx).add(w, {.mode = GatherScatterMode::fill_or_drop});
}

Array digitize(const Array& x, const Array& bins, bool right, SearchMethod method) {
  check_valid(x, "digitize");
  check_valid(bins, "digitize");
  if (bins.ndim() != 1)
    throw ValueError("digitize: bins must be a 1-dimensional array; got shape " +
                     shape_str(bins.shape()));
  if (bins.shape(0) == 0) return zeros(x.shape(), int32);
  const SearchSide side = right ? SearchSide::left : SearchSide::right;
  const Array up = searchsorted(bins, x, side, std::nullopt, method);
  const Array down = bins.shape(0) - searchsorted(flip(bins), x, side, std::nullopt, method);
  return where(greater_equal(last(bins), first_entry(bins)), up, down);
}

Array histogram_bin_edges(const Array& a, const HistogramBins& bins, HistogramRange range) {
  check_valid(a, "histogram_bin_edges");
  const DType d = inexact_dtype(a.dtype());
  if (const Array* edges = std::get_if<Array>(&bins.value())) {
    check_valid(*edges, "histogram_bin_edges");
    if (edges->ndim() != 1)
      throw ValueError(
          "histogram_bin_edges: bins must be a count or a 1-D array of edges, got "
          "shape " +
          shape_str(edges->shape()));
    return astype(*edges, d);
  }
  const std::int64_t n = std::get<std::int64_t>(bins.value());
  if (n < 1)
    throw ValueError("histogram_bin_edges: the number of bins must be positive, got " +
                     std::to_string(n));
  Array lo, hi;
  if (range) {
    lo = full({}, range->first, d);
    hi = full({}, range->second, d);
  } else {
    if (a.size() == 0)
      throw ValueError("histogram_bin_edges: the range of an empty array must be given");
    lo = astype(min(a), d);
    hi = astype(max(a), d);
  }
  const Array flat = equal(lo, hi);
  return spaced_edges(where(flat, lo - 0.5, lo), where(flat, hi + 0.5, hi), n);
}

std::pair<Array, Array> histogram(const Array& a, const HistogramBins& bins, HistogramRange range,
                                  const std::optional<Array>& weights, bool density) {
  check_valid(a, "histogram");
  Array x = a, w;
  if (weights) {
    check_valid(*weights, "histogram");
    if (weights->shape() != a.shape())
      throw ValueError("histogram: weights should have the same shape as a, got " +
                       shape_str(weights->shape()) + " and " + shape_str(a.shape()));
    const ResultType t = result_type(a, *weights);
    const DType d = inexact_dtype(t.dtype);
    x = astype(a, d);
    w = astype(*weights, d);
  } else {
    x = astype(a, inexact_dtype(a.dtype()));
    w = ones_like(x);
  }
  const Array edges = histogram_bin_edges(x, bins, range);
  const Array idx = ravel(searchsorted(edges, x, SearchSide::right));
  const Array bin = where(equal(ravel(x), last(edges)),
                          full({}, static_cast<double>(edges.size() - 1), int32), idx);
  Array counts =
      slice(at(zeros({edges.size()}, w.dtype()), bin).add(ravel(w)), {Slice{1, std::nullopt}});
  if (density) counts = counts / diff(edges) / sum(counts);
  return {counts, edges};
}

std::pair<Array, Arrays> histogramdd(const Array& sample, const std::vector<HistogramBins>& bins,
                                     const std::vector<HistogramRange>& range,
                                     const std::optional<Array>& weights, bool density) {
  check_valid(sample, "histogramdd");
  if (sample.ndim() != 2)
    throw ValueError("histogramdd: sample must be 2-D (N points of D coordinates), got shape " +
                     shape_str(sample.shape()));
  Array s = sample;
  std::optional<Array> w;
  if (weights) {
    check_valid(*weights, "histogramdd");
    if (weights->shape() != Shape{sample.shape(0)})
      throw ValueError(
          "histogramdd: should have one weight for each sample, got weights of "
          "shape " +
          shape_str(weights->shape()) + " for " + std::to_string(sample.shape(0)) + " samples");
    const DType d = inexact_dtype(result_type(sample, *weights).dtype);
    s = astype(sample, d);
    w = astype(*weights, d);
  } else {
    s = astype(sample, inexact_dtype(sample.dtype()));
  }
  const std::int64_t D = s.shape(1);
  if (!range.empty() && static_cast<std::int64_t>(range.size()) != D)
    throw ValueError("histogramdd: for sample of shape " + shape_str(s.shape()) +
                     ", range must be a sequence of " + std::to_string(D) +
                     " pairs or Nones; got " + std::to_string(range.size()));
  if (bins.size() != 1 && static_cast<std::int64_t>(bins.size()) != D)
    throw ValueError("histogramdd: should be a bin for each dimension, got " +
                     std::to_string(bins.size()) + " for " + std::to_string(D));
  Arrays idx, edges, widths;
  Shape nbins;
  for (std::int64_t i = 0; i < D; ++i) {
    const Array col = squeeze(slice_in_dim(s, i, i + 1, 1), 1);
    const Array e = histogram_bin_edges(col, bins[bins.size() == 1 ? 0 : i],
                                        range.empty() ? HistogramRange{} : range[i]);
    idx.push_back(bin_index(e, col));
    edges.push_back(e);
    widths.push_back(diff(e));
    nbins.push_back(e.size() + 1);
  }
  const Array xy = ravel_multi_index(idx, nbins, IndexMode::clip);
  Array hist = reshape(bincount(xy, w, 0, shape_size(nbins)), nbins);
  hist = slice(hist, std::vector<Slice>(static_cast<std::size_t>(D), Slice{1, -1}));
  if (density) {
    hist = astype(hist, s.dtype());
    hist = hist / sum(hist);
    for (const Array& norm : ix_(widths)) hist = hist / norm;
  }
  return {hist, edges};
}

std::tuple<Array, Array, Array> histogram2d(const Array& x, const Array& y,
                                            const std::vector<HistogramBins>& bins,
                                            const std::vector<HistogramRange>& range,
                                            const std::optional<Array>& weights, bool density) {
  check_valid(x, "histogram2d");
  check_valid(y, "histogram2d");
  if (x.ndim() != 1 || x.shape() != y.shape())
    throw ValueError("histogram2d: x and y must be 1-D arrays of the same length, got shapes " +
                     shape_str(x.shape()) + " and " + shape_str(y.shape()));
  auto [hist, edges] = histogramdd(stack({x, y}, 1), bins, range, weights, density);
  return {hist, edges[0], edges[1]};
}

InterpBound::InterpBound(const char* mode) : extrapolate_(true) {
  if (std::string(mode) != "extrapolate")
    throw ValueError(std::string("interp: the only valid string value of left / right is "
                                 "'extrapolate', but got: '") +
                     mode + "'");
}

Array interp(const Array& x, const Array& xp, const Array& fp, const InterpBound& left,
             const InterpBound& right, std::optional<double> period) {
  check_valid(x, "interp");
  check_valid(xp, "interp");
  check_valid(fp, "interp");
  if (xp.shape() != fp.shape() || xp.ndim() != 1)
    throw ValueError("interp: xp and fp must be one-dimensional arrays of equal size, got shapes " +
                     shape_str(xp.shape()) + " and " + shape_str(fp.shape()));
  if (xp.shape(0) == 0) throw ValueError("interp: xp and fp must not be empty");
  if (is_complex(x.dtype()) || is_complex(xp.dtype()))
    throw ValueError("interp: complex x values not supported");
  const DType d = inexact_dtype(result_type(x, xp).dtype);
  Array xa = astype(x, d), xpa = astype(xp, d);
  Array fpa = astype(fp, inexact_dtype(fp.dtype()));
  if (period) {
    const Array per = full({}, std::abs(*period), d);
    xa = remainder(xa, per);
    xpa = remainder(xpa, per);
    std::tie(xpa, fpa) = sort_key_val(xpa, fpa);
    xpa = concatenate(
        {slice(xpa, {Slice{-1, std::nullopt}}) - per, xpa, slice(xpa, {Slice{0, 1}}) + per}, 0);
    fpa = concatenate({slice(fpa, {Slice{-1, std::nullopt}}), fpa, slice(fpa, {Slice{0, 1}})}, 0);
  }
  const std::int64_t n = xpa.shape(0);
  const Array i =
      clip(searchsorted(xpa, xa, SearchSide::right), 1, std::max<std::int64_t>(n - 1, 1));
  auto at_ = [](const Array& v, const Array& k) { return take(v, k, 0, GatherMode::clip); };
  const Array f0 = at_(fpa, i - 1), df = at_(fpa, i) - f0;
  const Array dx = at_(xpa, i) - at_(xpa, i - 1), delta = xa - at_(xpa, i - 1);
  // A zero-width segment takes fp[i - 1] (no NaN gradients): |dx| below the spacing of eps.
  const double eps = d == float64 ? std::numeric_limits<double>::epsilon()
                                  : static_cast<double>(std::numeric_limits<float>::epsilon());
  const double tiny = d == float64
                          ? std::nextafter(eps, 1.0) - eps
                          : static_cast<double>(std::nextafterf(static_cast<float>(eps), 1.0f) -
                                                static_cast<float>(eps));
  const Array dx0 = abs(dx) <= tiny;
  Array f = where(dx0, f0, f0 + (delta / where(dx0, ones_like(dx), dx)) * df);
  if (!period) {
    if (!left.extrapolate())
      f = where(xa < first_entry(xpa), left.value() ? *left.value() : first_entry(fpa), f);
    if (!right.extrapolate())
      f = where(xa > last(xpa), right.value() ? *right.value() : last(fpa), f);
  }
  return f;
}

}  // namespace linum
